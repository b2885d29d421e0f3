//! Images for the model: what `@shot.png`, `--image` and `read_file` send.
//!
//! An image within the providers' limits goes as it is; a larger one (in
//! bytes or pixels) is scaled down to [`TARGET_EDGE`] on its longer side
//! and re-encoded; one that still does not fit, or is not an image at
//! all, is refused with what to do.

use std::io::Cursor;

use base64::Engine;

/// File extensions sent as images.
pub const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp"];
/// Bytes of one image, at most (5 MB once base64 encoded: Anthropic's
/// per-image limit, under OpenAI's).
pub const MAX_IMAGE_BYTES: usize = 3_750_000;
/// Pixels on the longer side above which an image is scaled down.
pub const MAX_EDGE: u32 = 2000;
/// The longer side of a scaled-down image.
pub const TARGET_EDGE: u32 = 1568;

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
    let decoded = image::load_from_memory_with_format(bytes, format)
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
