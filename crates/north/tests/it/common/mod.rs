//! The sandbox every binary test runs in: a scratch project and a scratch
//! home, with XDG dirs pointed inside it, so nothing touches the repository
//! or the user's files and every byte North writes can be inspected.
#![allow(dead_code, missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// A scratch home and project for one test.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    /// A project holding a README, and an empty home.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project/.north")).unwrap();
        std::fs::write(dir.path().join("project/README.md"), "# Test project\n").unwrap();
        Sandbox { dir }
    }

    pub fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// A `sleep` duration unique to this sandbox, so one test's look for
    /// leftover processes never sees another's.
    pub fn unique_sleep(&self) -> String {
        let n: u32 = self
            .home()
            .to_string_lossy()
            .bytes()
            .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
        format!("30.{:05}", n % 100_000)
    }

    /// Whether no process runs `sleep <duration>` (from
    /// [`Sandbox::unique_sleep`]): waits for the ones killed a moment ago
    /// to go, up to ten seconds, since a kill is delivered asynchronously.
    pub fn no_sleep_left(duration: &str) -> bool {
        for _ in 0..200 {
            let out = Command::new("pgrep")
                .args(["-f", &format!("^sleep {duration}$")])
                .output()
                .unwrap();
            if out.stdout.is_empty() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        false
    }

    /// Writes `text` to `path` and makes it executable (a stand-in for the
    /// user's editor, browser or clipboard tool).
    pub fn executable(path: &Path, text: impl AsRef<[u8]>) -> PathBuf {
        std::fs::write(path, text).unwrap();
        let mut perms = std::fs::metadata(path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(path, perms).unwrap();
        path.to_path_buf()
    }

    /// Whether the kernel sandbox is complete here (Landlock, seccomp,
    /// namespaces); says it is missing when not (a failure under CI).
    pub fn kernel_sandbox_works(&self) -> bool {
        let out = self
            .north()
            .args(["sandbox", "--", "true"])
            .output()
            .unwrap();
        let err = text(&out.stderr);
        if !out.status.success() || err.contains("sandbox: partial") {
            north_test_support::missing(&format!(
                "the kernel sandbox is not fully available here: {err}"
            ));
            return false;
        }
        true
    }

    /// Writes `value` as JSON to a file beside the project.
    pub fn file(&self, name: &str, value: &serde_json::Value) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, value.to_string()).unwrap();
        p
    }

    /// The binary with a clean environment: only what a test sets reaches
    /// it, and every file it writes lands under this sandbox.
    pub fn north(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_north"));
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("XDG_CONFIG_HOME", self.home().join("config"))
            .env("XDG_STATE_HOME", self.home().join("state"))
            .env("XDG_DATA_HOME", self.home().join("data"))
            .current_dir(self.project())
            .stdin(Stdio::null());
        cmd
    }

    /// `north exec --script` with `turns` (the scripted provider), `args`
    /// and `env`, prompting "do the work": its output and the requests it
    /// recorded (`--record-requests`).
    pub fn exec_scripted(
        &self,
        turns: &Value,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (Output, Vec<Value>) {
        self.exec_prompted(turns, args, env, "do the work")
    }

    /// As [`Sandbox::exec_scripted`], prompting `prompt`.
    pub fn exec_prompted(
        &self,
        turns: &Value,
        args: &[&str],
        env: &[(&str, &str)],
        prompt: &str,
    ) -> (Output, Vec<Value>) {
        let n = std::fs::read_dir(self.dir.path()).unwrap().count();
        let script = self.file(&format!("script-{n}.json"), turns);
        let requests = self.dir.path().join(format!("requests-{n}.jsonl"));
        let mut cmd = self.north();
        cmd.envs(env.iter().copied())
            .args(["exec", "--script"])
            .arg(&script)
            .arg("--record-requests")
            .arg(&requests)
            .args(args)
            .arg(prompt);
        let out = cmd.output().unwrap();
        (out, recorded(&requests))
    }

    /// The trace (`trace.jsonl`) of the project's session `id`.
    pub fn trace_text(&self, id: &str) -> String {
        std::fs::read_to_string(
            self.project()
                .join(".north/sessions")
                .join(id)
                .join("trace.jsonl"),
        )
        .unwrap()
    }

    /// Makes the project a git repository with one empty commit, with the
    /// user's git (no global config).
    #[allow(dead_code)]
    pub fn init_git(&self) {
        for args in [
            &["init", "-q"][..],
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "init",
            ],
        ] {
            let out = Command::new("git")
                .args(args)
                .current_dir(self.project())
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", text(&out.stderr));
        }
    }

    /// Every file under the sandbox.
    pub fn files(&self) -> Vec<PathBuf> {
        walk(self.dir.path())
    }

    /// The contents of every file under the sandbox, concatenated.
    pub fn everything_written(&self) -> String {
        let mut all = String::new();
        for entry in self.files() {
            all.push_str(&String::from_utf8_lossy(
                &std::fs::read(entry).unwrap_or_default(),
            ));
        }
        all
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Bytes as text, invalid UTF-8 replaced.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `cmd` to completion off the async runtime (the fake servers a test
/// runs need the runtime's threads while the binary works).
pub async fn output(mut cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

/// Runs the user's `git` in `dir` (no global or system config, a fixed
/// identity) and returns its trimmed output; a failure fails the test.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    text(&out.stdout).trim().to_owned()
}

/// A JSON-lines file (a scripted run's recorded requests), one value per
/// line; empty when the file does not exist.
pub fn recorded(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Stdout of a `--json` run, one event per line.
pub fn json_lines(out: &Output) -> Vec<Value> {
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Scripted turns for `north mesh --provider scripted`.
pub mod mesh_script {
    use serde_json::{Value, json};

    /// A planner turn answering with these steps (description, tool).
    pub fn plan(steps: &[(&str, Option<&str>)]) -> Value {
        let items: Vec<Value> = steps
            .iter()
            .map(|(d, t)| json!({"description": d, "tool": t}))
            .collect();
        json!({"text": json!({"items": items}).to_string()})
    }

    /// An executor turn calling `bash` with `cmd`.
    pub fn bash(id: &str, cmd: &str) -> Value {
        json!({"tool_calls": [{"id": id, "name": "bash", "args": {"cmd": cmd}}]})
    }

    /// A turn that only says `text`.
    pub fn say(text: &str) -> Value {
        json!({"text": text})
    }
}

/// A scratch directory outside the system temp dir (which the sandbox
/// makes private and writable), as a user's home is: `/var/tmp` where it
/// exists, else cargo's target temp dir.
pub fn outside_temp_dir(prefix: &str) -> tempfile::TempDir {
    let base = Path::new("/var/tmp");
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix);
    if base.is_dir()
        && !base.starts_with(std::env::temp_dir())
        && let Ok(dir) = builder.tempdir_in(base)
    {
        return dir;
    }
    builder.tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// Reads `read()` until `ok` holds (a screen may be caught half drawn, so a
/// condition is waited for, never read once); after `wait`, panics with
/// what was waited for and `explain` of the last reading.
pub fn poll_until(
    what: &str,
    wait: std::time::Duration,
    read: impl Fn() -> String,
    ok: impl Fn(&str) -> bool,
    explain: impl Fn(&str) -> String,
) -> String {
    let start = std::time::Instant::now();
    loop {
        let seen = read();
        if ok(&seen) {
            return seen;
        }
        if start.elapsed() > wait {
            panic!("timed out waiting for {what}; {}", explain(&seen));
        }
        std::thread::sleep(std::time::Duration::from_millis(30));
    }
}

/// The user's `config.json` in `config` (the north config directory) with
/// Claude Code-style hooks that stop any `rm -rf` a `Bash` call runs
/// ("no deleting here") and answer every `Read` with "read noted": what
/// the tests of each front end's hooks drive.
pub fn write_guard_hooks(config: &Path) {
    std::fs::create_dir_all(config).unwrap();
    std::fs::write(
        config.join("config.json"),
        serde_json::json!({"hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                "command": "grep -q 'rm -rf' && { echo 'no deleting here' >&2; exit 2; }; exit 0"}]}],
            "PostToolUse": [{"matcher": "Read", "hooks": [{"type": "command",
                "command": "echo 'read noted' >&2; exit 2"}]}]
        }})
        .to_string(),
    )
    .unwrap();
}
