//! The terminal's bytes decoded: keys, pastes, focus changes, and the
//! answers to the questions North asks the terminal.
//!
//! North reads the terminal itself rather than through crossterm's reader
//! for two reasons. A terminal in xterm's modifyOtherKeys mode (xterm, and
//! tmux passing keys on) sends Shift+Enter as `ESC[27;2;13~`, which
//! crossterm's parser refuses and drops whole. And the answer to the
//! background-colour question (OSC 11) comes back on the same input as the
//! keys typed ahead, so only the one decoder that reads both can tell them
//! apart. Pure logic: bytes in, [`Decoded`] out; nothing here touches the
//! terminal.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers};

/// What a run of bytes meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decoded {
    /// A key, paste or focus change for the loop.
    Event(Event),
    /// The answer to a cursor position question (`ESC[6n`), zero-based.
    CursorPosition { col: u16, row: u16 },
    /// The terminal's background colour (the answer to `ESC]11;?`).
    Background(Rgb),
    /// The terminal reported its keyboard enhancement flags (`ESC[?u`):
    /// it speaks the kitty keyboard protocol.
    KeyboardFlags,
    /// The answer to the primary device attributes question (`ESC[c`),
    /// which every terminal answers: the end of a batch of questions.
    DeviceAttributes,
    /// The terminal's name and version (the answer to XTVERSION,
    /// `ESC[>0q`), as in `tmux 3.3a` or `XTerm(390)`.
    TerminalName(String),
}

/// A colour as the terminal reported it, eight bits a channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// Whether the colour reads as a light background (relative luminance
    /// over one half).
    pub fn is_light(self) -> bool {
        let Rgb(r, g, b) = self;
        let luma = 0.2126 * f64::from(r) + 0.7152 * f64::from(g) + 0.0722 * f64::from(b);
        luma > 127.5
    }
}

/// Sequences longer than this without their end are not sequences.
const MAX_SEQUENCE: usize = 4096;

/// Bytes in, decoded items out; an incomplete sequence is kept for the
/// next read.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    pending: Vec<u8>,
}

/// One step of decoding at the start of a buffer.
enum Step {
    /// More bytes are needed.
    Incomplete,
    /// `n` bytes that mean nothing North uses.
    Skip(usize),
    /// `n` bytes and what they meant.
    Got(usize, Decoded),
}

impl Decoder {
    /// Decodes what `bytes` complete; an unfinished sequence at the end
    /// waits for the next call (or [`Decoder::flush`]).
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Decoded>) {
        self.pending.extend_from_slice(bytes);
        let mut at = 0;
        while at < self.pending.len() {
            match step(&self.pending[at..]) {
                Step::Incomplete if self.pending.len() - at > MAX_SEQUENCE => at += 1,
                Step::Incomplete => break,
                Step::Skip(n) => at += n.max(1),
                Step::Got(n, item) => {
                    out.push(item);
                    at += n.max(1);
                }
            }
        }
        self.pending.drain(..at);
    }

    /// Whether bytes wait for the rest of their sequence.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// No more bytes came for a while: a lone ESC was the Esc key, and
    /// ESC with one byte after it (`ESC [`, `ESC O`) was Alt with that key.
    /// A longer unfinished sequence (a paste, an answer) keeps waiting.
    pub fn flush(&mut self, out: &mut Vec<Decoded>) {
        match self.pending.as_slice() {
            [0x1b] => out.push(key(KeyCode::Esc, KeyModifiers::NONE)),
            [0x1b, c] if c.is_ascii_graphic() => {
                out.push(key(KeyCode::Char(char::from(*c)), KeyModifiers::ALT));
            }
            _ => return,
        }
        self.pending.clear();
    }
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> Decoded {
    Decoded::Event(Event::Key(KeyEvent::new(code, modifiers)))
}

