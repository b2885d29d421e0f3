//! A stdio server as a child process, with bounded buffers on both of its
//! output streams: stdout lines that are not JSON-RPC are dropped as they
//! arrive (a server printing banners or floods cannot grow North's memory,
//! and never gets error replies it would have to read), and stderr goes to
//! the log, keeping only a short tail for `/mcp` and error messages.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::process::{Child, ChildStdin};

use crate::config::Transport;

/// The longest stdout line kept (one JSON-RPC message); longer ones are
/// dropped while they stream past.
pub(crate) const MAX_LINE: usize = 16 * 1024 * 1024;

/// How much of a server's stderr is kept for error messages.
const STDERR_TAIL: usize = 4096;

/// The last bytes a server wrote on stderr.
#[derive(Debug, Default, Clone)]
pub struct StderrTail(Arc<Mutex<VecDeque<u8>>>);

impl StderrTail {
    fn push(&self, bytes: &[u8]) {
        if let Ok(mut tail) = self.0.lock() {
            tail.extend(bytes);
            let excess = tail.len().saturating_sub(STDERR_TAIL);
            tail.drain(..excess);
        }
    }

    /// The last non-empty line, for error messages.
    pub fn last_line(&self) -> Option<String> {
        let tail = self.0.lock().ok()?;
        let bytes: Vec<u8> = tail.iter().copied().collect();
        String::from_utf8_lossy(&bytes)
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| l.chars().take(300).collect())
    }
}

/// A running stdio server: its process, and the streams rmcp talks over.
pub struct ChildServer {
    guard: ChildGuard,
    reader: DuplexStream,
    writer: ChildStdin,
}

impl ChildServer {
    /// The process guard, what the server writes (filtered to JSON-RPC
    /// lines) and its stdin.
    pub(crate) fn into_parts(self) -> (ChildGuard, DuplexStream, ChildStdin) {
        (self.guard, self.reader, self.writer)
    }
}

/// Owns a server's process: dropping it kills the process and its group.
pub(crate) struct ChildGuard {
    child: Child,
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.child.id().and_then(|p| i32::try_from(p).ok())
            && pid > 1
        {
            // The server runs in its own process group: take `npx`'s
            // grandchildren down with it.
            // SAFETY: kill has no memory-safety preconditions.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = self.child.start_kill();
    }
}

/// Starts `transport` (stdio) in `root` through `spawner` (the OS sandbox
/// when confined), with North's key-free environment plus the server's own
/// variables.
pub fn spawn(
    name: &str,
    transport: &Transport,
    root: &Path,
    spawner: &north_tools::Spawner,
    tail: StderrTail,
) -> std::io::Result<ChildServer> {
    let Transport::Stdio {
        command,
        args,
        env,
        cwd,
    } = transport
    else {
        return Err(std::io::Error::other("not a stdio server"));
    };
    let dir = match cwd {
        Some(c) if c.is_absolute() => c.clone(),
        Some(c) => root.join(c),
        None => root.to_path_buf(),
    };
    let mut cmd = spawner.tokio_command(std::ffi::OsStr::new(command), &dir);
    cmd.args(args);
    // A server is not a terminal session: drop the shell-only settings.
    for var in ["PS1", "PS2", "HISTFILE", "NORTH_SHELL"] {
        cmd.env_remove(var);
    }
    cmd.envs(env);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn()?;
    let (Some(stdout), Some(stdin), Some(stderr)) =
        (child.stdout.take(), child.stdin.take(), child.stderr.take())
    else {
        return Err(std::io::Error::other("the server's pipes were not opened"));
    };
    let (ours, theirs) = tokio::io::duplex(256 * 1024);
    tokio::spawn(filter_stdout(name.to_string(), stdout, theirs));
    tokio::spawn(drain_stderr(name.to_string(), stderr, tail));
    Ok(ChildServer {
        guard: ChildGuard { child },
        reader: ours,
        writer: stdin,
    })
}

