//! Instruction files as users of other assistants have them: `CLAUDE.md`
//! and `GEMINI.md` beside `AGENTS.md`, the user's own in their home,
//! `@path` imports (inside the project only), and a subdirectory's file
//! given with the first result that touches it. Through the binary, read
//! back from the requests the model received.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_test_support::recorded::{system, tool_result};
use serde_json::json;

use crate::common::{Sandbox, text};

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn claude_and_gemini_files_imports_and_nested_files_reach_the_model_in_order() {
    let sb = Sandbox::new();
    let root = sb.project();
    write(
        &sb.home().join(".claude/CLAUDE.md"),
        "USER-CLAUDE: answer in English.\n",
    );
    write(&root.join("AGENTS.md"), "ROOT-AGENTS: run cargo test.\n");
    write(
        &root.join("CLAUDE.md"),
        "ROOT-CLAUDE: see @docs/style.md for style, mail me@example.com, not @../outside.md.\n`@docs/not-an-import.md`\n",
    );
    write(
        &root.join("docs/style.md"),
        "IMPORTED-STYLE: four spaces.\n",
    );
    write(&root.join("docs/not-an-import.md"), "NEVER-IMPORTED\n");
    write(&sb.dir.path().join("outside.md"), "OUTSIDE-SECRET\n");
    write(&root.join("GEMINI.md"), "ROOT-GEMINI: be brief.\n");
    write(
        &root.join("sub/CLAUDE.md"),
        "NESTED-CLAUDE: this crate is no_std.\n",
    );
    write(&root.join("sub/lib.rs"), "fn main() {}\n");
    write(&root.join("sub/other.rs"), "fn other() {}\n");
    let turns = json!([
        {"tool_calls": [{"id": "r1", "name": "read_file", "args": {"path": "sub/lib.rs"}}]},
        {"tool_calls": [{"id": "r2", "name": "read_file", "args": {"path": "sub/other.rs"}}]},
        {"text": "done"}
    ]);
    let (out, requests) = sb.exec_scripted(&turns, &[], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = system(&requests[0]);
    let order = [
        "USER-CLAUDE",
        "ROOT-AGENTS",
        "ROOT-CLAUDE",
        "IMPORTED-STYLE",
        "ROOT-GEMINI",
    ];
    let places: Vec<usize> = order
        .iter()
        .map(|m| {
            first
                .find(m)
                .unwrap_or_else(|| panic!("{m} is missing:\n{first}"))
        })
        .collect();
    assert!(
        places.windows(2).all(|w| w[0] < w[1]),
        "out of order: {places:?}\n{first}"
    );
    for absent in ["OUTSIDE-SECRET", "NEVER-IMPORTED", "NESTED-CLAUDE"] {
        assert!(
            !first.contains(absent),
            "{absent} must not be given:\n{first}"
        );
    }
    assert!(first.contains("From ~/.claude/CLAUDE.md:"), "{first}");
    assert!(
        first.contains("From docs/style.md (imported by CLAUDE.md):"),
        "{first}"
    );
    // The nested file comes with the first result under sub/, once.
    let r1 = tool_result(&requests[1], "r1");
    assert!(
        r1["output"]["instructions"]
            .as_str()
            .unwrap()
            .contains("NESTED-CLAUDE"),
        "{r1}"
    );
    let r2 = tool_result(&requests[2], "r2");
    assert!(
        r2["output"].get("instructions").is_none(),
        "given once: {r2}"
    );
    // The system prompt stays the same through the turn (prompt caching).
    assert_eq!(system(&requests[1]), first);
}

#[test]
fn a_claude_md_that_links_to_or_imports_agents_md_is_given_once() {
    let sb = Sandbox::new();
    let root = sb.project();
    write(&root.join("AGENTS.md"), "ONLY-ONCE-MARK\n");
    std::os::unix::fs::symlink("AGENTS.md", root.join("CLAUDE.md")).unwrap();
    write(&root.join("GEMINI.md"), "@AGENTS.md\n");
    let (out, requests) = sb.exec_scripted(&json!([{"text": "ok"}]), &[], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = system(&requests[0]);
    assert_eq!(first.matches("ONLY-ONCE-MARK").count(), 1, "{first}");
}
