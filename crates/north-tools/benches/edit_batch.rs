//! Validating and diffing one batch of 1,000 edits over 100 files (the
//! proposal step of `edit_apply_batch`; nothing is written).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use north_tools::Sandbox;
use north_tools::edit::{EditOp, InsertAtLineArgs, ReplaceExactArgs, propose};

const FILES: usize = 100;
const EDITS_PER_FILE: usize = 10;
const LINES: usize = 400;

fn bench_batch(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut ops = Vec::new();
    for f in 0..FILES {
        let path = format!("src/file{f:03}.rs");
        let body: String = (0..LINES)
            .map(|l| format!("    let value_{l} = compute({f}, {l}); // line {l}\n"))
            .collect();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join(&path), body).unwrap();
        for e in 0..EDITS_PER_FILE {
            let l = e * (LINES / EDITS_PER_FILE) + 3;
            if e % 2 == 0 {
                ops.push(EditOp::ReplaceExact(ReplaceExactArgs {
                    path: path.clone(),
                    old: format!("compute({f}, {l});"),
                    new: format!("compute_fast({f}, {l})?;"),
                    expected_occurrences: Some(1),
                }));
            } else {
                ops.push(EditOp::InsertAtLine(InsertAtLineArgs {
                    path: path.clone(),
                    line: l as u64,
                    content: format!("    // checked {e}\n"),
                }));
            }
        }
    }
    assert_eq!(ops.len(), 1000);
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let proposal = propose(&sandbox, &ops, true).unwrap();
    assert_eq!(proposal.stats.files, FILES);
    let mut group = c.benchmark_group("edit_batch");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("propose_1000_edits_100_files", |b| {
        b.iter(|| propose(&sandbox, &ops, true).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench_batch);
criterion_main!(benches);
