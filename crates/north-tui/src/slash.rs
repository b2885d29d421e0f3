//! Slash commands: `/help`, `/clear`, `/memory`, `/allowlist`, `/hooks`, `/agents`, `/mcp`, `/model`,
//! `/status`, `/cost`, `/sessions`, `/resume`, `/rename`, `/undo`, `/rewind`. They read
//! project files to show them or hand an action to the agent's worker; they
//! never call the model.

use north_agent::memory::MemoryFile;
use north_agent::store::SessionStore;
use north_agent::trust::AllowRulesView;
use ratatui::text::{Line, Span};

use crate::app::{Action, App, Picker};
use crate::help::kv;
use crate::style;
use crate::transcript::Item;

fn session_label(cp: Option<&north_protocol::Checkpoint>) -> String {
    match cp {
        Some(cp) => {
            let first = cp
                .recent_messages
                .iter()
                .find(|m| m.role == north_protocol::Role::User)
                .map(|m| north_agent::hooks::without_context(&m.content))
                .and_then(|own| own.lines().next().map(str::to_string))
                .unwrap_or_default();
            format!(
                "{:>3} msgs  {}",
                cp.recent_messages.len(),
                crate::wrap::truncate(&first, 50)
            )
        }
        None => "(no checkpoint)".into(),
    }
}

/// `/theme [NAME]`: switches the palette (what is already in the
/// scrollback keeps its colours), or says which is on.
fn theme(app: &mut App, name: Option<&str>) {
    use crate::style::Theme;
    match name.map(Theme::named) {
        Some(Some(theme)) => {
            crate::style::set_theme(theme);
            app.notice(format!("Theme: {}", theme.name()), Vec::new());
            app.mark_dirty();
        }
        Some(None) => app.push(Item::Error(
            "themes: dark, light, ansi (set `theme` in your config to keep one)".into(),
        )),
        None => app.notice(
            format!("Theme: {}", crate::style::theme().name()),
            vec![kv(
                "others",
                "/theme dark · /theme light · /theme ansi (or `theme` in your config)",
            )],
        ),
    }
}

/// What `/init` asks the model.
pub(crate) const INIT_PROMPT: &str = "Write or improve AGENTS.md at the root of this repository: the guide a coding agent reads first. Look at the repository before writing (build files, README, CI configuration, the layout of the source tree, existing AGENTS.md, CLAUDE.md or .cursorrules). Cover: what the project is in two lines; how to build, test, lint and format (exact commands); the layout (where things live); conventions the code follows (errors, naming, tests); and pitfalls. Keep it short, concrete and true to this repository; keep what an existing file says that is still right. Propose it as an edit.";

/// Runs the slash command line `line`.
pub(crate) fn run(app: &mut App, line: &str) -> Vec<Action> {
    let mut words = line.split_whitespace();
    let command = words.next().unwrap_or("/");
    let rest: Vec<&str> = words.clone().collect();
    let arg = words.next();
    match command {
        "/help" | "/?" => crate::help::help(app),
        "/exit" | "/quit" => return vec![Action::Quit],
        "/clear" | "/new" => {
            if app.is_busy() {
                app.push(Item::Error(
                    "a turn is running: interrupt it first (esc), then start anew".into(),
                ));
                return Vec::new();
            }
            let mut actions = Vec::new();
            if command == "/clear" {
                actions.push(Action::ClearScreen);
            }
            actions.push(Action::New);
            return actions;
        }
        "/memory" => memory(app),
        "/status" => status(app),
        "/cost" => cost(app),
        "/allowlist" => allowlist(app),
        "/hooks" => hooks(app),
        "/agents" | "/skills" => agents(app),
        "/plugin" | "/plugins" if !rest.is_empty() && app.info().plugin_manager.0.is_some() => {
            return vec![Action::Plugin(
                rest.iter().map(|w| (*w).to_string()).collect(),
            )];
        }
        "/plugin" | "/plugins" => plugins(app),
        "/mcp" => return crate::mcp::command(app, &rest),
        "/model" if !rest.is_empty() => {
            if app.is_busy() {
                app.push(Item::Error("the model changes between turns".into()));
            } else {
                return vec![Action::SwitchModel(rest.join(" "))];
            }
        }
        "/model" => model(app),
        "/compact" | "/diff" | "/init" if app.is_busy() => {
            app.push(Item::Error(format!("{command} runs between turns")));
        }
        "/compact" => {
            let focus = (!rest.is_empty()).then(|| rest.join(" "));
            app.start_turn(line);
            return vec![Action::Compact(focus)];
        }
        "/diff" => return vec![Action::Diff],
        "/ps" => return ps(app, &rest),
        "/worktree" | "/worktrees" => return worktree(app, line, &rest),
        "/init" => {
            app.start_turn(line);
            return vec![Action::Submit(INIT_PROMPT.to_string())];
        }
        "/undo" => return undo(app, &rest),
        "/rewind" if rest.is_empty() => return vec![Action::ListTurns],
        "/rewind" => match crate::rewind::parse(&rest) {
            Ok(req) if req.turn.is_some() => return vec![Action::Rewind(req)],
            Ok(_) => app.push(Item::Error(
                "/rewind needs a turn number: /rewind lists them".into(),
            )),
            Err(e) => app.push(Item::Error(e)),
        },
        "/sessions" => sessions(app),
        // An id, or a session's name (names may hold spaces).
        "/resume" => match arg {
            Some(_) => return app.resume(&rest.join(" ")),
            None => picker(app),
        },
        "/rename" => return vec![Action::Rename(rest.join(" "))],
        "/theme" => theme(app, arg),
        other => app.push(Item::Error(format!(
            "unknown command {other}; /help lists the commands"
        ))),
    }
    Vec::new()
}

