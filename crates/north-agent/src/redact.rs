//! Scrubbing secrets out of anything North writes or shows.

use std::borrow::Cow;

/// Known secret values (API keys, tokens) to replace with `[REDACTED]`.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl Redactor {
    /// Collects the values of every credential the process holds (the
    /// sealed vault and the environment).
    pub fn from_env() -> Self {
        let mut r = Redactor::default();
        for v in north_secrets::credentials() {
            r.add(&v);
        }
        r
    }

    /// Adds a secret (ignored when too short to be one).
    pub fn add(&mut self, secret: &str) {
        let s = secret.trim();
        if s.len() >= 8 && !self.secrets.iter().any(|x| x == s) {
            self.secrets.push(s.to_string());
            // Longest first, so a secret containing another is replaced whole.
            self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    /// Whether any secret is known.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `event` with every known secret replaced in all its strings.
    pub fn scrub_event(&self, event: north_protocol::Event) -> north_protocol::Event {
        if self.secrets.is_empty() {
            return event;
        }
        let Ok(text) = serde_json::to_string(&event) else {
            return event;
        };
        match self.scrub(&text) {
            std::borrow::Cow::Borrowed(_) => event,
            std::borrow::Cow::Owned(clean) => serde_json::from_str(&clean).unwrap_or(event),
        }
    }

    /// `value` with every known secret replaced in each of its strings
    /// (keys included). Works on the values, not their JSON text, so a
    /// secret holding a character JSON escapes is still found.
    pub(crate) fn scrub_value(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        if self.secrets.is_empty() {
            return;
        }
        match value {
            Value::String(s) => {
                if let Cow::Owned(clean) = self.scrub(s) {
                    *s = clean;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.scrub_value(v)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (k, mut v) in entries {
                    self.scrub_value(&mut v);
                    map.insert(self.scrub(&k).into_owned(), v);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// A tool outcome as the model may see it: every secret replaced.
    pub(crate) fn scrub_outcome(
        &self,
        outcome: &north_protocol::ToolOutcome,
    ) -> north_protocol::ToolOutcome {
        if self.secrets.is_empty() {
            return outcome.clone();
        }
        let Ok(mut value) = serde_json::to_value(outcome) else {
            return outcome.clone();
        };
        self.scrub_value(&mut value);
        serde_json::from_value(value).unwrap_or_else(|_| {
            north_protocol::ToolOutcome::err("the tool's result held a secret and was withheld")
        })
    }

    /// `text` with every known secret replaced.
    pub fn scrub<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if !self.secrets.iter().any(|s| text.contains(s.as_str())) {
            return Cow::Borrowed(text);
        }
        let mut out = text.to_string();
        for s in &self.secrets {
            out = out.replace(s.as_str(), "[REDACTED]");
        }
        Cow::Owned(out)
    }
}
/// Scrubs a text stream delta by delta: a secret split across deltas is
/// still replaced, because the tail that could begin a secret is held back
/// until the next delta (or [`StreamScrubber::finish`]) shows what follows.
#[derive(Debug)]
pub(crate) struct StreamScrubber<'a> {
    redactor: &'a Redactor,
    pending: String,
}

impl<'a> StreamScrubber<'a> {
    /// A scrubber for one stream.
    pub fn new(redactor: &'a Redactor) -> Self {
        StreamScrubber {
            redactor,
            pending: String::new(),
        }
    }

    /// What of the stream so far can be shown safely, given `delta`.
    pub fn push(&mut self, delta: &str) -> String {
        if self.redactor.is_empty() {
            return delta.to_string();
        }
        self.pending.push_str(delta);
        let scrubbed = self.redactor.scrub(&self.pending).into_owned();
        let mut hold = self.held_suffix(&scrubbed);
        while !scrubbed.is_char_boundary(scrubbed.len() - hold) {
            hold += 1;
        }
        let (out, keep) = scrubbed.split_at(scrubbed.len() - hold);
        let out = out.to_string();
        self.pending = keep.to_string();
        out
    }

    /// The rest of the stream, scrubbed.
    pub fn finish(self) -> String {
        self.redactor.scrub(&self.pending).into_owned()
    }

    /// The length of the longest end of `text` that begins some secret.
    fn held_suffix(&self, text: &str) -> usize {
        let bytes = text.as_bytes();
        self.redactor
            .secrets
            .iter()
            .filter_map(|secret| {
                let secret = secret.as_bytes();
                (1..secret.len().min(bytes.len() + 1))
                    .rev()
                    .find(|&k| bytes.ends_with(&secret[..k]))
            })
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_split_across_deltas_is_never_shown() {
        let mut r = Redactor::default();
        r.add("sk-ant-SPLITKEY-0123456789");
        let text = "the key is sk-ant-SPLITKEY-0123456789, keep it safe";
        // Every split into three pieces.
        for a in 0..text.len() {
            for b in a..text.len() {
                let mut s = StreamScrubber::new(&r);
                let mut shown = String::new();
                for piece in [&text[..a], &text[a..b], &text[b..]] {
                    shown.push_str(&s.push(piece));
                    assert!(!shown.contains("SPLITKEY"), "{a} {b}: {shown}");
                }
                shown.push_str(&s.finish());
                assert_eq!(shown, "the key is [REDACTED], keep it safe");
            }
        }
    }

    #[test]
    fn text_that_only_looks_like_a_secret_start_is_released_at_the_end() {
        let mut r = Redactor::default();
        r.add("sk-ant-SPLITKEY-0123456789");
        let mut s = StreamScrubber::new(&r);
        assert_eq!(s.push("use sk-"), "use ");
        assert_eq!(s.push("ant"), "");
        assert_eq!(s.finish(), "sk-ant");
    }
}
