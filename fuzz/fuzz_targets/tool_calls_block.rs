//! `cargo fuzz run tool_calls_block`: see `north_fuzz::tool_calls_block`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| north_fuzz::tool_calls_block(data));