/// `/model` alone: the model in use, and how to pick another.
fn model(app: &mut App) {
    let info = app.info().clone();
    app.notice(
        "Model",
        vec![
            kv("model", &info.model),
            kv("provider", &info.provider),
            Line::from(Span::styled(
                "Type `/model ` to pick another (the session continues on it), or set `model` in .north/project.json or your user config (see `north config`).",
                style::dim(),
            )),
        ],
    );
}

/// `/ps` lists background commands; `/ps kill ID` stops one.
fn ps(app: &mut App, rest: &[&str]) -> Vec<Action> {
    let kill = match (rest.first(), rest.get(1)) {
        (Some(&"kill"), Some(id)) => Some((*id).to_string()),
        (None, _) => None,
        _ => {
            app.push(Item::Error("usage: /ps, or /ps kill ID".into()));
            return Vec::new();
        }
    };
    vec![Action::Ps(kill)]
}

/// `/worktree [list]` lists North's worktrees; `/worktree merge NAME`
/// reviews one's changes into this tree (between turns).
fn worktree(app: &mut App, line: &str, rest: &[&str]) -> Vec<Action> {
    match rest {
        [] | ["list"] => vec![Action::Worktree(None)],
        ["merge", name] if app.is_busy() => {
            app.push(Item::Error(format!(
                "/worktree merge {name} runs between turns"
            )));
            Vec::new()
        }
        ["merge", name] => {
            app.start_turn(line);
            vec![Action::Worktree(Some((*name).to_string()))]
        }
        _ => {
            app.push(Item::Error(
                "usage: /worktree (list), or /worktree merge NAME".into(),
            ));
            Vec::new()
        }
    }
}

/// `/undo [force]`: the last turn's file changes taken back.
fn undo(app: &mut App, rest: &[&str]) -> Vec<Action> {
    match rest {
        [] | ["force"] => vec![Action::Rewind(crate::rewind::RewindRequest {
            turn: None,
            scope: north_agent::undo::RewindScope::Code,
            force: !rest.is_empty(),
        })],
        _ => {
            app.push(Item::Error(
                "/undo takes no argument but `force`; /rewind N goes further back".into(),
            ));
            Vec::new()
        }
    }
}

/// Token counts and cost, as `/status` and `/cost` show them.
/// How much of the input came from the prompt cache: ` (62% of input
/// from cache)`, or nothing before any input.
fn cache_share(u: &north_protocol::Usage) -> String {
    let all = u
        .input_tokens
        .saturating_add(u.cache_read_input_tokens)
        .saturating_add(u.cache_creation_input_tokens);
    if all == 0 {
        return String::new();
    }
    format!(
        " ({}% of input from cache)",
        u.cache_read_input_tokens * 100 / all
    )
}

fn usage_lines(app: &App) -> Vec<Line<'static>> {
    let u = app.usage_total;
    let n = crate::view::thousands;
    let mut lines = vec![
        kv("input", &format!("{} tokens", n(u.input_tokens))),
        kv("output", &format!("{} tokens", n(u.output_tokens))),
        kv(
            "cache",
            &format!(
                "{} read, {} written{}",
                n(u.cache_read_input_tokens),
                n(u.cache_creation_input_tokens),
                cache_share(&u)
            ),
        ),
    ];
    let cost = match app.info().catalog {
        Some(m) => format!("${:.4} (catalogue prices of {})", m.cost(&u), m.id),
        None => "unknown (no price for this model)".to_string(),
    };
    lines.push(kv("cost", &cost));
    lines
}

