//! `cargo fuzz run structured_output`: see `north_fuzz::structured_output`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| north_fuzz::structured_output(data));
