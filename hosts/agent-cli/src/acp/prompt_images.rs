//! A prompt's images. The core's inputs are text, while its `read_file` gives a model that
//! takes images the picture itself: so each image is saved in the session's scratch folder
//! (outside the workspace, where the agent may read) and the input names it, asking the
//! model to open it. A deviation from sending the image in the user's message: it costs the
//! model one tool call, and a model without images is told so by `read_file`.

use agent_client_protocol as acp;
use agent_client_protocol::v1::schema::ImageContent;
use base64::Engine as _;
use std::path::Path;

/// The largest image taken (after decoding).
const MAX_IMAGE: usize = 20 * 1024 * 1024;

/// Saves `image` (the prompt's block `number`) and returns the input's line naming it.
pub fn attach(scratch: Option<&str>, image: &ImageContent, number: usize) -> Result<String, acp::Error> {
    let invalid = |why: String| acp::Error::invalid_params().data(why);
    let extension = match image.mime_type.as_str() {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        other => {
            return Err(invalid(format!(
                "an image of type {other:?} is not taken: send PNG, JPEG, GIF or WebP"
            )));
        }
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(image.data.trim())
        .map_err(|e| invalid(format!("the image's data is not base64: {e}")))?;
    if bytes.len() > MAX_IMAGE {
        return Err(invalid(format!(
            "the image is {} bytes, more than the {MAX_IMAGE} taken",
            bytes.len()
        )));
    }
    let scratch = scratch.ok_or_else(|| {
        acp::Error::internal_error().data("this session has no scratch folder to keep the image in")
    })?;
    let folder = Path::new(scratch).join("prompt-images");
    std::fs::create_dir_all(&folder)
        .map_err(|e| acp::Error::internal_error().data(format!("cannot keep the image: {e}")))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let path = folder.join(format!("image-{stamp}-{number}.{extension}"));
    std::fs::write(&path, &bytes)
        .map_err(|e| acp::Error::internal_error().data(format!("cannot keep the image: {e}")))?;
    Ok(format!(
        "\n\n[The user attached an image ({}, {} bytes), saved as {}: open it with read_file to see it.]",
        image.mime_type,
        bytes.len(),
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_is_saved_and_named_and_other_types_are_refused() {
        let scratch = tempfile::tempdir().unwrap();
        let png = ImageContent::new("iVBORw0KGgo=", "image/png");
        let line = attach(Some(&scratch.path().to_string_lossy()), &png, 1).unwrap();
        assert!(line.contains("read_file") && line.contains(".png"), "{line}");
        let saved = std::fs::read_dir(scratch.path().join("prompt-images"))
            .unwrap()
            .count();
        assert_eq!(saved, 1);
        let svg = ImageContent::new("PHN2Zy8+", "image/svg+xml");
        let refused = attach(Some(&scratch.path().to_string_lossy()), &svg, 2).unwrap_err();
        assert!(format!("{refused:?}").contains("PNG, JPEG"), "{refused:?}");
    }
}
