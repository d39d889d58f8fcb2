//! An MCP tool result as the text a host tool returns: text blocks as they are, embedded text
//! resources with their address, and a line naming each block the model cannot be given yet
//! (host tools return text only: images, audio and binary resources are named, not sent).

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// The result's text; a result the server marked as an error is `Err` with that text.
pub fn text_of(result: CallToolResult) -> Result<String, String> {
    let mut pieces: Vec<String> = result.content.iter().map(block_text).collect();
    if pieces.is_empty()
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
        Ok(text)
    }
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => not_passed("image", &image.mime_type, &image.data),
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
    let kind_plural = if kind.starts_with("resource") {
        "binary resources"
    } else {
        "images and audio"
    };
    format!(
        "[{kind}: {mime_type}, {bytes} bytes; not shown: MCP tools' {kind_plural} are not passed to the model yet]"
    )
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
    fn blocks_become_text_and_what_cannot_be_sent_is_named() {
        let text = text_of(result(json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
            {"type": "resource_link", "uri": "file:///b.txt", "name": "b"}
        ]})))
        .unwrap();
        assert_eq!(
            text,
            "hello\n[image: image/png, 8 bytes; not shown: MCP tools' images and audio are not \
             passed to the model yet]\n[resource file:///a.txt]\ninside\n[resource link: file:///b.txt (b)]"
        );
    }

    #[test]
    fn errors_and_structured_results() {
        let error = text_of(result(
            json!({"content": [{"type": "text", "text": "no such file"}], "isError": true}),
        ));
        assert_eq!(error.unwrap_err(), "no such file");
        let structured = text_of(result(json!({"content": [], "structuredContent": {"sum": 3}})));
        assert_eq!(structured.unwrap(), "{\"sum\":3}");
    }
}
