//! The sandbox's denial behind a failed command, told apart from an
//! ordinary failure by the sandbox's own policy: what decides whether the
//! caller is told the sandbox stopped a command and whether a person may be
//! offered one run outside it. Judged by the shell tools from the command's
//! stderr and exit code, so every entry point gets the same answer.

use std::path::PathBuf;

use crate::os_sandbox::{Network, SandboxPolicy};

/// The sandbox stopped a command: what it refused, and the error line that
/// shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxDenial {
    /// A write to a path the policy refuses.
    Write {
        /// The path refused.
        path: PathBuf,
        /// The command's error line (at most 200 characters).
        line: String,
    },
    /// A network socket, with the network off.
    Network {
        /// The command's error line (at most 200 characters).
        line: String,
    },
    /// A host North's network proxy refused (no grant covers it), or a
    /// connection around the proxy, which leads nowhere.
    Proxy {
        /// The command's error line (at most 200 characters).
        line: String,
    },
}

impl std::fmt::Display for SandboxDenial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SandboxDenial::Write { path, line } => write!(
                f,
                "the sandbox refuses writes to {} ({line})",
                path.display()
            ),
            SandboxDenial::Network { line } => {
                write!(f, "the sandbox refuses network sockets ({line})")
            }
            SandboxDenial::Proxy { line } => write!(
                f,
                "the sandbox's network reaches only the hosts a grant covers, through North's proxy ({line}); a `net:<host>` grant allows a host"
            ),
        }
    }
}

/// What a command's tools print when North's proxy refused a host: a
/// grant allows it.
const PROXY_MARKERS: &[&str] = &[
    "North's sandbox proxy",
    "CONNECT tunnel failed, response 403",
    "returned error: 403",
    "403 Forbidden",
];

/// What a connection around the proxy meets: the command's own network
/// namespace has no route out, and its loopback holds only what the
/// command itself serves (so a refused connection there is most often a
/// service outside the sandbox, which only a run outside reaches).
const ISOLATION_MARKERS: &[&str] = &["Network is unreachable", "Connection refused"];

/// The sandbox's refusal behind a failed command, if the failure is one
/// `policy` makes: an error line (stderr only) about a path the policy
/// refuses to write, or about a socket when the policy has no network. A
/// permission error the sandbox did not cause (a file the user cannot
/// write either, a path inside the project) is no evidence, whatever the
/// command printed.
pub fn sandbox_denial(
    exit_code: Option<i32>,
    stderr: &str,
    policy: &SandboxPolicy,
) -> Option<SandboxDenial> {
    const MARKERS: &[&str] = &[
        "Permission denied",
        "Read-only file system",
        "Operation not permitted",
    ];
    if exit_code? == 0 {
        return None;
    }
    if matches!(policy.network, Network::Proxied(_)) {
        let found = |markers: &[&str]| {
            stderr
                .lines()
                .find(|l| markers.iter().any(|m| l.contains(m)))
                .map(|l| l.trim().chars().take(200).collect::<String>())
        };
        if let Some(line) = found(PROXY_MARKERS) {
            return Some(SandboxDenial::Proxy { line });
        }
        if let Some(line) = found(ISOLATION_MARKERS) {
            return Some(SandboxDenial::Network { line });
        }
    }
    let lower = stderr.to_ascii_lowercase();
    let about_sockets = lower.contains("socket") || lower.contains("connect");
    stderr
        .lines()
        .filter(|l| MARKERS.iter().any(|m| l.contains(m)))
        .find_map(|line| {
            let refused = named_paths(line, &policy.root)
                .into_iter()
                .find(|p| policy.stops_write(p));
            let line: String = line.trim().chars().take(200).collect();
            match refused {
                Some(path) => Some(SandboxDenial::Write { path, line }),
                // seccomp refuses a socket with EPERM.
                None if policy.network == Network::Off
                    && about_sockets
                    && line.contains("Operation not permitted") =>
                {
                    Some(SandboxDenial::Network { line })
                }
                None => None,
            }
        })
}

