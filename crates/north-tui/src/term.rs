//! The terminal: an inline live area at the bottom of the normal screen.
//!
//! Finished transcript lines are written above the live area and scroll up
//! into the terminal's own scrollback, so the conversation stays there after
//! North exits and selection and copy work as in any other program. The live
//! area grows and shrinks with what it shows. Every frame is one
//! synchronized update, and ratatui only sends the cells that changed.

use std::io;

use ratatui::backend::ClearType;
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Rect, Size};
use ratatui::text::Line;

use crate::backend::{FrameBackend, io_err, rows_of};
use crate::reflow::{Reflow, reach, rewrapped};

/// The live area and the lines printed above it.
///
/// The live area is drawn by diffing against what it showed last; it is
/// placed and erased by this type alone (ratatui's own viewport handling
/// erases the screen from the top-left corner on a narrowing resize, which
/// a terminal with scrollback keeps).
pub struct InlineTerminal<B: FrameBackend> {
    backend: B,
    screen: Size,
    top: u16,
    height: u16,
    /// What the live area shows now; `None` when it must be drawn whole.
    shown: Option<Buffer>,
    /// Where the terminal's cursor was left: on the composer's text
    /// cursor, else on the live area's first row.
    cursor: Position,
    reflow: Reflow,
}

impl<B: FrameBackend> InlineTerminal<B> {
    /// A live area starting at row `cursor_row` of a `screen`-sized terminal.
    pub fn new(backend: B, screen: Size, cursor_row: u16) -> io::Result<Self> {
        let top = cursor_row.min(screen.height.saturating_sub(1));
        let mut t = InlineTerminal {
            backend,
            screen,
            top,
            height: 0,
            shown: None,
            cursor: Position::new(0, top),
            reflow: Reflow::default(),
        };
        t.set_height(1)?;
        Ok(t)
    }

    /// Tells how the terminal rewraps rows when it narrows.
    pub fn set_reflow(&mut self, reflow: Reflow) {
        self.reflow = reflow;
    }

    /// Where the terminal's cursor was left after the last frame.
    pub fn cursor(&self) -> Position {
        self.cursor
    }

    /// The terminal size.
    pub fn size(&self) -> Size {
        self.screen
    }

    /// The live area.
    pub fn area(&self) -> Rect {
        Rect::new(0, self.top, self.screen.width, self.height)
    }

    /// The backend (tests read the screen from it).
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The backend, mutably.
    pub(crate) fn backend_mut(&mut self) -> &mut B {
        &mut self.backend
    }

