//! A proposal checked by the project's language servers before it is
//! reviewed: each file's proposed text is shown to its server as an
//! unsaved version, and what the change brings in or takes away (errors
//! and warnings) is shown beside the hunks, sent to the model with the
//! result, and — once written — the server is told the new text.

use north_protocol::{Event, FileDiagnostics, ToolCall, ToolOutcome};
use north_tools::edit::Proposal;
use serde_json::json;

use super::dispatch::CallEnv;

impl CallEnv<'_> {
    /// Shows `proposal` (its diff, then what the language servers say of
    /// it), asks for it as [`CallEnv::decide_and_apply`] does, and writes
    /// what the user kept; the model's result carries the diagnostics.
    pub(super) async fn review_and_apply(
        &mut self,
        call: &ToolCall,
        proposal: Proposal,
        always_ask: bool,
    ) -> ToolOutcome {
        (self.emit)(Event::Diff {
            call_id: call.id.clone(),
            diff: proposal.full_diff(),
        });
        let checked = self.check(&proposal).await;
        if !checked.is_empty() {
            (self.emit)(Event::Diagnostics {
                call_id: call.id.clone(),
                files: checked.clone(),
            });
        }
        let mut files = proposal.file_diffs();
        for f in &mut files {
            f.diagnostics = checked.iter().find(|d| d.path == f.path).cloned();
        }
        let written: Vec<String> = proposal.files.iter().map(|f| f.path.clone()).collect();
        let mut outcome = self
            .decide_and_apply(call, proposal, files, always_ask)
            .await;
        if let Some(code) = self.ctx.code.clone().filter(|_| !checked.is_empty()) {
            // Whatever was decided, the server sees the files as they are
            // now (written, hunks refused, or untouched), and forgets a
            // proposed file that was never written.
            for path in &written {
                if !code.handles(path) {
                    continue;
                }
                match std::fs::read_to_string(self.ctx.root.join(path)) {
                    Ok(now) => code.written(path, &now).await,
                    Err(_) => code.closed(path).await,
                }
            }
        }
        if !checked.is_empty()
            && let Some(out) = outcome.output.as_object_mut()
        {
            out.insert("diagnostics".into(), json!(checked));
        }
        outcome
    }

    /// What the project's language servers say of each file of `proposal`
    /// it has a server for: its problems before and after, compared.
    async fn check(&self, proposal: &Proposal) -> Vec<FileDiagnostics> {
        let Some(code) = self.ctx.code.clone() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for f in &proposal.files {
            // A file the user's rules keep North from editing is refused
            // before review: nothing of it goes to a server.
            if !code.handles(&f.path)
                || self
                    .path_rules
                    .edit_denied(&self.ctx.root, &f.path)
                    .is_some()
            {
                continue;
            }
            let before = match std::fs::read_to_string(self.ctx.root.join(&f.path)) {
                Ok(text) => code.diagnose(&f.path, &text).await,
                // A new file had no problems.
                Err(_) => north_lsp::Diagnosed::Found {
                    server: String::new(),
                    items: Vec::new(),
                },
            };
            // A server that did not answer for the file as it is is not
            // asked again for the proposal: one wait per file at most.
            let after = match &before {
                north_lsp::Diagnosed::NoAnswer { .. } => before.clone(),
                _ => code.diagnose(&f.path, &f.new_content).await,
            };
            out.push(compare(&f.path, &before, after));
        }
        out
    }
}

/// One file's diagnostics: the change's, or why there is no answer.
fn compare(
    path: &str,
    before: &north_lsp::Diagnosed,
    after: north_lsp::Diagnosed,
) -> FileDiagnostics {
    let no_answer = |server: String, reason: String| FileDiagnostics {
        path: path.to_string(),
        server,
        checked: false,
        no_answer: Some(reason),
        introduced: Vec::new(),
        resolved: Vec::new(),
        remaining: 0,
    };
    match after {
        north_lsp::Diagnosed::Found { server, items } => {
            let old: &[north_lsp::Diagnostic] = match before {
                north_lsp::Diagnosed::Found { items, .. } => items,
                _ => &[],
            };
            let (introduced, resolved, remaining) = north_lsp::compare(old, &items);
            FileDiagnostics {
                path: path.to_string(),
                server,
                checked: true,
                no_answer: None,
                introduced,
                resolved,
                remaining,
            }
        }
        north_lsp::Diagnosed::NoAnswer { server, reason } => no_answer(server, reason),
        north_lsp::Diagnosed::NoServer => no_answer(String::new(), "no server".into()),
    }
}
