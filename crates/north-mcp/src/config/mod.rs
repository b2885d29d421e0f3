//! Server configuration: the `mcpServers` format Claude Code reads, in a
//! project's `.mcp.json` and in the user's own `mcp.json`.
//!
//! A file is kept as JSON so `north mcp add/remove` rewrite only the entry
//! they touch: keys North does not know (other tools', newer versions')
//! survive a rewrite.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

mod oauth;
pub use oauth::OAuthConfig;

/// Where a server was configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The project's `.mcp.json` (starts only in a trusted project).
    Project,
    /// The user's own `mcp.json` beside North's config.
    User,
    /// Passed by the user's editor for one session (ACP `session/new`).
    Editor,
    /// An installed plugin's (reviewed when it was installed).
    Plugin,
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scope::Project => "project",
            Scope::User => "user",
            Scope::Editor => "editor",
            Scope::Plugin => "plugin",
        })
    }
}

/// How North reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking JSON-RPC on its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for it on top of North's key-free environment.
        env: BTreeMap<String, String>,
        /// Its working directory (default: the project root).
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint URL.
        url: String,
        /// Headers sent with every request (e.g. `Authorization`).
        headers: BTreeMap<String, String>,
    },
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Its name: the `<server>` in `mcp__<server>__<tool>`.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// Seconds a tool call may take (North's own key; default 60).
    pub timeout_secs: Option<u64>,
    /// Where it was configured.
    pub scope: Scope,
    /// Whether the entry is switched off (`"disabled": true`).
    pub disabled: bool,
    /// How North logs in to an HTTP server that asks for OAuth (its
    /// `"oauth"` block); `None`: discovered and registered as it asks.
    pub oauth: Option<OAuthConfig>,
}

/// A configuration file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid JSON, or not an object.
    #[error("{path} is not valid MCP configuration: {message}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// One server entry is unusable.
    #[error("{path}: server `{name}`: {message}")]
    Server {
        /// The file.
        path: PathBuf,
        /// The server's name.
        name: String,
        /// What is wrong, and what to write instead.
        message: String,
    },
    /// The file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A server name that cannot become part of a tool name.
    #[error(
        "invalid server name `{0}`: use letters, digits, `-` and `_` (at most 32), e.g. `github`"
    )]
    BadName(String),
}

/// The longest server name: tool names must fit providers' 64-character limit.
pub(crate) const MAX_NAME_LEN: usize = 32;

/// Whether `name` can be a server name.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.contains("__")
}

/// One `mcpServers` file, as JSON.
#[derive(Debug, Clone)]
pub struct ServersFile {
    path: PathBuf,
    scope: Scope,
    doc: Map<String, Value>,
}

impl ServersFile {
    /// The project file's name, at the project root.
    pub const PROJECT_FILE: &'static str = ".mcp.json";

