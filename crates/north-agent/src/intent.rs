//! Intent lines ("Searching: `foo` in `src/`") and compact result summaries.

use north_protocol::ToolOutcome;
use serde_json::Value;

fn s<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

fn short(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', "⏎");
    if one_line.chars().count() <= max {
        one_line
    } else {
        format!("{}…", one_line.chars().take(max).collect::<String>())
    }
}

/// The shell command a tool call carries, if it is a shell tool.
pub fn command_of(args: &Value) -> Option<&str> {
    s(args, "command").or_else(|| s(args, "cmd"))
}

/// A copy of tool arguments for traces: long strings (file contents, big
/// edits) are cut so traces stay small and never hold whole files.
pub fn trace_args(args: &Value) -> Value {
    match args {
        Value::String(t) if t.chars().count() > 200 => Value::String(format!(
            "{}… ({} chars)",
            t.chars().take(200).collect::<String>(),
            t.chars().count()
        )),
        Value::Array(items) => Value::Array(items.iter().map(trace_args).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), trace_args(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Argument keys whose values are file contents or edit text: the log
/// keeps their size, never their text (north.md §9).
const CONTENT_KEYS: &[&str] = &["old", "new", "content", "text", "body", "data"];

/// Tool arguments as the log may hold them: paths, commands, queries and
/// numbers kept; file contents and edit text replaced by their size; other
/// long strings cut. Keys are scrubbed later by the log writer.
pub fn log_args(args: &Value) -> Value {
    fn walk(v: &Value, content: bool) -> Value {
        match v {
            Value::String(t) if content => Value::String(format!("<{} chars>", t.chars().count())),
            Value::String(t) if t.chars().count() > 120 => Value::String(format!(
                "{}… ({} chars)",
                t.chars().take(120).collect::<String>(),
                t.chars().count()
            )),
            Value::Array(items) => Value::Array(items.iter().map(|i| walk(i, content)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            walk(v, content || CONTENT_KEYS.contains(&k.as_str())),
                        )
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    walk(args, false)
}

/// The one-line intent shown when the model asks for `tool`.
pub fn intent_line(tool: &str, args: &Value) -> String {
    match tool {
        "list_root" => "Listing the project root".into(),
        "fs.list_dir" => format!("Listing `{}`", s(args, "path").unwrap_or(".")),
        "find_files" => format!("Finding files: `{}`", s(args, "pattern").unwrap_or("?")),
        "search_text" => format!(
            "Searching: `{}` in `{}`",
            short(s(args, "query").unwrap_or("?"), 60),
            s(args, "path").unwrap_or("./")
        ),
        "read_file" | "fs.read_text" | "read" => {
            let path = s(args, "path").unwrap_or("?");
            match args
                .get("range")
                .and_then(|r| Some((r.get("start")?.as_u64()?, r.get("end")?.as_u64()?)))
            {
                Some((a, b)) => format!("Reading `{path}` lines {a}–{b}"),
                None => format!("Reading `{path}`"),
            }
        }
        "read_readme" => "Reading the README".into(),
        "detect_languages" => "Detecting languages".into(),
        "hotfiles" => "Finding the most important files".into(),
        "edit_apply_batch" => {
            let mut paths: Vec<&str> = args
                .get("edits")
                .and_then(Value::as_array)
                .map(|e| {
                    e.iter()
                        .filter_map(|x| x.get("args").and_then(|a| s(a, "path")))
                        .collect()
                })
                .unwrap_or_default();
            paths.dedup();
            format!(
                "Preparing edits in {}",
                paths
                    .iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        t if t.starts_with("edit_") || t == "fs.write_text" || t == "write" => {
            format!("Preparing edits in `{}`", s(args, "path").unwrap_or("?"))
        }
        "shell_run" | "shell.exec" | "bash" => format!(
            "Command requested: `{}`",
            short(command_of(args).unwrap_or("?"), 120)
        ),
        "http.get" => format!("Fetching `{}`", s(args, "url").unwrap_or("?")),
        other => format!("Calling `{other}`"),
    }
}

/// A one-line summary of a tool result.
pub fn summary(tool: &str, outcome: &ToolOutcome) -> String {
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
                    .filter_map(|x| s(x, "path").map(|p| format!("`{p}`")))
                    .collect()
            })
            .unwrap_or_default();
        return format!("wrote {}", files.join(", "));
    }
    if let Some(code) = out.get("exitCode").or_else(|| out.get("exit_code")) {
        // stderr is output too: a failing command often prints only there.
        let lines: usize = ["stdout", "stderr"]
            .iter()
            .filter_map(|k| s(out, k))
            .map(|t| t.lines().count())
            .sum();
        return format!("exit code {code}, {lines} line(s) of output");
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
        return format!("lines {a}–{b} of `{}`", s(out, "path").unwrap_or(tool));
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn intent_lines_match_the_spec_examples() {
        assert_eq!(
            intent_line("search_text", &json!({"query":"foo","path":"src/"})),
            "Searching: `foo` in `src/`"
        );
        assert_eq!(
            intent_line("edit_replace_exact", &json!({"path":"src/App.tsx"})),
            "Preparing edits in `src/App.tsx`"
        );
        assert_eq!(
            intent_line("shell_run", &json!({"command":"pnpm test"})),
            "Command requested: `pnpm test`"
        );
    }
}

#[cfg(test)]
mod log_args_tests {
    use super::log_args;
    use serde_json::json;

    #[test]
    fn edit_text_is_reduced_to_its_size_and_paths_are_kept() {
        let args = json!({"edits": [
            {"toolName": "edit_replace_exact", "args": {"path": "a.rs", "old": "fn a()", "new": "fn b() {}"}}
        ], "command": "cargo test"});
        assert_eq!(
            log_args(&args),
            json!({"edits": [
                {"toolName": "edit_replace_exact", "args": {"path": "a.rs", "old": "<6 chars>", "new": "<9 chars>"}}
            ], "command": "cargo test"})
        );
        let long = "x".repeat(300);
        let cut = log_args(&json!({ "query": long }));
        assert!(cut["query"].as_str().unwrap().ends_with("(300 chars)"));
    }
}
