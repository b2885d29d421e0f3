//! Input expansion: content from outside the message (an MCP prompt used
//! as a slash command, an `@server:uri` resource) put into what the user
//! typed before the model sees it. The agent knows only the trait; the
//! binary wires it to whatever provides the content.

use futures::future::BoxFuture;
use north_protocol::{ErrorKind, Event, NoticeKind};
use tokio_util::sync::CancellationToken;

use super::{Agent, Emit};

/// What an expander made of an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpandedInput {
    /// The message the model receives instead of the input.
    pub text: String,
    /// What was put in, as the user typed it (`/mcp__s__p`, `@s:uri`).
    pub attached: Vec<String>,
}

/// Why an input could not be expanded: the turn stops before any request
/// and the user is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ExpandError(pub String);

/// Turns a user's input into the message the model receives.
pub trait InputExpander: Send + Sync {
    /// The expanded input, or `None` when there is nothing to put in.
    fn expand<'a>(
        &'a self,
        input: &'a str,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Option<ExpandedInput>, ExpandError>>;
}

impl Agent {
    /// Expands every user input through `expander` from now on.
    pub fn set_input_expander(&mut self, expander: std::sync::Arc<dyn InputExpander>) {
        self.expander = Some(expander);
    }

    /// `input` as the model is to receive it; `Err` (already told to the
    /// user) stops the turn.
    pub(super) async fn expand_input(
        &self,
        input: &str,
        emit: &Emit<'_>,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        let Some(expander) = &self.expander else {
            return Ok(input.to_string());
        };
        match expander.expand(input, cancel).await {
            Ok(None) => Ok(input.to_string()),
            Ok(Some(expanded)) => {
                emit(Event::Notice {
                    kind: NoticeKind::Attached,
                    message: format!("attached {}", expanded.attached.join(", ")),
                });
                Ok(expanded.text)
            }
            Err(e) => {
                let message = format!("{e}; nothing was sent to the model");
                emit(Event::Error {
                    kind: ErrorKind::Config,
                    message: message.clone(),
                });
                Err(message)
            }
        }
    }
}
