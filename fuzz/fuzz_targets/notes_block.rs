//! `cargo fuzz run notes_block`: see `north_fuzz::notes_block`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| north_fuzz::notes_block(data));
