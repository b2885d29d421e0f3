//! The workspace's shape, kept true by a test: no import circles between
//! the modules of a crate (at every level: a module's children form no
//! circle either), no source file past 1,000 lines (600 warns), one spawner and one
//! place sessions are assembled. Crate boundaries are in `boundaries`.
//!
//! Imports are read as text: `use crate::…`, `use super::…`, `use
//! self::…` trees and inline `crate::a::b` / `super::a` paths. That is
//! enough for this codebase, which does not hide imports in macros.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub(crate) fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub(crate) fn crates() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").exists())
        .collect();
    out.sort();
    out
}

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// Module path of a source file (`src/a/b.rs` and `src/a/b/mod.rs` → a::b).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("lib" | "main" | "mod")
    ) {
        parts.pop();
    }
    parts
}

/// Expands a use tree (`a::{b, c::{d, e}}`) into paths.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree);
        return vec![path.trim().to_string()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut depth, mut current, mut parts) = (0, String::new(), Vec::new());
    for c in inner.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    parts.push(current);
    parts
        .iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| expand(p))
        .map(|p| format!("{prefix}{p}"))
        .collect()
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every module path a file refers to, unresolved (`crate::…`, `super::…`).
fn references(text: &str) -> Vec<String> {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("use ") {
        let before_ok = i == 0 || !is_ident(rest[..i].chars().last().unwrap_or(' '));
        let after = &rest[i + 4..];
        let end = after.find(';').unwrap_or(after.len());
        let tree = after[..end].trim();
        if before_ok
            && ["crate", "super", "self"]
                .iter()
                .any(|root| tree.starts_with(root))
        {
            out.extend(expand(tree));
        }
        rest = &after[end.min(after.len())..];
    }
    for root in ["crate::", "super::"] {
        let mut at = 0;
        while let Some(i) = code[at..].find(root) {
            let start = at + i;
            let boundary = start == 0 || !is_ident(code[..start].chars().last().unwrap_or(' '));
            let path: String = code[start..]
                .chars()
                .take_while(|c| is_ident(*c) || *c == ':')
                .collect();
            if boundary {
                out.push(path.trim_end_matches(':').to_string());
            }
            at = start + root.len();
        }
    }
    out
}

fn resolve(path: &str, here: &[String]) -> Vec<String> {
    let parts: Vec<&str> = path
        .split("::")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let (mut out, mut rest): (Vec<String>, &[&str]) = match parts.first() {
        Some(&"crate") => (Vec::new(), &parts[1..]),
        _ => (here.to_vec(), &parts[..]),
    };
    while let Some(first) = rest.first() {
        match *first {
            "super" => {
                out.pop();
            }
            "self" => {}
            _ => break,
        }
        rest = &rest[1..];
    }
    out.extend(rest.iter().map(|s| s.to_string()));
    out
}

/// Circles among sibling modules, per parent, as "parent: a -> b -> a".
fn circles(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| (module_of(src, f), f.clone()))
        .collect();
    let mut edges: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file).unwrap();
        for reference in references(&text) {
            let target = resolve(&reference, module);
            let known = (0..=target.len())
                .rev()
                .map(|k| target[..k].to_vec())
                .find(|prefix| modules.contains_key(prefix))
                .unwrap_or_default();
            let common = module
                .iter()
                .zip(&known)
                .take_while(|(a, b)| a == b)
                .count();
            if common < module.len() && common < known.len() {
                edges
                    .entry(module[..common].to_vec())
                    .or_default()
                    .entry(module[common].clone())
                    .or_default()
                    .insert(known[common].clone());
            }
        }
    }
    let mut found = Vec::new();
    for (parent, graph) in &edges {
        for start in graph.keys() {
            // A path from `start` back to itself through siblings.
            let mut stack = vec![(start.clone(), vec![start.clone()])];
            let mut seen = BTreeSet::new();
            while let Some((node, path)) = stack.pop() {
                for next in graph.get(&node).into_iter().flatten() {
                    if next == start {
                        let mut cycle = path.clone();
                        cycle.push(start.clone());
                        found.push(format!("{}: {}", parent.join("::"), cycle.join(" -> ")));
                    } else if seen.insert(next.clone()) {
                        let mut longer = path.clone();
                        longer.push(next.clone());
                        stack.push((next.clone(), longer));
                    }
                }
            }
        }
    }
    found
}

