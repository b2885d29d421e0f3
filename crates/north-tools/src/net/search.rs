//! `web_search {query}`: results (title, URL, snippet) from the search
//! backend the user configured — a SearXNG-compatible endpoint, asked with
//! `q` and `format=json`. Reaching it needs a grant for its host like any
//! fetch; without a backend the tool is not offered at all.

use futures::future::BoxFuture;
use north_protocol::{ApprovalPolicy, ToolKind, ToolOutcome, ToolSpec};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::fetch::fetch_or_ask;
use super::parse_http_url;
use crate::args::ArgsSchema;
use crate::describe;
use crate::{Tool, ToolContext};
use north_policy::NetAccess;

/// Results returned at most.
const MAX_RESULTS: usize = 10;
/// Characters of a snippet kept.
const MAX_SNIPPET: usize = 400;

/// Arguments of `web_search`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebSearchArgs {
    /// What to search the web for.
    pub query: String,
}

/// The `web_search` tool over one SearXNG-compatible endpoint.
pub struct WebSearch {
    endpoint: String,
    args: ArgsSchema,
}

impl WebSearch {
    /// Searches through `endpoint` (`https://search.example/search`).
    pub fn searxng(endpoint: impl Into<String>) -> Self {
        WebSearch {
            endpoint: endpoint.into(),
            args: ArgsSchema::of::<WebSearchArgs>(),
        }
    }
}

fn clip(text: &str, max: usize) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() <= max {
        return text;
    }
    let mut kept: String = text.chars().take(max).collect();
    kept.push('…');
    kept
}

impl Tool for WebSearch {
    fn kind(&self) -> ToolKind {
        ToolKind::Fetch
    }

    fn intent(&self, args: &Value) -> Option<String> {
        Some(format!(
            "Searching the web: `{}`",
            describe::arg(args, "query").unwrap_or("?")
        ))
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "web_search".into(),
            description: "Search the web: titles, URLs and snippets of the top results. Read a result with web_fetch.".into(),
            input_schema: self.args.schema().clone(),
            approval: ApprovalPolicy::Net,
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let args: WebSearchArgs = match self.args.parse("web_search", args) {
                Ok(a) => a,
                Err(e) => return ToolOutcome::err(e.to_string()),
            };
            let mut url = match parse_http_url(&self.endpoint) {
                Ok(u) => u,
                Err(e) => {
                    return ToolOutcome::err(format!(
                        "web_search: the configured `web_search.searxng_url` is unusable: {e}"
                    ));
                }
            };
            url.query_pairs_mut()
                .append_pair("q", &args.query)
                .append_pair("format", "json");
            let access = NetAccess {
                capabilities: &ctx.capabilities,
                allowlist: ctx.net_allowlist.as_deref(),
                private_needs_grant: false,
            };
            let max_age = Some(ctx.http.config().ttl);
            let response =
                match fetch_or_ask(ctx, "web_search", url.as_str(), max_age, &access).await {
                    Ok(r) => r,
                    Err(outcome) => return outcome,
                };
            if response.status >= 400 {
                return ToolOutcome::err(format!(
                    "web_search: the search backend answered HTTP {}",
                    response.status
                ));
            }
            let parsed: Value = match serde_json::from_slice(&response.body) {
                Ok(v) => v,
                Err(e) => {
                    return ToolOutcome::err(format!(
                        "web_search: the search backend did not answer JSON ({e}); is it a SearXNG endpoint with the json format enabled?"
                    ));
                }
            };
            let results: Vec<Value> = parsed
                .get("results")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(|item| {
                            let url = item.get("url").and_then(Value::as_str)?;
                            Some(json!({
                                "title": clip(item.get("title").and_then(Value::as_str).unwrap_or(""), 200),
                                "url": url,
                                "snippet": clip(item.get("content").and_then(Value::as_str).unwrap_or(""), MAX_SNIPPET),
                            }))
                        })
                        .take(MAX_RESULTS)
                        .collect()
                })
                .unwrap_or_default();
            ToolOutcome::ok(json!({"query": args.query, "results": results}))
        })
    }
}
