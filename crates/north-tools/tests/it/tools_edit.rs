//! The edit pipeline through the public API: the four edit tools and the
//! write profiles propose (never write), failures carry retry hints (applying
//! proposals: `tools_apply.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tools_support;

use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};
use tools_support::{Project, batch_fixture};

fn diff_of(p: &Project, tool: &str, args: Value) -> String {
    let before = p.snapshot_tree();
    let out = p.ok(tool, args);
    assert_eq!(p.snapshot_tree(), before, "{tool} wrote during proposal");
    assert_eq!(out["canApply"], true);
    out["diff"].as_str().unwrap().to_owned()
}

// ---------- edit_replace_exact ----------

#[test]
fn replace_exact_proposes_a_diff_and_writes_nothing() {
    let p = Project::new();
    p.write("src/lib.rs", "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n");
    let before = p.snapshot_tree();
    let out = p.ok(
        "edit_replace_exact",
        json!({"path": "src/lib.rs", "old": "    2\n", "new": "    20\n    21\n", "expectedOccurrences": 1}),
    );
    assert_eq!(p.snapshot_tree(), before);
    insta::assert_json_snapshot!("replace_exact_output", out);
}

#[test]
fn replace_exact_null_expected_replaces_every_occurrence() {
    let p = Project::new();
    p.write("a.txt", "x = 1\ny = x\nz = x\n");
    let proposal = p
        .propose(
            "edit_replace_exact",
            json!({"path": "a.txt", "old": "x", "new": "w", "expectedOccurrences": null}),
        )
        .unwrap();
    p.apply(&proposal).unwrap();
    assert_eq!(p.read("a.txt"), "w = 1\ny = w\nz = w\n");
}

#[test]
fn replace_exact_wrong_count_says_where_they_are() {
    let p = Project::new();
    p.write("a.txt", "foo\nbar\nfoo\nfoo\n");
    let out = p.call(
        "edit_replace_exact",
        json!({"path": "a.txt", "old": "foo", "new": "baz", "expectedOccurrences": 2}),
    );
    assert!(!out.ok);
    assert_eq!(out.output["canApply"], false);
    let f = &out.output["failures"][0];
    assert_eq!(f["kind"], "occurrenceMismatch");
    assert_eq!(f["found"], 3);
    assert_eq!(f["lines"], json!([1, 3, 4]));
    insta::assert_snapshot!("replace_wrong_count_error", out.error.unwrap());
}

#[test]
fn replace_exact_anchor_not_found_shows_closest_lines() {
    let p = Project::new();
    p.write(
        "src/main.rs",
        "use std::io;\n\nfn main() {\n    let total = compute(1, 2);\n    println!(\"{total}\");\n}\n",
    );
    let out = p.call(
        "edit_replace_exact",
        json!({"path": "src/main.rs", "old": "  let total = compute(1,2);", "new": "x"}),
    );
    assert!(!out.ok);
    let f = &out.output["failures"][0];
    assert_eq!(f["kind"], "anchorNotFound");
    assert_eq!(f["closest"][0]["line"], 4);
    insta::assert_snapshot!("replace_anchor_not_found_error", out.error.unwrap());
}

#[test]
fn replace_exact_refusals() {
    let p = Project::new();
    p.write("a.txt", "abc\n");
    assert!(
        p.fail(
            "edit_replace_exact",
            json!({"path": "a.txt", "old": "", "new": "x"})
        )
        .contains("`old` is empty")
    );
    assert!(
        p.fail(
            "edit_replace_exact",
            json!({"path": "a.txt", "old": "b", "new": "b"})
        )
        .contains("identical")
    );
    let err = p.fail(
        "edit_replace_exact",
        json!({"path": "nope.txt", "old": "a", "new": "b"}),
    );
    assert!(
        err.contains("does not exist") && err.contains("edit_create_file"),
        "{err}"
    );
    p.mkdir("d");
    assert!(
        p.fail(
            "edit_replace_exact",
            json!({"path": "d", "old": "a", "new": "b"})
        )
        .contains("not a regular file")
    );
}

#[test]
fn replace_exact_on_crlf_file_keeps_crlf() {
    let p = Project::new();
    p.write("w.txt", "one\r\ntwo\r\nthree\r\n");
    p.propose_apply(
        "edit_replace_exact",
        json!({"path": "w.txt", "old": "one\ntwo\n", "new": "1\n2\n"}),
    );
    assert_eq!(p.read("w.txt"), "1\r\n2\r\nthree\r\n");
    // Text that carries its own \r is matched exactly as given.
    p.propose_apply(
        "edit_replace_exact",
        json!({"path": "w.txt", "old": "2\r\n", "new": "II\r\n"}),
    );
    assert_eq!(p.read("w.txt"), "1\r\nII\r\nthree\r\n");
}

