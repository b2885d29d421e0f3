//! Rendering speed: a 50-section template (10 roots with 4 children each,
//! placeholders in every section, tools on some). Target: well under 100 µs.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use north_prompt::{MarkdownSection, Prompt, PromptTemplate, SectionVisibility};
use north_protocol::ToolSpec;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

#[derive(Serialize, JsonSchema, Default)]
struct BenchParams {
    project: String,
    language: String,
    limit: u32,
}

fn template(summarized: bool) -> PromptTemplate {
    let mut builder = PromptTemplate::builder("bench", "fifty");
    for root in 0..10 {
        let mut section = MarkdownSection::<BenchParams>::new(
            format!("Root section {root}"),
            format!("root-{root}"),
            "Work on ${project}, written in ${language}. Keep answers under $limit lines.\n\
             This paragraph stands for the guidance a real section carries; it is long \
             enough to make copying text part of the measurement.",
        );
        if root % 3 == 0 {
            section = section.tool(ToolSpec {
                name: format!("tool_{root}"),
                description: "A tool.".into(),
                input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
                approval: Default::default(),
            });
        }
        if summarized && root % 2 == 1 {
            section = section
                .summary("Summary of $project guidance.")
                .visibility(SectionVisibility::Summary);
        }
        for child in 0..4 {
            section = section.child(MarkdownSection::<BenchParams>::new(
                format!("Child {root}.{child}"),
                format!("child-{child}"),
                "- Prefer ${language} idioms for $project.\n- Limit: $limit.",
            ));
        }
        builder = builder.section(section);
    }
    builder.build().unwrap()
}

fn params() -> BenchParams {
    BenchParams {
        project: "north".into(),
        language: "Rust".into(),
        limit: 40,
    }
}

fn bench(c: &mut Criterion) {
    let prompt = Prompt::new(template(false)).bind(params());
    assert_eq!(prompt.render().unwrap().text().matches("\n## ").count(), 9);
    c.bench_function("render 50 sections", |b| {
        b.iter(|| std::hint::black_box(prompt.render().unwrap()))
    });
    let summarized = Prompt::new(template(true)).bind(params());
    c.bench_function("render 50 sections, 5 summarized", |b| {
        b.iter(|| std::hint::black_box(summarized.render().unwrap()))
    });
    c.bench_function("build 50-section template", |b| {
        b.iter(|| std::hint::black_box(template(false)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
