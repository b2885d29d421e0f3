//! An MCP `CallToolResult` as North's tool envelope `{ok, output, error}`.
//!
//! Text blocks become `output.text`; `structuredContent` becomes
//! `output.structured`; images, audio and binary resources are saved as
//! attachment files and listed in `output.attachments` (the model is told
//! where they are); resource links and embedded text resources are listed
//! in `output.resources`. `isError: true` is `ok: false` with the server's
//! text as the error.

use std::path::{Path, PathBuf};

use north_protocol::ToolOutcome;
use serde_json::{Map, Value, json};

/// The most text kept from one result; the rest is cut with a note.
pub(crate) const MAX_TEXT: usize = 100_000;

/// Saves base64 `data` of type `mime` under `dir`, named by its content.
pub(crate) fn save_attachment(dir: &Path, data: &str, mime: &str) -> std::io::Result<PathBuf> {
    let bytes = decode_base64(data)
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "not base64"))?;
    use sha2::Digest;
    let hash = sha2::Sha256::digest(&bytes);
    let name: String = hash[..8].iter().map(|b| format!("{b:02x}")).collect();
    let ext = match mime {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" => "wav",
        "audio/mpeg" => "mp3",
        "application/pdf" => "pdf",
        _ => "bin",
    };
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{name}.{ext}"));
    if !path.exists() {
        let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
        std::fs::write(&tmp, &bytes)?;
        std::fs::rename(&tmp, &path)?;
    }
    Ok(path)
}

fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' | b'\n' | b'\r' | b' ' => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// Whether `structured` only repeats `text` (an object with one string
/// field holding exactly the text).
fn mirrors(structured: &Value, text: &str) -> bool {
    match structured {
        Value::Object(map) if map.len() == 1 => {
            map.values().next().and_then(Value::as_str) == Some(text)
        }
        _ => false,
    }
}

/// The parts of a result's `content`, sorted by what the model gets.
#[derive(Default)]
struct Parts {
    text: String,
    files: Vec<Value>,
    resources: Vec<Value>,
}

impl Parts {
    fn add_text(&mut self, t: &str) {
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(t);
    }

    /// Takes one content block; binary parts are saved under `attachments`.
    fn add(&mut self, block: &Value, attachments: &Path) {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "text" => {
                if let Some(t) = block.get("text").and_then(Value::as_str) {
                    self.add_text(t);
                }
            }
            "image" | "audio" => {
                let mime = block
                    .get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("application/octet-stream");
                let data = block.get("data").and_then(Value::as_str).unwrap_or("");
                self.files.push(match save_attachment(attachments, data, mime) {
                    Ok(path) => json!({ "type": kind, "mimeType": mime, "path": path }),
                    Err(e) => {
                        json!({ "type": kind, "mimeType": mime, "error": format!("not saved: {e}") })
                    }
                });
            }
            "resource_link" => {
                let mut link = Map::new();
                for key in ["uri", "name", "mimeType", "description"] {
                    if let Some(v) = block.get(key) {
                        link.insert(key.into(), v.clone());
                    }
                }
                self.resources.push(Value::Object(link));
            }
            "resource" => self.add_resource(block, attachments),
            _ => self.add_text(&block.to_string()),
        }
    }

    /// An embedded resource: its text as it is, a blob saved to a file.
    fn add_resource(&mut self, block: &Value, attachments: &Path) {
        let res = block.get("resource").cloned().unwrap_or(Value::Null);
        let uri = res.get("uri").cloned().unwrap_or(Value::Null);
        if let Some(t) = res.get("text").and_then(Value::as_str) {
            self.resources.push(json!({ "uri": uri, "text": t }));
        } else if let Some(blob) = res.get("blob").and_then(Value::as_str) {
            let mime = res
                .get("mimeType")
                .and_then(Value::as_str)
                .unwrap_or("application/octet-stream");
            self.resources
                .push(match save_attachment(attachments, blob, mime) {
                    Ok(path) => json!({ "uri": uri, "mimeType": mime, "path": path }),
                    Err(e) => json!({ "uri": uri, "error": format!("not saved: {e}") }),
                });
        }
    }

    /// The text, cut to [`MAX_TEXT`] characters with a note of the rest.
    fn cut_text(&mut self) {
        let total = self.text.chars().count();
        if total > MAX_TEXT {
            self.text = self.text.chars().take(MAX_TEXT).collect();
            self.text
                .push_str(&format!("\n[cut: {} more characters]", total - MAX_TEXT));
        }
    }
}

