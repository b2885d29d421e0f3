//! The git worktrees North creates: a session started with `-w` or a
//! sub-agent with `isolation: worktree` works in a checkout of its own, on
//! a branch of its own (`north/<name>`), beside the repository
//! (`<repo>.worktrees/<name>`), and its work comes back to the main tree
//! only through review.
//!
//! - [`create`] makes one through North's neutral git (no configuration
//!   or hook of the repository runs), refusing a dirty source tree unless
//!   asked to carry the changes, copying what `.worktreeinclude` names;
//!   [`Registry`] records it as North's own, in the user's data directory
//!   where no sandboxed command writes.
//! - [`changes`] says what a worktree changed since its base, each file
//!   against the main tree as it is now: clean, merged or in conflict
//!   (git's own three-way merge; conflicts keep their markers and are
//!   never resolved for the user); [`apply`] writes what the user accepted
//!   through North's atomic edit apply.
//! - [`remove`] deletes only a worktree North recorded, never following a
//!   link out of it.
//!
//! Module map, lowest first: `error`, `record` (the registry), `gitrun`
//! (North's git in a worktree; uses `error`), `create` (uses `gitrun`,
//! `record`), `changes` (uses `gitrun`, `record`), `merge` (uses
//! `changes`), `remove` (uses `changes`, `record`).
//!
//! It must not ask the user anything or print: front ends review, this
//! crate plans and applies.

mod changes;
mod create;
mod error;
mod gitrun;
mod merge;
mod record;
mod remove;

pub use changes::{Change, ChangeKind, changes, state};
pub use create::{CreateRequest, DirtyPolicy, create};
pub use error::WorktreeError;
pub use merge::{Applied, apply, as_proposal, note_merged};
pub use record::{MergedFile, Owner, Registry, Worktree, valid_name};
pub use remove::{Removed, removable, remove};
