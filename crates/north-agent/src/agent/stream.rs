//! Streaming one model response to the front end: text with protocol
//! blocks hidden and secrets scrubbed across delta boundaries, thinking as
//! its own events, and the complete response assembled for the turn loop.

use futures::StreamExt;
use north_llm::{LlmError, ResponseBuilder};
use north_protocol::{ChatRequest, Event, StreamDelta, TraceKind};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Agent, Emit};
use crate::redact::StreamScrubber;
use north_protocol::blocks::BlockFilter;

impl Agent {
    pub(super) async fn stream(
        &mut self,
        request: ChatRequest,
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> (
        north_protocol::ChatResponse,
        String,
        Vec<north_protocol::blocks::Block>,
        Option<LlmError>,
    ) {
        let mut stream = self.services.backend.stream_chat(request, cancel.clone());
        let mut builder = ResponseBuilder::new();
        let mut filter = BlockFilter::new();
        // A key the model repeats can arrive split across deltas; each
        // event is scrubbed whole later, so the split is mended here.
        let redactor = self.services.redactor.clone();
        let mut text_scrub = StreamScrubber::new(&redactor);
        let mut thinking_scrub = StreamScrubber::new(&redactor);
        let mut visible = String::new();
        let mut failure = None;
        let mut deltas = 0u64;
        while let Some(item) = stream.next().await {
            match item {
                Ok(delta) => {
                    deltas += 1;
                    match &delta {
                        StreamDelta::Text { text } => {
                            let shown = text_scrub.push(&filter.feed(text));
                            if !shown.is_empty() {
                                visible.push_str(&shown);
                                emit(Event::AssistantText { text: shown });
                            }
                        }
                        StreamDelta::Thinking { text } => {
                            let shown = thinking_scrub.push(text);
                            if !shown.is_empty() {
                                emit(Event::Thinking { text: shown });
                            }
                        }
                        _ => {}
                    }
                    builder.push(&delta);
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let thinking_tail = thinking_scrub.finish();
        if !thinking_tail.is_empty() {
            emit(Event::Thinking {
                text: thinking_tail,
            });
        }
        let (tail, blocks) = filter.finish();
        let mut tail = text_scrub.push(&tail);
        tail.push_str(&text_scrub.finish());
        if !tail.is_empty() {
            visible.push_str(&tail);
            emit(Event::AssistantText { text: tail });
        }
        self.services.tracer.record(
            TraceKind::LlmStream,
            json!({"deltas": deltas, "failed": failure.is_some()}),
        );
        (builder.finish(), visible, blocks, failure)
    }
}
