//! Images for the model: what `@shot.png`, `--image` and `read_file` send.
//!
//! An image within the providers' limits goes as it is; a larger one (in
//! bytes or pixels) is scaled down to [`TARGET_EDGE`] on its longer side
//! and re-encoded; one that still does not fit, or is not an image at
//! all, is refused with what to do.

pub mod bounds;

use std::io::Cursor;

use base64::Engine;

/// Bytes of one image, at most (5 MB once base64 encoded: Anthropic's
/// per-image limit, under OpenAI's).
pub(crate) const MAX_IMAGE_BYTES: usize = 3_750_000;
/// Pixels on the longer side above which an image is scaled down.
pub(crate) const MAX_EDGE: u32 = 2000;
/// The longer side of a scaled-down image.
pub(crate) const TARGET_EDGE: u32 = 1568;

/// An image ready for a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The bytes, base64 encoded.
    pub data: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Whether it was scaled down to fit.
    pub downscaled: bool,
}

/// Bytes of one PDF, at most (Anthropic's request limit is 32 MB, base64
/// included).
pub(crate) const MAX_PDF_BYTES: usize = 20 * 1024 * 1024;
/// Pages of one PDF, at most (Anthropic reads up to 100).
pub(crate) const MAX_PDF_PAGES: usize = 100;

/// A PDF ready for a request: the file for providers that read documents,
/// the text of its pages for the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pdf {
    /// The bytes, base64 encoded.
    pub data: String,
    /// The text of each page, in order; empty for a page with no text
    /// layer (a scan).
    pub pages: Vec<String>,
}

/// Why an image cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MediaError {
    /// The bytes are not an image North reads.
    #[error("not a PNG, JPEG, GIF or WebP image ({0})")]
    NotAnImage(String),
    /// Even scaled down it is over the limit.
    #[error(
        "the image is still {0} bytes after scaling it down (the limit is {MAX_IMAGE_BYTES}); crop it or save it smaller"
    )]
    TooLarge(usize),
    /// The bytes are not a PDF North reads.
    #[error("not a PDF North can read ({0})")]
    NotAPdf(String),
    /// A PDF past the size or page limit.
    #[error("{0}; split it or attach the pages you need")]
    PdfTooLarge(String),
    /// A document that would inflate past North's bounds (a bomb).
    #[error("the document is refused: {0}; North reads at most that much of one document")]
    Unbounded(#[source] bounds::BoundError),
    /// A PDF locked with a password.
    #[error("the PDF is encrypted; save an unlocked copy and attach that")]
    PdfEncrypted,
}

/// Whether `path` names a PDF by its extension.
pub fn is_pdf_path(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("pdf"))
}

/// `bytes` as a PDF a provider accepts, with the text of each page.
pub fn prepare_pdf(bytes: &[u8]) -> Result<Pdf, MediaError> {
    if !bytes.starts_with(b"%PDF-") {
        return Err(MediaError::NotAPdf("it does not start with %PDF-".into()));
    }
    if bytes.len() > MAX_PDF_BYTES {
        return Err(MediaError::PdfTooLarge(format!(
            "{} bytes (the limit is {MAX_PDF_BYTES})",
            bytes.len()
        )));
    }
    bounds::check_pdf_streams(bytes).map_err(MediaError::Unbounded)?;
    let options = lopdf::LoadOptions {
        max_decompressed_size: Some(bounds::MAX_STREAM_BYTES),
        ..lopdf::LoadOptions::default()
    };
    let doc = lopdf::Document::load_mem_with_options(bytes, options)
        .map_err(|e| MediaError::NotAPdf(e.to_string()))?;
    if doc.is_encrypted() {
        return Err(MediaError::PdfEncrypted);
    }
    let numbers: Vec<u32> = doc.get_pages().keys().copied().collect();
    if numbers.len() > MAX_PDF_PAGES {
        return Err(MediaError::PdfTooLarge(format!(
            "{} pages (the limit is {MAX_PDF_PAGES})",
            numbers.len()
        )));
    }
    // A page whose text cannot be read (an odd font encoding, a scan)
    // stays empty: the provider that reads the file still sees it.
    let pages = numbers
        .iter()
        .map(|n| {
            doc.extract_text_with_limit(&[*n], bounds::MAX_STREAM_BYTES)
                .map(|t| t.trim().to_string())
                .unwrap_or_default()
        })
        .collect();
    Ok(Pdf {
        data: encoded(bytes),
        pages,
    })
}

#[doc(hidden)]
/// A small PDF with one page of text per entry of `pages` (Helvetica,
/// ASCII): what tests attach.
pub fn sample_pdf(pages: &[&str]) -> Vec<u8> {
    let n = pages.len();
    // Objects: 1 catalog, 2 pages, 3 font, then a page and its content
    // stream for each page.
    let mut objects: Vec<String> = Vec::new();
    objects.push("<< /Type /Catalog /Pages 2 0 R >>".into());
    let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    objects.push(format!(
        "<< /Type /Pages /Kids [{}] /Count {n} >>",
        kids.join(" ")
    ));
    objects.push("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".into());
    for (i, text) in pages.iter().enumerate() {
        let escaped = text
            .replace('\\', "\\\\")
            .replace('(', "\\(")
            .replace(')', "\\)");
        let stream = format!("BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET");
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        ));
        objects.push(format!(
            "<< /Length {} >>\nstream\n{stream}\nendstream",
            stream.len()
        ));
    }
    let mut out = String::from("%PDF-1.4\n");
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.push_str(&format!("{} 0 obj\n{body}\nendobj\n", i + 1));
    }
    let xref = out.len();
    out.push_str(&format!(
        "xref\n0 {}\n0000000000 65535 f \n",
        objects.len() + 1
    ));
    for offset in offsets {
        out.push_str(&format!("{offset:010} 00000 n \n"));
    }
    out.push_str(&format!(
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    ));
    out.into_bytes()
}