fn status(app: &mut App) {
    let info = app.info().clone();
    let mut body = vec![
        kv("provider", &info.provider),
        kv("model", &info.model),
        kv(
            "session",
            if info.session_id.is_empty() {
                "new"
            } else {
                &info.session_id
            },
        ),
        kv("project", &info.root.display().to_string()),
        kv(
            "mode",
            &format!("{} (shift+tab cycles)", crate::plan::mode_label(info.mode)),
        ),
    ];
    if let Some(trust) = &info.trust {
        body.push(kv("trust", trust));
    }
    if !info.instructions.is_empty() {
        body.push(kv("instructions", &info.instructions.join(", ")));
    }
    let context = match info.context_window {
        Some(w) if w > 0 => format!(
            "{} of {} tokens ({}%) in the last request",
            crate::view::thousands(app.context_used),
            crate::view::thousands(w),
            (app.context_used * 100).div_ceil(w).min(100)
        ),
        _ => "unknown".to_string(),
    };
    body.push(kv("context", &context));
    body.extend(usage_lines(app));
    app.notice("Status", body);
}

fn cost(app: &mut App) {
    let body = usage_lines(app);
    app.notice("Cost of this session", body);
}

fn memory(app: &mut App) {
    let file = MemoryFile::project(&app.info().root);
    match file.load() {
        Ok(entries) if entries.is_empty() => app.notice(
            "Memory · no entries",
            vec![Line::from(Span::styled(
                "North remembers outcomes in .north/memory.json (`north mesh`, `north memory add`).",
                style::dim(),
            ))],
        ),
        Ok(entries) => app.notice(
            format!("Memory · {} entries (.north/memory.json)", entries.len()),
            memory_lines(&entries),
        ),
        Err(e) => app.push(Item::Error(format!("cannot read memory: {e}"))),
    }
    // The global memory reaches the model too, so it is shown with the
    // project's.
    let Some(path) = app.info().global_memory.clone() else {
        return;
    };
    match MemoryFile::new(path.clone()).load() {
        Ok(entries) if entries.is_empty() => {}
        Ok(entries) => app.notice(
            format!(
                "Global memory · {} entries ({}; `north memory list --global`)",
                entries.len(),
                path.display()
            ),
            memory_lines(&entries),
        ),
        Err(e) => app.push(Item::Error(format!("cannot read global memory: {e}"))),
    }
}

fn memory_lines(entries: &[north_agent::memory::MemoryEntry]) -> Vec<Line<'static>> {
    entries
        .iter()
        .map(|e| {
            let mut spans = vec![
                Span::styled("• ", style::dim()),
                Span::styled(e.goal.clone(), style::key()),
                Span::raw(" — "),
                Span::raw(e.summary.clone()),
            ];
            if !e.tags.is_empty() {
                spans.push(Span::styled(
                    format!("  [{}]", e.tags.join(", ")),
                    style::dim(),
                ));
            }
            Line::from(spans)
        })
        .collect()
}

fn allowlist(app: &mut App) {
    match AllowRulesView::load(&app.info().root) {
        Ok(rules) if rules.is_empty() => app.notice(
            "Allowlist · empty",
            vec![Line::from(Span::styled(
                "Choose \"Always execute\" on a command prompt to add one to .north/allowlist.json.",
                style::dim(),
            ))],
        ),
        Ok(rules) => {
            let bullet = |text: String, suffix: &'static str| {
                Line::from(vec![
                    Span::styled("• ", style::dim()),
                    Span::styled(text, style::code()),
                    Span::styled(suffix, style::dim()),
                ])
            };
            let body = rules
                .commands
                .iter()
                .map(|c| bullet(c.clone(), ""))
                .chain(
                    rules
                        .prefixes
                        .iter()
                        .map(|p| bullet(format!("{p} …"), "  (and its arguments)")),
                )
                .chain(rules.tools.iter().map(|t| bullet(t.clone(), "  (tool)")))
                .collect();
            let n = rules.len();
            app.notice(
                format!(
                    "Allowlist · {n} rule{} run without asking (.north/allowlist.json)",
                    if n == 1 { "" } else { "s" }
                ),
                body,
            );
        }
        Err(e) => app.push(Item::Error(format!("cannot read the allowlist: {e}"))),
    }
}

