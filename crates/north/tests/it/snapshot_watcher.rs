//! The snapshot watcher through the real binary: after a whole walk of a
//! big tree (here any tree: `NORTH_SNAPSHOT_WATCHER=1`), the next `north
//! exec` — a new process — gets its snapshots from the watcher instead of
//! walking, and undo still puts back exactly what the turn changed through
//! the shell, keeping the user's edits made between turns. An answer that
//! names no stored tree is not believed, sandboxed commands cannot see the
//! watcher, and the watcher leaves with its tree.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::text;
use crate::undo::{Tree, exec, listing, north, tree};

/// A tree whose runs start and ask a watcher, with a runtime dir of its own.
fn watched_tree() -> Tree {
    let mut t = tree(true);
    let run = t.base.join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    t.env.push(("XDG_RUNTIME_DIR".into(), run));
    t.env.push(("NORTH_SNAPSHOT_WATCHER".into(), "1".into()));
    t
}

fn runtime(t: &Tree) -> PathBuf {
    t.base.join("run/north")
}

/// The file in the runtime dir ending in `suffix`, once it is there.
fn wait_for(t: &Tree, suffix: &str) -> PathBuf {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let found = std::fs::read_dir(runtime(t)).ok().and_then(|dir| {
            dir.flatten()
                .map(|e| e.path())
                .find(|p| p.to_string_lossy().ends_with(suffix))
        });
        if let Some(path) = found {
            return path;
        }
        assert!(
            Instant::now() < deadline,
            "no {suffix} in {}",
            runtime(t).display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The watcher's pid, from its lock file.
fn watcher_pid(t: &Tree) -> u32 {
    let lock = wait_for(t, ".lock");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(pid) = std::fs::read_to_string(&lock).unwrap().trim().parse() {
            return pid;
        }
        assert!(Instant::now() < deadline, "no pid in {}", lock.display());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether process `pid` still runs (a zombie nobody reaped has left).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|s| !s.trim_start().starts_with('Z'))
    })
}

