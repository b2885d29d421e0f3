//! The OS sandbox around every command, through `north sandbox` and
//! through a command the model runs in each permission mode: secret stores
//! are unreadable, nothing is written outside, only the command's own
//! processes are visible, Unix sockets outside cannot be reached, nothing
//! outlives the command — while work in the project (git commits included)
//! still works.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common;
use common::{recorded, text};

/// A scratch project (in the temp dir) and a home *outside* the temp dir,
/// which the sandbox leaves writable: as on a user's machine.
struct Sandbox {
    inner: common::Sandbox,
    home: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Self {
        let home = common::outside_temp_dir("north-home-");
        Sandbox {
            inner: common::Sandbox::new(),
            home,
        }
    }

    fn home(&self) -> PathBuf {
        self.home.path().to_path_buf()
    }

    fn project(&self) -> PathBuf {
        self.inner.project()
    }

    fn file(&self, name: &str, value: &Value) -> PathBuf {
        self.inner.file(name, value)
    }

    fn north(&self) -> Command {
        let mut cmd = self.inner.north();
        cmd.env("HOME", self.home())
            .env("XDG_CONFIG_HOME", self.home().join("config"))
            .env("XDG_STATE_HOME", self.home().join("state"))
            .env("XDG_DATA_HOME", self.home().join("data"));
        cmd
    }
}

/// Secret stores a user has, each with a recognisable line.
const STORES: &[&str] = &[
    ".ssh/id_test",
    ".aws/credentials",
    ".config/gh/hosts.yml",
    ".netrc",
    ".docker/config.json",
    ".kube/config",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials.toml",
    ".git-credentials",
    ".gnupg/private-keys-v1.d/key",
    "config/north/notes.txt",
    "state/north/notes.txt",
    // Other agents' and tools' credentials, shell histories: no deny-list
    // names them; the home allow-list keeps them out.
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".bash_history",
    ".zsh_history",
    ".config/rclone/rclone.conf",
    ".local/share/fish/fish_history",
    // A token in the git config (read through the sandbox's copy).
    ".gitconfig",
];

fn secret_of(store: &str) -> String {
    format!("SECRET-{}", store.replace(['/', '.'], "_"))
}

fn plant_secrets(sb: &Sandbox) {
    for store in STORES {
        let path = sb.home().join(store);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, secret_of(store)).unwrap();
    }
    // A real git config: the identity reaches commands, the token never.
    std::fs::write(
        sb.home().join(".gitconfig"),
        format!(
            "[user]\n\tname = Probe User\n\temail = probe@example.org\n\
             [url \"https://{}@forge.example/\"]\n\tinsteadOf = https://forge.example/\n",
            secret_of(".gitconfig")
        ),
    )
    .unwrap();
}

fn available(sb: &Sandbox) -> bool {
    let out = sb.north().args(["sandbox", "--", "true"]).output().unwrap();
    let err = text(&out.stderr);
    if !out.status.success() || err.contains("sandbox: partial") {
        north_test_support::missing(&format!(
            "the kernel sandbox is not fully available here: {err}"
        ));
        return false;
    }
    true
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    text(&out.stdout)
}

/// A Unix socket server outside the project (a stand-in for a tmux,
/// docker or agent socket) that writes a marker when anyone connects.
fn socket_server(sb: &Sandbox) -> (PathBuf, PathBuf) {
    // Outside the temp dir (the private one would hide it anyway): what
    // stops the connection is the refusal of Unix sockets itself.
    let socket = sb.home().join("outside.sock");
    let marker = sb.home().join("socket-reached.txt");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let m = marker.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            drop(conn);
            std::fs::write(&m, "reached").unwrap();
        }
    });
    (socket, marker)
}

