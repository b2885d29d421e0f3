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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_fifo_device_or_huge_file_is_refused_not_read_forever() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none.json");
        assert!(read_settings(&missing).unwrap().is_none());

        let fine = dir.path().join("fine.json");
        std::fs::write(&fine, "{}").unwrap();
        assert_eq!(read_settings(&fine).unwrap().as_deref(), Some("{}"));

        let fifo = dir.path().join("fifo.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let err = read_settings(&fifo).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");

        let zero = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(read_settings(&zero).is_err());

        let huge = dir.path().join("huge.json");
        std::fs::write(&huge, vec![b' '; SETTINGS_MAX as usize + 1]).unwrap();
        let err = read_settings(&huge).unwrap_err();
        assert!(err.to_string().contains("larger than 1024 KiB"), "{err}");
    }
}
