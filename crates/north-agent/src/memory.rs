//! Memory entries and retrieval (runtime-contracts §5, mesh memory format).
//!
//! The memory file is a JSON array of `{id, time, goal, summary}` (plus
//! optional `tags`), shared by `north` and `north mesh`. Ids are the first 12
//! hex characters of sha256(goal + summary), so the same fact has the same
//! id everywhere. Retrieval ranks entries against the current input with
//! BM25 and renders the `=== RETRIEVED_MEMORY ===` block.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::store::{StoreError, write_atomic};

/// One durable memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryEntry {
    /// 12 hex chars of sha256(goal + summary).
    pub id: String,
    /// Unix time (seconds).
    pub time: u64,
    /// What was being done.
    pub goal: String,
    /// What is worth remembering.
    pub summary: String,
    /// Optional tags for retrieval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// This user's mark ([`north_tools::owner`]): set when North remembers
    /// it; an entry without one came from elsewhere (a repository).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

impl MemoryEntry {
    fn signed(&self) -> Vec<u8> {
        format!("{}\0{}\0{}", self.id, self.goal, self.summary).into_bytes()
    }
}

/// The id of a memory: first 12 hex chars of sha256(goal + summary).
pub fn memory_id(goal: &str, summary: &str) -> String {
    let digest = Sha256::digest(format!("{goal}{summary}").as_bytes());
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

impl MemoryEntry {
    /// A new entry stamped now.
    pub fn new(goal: impl Into<String>, summary: impl Into<String>) -> Self {
        let goal = goal.into();
        let summary = summary.into();
        MemoryEntry {
            id: memory_id(&goal, &summary),
            time: crate::store::now_ts() as u64,
            goal,
            summary,
            tags: Vec::new(),
            owner: None,
        }
    }
}

/// A memory file on disk.
#[derive(Debug, Clone)]
pub struct MemoryFile {
    path: PathBuf,
}

impl MemoryFile {
    /// The memory file at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        MemoryFile { path: path.into() }
    }

    /// Project memory: `<root>/.north/memory.json`.
    pub fn project(root: &Path) -> Self {
        Self::new(root.join(".north").join("memory.json"))
    }

    /// Global memory, shared by every project:
    /// `$XDG_DATA_HOME/north/memory.json` (`None` without a home directory).
    pub fn global() -> Option<Self> {
        north_config::data_dir().map(|d| Self::new(d.join("memory.json")))
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// All entries (a missing file is empty).
    pub fn load(&self) -> Result<Vec<MemoryEntry>, StoreError> {
        match fs::read_to_string(&self.path) {
            Ok(text) if text.trim().is_empty() => Ok(Vec::new()),
            Ok(text) => serde_json::from_str(&text).map_err(|e| StoreError::Parse {
                path: self.path.clone(),
                what: "memory file (a JSON array of {id, time, goal, summary})",
                message: e.to_string(),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(StoreError::Io {
                action: "read",
                path: self.path.clone(),
                source: e,
            }),
        }
    }

    /// The directory a mark binds this file's entries to.
    fn scope(&self) -> &Path {
        self.path.parent().unwrap_or(&self.path)
    }

    /// The entries, split into this user's (or unverifiable: no key in
    /// this process) and those from elsewhere (a repository shipped them).
    pub(crate) fn load_by_provenance(
        &self,
    ) -> Result<(Vec<MemoryEntry>, Vec<MemoryEntry>), StoreError> {
        let (own, foreign) = self.load()?.into_iter().partition(|e| {
            north_tools::owner::check(
                north_tools::owner::StateKind::Memory,
                self.scope(),
                &e.signed(),
                e.owner.as_deref(),
            )
            .usable()
        });
        Ok((own, foreign))
    }

    /// Appends an entry (skipping an identical id) and writes atomically
    /// under an exclusive lock, so concurrent runs never lose or corrupt entries.
    pub fn append(&self, mut entry: MemoryEntry) -> Result<(), StoreError> {
        entry.owner = north_tools::owner::mark(
            north_tools::owner::StateKind::Memory,
            self.scope(),
            &entry.signed(),
        );
        self.update(|entries| {
            if !entries.iter().any(|e| e.id == entry.id) {
                entries.push(entry);
            }
        })
    }

    /// Removes the entries whose id starts with `id` (at least 4 characters);
    /// returns how many were removed.
    pub fn remove(&self, id: &str) -> Result<usize, StoreError> {
        if id.len() < 4 {
            return Ok(0);
        }
        let mut removed = 0;
        self.update(|entries| {
            let before = entries.len();
            entries.retain(|e| !e.id.starts_with(id));
            removed = before - entries.len();
        })?;
        Ok(removed)
    }

    /// Loads, changes and writes the entries under the file's exclusive lock.
    fn update(&self, change: impl FnOnce(&mut Vec<MemoryEntry>)) -> Result<(), StoreError> {
        let io_err = |action, source| StoreError::Io {
            action,
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            fs::create_dir_all(dir).map_err(|e| io_err("create directory for", e))?;
        }
        let lock_path = self.path.with_extension("json.lock");
        let lock = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| io_err("lock", e))?;
        lock.lock().map_err(|e| io_err("lock", e))?;
        let mut entries = self.load()?;
        change(&mut entries);
        let text = serde_json::to_string_pretty(&entries).unwrap_or_else(|_| "[]".into());
        let result = write_atomic(&self.path, text.as_bytes()).map_err(|e| io_err("write", e));
        let _ = lock.unlock();
        result
    }

    /// The last `n` entries, oldest first.
    pub fn recent(&self, n: usize) -> Result<Vec<MemoryEntry>, StoreError> {
        let all = self.load()?;
        let skip = all.len().saturating_sub(n);
        Ok(all.into_iter().skip(skip).collect())
    }
}

fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| t.len() > 1)
        .map(str::to_lowercase)
        .collect()
}

