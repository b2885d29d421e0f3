//! The programs the command policy understands (an allow-list), the
//! subcommands of build tools that are verifiable, and the options a prefix
//! rule never stretches over.

use super::Refusal;
use super::lex::Word;

/// The programs the policy understands: what each does with its arguments
/// is known (paths are checked, the options that run or write something
/// else are refused below). Any other program — a code runner such as
/// `sqlite3` (`.shell`) or `npx`, a tool North has not studied — is not
/// verifiable: it runs only when a person approves the line (and then
/// inside the OS sandbox).
#[rustfmt::skip]
pub(super) const KNOWN_PROGRAMS: &[&str] = &[
    // reading and searching
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "fd", "fdfind", "find",
    "tree", "stat", "file", "du", "df", "less", "more", "man", "nl", "tac", "rev", "od",
    "hexdump", "xxd", "strings", "cmp", "diff", "comm",
    // text in, text out
    "echo", "sort", "uniq", "cut", "tr", "column", "fold", "fmt", "paste", "join", "expand",
    "unexpand", "md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum", "b2sum", "base64",
    "seq",
    // where and who
    "pwd", "cd", "true", "false", "date", "which", "whoami", "id", "uname", "basename",
    "dirname", "realpath", "readlink", "nproc", "sleep",
    // files in the project
    "mkdir", "touch", "cp", "mv", "rm", "rmdir", "ln", "chmod", "tar", "gzip", "gunzip",
    "zcat", "zip", "unzip",
    // build tools whose subcommands are checked below
    "git", "cargo", "rustc", "rustfmt", "go", "gofmt", "npm", "pnpm", "yarn", "tsc",
];

/// Subcommands of the build tools that are verifiable; anything else (an
/// alias from a repository's config, an external `cargo-foo` on `PATH`,
/// `npm exec`) is not.
const SUBCOMMANDS: &[(&str, &[&str])] = &[
    (
        "git",
        &[
            "status",
            "log",
            "diff",
            "show",
            "add",
            "commit",
            "branch",
            "switch",
            "checkout",
            "restore",
            "stash",
            "rev-parse",
            "ls-files",
            "blame",
            "grep",
            "shortlog",
            "describe",
            "tag",
            "reset",
            "merge-base",
            "cat-file",
            "rm",
            "mv",
            "init",
            "reflog",
            "version",
            "help",
        ],
    ),
    (
        "cargo",
        &[
            "build", "b", "check", "c", "test", "t", "clippy", "fmt", "doc", "d", "tree",
            "metadata", "bench", "run", "r", "clean", "version", "help",
        ],
    ),
    (
        "go",
        &[
            "build", "test", "vet", "fmt", "list", "version", "run", "mod", "help",
        ],
    ),
    (
        "npm",
        &[
            "test",
            "t",
            "run",
            "run-script",
            "ls",
            "list",
            "outdated",
            "version",
            "help",
        ],
    ),
    (
        "pnpm",
        &[
            "test", "t", "run", "ls", "list", "outdated", "version", "help",
        ],
    ),
    (
        "yarn",
        &["test", "run", "list", "outdated", "version", "help"],
    ),
];

/// Options that run a program or read configuration that can, on any
/// program: a prefix rule (`cargo test`) never stretches over them.
pub(super) const CONFIG_OPTIONS: &[ArgRule] = &[
    ArgRule::Long("--config"),
    ArgRule::Long("--config-env"),
    ArgRule::Exact("-c"),
    ArgRule::Long("--script-shell"),
    ArgRule::Long("--exec"),
    ArgRule::Long("--exec-path"),
    ArgRule::Long("--rcfile"),
    ArgRule::Long("--init-file"),
    ArgRule::Long("--node-options"),
    ArgRule::Long("--userconfig"),
    ArgRule::Long("--globalconfig"),
    ArgRule::Long("--toolexec"),
    ArgRule::Prefix("-toolexec"),
    ArgRule::Prefix("-exec"),
    ArgRule::Prefix("-Z"),
    ArgRule::Prefix("--call"),
];

/// Whether `program` has subcommands (`git status`, `cargo test`): only
/// then is the word after it part of what a prefix rule names.
pub(super) fn has_subcommands(program: &str) -> bool {
    SUBCOMMANDS.iter().any(|(name, _)| *name == program)
}

/// The first word after the options of a build tool must be one of its
/// verifiable subcommands.
pub(super) fn check_subcommand(base: &str, program: &str, args: &[Word]) -> Result<(), Refusal> {
    let Some((_, allowed)) = SUBCOMMANDS.iter().find(|(name, _)| *name == base) else {
        return Ok(());
    };
    let mut i = 0;
    while i < args.len() && args[i].text.starts_with(['-', '+']) {
        // git's global options that take a separate value.
        if base == "git"
            && matches!(
                args[i].text.as_str(),
                "-C" | "--git-dir" | "--work-tree" | "--namespace"
            )
        {
            i += 1;
        }
        i += 1;
    }
    match args.get(i) {
        None => Ok(()),
        Some(sub) if !sub.quoted && allowed.contains(&sub.text.as_str()) => Ok(()),
        Some(sub) => Err(Refusal::DangerousOption {
            program: program.to_owned(),
            arg: sub.text.clone(),
        }),
    }
}

/// How an argument rule matches.
#[derive(Clone, Copy)]
pub(super) enum ArgRule {
    /// Exactly this word (`find -exec`).
    Exact(&'static str),
    /// Any word starting with this (`less +!cmd`).
    Prefix(&'static str),
    /// Any word containing this (`-oProxyCommand=...`).
    Contains(&'static str),
    /// A GNU long option, also abbreviated (`--to-comm`) or with `=value`.
    Long(&'static str),
    /// A short option letter, also inside a cluster (`-xvIzstd`).
    Short(char),
}

pub(super) fn rule_matches(rule: ArgRule, arg: &str) -> bool {
    match rule {
        ArgRule::Exact(word) => arg == word,
        ArgRule::Prefix(prefix) => arg.starts_with(prefix),
        ArgRule::Contains(part) => arg.to_ascii_lowercase().contains(part),
        ArgRule::Long(option) => {
            let name = arg.split('=').next().unwrap_or(arg);
            // GNU getopt accepts any unambiguous prefix of a long option.
            name.len() >= 3 && name.starts_with("--") && option.starts_with(name)
        }
        ArgRule::Short(letter) => {
            arg.starts_with('-')
                && !arg.starts_with("--")
                && arg[1..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .any(|c| c == letter)
        }
    }
}
