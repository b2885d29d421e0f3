//! Confinement at one point, through the real binary: what a sandboxed
//! child (foreground command, `&`, background job) leaves behind never runs
//! for the user's git; nothing is typed into the user's terminal; jobs die
//! with North however it ends; a per-domain grant opens no socket; other
//! socket families and x32 system calls are refused. Every test needs the
//! kernel sandbox and says so when it is missing (CI has it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common;
use common::{Sandbox, text};

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"tool_calls": [{"id": id, "name": name, "args": args}]})
}

fn shell(id: &str, command: &str) -> Value {
    call(id, "shell_run", json!({"command": command}))
}

fn background(id: &str, command: &str) -> Value {
    call(
        id,
        "shell_run",
        json!({"command": command, "background": true}),
    )
}

/// Panics (a CI failure, never a silent pass) when the kernel sandbox is
/// not complete on this machine.
fn require_sandbox(sb: &Sandbox) {
    let out = sb.north().args(["sandbox", "--", "true"]).output().unwrap();
    let err = text(&out.stderr);
    assert!(
        out.status.success() && !err.contains("sandbox: partial"),
        "these tests need the kernel sandbox (Landlock, seccomp, namespaces): {err}"
    );
}

/// The user's own git, outside any sandbox, with their (empty) config.
fn user_git(sb: &Sandbox, dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", sb.home())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap()
}

/// A script the user's git would run (fsmonitor) that leaves `marker`.
fn payload(marker: &Path) -> String {
    format!("touch {}", marker.display())
}