#[test]
fn no_crate_has_an_import_circle() {
    let mut all = Vec::new();
    for krate in crates() {
        for circle in circles(&krate.join("src")) {
            all.push(format!("{}: {circle}", krate.display()));
        }
    }
    assert!(
        all.is_empty(),
        "import circles (move the shared items to a module both can use):\n{}",
        all.join("\n")
    );
}

#[test]
fn the_circle_check_sees_a_circle() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("b")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::b::{Thing, other::X};\n").unwrap();
    std::fs::write(src.join("b/mod.rs"), "mod other;\npub struct Thing;\n").unwrap();
    std::fs::write(
        src.join("b/other.rs"),
        "fn f() -> super::super::a::Y { todo!() }\n",
    )
    .unwrap();
    let found = circles(&src);
    assert!(found.iter().any(|c| c.contains("a -> b -> a")), "{found:?}");
}

/// Functions are bounded (clippy's `too_many_lines` at 100, in CI); a file
/// past 600 lines is a warning to look at, not a reason to cut a concept
/// in two. Past 1,000 it is two concepts: that fails.
#[test]
fn source_files_past_600_lines_are_named_and_none_is_past_1000() {
    let mut long = Vec::new();
    let mut too_long = Vec::new();
    for krate in crates() {
        let mut files = Vec::new();
        for dir in ["src", "tests", "benches", "examples"] {
            rust_files(&krate.join(dir), &mut files);
        }
        for file in files {
            let lines = std::fs::read_to_string(&file).unwrap().lines().count();
            let line = format!("{} ({lines} lines)", file.display());
            if lines > 1000 {
                too_long.push(line);
            } else if lines > 600 {
                long.push(line);
            }
        }
    }
    if !long.is_empty() {
        eprintln!("warning: files past 600 lines:\n{}", long.join("\n"));
    }
    assert!(
        too_long.is_empty(),
        "split these by concept:\n{}",
        too_long.join("\n")
    );
}

