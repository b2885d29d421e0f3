//! Section paths, visibility, and the two override stores: body overrides
//! keyed by `(ns, key)` and section path, and visibility overrides a session
//! holds for progressive disclosure.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The keys from a root section down to a section, shown in dot notation.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SectionPath(Vec<String>);

impl SectionPath {
    /// A path from its keys, root first.
    pub fn new<I, S>(keys: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        SectionPath(keys.into_iter().map(Into::into).collect())
    }

    /// The keys, root first.
    pub fn keys(&self) -> &[String] {
        &self.0
    }

    /// Number of keys (1 for a root section).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the path has no keys.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// This path with `key` appended.
    pub fn child(&self, key: impl Into<String>) -> Self {
        let mut keys = self.0.clone();
        keys.push(key.into());
        SectionPath(keys)
    }

    /// The path without its last key (None for a root or empty path).
    pub fn parent(&self) -> Option<SectionPath> {
        match self.0.split_last() {
            Some((_, rest)) if !rest.is_empty() => Some(SectionPath(rest.to_vec())),
            _ => None,
        }
    }

    /// The dot-notation form used by the disclosure tools (`context.detail`).
    pub fn dotted(&self) -> String {
        self.0.join(".")
    }

    pub(crate) fn from_refs(keys: &[&str]) -> Self {
        SectionPath(keys.iter().map(|k| (*k).to_owned()).collect())
    }

    pub(crate) fn matches_refs(&self, keys: &[&str]) -> bool {
        self.0.len() == keys.len() && self.0.iter().zip(keys).all(|(a, b)| a == b)
    }
}

impl fmt::Display for SectionPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, key) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            f.write_str(key)?;
        }
        Ok(())
    }
}

impl<S: Into<String>> FromIterator<S> for SectionPath {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        SectionPath::new(iter)
    }
}

impl From<&str> for SectionPath {
    /// A path from dot notation, split on every `.`; keys that contain dots
    /// need [`SectionPath::new`].
    fn from(dotted: &str) -> Self {
        SectionPath::new(dotted.split('.'))
    }
}

impl<const N: usize> From<[&str; N]> for SectionPath {
    fn from(keys: [&str; N]) -> Self {
        SectionPath::new(keys)
    }
}

/// Whether a section renders in full or as its summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SectionVisibility {
    /// The whole section, children included.
    #[default]
    Full,
    /// The summary text and a pointer to the disclosure tool.
    Summary,
}

/// Visibility chosen at run time, per section path; it wins over a section's
/// own visibility. A session keeps one and applies expansion requests to it
/// (the spec's `session[VisibilityOverrides]`).
///
/// It serializes as a list of `{"path": [...], "visibility": "full"}`
/// entries, so a session can persist it as JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "Vec<VisibilityEntry>", from = "Vec<VisibilityEntry>")]
pub struct VisibilityOverrides {
    overrides: BTreeMap<SectionPath, SectionVisibility>,
}

/// The persisted form of one visibility override.
#[derive(Serialize, Deserialize)]
struct VisibilityEntry {
    path: SectionPath,
    visibility: SectionVisibility,
}

impl From<VisibilityOverrides> for Vec<VisibilityEntry> {
    fn from(store: VisibilityOverrides) -> Self {
        store
            .overrides
            .into_iter()
            .map(|(path, visibility)| VisibilityEntry { path, visibility })
            .collect()
    }
}

impl From<Vec<VisibilityEntry>> for VisibilityOverrides {
    fn from(entries: Vec<VisibilityEntry>) -> Self {
        VisibilityOverrides {
            overrides: entries
                .into_iter()
                .map(|e| (e.path, e.visibility))
                .collect(),
        }
    }
}

impl VisibilityOverrides {
    /// An empty store.
    pub fn new() -> Self {
        VisibilityOverrides::default()
    }

    /// Sets the visibility of the section at `path`.
    pub fn set(&mut self, path: impl Into<SectionPath>, visibility: SectionVisibility) {
        self.overrides.insert(path.into(), visibility);
    }

    /// Forgets the override of `path`, returning it.
    pub fn remove(&mut self, path: &SectionPath) -> Option<SectionVisibility> {
        self.overrides.remove(path)
    }

    /// The override of `path`, if any.
    pub fn get(&self, path: &SectionPath) -> Option<SectionVisibility> {
        self.overrides.get(path).copied()
    }

