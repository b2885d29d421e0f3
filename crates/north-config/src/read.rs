//! Reading a settings file a repository may have planted: bounded, and
//! only a regular file.

use std::path::Path;

/// The most a settings file North reads may hold.
pub const SETTINGS_MAX: u64 = 1 << 20;

/// The text of a settings file (`Ok(None)`: there is none): a regular file
/// (or a link to one) of at most [`SETTINGS_MAX`] bytes. A repository's
/// link to `/dev/zero` or a fifo is refused instead of read forever.
pub fn read_settings(path: &Path) -> std::io::Result<Option<String>> {
    use std::io::Read;
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if meta.is_dir() {
        // The system's own words for it.
        return std::fs::read_to_string(path).map(Some);
    }
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > SETTINGS_MAX {
        return Err(std::io::Error::other(format!(
            "larger than {} KiB",
            SETTINGS_MAX / 1024
        )));
    }
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(SETTINGS_MAX)
        .read_to_string(&mut text)?;
    Ok(Some(text))
}
