//! What trusted settings execute: the full command line of an MCP server
//! entry for the trust prompt, and the project files of code a setting
//! names, whose content the fingerprint covers.

use std::path::Path;

use serde_json::Value;

/// The program and arguments of an MCP server entry, and its `cwd`.
pub(super) fn server_argv(server: &Value) -> (Vec<String>, Option<String>) {
    let mut argv: Vec<String> = server
        .get("command")
        .and_then(Value::as_str)
        .map(|c| vec![c.to_owned()])
        .unwrap_or_default();
    if let Some(args) = server.get("args").and_then(Value::as_array) {
        argv.extend(args.iter().map(|a| match a {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }));
    }
    let cwd = server.get("cwd").and_then(Value::as_str).map(str::to_owned);
    (argv, cwd)
}

/// What an MCP server entry does, in full: its whole command line, working
/// directory and the names of the variables it sets (never their values),
/// or the URL it connects to and the headers it sends.
pub(super) fn describe_server(server: &Value) -> String {
    let keys = |field: &str| -> Vec<String> {
        server
            .get(field)
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    let (argv, cwd) = server_argv(server);
    let mut out = if !argv.is_empty() {
        let shown: Vec<String> = argv.iter().map(|w| shell_quote(w)).collect();
        format!("runs `{}`", shown.join(" "))
    } else if let Some(url) = server.get("url").and_then(Value::as_str) {
        format!("connects to {url}")
    } else {
        return "is configured".into();
    };
    if let Some(cwd) = cwd {
        out.push_str(&format!(" in `{cwd}`"));
    }
    let env = keys("env");
    if !env.is_empty() {
        out.push_str(&format!(" with environment {}", env.join(", ")));
    }
    let headers = keys("headers");
    if !headers.is_empty() {
        out.push_str(&format!(" with headers {}", headers.join(", ")));
    }
    out
}

/// The words of a hook's shell command, for finding the project files it
/// runs: quotes dropped, `$NORTH_PROJECT_DIR` / `$CLAUDE_PROJECT_DIR` (a
/// Claude Code hook's usual way to name its script) replaced by `root`.
pub(super) fn command_words(command: &str, root: &Path) -> Vec<String> {
    let root = root.display().to_string();
    let mut text = command.to_string();
    for var in ["NORTH_PROJECT_DIR", "CLAUDE_PROJECT_DIR"] {
        text = text
            .replace(&format!("${{{var}}}"), &root)
            .replace(&format!("${var}"), &root);
    }
    text.split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')'))
        .map(|w| w.trim_matches(|c| c == '"' || c == '\'').to_string())
        .filter(|w| !w.is_empty())
        .collect()
}

/// `word` as a shell would need it written to mean the same (for display).
fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Most bytes of one named file the fingerprint reads.
const MAX_NAMED_FILE: u64 = 8 * 1024 * 1024;

/// Whether `path` (a file) holds code a program would run: executable, or
/// a script or source file by its extension. Data files a command or
/// server merely reads or writes (`hits.txt`, `data.db`) change as they are
/// used and are not part of what the user trusted.
fn is_code(path: &Path) -> bool {
    const CODE: &[&str] = &[
        "sh", "bash", "zsh", "fish", "js", "mjs", "cjs", "ts", "mts", "cts", "jsx", "tsx", "py",
        "rb", "pl", "pm", "php", "lua", "tcl", "r", "jl", "ps1", "bat", "cmd", "jar", "wasm", "mk",
        "exs", "ex", "go", "rs", "java", "kt", "swift", "cs",
    ];
    let executable = std::fs::metadata(path)
        .is_ok_and(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0);
    executable
        || path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| CODE.contains(&e.to_ascii_lowercase().as_str()))
}

