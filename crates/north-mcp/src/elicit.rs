//! What servers ask of the user: input (`elicitation/create`; the front
//! end in use decides through an [`Elicitor`], without one a request is
//! declined), North's roots (`roots/list`), and what a login must show
//! them ([`Announcer`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use futures::future::BoxFuture;
use north_protocol::{ElicitAnswer, ElicitForm};

/// Shows a server's form to the user and returns their answer.
pub trait Elicitor: Send + Sync {
    /// The user's answer to `form`.
    fn elicit(&self, form: ElicitForm) -> BoxFuture<'static, ElicitAnswer>;
}

/// The elicitor of the front end in use, set once it exists (servers
/// start before the TUI does); shared by every connection.
#[derive(Clone, Default)]
pub struct ElicitorSlot(Arc<RwLock<Option<Arc<dyn Elicitor>>>>);

impl ElicitorSlot {
    /// From now on, `elicitor` answers.
    pub fn set(&self, elicitor: Arc<dyn Elicitor>) {
        if let Ok(mut slot) = self.0.write() {
            *slot = Some(elicitor);
        }
    }

    /// The answer to `form`: the elicitor's, else declined.
    pub(crate) async fn ask(&self, form: ElicitForm) -> ElicitAnswer {
        let elicitor = self.0.read().ok().and_then(|s| s.clone());
        match elicitor {
            Some(e) => e.elicit(form).await,
            None => ElicitAnswer::Decline,
        }
    }
}

impl std::fmt::Debug for ElicitorSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ElicitorSlot")
    }
}

/// Tells the user something a server's login needs them to see.
#[derive(Clone)]
pub struct Announcer(std::sync::Arc<dyn Fn(&str) + Send + Sync>);

impl Announcer {
    /// Lines go to `say`.
    pub fn new(say: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Announcer(std::sync::Arc::new(say))
    }

    /// Says `line`.
    pub fn say(&self, line: &str) {
        (self.0)(line)
    }
}

impl Default for Announcer {
    /// Standard error, prefixed `north: MCP:`.
    fn default() -> Self {
        Announcer::new(|line| eprintln!("north: MCP: {line}"))
    }
}

impl std::fmt::Debug for Announcer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Announcer")
    }
}

/// A run with nobody to ask (`exec`, `north mcp call`): a form is
/// accepted only when `--yes` was given and every required field has a
/// default (the defaults are the answer); otherwise declined, and said so.
pub struct Unattended {
    /// `--yes` was given.
    pub accept_defaults: bool,
    /// Where the notice goes.
    pub announce: Announcer,
}

impl Elicitor for Unattended {
    fn elicit(&self, form: ElicitForm) -> BoxFuture<'static, ElicitAnswer> {
        let missing: Vec<String> = form
            .required_without_default()
            .into_iter()
            .map(str::to_string)
            .collect();
        let answer = if self.accept_defaults && missing.is_empty() {
            self.announce.say(&format!(
                "{} asked \"{}\": answered with its defaults (--yes)",
                form.server, form.message
            ));
            ElicitAnswer::Accept(form.defaults())
        } else {
            let why = if !missing.is_empty() {
                format!("required fields without a default: {}", missing.join(", "))
            } else {
                "nobody is here to answer; --yes accepts forms whose every required field has a default".to_string()
            };
            self.announce.say(&format!(
                "{} asked \"{}\": declined ({why})",
                form.server, form.message
            ));
            ElicitAnswer::Decline
        };
        Box::pin(std::future::ready(answer))
    }
}

/// The directories North offers servers as roots (`roots/list`): the
/// project's; changed when a session moves (ACP), and servers are told.
#[derive(Clone, Debug)]
pub struct Roots(Arc<RwLock<Vec<PathBuf>>>);

impl Roots {
    /// Roots starting at `root`.
    pub fn new(root: &Path) -> Self {
        Roots(Arc::new(RwLock::new(vec![root.to_path_buf()])))
    }

    /// The roots as `file://` URIs with their names.
    pub(crate) fn list(&self) -> Vec<(String, String)> {
        self.0
            .read()
            .map(|r| {
                r.iter()
                    .map(|p| {
                        let name = p
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_else(|| p.display().to_string());
                        (file_uri(p), name)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// `path` as a `file://` URI (percent-encoding what a URI cannot hold).
fn file_uri(path: &Path) -> String {
    url::Url::from_file_path(path)
        .map(|u| u.to_string())
        .unwrap_or_else(|()| format!("file://{}", path.display()))
}
