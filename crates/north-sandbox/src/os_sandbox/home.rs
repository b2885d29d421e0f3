//! The home directory by allow-list: a sandboxed child sees an empty home
//! but for the toolchains and package caches a build needs
//! ([`HOME_READABLE`](super::HOME_READABLE)), the directories on `PATH`
//! and the toolchain variables that live there, and the user's own
//! additions (`sandbox.allow_read`). Everything else — other agents'
//! credentials, shell histories, tool configs with tokens — is simply not
//! there. The user's git identity comes from a copy of their git config
//! that keeps only `user`, `init` and `safe` entries, so a token in an
//! `insteadOf` URL or an `extraheader` never reaches a command.

use std::path::{Path, PathBuf};

/// Variables naming toolchain directories a build reads.
const TOOL_VARIABLES: &[&str] = &[
    "CARGO_HOME",
    "RUSTUP_HOME",
    "GOPATH",
    "GOROOT",
    "NVM_DIR",
    "PYENV_ROOT",
    "VIRTUAL_ENV",
    "JAVA_HOME",
];

/// Git config sections a command's git may see.
const GIT_SECTIONS: &[&str] = &["user", "init", "safe"];

/// The home directory and what stays readable in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Home {
    /// `$HOME`.
    pub dir: PathBuf,
    /// What is bound back (those that exist).
    pub readable: Vec<PathBuf>,
}

impl Home {
    /// From this process's environment, with `extra` (absolute paths)
    /// added; `None` when there is no home to cover (none set, `/`).
    pub fn from_env(extra: &[PathBuf]) -> Option<Home> {
        // Physical, as the project root is: a home reached through a link
        // (`/home` → `/usr/home`) must not cover a project it holds.
        let dir = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute() && h.parent().is_some() && h.is_dir())?
            .canonicalize()
            .ok()?;
        let mut readable: Vec<PathBuf> = super::HOME_READABLE
            .iter()
            .map(|rel| dir.join(rel))
            .collect();
        readable.extend(extra.iter().cloned());
        if let Some(path) = std::env::var_os("PATH") {
            readable.extend(std::env::split_paths(&path));
        }
        readable.extend(
            TOOL_VARIABLES
                .iter()
                .filter_map(std::env::var_os)
                .map(PathBuf::from),
        );
        // A path given through a linked home is judged by where it is; one
        // that climbs (`~/x/../../etc`) by where its words lead.
        let readable: Vec<PathBuf> = readable
            .into_iter()
            .filter(|p| p.is_absolute())
            .filter(|p| !p.components().any(|c| c == std::path::Component::ParentDir))
            .filter_map(|p| {
                if p.starts_with(&dir) {
                    Some(p)
                } else {
                    p.canonicalize().ok().filter(|c| c.starts_with(&dir))
                }
            })
            .collect();
        let mut readable = readable;
        readable.retain(|p| p != &dir && p.symlink_metadata().is_ok());
        readable.sort();
        readable.dedup();
        Some(Home { dir, readable })
    }

    /// Covers the home directory, binding back what is readable and each
    /// of `keep` under it (the project, writable directories); writes the
    /// credential-free git identity. Returns what is readable. Does nothing
    /// when the home directory is the project or inside it.
    pub(super) fn cover(&self, keep: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
        if keep.first().is_some_and(|root| self.dir.starts_with(root)) {
            return Ok(Vec::new());
        }
        // Under a private temp dir that kept nothing of it, the home
        // directory is gone already.
        if !self.dir.is_dir() {
            return Ok(Vec::new());
        }
        let identity = git_identity(&self.dir);
        let mut all: Vec<PathBuf> = keep.to_vec();
        all.extend(self.readable.iter().cloned());
        // The cover is read-only for the command anyway (Landlock): it may
        // write only the root, the temp dir and the writable paths.
        super::mounts::cover(&self.dir, &all, c"mode=0755", 0)?;
        if let Some(text) = identity {
            let path = self.dir.join(".gitconfig");
            if std::fs::symlink_metadata(&path).is_err() {
                std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            }
        }
        Ok(self.readable.clone())
    }
}

/// The user's git config files, reduced to [`GIT_SECTIONS`]; `None` when
/// none has any.
fn git_identity(home: &Path) -> Option<String> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".config"));
    let mut out = String::new();
    for file in [xdg.join("git/config"), home.join(".gitconfig")] {
        if let Ok(text) = std::fs::read_to_string(&file) {
            out.push_str(&keep_sections(&text));
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The `[user]`, `[init]` and `[safe]` sections of a git config text (no
/// subsections, no includes: what they would pull in is not vetted).
pub(super) fn keep_sections(text: &str) -> String {
    let mut out = String::new();
    let mut keeping = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(header) = trimmed.strip_prefix('[') {
            let name = header
                .split([']', ' ', '"'])
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            keeping = GIT_SECTIONS.contains(&name.as_str()) && !header.contains('"');
            if keeping {
                out.push_str(&format!("[{name}]\n"));
            }
            // A value on the header line (`[user] name = x`) is rare; it
            // is dropped rather than parsed.
            continue;
        }
        if keeping && !trimmed.is_empty() && !trimmed.starts_with(['#', ';']) {
            out.push('\t');
            out.push_str(trimmed);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_identity_sections_are_kept() {
        let text = "[user]\n\tname = Ada\n\temail = ada@example.org\n\
                    [url \"https://tok3n@forge.example/\"]\n\tinsteadOf = https://forge.example/\n\
                    [http]\n\textraheader = AUTHORIZATION: bearer s3cret\n\
                    [include]\n\tpath = ~/.secret\n[safe]\n\tdirectory = *\n";
        let kept = keep_sections(text);
        assert!(kept.contains("name = Ada"), "{kept}");
        assert!(kept.contains("directory = *"), "{kept}");
        for secret in ["tok3n", "s3cret", ".secret", "insteadOf", "extraheader"] {
            assert!(!kept.contains(secret), "{kept}");
        }
    }
}