#[test]
fn replace_exact_without_trailing_newline() {
    let p = Project::new();
    p.write("n.txt", "a\nlast");
    let diff = diff_of(
        &p,
        "edit_replace_exact",
        json!({"path": "n.txt", "old": "last", "new": "final"}),
    );
    insta::assert_snapshot!("replace_no_trailing_newline_diff", diff);
    p.propose_apply(
        "edit_replace_exact",
        json!({"path": "n.txt", "old": "last", "new": "final"}),
    );
    assert_eq!(p.read("n.txt"), "a\nfinal");
}

#[test]
fn edits_refuse_binary_non_utf8_and_oversized_files() {
    let p = Project::new();
    p.write("bin.dat", b"ab\0cd")
        .write("latin1.txt", b"caf\xe9\n");
    assert!(
        p.fail(
            "edit_replace_exact",
            json!({"path": "bin.dat", "old": "ab", "new": "x"})
        )
        .contains("binary")
    );
    assert!(
        p.fail(
            "edit_insert_at_line",
            json!({"path": "latin1.txt", "line": 1, "content": "x"})
        )
        .contains("not UTF-8")
    );
    assert!(
        p.fail(
            "edit_create_file",
            json!({"path": "bin.dat", "content": "x", "overwrite": true})
        )
        .contains("binary")
    );
    let f = std::fs::File::create(p.path("huge.txt")).unwrap();
    f.set_len(17 * 1024 * 1024).unwrap();
    assert!(
        p.fail(
            "edit_replace_exact",
            json!({"path": "huge.txt", "old": "a", "new": "b"})
        )
        .contains("too large")
    );
}

#[test]
fn edits_on_a_large_file_work() {
    let p = Project::new();
    let body: String = (0..300_000).map(|i| format!("row {i}\n")).collect();
    p.write("big.txt", &body);
    let out = p.ok("edit_replace_exact", json!({"path": "big.txt", "old": "row 299999\n", "new": "last row\n", "expectedOccurrences": 1}));
    assert_eq!(out["stats"]["linesAdded"], 1);
    p.propose_apply(
        "edit_insert_at_line",
        json!({"path": "big.txt", "line": 150_001, "content": "middle"}),
    );
    let text = p.read("big.txt");
    assert_eq!(text.lines().nth(150_000), Some("middle"));
    assert_eq!(text.len(), body.len() + "middle\n".len());
}

// ---------- edit_insert_at_line ----------

fn insert(content: &str, line: u64, text: &str) -> Result<String, String> {
    let p = Project::new();
    p.write("f.txt", content);
    match p.propose(
        "edit_insert_at_line",
        json!({"path": "f.txt", "line": line, "content": text}),
    ) {
        Ok(proposal) => {
            p.apply(&proposal).unwrap();
            Ok(p.read("f.txt"))
        }
        Err(out) => Err(out.error.unwrap()),
    }
}

#[test]
fn insert_at_line_positions() {
    let f = "l1\nl2\nl3\n";
    assert!(insert(f, 0, "x").unwrap_err().contains("must be 1..=4"));
    assert_eq!(insert(f, 1, "x").unwrap(), "x\nl1\nl2\nl3\n");
    assert_eq!(insert(f, 3, "x").unwrap(), "l1\nl2\nx\nl3\n");
    assert_eq!(insert(f, 4, "x").unwrap(), "l1\nl2\nl3\nx\n");
    assert!(insert(f, 5, "x").unwrap_err().contains("out of range"));
    assert!(
        insert(f, 1000, "x")
            .unwrap_err()
            .contains("the file has 3 lines")
    );
    assert_eq!(insert(f, 2, "a\nb\n").unwrap(), "l1\na\nb\nl2\nl3\n");
}

#[test]
fn insert_at_line_without_trailing_newline() {
    let f = "l1\nl2";
    assert_eq!(insert(f, 1, "x").unwrap(), "x\nl1\nl2");
    assert_eq!(insert(f, 2, "x").unwrap(), "l1\nx\nl2");
    assert_eq!(insert(f, 3, "x").unwrap(), "l1\nl2\nx");
    assert!(insert(f, 4, "x").is_err());
}

#[test]
fn insert_at_line_empty_file_and_crlf() {
    assert_eq!(insert("", 1, "first").unwrap(), "first\n");
    assert!(insert("", 2, "x").unwrap_err().contains("has 0 lines"));
    assert_eq!(
        insert("a\r\nb\r\n", 2, "x\ny").unwrap(),
        "a\r\nx\r\ny\r\nb\r\n"
    );
    assert_eq!(insert("a\r\nb\r\n", 3, "z").unwrap(), "a\r\nb\r\nz\r\n");
    assert!(
        insert("a\n", 1, "")
            .unwrap_err()
            .contains("`content` is empty")
    );
}