fn agents(app: &mut App) {
    let info = app.info().clone();
    let bullet = |text: &String| {
        Line::from(vec![
            Span::styled("• ", style::dim()),
            Span::styled(text.clone(), style::code()),
        ])
    };
    let mut body: Vec<Line<'static>> = info.agents.iter().map(bullet).collect();
    body.push(Line::from(Span::styled(
        if info.skills.is_empty() {
            "Skills: none (folders with SKILL.md in .north/skills, .claude/skills, .agents/skills or ~/.config/north/skills)".to_string()
        } else {
            format!("Skills ({}): the model sees each description and loads a body when it applies", info.skills.len())
        },
        style::dim(),
    )));
    body.extend(info.skills.iter().map(bullet));
    for line in &info.agents_not_used {
        body.push(Line::from(Span::styled(
            format!("not used: {line}"),
            style::dim(),
        )));
    }
    app.notice(format!("Agents · {}", info.agents.len()), body);
}

fn plugins(app: &mut App) {
    let info = app.info().clone();
    let mut body: Vec<Line<'static>> = info
        .plugins
        .iter()
        .map(|text| {
            Line::from(vec![
                Span::styled("• ", style::dim()),
                Span::styled(text.clone(), style::code()),
            ])
        })
        .collect();
    for hint in [
        "/plugin install SOURCE (a git URL, OWNER/REPO, a folder, NAME@MARKETPLACE) shows what the plugin adds and runs; /plugin accept installs it.",
        "/plugin update NAME · remove NAME · enable|disable NAME · marketplace add SOURCE · marketplace list. Changes load in the next session.",
    ] {
        body.push(Line::from(Span::styled(hint.to_string(), style::dim())));
    }
    app.notice(format!("Plugins · {}", info.plugins.len()), body);
}

fn hooks(app: &mut App) {
    let info = app.info().clone();
    let bullet = |text: String| {
        Line::from(vec![
            Span::styled("• ", style::dim()),
            Span::styled(text, style::code()),
        ])
    };
    let mut body: Vec<Line<'static>> = info.hooks.describe().into_iter().map(bullet).collect();
    if !info.hooks_not_run.is_empty() {
        body.push(Line::from(Span::styled(
            "Not run — the project is not trusted (review, then `north trust`):",
            style::dim(),
        )));
        body.extend(info.hooks_not_run.iter().cloned().map(bullet));
    }
    for skipped in &info.hooks.skipped {
        body.push(Line::from(Span::styled(
            format!("skipped: {skipped}"),
            style::dim(),
        )));
    }
    let n = info.hooks.defs().len();
    let title = if n == 0 {
        "Hooks · none run".to_string()
    } else {
        format!("Hooks · {n} run at North's events")
    };
    if body.is_empty() {
        body.push(Line::from(Span::styled(
            "Add a `hooks` block (Claude Code's format) to your config.json or a trusted project's .north/project.json.",
            style::dim(),
        )));
    }
    app.notice(title, body);
}

pub(crate) fn list(app: &App) -> Result<Vec<(String, String)>, String> {
    SessionStore::new(&app.info().root)
        .list()
        .map(|all| {
            all.iter()
                .map(|(s, cp)| {
                    let label = session_label(cp.as_ref());
                    let label = match s.name() {
                        Some(name) => format!("[{name}]  {label}"),
                        None => label,
                    };
                    (s.id.clone(), label)
                })
                .collect()
        })
        .map_err(|e| format!("cannot list sessions: {e}"))
}

fn sessions(app: &mut App) {
    match list(app) {
        Ok(all) if all.is_empty() => app.notice("Sessions · none yet", Vec::new()),
        Ok(all) => {
            let current = app.info().session_id.clone();
            let body = all
                .iter()
                .map(|(id, label)| {
                    let mark = if *id == current { "● " } else { "  " };
                    Line::from(vec![
                        Span::styled(mark, style::ok()),
                        Span::styled(id.clone(), style::key()),
                        Span::raw("  "),
                        Span::raw(label.clone()),
                    ])
                })
                .collect();
            app.notice(
                format!("Sessions · {} (● current; /resume ID to switch)", all.len()),
                body,
            );
        }
        Err(e) => app.push(Item::Error(e)),
    }
}

fn picker(app: &mut App) {
    match list(app) {
        Ok(all) => {
            let current = app.info().session_id.clone();
            let others: Vec<(String, String)> =
                all.into_iter().filter(|(id, _)| *id != current).collect();
            if others.is_empty() {
                app.notice("No other session to resume", Vec::new());
            } else {
                app.picker = Some(Picker {
                    kind: crate::app::PickerKind::Resume,
                    sessions: others,
                    notes: Vec::new(),
                    selected: 0,
                });
            }
        }
        Err(e) => app.push(Item::Error(e)),
    }
}
