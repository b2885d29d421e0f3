//! rmcp's HTTP client with one thing added: it says when the first GET
//! stream has been answered. A server sends requests of its own (a form,
//! a roots query) on that standalone stream; a tool call that went out
//! before the server had the stream would wait for a request that was
//! never delivered, so connecting waits (briefly) until it is there.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use tokio::sync::watch;

/// What the client saw.
#[derive(Debug)]
pub(super) struct Seen {
    /// The server gave a session id: rmcp then opens the GET stream.
    pub session: AtomicBool,
    /// The first GET stream was answered (opened or refused).
    pub opened: watch::Sender<bool>,
}

impl Seen {
    pub fn new() -> Arc<Self> {
        Arc::new(Seen {
            session: AtomicBool::new(false),
            opened: watch::channel(false).0,
        })
    }

    /// Waits, at most `limit`, until the server has the GET stream, when
    /// one is to be opened at all.
    pub(crate) async fn stream_ready(&self, limit: std::time::Duration) {
        if !self.session.load(Ordering::Acquire) {
            return;
        }
        let mut answered = self.opened.subscribe();
        let _ = tokio::time::timeout(limit, answered.wait_for(|a| *a)).await;
    }

    fn posted<E: std::error::Error + Send + Sync + 'static>(
        &self,
        r: &Result<StreamableHttpPostResponse, StreamableHttpError<E>>,
    ) {
        if let Ok(
            StreamableHttpPostResponse::Json(_, Some(_))
            | StreamableHttpPostResponse::Sse(_, Some(_)),
        ) = r
        {
            self.session.store(true, Ordering::Release);
        }
    }
}

/// `inner`, noting sessions and the first answered GET stream in `seen`.
#[derive(Clone)]
pub(super) struct Observed<C> {
    pub inner: C,
    pub seen: Arc<Seen>,
}

type PostResult<E> = Result<StreamableHttpPostResponse, StreamableHttpError<E>>;
type StreamResult<E> = Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<E>>;

impl<C: StreamableHttpClient + Sync> Observed<C> {
    /// `posted`, noting a session id in its answer.
    async fn noting_post(
        &self,
        posted: impl Future<Output = PostResult<C::Error>>,
    ) -> PostResult<C::Error> {
        let r = posted.await;
        self.seen.posted(&r);
        r
    }

    /// `stream`, noting that a GET stream was answered.
    async fn noting_stream(
        &self,
        stream: impl Future<Output = StreamResult<C::Error>>,
    ) -> StreamResult<C::Error> {
        let answered = stream.await;
        self.seen.opened.send_replace(true);
        answered
    }
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for Observed<C> {
    type Error = C::Error;

    fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>>>
    + Send
    + '_ {
        let posted = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers);
        self.noting_post(posted)
    }

    fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> impl Future<Output = Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>>>
    + Send
    + '_ {
        let posted = self.inner.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        self.noting_post(posted)
    }

    fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> impl Future<Output = Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>>>
    + Send
    + '_ {
        let posted = self.inner.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        );
        self.noting_post(posted)
    }

    fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<Output = Result<(), StreamableHttpError<Self::Error>>> + Send + '_ {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
    }

    fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> impl Future<
        Output = Result<
            BoxStream<'static, Result<Sse, SseError>>,
            StreamableHttpError<Self::Error>,
        >,
    > + Send
    + '_ {
        let stream =
            self.inner
                .get_stream(uri, session_id, last_event_id, auth_header, custom_headers);
        self.noting_stream(stream)
    }

    fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> impl Future<
        Output = Result<
            BoxStream<'static, Result<Sse, SseError>>,
            StreamableHttpError<Self::Error>,
        >,
    > + Send
    + '_ {
        let stream = self.inner.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        self.noting_stream(stream)
    }
}