fn step(buf: &[u8]) -> Step {
    match buf {
        [] => Step::Incomplete,
        [0x1b] => Step::Incomplete,
        [0x1b, b'[', ..] => csi(buf),
        [0x1b, b'O', ..] => ss3(buf),
        [0x1b, b']', ..] => string_sequence(buf, osc),
        [0x1b, b'P', ..] => string_sequence(buf, dcs),
        // SOS, PM, APC: answers North never asked for.
        [0x1b, b'X' | b'^' | b'_', ..] => string_sequence(buf, |_| None),
        // Esc pressed twice: two Esc keys.
        [0x1b, 0x1b, ..] => Step::Got(1, key(KeyCode::Esc, KeyModifiers::NONE)),
        [0x1b, rest @ ..] => match plain(rest) {
            Step::Got(n, Decoded::Event(Event::Key(mut k))) => {
                k.modifiers |= KeyModifiers::ALT;
                Step::Got(n + 1, Decoded::Event(Event::Key(k)))
            }
            Step::Got(n, _) | Step::Skip(n) => Step::Skip(n + 1),
            Step::Incomplete => Step::Incomplete,
        },
        _ => plain(buf),
    }
}

/// A byte or UTF-8 character typed as is.
fn plain(buf: &[u8]) -> Step {
    let Some(&first) = buf.first() else {
        return Step::Incomplete;
    };
    let ctrl = |c: u8| Step::Got(1, key(KeyCode::Char(char::from(c)), KeyModifiers::CONTROL));
    match first {
        b'\r' => Step::Got(1, key(KeyCode::Enter, KeyModifiers::NONE)),
        b'\t' => Step::Got(1, key(KeyCode::Tab, KeyModifiers::NONE)),
        0x7f => Step::Got(1, key(KeyCode::Backspace, KeyModifiers::NONE)),
        0 => ctrl(b' '),
        // Raw mode keeps LF as typed: Ctrl+J.
        c @ 0x01..=0x1a => ctrl(c - 0x01 + b'a'),
        c @ 0x1c..=0x1f => ctrl(c - 0x1c + b'4'),
        _ => utf8(buf),
    }
}

fn utf8(buf: &[u8]) -> Step {
    let len = match buf[0] {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return Step::Skip(1),
    };
    if buf.len() < len {
        // A continuation byte that is not one is a broken character.
        if buf[1..].iter().any(|b| b & 0xc0 != 0x80) {
            return Step::Skip(1);
        }
        return Step::Incomplete;
    }
    match std::str::from_utf8(&buf[..len])
        .ok()
        .and_then(|s| s.chars().next())
    {
        Some(c) => {
            let modifiers = if c.is_uppercase() {
                KeyModifiers::SHIFT
            } else {
                KeyModifiers::NONE
            };
            Step::Got(len, key(KeyCode::Char(c), modifiers))
        }
        None => Step::Skip(1),
    }
}

/// `ESC O x`: arrows, Home/End and F1–F4 in application mode.
fn ss3(buf: &[u8]) -> Step {
    let Some(&last) = buf.get(2) else {
        return Step::Incomplete;
    };
    match cursor_key(last) {
        Some(code) => Step::Got(3, key(code, KeyModifiers::NONE)),
        None => Step::Skip(3),
    }
}

fn cursor_key(final_byte: u8) -> Option<KeyCode> {
    Some(match final_byte {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        b'P' => KeyCode::F(1),
        b'Q' => KeyCode::F(2),
        b'R' => KeyCode::F(3),
        b'S' => KeyCode::F(4),
        _ => return None,
    })
}

