//! The streaming driver: one attempt's body through the SSE parser and the
//! provider's decoder, deltas to the caller as they come, and the rule that
//! a stream is retried only while no output has reached the caller.

use std::sync::Arc;

use futures::StreamExt;
use north_protocol::StreamDelta;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::describe::describe;
use super::retry::is_retryable_stream_error;
use super::{HttpCall, Transport};
use crate::DeltaStream;
use crate::accumulate::ResponseBuilder;
use crate::decode::{DecodeFailure, StreamDecoder};
use crate::error::LlmError;
use crate::sse::SseParser;

async fn send_all(
    tx: &mpsc::Sender<Result<StreamDelta, LlmError>>,
    deltas: impl IntoIterator<Item = StreamDelta>,
) -> bool {
    for d in deltas {
        if tx.send(Ok(d)).await.is_err() {
            return false;
        }
    }
    true
}

/// Whether the caller sees `d` as output (so the stream can no longer be
/// retried without showing something twice).
fn is_content(d: &StreamDelta) -> bool {
    !matches!(
        d,
        StreamDelta::Start { .. } | StreamDelta::Usage(_) | StreamDelta::Stop { .. }
    )
}

/// Outcome of trying one HTTP attempt's body.
enum StreamEnd {
    Complete,
    Failed { error: LlmError, retryable: bool },
    ReceiverGone,
}

impl Transport {
    /// Starts a streaming request; deltas arrive on the returned stream.
    pub(crate) fn stream<D, F>(
        self: Arc<Self>,
        call: HttpCall,
        make_decoder: F,
        cancel: CancellationToken,
    ) -> DeltaStream
    where
        D: StreamDecoder + 'static,
        F: Fn() -> D + Send + 'static,
    {
        let (tx, mut rx) = mpsc::channel::<Result<StreamDelta, LlmError>>(64);
        // The driver runs on its own task: the retry observer goes with it.
        let observer = super::retry::current();
        tokio::spawn(async move {
            let drive = self.drive(call, make_decoder, cancel, tx);
            match observer {
                Some(o) => super::retry::observe_retries(o, drive).await,
                None => drive.await,
            }
        });
        Box::pin(futures::stream::poll_fn(move |cx| rx.poll_recv(cx)))
    }

    async fn drive<D, F>(
        &self,
        call: HttpCall,
        make_decoder: F,
        cancel: CancellationToken,
        tx: mpsc::Sender<Result<StreamDelta, LlmError>>,
    ) where
        D: StreamDecoder,
        F: Fn() -> D,
    {
        let mut attempts = 0;
        loop {
            let resp = match self.send(&call, &cancel, &mut attempts).await {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            };
            let mut builder = ResponseBuilder::new();
            let end = self
                .read_body(resp, make_decoder(), &cancel, &tx, &mut builder)
                .await;
            match end {
                StreamEnd::Complete | StreamEnd::ReceiverGone => return,
                StreamEnd::Failed { error, retryable }
                    if retryable
                        && !builder.has_content()
                        && attempts <= self.cfg.retry.max_retries =>
                {
                    let delay = self.cfg.retry.backoff(attempts);
                    tracing::info!(provider = self.provider, attempt = attempts, error = %error, "retrying stream that failed before any output");
                    if !self.sleep_or_cancel(delay, &cancel).await {
                        let _ = tx
                            .send(Err(LlmError::Cancelled {
                                partial: Default::default(),
                            }))
                            .await;
                        return;
                    }
                }
                StreamEnd::Failed { mut error, .. } => {
                    error.set_partial(builder.partial());
                    let _ = tx.send(Err(error)).await;
                    return;
                }
            }
        }
    }

