//! The one command policy: whether a shell command line may run without
//! asking, must be put to the user, or may never run.
//!
//! Every entry point — the agent (TUI and `north exec`), the mesh's `bash`
//! gate and `north tool` — builds a [`ShellPolicy`] for its profile and asks
//! it; none decides on its own. The order of checks:
//!
//! 1. A profile with a program allowlist (the mesh's `policy.json`) refuses
//!    any line whose programs are not all on it, any shell syntax that could
//!    run something else, and any path outside the project: [`Verdict::Deny`].
//! 2. An exact rule the user chose ("Always execute") allows exactly that
//!    string, whatever it contains: the user read it.
//! 3. Otherwise the line must split into plain commands and every path it
//!    could name must stay in the project (tilde forms, globs, `..`,
//!    absolute paths, symlinks and `cd` chains included). A line that fails
//!    can still run, but only if the user says so: [`Verdict::Ask`].
//! 4. A prefix rule (`cargo test`) allows a single command that starts with
//!    its words; blanket auto-approval (`--allow-shell`, `--yes`) allows any
//!    line that also passes the program rules (no interpreters, no
//!    command-running options).
//! 5. Anything else asks.

use std::path::{Path, PathBuf};

use super::command::{self, PathEscape, PathScope, Refusal, SimpleCommand, check_paths};
use super::{MeshPolicy, PolicyDenial};

/// What to do with a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run it without asking.
    Allow(AllowedBy),
    /// Only the user may let it run.
    Ask(AskReason),
    /// Never run it, whoever approves.
    Deny(PolicyDenial),
}

/// Which rule let a command run unasked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowedBy {
    /// An exact rule the user chose.
    ExactRule,
    /// A prefix rule the user chose.
    PrefixRule(String),
    /// Blanket approval (`--allow-shell`, `--yes`) of a verified command.
    AutoApprove,
}

/// Why a command needs the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AskReason {
    /// No rule covers it and nothing approves commands in advance.
    #[error("no allow rule covers it")]
    NotApproved,
    /// Its syntax or program cannot be verified (expansions, redirections,
    /// interpreters, ...).
    #[error("North cannot verify what it runs: {0}")]
    Unverifiable(Refusal),
    /// It could reach outside the project.
    #[error("{0}")]
    Escapes(PathEscape),
    /// It ran inside the OS sandbox and failed on what looks like a
    /// sandbox denial; running it again outside the sandbox needs the user.
    #[error("it failed inside the sandbox ({0}); run it once without the sandbox?")]
    SandboxDenied(String),
    /// A `PreToolUse` hook asked for the user's word on it.
    #[error("a hook asks you to confirm it: {0}")]
    Hook(String),
    /// A rule of the user's (Claude Code's `ask`) wants their word on it,
    /// whatever else would let it run.
    #[error("your rule `{0}` asks you to confirm it")]
    Rule(String),
}

/// Allow rules the user made, from a project allowlist the user trusts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowRules {
    /// Exact command strings.
    pub exact: Vec<String>,
    /// Command prefixes, matched word by word.
    pub prefixes: Vec<String>,
}

impl AllowRules {
    fn exact_match(&self, line: &str) -> bool {
        let line = line.trim();
        self.exact.iter().any(|r| r.trim() == line)
    }

    /// The prefix rule covering a line of exactly one simple command.
    fn prefix_match(&self, commands: &[SimpleCommand]) -> Option<&str> {
        let [only] = commands else { return None };
        let words: Vec<&str> = std::iter::once(only.program.as_str())
            .chain(only.args.iter().map(String::as_str))
            .collect();
        self.prefixes
            .iter()
            .find(|rule| {
                let rule: Vec<&str> = rule.split_whitespace().collect();
                !rule.is_empty() && words.len() >= rule.len() && words[..rule.len()] == rule[..]
            })
            .map(String::as_str)
    }
}

