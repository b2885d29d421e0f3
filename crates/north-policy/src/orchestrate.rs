//! The one sequence a command goes through at every entry point — the
//! agent's `shell_run`, `!cmd`, the mesh, `north tool`, `north mcp serve`:
//! approval (a hook's word, the command policy, the mode, whoever decides),
//! the attempt inside the sandbox, and escalation on the sandbox's denial.
//! Entry points differ only in their [`Decider`]; the decisions are these
//! pure functions, table-tested once (`tests/orchestrate_table.rs`).
//!
//! It decides; it does not ask, run or record. Callers ask their approver
//! when [`before`] says [`Before::Ask`], run what it says to run, and offer
//! a run outside the sandbox only when [`after`] says so.

use north_protocol::PermissionMode;

use super::approved::Consent;
use super::shell::Verdict;

/// Who decides what the command policy would ask about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Decider {
    /// A person at North's own terminal (the TUI): asked, and may let a
    /// command the sandbox stopped run once outside it.
    Terminal,
    /// A person in an editor (ACP): asked; never offered a run outside the
    /// sandbox (the editor cannot show what that means).
    Editor,
    /// Nobody in person: flags (`north exec`), a policy file (the mesh),
    /// `north tool`, `north mcp serve`. Asked means refused, unless the
    /// caller's flags answer.
    Unattended,
}

/// What a `PreToolUse` hook said about the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HookWord {
    /// No hook, or one with no permission decision.
    Silent,
    /// `allow`: what the policy would ask about runs (its refusals hold).
    Allow,
    /// `ask`: even what the policy allows waits for the decider.
    Ask,
    /// `deny`: the call does not run.
    Deny,
}

/// The command policy's verdict, reduced to what the sequence needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PolicyWord {
    /// A rule or blanket approval allows it.
    Allow,
    /// Only consent lets it run.
    Ask,
    /// Only the decider's own word lets it run: no mode, hook, read-only
    /// check or unattended run lets it through (a rule of the user's asks).
    Confirm,
    /// Never, whoever approves.
    Deny,
}

impl From<&Verdict> for PolicyWord {
    fn from(verdict: &Verdict) -> Self {
        match verdict {
            Verdict::Allow(_) => PolicyWord::Allow,
            Verdict::Ask(super::shell::AskReason::Rule(_)) => PolicyWord::Confirm,
            Verdict::Ask(_) => PolicyWord::Ask,
            Verdict::Deny(_) => PolicyWord::Deny,
        }
    }
}

/// What is known about a call before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallFacts {
    /// The permission mode.
    pub mode: PermissionMode,
    /// Who decides.
    pub decider: Decider,
    /// The hook's word.
    pub hook: HookWord,
    /// The policy's word.
    pub policy: PolicyWord,
    /// The person typed the command (`!cmd`).
    pub typed_by_user: bool,
    /// Commands run inside the OS sandbox (the `auto` mode relies on it).
    pub sandboxed: bool,
    /// The policy verified the line as only reading, and a sandbox where
    /// the project is read-only is there to hold it to that.
    pub read_only: bool,
}

/// Why a call did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Refused {
    /// The command policy never allows it.
    Policy,
    /// A hook denied it.
    Hook,
    /// The decider said no (or nobody could be asked).
    Decider,
}

/// The first step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Before {
    /// Run it with this consent (the policy still issues the approval).
    Run(Consent),
    /// Ask the decider.
    Ask,
    /// Do not run it.
    Refuse(Refused),
}

/// The decider's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reply {
    /// Yes (once, or remembered: the caller keeps the rule).
    Yes,
    /// No.
    No,
}

/// How the attempt ended, as the sandbox saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Attempt {
    /// It ran (whatever its exit code) without the sandbox refusing it.
    Ran,
    /// The sandbox's policy stopped it (a typed denial, with evidence).
    Stopped,
}

/// What follows the attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// Its result is the answer.
    Done,
    /// Ask the person whether it may run once outside the sandbox.
    OfferOutside,
    /// Its output and the denial are the answer; no way out is offered.
    ReportDenial,
}

