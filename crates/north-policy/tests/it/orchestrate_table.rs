//! The orchestrator's decisions, table-tested once for every entry point:
//! mode × decider × hook × policy verdict × the decider's replies × how the
//! sandboxed attempt ended. Entry points (the agent, `!cmd`, the mesh,
//! `north tool`, `north mcp serve`) differ only in their `Decider`, so what
//! holds here holds for each of them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_policy::Consent;
use north_policy::orchestrate::{
    Attempt, Before, CallFacts, Decider, Ending, HookWord, PolicyWord, Refused, Reply, before,
    unattended, walk,
};
use north_protocol::PermissionMode;

const MODES: [PermissionMode; 4] = PermissionMode::ALL;
const DECIDERS: [Decider; 3] = [Decider::Terminal, Decider::Editor, Decider::Unattended];
const HOOKS: [HookWord; 4] = [
    HookWord::Silent,
    HookWord::Allow,
    HookWord::Ask,
    HookWord::Deny,
];
const POLICIES: [PolicyWord; 4] = [
    PolicyWord::Allow,
    PolicyWord::Ask,
    PolicyWord::Confirm,
    PolicyWord::Deny,
];
const REPLIES: [Reply; 2] = [Reply::Yes, Reply::No];
const ATTEMPTS: [Attempt; 2] = [Attempt::Ran, Attempt::Stopped];

/// Typed by the person, commands sandboxed, the line verified read-only
/// (with a read-only sandbox to hold it): every combination.
fn flags() -> Vec<(bool, bool, bool)> {
    let mut out = Vec::new();
    for typed in [false, true] {
        for sandboxed in [false, true] {
            for read_only in [false, true] {
                out.push((typed, sandboxed, read_only));
            }
        }
    }
    out
}

