//! The shell session's environment carries no secrets from North's own
//! environment, and the `sh` fallback works when there is no bash.
//!
//! One test per file: it changes this process's environment, which must not
//! race with other tests starting shells.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

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

use north_tools::shell::{RunOptions, ShellManager};

const SECRETS: &[(&str, &str)] = &[
    ("ANTHROPIC_API_KEY", "sk-ant-fake-4242-anthropic"),
    ("OPENAI_API_KEY", "sk-fake-4242-openai"),
    ("GITHUB_TOKEN", "ghp_fake4242github"),
    ("AWS_SECRET_ACCESS_KEY", "fake4242awssecret"),
    ("DATABASE_PASSWORD", "fake4242password"),
    ("MY_SERVICE_KEY", "fake4242servicekey"),
];

#[tokio::test]
async fn secrets_are_absent_and_sh_fallback_works() {
    // SAFETY: this is the only test in this binary, so no other thread reads
    // or writes the environment while it changes.
    unsafe {
        for (name, value) in SECRETS {
            std::env::set_var(name, value);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let shell = ShellManager::new(dir.path().to_owned());
    let r = shell.run(&cmd("env"), RunOptions::default()).await.unwrap();
    assert_eq!(r.exit_code, Some(0));
    assert!(r.stdout.contains("PATH="), "{}", r.stdout);
    for (name, value) in SECRETS {
        assert!(!r.stdout.contains(name), "{name} leaked:\n{}", r.stdout);
        assert!(!r.stdout.contains(value), "value of {name} leaked");
    }
    // Not via the shell's own variables either.
    let r = shell
        .run(&cmd("set | grep -c 4242 || true"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout.trim(), "0", "{r:?}");
    shell.shutdown().await;

    // With only `sh` (and a few tools) on PATH the session falls back to sh.
    let bin = tempfile::tempdir().unwrap();
    for tool in ["sh", "stty", "env", "sleep", "cat"] {
        let real = ["/bin", "/usr/bin"]
            .iter()
            .map(|d| std::path::Path::new(d).join(tool))
            .find(|p| p.exists())
            .unwrap();
        std::os::unix::fs::symlink(real, bin.path().join(tool)).unwrap();
    }
    // SAFETY: as above, no other thread touches the environment.
    unsafe {
        std::env::set_var("PATH", bin.path());
    }
    let fallback = ShellManager::new(dir.path().to_owned());
    let r = fallback
        .run(
            &cmd("echo out; echo err >&2; X=1; export X"),
            RunOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        fallback.shell_program().await.unwrap(),
        bin.path().join("sh")
    );
    assert_eq!((r.stdout.as_str(), r.stderr.as_str()), ("out\n", "err\n"));
    let opts = RunOptions {
        timeout: Duration::from_millis(300),
        ..RunOptions::default()
    };
    let r = fallback.run(&cmd("sleep 30"), opts).await.unwrap();
    assert!(r.timed_out);
    let r = fallback
        .run(&cmd("echo $X"), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(r.stdout, "1\n");
    let r = fallback
        .run(&cmd("env"), RunOptions::default())
        .await
        .unwrap();
    for (name, _) in SECRETS {
        assert!(!r.stdout.contains(name), "{name} leaked into sh");
    }
}
