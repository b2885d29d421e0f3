//! What a parsed simple command may be: keywords, builtins and programs
//! that run other programs are refused, and so are options that make an
//! allowed program run commands or write files.

use super::known::{ArgRule, CONFIG_OPTIONS, KNOWN_PROGRAMS, check_subcommand, rule_matches};
use super::lex::Word;
use super::{Expansions, Refusal, SimpleCommand};

/// Shell keywords and builtins that evaluate their arguments as code,
/// arithmetic or variable names (`let 'a[$(cmd)]'` runs `cmd`), or change the
/// shell's state for later commands.
#[rustfmt::skip]
const SHELL_BUILTINS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "time", "coproc", "eval", "exec", "source", ".", "command",
    "builtin", "trap", "alias", "unalias", "set", "shopt", "enable", "declare", "typeset",
    "local", "readonly", "export", "unset", "let", "read", "readarray", "mapfile", "test",
    "printf", "wait", "shift", "exit", "return", "logout", "ulimit", "umask", "getopts", "hash",
    "fc", "history", "bind", "complete", "compgen", "compopt", "caller", "fg", "bg", "disown",
    "suspend", "jobs", "pushd", "popd", "dirs", "times", "autoload", "emulate", "zmodload",
    "noglob", "nocorrect",
];

/// Programs that run other programs, shells and interpreters of code given
/// as arguments: allowing them by name would allow anything.
#[rustfmt::skip]
const INDIRECTION: &[&str] = &[
    // shells
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "pdksh", "ash", "csh", "tcsh", "fish", "elvish",
    "nu", "xonsh", "busybox", "toybox", "rbash",
    // command runners
    "env", "xargs", "nohup", "nice", "renice", "ionice", "timeout", "stdbuf", "unbuffer",
    "setsid", "setpriv", "sudo", "doas", "su", "runuser", "pkexec", "chroot", "unshare",
    "nsenter", "flock", "watch", "script", "expect", "parallel", "taskset", "chrt", "prlimit",
    "systemd-run", "strace", "ltrace", "gdb", "lldb", "valgrind", "perf", "time", "at", "batch",
    "crontab", "screen", "tmux", "ssh", "rsh", "firejail", "bwrap", "proot", "fakeroot",
    "faketime", "catchsegv", "eatmydata", "torsocks", "proxychains", "proxychains4",
    "dbus-run-session", "xdg-open", "open", "start-stop-daemon", "daemonize",
    // interpreters that take code as an argument
    "awk", "gawk", "mawk", "nawk", "sed", "gsed", "perl", "python", "python2", "python3",
    "ruby", "node", "nodejs", "deno", "bun", "php", "lua", "luajit", "tclsh", "wish", "R",
    "Rscript", "julia", "osascript", "jshell", "groovy", "scala", "guile", "racket", "sbcl",
    "clisp", "ghci", "runghc", "pwsh", "powershell", "vim", "vi", "nvim", "emacs", "ed", "ex",
    "m4", "make", "gmake", "bc", "dc", "jq", "yq", "gdb-multiarch",
];

/// Options that make an otherwise harmless program run commands, write
/// files it was not asked to, or follow symlinks wherever they lead (a link
/// inside the project may point out of it).
pub(super) const ARG_RULES: &[(&str, &[ArgRule])] = {
    use ArgRule::*;
    &[
        (
            "find",
            &[
                Exact("-exec"),
                Exact("-execdir"),
                Exact("-ok"),
                Exact("-okdir"),
                Exact("-delete"),
                Exact("-fprint"),
                Exact("-fprint0"),
                Exact("-fprintf"),
                Exact("-fls"),
                Exact("-L"),
                Exact("-H"),
                Exact("-follow"),
            ],
        ),
        ("du", &[Short('L'), Long("--dereference")]),
        (
            "cp",
            &[
                Short('L'),
                Short('H'),
                Short('s'),
                Long("--dereference"),
                Long("--symbolic-link"),
            ],
        ),
        (
            "cargo",
            &[
                Long("--config"),
                Prefix("-Z"),
                Long("--manifest-path"),
                Long("--target-dir"),
                Long("--config-path"),
            ],
        ),
        (
            "go",
            &[
                Prefix("-exec"),
                Prefix("-toolexec"),
                Prefix("-overlay"),
                Prefix("-modfile"),
            ],
        ),
        (
            "npm",
            &[
                Exact("-c"),
                Long("--call"),
                Long("--script-shell"),
                Long("--node-options"),
                Long("--userconfig"),
                Long("--globalconfig"),
                Prefix("--prefix"),
            ],
        ),
        (
            "pnpm",
            &[Exact("-c"), Long("--script-shell"), Long("--node-options")],
        ),
        ("yarn", &[Long("--script-shell"), Long("--node-options")]),
        (
            "git",
            &[
                Exact("-c"),
                Long("--config-env"),
                Long("--exec-path"),
                Long("--upload-pack"),
                Long("--receive-pack"),
                Long("--exec"),
                Long("--open-files-in-pager"),
                Short('O'),
                Long("--ext-diff"),
                Long("--textconv"),
                Long("--output"),
                Long("--template"),
                Long("--extcmd"),
                Long("--tool"),
                // Transports that run commands (`ext::sh -c ...`) or ssh options.
                Prefix("ext::"),
                Contains("proxycommand"),
            ],
        ),
        (
            "tar",
            &[
                Long("--to-command"),
                Long("--checkpoint-action"),
                Long("--use-compress-program"),
                Long("--rsh-command"),
                Long("--info-script"),
                Long("--new-volume-script"),
                Short('I'),
                Short('F'),
                Short('h'),
                Long("--dereference"),
            ],
        ),
        (
            "rsync",
            &[
                Long("--rsh"),
                Long("--rsync-path"),
                Short('e'),
                Short('L'),
                Long("--copy-links"),
                Long("--copy-unsafe-links"),
                Contains("proxycommand"),
            ],
        ),
        (
            "sort",
            &[Long("--compress-program"), Long("--output"), Short('o')],
        ),
        (
            "rg",
            &[
                Long("--pre"),
                Long("--pre-glob"),
                Short('L'),
                Long("--follow"),
            ],
        ),
        (
            "fd",
            &[Long("--exec"), Long("--exec-batch"), Short('x'), Short('X')],
        ),
        (
            "fdfind",
            &[Long("--exec"), Long("--exec-batch"), Short('x'), Short('X')],
        ),
        (
            "man",
            &[Long("--pager"), Long("--html"), Short('P'), Short('H')],
        ),
        ("zip", &[Long("--unzip-command"), Exact("-TT")]),
        ("less", &[Prefix("+"), Long("--lesskey-src")]),
        ("more", &[Prefix("+")]),
    ]
};

