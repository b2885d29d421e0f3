//! Condensation: when the context nears its budget, older messages are
//! summarized by the model into `episode_summary` and dropped; the State
//! (goals, open loops, decisions, constraints) and the summary are
//! re-injected through the system prompt, so the task survives.

use north_protocol::{ContentBlock, Message, Role};

/// Rough token estimate (4 bytes a token) of messages.
pub fn estimate_tokens(messages: &[Message]) -> u64 {
    /// What an image costs a model, about (a ~1.5-megapixel picture).
    const IMAGE_TOKENS: u64 = 1_600;
    messages
        .iter()
        .map(|m| {
            let bytes = serde_json::to_string(m).map(|s| s.len()).unwrap_or(0) as u64;
            // An image's or a document's base64 is not text the model
            // reads; a document's pages are (a page image costs more).
            let (images, image_bytes) =
                m.content.iter().fold((0, 0), |(n, b), block| match block {
                    ContentBlock::Image { data, .. } => (n + 1, b + data.len() as u64),
                    ContentBlock::Document { data, pages, .. } => {
                        (n + pages.len() as u64, b + data.len() as u64)
                    }
                    _ => (n, b),
                });
            bytes.saturating_sub(image_bytes) / 4 + 4 + images * IMAGE_TOKENS
        })
        .sum()
}

/// Whether `m` is something the user typed (not a tool result).
pub(crate) fn is_user_input(m: &Message) -> bool {
    m.role == Role::User
        && !m
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolResult { .. }))
}

/// Where to cut so that the kept tail fits `keep_tokens` and starts at a
/// user input or an assistant message — never between a tool call and its
/// result. `None` when nothing worthwhile can be dropped. A long single
/// turn has one user message, so cutting before an assistant message is
/// what lets it condense at all.
pub(crate) fn split_point(messages: &[Message], keep_tokens: u64) -> Option<usize> {
    let mut kept = 0u64;
    let mut best = None;
    for i in (0..messages.len()).rev() {
        kept += estimate_tokens(std::slice::from_ref(&messages[i]));
        let boundary = is_user_input(&messages[i]) || messages[i].role == Role::Assistant;
        if boundary && i > 0 {
            best = Some(i);
            if kept >= keep_tokens {
                break;
            }
        }
    }
    best
}

/// A plain transcript of messages for the summarizer (tool payloads cut).
pub fn transcript(messages: &[Message]) -> String {
    let mut out = String::new();
    for m in messages {
        let role = match m.role {
            Role::User => "USER",
            Role::Assistant => "ASSISTANT",
            Role::Tool => "TOOL",
            Role::System => "SYSTEM",
        };
        for b in &m.content {
            let text = match b {
                ContentBlock::Text { text } => text.clone(),
                ContentBlock::ToolCall(c) => format!("[calls {} {}]", c.name, c.arguments),
                ContentBlock::ToolResult {
                    content, is_error, ..
                } => {
                    format!(
                        "[result{}] {}",
                        if *is_error { " (error)" } else { "" },
                        content
                    )
                }
                ContentBlock::Image { media_type, .. } => format!("[an image, {media_type}]"),
                ContentBlock::Document { name, pages, .. } => {
                    format!("[a document, {name}, {} pages]", pages.len())
                }
                ContentBlock::Hosted { .. } => match b.hosted_search_query() {
                    Some(query) => format!("[searched the web: {query}]"),
                    None => continue,
                },
                // The summary is of what was said and done, not the reasoning.
                ContentBlock::Thinking { .. }
                | ContentBlock::RedactedThinking { .. }
                | ContentBlock::Reasoning { .. } => continue,
            };
            let cut: String = text.chars().take(1500).collect();
            out.push_str(&format!("{role}: {cut}\n"));
        }
    }
    out
}

/// Instructions for the summarizing request.
pub const SUMMARY_INSTRUCTIONS: &str = "Summarize the conversation below for your own future use, in under 250 words: what the user wants, what was done (files read or changed, commands run and their results), decisions, and what is still open. Keep exact names, paths and numbers. Output only the summary.";
