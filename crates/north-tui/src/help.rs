//! `/help` and `?`: the commands and the keys, as the user reads them.

use ratatui::text::{Line, Span};

use crate::app::App;
use crate::style;

/// The commands, for `/help`.
pub const COMMANDS: &[(&str, &str)] = &[
    ("/help", "keys and commands"),
    (
        "/clear",
        "clear the screen and start a new conversation (also /new)",
    ),
    ("/memory", "show the project's memory entries"),
    ("/allowlist", "show the commands that run without asking"),
    (
        "/hooks",
        "the hooks that run at North's events, and where each is set",
    ),
    (
        "/agents",
        "the agents the model may delegate to, and the skills it may load",
    ),
    (
        "/model [NAME]",
        "show the model, or continue this session on another",
    ),
    (
        "/compact [focus]",
        "condense the conversation now, keeping what you name",
    ),
    ("/diff", "what this session changed in the files"),
    (
        "/ps [kill ID]",
        "background commands: state and last line; kill one",
    ),
    (
        "/worktree [merge NAME]",
        "North's worktrees; review one's changes into this tree",
    ),
    (
        "/plugin",
        "installed plugins: what each adds here; how to install one",
    ),
    (
        "/init",
        "have North write or improve AGENTS.md for this repository",
    ),
    (
        "/status",
        "model, session, context window use, tokens and cost",
    ),
    ("/cost", "tokens and cost of this session"),
    (
        "/undo [force]",
        "undo the last turn's file changes (its commands' too)",
    ),
    (
        "/rewind [N] [W]",
        "back to the start of turn N: W = code, conversation or both (a picker without N; esc esc too)",
    ),
    (
        "/mcp [login|logout NAME]",
        "MCP servers: state, tools, resources, prompts, last error; log in to one that asks",
    ),
    ("/sessions", "list this project's sessions"),
    (
        "/resume [ID|NAME]",
        "continue another session (a picker without ID)",
    ),
    (
        "/rename NAME",
        "name this session (north --resume NAME finds it; no NAME removes it)",
    ),
    (
        "/theme [NAME]",
        "dark, light or ansi (the terminal's 16 colours)",
    ),
    ("/exit", "leave North (also /quit, ctrl+d)"),
];

pub(crate) fn kv(key: &str, value: &str) -> Line<'static> {
    Line::from(vec![
        // A key longer than the column still gets a space before its text.
        Span::styled(
            format!("{key:<pad$}", pad = 14.max(key.chars().count() + 1)),
            style::key(),
        ),
        Span::raw(value.to_string()),
    ])
}

/// The keys, as `/help` ends with them and `?` shows them alone.
fn key_lines(app: &App) -> Vec<Line<'static>> {
    let newline = if app.keyboard_enhanced {
        "shift+enter, ctrl+j, alt+enter or \\ before enter"
    } else {
        "ctrl+j, alt+enter or \\ before enter"
    };
    [
        ("enter", "send"),
        ("newline", newline),
        ("↑ / ↓", "previous / next input"),
        ("ctrl+o", "the whole output of the latest tool result"),
        (
            "ctrl+t",
            "the whole transcript with all tool output (/ searches, q closes)",
        ),
        (
            "shift+tab",
            "next permission mode (ask, accept edits, plan, auto)",
        ),
        ("!cmd", "run a command yourself in the project shell"),
        (
            "@path",
            "attach a file (@path:10-40 some lines; a picker opens)",
        ),
        (
            "ctrl+v",
            "attach the clipboard's image (pasting a picture's path works too)",
        ),
        ("/", "the command palette"),
        ("?", "these keys (on an empty composer)"),
        (
            "esc esc",
            "clear the draft (↑ recalls it); on an empty composer, rewind to a turn",
        ),
        (
            "esc",
            "interrupt the running turn; at a prompt: refuse and stop",
        ),
        (
            "ctrl+c",
            "clear the draft (↑ recalls it), else interrupt; twice quickly quits",
        ),
        ("ctrl+l", "clear the screen (history moves to scrollback)"),
        ("ctrl+d", "quit (on an empty composer)"),
        ("ctrl+z", "suspend (`fg` in the shell brings North back)"),
        ("ctrl+g", "edit the draft in $VISUAL / $EDITOR"),
        (
            "ctrl+r",
            "search what you sent (again: older; enter keeps it)",
        ),
        (
            "ctrl+s",
            "stash the draft; on an empty composer, bring it back",
        ),
        ("alt+p", "switch model (the list of models)"),
        ("ctrl+a / e", "start / end of line"),
        (
            "ctrl+u / k / w",
            "delete to line start / to line end / the word before",
        ),
        ("alt+b / alt+f", "word back / forward"),
        ("ctrl+_", "undo the last edit of the draft"),
    ]
    .into_iter()
    .map(|(k, d)| kv(k, d))
    .collect()
}

/// `?` on an empty composer: the keys.
pub(crate) fn shortcuts(app: &mut App) {
    let body = key_lines(app);
    app.notice("Keys · /help lists the commands too", body);
}

/// `/help`: the commands (North's and the project's), then the keys.
pub(crate) fn help(app: &mut App) {
    let pad = COMMANDS
        .iter()
        .map(|(c, _)| c.chars().count() + 1)
        .max()
        .unwrap_or(14);
    let mut body: Vec<Line<'static>> = COMMANDS
        .iter()
        .map(|(c, d)| {
            Line::from(vec![
                Span::styled(format!("{c:<pad$}"), style::key()),
                Span::raw(d.to_string()),
            ])
        })
        .collect();
    if !app.info().commands.is_empty() {
        body.push(Line::default());
        for c in &app.info().commands {
            body.push(Line::from(vec![
                Span::styled(format!("{:<pad$}", c.name), style::key()),
                Span::raw(format!("{} (custom)", c.description)),
            ]));
        }
    }
    body.push(Line::default());
    body.extend(key_lines(app));
    app.notice("Commands", body);
}
