//! What servers offer besides tools: reading a resource and getting a
//! prompt, as text for a message, and expanding a user's input — a prompt
//! used as a slash command (`/mcp__server__prompt args`) and resources
//! mentioned as `@server:uri` — into the message the model receives.

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::hub::McpHub;
use crate::status::McpError;
use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams};

impl McpHub {
    /// The text of resource `uri` on `server` (binary parts are saved as
    /// attachments and named).
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<String, McpError> {
        let s = self.server(server)?;
        let params: ReadResourceRequestParams =
            serde_json::from_value(serde_json::json!({ "uri": uri })).map_err(|e| {
                McpError::Request {
                    server: server.into(),
                    message: e.to_string(),
                }
            })?;
        let result = s
            .request(&self.opts, cancel, |peer| {
                let params = params.clone();
                async move { peer.read_resource(params).await }
            })
            .await?;
        let value = serde_json::to_value(&result).unwrap_or(Value::Null);
        let mut text = String::new();
        for part in value
            .get("contents")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(t) = part.get("text").and_then(Value::as_str) {
                text.push_str(t);
            } else if let Some(blob) = part.get("blob").and_then(Value::as_str) {
                let mime = part
                    .get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("application/octet-stream");
                match crate::result::save_attachment(&self.opts.attachments, blob, mime) {
                    Ok(path) => text.push_str(&format!(
                        "[binary {mime} content saved to {}]",
                        path.display()
                    )),
                    Err(e) => text.push_str(&format!("[binary {mime} content not saved: {e}]")),
                }
            }
        }
        Ok(text)
    }

    /// The messages of prompt `name` on `server` with `arguments`, as text
    /// (each message's role, then its text).
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Result<String, McpError> {
        let s = self.server(server)?;
        let params: GetPromptRequestParams =
            serde_json::from_value(serde_json::json!({ "name": name, "arguments": arguments }))
                .map_err(|e| McpError::Request {
                    server: server.into(),
                    message: e.to_string(),
                })?;
        let result = s
            .request(&self.opts, cancel, |peer| {
                let params = params.clone();
                async move { peer.get_prompt(params).await }
            })
            .await?;
        let value = serde_json::to_value(&result).unwrap_or(Value::Null);
        let mut out = Vec::new();
        for message in value
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let content = message.get("content").cloned().unwrap_or(Value::Null);
            let text = match content.get("text").and_then(Value::as_str) {
                Some(t) => t.to_string(),
                None => match content.get("resource").and_then(|r| r.get("text")) {
                    Some(Value::String(t)) => t.clone(),
                    _ => content.to_string(),
                },
            };
            out.push(text);
        }
        Ok(out.join("\n\n"))
    }
}

/// Characters of one attached resource kept in the message.
const RESOURCE_CHARS: usize = 100_000;

/// A user's input with MCP prompts and resources put in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expansion {
    /// The message the model receives.
    pub text: String,
    /// What was put in, for the user: `/mcp__s__p`, `@s:uri`, ...
    pub attached: Vec<String>,
}

/// What one server offers besides tools, as the user types it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Offers {
    /// Resources as `@server:uri` mentions, with their names.
    pub resources: Vec<(String, String)>,
    /// Prompts as slash commands (`/mcp__server__prompt`), with their
    /// descriptions.
    pub prompts: Vec<(String, String)>,
}

/// A `@server:uri` mention in `input`: (the token as typed, server, uri).
fn mentions<'a>(input: &'a str, servers: &[&str]) -> Vec<(&'a str, &'a str, &'a str)> {
    input
        .split_whitespace()
        .filter_map(|token| {
            let body = token.strip_prefix('@')?;
            // Sentence punctuation after a mention is not part of the uri.
            let body = body.trim_end_matches(['.', ',', ';', '!', '?', ')', '"', '\'']);
            let (server, uri) = body.split_once(':')?;
            (servers.contains(&server) && !uri.is_empty()).then_some((token, server, uri))
        })
        .collect()
}

/// Arguments for prompt `arguments` from what followed the command:
/// `key=value` words, or, for a prompt with arguments, the whole rest as
/// its first argument.
fn prompt_arguments(
    command: &str,
    rest: &str,
    arguments: &[(String, bool)],
) -> Result<Map<String, Value>, McpError> {
    let mut map = Map::new();
    let words: Vec<&str> = rest.split_whitespace().collect();
    let named = !words.is_empty()
        && words.iter().all(|w| {
            w.split_once('=')
                .is_some_and(|(k, _)| arguments.iter().any(|(name, _)| name == k))
        });
    if named {
        for w in words {
            if let Some((k, v)) = w.split_once('=') {
                map.insert(k.to_string(), Value::String(v.to_string()));
            }
        }
    } else if !rest.trim().is_empty() {
        let Some((first, _)) = arguments.first() else {
            return Err(McpError::Input(format!(
                "{command} takes no arguments; send it alone"
            )));
        };
        map.insert(first.clone(), Value::String(rest.trim().to_string()));
    }
    let missing: Vec<&str> = arguments
        .iter()
        .filter(|(name, required)| *required && !map.contains_key(name))
        .map(|(name, _)| name.as_str())
        .collect();
    if !missing.is_empty() {
        let usage: Vec<String> = arguments
            .iter()
            .map(|(name, required)| {
                if *required {
                    format!("{name}=…")
                } else {
                    format!("[{name}=…]")
                }
            })
            .collect();
        return Err(McpError::Input(format!(
            "{command} needs {}: {command} {}",
            missing.join(", "),
            usage.join(" ")
        )));
    }
    Ok(map)
}

