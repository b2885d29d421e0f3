//! Reading text files with bounded memory: by lines, or by byte offset for
//! files whose lines are too long to return whole (minified code, logs,
//! data dumps). A line is never held in memory beyond what is returned.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use serde::Serialize;

use crate::repo;
use crate::tool::Failure;

/// Most lines `read_file` returns in one call.
pub(crate) const MAX_READ_LINES: usize = 2000;
/// Most bytes `read_file` returns in one call.
pub(crate) const MAX_READ_BYTES: usize = 100_000;

/// What `read_file` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReadOutput {
    pub path: String,
    pub content: String,
    pub start_line: usize,
    pub end_line: usize,
    pub total_lines: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Where the returned bytes start, for byte-range reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Where to continue (`{"path": …, "offset": nextOffset}`) when the
    /// content stopped inside a line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn read_err(rel: &str) -> impl Fn(std::io::Error) -> Failure + '_ {
    move |e| Failure::new(format!("cannot read {rel}: {e}"))
}

fn refuse_binary(abs: &Path, rel: &str) -> Result<(), Failure> {
    if repo::file_is_binary(abs).map_err(read_err(rel))? {
        let size = std::fs::metadata(abs).map(|m| m.len()).unwrap_or(0);
        return Err(Failure::new(format!(
            "{rel} is a binary file ({size} bytes); only text can be read"
        )));
    }
    Ok(())
}

/// Reads one line into `buf`, keeping at most `keep` of its bytes and
/// consuming the rest without storing it. Returns the line's full length
/// (newline included); 0 at the end of the file.
fn read_line_capped<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    keep: usize,
) -> std::io::Result<usize> {
    let mut len = 0;
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(len);
        }
        let (take, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let room = keep.saturating_sub(buf.len());
        buf.extend_from_slice(&available[..take.min(room)]);
        reader.consume(take);
        len += take;
        if done {
            return Ok(len);
        }
    }
}

/// The longest prefix of `bytes` that ends on a UTF-8 character boundary.
fn whole_chars(bytes: &[u8]) -> usize {
    let mut end = bytes.len();
    // Step back over an incomplete trailing sequence (at most 3 bytes).
    for back in 1..=3.min(bytes.len()) {
        let b = bytes[bytes.len() - back];
        if b & 0b1100_0000 == 0b1000_0000 {
            continue;
        }
        let width = if b < 0x80 {
            1
        } else if b >= 0xF0 {
            4
        } else if b >= 0xE0 {
            3
        } else {
            2
        };
        if width > back {
            end = bytes.len() - back;
        }
        break;
    }
    end
}

fn text(bytes: Vec<u8>) -> (String, Option<String>) {
    match String::from_utf8(bytes) {
        Ok(s) => (s, None),
        Err(e) => (
            String::from_utf8_lossy(e.as_bytes()).into_owned(),
            Some("not valid UTF-8; invalid bytes are shown as U+FFFD".to_owned()),
        ),
    }
}

/// Reads lines `start..=end` of a text file. A line longer than what one
/// call returns is cut, with the byte offset to continue from.
pub(crate) fn read_lines(
    abs: &Path,
    rel: &str,
    start: usize,
    end: usize,
) -> Result<ReadOutput, Failure> {
    refuse_binary(abs, rel)?;
    let file = std::fs::File::open(abs).map_err(read_err(rel))?;
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let mut content = Vec::new();
    let (mut total, mut last, mut truncated) = (0usize, 0usize, false);
    let mut at: u64 = 0;
    let mut next_offset = None;
    let mut long_line: Option<(usize, usize)> = None;
    loop {
        line.clear();
        let wanted = total + 1 >= start && total < end && !truncated;
        let keep = if wanted { MAX_READ_BYTES + 1 } else { 0 };
        let n = read_line_capped(&mut reader, &mut line, keep).map_err(read_err(rel))?;
        if n == 0 {
            break;
        }
        total += 1;
        let line_start = at;
        at += n as u64;
        if !wanted {
            continue;
        }
        let full = n <= MAX_READ_BYTES;
        if total - start >= MAX_READ_LINES || (full && content.len() + n > MAX_READ_BYTES) {
            truncated = true;
            continue;
        }
        if full {
            content.extend_from_slice(&line);
            last = total;
            continue;
        }
        // A line longer than one call returns.
        truncated = true;
        if content.is_empty() {
            let cut = whole_chars(&line[..MAX_READ_BYTES]);
            content.extend_from_slice(&line[..cut]);
            last = total;
            next_offset = Some(line_start + cut as u64);
            long_line = Some((total, n));
        }
    }
    if total > 0 && start > total {
        return Err(Failure::new(format!(
            "range.start {start} is past the end of {rel}, which has {total} lines"
        )));
    }
    let (content, invalid) = text(content);
    let note = match (long_line, next_offset, truncated) {
        (Some((n, len)), Some(next), _) => Some(format!(
            "line {n} is {len} bytes long; this is its first part. Continue with {{\"path\": {rel:?}, \"offset\": {next}}}"
        )),
        (_, _, true) => Some(format!(
            "output cut at line {last}; read more with range {{start: {}, end: ...}}",
            last + 1
        )),
        _ => invalid,
    };
    Ok(ReadOutput {
        path: rel.to_owned(),
        content,
        start_line: if total == 0 { 0 } else { start },
        end_line: last,
        total_lines: total,
        truncated,
        offset: None,
        next_offset,
        note,
    })
}