#[test]
fn what_a_background_job_plants_in_git_never_runs_for_the_user() {
    let sb = Sandbox::new();
    require_sandbox(&sb);
    sb.init_git();
    let p = sb.project();
    let marker = sb.home().join("PWNED-commondir");
    std::fs::create_dir_all(sb.home()).unwrap();
    // A copy of .git with an fsmonitor, and a commondir pointing at it:
    // written by a background job, by `&` in the foreground, and by a job
    // still running when the session ends.
    let plant = format!(
        "cp -r .git evil && printf '[core]\\n\\tfsmonitor = {}\\n' > evil/config && echo \"$PWD/evil\" > .git/commondir",
        payload(&marker)
    );
    let (out, requests) = sb.exec_scripted(
        &json!([
            background("b1", &plant),
            shell("f1", &format!("({}) & sleep 1; git config core.fsmonitor 'touch x' 2>&1; echo \"$PWD/evil\" > .git/config.worktree; true", plant.replace("evil", "evil2"))),
            background("b2", &format!("sleep 1; {}", plant.replace("evil", "evil3"))),
            {"text": "done"}
        ]),
        &["--mode", "auto"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = requests.iter().map(Value::to_string).collect::<String>();
    assert!(
        [
            "Read-only file system",
            "could not lock config file",
            "could not write config file"
        ]
        .iter()
        .any(|e| sent.contains(e)),
        "the repository's config is read-only inside: {sent}"
    );
    // The user's git, after North: nothing it reads was planted.
    let status = user_git(&sb, &p, &["status", "--short"]);
    assert!(status.status.success(), "{}", text(&status.stderr));
    assert!(!marker.exists(), "the user's git ran a planted fsmonitor");
    for planted in ["commondir", "config.worktree"] {
        assert!(
            !p.join(".git").join(planted).exists(),
            ".git/{planted} was left for the user's git"
        );
    }
    assert!(
        p.join(".north/quarantine").is_dir(),
        "what was set aside is kept for the user to inspect"
    );
}

#[test]
fn a_repository_created_inside_the_sandbox_is_set_aside() {
    let sb = Sandbox::new();
    require_sandbox(&sb);
    let p = sb.project();
    let marker = sb.home().join("PWNED-init");
    std::fs::create_dir_all(sb.home()).unwrap();
    let plant = format!(
        "git init -q && git config core.fsmonitor '{}'; sleep 1",
        payload(&marker)
    );
    let (out, _) = sb.exec_scripted(
        &json!([background("b1", &plant), shell("f1", "sleep 2"), {"text": "done"}]),
        &["--mode", "auto"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !p.join(".git").exists(),
        "a .git the sandbox made was left in the project"
    );
    // The user's git in the project (no repository: it says so) runs
    // nothing.
    let _ = user_git(&sb, &p, &["status"]);
    assert!(!marker.exists(), "the user's git ran a planted fsmonitor");
}

#[test]
fn git_work_inside_the_sandbox_still_works() {
    let sb = Sandbox::new();
    require_sandbox(&sb);
    sb.init_git();
    let p = sb.project();
    let script = "set -e; g() { git -c user.name=t -c user.email=t@t -c commit.gpgsign=false \"$@\"; }; \
        echo one > a.txt && g add a.txt && g commit -qm one; \
        g branch topic && g checkout -q topic && echo two >> a.txt && g commit -qam two; \
        g checkout -q - && echo three > b.txt && g add b.txt && g commit -qm three; \
        echo wip >> b.txt && g stash -q && g stash pop -q && g checkout -q b.txt; \
        g checkout -q topic && g rebase -q - && g log --format=%s | tr '\\n' ' '; echo; echo GIT-OK";
    let out = sb
        .north()
        .args(["sandbox", "--", "sh", "-c", script])
        .output()
        .unwrap();
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success() && all.contains("GIT-OK"), "{all}");
    assert!(all.contains("two three one init"), "{all}");
    assert!(
        !p.join(".north/quarantine").exists(),
        "ordinary git work is not set aside: {all}"
    );
}

/// Runs `inner` (a shell command line) in a real pty with a shell behind
/// it, as a user's terminal is; returns everything the terminal showed.
fn in_a_terminal(sb: &Sandbox, inner: &str) -> String {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 40,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    // bash: its `read -t` takes what is typed into the terminal.
    let mut cmd = CommandBuilder::new("bash");
    cmd.args(["-c", inner]);
    cmd.env_clear();
    cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
    cmd.env("HOME", sb.home());
    cmd.env("XDG_CONFIG_HOME", sb.home().join("config"));
    cmd.env("XDG_STATE_HOME", sb.home().join("state"));
    cmd.cwd(sb.project());
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let (drained, all_read) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
        let _ = drained.send(());
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the terminal session hung");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The terminal's last bytes are read once every writer has closed it.
    let _ = all_read.recv_timeout(Duration::from_secs(10));
    let bytes = seen.lock().unwrap().clone();
    text(&bytes)
}

#[test]
fn nothing_a_command_runs_is_typed_into_the_terminal() {
    let sb = Sandbox::new();
    require_sandbox(&sb);
    let inject = "python3 -c \"import fcntl, termios, os, sys\n\
        for path in ('/dev/tty', '/proc/self/fd/0', '/proc/self/fd/2'):\n\
            try:\n\
                fd = os.open(path, os.O_RDWR)\n\
                [fcntl.ioctl(fd, termios.TIOCSTI, bytes([c])) for c in b'echo INJECTED-LINE\\n']\n\
                print('typed through', path)\n\
            except OSError as e:\n\
                print('refused', path, e)\n\"";
    let script = sb.file(
        "inject.json",
        &json!([
            background("b1", inject),
            shell("f1", &format!("{inject}; sleep 1")),
            {"text": "done"}
        ]),
    );
    let north = env!("CARGO_BIN_EXE_north");
    // North in the terminal, then the user's shell reads what is typed.
    let shown = in_a_terminal(
        &sb,
        &format!(
            "{north} exec --mode auto --script {} 'do the work' >north.out 2>&1; \
             {north} sandbox -- python3 -c \"import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b'x')\" 2>&1 | tail -1; \
             read -t 2 line; echo \"READ:[$line]\"",
            script.display()
        ),
    );
    assert!(shown.contains("READ:["), "{shown}");
    assert!(
        !shown.contains("READ:[echo INJECTED-LINE]")
            && !shown.contains("INJECTED-LINE\r\nINJECTED"),
        "a sandboxed command typed into the terminal:\n{shown}"
    );
    assert!(
        shown.contains("Operation not permitted"),
        "TIOCSTI on the terminal the launcher was given is refused: {shown}"
    );
    let north_out = std::fs::read_to_string(sb.project().join("north.out")).unwrap();
    assert!(!north_out.contains("typed through"), "{north_out}");
}

fn running(pattern: &str) -> bool {
    Command::new("pgrep")
        .args(["-f", pattern])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn background_jobs_die_with_north_however_it_ends() {
    for (n, signal) in [libc::SIGTERM, libc::SIGHUP, libc::SIGKILL]
        .into_iter()
        .enumerate()
    {
        let sb = Sandbox::new();
        require_sandbox(&sb);
        let unique = format!("4{}{}", std::process::id() % 1000, n);
        let script = sb.file(
            "jobs.json",
            &json!([
                background("b1", &format!("sleep {unique}")),
                shell("f1", "sleep 60"),
                {"text": "done"}
            ]),
        );
        let mut north = sb
            .north()
            .args(["exec", "--mode", "auto", "--script"])
            .arg(&script)
            .arg("do the work")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pattern = format!("sleep {unique}");
        let deadline = Instant::now() + Duration::from_secs(60);
        while !running(&pattern) {
            assert!(Instant::now() < deadline, "the job never started");
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(north.id() as i32, signal) };
        let _ = north.wait();
        // The acceptance bound: gone within 3 s of North's end.
        let gone_by = Instant::now() + Duration::from_secs(3);
        while running(&pattern) && Instant::now() < gone_by {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            !running(&pattern),
            "a background job outlived North after signal {signal}"
        );
    }
}

/// A per-domain grant gives a command a network namespace of its own whose
/// one way out is North's proxy (see `egress`): a listener on the host's
/// loopback is not reached, and other socket families stay refused.
#[test]
fn a_domain_grant_reaches_no_listener_directly_and_other_families_stay_refused() {
    let sb = Sandbox::new();
    require_sandbox(&sb);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let send = format!(
        "python3 -c \"import socket; s = socket.create_connection(('127.0.0.1', {port})); s.sendall(b'token')\" 2>&1 | tail -1"
    );
    let family = |name: &str| {
        format!(
            "python3 -c \"import socket; socket.socket(socket.{name}, socket.SOCK_DGRAM if '{name}' != 'AF_VSOCK' else socket.SOCK_STREAM)\" 2>&1 | tail -1; echo {name}-done"
        )
    };
    let (out, requests) = sb.exec_scripted(
        &json!([
            shell("s1", &send),
            background("b1", &send),
            shell("s2", &family("AF_VSOCK")),
            shell("s3", &family("AF_NETLINK")),
            shell("s4", &family("AF_PACKET")),
            {"text": "done"}
        ]),
        &["--mode", "auto", "--grant", "net:docs.rs"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        listener.accept().is_err(),
        "a command reached a listener with only a per-domain grant"
    );
    let sent: String = requests.iter().map(Value::to_string).collect();
    for name in ["AF_VSOCK", "AF_NETLINK", "AF_PACKET"] {
        assert!(sent.contains(&format!("{name}-done")), "{sent}");
    }
    assert!(
        sent.matches("Operation not permitted").count() >= 4,
        "every family was refused: {sent}"
    );
}

#[test]
fn x32_system_calls_are_refused() {
    let sb = Sandbox::new();
    require_sandbox(&sb);
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    // socket(AF_INET, SOCK_STREAM) by its x32 number, with the network
    // granted: only the x32 gate can refuse it (EPERM, not ENOSYS).
    let probe = "import ctypes, os\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        r = libc.syscall(0x40000000 | 41, 2, 1, 0)\n\
        print('x32', r, os.strerror(ctypes.get_errno()))";
    let out = sb
        .north()
        .args(["sandbox", "--grant", "net", "--", "python3", "-c", probe])
        .output()
        .unwrap();
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(all.contains("x32 -1 Operation not permitted"), "{all}");
}

#[test]
fn a_rebase_left_with_exec_lines_is_set_aside() {
    let sb = Sandbox::new();
    require_sandbox(&sb);
    sb.init_git();
    let p = sb.project();
    let marker = sb.home().join("PWNED-rebase");
    std::fs::create_dir_all(sb.home()).unwrap();
    // What `git rebase -i` leaves mid-way, with a line the user's
    // `git rebase --continue` would run outside the sandbox.
    let plant = format!(
        "mkdir -p .git/rebase-merge && printf 'exec {}\\n' > .git/rebase-merge/git-rebase-todo && echo planted",
        payload(&marker)
    );
    let out = sb
        .north()
        .args(["sandbox", "--", "sh", "-c", &plant])
        .output()
        .unwrap();
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(all.contains("planted"), "{all}");
    assert!(all.contains(".git/rebase-merge"), "the user is told: {all}");
    assert!(!p.join(".git/rebase-merge").exists(), "{all}");
}

#[test]
fn npm_test_runs_inside_the_sandbox() {
    let sb = Sandbox::new();
    require_sandbox(&sb);
    std::fs::write(
        sb.project().join("package.json"),
        r#"{"name": "t", "version": "1.0.0", "scripts": {"test": "node -e \"console.log('NPM-TEST-OK')\""}}"#,
    )
    .unwrap();
    let out = sb
        .north()
        .args(["sandbox", "--", "npm", "test"])
        .output()
        .expect("npm is installed where North's tests run (.ci/run uses it)");
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success() && all.contains("NPM-TEST-OK"), "{all}");
}

#[test]
fn explain_shows_the_policy_each_kind_of_child_gets() {
    let sb = Sandbox::new();
    require_sandbox(&sb);
    std::fs::create_dir_all(sb.home()).unwrap();
    let explain = |kind: &str| {
        text(
            &sb.north()
                .args(["sandbox", "--explain", "--for", kind])
                .output()
                .unwrap()
                .stdout,
        )
    };
    let command = explain("command");
    for want in [
        "hidden but for",
        "network: only through North's proxy",
        "hosts the proxy allows: none",
        "other sockets: refused (netlink, packet, vsock",
        "TIOCSTI and TIOCLINUX refused",
        "is private to the command",
    ] {
        assert!(command.contains(want), "{want}: {command}");
    }
    let hook = explain("hook");
    assert!(hook.contains("temp dir: shared"), "{hook}");
    assert!(hook.contains("network: refused"), "{hook}");
    let mcp = explain("mcp");
    assert!(mcp.contains("network: allowed"), "{mcp}");
}

#[test]
fn the_users_own_hook_in_their_home_still_runs_but_reads_no_credentials() {
    let sb = Sandbox::new();
    require_sandbox(&sb);
    let home = sb.home();
    std::fs::create_dir_all(home.join("hooks")).unwrap();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(home.join(".claude/.credentials.json"), "CLAUDE-TOKEN-4242").unwrap();
    std::fs::write(home.join("hooks/greeting.txt"), "HELLO-FROM-HOME\n").unwrap();
    std::fs::write(
        home.join("hooks/notify.sh"),
        "cat \"$(dirname \"$0\")/greeting.txt\" > \"$NORTH_PROJECT_DIR/notified.txt\"\n\
         cat ~/.claude/.credentials.json >> \"$NORTH_PROJECT_DIR/notified.txt\" 2>&1\n",
    )
    .unwrap();
    let dir = home.join("config/north");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.json"),
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": "sh ~/hooks/notify.sh"}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let (out, _) = sb.exec_scripted(&json!([{"text": "hi"}]), &[], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(sb.project().join("notified.txt")).unwrap();
    assert!(written.contains("HELLO-FROM-HOME"), "{written}");
    assert!(!written.contains("CLAUDE-TOKEN-4242"), "{written}");
}
