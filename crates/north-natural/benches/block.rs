//! Host-side overhead of one natural block on the stub backend: binding
//! the variables, building the prompt, dispatching the tool calls (two
//! `nh_assign`, one `nh_eval`), parsing the final answer and committing —
//! everything but the model.
#![allow(clippy::expect_used)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use north_natural::{
    Configuration, Envelope, Environment, Memory, StubBackend, environment, natural,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Sentiment {
    Positive,
    Negative,
    Neutral,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
struct Notes {
    facts: Vec<String>,
    count: u32,
}

#[natural]
async fn classify(review: &str, tags: Vec<String>) -> north_natural::Result<Sentiment> {
    let mut label = Sentiment::Neutral;
    "natural
    Classify the review <review> (tags: <tags>) into <:label> and count it in memory.
    Review: {review}
    ";
    Ok(label)
}

#[natural]
async fn empty_block() -> north_natural::Result<()> {
    "natural
    Do nothing.
    ";
    Ok(())
}

/// An environment on `backend` with `memory`.
fn on(backend: Arc<StubBackend>, memory: &Memory<Notes>) -> Environment {
    Environment::builder()
        .configuration(Configuration::default())
        .workspace_root(env!("CARGO_MANIFEST_DIR"))
        .backend(backend)
        .memory(memory)
        .build()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let full = Arc::new(StubBackend::from_fn(|_| {
        Envelope::done()
            .bind("label", "positive")
            .call(
                "nh_assign",
                json!({"target": "memory.count", "expression": ".memory.count + 1"}),
            )
            .call("nh_eval", json!({"expression": ".tags | length"}))
    }));
    let memory = Memory::new(Notes::default()).expect("memory");
    let env = on(full, &memory);
    let tags: Vec<String> = ["electronics", "returns", "priority"]
        .map(String::from)
        .to_vec();
    c.bench_function("block/bind_prompt_3_tools_commit", |b| {
        b.iter(|| {
            let out = rt.block_on(environment(
                env.clone(),
                classify(black_box("I love it, works great."), tags.clone()),
            ));
            black_box(out.expect("block"))
        })
    });

    // Every block evaluates expressions never seen before: jq compilation
    // (with the standard library prelude) is included.
    let counter = std::sync::atomic::AtomicU64::new(0);
    let fresh = Arc::new(StubBackend::from_fn(move |_| {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Envelope::done()
            .bind("label", "positive")
            .call("nh_assign", json!({"target": "memory.count", "expression": format!(".memory.count + 1 + {n} - {n}")}))
            .call("nh_eval", json!({"expression": format!(".tags | length + {n}")}))
    }));
    let env = on(fresh, &memory);
    c.bench_function("block/bind_prompt_3_tools_commit_uncached_jq", |b| {
        b.iter(|| {
            let out = rt.block_on(environment(
                env.clone(),
                classify(black_box("I love it, works great."), tags.clone()),
            ));
            black_box(out.expect("block"))
        })
    });

    let env = Environment::stub(StubBackend::from_fn(|_| Envelope::done()));
    c.bench_function("block/prompt_and_final_only", |b| {
        b.iter(|| {
            rt.block_on(environment(env.clone(), empty_block()))
                .expect("block");
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
