//! Hiding marker-delimited blocks from streamed text.
//!
//! The model may embed `<<<NOTES_JSON>>> … <<<END_NOTES_JSON>>>` and
//! `<<<TOOL_CALLS_JSON>>> … <<<END_TOOL_CALLS_JSON>>>` blocks in its answer.
//! They arrive split across arbitrary deltas, so the filter holds back any
//! tail that could be the start of a marker and never shows a complete
//! block's body; a block that never ends is shown when the text ends.

/// NOTES block markers.
pub const NOTES: (&str, &str) = ("<<<NOTES_JSON>>>", "<<<END_NOTES_JSON>>>");
/// Text tool-call block markers.
pub const TOOL_CALLS: (&str, &str) = ("<<<TOOL_CALLS_JSON>>>", "<<<END_TOOL_CALLS_JSON>>>");

/// Which kind of block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// A NOTES patch.
    Notes,
    /// A text tool-call array.
    ToolCalls,
}

/// A block taken out of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Its kind.
    pub kind: BlockKind,
    /// The text between the markers.
    pub body: String,
    /// False when the text ended before the end marker.
    pub terminated: bool,
}

const KINDS: [(BlockKind, (&str, &str)); 2] = [
    (BlockKind::Notes, NOTES),
    (BlockKind::ToolCalls, TOOL_CALLS),
];

/// Streaming filter: feed deltas, get the visible text, collect blocks.
#[derive(Debug, Default)]
pub struct BlockFilter {
    pending: String,
    inside: Option<usize>,
    blocks: Vec<Block>,
}

impl BlockFilter {
    /// A fresh filter.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds a delta; returns the text that can be shown now.
    pub fn feed(&mut self, delta: &str) -> String {
        self.pending.push_str(delta);
        let mut visible = String::new();
        loop {
            match self.inside {
                None => {
                    let found = KINDS
                        .iter()
                        .enumerate()
                        .filter_map(|(i, (_, (begin, _)))| self.pending.find(begin).map(|p| (p, i)))
                        .min();
                    if let Some((pos, i)) = found {
                        visible.push_str(&self.pending[..pos]);
                        self.pending.drain(..pos + KINDS[i].1.0.len());
                        self.inside = Some(i);
                        continue;
                    }
                    let hold = self.partial_marker_len();
                    let cut = self.pending.len() - hold;
                    visible.push_str(&self.pending[..cut]);
                    self.pending.drain(..cut);
                    return visible;
                }
                Some(i) => {
                    let end = KINDS[i].1.1;
                    match self.pending.find(end) {
                        Some(pos) => {
                            self.blocks.push(Block {
                                kind: KINDS[i].0,
                                body: self.pending[..pos].to_string(),
                                terminated: true,
                            });
                            self.pending.drain(..pos + end.len());
                            self.inside = None;
                        }
                        None => return visible,
                    }
                }
            }
        }
    }

    /// Length of the longest suffix of `pending` that is a proper prefix of a begin marker.
    fn partial_marker_len(&self) -> usize {
        let p = self.pending.as_bytes();
        let mut best = 0;
        for (_, (begin, _)) in KINDS {
            let b = begin.as_bytes();
            for len in (1..b.len().min(p.len() + 1)).rev() {
                if p.ends_with(&b[..len]) {
                    best = best.max(len);
                    break;
                }
            }
        }
        best
    }

    /// Ends the text: returns the held-back visible tail and all blocks.
    /// An unterminated block is returned with `terminated: false`, and its
    /// text becomes visible: a stray opening marker (or a block cut off by
    /// the token limit) must not hide the rest of the answer.
    pub fn finish(mut self) -> (String, Vec<Block>) {
        let tail = std::mem::take(&mut self.pending);
        if let Some(i) = self.inside {
            self.blocks.push(Block {
                kind: KINDS[i].0,
                body: tail.clone(),
                terminated: false,
            });
        }
        (tail, self.blocks)
    }
}

/// Filters a whole text at once.
pub fn split_blocks(text: &str) -> (String, Vec<Block>) {
    let mut f = BlockFilter::new();
    let mut visible = f.feed(text);
    let (tail, blocks) = f.finish();
    visible.push_str(&tail);
    (visible, blocks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TEXT: &str = "Plan: read it.\n<<<NOTES_JSON>>>{\"set_goals\":[\"g\"]}<<<END_NOTES_JSON>>>\nNow <<calling>>:<<<TOOL_CALLS_JSON>>>[{\"id\":\"t1\",\"tool\":\"fs.list_dir\",\"args\":{}}]<<<END_TOOL_CALLS_JSON>>> done <<<";

    #[test]
    fn whole_text() {
        let (visible, blocks) = split_blocks(TEXT);
        assert_eq!(visible, "Plan: read it.\n\nNow <<calling>>: done <<<");
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].kind, BlockKind::Notes);
        assert_eq!(blocks[0].body, "{\"set_goals\":[\"g\"]}");
        assert_eq!(blocks[1].kind, BlockKind::ToolCalls);
        assert!(blocks.iter().all(|b| b.terminated));
    }

    #[test]
    fn unterminated_block_is_reported_and_does_not_hide_the_rest() {
        let (visible, blocks) =
            split_blocks("hi <<<TOOL_CALLS_JSON>>> is how I would call tools. The answer is 4.");
        assert_eq!(visible, "hi  is how I would call tools. The answer is 4.");
        assert!(!blocks[0].terminated);
        assert_eq!(blocks[0].kind, BlockKind::ToolCalls);
    }

    proptest! {
        #[test]
        fn any_delta_split_gives_the_same_result(cuts in proptest::collection::vec(0..TEXT.len(), 0..20)) {
            let mut cuts: Vec<usize> = cuts.into_iter().filter(|c| TEXT.is_char_boundary(*c)).collect();
            cuts.sort_unstable();
            let mut f = BlockFilter::new();
            let mut visible = String::new();
            let mut prev = 0;
            for c in cuts {
                visible.push_str(&f.feed(&TEXT[prev..c]));
                prev = c;
            }
            visible.push_str(&f.feed(&TEXT[prev..]));
            let (tail, blocks) = f.finish();
            visible.push_str(&tail);
            let (v2, b2) = split_blocks(TEXT);
            prop_assert_eq!(visible, v2);
            prop_assert_eq!(blocks, b2);
        }
    }
}
