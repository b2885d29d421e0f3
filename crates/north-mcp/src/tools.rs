//! Servers' tools in North's registry: each as `mcp__<server>__<tool>`
//! with its own schema, needing approval ([`ApprovalPolicy::External`]);
//! past a threshold, their definitions wait behind `mcp_tool_search` so the
//! first request stays small.

use std::sync::Arc;

use futures::future::BoxFuture;
use north_protocol::{ApprovalPolicy, ToolKind, ToolOutcome, ToolSpec};
use north_tools::{Tool, ToolContext, ToolSource};
use serde_json::{Map, Value, json};

use crate::hub::McpHub;
use crate::status::{McpError, RemoteTool, ServerState};

/// The search tool's name.
pub const SEARCH_TOOL: &str = "mcp_tool_search";

/// The longest tool description sent to the model.
const MAX_DESCRIPTION: usize = 1024;

/// How many tools one search loads unless asked for more.
const DEFAULT_RESULTS: usize = 5;

struct Source {
    hub: Arc<McpHub>,
}

impl McpHub {
    /// The hub's tools as a [`ToolSource`] for a [`north_tools::Registry`].
    pub fn tool_source(self: &Arc<Self>) -> Arc<dyn ToolSource> {
        Arc::new(Source { hub: self.clone() })
    }

    fn all_tools(&self) -> Vec<RemoteTool> {
        self.servers.iter().flat_map(|s| s.tools()).collect()
    }

    fn starting(&self) -> Vec<String> {
        self.servers
            .iter()
            .filter(|s| {
                matches!(s.state().0, ServerState::Idle | ServerState::Starting)
                    && !s.config.disabled
            })
            .map(|s| s.config.name.clone())
            .collect()
    }
}

fn spec_of(tool: &RemoteTool) -> ToolSpec {
    let mut description: String = tool.description.chars().take(MAX_DESCRIPTION).collect();
    if description.is_empty() {
        description = format!("MCP tool {}", tool.name);
    }
    let mut schema = tool.input_schema.clone();
    if !schema.is_object() {
        schema = json!({ "type": "object" });
    }
    ToolSpec {
        name: tool.exposed.clone(),
        description,
        input_schema: schema,
        approval: ApprovalPolicy::External,
    }
}

fn search_spec(hub: &McpHub) -> ToolSpec {
    let mut counts = Vec::new();
    for server in &hub.servers {
        let n = server.tools().len();
        if n > 0 {
            counts.push(format!("{} ({n})", server.config.name));
        }
    }
    let starting = hub.starting();
    let mut description = String::from(
        "Loads tool definitions from the user's MCP servers by what they do (a few words) or exact names; the tools found can be called from your next step.",
    );
    if !counts.is_empty() {
        description.push_str(&format!(" Servers: {}.", counts.join(", ")));
    }
    if !starting.is_empty() {
        description.push_str(&format!(" Still starting: {}.", starting.join(", ")));
    }
    ToolSpec {
        name: SEARCH_TOOL.into(),
        description,
        input_schema: json!({
            "type": "object",
            "properties": {
                "query": { "type": "string", "description": "What the tool should do, or tool names" },
                "max_results": { "type": "integer", "minimum": 1, "maximum": 20 }
            },
            "required": ["query"]
        }),
        approval: ApprovalPolicy::None,
    }
}

impl ToolSource for Source {
    fn specs(&self) -> Vec<ToolSpec> {
        let hub = &self.hub;
        let all = hub.all_tools();
        let starting = !hub.starting().is_empty();
        if all.len() <= hub.opts.defer_threshold {
            let mut specs: Vec<ToolSpec> = all.iter().map(spec_of).collect();
            if starting {
                specs.push(search_spec(hub));
            }
            return specs;
        }
        let loaded = hub.loaded.lock().map(|l| l.clone()).unwrap_or_default();
        let mut specs = vec![search_spec(hub)];
        specs.extend(
            all.iter()
                .filter(|t| loaded.contains(&t.exposed))
                .map(spec_of),
        );
        specs
    }

    fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if name == SEARCH_TOOL {
            return Some(Arc::new(Search {
                hub: self.hub.clone(),
            }));
        }
        let rest = name.strip_prefix("mcp__")?;
        let (server, _) = rest.split_once("__")?;
        self.hub.server(server).ok()?;
        Some(Arc::new(McpTool {
            hub: self.hub.clone(),
            server: server.to_string(),
            exposed: name.to_string(),
        }))
    }
}

/// One server tool, called through the hub.
struct McpTool {
    hub: Arc<McpHub>,
    server: String,
    exposed: String,
}

impl McpTool {
    fn remote(&self) -> Option<RemoteTool> {
        self.hub
            .server(&self.server)
            .ok()?
            .tools()
            .into_iter()
            .find(|t| t.exposed == self.exposed)
    }
}

fn failure(e: McpError) -> ToolOutcome {
    match e {
        McpError::Cancelled => {
            ToolOutcome::err("cancelled by the user; the server was told to stop")
        }
        other => ToolOutcome::err(other.to_string()),
    }
}