/// Counts newlines in `reader` until EOF or `limit` bytes.
fn count_newlines<R: Read>(reader: &mut R, limit: u64) -> std::io::Result<usize> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut left = limit;
    let mut lines = 0;
    while left > 0 {
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = match reader.read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        lines += buf[..n].iter().filter(|b| **b == b'\n').count();
        left -= n as u64;
    }
    Ok(lines)
}

/// Reads up to [`MAX_READ_BYTES`] from byte `offset` (moved forward to the
/// next whole character), with the lines that span and where to continue.
pub(crate) fn read_from_offset(abs: &Path, rel: &str, offset: u64) -> Result<ReadOutput, Failure> {
    refuse_binary(abs, rel)?;
    let len = std::fs::metadata(abs).map_err(read_err(rel))?.len();
    if offset > len {
        return Err(Failure::new(format!(
            "offset {offset} is past the end of {rel}, which has {len} bytes"
        )));
    }
    let mut file = std::fs::File::open(abs).map_err(read_err(rel))?;
    let before = count_newlines(&mut file, offset).map_err(read_err(rel))?;
    let mut window = Vec::with_capacity(MAX_READ_BYTES.min(len as usize));
    (&mut file)
        .take(MAX_READ_BYTES as u64)
        .read_to_end(&mut window)
        .map_err(read_err(rel))?;
    // Skip a partial character at the start; stop before one at the end.
    let skip = window
        .iter()
        .take(3)
        .take_while(|b| **b & 0b1100_0000 == 0b1000_0000)
        .count();
    let end = if offset + (window.len() as u64) < len {
        whole_chars(&window)
    } else {
        window.len()
    };
    let bytes = window[skip..end.max(skip)].to_vec();
    let start = offset + skip as u64;
    let next = start + bytes.len() as u64;
    let inside = bytes.iter().filter(|b| **b == b'\n').count();
    // The bytes after the window (the file position is there now).
    let after = count_newlines(&mut file, u64::MAX).map_err(read_err(rel))?;
    let total = before + inside + after + usize::from(len > 0 && !ends_with_newline(abs, len));
    // A newline that ends the window closes its last line; it starts none.
    let end_line = before + 1 + inside - usize::from(bytes.last() == Some(&b'\n'));
    let (content, invalid) = text(bytes);
    let more = next < len;
    Ok(ReadOutput {
        path: rel.to_owned(),
        content,
        start_line: before + 1,
        end_line: end_line.max(before + 1),
        total_lines: total,
        truncated: more,
        offset: Some(start),
        next_offset: more.then_some(next),
        note: if more {
            Some(format!(
                "bytes {start}..{next} of {len}; continue with {{\"path\": {rel:?}, \"offset\": {next}}}"
            ))
        } else {
            invalid
        },
    })
}

fn ends_with_newline(abs: &Path, len: u64) -> bool {
    let Ok(mut f) = std::fs::File::open(abs) else {
        return true;
    };
    let mut last = [0u8];
    f.seek(SeekFrom::Start(len - 1)).is_ok() && f.read_exact(&mut last).is_ok() && last[0] == b'\n'
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn whole_chars_never_splits_a_character() {
        let s = "aé€😀".as_bytes();
        for cut in 0..=s.len() {
            let end = whole_chars(&s[..cut]);
            assert!(std::str::from_utf8(&s[..end]).is_ok(), "{cut}");
            assert!(cut - end < 4);
        }
    }

    #[test]
    fn a_capped_line_read_keeps_only_what_was_asked() {
        let mut r = std::io::Cursor::new(b"abcdefgh\nxy".to_vec());
        let mut buf = Vec::new();
        assert_eq!(read_line_capped(&mut r, &mut buf, 3).unwrap(), 9);
        assert_eq!(buf, b"abc");
        buf.clear();
        assert_eq!(read_line_capped(&mut r, &mut buf, 10).unwrap(), 2);
        assert_eq!(buf, b"xy");
        buf.clear();
        assert_eq!(read_line_capped(&mut r, &mut buf, 10).unwrap(), 0);
    }
}
