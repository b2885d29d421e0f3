//! `web_fetch {url, prompt?}`: a web page as Markdown for the model.
//!
//! The page is fetched by the same [`HttpClient`](super::HttpClient) and
//! capability gate as `http.get` (one URL parser, every redirect's host
//! checked), with one rule more: loopback and private addresses — the
//! names themselves, or what a name resolves to — need a grant naming them
//! (`net:127.0.0.1`), never just `net`. HTML becomes Markdown with
//! scripts, styles and navigation dropped; the text is cut at
//! [`MAX_MARKDOWN`] bytes with a notice; a page is reused for 15 minutes.

use std::time::Duration;

use futures::future::BoxFuture;
use north_protocol::{ApprovalPolicy, ToolKind, ToolOutcome, ToolSpec};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{NetError, parse_http_url};
use crate::args::ArgsSchema;
use crate::describe;
use crate::{Tool, ToolContext};
use north_policy::NetAccess;
use north_policy::net::{NetDenied, NetGrant, is_private_ip, normalize_host};

/// Bytes of Markdown the model gets at most.
pub(crate) const MAX_MARKDOWN: usize = 100 * 1024;
/// How long a fetched page is reused.
pub(crate) const CACHE_FOR: Duration = Duration::from_secs(15 * 60);

/// The tags whose content never reaches the model: code, styling, and the
/// page's navigation chrome.
const DROPPED: &[&str] = &[
    "script", "style", "noscript", "template", "nav", "header", "footer", "aside", "svg", "iframe",
    "form", "button", "head",
];

/// Arguments of `web_fetch`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebFetchArgs {
    /// The http(s) URL of the page.
    pub url: String,
    /// What you are looking for on it (kept with the result).
    #[serde(default)]
    pub prompt: Option<String>,
}

/// The `web_fetch` tool.
pub struct WebFetch {
    args: ArgsSchema,
}

impl Default for WebFetch {
    fn default() -> Self {
        WebFetch::new()
    }
}

impl WebFetch {
    /// The tool.
    pub fn new() -> Self {
        WebFetch {
            args: ArgsSchema::of::<WebFetchArgs>(),
        }
    }
}

/// An outcome asking the gate for `host` (it asks the user, or says which
/// grant a headless run needs), then to call again: a typed
/// [`GrantRequest`](north_protocol::GrantRequest) on the wire.
pub fn needs_grant(host: &str, why: String) -> ToolOutcome {
    north_protocol::GrantRequest::net(host, why).outcome()
}

/// Fetches `url` for tool `tool`: cancellable, and a host no grant covers
/// (a redirect elsewhere, a private address) becomes [`needs_grant`].
pub(super) async fn fetch_or_ask(
    ctx: &ToolContext,
    tool: &str,
    url: &str,
    max_age: Option<Duration>,
    access: &NetAccess<'_>,
) -> Result<super::HttpResponse, ToolOutcome> {
    // Checked here as well as in the service: whatever web stands behind
    // the context, it is asked only for what the grants allow.
    let fetch = async {
        super::check_url(url, access)?;
        ctx.http.fetch(url, max_age, access).await
    };
    let response = tokio::select! {
        r = fetch => r,
        () = ctx.cancel.cancelled() => return Err(ToolOutcome::err(format!("{tool}: cancelled"))),
    };
    response.map_err(|e| match e {
        NetError::Denied(denied) => {
            let host = match &denied {
                NetDenied::NoCapability { host }
                | NetDenied::NotAllowlisted { host }
                | NetDenied::Private { host } => host.clone(),
            };
            needs_grant(&host, format!("{tool}: {denied}"))
        }
        e => ToolOutcome::err(format!("{tool}: {e}")),
    })
}

/// HTML as Markdown, without what [`DROPPED`] names.
pub(crate) fn html_to_markdown(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(DROPPED.to_vec())
        .build();
    match converter.convert(html) {
        Ok(md) => md,
        Err(e) => format!("[the page could not be converted: {e}]"),
    }
}

/// `text` cut at `max` bytes (on a character boundary) with a notice.
fn capped(text: String, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let total = text.len();
    let mut kept = text[..end].to_string();
    kept.push_str(&format!(
        "\n\n[… cut: this page's text is {total} bytes; the first {end} are shown]"
    ));
    (kept, true)
}

