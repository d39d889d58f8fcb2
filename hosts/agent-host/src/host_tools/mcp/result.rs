//! An MCP tool result as a host tool's output: text blocks as they are, embedded text
//! resources with their address, images (and image resources) decoded for the model (the
//! core decides which it can be shown), and a line naming each block it cannot be given
//! (audio, other binary resources, undecodable data).

use crate::host_tools::{ToolImage, ToolOutput};
use base64::Engine;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// The result's output; a result the server marked as an error is `Err` with its text.
pub fn output_of(result: CallToolResult) -> Result<ToolOutput, String> {
    let mut pieces = Vec::new();
    let mut images = Vec::new();
    for block in &result.content {
        match image_of(block, images.len()) {
            Some(Ok(image)) => images.push(image),
            Some(Err(note)) => pieces.push(note),
            None => pieces.push(block_text(block)),
        }
    }
    if pieces.is_empty()
        && images.is_empty()
        && let Some(structured) = &result.structured_content
    {
        pieces.push(structured.to_string());
    }
    let text = pieces.join("\n");
    if result.is_error == Some(true) {
        Err(if text.is_empty() {
            "the tool reported an error without a message".to_string()
        } else {
            text
        })
    } else {
        Ok(ToolOutput { text, images })
    }
}

/// The most images of one result that are decoded, and the longest base64 text decoded (a
/// little over the 3.75 MB the core sends of an image): the rest are named, not copied.
const MAX_IMAGES: usize = 8;
const MAX_IMAGE_BASE64: usize = 5_000_000;

/// A block that is an image (an image block, or a binary resource of an image type), when
/// `decoded` images came before it: the image, or a line saying why it is not passed on;
/// `None` for other blocks.
fn image_of(block: &ContentBlock, decoded: usize) -> Option<Result<ToolImage, String>> {
    let (what, mime_type, base64) = match block {
        ContentBlock::Image(image) => ("image".to_string(), image.mime_type.as_str(), &image.data),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::BlobResourceContents {
                uri,
                mime_type: Some(mime_type),
                blob,
                ..
            } if mime_type.starts_with("image/") => (format!("resource {uri}"), mime_type.as_str(), blob),
            _ => return None,
        },
        _ => return None,
    };
    let mime_type = crate::secrets::redact_known(mime_type);
    if decoded == MAX_IMAGES {
        return Some(Err(format!(
            "[{what}: {mime_type}; not shown: a result passes at most {MAX_IMAGES} images]"
        )));
    }
    if base64.len() > MAX_IMAGE_BASE64 {
        return Some(Err(not_passed(&what, &mime_type, base64).replace(
            "only text and images reach the model",
            "larger than an image the model is sent",
        )));
    }
    // Line breaks and missing padding are common in what servers send; both are accepted.
    let compact: String = base64.split_ascii_whitespace().collect();
    let lenient = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    Some(
        lenient
            .decode(compact)
            .map(|data| ToolImage {
                media_type: mime_type.clone(),
                data,
            })
            .map_err(|_| format!("[{what}: {mime_type}; not shown: its data is not valid base64]")),
    )
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Audio(audio) => not_passed("audio", &audio.mime_type, &audio.data),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => format!("[resource {uri}]\n{text}"),
            ResourceContents::BlobResourceContents {
                uri, mime_type, blob, ..
            } => {
                let kind = format!("resource {uri}");
                not_passed(&kind, mime_type.as_deref().unwrap_or("binary"), blob)
            }
            _ => "[a resource of a kind this host does not read]".to_string(),
        },
        ContentBlock::ResourceLink(link) => format!("[resource link: {} ({})]", link.uri, link.name),
        _ => "[content of a kind this host does not read]".to_string(),
    }
}

fn not_passed(kind: &str, mime_type: &str, base64: &str) -> String {
    let padding = base64.bytes().rev().take_while(|&b| b == b'=').count();
    let bytes = (base64.len() / 4 * 3).saturating_sub(padding);
    format!("[{kind}: {mime_type}, {bytes} bytes; not shown: only text and images reach the model]")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn result(value: serde_json::Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn blocks_become_text_and_images_and_what_cannot_be_sent_is_named() {
        let output = output_of(result(json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "iVBORw0\nKGgo", "mimeType": "image/png"},
            {"type": "image", "data": "not base64!", "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "file:///c.gif", "blob": "R0lGODlh", "mimeType": "image/gif"}},
            {"type": "resource_link", "uri": "file:///b.txt", "name": "b"}
        ]})))
        .unwrap();
        assert_eq!(
            output.text,
            "hello\n[image: image/png; not shown: its data is not valid base64]\n\
             [audio: audio/wav, 3 bytes; not shown: only text and images reach the model]\n\
             [resource file:///a.txt]\ninside\n[resource link: file:///b.txt (b)]"
        );
        assert_eq!(
            output.images,
            [
                ToolImage {
                    media_type: "image/png".to_string(),
                    data: b"\x89PNG\r\n\x1a\n".to_vec()
                },
                ToolImage {
                    media_type: "image/gif".to_string(),
                    data: b"GIF89a".to_vec()
                }
            ]
        );
    }

    #[test]
    fn errors_and_structured_results() {
        let error = output_of(result(
            json!({"content": [{"type": "text", "text": "no such file"}], "isError": true}),
        ));
        assert_eq!(error.unwrap_err(), "no such file");
        let structured = output_of(result(json!({"content": [], "structuredContent": {"sum": 3}})));
        assert_eq!(structured.unwrap().text, "{\"sum\":3}");
    }

    #[test]
    fn images_past_the_count_or_the_size_are_named_not_decoded() {
        let pixel = json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"});
        let huge =
            json!({"type": "image", "data": "A".repeat(MAX_IMAGE_BASE64 + 4), "mimeType": "image/png"});
        let mut content = vec![huge];
        content.extend(std::iter::repeat_n(pixel, MAX_IMAGES + 1));
        let output = output_of(result(json!({ "content": content }))).unwrap();
        assert_eq!(output.images.len(), MAX_IMAGES);
        assert_eq!(
            output.text,
            "[image: image/png, 3750003 bytes; not shown: larger than an image the model is sent]\n\
             [image: image/png; not shown: a result passes at most 8 images]"
        );
    }
}
