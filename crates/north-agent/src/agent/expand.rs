//! Input expansion: content from outside the message (an MCP prompt used
//! as a slash command, an `@server:uri` resource) put into what the user
//! typed before the model sees it. The agent knows only the trait; the
//! binary wires it to whatever provides the content.

use futures::future::BoxFuture;
use north_protocol::{ContentBlock, ErrorKind, Event, NoticeKind};
use tokio_util::sync::CancellationToken;

use super::{Agent, Emit};

/// What an expander made of an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpandedInput {
    /// The message the model receives instead of the input.
    pub text: String,
    /// What was put in, as the user typed it (`/mcp__s__p`, `@s:uri`).
    pub attached: Vec<String>,
}

/// Why an input could not be expanded: the turn stops before any request
/// and the user is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ExpandError(pub String);

/// Turns a user's input into the message the model receives.
pub trait InputExpander: Send + Sync {
    /// The expanded input, or `None` when there is nothing to put in.
    fn expand<'a>(
        &'a self,
        input: &'a str,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Option<ExpandedInput>, ExpandError>>;
}

impl Agent {
    /// Expands every user input through `expander` from now on.
    pub fn set_input_expander(&mut self, expander: std::sync::Arc<dyn InputExpander>) {
        self.expander = Some(expander);
    }

    /// `input` as the model is to receive it: the expander's content, then
    /// the project files it mentions (`@path`, `@path:10-40`). `Err`
    /// (already told to the user) stops the turn.
    pub(super) async fn expand_input(
        &mut self,
        input: &str,
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        let expanded = match &self.expander {
            None => None,
            Some(expander) => match expander.expand(input, cancel).await {
                Ok(expanded) => expanded,
                Err(e) => {
                    let message = format!("{e}; nothing was sent to the model");
                    emit(Event::Error {
                        kind: ErrorKind::Config,
                        message: message.clone(),
                    });
                    return Err(message);
                }
            },
        };
        let (mut text, mut attached) = match expanded {
            Some(e) => (e.text, e.attached),
            None => (input.to_string(), Vec::new()),
        };
        let mut refused = Vec::new();
        for mention in file_mentions(input) {
            let pdf = north_tools::media::is_pdf_path(mention.path);
            if pdf || north_tools::media::image_media_type(mention.path).is_some() {
                match self.project_attachment(mention.path) {
                    Ok(Some(block)) => {
                        self.push_attachment(block);
                        let kind = if pdf { "Document" } else { "Image" };
                        text.push_str(&format!(
                            "\n\n[{kind} #{}: {}]",
                            self.pending_attachments(),
                            mention.path
                        ));
                        attached.push(mention.token.to_string());
                    }
                    Ok(None) => {}
                    Err(why) => refused.push(format!("{} ({why})", mention.token)),
                }
                continue;
            }
            match self.attach_file(&mention) {
                Ok(Some(block)) => {
                    text.push_str("\n\n");
                    text.push_str(&block);
                    attached.push(mention.token.to_string());
                }
                Ok(None) => {}
                Err(why) => refused.push(format!("{} ({why})", mention.token)),
            }
        }
        if !attached.is_empty() || !refused.is_empty() {
            let mut message = String::new();
            if !attached.is_empty() {
                message = format!("attached {}", attached.join(", "));
            }
            if !refused.is_empty() {
                if !message.is_empty() {
                    message.push_str("; ");
                }
                message.push_str(&format!("not attached: {}", refused.join(", ")));
            }
            emit(Event::Notice {
                kind: NoticeKind::Attached,
                message,
            });
        }
        Ok(text)
    }

    /// The message block for `mention`: `Ok(None)` when it names no file
    /// (plain text that starts with `@`), `Err` when it names one North
    /// will not read (outside the project, a secret `.env`).
    /// An image or PDF the user named with `@path`, inside the project,
    /// ready for the request (an image scaled down when over the
    /// providers' limits).
    fn project_attachment(&self, path: &str) -> Result<Option<ContentBlock>, String> {
        let sandbox = self.services.ctx.sandbox().map_err(|e| e.to_string())?;
        let resolved = match sandbox.resolve_existing(path) {
            Ok(r) => r,
            Err(north_tools::sandbox::SandboxError::NotFound(_)) => return Ok(None),
            Err(e) => return Err(e.to_string()),
        };
        let meta = std::fs::metadata(&resolved.abs).map_err(|e| e.to_string())?;
        if !meta.is_file() {
            return Ok(None);
        }
        if meta.len() > 50 * 1024 * 1024 {
            return Err("over 50 MiB".into());
        }
        let bytes = std::fs::read(&resolved.abs).map_err(|e| e.to_string())?;
        super::images::attachment(path, &bytes)
            .map(Some)
            .map_err(|e| e.to_string())
    }

