//! The paths a command line names must stay in the project.
//!
//! After [`super::split`] or [`super::parse`] a command's words are plain text,
//! but the shell still expands some of them before the program sees them: an
//! unquoted `~` (`~`, `~user`, `~+`, `~-`) at the start of a word or of an
//! option's value, and unquoted glob characters. A `cd` moves where relative
//! paths start. This module judges every word as the path it could become:
//! literal words through [`crate::paths::physical_path`] (symlinks followed,
//! `..` applied), globs by expanding them against the disk, tilde forms and
//! `cd` without a directory refused outright because what they expand to is
//! outside North's view. A word that could name something outside the project
//! fails the check even when nothing exists there yet: a command may create it.

use std::path::{Path, PathBuf};

use super::SimpleCommand;
use crate::paths::{is_inside, physical_path};

/// Most paths one glob may match before the command is refused as
/// unverifiable (and most directory entries scanned while expanding it).
pub const MAX_GLOB_MATCHES: usize = 2_000;
const MAX_GLOB_SCAN: usize = 20_000;
/// Most working directories a chain of `cd`s may leave possible.
const MAX_CWDS: usize = 16;

/// Where a command line runs: the project root and the directory the
/// command starts in, both canonical, the second inside the first.
#[derive(Debug, Clone, Copy)]
pub struct PathScope<'a> {
    /// The canonical project root.
    pub root: &'a Path,
    /// The canonical directory the command line starts in.
    pub cwd: &'a Path,
}

/// Why a command line's paths are not provably inside the project.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathEscape {
    /// A word names (or could create) a path outside the project.
    #[error("`{word}` names a path outside the project")]
    Outside {
        /// The word as written (after quote removal).
        word: String,
    },
    /// An unquoted `~` the shell expands to a home or working directory.
    #[error(
        "`{word}` starts with `~`, which the shell expands to a directory outside North's view"
    )]
    Tilde {
        /// The word.
        word: String,
    },
    /// `cd` with no directory (home) or `cd -` (the previous directory).
    #[error("`cd {word}` goes to a directory outside the project")]
    CdElsewhere {
        /// What followed `cd` (empty for none).
        word: String,
    },
    /// A recursive search that follows every symlink it meets (`grep -R`):
    /// a link inside the project may lead out of it.
    #[error("`{word}` follows symlinks wherever they lead; use `-r`, which does not")]
    FollowsLinks {
        /// The program and option.
        word: String,
    },
    /// A symbolic link made in a line with other commands, or in a form
    /// whose target cannot be judged from the link's own directory.
    #[error(
        "`{word}` makes a symbolic link, whose target is resolved from the link's own directory; North verifies only `ln -s TARGET LINK` alone in a line"
    )]
    Link {
        /// The `ln` command.
        word: String,
    },
    /// A glob too broad to verify, or a `cd` into a glob.
    #[error("`{word}` expands to too many paths to verify; name the files more precisely")]
    Unverifiable {
        /// The word.
        word: String,
    },
}

/// Checks every path the commands could name, in order, following `cd`s.
pub fn check_paths(commands: &[SimpleCommand], scope: PathScope<'_>) -> Result<(), PathEscape> {
    // Every directory reached so far stays possible: a `cd` that fails, or
    // runs in a pipeline's subshell, leaves the old one in place. Only the
    // command right after a `cd ... &&` knows the `cd` succeeded.
    let mut seen: Vec<PathBuf> = vec![scope.cwd.to_path_buf()];
    let mut last_cd: Option<Vec<PathBuf>> = None;
    for command in commands {
        let cwds = match (last_cd.take(), command.after) {
            (Some(reached), Some(super::Connector::And)) => reached,
            _ => seen.clone(),
        };
        if command.program == "cd" {
            let target = cd_target(command)?;
            let mut reached = Vec::new();
            for cwd in &cwds {
                let dir = cd_into(scope.root, cwd, target)?;
                if !reached.contains(&dir) {
                    reached.push(dir);
                }
            }
            for dir in &reached {
                if !seen.contains(dir) {
                    seen.push(dir.clone());
                }
            }
            if seen.len() > MAX_CWDS {
                return Err(PathEscape::Unverifiable {
                    word: format!("cd {}", target.0),
                });
            }
            last_cd = Some(reached);
            continue;
        }
        let mut link_target = None;
        if is_link_maker(command) {
            // A symbolic link's target is resolved from the link's own
            // directory when it is used, not from where `ln` ran; and a link
            // made earlier in a line changes what later words resolve to.
            if commands.len() > 1 {
                return Err(PathEscape::Link {
                    word: command.to_string(),
                });
            }
            for cwd in &cwds {
                link_target = check_link(scope.root, cwd, command)?;
            }
        }
        if let Some(option) = follows_links(command) {
            return Err(PathEscape::FollowsLinks {
                word: format!("{} {option}", command.program),
            });
        }
        // A glob is expanded by the shell before the program decides what a
        // word means: `grep *` hands it file names, so a glob is always
        // judged as the paths it could become, pattern position or not.
        let mut not_paths: Vec<usize> = non_path_operands(command)
            .into_iter()
            .filter(|i| !command.expansions.get(*i).is_some_and(|e| e.glob))
            .collect();
        // A symbolic link's target was judged from the link's directory.
        not_paths.extend(link_target);
        for (i, word) in command.args.iter().enumerate() {
            if not_paths.contains(&i) {
                continue;
            }
            let expansions = command.expansions.get(i).copied().unwrap_or_default();
            for candidate in candidates(word) {
                check_candidate(scope.root, &cwds, word, candidate, expansions)?;
            }
        }
    }
    Ok(())
}

