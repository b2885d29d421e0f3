//! The `@` file picker on a 100,000-file tree: the walk that builds the
//! index once, then the first results for a few typed queries on the warm
//! index (target: under 50 ms each; README records the numbers).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use north_tools::repo::FileIndex;

const FILES: usize = 100_000;
const WORDS: &[&str] = &[
    "config", "parser", "render", "state", "event", "buffer", "index", "context", "handler",
    "session",
];

/// Empty files with realistic names in nested directories, 100 per
/// directory, plus an ignored build directory.
fn generate(root: &std::path::Path) {
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    std::fs::create_dir_all(root.join("target/debug")).unwrap();
    for i in 0..1000 {
        std::fs::write(root.join(format!("target/debug/obj{i}.o")), "").unwrap();
    }
    let mut made = std::collections::HashSet::new();
    for i in 0..FILES {
        let dir = root.join(format!(
            "crates/{}_{:02}/src/{}",
            WORDS[i % WORDS.len()],
            i / 5000,
            WORDS[(i / 100) % WORDS.len()]
        ));
        if made.insert(dir.clone()) {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let name = format!("{}_{i}.rs", WORDS[(i * 7) % WORDS.len()]);
        std::fs::write(dir.join(name), "").unwrap();
    }
}

fn bench_files(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path());
    let mut group = c.benchmark_group("file_picker_100k");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("index_build", |b| b.iter(|| FileIndex::build(dir.path())));
    let index = FileIndex::build(dir.path());
    assert_eq!(index.len(), FILES + 1, "the generated files and .gitignore");
    for query in [
        "h",
        "sess",
        "parser_0",
        "crates/render_00/src/render/event_4242.rs",
        "cfgprs",
    ] {
        assert!(
            query == "cfgprs" || !index.find(query, 20).is_empty(),
            "{query}"
        );
        group.bench_function(format!("find/{query}"), |b| {
            b.iter(|| index.find(query, 20))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_files);
criterion_main!(benches);
