//! Output handling for the PTY shell: bounded head+tail capture and the
//! marker framing that finds one command's output in the terminal stream.

use std::collections::VecDeque;

/// Keeps the first and last bytes of a stream within `limit` bytes, counting
/// what was cut in between, so memory stays bounded however much a command
/// prints.
#[derive(Debug)]
pub(crate) struct HeadTail {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
    /// Bytes pushed since the last [`HeadTail::take_fresh`], for a live
    /// view (only the newest [`FRESH_MAX`] are kept).
    fresh: Vec<u8>,
}

/// Most bytes held for the live view between two takes: it shows the last
/// lines, so older ones are dropped rather than buffered.
const FRESH_MAX: usize = 64 * 1024;

impl HeadTail {
    /// A capture keeping at most `limit` bytes (half head, half tail).
    pub fn new(limit: usize) -> Self {
        let head_cap = limit / 2;
        HeadTail {
            head_cap,
            tail_cap: limit - head_cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
            fresh: Vec::new(),
        }
    }

    /// The bytes pushed since the last call (at most the newest 64 KiB).
    pub(crate) fn take_fresh(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.fresh)
    }

    /// Appends bytes.
    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let keep = bytes.len().min(FRESH_MAX);
        self.fresh.extend_from_slice(&bytes[bytes.len() - keep..]);
        if self.fresh.len() > FRESH_MAX {
            let cut = self.fresh.len() - FRESH_MAX;
            self.fresh.drain(..cut);
        }
        if self.head.len() < self.head_cap {
            let take = (self.head_cap - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_cap..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    /// Counts `n` bytes as seen and cut without keeping them.
    pub fn skip(&mut self, n: u64) {
        self.total += n;
    }

    /// The kept text, with a marker where bytes were cut, and whether any were.
    pub fn finish(self) -> (String, bool) {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let tail: Vec<u8> = self.tail.into_iter().collect();
        if kept == self.total {
            let mut all = self.head;
            all.extend_from_slice(&tail);
            return (clean_text(&all), false);
        }
        let head = &self.head[..char_boundary_back(&self.head)];
        let tail = &tail[char_boundary_front(&tail)..];
        let cut = self.total - (head.len() + tail.len()) as u64;
        (join_cut(&clean_text(head), cut, &clean_text(tail)), true)
    }
}

/// `head`, a marker saying `cut` bytes were left out, and `tail`.
pub(crate) fn join_cut(head: &str, cut: u64, tail: &str) -> String {
    format!("{head}\n[... {cut} bytes truncated ...]\n{tail}")
}

/// Keeps the first and last characters of `text` within `max_chars`, with a
/// marker saying how much was cut. Returns whether anything was.
pub fn truncate_chars(text: &str, max_chars: usize) -> (String, bool) {
    let count = text.chars().count();
    if count <= max_chars {
        return (text.to_owned(), false);
    }
    let head_n = max_chars / 2;
    let tail_n = max_chars - head_n;
    let head: String = text.chars().take(head_n).collect();
    let tail: String = text.chars().skip(count - tail_n).collect();
    let cut = count - head_n - tail_n;
    (
        format!("{head}\n[... {cut} characters truncated ...]\n{tail}"),
        true,
    )
}

/// Terminal bytes as text: invalid UTF-8 replaced, CRLF turned into LF (in
/// case the terminal still translates newlines).
pub(crate) fn clean_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace("\r\n", "\n")
}

/// Length of `bytes` without a trailing incomplete UTF-8 sequence.
fn char_boundary_back(bytes: &[u8]) -> usize {
    let n = bytes.len();
    for back in 1..=n.min(4) {
        let b = bytes[n - back];
        if b & 0xC0 != 0x80 {
            let need = match b {
                0xF0.. => 4,
                0xE0.. => 3,
                0xC0.. => 2,
                _ => 1,
            };
            return if back < need { n - back } else { n };
        }
    }
    n
}

