//! `cargo fuzz run config_file`: see `north_fuzz::config_file`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| north_fuzz::config_file(data));
