//! Several clients on one served session: events to all, the first answer
//! wins, a session outlives its clients, a client that stops reading.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn two_clients_share_a_session_and_the_first_answer_wins() {
    let sb = Sandbox::new();
    let root = project(&sb);
    let turns = json!([
        {"text": "EDIT-ONE", "tool_calls": [{"id": "e1", "name": "edit_replace_exact", "args": {"path": "a.txt", "old": "one\n", "new": "two\n"}}]},
        {"text": "DONE-ONE"},
        {"text": "EDIT-TWO", "tool_calls": [{"id": "e2", "name": "edit_replace_exact", "args": {"path": "a.txt", "old": "two\n", "new": "three\n"}}]},
        {"text": "DONE-TWO"}
    ]);
    let server = serve(&sb, &turns, &[]);
    let mut a = Raw::connect(&server.socket, Some(&server.token));
    let mut b = Raw::connect(&server.socket, Some(&server.token));
    a.initialize(false);
    b.initialize(false);
    let session =
        a.call("session/new", json!({"cwd": root, "mcpServers": []}))["sessionId"].clone();
    let attached = b.call("_north/session/attach", json!({"sessionId": session}));
    assert_eq!(attached["mode"], "ask");

    // A prompts; B sees the prompt, both see the question and the answer.
    let prompt = a.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "change one to two"}]}),
    );
    let echoed = b.until("the prompt", |v| is_update(v, "user_message_chunk"));
    assert_eq!(
        echoed["params"]["update"]["content"]["text"],
        "change one to two"
    );
    let qa = a.until("A's question", |v| {
        is_method(v, "session/request_permission")
    });
    let qb = b.until("B's question", |v| {
        is_method(v, "session/request_permission")
    });
    assert_eq!(qa["params"], qb["params"], "both are asked the same");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "one\n"
    );
    a.respond(&qa["id"], selected("accept"));
    let answered = b.until("the answer", |v| is_method(v, "_north/permission_answered"));
    assert_eq!(answered["params"]["optionId"], "accept");
    // B's answer comes second: refused as already answered.
    b.respond(&qb["id"], selected("reject"));
    let refused = b.until("the refusal", |v| is_method(v, "_north/permission_refused"));
    assert!(
        refused["params"]["reason"]
            .as_str()
            .unwrap()
            .contains("already answered"),
        "{refused}"
    );
    let done = a.until("the prompt's answer", |v| {
        v["id"] == prompt && v.get("method").is_none()
    });
    assert_eq!(done["result"]["stopReason"], "end_turn");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "two\n"
    );
    b.until_text("DONE-ONE");
    assert!(streamed(&a.seen).contains("EDIT-ONE") && streamed(&a.seen).contains("DONE-ONE"));
    assert!(streamed(&b.seen).contains("EDIT-ONE"));

    // B prompts and leaves while the turn waits for an answer: the session
    // goes on, A answers and sees the turn finish.
    b.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "and now three"}]}),
    );
    let qa = a.until("A's second question", |v| {
        is_method(v, "session/request_permission")
    });
    b.until("B's second question", |v| {
        is_method(v, "session/request_permission")
    });
    drop(b);
    a.respond(&qa["id"], selected("accept"));
    a.until_text("DONE-TWO");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "three\n"
    );
    let list = a.call("_north/session/list", json!({}));
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(list["sessions"][0]["sessionId"], session);
    assert_eq!(list["sessions"][0]["clients"], 1, "{list}");
}

