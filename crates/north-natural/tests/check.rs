//! `check_blocks!`: finding functions whose natural blocks cannot run
//! because the `#[natural]` attribute is missing. The fixtures under
//! `tests/fixtures/` are scanned, never compiled.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_natural::{BlockProblem, check_blocks};

/// The forgotten functions of a check, as (function, fn line, block line,
/// whether the block is the doc comment).
fn forgotten(check: north_natural::BlockCheck) -> Vec<(&'static str, u32, u32, bool)> {
    check
        .problems()
        .iter()
        .filter_map(|p| match *p {
            BlockProblem::MissingAttribute {
                function,
                line,
                block_line,
                docstring,
                ..
            } => Some((function, line, block_line, docstring)),
            BlockProblem::Unscanned { .. } => None,
        })
        .collect()
}

#[test]
fn a_forgotten_attribute_is_reported_with_its_place_and_the_fix() {
    let check = check_blocks!("tests/fixtures/check_blocks");
    assert_eq!(check.files_scanned(), 1);
    assert!(!check.is_ok());
    assert_eq!(
        check.problems(),
        [BlockProblem::MissingAttribute {
            file: "tests/fixtures/check_blocks/summaries.rs",
            line: 8,
            function: "forgotten",
            block_line: 6,
            docstring: true,
        }]
    );
    assert_eq!(
        check.problems()[0].to_string(),
        "tests/fixtures/check_blocks/summaries.rs:8: `fn forgotten` has a natural doc-comment block (line 6) but no #[natural] attribute, so the block never runs; add `#[north_natural::natural]` (or `use north_natural::natural;` and `#[natural]`) above `fn forgotten`"
    );
    let err = check.result().unwrap_err();
    assert!(
        err.to_string()
            .starts_with("1 natural block problem found by check_blocks!:\n- tests/fixtures/check_blocks/summaries.rs:8: `fn forgotten`"),
        "{err}"
    );
}

#[test]
#[should_panic(expected = "summaries.rs:8: `fn forgotten` has a natural doc-comment block")]
fn assert_ok_fails_the_test_with_the_report() {
    check_blocks!("tests/fixtures/check_blocks").assert_ok();
}

#[test]
fn blocks_are_recognised_exactly_as_natural_does_across_tricky_syntax() {
    let check = check_blocks!("tests/fixtures/check_blocks_syntax/cases.rs");
    assert_eq!(check.files_scanned(), 1);
    assert_eq!(
        forgotten(check),
        [
            ("doc_attributes_forgotten", 21, 19, true),
            ("attribute_after_doc_forgotten", 26, 23, true),
            ("block_doc_forgotten", 45, 43, true),
            ("method_forgotten", 52, 50, true),
            ("inline_forgotten", 61, 63, false),
            ("parenthesized_inline_forgotten", 67, 68, false),
            ("nested_forgotten", 94, 92, true),
            ("in_module_forgotten", 102, 100, true),
        ]
    );
}

#[test]
fn a_file_that_cannot_be_scanned_is_a_problem_not_a_pass() {
    let check = check_blocks!("tests/fixtures/check_blocks_broken");
    assert_eq!(
        check.problems(),
        [BlockProblem::Unscanned {
            file: "tests/fixtures/check_blocks_broken/unterminated.rs",
            message: "unterminated string from line 4",
        }]
    );
}

#[test]
fn this_crate_has_no_forgotten_attributes() {
    // The default scans src/; examples and benches hold natural functions.
    let check = check_blocks!();
    check.assert_ok();
    assert!(check.files_scanned() > 10);
    let check = check_blocks!("examples", "benches", "tests/runtime");
    check.assert_ok();
    assert_eq!(check.result().unwrap(), check.files_scanned());
}