/// The prefix an "always allow" for `line` would store: the program and,
/// when the next word is a subcommand (`cargo test`, `git status`), that
/// word too. `None` for what a prefix must never cover: more than one
/// command, programs that run other programs or code (`sh`, `env`,
/// `python`…), and lines North cannot verify.
pub fn suggested_prefix(line: &str) -> Option<String> {
    let commands = command::parse(line.trim()).ok()?;
    let [only] = commands.as_slice() else {
        return None;
    };
    if command::dangerous_substring(line).is_some() || only.program.contains('/') {
        return None;
    }
    let mut prefix = only.program.clone();
    if let Some(sub) = only.args.first()
        && command::has_subcommands(&only.program)
        && sub.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && sub
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        prefix.push(' ');
        prefix.push_str(sub);
    }
    Some(prefix)
}

/// A command policy for one entry point.
#[derive(Debug, Clone)]
pub struct ShellPolicy {
    root: PathBuf,
    programs: Option<MeshPolicy>,
    rules: AllowRules,
    auto_approve: bool,
    limits: LimitRules,
}

/// Rules that narrow: lines that never run, and lines that always wait for
/// the user. They match any one command of a line (`a && git push`), and
/// win over every allow rule, approval and mode.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LimitRules {
    /// Never run, whoever approves.
    pub deny: AllowRules,
    /// Always ask.
    pub confirm: AllowRules,
    /// Deny every line.
    pub deny_all: bool,
    /// Ask about every line.
    pub confirm_all: bool,
}

impl LimitRules {
    /// The rule of `rules` (or `all`) that covers `line`: its exact text,
    /// or the words one of its commands starts with. A line North cannot
    /// split is matched on its words, so a rule is not escaped by quoting
    /// or nesting it (`sh -c 'git push'`, `$(git push)`).
    fn matching(rules: &AllowRules, all: bool, line: &str) -> Option<String> {
        if all {
            return Some("every command".into());
        }
        if rules.exact_match(line) {
            return Some(line.trim().to_string());
        }
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || ";&|()`'\"$<>{}\\".contains(c))
            .filter(|w| !w.is_empty())
            .collect();
        rules
            .prefixes
            .iter()
            .find(|rule| {
                let rule: Vec<&str> = rule.split_whitespace().collect();
                !rule.is_empty()
                    && words
                        .windows(rule.len())
                        .any(|w| w.iter().zip(&rule).all(|(a, b)| a == b || base(a) == *b))
            })
            .cloned()
    }
}

/// A program named by its path (`/usr/bin/git`) as its name (`git`).
fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

impl ShellPolicy {
    /// North's assistant profile: no program allowlist; `rules` from a
    /// trusted project allowlist; `auto_approve` for `--allow-shell`/`--yes`.
    /// `root` must be the canonical project root.
    pub fn assistant(root: &Path, rules: AllowRules, auto_approve: bool) -> Self {
        ShellPolicy {
            root: root.to_path_buf(),
            programs: None,
            rules,
            auto_approve,
            limits: LimitRules::default(),
        }
    }

    /// The same policy with `limits`: what they deny never runs, what they
    /// confirm always asks.
    pub fn limited(mut self, limits: LimitRules) -> Self {
        self.limits = limits;
        self
    }

    /// The mesh profile: `policy` (already narrowed for trust) decides which
    /// programs may run at all; approval as for the assistant.
    pub fn mesh(root: &Path, policy: &MeshPolicy, rules: AllowRules, auto_approve: bool) -> Self {
        ShellPolicy {
            root: root.to_path_buf(),
            programs: Some(policy.clone()),
            rules,
            auto_approve,
            limits: LimitRules::default(),
        }
    }

    /// The project root the policy keeps commands in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether `line`, run from `cwd`, is one North verified as only
    /// reading (`ls`, `git status`): the assistant's profile, every program
    /// and option known and reading, every path in the project. Such a line
    /// may run unasked in a read-only sandbox
    /// ([`Consent::ReadOnly`](super::Consent::ReadOnly)).
    pub fn read_only(&self, line: &str, cwd: Option<&Path>) -> bool {
        let cwd = cwd.unwrap_or(&self.root);
        if self.programs.is_some() || !cwd.starts_with(&self.root) {
            return false;
        }
        let scope = PathScope {
            root: &self.root,
            cwd,
        };
        command::parse(line).is_ok_and(|c| command::read_only(&c) && check_paths(&c, scope).is_ok())
    }

