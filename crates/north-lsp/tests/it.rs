//! The client against a real language server (pyright, from the interop
//! packages `.ci/run` installs).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use north_lsp::{Diagnosed, ServerDef, Servers, Severity};

fn pyright() -> Option<PathBuf> {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/interop/lsp/node_modules/.bin/pyright-langserver");
    if bin.exists() {
        Some(bin)
    } else {
        north_test_support::missing("pyright (tests/interop/lsp: npm ci)");
        None
    }
}

fn servers(root: &std::path::Path, bin: &std::path::Path) -> Servers {
    Servers::new(
        root.to_path_buf(),
        vec![ServerDef {
            language: "python".into(),
            command: vec![bin.display().to_string(), "--stdio".into()],
            extensions: vec!["py".into()],
            timeout: None,
        }],
        north_sandbox::Spawner::unconfined(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proposed_text_is_checked_unsaved_and_definitions_resolve() {
    let Some(bin) = pyright() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(
        root.join("lib.py"),
        "def greet(name: str) -> str:\n    return 'hi ' + name\n",
    )
    .unwrap();
    std::fs::write(
        root.join("main.py"),
        "from lib import greet\n\nprint(greet('x'))\n",
    )
    .unwrap();
    let s = servers(&root, &bin);
    // The file as it is: clean.
    let clean = s.file_diagnostics("main.py").await;
    assert!(
        matches!(&clean, Diagnosed::Found { items, .. } if items.is_empty()),
        "{clean:?}"
    );
    // A proposal with a type error: found, and nothing written.
    let broken = "from lib import greet\n\ncount: int = greet('x')\n";
    let found = s.diagnose("main.py", broken).await;
    let Diagnosed::Found { items, .. } = &found else {
        panic!("{found:?}")
    };
    assert!(
        items
            .iter()
            .any(|d| d.severity == Severity::Error && d.line == 3),
        "{items:?}"
    );
    assert!(
        std::fs::read_to_string(root.join("main.py"))
            .unwrap()
            .contains("print")
    );
    // Definition of `greet` in main.py (line 3 of the file on disk).
    let defs = s.definition("main.py", 3, 8).await.unwrap();
    assert!(
        defs.iter().any(|l| l.path == "lib.py" && l.line == 1),
        "{defs:?}"
    );
    let refs = s.references("lib.py", 1, 5).await.unwrap();
    assert!(refs.iter().any(|l| l.path == "main.py"), "{refs:?}");
    s.shutdown().await;
}

/// The fake server in `mode` (and its arguments) for `.fk` files.
fn fake(root: &std::path::Path, mode: &[&str], secs: u64) -> Option<Servers> {
    let bin = north_test_support::support_bin("north-fake-lsp")?;
    let mut command = vec![bin.display().to_string()];
    command.extend(mode.iter().map(|a| (*a).to_string()));
    Some(Servers::new(
        root.to_path_buf(),
        vec![ServerDef {
            language: "fake".into(),
            command,
            extensions: vec!["fk".into()],
            timeout: Some(std::time::Duration::from_secs(secs)),
        }],
        north_sandbox::Spawner::unconfined(),
    ))
}

/// A server that dies while it checks a proposal (pyright was seen to on
/// a loaded machine) is started again and asked once more: the review
/// keeps its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stops_while_checking_is_started_again_and_asked_once_more() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("crashed-once");
    let marker_arg = marker.display().to_string();
    let Some(s) = fake(dir.path(), &["crash-once", &marker_arg], 5) else {
        return;
    };
    let said = s.diagnose("a.fk", "text").await;
    assert!(marker.exists(), "the first server did not crash");
    let Diagnosed::Found { server, items } = &said else {
        panic!("{said:?}")
    };
    assert_eq!(server, "fake");
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0].message, "checked after a restart");
    s.shutdown().await;
}

/// The same for the code tools: a server that stops while it finds a
/// symbol's uses is started again and asked once more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stops_while_answering_a_code_tool_is_asked_once_more() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("crashed-once");
    std::fs::write(dir.path().join("a.fk"), "text\n").unwrap();
    let marker_arg = marker.display().to_string();
    let Some(s) = fake(dir.path(), &["crash-once", &marker_arg], 5) else {
        return;
    };
    let found = s.references("a.fk", 1, 1).await.unwrap();
    assert!(marker.exists(), "the first server did not crash");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].path, "a.fk");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_hangs_crashes_or_floods_never_holds_north_up() {
    let dir = tempfile::tempdir().unwrap();
    // Hangs at initialize: no answer, in bounded time, and why.
    let Some(s) = fake(dir.path(), &["hang"], 1) else {
        return;
    };
    let said = s.diagnose("a.fk", "text").await;
    let Diagnosed::NoAnswer { server, reason } = &said else {
        panic!("{said:?}")
    };
    assert_eq!(server, "fake");
    assert!(reason.contains("no answer to initialize"), "{reason}");
    s.shutdown().await;
    // Crashes when a document opens: no answer, and it is not started
    // again without end.
    let Some(s) = fake(dir.path(), &["crash"], 2) else {
        return;
    };
    for _ in 0..5 {
        let said = s.diagnose("a.fk", "text").await;
        assert!(matches!(said, Diagnosed::NoAnswer { .. }), "{said:?}");
    }
    let Diagnosed::NoAnswer { reason, .. } = s.diagnose("a.fk", "text").await else {
        panic!()
    };
    assert!(reason.contains("not started again"), "{reason}");
    // Floods: the last word counts, the count is bounded.
    let Some(s) = fake(dir.path(), &["flood"], 5) else {
        return;
    };
    let said = s.diagnose("a.fk", "text").await;
    let Diagnosed::Found { items, .. } = &said else {
        panic!("{said:?}")
    };
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0].message, "flooded");
    s.shutdown().await;
    // A message past the limit: the server is given up, not believed.
    let Some(s) = fake(dir.path(), &["huge"], 2) else {
        return;
    };
    let said = s.diagnose("a.fk", "text").await;
    let Diagnosed::NoAnswer { reason, .. } = &said else {
        panic!("{said:?}")
    };
    assert!(
        reason.contains("stopped") || reason.contains("limit"),
        "{reason}"
    );
}
