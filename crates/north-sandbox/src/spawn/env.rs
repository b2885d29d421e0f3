//! The shell session's environment: built from an allowlist of safe
//! variables, never from North's whole environment, so API keys and other
//! secrets cannot leak into commands (or into their output the model reads).

use std::ffi::{OsStr, OsString};

/// Variables passed through from North's environment when present.
pub const SAFE_VARIABLES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_COLLATE",
    "LC_MESSAGES",
    "LC_MONETARY",
    "LC_NUMERIC",
    "LC_TIME",
    "TERM",
    "SHELL",
    "TMPDIR",
    "TZ",
    "COLORTERM",
    "NO_COLOR",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "GOPATH",
    "GOROOT",
    "JAVA_HOME",
    "NVM_DIR",
    "PYENV_ROOT",
    "VIRTUAL_ENV",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
];

/// Variables the session always sets, overriding North's: no pagers (a
/// pager would wait for keys), a plain terminal, and no shell history file.
pub(crate) const FIXED_VARIABLES: &[(&str, &str)] = &[
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("MANPAGER", "cat"),
    ("SYSTEMD_PAGER", ""),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("TERM", "dumb"),
    ("PS1", ""),
    ("PS2", ""),
    ("HISTFILE", "/dev/null"),
    ("NORTH_SHELL", "1"),
];

pub use north_secrets::is_secret_name;

/// The session environment built from `vars` (North's environment): safe
/// variables that are present and not secret-looking, plus the fixed ones.
pub(crate) fn session_env<I>(vars: I) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let mut env: Vec<(OsString, OsString)> = vars
        .into_iter()
        .filter(|(name, _)| {
            name.to_str().is_some_and(|n| {
                SAFE_VARIABLES.contains(&n)
                    && !is_secret_name(n)
                    && !FIXED_VARIABLES.iter().any(|(f, _)| *f == n)
            })
        })
        .collect();
    if !env.iter().any(|(n, _)| n == OsStr::new("PATH")) {
        env.push(("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()));
    }
    env.extend(
        FIXED_VARIABLES
            .iter()
            .map(|(n, v)| (OsString::from(n), OsString::from(v))),
    );
    env.sort();
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_safe_variables_pass() {
        let env = session_env([
            ("PATH".into(), "/bin".into()),
            ("HOME".into(), "/home/u".into()),
            ("ANTHROPIC_API_KEY".into(), "sk-ant".into()),
            ("RANDOM_VAR".into(), "x".into()),
            ("TERM".into(), "xterm-256color".into()),
        ]);
        let names: Vec<_> = env
            .iter()
            .map(|(n, _)| n.to_string_lossy().into_owned())
            .collect();
        assert!(names.contains(&"PATH".to_owned()));
        assert!(names.contains(&"HOME".to_owned()));
        assert!(!names.contains(&"ANTHROPIC_API_KEY".to_owned()));
        assert!(!names.contains(&"RANDOM_VAR".to_owned()));
        let term: Vec<_> = env.iter().filter(|(n, _)| n == "TERM").collect();
        assert_eq!(term.len(), 1);
        assert_eq!(term[0].1, "dumb");
    }
}
