//! Which verified command lines only read: the program, its subcommand and
//! its options do nothing but read files and print (`ls`, `cat`, `grep`,
//! `git status`, `wc`, `seq`, …). Such a line runs without asking — in a
//! sandbox where the project is read-only and there is no network, so this
//! list is a convenience, never the boundary.

use super::SimpleCommand;

/// Programs that only read their arguments and print.
#[rustfmt::skip]
const READ_ONLY_PROGRAMS: &[&str] = &[
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "fd", "fdfind", "find",
    "tree", "stat", "file", "du", "df", "nl", "tac", "rev", "od", "hexdump", "strings", "cmp",
    "diff", "comm", "echo", "sort", "cut", "tr", "column", "fold", "fmt", "paste", "join",
    "expand", "unexpand", "md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum", "b2sum",
    "seq", "pwd", "true", "false", "date", "which", "whoami", "id", "uname", "basename",
    "dirname", "realpath", "readlink", "nproc",
];

/// Git's subcommands that only read the repository.
#[rustfmt::skip]
const READ_ONLY_GIT: &[&str] = &[
    "status", "log", "diff", "show", "rev-parse", "ls-files", "blame", "grep", "shortlog",
    "describe", "merge-base", "cat-file", "version", "help",
];

/// Options that make an otherwise reading program write or run something
/// (`sort -o FILE`, `find -delete`, `fd -x`, `git diff --output=FILE`).
#[rustfmt::skip]
const WRITING_OPTIONS: &[&str] = &[
    "-o", "--output", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls", "-exec", "-execdir",
    "-ok", "-okdir", "-x", "--exec", "-X", "--exec-batch", "--pre", "-O",
];

/// Whether every command of `commands` (a line the policy parsed and
/// verified) only reads.
pub fn read_only(commands: &[SimpleCommand]) -> bool {
    !commands.is_empty() && commands.iter().all(reads_only)
}

fn reads_only(command: &SimpleCommand) -> bool {
    let writes = |arg: &String| {
        WRITING_OPTIONS
            .iter()
            .any(|o| arg == o || (o.starts_with("--") && arg.starts_with(&format!("{o}="))))
            || (arg.starts_with("-o") && arg.len() > 2 && !arg.starts_with("--"))
    };
    if command.args.iter().any(writes) {
        return false;
    }
    match command.program.as_str() {
        "git" => command
            .args
            .first()
            .is_some_and(|sub| READ_ONLY_GIT.contains(&sub.as_str())),
        program => READ_ONLY_PROGRAMS.contains(&program),
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::read_only;

    /// As the policy judges: only a line it parses can be read-only.
    fn judged(line: &str) -> bool {
        parse(line).is_ok_and(|c| read_only(&c))
    }

    #[test]
    fn reading_lines_are_read_only_and_writing_ones_are_not() {
        for line in [
            "ls",
            "ls -la src",
            "cat README.md | grep -n North | wc -l",
            "git status",
            "git log --oneline -5",
            "git diff HEAD~1",
            "seq 1 5000",
            "find . -name '*.rs'",
            "sort src/a.rs",
        ] {
            assert!(judged(line), "{line}");
        }
        for line in [
            "touch x",
            "rm -rf src",
            "mkdir out",
            "git commit -m x",
            "git checkout -- .",
            "git branch new",
            "sort -o out.txt src/a.rs",
            "sort -oout.txt src/a.rs",
            "find . -delete",
            "git diff --output=patch.txt",
            "ls; touch x",
            "cargo test",
        ] {
            assert!(!judged(line), "{line}");
        }
    }
}
