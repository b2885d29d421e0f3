//! The persistent PTY shell: state, stdout/stderr separation, timeouts,
//! stdin, truncation, cwd, restarts and cancellation.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

/// A command as the policy approves it when a person said yes (these tests
/// drive the shell itself, below the gate).
fn cmd(line: &str) -> north_policy::ApprovedCommand {
    north_policy::ShellPolicy::assistant(
        std::path::Path::new("/"),
        north_policy::AllowRules::default(),
        false,
    )
    .approve(line, None, north_policy::Consent::Person)
    .expect("the assistant profile never denies")
}

use north_tools::shell::{RunOptions, ShellError, ShellManager};
use tokio_util::sync::CancellationToken;

fn manager(root: &Path) -> ShellManager {
    ShellManager::new(root.to_owned())
}

fn quick(timeout_ms: u64) -> RunOptions {
    RunOptions {
        timeout: Duration::from_millis(timeout_ms),
        ..RunOptions::default()
    }
}

#[tokio::test]
async fn nothing_is_spawned_until_the_first_command() {
    let dir = tempfile::tempdir().unwrap();
    let shell = manager(dir.path());
    assert!(!shell.is_running().await);
    let r = shell
        .run(&cmd("echo hi"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout, "hi\n");
    assert!(shell.is_running().await);
}

#[tokio::test]
async fn state_persists_across_calls() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let shell = manager(dir.path());
    let r = shell
        .run(
            &cmd("cd sub && export NORTH_TEST_VAR=kept && greet() { echo \"hello $1\"; }"),
            RunOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(r.exit_code, Some(0), "{r:?}");
    let r = shell
        .run(
            &cmd("pwd; echo $NORTH_TEST_VAR; greet world"),
            RunOptions::default(),
        )
        .await
        .unwrap();
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].ends_with("/sub"), "{r:?}");
    assert_eq!(&lines[1..], ["kept", "hello world"]);
}

