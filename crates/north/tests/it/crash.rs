//! The crash harness: SIGKILL at random points while North applies an edit
//! batch or writes its session, then start an entry point (`north tool`,
//! `north exec`, `north mesh`, in turn) and check that no file is torn or
//! mixed, no accepted edit is lost, nothing is left behind and the session
//! reads back.
//!
//! `NORTH_CRASH_ROUNDS` sets the number of kills (default 16 for the suite);
//! `scripts/crash-harness.sh` runs a long one (the README records it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common;
use common::Sandbox;

const FILES: usize = 24;
const LINES: usize = 200;

fn rounds() -> u64 {
    std::env::var("NORTH_CRASH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16)
}

/// The sandbox's binary, quiet: the harness judges only the files.
fn quiet(sb: &Sandbox) -> Command {
    let mut cmd = sb.north();
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    cmd
}

/// Version `v` of file `i`: every line names both, so a mix of two versions
/// (or a torn write) is visible.
fn content(i: usize, v: u32) -> String {
    (0..LINES)
        .map(|l| format!("file {i:02} version {v} line {l:03} {}\n", "x".repeat(40)))
        .collect()
}

fn reset(root: &Path) {
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir_all(root.join("src")).unwrap();
    for i in 0..FILES {
        std::fs::write(root.join(format!("src/f{i:02}.txt")), content(i, 0)).unwrap();
    }
}

/// A batch taking every file from version `from` to `from + 1`, plus a new
/// file named after the version.
fn batch(from: u32) -> Value {
    let mut edits: Vec<Value> = (0..FILES)
        .map(|i| {
            json!({"toolName": "edit_replace_exact", "args": {
                "path": format!("src/f{i:02}.txt"),
                "old": format!("version {from} "),
                "new": format!("version {} ", from + 1),
                "expectedOccurrences": LINES,
            }})
        })
        .collect();
    edits.push(json!({"toolName": "edit_create_file", "args": {
        "path": format!("gen/v{}/created.txt", from + 1),
        "content": "created\n".repeat(500),
    }}));
    json!({ "edits": edits })
}

/// The version of each file; panics on a torn file. Right after a kill a
/// batch may be caught mid-rename (mixed); [`version`] is for after recovery.
fn versions(root: &Path, when: &str) -> Vec<u32> {
    let mut versions = Vec::new();
    for i in 0..FILES {
        let path = root.join(format!("src/f{i:02}.txt"));
        let text = std::fs::read_to_string(&path).unwrap();
        let v = (0..4)
            .find(|v| text == content(i, *v))
            .unwrap_or_else(|| panic!("{when}: {} is torn ({} bytes)", path.display(), text.len()));
        versions.push(v);
    }
    versions
}

/// The version every file is at; panics on a torn file or a mixed batch.
fn version(root: &Path, when: &str) -> u32 {
    let versions = versions(root, when);
    let v = versions[0];
    assert!(
        versions.iter().all(|x| *x == v),
        "{when}: the batch is mixed: {versions:?}"
    );
    let created = root.join(format!("gen/v{v}/created.txt"));
    if v > 0 {
        assert_eq!(
            std::fs::read_to_string(&created).unwrap_or_default(),
            "created\n".repeat(500),
            "{when}: the created file of version {v}"
        );
    }
    assert!(
        !root.join(format!("gen/v{}/created.txt", v + 1)).exists(),
        "{when}: a file of an undone batch remains"
    );
    v
}

fn leftovers(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let sessions = std::fs::read_dir(root.join(".north/sessions"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path());
    let dirs = [root.join("src"), root.join(".north/txn")]
        .into_iter()
        .chain(sessions);
    for dir in dirs {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let journal = name.ends_with(".json") && dir.ends_with("txn");
            if name.ends_with(".tmp") || journal {
                out.push(name);
            }
        }
    }
    out
}

/// A pseudo-random fraction in [0, 1) from `seed`.
fn fraction(seed: u64) -> f64 {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 29;
    (x % 1_000_000) as f64 / 1_000_000.0
}

fn kill_after(mut child: Child, delay: Duration) {
    let start = Instant::now();
    while start.elapsed() < delay {
        if child.try_wait().unwrap().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_micros(300));
    }
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
}

/// Starts one entry point; each settles an interrupted apply first.
fn start_entry_point(lab: &Sandbox, n: u64) -> &'static str {
    let scratch = lab.file("read.json", &json!([{"text": "looked"}]));
    let (name, status) = match n % 3 {
        0 => (
            "north tool",
            quiet(lab).args(["tool", "list_root"]).status().unwrap(),
        ),
        1 => (
            "north exec",
            quiet(lab)
                .args(["exec", "--script"])
                .arg(&scratch)
                .arg("look")
                .status()
                .unwrap(),
        ),
        _ => {
            let plan = json!({"items": [{"description": "Look", "tool": null}]}).to_string();
            let mesh = lab.file(
                "mesh.json",
                &json!([{"text": plan}, {"text": "looked"}, {"text": "Looked around."}]),
            );
            (
                "north mesh",
                quiet(lab)
                    .args(["mesh", "--script"])
                    .arg(&mesh)
                    .arg("look")
                    .status()
                    .unwrap(),
            )
        }
    };
    assert!(status.success(), "{name} failed to start after a kill");
    name
}