    /// Applies every override an `open_sections` call asked for.
    pub fn apply(&mut self, request: &VisibilityExpansionRequired) {
        for (path, visibility) in &request.requested_overrides {
            self.overrides.insert(path.clone(), *visibility);
        }
    }

    /// Whether no override is set.
    pub fn is_empty(&self) -> bool {
        self.overrides.is_empty()
    }

    /// All overrides in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&SectionPath, SectionVisibility)> {
        self.overrides.iter().map(|(p, v)| (p, *v))
    }

    pub(crate) fn get_refs(&self, keys: &[&str]) -> Option<SectionVisibility> {
        if self.overrides.is_empty() {
            return None;
        }
        self.overrides
            .iter()
            .find(|(p, _)| p.matches_refs(keys))
            .map(|(_, v)| *v)
    }
}

/// One body override: the template that replaces a section's own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionOverride {
    /// Namespace of the prompt.
    pub ns: String,
    /// Key of the prompt.
    pub key: String,
    /// Path of the section inside the prompt.
    pub path: SectionPath,
    /// The replacement template (dedented and stripped like the original;
    /// its placeholders name fields of the section's params).
    pub template: String,
}

/// Section body overrides for any number of prompts, keyed by `(ns, key)`
/// and section path. Sections with `accepts_overrides == false` ignore them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptOverrides {
    entries: BTreeMap<(String, String), BTreeMap<SectionPath, String>>,
}

impl PromptOverrides {
    /// An empty store.
    pub fn new() -> Self {
        PromptOverrides::default()
    }

    /// Replaces the body template of the section at `path` in prompt
    /// `(ns, key)`.
    pub fn set(
        &mut self,
        ns: impl Into<String>,
        key: impl Into<String>,
        path: impl Into<SectionPath>,
        template: impl Into<String>,
    ) -> &mut Self {
        self.entries
            .entry((ns.into(), key.into()))
            .or_default()
            .insert(path.into(), template.into());
        self
    }

    /// Removes one override, returning its template.
    pub fn remove(&mut self, ns: &str, key: &str, path: &SectionPath) -> Option<String> {
        let id = (ns.to_owned(), key.to_owned());
        let sections = self.entries.get_mut(&id)?;
        let removed = sections.remove(path);
        if sections.is_empty() {
            self.entries.remove(&id);
        }
        removed
    }

    /// The override template of one section, if any.
    pub fn get(&self, ns: &str, key: &str, path: &SectionPath) -> Option<&str> {
        self.entries
            .get(&(ns.to_owned(), key.to_owned()))?
            .get(path)
            .map(String::as_str)
    }

    /// Whether the store holds no override.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every override, ordered by `(ns, key, path)` (a stable form to
    /// persist; [`PromptOverrides::from_entries`] reads it back).
    pub fn entries(&self) -> Vec<SectionOverride> {
        self.entries
            .iter()
            .flat_map(|((ns, key), sections)| {
                sections
                    .iter()
                    .map(move |(path, template)| SectionOverride {
                        ns: ns.clone(),
                        key: key.clone(),
                        path: path.clone(),
                        template: template.clone(),
                    })
            })
            .collect()
    }

    /// A store from persisted entries; later entries win.
    pub fn from_entries(entries: impl IntoIterator<Item = SectionOverride>) -> Self {
        let mut store = PromptOverrides::new();
        for e in entries {
            store.set(e.ns, e.key, e.path, e.template);
        }
        store
    }

    pub(crate) fn for_prompt(&self, ns: &str, key: &str) -> Option<&BTreeMap<SectionPath, String>> {
        if self.entries.is_empty() {
            return None;
        }
        self.entries
            .iter()
            .find(|((n, k), _)| n == ns && k == key)
            .map(|(_, sections)| sections)
    }
}

/// The request `open_sections` raises: the visibility overrides to apply
/// before rendering again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("sections {} must be expanded before continuing: {reason}", .section_keys.join(", "))]
pub struct VisibilityExpansionRequired {
    /// Path → visibility to set (the requested sections and any summarized
    /// ancestors, all `FULL`).
    pub requested_overrides: BTreeMap<SectionPath, SectionVisibility>,
    /// The model's reason.
    pub reason: String,
    /// The keys as the model gave them.
    pub section_keys: Vec<String>,
}
