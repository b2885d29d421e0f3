//! Backends a frame is drawn through: the real terminal's, which moves
//! the cursor only relative to where it left it, and ratatui's test
//! backend. Finished lines with web addresses are written as text the
//! terminal wraps, with OSC 8 links.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use crossterm::QueueableCommand;
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use ratatui::backend::{Backend, ClearType, CrosstermBackend, TestBackend, WindowSize};
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::{Position, Rect, Size};
use ratatui::text::Line;
use ratatui::widgets::Widget;

pub(crate) fn io_err<E: std::error::Error>(e: E) -> io::Error {
    io::Error::other(e.to_string())
}

/// A backend that can bracket a frame so the terminal shows it at once.
pub trait FrameBackend: Backend {
    /// Starts a synchronized update.
    fn begin_frame(&mut self) -> io::Result<()>;
    /// Ends it and flushes.
    fn end_frame(&mut self) -> io::Result<()>;
    /// Tells the backend the row the terminal's cursor is on now (from the
    /// terminal's own answer), or that it is not known.
    fn assume_cursor_row(&mut self, _row: Option<u16>) {}
    /// Writes a finished line from the start of `row` on erased rows; a
    /// line wider than `width` goes on over the rows below.
    fn write_line(&mut self, row: u16, line: &Line<'_>, width: u16) -> io::Result<()> {
        draw_cells(self, row, line, width)
    }
}

/// Rows a finished line takes at `width`: one wider than the terminal (a
/// long web address, kept whole) goes on over the rows below.
pub(crate) fn rows_of(line: &Line<'_>, width: u16) -> u16 {
    let cells = crate::wrap::spans_width(&line.spans);
    let rows = cells.div_ceil(usize::from(width.max(1))).max(1);
    u16::try_from(rows).unwrap_or(u16::MAX)
}

/// Draws `line` at `row` cell by cell, as ratatui places cells; a line
/// wider than `width` is cut into rows.
fn draw_cells<B: Backend + ?Sized>(
    b: &mut B,
    row: u16,
    line: &Line<'_>,
    width: u16,
) -> io::Result<()> {
    let width = width.max(1);
    let long = width.saturating_mul(rows_of(line, width));
    let area = Rect::new(0, 0, long, 1);
    let mut buf = Buffer::empty(area);
    line.clone().render(area, &mut buf);
    let cells: Vec<(u16, u16, Cell)> = Buffer::empty(area)
        .diff(&buf)
        .into_iter()
        .map(|(x, _, c)| (x % width, row + x / width, c.clone()))
        .collect();
    b.draw(cells.iter().map(|(x, y, c)| (*x, *y, c)))
        .map_err(io_err)
}

