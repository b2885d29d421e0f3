//! The sandbox's denial behind a failed command, told apart from an
//! ordinary failure by the sandbox's own policy: what decides whether the
//! model is told the sandbox stopped a command and whether a person may be
//! offered one run outside it.

use north_protocol::ToolOutcome;
use serde_json::json;

/// `outcome` (a command's output, kept whole) with the sandbox's denial and
/// what follows from it, for the model.
pub(super) fn with_denial(mut outcome: ToolOutcome, evidence: &str, next: &str) -> ToolOutcome {
    match outcome.output.as_object_mut() {
        Some(out) => {
            out.insert("sandboxDenied".into(), json!(evidence));
            out.insert(
                "note".into(),
                json!(format!("the OS sandbox stopped this command; {next}")),
            );
        }
        None => {
            outcome.error = Some(format!(
                "the OS sandbox stopped this command ({evidence}); {next}"
            ));
        }
    }
    outcome
}

/// The sandbox's refusal behind a failed command, if the failure is one
/// `policy` makes: an error line (stderr only) about a path the policy
/// refuses to write, or about a socket when the policy has no network. A
/// permission error the sandbox did not cause (a file the user cannot
/// write either, a path inside the project) is no evidence, whatever the
/// command printed.
pub(super) fn sandbox_denial(
    outcome: &ToolOutcome,
    policy: &north_tools::os_sandbox::SandboxPolicy,
) -> Option<String> {
    const MARKERS: &[&str] = &[
        "Permission denied",
        "Read-only file system",
        "Operation not permitted",
    ];
    let out = outcome.output.as_object()?;
    // `shell_run` says `exitCode`, `shell.exec` (runtime-contracts) `exit_code`.
    let code = out
        .get("exitCode")
        .or_else(|| out.get("exit_code"))
        .and_then(serde_json::Value::as_i64)?;
    if code == 0 {
        return None;
    }
    let stderr = out.get("stderr").and_then(serde_json::Value::as_str)?;
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
                Some(path) => Some(format!(
                    "the sandbox refuses writes to {} ({line})",
                    path.display()
                )),
                // seccomp refuses a socket with EPERM.
                None if policy.network == north_tools::os_sandbox::Network::Off
                    && about_sockets
                    && line.contains("Operation not permitted") =>
                {
                    Some(format!("the sandbox refuses network sockets ({line})"))
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
    use north_tools::os_sandbox::SandboxPolicy;

    fn failed(stdout: &str, stderr: &str) -> ToolOutcome {
        ToolOutcome::ok(json!({"exitCode": 1, "stdout": stdout, "stderr": stderr}))
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
        let outside = failed("", &line(&out_path));
        assert!(
            sandbox_denial(&outside, &policy)
                .unwrap()
                .contains("outside.txt")
        );
        let hooks = failed(
            "",
            "bash: line 1: .git/hooks/pre-commit: Read-only file system",
        );
        assert!(sandbox_denial(&hooks, &policy).is_some());
        let up = failed("", "sh: ../sibling.txt: Permission denied");
        assert!(sandbox_denial(&up, &policy).is_some());
        // A path the user could not write outside either is no evidence
        // (root writes anywhere: then it is).
        let locked = dir.path().join("locked");
        std::fs::create_dir_all(&locked).unwrap();
        std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o555))
            .unwrap();
        let is_root = std::fs::write(locked.join("probe"), "x").is_ok();
        let locked_line = failed("", &line(&locked.join("x")));
        assert_eq!(sandbox_denial(&locked_line, &policy).is_some(), is_root);
        // Text the command prints on stdout, a path inside the project, a
        // line naming no path, a command that succeeded: none of it opens
        // the way out.
        let stdout = failed(&line(&out_path), "");
        assert_eq!(sandbox_denial(&stdout, &policy), None);
        let inside = failed("", "cat: src/secret: Permission denied");
        assert_eq!(sandbox_denial(&inside, &policy), None);
        let vague = failed("", "Permission denied");
        assert_eq!(sandbox_denial(&vague, &policy), None);
        let ok = ToolOutcome::ok(json!({"exitCode": 0, "stderr": line(&out_path)}));
        assert_eq!(sandbox_denial(&ok, &policy), None);
        // A socket the sandbox refused (Python's traceback names the call
        // on one line and the error on another).
        let socket = failed(
            "",
            "  File \"<string>\", line 1, in socket.create_connection\nPermissionError: [Errno 1] Operation not permitted",
        );
        assert!(
            sandbox_denial(&socket, &policy)
                .unwrap()
                .contains("network")
        );
    }
}
