//! Fuzz targets for North's parsers of untrusted input: SSE streams from a
//! provider, the NOTES and TOOL_CALLS blocks a model writes, command lines
//! the command policy judges, structured output a model answers with, and
//! config files. Each target is a plain function here, so the same code runs
//! under `cargo fuzz` (the binaries in `fuzz_targets/`, coverage-guided, for
//! long runs) and under proptest in the ordinary test suite (`tests/`).
//!
//! A target must never panic, whatever the bytes; it asserts the invariants
//! its parser promises.
//!
//! Long run: `cargo install cargo-fuzz`, then from the repository root
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run -s none <target> -- -max_total_time=600`
//! (the targets are the binaries' names: `sse_decode`, `notes_block`,
//! `tool_calls_block`, `command_policy`, `structured_output`, `config_file`).

use std::path::Path;
use std::sync::OnceLock;

use north_llm::anthropic::AnthropicDecoder;
use north_llm::decode::decode_chunks;
use north_llm::openai::{OpenAiDecoder, ResponsesDecoder};
use north_prompt::{MarkdownSection, Prompt, PromptParams, PromptTemplate, RenderedPrompt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Splits `data` into chunks at the boundaries its first bytes choose, so
/// one input exercises both the content and where a network cuts it.
fn chunks(data: &[u8]) -> Vec<&[u8]> {
    let Some((&seed, rest)) = data.split_first() else {
        return Vec::new();
    };
    let step = usize::from(seed % 31) + 1;
    rest.chunks(step).collect()
}

/// Decodes `data` as an Anthropic, an OpenAI Chat and an OpenAI Responses
/// stream, cut into chunks; decoding the same bytes whole gives the same
/// deltas (chunk boundaries never change what a stream means).
pub fn sse_decode(data: &[u8]) {
    let split = chunks(data);
    let whole: Vec<&[u8]> = data.get(1..).into_iter().collect();
    let a = decode_chunks(&mut AnthropicDecoder::new(), split.iter().copied());
    let b = decode_chunks(&mut AnthropicDecoder::new(), whole.iter().copied());
    assert_eq!(
        format!("{a:?}"),
        format!("{b:?}"),
        "anthropic: split changed the result"
    );
    let a = decode_chunks(&mut OpenAiDecoder::new(), split.iter().copied());
    let b = decode_chunks(&mut OpenAiDecoder::new(), whole.iter().copied());
    assert_eq!(
        format!("{a:?}"),
        format!("{b:?}"),
        "openai: split changed the result"
    );
    let _ = decode_chunks(&mut ResponsesDecoder::new(), split.iter().copied());
}

/// Feeds text through the block filter in pieces and parses any NOTES
/// block: streamed in pieces, the filter shows exactly what the one-shot
/// splitter shows, and finds the same blocks.
pub fn notes_block(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut filter = north_protocol::blocks::BlockFilter::new();
    let mut visible = String::new();
    let mut at = 0;
    for (i, _) in text.char_indices().step_by(7) {
        visible.push_str(&filter.feed(&text[at..i]));
        at = i;
    }
    visible.push_str(&filter.feed(&text[at..]));
    let (tail, blocks) = filter.finish();
    visible.push_str(&tail);
    let (whole_visible, whole_blocks) = north_protocol::blocks::split_blocks(&text);
    assert_eq!(visible, whole_visible, "streaming changed what is shown");
    assert_eq!(
        format!("{blocks:?}"),
        format!("{whole_blocks:?}"),
        "streaming changed the blocks"
    );
    for block in &blocks {
        let _ = north_protocol::notes::NotesPatch::parse(&block.body);
    }
    let _ = north_protocol::notes::NotesPatch::parse(&text);
}

/// Parses a TOOL_CALLS block body: every call it accepts has an id, a tool
/// and an object of arguments.
pub fn tool_calls_block(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(calls) = north_protocol::textcalls::parse(&text) {
        for call in calls {
            assert!(!call.id.is_empty() && !call.name.is_empty());
            assert!(call.arguments.is_object(), "{call:?}");
        }
    }
}

/// Judges a command line: parsing never panics, an accepted line has a
/// program per command, and what the strict parser accepts the syntactic
/// splitter accepts too.
pub fn command_policy(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    let split = north_policy::command::split(&line);
    if let Ok(commands) = north_policy::command::parse(&line) {
        assert!(commands.iter().all(|c| !c.program.is_empty()));
        assert!(split.is_ok(), "parse accepted what split refused: {line:?}");
    }
    let _ = north_policy::dangerous_substring(&line);
}

/// The output type of the structured-output target.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Plan {
    /// Steps.
    pub items: Vec<Step>,
}

/// One step of a [`Plan`].
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Step {
    /// What to do.
    pub description: String,
    /// A tool, if any.
    pub tool: Option<String>,
}

#[derive(Debug, Default, Serialize, JsonSchema, PromptParams)]
struct NoParams {}

fn plan_prompt() -> Option<&'static RenderedPrompt<Plan>> {
    static RENDERED: OnceLock<Option<RenderedPrompt<Plan>>> = OnceLock::new();
    RENDERED
        .get_or_init(|| {
            let template = PromptTemplate::builder("fuzz", "plan")
                .output::<Plan>()
                .section(MarkdownSection::<NoParams>::new(
                    "Task",
                    "task",
                    north_prompt::template!(NoParams, "Plan."),
                ))
                .build()
                .ok()?;
            Prompt::new(template).bind(NoParams {}).render().ok()
        })
        .as_ref()
}

/// Parses a model's answer as structured output: never panics, and what it
/// accepts serializes back to a valid plan.
pub fn structured_output(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Some(rendered) = plan_prompt() else {
        return;
    };
    if let Ok(plan) = north_prompt::parse_structured_output(&text, rendered) {
        assert!(serde_json::to_value(&plan).is_ok());
    }
}

/// Parses a config file's text: never panics; a file naming a key field is
/// always refused.
pub fn config_file(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let parsed = north_config::parse_file(&text, Path::new("config.json"));
    if text.contains("\"api_key\"") && parsed.is_ok() {
        // A key field anywhere at the top level is refused; nested ones are
        // unknown fields and refused too.
        let value: Result<serde_json::Value, _> = serde_json::from_str(&text);
        assert!(value.is_err() || !value.is_ok_and(|v| v.get("api_key").is_some()));
    }
}