    /// Loads `path`; a missing or empty file has no servers.
    pub fn load(path: &Path, scope: Scope) -> Result<Self, ConfigError> {
        // A repository's file: bounded, and a fifo or a link to /dev/zero
        // is refused instead of read forever.
        let text = match north_policy::read_settings(path) {
            Ok(text) => text.unwrap_or_default(),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.into(),
                    source,
                });
            }
        };
        let doc = if text.trim().is_empty() {
            Value::Object(Map::new())
        } else {
            serde_json::from_str::<Value>(&text).map_err(|e| ConfigError::Malformed {
                path: path.into(),
                message: e.to_string(),
            })?
        };
        Self::of_doc(path, scope, doc)
    }

    /// A file whose JSON is `doc` (a plugin's `.mcp.json`, or the
    /// `mcpServers` block of its manifest wrapped as one), named `path`.
    pub fn of_doc(path: &Path, scope: Scope, doc: Value) -> Result<Self, ConfigError> {
        let Value::Object(doc) = doc else {
            return Err(ConfigError::Malformed {
                path: path.into(),
                message: "expected an object like {\"mcpServers\": {...}}".into(),
            });
        };
        if let Some(servers) = doc.get("mcpServers")
            && !servers.is_object()
        {
            return Err(ConfigError::Malformed {
                path: path.into(),
                message: "`mcpServers` must be an object of servers by name".into(),
            });
        }
        Ok(ServersFile {
            path: path.into(),
            scope,
            doc,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The servers, in file order. An unusable entry is an error naming it;
    /// the others are still returned beside it.
    pub fn servers(&self) -> (Vec<ServerConfig>, Vec<ConfigError>) {
        let mut ok = Vec::new();
        let mut bad = Vec::new();
        let Some(Value::Object(servers)) = self.doc.get("mcpServers") else {
            return (ok, bad);
        };
        for (name, entry) in servers {
            match parse_entry(name, entry, self.scope) {
                Ok(server) => ok.push(server),
                Err(message) => bad.push(ConfigError::Server {
                    path: self.path.clone(),
                    name: name.clone(),
                    message,
                }),
            }
        }
        (ok, bad)
    }

    /// The raw entry of server `name`.
    pub fn entry(&self, name: &str) -> Option<&Value> {
        self.doc.get("mcpServers")?.get(name)
    }

    /// Adds or replaces server `name` and writes the file atomically.
    pub fn put(&mut self, name: &str, entry: Value) -> Result<(), ConfigError> {
        if !valid_name(name) {
            return Err(ConfigError::BadName(name.into()));
        }
        if let Err(message) = parse_entry(name, &entry, self.scope) {
            return Err(ConfigError::Server {
                path: self.path.clone(),
                name: name.into(),
                message,
            });
        }
        let servers = self
            .doc
            .entry("mcpServers")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(servers) = servers {
            servers.insert(name.into(), entry);
        }
        self.save()
    }

    /// Removes server `name`; false when there was none.
    pub fn remove(&mut self, name: &str) -> Result<bool, ConfigError> {
        let removed = match self.doc.get_mut("mcpServers") {
            Some(Value::Object(servers)) => servers.shift_remove(name).is_some(),
            _ => false,
        };
        if removed {
            self.save()?;
        }
        Ok(removed)
    }

    fn save(&self) -> Result<(), ConfigError> {
        let err = |source| ConfigError::Write {
            path: self.path.clone(),
            source,
        };
        let mut text = serde_json::to_string_pretty(&Value::Object(self.doc.clone()))
            .map_err(|e| err(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        text.push('\n');
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(err)?;
        let tmp = dir.join(format!(
            ".{}.north-tmp-{}",
            self.path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("mcp.json"),
            std::process::id()
        ));
        let write = || -> std::io::Result<()> {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            err(e)
        })
    }
}

fn string_map(value: Option<&Value>, what: &str) -> Result<BTreeMap<String, String>, String> {
    match value {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                Value::Number(n) => Ok((k.clone(), n.to_string())),
                Value::Bool(b) => Ok((k.clone(), b.to_string())),
                _ => Err(format!("`{what}.{k}` must be a string")),
            })
            .collect(),
        Some(_) => Err(format!("`{what}` must be an object of strings")),
    }
}

/// A stdio server: its command, arguments, environment and directory.
fn stdio_transport(obj: &serde_json::Map<String, Value>) -> Result<Transport, String> {
    let command = obj
        .get("command")
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
        .ok_or(if obj.contains_key("url") {
            "a server with `url` needs `\"type\": \"http\"`"
        } else {
            "a stdio server needs `command`"
        })?;
    let args = match obj.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|a| match a {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                _ => Err("`args` must be an array of strings".to_string()),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("`args` must be an array of strings".into()),
    };
    Ok(Transport::Stdio {
        command: command.into(),
        args,
        env: string_map(obj.get("env"), "env")?,
        cwd: obj.get("cwd").and_then(Value::as_str).map(PathBuf::from),
    })
}

fn parse_entry(name: &str, entry: &Value, scope: Scope) -> Result<ServerConfig, String> {
    if !valid_name(name) {
        return Err("the name must use letters, digits, `-` and `_` (at most 32, no `__`)".into());
    }
    let Value::Object(obj) = entry else {
        return Err(
            "expected an object with `command` (stdio) or `type: \"http\"` and `url`".into(),
        );
    };
    let kind = obj.get("type").and_then(Value::as_str);
    let transport = match kind {
        Some("http") | Some("streamable-http") | Some("streamableHttp") => {
            let url = obj
                .get("url")
                .and_then(Value::as_str)
                .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
                .ok_or("an http server needs `url` starting with http:// or https://")?;
            Transport::Http {
                url: url.into(),
                headers: string_map(obj.get("headers"), "headers")?,
            }
        }
        Some("sse") => {
            return Err(
                "the SSE transport is deprecated in MCP and not supported; if the server also speaks streamable HTTP, use `\"type\": \"http\"`".into(),
            );
        }
        Some("stdio") | None => stdio_transport(obj)?,
        Some(other) => {
            return Err(format!(
                "unknown `type` `{other}`: use `stdio` (with `command`) or `http` (with `url`)"
            ));
        }
    };
    let timeout_secs = match obj.get("timeout") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .filter(|s| *s > 0)
                .ok_or("`timeout` must be a positive number of seconds")?,
        ),
    };
    let oauth = match obj.get("oauth") {
        None | Some(Value::Null) => None,
        Some(_) if matches!(transport, Transport::Stdio { .. }) => {
            return Err("`oauth` applies to http servers only".into());
        }
        Some(v) => Some(oauth::parse(v)?),
    };
    Ok(ServerConfig {
        name: name.into(),
        transport,
        timeout_secs,
        scope,
        oauth,
        disabled: obj
            .get("disabled")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

/// Variables North never expands into a server's configuration: its own
/// provider keys and settings stay with North.
fn never_expanded(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["ANTHROPIC_", "OPENAI_", "NORTH_"]
        .iter()
        .any(|p| upper.starts_with(p))
}

/// Why a `${VAR}` reference in a server's configuration cannot be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    /// `${` with no closing `}`.
    #[error("unclosed `${{` in `{0}`")]
    Unclosed(String),
    /// One of North's own keys or settings (never passed to servers).
    #[error("`${{{0}}}`: North never passes its own keys and settings to MCP servers")]
    Reserved(String),
    /// The variable is not set and has no default.
    #[error("`${{{0}}}` is not set (set it, or write `${{{0}:-default}}`)")]
    Unset(String),
}

/// Expands `${VAR}` and `${VAR:-default}` from `lookup`, as Claude Code does
/// in `.mcp.json`. North's own keys (`ANTHROPIC_*`, `OPENAI_*`, `NORTH_*`)
/// are never expanded, so a configuration cannot hand them to a server.
pub fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(ExpandError::Unclosed(text.to_string()));
        };
        let inner = &after[..end];
        let (var, default) = match inner.split_once(":-") {
            Some((v, d)) => (v, Some(d)),
            None => (inner, None),
        };
        let value = if never_expanded(var) {
            None
        } else {
            lookup(var)
        };
        match (value, default) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) if never_expanded(var) => {
                return Err(ExpandError::Reserved(var.to_string()));
            }
            (None, None) => return Err(ExpandError::Unset(var.to_string())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

impl ServerConfig {
    /// This server with `${VAR}` references expanded from `lookup`.
    pub fn expanded(&self, lookup: &dyn Fn(&str) -> Option<String>) -> Result<Self, ExpandError> {
        let mut server = self.clone();
        let map = |m: &BTreeMap<String, String>| -> Result<BTreeMap<String, String>, ExpandError> {
            m.iter()
                .map(|(k, v)| Ok((k.clone(), expand(v, lookup)?)))
                .collect()
        };
        server.transport = match &self.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => Transport::Stdio {
                command: expand(command, lookup)?,
                args: args
                    .iter()
                    .map(|a| expand(a, lookup))
                    .collect::<Result<_, _>>()?,
                env: map(env)?,
                cwd: cwd.clone(),
            },
            Transport::Http { url, headers } => Transport::Http {
                url: expand(url, lookup)?,
                headers: map(headers)?,
            },
        };
        if let Some(oauth) = server.oauth.as_mut()
            && let Some(secret) = oauth.client_secret.as_mut()
        {
            *secret = expand(secret, lookup)?;
        }
        Ok(server)
    }

    /// One line describing how the server is reached (no header values or
    /// environment values: they may hold secrets).
    pub fn describe(&self) -> String {
        match &self.transport {
            Transport::Stdio {
                command, args, env, ..
            } => {
                let mut line = std::iter::once(command.as_str())
                    .chain(args.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ");
                if !env.is_empty() {
                    line.push_str(&format!(
                        " (env: {})",
                        env.keys().cloned().collect::<Vec<_>>().join(", ")
                    ));
                }
                line
            }
            Transport::Http { url, headers } => {
                let mut line = format!("http {url}");
                if self.oauth.is_some() {
                    line.push_str(" (oauth)");
                }
                if !headers.is_empty() {
                    line.push_str(&format!(
                        " (headers: {})",
                        headers.keys().cloned().collect::<Vec<_>>().join(", ")
                    ));
                }
                line
            }
        }
    }
}

/// Every server North should know of: the user's, then (in a trusted
/// project) the project's; a project server replaces a same-named user one.
/// Servers of an untrusted project are returned in `skipped` so they can
/// be reported, never started.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The servers that may start.
    pub servers: Vec<ServerConfig>,
    /// Project servers that did not load because the project is not trusted.
    pub skipped: Vec<String>,
    /// Files or entries that could not be used.
    pub errors: Vec<ConfigError>,
}

