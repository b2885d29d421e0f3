//! Claude Code plugins and marketplaces for North: installed from a git
//! URL, `OWNER/REPO`, a local folder or a marketplace; pinned to a commit
//! and a content hash; shown to the user — what each adds and will run —
//! before anything of theirs runs; read into commands, agents, skills,
//! hooks and MCP servers for a session.
//!
//! Main types: [`Store`] (the user's installed plugins and marketplaces,
//! in North's data dir), [`Staged`] (a plugin fetched and waiting for the
//! user's yes), [`Active`] (what a session loads), [`Parts`] (one plugin
//! read), [`PluginError`].
//!
//! Modules, lowest first: `error`; `source` (what SOURCE names);
//! `manifest` (plugin.json); `marketplace` (marketplace.json, uses
//! manifest); `registry` (the store's record, uses source); `fetch` (git
//! and the copy that refuses links out); `parts` (a plugin read into what
//! North runs, uses manifest); `review` (what the user reads, uses parts);
//! `store` (install, update, remove, marketplaces; uses fetch, manifest,
//! marketplace, registry); `active` (what a session loads, uses store and
//! parts).
//!
//! This crate must not run anything a plugin holds: hooks and servers are
//! started by the runtime, inside the sandbox, after review.

mod active;
mod error;
mod fetch;
mod manifest;
mod marketplace;
mod parts;
mod registry;
pub mod review;
mod source;
mod store;

pub use active::{Active, ActivePlugin};
pub use error::PluginError;
pub use fetch::content_hash;
pub use manifest::{Block, MANIFEST, Manifest};
pub use marketplace::{Entry, EntrySource, LISTING, Listing};
pub use parts::{Parts, server_name};
pub use registry::{InstalledPlugin, MarketplaceRecord, Origin, Registry};
pub use source::{DEFAULT_FORGE, Request, Source, forge, valid_name};
pub use store::{Staged, Store};
