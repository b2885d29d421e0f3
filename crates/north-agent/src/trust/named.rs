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

/// Programs that run what a build file of the project says, and the files
/// they read it from: `make fmt` runs the Makefile's recipe, `npm test` the
/// `scripts` of package.json. A trusted setting that runs one of them
/// trusts those files' content.
const BUILD_FILES: &[(&str, &[&str])] = &[
    ("make", &["GNUmakefile", "makefile", "Makefile"]),
    ("gmake", &["GNUmakefile", "makefile", "Makefile"]),
    ("just", &["justfile", "Justfile", ".justfile"]),
    ("npm", &["package.json"]),
    ("npx", &["package.json"]),
    ("pnpm", &["package.json"]),
    ("yarn", &["package.json"]),
    ("bun", &["package.json"]),
    ("cargo", &["Cargo.toml", "build.rs", ".cargo/config.toml"]),
    ("task", &["Taskfile.yml", "Taskfile.yaml"]),
    ("rake", &["Rakefile"]),
    (
        "gradle",
        &["build.gradle", "build.gradle.kts", "settings.gradle"],
    ),
    (
        "./gradlew",
        &["build.gradle", "build.gradle.kts", "gradlew"],
    ),
    ("mvn", &["pom.xml"]),
    ("tox", &["tox.ini"]),
    ("nox", &["noxfile.py"]),
    ("uv", &["pyproject.toml"]),
    ("poetry", &["pyproject.toml"]),
    ("pdm", &["pyproject.toml"]),
    ("hatch", &["pyproject.toml"]),
    ("deno", &["deno.json", "deno.jsonc"]),
];

/// The build files the programs among `words` read, as words naming them.
fn build_files(words: &[&str]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for word in words {
        let name = word.rsplit('/').next().unwrap_or(word);
        for (program, files) in BUILD_FILES {
            if *word == *program || name == *program {
                for file in *files {
                    if !out.contains(file) {
                        out.push(file);
                    }
                }
            }
        }
    }
    out
}

/// Programs whose next argument is a file of code they run, whatever its
/// name (`bash .claude/hooks/check.hook`, `node server.mjs`).
const RUNNERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "fish", "source", ".", "python", "python3", "node", "deno",
    "bun", "ruby", "perl", "php", "lua", "tclsh", "Rscript", "pwsh", "awk", "make", "just", "exec",
];

/// Whether `path` (a file) looks like code by its mode or extension.
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
/// to one of `bases`, or absolute) — code by its look, the program itself,
/// or whatever a shell or interpreter is handed (`bash check.hook`, however
/// it is named) — and the build files of the programs they run (`make`,
/// `npm`, …), so a trusted setting cannot change what it runs by an edit of
/// a file alone. Words naming nothing in the project (`npx`,
/// `/usr/bin/node`, a package name) add nothing; neither does data a
/// command only reads or writes (`touch ran.txt`, `>> log.txt`), which
/// changes as it is used.
pub(super) fn feed_named_files(
    feed: &mut impl FnMut(&str, &[u8]),
    setting: &str,
    root: &Path,
    bases: &[std::path::PathBuf],
    words: &[&str],
) {
    let canonical = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    // (word, whether it is run whatever it looks like)
    let mut named: Vec<(&str, bool)> = Vec::new();
    let mut after_redirect = false;
    let mut previous: Option<&str> = None;
    for (i, word) in words.iter().enumerate() {
        let redirect = word.starts_with('>') || word.ends_with('>') && word.len() <= 3;
        if !after_redirect && !redirect {
            let runner = previous
                .map(|p| p.rsplit('/').next().unwrap_or(p))
                .is_some_and(|p| RUNNERS.contains(&p));
            named.push((word, i == 0 || runner));
        }
        after_redirect = redirect && word.trim_start_matches(['1', '2', '&', '>']).is_empty();
        if !word.starts_with('-') {
            previous = Some(word);
        }
    }
    let plain: Vec<&str> = named.iter().map(|(w, _)| *w).collect();
    named.extend(build_files(&plain).into_iter().map(|f| (f, true)));
    named.sort_unstable();
    named.dedup();
    for (word, runs) in named {
        // Option values name files too (`--config=./x.json`).
        let candidate = word.rsplit_once('=').map_or(word, |(_, v)| v);
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
            if !real.is_file() || !(runs || is_code(&real)) {
                continue;
            }
            let mut content = real.display().to_string().into_bytes();
            content.push(0);
            content.extend(read_capped(&real));
            feed(&format!("{setting} named file {candidate}"), &content);
            break;
        }
    }
}

/// The first [`MAX_NAMED_FILE`] bytes of `path` (empty when unreadable).
fn read_capped(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(MAX_NAMED_FILE).read_to_end(&mut out);
    }
    out
}

/// Most files of one agent or skill folder the fingerprint reads.
const MAX_FOLDER_FILES: usize = 256;

/// Every regular file under `dir` (not following links), sorted, at most
/// [`MAX_FOLDER_FILES`]; links are listed with their target so re-pointing
/// one asks again.
fn folder_files(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(path);
            } else if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap_or_default();
                out.push((path, target.display().to_string().into_bytes()));
            } else if meta.is_file() {
                let content = read_capped(&path);
                out.push((path, content));
            }
            if out.len() >= MAX_FOLDER_FILES {
                return out;
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
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
    let sorted = |dir: &Path| -> Vec<std::path::PathBuf> {
        let mut all: Vec<_> = std::fs::read_dir(dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        all.sort();
        all
    };
    let feed_folder = |feed: &mut dyn FnMut(&str, &[u8]), rel: &str, dir: &Path| {
        for (path, content) in folder_files(dir) {
            let inner = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .display()
                .to_string();
            feed(&format!("{rel} file {inner}"), &content);
        }
    };
    for rel in crate::subagents::PROJECT_AGENT_DIRS {
        // A linked directory is refused by the loader: nothing of it runs.
        if north_tools::repo::linked_component(root, Path::new(rel)).is_some() {
            continue;
        }
        for path in sorted(&root.join(rel)) {
            if path.extension().and_then(|e| e.to_str()) != Some("md") {
                continue;
            }
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            wants.push(format!(
                "{rel}/{name}: an agent whose instructions North would follow"
            ));
        }
        // The whole folder: what an agent's instructions point at too.
        feed_folder(feed, rel, &root.join(rel));
    }
    for rel in crate::skills::PROJECT_SKILL_DIRS {
        if north_tools::repo::linked_component(root, Path::new(rel)).is_some() {
            continue;
        }
        for dir in sorted(&root.join(rel)) {
            if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
                continue;
            }
            if !dir.join("SKILL.md").is_file() {
                continue;
            }
            let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            wants.push(format!(
                "{rel}/{name}/SKILL.md: a skill the model would be offered"
            ));
            // Every file of the folder: the scripts a skill tells the model
            // to run are part of it.
            feed_folder(feed, rel, &dir);
        }
    }
}