/// Git subcommands that run configured or given programs, or rewrite config.
const GIT_SUBCOMMANDS_REFUSED: &[&str] = &[
    "config",
    "submodule",
    "bisect",
    "filter-branch",
    "difftool",
    "mergetool",
    "instaweb",
    "web--browse",
    "send-email",
    "daemon",
    "credential",
    "credential-store",
    "credential-cache",
    "alias",
    "hook",
    "run-command",
    "shell",
    "upload-pack",
    "receive-pack",
];

/// Git subcommands where `-x` / `-u` carry a command (`rebase -x`, `clone -u`).
const GIT_SHORT_EXEC: &[(&str, char)] = &[
    ("rebase", 'x'),
    ("clone", 'u'),
    ("fetch", 'u'),
    ("pull", 'u'),
    ("ls-remote", 'u'),
    ("archive", 'o'),
];

/// Which programs a segment may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Programs {
    /// Only the programs the policy understands ([`KNOWN_PROGRAMS`]).
    Known,
    /// Any program that does not run others: a caller's own allowlist
    /// (the mesh's `policy.json`) decides which.
    Listed,
}

pub(super) fn check_segment(
    words: Vec<Word>,
    programs: Programs,
) -> Result<SimpleCommand, Refusal> {
    let mut iter = words.into_iter();
    let Some(first) = iter.next() else {
        return Err(Refusal::Empty);
    };
    let name = first.text.clone();
    let name_refusal = |why| Refusal::CommandName {
        word: name.clone(),
        why,
    };
    if first.quoted {
        return Err(name_refusal("quoted command names are not checked"));
    }
    if first.equals {
        return Err(name_refusal("environment assignments are not allowed"));
    }
    if first.glob {
        return Err(name_refusal(
            "glob patterns in command names are not allowed",
        ));
    }
    if first.tilde {
        return Err(name_refusal(
            "tilde expansion in command names is not allowed",
        ));
    }
    if name.starts_with('-') {
        return Err(name_refusal("a command name cannot start with `-`"));
    }
    if name.contains('/') {
        return Err(name_refusal(
            "a path to a program runs whatever that file is; only programs North knows by name are verifiable",
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_./+-".contains(c))
    {
        return Err(name_refusal("unexpected characters in a command name"));
    }
    let base = name.rsplit('/').next().unwrap_or(&name);
    if base.is_empty() || base == "." || base == ".." {
        return Err(name_refusal("not a program name"));
    }
    if SHELL_BUILTINS.contains(&name.as_str()) {
        return Err(Refusal::Indirection {
            program: name.clone(),
        });
    }
    if INDIRECTION.contains(&base) || is_versioned_interpreter(base) {
        return Err(Refusal::Indirection {
            program: name.clone(),
        });
    }
    if programs == Programs::Known && !KNOWN_PROGRAMS.contains(&base) {
        return Err(Refusal::UnknownProgram {
            program: name.clone(),
        });
    }
    let rest: Vec<Word> = iter.collect();
    check_arguments(base, &name, &rest)?;
    check_subcommand(base, &name, &rest)?;
    Ok(simple_command(name, rest))
}

/// The command `program` with argument words `rest`, quotes removed and
/// their expansions noted.
pub(super) fn simple_command(program: String, rest: Vec<Word>) -> SimpleCommand {
    let expansions = rest
        .iter()
        .map(|w| Expansions {
            glob: w.glob,
            tilde: w.tilde,
        })
        .collect();
    SimpleCommand {
        program,
        args: rest.into_iter().map(|w| w.text).collect(),
        expansions,
        after: None,
    }
}

/// `python3.12`, `perl5.36`, `ruby3.1`, `node18`: versioned interpreter names.
fn is_versioned_interpreter(base: &str) -> bool {
    const STEMS: &[&str] = &[
        "python", "perl", "ruby", "node", "php", "lua", "pypy", "bash", "zsh",
    ];
    STEMS.iter().any(|stem| {
        base.strip_prefix(stem)
            .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    })
}

fn check_arguments(base: &str, program: &str, args: &[Word]) -> Result<(), Refusal> {
    let rules = ARG_RULES
        .iter()
        .find(|(name, _)| *name == base)
        .map(|(_, rules)| *rules);
    let Some(rules) = rules else {
        return Ok(());
    };
    let dangerous = |arg: &str| Refusal::DangerousOption {
        program: program.to_owned(),
        arg: arg.to_owned(),
    };
    for word in args {
        // A glob could expand to a file named `-exec` or `--upload-pack=...`.
        if word.glob {
            return Err(Refusal::GlobInSensitiveArgs {
                program: program.to_owned(),
                arg: word.text.clone(),
            });
        }
        if rules.iter().any(|rule| rule_matches(*rule, &word.text)) {
            return Err(dangerous(&word.text));
        }
    }
    if base == "tar" {
        // Old-style `tar cIf ...`: the first argument is an option cluster.
        if let Some(first) = args.first()
            && !first.text.starts_with('-')
            && first.text.chars().any(|c| c == 'I' || c == 'F')
        {
            return Err(dangerous(&first.text));
        }
    }
    if base == "git" {
        check_git(program, args)?;
    }
    Ok(())
}

fn check_git(program: &str, args: &[Word]) -> Result<(), Refusal> {
    // Global options that take a separate value come before the subcommand.
    let mut i = 0;
    while i < args.len() && args[i].text.starts_with('-') {
        if matches!(
            args[i].text.as_str(),
            "-C" | "--git-dir" | "--work-tree" | "--namespace"
        ) {
            i += 1;
        }
        i += 1;
    }
    let Some(sub) = args.get(i) else {
        return Ok(());
    };
    let sub = sub.text.as_str();
    if GIT_SUBCOMMANDS_REFUSED.contains(&sub) {
        return Err(Refusal::DangerousOption {
            program: program.to_owned(),
            arg: sub.to_owned(),
        });
    }
    for (name, letter) in GIT_SHORT_EXEC {
        if *name == sub
            && let Some(arg) = args[i + 1..]
                .iter()
                .find(|w| rule_matches(ArgRule::Short(*letter), &w.text))
        {
            return Err(Refusal::DangerousOption {
                program: program.to_owned(),
                arg: arg.text.clone(),
            });
        }
    }
    Ok(())
}

/// Why the words after a prefix rule's own words cannot ride on it: an
/// option that runs a program or reads configuration that can (`--config`,
/// `-c`, `--script-shell`), or one the program's own rules refuse.
pub(super) fn stretch_refusal(command: &SimpleCommand, rule_words: usize) -> Option<Refusal> {
    let base = command
        .program
        .rsplit('/')
        .next()
        .unwrap_or(&command.program);
    let own = ARG_RULES
        .iter()
        .find(|(name, _)| *name == base)
        .map_or(&[][..], |(_, rules)| *rules);
    let skip = rule_words.saturating_sub(1);
    command.args.iter().skip(skip).find_map(|arg| {
        CONFIG_OPTIONS
            .iter()
            .chain(own.iter())
            .any(|rule| rule_matches(*rule, arg))
            .then(|| Refusal::DangerousOption {
                program: command.program.clone(),
                arg: arg.clone(),
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_option_abbreviations_match() {
        assert!(rule_matches(ArgRule::Long("--to-command"), "--to-comm=sh"));
        assert!(rule_matches(ArgRule::Long("--to-command"), "--to"));
        assert!(!rule_matches(ArgRule::Long("--to-command"), "--"));
        assert!(!rule_matches(ArgRule::Long("--to-command"), "--verbose"));
        assert!(rule_matches(ArgRule::Short('I'), "-cvIzstd"));
        assert!(!rule_matches(ArgRule::Short('I'), "-cvf"));
    }

    #[test]
    fn versioned_interpreters_are_recognised() {
        assert!(is_versioned_interpreter("python3.12"));
        assert!(is_versioned_interpreter("node18"));
        assert!(!is_versioned_interpreter("python-config"));
        assert!(!is_versioned_interpreter("ls"));
    }
}