/// The probe one command runs: read every store, write outside, list
/// processes, reach the socket, leave a `setsid` child behind, and do
/// ordinary work with git.
fn probe(sb: &Sandbox, socket: &Path) -> String {
    let sleep = sb.inner.unique_sleep();
    let home = sb.home();
    let mut reads = String::new();
    for store in STORES {
        reads.push_str(&format!("cat {} 2>&1; ", home.join(store).display()));
    }
    format!(
        "{reads}echo x > {home}/written-outside.txt 2>&1; ps -eo pid,args > procs.txt; \
         python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{sock}')\" 2>&1; \
         setsid sleep {sleep} > /dev/null 2>&1 < /dev/null & \
         echo private > /tmp/probe-{sleep}; \
         echo work > work.txt && git add work.txt && git -c user.name=t -c user.email=t@t commit -qm work && echo COMMITTED; \
         echo evil > .git/hooks/pre-commit 2>&1; echo '[core]' >> .git/config 2>&1; true",
        home = home.display(),
        sock = socket.display(),
    )
}

fn assert_confined(sb: &Sandbox, output: &str, socket_marker: &Path, how: &str) {
    for store in STORES {
        assert!(
            !output.contains(&secret_of(store)),
            "{how}: {store} was readable:\n{output}"
        );
    }
    assert!(
        !sb.home().join("written-outside.txt").exists(),
        "{how}: wrote outside"
    );
    let procs = std::fs::read_to_string(sb.project().join("procs.txt")).unwrap();
    assert!(
        procs.lines().count() <= 8,
        "{how}: ps shows more than the sandbox's processes:\n{procs}"
    );
    assert!(
        !procs.contains("north exec"),
        "{how}: North is visible:\n{procs}"
    );
    assert!(
        !socket_marker.exists(),
        "{how}: the Unix socket was reached"
    );
    assert!(
        output.contains("COMMITTED"),
        "{how}: git commit failed:\n{output}"
    );
    assert!(
        git(&sb.project(), &["log", "--format=%s"]).contains("work"),
        "{how}: the commit is not in the repository"
    );
    assert!(
        !sb.project().join(".git/hooks/pre-commit").exists(),
        "{how}: wrote a hook"
    );
    assert!(
        !std::fs::read_to_string(sb.project().join(".git/config"))
            .unwrap()
            .ends_with("[core]\n"),
        "{how}: changed .git/config"
    );
    // What it wrote to the temp dir stayed in its private one.
    assert!(
        !Path::new(&format!("/tmp/probe-{}", sb.inner.unique_sleep())).exists(),
        "{how}: the temp dir is shared"
    );
    // The `setsid` child died with the command.
    assert!(
        common::Sandbox::no_sleep_left(&sb.inner.unique_sleep()),
        "{how}: a setsid child outlived the command"
    );
}

#[test]
fn north_sandbox_confines_a_command() {
    let sb = Sandbox::new();
    if !available(&sb) {
        return;
    }
    plant_secrets(&sb);
    sb.inner.init_git();
    let (socket, marker) = socket_server(&sb);
    let out = sb
        .north()
        .args(["sandbox", "--", "bash", "-c"])
        .arg(probe(&sb, &socket))
        .output()
        .unwrap();
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_confined(&sb, &all, &marker, "north sandbox");
    // --explain says what holds.
    let explain = text(
        &sb.north()
            .args(["sandbox", "--explain"])
            .output()
            .unwrap()
            .stdout,
    );
    for want in [
        "hidden (cannot be read)",
        "hidden but for",
        "PID namespace: in use",
        "unix sockets: refused",
    ] {
        assert!(explain.contains(want), "{want}: {explain}");
    }
}

