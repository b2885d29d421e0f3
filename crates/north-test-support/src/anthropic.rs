//! Anthropic Messages API wire format: stream and body builders.

use serde_json::{Value, json};

use crate::sse_event;

/// Builds a Messages API SSE stream event by event.
#[derive(Debug, Clone)]
pub struct StreamBuilder {
    model: String,
    blocks: Vec<String>,
    index: usize,
    input_tokens: u64,
    output_tokens: u64,
    cache_read: u64,
    cache_creation: u64,
    stop_reason: Option<String>,
    has_tool: bool,
}

impl Default for StreamBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamBuilder {
    /// An empty stream from `claude-sonnet-4-5`.
    pub fn new() -> Self {
        StreamBuilder {
            model: "claude-sonnet-4-5".into(),
            blocks: Vec::new(),
            index: 0,
            input_tokens: 25,
            output_tokens: 12,
            cache_read: 0,
            cache_creation: 0,
            stop_reason: None,
            has_tool: false,
        }
    }

    /// A text block streamed as `parts`.
    pub fn text(mut self, parts: &[&str]) -> Self {
        let i = self.index;
        self.blocks.push(sse_event(
            Some("content_block_start"),
            &json!({"type":"content_block_start","index":i,"content_block":{"type":"text","text":""}}).to_string(),
        ));
        for p in parts {
            self.blocks.push(sse_event(
                Some("content_block_delta"),
                &json!({"type":"content_block_delta","index":i,"delta":{"type":"text_delta","text":p}}).to_string(),
            ));
        }
        self.blocks.push(sse_event(
            Some("content_block_stop"),
            &json!({"type":"content_block_stop","index":i}).to_string(),
        ));
        self.index += 1;
        self
    }

    /// A thinking block whose text streams as `parts`, closed by `signature`.
    pub fn thinking(mut self, parts: &[&str], signature: &str) -> Self {
        let i = self.index;
        self.blocks.push(sse_event(
            Some("content_block_start"),
            &json!({"type":"content_block_start","index":i,"content_block":{"type":"thinking","thinking":""}}).to_string(),
        ));
        for p in parts {
            self.blocks.push(sse_event(
                Some("content_block_delta"),
                &json!({"type":"content_block_delta","index":i,"delta":{"type":"thinking_delta","thinking":p}}).to_string(),
            ));
        }
        self.blocks.push(sse_event(
            Some("content_block_delta"),
            &json!({"type":"content_block_delta","index":i,"delta":{"type":"signature_delta","signature":signature}}).to_string(),
        ));
        self.blocks.push(sse_event(
            Some("content_block_stop"),
            &json!({"type":"content_block_stop","index":i}).to_string(),
        ));
        self.index += 1;
        self
    }

    /// A redacted_thinking block carrying `data` (it arrives whole).
    pub fn redacted_thinking(mut self, data: &str) -> Self {
        let i = self.index;
        self.blocks.push(sse_event(
            Some("content_block_start"),
            &json!({"type":"content_block_start","index":i,"content_block":{"type":"redacted_thinking","data":data}}).to_string(),
        ));
        self.blocks.push(sse_event(
            Some("content_block_stop"),
            &json!({"type":"content_block_stop","index":i}).to_string(),
        ));
        self.index += 1;
        self
    }

    /// A tool_use block whose input JSON arrives as `fragments`.
    pub fn tool_use(mut self, id: &str, name: &str, fragments: &[&str]) -> Self {
        let i = self.index;
        self.has_tool = true;
        self.blocks.push(sse_event(
            Some("content_block_start"),
            &json!({"type":"content_block_start","index":i,"content_block":{"type":"tool_use","id":id,"name":name,"input":{}}}).to_string(),
        ));
        for f in std::iter::once(&"").chain(fragments.iter()) {
            self.blocks.push(sse_event(
                Some("content_block_delta"),
                &json!({"type":"content_block_delta","index":i,"delta":{"type":"input_json_delta","partial_json":f}}).to_string(),
            ));
        }
        self.blocks.push(sse_event(
            Some("content_block_stop"),
            &json!({"type":"content_block_stop","index":i}).to_string(),
        ));
        self.index += 1;
        self
    }

