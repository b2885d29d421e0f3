//! `north sandbox -- CMD` from inside: escape attempts against the real
//! kernel sandbox (Landlock, a read-only mount namespace, seccomp), each
//! refused, with positive controls that still work. The project lives
//! outside the system temp dir (which the sandbox leaves writable).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common;
use common::text;

struct Tree {
    _dir: tempfile::TempDir,
    project: PathBuf,
    outside: PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let project = base.join("project");
    let outside = base.join("outside");
    std::fs::create_dir_all(project.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(project.join(".north")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
    std::fs::write(project.join("main.c"), "int main(void) { return 0; }\n").unwrap();
    Tree {
        _dir: dir,
        project,
        outside,
    }
}

/// The sandbox leaves the system temp dir writable; where this checkout
/// lives under it (a clone in /tmp), the test's own `outside` would be
/// writable too. Each run gets a temp dir of its own beside the project.
fn own_tmp(root: &Path) -> std::path::PathBuf {
    let tmp = root.parent().unwrap().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    tmp
}

fn sandboxed(root: &Path, extra: &[&str], script: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_north"))
        .current_dir(root)
        .env("TMPDIR", own_tmp(root))
        .arg("sandbox")
        .args(extra)
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap()
}

/// The layers this kernel enforces, from the sandbox's own report.
fn skip_reason(t: &Tree) -> Option<String> {
    let out = sandboxed(&t.project, &[], "true");
    let err = text(&out.stderr);
    err.lines()
        .find(|l| l.starts_with("sandbox: partial"))
        .map(str::to_owned)
}

#[test]
fn writes_outside_the_project_are_refused_in_every_form() {
    let t = tree();
    if let Some(why) = skip_reason(&t) {
        north_test_support::missing(&why);
        return;
    }
    let o = t.outside.display();
    std::os::unix::fs::symlink(&t.outside, t.project.join("link-out")).unwrap();
    let attempts = [
        format!("echo x > {o}/abs.txt"),
        "echo x > ../outside/dotdot.txt".to_string(),
        "echo x > link-out/symlink.txt".to_string(),
        format!("ln {o}/secret.txt hard-link && echo pwned >> hard-link"),
        format!("mv {o}/secret.txt ./stolen.txt"),
        format!("echo x >> {o}/secret.txt"),
        format!("rm {o}/secret.txt"),
        format!("mkdir {o}/newdir"),
    ];
    for attempt in &attempts {
        let out = sandboxed(&t.project, &[], attempt);
        assert!(!out.status.success(), "escaped: {attempt}");
    }
    assert_eq!(
        std::fs::read_to_string(t.outside.join("secret.txt")).unwrap(),
        "secret\n"
    );
    let mut left: Vec<_> = std::fs::read_dir(&t.outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["secret.txt"], "nothing new outside");
}

#[test]
fn git_hooks_and_north_state_are_read_only_inside_the_project() {
    let t = tree();
    if let Some(why) = skip_reason(&t) {
        north_test_support::missing(&why);
        return;
    }
    for attempt in [
        "echo 'curl evil' > .git/hooks/pre-commit",
        "echo x > .git/config",
        "echo x > .north/allowlist.json",
        "rm -rf .git",
        "mv .git gone",
    ] {
        let out = sandboxed(&t.project, &[], attempt);
        assert!(!out.status.success(), "escaped: {attempt}");
    }
    assert!(!t.project.join(".git/hooks/pre-commit").exists());
    assert!(!t.project.join(".north/allowlist.json").exists());
    assert!(t.project.join(".git").is_dir());
    // Reading them is fine.
    let out = sandboxed(&t.project, &[], "ls .git/hooks && ls .north");
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn the_network_is_off_unless_granted() {
    let t = tree();
    if let Some(why) = skip_reason(&t) {
        north_test_support::missing(&why);
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_north"))
            .current_dir(&t.project)
            .env("TMPDIR", own_tmp(&t.project))
            .arg("sandbox")
            .args(extra)
            .args(["--", "bash", "-c", &connect])
            .output()
            .unwrap()
    };
    let denied = run(&[]);
    assert!(!denied.status.success());
    assert!(
        text(&denied.stderr).contains("Operation not permitted"),
        "{}",
        text(&denied.stderr)
    );
    let granted = run(&["--grant", "net"]);
    assert!(
        text(&granted.stdout).contains("connected"),
        "{}",
        text(&granted.stderr)
    );
}

#[test]
fn process_inspection_and_mounts_are_refused() {
    let t = tree();
    if let Some(why) = skip_reason(&t) {
        north_test_support::missing(&why);
        return;
    }
    // The filter is installed, and the calls it covers fail.
    let out = sandboxed(&t.project, &[], "grep '^Seccomp:' /proc/self/status");
    assert!(text(&out.stdout).contains("2"), "{}", text(&out.stdout));
    let out = sandboxed(
        &t.project,
        &[],
        "mount -o remount,rw .git/hooks 2>&1; echo x > .git/hooks/x",
    );
    assert!(
        !out.status.success(),
        "a command cannot undo the read-only mount"
    );
    assert!(!t.project.join(".git/hooks/x").exists());
    // The command holds no capabilities, even when North runs as root.
    let out = sandboxed(&t.project, &[], "grep '^CapEff:' /proc/self/status");
    assert!(
        text(&out.stdout).contains("0000000000000000"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn work_inside_the_project_and_temp_still_works() {
    let t = tree();
    if let Some(why) = skip_reason(&t) {
        north_test_support::missing(&why);
        return;
    }
    let out = sandboxed(
        &t.project,
        &[],
        "mkdir -p build && cp main.c build/ && echo built > build/out.txt && tmp=$(mktemp) && echo t > $tmp && rm $tmp && cat build/out.txt",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "built\n");
    assert!(t.project.join("build/main.c").exists());
    // --write adds a directory.
    let o = t.outside.display().to_string();
    let out = sandboxed(
        &t.project,
        &["--write", &o],
        &format!("echo ok > {o}/allowed.txt"),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn processes_outside_cannot_be_read_or_signalled() {
    let t = tree();
    if let Some(why) = skip_reason(&t) {
        north_test_support::missing(&why);
        return;
    }
    // Stands in for North: a process outside the sandbox holding a secret
    // in its environment and memory.
    let mut outside = Command::new("sleep")
        .arg("60")
        .env("NORTH_TEST_SECRET", "tok-9f2c1e")
        .spawn()
        .unwrap();
    let pid = outside.id();
    let script = format!(
        "cat /proc/{pid}/environ; echo environ=$?; \
         dd if=/proc/{pid}/mem bs=1 count=1 2>&1; echo mem=$?; \
         cat /proc/$PPID/environ >/dev/null; echo parent=$?; \
         kill -0 {pid}; echo signal=$?; kill -9 {pid}; \
         sleep 30 & own=$!; kill $own && echo own-child-signalled; \
         cat /proc/self/environ | grep -q PATH && echo own-environ-readable"
    );
    let out = sandboxed(&t.project, &[], &script);
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!shown.contains("tok-9f2c1e"), "{shown}");
    assert!(shown.contains("environ=1"), "{shown}");
    assert!(!shown.contains("mem=0"), "{shown}");
    assert!(shown.contains("parent=1"), "{shown}");
    assert!(shown.contains("signal=1"), "{shown}");
    // Positive controls: the command's own processes and environment.
    assert!(shown.contains("own-child-signalled"), "{shown}");
    assert!(shown.contains("own-environ-readable"), "{shown}");
    assert!(
        outside.try_wait().unwrap().is_none(),
        "the process outside survived kill -9 from inside"
    );
    outside.kill().unwrap();
    let _ = outside.wait();
}

#[test]
fn a_fork_bomb_stops_at_the_process_ceiling() {
    let t = tree();
    if let Some(why) = skip_reason(&t) {
        north_test_support::missing(&why);
        return;
    }
    // A bounded bomb: 500 background processes wanted, 48 allowed. (An
    // unbounded one would also stop at the ceiling, but keep retrying.)
    // Each child lives long enough that, however slowly a loaded machine
    // forks, 48 of them are alive at once.
    let out = sandboxed(
        &t.project,
        &["--max-processes", "48"],
        "i=0; while [ $i -lt 500 ]; do sleep 5 & i=$((i+1)); done; echo started=$i",
    );
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!shown.contains("started=500"), "{shown}");
    assert!(
        shown.contains("fork") || shown.contains("Resource temporarily unavailable"),
        "{shown}"
    );
    // Positive control: an ordinary build still runs.
    let out = sandboxed(&t.project, &[], "cc -o main main.c && ./main && echo built");
    assert!(text(&out.stdout).contains("built"), "{}", text(&out.stderr));
}
