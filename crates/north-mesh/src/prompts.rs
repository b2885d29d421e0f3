//! The three agents' prompts, built with north-prompt: the planner's
//! (with its typed output, a list of [`Step`]s), the executor's input (plan,
//! recent memories, policy) and the memory agent's instructions.

use north_policy::MeshPolicy;
use north_prompt::{
    MarkdownSection, Prompt, PromptParams, PromptTemplate, PromptValidationError, RenderedPrompt,
    template,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use north_agent::memory::MemoryEntry;

use super::MeshError;

/// The planner's role, as the spec words it.
pub const PLANNER_ROLE: &str = "You decompose tasks into executable steps.";
/// The executor's role, as the spec words it.
pub const EXECUTOR_ROLE: &str = "You execute plans strictly using tools.";
/// The memory agent's role, as the spec words it.
pub const MEMORY_ROLE: &str = "Summarize execution into durable memory.";

/// One step of a plan: the planner's structured output is an ordered list
/// of these.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// What to do, as one imperative sentence the executor can carry out.
    pub description: String,
    /// The tool the step expects to use (`read`, `write` or `bash`), or null
    /// when it needs none (e.g. adding up numbers already found).
    pub tool: Option<String>,
}

/// Parameters of the planner's system prompt.
#[derive(Debug, Clone, Default, Serialize, JsonSchema, PromptParams)]
pub struct PlannerParams {
    /// Tool lines (`- name: description`).
    pub tools: String,
    /// The policy, one rule per line.
    pub policy: String,
}

const PLANNER_RULES: &str = "- Return an ordered list of steps; each step is one action with one tool, or a short reasoning step with tool null.
- Use only the tools listed, and only commands the policy allows; a plan that needs more says so in a step instead of working around the policy.
- Paths are relative to the working directory; never leave it.
- Keep plans short: three to seven steps for most goals.";

/// Parameters of the executor's input.
#[derive(Debug, Clone, Default, Serialize, JsonSchema, PromptParams)]
pub struct ExecutorParams {
    /// The user's goal.
    pub goal: String,
    /// The numbered plan.
    pub plan: String,
    /// The last memories, one per line.
    pub memories: String,
    /// The policy, one rule per line.
    pub policy: String,
    /// The first step to execute now.
    pub first_step: String,
}

const EXECUTOR_RULES: &str = "- Execute the plan one step at a time, in order, using the tools `read`, `write` and `bash`. I will give you each step; do only that step.
- Do not invent results: every fact you report comes from a tool result.
- A call refused by policy or by the user is final: do not retry it in another form; say what could not be done.
- After the step's tool calls, answer with a short sentence of what you found.";

/// Parameters of the memory agent's instructions.
#[derive(Debug, Clone, Default, Serialize, JsonSchema, PromptParams)]
pub(crate) struct MemoryParams {
    /// Largest summary length in characters.
    pub max_chars: usize,
}

/// The three templates, validated once per mesh.
#[derive(Debug, Clone)]
pub struct Prompts {
    planner: PromptTemplate<Vec<Step>>,
    executor: PromptTemplate,
    memory: PromptTemplate,
}

fn role(text: &'static str) -> MarkdownSection<north_prompt::NoParams> {
    MarkdownSection::plain("Role", "role", text)
}

impl Prompts {
    /// Builds and validates the templates.
    pub fn new() -> Result<Prompts, PromptValidationError> {
        let planner = PromptTemplate::builder("north/mesh", "planner")
            .name("mesh_planner")
            .output::<Vec<Step>>()
            .section(role(PLANNER_ROLE))
            .section(MarkdownSection::<PlannerParams>::new(
                "Tools",
                "tools",
                template!(PlannerParams, "${tools}"),
            ))
            .section(MarkdownSection::<PlannerParams>::new(
                "Policy",
                "policy",
                template!(PlannerParams, "${policy}"),
            ))
            .section(MarkdownSection::plain("Rules", "rules", PLANNER_RULES))
            .build()?;
        let executor = PromptTemplate::builder("north/mesh", "executor")
            .name("mesh_executor")
            .section(role(EXECUTOR_ROLE))
            .section(MarkdownSection::<ExecutorParams>::new(
                "Goal",
                "goal",
                template!(ExecutorParams, "${goal}"),
            ))
            .section(MarkdownSection::<ExecutorParams>::new(
                "Plan",
                "plan",
                template!(ExecutorParams, "${plan}"),
            ))
            .section(
                MarkdownSection::<ExecutorParams>::new(
                    "Recent memory",
                    "memory",
                    template!(ExecutorParams, "${memories}"),
                )
                .enabled(|p| !p.memories.is_empty()),
            )
            .section(MarkdownSection::<ExecutorParams>::new(
                "Policy",
                "policy",
                template!(ExecutorParams, "${policy}"),
            ))
            .section(MarkdownSection::plain("Rules", "rules", EXECUTOR_RULES))
            .section(MarkdownSection::<ExecutorParams>::new(
                "Now",
                "now",
                template!(ExecutorParams, "${first_step}"),
            ))
            .build()?;
        let memory = PromptTemplate::builder("north/mesh", "memory")
            .name("mesh_memory")
            .section(role(MEMORY_ROLE))
            .section(MarkdownSection::<MemoryParams>::new(
                "Rules",
                "rules",
                template!(
                    MemoryParams,
                    "- You get the goal, the plan and every tool call with its result.\n- Answer with the summary only: plain sentences, at most ${max_chars} characters.\n- Keep what a later run needs: numbers, file names, what failed and why (a policy denial included).\n- Never copy secrets, keys or whole file contents."
                ),
            ))
            .build()?;
        Ok(Prompts {
            planner,
            executor,
            memory,
        })
    }