/// Offset of the first byte that is not a UTF-8 continuation byte.
fn char_boundary_front(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take(3)
        .take_while(|b| (**b & 0b1100_0000) == 0b1000_0000)
        .count()
}

/// Where a command's output is in the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before the begin marker: whatever is there belongs to earlier commands.
    Before,
    /// Capturing the command's output.
    Output,
    /// The end marker was seen; waiting for the sync marker, if one was asked.
    AfterEnd,
    /// Finished.
    Done,
}

/// Finds one command's stdout between `BEGIN<nonce>\n` and
/// `END<nonce>:<code>\n` markers in the terminal stream. After an
/// interrupt the end marker may never come; a sync marker then ends the
/// capture instead.
#[derive(Debug)]
pub(crate) struct Collector {
    begin: Vec<u8>,
    end: Vec<u8>,
    sync: Option<Vec<u8>>,
    phase: Phase,
    pending: Vec<u8>,
    output: HeadTail,
    exit_code: Option<i32>,
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

impl Collector {
    /// A collector for the markers `begin` and `end` (the end marker is
    /// followed by `:<exit code>\n`), keeping at most `limit` output bytes.
    pub fn new(begin: &str, end: &str, limit: usize) -> Self {
        Collector {
            begin: format!("{begin}\n").into_bytes(),
            end: format!("{end}:").into_bytes(),
            sync: None,
            phase: Phase::Before,
            pending: Vec::new(),
            output: HeadTail::new(limit),
            exit_code: None,
        }
    }

    /// Also stop at `marker` followed by a newline (used after an interrupt).
    pub(crate) fn expect_sync(&mut self, marker: &str) {
        self.sync = Some(format!("{marker}\n").into_bytes());
        if self.phase == Phase::AfterEnd {
            // Re-scan what followed the end marker.
            self.feed(&[]);
        }
    }

    /// The command output captured since the last call, for a live view.
    pub(crate) fn take_fresh(&mut self) -> Vec<u8> {
        self.output.take_fresh()
    }

    /// Whether the end (or, when expected, the sync) marker was seen.
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done || (self.phase == Phase::AfterEnd && self.sync.is_none())
    }

    /// The exit code from the end marker, if it was seen.
    pub fn exit_code(&self) -> Option<i32> {
        self.exit_code
    }

    /// The captured output and whether it was truncated. Output held back
    /// while looking for a marker counts when the marker never came.
    pub fn finish(mut self) -> (String, bool) {
        if self.phase == Phase::Output {
            self.output.push(&self.pending);
        }
        self.output.finish()
    }

    fn longest_marker(&self) -> usize {
        let sync = self.sync.as_ref().map_or(0, Vec::len);
        self.begin.len().max(self.end.len() + 12).max(sync)
    }

