//! Provider-neutral requests and complete responses.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::{ContentBlock, Message};
use crate::stream::{StopReason, Usage};
use crate::tool::{ToolCall, ToolSpec};

/// Everything a backend needs to ask a model for one response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// Model name as the provider knows it.
    pub model: String,
    /// System instructions, sent in the provider's system slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    /// JSON Schema the final answer must follow, when structured output is wanted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Maximum output tokens.
    pub max_tokens: u32,
    /// Sampling temperature, if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop_sequences: Vec<String>,
    /// How much the model may reason before answering (Anthropic extended
    /// thinking, OpenAI reasoning effort); None: the provider's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<ReasoningEffort>,
    /// Tools the provider runs itself, where its API has them (ignored
    /// where it does not).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_tools: Vec<ServerTool>,
    /// A key that groups requests sharing a prefix (the session id), so a
    /// provider's prompt cache finds the earlier ones (OpenAI's
    /// `prompt_cache_key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_key: Option<String>,
}

/// A tool the provider runs on its side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerTool {
    /// The provider's web search (Anthropic `web_search_20250305`, OpenAI
    /// Responses `web_search`).
    WebSearch,
}

/// How much reasoning (thinking) a model may do before it answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningEffort {
    /// No reasoning where the model allows it (Anthropic: thinking off).
    Off,
    /// A little.
    Low,
    /// A moderate amount.
    Medium,
    /// As much as useful.
    High,
}

impl ReasoningEffort {
    /// The name as written in config files and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Off => "off",
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }
}

impl ChatRequest {
    /// A request for `model` with one user message and default limits.
    pub fn new(model: impl Into<String>, messages: Vec<Message>) -> Self {
        ChatRequest {
            model: model.into(),
            system: None,
            messages,
            tools: Vec::new(),
            output_schema: None,
            max_tokens: 8192,
            temperature: None,
            stop_sequences: Vec::new(),
            reasoning: None,
            cache_key: None,
            server_tools: Vec::new(),
        }
    }
}

/// A complete model response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ChatResponse {
    /// Provider response id.
    pub id: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// Text and tool calls, in order.
    pub content: Vec<ContentBlock>,
    /// Why the model stopped (None if the stream ended without saying).
    pub stop_reason: Option<StopReason>,
    /// The stop sequence that matched, if any.
    pub stop_sequence: Option<String>,
    /// Token usage.
    pub usage: Usage,
}

impl ChatResponse {
    /// The concatenated text of the response.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let ContentBlock::Text { text } = block {
                out.push_str(text);
            }
        }
        out
    }

    /// The tool calls of the response, in order.
    pub fn tool_calls(&self) -> Vec<&ToolCall> {
        self.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolCall(c) => Some(c),
                _ => None,
            })
            .collect()
    }
}