    /// Judges `line` run from `cwd` (None: the project root; a directory
    /// outside the root makes every command ask).
    pub fn decide(&self, line: &str, cwd: Option<&Path>) -> Verdict {
        let limits = &self.limits;
        if let Some(rule) = LimitRules::matching(&limits.deny, limits.deny_all, line) {
            return Verdict::Deny(PolicyDenial::Rule(rule));
        }
        let verdict = self.decide_unlimited(line, cwd);
        match (
            &verdict,
            LimitRules::matching(&limits.confirm, limits.confirm_all, line),
        ) {
            (Verdict::Deny(_), _) | (_, None) => verdict,
            (_, Some(rule)) => Verdict::Ask(AskReason::Rule(rule)),
        }
    }

    fn decide_unlimited(&self, line: &str, cwd: Option<&Path>) -> Verdict {
        let cwd = cwd.unwrap_or(&self.root);
        let scope = PathScope {
            root: &self.root,
            cwd,
        };
        let cwd_inside = cwd.starts_with(&self.root);
        if let Some(policy) = &self.programs {
            let commands = match policy.check_command(line) {
                Ok(c) => c,
                Err(denial) => return Verdict::Deny(denial),
            };
            if !cwd_inside {
                return Verdict::Deny(PolicyDenial::Paths(PathEscape::Outside {
                    word: cwd.display().to_string(),
                }));
            }
            if let Err(escape) = check_paths(&commands, scope) {
                return Verdict::Deny(PolicyDenial::Paths(escape));
            }
            if self.rules.exact_match(line) {
                return Verdict::Allow(AllowedBy::ExactRule);
            }
            return if self.auto_approve {
                Verdict::Allow(AllowedBy::AutoApprove)
            } else {
                Verdict::Ask(AskReason::NotApproved)
            };
        }
        if self.rules.exact_match(line) {
            return Verdict::Allow(AllowedBy::ExactRule);
        }
        let split = match command::split(line) {
            Ok(c) => c,
            Err(refusal) => return Verdict::Ask(AskReason::Unverifiable(refusal)),
        };
        if !cwd_inside {
            return Verdict::Ask(AskReason::Escapes(PathEscape::Outside {
                word: cwd.display().to_string(),
            }));
        }
        if let Err(escape) = check_paths(&split, scope) {
            return Verdict::Ask(AskReason::Escapes(escape));
        }
        if let Some(rule) = self.rules.prefix_match(&split) {
            // The rule vouches for its own words, never for options after
            // them that run programs or read config (`--config`, `-c`).
            let words = rule.split_whitespace().count();
            return match split
                .first()
                .and_then(|c| command::prefix_stretch(c, words))
            {
                Some(refusal) => Verdict::Ask(AskReason::Unverifiable(refusal)),
                None => Verdict::Allow(AllowedBy::PrefixRule(rule.to_owned())),
            };
        }
        // Blanket approval vouches only for commands whose programs cannot
        // run something else (the full program and option rules).
        match command::parse(line) {
            Err(refusal) => Verdict::Ask(AskReason::Unverifiable(refusal)),
            Ok(_) if self.auto_approve => Verdict::Allow(AllowedBy::AutoApprove),
            Ok(_) => Verdict::Ask(AskReason::NotApproved),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_offered_only_for_one_plain_command() {
        assert_eq!(
            suggested_prefix("cargo test -p x").as_deref(),
            Some("cargo test")
        );
        assert_eq!(
            suggested_prefix("git status").as_deref(),
            Some("git status")
        );
        assert_eq!(suggested_prefix("ls -la src").as_deref(), Some("ls"));
        // A file name is not a subcommand.
        assert_eq!(
            suggested_prefix("ls nonexistent-file").as_deref(),
            Some("ls")
        );
        assert_eq!(suggested_prefix("cat notes").as_deref(), Some("cat"));
        assert_eq!(suggested_prefix("cargo test; rm x"), None);
        assert_eq!(suggested_prefix("bash -c 'cargo test'"), None);
        assert_eq!(suggested_prefix("python3 x.py"), None);
        assert_eq!(suggested_prefix("env FOO=1 cargo test"), None);
        assert_eq!(suggested_prefix("sudo make"), None);
        assert_eq!(suggested_prefix("./run.sh"), None);
    }

    fn root() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "").unwrap();
        let root = root.canonicalize().unwrap();
        (dir, root)
    }