/// The media type of `path` by its extension, if it is an image.
pub fn image_media_type(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return None,
    })
}

fn encoded(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// `bytes` as an image a provider accepts: as they are when within the
/// limits, else scaled down and re-encoded.
pub fn prepare_image(bytes: &[u8]) -> Result<Image, MediaError> {
    let reader = image::ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| MediaError::NotAnImage(e.to_string()))?;
    let format = reader
        .format()
        .ok_or_else(|| MediaError::NotAnImage("unknown format".into()))?;
    let media_type = match format {
        image::ImageFormat::Png => "image/png",
        image::ImageFormat::Jpeg => "image/jpeg",
        image::ImageFormat::Gif => "image/gif",
        image::ImageFormat::WebP => "image/webp",
        other => return Err(MediaError::NotAnImage(format!("{other:?}"))),
    };
    let mut reader = reader;
    reader.limits(bounds::image_limits());
    let (width, height) = reader
        .into_dimensions()
        .map_err(|e| MediaError::NotAnImage(e.to_string()))?;
    if bytes.len() <= MAX_IMAGE_BYTES && width.max(height) <= MAX_EDGE {
        return Ok(Image {
            media_type: media_type.into(),
            data: encoded(bytes),
            width,
            height,
            downscaled: false,
        });
    }
    let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(bounds::image_limits());
    let decoded = reader
        .decode()
        .map_err(|e| MediaError::NotAnImage(e.to_string()))?;
    let scaled = if width.max(height) > TARGET_EDGE {
        decoded.resize(
            TARGET_EDGE,
            TARGET_EDGE,
            image::imageops::FilterType::Triangle,
        )
    } else {
        decoded
    };
    // Screenshots stay PNG (sharp text); photos become JPEG; either way a
    // JPEG is the fallback when the result is still too big.
    let mut attempts: Vec<(image::ImageFormat, &str)> = Vec::new();
    if matches!(format, image::ImageFormat::Png | image::ImageFormat::Gif) {
        attempts.push((image::ImageFormat::Png, "image/png"));
    }
    attempts.push((image::ImageFormat::Jpeg, "image/jpeg"));
    let mut last = 0;
    for (out_format, out_type) in attempts {
        let mut out = Cursor::new(Vec::new());
        let result = if out_format == image::ImageFormat::Jpeg {
            image::DynamicImage::ImageRgb8(scaled.to_rgb8()).write_to(&mut out, out_format)
        } else {
            scaled.write_to(&mut out, out_format)
        };
        if result.is_err() {
            continue;
        }
        let out = out.into_inner();
        last = out.len();
        if out.len() <= MAX_IMAGE_BYTES {
            return Ok(Image {
                media_type: out_type.into(),
                data: encoded(&out),
                width: scaled.width(),
                height: scaled.height(),
                downscaled: true,
            });
        }
    }
    Err(MediaError::TooLarge(last))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_pdf_gives_the_text_of_each_page_and_a_non_pdf_is_refused() {
        let pdf = prepare_pdf(&sample_pdf(&["Hello page one", "Second (page) two"])).unwrap();
        assert_eq!(pdf.pages.len(), 2);
        assert!(pdf.pages[0].contains("Hello page one"), "{:?}", pdf.pages);
        assert!(
            pdf.pages[1].contains("Second (page) two"),
            "{:?}",
            pdf.pages
        );
        assert!(!pdf.data.is_empty());
        let err = prepare_pdf(b"not a pdf").unwrap_err();
        assert!(err.to_string().contains("not a PDF"), "{err}");
        let err = prepare_pdf(b"%PDF-1.4 garbage").unwrap_err();
        assert!(matches!(err, MediaError::NotAPdf(_)), "{err}");
    }

    fn png(w: u32, h: u32) -> Vec<u8> {
        let img = image::RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 7])
        });
        let mut out = Cursor::new(Vec::new());
        img.write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    }

    #[test]
    fn a_small_image_goes_as_it_is_and_a_large_one_is_scaled_down() {
        let small = png(40, 30);
        let img = prepare_image(&small).unwrap();
        assert_eq!(
            (
                img.media_type.as_str(),
                img.width,
                img.height,
                img.downscaled
            ),
            ("image/png", 40, 30, false)
        );
        assert_eq!(img.data, encoded(&small));
        let big = prepare_image(&png(3000, 1500)).unwrap();
        assert!(big.downscaled);
        assert_eq!((big.width, big.height), (TARGET_EDGE, TARGET_EDGE / 2));
        assert!(big.data.len() * 3 / 4 <= MAX_IMAGE_BYTES);
    }

    #[test]
    fn what_is_not_an_image_is_refused() {
        assert!(matches!(
            prepare_image(b"plain text"),
            Err(MediaError::NotAnImage(_))
        ));
        assert_eq!(image_media_type("shots/a.PNG"), Some("image/png"));
        assert_eq!(image_media_type("notes.txt"), None);
    }
}
