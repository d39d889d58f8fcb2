//! Replies in Gemini's `streamGenerateContent?alt=sse` format: `data:`-only events (CRLF
//! separated, as Google sends them), each a whole `GenerateContentResponse` chunk; function
//! calls arrive whole and without ids; the last chunk has the finish reason and usage.

use super::{Block, Reply, split};
use serde_json::{Value, json};

fn chunk(parts: Vec<Value>, finish: Option<&str>) -> String {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    let mut data = json!({"responseId": "scripted-response", "modelVersion": "scripted-model"});
    if let Some(finish) = finish {
        candidate["finishReason"] = json!(finish);
        data["usageMetadata"] =
            json!({"promptTokenCount": 25, "candidatesTokenCount": 42, "totalTokenCount": 67});
    }
    data["candidates"] = json!([candidate]);
    format!("data: {data}\r\n\r\n")
}

/// A streamed answer with these blocks (the same blocks as Anthropic scripts); the first
/// function call carries `signature` as its thought signature when given.
pub fn response(blocks: &[Block], signature: Option<&str>) -> Reply {
    let mut chunks = Vec::new();
    let mut signature = signature.map(str::to_string);
    for block in blocks {
        match block {
            Block::Text { text } => {
                for piece in split(text, 3) {
                    chunks.push(chunk(vec![json!({"text": piece})], None));
                }
            }
            Block::Thinking { thinking, signature } => {
                chunks.push(chunk(
                    vec![json!({"text": thinking, "thought": true, "thoughtSignature": signature})],
                    None,
                ));
            }
            Block::ToolUse { name, input, .. } => {
                let mut part = json!({"functionCall": {"name": name, "args": input}});
                if let Some(signature) = signature.take() {
                    part["thoughtSignature"] = json!(signature);
                }
                chunks.push(chunk(vec![part], None));
            }
        }
    }
    chunks.push(chunk(vec![json!({"text": ""})], Some("STOP")));
    Reply {
        status: 200,
        headers: vec![("content-type".to_string(), "text/event-stream".to_string())],
        chunks,
        delay_ms: 0,
    }
}

/// An error reply in the google.rpc envelope.
pub fn error(status: u16, rpc_status: &str, message: &str) -> Reply {
    Reply {
        status,
        headers: vec![("content-type".to_string(), "application/json".to_string())],
        chunks: vec![
            json!({"error": {"code": status, "message": message, "status": rpc_status}}).to_string(),
        ],
        delay_ms: 0,
    }
}
