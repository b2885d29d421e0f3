//! A property of the one command policy, checked by running what it lets
//! through: for generated command lines that blanket approval (`--yes`)
//! would run unasked, bash running them with *instrumented* programs —
//! each logs the program and every path it is handed, resolved at the
//! moment it runs (after links made earlier in the line exist), then does
//! the real work — touches no path outside the project and runs no program
//! outside the approved set. Lines mix ordinary work with the escapes the
//! security review used: links made mid-line, `cd` chains, `..`, absolute
//! paths, tilde, globs, a link already pointing out, program paths.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use north_policy::{AllowRules, ShellPolicy, Verdict};
use north_test_support::corpus::Layout;
use proptest::prelude::*;

/// The programs the instrumented `PATH` holds, each a logging wrapper of
/// the real one. Anything else a line names is "not found" and logged.
const PROGRAMS: &[&str] = &[
    "ls", "cat", "head", "wc", "grep", "mkdir", "touch", "cp", "mv", "rm", "ln", "echo", "sort",
    "find", "stat",
];

/// Words a generated command may take: ordinary paths and every escape.
const WORDS: &[&str] = &[
    "src",
    "src/a.rs",
    "README.md",
    "a",
    "a/b",
    "a/b/c",
    "x.txt",
    "sub/y.txt",
    "..",
    "../..",
    "../../..",
    "../outside/secret.txt",
    "up",
    "up/outside/secret.txt",
    "link.txt",
    "/etc/hostname",
    "~/.ssh/id_rsa",
    "~",
    "src/*",
    "*",
    "./t.sh",
    "-p",
    "-f",
    "-r",
    "-s",
];

fn word() -> impl Strategy<Value = String> {
    prop::sample::select(WORDS).prop_map(str::to_owned)
}

fn simple() -> impl Strategy<Value = String> {
    let program = prop::sample::select(&["cd", "./t.sh", "ln -s"][..])
        .prop_map(str::to_owned)
        .boxed()
        .prop_union(
            prop::sample::select(PROGRAMS)
                .prop_map(str::to_owned)
                .boxed(),
        );
    (program, prop::collection::vec(word(), 0..3)).prop_map(|(p, args)| {
        let mut line = p;
        for a in args {
            line.push(' ');
            line.push_str(&a);
        }
        line
    })
}

fn line() -> impl Strategy<Value = String> {
    (
        simple(),
        prop::collection::vec(
            (prop::sample::select(&[" && ", " ; ", " | "][..]), simple()),
            0..3,
        ),
    )
        .prop_map(|(first, rest)| {
            let mut line = first;
            for (joint, cmd) in rest {
                line.push_str(joint);
                line.push_str(&cmd);
            }
            line
        })
}

/// The instrumented programs: log `EXEC name` and each non-option argument
/// resolved from the current directory (`realpath -m`, links followed as
/// they are now; a link that leads into itself, `ln -s a/b a`, can keep
/// `realpath -m` busy forever, so it gets 5 s and then the path as written),
/// then run the real program. `grep`'s first operand is a
/// pattern and `echo` prints text: neither names a path.
fn instrument(bin: &Path, log: &Path) {
    std::fs::create_dir_all(bin).unwrap();
    let realpath = which("realpath");
    for name in PROGRAMS {
        let real = which(name);
        let skip_first = matches!(*name, "grep");
        if *name == "ln" {
            // A symbolic link's target text names nothing until the link is
            // used: what counts is where the made link leads.
            let script = format!(
                r#"#!/bin/bash
echo "EXEC ln" >> {log}
{real} "$@"; rc=$?
if [ $# -gt 0 ]; then
  last="${{@: -1}}"
  echo "PATH $(timeout 5 {realpath} -m -- "$last" 2>/dev/null || {realpath} -ms -- "$last")" >> {log}
fi
exit $rc
"#,
                log = log.display(),
                real = real.display(),
                realpath = realpath.display(),
            );
            write_program(&bin.join(name), &script);
            continue;
        }
        let script = format!(
            r#"#!/bin/bash
log={log}
echo "EXEC {name}" >> "$log"
skip={skip}
seen=0
for a in "$@"; do
  case "$a" in -*) continue ;; esac
  if [ "$skip" = 1 ] && [ "$seen" = 0 ]; then seen=1; continue; fi
  {no_paths}echo "PATH $(timeout 5 {realpath} -m -- "$a" 2>/dev/null || {realpath} -ms -- "$a")" >> "$log"
done
exec {real} "$@"
"#,
            log = log.display(),
            skip = u8::from(skip_first),
            no_paths = if *name == "echo" { ": " } else { "" },
            realpath = realpath.display(),
            real = real.display(),
        );
        write_program(&bin.join(name), &script);
    }
}

fn write_program(path: &Path, script: &str) {
    std::fs::write(path, script).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

fn which(name: &str) -> PathBuf {
    for dir in ["/usr/bin", "/bin", "/usr/local/bin"] {
        let p = Path::new(dir).join(name);
        if p.exists() {
            return p;
        }
    }
    panic!("{name} not found")
}

/// Runs `line` with the instrumented programs; returns the log.
fn run(layout: &Layout, bin: &Path, log: &Path, line: &str) -> String {
    let _ = std::fs::remove_file(log);
    let script = format!(
        "command_not_found_handle() {{ echo \"NOTFOUND $1\" >> {log}; return 127; }}\n{line}\n",
        log = log.display()
    );
    let _ = Command::new(which("bash"))
        .args(["--noprofile", "--norc", "-c", &script])
        .current_dir(layout.project())
        .env_clear()
        .env("PATH", bin)
        .env("HOME", layout.home())
        .output()
        .unwrap();
    std::fs::read_to_string(log).unwrap_or_default()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 160,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn lines_the_policy_verifies_stay_in_the_project_and_run_only_known_programs(line in line()) {
        let layout = Layout::new();
        let root = layout.project();
        std::fs::write(root.join("t.sh"), format!("#!/bin/sh\necho RAN >> {}\n", layout.dir.path().join("ran.log").display())).unwrap();
        std::fs::set_permissions(root.join("t.sh"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let policy = ShellPolicy::assistant(&root, AllowRules::default(), true);
        let verdict = policy.decide(&line, None);
        if let Verdict::Allow(_) = verdict {
            let bin = layout.dir.path().join("bin");
            let log = layout.dir.path().join("exec.log");
            instrument(&bin, &log);
            let logged = run(&layout, &bin, &log, &line);
            for entry in logged.lines() {
                if let Some(path) = entry.strip_prefix("PATH ") {
                    prop_assert!(
                        Path::new(path).starts_with(&root),
                        "`{line}` touched {path} outside the project\n{logged}"
                    );
                }
                prop_assert!(!entry.starts_with("NOTFOUND"), "`{line}` ran an unknown program\n{logged}");
                if let Some(program) = entry.strip_prefix("EXEC ") {
                    prop_assert!(PROGRAMS.contains(&program), "`{line}`: {program}");
                }
            }
            prop_assert!(
                !layout.dir.path().join("ran.log").exists(),
                "`{line}` ran a project script"
            );
        }
    }
}
