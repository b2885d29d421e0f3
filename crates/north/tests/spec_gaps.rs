//! Items of the specifications that were partial (issue 21), each shown
//! through the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};

mod common;
use common::Sandbox;

fn recorded(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The tool results the model received in `request`, parsed.
fn tool_results(request: &Value) -> Vec<Value> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| serde_json::from_str(b["content"].as_str().unwrap()).unwrap())
        .collect()
}

/// north.md §6.3: write tools answer `{diff, canApply, stats}`; the model
/// used to receive only `{applied, files}` once the user accepted.
#[test]
fn an_accepted_edit_tells_the_model_its_diff_and_stats() {
    let sb = Sandbox::new();
    std::fs::write(sb.project().join("a.txt"), "one\ntwo\n").unwrap();
    let script = sb.file(
        "script.json",
        &json!([
            {"tool_calls": [{"id": "e1", "name": "edit_replace_exact",
                "args": {"path": "a.txt", "old": "two\n", "new": "zwei\ndrei\n"}}]},
            {"tool_calls": [{"id": "e2", "name": "edit_apply_batch", "args": {"edits": [
                {"toolName": "edit_create_file", "args": {"path": "b.txt", "content": "new\n"}},
                {"toolName": "edit_insert_at_line", "args": {"path": "a.txt", "line": 1, "content": "zero\n"}}
            ]}}]},
            {"text": "Done."}
        ]),
    );
    let requests = sb.dir.path().join("requests.jsonl");
    let out = sb
        .north()
        .args(["exec", "--approve-edits", "--script"])
        .arg(&script)
        .arg("--record-requests")
        .arg(&requests)
        .arg("edit a.txt")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(sb.project().join("a.txt")).unwrap(),
        "zero\none\nzwei\ndrei\n"
    );

    let sent = recorded(&requests);
    let single = &tool_results(&sent[1])[0];
    assert_eq!(single["ok"], true);
    let output = &single["output"];
    assert_eq!(output["applied"], true);
    assert_eq!(output["canApply"], true);
    assert!(
        output["diff"].as_str().unwrap().contains("+zwei"),
        "{output}"
    );
    assert_eq!(output["stats"]["linesAdded"], 2);
    assert_eq!(output["stats"]["linesRemoved"], 1);

    let batch = &tool_results(&sent[2])[1];
    let output = &batch["output"];
    assert_eq!(output["applied"], true);
    assert!(
        output["diffsByFile"]["b.txt"]
            .as_str()
            .unwrap()
            .contains("+new")
    );
    assert!(
        output["diffsByFile"]["a.txt"]
            .as_str()
            .unwrap()
            .contains("+zero")
    );
    assert_eq!(output["stats"]["files"], 2);
    assert_eq!(output["stats"]["filesCreated"], 1);
}
