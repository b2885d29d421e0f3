//! A server entry's `"oauth"` block: how North registers with the
//! server's authorization server when the user has a client already, and
//! where the browser comes back to.

use serde_json::Value;

/// `"oauth": {"clientId", "clientSecret", "callbackPort", "scopes",
/// "clientMetadataUrl"}` — every field optional: without a client id North
/// registers itself (a Client ID Metadata Document when one is named and
/// the server takes them, else dynamic registration).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthConfig {
    /// A client registered with the authorization server beforehand.
    pub client_id: Option<String>,
    /// That client's secret, as `${VAR}` (a secret never sits in a file).
    pub client_secret: Option<String>,
    /// The loopback port the browser returns to (default: any free one).
    pub callback_port: Option<u16>,
    /// Scopes to ask for instead of the ones the server names.
    pub scopes: Vec<String>,
    /// An https URL of a Client ID Metadata Document describing North as
    /// a client, used as the client id where the server accepts those.
    pub client_metadata_url: Option<String>,
}

/// Parses an entry's `oauth` value.
pub(super) fn parse(value: &Value) -> Result<OAuthConfig, String> {
    let Value::Object(obj) = value else {
        return Err("`oauth` must be an object".into());
    };
    let mut out = OAuthConfig::default();
    for (key, v) in obj {
        let text = || {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("`oauth.{key}` must be a string"))
        };
        match key.as_str() {
            "clientId" | "client_id" => out.client_id = Some(text()?),
            "clientSecret" | "client_secret" => {
                let secret = text()?;
                if !is_variable(&secret) {
                    return Err("`oauth.clientSecret` must name an environment variable, like \"${MY_CLIENT_SECRET}\": a secret is never written in a file".into());
                }
                out.client_secret = Some(secret);
            }
            "callbackPort" | "callback_port" => {
                out.callback_port = Some(
                    v.as_u64()
                        .and_then(|p| u16::try_from(p).ok())
                        .filter(|p| *p > 0)
                        .ok_or("`oauth.callbackPort` must be a port number (1-65535)")?,
                );
            }
            "scopes" => {
                out.scopes = match v {
                    Value::String(s) => s.split_whitespace().map(str::to_string).collect(),
                    Value::Array(items) => items
                        .iter()
                        .map(|s| {
                            s.as_str()
                                .map(str::to_string)
                                .ok_or("`oauth.scopes` must be strings")
                        })
                        .collect::<Result<_, _>>()?,
                    _ => return Err("`oauth.scopes` must be a list of strings".into()),
                }
            }
            "clientMetadataUrl" | "client_metadata_url" => {
                let url = text()?;
                if !url.starts_with("https://") {
                    return Err("`oauth.clientMetadataUrl` must be an https URL".into());
                }
                out.client_metadata_url = Some(url);
            }
            other => {
                return Err(format!(
                    "unknown `oauth.{other}`: use clientId, clientSecret, callbackPort, scopes or clientMetadataUrl"
                ));
            }
        }
    }
    if out.client_secret.is_some() && out.client_id.is_none() {
        return Err("`oauth.clientSecret` needs `oauth.clientId`".into());
    }
    Ok(out)
}

/// Whether `s` is exactly one `${VAR}` reference.
fn is_variable(s: &str) -> bool {
    s.strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .is_some_and(|name| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_oauth_block_reads_and_a_written_secret_is_refused() {
        let c = parse(&json!({"clientId": "north", "clientSecret": "${GH_SECRET}", "callbackPort": 8765, "scopes": "repo read:org"})).unwrap();
        assert_eq!(c.client_id.as_deref(), Some("north"));
        assert_eq!(c.callback_port, Some(8765));
        assert_eq!(c.scopes, ["repo", "read:org"]);
        let e = parse(&json!({"clientId": "north", "clientSecret": "hunter2"})).unwrap_err();
        assert!(e.contains("environment variable"), "{e}");
        let e = parse(&json!({"callbackPort": 70000})).unwrap_err();
        assert!(e.contains("port"), "{e}");
        let e = parse(&json!({"clientSecret": "${S}"})).unwrap_err();
        assert!(e.contains("clientId"), "{e}");
        assert!(parse(&json!({"bogus": 1})).is_err());
    }
}
