//! The text North gives the session's shell: the init script sourced once,
//! the per-command wrapper with its begin/end markers and quotas, and the
//! quoting both rely on. Kept apart from [`super::session`] so the protocol
//! the shell speaks can be read (and reviewed for injection) in one place.

use std::path::Path;

use super::{RunOptions, ShellError};

/// `'text'` for the shell, with embedded single quotes escaped.
pub(crate) fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

pub(super) fn nonce() -> String {
    format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..))
}

pub(super) fn path_str(path: &Path) -> Result<String, ShellError> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| ShellError::InvalidPath(path.to_owned()))
}

/// The per-command wrapper sourced by the shell.
pub(super) fn wrapper_script(
    nonce: &str,
    cmd_file: &Path,
    err_file: &Path,
    cwd: Option<&Path>,
    opts: &RunOptions,
) -> Result<String, ShellError> {
    let cmd = shell_quote(&path_str(cmd_file)?);
    let err = shell_quote(&path_str(err_file)?);
    let mut limits = String::new();
    if let Some(cpu) = opts.cpu_seconds {
        limits.push_str(&format!("ulimit -t {cpu} || exit 126; "));
    }
    if let Some(bytes) = opts.memory_bytes {
        let kib = bytes.div_ceil(1024).max(1);
        limits.push_str(&format!("ulimit -v {kib} || exit 126; "));
    }
    if let Some(bytes) = opts.file_bytes {
        // bash counts `ulimit -f` in 1024-byte blocks.
        let blocks = bytes.div_ceil(1024).max(1);
        limits.push_str(&format!("ulimit -f {blocks} || exit 126; "));
    }
    // Quotas apply in a subshell so they do not stick to the session.
    let body = if limits.is_empty() {
        format!("{{ . {cmd}; }} 2>{err}")
    } else {
        format!("( {limits}. {cmd} ) 2>{err}")
    };
    let mut script = String::from("__north_prev=$PWD\n__north_target=\n");
    script.push_str(&format!("printf '%s%s\\n' '__NORTH_BEGIN_' '{nonce}'\n"));
    match cwd {
        Some(dir) => {
            let dir = shell_quote(&path_str(dir)?);
            script.push_str(&format!(
                "if cd -- {dir} 2>{err}; then\n__north_target=$PWD\n{body}\n__north_ec=$?\nelse\n__north_ec=1\nfi\n"
            ));
        }
        None => script.push_str(&format!("{body}\n__north_ec=$?\n")),
    }
    script.push_str(
        "if [ -n \"$__north_target\" ] && [ \"$PWD\" = \"$__north_target\" ]; then cd -- \"$__north_prev\"; fi\n__north_target=\n",
    );
    script.push_str(&format!(
        "printf '%s%s:%s\\n' '__NORTH_END_' '{nonce}' \"$__north_ec\"\n"
    ));
    Ok(script)
}

/// Sourced once when the session starts.
pub(super) const INIT_SCRIPT: &str = r#"stty -echo -onlcr -ixon noflsh 2>/dev/null
if [ -n "${BASH_VERSION-}" ]; then set +o history; set +H; fi
unset HISTFILE PROMPT_COMMAND MAILCHECK MAIL 2>/dev/null
PS1=''
PS2=''
__north_sync() {
  if [ -n "${__north_target-}" ] && [ "$PWD" = "$__north_target" ]; then cd -- "$__north_prev" 2>/dev/null; fi
  __north_target=
  printf '%s%s\n' '__NORTH_SYNC_' "$1"
}
"#;