/// Every session log: complete lines parse; only the last may be torn.
fn sessions_read_back(root: &Path) {
    for entry in std::fs::read_dir(root.join(".north/sessions"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let log = std::fs::read_to_string(entry.path().join("log.jsonl")).unwrap_or_default();
        let lines: Vec<&str> = log.split_inclusive('\n').collect();
        for (i, line) in lines.iter().enumerate() {
            let ok = line.ends_with('\n') && serde_json::from_str::<Value>(line).is_ok();
            assert!(
                ok || i + 1 == lines.len(),
                "torn line {i} in {}",
                entry.path().display()
            );
        }
        let cp = entry.path().join("checkpoint.json");
        if cp.exists() {
            serde_json::from_str::<Value>(&std::fs::read_to_string(&cp).unwrap())
                .unwrap_or_else(|e| panic!("torn snapshot {}: {e}", cp.display()));
        }
    }
}

#[test]
fn sigkill_during_applies_and_session_writes_never_tears_or_loses_an_edit() {
    let lab = Sandbox::new();
    let root = lab.project();
    let rounds = rounds();
    // Calibrate: how long an uninterrupted apply and session take, to
    // spread the kills over the whole of each.
    let timed = |cmd: &mut Command| {
        let start = Instant::now();
        assert!(cmd.status().unwrap().success());
        start.elapsed()
    };
    reset(&root);
    let args = lab.file("batch.json", &batch(0));
    let apply_time = timed(
        quiet(&lab)
            .args(["tool", "edit_apply_batch", "--apply", "--args"])
            .arg(format!("@{}", args.display())),
    );
    reset(&root);
    let session_script = {
        let turns: Vec<Value> = (0..=2)
            .map(|v| json!({"tool_calls": [{"id": format!("e{v}"), "name": "edit_apply_batch", "args": batch(v)}]}))
            .chain(std::iter::once(json!({"text": "done"})))
            .collect();
        lab.file("calibrate.json", &json!(turns))
    };
    let session_time = timed(
        quiet(&lab)
            .args(["exec", "--approve-edits", "--script"])
            .arg(&session_script)
            .arg("edit everything"),
    );
    let (mut undone, mut completed, mut session_kills, mut caught_mid_rename) = (0, 0, 0, 0);
    let mut entry_points = std::collections::BTreeMap::new();
    for n in 0..rounds {
        reset(&root);
        // An accepted edit: batch 0 → 1, applied and reported.
        let accepted = lab.file("accepted.json", &batch(0));
        let status = quiet(&lab)
            .args(["tool", "edit_apply_batch", "--apply", "--args"])
            .arg(format!("@{}", accepted.display()))
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(version(&root, "after the accepted batch"), 1);

        if n % 2 == 0 {
            // Kill during the apply of batch 1 → 2.
            let args = lab.file("batch.json", &batch(1));
            let child = quiet(&lab)
                .args(["tool", "edit_apply_batch", "--apply", "--args"])
                .arg(format!("@{}", args.display()))
                .spawn()
                .unwrap();
            kill_after(child, apply_time.mul_f64(fraction(n) * 1.2));
        } else {
            // Kill while a session writes its log and applies accepted edits.
            session_kills += 1;
            let turns: Vec<Value> = (1..=3)
                .map(|v| json!({"tool_calls": [{"id": format!("e{v}"), "name": "edit_apply_batch", "args": batch(v)}]}))
                .chain(std::iter::once(json!({"text": "done"})))
                .collect();
            let script = lab.file("session.json", &json!(turns));
            let child = quiet(&lab)
                .args(["exec", "--approve-edits", "--script"])
                .arg(&script)
                .arg("edit everything")
                .spawn()
                .unwrap();
            kill_after(child, session_time.mul_f64(fraction(n) * 1.2));
        }
        let killed = versions(&root, &format!("round {n}: right after the kill"));
        if killed.iter().any(|v| *v != killed[0]) {
            caught_mid_rename += 1;
        }
        let killed_at = killed.iter().copied().min().unwrap_or(0);
        let entry = start_entry_point(&lab, n);
        *entry_points.entry(entry).or_insert(0) += 1;
        let settled = version(&root, &format!("round {n}: after {entry} started"));
        assert!(settled >= 1, "round {n}: the accepted batch was lost");
        assert!(
            settled >= killed_at,
            "round {n}: an applied batch went back"
        );
        if settled == 1 {
            undone += 1;
        } else {
            completed += 1;
        }
        let left = leftovers(&root);
        assert!(left.is_empty(), "round {n}: left behind: {left:?}");
        sessions_read_back(&root);
    }
    eprintln!(
        "crash harness: {rounds} SIGKILLs ({session_kills} during sessions; apply {apply_time:?}, session {session_time:?}), {undone} left the interrupted work undone, {completed} completed it ({caught_mid_rename} caught mid-rename and settled at the next start), 0 torn or mixed after a start; entry points started: {entry_points:?}"
    );
}