    /// The planner's system prompt with its output declaration.
    pub fn planner(&self, params: PlannerParams) -> Result<RenderedPrompt<Vec<Step>>, MeshError> {
        Ok(Prompt::new(self.planner.clone()).bind(params).render()?)
    }

    /// The executor's first input.
    pub fn executor(&self, params: ExecutorParams) -> Result<String, MeshError> {
        Ok(Prompt::new(self.executor.clone())
            .bind(params)
            .render()?
            .into_text())
    }

    /// The memory agent's system prompt.
    pub fn memory(&self, max_chars: usize) -> Result<String, MeshError> {
        Ok(Prompt::new(self.memory.clone())
            .bind(MemoryParams { max_chars })
            .render()?
            .into_text())
    }
}

/// What to tell the planner when its answer could not be used: the exact
/// reason, the schema the answer must match, and to keep it short (a small
/// model's window has little room for a long plan).
pub(crate) fn repair_prompt(error: &str, schema: &serde_json::Value) -> String {
    format!(
        "That answer cannot be used: {error}\n\nAnswer again with only one JSON value that matches this JSON Schema, and nothing else (no prose, no code fence):\n{schema}\n\nFor example: {{\"items\": [{{\"description\": \"List the files in src\", \"tool\": \"bash\"}}]}}. Keep the plan short: at most seven steps of one sentence each."
    )
}

/// Why a planner answer could not be used, in words the planner can act on:
/// a cut-off answer says so, invalid JSON gives serde's exact error (not
/// what a scan for brackets happened to find), and a wrong shape says what
/// the schema wants.
pub(crate) fn plan_error(
    text: &str,
    cut_at: Option<u32>,
    parse_error: &north_prompt::OutputParseError,
) -> String {
    use north_prompt::{OutputContainer, OutputParseErrorKind};
    if let Some(limit) = cut_at {
        return format!(
            "it was cut off at the output limit of {limit} tokens before the JSON was complete"
        );
    }
    let body = text.trim();
    let body = body
        .strip_prefix("```json")
        .or_else(|| body.strip_prefix("```"))
        .map_or(body, |b| b.trim_end().trim_end_matches("```"))
        .trim();
    if body.starts_with(['{', '['])
        && let Err(e) = serde_json::from_str::<serde_json::Value>(body)
    {
        return format!("the JSON is not valid: {e}");
    }
    match parse_error.kind() {
        OutputParseErrorKind::WrongContainer {
            expected: OutputContainer::Array,
            found,
        } => format!(
            "expected an object with an `items` array of steps (or a bare array of steps), found {found}"
        ),
        other => other.to_string(),
    }
}

/// The plan as numbered lines (`1. List the files [bash]`).
pub fn plan_text(steps: &[Step]) -> String {
    steps
        .iter()
        .enumerate()
        .map(|(i, s)| match &s.tool {
            Some(tool) => format!("{}. {} [{tool}]", i + 1, s.description),
            None => format!("{}. {}", i + 1, s.description),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Memories as prompt lines, oldest first.
pub fn memory_text(entries: &[MemoryEntry]) -> String {
    entries
        .iter()
        .map(|e| {
            format!(
                "- [mem:{}] goal: {} — {}",
                e.id,
                e.goal.replace('\n', " "),
                e.summary.replace('\n', " ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The policy as prompt lines.
pub fn policy_text(policy: &MeshPolicy) -> String {
    format!(
        "- bash may run only: {} (each command of a line must start with one of them; redirections, substitutions and paths outside the working directory are refused)\n- write is {}\n- read refuses files over {} bytes\n- commands stop after {} s and their output is cut to {} characters",
        if policy.allowed_commands.is_empty() {
            "nothing".to_owned()
        } else {
            policy.allowed_commands.join(", ")
        },
        if policy.write_enabled {
            "enabled"
        } else {
            "disabled"
        },
        policy.max_file_size,
        policy.timeout().as_secs(),
        policy.output_chars(),
    )
}
