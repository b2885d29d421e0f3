//! Undo and rewind through the real binary: a scripted turn edits a file
//! and runs a shell command that creates, deletes, chmods, rewrites and
//! relinks files; `north undo` brings the tree back byte-identical (modes
//! included), in a git repository and in a plain directory. Hand edits
//! after the turn are detected and never overwritten silently.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::common;
use common::text;

pub(crate) struct Tree {
    _dir: tempfile::TempDir,
    pub(crate) base: PathBuf,
    pub(crate) project: PathBuf,
    /// Variables every `north` run of this tree gets besides the homes.
    pub(crate) env: Vec<(String, PathBuf)>,
}

pub(crate) fn tree(git: bool) -> Tree {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let project = base.join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(project.join("sub/empty")).unwrap();
    std::fs::create_dir_all(project.join("target")).unwrap();
    std::fs::create_dir_all(base.join("home")).unwrap();
    if git {
        let ok = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&project)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git init");
    }
    std::fs::write(project.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(project.join("a.txt"), "one\n").unwrap();
    std::fs::write(project.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    std::fs::write(project.join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(
        project.join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(project.join("doomed.txt"), "delete me\n").unwrap();
    std::fs::write(project.join("sub/keep.txt"), "keep\n").unwrap();
    std::fs::write(project.join("bin.dat"), [0u8, 1, 2, 255, 0, 7]).unwrap();
    std::os::unix::fs::symlink("a.txt", project.join("link")).unwrap();
    std::fs::write(project.join("target/build.out"), "ignored\n").unwrap();
    Tree {
        _dir: dir,
        base,
        project,
        env: Vec::new(),
    }
}

/// Runs `north SUBCOMMAND ARGS… --path PROJECT`: without `.git` the root
/// would otherwise be searched for above the project.
pub(crate) fn north(t: &Tree, args: &[&str]) -> Output {
    let home = t.base.join("home");
    Command::new(env!("CARGO_BIN_EXE_north"))
        .envs(t.env.iter().map(|(k, v)| (k, v)))
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_DATA_HOME", home.join("data"))
        .current_dir(&t.project)
        .args(&args[..1])
        .arg("--path")
        .arg(&t.project)
        .args(&args[1..])
        .output()
        .unwrap()
}

/// Runs one scripted `north exec` turn; returns its output and the requests sent.
pub(crate) fn exec(t: &Tree, extra: &[&str], turns: Value, prompt: &str) -> (Output, Vec<Value>) {
    let script = t.base.join("script.json");
    std::fs::write(&script, turns.to_string()).unwrap();
    let requests = t.base.join("requests.jsonl");
    let _ = std::fs::remove_file(&requests);
    let mut args = vec![
        "exec",
        "--mode",
        "auto",
        "--script",
        script.to_str().unwrap(),
    ];
    args.extend(["--record-requests", requests.to_str().unwrap()]);
    args.extend(extra);
    args.push(prompt);
    let out = north(t, &args);
    let sent = std::fs::read_to_string(&requests)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out, sent)
}

/// Every path under `root` but North's state and git's: kind, mode, bytes.
pub(crate) fn listing(root: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let path = e.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".north" || rel == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let what = if meta.file_type().is_symlink() {
                format!("link -> {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                walk(root, &path, out);
                format!("dir {mode:o}")
            } else {
                format!("file {mode:o} {:?}", std::fs::read(&path).unwrap())
            };
            out.insert(rel, what);
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// A turn that edits through the edit tool and changes everything else
/// through one shell command.
fn busy_turn() -> Value {
    let command = "echo new > created.txt && mkdir -p newdir/deep && echo x > newdir/deep/f \
        && rm doomed.txt && chmod 600 src/lib.rs && chmod 644 run.sh \
        && printf 'rewritten' > sub/keep.txt && rm link && ln -s src/lib.rs link \
        && rmdir sub/empty && printf '\\000\\001' > bin.dat && echo more > target/build.out";
    json!([
        {"tool_calls": [{"id": "e1", "name": "edit_replace_exact",
            "args": {"path": "a.txt", "old": "one\n", "new": "two\n"}}]},
        {"tool_calls": [{"id": "s1", "name": "shell_run", "args": {"command": command}}]},
        {"text": "Done."}
    ])
}

fn undo_restores_everything(git: bool) {
    let t = tree(git);
    let before = listing(&t.project);
    let (out, _) = exec(&t, &[], busy_turn(), "change things");
    assert!(out.status.success(), "exec failed: {}", text(&out.stderr));
    let after = listing(&t.project);
    assert_ne!(before, after);
    assert_eq!(
        std::fs::read_to_string(t.project.join("a.txt")).unwrap(),
        "two\n"
    );
    assert!(t.project.join("created.txt").exists());

    let out = north(&t, &["undo"]);
    assert!(out.status.success(), "undo failed: {}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("restored a.txt"), "{shown}");
    assert!(shown.contains("removed  created.txt"), "{shown}");

    let mut expected = before;
    // Ignored files are not North's to restore: the command's change stays.
    expected.insert("target/build.out".into(), after["target/build.out"].clone());
    assert_eq!(listing(&t.project), expected);

    // Nothing is left to undo.
    let out = north(&t, &["undo"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("nothing to undo"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn undo_restores_a_git_repository_byte_exact() {
    undo_restores_everything(true);
}

#[test]
fn undo_restores_a_plain_directory_byte_exact() {
    undo_restores_everything(false);
}

#[test]
fn a_hand_edit_after_the_turn_is_detected_and_not_overwritten() {
    let t = tree(false);
    let (out, _) = exec(&t, &[], busy_turn(), "change things");
    assert!(out.status.success(), "exec failed: {}", text(&out.stderr));
    // The user edits a file the turn changed, and one it did not.
    std::fs::write(t.project.join("a.txt"), "two\nmine\n").unwrap();
    std::fs::write(t.project.join("run.sh"), "#!/bin/sh\necho mine\n").unwrap();

    let out = north(&t, &["undo"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("changed since North changed them: a.txt"));
    assert!(text(&out.stdout).contains("+mine"), "{}", text(&out.stdout));
    // Nothing was restored.
    assert_eq!(
        std::fs::read_to_string(t.project.join("a.txt")).unwrap(),
        "two\nmine\n"
    );
    assert!(t.project.join("created.txt").exists());

    let out = north(&t, &["undo", "--dry-run"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("would restore"));
    assert!(t.project.join("created.txt").exists());

    let out = north(&t, &["undo", "--force"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(t.project.join("a.txt")).unwrap(),
        "one\n"
    );
    assert!(!t.project.join("created.txt").exists());
    // run.sh's content was the user's (the turn only chmodded it): its mode
    // goes back, the file is the turn's change undone, and the hand edit
    // was shown before --force overwrote it.
    assert_eq!(
        std::fs::metadata(t.project.join("run.sh"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o755
    );
}

fn user_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .collect()
}

#[test]
fn rewind_conversation_only_code_only_and_both() {
    let t = tree(false);
    let edit = |old: &str, new: &str| {
        json!([
            {"tool_calls": [{"id": "e", "name": "edit_replace_exact",
                "args": {"path": "a.txt", "old": old, "new": new}}]},
            {"text": "Done."}
        ])
    };
    let (out, _) = exec(&t, &[], edit("one\n", "two\n"), "first ask");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (out, _) = exec(&t, &["--continue"], edit("two\n", "three\n"), "second ask");
    assert!(out.status.success(), "{}", text(&out.stderr));

    let out = north(&t, &["undo", "--list"]);
    let list = text(&out.stdout);
    assert!(list.contains("1  ") && list.contains("first ask"), "{list}");
    assert!(list.contains("second ask"), "{list}");

    // Conversation only: the files stay, the next request has no trace of turn 2.
    let out = north(&t, &["undo", "--turn", "2", "--what", "conversation"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("message(s) dropped"));
    assert_eq!(
        std::fs::read_to_string(t.project.join("a.txt")).unwrap(),
        "three\n"
    );
    let (out, sent) = exec(&t, &["--continue"], json!([{"text": "ok"}]), "third ask");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let users = user_texts(&sent[0]).join("\n");
    assert!(users.contains("first ask"), "{users}");
    assert!(!users.contains("second ask"), "{users}");
    assert!(users.contains("third ask"), "{users}");

    // Code only: turn 2's edit goes (turn 3 changed no file); the
    // conversation keeps turn 3.
    let out = north(&t, &["undo", "--turn", "2", "--what", "code"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(t.project.join("a.txt")).unwrap(),
        "two\n"
    );

    // Both, back to the start of turn 1: the file and an empty conversation.
    let out = north(&t, &["undo", "--turn", "1", "--what", "both"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(t.project.join("a.txt")).unwrap(),
        "one\n"
    );
    let (out, sent) = exec(&t, &["--continue"], json!([{"text": "ok"}]), "fresh ask");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let users = user_texts(&sent[0]).join("\n");
    assert!(
        !users.contains("first ask") && !users.contains("third ask"),
        "{users}"
    );
    assert!(users.contains("fresh ask"), "{users}");

    // A turn that does not exist is a clear error.
    let out = north(&t, &["undo", "--turn", "99"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no turn 99"),
        "{}",
        text(&out.stderr)
    );
}

/// The session's id (the only one, or the newest).
fn session_ids(t: &Tree) -> Vec<String> {
    let out = north(t, &["sessions", "list", "--json"]);
    text(&out.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn log_of(t: &Tree, id: &str) -> Vec<u8> {
    std::fs::read(t.project.join(".north/sessions").join(id).join("log.jsonl")).unwrap()
}

/// A condensation leaves the whole transcript in the log: a turn from
/// before it rewinds (conversation and code), the export still has every
/// message, and the log is only ever appended to.
#[test]
fn rewind_reaches_back_past_a_condensation_and_the_transcript_keeps_everything() {
    let t = tree(false);
    let edit = |old: &str, new: &str| {
        json!([
            {"tool_calls": [{"id": "e", "name": "edit_replace_exact",
                "args": {"path": "a.txt", "old": old, "new": new}}]},
            {"text": "Done."}
        ])
    };
    let (out, _) = exec(&t, &[], edit("one\n", "two\n"), "first ask");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (out, _) = exec(&t, &["--continue"], edit("two\n", "three\n"), "second ask");
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Turn 3 asks for a condensation: its summary request, then the answer.
    let condensing = json!([
        {"text": "<<<NOTES_JSON>>>{\"actions\":[\"condense_now\"]}<<<END_NOTES_JSON>>>Reading.",
         "tool_calls": [{"id": "r", "name": "read_file", "args": {"path": "a.txt"}}]},
        {"text": "SUMMARY: a.txt went from one to three."},
        {"text": "All read."}
    ]);
    let (out, sent) = exec(&t, &["--continue"], condensing, "third ask");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let last = sent.last().unwrap().to_string();
    assert!(last.contains("SUMMARY: a.txt went"), "condensed: {last}");
    let [id] = &session_ids(&t)[..] else {
        panic!("one session")
    };
    let before = log_of(&t, id);

    let out = north(&t, &["sessions", "export", id]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let md = text(&out.stdout);
    for said in [
        "first ask",
        "second ask",
        "third ask",
        "**Condensed.**",
        "edit_replace_exact",
    ] {
        assert!(md.contains(said), "{said} missing from the export:\n{md}");
    }

    // Back to the start of turn 2, which the condensation had cut into.
    let out = north(&t, &["undo", "--turn", "2", "--what", "both"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(t.project.join("a.txt")).unwrap(),
        "two\n"
    );
    let after = log_of(&t, id);
    assert!(
        after.starts_with(&before),
        "the log was appended to, never rewritten"
    );
    let appended = String::from_utf8_lossy(&after[before.len()..]).to_string();
    assert!(
        String::from_utf8_lossy(&before).contains(r#""op":"condense""#)
            && appended.contains(r#""op":"restore""#),
        "the view before the condensation was read back from the log: {appended}"
    );
    let (out, sent) = exec(&t, &["--continue"], json!([{"text": "ok"}]), "fresh ask");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let users = user_texts(&sent[0]).join("\n");
    assert!(
        users.contains("first ask"),
        "turn 1 is back in view: {users}"
    );
    assert!(
        !users.contains("second ask") && !users.contains("third ask"),
        "{users}"
    );

    // And to turn 1: the file as it first was.
    let out = north(&t, &["undo", "--turn", "1", "--what", "both"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(t.project.join("a.txt")).unwrap(),
        "one\n"
    );
    // Export to a file.
    let file = t.base.join("session.md");
    let out = north(
        &t,
        &["sessions", "export", id, "-o", file.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .starts_with("# North session")
    );
}

/// `--fork` continues a session as a new one; the original stays as it was.
#[test]
fn fork_continues_a_session_as_a_new_one_and_leaves_the_original() {
    let t = tree(false);
    let (out, _) = exec(&t, &[], json!([{"text": "First answer."}]), "first ask");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let [original] = &session_ids(&t)[..] else {
        panic!("one session")
    };
    let kept = log_of(&t, original);
    let (out, sent) = exec(
        &t,
        &["--resume", original, "--fork"],
        json!([{"text": "Forked answer."}]),
        "forked ask",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let users = user_texts(&sent[0]).join("\n");
    assert!(
        users.contains("first ask") && users.contains("forked ask"),
        "{users}"
    );
    assert_eq!(log_of(&t, original), kept, "the original is untouched");
    let ids = session_ids(&t);
    assert_eq!(ids.len(), 2, "{ids:?}");
    let fork = ids.iter().find(|i| *i != original).unwrap();
    let md = text(&north(&t, &["sessions", "export", fork]).stdout);
    assert!(
        md.contains("first ask") && md.contains("Forked answer."),
        "{md}"
    );

    // --fork alone names no session: a clear error.
    let (out, _) = exec(&t, &["--fork"], json!([{"text": "x"}]), "ask");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--fork continues a session"),
        "{}",
        text(&out.stderr)
    );
}

/// Every object the project's snapshot store holds.
fn stored_objects(t: &Tree) -> usize {
    let objects = t.project.join(".north/snapshots/objects");
    let Ok(dirs) = std::fs::read_dir(objects) else {
        return 0;
    };
    dirs.flatten()
        .map(|d| std::fs::read_dir(d.path()).map_or(0, Iterator::count))
        .sum()
}

#[test]
fn a_turn_that_calls_no_tool_snapshots_nothing_and_undo_reaches_past_it() {
    let t = tree(false);
    // An answer alone: no tool ran, so no file changed and nothing was
    // snapshotted, however big the tree.
    let (out, _) = exec(&t, &[], json!([{"text": "Hello."}]), "just say hello");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(stored_objects(&t), 0);
    let out = north(&t, &["undo"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("nothing to undo"),
        "{}",
        text(&out.stderr)
    );
    let list = text(&north(&t, &["undo", "--list"]).stdout);
    assert!(
        list.contains("no tools") && list.contains("just say hello"),
        "{list}"
    );

    // A hand edit between turns, then a turn that edits another file.
    std::fs::write(t.project.join("a.txt"), "by hand\n").unwrap();
    let edit = json!([
        {"tool_calls": [{"id": "e", "name": "edit_replace_exact",
            "args": {"path": "src/lib.rs", "old": "pub fn f() {}", "new": "pub fn g() {}"}}]},
        {"text": "Done."}
    ]);
    let (out, _) = exec(&t, &["--continue"], edit, "rename f");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stored_objects(&t) > 0);

    // Undoing from turn 1 puts back what North changed; the hand edit made
    // before North's first tool call is the user's and stays.
    let out = north(&t, &["undo", "--turn", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(t.project.join("src/lib.rs")).unwrap(),
        "pub fn f() {}\n"
    );
    assert_eq!(
        std::fs::read_to_string(t.project.join("a.txt")).unwrap(),
        "by hand\n"
    );
}