    #[test]
    fn rules_auto_approval_and_escapes() {
        let (_dir, root) = root();
        let rules = AllowRules {
            exact: vec!["cat ../notes.txt".into()],
            prefixes: vec!["cargo test".into()],
        };
        let ask = ShellPolicy::assistant(&root, rules.clone(), false);
        assert_eq!(
            ask.decide("cat ../notes.txt ", None),
            Verdict::Allow(AllowedBy::ExactRule),
            "a trailing space does not defeat an exact rule"
        );
        assert_eq!(
            ask.decide("cargo test -p x", None),
            Verdict::Allow(AllowedBy::PrefixRule("cargo test".into()))
        );
        assert!(matches!(
            ask.decide("cargo test; rm -r src", None),
            Verdict::Ask(AskReason::NotApproved)
        ));
        assert!(matches!(ask.decide("cargo testx", None), Verdict::Ask(_)));
        assert!(matches!(
            ask.decide("cargo test ../other", None),
            Verdict::Ask(AskReason::Escapes(_))
        ));
        let auto = ShellPolicy::assistant(&root, AllowRules::default(), true);
        assert_eq!(
            auto.decide("ls src && cat src/a.rs", None),
            Verdict::Allow(AllowedBy::AutoApprove)
        );
        for escape in [
            "cat /etc/passwd",
            "cat ~/.ssh/id_rsa",
            "cat ../*",
            "cd .. && ls",
        ] {
            assert!(
                matches!(
                    auto.decide(escape, None),
                    Verdict::Ask(AskReason::Escapes(_))
                ),
                "{escape}"
            );
        }
        for unverifiable in ["cat $HOME/x", "python3 -c 'print(1)'", "ls > out.txt"] {
            assert!(
                matches!(
                    auto.decide(unverifiable, None),
                    Verdict::Ask(AskReason::Unverifiable(_))
                ),
                "{unverifiable}"
            );
        }
    }

    #[test]
    fn a_prefix_rule_never_stretches_over_options_that_run_programs() {
        let (_dir, root) = root();
        let rules = AllowRules {
            exact: Vec::new(),
            prefixes: vec!["cargo test".into(), "npm run".into()],
        };
        let ask = ShellPolicy::assistant(&root, rules, false);
        for stretched in [
            "cargo test --config 'target.x86_64-unknown-linux-gnu.runner=[\"/bin/sh\",\"-c\",\"id\"]'",
            "cargo test --config=build.rustc-wrapper=x",
            "cargo test -Zunstable-options",
            "npm run build --script-shell=x",
            "npm run -c x",
        ] {
            assert!(
                matches!(
                    ask.decide(stretched, None),
                    Verdict::Ask(AskReason::Unverifiable(_))
                ),
                "{stretched}"
            );
        }
        assert!(matches!(
            ask.decide("cargo test -p x -- --nocapture", None),
            Verdict::Allow(AllowedBy::PrefixRule(_))
        ));
    }

    #[test]
    fn blanket_approval_verifies_the_program_word_and_unknown_programs() {
        let (_dir, root) = root();
        let auto = ShellPolicy::assistant(&root, AllowRules::default(), true);
        for unverifiable in [
            "./t.sh",
            "src/t.sh",
            "/abs/evil.sh",
            "chmod +x t.sh && ./t.sh",
            "sqlite3 :memory: '.shell id'",
            "npm exec -c id",
            "npx cowsay",
            "npm x cowsay",
            "git st",
            "cargo evil",
            "cp -s src/a.rs x",
        ] {
            assert!(
                matches!(
                    auto.decide(unverifiable, None),
                    Verdict::Ask(AskReason::Unverifiable(_))
                ),
                "{unverifiable}: {:?}",
                auto.decide(unverifiable, None)
            );
        }
        for fine in ["cargo test -p x", "git status", "npm test", "ls src"] {
            assert_eq!(
                auto.decide(fine, None),
                Verdict::Allow(AllowedBy::AutoApprove),
                "{fine}"
            );
        }
    }

