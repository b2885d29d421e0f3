//! North's interactive terminal front end.
//!
//! One conversational timeline printed into the terminal's normal screen
//! (finished items scroll into scrollback and stay there after exit) above
//! a small live area: the answer being streamed, an inline diff review or
//! command approval, the composer and a status line.
//!
//! Main types: [`App`] (the UI state machine: agent events and keys in,
//! [`Action`]s out), [`TuiApprover`] (the agent's approver: each request
//! becomes a prompt answered over a oneshot channel), [`InlineTerminal`]
//! (the inline live area with lines inserted above), and [`run`] (the loop
//! that wires them to a real terminal and an [`north_agent::Agent`]).
//!
//! This crate must not call a model or run a tool: it renders the events
//! the agent emits and submits the user's input and decisions.
//!
//! Module map, lowest first — each module uses only modules above it, so
//! there are no import circles:
//! - `approver`: the approver the TUI gives the agent
//! - `style`: the palette and its three themes (dark, light, ansi)
//! - `links`: web addresses in text, never broken and written as OSC 8 links
//! - `wrap`: word wrapping of styled lines to an exact width; a web address wider than a row is kept whole (uses `links`)
//! - `checklist`: the model's plan as a checklist that updates in place (uses `style`, `wrap`)
//! - `composer`: the composer (uses `style`, `wrap`)
//! - `diff`: diffs for review (uses `style`, `wrap`)
//! - `form`: a server's form (MCP elicitation) on screen (uses `approver`, `style`, `wrap`)
//! - `hooks`: what the binary plugs into the TUI
//! - `live`: a running command's output as it arrives (uses `style`)
//! - `highlight`: syntax highlighting of fenced code with syntect's bundled syntaxes (uses `style`)
//! - `markdown`: markdown to styled, wrapped terminal lines (uses `highlight`, `style`, `wrap`)
//! - `popup`: the completion popup on screen (the command palette or the `@` file picker)
//! - `prompt`: a prompt on screen (a command, an edit review, a capability, the end of a plan) and… (uses `approver`)
//! - `stream`: the answer being streamed, final lines and live ones (uses `markdown`)
//! - `transcript`: transcript items (uses `diff`, `markdown`, `style`, `wrap`)
//! - `replay`: a stored conversation as the timeline showed it live (for `/resume` and resumed sessions) (uses `transcript`)
//! - `rewind`: `/undo` and `/rewind` (uses `approver`, `diff`, `style`)
//! - `app`: the UI state machine (uses `approver`, `checklist`, `composer`, `diff`, `form`, `hooks`, `live`, `markdown`, `popup`, `prompt`, `replay`, `rewind`, `stream`, `style`, `transcript`)
//! - `events`: agent events into the timeline (uses `app`, `diff`, `stream`, `transcript`)
//! - `commit`: what reaches history, once (uses `app`, `markdown`, `stream`, `style`, `transcript`, `wrap`)
//! - `mcp`: `/mcp` (uses `app`, `style`, `wrap`)
//! - `plan`: the end of a `plan`-mode turn (uses `app`, `approver`)
//! - `header`: the start header (uses `app`, `plan`, `style`)
//! - `view`: the live area under the transcript (uses `app`, `approver`, `diff`, `markdown`, `plan`, `style`, `wrap`)
//! - `help`: `/help` and `?`: the commands and the keys (uses `app`, `style`)
//! - `slash`: slash commands (uses `app`, `help`, `mcp`, `plan`, `rewind`, `style`, `transcript`, `view`, `wrap`)
//! - `complete`: completion popups over the composer (uses `app`, `help`, `popup`, `style`, `wrap`)
//! - `search`: Ctrl+R, reverse search through history, its keys (uses `app`, `composer`)
//! - `bindings`: the keys the user rebound (uses `app`, `search`; `north-config`'s chords)
//! - `review`: per-hunk review of an edit, its keys (uses `app`, `approver`, `prompt`)
//! - `keys`: key handling (uses `app`, `approver`, `bindings`, `help`, `review`, `search`, `slash`, `transcript`)
//! - `pager`: the transcript view (uses `style`)
//! - `decode`: the terminal's bytes as keys, pastes, focus changes and answers to North's questions
//! - `input`: terminal input on its own thread, the questions North asks the terminal, and a pause while another program has the terminal (uses `decode`)
//! - `reflow`: how the terminal rewraps North's rows on a resize, to find the live area again from the cursor (uses `wrap`)
//! - `backend`: the real terminal's backend, every move relative to where the cursor was left, and finished lines with web addresses written as text the terminal wraps, with OSC 8 links (uses `links`, `wrap`)
//! - `term`: the terminal: the live area under the transcript, the cursor left on the composer (uses `backend`, `reflow`)
//! - `worktrees`: `/worktree`, North's worktrees and one's review (uses `approver`, `style`)
//! - `worker`: the agent's side of the interactive loop (uses `approver`, `diff`, `rewind`, `style`, `worktrees`)
//! - `notify`: desktop notifications while the terminal is unfocused (uses `approver`)
//! - `run`: the interactive loop; `run::handover` suspends (Ctrl+Z) and opens the user's editor (Ctrl+G), `run::status` runs the status line command (uses `app`, `approver`, `input`, `notify`, `pager`, `term`, `worker`; `north-sandbox`'s spawner)

mod app;
mod approver;
mod backend;
mod bindings;
mod checklist;
mod commit;
mod complete;
mod composer;
mod decode;
mod diff;
mod events;
mod form;
mod header;
mod help;
mod highlight;
pub mod hooks;
mod input;
mod keys;
mod links;
mod live;
pub mod markdown;
mod mcp;
mod notify;
pub mod pager;
mod plan;
mod popup;
mod prompt;
mod reflow;
mod replay;
mod review;
mod rewind;
mod run;
mod search;
mod slash;
mod stream;
mod style;
mod term;
mod transcript;
mod view;
mod worker;
mod worktrees;
mod wrap;

pub use app::{Action, App, SessionInfo};
pub use approver::{FeedbackSlot, Inbox, Prompt, PromptKind, TuiApprover, UiMsg, channel};
pub use backend::{FrameBackend, SharedWriter, TtyBackend};
pub use form::FormAsker;
pub use help::COMMANDS;
pub use hooks::{FileFinder, McpAuth, McpServerLine, McpView, ModelLister, PluginManager};
pub use reflow::Reflow;
pub use rewind::RewindRequest;
pub use run::{Backend, Ended, Exit, STREAM_FPS, Start, TuiError, draw, restore_terminal, run};
pub use term::InlineTerminal;
pub use transcript::Item;
pub use worker::{RemoteWorker, SessionSource, WorkerCmd};
