//! `north acp` driven by the protocol crate's own client side, the way an
//! editor drives it: a full prompt turn on the scripted model (streamed
//! text, a search tool call and its update, an edit shown as a diff and
//! applied only after the editor allows it, a rejected command), cancel
//! mid-turn, and `session/load` of the saved session.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::acp_client;
use acp_client::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_turn_streams_asks_before_editing_and_loads_later() {
    let p = project();
    let turns = json!([
        {"text": "Looking for it.", "tool_calls": [{"id": "s1", "name": "search_text", "args": {"pattern": "one"}}]},
        {"tool_calls": [{"id": "e1", "name": "edit_replace_exact", "args": {"path": "a.txt", "old": "one\n", "new": "two\n"}}]},
        {"tool_calls": [{"id": "c1", "name": "shell_run", "args": {"command": "touch ran.txt"}}]},
        {"text": "ALL-DONE"}
    ]);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let root = p.root.clone();
    let (stop, session_id) = client(
        agent(&p, turns),
        &p.root,
        Answer::AcceptEditsRejectCommands,
        seen.clone(),
        async move |cx| {
            let session = cx
                .send_request(NewSessionRequest::new(root))
                .block_task()
                .await?;
            let modes = session.modes.expect("session modes are offered");
            assert_eq!(modes.current_mode_id.to_string(), "ask");
            assert_eq!(modes.available_modes.len(), 4);
            let done = cx
                .send_request(PromptRequest::new(
                    session.session_id.clone(),
                    text("change one to two"),
                ))
                .block_task()
                .await?;
            Ok((done.stop_reason, session.session_id.to_string()))
        },
    )
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    {
        let s = seen.lock().unwrap();
        let said = agent_text(&s.updates);
        assert!(
            said.contains("Looking for it.") && said.contains("ALL-DONE"),
            "{said}"
        );
        // The search: a tool call of kind search, then its completed update.
        assert!(s.updates.iter().any(|u| matches!(u,
            SessionUpdate::ToolCall(c) if c.tool_call_id.to_string() == "s1" && c.kind == ToolKind::Search)));
        assert!(s.updates.iter().any(|u| matches!(u,
            SessionUpdate::ToolCallUpdate(c) if c.tool_call_id.to_string() == "s1" && c.fields.status.is_some())));
        // The edit was shown as a diff and nothing was written before "accept".
        assert_eq!(s.permissions.len(), 2, "the edit and the command asked");
        let diff = s.permissions[0]
            .tool_call
            .fields
            .content
            .as_ref()
            .and_then(|c| c.first().cloned());
        let Some(ToolCallContent::Diff(diff)) = diff else {
            panic!("the edit comes as a diff: {:?}", s.permissions[0]);
        };
        assert_eq!(diff.new_text, "two\n");
        assert_eq!(diff.old_text.as_deref(), Some("one\n"));
        assert_eq!(s.file_when_asked[0], "one\n");
        assert_eq!(
            std::fs::read_to_string(p.root.join("a.txt")).unwrap(),
            "two\n"
        );
        // The command was rejected in the editor: it did not run.
        assert_eq!(
            s.permissions[1].tool_call.fields.kind,
            Some(ToolKind::Execute)
        );
        assert!(!p.root.join("ran.txt").exists());
    }

    // A later connection loads the saved session: its history is replayed.
    let seen = Arc::new(Mutex::new(Seen::default()));
    let root = p.root.clone();
    let id = session_id.clone();
    client(
        agent(&p, json!([{"text": "RESUMED"}])),
        &p.root,
        Answer::AcceptEditsRejectCommands,
        seen.clone(),
        async move |cx| {
            cx.send_request(LoadSessionRequest::new(id.clone(), root))
                .block_task()
                .await?;
            let done = cx
                .send_request(PromptRequest::new(id, text("and now?")))
                .block_task()
                .await?;
            assert_eq!(done.stop_reason, StopReason::EndTurn);
            Ok(())
        },
    )
    .await;
    let s = seen.lock().unwrap();
    assert!(s.updates.iter().any(|u| matches!(u,
        SessionUpdate::UserMessageChunk(c) if matches!(&c.content, ContentBlock::Text(t) if t.text.contains("change one to two")))),
        "the saved prompt is replayed");
    assert!(
        agent_text(&s.updates).contains("ALL-DONE"),
        "the saved answer is replayed"
    );
    assert!(agent_text(&s.updates).contains("RESUMED"));
}