/// Whether `command` creates links (`ln`, any form).
fn is_link_maker(command: &SimpleCommand) -> bool {
    command.program.rsplit('/').next() == Some("ln")
}

/// `ln -s TARGET LINK`: the target judged from the directory the link will
/// be in. Every other form of `ln -s` (several targets, `-t`, a directory
/// as the last operand) is refused as unverifiable.
/// Returns the index of the target word when it was judged (`None` for a
/// hard link, whose operands are ordinary paths).
fn check_link(
    root: &Path,
    cwd: &Path,
    command: &SimpleCommand,
) -> Result<Option<usize>, PathEscape> {
    let symbolic = command.args.iter().any(|a| {
        a == "--symbolic" || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains('s'))
    });
    if !symbolic {
        return Ok(None);
    }
    let unverifiable = || PathEscape::Link {
        word: command.to_string(),
    };
    let mut operands = Vec::new();
    let mut options_done = false;
    for (i, arg) in command.args.iter().enumerate() {
        if !options_done && arg == "--" {
            options_done = true;
        } else if !options_done && arg.starts_with('-') {
            let short_t = !arg.starts_with("--") && arg[1..].contains('t');
            if short_t || arg.starts_with("--target") {
                return Err(unverifiable());
            }
        } else {
            operands.push((i, arg.as_str()));
        }
    }
    let [(target_at, target), (_, link)] = operands.as_slice() else {
        return Err(unverifiable());
    };
    // The shell expands the target before `ln` sees it: `~` is the home
    // directory, and a glob could become several operands.
    let exp = command
        .expansions
        .get(*target_at)
        .copied()
        .unwrap_or_default();
    if exp.tilde && target.starts_with('~') {
        return Err(PathEscape::Tilde {
            word: (*target).to_owned(),
        });
    }
    if exp.glob && has_glob(target) {
        return Err(unverifiable());
    }
    let link_path = cwd.join(link);
    if link.ends_with('/') || link_path.is_dir() {
        return Err(unverifiable());
    }
    let link_dir = link_path.parent().unwrap_or(cwd);
    if !is_inside(root, link_dir, Path::new(target)) {
        return Err(PathEscape::Outside {
            word: (*target).to_owned(),
        });
    }
    Ok(Some(*target_at))
}

/// Programs that print their arguments and never open them.
const ECHOES: &[&str] = &["echo"];
/// Programs whose first operand is a pattern (unless `-e`/`-f` give it),
/// and whose `-e`/`--regexp` values are patterns too.
const SEARCHERS: &[&str] = &["grep", "egrep", "fgrep", "rg"];
/// Options that make a searcher take no pattern at all.
const NO_PATTERN: &[&str] = &["--files", "--type-list", "-V", "--version", "--help"];