#[test]
fn insert_at_line_diff_snapshot() {
    let p = Project::new();
    p.write("src/lib.rs", "mod a;\nmod b;\n\npub fn run() {}\n");
    let diff = diff_of(
        &p,
        "edit_insert_at_line",
        json!({"path": "src/lib.rs", "line": 3, "content": "mod c;"}),
    );
    insta::assert_snapshot!("insert_diff", diff);
}

// ---------- edit_create_file ----------

#[test]
fn create_file_with_missing_directories() {
    let p = Project::new();
    let diff = diff_of(
        &p,
        "edit_create_file",
        json!({"path": "new/dir/file.rs", "content": "fn x() {}\n", "overwrite": false}),
    );
    insta::assert_snapshot!("create_diff", diff);
    assert!(!p.path("new").exists(), "proposal created a directory");
    let applied = p.propose_apply(
        "edit_create_file",
        json!({"path": "new/dir/file.rs", "content": "fn x() {}\n"}),
    );
    assert_eq!(
        applied.to_json(),
        json!({"applied": true, "files": [{"path": "new/dir/file.rs", "bytes": 10, "created": true}]})
    );
    assert_eq!(p.read("new/dir/file.rs"), "fn x() {}\n");
    let mode = std::fs::metadata(p.path("new/dir/file.rs"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o644);
}

#[test]
fn create_file_refuses_to_overwrite_unless_asked() {
    let p = Project::new();
    p.write("a.txt", "old\n");
    let err = p.fail(
        "edit_create_file",
        json!({"path": "a.txt", "content": "new\n"}),
    );
    assert!(
        err.contains("already exists") && err.contains("overwrite"),
        "{err}"
    );
    let diff = diff_of(
        &p,
        "edit_create_file",
        json!({"path": "a.txt", "content": "new\n", "overwrite": true}),
    );
    assert!(diff.starts_with("--- a/a.txt\n+++ b/a.txt\n"), "{diff}");
    p.write("file", "x");
    assert!(
        p.fail(
            "edit_create_file",
            json!({"path": "file/child.txt", "content": "x"})
        )
        .contains("through a file")
    );
}

#[test]
fn create_empty_file() {
    let p = Project::new();
    let out = p.ok(
        "edit_create_file",
        json!({"path": "empty.txt", "content": ""}),
    );
    assert_eq!(out["diff"], "--- /dev/null\n+++ b/empty.txt\n");
    p.propose_apply(
        "edit_create_file",
        json!({"path": "empty.txt", "content": ""}),
    );
    assert_eq!(p.read("empty.txt"), "");
}

// ---------- edit_apply_batch ----------

#[test]
fn batch_groups_diffs_by_file_and_applies_edits_in_order() {
    let p = batch_fixture();
    let args = json!({"edits": [
        {"toolName": "edit_replace_exact", "args": {"path": "src/a.rs", "old": "fn a() {}", "new": "fn a() { b() }"}},
        {"toolName": "edit_create_file", "args": {"path": "src/c.rs", "content": "pub fn c() {}\n", "overwrite": false}},
        {"toolName": "edit_replace_exact", "args": {"path": "src/a.rs", "old": "b()", "new": "b(); c()", "expectedOccurrences": 1}},
        {"toolName": "edit_insert_at_line", "args": {"path": "src/c.rs", "line": 1, "content": "// c"}},
        {"toolName": "edit_insert_at_line", "args": {"path": "src/b.rs", "line": 2, "content": "fn b2() {}"}},
    ]});
    let before = p.snapshot_tree();
    let out = p.ok("edit_apply_batch", args.clone());
    assert_eq!(p.snapshot_tree(), before);
    insta::assert_json_snapshot!("batch_output", out);
    let proposal = p.propose("edit_apply_batch", args).unwrap();
    insta::assert_snapshot!("batch_full_diff", proposal.full_diff());
    p.apply(&proposal).unwrap();
    assert_eq!(p.read("src/a.rs"), "fn a() { b(); c() }\n");
    assert_eq!(p.read("src/c.rs"), "// c\npub fn c() {}\n");
    assert_eq!(p.read("src/b.rs"), "fn b() {}\nfn b2() {}\n");
}

#[test]
fn batch_with_one_bad_edit_applies_nothing_and_reports_all_failures() {
    let p = batch_fixture();
    let before = p.snapshot_tree();
    let out = p.call(
        "edit_apply_batch",
        json!({"edits": [
            {"toolName": "edit_replace_exact", "args": {"path": "src/a.rs", "old": "fn a() {}", "new": "fn a2() {}"}},
            {"toolName": "edit_replace_exact", "args": {"path": "src/b.rs", "old": "fn missing() {}", "new": "x"}},
            {"toolName": "edit_insert_at_line", "args": {"path": "src/b.rs", "line": 1, "content": "// never"}},
            {"toolName": "edit_insert_at_line", "args": {"path": "src/a.rs", "line": 99, "content": "x"}},
        ]}),
    );
    assert!(!out.ok);
    assert_eq!(p.snapshot_tree(), before);
    let kinds: Vec<_> = out.output["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["edit"].clone(), f["kind"].clone()))
        .collect();
    assert_eq!(
        kinds,
        [
            (json!(2), json!("anchorNotFound")),
            (json!(3), json!("skipped")),
            (json!(4), json!("lineOutOfRange"))
        ]
    );
    assert!(out.error.unwrap().ends_with("Nothing was changed."));
}

#[test]
fn batch_argument_errors_name_the_nested_field() {
    let p = batch_fixture();
    let err = p.fail(
        "edit_apply_batch",
        json!({"edits": [
            {"toolName": "edit_create_file", "args": {"path": "x", "content": "y"}},
            {"toolName": "edit_replace_exact", "args": {"path": "src/a.rs", "new": "x"}},
        ]}),
    );
    assert!(
        err.contains("edits[1].args") && err.contains("old"),
        "{err}"
    );
    let err = p.fail(
        "edit_apply_batch",
        json!({"edits": [{"toolName": "shell_run", "args": {}}]}),
    );
    assert!(err.contains("edits[0].toolName"), "{err}");
    let err = p.fail("edit_apply_batch", json!({"edits": [{"toolName": "edit_insert_at_line", "args": {"path": "src/a.rs", "line": -1, "content": "x"}}]}));
    assert!(err.contains("edits[0].args.line"), "{err}");
    assert!(
        p.fail("edit_apply_batch", json!({"edits": []}))
            .contains("edits is empty")
    );
}

// ---------- write profiles ----------

#[test]
fn fs_write_text_proposes_then_reports_path_and_bytes() {
    let p = Project::new();
    let tools = &p.tools;
    let tool = tools.get("fs.write_text").unwrap();
    let write = tool.as_write().unwrap();
    let proposal = write
        .propose(json!({"path": "out/x.txt", "text": "hello"}), &p.ctx)
        .unwrap();
    assert!(!p.path("out").exists());
    let applied = p.apply(&proposal).unwrap();
    assert_eq!(
        write.applied_output(&proposal, &applied),
        json!({"path": "out/x.txt", "bytes": 5})
    );
    let err = write
        .propose(json!({"path": "out/x.txt", "text": "again"}), &p.ctx)
        .unwrap_err();
    assert!(err.error.unwrap().contains("already exists"));
    assert!(
        write
            .propose(
                json!({"path": "out/x.txt", "text": "again", "overwrite": true}),
                &p.ctx
            )
            .is_ok()
    );
}

#[test]
fn mesh_write_overwrites_and_reports_wrote_n_bytes() {
    let p = Project::new();
    p.write("notes.md", "old");
    let tool = p.tools.get("write").unwrap();
    let write = tool.as_write().unwrap();
    let proposal = write
        .propose(json!({"path": "notes.md", "content": "new text"}), &p.ctx)
        .unwrap();
    let applied = p.apply(&proposal).unwrap();
    assert_eq!(
        write.applied_output(&proposal, &applied),
        json!("wrote 8 bytes")
    );
    assert_eq!(p.read("notes.md"), "new text");
}

#[test]
fn read_only_tools_are_not_write_tools() {
    let p = Project::new();
    assert!(p.tools.get("read_file").unwrap().as_write().is_none());
    let err = p.propose("read_file", json!({"path": "x"})).unwrap_err();
    assert!(err.error.unwrap().contains("not a write tool"));
}

#[test]
fn mesh_write_respects_write_enabled() {
    let p = Project::new();
    let policy = north_policy::MeshPolicy::preset(north_policy::PolicyPreset::Conservative);
    let tools = north_tools::tools::mesh_tools_with(&policy);
    let tool = tools.get("write").unwrap();
    let write = tool.as_write().unwrap();
    let err = write
        .propose(json!({"path": "x.txt", "content": "x"}), &p.ctx)
        .unwrap_err();
    assert!(err.error.unwrap().contains("write_enabled"));
}
