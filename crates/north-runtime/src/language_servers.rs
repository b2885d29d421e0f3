//! The project's language servers: the user's `lsp` entries and a trusted
//! project's, and the well-known servers found on `PATH` for languages
//! neither names — each started only when a file of its language needs it,
//! inside the sandbox (`ChildKind::LanguageServer`).

use std::path::Path;
use std::sync::Arc;

use north_config::Config;
use north_lsp::{ServerDef, Servers};
use north_tools::os_sandbox::ChildKind;

use crate::sandboxing::SandboxChoice;

/// The servers `config` names, then — when `found_on_path` — the known ones
/// on `PATH` for the other languages; what cannot be used goes to
/// `notices`. (A server runs the project's code: `rust-analyzer` its
/// build scripts and macros, `typescript-language-server` its own
/// TypeScript. So one North finds by itself runs only in a project the
/// user trusted, and only inside the sandbox.)
pub(crate) fn defs(
    config: &Config,
    found_on_path: bool,
    notices: &mut Vec<String>,
) -> Vec<ServerDef> {
    let known = north_lsp::types_known();
    let mut out: Vec<ServerDef> = Vec::new();
    for (language, entry) in &config.lsp {
        if entry.command.is_empty() {
            notices.push(format!(
                "lsp.{language}: `command` is empty; the server is not used"
            ));
            continue;
        }
        let extensions = entry.extensions.clone().or_else(|| {
            known
                .iter()
                .find(|(l, _, _)| l == language)
                .map(|(_, _, ext)| ext.iter().map(|e| (*e).to_string()).collect())
        });
        let Some(extensions) = extensions else {
            notices.push(format!(
                "lsp.{language}: North does not know the language's files; add \"extensions\": [\"…\"]"
            ));
            continue;
        };
        out.push(ServerDef {
            language: language.clone(),
            command: entry.command.clone(),
            extensions,
            timeout: entry
                .timeout
                .filter(|t| *t > 0)
                .map(std::time::Duration::from_secs),
        });
    }
    let path = std::env::var_os("PATH").filter(|_| found_on_path);
    for found in north_lsp::known_servers(path.as_deref()) {
        if !out.iter().any(|d| d.language == found.language) {
            out.push(found);
        }
    }
    out
}

/// The servers `defs` for the project (or worktree) at `root`, started
/// through the sandbox `choice` gives; None without any.
pub(crate) fn at(
    root: &Path,
    defs: Vec<ServerDef>,
    choice: &SandboxChoice,
    grants: &[north_protocol::Capability],
) -> Option<Arc<Servers>> {
    if defs.is_empty() {
        return None;
    }
    let mut spawner = choice.spawner(root, grants, ChildKind::LanguageServer);
    // A server installed under the temp dir (which the sandbox makes
    // private) keeps its own folder there: the program's project of code.
    let temp = std::env::temp_dir();
    for def in &defs {
        // Every word, a shell line's too (`sh -c "… exec /tmp/x/server"`).
        let words: Vec<&str> = def
            .command
            .iter()
            .flat_map(|w| {
                w.split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')'))
            })
            .filter(|w| !w.is_empty())
            .collect();
        for kept in north_tools::os_sandbox::home_paths_named(&words, &temp) {
            spawner = spawner.keeping(&kept);
        }
    }
    Some(Arc::new(Servers::new(root.to_path_buf(), defs, spawner)))
}
