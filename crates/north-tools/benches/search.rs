//! `search_text` over a generated 50,000-file tree, beside `rg` on the same
//! tree when it is installed (`scripts/bench-search.sh` times both end to end).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "support/tree.rs"]
mod tree;

use std::process::Command;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use north_tools::Sandbox;
use north_tools::tools::{SearchArgs, search};
use tokio_util::sync::CancellationToken;

const FILES: usize = 50_000;

fn bench_search(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    tree::generate(dir.path(), FILES).unwrap();
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let cancel = CancellationToken::new();
    let mut group = c.benchmark_group("search_50k_files");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    for (name, query, regex) in [
        ("literal", tree::NEEDLE, false),
        ("regex", r"needle_\w+\(event", true),
    ] {
        let args = SearchArgs {
            query: query.to_owned(),
            path: None,
            regex,
            limit: Some(10_000),
        };
        let (hits, _) = search(&sandbox, &args, &cancel).unwrap();
        assert_eq!(hits.len(), FILES / 50);
        group.bench_function(format!("north/{name}"), |b| {
            b.iter(|| search(&sandbox, &args, &cancel).unwrap())
        });
        if Command::new("rg").arg("--version").output().is_ok() {
            let mut rg = Command::new("rg");
            rg.args(["-n", "--column", "--no-config", "--no-require-git"]);
            if !regex {
                rg.arg("-F");
            }
            rg.arg(query).arg(dir.path());
            group.bench_function(format!("rg/{name}"), |b| b.iter(|| rg.output().unwrap()));
        }
    }
    group.finish();
}

criterion_group!(benches, bench_search);
criterion_main!(benches);
