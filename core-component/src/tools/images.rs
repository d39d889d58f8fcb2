//! Images a tool shows the model: which formats are sent, how large, and a host tool's
//! images checked before any reaches a request (a provider refuses the whole request, and so
//! the session's next turn, over one bad image).

use super::ToolOutput;
use crate::llm::ImageData;
use crate::ports::HostToolOutput;
use base64::Engine;

/// Largest image sent: its base64 form stays within the 5 MB that Anthropic accepts, the
/// strictest of the three providers.
pub const MAX_IMAGE_BYTES: usize = 3_750_000;

/// The most images one tool result carries, and their most bytes together (a request with
/// several full-size images would pass the providers' request limits); the rest are named in
/// its text.
pub const MAX_IMAGES_PER_RESULT: usize = 8;
pub const MAX_IMAGE_BYTES_PER_RESULT: usize = MAX_IMAGE_BYTES;

/// The longest side, in pixels, of an image sent (Anthropic refuses longer ones).
pub const MAX_SIDE_PIXELS: usize = 8_000;

/// The image formats all three providers accept, told by their signatures rather than by
/// a name or a declared type.
pub fn image_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// The media type of an image that can be sent to a model that reads images, told by its
/// bytes; otherwise why not. A provider refuses a whole request over one image it cannot
/// read, and the image stays in the history, so what is sent is checked first: the format's
/// header (the size in pixels) and its end (a file cut short), not every pixel.
pub fn acceptable(bytes: &[u8]) -> Result<&'static str, String> {
    let media_type = image_type(bytes).ok_or("it is not a PNG, JPEG, GIF or WebP image")?;
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(format!(
            "it is larger than the {MAX_IMAGE_BYTES} bytes an image may be"
        ));
    }
    if !ends_whole(media_type, bytes) {
        return Err(format!(
            "it is cut short (the end of the {media_type} data is missing)"
        ));
    }
    let size = imagesize::blob_size(bytes).map_err(|_| format!("its {media_type} header cannot be read"))?;
    if size.width == 0 || size.height == 0 || size.width.max(size.height) > MAX_SIDE_PIXELS {
        return Err(format!(
            "it is {} x {} pixels, and an image sent has 1 to {MAX_SIDE_PIXELS} on a side",
            size.width, size.height
        ));
    }
    Ok(media_type)
}

/// Whether the file ends as its format ends: PNG's IEND chunk, JPEG's end-of-image marker,
/// GIF's trailer (padding after them is allowed), WebP's RIFF length.
fn ends_whole(media_type: &str, bytes: &[u8]) -> bool {
    let trimmed = match bytes.iter().rposition(|&b| b != 0) {
        Some(last) => &bytes[..=last],
        None => return false,
    };
    match media_type {
        "image/png" => trimmed.ends_with(b"IEND\xAE\x42\x60\x82"),
        "image/jpeg" => trimmed.ends_with(&[0xFF, 0xD9]),
        "image/gif" => trimmed.ends_with(b";"),
        "image/webp" => bytes
            .get(4..8)
            .map(|len| u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize + 8)
            .is_some_and(|riff| riff == bytes.len() || riff + 1 == bytes.len()),
        _ => false,
    }
}

/// `bytes` as image content of `media_type`.
pub fn encoded(media_type: &str, bytes: &[u8]) -> ImageData {
    ImageData {
        media_type: media_type.to_string(),
        data_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
    }
}

