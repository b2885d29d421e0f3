//! Sessions and sub-agents in git worktrees, through the binary: `-w`
//! works and commits in a worktree of its own (sandboxed, the main tree
//! untouched), isolated sub-agents run at once in two worktrees, and
//! their work comes back only through review; `north worktree` lists,
//! merges and removes only North's own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use north_test_support::anthropic;
use north_test_support::{CapturedRequest, FakeServer, Reply};
use serde_json::{Value, json};

use crate::common::{self, Sandbox, git, json_lines, text};

/// A repository (outside the temp dir, so a sandboxed command sees the
/// main tree as it is) with `a.txt` and `b.txt` committed.
fn repo(dir: &Path) -> PathBuf {
    let top = dir.join("proj");
    std::fs::create_dir_all(&top).unwrap();
    git(&top, &["init", "-q", "-b", "main"]);
    std::fs::write(top.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(top.join("b.txt"), "beta\n").unwrap();
    git(&top, &["add", "."]);
    git(&top, &["commit", "-qm", "first"]);
    top
}

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"tool_calls": [{"id": id, "name": name, "args": args}]})
}

fn north_in(sb: &Sandbox, dir: &Path) -> Command {
    let mut cmd = sb.north();
    cmd.current_dir(dir);
    cmd
}

fn with_stdin(mut cmd: Command, input: &str) -> Output {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn scripted(sb: &Sandbox, dir: &Path, turns: &Value, args: &[&str]) -> Output {
    let n = std::fs::read_dir(sb.dir.path()).unwrap().count();
    let script = sb.file(&format!("wt-script-{n}.json"), turns);
    let mut cmd = north_in(sb, dir);
    cmd.args(["exec", "--script"]).arg(&script).args(args);
    cmd.output().unwrap()
}

#[test]
fn a_session_in_a_worktree_commits_there_and_its_work_comes_back_only_as_accepted() {
    let sb = Sandbox::new();
    if !sb.kernel_sandbox_works() {
        return;
    }
    let outside = common::outside_temp_dir("north-wt-");
    let top = repo(outside.path());
    let index_before = std::fs::read(top.join(".git/index")).unwrap();
    let main = top.display().to_string();
    let out = scripted(
        &sb,
        &top,
        &json!([
            call("e1", "edit_replace_exact", json!({"path": "a.txt", "old": "alpha", "new": "alpha from feat"})),
            call("e2", "edit_create_file", json!({"path": "c.txt", "content": "new in feat\n"})),
            call("s1", "shell_run", json!({"command": "git -c user.name=t -c user.email=t@t add -A && git -c user.name=t -c user.email=t@t commit -qm feat && git log --format=%s -1"})),
            call("s2", "shell_run", json!({"command": format!("echo changed > {main}/a.txt; touch {main}/escape.txt; git -C {main} update-ref refs/heads/main HEAD; echo done")})),
            {"text": "worked in feat"}
        ]),
        &["-w", "feat", "--mode", "auto", "--json", "do the work"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("new worktree feat"), "{err}");
    let wt = outside.path().join("proj.worktrees/feat");
    // The edits and the commit are in the worktree, on its branch.
    assert_eq!(
        std::fs::read_to_string(wt.join("a.txt")).unwrap(),
        "alpha from feat\n"
    );
    assert_eq!(
        git(&top, &["log", "--format=%s", "-1", "north/feat"]).trim(),
        "feat"
    );
    // The main tree, its index and its branch are as they were: the
    // sandbox held the main tree read-only to the session.
    assert!(git(&top, &["status", "--porcelain"]).is_empty());
    assert_eq!(std::fs::read(top.join(".git/index")).unwrap(), index_before);
    assert_eq!(
        git(&top, &["log", "--format=%s", "-1", "main"]).trim(),
        "first"
    );
    assert!(!top.join("escape.txt").exists());
    assert_eq!(
        std::fs::read_to_string(top.join("a.txt")).unwrap(),
        "alpha\n"
    );
    // A scripted review: a.txt accepted, c.txt refused.
    let mut merge = north_in(&sb, &top);
    merge.args(["worktree", "merge", "feat"]);
    let out = with_stdin(merge, "y\nn\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        shown.contains("+alpha from feat") && shown.contains("+new in feat"),
        "{shown}"
    );
    assert!(shown.contains("written: a.txt"), "{shown}");
    assert_eq!(
        std::fs::read_to_string(top.join("a.txt")).unwrap(),
        "alpha from feat\n"
    );
    assert!(!top.join("c.txt").exists());
    // What is left to merge is what was refused.
    let list = north_in(&sb, &top)
        .args(["worktree", "list", "--json"])
        .output()
        .unwrap();
    let row: Value = serde_json::from_str(text(&list.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(row["name"], "feat");
    assert_eq!(row["state"], "1 change(s) to merge");
    assert!(row["session"].is_string(), "{row}");
    assert!(row["bytes"].as_u64().unwrap() > 0);
}

#[test]
fn resume_goes_back_into_the_worktree_and_undo_there_restores_only_it() {
    let sb = Sandbox::new();
    let outside = common::outside_temp_dir("north-wt-");
    let top = repo(outside.path());
    let out = scripted(
        &sb,
        &top,
        &json!([
            call("e1", "edit_replace_exact", json!({"path": "b.txt", "old": "beta", "new": "beta in feat"})),
            {"text": "edited"}
        ]),
        &["-w", "feat", "--yes", "--json", "edit b"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let session = json_lines(&out)
        .into_iter()
        .find_map(|e| e["session_id"].as_str().map(String::from))
        .or_else(|| {
            let err = text(&out.stderr);
            err.split("--resume ")
                .nth(1)
                .map(|s| s.split(')').next().unwrap().trim().to_string())
        })
        .unwrap();
    let wt = outside.path().join("proj.worktrees/feat");
    // From the main tree, --resume finds the session in its worktree.
    let out = scripted(
        &sb,
        &top,
        &json!([call("p1", "shell_run", json!({"command": "pwd"})), {"text": "here"}]),
        &["--resume", &session, "--yes", "--json", "where are you"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("resuming there"),
        "{}",
        text(&out.stderr)
    );
    let pwd = json_lines(&out)
        .into_iter()
        .find(|e| e["type"] == "tool_result")
        .unwrap()
        .to_string();
    assert!(pwd.contains(&wt.display().to_string()), "{pwd}");
    // `north undo` in the worktree puts back the worktree's file only.
    std::fs::write(top.join("b.txt"), "beta changed in main\n").unwrap();
    let out = north_in(&sb, &wt)
        .args(["undo", "--turn", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(wt.join("b.txt")).unwrap(), "beta\n");
    assert_eq!(
        std::fs::read_to_string(top.join("b.txt")).unwrap(),
        "beta changed in main\n"
    );
}

#[test]
fn remove_refuses_a_worktree_north_did_not_make_and_never_follows_a_link() {
    let sb = Sandbox::new();
    let outside = common::outside_temp_dir("north-wt-");
    let top = repo(outside.path());
    let theirs = outside.path().join("theirs");
    git(&top, &["worktree", "add", "-q", theirs.to_str().unwrap()]);
    let out = north_in(&sb, &top)
        .args(["worktree", "remove", "theirs"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("North did not create a worktree named `theirs`"));
    assert!(theirs.join("a.txt").exists());
    // A worktree of North's holding a link out of it.
    let out = scripted(
        &sb,
        &top,
        &json!([{"text": "nothing"}]),
        &["-w", "linked", "hi"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let wt = outside.path().join("proj.worktrees/linked");
    let keep = outside.path().join("keep");
    std::fs::create_dir(&keep).unwrap();
    std::fs::write(keep.join("precious.txt"), "mine\n").unwrap();
    std::os::unix::fs::symlink(&keep, wt.join("out")).unwrap();
    std::os::unix::fs::symlink(keep.join("precious.txt"), wt.join("file-out")).unwrap();
    // Unmerged work keeps it without --force.
    let out = north_in(&sb, &top)
        .args(["worktree", "remove", "linked"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("not merged"),
        "{}",
        text(&out.stderr)
    );
    let out = north_in(&sb, &top)
        .args(["worktree", "remove", "linked", "--force"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!wt.exists());
    assert_eq!(
        std::fs::read_to_string(keep.join("precious.txt")).unwrap(),
        "mine\n"
    );
    assert!(!git(&top, &["worktree", "list"]).contains("linked"));
    assert!(
        git(&top, &["branch", "--list", "north/linked"])
            .trim()
            .is_empty()
    );
}

#[test]
fn the_repositorys_hooks_and_config_do_not_run_when_north_creates_or_merges() {
    let sb = Sandbox::new();
    let outside = common::outside_temp_dir("north-wt-");
    let top = repo(outside.path());
    let marker = outside.path().join("ran");
    let script = Sandbox::executable(
        &outside.path().join("evil.sh"),
        format!("#!/bin/sh\ntouch {}\ncat\n", marker.display()),
    );
    let s = script.display();
    for hook in [
        "post-checkout",
        "reference-transaction",
        "post-merge",
        "post-commit",
    ] {
        Sandbox::executable(
            &top.join(".git/hooks").join(hook),
            format!("#!/bin/sh\n{s}\n"),
        );
    }
    let mut config = std::fs::read_to_string(top.join(".git/config")).unwrap();
    config.push_str(&format!(
        "[core]\n\tfsmonitor = {s}\n[filter \"x\"]\n\tsmudge = {s}\n\tclean = {s}\n\trequired = true\n"
    ));
    std::fs::write(top.join(".git/config"), config).unwrap();
    let out = scripted(
        &sb,
        &top,
        &json!([
            call("e1", "edit_replace_exact", json!({"path": "a.txt", "old": "alpha", "new": "alpha 2"})),
            {"text": "ok"}
        ]),
        &["-w", "safe", "--yes", "go"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut merge = north_in(&sb, &top);
    merge.args(["worktree", "merge", "safe", "--yes"]);
    let out = with_stdin(merge, "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(top.join("a.txt")).unwrap(),
        "alpha 2\n"
    );
    assert!(!marker.exists(), "a program from the repository's .git ran");
}

#[test]
fn worktree_hooks_in_claude_codes_format_run_and_may_take_a_worktree_back() {
    let sb = Sandbox::new();
    let outside = common::outside_temp_dir("north-wt-");
    let top = repo(outside.path());
    let seen = outside.path().join("seen.json");
    let config = sb.home().join("config/north/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let hooks = json!({"hooks": {
        "WorktreeCreate": [{"hooks": [{"type": "command", "command": "cat > created.json; test \"$(basename \"$PWD\")\" != refused || { echo 'not this one' >&2; exit 2; }"}]}],
        "WorktreeRemove": [{"hooks": [{"type": "command", "command": "echo removing >&2"}]}]
    }});
    std::fs::write(&config, hooks.to_string()).unwrap();
    let _ = seen;
    let out = scripted(&sb, &top, &json!([{"text": "hi"}]), &["-w", "hooked", "hi"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let wt = outside.path().join("proj.worktrees/hooked");
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(wt.join("created.json")).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "WorktreeCreate");
    assert_eq!(input["name"], "hooked");
    assert_eq!(input["worktree_path"], wt.display().to_string());
    // A hook that says no takes the worktree back.
    let out = scripted(
        &sb,
        &top,
        &json!([{"text": "hi"}]),
        &["-w", "refused", "hi"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("not this one"),
        "{}",
        text(&out.stderr)
    );
    assert!(!outside.path().join("proj.worktrees/refused").exists());
    assert!(!git(&top, &["worktree", "list"]).contains("refused"));
}

const AGENT: &str =
    "---\nname: NAME\ndescription: Works on the README\nisolation: worktree\n---\nYou are MARK.\n";

/// The model: the parent hands one task to each agent, each agent edits
/// README.md its own way and runs a two-second command, then answers.
fn isolated_agents_model(req: &CapturedRequest) -> Reply {
    let body = req.json().to_string();
    let step = body.matches("tool_use_id").count();
    let who = ["AGENT-A-1", "AGENT-B-1"]
        .iter()
        .position(|m| body.contains(m));
    let sse = match (who, step) {
        (None, 0) => anthropic::StreamBuilder::new()
            .tool_use(
                "a1",
                "agent",
                &[r#"{"agent": "alpha", "prompt": "edit the README"}"#],
            )
            .tool_use(
                "a2",
                "agent",
                &[r#"{"agent": "beta", "prompt": "edit the README"}"#],
            )
            .build(),
        (None, _) => anthropic::text_stream(&["both done"]),
        (Some(i), 0) => {
            let args = json!({"path": "README.md", "old": "# Test project", "new": format!("# Project by {}", ["A", "B"][i])});
            anthropic::StreamBuilder::new()
                .tool_use(&format!("e{i}"), "edit_replace_exact", &[&args.to_string()])
                .build()
        }
        (Some(i), 1) => {
            let args =
                json!({"command": "echo start=$(date +%s%N); sleep 2; echo end=$(date +%s%N)"});
            anthropic::StreamBuilder::new()
                .tool_use(&format!("s{i}"), "shell_run", &[&args.to_string()])
                .build()
        }
        (Some(_), _) => anthropic::text_stream(&["edited"]),
    };
    Reply::sse(sse)
}

fn stamps(events: &[Value], call: &str) -> (u128, u128) {
    let result = events
        .iter()
        .find(|e| {
            e["type"] == "agent"
                && e["call_id"] == call
                && e["event"]["type"] == "tool_result"
                && e["event"]["tool"] == "shell_run"
        })
        .unwrap_or_else(|| panic!("no command result of {call}"))
        .to_string();
    let n = |key: &str| -> u128 {
        let at = result
            .find(key)
            .unwrap_or_else(|| panic!("{key} in {result}"))
            + key.len();
        result[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap()
    };
    (n("start="), n("end="))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn isolated_sub_agents_work_at_once_in_two_worktrees_and_the_second_merge_is_a_conflict() {
    let sb = Sandbox::new();
    if !sb.kernel_sandbox_works() {
        return;
    }
    sb.init_git();
    git(&sb.project(), &["add", "README.md"]);
    git(&sb.project(), &["commit", "-qm", "readme"]);
    for (name, mark) in [("alpha", "AGENT-A-1"), ("beta", "AGENT-B-1")] {
        let def = AGENT.replace("NAME", name).replace("MARK", mark);
        let path = sb.home().join(format!("config/north/agents/{name}.md"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, def).unwrap();
    }
    let server = FakeServer::start().await.unwrap();
    server.set_responder(isolated_agents_model);
    let mut cmd = sb.north();
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-test-0000000000000000")
        .env("ANTHROPIC_BASE_URL", server.url())
        .args([
            "exec",
            "--provider",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
        ])
        .args(["--mode", "auto", "--json", "go"]);
    let out = common::output(cmd).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let events = json_lines(&out);
    // Each ran its two-second command in its own shell, at the same time.
    let (a, b) = (stamps(&events, "a1"), stamps(&events, "a2"));
    assert!(
        a.0 < b.1 && b.0 < a.1,
        "the commands did not overlap: {a:?} {b:?}"
    );
    // Each edit is in its own worktree.
    let results: Vec<Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_result" && e["tool"] == "agent")
        .cloned()
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    let wt = |r: &Value| r["details"]["output"]["worktree"].clone();
    let (first, second) = (wt(&results[0]), wt(&results[1]));
    for (w, who) in [(&first, "A"), (&second, "B")] {
        let path = PathBuf::from(
            w["path"]
                .as_str()
                .unwrap_or_else(|| panic!("{w} in {results:?}")),
        );
        assert_eq!(
            std::fs::read_to_string(path.join("README.md")).unwrap(),
            format!("# Project by {who}\n")
        );
    }
    // The first came back clean; the second conflicts with it and, with no
    // person to review it, was not written.
    assert_eq!(first["accepted"], true, "{first}");
    assert_eq!(second["conflicts"], json!(["README.md"]), "{second}");
    assert!(
        second["note"]
            .as_str()
            .unwrap()
            .contains("were not written"),
        "{second}"
    );
    assert_eq!(
        std::fs::read_to_string(sb.project().join("README.md")).unwrap(),
        "# Project by A\n"
    );
    // Its review shows the conflict with git's markers.
    let name = second["worktree"].as_str().unwrap();
    let out = sb
        .north()
        .args(["worktree", "merge", name, "--dry-run"])
        .output()
        .unwrap();
    let shown = text(&out.stdout);
    assert!(shown.contains("CONFLICT"), "{shown}");
    assert!(
        shown.contains("<<<<<<< main tree") && shown.contains("+# Project by B"),
        "{shown}"
    );
}

#[test]
fn a_repositorys_own_git_file_opens_nothing_to_commands() {
    let sb = Sandbox::new();
    if !sb.kernel_sandbox_works() {
        return;
    }
    // A repository that arrives as a "worktree" whose git directory is
    // somewhere the user keeps other things.
    let outside = common::outside_temp_dir("north-wt-");
    let victim = outside.path().join("victim");
    std::fs::create_dir_all(victim.join("objects")).unwrap();
    std::fs::write(
        sb.project().join(".git"),
        format!("gitdir: {}\n", victim.display()),
    )
    .unwrap();
    let v = victim.display();
    let out = scripted(
        &sb,
        &sb.project(),
        &json!([
            call("s1", "shell_run", json!({"command": format!("touch {v}/planted {v}/objects/planted; echo tried")})),
            {"text": "done"}
        ]),
        &["--mode", "auto", "--json", "go"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!victim.join("planted").exists());
    assert!(!victim.join("objects/planted").exists());
}

/// Commits a `.claude/settings.json` whose prompt hook writes `marker`.
fn commit_prompt_hook(top: &Path, marker: &str) {
    let settings = json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": format!("echo RAN > {marker}")}
    ]}]}});
    std::fs::create_dir_all(top.join(".claude")).unwrap();
    std::fs::write(top.join(".claude/settings.json"), settings.to_string()).unwrap();
    git(top, &["add", ".claude"]);
    git(top, &["commit", "-qm", "settings"]);
}

#[test]
fn a_worktree_of_a_trusted_repository_is_trusted_and_its_project_hooks_run() {
    let sb = Sandbox::new();
    let outside = common::outside_temp_dir("north-wt-");
    let top = repo(outside.path());
    commit_prompt_hook(&top, "hook-ran.txt");
    let out = north_in(&sb, &top).args(["trust"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = scripted(
        &sb,
        &top,
        &json!([{"text": "hi"}]),
        &["-w", "trusted", "hi"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let wt = outside.path().join("proj.worktrees/trusted");
    assert!(wt.join("hook-ran.txt").exists(), "{}", text(&out.stderr));
    // An untrusted repository's worktree stays untrusted.
    let other = outside.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let top2 = repo(&other);
    commit_prompt_hook(&top2, "hook-ran.txt");
    let out = scripted(
        &sb,
        &top2,
        &json!([{"text": "hi"}]),
        &["-w", "untrusted", "hi"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!other.join("proj.worktrees/untrusted/hook-ran.txt").exists());
}

#[test]
fn a_nested_repository_planted_in_a_worktree_runs_nothing_when_north_reads_it() {
    let sb = Sandbox::new();
    let outside = common::outside_temp_dir("north-wt-");
    let top = repo(outside.path());
    let out = scripted(
        &sb,
        &top,
        &json!([{"text": "hi"}]),
        &["-w", "planted", "hi"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let wt = outside.path().join("proj.worktrees/planted");
    // What a command in the worktree could do: a nested repository whose
    // config runs a program, registered in the worktree's index.
    let marker = outside.path().join("ran");
    let script = Sandbox::executable(
        &outside.path().join("evil.sh"),
        format!("#!/bin/sh\ntouch {}\n", marker.display()),
    );
    let nested = wt.join("x");
    std::fs::create_dir(&nested).unwrap();
    git(&nested, &["init", "-q"]);
    git(&nested, &["commit", "-q", "--allow-empty", "-m", "x"]);
    let sha = git(&nested, &["rev-parse", "HEAD"]);
    git(
        &nested,
        &["config", "core.fsmonitor", &script.display().to_string()],
    );
    git(
        &wt,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{sha},x"),
        ],
    );
    let _ = std::fs::remove_file(&marker);
    for args in [
        &["worktree", "list"][..],
        &["worktree", "merge", "planted", "--dry-run"],
    ] {
        let out = north_in(&sb, &top).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    }
    assert!(
        !marker.exists(),
        "North's git ran a nested repository's config"
    );
}

#[test]
fn trust_does_not_carry_to_a_worktree_of_a_revision_with_other_settings() {
    let sb = Sandbox::new();
    let outside = common::outside_temp_dir("north-wt-");
    let top = repo(outside.path());
    // A branch whose settings run a hook the user never saw.
    git(&top, &["checkout", "-q", "-b", "pr"]);
    commit_prompt_hook(&top, "pr-hook-ran.txt");
    git(&top, &["checkout", "-q", "main"]);
    let out = north_in(&sb, &top).args(["trust"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = scripted(
        &sb,
        &top,
        &json!([{"text": "hi"}]),
        &["-w", "review", "--worktree-base", "pr", "hi"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let wt = outside.path().join("proj.worktrees/review");
    assert!(wt.join(".claude/settings.json").exists());
    assert!(
        !wt.join("pr-hook-ran.txt").exists(),
        "a hook the user never trusted ran"
    );
}