impl FrameBackend for TestBackend {
    fn begin_frame(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn end_frame(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A writer shared between ratatui's backend and the frame brackets.
#[derive(Debug)]
pub struct SharedWriter<W>(Arc<Mutex<W>>);

impl<W> Clone for SharedWriter<W> {
    fn clone(&self) -> Self {
        SharedWriter(self.0.clone())
    }
}

impl<W: Write> Write for SharedWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0.lock() {
            Ok(mut w) => w.write(buf),
            Err(_) => Err(io::Error::other("terminal writer poisoned")),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self.0.lock() {
            Ok(mut w) => w.flush(),
            Err(_) => Err(io::Error::other("terminal writer poisoned")),
        }
    }
}

/// A crossterm backend over any writer, with a size set by the caller
/// (from resize events) instead of queried on every frame.
///
/// Every move is made from where the cursor was left, up or down so many
/// rows (columns are set outright): a frame that reaches the terminal
/// after it resized (the terminal moves its lines, and the cursor with
/// them, before the program is told) is drawn where the live area went,
/// not over the transcript lines that took its old rows.
pub struct TtyBackend<W: Write> {
    inner: CrosstermBackend<SharedWriter<W>>,
    out: SharedWriter<W>,
    size: Size,
    /// The row the cursor is on, as far as North moved it; `None` until
    /// the first move, which is made outright.
    row: Option<u16>,
}

impl<W: Write> TtyBackend<W> {
    /// A backend writing to `writer`, for a terminal of `size`.
    pub fn new(writer: W, size: Size) -> Self {
        let out = SharedWriter(Arc::new(Mutex::new(writer)));
        TtyBackend {
            inner: CrosstermBackend::new(out.clone()),
            out,
            size,
            row: None,
        }
    }

    /// Sets the terminal size (after a resize event).
    pub fn set_size(&mut self, size: Size) {
        self.size = size;
    }

    /// Moves the cursor to `(x, y)` from the row it is on.
    fn move_to(&mut self, x: u16, y: u16) -> io::Result<()> {
        use crossterm::cursor::{MoveDown, MoveTo, MoveToColumn, MoveUp};
        match self.row {
            None => {
                self.out.queue(MoveTo(x, y))?;
                self.row = Some(y);
                return Ok(());
            }
            Some(r) if y < r => {
                self.out.queue(MoveUp(r - y))?;
            }
            Some(r) if y > r => {
                self.out.queue(MoveDown(y - r))?;
            }
            Some(_) => {}
        }
        if x == 0 {
            self.out.write_all(b"\r")?;
        } else {
            self.out.queue(MoveToColumn(x))?;
        }
        self.row = Some(y);
        Ok(())
    }

    /// Runs `f` on the underlying writer.
    pub fn with_writer<R>(&self, f: impl FnOnce(&mut W) -> R) -> io::Result<R> {
        match self.out.0.lock() {
            Ok(mut w) => Ok(f(&mut w)),
            Err(_) => Err(io::Error::other("terminal writer poisoned")),
        }
    }
}

impl<W: Write> Backend for TtyBackend<W> {
    type Error = io::Error;

    /// Draws cells as ratatui's crossterm backend does, but reaches each
    /// run of them from the cursor's row (see [`TtyBackend`]).
    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        use crossterm::style::{Attribute, Print, SetAttribute, SetStyle};
        use ratatui::backend::IntoCrossterm;
        use ratatui::style::Style;
        let mut style: Option<Style> = None;
        let mut next: Option<Position> = None;
        for (x, y, cell) in content {
            if next != Some(Position::new(x, y)) {
                self.move_to(x, y)?;
            }
            let width = u16::try_from(crate::wrap::width(cell.symbol()).max(1)).unwrap_or(1);
            next = Some(Position::new(x.saturating_add(width), y));
            let want = cell.style();
            if style != Some(want) {
                // From plain, so no attribute of the last cell stays on.
                self.out.queue(SetAttribute(Attribute::Reset))?;
                // After the reset the terminal's own colours are on: only
                // the others are sent.
                let mut content = want.into_crossterm();
                let own = |c: Option<crossterm::style::Color>| {
                    c.filter(|c| *c != crossterm::style::Color::Reset)
                };
                content.foreground_color = own(content.foreground_color);
                content.background_color = own(content.background_color);
                content.underline_color = own(content.underline_color);
                self.out.queue(SetStyle(content))?;
                style = Some(want);
            }
            self.out.queue(Print(cell.symbol()))?;
        }
        self.out.queue(SetAttribute(Attribute::Reset))?;
        Ok(())
    }
    /// New blank rows at the bottom: from the last row, each line feed
    /// scrolls the screen up one row and the cursor stays on that row.
    fn append_lines(&mut self, n: u16) -> io::Result<()> {
        for _ in 0..n {
            self.out.write_all(b"\n")?;
        }
        Ok(())
    }
    fn hide_cursor(&mut self) -> io::Result<()> {
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> io::Result<()> {
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> io::Result<Position> {
        // Never queried: the live area tracks its own position.
        Ok(Position::ORIGIN)
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        let p = position.into();
        self.move_to(p.x, p.y)
    }
    fn clear(&mut self) -> io::Result<()> {
        self.inner.clear()
    }
    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.inner.clear_region(clear_type)
    }
    fn size(&self) -> io::Result<Size> {
        Ok(self.size)
    }
    fn window_size(&mut self) -> io::Result<WindowSize> {
        Ok(WindowSize {
            columns_rows: self.size,
            pixels: Size::default(),
        })
    }
    fn flush(&mut self) -> io::Result<()> {
        Backend::flush(&mut self.inner)
    }
}

impl<W: Write> FrameBackend for TtyBackend<W> {
    fn begin_frame(&mut self) -> io::Result<()> {
        self.out.queue(BeginSynchronizedUpdate)?;
        Ok(())
    }
    fn end_frame(&mut self) -> io::Result<()> {
        self.out.queue(EndSynchronizedUpdate)?;
        self.out.flush()
    }
    fn assume_cursor_row(&mut self, row: Option<u16>) {
        self.row = row;
    }
    /// A line with a web address or a file name is written as text, each
    /// an OSC 8 link, and the terminal wraps what is wider than a row: it
    /// stays one line that selection, copy and a resize's reflow join
    /// again. Other lines are drawn cell by cell.
    fn write_line(&mut self, row: u16, line: &Line<'_>, width: u16) -> io::Result<()> {
        use crossterm::style::{PrintStyledContent, StyledContent};
        use ratatui::backend::IntoCrossterm;
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        // The directory is asked for only when a word looks like a file.
        let cwd = std::cell::OnceCell::new();
        let links = crate::links::links(&text, |p| {
            let full = cwd
                .get_or_init(|| std::env::current_dir().unwrap_or_default())
                .join(p);
            full.is_file().then_some(full)
        });
        if links.is_empty() {
            return draw_cells(self, row, line, width);
        }
        self.move_to(0, row)?;
        let mut at = 0;
        for span in &line.spans {
            let style = line.style.patch(span.style).into_crossterm();
            let content = span.content.as_ref();
            let span_range = at..at + content.len();
            at = span_range.end;
            // The span's pieces, each inside or outside a link.
            let mut cut = span_range.start;
            while cut < span_range.end {
                let link = links.iter().find(|(r, _)| r.start <= cut && cut < r.end);
                let end = match link {
                    Some((r, _)) => r.end.min(span_range.end),
                    None => links
                        .iter()
                        .map(|(r, _)| r.start)
                        .filter(|&s| s > cut)
                        .min()
                        .unwrap_or(span_range.end)
                        .min(span_range.end),
                };
                let piece = &content[cut - span_range.start..end - span_range.start];
                if let Some((_, target)) = link {
                    write!(self.out, "\x1b]8;;{target}\x1b\\")?;
                }
                // As ratatui draws cells: no control character reaches
                // the terminal.
                let piece: String = piece.chars().filter(|c| !c.is_control()).collect();
                self.out
                    .queue(PrintStyledContent(StyledContent::new(style, piece)))?;
                if link.is_some() {
                    write!(self.out, "\x1b]8;;\x1b\\")?;
                }
                cut = end;
            }
        }
        // The terminal wrapped the text: the cursor is on its last row.
        self.row = Some(row.saturating_add(rows_of(line, width).saturating_sub(1)));
        Ok(())
    }
}
