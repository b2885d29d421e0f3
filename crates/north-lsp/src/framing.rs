//! LSP's framing: `Content-Length: N` headers, a blank line, N bytes of
//! JSON. Bounded: a header line or a body past its limit is an error, not
//! an allocation the server chose.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The largest message North reads (a flood of diagnostics is cut here).
pub const MAX_MESSAGE: usize = 8 * 1024 * 1024;
/// The longest header line.
const MAX_HEADER: usize = 1024;

/// Why a message could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FramingError {
    /// The stream failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A header North cannot read.
    #[error("bad header: {0}")]
    Header(String),
    /// A message past [`MAX_MESSAGE`].
    #[error("a message of {0} bytes is past the limit of {MAX_MESSAGE}")]
    TooLarge(usize),
    /// The body is not JSON.
    #[error("the body is not JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// Reads one message; `None` at the end of the stream.
pub async fn read<R: AsyncBufRead + Unpin>(
    reader: &mut R,
) -> Result<Option<serde_json::Value>, FramingError> {
    let mut length = None;
    loop {
        let mut line = Vec::new();
        let n = (&mut *reader)
            .take(MAX_HEADER as u64)
            .read_until(b'\n', &mut line)
            .await?;
        if n == 0 {
            return Ok(None);
        }
        if !line.ends_with(b"\n") {
            return Err(FramingError::Header("a header line past 1 KiB".into()));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            break;
        }
        if let Some((name, value)) = text.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            let n: usize = value
                .trim()
                .parse()
                .map_err(|_| FramingError::Header(text.to_string()))?;
            length = Some(n);
        }
    }
    let n = length.ok_or_else(|| FramingError::Header("no Content-Length".into()))?;
    if n > MAX_MESSAGE {
        return Err(FramingError::TooLarge(n));
    }
    let mut body = vec![0u8; n];
    reader.read_exact(&mut body).await?;
    Ok(Some(serde_json::from_slice(&body)?))
}

/// Writes one message.
pub async fn write<W: AsyncWrite + Unpin>(
    writer: &mut W,
    message: &serde_json::Value,
) -> Result<(), FramingError> {
    let body = serde_json::to_vec(message)?;
    writer
        .write_all(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes())
        .await?;
    writer.write_all(&body).await?;
    writer.flush().await?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn messages_round_trip_and_limits_hold() {
        let mut buf = Vec::new();
        write(&mut buf, &serde_json::json!({"a": 1})).await.unwrap();
        write(&mut buf, &serde_json::json!({"b": "ü"}))
            .await
            .unwrap();
        let mut r = tokio::io::BufReader::new(&buf[..]);
        assert_eq!(read(&mut r).await.unwrap().unwrap()["a"], 1);
        assert_eq!(read(&mut r).await.unwrap().unwrap()["b"], "ü");
        assert!(read(&mut r).await.unwrap().is_none());
        let huge = format!("Content-Length: {}\r\n\r\n", MAX_MESSAGE + 1);
        let mut r = tokio::io::BufReader::new(huge.as_bytes());
        assert!(matches!(read(&mut r).await, Err(FramingError::TooLarge(_))));
        let long = format!("X-{}: y\r\n", "a".repeat(2000));
        let mut r = tokio::io::BufReader::new(long.as_bytes());
        assert!(matches!(read(&mut r).await, Err(FramingError::Header(_))));
    }
}
