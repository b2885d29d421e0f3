//! What a connection lists (tools, resources, prompts) and the names its
//! tools take in North's registry.

use rmcp::RoleClient;
use rmcp::service::RunningService;
use serde_json::Value;

use super::handler::{ConnectFailure, Handler};
use crate::status::{PromptInfo, RemoteTool, ResourceInfo};

/// What a connection listed.
#[derive(Default)]
pub(crate) struct Listing {
    pub(crate) tools: Vec<RemoteTool>,
    pub(crate) resources: Vec<ResourceInfo>,
    pub(crate) prompts: Vec<PromptInfo>,
}

/// Tool names must fit providers' rules: `^[a-zA-Z0-9_-]{1,64}$`.
pub(crate) fn exposed_name(server: &str, tool: &str) -> String {
    let clean = north_protocol::wire_safe(tool);
    let full = format!("mcp__{server}__{clean}");
    if full.len() <= 64 && clean == tool {
        return full;
    }
    // Cut (or cleaned) names get a short hash of the original, so two tools
    // never collapse into one name.
    use sha2::Digest;
    let hash = sha2::Sha256::digest(tool.as_bytes());
    let suffix = format!("_{:02x}{:02x}{:02x}", hash[0], hash[1], hash[2]);
    let mut base = full;
    base.truncate(64 - suffix.len());
    base + &suffix
}

pub(super) async fn list(
    service: &RunningService<RoleClient, Handler>,
    server: &str,
) -> Result<Listing, ConnectFailure> {
    let caps = service
        .peer()
        .peer_info()
        .map(|info| serde_json::to_value(&info.capabilities).unwrap_or(Value::Null))
        .unwrap_or(Value::Null);
    let has = |k: &str| caps.get(k).is_some_and(|v| !v.is_null());
    let mut listing = Listing::default();
    if has("tools") {
        let tools = service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| ConnectFailure::from_service("tools/list failed", e))?;
        listing.tools = tools
            .into_iter()
            .map(|t| {
                let name = t.name.to_string();
                RemoteTool {
                    exposed: exposed_name(server, &name),
                    description: t.description.map(|d| d.to_string()).unwrap_or_default(),
                    input_schema: Value::Object((*t.input_schema).clone()),
                    read_only: t
                        .annotations
                        .as_ref()
                        .and_then(|a| a.read_only_hint)
                        .unwrap_or(false),
                    name,
                }
            })
            .collect();
    }
    if has("resources") {
        // Resources and prompts are extras: a server failing to list them
        // still offers its tools.
        if let Ok(resources) = service.peer().list_all_resources().await {
            listing.resources = resources
                .into_iter()
                .filter_map(|r| {
                    let v = serde_json::to_value(&r).ok()?;
                    Some(ResourceInfo {
                        uri: v.get("uri")?.as_str()?.to_string(),
                        name: v
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        mime_type: v.get("mimeType").and_then(Value::as_str).map(String::from),
                    })
                })
                .collect();
        }
    }
    if has("prompts")
        && let Ok(prompts) = service.peer().list_all_prompts().await
    {
        listing.prompts = prompts
            .into_iter()
            .map(|p| PromptInfo {
                name: p.name.to_string(),
                description: p.description.clone().unwrap_or_default(),
                arguments: p
                    .arguments
                    .unwrap_or_default()
                    .into_iter()
                    .map(|a| (a.name.to_string(), a.required.unwrap_or(false)))
                    .collect(),
            })
            .collect();
    }
    Ok(listing)
}

#[cfg(test)]
mod tests {
    use super::exposed_name;

    #[test]
    fn exposed_names_fit_provider_rules_and_stay_distinct() {
        assert_eq!(exposed_name("fs", "read_file"), "mcp__fs__read_file");
        let a = exposed_name("fs", "read.file");
        let b = exposed_name("fs", "read file");
        assert!(a.starts_with("mcp__fs__read_file_"));
        assert_ne!(a, b);
        let long = exposed_name("server", &"x".repeat(100));
        assert!(long.len() <= 64);
        let ok = |n: &str| {
            n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        assert!(ok(&a) && ok(&b) && ok(&long));
    }
}