/// Indexes of arguments that are text, not paths: every argument of
/// `echo`, and the patterns of the grep family. A pattern that merely looks
/// like a path (`grep /api src`) names nothing.
fn non_path_operands(command: &SimpleCommand) -> Vec<usize> {
    let base = command
        .program
        .rsplit('/')
        .next()
        .unwrap_or(&command.program);
    if ECHOES.contains(&base) {
        return (0..command.args.len()).collect();
    }
    if !SEARCHERS.contains(&base)
        || command
            .args
            .iter()
            .any(|a| NO_PATTERN.contains(&a.as_str()))
    {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut pattern_given = false;
    let mut after_double_dash = false;
    let mut args = command.args.iter().enumerate();
    while let Some((i, arg)) = args.next() {
        if !after_double_dash && arg == "--" {
            after_double_dash = true;
            continue;
        }
        if !after_double_dash && (arg == "-e" || arg == "--regexp") {
            if let Some((j, _)) = args.next() {
                out.push(j);
            }
            pattern_given = true;
            continue;
        }
        if !after_double_dash && arg.starts_with('-') {
            // `-e/api` and `--regexp=/api` carry the pattern glued; `-f` and
            // `--file` name a file of patterns, which stays a path.
            if (arg.starts_with("-e") && arg.len() > 2) || arg.starts_with("--regexp=") {
                out.push(i);
            }
            if arg.starts_with("-e")
                || arg.starts_with("--regexp")
                || arg.starts_with("-f")
                || arg.starts_with("--file")
            {
                pattern_given = true;
            }
            continue;
        }
        if !pattern_given {
            out.push(i);
            pattern_given = true;
        }
    }
    out
}

/// The option of a grep that makes it follow every symlink (`-R`, also in a
/// cluster like `-nR`, or `--dereference-recursive`), if any. (Other
/// programs' link-following options are refused by the program rules.)
fn follows_links(command: &SimpleCommand) -> Option<&str> {
    let base = command
        .program
        .rsplit('/')
        .next()
        .unwrap_or(&command.program);
    if !matches!(base, "grep" | "egrep" | "fgrep") {
        return None;
    }
    command
        .args
        .iter()
        .take_while(|a| a.as_str() != "--")
        .find(|a| {
            a.starts_with("--dereference-recursive")
                || (a.starts_with('-') && !a.starts_with("--") && a.contains('R'))
        })
        .map(String::as_str)
}

/// The directory operand of a `cd` and how it is written.
fn cd_target(command: &SimpleCommand) -> Result<(&str, super::Expansions), PathEscape> {
    let mut operands = command
        .args
        .iter()
        .zip(command.expansions.iter().copied())
        .skip_while(|(a, _)| a.starts_with('-') && a.as_str() != "-" && a.as_str() != "--");
    let (first, exp) = match operands.next() {
        Some((a, _)) if a == "--" => match operands.next() {
            Some((a, e)) => (a.as_str(), e),
            None => {
                return Err(PathEscape::CdElsewhere {
                    word: String::new(),
                });
            }
        },
        Some((a, e)) => (a.as_str(), e),
        None => {
            return Err(PathEscape::CdElsewhere {
                word: String::new(),
            });
        }
    };
    if first == "-" {
        return Err(PathEscape::CdElsewhere { word: "-".into() });
    }
    Ok((first, exp))
}

fn cd_into(
    root: &Path,
    cwd: &Path,
    (target, exp): (&str, super::Expansions),
) -> Result<PathBuf, PathEscape> {
    let word = || target.to_string();
    if exp.tilde && target.starts_with('~') {
        return Err(PathEscape::Tilde { word: word() });
    }
    if exp.glob && has_glob(target) {
        return Err(PathEscape::Unverifiable { word: word() });
    }
    match physical_path(cwd, Path::new(target)) {
        Ok(dir) if dir.starts_with(root) => Ok(dir),
        _ => Err(PathEscape::Outside { word: word() }),
    }
}

/// The texts in `word` that could be paths: the word itself, the value
/// after each `=` (`if=/etc/passwd`, `--output=/x`), and for a cluster of
/// short options the value glued after its letters (`-f../x`, `-I/usr`,
/// `-xvf~/x`).
fn candidates(word: &str) -> Vec<&str> {
    let mut out = vec![word];
    for (i, c) in word.char_indices() {
        if c == '=' && i + 1 < word.len() {
            out.push(&word[i + 1..]);
        }
    }
    if let Some(cluster) = word.strip_prefix('-').filter(|w| !w.starts_with('-'))
        && let Some(at) = cluster.find(|c: char| !c.is_ascii_alphanumeric())
        && at > 0
    {
        out.push(&cluster[at..]);
    }
    out.retain(|c| !c.is_empty());
    out.dedup();
    out
}

fn check_candidate(
    root: &Path,
    cwds: &[PathBuf],
    word: &str,
    candidate: &str,
    exp: super::Expansions,
) -> Result<(), PathEscape> {
    if exp.tilde && candidate.starts_with('~') {
        return Err(PathEscape::Tilde {
            word: word.to_string(),
        });
    }
    let outside = || PathEscape::Outside {
        word: word.to_string(),
    };
    for cwd in cwds {
        // Without a match the shell passes a glob on as written, so the
        // literal text is always checked too.
        if !is_inside(root, cwd, Path::new(candidate)) {
            return Err(outside());
        }
        if exp.glob && has_glob(candidate) {
            let matches = expand_glob(cwd, candidate).ok_or_else(|| PathEscape::Unverifiable {
                word: word.to_string(),
            })?;
            if matches.iter().any(|m| !is_inside(root, cwd, m)) {
                return Err(outside());
            }
            // A file named like an option (`-R`, `--files0-from=...`) would
            // reach the program as one.
            if matches.iter().any(|m| {
                m.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('-'))
            }) {
                return Err(PathEscape::Unverifiable {
                    word: word.to_string(),
                });
            }
        }
    }
    Ok(())
}

