//! Provider-neutral chat messages.

use serde::{Deserialize, Serialize};

use crate::tool::ToolCall;

/// Who authored a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions from the host; providers that take a separate system
    /// field receive these there.
    System,
    /// The human (or the program driving North).
    User,
    /// The model.
    Assistant,
    /// Results of tool calls, sent back to the model.
    Tool,
}

impl Role {
    /// The role's name on the wire (`system`, `user`, `assistant`, `tool`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// The API a [`ContentBlock::Hosted`] block came from, the only one it
/// goes back to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostedApi {
    /// The Anthropic Messages API (`server_tool_use`,
    /// `web_search_tool_result`).
    Anthropic,
    /// The OpenAI Responses API (`web_search_call`).
    Responses,
}

/// One piece of a message's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// A tool invocation requested by the model.
    ToolCall(ToolCall),
    /// The result of a tool invocation, answering the call with `call_id`.
    ToolResult {
        /// The id of the [`ToolCall`] this answers.
        call_id: String,
        /// The result as text (North sends structured JSON serialized here).
        content: String,
        /// Whether the tool failed; providers surface this to the model.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// An image the model sees: one the user attached, or one a tool read
    /// (then it follows the tool result it belongs to).
    Image {
        /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
        media_type: String,
        /// The bytes, base64 encoded.
        data: String,
    },
    /// A PDF the user attached (`@doc.pdf`): Anthropic reads the document
    /// itself; other providers receive the text of its pages.
    Document {
        /// The file's name as the user gave it.
        name: String,
        /// `application/pdf`.
        media_type: String,
        /// The bytes, base64 encoded.
        data: String,
        /// The text of each page, in order (what providers without
        /// document input read).
        pages: Vec<String>,
    },
    /// A tool the provider ran itself (its web search): the call or its
    /// result exactly as the API sent it, passed back unchanged to that
    /// API within the conversation and never to another.
    Hosted {
        /// Where it came from.
        api: HostedApi,
        /// The block or item as the API sent it.
        raw: serde_json::Value,
    },
    /// The model's reasoning as Anthropic's extended thinking returns it.
    /// Within a tool loop the API needs it back unchanged, signature
    /// included; other providers never receive it.
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// The provider's signature over the text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// Reasoning the provider returned encrypted (Anthropic
    /// `redacted_thinking`); passed back unchanged like [`ContentBlock::Thinking`].
    RedactedThinking {
        /// The opaque encrypted reasoning.
        data: String,
    },
    /// A reasoning item of the OpenAI Responses API. With `store: false` the
    /// encrypted content is what carries the model's reasoning across a tool
    /// loop; other providers never receive it.
    Reasoning {
        /// The item id the provider gave (not sent back: items are not stored).
        id: String,
        /// The reasoning summary, one entry per summary part.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        summary: Vec<String>,
        /// The encrypted reasoning, when requested.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }

    /// Whether this block is an image.
    pub fn is_image(&self) -> bool {
        matches!(self, ContentBlock::Image { .. })
    }

    /// What a hosted tool call searched for (`None` for its result or
    /// another hosted block).
    pub fn hosted_search_query(&self) -> Option<&str> {
        let ContentBlock::Hosted { raw, .. } = self else {
            return None;
        };
        match raw.get("type")?.as_str()? {
            "server_tool_use" => raw.get("input")?.get("query")?.as_str(),
            "web_search_call" => raw.get("action")?.get("query")?.as_str(),
            _ => None,
        }
    }

    /// The text of a document's pages as providers without document input
    /// receive it, each page marked.
    pub fn document_text(name: &str, pages: &[String]) -> String {
        let mut out = format!("<document name=\"{name}\" pages=\"{}\">", pages.len());
        for (i, page) in pages.iter().enumerate() {
            out.push_str(&format!("\n--- page {} ---\n{}", i + 1, page.trim()));
        }
        out.push_str("\n</document>");
        out
    }

    /// Whether this block is the model's reasoning (thinking, redacted
    /// thinking or a reasoning item), which only its own provider and model
    /// can take back.
    pub fn is_reasoning(&self) -> bool {
        matches!(
            self,
            ContentBlock::Thinking { .. }
                | ContentBlock::RedactedThinking { .. }
                | ContentBlock::Reasoning { .. }
        )
    }
}

/// A chat message: a role and its content blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// The author.
    pub role: Role,
    /// The content, in order.
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// A message holding a single text block.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Message {
            role,
            content: vec![ContentBlock::text(text)],
        }
    }

    /// A user message with text.
    pub fn user(text: impl Into<String>) -> Self {
        Message::text(Role::User, text)
    }

    /// An assistant message with text.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::text(Role::Assistant, text)
    }

    /// The concatenated text blocks of this message.
    pub fn text_content(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let ContentBlock::Text { text } = block {
                out.push_str(text);
            }
        }
        out
    }

    /// The tool calls in this message, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|b| match b {
            ContentBlock::ToolCall(call) => Some(call),
            _ => None,
        })
    }
}
