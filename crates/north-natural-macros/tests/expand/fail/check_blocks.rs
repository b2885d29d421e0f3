fn main() {
    // Paths are relative to the crate's Cargo.toml directory.
    let _ = north_natural::check_blocks!("no/such/directory");
}