impl McpHub {
    /// Puts MCP content into a user's input: a prompt used as a slash
    /// command (`/mcp__server__prompt` followed by `key=value` words, or by
    /// free text for its first argument) is replaced by the prompt's
    /// messages, and each `@server:uri` mention of a configured server gets
    /// the resource's contents appended. `None` when the input uses
    /// neither.
    pub async fn expand_input(
        &self,
        input: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<Expansion>, McpError> {
        let mut text = input.to_string();
        let mut attached = Vec::new();
        let servers: Vec<&str> = self.servers.iter().map(|s| s.name()).collect();
        let found = mentions(input, &servers);
        let trimmed = input.trim_start();
        if let Some(command) = trimmed
            .split_whitespace()
            .next()
            .filter(|c| c.starts_with("/mcp__"))
        {
            // Mentions are attachments, not the prompt's arguments.
            let rest: Vec<&str> = trimmed[command.len()..]
                .split_whitespace()
                .filter(|w| !found.iter().any(|(token, _, _)| token == w))
                .collect();
            let rest = rest.join(" ");
            let name = &command[1..];
            let (server, prompt) = self.find_prompt(name).await?;
            let arguments = prompt_arguments(command, &rest, &prompt.arguments)?;
            text = self
                .get_prompt(&server, &prompt.name, arguments, cancel)
                .await?;
            attached.push(command.to_string());
        }
        for (token, server, uri) in found {
            let mut content = self.read_resource(server, uri, cancel).await?;
            if content.chars().count() > RESOURCE_CHARS {
                content = content.chars().take(RESOURCE_CHARS).collect();
                content.push_str("\n[… cut: the resource is longer]");
            }
            text.push_str(&format!(
                "\n\n<resource server=\"{server}\" uri=\"{uri}\">\n{content}\n</resource>"
            ));
            attached.push(token.to_string());
        }
        Ok((!attached.is_empty()).then_some(Expansion { text, attached }))
    }

    /// The server and prompt whose slash-command name is `name`
    /// (`mcp__server__prompt`).
    async fn find_prompt(&self, name: &str) -> Result<(String, crate::PromptInfo), McpError> {
        for server in &self.servers {
            if !name.starts_with(&format!("mcp__{}__", server.name())) {
                continue;
            }
            for prompt in self.prompts(server.name()).await? {
                if crate::server::exposed_name(server.name(), &prompt.name) == name {
                    return Ok((server.name().to_string(), prompt));
                }
            }
        }
        Err(McpError::Input(format!(
            "no MCP prompt /{name}; /mcp lists each server's prompts"
        )))
    }

    /// What `server` listed when it last connected: its resources as
    /// `@server:uri` mentions and its prompts as slash commands, each with
    /// its description (empty before it connects).
    pub fn offers(&self, server: &str) -> Offers {
        let Ok(s) = self.server(server) else {
            return Default::default();
        };
        let Ok(listing) = s.listing.lock() else {
            return Default::default();
        };
        let resources = listing
            .resources
            .iter()
            .map(|r| (format!("@{server}:{}", r.uri), r.name.clone()))
            .collect();
        let prompts = listing
            .prompts
            .iter()
            .map(|p| {
                (
                    format!("/{}", crate::server::exposed_name(server, &p.name)),
                    p.description.clone(),
                )
            })
            .collect();
        Offers { resources, prompts }
    }

    /// Every prompt of every ready server as its slash command
    /// (`/mcp__server__prompt`) with its description; servers still
    /// starting are left out.
    pub fn prompt_commands(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for server in &self.servers {
            let prompts = server
                .listing
                .lock()
                .map(|l| l.prompts.clone())
                .unwrap_or_default();
            for p in prompts {
                out.push((
                    format!("/{}", crate::server::exposed_name(server.name(), &p.name)),
                    p.description,
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_name_configured_servers_only() {
        let found = mentions(
            "compare @docs:file:///a.md, and @nope:x with mail@docs:y",
            &["docs"],
        );
        assert_eq!(found, vec![("@docs:file:///a.md,", "docs", "file:///a.md")]);
    }

    #[test]
    fn prompt_arguments_take_key_values_or_free_text() {
        let args = vec![("topic".to_string(), true), ("style".to_string(), false)];
        let named = prompt_arguments("/p", "topic=rust style=terse", &args).unwrap();
        assert_eq!(named["style"], "terse");
        let free = prompt_arguments("/p", "error handling in depth", &args).unwrap();
        assert_eq!(free["topic"], "error handling in depth");
        let missing = prompt_arguments("/p", "", &args).unwrap_err().to_string();
        assert!(
            missing.contains("needs topic") && missing.contains("[style=…]"),
            "{missing}"
        );
        let none = prompt_arguments("/p", "extra", &[])
            .unwrap_err()
            .to_string();
        assert!(none.contains("takes no arguments"), "{none}");
    }
}
