//! `north tool edit_apply_batch --apply` killed with SIGKILL at random
//! points, inside and outside its transaction: every file is always entirely
//! old or entirely new, never half written, and the next run recovers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common;
use common::Sandbox;

const FILES: usize = 24;
/// Lines per file; long lines make the files big (so writes take time)
/// while keeping diffs cheap.
const LINES: usize = 48;
const LINE_BYTES: usize = 2048;

fn old_content(i: usize) -> String {
    (0..LINES)
        .map(|l| {
            let head = format!("old file {i} line {l} ");
            format!("{head}{}\n", "-".repeat(LINE_BYTES - head.len() - 1))
        })
        .collect()
}

fn new_content(i: usize) -> String {
    old_content(i)
        .replace('-', "=")
        .replace("old file", "NEW file")
}

fn created_content() -> String {
    "created by the batch\n".repeat(100)
}

fn reset(root: &Path) {
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir_all(root.join("src")).unwrap();
    for i in 0..FILES {
        std::fs::write(root.join(format!("src/f{i:02}.txt")), old_content(i)).unwrap();
    }
}

/// The batch: two sequential edits per file (every `-` becomes `=`, then
/// each `old file` becomes `NEW file`), plus a new file in a new directory.
fn batch_args(dir: &Path) -> PathBuf {
    let mut edits = Vec::new();
    for i in 0..FILES {
        let path = format!("src/f{i:02}.txt");
        edits.push(json!({"toolName": "edit_replace_exact", "args": {"path": path, "old": "-", "new": "=", "expectedOccurrences": null}}));
        edits.push(json!({"toolName": "edit_replace_exact", "args": {"path": path, "old": "old file", "new": "NEW file", "expectedOccurrences": LINES}}));
    }
    edits.push(json!({"toolName": "edit_create_file", "args": {"path": "gen/new/created.txt", "content": created_content()}}));
    let file = dir.join("batch.json");
    std::fs::write(&file, json!({ "edits": edits }).to_string()).unwrap();
    file
}

#[derive(Debug, PartialEq)]
enum FileState {
    Old,
    New,
}

/// Every file must be entirely old or entirely new; returns the states.
fn check_files(root: &Path, when: &str) -> Vec<FileState> {
    let mut states = Vec::new();
    for i in 0..FILES {
        let text = std::fs::read_to_string(root.join(format!("src/f{i:02}.txt")))
            .unwrap_or_else(|e| panic!("{when}: src/f{i:02}.txt unreadable: {e}"));
        states.push(if text == old_content(i) {
            FileState::Old
        } else if text == new_content(i) {
            FileState::New
        } else {
            panic!(
                "{when}: src/f{i:02}.txt is neither old nor new ({} bytes)",
                text.len()
            );
        });
    }
    match std::fs::read_to_string(root.join("gen/new/created.txt")) {
        Ok(text) if text == created_content() => states.push(FileState::New),
        Ok(text) => panic!("{when}: created.txt is partial ({} bytes)", text.len()),
        Err(_) => states.push(FileState::Old),
    }
    states
}

/// A pseudo-random fraction in [0, 1) without extra dependencies.
fn random_fraction(seed: u64) -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(seed);
    (h.finish() % 1_000_000) as f64 / 1_000_000.0
}

fn apply_batch(sb: &Sandbox, root: &Path, args: &Path) -> std::process::Child {
    sb.north()
        .args(["tool", "edit_apply_batch", "--apply", "--args"])
        .arg(format!("@{}", args.display()))
        .arg("--path")
        .arg(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn journal_exists(root: &Path) -> bool {
    std::fs::read_dir(root.join(".north/txn"))
        .map(|d| {
            d.flatten()
                .any(|e| e.path().extension().is_some_and(|x| x == "json"))
        })
        .unwrap_or(false)
}

/// Waits until the apply has started its transaction (or exited).
fn wait_for_transaction(root: &Path, child: &mut std::process::Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline && !journal_exists(root) && child.try_wait().unwrap().is_none()
    {
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[test]
fn sigkill_during_a_batch_apply_never_leaves_a_partial_file() {
    let sb = Sandbox::new();
    let args = batch_args(sb.dir.path());
    let root = sb.dir.path().join("proj");

    // Calibrate: the whole run, and the transaction part of it (journal
    // written → process done), to spread kill points over both.
    reset(&root);
    let start = Instant::now();
    let mut child = apply_batch(&sb, &root, &args);
    wait_for_transaction(&root, &mut child);
    let tx_start = Instant::now();
    assert!(child.wait().unwrap().success());
    let (full, tx) = (
        start.elapsed(),
        tx_start.elapsed().max(Duration::from_millis(1)),
    );
    assert!(
        check_files(&root, "uninterrupted")
            .iter()
            .all(|s| *s == FileState::New)
    );

    let iterations = 32;
    let (mut all_old, mut all_new, mut mixed) = (0, 0, 0);
    for n in 0..iterations {
        reset(&root);
        let mut child = apply_batch(&sb, &root, &args);
        // Even iterations: anywhere in the run; odd ones: inside the transaction.
        let delay = if n % 2 == 0 {
            full.mul_f64(random_fraction(n) * 1.1)
        } else {
            wait_for_transaction(&root, &mut child);
            tx.mul_f64(random_fraction(n) * 1.1)
        };
        std::thread::sleep(delay.min(Duration::from_secs(10)));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let killed = check_files(&root, &format!("iteration {n} right after SIGKILL"));
        if killed.contains(&FileState::Old) && killed.contains(&FileState::New) {
            mixed += 1;
        }
        // The next `north tool` run finishes the interrupted transaction:
        // then the batch is all old or all new.
        let recovery = sb
            .north()
            .args(["tool", "list_root", "--args", "{}", "--path"])
            .arg(&root)
            .output()
            .unwrap();
        assert!(
            recovery.status.success(),
            "iteration {n}: the next run recovers: {}",
            String::from_utf8_lossy(&recovery.stderr)
        );
        let settled = check_files(&root, &format!("iteration {n} after recovery"));
        if settled.iter().all(|s| *s == FileState::Old) {
            all_old += 1;
        } else if settled.iter().all(|s| *s == FileState::New) {
            all_new += 1;
        } else {
            panic!("iteration {n}: batch is mixed after recovery: {settled:?}");
        }
        let leftovers: Vec<_> = std::fs::read_dir(root.join("src"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(
            leftovers.is_empty(),
            "iteration {n}: temp files left: {leftovers:?}"
        );
        assert!(
            !journal_exists(&root),
            "iteration {n}: journal left after recovery"
        );
    }
    eprintln!(
        "{iterations} SIGKILLs (run {full:?}, transaction {tx:?}): {all_old} rolled back, {all_new} completed or rolled forward, {mixed} caught mid-rename"
    );
}