/// Loads the user's file and the project's `.mcp.json`.
pub fn load(root: &Path, user_file: Option<&Path>, project_trusted: bool) -> Loaded {
    let mut loaded = Loaded::default();
    let add = |file: Result<ServersFile, ConfigError>, loaded: &mut Loaded| match file {
        Ok(file) => {
            let (servers, errors) = file.servers();
            loaded.errors.extend(errors);
            for server in servers {
                loaded.servers.retain(|s| s.name != server.name);
                loaded.servers.push(server);
            }
        }
        Err(e) => loaded.errors.push(e),
    };
    if let Some(user) = user_file {
        add(ServersFile::load(user, Scope::User), &mut loaded);
    }
    let project = root.join(ServersFile::PROJECT_FILE);
    if project_trusted {
        add(ServersFile::load(&project, Scope::Project), &mut loaded);
    } else if let Ok(file) = ServersFile::load(&project, Scope::Project) {
        loaded.skipped = file.servers().0.into_iter().map(|s| s.name).collect();
    }
    loaded
}

impl Loaded {
    /// Adds installed plugins' servers; a name already taken keeps its
    /// first server (a plugin never replaces yours or the project's).
    pub fn add_plugin_servers(&mut self, servers: Vec<ServerConfig>) {
        for server in servers {
            if !self.servers.iter().any(|s| s.name == server.name) {
                self.servers.push(server);
            }
        }
    }

    /// Adds servers the user's editor passed for this session; each
    /// replaces a configured one of the same name.
    pub fn add_editor_servers(&mut self, servers: Vec<ServerConfig>) {
        for server in servers {
            self.servers.retain(|s| s.name != server.name);
            self.skipped.retain(|s| *s != server.name);
            self.servers.push(server);
        }
    }
}

#[cfg(test)]
mod tests;
