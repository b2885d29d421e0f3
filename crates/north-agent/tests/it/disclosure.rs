//! North's own system prompt uses the prompt system's progressive
//! disclosure: a long `AGENTS.md` is a summary plus `read_section` /
//! `open_sections`, answered by the agent against the prompt the model saw.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use north_test_support::recorded::{tool_names, tool_result};
use serde_json::{Value, json};
use support::*;

const MARKER: &str = "RULE-AT-THE-VERY-END";

/// An `AGENTS.md` well past what is shown inline, its last line a marker.
fn long_agents_md(root: &std::path::Path) {
    let mut text = String::from("# Working here\n\n");
    for i in 0..300 {
        text.push_str(&format!(
            "- Guideline {i}: keep functions small and named.\n"
        ));
    }
    text.push_str(&format!(
        "- {MARKER}: run `make check` before you finish.\n"
    ));
    std::fs::write(root.join("AGENTS.md"), text).unwrap();
}

async fn run_script(turns: Value) -> (tempfile::TempDir, Vec<Value>) {
    let dir = project();
    long_agents_md(dir.path());
    let (mut run, record) = scripted_session(dir.path(), turns);
    run.turn("how do we work here?").await;
    (dir, recorded(&record))
}

#[tokio::test]
async fn a_long_agents_md_is_summarized_and_read_section_returns_all_of_it() {
    let (_dir, reqs) = run_script(json!([
        {"tool_calls": [{"id": "r1", "name": "read_section", "args": {"section_key": "agents"}}]},
        {"text": "Read it."}
    ]))
    .await;
    assert_eq!(reqs.len(), 2);
    let system = reqs[0]["system"].as_str().unwrap();
    assert!(system.contains("Guideline 0:"), "the beginning is shown");
    assert!(!system.contains(MARKER), "the end is not: {system}");
    assert!(
        system.contains("call `read_section` with key \"agents\""),
        "the summary says how to read the rest"
    );
    let tools = tool_names(&reqs[0]);
    assert!(tools.contains(&"read_section".to_string()), "{tools:?}");
    let result = tool_result(&reqs[1], "r1").to_string();
    assert!(
        result.contains(MARKER),
        "read_section returns the whole file: {result}"
    );
}

#[tokio::test]
async fn only_the_offered_disclosure_tool_is_answered() {
    // AGENTS.md carries no tools, so the prompt system offers
    // `read_section`, not `open_sections`; a call to the latter is an
    // unknown tool and changes nothing.
    let (_dir, reqs) = run_script(json!([
        {"tool_calls": [{"id": "o1", "name": "open_sections",
            "args": {"section_keys": ["agents"], "reason": "the build rules are at the end"}}]},
        {"text": "ok"}
    ]))
    .await;
    assert!(!tool_names(&reqs[0]).contains(&"open_sections".to_string()));
    let refused = tool_result(&reqs[1], "o1").to_string();
    assert!(
        refused.contains("unknown tool `open_sections`"),
        "{refused}"
    );
    assert!(!reqs[1]["system"].as_str().unwrap().contains(MARKER));
}

#[tokio::test]
async fn a_short_agents_md_is_whole_and_offers_no_disclosure_tools() {
    let dir = project();
    std::fs::write(dir.path().join("AGENTS.md"), format!("- {MARKER}\n")).unwrap();
    let (mut run, record) = scripted_session(dir.path(), json!([{"text": "ok"}]));
    run.turn("hi").await;
    let reqs = recorded(&record);
    assert!(reqs[0]["system"].as_str().unwrap().contains(MARKER));
    let tools = tool_names(&reqs[0]);
    assert!(
        !tools
            .iter()
            .any(|t| t == "read_section" || t == "open_sections")
    );
}

#[tokio::test]
async fn an_unknown_section_key_is_an_error_naming_the_ones_there_are() {
    let (_dir, reqs) = run_script(json!([
        {"tool_calls": [{"id": "r1", "name": "read_section", "args": {"section_key": "nope"}}]},
        {"text": "ok"}
    ]))
    .await;
    let result = tool_result(&reqs[1], "r1").to_string();
    assert!(result.contains("nope"), "{result}");
    assert!(
        result.contains("agents"),
        "the available key is named: {result}"
    );
}
