//! Capabilities a user grants a session (runtime-contracts §4): `net` for any
//! host, `net:<host>` for exactly one, and `tool:<name>` for calls of an
//! external (MCP) tool without asking each time.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A capability, serialized under its contract name (`net`, `net:example.com`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Capability {
    /// `net`: any host (narrowed by a configured network allowlist).
    Net,
    /// `net:<host>`: exactly this host, compared whole and case-insensitively.
    NetHost(String),
    /// `tool:<name>`: calls of the external tool `<name>` run without
    /// asking; `tool:mcp__<server>` covers every tool of that MCP server.
    Tool(String),
    /// A name North does not know. Kept so files written by other versions
    /// and requests a model makes still load; it never grants anything.
    Other(String),
}

/// Why a capability name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CapabilityError {
    /// Not `net` or `net:<host>`.
    #[error(
        "unknown capability `{0}`: use `net` (any host), `net:<host>` (one host) or `tool:<name>` (an MCP tool or server)"
    )]
    Unknown(String),
    /// `tool:` with no valid tool name.
    #[error("`{0}` names no tool: write `tool:mcp__<server>` or `tool:mcp__<server>__<tool>`")]
    BadTool(String),
    /// `net:` with no host, or a host with spaces or a path.
    #[error("`{0}` names no valid host: write `net:<host>`, e.g. `net:example.com`")]
    BadHost(String),
}

impl Capability {
    /// Reads a name leniently: unknown names become [`Capability::Other`]
    /// (for stored state and model requests, never for user input).
    pub fn lenient(name: &str) -> Capability {
        name.parse()
            .unwrap_or_else(|_| Capability::Other(name.to_string()))
    }

    /// Whether this grant lets tool `name` run unasked: `tool:<name>`, or
    /// `tool:<prefix>` where `name` is `<prefix>__<rest>` (a server's tools).
    pub fn covers_tool(&self, name: &str) -> bool {
        match self {
            Capability::Tool(t) => {
                name == t
                    || name
                        .strip_prefix(t.as_str())
                        .is_some_and(|rest| rest.starts_with("__"))
            }
            _ => false,
        }
    }

    /// The host of a `net:<host>` grant.
    pub fn host(&self) -> Option<&str> {
        match self {
            Capability::NetHost(h) => Some(h),
            _ => None,
        }
    }
}

impl FromStr for Capability {
    type Err = CapabilityError;

    /// Strict parsing, for what a user types (`--grant`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let name = s.trim();
        if name == "net" {
            return Ok(Capability::Net);
        }
        if let Some(tool) = name.strip_prefix("tool:") {
            let tool = tool.trim();
            return if tool.is_empty()
                || !tool
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            {
                Err(CapabilityError::BadTool(s.to_string()))
            } else {
                Ok(Capability::Tool(tool.to_string()))
            };
        }
        match name.strip_prefix("net:") {
            Some(host) => {
                let host = host.trim();
                if host.is_empty() || host.contains(|c: char| c.is_whitespace() || c == '/') {
                    Err(CapabilityError::BadHost(s.to_string()))
                } else {
                    Ok(Capability::NetHost(host.to_string()))
                }
            }
            None => Err(CapabilityError::Unknown(s.to_string())),
        }
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Capability::Net => f.write_str("net"),
            Capability::NetHost(h) => write!(f, "net:{h}"),
            Capability::Tool(t) => write!(f, "tool:{t}"),
            Capability::Other(s) => f.write_str(s),
        }
    }
}

impl Serialize for Capability {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Capability {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Ok(Capability::lenient(&name))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_user_input_is_strict() {
        for name in ["net", "net:example.com", "fs.write"] {
            let cap = Capability::lenient(name);
            assert_eq!(serde_json::to_string(&cap).unwrap(), format!("\"{name}\""));
            let back: Capability = serde_json::from_str(&format!("\"{name}\"")).unwrap();
            assert_eq!(back, cap);
        }
        assert_eq!("net".parse(), Ok(Capability::Net));
        assert_eq!(
            "net:docs.rs".parse(),
            Ok(Capability::NetHost("docs.rs".into()))
        );
        assert!(matches!(
            "foo".parse::<Capability>(),
            Err(CapabilityError::Unknown(_))
        ));
        assert!(matches!(
            "net:".parse::<Capability>(),
            Err(CapabilityError::BadHost(_))
        ));
        assert_eq!(
            "tool:mcp__fs".parse(),
            Ok(Capability::Tool("mcp__fs".into()))
        );
        assert!("tool:".parse::<Capability>().is_err());
        assert!("tool:a b".parse::<Capability>().is_err());
        let fs = Capability::Tool("mcp__fs".into());
        assert!(fs.covers_tool("mcp__fs__read"));
        assert!(fs.covers_tool("mcp__fs"));
        assert!(!fs.covers_tool("mcp__fsx__read"));
        assert!(!Capability::Net.covers_tool("mcp__fs__read"));
        assert!(matches!(
            "net:a b".parse::<Capability>(),
            Err(CapabilityError::BadHost(_))
        ));
    }
}
