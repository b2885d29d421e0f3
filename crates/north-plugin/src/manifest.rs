//! A plugin's manifest, `.claude-plugin/plugin.json`, as Claude Code
//! writes it: `name` (the only required field), `version`, `description`,
//! `author`, and where its parts are — `commands`, `agents` (each replaces
//! the default folder), `skills` (added to `skills/`), `hooks` and
//! `mcpServers` (a file, a list of files, or the block itself).

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use crate::error::PluginError;

/// The manifest's path inside a plugin.
pub const MANIFEST: &str = ".claude-plugin/plugin.json";

/// The largest manifest, hooks or servers file read.
pub(crate) const MAX_JSON: u64 = 1024 * 1024;

/// Where a plugin keeps its hooks or its MCP servers.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A JSON file inside the plugin.
    File(PathBuf),
    /// The block itself, in the manifest.
    Inline(Value),
}

/// What a plugin's manifest says.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// Its name: the `PLUGIN` of `/PLUGIN:command`.
    pub name: String,
    /// Its version, when it gives one.
    pub version: Option<String>,
    /// What it is for.
    pub description: Option<String>,
    /// Who wrote it.
    pub author: Option<String>,
    /// Command folders, relative to the plugin's folder.
    pub commands: Vec<PathBuf>,
    /// Agent folders.
    pub agents: Vec<PathBuf>,
    /// Skill folders (each holding `NAME/SKILL.md`).
    pub skills: Vec<PathBuf>,
    /// Hooks.
    pub hooks: Vec<Block>,
    /// MCP servers.
    pub mcp: Vec<Block>,
}

impl Manifest {
    /// Reads the manifest of the plugin in `dir`. Without one, a
    /// marketplace `entry` (Claude Code's `"strict": false`) stands in for
    /// it, and else a folder that has parts where Claude Code looks for
    /// them is named `fallback`; a folder with neither is not a plugin.
    pub fn read(
        dir: &Path,
        entry: Option<&Value>,
        fallback: &str,
    ) -> Result<Manifest, PluginError> {
        let path = dir.join(MANIFEST);
        let value = match read_json(&path)? {
            Some(v) => v,
            None => match entry {
                Some(e) => e.clone(),
                None if has_default_parts(dir) => Value::Object(serde_json::Map::new()),
                None => return Err(PluginError::NoManifest(dir.to_path_buf())),
            },
        };
        let bad = |message: String| PluginError::Manifest {
            path: path.clone(),
            message,
        };
        let Value::Object(map) = &value else {
            return Err(bad(
                "expected an object like {\"name\": \"my-plugin\"}".into()
            ));
        };
        let name = match map.get("name") {
            Some(Value::String(n)) => n.clone(),
            None if entry.is_some() || !path.exists() => fallback.to_string(),
            Some(other) => {
                return Err(bad(format!(
                    "`name` must be a string, found {}",
                    north_protocol::json_kind(other)
                )));
            }
            None => {
                return Err(bad(
                    "`name` is missing (e.g. \"name\": \"my-plugin\")".into()
                ));
            }
        };
        if !crate::source::valid_name(&name) {
            return Err(bad(format!(
                "`name` `{}` must be letters, digits, `-`, `_` or `.` (kebab-case, at most 64)",
                name.escape_debug()
            )));
        }
        let text = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_string);
        let author = match map.get("author") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Object(a)) => a.get("name").and_then(Value::as_str).map(str::to_string),
            _ => None,
        };
        let fields = Fields {
            dir,
            map,
            path: &path,
        };
        Ok(Manifest {
            version: text("version"),
            description: text("description"),
            author,
            commands: fields.paths("commands", "commands", true)?,
            agents: fields.paths("agents", "agents", true)?,
            skills: fields.paths("skills", "skills", false)?,
            hooks: fields.hooks()?,
            mcp: fields.blocks("mcpServers", ".mcp.json")?,
            name,
        })
    }
}

/// A manifest's fields that name where the parts are.
struct Fields<'a> {
    dir: &'a Path,
    map: &'a serde_json::Map<String, Value>,
    path: &'a Path,
}

