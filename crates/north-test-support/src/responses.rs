//! OpenAI Responses API wire format: stream and body builders.

use serde_json::{Value, json};

use crate::sse_event;

/// Builds a Responses API SSE stream event by event: `response.created`,
/// then one output item per builder call, then `response.completed` (or
/// `response.incomplete` / `response.failed`).
#[derive(Debug, Clone)]
pub struct StreamBuilder {
    model: String,
    events: Vec<Value>,
    items: Vec<Value>,
    usage: Value,
    incomplete: Option<String>,
}

impl Default for StreamBuilder {
    fn default() -> Self {
        Self::new()
    }
}

const RESPONSE_ID: &str = "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b";

impl StreamBuilder {
    /// An empty stream from `gpt-5.2`.
    pub fn new() -> Self {
        StreamBuilder {
            model: "gpt-5.2".into(),
            events: Vec::new(),
            items: Vec::new(),
            usage: json!({"input_tokens": 36, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 87, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 123}),
            incomplete: None,
        }
    }

    fn index(&self) -> usize {
        self.items.len()
    }

    fn event(&mut self, mut v: Value) {
        let n = self.events.len() as u64 + 1;
        v["sequence_number"] = json!(n);
        self.events.push(v);
    }

    /// A reasoning item whose summary streams as `parts` (each part one
    /// summary paragraph, streamed in two deltas), carrying `encrypted`.
    pub fn reasoning(mut self, id: &str, parts: &[&str], encrypted: &str) -> Self {
        let i = self.index();
        self.event(json!({"type": "response.output_item.added", "output_index": i, "item": {"id": id, "type": "reasoning", "summary": []}}));
        for (s, part) in parts.iter().enumerate() {
            self.event(json!({"type": "response.reasoning_summary_part.added", "item_id": id, "output_index": i, "summary_index": s, "part": {"type": "summary_text", "text": ""}}));
            let mid = part.len() / 2;
            let cut = (0..=mid)
                .rev()
                .find(|c| part.is_char_boundary(*c))
                .unwrap_or(0);
            for piece in [&part[..cut], &part[cut..]] {
                self.event(json!({"type": "response.reasoning_summary_text.delta", "item_id": id, "output_index": i, "summary_index": s, "delta": piece}));
            }
            self.event(json!({"type": "response.reasoning_summary_text.done", "item_id": id, "output_index": i, "summary_index": s, "text": part}));
            self.event(json!({"type": "response.reasoning_summary_part.done", "item_id": id, "output_index": i, "summary_index": s, "part": {"type": "summary_text", "text": part}}));
        }
        let item = json!({"id": id, "type": "reasoning", "summary": parts.iter().map(|p| json!({"type": "summary_text", "text": p})).collect::<Vec<_>>(), "encrypted_content": encrypted});
        self.event(json!({"type": "response.output_item.done", "output_index": i, "item": item}));
        self.items.push(item);
        self
    }

