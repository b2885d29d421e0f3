//! The connection: `initialize`, `session/new`, `session/load`,
//! `session/prompt` (streamed as `session/update`s), `session/cancel`,
//! `session/set_mode` and North's `_north/...` extensions, each routed to
//! the hub's sessions (`ops`).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, Implementation, InitializeRequest, InitializeResponse,
    LoadSessionRequest, McpCapabilities, NewSessionRequest, PromptRequest, PromptResponse,
    SetSessionModeRequest,
};
use agent_client_protocol::{Agent as AcpRole, Client, ConnectTo, Error, Stdio};

use crate::clients::Backlog;
use crate::ext;
use crate::history::prompt_text;
use crate::hub::{Hub, Limits};
use crate::open::AcpRuntime;
use crate::ops::{Conn, stop_reason};

/// What North can do, told to the client; what the client can do (write
/// its buffers, show forms, render North's own events), remembered.
fn initialize(req: &InitializeRequest, conn: &Conn) -> InitializeResponse {
    let version = req.protocol_version.min(ProtocolVersion::V1);
    // Accepted edits then go to the editor's buffers.
    conn.writes.store(
        req.client_capabilities.fs.write_text_file,
        Ordering::Relaxed,
    );
    // Servers' forms go to an editor that shows them.
    conn.forms.store(
        req.client_capabilities
            .elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some()),
        Ordering::Relaxed,
    );
    // North's own clients render North's events (`_north/event`).
    let north_events = req
        .meta
        .as_ref()
        .and_then(|m| m.get("north"))
        .and_then(|n| n.get("events"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    conn.north_events.store(north_events, Ordering::Relaxed);
    InitializeResponse::new(version)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .mcp_capabilities(McpCapabilities::new().http(true)),
        )
        .agent_info(Implementation::new("north", env!("CARGO_PKG_VERSION")))
}

/// Serves one editor connection on stdin/stdout until it closes; the
/// sessions it opened end with it.
pub async fn serve(runtime: Arc<AcpRuntime>) -> Result<(), Error> {
    let hub = Hub::new(runtime, Limits::default(), false);
    let served = serve_on(hub.clone(), Stdio::new(), None).await;
    hub.shutdown().await;
    served
}

/// Serves one client connection on `transport` until it closes; the client
/// then leaves the sessions it was attached to. With `backlog`, what the
/// hub sends it is counted there (its transport counts what it wrote).
pub async fn serve_on(
    hub: Arc<Hub>,
    transport: impl ConnectTo<AcpRole> + 'static,
    backlog: Option<Arc<Backlog>>,
) -> Result<(), Error> {
    let conn = Conn::new(hub.clone(), backlog);
    let id = conn.id;
    let served = requests(conn, transport).await;
    hub.detach(id).await;
    served
}

/// Replies with `result`, or its error.
fn reply<T: agent_client_protocol::JsonRpcResponse>(
    responder: agent_client_protocol::Responder<T, agent_client_protocol::V1>,
    result: Result<T, Error>,
) -> Result<(), Error> {
    match result {
        Ok(r) => responder.respond(r),
        Err(e) => responder.respond_with_error(e),
    }
}

#[allow(
    clippy::too_many_lines,
    reason = "one handler registration per message; each body is a call into `ops`"
)]
async fn requests(conn: Conn, transport: impl ConnectTo<AcpRole> + 'static) -> Result<(), Error> {
    let [c_init, c_new, c_load, c_prompt, c_cancel, c_mode] = std::array::from_fn(|_| conn.clone());
    let [
        c_list,
        c_attach,
        c_rename,
        c_fork,
        c_export,
        c_close,
        c_history,
    ] = std::array::from_fn(|_| conn.clone());
    AcpRole
        .v1()
        .name("north")
        .on_receive_request(
            async move |req: InitializeRequest, responder, _cx| {
                responder.respond(initialize(&req, &c_init))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: NewSessionRequest, responder, cx: ConnectionTo<Client>| {
                reply(responder, c_new.new_session(&cx, &req))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: LoadSessionRequest, responder, cx: ConnectionTo<Client>| {
                reply(responder, c_load.load(&cx, &req))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: PromptRequest, responder, _cx: ConnectionTo<Client>| {
                let input = prompt_text(&req.prompt);
                let served = match c_prompt.prompt(&req.session_id.to_string(), &input) {
                    Ok(s) => s,
                    Err(e) => return responder.respond_with_error(e),
                };
                // The turn runs outside the dispatch loop, which must stay
                // free for permission answers and `session/cancel`, and
                // outside this connection: a client that leaves does not
                // take the session's turn with it.
                tokio::spawn(async move {
                    let end = served.turn(&input).await;
                    let _ = reply(responder, stop_reason(end).map(PromptResponse::new));
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx| {
                c_cancel.cancel(&n.session_id.to_string());
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: SetSessionModeRequest, responder, _cx| {
                reply(responder, c_mode.set_mode(&req))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_req: ext::ListSessions, responder, _cx| responder.respond(c_list.list()),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ext::Attach, responder, cx: ConnectionTo<Client>| {
                reply(responder, c_attach.attach(&cx, &req))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ext::History, responder, _cx| {
                reply(responder, c_history.history(&req))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ext::Rename, responder, _cx| reply(responder, c_rename.rename(&req)),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ext::Fork, responder, cx: ConnectionTo<Client>| {
                reply(responder, c_fork.fork(&cx, &req))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ext::Export, responder, _cx| reply(responder, c_export.export(&req)),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ext::Close, responder, cx: ConnectionTo<Client>| {
                let conn = c_close.clone();
                cx.spawn(async move { reply(responder, conn.close(&req).await) })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_to(transport)
        .await
}
