//! A deliberately small shell-command parser for first-word allowlists.
//!
//! A first-word check ("is `ls` allowed?") is only meaningful if the shell
//! runs exactly the programs the check saw. This parser accepts a strict
//! subset of POSIX shell — plain words, single- and double-quoted strings
//! without expansions, and the connectors `;`, `&&`, `||`, `|` — and splits
//! it into simple commands. Everything else that could make the shell run
//! something other than the visible words is refused rather than
//! interpreted: expansions (`$`, backticks, globs in command names, braces,
//! tilde in command names), redirections, subshells and groups, background
//! jobs, comments, history expansion, backslash escapes, control characters,
//! non-ASCII text (lookalike punctuation and spaces), environment-assignment
//! prefixes, shell keywords, and programs whose job is to run other programs
//! (`eval`, `env`, `xargs`, `sh -c`, interpreters, ...). Some ordinary
//! programs can run commands through options (`find -exec`, `git -c`,
//! `tar --to-command`); those options are refused too.
//!
//! When in doubt the parser refuses: a refused command can still be run
//! after the user approves it, a wrongly approved one cannot be taken back.

use std::fmt;

mod known;
mod lex;
mod paths;
mod readonly;
mod rules;

pub use paths::{MAX_GLOB_MATCHES, PathEscape, PathScope, check_paths};
pub use readonly::read_only;

/// Whether `program` has subcommands, so that a prefix rule for it names
/// one (`git status`, `cargo test`), never a file (`ls notes.txt`).
pub(crate) fn has_subcommands(program: &str) -> bool {
    known::has_subcommands(program)
}

use lex::tokenize;
use rules::{Programs, check_segment};

/// One simple command after quote removal: the program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The program name, exactly as the shell will look it up.
    pub program: String,
    /// The arguments after quote removal.
    pub args: Vec<String>,
    /// For each argument, what the shell will expand in it.
    pub expansions: Vec<Expansions>,
    /// The connector joining it to the command before (None for the first).
    pub after: Option<Connector>,
}

/// How a simple command is joined to the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    /// `;`: runs whatever happened before.
    Seq,
    /// `&&`: runs only if the one before succeeded.
    And,
    /// `||`: runs only if the one before failed.
    Or,
    /// `|`: runs beside it, in a subshell of its own.
    Pipe,
}

/// What the shell expands in one word: unquoted glob characters and an
/// unquoted `~`. Quoted ones are literal text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Expansions {
    /// The word holds an unquoted `*`, `?` or `[`.
    pub glob: bool,
    /// The word holds an unquoted `~`.
    pub tilde: bool,
}

/// Why a command line was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Nothing to run.
    #[error("the command is empty")]
    Empty,
    /// A character outside printable ASCII (lookalike punctuation, special spaces).
    #[error("character {found:?} at byte {at} is not printable ASCII")]
    NonAscii {
        /// The character found.
        found: char,
        /// Its byte offset.
        at: usize,
    },
    /// A control character such as a newline or a tab.
    #[error("control character {found:?} at byte {at}")]
    ControlChar {
        /// The character found.
        found: char,
        /// Its byte offset.
        at: usize,
    },
    /// Shell syntax this parser does not accept.
    #[error("{found:?} at byte {at} ({what}) is not allowed")]
    Syntax {
        /// The offending text.
        found: String,
        /// Its byte offset.
        at: usize,
        /// What the shell would do with it.
        what: &'static str,
    },
    /// A quote that is never closed.
    #[error("unterminated {0} quote")]
    UnterminatedQuote(&'static str),
    /// A connector with no command on one side (`; ls`, `ls |`).
    #[error("`{0}` has no command on one side")]
    EmptySegment(String),
    /// A command name that is quoted, a path pattern, an assignment or a keyword.
    #[error("`{word}` cannot be checked as a command name: {why}")]
    CommandName {
        /// The word in command position.
        word: String,
        /// Why it is refused.
        why: &'static str,
    },
    /// A program that runs other programs or changes the shell itself.
    #[error(
        "`{program}` runs other commands or changes the shell, so its first word cannot vouch for it"
    )]
    Indirection {
        /// The program.
        program: String,
    },
    /// A program the policy does not know: what it does with its arguments
    /// cannot be checked.
    #[error(
        "`{program}` is not a program North's check understands, so what it runs or reads cannot be verified"
    )]
    UnknownProgram {
        /// The program.
        program: String,
    },
    /// An option that makes an otherwise allowed program run or write
    /// something else, or follow symlinks out of the project.
    #[error(
        "`{program} {arg}` can run other commands, write files or follow links out of the project"
    )]
    DangerousOption {
        /// The program.
        program: String,
        /// The refused argument.
        arg: String,
    },
    /// A glob in the arguments of a program whose options can run commands.
    #[error("glob `{arg}` could expand to options of `{program}`")]
    GlobInSensitiveArgs {
        /// The program.
        program: String,
        /// The word with the glob.
        arg: String,
    },
}

/// Splits `line` into simple commands, or refuses it.
///
/// Accepted: words of `[A-Za-z0-9_./,:=+%@~*?[\]^-]` characters, single
/// quotes (literal), double quotes without `$`, backtick, `\` or `!`, and the
/// connectors `;`, `&&`, `||`, `|` between non-empty commands. Every command
/// name must be a plain unquoted word naming a program the policy knows (an
/// allow-list, not a deny-list: a path to a program, a code runner or a tool
/// North has not studied is refused); keywords, builtins that evaluate their
/// arguments and programs that run other programs are refused, and so are
/// build tools' subcommands outside their verifiable set.
pub fn parse(line: &str) -> Result<Vec<SimpleCommand>, Refusal> {
    parse_with(line, Programs::Known)
}

