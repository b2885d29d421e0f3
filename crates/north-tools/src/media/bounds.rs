//! Bounds on what an untrusted document may make North allocate.
//!
//! A PDF is a few kilobytes of compressed streams that can inflate a
//! thousandfold each, and a parser keeps what it inflated. So before a PDF
//! is parsed, every Flate stream in it is inflated once into a counter —
//! nothing kept — and the file is refused when one stream or all of them
//! together pass [`MAX_STREAM_BYTES`] / [`MAX_INFLATED_BYTES`]. The parser
//! then runs with the same per-stream ceiling, so a filter this scan does
//! not count (LZW, run-length) cannot pass it either. Images are decoded
//! under [`image_limits`]. Over a bound is a clear refusal, never a large
//! allocation.

use std::io::Read;

/// Most bytes one PDF stream may inflate to.
pub(crate) const MAX_STREAM_BYTES: usize = 8 * 1024 * 1024;

/// Most bytes all of a PDF's streams together may inflate to.
pub(crate) const MAX_INFLATED_BYTES: u64 = 64 * 1024 * 1024;

/// Most pixels on either edge of an image North decodes.
const MAX_IMAGE_EDGE: u32 = 16_384;

/// Most bytes the image decoder may allocate for one image.
const MAX_IMAGE_ALLOC: u64 = 256 * 1024 * 1024;

/// Why a document was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoundError {
    /// One stream inflates past [`MAX_STREAM_BYTES`].
    #[error("one of its streams inflates past {} MB", MAX_STREAM_BYTES / (1024 * 1024))]
    Stream,
    /// All streams together inflate past [`MAX_INFLATED_BYTES`].
    #[error("its streams inflate past {} MB in all", MAX_INFLATED_BYTES / (1024 * 1024))]
    Total,
}

/// Checks that the Flate streams of a PDF stay within the bounds, by
/// inflating each into a counter.
pub(crate) fn check_pdf_streams(bytes: &[u8]) -> Result<(), BoundError> {
    let mut total: u64 = 0;
    let mut at = 0;
    while let Some(start) = find(&bytes[at..], b"stream").map(|i| at + i) {
        at = start + b"stream".len();
        // `endstream` itself, or a keyword inside a name or string.
        if start >= 3 && &bytes[start - 3..start] == b"end" {
            continue;
        }
        let mut data = at;
        if bytes.get(data) == Some(&b'\r') {
            data += 1;
        }
        if bytes.get(data) != Some(&b'\n') {
            continue;
        }
        data += 1;
        let end = find(&bytes[data..], b"endstream").map_or(bytes.len(), |i| data + i);
        let inflated = inflated_len(&bytes[data..end]);
        if inflated > MAX_STREAM_BYTES as u64 {
            return Err(BoundError::Stream);
        }
        total += inflated;
        if total > MAX_INFLATED_BYTES {
            return Err(BoundError::Total);
        }
        at = end;
    }
    Ok(())
}

/// How many bytes `data` inflates to (zlib), counted up to one past the
/// per-stream bound; 0 for data that is not zlib.
fn inflated_len(data: &[u8]) -> u64 {
    let decoder = flate2::read::ZlibDecoder::new(data);
    let mut limited = decoder.take(MAX_STREAM_BYTES as u64 + 1);
    let mut buf = [0u8; 16 * 1024];
    let mut count: u64 = 0;
    loop {
        match limited.read(&mut buf) {
            Ok(0) | Err(_) => return count,
            Ok(n) => count += n as u64,
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The decoder limits every image North reads is decoded under.
pub(crate) fn image_limits() -> image::Limits {
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_EDGE);
    limits.max_image_height = Some(MAX_IMAGE_EDGE);
    limits.max_alloc = Some(MAX_IMAGE_ALLOC);
    limits
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zlib(len: usize) -> Vec<u8> {
        let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        let chunk = vec![0u8; 64 * 1024];
        let mut left = len;
        while left > 0 {
            let n = left.min(chunk.len());
            enc.write_all(&chunk[..n]).unwrap();
            left -= n;
        }
        enc.finish().unwrap()
    }

    fn pdf_with(streams: &[Vec<u8>]) -> Vec<u8> {
        let mut out = b"%PDF-1.7\n".to_vec();
        for (i, s) in streams.iter().enumerate() {
            out.extend(
                format!(
                    "{} 0 obj\n<< /Length {} /Filter /FlateDecode >>\nstream\n",
                    i + 1,
                    s.len()
                )
                .as_bytes(),
            );
            out.extend(s);
            out.extend(b"\nendstream\nendobj\n");
        }
        out
    }

    #[test]
    fn a_stream_bomb_and_many_small_ones_are_refused() {
        assert_eq!(check_pdf_streams(&pdf_with(&[zlib(1024)])), Ok(()));
        let bomb = pdf_with(&[zlib(60 * 1024 * 1024)]);
        assert!(bomb.len() < 100 * 1024, "{}", bomb.len());
        assert_eq!(check_pdf_streams(&bomb), Err(BoundError::Stream));
        let many = pdf_with(&vec![zlib(7 * 1024 * 1024); 10]);
        assert_eq!(check_pdf_streams(&many), Err(BoundError::Total));
    }
}
