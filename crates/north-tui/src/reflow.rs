//! How a terminal rewraps the rows North drew when it is resized, so the
//! live area can be found again from where the terminal says the cursor is.
//!
//! North leaves the cursor on the composer (where an input method and a
//! magnifier look for it); after a resize the live area starts as many
//! rows above it as the rows above the cursor take at the new width.

use ratatui::buffer::{Buffer, Cell, CellDiffOption};

/// How the terminal rewraps its rows when it narrows, which decides
/// where the live area is after a resize (see `InlineTerminal::resize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reflow {
    /// A row wider than the new width goes on over the rows below it
    /// (tmux, VTE, kitty, iTerm2, Alacritty, WezTerm, Windows Terminal,
    /// foot, Konsole).
    Split,
    /// A row is cut at the new width (xterm, rxvt, st, the Linux console).
    #[default]
    Truncate,
}

impl Reflow {
    /// The behaviour of the terminal North runs in: by the name it gave
    /// (XTVERSION, which reaches North over ssh too) when it is one North
    /// knows, else by its environment.
    pub fn of_terminal(name: Option<&str>, var: impl Fn(&str) -> Option<String>) -> Reflow {
        let name = name.unwrap_or_default().to_ascii_lowercase();
        let splitting = [
            "tmux",
            "kitty",
            "wezterm",
            "foot",
            "iterm2",
            "ghostty",
            "konsole",
            "alacritty",
            "contour",
            "mintty",
            "rio",
            "vte",
            "windows terminal",
        ];
        if name.starts_with("xterm(") {
            Reflow::Truncate
        } else if splitting.iter().any(|n| name.starts_with(n)) {
            Reflow::Split
        } else {
            Reflow::of_environment(var)
        }
    }

    /// The behaviour of the terminal North runs in, told by its
    /// environment; inside tmux or screen, the multiplexer is the terminal.
    /// A terminal that does not say what it is (over ssh only `TERM`
    /// arrives) is taken to cut rows: if it rewraps them after all, a
    /// narrowing resize leaves a piece of the old live area above the new
    /// one, where the other guess would erase a line of the transcript.
    pub fn of_environment(var: impl Fn(&str) -> Option<String>) -> Reflow {
        let set = |name: &str| var(name).is_some_and(|v| !v.is_empty());
        let term = var("TERM").unwrap_or_default();
        let named = |prefixes: &[&str]| prefixes.iter().any(|p| term.starts_with(p));
        if set("TMUX") || set("STY") || named(&["tmux", "screen"]) {
            return Reflow::Split;
        }
        if set("XTERM_VERSION") {
            return Reflow::Truncate;
        }
        let rewrapping = [
            "TERM_PROGRAM",
            "VTE_VERSION",
            "KITTY_WINDOW_ID",
            "ALACRITTY_WINDOW_ID",
            "WEZTERM_PANE",
            "WT_SESSION",
            "KONSOLE_VERSION",
        ];
        let rewrapping_terms = [
            "xterm-kitty",
            "xterm-ghostty",
            "foot",
            "alacritty",
            "wezterm",
            "contour",
        ];
        if rewrapping.iter().any(|v| set(v)) || named(&rewrapping_terms) {
            Reflow::Split
        } else {
            Reflow::Truncate
        }
    }
}

/// How far row `y` of `buf` reaches as the terminal counts it: to the end
/// of its last cell that is not a plain blank. (A blank North writes over
/// old text counts too in tmux, so a row that gets shorter is erased and
/// written again: see `InlineTerminal::draw_live`.)
pub(crate) fn reach(buf: &Buffer, y: u16) -> u16 {
    let area = buf.area;
    let mut end = 0;
    for x in area.left()..area.right() {
        let cell = &buf[(x, y)];
        if *cell != Cell::EMPTY && cell.diff_option != CellDiffOption::Skip {
            let w = u16::try_from(crate::wrap::width(cell.symbol()).max(1)).unwrap_or(1);
            end = end.max(x - area.left() + w);
        }
    }
    end
}

