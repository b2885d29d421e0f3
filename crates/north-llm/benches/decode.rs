//! Stream decoding throughput: SSE parsing + provider decoding + response
//! accumulation over a long recorded-shape stream, fed in network-sized chunks.
#![allow(missing_docs, clippy::unwrap_used)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use north_llm::ResponseBuilder;
use north_llm::anthropic::AnthropicDecoder;
use north_llm::decode::{StreamDecoder, decode_chunks};
use north_llm::openai::OpenAiDecoder;
use north_test_support::{anthropic, openai};

fn long_answer() -> Vec<String> {
    (0..4000).map(|i| format!("token{i} ")).collect()
}

fn args() -> Vec<String> {
    (0..500).map(|i| format!("\\\"k{i}\\\": {i}, ")).collect()
}

fn run<D: StreamDecoder>(mut d: D, bytes: &[u8]) -> usize {
    let (deltas, failure) = decode_chunks(&mut d, bytes.chunks(1400));
    assert!(failure.is_none());
    let mut b = ResponseBuilder::new();
    deltas.iter().for_each(|x| b.push(x));
    b.finish().content.len()
}

fn bench(c: &mut Criterion) {
    let words = long_answer();
    let parts: Vec<&str> = words.iter().map(String::as_str).collect();
    let frags = args();
    let frag_refs: Vec<&str> = frags.iter().map(String::as_str).collect();
    let a = anthropic::StreamBuilder::new()
        .text(&parts)
        .tool_use("toolu_1", "edit_apply_batch", &frag_refs)
        .build();
    let o = openai::StreamBuilder::new()
        .text(&parts)
        .tool_call(0, "call_1", "edit_apply_batch", &frag_refs)
        .build();
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Bytes(a.len() as u64));
    g.bench_function("anthropic_4500_events", |b| {
        b.iter(|| run(AnthropicDecoder::new(), &a))
    });
    g.throughput(Throughput::Bytes(o.len() as u64));
    g.bench_function("openai_4500_chunks", |b| {
        b.iter(|| run(OpenAiDecoder::new(), &o))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