    /// Flushes held metadata and the decoder's closing deltas.
    async fn complete<D: StreamDecoder>(
        &self,
        decoder: &mut D,
        held: Vec<StreamDelta>,
        builder: &mut ResponseBuilder,
        tx: &mpsc::Sender<Result<StreamDelta, LlmError>>,
    ) -> StreamEnd {
        let fin = decoder.finish();
        for d in &fin {
            builder.push(d);
        }
        let stats = decoder.stats();
        if stats.unknown_events + stats.unknown_fields > 0 {
            tracing::info!(
                provider = self.provider,
                unknown_events = stats.unknown_events,
                unknown_fields = stats.unknown_fields,
                "stream had unknown events or fields"
            );
        }
        if send_all(tx, held.into_iter().chain(fin)).await {
            StreamEnd::Complete
        } else {
            StreamEnd::ReceiverGone
        }
    }

    /// How a stream ends when its decoder fails: a malformed event is not
    /// retried, a provider's error event is when its type says so.
    fn decode_failed(&self, failure: DecodeFailure) -> StreamEnd {
        let provider = self.provider;
        match failure {
            DecodeFailure::Malformed(message) => StreamEnd::Failed {
                error: LlmError::Decode {
                    provider,
                    message: self.scrub(&message),
                    partial: Default::default(),
                },
                retryable: false,
            },
            DecodeFailure::Provider {
                error_type,
                message,
            } => StreamEnd::Failed {
                retryable: is_retryable_stream_error(&error_type),
                error: LlmError::StreamError {
                    provider,
                    error_type,
                    message: self.scrub(&message),
                    partial: Default::default(),
                },
            },
        }
    }

    async fn read_body<D: StreamDecoder>(
        &self,
        resp: reqwest::Response,
        mut decoder: D,
        cancel: &CancellationToken,
        tx: &mpsc::Sender<Result<StreamDelta, LlmError>>,
        builder: &mut ResponseBuilder,
    ) -> StreamEnd {
        let provider = self.provider;
        let mut body = resp.bytes_stream();
        let mut parser = SseParser::new();
        // Metadata (start, usage) is held back until the first content delta,
        // so a retried attempt never shows the caller a duplicate start.
        let mut held: Vec<StreamDelta> = Vec::new();
        let mut saw_stop = false;
        let fail = |error: LlmError, retryable: bool| StreamEnd::Failed { error, retryable };
        loop {
            let next = tokio::select! {
                _ = cancel.cancelled() => return fail(LlmError::Cancelled { partial: Default::default() }, false),
                n = tokio::time::timeout(self.cfg.idle_timeout, body.next()) => n,
            };
            let chunk = match next {
                Err(_) => {
                    return fail(
                        LlmError::IdleTimeout {
                            provider,
                            idle: self.cfg.idle_timeout,
                            partial: Default::default(),
                        },
                        true,
                    );
                }
                Ok(None) => {
                    if decoder.is_done() || saw_stop {
                        return self.complete(&mut decoder, held, builder, tx).await;
                    }
                    return fail(
                        LlmError::StreamInterrupted {
                            provider,
                            message: "the stream ended before the response was complete".into(),
                            partial: Default::default(),
                        },
                        true,
                    );
                }
                Ok(Some(Err(e))) => {
                    return fail(
                        LlmError::StreamInterrupted {
                            provider,
                            message: self.scrub(&describe(e)),
                            partial: Default::default(),
                        },
                        true,
                    );
                }
                Ok(Some(Ok(bytes))) => bytes,
            };
            for event in parser.feed(&chunk) {
                let deltas = match decoder.decode(&event) {
                    Ok(ds) => ds,
                    Err(failure) => return self.decode_failed(failure),
                };
                for d in deltas {
                    saw_stop |= matches!(d, StreamDelta::Stop { .. });
                    builder.push(&d);
                    if is_content(&d) || builder.has_content() {
                        held.push(d);
                        if !send_all(tx, held.drain(..)).await {
                            return StreamEnd::ReceiverGone;
                        }
                    } else {
                        held.push(d);
                    }
                }
            }
            if decoder.is_done() {
                return self.complete(&mut decoder, held, builder, tx).await;
            }
        }
    }
}
