//! North's orchestrator: turns a model and tools into an assistant.
//!
//! Main types: [`Agent`] (one session's tool loop: system prompt and
//! context, streamed model calls, tool calls in order under approval,
//! NOTES patches and actions, condensation, a checkpoint after every step;
//! [`ModelSwitch`] moves a session to another model),
//! [`Approver`] (how front ends decide shell commands, edits and
//! capabilities; [`FlagApprover`] for headless runs),
//! [`store::SessionStore`] (atomic checkpoints and JSONL traces under
//! `.north/sessions/<id>/`), [`memory::MemoryFile`] (memory with BM25
//! retrieval), and [`undo`] (per-turn snapshots of the
//! working tree; undo and rewind of code and conversation). The mesh
//! (planner → executor → memory) is built on this crate in `north-mesh`.
//!
//! This crate must not render anything or read the terminal: front ends
//! submit actions and render the events it emits.
//!
//! Module map, lowest first — each module uses only modules above it, so
//! there are no import circles:
//! - `approval`: approvals
//! - `clipboard`: an image on the system clipboard (the TUI's Ctrl+V)
//! - `condense`: condensation
//! - `frontmatter`: the `---` block atop Markdown files users write (commands, agents, skills)
//! - `hooks`: running the user's commands at lifecycle events (their definitions: `north-config`)
//! - `redact`: scrubbing secrets out of anything North writes or shows
//! - `skills`: skills, folders with `SKILL.md` (uses `frontmatter`)
//! - `subagents`: custom agent definitions (uses `frontmatter`, `hooks`)
//! - `store`: sessions on disk, in `.north/sessions/<id>/` (uses `redact`)
//! - `context`: what the model is told (uses `store`)
//! - `instructions`: the instruction files the model is given (`AGENTS.md`, `CLAUDE.md`, `GEMINI.md`, the user's, `@path` imports, a subdirectory's) (`north-config`, `north-tools`' containment)
//! - `intent`: intent lines ("Searching: `foo` in `src/`") and result summaries
//! - `memory`: memory entries and retrieval (runtime-contracts §5, mesh memory format) (uses `store`; `north-config`)
//! - `trust`: workspace trust (uses `memory`, `store`; `north-config`)
//! - `undo`: undo and rewind (uses `store`)
//! - `agent`: the agent (uses `approval`, `condense`, `context`, `instructions`, `intent`, `memory`, `redact`, `store`, `trust`, `undo`; `north-config`, `north-protocol`'s `blocks`, `notes`, `textcalls`)
//! - `commands`: custom slash commands
//! - `recovery`: panics North recovers from (a tool's panic fails its call)

mod agent;
pub mod approval;
pub mod clipboard;
pub mod commands;
pub mod condense;
pub mod context;
pub mod frontmatter;
pub mod hooks;
pub mod instructions;
pub mod intent;
pub mod memory;
pub mod recovery;
pub mod redact;

pub mod skills;
pub mod store;
pub mod subagents;
pub mod trust;
pub mod undo;

pub use agent::{
    AGENT_TOOL, Agent, AgentError, AgentOptions, AttachError, Delegation, Describer, DiffError,
    Emit, ExpandError, ExpandedInput, INTERRUPTED_NOTE, InputExpander, Isolated, Isolator,
    MERGE_REVIEW, ModeError, ModeKit, ModelFactory, ModelSwitch, RewindReport, SessionDiff,
    SessionEndReason, SwitchReport, TurnEnd, event_queue, is_interrupted_note,
};
pub use approval::{ApprovalRequest, Approver, FlagApprover};
/// Background commands as front ends show them (`/ps`).
pub use north_tools::shell::background::{JobState, JobSummary};
