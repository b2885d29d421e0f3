//! An incremental Server-Sent Events parser.
//!
//! Bytes may arrive split anywhere (inside a line, a UTF-8 sequence or a
//! `\r\n` pair); the parser buffers until a line is complete and emits an
//! event at each blank line, following the WHATWG event-stream rules that
//! matter for model APIs: `event`, `data` (multi-line joined with `\n`),
//! `id`, comments, and `\n`, `\r\n` or `\r` line endings.

/// One dispatched SSE event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The joined `data:` lines.
    pub data: String,
    /// The `id:` field, if any.
    pub id: Option<String>,
}

/// Incremental parser state.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    /// A `\r` ended the previous chunk; a leading `\n` in the next one belongs to it.
    pending_cr: bool,
    event: Option<String>,
    data: Vec<String>,
    id: Option<String>,
    has_fields: bool,
    /// Lines that were not valid UTF-8 (replaced lossily, and counted so
    /// callers can log them rather than lose them silently).
    pub invalid_utf8_lines: u64,
}

impl SseParser {
    /// A fresh parser.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the events completed by them, in order.
    pub fn feed(&mut self, mut bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        // An empty chunk says nothing about the byte after a CR: keep waiting.
        if self.pending_cr && !bytes.is_empty() {
            self.pending_cr = false;
            if bytes.first() == Some(&b'\n') {
                bytes = &bytes[1..];
            }
        }
        self.buf.extend_from_slice(bytes);
        let mut start = 0;
        let mut i = 0;
        while i < self.buf.len() {
            match self.buf[i] {
                b'\n' => {
                    let line = self.buf[start..i].to_vec();
                    self.line(&line, &mut out);
                    i += 1;
                    start = i;
                }
                b'\r' => {
                    let line = self.buf[start..i].to_vec();
                    self.line(&line, &mut out);
                    if i + 1 < self.buf.len() {
                        if self.buf[i + 1] == b'\n' {
                            i += 1;
                        }
                    } else {
                        self.pending_cr = true;
                    }
                    i += 1;
                    start = i;
                }
                _ => i += 1,
            }
        }
        self.buf.drain(..start);
        out
    }

    /// Bytes received but not yet part of a complete line.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Whether an event has fields but has not been dispatched (no blank line yet).
    pub fn has_partial_event(&self) -> bool {
        self.has_fields || !self.buf.is_empty()
    }

    fn line(&mut self, raw: &[u8], out: &mut Vec<SseEvent>) {
        if raw.is_empty() {
            if self.has_fields {
                out.push(SseEvent {
                    event: self.event.take(),
                    data: self.data.join("\n"),
                    id: self.id.take(),
                });
            }
            self.event = None;
            self.data.clear();
            self.has_fields = false;
            return;
        }
        let line = match std::str::from_utf8(raw) {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            Err(_) => {
                self.invalid_utf8_lines += 1;
                String::from_utf8_lossy(raw)
            }
        };
        if line.starts_with(':') {
            return; // comment / keep-alive
        }
        let (field, value) = match line.find(':') {
            Some(pos) => {
                let v = &line[pos + 1..];
                (&line[..pos], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (&line[..], ""),
        };
        match field {
            "event" => {
                self.event = Some(value.to_string());
                self.has_fields = true;
            }
            "data" => {
                self.data.push(value.to_string());
                self.has_fields = true;
            }
            "id" => {
                self.id = Some(value.to_string());
                self.has_fields = true;
            }
            _ => {} // `retry` and unknown fields carry nothing for us
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        chunks.iter().flat_map(|c| p.feed(c)).collect()
    }

    #[test]
    fn parses_named_events_and_multiline_data() {
        let evs = all(&[b"event: a\ndata: 1\ndata: 2\n\n: comment\ndata:x\n\n"]);
        assert_eq!(evs.len(), 2);
        assert_eq!(evs[0].event.as_deref(), Some("a"));
        assert_eq!(evs[0].data, "1\n2");
        assert_eq!(evs[1].event, None);
        assert_eq!(evs[1].data, "x");
    }

    #[test]
    fn handles_crlf_split_across_chunks() {
        let evs = all(&[b"data: a\r", b"\n\r", b"\ndata: b\r\r"]);
        assert_eq!(
            evs.iter().map(|e| e.data.as_str()).collect::<Vec<_>>(),
            vec!["a", "b"]
        );
    }

    /// Regression: `feed(b"")` dropped a pending CR, so CR | empty chunk |
    /// LF split one event in two.
    #[test]
    fn an_empty_chunk_between_cr_and_lf_keeps_the_event_whole() {
        let evs = all(&[b"data: a\r", b"", b"\ndata: b\r", b"", b"", b"\n\r\n"]);
        assert_eq!(
            evs.iter().map(|e| e.data.as_str()).collect::<Vec<_>>(),
            vec!["a\nb"]
        );
    }

    #[test]
    fn utf8_split_inside_a_character_is_reassembled() {
        let s = "data: héllo\n\n".as_bytes();
        let evs = all(&[&s[..8], &s[8..]]);
        assert_eq!(evs[0].data, "héllo");
    }

    #[test]
    fn blank_lines_without_fields_dispatch_nothing() {
        assert!(all(&[b"\n\n\n"]).is_empty());
    }
}