    #[test]
    fn a_link_made_in_a_line_is_judged_from_its_own_directory() {
        let (_dir, root) = root();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        let auto = ShellPolicy::assistant(&root, AllowRules::default(), true);
        for escape in [
            "mkdir -p a/b && cd a/b && ln -s ../.. ../../up && cat up/x",
            "ln -s ../../.. a/b/up",
            "ln -s ../../.. a/up",
            "ln -s src/a.rs a/b/",
            "ln -st a src/a.rs",
            "ln -s ~/.ssh/id_rsa a/key",
            "ln -s ~ a/home",
            "ln -s ../* a/all",
        ] {
            assert!(
                matches!(auto.decide(escape, None), Verdict::Ask(_)),
                "{escape}: {:?}",
                auto.decide(escape, None)
            );
        }
        assert_eq!(
            auto.decide("ln -s ../src/a.rs a/x.rs", None),
            Verdict::Allow(AllowedBy::AutoApprove)
        );
    }

    #[test]
    fn the_mesh_profile_denies_instead_of_asking() {
        let (_dir, root) = root();
        let policy = MeshPolicy::default();
        let mesh = ShellPolicy::mesh(&root, &policy, AllowRules::default(), true);
        assert_eq!(
            mesh.decide("cat src/a.rs", None),
            Verdict::Allow(AllowedBy::AutoApprove)
        );
        for denied in ["cat /etc/passwd", "cat ~+/../x", "rm src/a.rs", "cat ../*"] {
            let Verdict::Deny(d) = mesh.decide(denied, None) else {
                panic!("{denied} must be denied");
            };
            assert!(d.to_string().starts_with("Command denied by policy"), "{d}");
        }
    }

    #[test]
    fn deny_rules_win_everywhere_and_ask_rules_over_every_allow() {
        let (_dir, root) = root();
        let limits = LimitRules {
            deny: AllowRules {
                exact: vec!["make clean".into()],
                prefixes: vec!["git push".into(), "rm".into()],
            },
            confirm: AllowRules {
                exact: Vec::new(),
                prefixes: vec!["git commit".into()],
            },
            ..LimitRules::default()
        };
        let rules = AllowRules {
            exact: vec!["git push origin main".into()],
            prefixes: vec!["git".into(), "cargo test".into()],
        };
        let p = ShellPolicy::assistant(&root, rules, true).limited(limits);
        for line in [
            "git push origin main",
            "git push",
            "cargo test && git push -f",
            "sh -c 'git push'",
            "echo $(git push)",
            "/usr/bin/git push",
            "rm -rf src",
            "make clean",
        ] {
            assert!(
                matches!(p.decide(line, None), Verdict::Deny(PolicyDenial::Rule(_))),
                "{line}: {:?}",
                p.decide(line, None)
            );
        }
        assert!(matches!(
            p.decide("git commit -m x", None),
            Verdict::Ask(AskReason::Rule(r)) if r == "git commit"
        ));
        assert_eq!(
            p.decide("git status", None),
            Verdict::Allow(AllowedBy::PrefixRule("git".into()))
        );
        // Words that only look alike are not the rule's.
        assert!(matches!(
            p.decide("cargo test --package rmx", None),
            Verdict::Allow(_)
        ));
        assert!(matches!(p.decide("git pushx", None), Verdict::Allow(_)));
        let all = ShellPolicy::assistant(&root, AllowRules::default(), true).limited(LimitRules {
            confirm_all: true,
            ..LimitRules::default()
        });
        assert!(matches!(
            all.decide("ls", None),
            Verdict::Ask(AskReason::Rule(_))
        ));
    }
}