    fn attach_file(&self, mention: &FileMention<'_>) -> Result<Option<String>, String> {
        let sandbox = self.services.ctx.sandbox().map_err(|e| e.to_string())?;
        let resolved = match sandbox.resolve_existing(mention.path) {
            Ok(r) => r,
            Err(north_tools::sandbox::SandboxError::NotFound(_)) => return Ok(None),
            Err(e) => {
                // Text that only looks like a path (`@team`) is not refused.
                if mention.path.contains('/') || mention.range.is_some() {
                    return Err(e.to_string());
                }
                return Ok(None);
            }
        };
        let meta = std::fs::metadata(&resolved.abs).map_err(|e| e.to_string())?;
        if !meta.is_file() {
            return Ok(None);
        }
        if meta.len() > 8 * 1024 * 1024 {
            return Err("over 8 MiB; ask for it to be read with read_file".into());
        }
        let name = resolved.rel.rsplit('/').next().unwrap_or("");
        if north_tools::repo::is_secret_env_file(name) {
            return Err("a secret .env file".into());
        }
        let bytes = std::fs::read(&resolved.abs).map_err(|e| e.to_string())?;
        if bytes.contains(&0) {
            return Err("binary".into());
        }
        let content = String::from_utf8_lossy(&bytes);
        let (body, lines) = match mention.range {
            Some((from, to)) => {
                let total = content.lines().count();
                if from == 0 || from > to || from > total {
                    return Err(format!("the file has {total} lines"));
                }
                let to = to.min(total);
                let body: Vec<&str> = content.lines().skip(from - 1).take(to - from + 1).collect();
                (body.join("\n"), format!(" lines=\"{from}-{to}\""))
            }
            None => (content.into_owned(), String::new()),
        };
        let mut body: String = body.chars().take(FILE_CHARS).collect();
        if body.len() < bytes.len() && mention.range.is_none() && body.chars().count() == FILE_CHARS
        {
            body.push_str("\n[… cut: read_file reads the rest]");
        }
        Ok(Some(format!(
            "<file path=\"{}\"{lines}>\n{}\n</file>",
            resolved.rel,
            body.trim_end_matches('\n')
        )))
    }
}

/// Characters of one attached file kept in the message.
const FILE_CHARS: usize = 100_000;

/// A `@path` or `@path:FROM-TO` mention in a user's input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileMention<'a> {
    /// The token as typed.
    pub token: &'a str,
    /// The path part.
    pub path: &'a str,
    /// 1-based inclusive line range.
    pub range: Option<(usize, usize)>,
}

/// Every `@…` token of `input` that could name a file.
pub(crate) fn file_mentions(input: &str) -> Vec<FileMention<'_>> {
    input
        .split_whitespace()
        .filter_map(|token| {
            let body = token.strip_prefix('@')?;
            let body = body.trim_end_matches([',', ';', '!', '?', ')', '"', '\'']);
            let body = body.strip_suffix('.').unwrap_or(body);
            if body.is_empty() {
                return None;
            }
            let (path, range) = match body.rsplit_once(':') {
                Some((path, r))
                    if !path.is_empty() && r.chars().all(|c| c.is_ascii_digit() || c == '-') =>
                {
                    let range = match r.split_once('-') {
                        Some((a, b)) => (a.parse().ok()?, b.parse().ok()?),
                        None => {
                            let n = r.parse().ok()?;
                            (n, n)
                        }
                    };
                    (path, Some(range))
                }
                _ => (body, None),
            };
            Some(FileMention { token, path, range })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_take_paths_and_line_ranges() {
        let found = file_mentions("see @src/main.rs:10-40, @README.md. and @x:7 mail@me @");
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(
            (found[0].path, found[0].range),
            ("src/main.rs", Some((10, 40)))
        );
        assert_eq!((found[1].path, found[1].range), ("README.md", None));
        assert_eq!((found[2].path, found[2].range), ("x", Some((7, 7))));
        assert_eq!(
            file_mentions("@docs:file:///a.md")[0].path,
            "docs:file:///a.md"
        );
    }
}
