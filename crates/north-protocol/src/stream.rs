//! What a model stream yields.

use serde::{Deserialize, Serialize};

/// Token usage reported by a provider. Counts a provider does not report are 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Usage {
    /// Input tokens billed at the normal rate.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the provider's prompt cache.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// Of `output_tokens`, those spent on reasoning (thinking). Already
    /// counted in `output_tokens`; an estimate where the provider does not
    /// report it (Anthropic).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Adds another usage report to this one, saturating: a server that
    /// reports absurd counts cannot make North panic or wrap around.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_input_tokens = self
            .cache_read_input_tokens
            .saturating_add(other.cache_read_input_tokens);
        self.cache_creation_input_tokens = self
            .cache_creation_input_tokens
            .saturating_add(other.cache_creation_input_tokens);
        self.reasoning_tokens = self.reasoning_tokens.saturating_add(other.reasoning_tokens);
    }

    /// Merges a later report of the same response: non-zero fields replace.
    /// Providers send cumulative counts, so the latest non-zero value wins.
    pub fn merge_latest(&mut self, later: &Usage) {
        let pick = |a: &mut u64, b: u64| {
            if b != 0 {
                *a = b;
            }
        };
        pick(&mut self.input_tokens, later.input_tokens);
        pick(&mut self.output_tokens, later.output_tokens);
        pick(
            &mut self.cache_read_input_tokens,
            later.cache_read_input_tokens,
        );
        pick(
            &mut self.cache_creation_input_tokens,
            later.cache_creation_input_tokens,
        );
        pick(&mut self.reasoning_tokens, later.reasoning_tokens);
    }

    /// Total tokens (all input kinds plus output).
    pub fn total(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.output_tokens)
            .saturating_add(self.cache_read_input_tokens)
            .saturating_add(self.cache_creation_input_tokens)
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model wants tools run.
    ToolUse,
    /// The output token limit was hit.
    MaxTokens,
    /// A stop sequence matched.
    StopSequence,
    /// The provider filtered the output.
    ContentFilter,
    /// The model refused.
    Refusal,
    /// Any other reason, kept verbatim.
    Other(String),
}

/// One increment of a streamed model response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamDelta {
    /// The response started.
    Start {
        /// Provider response id, if any.
        id: Option<String>,
        /// The model that answers.
        model: Option<String>,
    },
    /// A piece of assistant text.
    Text {
        /// The text piece.
        text: String,
    },
    /// A piece of the model's reasoning: Anthropic thinking text or an
    /// OpenAI reasoning summary. Consecutive pieces form one block.
    Thinking {
        /// The text piece.
        text: String,
    },
    /// The signature that closes the current thinking block (Anthropic).
    ThinkingSignature {
        /// The opaque signature.
        signature: String,
    },
    /// A whole redacted (encrypted) thinking block (Anthropic).
    RedactedThinking {
        /// The opaque encrypted reasoning.
        data: String,
    },
    /// A complete OpenAI reasoning item. Its summary was streamed as
    /// [`StreamDelta::Thinking`] pieces, which this item replaces.
    Reasoning {
        /// The item id.
        id: String,
        /// The summary parts.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        summary: Vec<String>,
        /// The encrypted reasoning, when requested.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
    /// A whole block of a tool the provider ran itself (its web search),
    /// kept to be passed back to the same API.
    Hosted {
        /// Where it came from.
        api: crate::HostedApi,
        /// The block or item as the API sent it.
        raw: serde_json::Value,
    },
    /// A tool call begins. `index` identifies it in later deltas.
    ToolCallStart {
        /// Position of the call within the response.
        index: usize,
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// A fragment of a tool call's JSON arguments.
    ToolCallArgs {
        /// Which call.
        index: usize,
        /// The raw fragment; concatenated fragments form the arguments JSON.
        fragment: String,
    },
    /// A tool call's arguments are complete.
    ToolCallEnd {
        /// Which call.
        index: usize,
    },
    /// Usage so far (cumulative for this response).
    Usage(Usage),
    /// The response ended.
    Stop {
        /// Why.
        reason: StopReason,
        /// The stop sequence that matched, if any.
        stop_sequence: Option<String>,
    },
}
