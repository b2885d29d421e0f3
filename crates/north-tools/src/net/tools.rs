//! The `http.get` tool (runtime-contracts §4).

use futures::future::BoxFuture;
use north_protocol::{ApprovalPolicy, ToolKind, ToolOutcome, ToolSpec};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::NetError;
use crate::args::ArgsSchema;
use crate::describe;
use crate::{Tool, ToolContext};
use north_policy::NetAccess;

/// Arguments of `http.get`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HttpGetArgs {
    /// http(s) URL.
    pub url: String,
    /// Return a fresh cached copy if there is one.
    #[serde(default = "yes")]
    pub use_cache: bool,
}

fn yes() -> bool {
    true
}

/// `http.get {url, use_cache=true}`: denied unless `net` or `net:<host>` is
/// in [`ToolContext::capabilities`] (see [`north_policy::net`] for the
/// allowlist rule). Returns `{url, final_url, status, content_type, body,
/// truncated, from_cache}`; a binary body is left out (`body: null,
/// binary: true`). Statuses of 400 and above are `ok:false` with the
/// response still in `output`.
pub struct HttpGet {
    args: ArgsSchema,
}

impl Default for HttpGet {
    fn default() -> Self {
        HttpGet::new()
    }
}

impl HttpGet {
    /// The tool.
    pub fn new() -> Self {
        HttpGet {
            args: ArgsSchema::of::<HttpGetArgs>(),
        }
    }
}

impl Tool for HttpGet {
    fn kind(&self) -> ToolKind {
        ToolKind::Fetch
    }

    fn intent(&self, args: &Value) -> Option<String> {
        Some(format!(
            "Fetching `{}`",
            describe::arg(args, "url").unwrap_or("?")
        ))
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "http.get".to_owned(),
            description: "Fetch a URL (needs the net capability). Cached.".to_owned(),
            input_schema: self.args.schema().clone(),
            approval: ApprovalPolicy::Net,
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let args: HttpGetArgs = match self.args.parse("http.get", args) {
                Ok(args) => args,
                Err(e) => return ToolOutcome::err(e.to_string()),
            };
            let access = NetAccess {
                capabilities: &ctx.capabilities,
                allowlist: ctx.net_allowlist.as_deref(),
                private_needs_grant: true,
            };
            // The tool checks the host itself: whatever web stands behind
            // the context, it is asked only for what the grants allow.
            let max_age = args.use_cache.then_some(ctx.http.config().ttl);
            let fetch = async {
                super::check_url(&args.url, &access)?;
                ctx.http.fetch(&args.url, max_age, &access).await
            };
            let response = tokio::select! {
                response = fetch => response,
                () = ctx.cancel.cancelled() => {
                    return ToolOutcome::err(format!("http.get {}: cancelled", args.url));
                }
            };
            let response = match response {
                Ok(response) => response,
                Err(e @ NetError::Denied(_)) => return ToolOutcome::err(e.to_string()),
                Err(e) => return ToolOutcome::err(format!("http.get: {e}")),
            };
            let binary = response.body.iter().take(8192).any(|b| *b == 0);
            let mut output = json!({
                "url": response.url,
                "final_url": response.final_url,
                "status": response.status,
                "content_type": response.content_type,
                "body": if binary {
                    Value::Null
                } else {
                    Value::String(String::from_utf8_lossy(&response.body).into_owned())
                },
                "bytes": response.body.len(),
                "truncated": response.truncated,
                "from_cache": response.from_cache,
            });
            if binary && let Some(obj) = output.as_object_mut() {
                obj.insert("binary".to_owned(), json!(true));
            }
            if response.status >= 400 {
                ToolOutcome {
                    ok: false,
                    output,
                    error: Some(format!(
                        "http.get {}: HTTP status {}",
                        args.url, response.status
                    )),
                }
            } else {
                ToolOutcome::ok(output)
            }
        })
    }
}