/// A control sequence: `ESC [`, parameters, intermediates, a final byte.
fn csi(buf: &[u8]) -> Step {
    const PASTE_START: &[u8] = b"\x1b[200~";
    if buf.starts_with(PASTE_START) {
        return paste(buf, PASTE_START.len());
    }
    if PASTE_START.starts_with(buf) {
        return Step::Incomplete;
    }
    // X10 mouse reports carry three raw bytes; North never asks for them.
    if buf.get(2) == Some(&b'M') {
        return if buf.len() >= 6 {
            Step::Skip(6)
        } else {
            Step::Incomplete
        };
    }
    let Some(end) = buf[2..].iter().position(|b| (0x40..=0x7e).contains(b)) else {
        // Anything but parameter and intermediate bytes ends it broken.
        return match buf[2..].iter().position(|b| !(0x20..=0x3f).contains(b)) {
            Some(bad) => Step::Skip(2 + bad),
            None => Step::Incomplete,
        };
    };
    let len = 2 + end + 1;
    let params = &buf[2..2 + end];
    match control(params, buf[2 + end]) {
        Some(item) => Step::Got(len, item),
        None => Step::Skip(len),
    }
}

/// What a complete control sequence means.
fn control(params: &[u8], final_byte: u8) -> Option<Decoded> {
    let text = std::str::from_utf8(params).ok()?;
    if text.starts_with('?') {
        return match final_byte {
            b'u' => Some(Decoded::KeyboardFlags),
            b'c' => Some(Decoded::DeviceAttributes),
            _ => None,
        };
    }
    if text.starts_with(['<', '>', '=']) {
        return None;
    }
    let fields: Vec<&str> = text.split(';').collect();
    let number = |i: usize| -> Option<u32> {
        let field = fields.get(i)?.split(':').next()?;
        if field.is_empty() {
            None
        } else {
            field.parse().ok()
        }
    };
    let modifiers = fields
        .get(1)
        .map_or(KeyModifiers::NONE, |f| modifier_field(f).0);
    let kind = fields
        .get(1)
        .map_or(KeyEventKind::Press, |f| modifier_field(f).1);
    let keyed = |code: KeyCode, modifiers: KeyModifiers| {
        Some(Decoded::Event(Event::Key(
            KeyEvent::new_with_kind_and_state(code, modifiers, kind, KeyEventState::NONE),
        )))
    };
    match final_byte {
        b'I' if text.is_empty() => Some(Decoded::Event(Event::FocusGained)),
        b'O' if text.is_empty() => Some(Decoded::Event(Event::FocusLost)),
        b'R' if fields.len() == 2 => Some(Decoded::CursorPosition {
            row: u16::try_from(number(0)?.saturating_sub(1)).ok()?,
            col: u16::try_from(number(1)?.saturating_sub(1)).ok()?,
        }),
        b'Z' => keyed(KeyCode::BackTab, modifiers | KeyModifiers::SHIFT),
        b'u' => {
            let (code, modifiers) = codepoint_key(number(0)?, modifiers)?;
            // With shift, the kitty protocol may name the shifted key.
            let shifted = fields
                .first()
                .and_then(|f| f.split(':').nth(1))
                .and_then(|s| s.parse::<u32>().ok())
                .and_then(char::from_u32);
            match (shifted, modifiers.contains(KeyModifiers::SHIFT)) {
                (Some(c), true) => keyed(KeyCode::Char(c), modifiers - KeyModifiers::SHIFT),
                _ => keyed(code, modifiers),
            }
        }
        b'~' => match number(0)? {
            // modifyOtherKeys: `27 ; modifiers ; code ~`.
            27 => {
                let modifiers = fields
                    .get(1)
                    .map_or(KeyModifiers::NONE, |f| modifier_field(f).0);
                let (code, modifiers) = codepoint_key(number(2)?, modifiers)?;
                keyed(code, modifiers)
            }
            n => keyed(tilde_key(n)?, modifiers),
        },
        other => keyed(cursor_key(other)?, modifiers),
    }
}