/// The rows row `y` of `buf` takes once a terminal that rewraps has made
/// it `width` wide, and which of them column `at` lands on.
pub(crate) fn rewrapped(buf: &Buffer, y: u16, width: u16, at: u16) -> (u16, u16) {
    let area = buf.area;
    let end = reach(buf, y);
    let width = width.max(1);
    let (mut rows, mut col, mut at_row) = (1u16, 0u16, None);
    let mut x = 0;
    while x < end {
        let cell = &buf[(area.left() + x, y)];
        let w = u16::try_from(crate::wrap::width(cell.symbol()).max(1)).unwrap_or(1);
        // A wide letter that does not fit goes whole to the next row.
        if col > 0 && col + w > width {
            rows += 1;
            col = 0;
        }
        if (x..x + w).contains(&at) {
            at_row = Some(rows - 1);
        }
        col += w;
        x += w;
    }
    (rows, at_row.unwrap_or(rows - 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;

    fn row(text: &str, width: u16) -> Buffer {
        let mut buf = Buffer::empty(Rect::new(0, 3, width, 1));
        buf.set_string(0, 3, text, ratatui::style::Style::new());
        buf
    }

    #[test]
    fn a_row_reaches_to_its_last_written_cell() {
        assert_eq!(reach(&row("", 20), 3), 0);
        assert_eq!(reach(&row("ab  cd", 20), 3), 6);
        // A wide letter takes two cells.
        assert_eq!(reach(&row("a界", 20), 3), 3);
        let mut styled = row("ab", 20);
        styled[(9, 3)].set_style(ratatui::style::Style::new().bg(ratatui::style::Color::Blue));
        assert_eq!(reach(&styled, 3), 10, "a coloured blank is drawn");
    }

    #[test]
    fn a_narrowed_row_takes_the_rows_its_text_needs_and_says_where_a_column_lands() {
        let rule = row(&"─".repeat(120), 120);
        assert_eq!(rewrapped(&rule, 3, 80, 0), (2, 0));
        assert_eq!(rewrapped(&rule, 3, 40, 100), (3, 2));
        assert_eq!(rewrapped(&rule, 3, 120, 5), (1, 0));
        let short = row("› hello", 120);
        assert_eq!(
            rewrapped(&short, 3, 10, 7),
            (1, 0),
            "the cursor cell past the text"
        );
        assert_eq!(
            rewrapped(&row("", 120), 3, 10, 0),
            (1, 0),
            "an empty row is one row"
        );
        // A wide letter that does not fit starts the next row.
        assert_eq!(rewrapped(&row("abcd界", 20), 3, 5, 4), (2, 1));
    }

    #[test]
    fn a_terminal_that_names_itself_is_believed_before_the_environment() {
        let bare = |name: &str| {
            if name == "TERM" {
                Some("xterm-256color".to_string())
            } else {
                None
            }
        };
        assert_eq!(Reflow::of_terminal(Some("tmux 3.3a"), bare), Reflow::Split);
        assert_eq!(
            Reflow::of_terminal(Some("kitty(0.39.1)"), bare),
            Reflow::Split
        );
        assert_eq!(
            Reflow::of_terminal(Some("WezTerm 20240203"), bare),
            Reflow::Split
        );
        assert_eq!(
            Reflow::of_terminal(Some("XTerm(390)"), bare),
            Reflow::Truncate
        );
        assert_eq!(
            Reflow::of_terminal(Some("something new"), bare),
            Reflow::Truncate
        );
        assert_eq!(Reflow::of_terminal(None, bare), Reflow::Truncate);
    }

    #[test]
    fn the_terminal_is_told_by_its_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_string())
            }
        };
        assert_eq!(
            Reflow::of_environment(env(&[("TERM", "xterm-256color")])),
            Reflow::Truncate,
            "a terminal that does not say what it is"
        );
        assert_eq!(
            Reflow::of_environment(env(&[("TERM", "xterm-256color"), ("VTE_VERSION", "7600")])),
            Reflow::Split
        );
        assert_eq!(
            Reflow::of_environment(env(&[("TERM", "xterm-kitty")])),
            Reflow::Split
        );
        assert_eq!(
            Reflow::of_environment(env(&[
                ("TERM", "xterm-256color"),
                ("XTERM_VERSION", "XTerm(390)")
            ])),
            Reflow::Truncate
        );
        assert_eq!(
            Reflow::of_environment(env(&[
                ("XTERM_VERSION", "XTerm(390)"),
                ("TMUX", "/tmp/t,1,0")
            ])),
            Reflow::Split,
            "tmux inside xterm rewraps"
        );
        assert_eq!(
            Reflow::of_environment(env(&[("TERM", "rxvt-unicode-256color")])),
            Reflow::Truncate
        );
        assert_eq!(
            Reflow::of_environment(env(&[("TERM", "st-256color")])),
            Reflow::Truncate
        );
        assert_eq!(
            Reflow::of_environment(env(&[("TERM", "tmux-256color")])),
            Reflow::Split
        );
        assert_eq!(Reflow::of_environment(env(&[])), Reflow::Truncate);
    }
}