/// Maps a `CallToolResult` (as JSON) onto the envelope; binary parts are
/// saved under `attachments`.
pub(crate) fn to_outcome(result: &Value, attachments: &Path) -> ToolOutcome {
    let mut parts = Parts::default();
    for block in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        parts.add(block, attachments);
    }
    parts.cut_text();
    let Parts {
        text,
        files,
        resources,
    } = parts;
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut output = Map::new();
    let structured = result
        .get("structuredContent")
        .filter(|s| !s.is_null())
        .filter(|s| !mirrors(s, &text));
    // Servers often send the structured result again as its JSON text: the
    // model gets it once.
    let text_mirrors = structured
        .is_some_and(|s| serde_json::from_str::<Value>(text.trim()).is_ok_and(|t| &t == s));
    if !text.is_empty() && !text_mirrors {
        output.insert("text".into(), Value::String(text.clone()));
    }
    if let Some(s) = structured {
        output.insert("structured".into(), s.clone());
    }
    if !files.is_empty() {
        output.insert("attachments".into(), Value::Array(files));
    }
    if !resources.is_empty() {
        output.insert("resources".into(), Value::Array(resources));
    }
    if is_error {
        let message = if text.is_empty() {
            "the tool reported an error".to_string()
        } else {
            text
        };
        ToolOutcome {
            ok: false,
            output: Value::Object(output),
            error: Some(message),
        }
    } else {
        ToolOutcome::ok(Value::Object(output))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_map_onto_the_envelope() {
        let dir = tempfile::tempdir().unwrap();
        let result = json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "resource_link", "uri": "test://a", "name": "a"},
                {"type": "resource", "resource": {"uri": "test://b", "text": "bee"}},
                {"type": "text", "text": "world"}
            ],
            "structuredContent": {"sum": 3}
        });
        let out = to_outcome(&result, dir.path());
        assert!(out.ok);
        assert_eq!(out.output["text"], "hello\nworld");
        assert_eq!(out.output["structured"]["sum"], 3);
        let path = out.output["attachments"][0]["path"].as_str().unwrap();
        assert_eq!(
            std::fs::read(path).unwrap(),
            [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a]
        );
        assert_eq!(out.output["resources"][0]["uri"], "test://a");
        assert_eq!(out.output["resources"][1]["text"], "bee");
    }

    #[test]
    fn a_result_sent_twice_reaches_the_model_once() {
        let dir = tempfile::tempdir().unwrap();
        let out = to_outcome(
            &json!({"content": [{"type": "text", "text": "{\"a\": 1}"}], "structuredContent": {"a": 1}}),
            dir.path(),
        );
        assert_eq!(out.output, json!({"structured": {"a": 1}}));
        let out = to_outcome(
            &json!({"content": [{"type": "text", "text": "body"}], "structuredContent": {"content": "body"}}),
            dir.path(),
        );
        assert_eq!(out.output, json!({"text": "body"}));
    }

    #[test]
    fn is_error_is_a_failed_outcome_with_the_servers_words() {
        let dir = tempfile::tempdir().unwrap();
        let out = to_outcome(
            &json!({"content": [{"type": "text", "text": "no such file"}], "isError": true}),
            dir.path(),
        );
        assert!(!out.ok);
        assert_eq!(out.error.as_deref(), Some("no such file"));
        let out = to_outcome(&json!({"content": [], "isError": true}), dir.path());
        assert_eq!(out.error.as_deref(), Some("the tool reported an error"));
    }
}
