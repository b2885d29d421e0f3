//! Desktop notifications: when a turn ends, or a prompt or a server's form
//! waits, while the terminal is not focused, North writes the escape the
//! terminal turns into a notification (OSC 9, OSC 777) or rings its bell.
//! Focus comes from the terminal's focus reports; a terminal that sends
//! none is taken to be watched, so it is never interrupted.

use north_config::Notifications;

use crate::approver::UiMsg;

/// The escape North writes, chosen once from the setting and the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum How {
    Osc9,
    Osc777,
    Bell,
    Off,
}

/// Decides whether and how to notify.
#[derive(Debug)]
pub(crate) struct Notifier {
    how: How,
    /// Inside tmux: an OSC goes through its passthrough to the terminal.
    tmux: bool,
    /// The terminal's last focus report (None: it sent none).
    focused: Option<bool>,
}

impl Notifier {
    /// The notifier for `setting`, reading the terminal from `env`.
    pub(crate) fn new(setting: Notifications, env: impl Fn(&str) -> Option<String>) -> Self {
        let program = env("TERM_PROGRAM").unwrap_or_default();
        let term = env("TERM").unwrap_or_default();
        let how = match setting {
            Notifications::Osc9 => How::Osc9,
            Notifications::Osc777 => How::Osc777,
            Notifications::Bell => How::Bell,
            Notifications::Off => How::Off,
            Notifications::Auto => {
                if matches!(program.as_str(), "iTerm.app" | "WezTerm" | "ghostty")
                    || term.contains("kitty")
                {
                    How::Osc9
                } else if term.starts_with("foot") || term.contains("rxvt") {
                    How::Osc777
                } else {
                    How::Bell
                }
            }
        };
        Notifier {
            how,
            tmux: env("TMUX").is_some_and(|v| !v.is_empty()),
            focused: None,
        }
    }

    /// The terminal reported gaining (`true`) or losing focus.
    pub(crate) fn focus(&mut self, focused: bool) {
        self.focused = Some(focused);
    }

    /// What to write for `msg`: an escape when it needs the user and the
    /// terminal is known not to be focused.
    pub(crate) fn on(&self, msg: &UiMsg) -> Option<Vec<u8>> {
        if self.focused != Some(false) {
            return None;
        }
        let text = match msg {
            UiMsg::Prompt(_) => "North is waiting for your decision",
            UiMsg::Form(..) => "A server asks you to fill in a form",
            UiMsg::TurnDone(_) => "North finished",
            _ => return None,
        };
        let osc = match self.how {
            How::Off => return None,
            How::Bell => return Some(b"\x07".to_vec()),
            How::Osc9 => format!("\x1b]9;{text}\x07"),
            How::Osc777 => format!("\x1b]777;notify;North;{text}\x07"),
        };
        Some(if self.tmux {
            // tmux hands a DCS passthrough (its escapes doubled) to the
            // terminal outside.
            format!("\x1bPtmux;{}\x1b\\", osc.replace('\x1b', "\x1b\x1b")).into_bytes()
        } else {
            osc.into_bytes()
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use north_agent::TurnEnd;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_string())
        }
    }

    #[test]
    fn only_an_unfocused_terminal_is_notified_in_its_own_way() {
        let done = UiMsg::TurnDone(TurnEnd::Done);
        let mut n = Notifier::new(Notifications::Auto, env(&[("TERM_PROGRAM", "iTerm.app")]));
        assert_eq!(n.on(&done), None, "no focus report: the user is watching");
        n.focus(false);
        assert_eq!(n.on(&done).unwrap(), b"\x1b]9;North finished\x07");
        assert_eq!(n.on(&UiMsg::Background(1)), None, "not everything");
        n.focus(true);
        assert_eq!(n.on(&done), None);

        let mut n = Notifier::new(Notifications::Auto, env(&[("TERM", "foot")]));
        n.focus(false);
        assert_eq!(
            n.on(&done).unwrap(),
            b"\x1b]777;notify;North;North finished\x07"
        );
        let mut n = Notifier::new(Notifications::Auto, env(&[("TERM", "xterm-256color")]));
        n.focus(false);
        assert_eq!(n.on(&done).unwrap(), b"\x07");
        let mut n = Notifier::new(Notifications::Osc9, env(&[("TMUX", "/tmp/t,1,0")]));
        n.focus(false);
        assert_eq!(
            n.on(&done).unwrap(),
            b"\x1bPtmux;\x1b\x1b]9;North finished\x07\x1b\\"
        );
        let mut n = Notifier::new(Notifications::Off, env(&[]));
        n.focus(false);
        assert_eq!(n.on(&done), None);
    }
}
