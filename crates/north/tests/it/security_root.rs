//! The security review's reproductions, through the real binary: a
//! repository's `.git/config` runs nothing, keys live only in North's
//! memory, "verified" commands cannot run code or reach outside, trust
//! covers the files trusted settings run, a redirect never carries the key,
//! and the model never receives it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use north_test_support::{FakeServer, Reply};
use serde_json::{Value, json};

use crate::common;
use common::{Sandbox, git, output, recorded, text};

const KEY: &str = "sk-ant-ROOTLEAKCHECK-9f3e1c7a25d04b86";
const SSH_SECRET: &str = "SSH-PRIVATE-KEY-MATERIAL-4471";

fn executable(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// A home with an ssh key, outside the project.
fn with_ssh_key(sb: &Sandbox) -> PathBuf {
    let ssh = sb.home().join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(ssh.join("id_rsa"), SSH_SECRET).unwrap();
    ssh.join("id_rsa")
}

/// Writes the scripted model turns and returns their path.
fn script(sb: &Sandbox, turns: Value) -> PathBuf {
    sb.file("script.json", &turns)
}

fn shell_turns(commands: &[&str]) -> Value {
    let calls: Vec<Value> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| json!({"id": format!("c{i}"), "name": "shell_run", "args": {"command": c}}))
        .collect();
    json!([{"tool_calls": calls}, {"text": "done"}])
}

fn exec(sb: &Sandbox, script: &Path, requests: &Path, extra: &[&str]) -> Command {
    let mut cmd = sb.north();
    cmd.env("ANTHROPIC_API_KEY", KEY)
        .args(["exec", "--script"])
        .arg(script)
        .arg("--record-requests")
        .arg(requests)
        .args(extra)
        .arg("go");
    cmd
}