fn has_glob(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// Every path `pattern` could expand to from `base`, a superset of what the
/// shell produces (dotfiles and `.`/`..` included), or `None` when there are
/// too many to check.
fn expand_glob(base: &Path, pattern: &str) -> Option<Vec<PathBuf>> {
    let mut current: Vec<PathBuf> = vec![if pattern.starts_with('/') {
        PathBuf::from("/")
    } else {
        base.to_path_buf()
    }];
    let mut scanned = 0usize;
    for part in pattern.split('/').filter(|p| !p.is_empty()) {
        let matcher = has_glob(part)
            .then(|| {
                globset::GlobBuilder::new(part)
                    .literal_separator(true)
                    .backslash_escape(false)
                    .build()
                    .ok()
                    .map(|g| g.compile_matcher())
            })
            .flatten();
        let mut next = Vec::new();
        for dir in &current {
            let Some(matcher) = &matcher else {
                // A literal component (or a pattern the shell would also
                // take literally).
                next.push(dir.join(part));
                continue;
            };
            for special in [".", ".."] {
                if matcher.is_match(special) {
                    next.push(dir.join(special));
                }
            }
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                scanned += 1;
                if scanned > MAX_GLOB_SCAN {
                    return None;
                }
                if matcher.is_match(entry.file_name()) {
                    next.push(dir.join(entry.file_name()));
                }
            }
        }
        if next.len() > MAX_GLOB_MATCHES {
            return None;
        }
        current = next;
    }
    Some(current)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn option_values_are_candidates() {
        assert_eq!(candidates("-f../x"), ["-f../x", "../x"]);
        assert_eq!(candidates("-xvf/etc/x"), ["-xvf/etc/x", "/etc/x"]);
        assert_eq!(candidates("--ignore=src/a"), ["--ignore=src/a", "src/a"]);
        assert_eq!(candidates("--file=/etc/x"), ["--file=/etc/x", "/etc/x"]);
        assert_eq!(
            candidates("if=/etc/passwd"),
            ["if=/etc/passwd", "/etc/passwd"]
        );
        assert_eq!(candidates("HEAD~1"), ["HEAD~1"]);
    }

    fn command(line: &str) -> SimpleCommand {
        super::super::split(line).unwrap().remove(0)
    }

    #[test]
    fn only_search_patterns_and_echo_arguments_are_not_paths() {
        assert_eq!(non_path_operands(&command("grep -c /api src")), [1]);
        assert_eq!(
            non_path_operands(&command("grep -e /api -e /b src")),
            [1, 3]
        );
        assert_eq!(
            non_path_operands(&command("grep -f /etc/pats src")),
            Vec::<usize>::new()
        );
        assert_eq!(
            non_path_operands(&command("rg --files /etc")),
            Vec::<usize>::new()
        );
        assert_eq!(non_path_operands(&command("echo /etc/passwd")), [0]);
        assert_eq!(non_path_operands(&command("cat /api")), Vec::<usize>::new());
    }
}
