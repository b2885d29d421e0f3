//! Shared fixtures for the north-tools integration tests (part A).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use north_protocol::ToolOutcome;
use north_tools::edit::{Applied, ApplyError, Proposal};
use north_tools::{Registry, ToolContext, all_tools};
use serde_json::Value;

/// A temporary project with every tool available.
pub struct Project {
    pub dir: tempfile::TempDir,
    pub ctx: ToolContext,
    pub tools: Registry,
}

impl Project {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        Project {
            ctx: ToolContext::new(root),
            dir,
            tools: all_tools(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.ctx.root
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.ctx.root.join(rel)
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> &Self {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, content).unwrap();
        self
    }

    pub fn mkdir(&self, rel: &str) -> &Self {
        std::fs::create_dir_all(self.path(rel)).unwrap();
        self
    }

    pub fn symlink(&self, target: impl AsRef<Path>, link: &str) -> &Self {
        let p = self.path(link);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::os::unix::fs::symlink(target, p).unwrap();
        self
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    pub fn call(&self, name: &str, args: Value) -> ToolOutcome {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(self.tools.call(name, args, &self.ctx))
    }

    /// Calls and asserts success, returning the output.
    pub fn ok(&self, name: &str, args: Value) -> Value {
        let out = self.call(name, args);
        assert!(out.ok, "{name} failed: {:?}", out.error);
        out.output
    }

    /// Calls and asserts failure, returning the error message.
    pub fn fail(&self, name: &str, args: Value) -> String {
        let out = self.call(name, args);
        assert!(!out.ok, "{name} unexpectedly succeeded: {}", out.output);
        out.error.unwrap()
    }

    pub fn propose(&self, name: &str, args: Value) -> Result<Proposal, ToolOutcome> {
        self.tools.propose(name, args, &self.ctx)
    }

    pub fn apply(&self, proposal: &Proposal) -> Result<Applied, ApplyError> {
        north_tools::edit::apply(proposal, &self.ctx.sandbox().unwrap())
    }

    /// Proposes and applies, asserting both succeed.
    pub fn propose_apply(&self, name: &str, args: Value) -> Applied {
        let p = self
            .propose(name, args)
            .unwrap_or_else(|o| panic!("{:?}", o.error));
        self.apply(&p).unwrap()
    }

    /// Every file under the root except `.north/`, sorted, for "nothing changed" checks.
    pub fn snapshot_tree(&self) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        walk(self.root(), self.root(), &mut out);
        out.sort();
        out
    }
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if rel == ".north" {
            continue;
        }
        let ft = entry.file_type().unwrap();
        if ft.is_symlink() {
            out.push((
                rel,
                std::fs::read_link(&p)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
                    .into_bytes(),
            ));
        } else if ft.is_dir() {
            out.push((format!("{rel}/"), Vec::new()));
            walk(root, &p, out);
        } else {
            out.push((rel, std::fs::read(&p).unwrap()));
        }
    }
}

/// The paths of a listing or search result (strings or `{path}` objects).
pub fn paths(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| {
            e.as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| e["path"].as_str().unwrap().to_owned())
        })
        .collect()
}

/// Two small source files, the fixture of the batch and apply tests.
pub fn batch_fixture() -> Project {
    let p = Project::new();
    p.write("src/a.rs", "fn a() {}\n")
        .write("src/b.rs", "fn b() {}\n");
    p
}