    /// A message item whose text streams as `parts`.
    pub fn text(mut self, parts: &[&str]) -> Self {
        let i = self.index();
        let id = format!("msg_67ccd3acc8d48190a77525dc6de64b4104becb25c7d1d{i:03}");
        self.event(json!({"type": "response.output_item.added", "output_index": i, "item": {"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}}));
        self.event(json!({"type": "response.content_part.added", "item_id": id, "output_index": i, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}));
        for p in parts {
            self.event(json!({"type": "response.output_text.delta", "item_id": id, "output_index": i, "content_index": 0, "delta": p}));
        }
        let text = parts.concat();
        self.event(json!({"type": "response.output_text.done", "item_id": id, "output_index": i, "content_index": 0, "text": text}));
        let part = json!({"type": "output_text", "text": text, "annotations": []});
        self.event(json!({"type": "response.content_part.done", "item_id": id, "output_index": i, "content_index": 0, "part": part}));
        let item = json!({"id": id, "type": "message", "status": "completed", "role": "assistant", "content": [part]});
        self.event(json!({"type": "response.output_item.done", "output_index": i, "item": item}));
        self.items.push(item);
        self
    }

    /// A function call whose arguments stream as `fragments`.
    pub fn function_call(mut self, call_id: &str, name: &str, fragments: &[&str]) -> Self {
        let i = self.index();
        let id = format!("fc_67ccd3acc8d48190a77525dc6de64b4104becb25c7d1d{i:03}");
        self.event(json!({"type": "response.output_item.added", "output_index": i, "item": {"id": id, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call_id, "name": name}}));
        for f in fragments {
            self.event(json!({"type": "response.function_call_arguments.delta", "item_id": id, "output_index": i, "delta": f}));
        }
        let args = fragments.concat();
        self.event(json!({"type": "response.function_call_arguments.done", "item_id": id, "output_index": i, "arguments": args}));
        let item = json!({"id": id, "type": "function_call", "status": "completed", "arguments": args, "call_id": call_id, "name": name});
        self.event(json!({"type": "response.output_item.done", "output_index": i, "item": item}));
        self.items.push(item);
        self
    }

    /// The API's own web search: a `web_search_call` item for `query`.
    pub fn web_search(mut self, query: &str) -> Self {
        let i = self.index();
        let id = format!("ws_67ccf18ef5fc8190b16dbee19bc54e5f087bb177ab789d5c{i:03}");
        self.event(json!({"type": "response.output_item.added", "output_index": i, "item": {"id": id, "type": "web_search_call", "status": "in_progress"}}));
        self.event(json!({"type": "response.web_search_call.in_progress", "item_id": id, "output_index": i}));
        self.event(
            json!({"type": "response.web_search_call.searching", "item_id": id, "output_index": i}),
        );
        self.event(
            json!({"type": "response.web_search_call.completed", "item_id": id, "output_index": i}),
        );
        let item = json!({"id": id, "type": "web_search_call", "status": "completed", "action": {"type": "search", "query": query}});
        self.event(json!({"type": "response.output_item.done", "output_index": i, "item": item}));
        self.items.push(item);
        self
    }

    /// Usage counts.
    pub fn usage(mut self, input: u64, output: u64, cached: u64, reasoning: u64) -> Self {
        self.usage = json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": cached}, "output_tokens": output, "output_tokens_details": {"reasoning_tokens": reasoning}, "total_tokens": input + output});
        self
    }

    /// End with `response.incomplete` for `reason` (e.g. `max_output_tokens`).
    pub fn incomplete(mut self, reason: &str) -> Self {
        self.incomplete = Some(reason.into());
        self
    }

    fn response(&self, status: &str) -> Value {
        json!({
            "id": RESPONSE_ID, "object": "response", "created_at": 1_741_290_958, "status": status,
            "error": null,
            "incomplete_details": self.incomplete.as_ref().map(|r| json!({"reason": r})),
            "model": self.model, "output": if status == "in_progress" { json!([]) } else { json!(self.items) },
            "parallel_tool_calls": true, "store": false,
            "usage": if status == "in_progress" { Value::Null } else { self.usage.clone() },
        })
    }

    fn head(&self) -> String {
        let mut out = sse(
            "response.created",
            &json!({"type": "response.created", "sequence_number": 0, "response": self.response("in_progress")}),
        );
        out.push_str(&sse("response.in_progress", &json!({"type": "response.in_progress", "sequence_number": 0, "response": self.response("in_progress")})));
        for e in &self.events {
            out.push_str(&sse(e["type"].as_str().unwrap_or("message"), e));
        }
        out
    }

    /// The complete stream.
    pub fn build(self) -> Vec<u8> {
        let mut out = self.head();
        let (ty, status) = match self.incomplete {
            Some(_) => ("response.incomplete", "incomplete"),
            None => ("response.completed", "completed"),
        };
        out.push_str(&sse(ty, &json!({"type": ty, "sequence_number": self.events.len() + 1, "response": self.response(status)})));
        out.into_bytes()
    }

    /// The stream up to its items, then `response.failed` with `code`.
    pub fn build_failed(self, code: &str, message: &str) -> Vec<u8> {
        let mut out = self.head();
        let mut response = self.response("failed");
        response["error"] = json!({"code": code, "message": message});
        out.push_str(&sse("response.failed", &json!({"type": "response.failed", "sequence_number": self.events.len() + 1, "response": response})));
        out.into_bytes()
    }

    /// The stream up to its items, then a bare `error` event.
    pub fn build_with_error(self, code: &str, message: &str) -> Vec<u8> {
        let mut out = self.head();
        out.push_str(&sse("error", &json!({"type": "error", "sequence_number": self.events.len() + 1, "code": code, "message": message, "param": null})));
        out.into_bytes()
    }

    /// The non-streaming response body with the same items.
    pub fn response_json(&self) -> String {
        let status = if self.incomplete.is_some() {
            "incomplete"
        } else {
            "completed"
        };
        self.response(status).to_string()
    }
}

fn sse(event: &str, data: &Value) -> String {
    sse_event(Some(event), &data.to_string())
}

/// A stream answering with text split into `parts`.
pub fn text_stream(parts: &[&str]) -> Vec<u8> {
    StreamBuilder::new().text(parts).build()
}

/// An HTTP error body in OpenAI's shape.
pub fn error_body(error_type: &str, message: &str) -> String {
    crate::openai::error_body(error_type, message)
}