#[test]
fn a_session_outlives_its_clients_and_can_be_renamed_forked_exported_and_closed() {
    let sb = Sandbox::new();
    let root = project(&sb);
    let server = serve(
        &sb,
        &json!([{"text": "FIRST-ANSWER"}, {"text": "FORK-ANSWER"}]),
        &[],
    );
    let session = {
        let mut a = Raw::connect(&server.socket, Some(&server.token));
        a.initialize(false);
        let s = a.call("session/new", json!({"cwd": root, "mcpServers": []}))["sessionId"].clone();
        a.call(
            "session/prompt",
            json!({"sessionId": s, "prompt": [{"type": "text", "text": "hello there"}]}),
        );
        s
    };
    // A new connection finds it, attaches and gets its history.
    let mut c = Raw::connect(&server.socket, Some(&server.token));
    c.initialize(false);
    let list = c.call("_north/session/list", json!({}));
    assert_eq!(list["sessions"][0]["sessionId"], session);
    assert_eq!(list["sessions"][0]["clients"], 0);
    assert_eq!(list["sessions"][0]["running"], false);
    // Not attached yet: refused.
    let id = c.request(
        "_north/session/rename",
        json!({"sessionId": session, "name": "x"}),
    );
    let refused = c.until("the refusal", |v| v["id"] == id);
    assert!(
        refused["error"]["data"]
            .as_str()
            .unwrap()
            .contains("not attached"),
        "{refused}"
    );
    c.call("_north/session/attach", json!({"sessionId": session}));
    c.until("the replayed prompt", |v| {
        is_update(v, "user_message_chunk")
    });
    c.until_text("FIRST-ANSWER");
    let renamed = c.call(
        "_north/session/rename",
        json!({"sessionId": session, "name": "pairing"}),
    );
    assert_eq!(renamed["name"], "pairing");
    let list = c.call("_north/session/list", json!({}));
    assert_eq!(list["sessions"][0]["name"], "pairing");
    let exported = c.call("_north/session/export", json!({"sessionId": session}));
    let md = exported["markdown"].as_str().unwrap();
    assert!(
        md.contains("hello there") && md.contains("FIRST-ANSWER"),
        "{md}"
    );
    let fork = c.call("_north/session/fork", json!({"sessionId": session}))["sessionId"].clone();
    assert_ne!(fork, session);
    let done = c.call(
        "session/prompt",
        json!({"sessionId": fork, "prompt": [{"type": "text", "text": "go on"}]}),
    );
    assert_eq!(done["stopReason"], "end_turn");
    c.call("_north/session/close", json!({"sessionId": session}));
    let list = c.call("_north/session/list", json!({}));
    let ids: Vec<&Value> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["sessionId"])
        .collect();
    assert_eq!(ids, vec![&fork]);
}

#[test]
fn a_client_that_stops_reading_is_dropped_and_the_others_go_on() {
    let sb = Sandbox::new();
    let root = project(&sb);
    // Turns of many small events (text streams in pieces of about 12
    // bytes): a client that reads keeps up with each turn, one that does
    // not falls far more than the queue behind.
    let turns: Vec<Value> = (0..12).map(|_| json!({"text": "y".repeat(800)})).collect();
    let turns = Value::Array(turns);
    let server = serve(&sb, &turns, &["--max-queued", "256"]);
    let mut a = Raw::connect(&server.socket, Some(&server.token));
    a.initialize(false);
    let session =
        a.call("session/new", json!({"cwd": root, "mcpServers": []}))["sessionId"].clone();
    // The slow client attaches, then never reads again.
    let mut slow = Raw::connect(&server.socket, Some(&server.token));
    slow.initialize(false);
    slow.call("_north/session/attach", json!({"sessionId": session}));
    for n in 0..12 {
        let done = a.call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": format!("turn {n}")}]}),
        );
        assert_eq!(done["stopReason"], "end_turn");
    }
    assert_eq!(
        streamed(&a.seen).len(),
        12 * 800,
        "the reading client got every piece"
    );
    let list = a.call("_north/session/list", json!({}));
    assert_eq!(
        list["sessions"][0]["clients"], 1,
        "the slow client was dropped: {list}"
    );
    // What it left unread ends, and then the connection.
    let mut rest = Vec::new();
    let _ = slow.reader.read_to_end(&mut rest);
}
