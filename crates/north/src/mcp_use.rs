//! `north mcp login`, `logout` and `call`: using one configured server
//! from the command line — its OAuth login, forgetting it, one tool call.

use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use north_runtime::project_hub as hub;

/// `north mcp call` options.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The server's name.
    pub name: String,
    /// The tool, as the server names it.
    pub tool: String,
    /// Its arguments, a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub args: String,
    /// Answer a server's request for input with its defaults (when they
    /// cover every required field); without it such requests are declined.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

fn untrusted(skipped: &[String], name: &str) -> anyhow::Result<()> {
    if skipped.iter().any(|s| s == name) {
        bail!(
            "MCP server `{name}` is in this project's .mcp.json, which is not trusted: review it, then run `north trust`"
        );
    }
    Ok(())
}

/// `north mcp login NAME`.
pub fn login(root: &std::path::Path, name: &str) -> anyhow::Result<ExitCode> {
    let (hub, skipped, _) = hub(root, false);
    untrusted(&skipped, name)?;
    let path = runtime()?.block_on(hub.login(name))?;
    eprintln!(
        "north: logged in to `{name}`; the tokens are in {} (readable only by you); `north mcp logout {name}` forgets them",
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `north mcp logout NAME`.
pub fn logout(root: &std::path::Path, name: &str) -> anyhow::Result<ExitCode> {
    let (hub, skipped, _) = hub(root, false);
    untrusted(&skipped, name)?;
    if runtime()?.block_on(hub.logout(name))? {
        eprintln!("north: logged out of `{name}`: its tokens are deleted");
    } else {
        eprintln!("north: `{name}` had no stored login");
    }
    Ok(ExitCode::SUCCESS)
}

/// `north mcp call NAME TOOL --args JSON`: the result as JSON on stdout;
/// exit 1 when the tool reports an error.
pub fn call(root: &std::path::Path, args: CallArgs) -> anyhow::Result<ExitCode> {
    let arguments: Map<String, Value> = serde_json::from_str(&args.args)
        .with_context(|| format!("--args must be a JSON object, got `{}`", args.args))?;
    let (hub, skipped, _) = hub(root, true);
    untrusted(&skipped, &args.name)?;
    hub.set_elicitor(std::sync::Arc::new(north_mcp::elicit::Unattended {
        accept_defaults: args.yes,
        announce: north_mcp::Announcer::default(),
    }));
    let rt = runtime()?;
    let result = rt.block_on(async {
        let result = hub
            .call_tool(
                &args.name,
                &args.tool,
                arguments,
                &CancellationToken::new(),
                None,
            )
            .await;
        hub.shutdown().await;
        result
    })?;
    println!("{}", serde_json::to_string_pretty(&result)?);
    let failed = result.get("isError").and_then(Value::as_bool) == Some(true);
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The runtime `north mcp` commands run their calls on.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the runtime")
}
