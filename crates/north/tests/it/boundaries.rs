//! Crate boundaries, kept true by a test: what the sandbox, policy and TUI
//! crates may depend on, every module named in its crate's module map, and
//! no public function whose error is a bare `String`.
//!
//! Manifests and sources are read as text: `[dependencies]` names, `mod`
//! declarations and `pub fn` signatures are regular enough for that.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::Path;

use crate::architecture::{crates, rust_files, workspace};

/// The lines under `[dependencies]` of the crate in `dir` (dev- and
/// build-dependencies are not what the crate ships with), comments left
/// out.
fn dependency_lines(dir: &Path) -> Vec<String> {
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let Some(section) = manifest.split("\n[dependencies]\n").nth(1) else {
        return Vec::new();
    };
    section
        .split("\n[")
        .next()
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// The crate name a dependency line names.
fn dependency_name(line: &str) -> String {
    line.split(['.', ' ', '='])
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// The names under `[dependencies]` of the crate in `dir`.
fn dependencies(dir: &Path) -> Vec<String> {
    dependency_lines(dir)
        .iter()
        .map(|l| dependency_name(l))
        .collect()
}

/// Every crate `krate` reaches through workspace crates, and the external
/// crates those name directly: (workspace crates, external crates).
fn closure(krate: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut inner = BTreeSet::new();
    let mut outer = BTreeSet::new();
    let mut todo = vec![krate.to_owned()];
    while let Some(name) = todo.pop() {
        for dep in dependencies(&workspace().join("crates").join(&name)) {
            if dep.starts_with("north-") {
                if inner.insert(dep.clone()) {
                    todo.push(dep);
                }
            } else {
                outer.insert(dep);
            }
        }
    }
    (inner, outer)
}

#[test]
fn the_tui_does_not_depend_on_the_tools_crate() {
    assert!(
        !dependencies(&workspace().join("crates/north-tui")).contains(&"north-tools".to_owned()),
        "north-tui renders events and submits actions; tool types it shows belong in north-protocol"
    );
}

/// The sandbox crate is the one way North starts a child and nothing more:
/// it depends on no agent, tool, model or network crate (so a newcomer
/// asking "where is the sandbox?" finds one crate, and its fuzzing and
/// review need nothing else).
#[test]
fn the_sandbox_crate_stands_alone() {
    let (inner, outer) = closure("north-sandbox");
    let allowed_inner = ["north-secrets"];
    for dep in &inner {
        assert!(
            allowed_inner.contains(&dep.as_str()),
            "north-sandbox depends on {dep}"
        );
    }
    for forbidden in ["reqwest", "rusqlite", "image", "lopdf", "rmcp", "hyper"] {
        assert!(
            !outer.contains(forbidden),
            "north-sandbox depends on {forbidden}"
        );
    }
}

/// The command and network policy decides from text and paths alone: no
/// process, network, database, media or async crate anywhere under it, so
/// its fuzz target builds in seconds and a reviewer reads one crate.
#[test]
fn the_policy_crate_has_no_io_dependencies() {
    let (inner, outer) = closure("north-policy");
    assert_eq!(
        inner.into_iter().collect::<Vec<_>>(),
        ["north-protocol"],
        "north-policy may lean on the shared types only"
    );
    // schemars: north-protocol's optional `schema` feature (JSON Schemas
    // of the event types for `north serve --schema`); data only.
    let pure = ["globset", "schemars", "serde", "serde_json", "thiserror"];
    for dep in &outer {
        assert!(
            pure.contains(&dep.as_str()),
            "north-policy (or north-protocol) depends on {dep}: is it free of I/O? add it to this list only if so"
        );
    }
}

fn name(krate: &Path) -> String {
    krate.file_name().unwrap().to_string_lossy().into_owned()
}

/// The fuzz targets are North's parsers alone: every crate they reach, and
/// every crate those name, is free of the HTTP, SQLite, image and PDF
/// crates (north-llm is reached without its `http` feature, where
/// `reqwest` is an optional dependency), so a fuzz build is small and a
/// parser bug is not hidden behind a network stack.
#[test]
fn the_fuzz_targets_build_without_http_sqlite_image_or_pdf() {
    let heavy = [
        "reqwest", "rusqlite", "image", "lopdf", "hyper", "rmcp", "htmd",
    ];
    let mut todo = vec![workspace().join("fuzz")];
    let mut seen = BTreeSet::new();
    while let Some(dir) = todo.pop() {
        for line in dependency_lines(&dir) {
            let dep = dependency_name(&line);
            if line.contains("optional = true") {
                continue;
            }
            assert!(
                !heavy.contains(&dep.as_str()),
                "{} pulls {dep} into the fuzz build",
                dir.display()
            );
            if dep == "north-llm" {
                assert!(
                    line.contains("default-features = false"),
                    "{} takes north-llm with its HTTP client: `default-features = false`",
                    dir.display()
                );
            }
            assert!(
                !["north-tools", "north-agent", "north-mcp", "north-runtime"]
                    .contains(&dep.as_str()),
                "{} pulls {dep} (and its HTTP, SQLite, image and PDF crates) into the fuzz build",
                dir.display()
            );
            if dep.starts_with("north-") && seen.insert(dep.clone()) {
                todo.push(workspace().join("crates").join(&dep));
            }
        }
    }
    let llm = std::fs::read_to_string(workspace().join("crates/north-llm/Cargo.toml")).unwrap();
    assert!(
        llm.contains("reqwest = { workspace = true, optional = true }"),
        "north-llm's HTTP client is behind its `http` feature"
    );
}

/// The `mod` items declared at the top of a crate root (test modules
/// left out).
fn declared_modules(root: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut test_only = false;
    for line in root.lines() {
        let line = line.trim();
        if line.starts_with("#[cfg(test)]") {
            test_only = true;
            continue;
        }
        let decl = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("pub(crate) mod "))
            .or_else(|| line.strip_prefix("mod "));
        if let Some(name) = decl.and_then(|d| d.strip_suffix(';'))
            && !test_only
        {
            out.push(name.to_owned());
        }
        if !line.starts_with("#[") {
            test_only = false;
        }
    }
    out
}

/// Each crate's doc comment carries a module map; every module the crate
/// root declares is in it (`` `name` ``), so a newcomer finds every room.
#[test]
fn every_module_is_in_its_crates_module_map() {
    let mut missing = Vec::new();
    for krate in crates() {
        let src = krate.join("src");
        for root in ["lib.rs", "main.rs"] {
            let Ok(text) = std::fs::read_to_string(src.join(root)) else {
                continue;
            };
            let docs: String = text
                .lines()
                .filter(|l| l.starts_with("//!"))
                .collect::<Vec<_>>()
                .join("\n");
            // `__private` and the like are macro support, not rooms.
            for module in declared_modules(&text)
                .into_iter()
                .filter(|m| !m.starts_with("__"))
            {
                if !docs.contains(&format!("`{module}`")) {
                    missing.push(format!("{}/src/{root}: {module}", name(&krate)));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "modules missing from their crate's module map:\n{}",
        missing.join("\n")
    );
}

/// The signatures of `pub fn`s in `text` (up to the body), test modules
/// left out.
fn public_signatures(text: &str) -> Vec<String> {
    let production = text.split("#[cfg(test)]").next().unwrap_or_default();
    let mut out = Vec::new();
    let mut rest = production;
    while let Some(at) = rest.find("pub ") {
        rest = &rest[at + 4..];
        let head = rest
            .trim_start_matches("async ")
            .trim_start_matches("const ");
        if head.starts_with("fn ") {
            let end = head.find(['{', ';']).unwrap_or(head.len());
            out.push(head[..end].split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    out
}

/// Whether a signature returns `Result<_, String>`.
fn returns_string_error(signature: &str) -> bool {
    let Some((_, ret)) = signature.rsplit_once("->") else {
        return false;
    };
    let ret = ret.split(" where ").next().unwrap_or_default().trim();
    ret.starts_with("Result<") && ret.replace(' ', "").ends_with(",String>")
}

/// A caller can match on what failed: no public function's error is a
/// bare `String`.
#[test]
fn no_public_function_returns_a_string_error() {
    let mut found = Vec::new();
    for krate in crates() {
        let mut files = Vec::new();
        rust_files(&krate.join("src"), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for signature in public_signatures(&text) {
                if returns_string_error(&signature) {
                    found.push(format!(
                        "{} {}: {signature}",
                        name(&krate),
                        file.strip_prefix(&krate).unwrap_or(&file).display()
                    ));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "public functions returning Result<_, String> (give them an error enum):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checks_see_what_they_look_for() {
    assert!(returns_string_error(
        "fn parse(text: &str) -> Result<Value, String>"
    ));
    assert!(!returns_string_error(
        "fn parse(text: &str) -> Result<String, ParseError>"
    ));
    assert_eq!(
        public_signatures("pub async fn a(x: u8)\n -> Result<(), String> {}\npub struct B;"),
        ["fn a(x: u8) -> Result<(), String>"]
    );
    assert_eq!(
        declared_modules("//! `a`\npub mod a;\nmod b;\n#[cfg(test)]\nmod tests;\n"),
        ["a", "b"]
    );
}