/// Every process North starts goes through one spawner (`north_tools::Spawner`:
/// key-free environment, the sandbox launcher, a process group): no other
/// production code builds a child process. Test modules may.
#[test]
fn one_spawner_starts_every_child_process() {
    let mut found = Vec::new();
    for krate in crates() {
        let mut files = Vec::new();
        rust_files(&krate.join("src"), &mut files);
        for file in files {
            if file.ends_with("north-sandbox/src/spawn/mod.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            // What follows a file's test module is test code.
            let production = text.split("#[cfg(test)]").next().unwrap_or_default();
            for (n, line) in production.lines().enumerate() {
                let code = line.split("//").next().unwrap_or_default();
                if ["Command::new(", "CommandBuilder::new(", "Command::from("]
                    .iter()
                    .any(|c| code.contains(c))
                {
                    found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "start child processes through north_tools::Spawner:\n{}",
        found.join("\n")
    );
}

/// Every confined child gets its policy from the one place: production code
/// builds a sandboxed spawner only in the runtime's `sandboxing` module
/// (from `SandboxSettings::policy_for`), and nothing but the policy itself
/// writes the launcher's flags.
#[test]
fn every_spawn_site_passes_through_the_one_policy() {
    let mut found = Vec::new();
    for krate in crates() {
        let mut files = Vec::new();
        rust_files(&krate.join("src"), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let production = text.split("#[cfg(test)]").next().unwrap_or_default();
            let builds_spawner = !file.ends_with("north-runtime/src/sandboxing.rs")
                && !file.ends_with("north-sandbox/src/spawn/mod.rs")
                && !file.ends_with("north-sandbox/src/os_sandbox/policy.rs");
            let writes_flags = !file.ends_with("north-sandbox/src/os_sandbox/policy.rs");
            for (n, line) in production.lines().enumerate() {
                let code = line.split("//").next().unwrap_or_default();
                let spawner = builds_spawner
                    && (code.contains("Spawner::sandboxed(") || code.contains("policy_for("));
                let flags = writes_flags
                    && [
                        "\"--grant\"",
                        "\"--hide\"",
                        "\"--shared-tmp\"",
                        "\"--unix-sockets\"",
                    ]
                    .iter()
                    .any(|f| code.contains(f));
                if spawner || flags {
                    found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "derive child policies with SandboxSettings::policy_for in north-runtime/src/sandboxing.rs:\n{}",
        found.join("\n")
    );
}

/// Lines of production code (a file's test module and comments left out)
/// in `krate`'s sources that contain one of `needles`.
fn production_lines_with(krate: &Path, needles: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    let mut files = Vec::new();
    rust_files(&krate.join("src"), &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let production = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in production.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if needles.iter().any(|x| code.contains(x)) {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    found
}

/// A session is put together and taken apart in one place, the runtime
/// crate: nothing else constructs an agent (the agent crate builds its own
/// sub-agents), starts an MCP hub, attaches hooks, delegation or permission
/// modes, or ends a session (its `SessionEnd` hooks). Front ends open and
/// close sessions through `north_runtime` only.
#[test]
fn only_the_runtime_assembles_and_ends_sessions() {
    let mut found = Vec::new();
    for krate in crates() {
        let name = krate.file_name().unwrap().to_string_lossy().into_owned();
        if name == "north-runtime" {
            continue;
        }
        let mut needles = vec!["McpHub::new(", ".start_all()"];
        if name != "north-agent" {
            needles.extend([
                "Agent::new(",
                ".end_session(",
                ".set_hooks(",
                ".set_delegation(",
                ".set_mode_kit(",
            ]);
        }
        if name == "north-mcp" {
            // The hub's own crate defines and starts it.
            needles.retain(|n| !n.contains("McpHub") && !n.contains("start_all"));
        }
        found.extend(production_lines_with(&krate, &needles));
    }
    // `RoleAgent::new` is the mesh's planner/reviewer, not a North agent.
    found.retain(|l| !l.contains("RoleAgent::new("));
    assert!(
        found.is_empty(),
        "open, build and close sessions through north_runtime (Sessions, AgentParts, LiveSession::close):\n{}",
        found.join("\n")
    );
}

/// No crate depends on the binary, and every front-end crate reaches
/// sessions through the runtime crate directly (no closures back into the
/// binary).
#[test]
fn front_ends_depend_on_the_runtime_and_nothing_on_the_binary() {
    for krate in crates() {
        let manifest = std::fs::read_to_string(krate.join("Cargo.toml")).unwrap();
        let deps = manifest.split("[dependencies]").nth(1).unwrap_or_default();
        assert!(
            !deps
                .lines()
                .any(|l| l.trim_start().starts_with("north.")
                    || l.trim_start().starts_with("north =")),
            "{} depends on the binary",
            krate.display()
        );
    }
    for front in ["north-tui", "north-acp", "north-mesh", "north"] {
        let manifest =
            std::fs::read_to_string(workspace().join("crates").join(front).join("Cargo.toml"))
                .unwrap();
        assert!(
            manifest.contains("north-runtime"),
            "{front} opens sessions through north-runtime"
        );
    }
    let removed = ["SessionFactory", "SessionOpener", "ModelSwitcher"];
    let mut found = Vec::new();
    for front in ["north-tui", "north-acp", "north"] {
        found.extend(production_lines_with(
            &workspace().join("crates").join(front),
            &removed,
        ));
    }
    assert!(
        found.is_empty(),
        "front ends call the runtime, not closures the binary hands them:\n{}",
        found.join("\n")
    );
}

/// The check above sees an agent built outside the runtime.
#[test]
fn the_session_check_sees_an_agent_built_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/lib.rs"),
        "fn f() { let a = Agent::new(b, t); }\n#[cfg(test)]\nmod tests { fn g() { Agent::new(); } }\n",
    )
    .unwrap();
    let found = production_lines_with(dir.path(), &["Agent::new("]);
    assert_eq!(found.len(), 1, "{found:?}");
}

/// Functions longer than `limit` lines in production code under `dir`
/// (a brace count from each `fn` line; test modules left out).
fn long_functions(dir: &Path, limit: usize) -> Vec<String> {
    let mut files = Vec::new();
    if dir.is_file() {
        files.push(dir.to_path_buf());
    } else {
        rust_files(dir, &mut files);
    }
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let production = text.split("#[cfg(test)]").next().unwrap_or_default();
        let lines: Vec<&str> = production.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let code = line.split("//").next().unwrap_or_default().trim_start();
            let is_fn = ["fn ", "pub fn ", "async fn ", "pub async fn "]
                .iter()
                .chain(&["pub(crate) fn ", "pub(super) fn ", "pub(crate) async fn "])
                .chain(&["pub(super) async fn "])
                .any(|p| code.starts_with(p));
            if !is_fn {
                continue;
            }
            let mut depth = 0i64;
            let mut opened = false;
            for (j, l) in lines[i..].iter().enumerate() {
                let l = l.split("//").next().unwrap_or_default();
                depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
                opened |= l.contains('{');
                if !opened && l.trim_end().ends_with(';') {
                    break;
                }
                if opened && depth <= 0 {
                    if j + 1 > limit {
                        found.push(format!("{}:{}: {} lines", file.display(), i + 1, j + 1));
                    }
                    break;
                }
            }
        }
    }
    found
}

/// The runtime, the agent and the orchestrator stay readable: no function
/// in them is over 80 lines (split by concept instead).
#[test]
fn no_function_in_the_runtime_agent_or_orchestrator_is_over_80_lines() {
    let mut found = Vec::new();
    for dir in [
        "crates/north-runtime/src",
        "crates/north-agent/src/agent",
        "crates/north-policy/src/orchestrate.rs",
    ] {
        found.extend(long_functions(&workspace().join(dir), 80));
    }
    assert!(
        found.is_empty(),
        "split these by concept:\n{}",
        found.join("\n")
    );
    // The check sees a long one.
    let dir = tempfile::tempdir().unwrap();
    let body = "    let x = 1;\n".repeat(90);
    std::fs::write(
        dir.path().join("long.rs"),
        format!("fn long() {{\n{body}}}\n"),
    )
    .unwrap();
    assert_eq!(long_functions(dir.path(), 80).len(), 1);
}

/// Release builds link with `crates/north/hot.ld` (build.rs), which the
/// test suite's debug builds never read: a malformed line would break every
/// release build unseen. It must stay what `scripts/orderfile.sh` writes.
#[test]
fn the_hot_text_list_is_a_linker_script_the_release_link_reads() {
    let text = std::fs::read_to_string(workspace().join("crates/north/hot.ld")).unwrap();
    let body = text
        .split_once("SECTIONS\n{\n  .text.hot :\n  {\n")
        .and_then(|(_, rest)| rest.strip_suffix("  }\n}\nINSERT BEFORE .text;\n"))
        .expect("hot.ld is one .text.hot section inserted before .text");
    let mut patterns = 0;
    for line in body.lines() {
        let pattern = line
            .strip_prefix("    *(")
            .and_then(|l| l.strip_suffix(')'))
            .unwrap_or_else(|| panic!("not an input-section pattern: {line:?}"));
        assert!(
            pattern.starts_with(".text.")
                && !pattern.contains(|c: char| c.is_whitespace() || "()\"{};".contains(c)),
            "a pattern the linker would misread: {pattern:?}"
        );
        patterns += 1;
    }
    assert!(
        patterns > 100,
        "only {patterns} patterns: regenerate with scripts/orderfile.sh"
    );
}
