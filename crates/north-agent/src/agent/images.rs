//! Images and PDFs in a session: attached to the user's message
//! (`@shot.png`, `@doc.pdf`, `--image`), or an image returned by a tool
//! (`read_file` on a picture) — then it follows its result, which keeps
//! only a note of it.

use north_protocol::{ContentBlock, Role, ToolOutcome};
use serde_json::json;

use super::Agent;

/// Why a picture or PDF the user named was not attached.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    /// The file could not be read.
    #[error("{0}")]
    Read(#[from] std::io::Error),
    /// The file is larger than any provider takes.
    #[error("{size} bytes: over 50 MiB")]
    TooLarge {
        /// The file's size in bytes.
        size: u64,
    },
    /// The file is not an image or PDF North can send.
    #[error("{0}")]
    Media(#[from] north_tools::media::MediaError),
}

impl Agent {
    /// Attaches the picture or PDF at `path` — one the user pasted or
    /// named themselves, wherever it is — to the next prompt.
    pub fn attach_image_file(&mut self, path: &std::path::Path) -> Result<(), AttachError> {
        let size = std::fs::metadata(path)?.len();
        if size > 50 * 1024 * 1024 {
            return Err(AttachError::TooLarge { size });
        }
        let bytes = std::fs::read(path)?;
        let block = attachment(&path.to_string_lossy(), &bytes)?;
        self.conv.pending_images.push(block);
        Ok(())
    }

    /// How many images and documents wait for the next prompt.
    pub(super) fn pending_attachments(&self) -> usize {
        self.conv.pending_images.len()
    }

    /// Queues an attachment [`attachment`] made.
    pub(super) fn push_attachment(&mut self, block: ContentBlock) {
        self.conv.pending_images.push(block);
    }

    /// A clear refusal, before any request, when images are attached for
    /// a model the catalogue marks text-only.
    pub(super) fn images_accepted(&self) -> Result<(), String> {
        // A PDF goes as its pages' text where a model reads no documents.
        let images = self
            .conv
            .pending_images
            .iter()
            .filter(|b| b.is_image())
            .count();
        if images == 0 {
            return Ok(());
        }
        match north_llm::catalog::accepts_images(&self.opts.model) {
            Some(false) => Err(format!(
                "{} reads text only: the attached image{} cannot be sent; remove {} or switch to a model that sees images (/model)",
                self.opts.model,
                if images == 1 { "" } else { "s" },
                if images == 1 { "it" } else { "them" },
            )),
            _ => Ok(()),
        }
    }

    /// Adds the pending images to the user's message just taken.
    pub(super) fn take_images(&mut self) {
        let images = std::mem::take(&mut self.conv.pending_images);
        if images.is_empty() {
            return;
        }
        if let Some(m) = self
            .conv
            .messages
            .last_mut()
            .filter(|m| m.role == Role::User)
        {
            m.content.extend(images);
            let at = self.conv.messages.len() - 1;
            self.touched(at);
        }
    }
}

/// The content block for a file the user attached: a PDF (by its
/// extension or its first bytes) as a document, else an image.
pub(super) fn attachment(
    name: &str,
    bytes: &[u8],
) -> Result<ContentBlock, north_tools::media::MediaError> {
    use north_tools::media;
    if media::is_pdf_path(name) || bytes.starts_with(b"%PDF-") {
        let pdf = media::prepare_pdf(bytes)?;
        let name = std::path::Path::new(name)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| name.to_string());
        return Ok(ContentBlock::Document {
            name,
            media_type: "application/pdf".into(),
            data: pdf.data,
            pages: pdf.pages,
        });
    }
    let image = media::prepare_image(bytes)?;
    Ok(ContentBlock::Image {
        media_type: image.media_type,
        data: image.data,
    })
}

/// Splits an image a tool returned (`output.image = {media_type, data}`)
/// out of its outcome: the outcome keeps a note, the image becomes its own
/// block after the result.
pub(super) fn split_image(outcome: &ToolOutcome) -> (ToolOutcome, Option<ContentBlock>) {
    let mut outcome = outcome.clone();
    let image = outcome
        .output
        .as_object_mut()
        .and_then(|o| o.remove("image"))
        .and_then(|img| {
            let media_type = img.get("media_type")?.as_str()?.to_string();
            let data = img.get("data")?.as_str()?.to_string();
            Some((media_type, data))
        });
    let block = image.map(|(media_type, data)| {
        if let Some(o) = outcome.output.as_object_mut() {
            o.insert(
                "image".into(),
                json!(format!(
                    "{media_type}, {} bytes: sent as an image",
                    data.len() * 3 / 4
                )),
            );
        }
        ContentBlock::Image { media_type, data }
    });
    (outcome, block)
}