impl Fields<'_> {
    fn bad(&self, message: String) -> PluginError {
        PluginError::Manifest {
            path: self.path.to_path_buf(),
            message,
        }
    }

    /// The folders `key` names, after `default` when it exists and the key
    /// adds to it rather than `replaces` it.
    fn paths(&self, key: &str, default: &str, replaces: bool) -> Result<Vec<PathBuf>, PluginError> {
        let given = self
            .map
            .get(key)
            .map(|v| path_list(v, key))
            .transpose()
            .map_err(|m| self.bad(m))?;
        let mut out = Vec::new();
        if (given.is_none() || !replaces) && self.dir.join(default).is_dir() {
            out.push(PathBuf::from(default));
        }
        for p in given.unwrap_or_default() {
            if !out.contains(&p) {
                out.push(p);
            }
        }
        Ok(out)
    }

    /// The hooks: `hooks/hooks.json` when it exists, and what the manifest's
    /// `hooks` adds (Claude Code loads both).
    fn hooks(&self) -> Result<Vec<Block>, PluginError> {
        let default = PathBuf::from("hooks/hooks.json");
        let mut out = if self.dir.join(&default).is_file() {
            vec![Block::File(default)]
        } else {
            Vec::new()
        };
        if self.map.contains_key("hooks") {
            for block in self.blocks("hooks", "hooks/hooks.json")? {
                if !out.contains(&block) {
                    out.push(block);
                }
            }
        }
        Ok(out)
    }

    /// The hooks or servers `key` gives: inline, files, or `default`.
    fn blocks(&self, key: &str, default: &str) -> Result<Vec<Block>, PluginError> {
        match self.map.get(key) {
            None => Ok(if self.dir.join(default).is_file() {
                vec![Block::File(PathBuf::from(default))]
            } else {
                Vec::new()
            }),
            Some(inline @ Value::Object(_)) => Ok(vec![Block::Inline(inline.clone())]),
            Some(v) => Ok(path_list(v, key)
                .map_err(|m| self.bad(m))?
                .into_iter()
                .map(Block::File)
                .collect()),
        }
    }
}

/// Whether `dir` has a part where Claude Code looks without a manifest.
fn has_default_parts(dir: &Path) -> bool {
    ["commands", "agents", "skills"]
        .iter()
        .any(|d| dir.join(d).is_dir())
        || dir.join("hooks/hooks.json").is_file()
        || dir.join(".mcp.json").is_file()
}

/// A path or a list of paths, each relative and inside the plugin.
fn path_list(value: &Value, key: &str) -> Result<Vec<PathBuf>, String> {
    let items: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    items
        .into_iter()
        .map(|item| {
            let Some(text) = item.as_str() else {
                return Err(format!(
                    "`{key}` must be a path like \"./{key}\" or a list of them, found {}",
                    north_protocol::json_kind(item)
                ));
            };
            inside(text).ok_or_else(|| {
                format!("`{key}` path `{text}` leaves the plugin's folder: give a path like \"./{key}\" inside it")
            })
        })
        .collect()
}

/// `text` as a path inside the plugin (`./x`, `x/y`), or `None` when it is
/// absolute or climbs out.
pub(crate) fn inside(text: &str) -> Option<PathBuf> {
    let path = Path::new(text);
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::Normal(p) => out.push(p),
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// The JSON of `path` (`None`: no such file), at most 1 MiB, never
/// through a link out of the plugin (the copy refused those already).
pub(crate) fn read_json(path: &Path) -> Result<Option<Value>, PluginError> {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(PluginError::Io {
                what: "read",
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let mut text = String::new();
    file.take(MAX_JSON)
        .read_to_string(&mut text)
        .map_err(PluginError::io("read", path))?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| PluginError::Manifest {
            path: path.to_path_buf(),
            message: format!("not valid JSON: {e}"),
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn paths_must_stay_inside_the_plugin() {
        assert_eq!(inside("./commands"), Some(PathBuf::from("commands")));
        assert_eq!(inside("x/y"), Some(PathBuf::from("x/y")));
        assert_eq!(inside("../x"), None);
        assert_eq!(inside("/etc"), None);
        assert_eq!(inside("."), None);
    }

    #[test]
    fn a_manifest_names_its_parts_and_errors_say_which_field() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".claude-plugin")).unwrap();
        std::fs::create_dir_all(dir.path().join("commands")).unwrap();
        std::fs::create_dir_all(dir.path().join("extra")).unwrap();
        std::fs::write(
            dir.path().join(MANIFEST),
            r#"{"name":"fmt","version":"1.0.0","author":{"name":"A"},"commands":["./extra"],"hooks":{"Stop":[]}}"#,
        )
        .unwrap();
        let m = Manifest::read(dir.path(), None, "x").unwrap();
        assert_eq!(m.name, "fmt");
        assert_eq!(m.commands, vec![PathBuf::from("extra")]);
        assert!(matches!(m.hooks[0], Block::Inline(_)));
        std::fs::write(
            dir.path().join(MANIFEST),
            r#"{"name":"fmt","agents":"../out"}"#,
        )
        .unwrap();
        let e = Manifest::read(dir.path(), None, "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`agents` path `../out` leaves"), "{e}");
        std::fs::write(dir.path().join(MANIFEST), "{").unwrap();
        let e = Manifest::read(dir.path(), None, "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not valid JSON"), "{e}");
        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(
            Manifest::read(empty.path(), None, "x"),
            Err(PluginError::NoManifest(_))
        ));
    }
}
