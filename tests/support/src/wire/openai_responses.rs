//! Replies in the OpenAI Responses wire format, streamed as the real API does:
//! `response.created`, each output item added / its deltas / done, `response.completed` with
//! usage. Every event carries a `sequence_number`.

use super::{Block, Reply, split};
use serde_json::{Value, json};

struct Events {
    chunks: Vec<String>,
    sequence: u64,
}

impl Events {
    fn push(&mut self, mut data: Value) {
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        let name = data["type"].as_str().unwrap_or_default().to_string();
        self.chunks.push(format!("event: {name}\ndata: {data}\n\n"));
    }
}

/// A streamed response with these blocks (the same blocks as Anthropic scripts); a reasoning
/// item with encrypted content comes first when `encrypted_reasoning` is given.
pub fn response(blocks: &[Block], encrypted_reasoning: Option<&str>) -> Reply {
    let header = json!({"id": "resp_scripted", "object": "response", "model": "scripted-model", "status": "in_progress", "output": []});
    let mut events = Events {
        chunks: Vec::new(),
        sequence: 0,
    };
    events.push(json!({"type": "response.created", "response": header}));
    let mut output = Vec::new();
    if let Some(encrypted) = encrypted_reasoning {
        let item =
            json!({"type": "reasoning", "id": "rs_scripted", "summary": [], "encrypted_content": encrypted});
        events
            .push(json!({"type": "response.output_item.added", "output_index": output.len(), "item": item}));
        events.push(json!({"type": "response.output_item.done", "output_index": output.len(), "item": item}));
        output.push(item);
    }
    for (n, block) in blocks.iter().enumerate() {
        let index = output.len();
        let item = match block {
            Block::Text { text } => {
                let id = format!("msg_{n}");
                let item = json!({"type": "message", "id": id, "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]});
                events.push(json!({"type": "response.output_item.added", "output_index": index,
                    "item": {"type": "message", "id": id, "role": "assistant", "status": "in_progress", "content": []}}));
                for piece in split(text, 3) {
                    events.push(json!({"type": "response.output_text.delta", "item_id": id, "output_index": index, "content_index": 0, "delta": piece}));
                }
                item
            }
            Block::Thinking { thinking, signature } => {
                let item = json!({"type": "reasoning", "id": format!("rs_{n}"),
                    "summary": [{"type": "summary_text", "text": thinking}], "encrypted_content": signature});
                events
                    .push(json!({"type": "response.output_item.added", "output_index": index, "item": item}));
                item
            }
            Block::ToolUse { id, name, input } => {
                let item_id = format!("fc_{n}");
                let arguments = input.to_string();
                events.push(json!({"type": "response.output_item.added", "output_index": index,
                    "item": {"type": "function_call", "id": item_id, "call_id": id, "name": name, "arguments": "", "status": "in_progress"}}));
                for piece in split(&arguments, 3) {
                    events.push(json!({"type": "response.function_call_arguments.delta", "item_id": item_id, "output_index": index, "delta": piece}));
                }
                json!({"type": "function_call", "id": item_id, "call_id": id, "name": name, "arguments": arguments, "status": "completed"})
            }
        };
        events.push(json!({"type": "response.output_item.done", "output_index": index, "item": item}));
        output.push(item);
    }
    let mut done = header;
    done["status"] = json!("completed");
    done["output"] = Value::Array(output);
    done["usage"] = json!({"input_tokens": 25, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 42, "total_tokens": 67});
    events.push(json!({"type": "response.completed", "response": done}));
    Reply {
        status: 200,
        headers: vec![("content-type".to_string(), "text/event-stream".to_string())],
        chunks: events.chunks,
        delay_ms: 0,
    }
}
