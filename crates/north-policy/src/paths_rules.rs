//! Path rules of the user's (Claude Code's `Read(…)` and `Edit(…)` in
//! `.claude/settings.json`): files North's read tools may not open, files
//! its edits may not touch, and files edits to which apply without asking.
//! Patterns are globs relative to the project root.

use globset::{Glob, GlobMatcher};

/// One rule: as written, and its matcher.
#[derive(Debug, Clone)]
struct Rule {
    written: String,
    matcher: GlobMatcher,
}

/// The path rules.
#[derive(Debug, Clone, Default)]
pub struct PathRules {
    read_deny: Vec<Rule>,
    edit_deny: Vec<Rule>,
    edit_allow: Vec<Rule>,
}

fn compile(patterns: &[String]) -> Vec<Rule> {
    patterns
        .iter()
        .filter_map(|p| {
            let glob = Glob::new(p.trim_start_matches("./")).ok()?;
            Some(Rule {
                written: p.clone(),
                matcher: glob.compile_matcher(),
            })
        })
        .collect()
}

/// `path` as the rules see it: relative to the root, without `./`.
fn relative<'a>(root: &std::path::Path, path: &'a str) -> std::borrow::Cow<'a, str> {
    let p = std::path::Path::new(path);
    match p.strip_prefix(root) {
        Ok(rel) => std::borrow::Cow::Owned(rel.to_string_lossy().into_owned()),
        Err(_) => std::borrow::Cow::Borrowed(path.trim_start_matches("./")),
    }
}

impl PathRules {
    /// Rules from project-relative globs (`secrets/**`, `.env`); a pattern
    /// that is not a glob is left out (the configuration says so).
    pub fn new(read_deny: &[String], edit_deny: &[String], edit_allow: &[String]) -> PathRules {
        PathRules {
            read_deny: compile(read_deny),
            edit_deny: compile(edit_deny),
            edit_allow: compile(edit_allow),
        }
    }

    fn find<'a>(rules: &'a [Rule], root: &std::path::Path, path: &str) -> Option<&'a str> {
        let rel = relative(root, path);
        rules
            .iter()
            .find(|r| {
                r.matcher.is_match(rel.as_ref())
                    // A directory a rule covers everything under.
                    || rel
                        .split('/')
                        .scan(String::new(), |acc, part| {
                            if !acc.is_empty() {
                                acc.push('/');
                            }
                            acc.push_str(part);
                            Some(acc.clone())
                        })
                        .any(|prefix| r.matcher.is_match(format!("{prefix}/x")) && r.written.ends_with("/**"))
            })
            .map(|r| r.written.as_str())
    }

    /// The rule that keeps North's read tools from `path`, if any.
    pub fn read_denied(&self, root: &std::path::Path, path: &str) -> Option<&str> {
        Self::find(&self.read_deny, root, path)
    }

    /// Why a read tool called with `args` may not run (its `path`, or the
    /// directory it searches, is under a rule), as the model is told.
    pub fn read_refusal(&self, root: &std::path::Path, args: &serde_json::Value) -> Option<String> {
        let path = ["path", "file_path", "dir"]
            .iter()
            .find_map(|k| args.get(*k).and_then(serde_json::Value::as_str))?;
        let rule = self.read_denied(root, path)?;
        Some(format!(
            "not read: your rule `Read({rule})` keeps North from `{path}`"
        ))
    }

    /// Takes out of a read tool's `output` every entry that names a file
    /// under a rule (a search that started above it); how many.
    pub fn filter_reads(&self, root: &std::path::Path, output: &mut serde_json::Value) -> usize {
        use serde_json::Value;
        if self.read_deny.is_empty() {
            return 0;
        }
        let mut removed = 0;
        match output {
            Value::Array(items) => {
                let before = items.len();
                items.retain(|item| {
                    let named = match item {
                        Value::String(p) => Some(p.as_str()),
                        Value::Object(o) => ["path", "file"]
                            .iter()
                            .find_map(|k| o.get(*k).and_then(Value::as_str)),
                        _ => None,
                    };
                    named.is_none_or(|p| self.read_denied(root, p).is_none())
                });
                removed += before - items.len();
                for item in items.iter_mut() {
                    removed += self.filter_reads(root, item);
                }
            }
            Value::Object(map) => {
                for v in map.values_mut() {
                    removed += self.filter_reads(root, v);
                }
            }
            _ => {}
        }
        removed
    }

    /// The rule that keeps edits from `path`, if any.
    pub fn edit_denied(&self, root: &std::path::Path, path: &str) -> Option<&str> {
        Self::find(&self.edit_deny, root, path)
    }

    /// Whether edits to every one of `paths` apply without asking.
    pub fn edits_allowed(&self, root: &std::path::Path, paths: &[String]) -> bool {
        !paths.is_empty()
            && paths
                .iter()
                .all(|p| Self::find(&self.edit_allow, root, p).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn globs_match_project_paths_in_every_spelling() {
        let rules = PathRules::new(
            &["./secrets/**".into(), ".env".into()],
            &["Cargo.lock".into()],
            &["docs/**".into()],
        );
        let root = Path::new("/p");
        for denied in [
            "secrets/key.pem",
            "./secrets/a/b",
            "/p/secrets/x",
            ".env",
            "secrets",
        ] {
            assert!(rules.read_denied(root, denied).is_some(), "{denied}");
        }
        for fine in ["src/main.rs", "secretsx/a", "a/.envrc"] {
            assert!(rules.read_denied(root, fine).is_none(), "{fine}");
        }
        assert_eq!(rules.edit_denied(root, "Cargo.lock"), Some("Cargo.lock"));
        assert!(rules.edits_allowed(root, &["docs/a.md".into(), "docs/b/c.md".into()]));
        assert!(!rules.edits_allowed(root, &["docs/a.md".into(), "src/x.rs".into()]));
        assert!(!rules.edits_allowed(root, &[]));
        let mut found = serde_json::json!({"matches": [
            {"path": "secrets/key.pem", "line": 1},
            {"path": "src/a.rs", "line": 2}
        ], "files": ["secrets/b", "README.md"]});
        assert_eq!(rules.filter_reads(root, &mut found), 2);
        assert_eq!(found["matches"].as_array().unwrap().len(), 1);
        assert_eq!(found["files"], serde_json::json!(["README.md"]));
        assert!(
            rules
                .read_refusal(root, &serde_json::json!({"path": "secrets/x"}))
                .unwrap()
                .contains("Read(./secrets/**)")
        );
    }
}
