//! The adversarial command corpus against the one command policy, in both
//! profiles: the assistant's (blanket approval runs only what it can verify,
//! the rest asks) and the mesh's (a program allowlist; the rest is denied).
//! The binary's entry points run the same corpus in `crates/north/tests`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_policy::{AllowRules, MeshPolicy, ShellPolicy, Verdict};
use north_test_support::corpus::{Expect, Layout, cases};

fn mesh_policy() -> MeshPolicy {
    serde_json::from_str(
        r#"{"allowed_commands": ["ls", "cat", "grep", "head", "tail", "wc", "find", "echo", "cd"]}"#,
    )
    .unwrap()
}

#[test]
fn the_assistant_profile_runs_controls_and_asks_for_every_escape() {
    let layout = Layout::new();
    let root = layout.project();
    let policy = ShellPolicy::assistant(&root, AllowRules::default(), true);
    let mut wrong = Vec::new();
    for case in cases() {
        let verdict = policy.decide(&case.command, None);
        let ok = match case.expect {
            Expect::Run => matches!(verdict, Verdict::Allow(_)),
            Expect::Deny => matches!(verdict, Verdict::Ask(_)),
        };
        if !ok {
            wrong.push(format!("{:?} {}: {verdict:?}", case.expect, case.command));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_mesh_profile_runs_controls_and_denies_every_escape() {
    let layout = Layout::new();
    let root = layout.project();
    let policy = ShellPolicy::mesh(&root, &mesh_policy(), AllowRules::default(), true);
    let mut wrong = Vec::new();
    for case in cases() {
        let verdict = policy.decide(&case.command, None);
        let ok = match case.expect {
            Expect::Run => matches!(verdict, Verdict::Allow(_)),
            Expect::Deny => matches!(verdict, Verdict::Deny(_)),
        };
        if !ok {
            wrong.push(format!("{:?} {}: {verdict:?}", case.expect, case.command));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn without_approval_nothing_runs_unasked() {
    let layout = Layout::new();
    let root = layout.project();
    let policy = ShellPolicy::assistant(&root, AllowRules::default(), false);
    for case in cases() {
        assert!(
            matches!(policy.decide(&case.command, None), Verdict::Ask(_)),
            "{}",
            case.command
        );
    }
}