fn parse_with(line: &str, programs: Programs) -> Result<Vec<SimpleCommand>, Refusal> {
    let segments = tokenize(line)?;
    let mut commands = Vec::with_capacity(segments.len());
    for (after, words) in segments {
        let mut command = check_segment(words, programs)?;
        command.after = after;
        commands.push(command);
    }
    Ok(commands)
}

/// Splits `line` into simple commands by its syntax alone: the lexer's
/// refusals apply (expansions, redirections, subshells, ...), the rules on
/// programs and options do not. For matching a user's own rules, whose
/// program the user chose to trust.
pub fn split(line: &str) -> Result<Vec<SimpleCommand>, Refusal> {
    let segments = tokenize(line)?;
    let mut commands = Vec::with_capacity(segments.len());
    for (after, mut words) in segments {
        if words.is_empty() {
            return Err(Refusal::Empty);
        }
        let first = words.remove(0);
        if first.quoted || first.glob || first.tilde || first.equals {
            return Err(Refusal::CommandName {
                word: first.text,
                why: "only a plain program name can match a rule",
            });
        }
        let mut command = rules::simple_command(first.text, words);
        command.after = after;
        commands.push(command);
    }
    Ok(commands)
}

/// Why a prefix rule covering the first `rule_words` words of `command`
/// must not cover the rest of it (an option that runs programs or reads
/// config), if so.
pub(crate) fn prefix_stretch(command: &SimpleCommand, rule_words: usize) -> Option<Refusal> {
    rules::stretch_refusal(command, rule_words)
}

/// Parses `line` and checks every simple command's program against `allowed`
/// (exact names): the caller's list, not the policy's own, says which
/// programs may run; the syntax, indirection and option rules still apply.
/// Returns the commands when all of them are allowed.
pub fn check_allowed<S: AsRef<str>>(
    line: &str,
    allowed: &[S],
) -> Result<Vec<SimpleCommand>, CommandDenied> {
    let commands = parse_with(line, Programs::Listed).map_err(CommandDenied::Refused)?;
    for command in &commands {
        if !allowed.iter().any(|a| a.as_ref() == command.program) {
            return Err(CommandDenied::NotAllowed {
                program: command.program.clone(),
            });
        }
    }
    Ok(commands)
}

/// Why a command failed a first-word allowlist check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandDenied {
    /// The command could not be parsed with certainty.
    #[error("{0}")]
    Refused(Refusal),
    /// A simple command's program is not in the allowlist.
    #[error("`{program}` is not in allowed_commands")]
    NotAllowed {
        /// The program that is not allowed.
        program: String,
    },
}

/// Substrings that mark a command as destructive or exfiltrating regardless
/// of approval (runtime-contracts §4: "deny dangerous substrings").
#[rustfmt::skip]
const DANGEROUS_SUBSTRINGS: &[&str] = &[
    "rm -rf /", "rm -fr /", "rm -rf ~", "rm -fr ~", "rm -rf *", "rm -rf .", "rm -r /",
    "--no-preserve-root", ":(){", "dd if=", "of=/dev/", "> /dev/sd", ">/dev/sd", "> /dev/nvme",
    ">/dev/nvme", "chmod -r 777 /", "chown -r", "init 0", "init 6", "| sh", "|sh", "| bash",
    "|bash", "| zsh", "|zsh", "/etc/shadow", "/etc/passwd", "/etc/sudoers", ".ssh/", "nc -l",
    "nc -e", "/dev/tcp/", "/dev/udp/", "history -c",
];

/// Programs that are dangerous wherever they appear as a word (`mkfs.ext4`
/// and `/sbin/reboot` included).
#[rustfmt::skip]
const DANGEROUS_PROGRAMS: &[&str] = &[
    "mkfs", "shutdown", "reboot", "poweroff", "halt", "sudo", "doas", "su", "crontab", "ncat",
    "fdisk", "parted", "wipefs", "shred",
];

/// The first dangerous pattern `command` contains, compared after
/// lowercasing and collapsing whitespace, if any.
pub fn dangerous_substring(command: &str) -> Option<&'static str> {
    let normalized = command
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_lowercase();
    if let Some(found) = DANGEROUS_SUBSTRINGS
        .iter()
        .copied()
        .find(|s| normalized.contains(s))
    {
        return Some(found);
    }
    let words = normalized.split(|c: char| c.is_whitespace() || ";|&()`$<>{}'\"".contains(c));
    for word in words {
        let name = word.rsplit('/').next().unwrap_or(word);
        let stem = name.split('.').next().unwrap_or(name);
        if let Some(found) = DANGEROUS_PROGRAMS.iter().copied().find(|p| *p == stem) {
            return Some(found);
        }
    }
    None
}

impl fmt::Display for SimpleCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.program)?;
        for arg in &self.args {
            write!(f, " {arg}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_connectors_and_removes_quotes() {
        let cmds = parse("ls -la src && grep -n 'a b;c' \"x y\" | head -5").unwrap();
        let shown: Vec<String> = cmds.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["ls -la src", "grep -n a b;c x y", "head -5"]);
        assert_eq!(cmds[1].args, ["-n", "a b;c", "x y"]);
    }

    #[test]
    fn dangerous_substrings_ignore_case_and_spacing() {
        assert_eq!(dangerous_substring("RM   -RF   /"), Some("rm -rf /"));
        assert_eq!(dangerous_substring("cargo test"), None);
        assert_eq!(dangerous_substring("cat asphalt.txt"), None);
        assert_eq!(dangerous_substring("ls; /sbin/reboot"), Some("reboot"));
        assert_eq!(dangerous_substring("mkfs.ext4 /dev/x"), Some("mkfs"));
        assert_eq!(dangerous_substring("echo $(sudo id)"), Some("sudo"));
    }
}
