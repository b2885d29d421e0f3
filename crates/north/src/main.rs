//! The `north` binary.
fn main() {}
