//! The report of [`check_blocks!`](crate::check_blocks): natural blocks in
//! functions that lack `#[natural]`. Without the attribute a natural doc
//! comment is only documentation and an inline block only a string
//! statement, so the mistake neither runs nor fails; the macro scans source
//! files while the calling crate compiles (with the same sentinel rules
//! `#[natural]` uses) and this module presents what it found.

use std::fmt;

use thiserror::Error;

/// One problem [`check_blocks!`](crate::check_blocks) found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum BlockProblem {
    /// A function holds a natural block but has no `#[natural]` attribute,
    /// so the block never runs.
    #[error(
        "{file}:{line}: `fn {function}` has a natural {} but no #[natural] attribute, so the block never runs; add `#[north_natural::natural]` (or `use north_natural::natural;` and `#[natural]`) above `fn {function}`",
        block_kind(*docstring, *block_line)
    )]
    MissingAttribute {
        /// The file, relative to the crate's directory.
        file: &'static str,
        /// Line of the `fn` keyword.
        line: u32,
        /// The function's name.
        function: &'static str,
        /// Line where its first natural block starts.
        block_line: u32,
        /// Whether that block is the doc comment (else an inline block).
        docstring: bool,
    },
    /// A file could not be scanned (unreadable, not UTF-8, or not lexable
    /// as Rust), so forgotten attributes in it would go unnoticed.
    #[error("{file}: could not be checked for natural blocks: {message}")]
    Unscanned {
        /// The file, relative to the crate's directory.
        file: &'static str,
        /// Why.
        message: &'static str,
    },
}

fn block_kind(docstring: bool, line: u32) -> String {
    if docstring {
        format!("doc-comment block (line {line})")
    } else {
        format!("inline block (line {line})")
    }
}

/// What [`check_blocks!`](crate::check_blocks) found in the files it
/// scanned (built by the macro; read it in a test).
#[derive(Debug, Clone, Copy)]
pub struct BlockCheck {
    files: usize,
    problems: &'static [BlockProblem],
}

impl BlockCheck {
    #[doc(hidden)]
    pub const fn __new(files: usize, problems: &'static [BlockProblem]) -> Self {
        BlockCheck { files, problems }
    }

    /// How many `.rs` files were scanned.
    pub fn files_scanned(&self) -> usize {
        self.files
    }

    /// Every problem, by file then line.
    pub fn problems(&self) -> &'static [BlockProblem] {
        self.problems
    }

    /// Whether nothing was found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// `Ok` with the number of files scanned, or every problem found.
    pub fn result(&self) -> Result<usize, BlockCheckError> {
        if self.problems.is_empty() {
            Ok(self.files)
        } else {
            Err(BlockCheckError {
                problems: self.problems,
            })
        }
    }

    /// Panics with every problem, one per line, when there is any: the
    /// form for a test (`north_natural::check_blocks!().assert_ok()`).
    ///
    /// # Panics
    ///
    /// When a function has a natural block but no `#[natural]`, or a file
    /// could not be scanned.
    #[track_caller]
    pub fn assert_ok(&self) {
        if let Err(e) = self.result() {
            panic!("{e}");
        }
    }
}

/// The problems of a failed [`BlockCheck`], displayed one per line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}", Listed(problems))]
pub struct BlockCheckError {
    /// What was found.
    pub problems: &'static [BlockProblem],
}

struct Listed<'a>(&'a [BlockProblem]);

impl fmt::Display for Listed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        write!(
            f,
            "{n} natural block problem{} found by check_blocks!:",
            if n == 1 { "" } else { "s" }
        )?;
        for problem in self.0 {
            write!(f, "\n- {problem}")?;
        }
        Ok(())
    }
}
