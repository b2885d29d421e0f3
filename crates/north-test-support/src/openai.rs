//! OpenAI Chat Completions wire format: stream and body builders.

use serde_json::{Value, json};

use crate::sse_event;

/// Builds a Chat Completions SSE stream chunk by chunk.
#[derive(Debug, Clone)]
pub struct StreamBuilder {
    chunks: Vec<Value>,
    finish: Option<String>,
    usage: Option<Value>,
    done: bool,
    compat_empty_content: bool,
}

impl Default for StreamBuilder {
    fn default() -> Self {
        Self::new()
    }
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-5.2","system_fingerprint":"fp_eb9dce56a8","choices":[{"index":0,"delta":delta,"logprobs":null,"finish_reason":finish}]})
}

impl StreamBuilder {
    /// A stream that starts with the assistant role chunk.
    pub fn new() -> Self {
        StreamBuilder {
            chunks: vec![chunk(
                json!({"role":"assistant","content":"","refusal":null}),
                None,
            )],
            finish: None,
            usage: Some(
                json!({"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}),
            ),
            done: true,
            compat_empty_content: false,
        }
    }

    /// Content deltas.
    pub fn text(mut self, parts: &[&str]) -> Self {
        for p in parts {
            self.chunks.push(chunk(json!({"content": p}), None));
        }
        self
    }

    /// A tool call: the first chunk carries id and name, then `fragments`.
    pub fn tool_call(mut self, index: usize, id: &str, name: &str, fragments: &[&str]) -> Self {
        let empty = if self.compat_empty_content {
            json!("")
        } else {
            Value::Null
        };
        self.chunks.push(chunk(
            json!({"content": empty, "tool_calls":[{"index":index,"id":id,"type":"function","function":{"name":name,"arguments":""}}]}),
            None,
        ));
        for f in fragments {
            self.chunks.push(chunk(
                json!({"tool_calls":[{"index":index,"function":{"arguments":f}}]}),
                None,
            ));
        }
        self
    }

    /// Sends `content: ""` beside tool calls, as some compatible servers do.
    pub fn compat_empty_content(mut self) -> Self {
        self.compat_empty_content = true;
        self
    }

    /// The finish reason (default: `tool_calls` when tools were called, else `stop`).
    pub fn finish(mut self, reason: &str) -> Self {
        self.finish = Some(reason.into());
        self
    }

    /// Usage in the final chunk with empty choices (None: no usage chunk).
    pub fn usage(mut self, prompt: u64, completion: u64, cached: u64) -> Self {
        self.usage = Some(
            json!({"prompt_tokens":prompt,"completion_tokens":completion,"total_tokens":prompt+completion,"prompt_tokens_details":{"cached_tokens":cached}}),
        );
        self
    }

    /// No usage chunk.
    pub fn no_usage(mut self) -> Self {
        self.usage = None;
        self
    }

    /// Omit the final `[DONE]`.
    pub fn without_done(mut self) -> Self {
        self.done = false;
        self
    }

    /// Any extra raw chunk (e.g. with unknown fields).
    pub fn raw_chunk(mut self, value: Value) -> Self {
        self.chunks.push(value);
        self
    }

    /// The complete stream.
    pub fn build(self) -> Vec<u8> {
        let had_tools = self
            .chunks
            .iter()
            .any(|c| c["choices"][0]["delta"].get("tool_calls").is_some());
        let reason = self
            .finish
            .clone()
            .unwrap_or_else(|| if had_tools { "tool_calls" } else { "stop" }.into());
        let mut out = String::new();
        for c in &self.chunks {
            out.push_str(&sse_event(None, &c.to_string()));
        }
        out.push_str(&sse_event(
            None,
            &chunk(json!({}), Some(&reason)).to_string(),
        ));
        if let Some(u) = &self.usage {
            out.push_str(&sse_event(
                None,
                &json!({"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"gpt-5.2","system_fingerprint":"fp_eb9dce56a8","choices":[],"usage":u}).to_string(),
            ));
        }
        if self.done {
            out.push_str("data: [DONE]\n\n");
        }
        out.into_bytes()
    }
}

/// A stream answering with text split into `parts`.
pub fn text_stream(parts: &[&str]) -> Vec<u8> {
    StreamBuilder::new().text(parts).build()
}

/// An HTTP error body in OpenAI's shape.
pub fn error_body(error_type: &str, message: &str) -> String {
    json!({"error":{"message":message,"type":error_type,"param":null,"code":null}}).to_string()
}

/// A non-streaming completion with `text`.
pub fn completion_json(text: &str) -> String {
    json!({"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion","created":1741569952,"model":"gpt-5.2","choices":[{"index":0,"message":{"role":"assistant","content":text,"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0}}}).to_string()
}