/// A host tool's output as the model gets it: each image that a model accepting images can
/// be sent (a known format by its bytes, within the size limit, within the count) is kept
/// with the type its bytes show; every other one is named on a line of the text instead.
pub fn from_host(output: HostToolOutput, images_supported: bool) -> ToolOutput {
    let mut text = output.text;
    let mut images = Vec::new();
    let mut total = 0;
    let mut note = |line: String| {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&line);
    };
    for (index, image) in output.images.iter().enumerate() {
        let size = image.data.len();
        let declared = image.media_type.chars().take(100).collect::<String>();
        let declared = declared.escape_debug();
        let why = match acceptable(&image.data) {
            _ if !images_supported => "this model does not accept images".to_string(),
            Err(why) => why,
            Ok(_) if images.len() == MAX_IMAGES_PER_RESULT => {
                format!("a result carries at most {MAX_IMAGES_PER_RESULT} images")
            }
            Ok(_) if total + size > MAX_IMAGE_BYTES_PER_RESULT => {
                format!("a result's images hold at most {MAX_IMAGE_BYTES_PER_RESULT} bytes together")
            }
            Ok(media_type) => {
                total += size;
                images.push(encoded(media_type, &image.data));
                continue;
            }
        };
        note(format!(
            "[image {} ({declared}, {size} bytes) not shown: {why}]",
            index + 1
        ));
    }
    ToolOutput { text, images }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::ports::HostImage;

    fn decoded(base64: &str) -> Vec<u8> {
        base64::engine::general_purpose::STANDARD.decode(base64).unwrap()
    }

    /// 1 x 1 pictures written by Pillow.
    fn pictures() -> [(Vec<u8>, &'static str); 4] {
        [
            (
                decoded(
                    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGM4IScHAAK2AQU0pnWqAAAAAElFTkSuQmCC",
                ),
                "image/png",
            ),
            (
                decoded("R0lGODdhAQABAIEAAMgeHgAAAAAAAAAAACwAAAAAAQABAAAIBAABBAQAOw=="),
                "image/gif",
            ),
            (
                decoded(
                    "UklGRjoAAABXRUJQVlA4IC4AAACwAQCdASoBAAEAAUAmJaACdLoABDAAAP7x3I/4DdfFtMv/vYL/3YL/3YL/WwAA",
                ),
                "image/webp",
            ),
            (decoded(JPEG), "image/jpeg"),
        ]
    }

    const JPEG: &str = "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/2wBDAQkJCQwLDBgNDRgyIRwhMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjL/wAARCAABAAEDASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwDkKKKK8U/TD//Z";

    fn output(images: Vec<(&str, Vec<u8>)>) -> HostToolOutput {
        HostToolOutput {
            text: "done".to_string(),
            images: images
                .into_iter()
                .map(|(media_type, data)| HostImage {
                    media_type: media_type.to_string(),
                    data,
                })
                .collect(),
        }
    }

    #[test]
    fn whole_pictures_of_each_format_are_acceptable_and_broken_ones_say_why() {
        for (bytes, media_type) in pictures() {
            assert_eq!(acceptable(&bytes), Ok(media_type));
            let cut = &bytes[..bytes.len() - 3];
            let why = acceptable(cut).unwrap_err();
            assert!(
                why.contains("cut short") || why.contains("header"),
                "{media_type}: {why}"
            );
        }
        let wide = decoded(
            "iVBORw0KGgoAAAANSUhEUgAAH0EAAAABCAAAAACZyqz4AAAAHUlEQVR4nO3BAQEAAACAkP6v7ggKAAAAAAAAAKgBH0IAAWX13dsAAAAASUVORK5CYII=",
        );
        assert_eq!(
            acceptable(&wide).unwrap_err(),
            "it is 8001 x 1 pixels, and an image sent has 1 to 8000 on a side"
        );
        assert_eq!(
            acceptable(b"<svg/>").unwrap_err(),
            "it is not a PNG, JPEG, GIF or WebP image"
        );
    }

    #[test]
    fn an_image_is_sent_with_the_type_its_bytes_show() {
        let [(png, _), ..] = pictures();
        let shown = from_host(output(vec![("image/jpeg", png.clone())]), true);
        assert_eq!(shown.text, "done");
        assert_eq!(shown.images, vec![encoded("image/png", &png)]);
    }

    #[test]
    fn images_that_cannot_be_sent_are_named_in_the_text() {
        let [(png, _), ..] = pictures();
        let mut big = png.clone();
        big.resize(MAX_IMAGE_BYTES + 1, 0);
        let shown = from_host(
            output(vec![
                ("image/svg+xml", b"<svg/>".to_vec()),
                ("image/png", big.clone()),
                ("image/png", png),
            ]),
            true,
        );
        assert_eq!(shown.images.len(), 1);
        assert_eq!(
            shown.text,
            format!(
                "done\n[image 1 (image/svg+xml, 6 bytes) not shown: it is not a PNG, JPEG, GIF or WebP image]\n\
                 [image 2 (image/png, {} bytes) not shown: it is larger than the {MAX_IMAGE_BYTES} bytes an image may be]",
                big.len()
            )
        );
    }

    #[test]
    fn a_model_without_images_gets_a_line_per_image_and_count_and_bytes_are_bounded() {
        let [(png, _), ..] = pictures();
        let shown = from_host(output(vec![("image/png", png.clone())]), false);
        assert!(shown.images.is_empty());
        assert_eq!(
            shown.text,
            "done\n[image 1 (image/png, 69 bytes) not shown: this model does not accept images]"
        );
        let many = from_host(
            output(vec![("image/png", png.clone()); MAX_IMAGES_PER_RESULT + 1]),
            true,
        );
        assert_eq!(many.images.len(), MAX_IMAGES_PER_RESULT);
        assert!(
            many.text
                .ends_with("not shown: a result carries at most 8 images]"),
            "{}",
            many.text
        );
        // Two images that are each small enough but too large together.
        let mut padded = png.clone();
        padded.resize(MAX_IMAGE_BYTES_PER_RESULT / 2 + 1, 0);
        let two = from_host(
            output(vec![("image/png", padded.clone()), ("image/png", padded)]),
            true,
        );
        assert_eq!(two.images.len(), 1);
        assert!(
            two.text.ends_with("hold at most 3750000 bytes together]"),
            "{}",
            two.text
        );
    }
}