/// The paths an error line names (`touch: cannot touch '/etc/x': …`,
/// `bash: .git/hooks/x: Read-only file system`), absolute or relative to
/// `root`: words with a slash in them.
fn named_paths(line: &str, root: &std::path::Path) -> Vec<std::path::PathBuf> {
    line.split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`' | '‘' | '’'))
        .map(|w| w.trim_end_matches(':'))
        .filter(|w| w.contains('/') && !w.contains("://"))
        .map(|w| {
            // Lexically: `..` steps out of the root, as the kernel sees it.
            let mut path = if w.starts_with('/') {
                std::path::PathBuf::from("/")
            } else {
                root.to_path_buf()
            };
            for part in std::path::Path::new(w).components() {
                match part {
                    std::path::Component::ParentDir => {
                        path.pop();
                    }
                    std::path::Component::Normal(n) => path.push(n),
                    _ => {}
                }
            }
            path
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A failed command's stderr judged against `policy`, as text.
    fn judged(stderr: &str, policy: &SandboxPolicy) -> Option<String> {
        sandbox_denial(Some(1), stderr, policy).map(|d| d.to_string())
    }

    #[test]
    fn a_host_the_proxy_refused_is_the_sandbox_s_doing_only_under_the_proxy() {
        let mut policy = SandboxPolicy::new(std::path::PathBuf::from("/p"));
        let stderr = "curl: (56) CONNECT tunnel failed, response 403\n";
        assert_eq!(judged(stderr, &policy), None, "no proxy, no evidence");
        policy.network = Network::Proxied("/tmp/e/proxy.sock".into());
        let said = judged(stderr, &policy).unwrap();
        assert!(
            said.contains("North's proxy") && said.contains("response 403"),
            "{said}"
        );
        let around = judged("OSError: [Errno 101] Network is unreachable", &policy).unwrap();
        assert!(around.contains("refuses network sockets"), "{around}");
        assert!(judged("error: no such file", &policy).is_none());
    }

    #[test]
    fn only_a_refusal_the_policy_makes_is_evidence() {
        // Outside the temp dir, which the sandbox lets commands write: the
        // build's target dir, or (a checkout under the temp dir) the home.
        let tmp = std::env::temp_dir();
        let target = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target"));
        let base = [
            Some(target),
            std::env::var_os("HOME").map(std::path::PathBuf::from),
        ]
        .into_iter()
        .flatten()
        .find(|p| !p.starts_with(&tmp) && std::fs::create_dir_all(p).is_ok())
        .expect("a writable directory outside the temp dir");
        let dir = tempfile::tempdir_in(base).unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        let policy = SandboxPolicy::new(root.clone());
        let line = |path: &std::path::Path| {
            format!(
                "touch: cannot touch '{}': Permission denied",
                path.display()
            )
        };
        // A write outside the root (one the user could make), and into the
        // read-only git hooks.
        let out_path = dir.path().join("outside.txt");
        assert!(
            judged(&line(&out_path), &policy)
                .unwrap()
                .contains("outside.txt")
        );
        let hooks = "bash: line 1: .git/hooks/pre-commit: Read-only file system";
        assert!(judged(hooks, &policy).is_some());
        assert!(judged("sh: ../sibling.txt: Permission denied", &policy).is_some());
        // A path the user could not write outside either is no evidence
        // (root writes anywhere: then it is).
        let locked = dir.path().join("locked");
        std::fs::create_dir_all(&locked).unwrap();
        std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o555))
            .unwrap();
        let is_root = std::fs::write(locked.join("probe"), "x").is_ok();
        assert_eq!(judged(&line(&locked.join("x")), &policy).is_some(), is_root);
        // A path inside the project, a line naming no path, a command that
        // succeeded or reported no exit: none of it opens the way out.
        assert_eq!(judged("cat: src/secret: Permission denied", &policy), None);
        assert_eq!(judged("Permission denied", &policy), None);
        assert_eq!(sandbox_denial(Some(0), &line(&out_path), &policy), None);
        assert_eq!(sandbox_denial(None, &line(&out_path), &policy), None);
        // A socket the sandbox refused (Python's traceback names the call
        // on one line and the error on another).
        let socket = "  File \"<string>\", line 1, in socket.create_connection\nPermissionError: [Errno 1] Operation not permitted";
        assert!(judged(socket, &policy).unwrap().contains("network"));
    }
}