/// Every combination, with how it ends.
fn every_case() -> Vec<(CallFacts, Reply, Attempt, Reply, bool, Ending)> {
    let mut out = Vec::new();
    for mode in MODES {
        for decider in DECIDERS {
            for hook in HOOKS {
                for policy in POLICIES {
                    for (typed_by_user, sandboxed, read_only) in flags() {
                        let facts = CallFacts {
                            mode,
                            decider,
                            hook,
                            policy,
                            typed_by_user,
                            sandboxed,
                            read_only,
                        };
                        for reply in REPLIES {
                            for attempt in ATTEMPTS {
                                for outside in REPLIES {
                                    // An unconfined shell exists exactly when
                                    // commands are sandboxed.
                                    let end = walk(&facts, reply, attempt, outside, sandboxed);
                                    out.push((facts, reply, attempt, outside, sandboxed, end));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

#[test]
fn the_rules_that_hold_whoever_decides() {
    let cases = every_case();
    assert_eq!(cases.len(), 4 * 3 * 4 * 4 * 2 * 2 * 2 * 2 * 2 * 2);
    for (facts, reply, attempt, outside, _, end) in cases {
        let case =
            format!("{facts:?} reply={reply:?} attempt={attempt:?} outside={outside:?} → {end:?}");
        // The policy's and a hook's refusals hold in every mode, for every decider.
        if facts.hook == HookWord::Deny {
            assert_eq!(end, Ending::Refused(Refused::Hook), "{case}");
            continue;
        }
        if facts.policy == PolicyWord::Deny {
            assert_eq!(end, Ending::Refused(Refused::Policy), "{case}");
            continue;
        }
        // Only a person at North's own terminal who says yes, with the
        // sandbox having stopped the command, ever runs it outside.
        if end == Ending::Outside {
            assert_eq!(facts.decider, Decider::Terminal, "{case}");
            assert_eq!(attempt, Attempt::Stopped, "{case}");
            assert_eq!(outside, Reply::Yes, "{case}");
            assert!(facts.sandboxed, "{case}");
        }
        // A command the sandbox stopped is reported with its denial unless
        // it went outside; one that ran is never reported as denied.
        match end {
            Ending::Confined { denied, .. } => {
                assert_eq!(denied, attempt == Attempt::Stopped, "{case}")
            }
            Ending::Outside | Ending::Refused(_) => {}
        }
        // A rule that asks is always put to the decider, whatever the mode,
        // a hook's allow, the person typing it or a read-only line; a "no"
        // refuses.
        if facts.policy == PolicyWord::Confirm {
            assert_eq!(before(&facts), Before::Ask, "{case}");
            if reply == Reply::No {
                assert_eq!(end, Ending::Refused(Refused::Decider), "{case}");
            }
        }
        // A hook that asks is always put to the decider: nothing runs on its
        // own, and a "no" refuses.
        if facts.hook == HookWord::Ask {
            assert_eq!(before(&facts), Before::Ask, "{case}");
            if reply == Reply::No {
                assert_eq!(end, Ending::Refused(Refused::Decider), "{case}");
            }
        }
        // What the policy allows runs unasked unless a hook asks.
        if facts.policy == PolicyWord::Allow && facts.hook != HookWord::Ask {
            assert_eq!(before(&facts), Before::Run(Consent::None), "{case}");
        }
        // What the policy asks about runs unasked only on a hook's allow,
        // in `auto` with the sandbox on, or when the person typed it.
        if facts.policy == PolicyWord::Ask
            && let Before::Run(consent) = before(&facts)
        {
            let expected = match facts.hook {
                HookWord::Allow => Consent::Hook,
                _ if facts.mode == PermissionMode::Auto && facts.sandboxed => {
                    Consent::SandboxedMode
                }
                _ if facts.typed_by_user => Consent::TypedByPerson,
                _ => Consent::ReadOnly,
            };
            assert_eq!(consent, expected, "{case}");
            assert!(
                facts.hook == HookWord::Allow
                    || (facts.mode == PermissionMode::Auto && facts.sandboxed)
                    || facts.typed_by_user
                    || facts.read_only,
                "{case}"
            );
        }
        // A line that only reads runs unasked (in the read-only sandbox)
        // unless a hook asks or the policy refuses it; it never runs
        // unasked without that sandbox.
        if facts.read_only && facts.policy == PolicyWord::Ask && facts.hook == HookWord::Silent {
            assert!(matches!(before(&facts), Before::Run(_)), "{case}");
        }
        if let Before::Run(Consent::ReadOnly) = before(&facts) {
            assert!(facts.read_only, "{case}");
        }
        // `auto` without the sandbox is no licence: the decider is asked.
        if facts.mode == PermissionMode::Auto
            && !facts.sandboxed
            && facts.policy == PolicyWord::Ask
            && facts.hook == HookWord::Silent
            && !facts.typed_by_user
            && !facts.read_only
        {
            assert_eq!(before(&facts), Before::Ask, "{case}");
        }
    }
}

#[test]
fn an_unattended_entry_point_runs_only_what_the_policy_allows() {
    assert_eq!(unattended(PolicyWord::Allow), Before::Run(Consent::None));
    assert_eq!(unattended(PolicyWord::Ask), Before::Ask);
    assert_eq!(unattended(PolicyWord::Confirm), Before::Ask);
    assert_eq!(
        unattended(PolicyWord::Deny),
        Before::Refuse(Refused::Policy)
    );
}

/// The table a reviewer reads: the first step for each mode, hook and
/// policy word (nobody typed the command, commands are sandboxed), and what
/// follows a sandbox denial for each decider.
#[test]
fn the_decision_table() {
    let mut table = String::from("mode          hook    policy  first step\n");
    for mode in MODES {
        for hook in HOOKS {
            for policy in POLICIES {
                let facts = CallFacts {
                    mode,
                    decider: Decider::Terminal,
                    hook,
                    policy,
                    typed_by_user: false,
                    sandboxed: true,
                    read_only: false,
                };
                table.push_str(&format!(
                    "{:<13} {:<7} {:<7} {:?}\n",
                    mode.as_str(),
                    format!("{hook:?}"),
                    format!("{policy:?}"),
                    before(&facts)
                ));
            }
        }
    }
    table.push_str("\na line that only reads (policy Ask, no hook), read-only sandbox there:\n");
    for mode in MODES {
        let facts = CallFacts {
            mode,
            decider: Decider::Terminal,
            hook: HookWord::Silent,
            policy: PolicyWord::Ask,
            typed_by_user: false,
            sandboxed: true,
            read_only: true,
        };
        table.push_str(&format!("{:<13} {:?}\n", mode.as_str(), before(&facts)));
    }
    table.push_str("\ndecider     sandbox stopped it, person says yes → ending\n");
    for decider in DECIDERS {
        let facts = CallFacts {
            mode: PermissionMode::Ask,
            decider,
            hook: HookWord::Silent,
            policy: PolicyWord::Allow,
            typed_by_user: false,
            sandboxed: true,
            read_only: false,
        };
        let end = walk(&facts, Reply::Yes, Attempt::Stopped, Reply::Yes, true);
        table.push_str(&format!("{:<11} {end:?}\n", format!("{decider:?}")));
    }
    insta::assert_snapshot!(table);
}