    /// Feeds bytes read from the terminal.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        loop {
            match self.phase {
                Phase::Before => {
                    if let Some(at) = self.find_sync() {
                        self.pending.drain(..at);
                        self.phase = Phase::Done;
                    } else if let Some(at) = find(&self.pending, &self.begin) {
                        self.pending.drain(..at + self.begin.len());
                        self.phase = Phase::Output;
                        continue;
                    } else {
                        self.keep_tail();
                    }
                }
                Phase::Output => {
                    let end_at = find(&self.pending, &self.end);
                    let sync_at = self.find_sync();
                    match (end_at, sync_at) {
                        (Some(e), s) if s.is_none_or(|s| e < s) => {
                            let code_start = e + self.end.len();
                            let Some(nl) =
                                self.pending[code_start..].iter().position(|b| *b == b'\n')
                            else {
                                // Wait for the rest of the end line.
                                self.output.push(&self.pending[..e]);
                                self.pending.drain(..e);
                                return;
                            };
                            let code =
                                String::from_utf8_lossy(&self.pending[code_start..code_start + nl])
                                    .trim()
                                    .parse::<i32>()
                                    .ok();
                            self.output.push(&self.pending[..e]);
                            self.pending.drain(..code_start + nl + 1);
                            self.exit_code = code;
                            self.phase = Phase::AfterEnd;
                            continue;
                        }
                        (_, Some(s)) => {
                            self.output.push(&self.pending[..s]);
                            self.pending.clear();
                            self.phase = Phase::Done;
                        }
                        (None, None) => {
                            // Hold back only what could still become a
                            // marker, so output shows as soon as it exists.
                            let keep = self.marker_prefix_len();
                            let commit = self.pending.len() - keep;
                            self.output.push(&self.pending[..commit]);
                            self.pending.drain(..commit);
                        }
                        // Covered by the first arm's guard.
                        (Some(_), _) => {}
                    }
                }
                Phase::AfterEnd => {
                    if self.sync.is_some() {
                        if self.find_sync().is_some() {
                            self.pending.clear();
                            self.phase = Phase::Done;
                        } else {
                            self.keep_tail();
                        }
                    }
                }
                Phase::Done => self.pending.clear(),
            }
            return;
        }
    }

    /// The longest tail of `pending` that is the start of the end or sync
    /// marker (and so cannot be released as output yet).
    fn marker_prefix_len(&self) -> usize {
        let p = &self.pending;
        let mut longest = 0;
        for marker in std::iter::once(&self.end).chain(self.sync.as_ref()) {
            for k in (1..marker.len().min(p.len() + 1)).rev() {
                if k > longest && p.ends_with(&marker[..k]) {
                    longest = k;
                    break;
                }
            }
        }
        longest
    }

    fn find_sync(&self) -> Option<usize> {
        self.sync.as_ref().and_then(|s| find(&self.pending, s))
    }

    /// Drops bytes that can no longer start a marker.
    fn keep_tail(&mut self) {
        let keep = self.longest_marker().min(self.pending.len());
        let drop = self.pending.len() - keep;
        self.pending.drain(..drop);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn head_tail_keeps_both_ends() {
        let mut ht = HeadTail::new(10);
        for _ in 0..10 {
            ht.push(b"0123456789");
        }
        let (text, truncated) = ht.finish();
        assert!(truncated);
        assert_eq!(text, "01234\n[... 90 bytes truncated ...]\n56789");
        let mut ht = HeadTail::new(10);
        ht.push(b"abc");
        ht.push(b"defghij");
        assert_eq!(ht.finish(), ("abcdefghij".to_owned(), false));
    }

    #[test]
    fn head_tail_does_not_split_characters() {
        let mut ht = HeadTail::new(6);
        ht.push("ééééééééé".as_bytes());
        let (text, truncated) = ht.finish();
        assert!(truncated);
        assert!(!text.contains('\u{fffd}'), "{text}");
    }

    #[test]
    fn collector_frames_output_across_chunk_boundaries() {
        let stream = b"junk before\nBEGIN-1\nhello\nworldEND-1:3\nlater";
        for split in 0..stream.len() {
            let mut c = Collector::new("BEGIN-1", "END-1", 1000);
            c.feed(&stream[..split]);
            c.feed(&stream[split..]);
            assert!(c.is_done(), "split {split}");
            assert_eq!(c.exit_code(), Some(3));
            assert_eq!(c.finish().0, "hello\nworld");
        }
    }

    #[test]
    fn collector_stops_at_sync_after_interrupt() {
        let mut c = Collector::new("B", "E", 1000);
        c.feed(b"B\npartial output");
        assert!(!c.is_done());
        c.expect_sync("S");
        c.feed(b" more\nS\n");
        assert!(c.is_done());
        assert_eq!(c.exit_code(), None);
        assert_eq!(c.finish().0, "partial output more\n");
    }

    #[test]
    fn truncate_chars_marks_the_cut() {
        let (t, cut) = truncate_chars("abcdefghij", 4);
        assert!(cut);
        assert_eq!(t, "ab\n[... 6 characters truncated ...]\nij");
        assert_eq!(truncate_chars("abc", 4), ("abc".to_owned(), false));
    }
}