#[tokio::test]
async fn stdout_stderr_and_exit_code_are_separate() {
    let dir = tempfile::tempdir().unwrap();
    let shell = manager(dir.path());
    let r = shell
        .run(
            &cmd("echo to-out; echo to-err >&2; echo more-out; (exit 7)"),
            RunOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(r.stdout, "to-out\nmore-out\n");
    assert_eq!(r.stderr, "to-err\n");
    assert_eq!(r.exit_code, Some(7));
    assert!(!r.timed_out && !r.truncated);

    let r = shell
        .run(&cmd("ls /definitely/not/here"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("/definitely/not/here"), "{r:?}");
    assert_ne!(r.exit_code, Some(0));
}

#[tokio::test]
async fn output_without_trailing_newline_and_multiline_commands() {
    let dir = tempfile::tempdir().unwrap();
    let shell = manager(dir.path());
    let r = shell
        .run(&cmd("printf 'no newline'"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout, "no newline");
    let script = "for i in 1 2 3\ndo\n  echo \"line $i\"\ndone\ncat <<'EOF'\nheredoc $HOME\nEOF";
    let r = shell
        .run(&cmd(script), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout, "line 1\nline 2\nline 3\nheredoc $HOME\n");
    let r = shell
        .run(&cmd("echo 'unterminated"), RunOptions::default())
        .await
        .unwrap();
    assert_ne!(r.exit_code, Some(0));
    assert!(!r.stderr.is_empty());
    let r = shell
        .run(&cmd("echo still fine"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout, "still fine\n");
}

#[tokio::test]
async fn terminal_echo_does_not_appear_in_output() {
    let dir = tempfile::tempdir().unwrap();
    let shell = manager(dir.path());
    let r = shell
        .run(&cmd("true"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout, "");
    assert_eq!(r.stderr, "");
    let r = shell
        .run(&cmd("echo marker-text"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout, "marker-text\n");
}

#[tokio::test]
async fn timeout_stops_the_command_and_the_session_stays_usable() {
    let dir = tempfile::tempdir().unwrap();
    let shell = manager(dir.path());
    shell
        .run(&cmd("export KEEP=me"), RunOptions::default())
        .await
        .unwrap();
    let r = shell
        .run(&cmd("echo started; sleep 30; echo never"), quick(300))
        .await
        .unwrap();
    assert!(r.timed_out, "{r:?}");
    assert!(r.stdout.starts_with("started"), "{r:?}");
    assert!(!r.stdout.contains("never"));
    assert!(!r.session_ended, "{r:?}");
    assert!(r.notice.as_deref().unwrap_or("").contains("timed out"));
    let r = shell
        .run(&cmd("echo $KEEP"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout, "me\n");
    assert!(!r.session_restarted);
}

#[tokio::test]
async fn a_shell_builtin_loop_is_interrupted_too() {
    let dir = tempfile::tempdir().unwrap();
    let shell = manager(dir.path());
    let r = shell
        .run(&cmd("while :; do :; done"), quick(300))
        .await
        .unwrap();
    assert!(r.timed_out);
    let r = shell
        .run(&cmd("echo after-loop"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout, "after-loop\n");
}

#[tokio::test]
async fn a_command_ignoring_ctrl_c_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let shell = manager(dir.path());
    let r = shell
        .run(&cmd("(trap '' INT; sleep 30)"), quick(300))
        .await
        .unwrap();
    assert!(r.timed_out);
    let r = shell
        .run(&cmd("echo survived"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout, "survived\n");
}

#[tokio::test]
async fn commands_waiting_for_input_time_out() {
    let dir = tempfile::tempdir().unwrap();
    let shell = manager(dir.path());
    // The `read` builtin and an external program both wait on the terminal.
    let r = shell
        .run(&cmd("read answer; echo got $answer"), quick(300))
        .await
        .unwrap();
    assert!(r.timed_out, "{r:?}");
    assert!(!r.stdout.contains("got"));
    let r = shell.run(&cmd("cat"), quick(300)).await.unwrap();
    assert!(r.timed_out, "{r:?}");
    let r = shell
        .run(&cmd("echo ready"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout, "ready\n");
}

#[tokio::test]
async fn long_output_keeps_head_and_tail_with_a_marker() {
    let dir = tempfile::tempdir().unwrap();
    let shell = manager(dir.path());
    let opts = RunOptions {
        max_output: 1000,
        ..RunOptions::default()
    };
    let r = shell
        .run(&cmd("seq 1 100000; seq 1 100000 >&2"), opts)
        .await
        .unwrap();
    assert!(r.truncated);
    assert_eq!(r.exit_code, Some(0));
    for text in [&r.stdout, &r.stderr] {
        assert!(text.starts_with("1\n2\n3\n"), "{text}");
        assert!(text.trim_end().ends_with("99999\n100000"), "{text}");
        assert!(text.contains("bytes truncated"), "{text}");
        assert!(text.len() < 1200, "{}", text.len());
    }
    let total: usize = (1..=100_000).map(|n: u32| n.to_string().len() + 1).sum();
    let cut = total - 1000;
    assert!(
        r.stdout
            .contains(&format!("[... {cut} bytes truncated ...]")),
        "{}",
        r.stdout
    );
}

#[tokio::test]
async fn cwd_option_runs_there_and_then_returns() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
    let root = dir.path().canonicalize().unwrap();
    let shell = manager(&root);
    let opts = RunOptions {
        cwd: Some("a/b".into()),
        ..RunOptions::default()
    };
    let r = shell.run(&cmd("pwd"), opts).await.unwrap();
    assert_eq!(r.stdout.trim(), root.join("a/b").to_str().unwrap());
    let r = shell.run(&cmd("pwd"), RunOptions::default()).await.unwrap();
    assert_eq!(r.stdout.trim(), root.to_str().unwrap());
    // A `cd` inside the command wins over the restore.
    let opts = RunOptions {
        cwd: Some("a".into()),
        ..RunOptions::default()
    };
    shell.run(&cmd("cd b"), opts).await.unwrap();
    let r = shell.run(&cmd("pwd"), RunOptions::default()).await.unwrap();
    assert_eq!(r.stdout.trim(), root.join("a/b").to_str().unwrap());
}

#[tokio::test]
async fn cwd_outside_the_root_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("inside")).unwrap();
    let shell = manager(&dir.path().join("inside"));
    for bad in ["..", "/", "missing", "../inside/../.."] {
        let opts = RunOptions {
            cwd: Some(bad.into()),
            ..RunOptions::default()
        };
        let err = shell.run(&cmd("pwd"), opts).await.unwrap_err();
        assert!(matches!(err, ShellError::BadCwd { .. }), "{bad}: {err}");
    }
}

#[tokio::test]
async fn a_dead_shell_is_replaced_and_the_next_result_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let shell = manager(dir.path());
    shell
        .run(&cmd("export GONE=soon"), RunOptions::default())
        .await
        .unwrap();
    let r = shell
        .run(&cmd("echo bye; exit 3"), RunOptions::default())
        .await
        .unwrap();
    assert!(r.session_ended, "{r:?}");
    assert_eq!(r.exit_code, Some(3));
    assert!(r.stdout.starts_with("bye"));
    let r = shell
        .run(&cmd("echo \"[$GONE]\""), RunOptions::default())
        .await
        .unwrap();
    assert!(r.session_restarted, "{r:?}");
    assert_eq!(r.stdout, "[]\n");
    assert!(r.notice.unwrap().contains("new session"));
    let r = shell
        .run(&cmd("echo steady"), RunOptions::default())
        .await
        .unwrap();
    assert!(!r.session_restarted);
}

#[tokio::test]
async fn cancellation_interrupts_the_running_command() {
    let dir = tempfile::tempdir().unwrap();
    let shell = manager(dir.path());
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let r = shell
        .run_cancellable(&cmd("sleep 30"), RunOptions::default(), &cancel)
        .await
        .unwrap();
    assert!(r.cancelled && !r.timed_out, "{r:?}");
    let r = shell
        .run(&cmd("echo next"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout, "next\n");
}

#[tokio::test]
async fn quotas_apply_to_one_command_only() {
    let dir = tempfile::tempdir().unwrap();
    let shell = manager(dir.path());
    let opts = RunOptions {
        cpu_seconds: Some(7),
        memory_bytes: Some(512 * 1024 * 1024),
        ..RunOptions::default()
    };
    let r = shell.run(&cmd("ulimit -t; ulimit -v"), opts).await.unwrap();
    assert_eq!(r.stdout, "7\n524288\n", "{r:?}");
    let r = shell
        .run(&cmd("ulimit -t"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout, "unlimited\n");
}

#[tokio::test]
async fn nul_bytes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let shell = manager(dir.path());
    let err = shell
        .run(&cmd("echo a\0b"), RunOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, ShellError::NulInCommand));
}

#[tokio::test]
async fn an_abandoned_run_is_stopped_before_the_next_command() {
    let dir = tempfile::tempdir().unwrap();
    let shell = manager(dir.path());
    shell
        .run(&cmd("export STAYS=yes"), RunOptions::default())
        .await
        .unwrap();
    // The caller gives up on a command that waits for input.
    let abandoned = tokio::time::timeout(
        Duration::from_millis(300),
        shell.run(&cmd("cat"), RunOptions::default()),
    )
    .await;
    assert!(abandoned.is_err());
    let r = shell
        .run(&cmd("echo $STAYS"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout, "yes\n", "{r:?}");
    assert!(!r.session_restarted);
}

#[tokio::test]
async fn endless_output_still_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let shell = manager(dir.path());
    let opts = RunOptions {
        timeout: Duration::from_millis(300),
        max_output: 2000,
        ..RunOptions::default()
    };
    let r = shell.run(&cmd("yes north"), opts).await.unwrap();
    assert!(r.timed_out && r.truncated, "{r:?}");
    assert!(r.stdout.starts_with("north\nnorth\n"));
    assert!(!r.session_ended, "{r:?}");
    let r = shell
        .run(&cmd("echo quiet"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout, "quiet\n");
    assert!(!r.session_restarted);
}

#[tokio::test]
async fn a_command_cancelled_before_it_starts_never_runs() {
    let dir = tempfile::tempdir().unwrap();
    let shell = manager(dir.path());
    let cancel = CancellationToken::new();
    cancel.cancel();
    let r = shell
        .run_cancellable(
            &cmd("touch should-not-exist"),
            RunOptions::default(),
            &cancel,
        )
        .await
        .unwrap();
    assert!(r.cancelled);
    assert!(!dir.path().join("should-not-exist").exists());
}