/// A repository whose `.git/config` runs a script from every hook git
/// offers a log: a signed HEAD with `log.showSignature`, `gpg.program`,
/// `core.fsmonitor`, `diff.external`, `core.pager`.
fn hostile_git(sb: &Sandbox) -> PathBuf {
    let p = sb.project();
    git(&p, &["init", "-q"]);
    git(&p, &["add", "README.md"]);
    git(&p, &["commit", "-qm", "first"]);
    // A change to it: `hotfiles` counts changed files.
    let readme = std::fs::read_to_string(p.join("README.md")).unwrap();
    std::fs::write(p.join("README.md"), format!("{readme}more\n")).unwrap();
    git(&p, &["commit", "-qam", "second"]);
    let tree = git(&p, &["write-tree"]);
    let head = git(&p, &["rev-parse", "HEAD"]);
    let commit = format!(
        "tree {tree}\nparent {head}\nauthor a <a@b> 1700000000 +0000\ncommitter a <a@b> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n"
    );
    let mut hash = Command::new("git")
        .args(["hash-object", "-t", "commit", "-w", "--stdin"])
        .current_dir(&p)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    hash.stdin
        .take()
        .unwrap()
        .write_all(commit.as_bytes())
        .unwrap();
    let id = text(&hash.wait_with_output().unwrap().stdout)
        .trim()
        .to_owned();
    git(&p, &["update-ref", "HEAD", &id]);
    let pwned = sb.dir.path().join("pwned.txt");
    let payload = sb.dir.path().join("payload.sh");
    executable(
        &payload,
        &format!(
            "#!/bin/sh\n{{ echo RAN; env; cat \"$HOME/.ssh/id_rsa\"; }} >> {}\nexit 1\n",
            pwned.display()
        ),
    );
    let s = payload.display();
    let mut config = std::fs::read_to_string(p.join(".git/config")).unwrap();
    config.push_str(&format!(
        "[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {s}\n[core]\n\tfsmonitor = {s}\n\tpager = {s}\n[diff]\n\texternal = {s}\n"
    ));
    std::fs::write(p.join(".git/config"), config).unwrap();
    pwned
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repositorys_git_config_runs_nothing_through_norths_own_git() {
    let sb = Sandbox::new();
    with_ssh_key(&sb);
    let pwned = hostile_git(&sb);
    // The project card at start-up, then the `hotfiles` tool the model calls.
    let s = script(
        &sb,
        json!([{"tool_calls": [{"id": "h", "name": "hotfiles", "args": {}}]}, {"text": "ok"}]),
    );
    let requests = sb.dir.path().join("requests.jsonl");
    let out = output(exec(&sb, &s, &requests, &[])).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut tool = sb.north();
    tool.env("ANTHROPIC_API_KEY", KEY)
        .args(["tool", "hotfiles", "--args", "{}"]);
    let listed = output(tool).await;
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    assert!(
        !pwned.exists(),
        "the repository's config ran: {}",
        std::fs::read_to_string(&pwned).unwrap_or_default()
    );
    // git still read the history: README.md is hot because it was changed.
    let hot = text(&listed.stdout);
    assert!(
        hot.contains("README.md") && hot.contains("commits"),
        "{hot}"
    );
    let all: String = recorded(&requests).iter().map(Value::to_string).collect();
    assert!(all.contains("commits"), "hotfiles reached the model: {all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_child_of_north_inherits_a_key() {
    let sb = Sandbox::new();
    // `north sandbox` passes the environment on: the key is not in it.
    let mut cmd = sb.north();
    cmd.env("ANTHROPIC_API_KEY", KEY)
        .env("GITHUB_TOKEN", "ghp-ROOTLEAKCHECK-token-0042")
        .args([
            "sandbox",
            "--",
            "sh",
            "-c",
            "env; cat /proc/$PPID/environ; true",
        ]);
    let out = output(cmd).await;
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{all}");
    assert!(all.contains("PATH="), "{all}");
    for leak in [KEY, "ANTHROPIC_API_KEY", "ghp-ROOTLEAKCHECK"] {
        assert!(!all.contains(leak), "{leak} reached the command: {all}");
    }
    // A command the user allowed (an exact rule in a trusted project) that
    // dumps its environment and its parent's.
    let rule = "sh -c 'env > seen.txt; cat /proc/$PPID/environ >> seen.txt; true'";
    std::fs::write(
        sb.project().join(".north/allowlist.json"),
        json!({"allowedCommands": [rule]}).to_string(),
    )
    .unwrap();
    let s = script(&sb, shell_turns(&[rule]));
    let requests = sb.dir.path().join("requests.jsonl");
    let out = output(exec(&sb, &s, &requests, &["--trust"])).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let seen = std::fs::read_to_string(sb.project().join("seen.txt")).unwrap();
    assert!(seen.contains("NORTH_SHELL=1"), "{seen}");
    assert!(!seen.contains(KEY), "{seen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verified_commands_cannot_run_code_or_reach_outside() {
    let sb = Sandbox::new();
    let ssh = with_ssh_key(&sb);
    let p = sb.project();
    let marker = sb.dir.path().join("ran.txt");
    executable(
        &p.join("t.sh"),
        &format!("#!/bin/sh\necho ran >> {}\n", marker.display()),
    );
    let attempts = [
        "./t.sh".to_owned(),
        format!("{}/t.sh", p.display()),
        "chmod +x t.sh && ./t.sh".to_owned(),
        "sqlite3 :memory: '.shell sh t.sh'".to_owned(),
        "npm exec -c 'sh t.sh'".to_owned(),
        "mkdir -p a/b && cd a/b && ln -s ../../.. ../../up && cat ../../up/home/.ssh/id_rsa"
            .to_owned(),
        format!("cat {}", ssh.display()),
    ];
    let refs: Vec<&str> = attempts.iter().map(String::as_str).collect();
    let s = script(&sb, shell_turns(&refs));
    let requests = sb.dir.path().join("requests.jsonl");
    let out = output(exec(&sb, &s, &requests, &["--yes"])).await;
    let refusals = text(&out.stderr);
    assert!(refusals.contains("makes a symbolic link"), "{refusals}");
    assert!(
        refusals.contains("`sqlite3` is not a program"),
        "{refusals}"
    );
    assert!(!marker.exists(), "a verified command ran a script");
    assert!(!p.join("up").exists(), "the escaping link was made");
    let sent: String = recorded(&requests).iter().map(Value::to_string).collect();
    assert!(!sent.contains(SSH_SECRET), "{sent}");

    // A prefix rule never stretches over an option that runs a program.
    let runner = format!("[\"/bin/sh\",\"{}/t.sh\"]", p.display());
    let stretched =
        format!("cargo test --config 'target.x86_64-unknown-linux-gnu.runner={runner}'");
    std::fs::write(
        p.join(".north/allowlist.json"),
        json!({"allowedPrefixes": ["cargo test"]}).to_string(),
    )
    .unwrap();
    let s = script(&sb, shell_turns(&[&stretched]));
    let out = output(exec(&sb, &s, &requests, &["--trust"])).await;
    assert!(!marker.exists(), "the prefix rule ran a configured runner");
    assert!(
        text(&out.stderr).contains("--config"),
        "the refusal names the option: {}{}",
        text(&out.stderr),
        text(&out.stdout)
    );

    // Even a line the user allowed by an exact rule cannot read a secret
    // store: the OS sandbox hides it.
    let read_key = format!("cat {}", ssh.display());
    std::fs::write(
        p.join(".north/allowlist.json"),
        json!({"allowedCommands": [read_key]}).to_string(),
    )
    .unwrap();
    let s = script(&sb, shell_turns(&[&read_key]));
    let requests = sb.dir.path().join("requests-exact.jsonl");
    let out = output(exec(&sb, &s, &requests, &["--trust"])).await;
    let _ = out;
    let sent: String = recorded(&requests).iter().map(Value::to_string).collect();
    // Hidden (a home under the temp dir is not even in the command's
    // private temp dir): the read fails, the key is not sent.
    assert!(
        sent.contains("Permission denied") || sent.contains("No such file"),
        "{sent}"
    );
    assert!(!sent.contains(SSH_SECRET), "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_covers_the_script_a_trusted_mcp_server_runs() {
    let sb = Sandbox::new();
    let p = sb.project();
    std::fs::create_dir_all(p.join("mcp")).unwrap();
    let marker = sb.dir.path().join("server-ran.txt");
    std::fs::write(p.join("mcp/server.sh"), "exit 0\n").unwrap();
    std::fs::write(
        p.join(".mcp.json"),
        json!({"mcpServers": {"tools": {"command": "sh", "args": ["mcp/server.sh", "--fast"], "env": {"TOKEN_NAME": "x"}}}})
            .to_string(),
    )
    .unwrap();
    let mut show = sb.north();
    show.args(["trust", "--show"]);
    let shown = text(&output(show).await.stdout);
    assert!(
        shown.contains("runs `sh mcp/server.sh --fast`") && shown.contains("TOKEN_NAME"),
        "the prompt shows the whole command and the variables it sets: {shown}"
    );
    let mut trust = sb.north();
    trust.arg("trust");
    assert!(output(trust).await.status.success());
    // Only the script changes: the project is no longer trusted.
    std::fs::write(
        p.join("mcp/server.sh"),
        format!("echo ran >> {}\n", marker.display()),
    )
    .unwrap();
    let mut list = sb.north();
    list.args(["mcp", "list"]);
    let out = output(list).await;
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!marker.exists(), "the changed script ran: {all}");
    let mut show = sb.north();
    show.args(["trust", "--show"]);
    let shown = text(&output(show).await.stdout);
    assert!(shown.contains("changed since you trusted it"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_never_carries_the_key_to_another_host() {
    let sb = Sandbox::new();
    let elsewhere = FakeServer::start().await.unwrap();
    let redirecting = FakeServer::start().await.unwrap();
    redirecting.set_fallback(
        Reply::json(307, "{}").header("location", &format!("{}/v1/messages", elsewhere.url())),
    );
    let mut cmd = sb.north();
    cmd.env("ANTHROPIC_API_KEY", KEY)
        .env("ANTHROPIC_BASE_URL", redirecting.url())
        .args(["exec", "--provider", "anthropic", "hello"]);
    let out = output(cmd).await;
    let err = text(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("redirect"), "{err}");
    assert!(
        err.contains(&elsewhere.url()),
        "the error names where: {err}"
    );
    assert!(!err.contains(KEY));
    assert!(
        elsewhere.requests().is_empty(),
        "the other host was contacted"
    );
    assert_eq!(
        redirecting.requests_to("/v1/messages").len(),
        1,
        "not retried"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_never_receives_norths_key() {
    let sb = Sandbox::new();
    std::fs::write(sb.project().join("notes.txt"), format!("key = {KEY}\n")).unwrap();
    let s = script(
        &sb,
        json!([{"tool_calls": [{"id": "r", "name": "read_file", "args": {"path": "notes.txt"}}]}, {"text": "ok"}]),
    );
    let requests = sb.dir.path().join("requests.jsonl");
    let mut cmd = sb.north();
    cmd.env("ANTHROPIC_API_KEY", KEY)
        .args(["exec", "--script"])
        .arg(&s)
        .arg("--record-requests")
        .arg(&requests)
        .arg("read notes.txt and @notes.txt");
    let out = output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent: String = recorded(&requests).iter().map(Value::to_string).collect();
    assert!(sent.contains("key = [REDACTED]"), "{sent}");
    assert!(!sent.contains(KEY), "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_git_dir_the_model_creates_in_auto_mode_is_set_aside() {
    let sb = Sandbox::new();
    let marker = sb.dir.path().join("fsmonitor-ran.txt");
    let hook = format!("echo ran >> {}", marker.display());
    let make_repo = format!(
        "git init -q && printf '[core]\\n\\tfsmonitor = {hook}\\n' >> .git/config && echo made"
    );
    let s = script(&sb, shell_turns(&[&make_repo]));
    let requests = sb.dir.path().join("requests.jsonl");
    let out = output(exec(&sb, &s, &requests, &["--mode", "auto"])).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let p = sb.project();
    assert!(
        !p.join(".git").exists(),
        "the model's .git was left in place"
    );
    let quarantine = p.join(".north/quarantine");
    assert!(quarantine.is_dir(), "it was set aside, not deleted");
    let sent: String = recorded(&requests).iter().map(Value::to_string).collect();
    assert!(sent.contains("quarantine"), "the model is told: {sent}");
    // The user's own git in the project runs nothing the model wrote.
    let status = Command::new("git")
        .args(["status"])
        .current_dir(&p)
        .env("GIT_CEILING_DIRECTORIES", sb.dir.path())
        .output()
        .unwrap();
    assert!(!status.status.success(), "no repository is left here");
    assert!(!marker.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_file_cannot_turn_the_sandbox_off() {
    let sb = Sandbox::new();
    let p = sb.project();
    std::fs::write(
        p.join(".north/project.json"),
        json!({"sandbox": {"enabled": false}, "allow_shell": true}).to_string(),
    )
    .unwrap();
    // Outside the project and the temp dir the sandbox leaves writable.
    std::fs::create_dir_all(sb.home().join(".ssh")).unwrap();
    let outside = sb.home().join(".ssh/outside.txt");
    let rule = format!("touch {}", outside.display());
    std::fs::write(
        p.join(".north/allowlist.json"),
        json!({"allowedCommands": [rule]}).to_string(),
    )
    .unwrap();
    let s = script(&sb, shell_turns(&[&rule]));
    let requests = sb.dir.path().join("requests.jsonl");
    let out = output(exec(&sb, &s, &requests, &["--trust"])).await;
    let err = text(&out.stderr);
    assert!(err.contains("ignored `sandbox`"), "{err}");
    assert!(
        !outside.exists(),
        "a trusted project's file turned the sandbox off"
    );
    // The user's own flag does, and so does the user's own config.
    let out = output(exec(&sb, &s, &requests, &["--trust", "--sandbox", "off"])).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(outside.exists());
    std::fs::remove_file(&outside).unwrap();
    let config = sb.home().join("config/north/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, json!({"sandbox": {"enabled": false}}).to_string()).unwrap();
    let out = output(exec(&sb, &s, &requests, &["--trust"])).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(outside.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_deny_read_hides_more_paths() {
    let sb = Sandbox::new();
    // A home outside the temp dir, as on a user's machine.
    let home = common::outside_temp_dir("north-home-");
    // Inside a directory the home allow-list opens (`.cache`): only the
    // user's deny_read hides it there.
    let private = home.path().join(".cache/work-notes");
    std::fs::create_dir_all(&private).unwrap();
    std::fs::write(private.join("plan.txt"), "PRIVATE-PLAN-7731").unwrap();
    let config = home.path().join("config/north/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        json!({"sandbox": {"deny_read": ["~/.cache/work-notes"]}}).to_string(),
    )
    .unwrap();
    let read = format!("cat {}", private.join("plan.txt").display());
    std::fs::write(
        sb.project().join(".north/allowlist.json"),
        json!({"allowedCommands": [read]}).to_string(),
    )
    .unwrap();
    let s = script(&sb, shell_turns(&[&read]));
    let requests = sb.dir.path().join("requests.jsonl");
    let mut cmd = exec(&sb, &s, &requests, &["--trust"]);
    cmd.env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("XDG_DATA_HOME", home.path().join("data"));
    let _ = output(cmd).await;
    let sent: String = recorded(&requests).iter().map(Value::to_string).collect();
    assert!(!sent.contains("PRIVATE-PLAN-7731"), "{sent}");
    assert!(sent.contains("Permission denied"), "{sent}");
}
