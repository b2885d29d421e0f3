//! An image on the system clipboard, for the TUI's Ctrl+V: read through
//! the platform's clipboard tool (`wl-paste` on Wayland, `xclip` on X11,
//! `pngpaste` on macOS), started like every other child by North's one
//! spawner, and saved to a private temporary file the prompt attaches.

use std::ffi::OsStr;
use std::io::Write;
use std::path::PathBuf;

use north_tools::spawn::Spawner;

/// Why no image came from the clipboard.
#[derive(Debug, thiserror::Error)]
pub enum ClipboardError {
    /// No display the clipboard tools could reach.
    #[error(
        "no clipboard here (neither WAYLAND_DISPLAY nor DISPLAY is set): paste the image's path instead"
    )]
    NoDisplay,
    /// No clipboard tool is installed.
    #[error("reading a clipboard image needs {0}: install it, or paste the image's path")]
    NoTool(&'static str),
    /// The clipboard holds no image.
    #[error("the clipboard holds no image")]
    Empty,
    /// The image could not be kept for the prompt.
    #[error("the clipboard image could not be saved: {0}")]
    Save(std::io::Error),
}

/// The clipboard tools to try, in order, for the environment `var` reads:
/// the program, its arguments, and the display variables it needs.
fn candidates(
    var: &dyn Fn(&str) -> Option<String>,
) -> Vec<(&'static str, &'static [&'static str])> {
    let mut out: Vec<(&'static str, &'static [&'static str])> = Vec::new();
    if var("WAYLAND_DISPLAY").is_some() {
        out.push(("wl-paste", &["--no-newline", "--type", "image/png"]));
    }
    if var("DISPLAY").is_some() {
        out.push((
            "xclip",
            &["-selection", "clipboard", "-target", "image/png", "-out"],
        ));
    }
    if cfg!(target_os = "macos") {
        out.push(("pngpaste", &["-"]));
    }
    out
}

/// Variables a clipboard tool needs to find the display; none is a secret.
const DISPLAY_VARIABLES: &[&str] = &["WAYLAND_DISPLAY", "DISPLAY", "XAUTHORITY"];

/// Reads a PNG from the clipboard into a new private file and returns its
/// path. Blocking: run it off the UI thread.
pub fn save_image(cwd: &std::path::Path) -> Result<PathBuf, ClipboardError> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let tools = candidates(&var);
    if tools.is_empty() {
        return Err(ClipboardError::NoDisplay);
    }
    let mut missing = Vec::new();
    for (program, args) in &tools {
        let mut cmd = Spawner::desktop().std_command(OsStr::new(program), cwd);
        cmd.args(*args);
        for name in DISPLAY_VARIABLES {
            if let Some(value) = var(name) {
                cmd.env(name, value);
            }
        }
        let out = match cmd.stderr(std::process::Stdio::null()).output() {
            Ok(out) => out,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                missing.push(*program);
                continue;
            }
            Err(_) => continue,
        };
        if out.status.success() && out.stdout.starts_with(b"\x89PNG") {
            return keep(&out.stdout);
        }
    }
    if missing.len() == tools.len() {
        return Err(ClipboardError::NoTool(tools[0].0));
    }
    Err(ClipboardError::Empty)
}

/// `png` in a new file only this user reads, kept past this process's
/// exit only until the system cleans its temporary directory.
fn keep(png: &[u8]) -> Result<PathBuf, ClipboardError> {
    let save = ClipboardError::Save;
    let mut file = tempfile::Builder::new()
        .prefix("north-clipboard-")
        .suffix(".png")
        .tempfile()
        .map_err(save)?;
    file.write_all(png).map_err(save)?;
    let (_, path) = file.keep().map_err(|e| save(e.error))?;
    Ok(path)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_tool_follows_the_display() {
        let wayland = |n: &str| (n == "WAYLAND_DISPLAY").then(|| "wayland-0".to_string());
        let x11 = |n: &str| (n == "DISPLAY").then(|| ":0".to_string());
        let none = |_: &str| None;
        assert_eq!(candidates(&wayland)[0].0, "wl-paste");
        assert_eq!(candidates(&x11)[0].0, "xclip");
        assert_eq!(candidates(&none).is_empty(), !cfg!(target_os = "macos"));
    }
}
