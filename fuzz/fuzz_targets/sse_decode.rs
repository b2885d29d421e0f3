//! `cargo fuzz run sse_decode`: see `north_fuzz::sse_decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| north_fuzz::sse_decode(data));
