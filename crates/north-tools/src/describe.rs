//! How a call and its result read to a person: the words tools use for
//! their intent lines, and the result summary every tool shares unless it
//! says something better. Front ends show these; none keeps a table of
//! tool names.

use north_protocol::ToolOutcome;
use serde_json::Value;

/// A string argument.
pub(crate) fn arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// The hosts a command reached and was refused through North's proxy, as
/// its result line says them (`; reached registry.npmjs.org; refused
/// x.example`), each at most five.
fn hosts(hosts: &[north_protocol::HostReached]) -> String {
    let list = |allowed: bool| {
        let names: Vec<&str> = hosts
            .iter()
            .filter(|h| h.allowed == allowed)
            .map(|h| h.host.as_str())
            .collect();
        let mut unique: Vec<&str> = Vec::new();
        for n in names {
            if !unique.contains(&n) {
                unique.push(n);
            }
        }
        let more = unique.len().saturating_sub(5);
        let mut text = unique.into_iter().take(5).collect::<Vec<_>>().join(", ");
        if more > 0 {
            text.push_str(&format!(" and {more} more"));
        }
        text
    };
    let mut out = String::new();
    for (allowed, word) in [(true, "reached"), (false, "refused")] {
        let text = list(allowed);
        if !text.is_empty() {
            out.push_str(&format!("; {word} {text}"));
        }
    }
    out
}

/// What came of an isolated sub-agent's worktree, after its answer.
fn worktree_outcome(wt: &Value) -> String {
    let name = arg(wt, "worktree").unwrap_or("?");
    let conflicts = wt
        .get("conflicts")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let said = match (
        wt.get("changes").and_then(Value::as_u64),
        wt.get("accepted").and_then(Value::as_bool),
    ) {
        (Some(0), _) => "changed nothing".to_string(),
        (_, Some(true)) => "its changes merged as you accepted".to_string(),
        (_, Some(false)) => "its changes not merged".to_string(),
        _ => "its changes wait in the worktree".to_string(),
    };
    let conflicts = match conflicts {
        0 => String::new(),
        n => format!(", {n} in conflict"),
    };
    format!(" · worktree {name}: {said}{conflicts}")
}

/// `text` on one line, cut to `max` characters.
pub(crate) fn short(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', "⏎");
    if one_line.chars().count() <= max {
        one_line
    } else {
        format!("{}…", one_line.chars().take(max).collect::<String>())
    }
}

/// "Reading `path`" with the line range when one is asked for.
pub(crate) fn reading(args: &Value) -> String {
    let path = arg(args, "path").unwrap_or("?");
    match args
        .get("range")
        .and_then(|r| Some((r.get("start")?.as_u64()?, r.get("end")?.as_u64()?)))
    {
        Some((a, b)) => format!("Reading `{path}` lines {a}–{b}"),
        None => format!("Reading `{path}`"),
    }
}

/// The command line a shell tool's arguments carry (`command` for
/// `shell_run`, `cmd` for `shell.exec` and `bash`).
pub fn command_of(args: &Value) -> Option<&str> {
    arg(args, "command").or_else(|| arg(args, "cmd"))
}

/// "Command requested: `cmd`".
pub(crate) fn command(args: &Value) -> String {
    format!(
        "Command requested: `{}`",
        short(command_of(args).unwrap_or("?"), 120)
    )
}

/// The intent line of a tool that says nothing of its own.
pub(crate) fn calling(name: &str) -> String {
    format!("Calling `{name}`")
}

/// A one-line summary of a result by its shape: a failure's reason, the
/// files an edit wrote, a command's exit code and output size, a diff's
/// stats, a read's line range, or how many results came back.
pub fn summary(outcome: &ToolOutcome) -> String {
    if !outcome.ok {
        return format!(
            "failed: {}",
            short(outcome.error.as_deref().unwrap_or("unknown error"), 160)
        );
    }
    let out = &outcome.output;
    if out.get("applied").and_then(Value::as_bool) == Some(true) {
        let files: Vec<String> = out
            .get("files")
            .and_then(Value::as_array)
            .map(|f| {
                f.iter()
                    .filter_map(|x| arg(x, "path").map(|p| format!("`{p}`")))
                    .collect()
            })
            .unwrap_or_default();
        return format!("wrote {}", files.join(", "));
    }
    if let Some(result) = north_protocol::ShellResult::read(out) {
        // stderr is output too: a failing command often prints only there.
        let lines = result.stdout.lines().count() + result.stderr.lines().count();
        let code = result
            .exit_code
            .map_or_else(|| "none".to_string(), |c| c.to_string());
        return format!(
            "exit code {code}, {lines} line(s) of output{}",
            hosts(&result.hosts)
        );
    }
    if out.get("background").and_then(Value::as_bool) == Some(true) {
        return format!(
            "started in the background as `{}`, still running (shell_output reads it)",
            arg(out, "id").unwrap_or("?")
        );
    }
    if let (Some(agent), Some(answer)) = (arg(out, "agent"), arg(out, "answer")) {
        let first = answer.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        return format!(
            "`{agent}` answered: {}{}",
            short(first, 100),
            out.get("worktree")
                .map(worktree_outcome)
                .unwrap_or_default()
        );
    }
    if let Some(stats) = out.get("stats")
        && let (Some(files), Some(add), Some(del)) = (
            stats.get("files").and_then(Value::as_u64),
            stats.get("linesAdded").and_then(Value::as_u64),
            stats.get("linesRemoved").and_then(Value::as_u64),
        )
    {
        return format!("{files} file(s), +{add} −{del}");
    }
    if let (Some(a), Some(b)) = (out.get("startLine"), out.get("endLine")) {
        return format!("lines {a}–{b} of `{}`", arg(out, "path").unwrap_or("?"));
    }
    if let (Some(a), Some(b), Some(n)) = (
        out.get("startPage"),
        out.get("endPage"),
        out.get("totalPages"),
    ) {
        return format!(
            "pages {a}–{b} of {n} of `{}`",
            arg(out, "path").unwrap_or("?")
        );
    }
    match out {
        Value::Array(items) => format!("{} result(s)", items.len()),
        Value::String(t) => short(t, 120),
        Value::Object(o) => {
            if let Some(items) = o.values().find_map(Value::as_array) {
                format!("{} result(s)", items.len())
            } else {
                "done".into()
            }
        }
        _ => "done".into(),
    }
}
