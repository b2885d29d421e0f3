//! The system prompt of a step: product rules (or the agent's role), the
//! project card, the instruction files (`AGENTS.md`, `CLAUDE.md`, …),
//! session state and retrieved memory.

use north_protocol::TraceKind;
use serde_json::json;

use super::Agent;
use crate::context::{
    ProjectCard, SystemParams, SystemPromptError, agents_md_summary, render_system_prompt,
    state_text,
};
use crate::memory::{MemoryFile, retrieve, retrieved_block};
use north_config::ToolProtocol;
use north_protocol::textcalls;

impl Agent {
    pub(super) async fn system(&mut self, user_input: &str) -> Result<String, SystemPromptError> {
        if self.card.is_none() {
            self.card =
                Some(ProjectCard::load_or_compute(&self.services.tools, &self.services.ctx).await);
        }
        let card = self.card.clone().unwrap_or_default();
        let hits = self.memories(user_input);
        let text_protocol = self.opts.tool_protocol == ToolProtocol::Text;
        let protocol = if text_protocol {
            self.text_protocol()
        } else {
            String::new()
        };
        let params = SystemParams {
            rules: self
                .opts
                .role
                .clone()
                .unwrap_or_else(|| crate::context::RULES.to_string()),
            readme: card.readme,
            tree: card.tree,
            languages: card.languages,
            hotfiles: card.hotfiles,
            agents_md_summary: String::new(),
            agents_md: crate::instructions::render(&crate::instructions::load(
                &self.services.ctx.root,
                &crate::instructions::UserDirs::from_env(),
            )),
            retrieved: retrieved_block(&hits),
            skills: self.skills_listing(),
            state: state_text(&self.conv.state),
            text_protocol,
            protocol,
        };
        let params = SystemParams {
            agents_md_summary: agents_md_summary(&params.agents_md),
            ..params
        };
        let rendered = render_system_prompt(
            params,
            self.opts.prompt_overrides.as_ref(),
            &self.disclosure.opened,
        )?;
        let text = rendered.text().to_string();
        self.disclosure.rendered = Some(rendered);
        Ok(text)
    }

    /// The memories retrieved for `user_input` (the project's, a trusted
    /// project's shipped ones labelled, the extra files), recorded as shown.
    fn memories(&mut self, user_input: &str) -> Vec<crate::memory::Scored> {
        // The project's memory file: what this user's North remembered, and
        // — only in a trusted project, labelled as such — what the
        // repository shipped in it.
        let (mut entries, shipped) = MemoryFile::project(&self.services.ctx.root)
            .load_by_provenance()
            .unwrap_or_default();
        if self.opts.project_trust.applies() {
            entries.extend(shipped.into_iter().map(|mut e| {
                e.summary = format!(
                    "[from the repository's .north/memory.json, not remembered by the user] {}",
                    e.summary
                );
                e
            }));
        } else if !shipped.is_empty() {
            tracing::info!(
                entries = shipped.len(),
                "memories the repository shipped are ignored: the project is not trusted"
            );
        }
        for extra in &self.opts.extra_memory {
            entries.extend(MemoryFile::new(extra.clone()).load().unwrap_or_default());
        }
        // The session's memory tags (NOTES `add_memory_tags`) steer retrieval
        // toward the memories they name, turn after turn.
        let query = if self.conv.state.memory_tags.is_empty() {
            user_input.to_string()
        } else {
            format!("{user_input} {}", self.conv.state.memory_tags.join(" "))
        };
        let hits = retrieve(&entries, &query, 5);
        // memory_refs: which memories this session has been shown.
        for hit in &hits {
            if !self.conv.state.memory_refs.contains(&hit.entry.id) {
                self.conv.state.memory_refs.push(hit.entry.id.clone());
            }
        }
        if !hits.is_empty() {
            self.services.tracer.record(
                TraceKind::Retrieval,
                json!({"query": user_input.chars().take(200).collect::<String>(), "hits": hits.iter().map(|h| json!({"id": h.entry.id, "score": h.score})).collect::<Vec<_>>()}),
            );
        }
        hits
    }

    /// The text protocol's instructions and the tools it may call.
    fn text_protocol(&self) -> String {
        let tools: Vec<String> = self
            .offered_specs()
            .iter()
            .map(|t| {
                format!(
                    "- {}: {} args schema: {}",
                    t.name, t.description, t.input_schema
                )
            })
            .collect();
        format!(
            "{}\n\nTools:\n{}",
            textcalls::INSTRUCTIONS,
            tools.join("\n")
        )
    }
}
