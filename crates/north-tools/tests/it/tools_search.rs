//! `search_text` through the public registry: literal and regex search,
//! scopes, limits and the truncated flag, lines too long to hold in memory,
//! and what the walk includes (dotfiles) and never includes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tools_support;

use serde_json::json;
use tools_support::{Project, paths};

// ---------- search_text ----------

fn search_fixture() -> Project {
    let p = Project::new();
    p.write(".gitignore", "gen/\n")
        .write("src/a.rs", "fn alpha() {}\nlet abc = 1;\n    a.c();\n")
        .write("src/b.rs", "// alpha beta\n")
        .write("lib/c.rs", "alpha\r\n")
        .write("gen/out.rs", "alpha\n")
        .write("img.bin", b"alpha\0\x01\x02")
        .write("latin1.txt", b"caf\xe9 alpha\n");
    p
}

#[test]
fn search_literal_returns_path_line_column_preview() {
    let p = search_fixture();
    let out = p.ok(
        "search_text",
        json!({"query": "alpha", "path": null, "regex": false, "limit": 50}),
    );
    insta::assert_json_snapshot!("search_literal", out);
}

#[test]
fn search_literal_does_not_interpret_regex_syntax() {
    let p = search_fixture();
    let out = p.ok("search_text", json!({"query": "a.c"}));
    assert_eq!(
        out,
        json!([{"path": "src/a.rs", "line": 3, "column": 5, "preview": "    a.c();"}])
    );
}

#[test]
fn search_regex() {
    let p = search_fixture();
    let out = p.ok("search_text", json!({"query": r"a.c\b", "regex": true}));
    let lines: Vec<_> = out
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [2, 3]);
    assert!(
        p.fail("search_text", json!({"query": "(", "regex": true}))
            .contains("invalid regex")
    );
}

#[test]
fn search_scoped_to_a_directory_or_file() {
    let p = search_fixture();
    let dir = p.ok("search_text", json!({"query": "alpha", "path": "src"}));
    assert_eq!(paths(&dir), ["src/a.rs", "src/b.rs"]);
    let file = p.ok(
        "search_text",
        json!({"query": "alpha", "path": "./src/b.rs"}),
    );
    assert_eq!(paths(&file), ["src/b.rs"]);
    // As with ripgrep, an explicitly named directory is searched even when ignored.
    let ignored = p.ok("search_text", json!({"query": "alpha", "path": "gen"}));
    assert_eq!(paths(&ignored), ["gen/out.rs"]);
}

#[test]
fn search_limit_and_errors() {
    let p = Project::new();
    let body: String = (0..50).map(|i| format!("hit {i}\n")).collect();
    p.write("many.txt", body);
    // At the limit the result says so (it used to be silently short).
    let out = p.ok("search_text", json!({"query": "hit", "limit": 7}));
    assert_eq!(out["matches"].as_array().unwrap().len(), 7);
    assert_eq!(out["truncated"], true);
    assert!(out["note"].as_str().unwrap().contains("limit"));
    let all = p.ok("search_text", json!({"query": "hit", "limit": 50}));
    assert_eq!(
        all.as_array().unwrap().len(),
        50,
        "under the limit: the spec's array"
    );
    assert!(
        p.fail("search_text", json!({"query": ""}))
            .contains("empty")
    );
    assert!(
        p.fail("search_text", json!({"query": "x", "path": "nope"}))
            .contains("does not exist")
    );
}

/// Regression: `search_text` held a whole huge line in memory (422 MiB on
/// a 200 MB one-line file). Lines over the searcher's limit are scanned in
/// chunks, and every match says where it is.
#[test]
fn a_line_over_the_memory_limit_is_searched_in_chunks() {
    let p = Project::new();
    let mut body = String::from("first line needle\n");
    let long_start = body.len();
    let mut line = "x".repeat(3 << 20);
    // Matches near chunk boundaries and at the end.
    for at in [10, (1 << 20) - 3, (2 << 20) + 100, (3 << 20) - 6] {
        line.replace_range(at..at + 6, "needle");
    }
    body.push_str(&line);
    body.push_str("\nlast needle\n");
    p.write("dump.json", body);
    let out = p.ok("search_text", json!({"query": "needle", "limit": 100}));
    let hits = out.as_array().unwrap();
    assert_eq!(hits.len(), 6, "{hits:?}");
    assert_eq!(hits[0]["line"], 1);
    let long: Vec<_> = hits.iter().filter(|h| h["line"] == 2).collect();
    assert_eq!(long.len(), 4);
    for (h, at) in long
        .iter()
        .zip([10u64, (1 << 20) - 3, (2 << 20) + 100, (3 << 20) - 6])
    {
        assert_eq!(h["byteOffset"], long_start as u64 + at);
        assert_eq!(h["column"], at + 1);
        let preview = h["preview"].as_str().unwrap();
        assert!(
            preview.contains("needle") && preview.len() < 600,
            "{preview}"
        );
    }
    assert_eq!(hits[5]["line"], 3);
}

#[test]
fn search_preview_of_long_lines_shows_the_match() {
    let p = Project::new();
    p.write(
        "long.txt",
        format!("{}needle{}\n", "x".repeat(5000), "y".repeat(5000)),
    );
    let out = p.ok("search_text", json!({"query": "needle"}));
    let hit = &out[0];
    assert_eq!(hit["column"], 5001);
    let preview = hit["preview"].as_str().unwrap();
    assert!(preview.contains("needle") && preview.chars().count() <= 202);
}

#[test]
fn search_and_find_include_dotfiles_but_never_git_north_state_or_secrets() {
    let p = Project::new();
    p.write(".github/workflows/ci.yml", "run: needle\n")
        .write(".cargo/config.toml", "# needle\n")
        .write(".env.example", "NEEDLE_URL=\n")
        .write(".env", "needle=hunter2\n")
        .write(".git/config", "needle\n")
        .write(".north/sessions/s/log.jsonl", "needle\n")
        .write("src/lib.rs", "// needle\n");
    let out = p.ok("search_text", json!({"query": "needle"}));
    let mut paths: Vec<&str> = out
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            ".cargo/config.toml",
            ".github/workflows/ci.yml",
            "src/lib.rs"
        ]
    );
    let out = p.ok("search_text", json!({"query": "NEEDLE_URL"}));
    assert_eq!(out[0]["path"], ".env.example");
}