/// Every tool of the assistant is filed by the editor under the kind the
/// tool itself declares — live, and again when the session is loaded.
#[allow(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, read top to bottom"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_north_tool_is_filed_under_its_own_kind() {
    let p = project();
    std::fs::write(p.root.join("README.md"), "# Demo\n").unwrap();
    let calls = [
        ("k1", "list_root", json!({}), ToolKind::Read),
        ("k2", "read_readme", json!({}), ToolKind::Read),
        ("k3", "read_file", json!({"path": "a.txt"}), ToolKind::Read),
        (
            "k4",
            "find_files",
            json!({"pattern": "*.txt"}),
            ToolKind::Search,
        ),
        (
            "k5",
            "search_text",
            json!({"pattern": "one"}),
            ToolKind::Search,
        ),
        ("k6", "hotfiles", json!({}), ToolKind::Search),
        ("k7", "detect_languages", json!({}), ToolKind::Search),
        (
            "k8",
            "edit_create_file",
            json!({"path": "b.txt", "content": "b\n"}),
            ToolKind::Edit,
        ),
        (
            "k9",
            "edit_replace_exact",
            json!({"path": "a.txt", "old": "one\n", "new": "two\n"}),
            ToolKind::Edit,
        ),
        (
            "k10",
            "edit_insert_at_line",
            json!({"path": "a.txt", "line": 1, "text": "zero\n"}),
            ToolKind::Edit,
        ),
        (
            "k11",
            "edit_apply_batch",
            json!({"edits": [{"toolName": "edit_create_file", "args": {"path": "c.txt", "content": "c\n"}}]}),
            ToolKind::Edit,
        ),
        (
            "k12",
            "shell_run",
            json!({"command": "touch ran.txt"}),
            ToolKind::Execute,
        ),
    ];
    let mut turns: Vec<Value> = calls
        .iter()
        .map(|(id, name, args, _)| json!({"tool_calls": [{"id": id, "name": name, "args": args}]}))
        .collect();
    turns.push(json!({"text": "KINDS-DONE"}));
    let kinds = |updates: &[SessionUpdate]| -> std::collections::HashMap<String, ToolKind> {
        updates
            .iter()
            .filter_map(|u| match u {
                SessionUpdate::ToolCall(c) => Some((c.tool_call_id.to_string(), c.kind)),
                _ => None,
            })
            .collect()
    };
    let seen = Arc::new(Mutex::new(Seen::default()));
    let root = p.root.clone();
    let id = client(
        agent(&p, Value::Array(turns)),
        &p.root,
        Answer::AcceptEditsRejectCommands,
        seen.clone(),
        async move |cx| {
            let session = cx
                .send_request(NewSessionRequest::new(root))
                .block_task()
                .await?;
            cx.send_request(PromptRequest::new(
                session.session_id.clone(),
                text("use every tool"),
            ))
            .block_task()
            .await?;
            Ok(session.session_id.to_string())
        },
    )
    .await;
    let live = kinds(&seen.lock().unwrap().updates);
    for (call, name, _, kind) in &calls {
        assert_eq!(
            live.get(*call),
            Some(kind),
            "{name} filed live as {:?}",
            live.get(*call)
        );
    }

    let seen = Arc::new(Mutex::new(Seen::default()));
    let root = p.root.clone();
    client(
        agent(&p, json!([{"text": "LOADED"}])),
        &p.root,
        Answer::AcceptEditsRejectCommands,
        seen.clone(),
        async move |cx| {
            cx.send_request(LoadSessionRequest::new(id, root))
                .block_task()
                .await?;
            Ok(())
        },
    )
    .await;
    let replayed = kinds(&seen.lock().unwrap().updates);
    for (call, name, _, kind) in &calls {
        assert_eq!(
            replayed.get(*call),
            Some(kind),
            "{name} filed on load as {:?}",
            replayed.get(*call)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_turn_ends_it_without_running_the_command() {
    let p = project();
    let turns = json!([
        {"tool_calls": [{"id": "c1", "name": "shell_run", "args": {"command": "touch ran.txt"}}]},
        {"text": "NEVER-SENT"}
    ]);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let root = p.root.clone();
    let stop = client(
        agent(&p, turns),
        &p.root,
        Answer::Cancel,
        seen.clone(),
        async move |cx| {
            let session = cx
                .send_request(NewSessionRequest::new(root))
                .block_task()
                .await?;
            let done = cx
                .send_request(PromptRequest::new(session.session_id, text("run it")))
                .block_task()
                .await?;
            Ok(done.stop_reason)
        },
    )
    .await;
    assert_eq!(stop, StopReason::Cancelled);
    assert!(!p.root.join("ran.txt").exists());
    assert!(!agent_text(&seen.lock().unwrap().updates).contains("NEVER-SENT"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_with_buffers_gets_accepted_edits_through_fs_write_text_file() {
    let p = project();
    let turns = json!([
        {"tool_calls": [{"id": "e1", "name": "edit_replace_exact", "args": {"path": "a.txt", "old": "one\n", "new": "two\n"}}]},
        {"text": "BUFFER-DONE"}
    ]);
    let seen = Arc::new(Mutex::new(Seen::default()));
    let root = p.root.clone();
    let stop = client(
        agent(&p, turns),
        &p.root,
        Answer::AcceptIntoBuffers,
        seen.clone(),
        async move |cx| {
            let session = cx
                .send_request(NewSessionRequest::new(root))
                .block_task()
                .await?;
            let done = cx
                .send_request(PromptRequest::new(session.session_id, text("edit it")))
                .block_task()
                .await?;
            Ok(done.stop_reason)
        },
    )
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let s = seen.lock().unwrap();
    assert_eq!(
        s.editor_writes,
        [(p.root.join("a.txt"), "two\n".to_string())]
    );
    // North did not write the disk behind the editor's back.
    assert_eq!(
        std::fs::read_to_string(p.root.join("a.txt")).unwrap(),
        "one\n"
    );
}