/// An entry with its retrieval score.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scored {
    /// The entry.
    pub entry: MemoryEntry,
    /// BM25 score (higher is more relevant).
    pub score: f64,
}

/// Ranks `entries` against `query` with BM25 (k1 = 1.2, b = 0.75); returns
/// at most `k` entries with a positive score, best first.
pub(crate) fn retrieve(entries: &[MemoryEntry], query: &str, k: usize) -> Vec<Scored> {
    let docs: Vec<Vec<String>> = entries
        .iter()
        .map(|e| tokens(&format!("{} {} {}", e.goal, e.summary, e.tags.join(" "))))
        .collect();
    if docs.is_empty() {
        return Vec::new();
    }
    let n = docs.len() as f64;
    let avg = docs.iter().map(Vec::len).sum::<usize>() as f64 / n;
    let mut df: HashMap<&str, f64> = HashMap::new();
    for d in &docs {
        let mut seen: Vec<&str> = d.iter().map(String::as_str).collect();
        seen.sort_unstable();
        seen.dedup();
        for t in seen {
            *df.entry(t).or_default() += 1.0;
        }
    }
    let mut q = tokens(query);
    q.sort_unstable();
    q.dedup();
    let (k1, b) = (1.2, 0.75);
    let mut scored: Vec<Scored> = docs
        .iter()
        .zip(entries)
        .map(|(d, e)| {
            let len = d.len() as f64;
            let score = q
                .iter()
                .map(|t| {
                    let tf = d.iter().filter(|w| *w == t).count() as f64;
                    if tf == 0.0 {
                        return 0.0;
                    }
                    let dfi = df.get(t.as_str()).copied().unwrap_or(0.0);
                    let idf = ((n - dfi + 0.5) / (dfi + 0.5) + 1.0).ln();
                    idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * len / avg.max(1.0)))
                })
                .sum();
            Scored {
                entry: e.clone(),
                score,
            }
        })
        .filter(|s| s.score > 0.0)
        .collect();
    scored.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| b.entry.time.cmp(&a.entry.time))
    });
    scored.truncate(k);
    scored
}

/// The block injected into the system prompt (empty when nothing matched).
pub(crate) fn retrieved_block(items: &[Scored]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let mut out = String::from("=== RETRIEVED_MEMORY ===\n");
    for s in items {
        let excerpt: String = s.entry.summary.chars().take(300).collect();
        out.push_str(&format!(
            "- id={} score={:.3}\n  {}\n",
            s.entry.id,
            s.score,
            excerpt.replace('\n', " ")
        ));
    }
    out.push_str("=== END_RETRIEVED_MEMORY ===");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_12_hex_of_sha256_goal_plus_summary() {
        let id = memory_id("List all Python files", "Found 3");
        assert_eq!(id.len(), 12);
        let full = format!("{:x}", Sha256::digest(b"List all Python filesFound 3"));
        assert_eq!(id, full[..12]);
    }

    #[test]
    fn bm25_prefers_matching_entries() {
        let entries = vec![
            MemoryEntry::new("build", "The project builds with cargo and uses tokio."),
            MemoryEntry::new(
                "tests",
                "Run the tests with cargo nextest; snapshots use insta.",
            ),
            MemoryEntry::new("style", "Prefer small crates."),
        ];
        let hits = retrieve(&entries, "how do I run the snapshot tests?", 5);
        assert_eq!(hits[0].entry.goal, "tests");
        assert!(hits.iter().all(|h| h.entry.goal != "style"));
        let block = retrieved_block(&hits);
        assert!(block.starts_with("=== RETRIEVED_MEMORY ===\n- id="));
        assert!(block.ends_with("=== END_RETRIEVED_MEMORY ==="));
    }

    #[test]
    fn append_dedupes_and_survives_concurrency() {
        let dir = tempfile::tempdir().unwrap();
        let file = MemoryFile::new(dir.path().join("m.json"));
        std::thread::scope(|s| {
            for t in 0..4 {
                let file = file.clone();
                s.spawn(move || {
                    for i in 0..10 {
                        file.append(MemoryEntry::new(format!("g{t}"), format!("s{i}")))
                            .unwrap();
                    }
                });
            }
        });
        file.append(MemoryEntry::new("g0", "s0")).unwrap();
        assert_eq!(file.load().unwrap().len(), 40);
        assert_eq!(file.recent(5).unwrap().len(), 5);
    }
}
