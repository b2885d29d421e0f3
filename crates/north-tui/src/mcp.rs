//! `/mcp`: the MCP servers' state, as the binary reports it. The TUI does
//! not know MCP; it shows lines a [`McpView`](crate::hooks::McpView) gives it.

use ratatui::text::{Line, Span};

use crate::app::App;
use crate::style;

/// Lines of a list (resources or prompts) shown per server, at most.
const LISTED: usize = 6;

fn listed(body: &mut Vec<Line<'static>>, what: &str, items: &[(String, String)]) {
    if items.is_empty() {
        return;
    }
    body.push(Line::from(Span::styled(format!("  {what}"), style::dim())));
    for (name, about) in items.iter().take(LISTED) {
        body.push(Line::from(vec![
            Span::raw(format!("    {name}  ")),
            Span::styled(crate::wrap::truncate(about, 60), style::dim()),
        ]));
    }
    if items.len() > LISTED {
        body.push(Line::from(Span::styled(
            format!("    … {} more (`north mcp get NAME`)", items.len() - LISTED),
            style::dim(),
        )));
    }
}

/// `/mcp`, `/mcp login NAME`, `/mcp logout NAME`.
pub(crate) fn command(app: &mut App, rest: &[&str]) -> Vec<crate::app::Action> {
    match rest {
        [verb @ ("login" | "logout"), name] => {
            if app.info().mcp_auth.0.is_none() {
                app.push(crate::transcript::Item::Error(
                    "no MCP servers are configured".into(),
                ));
                return Vec::new();
            }
            vec![crate::app::Action::McpAuth(
                name.to_string(),
                *verb == "logout",
            )]
        }
        [verb @ ("login" | "logout")] => {
            app.push(crate::transcript::Item::Error(format!(
                "/mcp {verb} NAME: which server? (/mcp lists them)"
            )));
            Vec::new()
        }
        _ => {
            show(app);
            Vec::new()
        }
    }
}

/// Shows every server: state, tool/resource/prompt counts, last error.
pub(crate) fn show(app: &mut App) {
    let servers = app.info().mcp.0.as_ref().map(|f| f()).unwrap_or_default();
    if servers.is_empty() {
        app.notice(
            "MCP · no servers",
            vec![Line::from(Span::styled(
                "Add one with `north mcp add NAME -- COMMAND [ARGS...]` (project .mcp.json, starts in a trusted project) or `--scope user`.",
                style::dim(),
            ))],
        );
        return;
    }
    let mut body = Vec::new();
    for s in &servers {
        let (tools, resources, prompts) = s.counts;
        body.push(Line::from(vec![
            Span::styled(format!("{:<16}", s.name), style::key()),
            Span::raw(format!("{:<10}", s.state)),
            Span::styled(
                format!(
                    "{tools} tools · {resources} resources · {prompts} prompts · {}",
                    s.scope
                ),
                style::dim(),
            ),
        ]));
        if let Some(error) = &s.last_error {
            body.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(crate::wrap::truncate(error, 200), style::error()),
            ]));
        }
        listed(&mut body, "prompts (type one as a command):", &s.prompts);
        listed(
            &mut body,
            "resources (mention one to attach it):",
            &s.resources,
        );
    }
    body.push(Line::from(Span::styled(
        "Tools are called as mcp__<server>__<tool>; each call asks unless allowed. `north mcp get NAME` lists a server's tools, resources and prompts; `/mcp login NAME` logs in to one that asks.",
        style::dim(),
    )));
    let ready = servers.iter().filter(|s| s.state == "ready").count();
    app.notice(
        format!("MCP · {ready} of {} servers ready", servers.len()),
        body,
    );
}
