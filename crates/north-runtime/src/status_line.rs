//! The status line a user programs, with Claude Code's contract: in their
//! own config, `"statusLine": {"type": "command", "command": …}` names a
//! command that gets the session as JSON on standard input; the first line
//! it prints is shown under the composer. It runs the way the user's hooks
//! do: through the spawner, in the OS sandbox without network (what it
//! names in the home directory stays readable), and is cut off after
//! [`TIMEOUT`].

use std::path::PathBuf;
use std::time::Duration;

use north_agent::hooks::Ran;
use north_tools::Spawner;
use north_tools::os_sandbox::ChildKind;

use crate::project::Project;

/// How long one run may take before it is killed.
pub const TIMEOUT: Duration = Duration::from_secs(2);

/// The user's status line command, bound to a project and its sandbox.
pub struct StatusLine {
    command: String,
    root: PathBuf,
    spawner: Spawner,
}

/// Why a run showed nothing.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StatusLineError {
    /// It ran past [`TIMEOUT`] and was killed.
    #[error("stopped after {} s", TIMEOUT.as_secs())]
    TimedOut,
    /// It failed (its exit code; None: a signal).
    #[error("exit {}: {stderr}", code.map_or("by a signal".to_string(), |c| c.to_string()))]
    Failed {
        /// Its exit code.
        code: Option<i32>,
        /// The first line of what it said on standard error.
        stderr: String,
    },
    /// It could not be started.
    #[error("could not start: {0}")]
    NotStarted(String),
}

impl StatusLine {
    /// The status line of `project`'s configuration (the user's own; a
    /// project's is ignored when the config is read), if there is one.
    pub(crate) fn for_project(project: &Project) -> Option<StatusLine> {
        let file = project.config.status_line.as_ref()?;
        let mut choice = project.sandbox.clone();
        choice
            .allow_read
            .extend(crate::sandboxing::named_in_commands(std::iter::once(
                file.command.as_str(),
            )));
        Some(StatusLine {
            command: file.command.clone(),
            root: project.root.clone(),
            spawner: choice.spawner(
                &project.root,
                &project.grants,
                ChildKind::Hook { network: false },
            ),
        })
    }

    /// The command's first line for `session` (the JSON it reads).
    pub async fn render(&self, session: &serde_json::Value) -> Result<String, StatusLineError> {
        let input = session.to_string();
        let ran = north_agent::hooks::run_command(
            &self.spawner,
            &self.root,
            &self.command,
            input.as_bytes(),
            TIMEOUT,
            None,
        )
        .await;
        match ran {
            Ran::Exited {
                code: Some(0),
                stdout,
                ..
            } => Ok(stdout
                .lines()
                .next()
                .unwrap_or_default()
                .trim_end()
                .to_owned()),
            Ran::Exited { code, stderr, .. } => Err(StatusLineError::Failed {
                code,
                stderr: stderr.lines().next().unwrap_or_default().to_owned(),
            }),
            Ran::TimedOut => Err(StatusLineError::TimedOut),
            Ran::NotStarted(why) => Err(StatusLineError::NotStarted(why)),
        }
    }
}
