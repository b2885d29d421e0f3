//! The JSON Schema of every message a North server sends and takes,
//! generated from the protocol types themselves (ACP's and North's
//! extensions), so a third-party client can be generated from it and kept
//! in sync: `north serve --schema`.

use agent_client_protocol::v1::schema as acp;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

use crate::ext;

/// Who sends a message.
#[derive(Clone, Copy)]
enum From {
    Client,
    Server,
}

/// One method: its name, who sends it, its params and (for a request) its
/// result.
struct Method {
    name: &'static str,
    from: From,
    params: Value,
    result: Option<Value>,
}

fn request<P: JsonSchema, R: JsonSchema>(
    g: &mut SchemaGenerator,
    name: &'static str,
    from: From,
) -> Method {
    Method {
        name,
        from,
        params: g.subschema_for::<P>().to_value(),
        result: Some(g.subschema_for::<R>().to_value()),
    }
}

fn notification<P: JsonSchema>(g: &mut SchemaGenerator, name: &'static str, from: From) -> Method {
    Method {
        name,
        from,
        params: g.subschema_for::<P>().to_value(),
        result: None,
    }
}

/// The schema document: each method under `methods` (its direction,
/// `params` and `result`), every type under `$defs`.
pub fn document() -> Value {
    let mut g = SchemaGenerator::default();
    let (c, s) = (From::Client, From::Server);
    let methods = vec![
        request::<acp::InitializeRequest, acp::InitializeResponse>(&mut g, "initialize", c),
        request::<acp::NewSessionRequest, acp::NewSessionResponse>(&mut g, "session/new", c),
        request::<acp::LoadSessionRequest, acp::LoadSessionResponse>(&mut g, "session/load", c),
        request::<acp::PromptRequest, acp::PromptResponse>(&mut g, "session/prompt", c),
        notification::<acp::CancelNotification>(&mut g, "session/cancel", c),
        request::<acp::SetSessionModeRequest, acp::SetSessionModeResponse>(
            &mut g,
            "session/set_mode",
            c,
        ),
        request::<ext::ListSessions, ext::SessionList>(&mut g, "_north/session/list", c),
        request::<ext::Attach, ext::Attached>(&mut g, "_north/session/attach", c),
        request::<ext::History, ext::HistoryAnswer>(&mut g, "_north/session/history", c),
        request::<ext::Rename, ext::Renamed>(&mut g, "_north/session/rename", c),
        request::<ext::Fork, ext::Forked>(&mut g, "_north/session/fork", c),
        request::<ext::Export, ext::Exported>(&mut g, "_north/session/export", c),
        request::<ext::Close, ext::Closed>(&mut g, "_north/session/close", c),
        notification::<acp::SessionNotification>(&mut g, "session/update", s),
        request::<acp::RequestPermissionRequest, acp::RequestPermissionResponse>(
            &mut g,
            "session/request_permission",
            s,
        ),
        request::<acp::WriteTextFileRequest, acp::WriteTextFileResponse>(
            &mut g,
            "fs/write_text_file",
            s,
        ),
        request::<acp::CreateElicitationRequest, acp::CreateElicitationResponse>(
            &mut g,
            "elicitation/create",
            s,
        ),
        notification::<ext::NorthEvent>(&mut g, "_north/event", s),
        notification::<ext::PermissionAnswered>(&mut g, "_north/permission_answered", s),
        notification::<ext::PermissionRefused>(&mut g, "_north/permission_refused", s),
    ];
    let mut out = Map::new();
    for m in methods {
        let mut entry = Map::new();
        entry.insert(
            "from".into(),
            json!(match m.from {
                From::Client => "client",
                From::Server => "server",
            }),
        );
        entry.insert(
            "kind".into(),
            json!(if m.result.is_some() {
                "request"
            } else {
                "notification"
            }),
        );
        entry.insert("params".into(), m.params);
        if let Some(r) = m.result {
            entry.insert("result".into(), r);
        }
        out.insert(m.name.into(), Value::Object(entry));
    }
    // Not methods, but what `_meta.north` carries: a permission question
    // as North's clients show it, and a session's provider and model.
    g.subschema_for::<ext::Ask>();
    g.subschema_for::<ext::SessionMeta>();
    let defs: Map<String, Value> = g.take_definitions(true).into_iter().collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "North server protocol",
        "description": "ACP (one JSON-RPC 2.0 message per line on the unix socket, per text frame on WebSocket) with North's `_north/` extensions. Each method names who sends it, its params and, for a request, its result; the types are under $defs.",
        "version": env!("CARGO_PKG_VERSION"),
        "methods": out,
        "$defs": defs,
    })
}
