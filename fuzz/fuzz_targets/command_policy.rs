//! `cargo fuzz run command_policy`: see `north_fuzz::command_policy`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| north_fuzz::command_policy(data));
