//! Running one hook: `sh -c COMMAND` through North's one spawner (the
//! key-free environment, the OS sandbox when it is on, a process group of
//! its own), the event's JSON on standard input, a timeout that kills the
//! whole group, and output kept to a bound.

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use north_tools::Spawner;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// Bytes of each output stream a hook's result keeps; the rest is read
/// and dropped so the hook never blocks on a full pipe.
pub const MAX_OUTPUT: usize = 64 * 1024;

/// How long output still open after the hook exited (a background child
/// holding the pipe) is waited for.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// What one run of a hook produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ran {
    /// It exited with `code` (None: ended by a signal).
    Exited {
        /// The exit code.
        code: Option<i32>,
        /// Standard output, bounded.
        stdout: String,
        /// Standard error, bounded.
        stderr: String,
    },
    /// It ran past its timeout; its process group was killed.
    TimedOut,
    /// It could not be started.
    NotStarted(String),
}

/// Runs `command` in `root` with `input` on its standard input.
pub async fn run(
    spawner: &Spawner,
    root: &Path,
    command: &str,
    input: &[u8],
    timeout: Duration,
    plugin_root: Option<&Path>,
) -> Ran {
    let mut cmd = spawner.tokio_command(OsStr::new("sh"), root);
    cmd.arg("-c")
        .arg(command)
        .env("NORTH_PROJECT_DIR", root)
        .env("CLAUDE_PROJECT_DIR", root);
    if let Some(plugin) = plugin_root {
        cmd.env("CLAUDE_PLUGIN_ROOT", plugin);
    }
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Ran::NotStarted(format!("cannot start `sh`: {e}")),
    };
    let pid = child.id();
    // Standard input is written beside the reads: a hook that never reads
    // it, or reads it only after printing, must not stall either side.
    let stdin = child.stdin.take().map(|mut pipe| {
        let input = input.to_vec();
        tokio::spawn(async move {
            let _ = pipe.write_all(&input).await;
            let _ = pipe.shutdown().await;
        })
    });
    let stdout = child.stdout.take().map(|p| tokio::spawn(bounded(p)));
    let stderr = child.stderr.take().map(|p| tokio::spawn(bounded(p)));
    let status = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => status.ok(),
        Err(_) => {
            if let Some(pid) = pid {
                Spawner::kill_group(pid);
            }
            let _ = child.kill().await;
            for task in [stdout, stderr].into_iter().flatten() {
                task.abort();
            }
            if let Some(task) = stdin {
                task.abort();
            }
            return Ran::TimedOut;
        }
    };
    if let Some(task) = stdin {
        task.abort();
    }
    let take = |task: Option<tokio::task::JoinHandle<String>>| async move {
        match task {
            Some(task) => {
                let abort = task.abort_handle();
                match tokio::time::timeout(DRAIN_GRACE, task).await {
                    Ok(Ok(text)) => text,
                    _ => {
                        abort.abort();
                        String::new()
                    }
                }
            }
            None => String::new(),
        }
    };
    let stdout = take(stdout).await;
    let stderr = take(stderr).await;
    Ran::Exited {
        code: status.and_then(|s| s.code()),
        stdout,
        stderr,
    }
}

/// Reads `pipe` to its end, keeping the first [`MAX_OUTPUT`] bytes.
async fn bounded(mut pipe: impl AsyncRead + Unpin) -> String {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_OUTPUT.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_hook_reads_its_input_and_its_exit_code_and_output_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let ran = run(
            &Spawner::unconfined(),
            dir.path(),
            "cat; echo oops >&2; exit 2",
            b"{\"a\":1}",
            Duration::from_secs(30),
            None,
        )
        .await;
        assert_eq!(
            ran,
            Ran::Exited {
                code: Some(2),
                stdout: "{\"a\":1}".into(),
                stderr: "oops\n".into()
            }
        );
    }

    #[tokio::test]
    async fn output_past_the_bound_is_dropped_without_blocking_the_hook() {
        let dir = tempfile::tempdir().unwrap();
        let ran = run(
            &Spawner::unconfined(),
            dir.path(),
            "head -c 1000000 /dev/zero | tr '\\0' x",
            b"",
            Duration::from_secs(30),
            None,
        )
        .await;
        let Ran::Exited { code, stdout, .. } = ran else {
            panic!("{ran:?}")
        };
        assert_eq!(code, Some(0));
        assert_eq!(stdout.len(), MAX_OUTPUT);
    }

    #[tokio::test]
    async fn a_hook_past_its_timeout_is_killed_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("survived");
        let command = format!("(sleep 3; touch {}) & sleep 30", marker.display());
        let ran = run(
            &Spawner::unconfined(),
            dir.path(),
            &command,
            b"",
            Duration::from_millis(300),
            None,
        )
        .await;
        assert_eq!(ran, Ran::TimedOut);
        // The background child was in the hook's group and died with it.
        tokio::time::sleep(Duration::from_secs(4)).await;
        assert!(!marker.exists());
    }
}
