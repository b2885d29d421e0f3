//! Two North processes editing one project at once: overlapping batches
//! started together, 100 rounds. Every batch is either applied whole or
//! refused whole with a message that says why, and the files always show
//! exactly the batches that were reported applied.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

const ROUNDS: usize = 100;

fn north(home: &Path, root: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_north"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Batch `who`: files `range` go from `base` to `who`, and `shared.txt` is
/// created with `who` in it.
fn batch(who: &str, range: std::ops::Range<usize>) -> Value {
    let mut edits: Vec<Value> = range
        .map(|i| {
            json!({"toolName": "edit_replace_exact", "args": {
                "path": format!("f{i}.txt"), "old": "base", "new": who, "expectedOccurrences": 1,
            }})
        })
        .collect();
    edits.push(json!({"toolName": "edit_create_file", "args": {
        "path": "shared.txt", "content": format!("{who}\n"),
    }}));
    json!({ "edits": edits })
}

#[test]
fn overlapping_batches_from_two_processes_are_each_whole_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let root = dir.path().join("proj");
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    std::fs::write(&a, batch("AAAA", 0..4).to_string()).unwrap();
    std::fs::write(&b, batch("BBBB", 1..5).to_string()).unwrap();
    let (mut a_won, mut b_won) = (0, 0);
    let mut refusals = std::collections::BTreeMap::new();
    for round in 0..ROUNDS {
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        for i in 0..5 {
            std::fs::write(root.join(format!("f{i}.txt")), "base\n").unwrap();
        }
        let spawn = |args: &Path| {
            north(&home, &root)
                .args(["tool", "edit_apply_batch", "--apply", "--args"])
                .arg(format!("@{}", args.display()))
                .spawn()
                .unwrap()
        };
        // Both start at once; which one gets there first is up to the OS.
        let (pa, pb) = if round % 2 == 0 {
            let pa = spawn(&a);
            (pa, spawn(&b))
        } else {
            let pb = spawn(&b);
            (spawn(&a), pb)
        };
        let outcome = |child: std::process::Child| {
            let out = child.wait_with_output().unwrap();
            let json: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            (
                json["ok"] == true,
                json["error"].as_str().unwrap_or("").to_string(),
            )
        };
        let (a_ok, a_err) = outcome(pa);
        let (b_ok, b_err) = outcome(pb);
        let files: Vec<String> = (0..5)
            .map(|i| std::fs::read_to_string(root.join(format!("f{i}.txt"))).unwrap())
            .collect();
        let shared = std::fs::read_to_string(root.join("shared.txt")).unwrap_or_default();
        assert!(
            a_ok != b_ok,
            "round {round}: exactly one batch applies (a: {a_ok} {a_err}; b: {b_ok} {b_err})"
        );
        let (winner, range, loser_err) = if a_ok {
            a_won += 1;
            ("AAAA", 0..4, b_err)
        } else {
            b_won += 1;
            ("BBBB", 1..5, a_err)
        };
        for (i, text) in files.iter().enumerate() {
            let expected = if range.contains(&i) { winner } else { "base" };
            assert_eq!(text, &format!("{expected}\n"), "round {round}: f{i}.txt");
        }
        assert_eq!(shared, format!("{winner}\n"), "round {round}: shared.txt");
        // The refusal says what failed and that nothing was written.
        let why = if loser_err.contains("changed since the proposal") {
            "stale: changed since the proposal"
        } else if loser_err.contains("already exists") {
            "shared.txt already exists"
        } else if loser_err.contains("not found") {
            "anchor not found (the other batch came first)"
        } else {
            panic!("round {round}: unclear refusal: {loser_err}")
        };
        assert!(
            loser_err.contains("nothing was written")
                || loser_err.contains("nothing was applied")
                || !why.starts_with("stale"),
            "round {round}: {loser_err}"
        );
        *refusals.entry(why).or_insert(0) += 1;
        assert!(
            !root.join(".north/txn").read_dir().is_ok_and(|mut d| d
                .any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".json")))),
            "round {round}: a journal is left"
        );
    }
    eprintln!("{ROUNDS} rounds: A applied {a_won}, B applied {b_won}; refusals: {refusals:?}");
}