/// Whether what `host` names resolves to this machine or a private network.
async fn resolves_private(host: &str, port: u16) -> bool {
    match tokio::net::lookup_host((host, port)).await {
        Ok(addrs) => addrs.into_iter().any(|a| is_private_ip(a.ip())),
        Err(_) => false,
    }
}

impl Tool for WebFetch {
    fn kind(&self) -> ToolKind {
        ToolKind::Fetch
    }

    fn intent(&self, args: &Value) -> Option<String> {
        Some(format!(
            "Reading `{}`",
            describe::arg(args, "url").unwrap_or("?")
        ))
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "web_fetch".into(),
            description: "Read a web page as Markdown (scripts, styles and navigation dropped; at most 100 KB). Needs the user's grant for its domain.".into(),
            input_schema: self.args.schema().clone(),
            approval: ApprovalPolicy::Net,
        }
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let args: WebFetchArgs = match self.args.parse("web_fetch", args) {
                Ok(a) => a,
                Err(e) => return ToolOutcome::err(e.to_string()),
            };
            let url = match parse_http_url(&args.url) {
                Ok(u) => u,
                Err(e) => return ToolOutcome::err(format!("web_fetch: {e}")),
            };
            let host = normalize_host(url.host_str().unwrap_or_default());
            let access = NetAccess {
                capabilities: &ctx.capabilities,
                allowlist: ctx.net_allowlist.as_deref(),
                private_needs_grant: true,
            };
            // A public name that resolves to a private address is private.
            let named = matches!(access.check(&host), Ok(NetGrant::Domain(_)));
            if !named && resolves_private(&host, url.port_or_known_default().unwrap_or(80)).await {
                return needs_grant(&host, NetDenied::Private { host: host.clone() }.to_string());
            }
            let response = match fetch_or_ask(
                ctx,
                "web_fetch",
                url.as_str(),
                Some(CACHE_FOR),
                &access,
            )
            .await
            {
                Ok(r) => r,
                Err(outcome) => return outcome,
            };
            let content_type = response.content_type.clone().unwrap_or_default();
            let body = String::from_utf8_lossy(&response.body);
            let looks_html = content_type.contains("html")
                || (content_type.is_empty() && body.trim_start().starts_with('<'));
            let text = if looks_html {
                html_to_markdown(&body)
            } else if content_type.is_empty()
                || content_type.starts_with("text/")
                || content_type.contains("json")
                || content_type.contains("xml")
            {
                body.into_owned()
            } else {
                return ToolOutcome::err(format!(
                    "web_fetch: {} is not a text page (content type `{content_type}`)",
                    response.final_url
                ));
            };
            let (markdown, truncated) = capped(text, MAX_MARKDOWN);
            let output = json!({
                "url": response.url,
                "final_url": response.final_url,
                "status": response.status,
                "markdown": markdown,
                "truncated": truncated || response.truncated,
                "from_cache": response.from_cache,
                "prompt": args.prompt,
            });
            if response.status >= 400 {
                return ToolOutcome {
                    ok: false,
                    output,
                    error: Some(format!(
                        "web_fetch {}: HTTP status {}",
                        args.url, response.status
                    )),
                };
            }
            ToolOutcome::ok(output)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_become_markdown_without_scripts_styles_or_navigation() {
        let md = html_to_markdown(
            "<html><head><title>T</title><style>body{}</style></head><body><nav><a href='/'>Home</a></nav>\
             <h1>Title</h1><p>The <b>paragraph</b> text.</p><script>steal()</script></body></html>",
        );
        assert!(md.contains("# Title"), "{md}");
        assert!(md.contains("The **paragraph** text."), "{md}");
        for gone in ["steal", "body{}", "Home"] {
            assert!(!md.contains(gone), "{gone} in {md}");
        }
    }

    #[test]
    fn long_text_is_cut_with_a_notice() {
        let (text, cut) = capped("é".repeat(100), 51);
        assert!(cut && text.contains("is 200 bytes; the first 50 are shown"));
        let (text, cut) = capped("short".into(), 51);
        assert!(!cut && text == "short");
    }
}
