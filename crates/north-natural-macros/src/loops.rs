//! The loops around the blocks of a `#[natural]` function: which loop a
//! block's `continue`/`break` acts on, and the loops it cannot leave.
//!
//! A block's effects are expanded to *labeled* `continue`/`break` of its
//! innermost loop (the user's label, or one added to the loop), because an
//! unlabeled one is refused inside a labeled block (`'a: { ... }`, E0695)
//! although the loop around it is the one the model means. A `loop` that
//! is left with `break <value>` cannot take the model's `break`, which has no
//! value: that is reported at the block, with what to write instead.

use proc_macro2::Span;
use syn::{ExprBreak, Label, Lifetime};

/// One loop around the code being expanded.
struct Loop {
    /// The label the blocks' effects use: the user's, or `generated`.
    label: Lifetime,
    /// Whether the user wrote no label (one is added if a block uses it).
    generated: bool,
    /// Whether the loop is a `loop` (the only kind `break` can give a value).
    value_loop: bool,
    /// Blocks that may `continue` or `break` this loop.
    blocks: Vec<Span>,
    /// The first `break <value>` that leaves this loop.
    value_break: Option<Span>,
}

/// Loops set aside by [`Loops::set_aside`].
pub(crate) struct SetAside(Vec<Loop>);

/// The loops around the current point of the expansion, innermost last.
#[derive(Default)]
pub(crate) struct Loops {
    stack: Vec<Loop>,
    /// Generated labels so far (each one is unique in the function).
    generated: u32,
}

impl Loops {
    /// Enters a loop whose label is `label` (if the user wrote one);
    /// `value_loop` for `loop`, which alone can be left with a value.
    pub(crate) fn enter(&mut self, label: Option<&Label>, value_loop: bool) {
        let (label, generated) = match label {
            Some(l) => (l.name.clone(), false),
            None => {
                self.generated += 1;
                let name = format!("'__natural_loop_{}", self.generated);
                (Lifetime::new(&name, Span::call_site()), true)
            }
        };
        self.stack.push(Loop {
            label,
            generated,
            value_loop,
            blocks: Vec::new(),
            value_break: None,
        });
    }

    /// Leaves the innermost loop: the label to add to it (when a block uses
    /// it and the user wrote none), and the errors for blocks it cannot
    /// serve.
    pub(crate) fn exit(&mut self) -> (Option<Label>, Vec<syn::Error>) {
        let Some(done) = self.stack.pop() else {
            return (None, Vec::new());
        };
        let mut errors = Vec::new();
        if let Some(at) = done.value_break.filter(|_| !done.blocks.is_empty()) {
            for block in &done.blocks {
                errors.push(syn::Error::new(
                    *block,
                    "a natural block cannot sit in a `loop` that is left with `break <value>`: the block may end with the model's `break`, which has no value to give; \
                     keep the value in a variable declared before the loop and leave it with a plain `break` \
                     (`let mut found = None; loop { ... found = Some(x); break; }`), or move the block out of this loop",
                ));
            }
            errors.push(syn::Error::new(
                at,
                "this `break` gives the loop a value, so the natural block inside the loop cannot `break` it (see the error at the block)",
            ));
        }
        let label = (done.generated && !done.blocks.is_empty()).then(|| Label {
            name: done.label,
            colon_token: Default::default(),
        });
        (label, errors)
    }

    /// The label a block at `block` uses for `continue`/`break`: its
    /// innermost loop's, or `None` outside any loop.
    pub(crate) fn block_target(&mut self, block: Span) -> Option<Lifetime> {
        let innermost = self.stack.last_mut()?;
        innermost.blocks.push(block);
        Some(innermost.label.clone())
    }

    /// Notes a `break` of the user's code: with a value, the loop it leaves
    /// cannot take a block's `break`.
    pub(crate) fn note_break(&mut self, b: &ExprBreak) {
        if b.expr.is_none() {
            return;
        }
        // An unlabeled `break` leaves the innermost loop; a labeled one the
        // loop with that label (or a labeled block, which is not tracked).
        let target = match &b.label {
            None => self.stack.last_mut(),
            Some(label) => self
                .stack
                .iter_mut()
                .rev()
                .find(|l| !l.generated && l.label.ident == label.ident),
        };
        if let Some(target) = target.filter(|l| l.value_loop) {
            target.value_break.get_or_insert(b.break_token.span);
        }
    }

    /// The loops so far, set aside while expanding a closure or an async
    /// block: code there cannot `break` or `continue` them. The label count
    /// stays, so generated labels remain unique.
    pub(crate) fn set_aside(&mut self) -> SetAside {
        SetAside(std::mem::take(&mut self.stack))
    }

    /// Puts back what [`Loops::set_aside`] took.
    pub(crate) fn restore(&mut self, saved: SetAside) {
        self.stack = saved.0;
    }
}