#[test]
fn a_model_command_is_confined_in_every_mode() {
    for mode in ["ask", "accept-edits", "auto"] {
        let sb = Sandbox::new();
        if !available(&sb) {
            return;
        }
        plant_secrets(&sb);
        sb.inner.init_git();
        let (socket, marker) = socket_server(&sb);
        let command = probe(&sb, &socket);
        // In `ask` and `accept-edits` the user allowed this exact line
        // (a rule in a project they trust); in `auto` nobody did.
        std::fs::write(
            sb.project().join(".north/allowlist.json"),
            json!({"allowedCommands": [command]}).to_string(),
        )
        .unwrap();
        let script = sb.file(
            "script.json",
            &json!([
                {"tool_calls": [{"id": "p", "name": "shell_run", "args": {"command": command}}]},
                {"text": "done"}
            ]),
        );
        let requests = sb.inner.dir.path().join("requests.jsonl");
        let out = sb
            .north()
            .args(["exec", "--trust", "--mode", mode, "--script"])
            .arg(&script)
            .arg("--record-requests")
            .arg(&requests)
            .arg("probe")
            .output()
            .unwrap();
        let sent: String = recorded(&requests).iter().map(Value::to_string).collect();
        let all = format!("{}{}{sent}", text(&out.stdout), text(&out.stderr));
        assert_confined(&sb, &all, &marker, mode);
    }
}

#[test]
fn the_user_may_allow_unix_sockets_in_their_own_config() {
    let sb = Sandbox::new();
    if !available(&sb) {
        return;
    }
    let (socket, marker) = socket_server(&sb);
    let connect = format!(
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{}')\"",
        socket.display()
    );
    std::fs::write(
        sb.project().join(".north/allowlist.json"),
        json!({"allowedCommands": [connect]}).to_string(),
    )
    .unwrap();
    let script = sb.file(
        "script.json",
        &json!([
            {"tool_calls": [{"id": "c", "name": "shell_run", "args": {"command": connect}}]},
            {"text": "done"}
        ]),
    );
    let config = sb.home().join("config/north/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        // The socket lives in the home directory, which sandboxed commands
        // see only by allow-list: the user adds it.
        json!({"sandbox": {"unix_sockets": true, "allow_read": ["~/outside.sock"]}}).to_string(),
    )
    .unwrap();
    let out = sb
        .north()
        .args(["exec", "--trust", "--script"])
        .arg(&script)
        .arg("connect")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The server marks the connection from its own thread.
    for _ in 0..100 {
        if marker.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(marker.exists(), "the user's own setting allows the socket");
}

#[test]
fn builds_and_tests_still_work_inside_the_sandbox() {
    let sb = Sandbox::new();
    if !available(&sb) {
        return;
    }
    let p = sb.project();
    std::fs::write(
        p.join("package.json"),
        json!({"name": "pc", "version": "1.0.0", "scripts": {"test": "node -e \"require('fs').writeFileSync('npm-ok.txt', 'ok')\""}}).to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(p.join("src")).unwrap();
    std::fs::write(
        p.join("Cargo.toml"),
        "[package]\nname = \"pc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        p.join("src/main.rs"),
        "fn main() { println!(\"BUILT-AND-RAN\"); }\n",
    )
    .unwrap();
    let command = "cargo build --offline -q && ./target/debug/pc; \
                   if command -v npm >/dev/null; then npm test --silent; else echo ok > npm-ok.txt; fi";
    let script = sb.file(
        "script.json",
        &json!([
            {"tool_calls": [{"id": "b", "name": "shell_run", "args": {"command": command, "timeoutMs": 300000}}]},
            {"text": "done"}
        ]),
    );
    // The toolchains the user has (rustup's and cargo's homes) are theirs
    // to read; the home itself is a scratch one.
    let real_home = std::env::var("HOME").unwrap_or_default();
    let rustup = std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{real_home}/.rustup"));
    let cargo = std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{real_home}/.cargo"));
    let requests = sb.inner.dir.path().join("requests.jsonl");
    let out = sb
        .north()
        .env("RUSTUP_HOME", rustup)
        .env("CARGO_HOME", cargo)
        .args(["exec", "--mode", "auto", "--script"])
        .arg(&script)
        .arg("--record-requests")
        .arg(&requests)
        .arg("build and test")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent: String = recorded(&requests).iter().map(Value::to_string).collect();
    assert!(sent.contains("BUILT-AND-RAN"), "cargo build ran: {sent}");
    assert!(p.join("npm-ok.txt").exists(), "npm test ran: {sent}");
}