/// Copies JSON-RPC lines from `from` to `to`; drops everything else.
async fn filter_stdout(name: String, mut from: impl AsyncRead + Unpin, mut to: DuplexStream) {
    let mut chunk = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    // None: undecided (only whitespace so far); Some(true): keeping a
    // candidate message; Some(false): discarding to the end of the line.
    let mut keep: Option<bool> = None;
    let mut dropped: u64 = 0;
    loop {
        let n = match from.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut rest = &chunk[..n];
        while !rest.is_empty() {
            let (part, ended) = match rest.iter().position(|b| *b == b'\n') {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            rest = if ended { &rest[part.len() + 1..] } else { &[] };
            let mut part = part;
            if keep.is_none() {
                let start = part.iter().position(|b| !b.is_ascii_whitespace());
                match start {
                    Some(i) => {
                        keep = Some(part[i] == b'{');
                        part = &part[i..];
                    }
                    None => part = &[],
                }
            }
            if keep == Some(true) {
                if line.len() + part.len() > MAX_LINE {
                    tracing::warn!(server = %name, "MCP server sent a message over {MAX_LINE} bytes; dropped");
                    line = Vec::new();
                    keep = Some(false);
                } else {
                    line.extend_from_slice(part);
                }
            } else if keep == Some(false) && !part.is_empty() && line.is_empty() {
                dropped += part.len() as u64;
            }
            if ended {
                if keep == Some(true) {
                    if serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_ok() {
                        line.push(b'\n');
                        if to.write_all(&line).await.is_err() {
                            return;
                        }
                    } else {
                        dropped += line.len() as u64;
                    }
                }
                line.clear();
                if line.capacity() > 1024 * 1024 {
                    line.shrink_to(64 * 1024);
                }
                keep = None;
            }
        }
        if dropped > 0 {
            tracing::debug!(server = %name, bytes = dropped, "dropped non-protocol output on the server's stdout");
        }
    }
    let _ = to.shutdown().await;
}

/// Logs the server's stderr line by line (each line cut to 1000
/// characters) and keeps its tail.
async fn drain_stderr(name: String, mut from: impl AsyncRead + Unpin, tail: StderrTail) {
    let mut chunk = vec![0u8; 16 * 1024];
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let n = match from.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        tail.push(&chunk[..n]);
        pending.extend_from_slice(&chunk[..n]);
        while let Some(i) = pending.iter().position(|b| *b == b'\n') {
            let text = String::from_utf8_lossy(&pending[..i]);
            let text: String = text.chars().take(1000).collect();
            if !text.trim().is_empty() {
                tracing::info!(server = %name, "stderr: {text}");
            }
            pending.drain(..=i);
        }
        if pending.len() > 4096 {
            pending.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn only_json_lines_pass_and_junk_is_never_buffered() {
        let input: Vec<u8> = [
            &b"banner: starting\n"[..],
            b"  {\"jsonrpc\":\"2.0\",\"id\":1}\n",
            b"{not json}\n",
            &vec![b'x'; 3 * 1024 * 1024],
            b"\n{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n",
        ]
        .concat();
        let (mut out, theirs) = tokio::io::duplex(1024 * 1024);
        filter_stdout("t".into(), &input[..], theirs).await;
        let mut got = String::new();
        out.read_to_string(&mut got).await.unwrap();
        assert_eq!(
            got,
            "{\"jsonrpc\":\"2.0\",\"id\":1}\n{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n"
        );
    }

    #[test]
    fn the_stderr_tail_is_bounded_and_gives_the_last_line() {
        let tail = StderrTail::default();
        for _ in 0..1000 {
            tail.push(b"noise noise noise\n");
        }
        tail.push(b"Error: boom\n\n");
        assert_eq!(tail.last_line().as_deref(), Some("Error: boom"));
        assert!(tail.0.lock().unwrap().len() <= STDERR_TAIL);
    }
}
