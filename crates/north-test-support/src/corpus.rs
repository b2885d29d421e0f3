//! The adversarial command corpus (`fixtures/command-corpus.txt`) and the
//! scratch layout it runs against, shared by the policy's library tests and
//! the tests that run it through every entry point of the binary.

use std::path::{Path, PathBuf};

/// What must happen to a corpus command under blanket approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// A positive control: it stays in the project and runs.
    Run,
    /// It could reach outside the project or cannot be verified: it never
    /// runs without a person.
    Deny,
}

/// One corpus line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// What must happen.
    pub expect: Expect,
    /// The command line.
    pub command: String,
}

/// Every case of the corpus, in file order.
pub fn cases() -> Vec<Case> {
    let text = String::from_utf8(crate::fixture("command-corpus.txt"))
        .unwrap_or_else(|e| panic!("command corpus is not UTF-8: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (kind, command) = l
                .split_once(' ')
                .unwrap_or_else(|| panic!("corpus line without a command: {l}"));
            let expect = match kind {
                "run" => Expect::Run,
                "deny" => Expect::Deny,
                other => panic!("corpus line kind must be run or deny, not {other}: {l}"),
            };
            Case {
                expect,
                command: command.to_string(),
            }
        })
        .collect()
}

/// Text in the secret files: no output may ever contain it.
pub const OUTSIDE_SECRET: &str = "OUTSIDE-SECRET-7c1f0e";
/// Text in the fake SSH key under the scratch home.
pub const HOME_SECRET: &str = "HOME-SECRET-b93a44";

/// The scratch layout the corpus runs against.
pub struct Layout {
    /// Holds everything; removed on drop.
    pub dir: tempfile::TempDir,
}

impl Layout {
    /// Builds `home/`, `outside/` and `project/` (see the corpus header).
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("scratch dir: {e}"));
        let base = dir.path().to_path_buf();
        let write = |rel: &str, text: &str| {
            let p = base.join(rel);
            std::fs::create_dir_all(p.parent().unwrap_or(&base))
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            std::fs::write(&p, text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        };
        write("home/.ssh/id_rsa", &format!("{HOME_SECRET}\n"));
        write("outside/secret.txt", &format!("{OUTSIDE_SECRET}\n"));
        write("project/README.md", "# Demo\nTODO: call /api\n");
        write("project/src/a.rs", "// TODO a\nfn a() {}\n");
        write("project/src/b.rs", "fn b() {}\n");
        let link = |target: &str, at: &str| {
            std::os::unix::fs::symlink(target, base.join(at))
                .unwrap_or_else(|e| panic!("symlink {at}: {e}"));
        };
        link("../outside/secret.txt", "project/link.txt");
        link("..", "project/up");
        Layout { dir }
    }

    /// The project root (canonical).
    pub fn project(&self) -> PathBuf {
        canonical(&self.dir.path().join("project"))
    }

    /// The scratch home (`HOME` for commands).
    pub fn home(&self) -> PathBuf {
        canonical(&self.dir.path().join("home"))
    }

    /// Whether a command wrote anything outside the project.
    pub fn pwned(&self) -> Vec<PathBuf> {
        let base = self.dir.path();
        [
            "outside/pwned.txt",
            "outside/pwned",
            "project/stolen.txt",
            "project/s2",
        ]
        .iter()
        .map(|p| base.join(p))
        .chain(std::iter::once(PathBuf::from("/tmp/pwned.txt")))
        .filter(|p| p.exists())
        .collect()
    }
}

impl Default for Layout {
    fn default() -> Self {
        Layout::new()
    }
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize()
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Whether `text` holds either secret.
pub fn leaks(text: &str) -> bool {
    text.contains(OUTSIDE_SECRET) || text.contains(HOME_SECRET)
}