/// The first step for a call with `facts`.
pub fn before(facts: &CallFacts) -> Before {
    let unasked = |consent| match facts.hook {
        // A hook that asks makes even an allowed command wait.
        HookWord::Ask => Before::Ask,
        _ => Before::Run(consent),
    };
    match (facts.hook, facts.policy) {
        (HookWord::Deny, _) => Before::Refuse(Refused::Hook),
        (_, PolicyWord::Deny) => Before::Refuse(Refused::Policy),
        (_, PolicyWord::Confirm) => Before::Ask,
        (_, PolicyWord::Allow) => unasked(Consent::None),
        (HookWord::Allow, PolicyWord::Ask) => Before::Run(Consent::Hook),
        // In `auto` the shell itself is inside the OS sandbox: what the
        // policy would ask about runs there without asking.
        (_, PolicyWord::Ask) if facts.mode == PermissionMode::Auto && facts.sandboxed => {
            unasked(Consent::SandboxedMode)
        }
        (_, PolicyWord::Ask) if facts.typed_by_user => unasked(Consent::TypedByPerson),
        // Asking for `ls` buys nothing: it runs where it cannot write.
        (_, PolicyWord::Ask) if facts.read_only => unasked(Consent::ReadOnly),
        (_, PolicyWord::Ask) => Before::Ask,
    }
}

/// The first step where nobody is asked and no mode or hook applies
/// (`north tool`, `north mcp serve`: a hook that denies stops the call
/// before it gets here): [`Before::Ask`] means refused.
pub fn unattended(policy: PolicyWord) -> Before {
    before(&CallFacts {
        mode: PermissionMode::Ask,
        decider: Decider::Unattended,
        hook: HookWord::Silent,
        policy,
        typed_by_user: false,
        sandboxed: false,
        read_only: false,
    })
}

/// The step after the decider replied to [`Before::Ask`].
pub fn answered(reply: Reply) -> Before {
    match reply {
        Reply::Yes => Before::Run(Consent::Person),
        Reply::No => Before::Refuse(Refused::Decider),
    }
}

/// What follows an attempt: only a person at North's terminal, with an
/// unconfined shell to offer, is asked about a run outside the sandbox.
pub fn after(decider: Decider, attempt: Attempt, outside_shell: bool) -> After {
    match (attempt, decider) {
        (Attempt::Ran, _) => After::Done,
        (Attempt::Stopped, Decider::Terminal) if outside_shell => After::OfferOutside,
        (Attempt::Stopped, _) => After::ReportDenial,
    }
}

/// How a whole call ends: the sequence walked with the decider's replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It did not run.
    Refused(Refused),
    /// It ran inside the sandbox (with this consent); `denied`: the sandbox
    /// stopped it and the caller gets its output with the denial.
    Confined {
        /// Who consented.
        consent: Consent,
        /// The sandbox stopped it.
        denied: bool,
    },
    /// It ran again outside the sandbox, once, because the person said so.
    Outside,
}

/// Walks the sequence: `reply` answers the first question, `attempt` is
/// how the sandboxed run ended, `outside_reply` answers the offer to leave
/// the sandbox. The table test checks every combination through this.
pub fn walk(
    facts: &CallFacts,
    reply: Reply,
    attempt: Attempt,
    outside_reply: Reply,
    outside_shell: bool,
) -> Ending {
    let step = match before(facts) {
        Before::Ask => answered(reply),
        step => step,
    };
    let consent = match step {
        Before::Run(consent) => consent,
        Before::Refuse(why) => return Ending::Refused(why),
        // `answered` never asks again.
        Before::Ask => return Ending::Refused(Refused::Decider),
    };
    match (after(facts.decider, attempt, outside_shell), outside_reply) {
        (After::Done, _) => Ending::Confined {
            consent,
            denied: false,
        },
        (After::OfferOutside, Reply::Yes) => Ending::Outside,
        (After::OfferOutside, Reply::No) | (After::ReportDenial, _) => Ending::Confined {
            consent,
            denied: true,
        },
    }
}