    /// Scrolls the whole screen up `n` rows: the top rows go to scrollback.
    fn scroll_up(&mut self, n: u16) -> io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        let b = &mut self.backend;
        b.set_cursor_position(Position::new(0, self.screen.height.saturating_sub(1)))
            .map_err(io_err)?;
        b.append_lines(n).map_err(io_err)?;
        self.top = self.top.saturating_sub(n);
        Ok(())
    }

    /// Erases rows `from..to` one line at a time. Never an erase-display
    /// from the cursor: a terminal with scrollback (tmux, among others)
    /// keeps what such an erase removes from the top-left corner, and the
    /// live area must never land in scrollback.
    fn erase_rows(&mut self, from: u16, to: u16) -> io::Result<()> {
        let b = &mut self.backend;
        for row in from..to {
            b.set_cursor_position(Position::new(0, row))
                .map_err(io_err)?;
            b.clear_region(ClearType::CurrentLine).map_err(io_err)?;
        }
        Ok(())
    }

    /// Leaves the cursor on the composer's text cursor (`at`), where an
    /// input method and a magnifier look for it, else on the live area's
    /// first row. The terminal keeps it on its line through a resize's
    /// reflow, so after a resize its position, less the rows above it in
    /// the live area, says where the live area now starts.
    fn park_cursor(&mut self, at: Option<Position>) -> io::Result<()> {
        let area = self.area();
        self.cursor = at
            .filter(|p| area.contains(*p))
            .unwrap_or(Position::new(0, self.top));
        self.backend
            .set_cursor_position(self.cursor)
            .map_err(io_err)
    }

    /// Rows between the live area's first row and the cursor's row once
    /// the terminal has been made `width` wide: the rows above the cursor
    /// as this terminal rewraps them, and the part of its own row before
    /// it.
    fn rows_above_cursor(&self, width: u16) -> u16 {
        let above = self.cursor.y.saturating_sub(self.top);
        let Some(shown) = &self.shown else {
            return above;
        };
        if self.reflow == Reflow::Truncate || width >= self.screen.width {
            return above;
        }
        let rows: u16 = (self.top..self.cursor.y)
            .filter(|y| shown.area.contains(Position::new(0, *y)))
            .map(|y| rewrapped(shown, y, width, 0).0)
            .sum();
        let own = if shown.area.contains(self.cursor) {
            rewrapped(shown, self.cursor.y, width, self.cursor.x).1
        } else {
            0
        };
        rows.saturating_add(own)
    }

    /// The live area moved or changed size: its next frame is drawn whole.
    fn place(&mut self) -> io::Result<()> {
        self.shown = None;
        Ok(())
    }

    /// Draws the live area: only the cells that changed since the last
    /// frame, or all of it (on rows erased first) after it moved.
    fn draw_live(
        &mut self,
        render: impl FnOnce(Rect, &mut Buffer) -> Option<Position>,
    ) -> io::Result<Option<Position>> {
        let area = self.area();
        let mut next = Buffer::empty(area);
        let at = render(area, &mut next);
        let mut base = match self.shown.take() {
            Some(b) if b.area == area => b,
            _ => {
                self.erase_rows(area.top(), area.bottom())?;
                Buffer::empty(area)
            }
        };
        // A row that gets shorter is erased and written again rather
        // than blanked: the blanks would count as text when the terminal
        // rewraps it on a resize (tmux counts every cell written since
        // the row was erased), and the rows above the cursor must be
        // exactly as long as what they show.
        for y in area.top()..area.bottom() {
            if reach(&next, y) < reach(&base, y) {
                self.erase_rows(y, y + 1)?;
                for x in area.left()..area.right() {
                    base[(x, y)] = Cell::EMPTY;
                }
            }
        }
        let cells: Vec<(u16, u16, Cell)> = base
            .diff(&next)
            .into_iter()
            .map(|(x, y, c)| (x, y, c.clone()))
            .collect();
        self.backend
            .draw(cells.iter().map(|(x, y, c)| (*x, *y, c)))
            .map_err(io_err)?;
        self.shown = Some(next);
        Ok(at)
    }

    /// Makes the live area `height` rows tall, scrolling the screen when it
    /// would not fit below its top row.
    pub(crate) fn set_height(&mut self, height: u16) -> io::Result<()> {
        let height = height.clamp(1, self.screen.height.max(1));
        if height == self.height {
            return Ok(());
        }
        if self.top + height > self.screen.height {
            let over = self.top + height - self.screen.height;
            self.scroll_up(over)?;
        }
        if height < self.height {
            // Leave nothing of the taller area behind.
            self.erase_rows(self.top + height, self.top + self.height)?;
        }
        self.height = height;
        self.place()
    }

    /// Prints finished lines above the live area (they scroll into the
    /// terminal's scrollback) and moves the live area below them.
    pub(crate) fn insert_lines(&mut self, lines: &[Line<'_>]) -> io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let width = self.screen.width.max(1);
        let screen_h = self.screen.height.max(1);
        let mut row = self.top;
        self.erase_rows(row, screen_h)?;
        for line in lines {
            let rows = rows_of(line, width).min(screen_h);
            if row + rows > screen_h {
                // Rows scrolled in at the bottom are blank.
                let over = row + rows - screen_h;
                self.top = row;
                self.scroll_up(over)?;
                row = self.top;
            }
            self.backend.write_line(row, line, width)?;
            row += rows;
        }
        self.top = row;
        if self.top + self.height > screen_h {
            let over = self.top + self.height - screen_h;
            self.scroll_up(over)?;
        }
        self.place()
    }

    /// Draws one frame: `lines` printed above, then the live area at
    /// `height` rows rendered by `render`, all in one synchronized update.
    /// `render` says where the text cursor is, if anywhere.
    pub fn frame(
        &mut self,
        lines: &[Line<'_>],
        height: u16,
        render: impl FnOnce(Rect, &mut Buffer) -> Option<Position>,
    ) -> io::Result<()> {
        self.backend.begin_frame()?;
        let result = (|| {
            self.insert_lines(lines)?;
            self.set_height(height)?;
            let at = self.draw_live(render)?;
            self.park_cursor(at)
        })();
        let end = self.backend.end_frame();
        result.and(end)
    }

    /// Adapts to a new terminal size. `anchor` is the row the cursor is
    /// on now, if the terminal said: the terminal kept the cursor on its
    /// line however it reflowed or cut the screen, so the live area now
    /// starts as many rows above it as the rows above the cursor take at
    /// the new width; everything above that is transcript.
    pub fn resize(&mut self, screen: Size, anchor: Option<u16>) -> io::Result<()> {
        let old = self.screen;
        let last = screen.height.saturating_sub(1);
        let above = self.rows_above_cursor(screen.width);
        self.backend.assume_cursor_row(anchor);
        self.screen = screen;
        self.top = match anchor {
            Some(row) => row.saturating_sub(above).min(last),
            // Without an answer: a terminal that shrinks keeps the
            // cursor's line on screen, so the live area is at most where
            // it was, and no lower than its old distance from the bottom.
            None => {
                let from_bottom = old.height.saturating_sub(self.top);
                self.top
                    .min(screen.height.saturating_sub(from_bottom))
                    .min(last)
            }
        };
        self.erase_rows(self.top, screen.height)?;
        let height = self.height.clamp(1, screen.height.max(1));
        if self.top + height > screen.height {
            let over = self.top + height - screen.height;
            self.scroll_up(over)?;
        }
        self.height = height;
        self.place()?;
        // Until the next frame the live area is empty and the cursor on
        // its first row, so another resize before then finds it again.
        self.park_cursor(None)
    }

    /// Clears the screen and puts the live area on top. What was printed
    /// above the live area moves into scrollback (it is history); the live
    /// area is erased first so none of it goes there.
    pub fn clear_screen(&mut self) -> io::Result<()> {
        self.erase_rows(self.top, self.screen.height)?;
        let top = self.top;
        self.scroll_up(top)?;
        self.top = 0;
        self.place()
    }

    /// Erases the live area and leaves the cursor where it was, so the
    /// shell continues right under the transcript.
    pub fn finish(&mut self) -> io::Result<()> {
        let top = self.top;
        self.backend.begin_frame()?;
        self.erase_rows(top, self.screen.height)?;
        self.shown = None;
        self.park_cursor(None)?;
        let b = &mut self.backend;
        b.show_cursor().map_err(io_err)?;
        b.end_frame()
    }
}