/// Feeds the content of every project file of code `words` name (relative
/// to one of `bases`, or absolute), so a trusted setting cannot change what
/// it runs by an edit of the file alone. Words naming nothing in the
/// project (`npx`, `/usr/bin/node`, a package name) or naming data add
/// nothing.
pub(super) fn feed_named_files(
    feed: &mut impl FnMut(&str, &[u8]),
    setting: &str,
    root: &Path,
    bases: &[std::path::PathBuf],
    words: &[&str],
) {
    let canonical = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    for word in words {
        // Option values name files too (`--config=./x.json`).
        let candidate = word.rsplit_once('=').map_or(*word, |(_, v)| v);
        if candidate.is_empty() || candidate.starts_with('-') {
            continue;
        }
        for base in bases {
            let path = base.join(candidate);
            let Ok(real) = path.canonicalize() else {
                continue;
            };
            // The path must lie in the project (literally, or once links are
            // resolved); where a link in it points is named in the hash, so
            // re-pointing it asks again.
            let lexically_inside = path.starts_with(root)
                && !path
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir));
            if !real.starts_with(&canonical) && !lexically_inside {
                continue;
            }
            if !real.is_file() || !is_code(&real) {
                continue;
            }
            let mut content = real.display().to_string().into_bytes();
            content.push(0);
            {
                use std::io::Read;
                if let Ok(file) = std::fs::File::open(&real) {
                    let _ = file.take(MAX_NAMED_FILE).read_to_end(&mut content);
                }
            }
            feed(&format!("{setting} named file {candidate}"), &content);
            break;
        }
    }
}

/// The hooks of a project's files: each command is a line of what the
/// project wants, and the hook blocks and the scripts they name are part
/// of the fingerprint.
pub(super) fn scan_hooks(
    root: &Path,
    mut feed: &mut impl FnMut(&str, &[u8]),
    wants: &mut Vec<String>,
) {
    for (rel, block) in crate::hooks::project_blocks(root) {
        feed(
            &format!("{rel} hooks"),
            serde_json::to_string(&block).unwrap_or_default().as_bytes(),
        );
        let set = crate::hooks::HookSet::parse(
            &block,
            crate::hooks::HookOrigin::Project(std::path::PathBuf::from(rel)),
            false,
        );
        match set {
            Ok(set) => {
                for def in set.defs() {
                    let matcher = match def.matcher.text() {
                        "" => String::new(),
                        m => format!(" [{m}]"),
                    };
                    wants.push(format!(
                        "{rel}: {}{matcher} hook runs `{}`",
                        def.event, def.command
                    ));
                    let words = command_words(&def.command, root);
                    let words: Vec<&str> = words.iter().map(String::as_str).collect();
                    feed_named_files(
                        &mut feed,
                        &format!("{rel} hooks"),
                        root,
                        &[root.to_path_buf()],
                        &words,
                    );
                }
            }
            Err(_) => wants.push(format!("{rel}: hooks (malformed)")),
        }
    }
}

/// A project's agent definitions and skills: their instructions reach the
/// model as North's own, so each is a line of what the project wants and
/// its text is part of the fingerprint.
pub(super) fn scan_definitions(
    root: &Path,
    feed: &mut impl FnMut(&str, &[u8]),
    wants: &mut Vec<String>,
) {
    let read = |path: &Path| -> Vec<u8> {
        use std::io::Read;
        let mut out = Vec::new();
        if let Ok(file) = std::fs::File::open(path) {
            let _ = file.take(MAX_NAMED_FILE).read_to_end(&mut out);
        }
        out
    };
    let sorted = |dir: &Path| -> Vec<std::path::PathBuf> {
        let mut all: Vec<_> = std::fs::read_dir(dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        all.sort();
        all
    };
    for rel in crate::subagents::PROJECT_AGENT_DIRS {
        for path in sorted(&root.join(rel)) {
            if path.extension().and_then(|e| e.to_str()) != Some("md") {
                continue;
            }
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let at = format!("{rel}/{name}");
            wants.push(format!(
                "{at}: an agent whose instructions North would follow"
            ));
            feed(&at, &read(&path));
        }
    }
    for rel in crate::skills::PROJECT_SKILL_DIRS {
        for dir in sorted(&root.join(rel)) {
            let file = dir.join("SKILL.md");
            if !file.is_file() {
                continue;
            }
            let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            let at = format!("{rel}/{name}/SKILL.md");
            wants.push(format!("{at}: a skill the model would be offered"));
            feed(&at, &read(&file));
        }
    }
}
