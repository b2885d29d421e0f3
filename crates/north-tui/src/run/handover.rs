//! Handing the terminal to another program and taking it back: Ctrl+Z
//! (the shell, until `fg`), Ctrl+G (the user's editor on the draft) and
//! `e` at an edit review (the editor on the proposed files).

use std::io;
use std::sync::atomic::Ordering;

use crossterm::terminal;
use ratatui::layout::Size;

use super::{ENHANCED, Loop, restore_terminal};

impl Loop {
    /// Ctrl+Z: hands the terminal back to the shell as it was and stops
    /// North like any job; `fg` brings it back, redrawn where the shell
    /// left the cursor. The whole process stops, a running turn with it;
    /// commands North started keep running.
    pub(super) fn suspend(&mut self) -> io::Result<()> {
        let enhanced = self.leave_terminal()?;
        #[cfg(unix)]
        // SAFETY: raise has no memory-safety preconditions; SIGTSTP's
        // default action stops the process until the shell sends SIGCONT.
        unsafe {
            libc::raise(libc::SIGTSTP);
        }
        self.reenter_terminal(enhanced)
    }

    /// Ctrl+G: the draft in the user's editor; what it saved is the
    /// draft.
    pub(super) fn edit_draft(&mut self) -> io::Result<()> {
        let made = tempfile::Builder::new()
            .prefix("north-draft-")
            .suffix(".md")
            .tempfile()
            .and_then(|f| std::fs::write(f.path(), self.app.composer_text()).map(|()| f));
        let file = match made {
            Ok(f) => f,
            Err(e) => {
                self.app
                    .set_hint(format!("cannot write the draft for the editor: {e}"));
                return self.draw_now();
            }
        };
        let read = self
            .run_editor(&[file.path().to_path_buf()])?
            .and_then(|()| {
                std::fs::read_to_string(file.path())
                    .map_err(|e| format!("the saved draft could not be read back: {e}"))
            });
        match read {
            Ok(text) => self
                .app
                .set_composer_text(text.strip_suffix('\n').unwrap_or(&text)),
            Err(why) => self.app.set_hint(format!("{why}; the draft is as it was")),
        }
        self.draw_now()
    }

    /// `e` at an edit review: the proposed files in the user's editor; what
    /// they save is accepted (and the model told how it differs from its
    /// proposal). An editor that fails leaves the review open.
    pub(super) fn edit_proposal(&mut self) -> io::Result<()> {
        let proposed = self.app.proposed_files();
        if proposed.is_empty() {
            return Ok(());
        }
        let (_dir, files) = match review_files(&proposed) {
            Ok(made) => made,
            Err(e) => {
                self.app
                    .set_hint(format!("cannot write the edit for the editor: {e}"));
                return self.draw_now();
            }
        };
        // A file the editor left unreadable (deleted, renamed) keeps the
        // review open rather than accepting something else.
        let saved = self.run_editor(&files)?.and_then(|()| {
            proposed
                .iter()
                .zip(&files)
                .map(|((path, _), file)| {
                    std::fs::read_to_string(file)
                        .map(|text| (path.clone(), text))
                        .map_err(|e| format!("{path} could not be read back: {e}"))
                })
                .collect::<Result<Vec<_>, String>>()
        });
        match saved {
            Ok(saved) => self.app.accept_edited(saved),
            Err(why) => self
                .app
                .set_hint(format!("{why}; the review is still open")),
        }
        self.draw_now()
    }

    /// Runs the user's `$VISUAL` or `$EDITOR` (else `vi`) on `files`: it
    /// gets the terminal until it exits, North's input thread reading
    /// nothing meanwhile. `Err`: why it did not end well.
    fn run_editor(&mut self, files: &[std::path::PathBuf]) -> io::Result<Result<(), String>> {
        let editor = ["VISUAL", "EDITOR"]
            .iter()
            .filter_map(|v| std::env::var(v).ok())
            .find(|e| !e.trim().is_empty())
            .unwrap_or_else(|| "vi".into());
        let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
        let paused = self.input.pause();
        let enhanced = self.leave_terminal()?;
        // Through the shell, as git runs it: `EDITOR="code --wait"` works.
        let status = north_sandbox::Spawner::terminal_command("sh".as_ref(), &cwd)
            .arg("-c")
            .arg(format!("{editor} \"$@\""))
            .arg("north-editor")
            .args(files)
            .status();
        drop(paused);
        self.reenter_terminal(enhanced)?;
        Ok(match status {
            Ok(s) if s.success() => Ok(()),
            Ok(s) => Err(format!("`{editor}` exited with {s}")),
            Err(e) => Err(format!("cannot start `{editor}`: {e}; set $EDITOR")),
        })
    }

    /// Erases the live area and puts the terminal back as the shell had
    /// it; whether the keyboard enhancement was on.
    fn leave_terminal(&mut self) -> io::Result<bool> {
        self.term.finish()?;
        let enhanced = ENHANCED.load(Ordering::SeqCst);
        restore_terminal();
        Ok(enhanced)
    }

    /// Takes the terminal back after another program had it: raw mode and
    /// North's input modes again, the live area redrawn where that program
    /// left the cursor.
    fn reenter_terminal(&mut self, enhanced: bool) -> io::Result<()> {
        super::take_terminal(enhanced)?;
        let (cols, rows) = terminal::size()?;
        let size = Size::new(cols, rows);
        let anchor = self.input.cursor_row();
        self.term.backend_mut().set_size(size);
        self.term.resize(size, anchor)?;
        self.app.mark_dirty();
        self.draw_now()
    }
}

/// The proposed files in a private temporary directory, each under its own
/// name (so the editor knows its language): the directory, and the files in
/// the proposal's order.
fn review_files(
    proposed: &[(String, String)],
) -> io::Result<(tempfile::TempDir, Vec<std::path::PathBuf>)> {
    let dir = tempfile::Builder::new().prefix("north-review-").tempdir()?;
    let mut files = Vec::new();
    for (i, (path, content)) in proposed.iter().enumerate() {
        let name = std::path::Path::new(path)
            .file_name()
            .map_or_else(|| format!("file-{i}"), |n| n.to_string_lossy().into_owned());
        let sub = dir.path().join(i.to_string());
        std::fs::create_dir_all(&sub)?;
        let file = sub.join(name);
        std::fs::write(&file, content)?;
        files.push(file);
    }
    Ok((dir, files))
}
