//! `agent-host profile`: a provider profile's description, laid out for people.

use serde_json::Value;

/// The capabilities, the tools (name and first line of the description) and the system
/// prompt, in that order.
pub fn render(description: &Value) -> String {
    let text = |key: &str| match description.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "unknown".to_string(),
        Some(other) => other.to_string(),
    };
    let mut out = format!("Profile {} with {}\n\n", text("id"), text("model_display_name"));
    for (label, key) in [
        ("Context window (tokens)", "context_window_size"),
        ("Knowledge cutoff", "knowledge_cutoff"),
        ("Reasoning", "supports_reasoning"),
        ("Streaming", "supports_streaming"),
        ("Parallel tool calls", "supports_parallel_tool_calls"),
        ("Images", "supports_images"),
        ("Shell timeout (ms)", "default_command_timeout_ms"),
    ] {
        out.push_str(&format!("  {label:<24} {}\n", text(key)));
    }
    out.push_str("\nTools:\n");
    for tool in description
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
        let summary = tool
            .get("description")
            .and_then(Value::as_str)
            .and_then(|d| d.split(". ").next())
            .unwrap_or_default();
        out.push_str(&format!("  {name:<16} {summary}\n"));
    }
    out.push_str("\nSystem prompt:\n");
    out.push_str(&text("system_prompt"));
    out.push('\n');
    out
}
