//! What North takes from a language server, in its own terms: 1-based
//! lines and columns, paths relative to the project, severities as an enum.

use serde::{Deserialize, Serialize};

pub use north_protocol::{Diagnostic, Severity};

/// A severity from LSP's number (1 error … 4 hint; missing: error).
fn severity(n: Option<u64>) -> Severity {
    match n {
        Some(2) => Severity::Warning,
        Some(3) => Severity::Information,
        Some(4) => Severity::Hint,
        _ => Severity::Error,
    }
}

/// A diagnostic from an LSP `Diagnostic` object; None when it has no range.
pub(crate) fn diagnostic(v: &serde_json::Value) -> Option<Diagnostic> {
    let start = v.get("range")?.get("start")?;
    let one = |n: u64| u32::try_from(n).unwrap_or(u32::MAX).saturating_add(1);
    Some(Diagnostic {
        line: one(start.get("line")?.as_u64()?),
        column: one(start.get("character")?.as_u64()?),
        severity: severity(v.get("severity").and_then(serde_json::Value::as_u64)),
        message: v
            .get("message")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .chars()
            .take(2000)
            .collect(),
    })
}

/// What a change does to a file's errors and warnings: those it brings
/// in, those it takes away (matched by severity and message, wherever the
/// lines moved), and how many stay.
pub fn compare(
    before: &[Diagnostic],
    after: &[Diagnostic],
) -> (Vec<Diagnostic>, Vec<Diagnostic>, usize) {
    let counts = |d: &Diagnostic| matches!(d.severity, Severity::Error | Severity::Warning);
    let mut left: Vec<&Diagnostic> = before.iter().filter(|d| counts(d)).collect();
    let mut introduced = Vec::new();
    let mut remaining = 0;
    for d in after.iter().filter(|d| counts(d)) {
        match left
            .iter()
            .position(|b| b.severity == d.severity && b.message == d.message)
        {
            Some(i) => {
                left.remove(i);
                remaining += 1;
            }
            None => introduced.push(d.clone()),
        }
    }
    (introduced, left.into_iter().cloned().collect(), remaining)
}

/// A place in the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// Relative to the project root when inside it, else absolute.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

/// A symbol a workspace search found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbol {
    /// Its name.
    pub name: String,
    /// LSP's kind number, as a word where known (`function`, `class`).
    pub kind: String,
    /// Where it is.
    pub location: Location,
}

/// A language server North may start: for files with `extensions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerDef {
    /// The language it serves (the config's key: `python`).
    pub language: String,
    /// Program and arguments.
    pub command: Vec<String>,
    /// File extensions without the dot.
    pub extensions: Vec<String>,
    /// How long it may take to start, and to give a text's diagnostics
    /// (None: 20 s to start, 8 s for diagnostics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<std::time::Duration>,
}

/// The well-known servers North finds on `PATH` without configuration:
/// (language, program and arguments, extensions).
pub const KNOWN: &[(&str, &[&str], &[&str])] = &[
    ("rust", &["rust-analyzer"], &["rs"]),
    ("python", &["pyright-langserver", "--stdio"], &["py", "pyi"]),
    (
        "typescript",
        &["typescript-language-server", "--stdio"],
        &["ts", "tsx", "js", "jsx", "mjs", "cjs"],
    ),
    ("go", &["gopls"], &["go"]),
    ("c", &["clangd"], &["c", "h", "cc", "cpp", "hpp", "cxx"]),
];

/// The well-known servers' table (language, program and arguments,
/// extensions).
pub fn types_known() -> &'static [(
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
)] {
    KNOWN
}

/// The well-known servers whose program is on `path` (a `PATH` value).
pub fn known_servers(path: Option<&std::ffi::OsStr>) -> Vec<ServerDef> {
    let dirs: Vec<std::path::PathBuf> = path
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    KNOWN
        .iter()
        .filter_map(|(lang, cmd, ext)| {
            let found = dirs.iter().map(|d| d.join(cmd[0])).find(|p| p.is_file())?;
            Some((lang, found, &cmd[1..], ext))
        })
        .map(|(lang, program, args, ext)| ServerDef {
            language: (*lang).to_string(),
            // Where it was found, so it is the same program inside the
            // sandbox.
            command: std::iter::once(program.display().to_string())
                .chain(args.iter().map(|s| (*s).to_string()))
                .collect(),
            extensions: ext.iter().map(|s| (*s).to_string()).collect(),
            timeout: None,
        })
        .collect()
}

/// LSP's `SymbolKind` as a word.
pub(crate) fn symbol_kind(n: u64) -> &'static str {
    match n {
        2 => "module",
        5 => "class",
        6 => "method",
        8 => "field",
        9 => "constructor",
        10 => "enum",
        11 => "interface",
        12 => "function",
        13 => "variable",
        14 => "constant",
        22 => "enum member",
        23 => "struct",
        26 => "type parameter",
        _ => "symbol",
    }
}
