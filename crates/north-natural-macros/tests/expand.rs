//! Expansion tests: what `#[natural]` and `#[tool]` accept, and the
//! compiler messages for what they reject.

#[test]
fn expansion() {
    let t = trybuild::TestCases::new();
    t.pass("tests/expand/pass/*.rs");
    t.compile_fail("tests/expand/fail/*.rs");
}