/// `modifiers[:event]`, the modifiers one more than a bit mask.
fn modifier_field(field: &str) -> (KeyModifiers, KeyEventKind) {
    let mut parts = field.split(':');
    let mask = parts
        .next()
        .and_then(|m| m.parse::<u32>().ok())
        .map_or(0, |m| m.saturating_sub(1));
    let mut modifiers = KeyModifiers::NONE;
    for (bit, m) in [
        (1, KeyModifiers::SHIFT),
        (2, KeyModifiers::ALT),
        (4, KeyModifiers::CONTROL),
        (8, KeyModifiers::SUPER),
        (16, KeyModifiers::HYPER),
        (32, KeyModifiers::META),
    ] {
        if mask & bit != 0 {
            modifiers |= m;
        }
    }
    let kind = match parts.next() {
        Some("2") => KeyEventKind::Repeat,
        Some("3") => KeyEventKind::Release,
        _ => KeyEventKind::Press,
    };
    (modifiers, kind)
}

/// A key named by its code point (kitty's `CSI u`, modifyOtherKeys).
fn codepoint_key(codepoint: u32, modifiers: KeyModifiers) -> Option<(KeyCode, KeyModifiers)> {
    let code = match codepoint {
        13 => KeyCode::Enter,
        9 if modifiers.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
        9 => KeyCode::Tab,
        27 => KeyCode::Esc,
        8 | 127 => KeyCode::Backspace,
        // The keypad's digits and Enter; other functional keys (modifier
        // keys alone, media keys) mean nothing to North.
        57399..=57408 => KeyCode::Char(char::from_digit(codepoint - 57399, 10)?),
        57414 => KeyCode::Enter,
        57344..=63743 => return None,
        c => KeyCode::Char(char::from_u32(c)?),
    };
    Some((code, modifiers))
}

/// The keys of `CSI n ~`.
fn tilde_key(n: u32) -> Option<KeyCode> {
    Some(match n {
        1 | 7 => KeyCode::Home,
        2 => KeyCode::Insert,
        3 => KeyCode::Delete,
        4 | 8 => KeyCode::End,
        5 => KeyCode::PageUp,
        6 => KeyCode::PageDown,
        11..=15 => KeyCode::F(u8::try_from(n - 10).ok()?),
        17..=21 => KeyCode::F(u8::try_from(n - 11).ok()?),
        23..=26 => KeyCode::F(u8::try_from(n - 12).ok()?),
        _ => return None,
    })
}

/// A bracketed paste: everything up to `ESC[201~`, as it was pasted.
fn paste(buf: &[u8], start: usize) -> Step {
    const PASTE_END: &[u8] = b"\x1b[201~";
    let body = &buf[start..];
    match body.windows(PASTE_END.len()).position(|w| w == PASTE_END) {
        Some(end) => {
            let text = String::from_utf8_lossy(&body[..end]).into_owned();
            Step::Got(
                start + end + PASTE_END.len(),
                Decoded::Event(Event::Paste(text)),
            )
        }
        None => Step::Incomplete,
    }
}

/// A string sequence (OSC, DCS, …) ended by BEL or `ESC \`.
fn string_sequence(buf: &[u8], meaning: fn(&[u8]) -> Option<Decoded>) -> Step {
    let body = &buf[2..];
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            0x07 => return finish(meaning(&body[..i]), 2 + i + 1),
            0x1b => match body.get(i + 1) {
                Some(b'\\') => return finish(meaning(&body[..i]), 2 + i + 2),
                Some(_) => return Step::Skip(2 + i),
                None => return Step::Incomplete,
            },
            _ => i += 1,
        }
    }
    Step::Incomplete
}

fn finish(item: Option<Decoded>, len: usize) -> Step {
    match item {
        Some(item) => Step::Got(len, item),
        None => Step::Skip(len),
    }
}

/// `>|NAME`: the terminal's name (any other DCS is skipped).
fn dcs(body: &[u8]) -> Option<Decoded> {
    let name = body.strip_prefix(b">|")?;
    let name = std::str::from_utf8(name).ok()?;
    let name: String = name.chars().filter(|c| !c.is_control()).take(100).collect();
    Some(Decoded::TerminalName(name))
}