/// Waits for process `pid` to leave.
fn wait_gone(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while running(pid) {
        assert!(
            Instant::now() < deadline,
            "the watcher {pid} is still there"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The snapshot events of the project's sessions' traces, in order.
fn snapshots(t: &Tree) -> Vec<Value> {
    let mut out = Vec::new();
    for session in std::fs::read_dir(t.project.join(".north/sessions")).unwrap() {
        let Ok(trace) = std::fs::read_to_string(session.unwrap().path().join("trace.jsonl")) else {
            continue;
        };
        out.extend(
            trace
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .filter(|e| e["kind"] == "snapshot")
                .map(|e| e["data"].clone()),
        );
    }
    out
}

fn shell_turn(command: &str) -> Value {
    json!([
        {"tool_calls": [{"id": "s", "name": "shell_run", "args": {"command": command}}]},
        {"text": "Done."}
    ])
}

/// Runs one shell turn and checks it went through.
fn turn(t: &Tree, extra: &[&str], command: &str) {
    let (out, _) = exec(t, extra, shell_turn(command), "change things");
    assert!(out.status.success(), "exec failed: {}", text(&out.stderr));
}

#[test]
fn a_new_process_asks_the_trees_watcher_and_undo_still_covers_every_change() {
    let t = watched_tree();
    // The first turn walks the tree whole and starts the watcher; its
    // command cannot see North's runtime dir, where the socket is.
    turn(
        &t,
        &[],
        r#"echo one > made.txt; (ls "$XDG_RUNTIME_DIR/north" >/dev/null 2>&1 && echo visible || echo hidden) > seen.txt"#,
    );
    assert_eq!(
        std::fs::read_to_string(t.project.join("seen.txt")).unwrap(),
        "hidden\n"
    );
    let first = snapshots(&t);
    assert_eq!(first.len(), 2, "{first:?}");
    assert_eq!(first[0]["full_walk"], true, "{first:?}");
    assert_eq!(first[0]["by_watcher"], false, "{first:?}");
    wait_for(&t, ".sock");
    let pid = watcher_pid(&t);
    // It confined itself (Landlock needs no_new_privs first).
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert!(status.contains("NoNewPrivs:\t1"), "{status}");
    let log = std::fs::read_to_string(t.base.join("home/state/north/north.log")).unwrap();
    let confined = log
        .lines()
        .find(|l| l.contains("snapshot watcher confined"))
        .unwrap_or_else(|| panic!("no confinement in the log:\n{log}"));
    assert!(confined.contains("landlock_abi=Some("), "{confined}");

    // The user's own edits between turns.
    std::fs::write(t.project.join("hand.txt"), "by hand\n").unwrap();
    std::fs::write(t.project.join("sub/keep.txt"), "edited by hand\n").unwrap();
    let before = listing(&t.project);

    // The second turn is a new process: both its snapshots come from the
    // watcher, which walked nothing.
    turn(
        &t,
        &["--continue"],
        "echo two >> a.txt && rm -r sub && mkdir -p made/deeper && echo z > made/deeper/z && chmod 700 run.sh",
    );
    let second = snapshots(&t);
    assert_eq!(second.len(), 4, "{second:?}");
    for snap in &second[2..] {
        assert_eq!(snap["by_watcher"], true, "{second:?}");
        assert_eq!(snap["full_walk"], false, "{second:?}");
    }
    assert_ne!(second[2]["id"], second[3]["id"], "{second:?}");

    // Undo puts back exactly the tree the second turn started from, the
    // hand edits included.
    let out = north(&t, &["undo"]);
    assert!(out.status.success(), "undo failed: {}", text(&out.stderr));
    assert_eq!(listing(&t.project), before);
    assert_eq!(
        std::fs::read_to_string(t.project.join("sub/keep.txt")).unwrap(),
        "edited by hand\n"
    );

    // The watcher leaves with its tree.
    assert!(running(pid));
    std::fs::remove_dir_all(&t.project).unwrap();
    wait_gone(pid);
}

/// Stands in for the watcher on its socket: each of the first `questions`
/// gets `answer`.
fn impostor(socket: &Path, questions: usize, answer: Value) -> std::thread::JoinHandle<usize> {
    let _ = std::fs::remove_file(socket);
    let listener = std::os::unix::net::UnixListener::bind(socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        use std::io::{BufRead, Write};
        let mut asked = 0;
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline && asked < questions {
            match listener.accept() {
                Ok((stream, _)) => {
                    stream.set_nonblocking(false).unwrap();
                    let mut line = String::new();
                    std::io::BufReader::new(&stream)
                        .read_line(&mut line)
                        .unwrap();
                    assert!(line.contains("\"root\""), "{line}");
                    writeln!(&stream, "{answer}").unwrap();
                    asked += 1;
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        asked
    })
}

#[test]
fn an_answer_that_names_no_stored_tree_is_not_believed() {
    let t = watched_tree();
    turn(&t, &[], "echo one > made.txt");
    let socket = wait_for(&t, ".sock");
    let lock = wait_for(&t, ".lock");
    let pid = watcher_pid(&t);
    // The real watcher goes; the test holds its lock, so no new one starts.
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(i32::try_from(pid).unwrap(), libc::SIGTERM);
    }
    wait_gone(pid);
    let held = std::fs::OpenOptions::new().read(true).open(&lock).unwrap();
    held.try_lock().unwrap();
    // Only the first snapshot of the turn asks: the process walked the
    // tree whole and watches it itself from then on.
    let asked = impostor(
        &socket,
        1,
        json!({"answer": "snapshot", "id": "0".repeat(64), "entries": 1,
            "hashed": 0, "bytes_written": 0, "full_walk": false}),
    );

    std::fs::write(t.project.join("hand.txt"), "by hand\n").unwrap();
    let before = listing(&t.project);
    turn(&t, &["--continue"], "echo two >> a.txt && rm doomed.txt");
    assert_eq!(asked.join().unwrap(), 1, "the turn asked");
    let snaps = snapshots(&t);
    assert_eq!(snaps.len(), 4, "{snaps:?}");
    assert_eq!(snaps[2]["by_watcher"], false, "{snaps:?}");
    assert_eq!(snaps[2]["full_walk"], true, "{snaps:?}");
    let out = north(&t, &["undo"]);
    assert!(out.status.success(), "undo failed: {}", text(&out.stderr));
    assert_eq!(listing(&t.project), before);
}
