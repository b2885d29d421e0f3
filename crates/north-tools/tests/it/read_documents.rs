//! `read_file` on documents: a PDF's text page by page (`range` picks
//! pages), and a file that only claims to be one refused.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use crate::tools_support;

use serde_json::json;
use tools_support::Project;

#[test]
fn read_file_gives_a_pdfs_text_by_page_and_refuses_a_fake_one() {
    let p = Project::new();
    p.write(
        "docs/spec.pdf",
        north_tools::media::sample_pdf(&["Alpha section", "Beta section", "Gamma section"]),
    );
    let all = p.ok("read_file", json!({"path": "docs/spec.pdf"}));
    let content = all["content"].as_str().unwrap();
    assert!(
        content.starts_with("--- page 1 ---\nAlpha section"),
        "{content}"
    );
    assert!(
        content.contains("--- page 3 ---\nGamma section"),
        "{content}"
    );
    assert_eq!(all["totalPages"], 3);
    let two = p.ok(
        "read_file",
        json!({"path": "docs/spec.pdf", "range": {"start": 2, "end": 2}}),
    );
    assert_eq!(two["content"], "--- page 2 ---\nBeta section\n");
    let err = p.fail(
        "read_file",
        json!({"path": "docs/spec.pdf", "range": {"start": 5, "end": 6}}),
    );
    assert!(err.contains("has 3 pages"), "{err}");
    p.write("fake.pdf", "not a pdf");
    let err = p.fail("read_file", json!({"path": "fake.pdf"}));
    assert!(err.contains("not a PDF"), "{err}");
}