/// `11;rgb:RRRR/GGGG/BBBB` (one to four hex digits a channel).
fn osc(body: &[u8]) -> Option<Decoded> {
    let text = std::str::from_utf8(body).ok()?;
    let spec = text.strip_prefix("11;")?;
    let channels = spec
        .strip_prefix("rgb:")
        .or_else(|| spec.strip_prefix("rgba:"))?;
    let mut parts = channels.split('/').map(channel);
    Some(Decoded::Background(Rgb(
        parts.next()??,
        parts.next()??,
        parts.next()??,
    )))
}

/// One hex channel scaled to eight bits.
fn channel(hex: &str) -> Option<u8> {
    if hex.is_empty() || hex.len() > 4 {
        return None;
    }
    let value = u32::from_str_radix(hex, 16).ok()?;
    let max = (1u32 << (4 * hex.len())) - 1;
    u8::try_from(value * 255 / max).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> Vec<Decoded> {
        let mut d = Decoder::default();
        let mut out = Vec::new();
        d.feed(bytes, &mut out);
        d.flush(&mut out);
        out
    }

    fn k(code: KeyCode, m: KeyModifiers) -> Decoded {
        key(code, m)
    }

    #[test]
    fn every_common_shift_enter_is_enter_with_shift() {
        let shift_enter = k(KeyCode::Enter, KeyModifiers::SHIFT);
        // xterm and tmux with modifyOtherKeys, then kitty's CSI u.
        assert_eq!(decode(b"\x1b[27;2;13~"), vec![shift_enter.clone()]);
        assert_eq!(decode(b"\x1b[13;2u"), vec![shift_enter]);
        assert_eq!(
            decode(b"\x1b\r"),
            vec![k(KeyCode::Enter, KeyModifiers::ALT)]
        );
        assert_eq!(
            decode(b"\n"),
            vec![k(KeyCode::Char('j'), KeyModifiers::CONTROL)]
        );
        assert_eq!(
            decode(b"\x1b[27;5;106~"),
            vec![k(KeyCode::Char('j'), KeyModifiers::CONTROL)]
        );
    }

    #[test]
    fn typed_text_control_keys_and_alt() {
        assert_eq!(
            decode("aÉ€".as_bytes()),
            vec![
                k(KeyCode::Char('a'), KeyModifiers::NONE),
                k(KeyCode::Char('É'), KeyModifiers::SHIFT),
                k(KeyCode::Char('€'), KeyModifiers::NONE),
            ]
        );
        assert_eq!(
            decode(b"\x03\x7f\t\x1bp\x1b[Z"),
            vec![
                k(KeyCode::Char('c'), KeyModifiers::CONTROL),
                k(KeyCode::Backspace, KeyModifiers::NONE),
                k(KeyCode::Tab, KeyModifiers::NONE),
                k(KeyCode::Char('p'), KeyModifiers::ALT),
                k(KeyCode::BackTab, KeyModifiers::SHIFT),
            ]
        );
    }

    #[test]
    fn cursor_and_editing_keys_with_modifiers() {
        assert_eq!(
            decode(b"\x1b[A\x1bOB\x1b[1;5C\x1b[3~\x1b[5;2~\x1b[H\x1b[15~"),
            vec![
                k(KeyCode::Up, KeyModifiers::NONE),
                k(KeyCode::Down, KeyModifiers::NONE),
                k(KeyCode::Right, KeyModifiers::CONTROL),
                k(KeyCode::Delete, KeyModifiers::NONE),
                k(KeyCode::PageUp, KeyModifiers::SHIFT),
                k(KeyCode::Home, KeyModifiers::NONE),
                k(KeyCode::F(5), KeyModifiers::NONE),
            ]
        );
    }

    #[test]
    fn esc_alone_and_twice_are_esc_keys() {
        let esc = k(KeyCode::Esc, KeyModifiers::NONE);
        assert_eq!(decode(b"\x1b"), vec![esc.clone()]);
        assert_eq!(decode(b"\x1b\x1b"), vec![esc.clone(), esc.clone()]);
        // An unfinished sequence waits for its end across reads.
        let mut d = Decoder::default();
        let mut out = Vec::new();
        d.feed(b"\x1b[1;", &mut out);
        assert!(out.is_empty() && d.has_pending());
        d.flush(&mut out);
        assert!(out.is_empty(), "a longer unfinished sequence keeps waiting");
        d.feed(b"2D", &mut out);
        assert_eq!(out, vec![k(KeyCode::Left, KeyModifiers::SHIFT)]);
        assert!(!d.has_pending());
    }

    #[test]
    fn a_paste_is_one_event_even_across_reads_and_with_escapes_inside() {
        let mut d = Decoder::default();
        let mut out = Vec::new();
        d.feed(b"\x1b[200~line one\r\n\x1b[A", &mut out);
        assert!(out.is_empty());
        d.feed(b"two\x1b[201~x", &mut out);
        assert_eq!(
            out,
            vec![
                Decoded::Event(Event::Paste("line one\r\n\x1b[Atwo".into())),
                k(KeyCode::Char('x'), KeyModifiers::NONE),
            ]
        );
    }

    #[test]
    fn answers_are_told_from_keys_typed_around_them() {
        assert_eq!(
            decode(b"a\x1b[12;40Rb\x1b]11;rgb:f0f0/f0f0/f0f0\x1b\\\x1b[?1u\x1b[?1;2cc"),
            vec![
                k(KeyCode::Char('a'), KeyModifiers::NONE),
                Decoded::CursorPosition { col: 39, row: 11 },
                k(KeyCode::Char('b'), KeyModifiers::NONE),
                Decoded::Background(Rgb(240, 240, 240)),
                Decoded::KeyboardFlags,
                Decoded::DeviceAttributes,
                k(KeyCode::Char('c'), KeyModifiers::NONE),
            ]
        );
        assert_eq!(
            decode(b"\x1b]11;rgb:00/2b/36\x07"),
            vec![Decoded::Background(Rgb(0, 0x2b, 0x36))]
        );
        assert!(Rgb(240, 240, 240).is_light());
        assert!(!Rgb(0, 0x2b, 0x36).is_light());
    }

    #[test]
    fn focus_reports_and_sequences_north_does_not_use() {
        assert_eq!(
            decode(b"\x1b[I\x1b[O"),
            vec![
                Decoded::Event(Event::FocusGained),
                Decoded::Event(Event::FocusLost)
            ]
        );
        // Mouse reports, an unknown OSC, another DCS answer, a broken
        // character: dropped, and the key after each still arrives.
        assert_eq!(
            decode(b"\x1b[<0;3;4Mq\x1b]52;c;eA==\x07q\x1bP1$r0m\x1b\\q\xffq\x1b[Mabcq"),
            vec![k(KeyCode::Char('q'), KeyModifiers::NONE); 5]
        );
        // The terminal's name, told apart from the keys around it.
        assert_eq!(
            decode(b"q\x1bP>|tmux 3.3a\x1b\\q"),
            vec![
                k(KeyCode::Char('q'), KeyModifiers::NONE),
                Decoded::TerminalName("tmux 3.3a".into()),
                k(KeyCode::Char('q'), KeyModifiers::NONE),
            ]
        );
    }

    #[test]
    fn kitty_keys_with_shifted_alternates_and_keypad() {
        assert_eq!(
            decode(b"\x1b[97;5u\x1b[97:65;2u\x1b[57400u\x1b[57441;2u\x1b[27u"),
            vec![
                k(KeyCode::Char('a'), KeyModifiers::CONTROL),
                k(KeyCode::Char('A'), KeyModifiers::NONE),
                k(KeyCode::Char('1'), KeyModifiers::NONE),
                k(KeyCode::Esc, KeyModifiers::NONE),
            ]
        );
    }
}