impl Tool for McpTool {
    fn kind(&self) -> ToolKind {
        match self.remote() {
            Some(t) if t.read_only => ToolKind::Read,
            _ => ToolKind::Other,
        }
    }

    fn spec(&self) -> ToolSpec {
        match self.remote() {
            Some(t) => spec_of(&t),
            None => ToolSpec {
                name: self.exposed.clone(),
                description: format!("A tool of MCP server {}", self.server),
                input_schema: json!({ "type": "object" }),
                approval: ApprovalPolicy::External,
            },
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let arguments = match args {
                Value::Object(map) => map,
                Value::Null => Map::new(),
                other => {
                    return ToolOutcome::err(format!(
                        "arguments must be a JSON object, got {other}"
                    ));
                }
            };
            let remote = match self.remote() {
                Some(r) => r,
                None => match self.hub.tools(&self.server).await {
                    Err(e) => return failure(e),
                    Ok(tools) => match tools.iter().find(|t| t.exposed == self.exposed) {
                        Some(t) => t.clone(),
                        None => {
                            let names: Vec<&str> =
                                tools.iter().map(|t| t.exposed.as_str()).collect();
                            return ToolOutcome::err(format!(
                                "MCP server `{}` has no tool `{}`; its tools: {}",
                                self.server,
                                self.exposed,
                                names.join(", ")
                            ));
                        }
                    },
                },
            };
            match self
                .hub
                .call_tool(
                    &self.server,
                    &remote.name,
                    arguments,
                    &ctx.cancel,
                    ctx.live_output.clone(),
                )
                .await
            {
                Ok(result) => crate::result::to_outcome(&result, &self.hub.opts.attachments),
                Err(e) => failure(e),
            }
        })
    }
}

/// `mcp_tool_search`: loads deferred tool definitions by query.
struct Search {
    hub: Arc<McpHub>,
}

/// Scores `tool` for the query words: name hits count double.
fn score(tool: &RemoteTool, words: &[String]) -> usize {
    let name = tool.exposed.to_ascii_lowercase();
    let description = tool.description.to_ascii_lowercase();
    words
        .iter()
        .map(|w| {
            usize::from(name.contains(w.as_str())) * 2
                + usize::from(description.contains(w.as_str()))
        })
        .sum()
}

impl Tool for Search {
    fn kind(&self) -> ToolKind {
        ToolKind::Search
    }

    fn intent(&self, args: &Value) -> Option<String> {
        let query = args.get("query").and_then(Value::as_str).unwrap_or("?");
        Some(format!("Searching MCP tools: `{query}`"))
    }

    fn spec(&self) -> ToolSpec {
        search_spec(&self.hub)
    }

    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let Some(query) = args.get("query").and_then(Value::as_str) else {
                return ToolOutcome::err("`query` (a string) is required");
            };
            let max = args
                .get("max_results")
                .and_then(Value::as_u64)
                .map_or(DEFAULT_RESULTS, |n| n.clamp(1, 20) as usize);
            if !self.hub.starting().is_empty() {
                self.hub.wait_ready(self.hub.opts.connect_timeout).await;
            }
            let all = self.hub.all_tools();
            let words: Vec<String> = query
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|w| !w.is_empty())
                .map(str::to_ascii_lowercase)
                .collect();
            let exact: Vec<&RemoteTool> = all
                .iter()
                .filter(|t| words.iter().any(|w| *w == t.exposed.to_ascii_lowercase()))
                .collect();
            let chosen: Vec<&RemoteTool> = if exact.is_empty() {
                let mut scored: Vec<(usize, &RemoteTool)> = all
                    .iter()
                    .map(|t| (score(t, &words), t))
                    .filter(|(s, _)| *s > 0)
                    .collect();
                scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.exposed.cmp(&b.1.exposed)));
                scored.into_iter().take(max).map(|(_, t)| t).collect()
            } else {
                exact
            };
            if chosen.is_empty() {
                let servers: Vec<String> = self
                    .hub
                    .statuses()
                    .into_iter()
                    .map(|s| format!("{} ({} tools, {})", s.name, s.tools, s.state))
                    .collect();
                return ToolOutcome::ok(json!({
                    "loaded": [],
                    "note": format!("no tool matches `{query}`; try other words. Servers: {}", servers.join(", ")),
                }));
            }
            if let Ok(mut loaded) = self.hub.loaded.lock() {
                loaded.extend(chosen.iter().map(|t| t.exposed.clone()));
            }
            let list: Vec<Value> = chosen
                .iter()
                .map(|t| {
                    json!({
                        "name": t.exposed,
                        "description": t.description.chars().take(200).collect::<String>(),
                    })
                })
                .collect();
            ToolOutcome::ok(json!({
                "loaded": list,
                "note": "these tools' definitions are offered from your next step: call them by name",
            }))
        })
    }
}