    /// The API's own web search: a `server_tool_use` block whose input
    /// (`{"query"}`) streams as deltas, then its `web_search_tool_result`
    /// with one result per (url, title).
    pub fn web_search(mut self, id: &str, query: &str, results: &[(&str, &str)]) -> Self {
        let i = self.index;
        self.blocks.push(sse_event(
            Some("content_block_start"),
            &json!({"type":"content_block_start","index":i,"content_block":{"type":"server_tool_use","id":id,"name":"web_search","input":{}}}).to_string(),
        ));
        let input = json!({"query": query}).to_string();
        let (a, b) = input.split_at(input.len() / 2);
        for f in ["", a, b] {
            self.blocks.push(sse_event(
                Some("content_block_delta"),
                &json!({"type":"content_block_delta","index":i,"delta":{"type":"input_json_delta","partial_json":f}}).to_string(),
            ));
        }
        self.blocks.push(sse_event(
            Some("content_block_stop"),
            &json!({"type":"content_block_stop","index":i}).to_string(),
        ));
        let content: Vec<Value> = results
            .iter()
            .map(|(url, title)| json!({"type":"web_search_result","url":url,"title":title,"encrypted_content":"EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5","page_age":"April 30, 2025"}))
            .collect();
        self.blocks.push(sse_event(
            Some("content_block_start"),
            &json!({"type":"content_block_start","index":i + 1,"content_block":{"type":"web_search_tool_result","tool_use_id":id,"content":content}}).to_string(),
        ));
        self.blocks.push(sse_event(
            Some("content_block_stop"),
            &json!({"type":"content_block_stop","index":i + 1}).to_string(),
        ));
        self.index += 2;
        self
    }

    /// The model name in `message_start`.
    pub fn model(mut self, model: &str) -> Self {
        self.model = model.into();
        self
    }

    /// A keep-alive ping.
    pub fn ping(mut self) -> Self {
        self.blocks
            .push(sse_event(Some("ping"), r#"{"type": "ping"}"#));
        self
    }

    /// Any raw event (e.g. an unknown type).
    pub fn raw(mut self, event: Option<&str>, data: &str) -> Self {
        self.blocks.push(sse_event(event, data));
        self
    }

    /// Usage counts.
    pub fn usage(mut self, input: u64, output: u64, cache_read: u64, cache_creation: u64) -> Self {
        self.input_tokens = input;
        self.output_tokens = output;
        self.cache_read = cache_read;
        self.cache_creation = cache_creation;
        self
    }

    /// The stop reason (default: `tool_use` if a tool was used, else `end_turn`).
    pub fn stop(mut self, reason: &str) -> Self {
        self.stop_reason = Some(reason.into());
        self
    }

    fn start(&self) -> String {
        sse_event(
            Some("message_start"),
            &json!({"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","content":[],"model":self.model,"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":self.input_tokens,"cache_creation_input_tokens":self.cache_creation,"cache_read_input_tokens":self.cache_read,"output_tokens":1}}}).to_string(),
        )
    }

    /// The complete stream.
    pub fn build(self) -> Vec<u8> {
        let reason = self.stop_reason.clone().unwrap_or_else(|| {
            if self.has_tool {
                "tool_use"
            } else {
                "end_turn"
            }
            .into()
        });
        let mut out = self.start();
        out.push_str(&self.blocks.concat());
        out.push_str(&sse_event(
            Some("message_delta"),
            &json!({"type":"message_delta","delta":{"stop_reason":reason,"stop_sequence":null},"usage":{"output_tokens":self.output_tokens}}).to_string(),
        ));
        out.push_str(&sse_event(
            Some("message_stop"),
            r#"{"type":"message_stop"}"#,
        ));
        out.into_bytes()
    }

    /// The stream up to its blocks, then an `error` event instead of the end.
    pub fn build_with_error(self, error_type: &str, message: &str) -> Vec<u8> {
        let mut out = self.start();
        out.push_str(&self.blocks.concat());
        out.push_str(&error_event(error_type, message));
        out.into_bytes()
    }
}

/// A stream answering with text split into `parts`.
pub fn text_stream(parts: &[&str]) -> Vec<u8> {
    StreamBuilder::new().text(parts).build()
}

/// An in-stream `error` event.
pub fn error_event(error_type: &str, message: &str) -> String {
    sse_event(
        Some("error"),
        &json!({"type":"error","error":{"type":error_type,"message":message}}).to_string(),
    )
}

/// An HTTP error body in Anthropic's shape.
pub fn error_body(error_type: &str, message: &str) -> String {
    json!({"type":"error","error":{"type":error_type,"message":message},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}).to_string()
}

/// A non-streaming response with `text`.
pub fn message_json(text: &str) -> String {
    json!({"id":"msg_013Zva2CMHLNnXjNJJKqJ2EF","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":text}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":2095,"output_tokens":503,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}).to_string()
}
