//! Native Rust tools from a closure: the model calls them like any other tool.

use crate::approval::ToolCategory;
use crate::host_tools::ToolOutput;
use crate::host_tools::registry::HostTool;
use agent_protocol::ToolDefinition;
use async_trait::async_trait;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Why a native tool failed; the model gets the message as an error result it can act on.
///
/// `?` turns any error that displays (`std::io::Error`, `serde_json::Error`, `anyhow::Error`,
/// `String`, `&str`, ...) into one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(pub String);

impl<E: std::fmt::Display> From<E> for ToolError {
    fn from(error: E) -> Self {
        Self(error.to_string())
    }
}

type Handler = dyn Fn(Value) -> Pin<Box<dyn Future<Output = Result<String, ToolError>> + Send>> + Send + Sync;

/// A tool implemented by an async Rust closure that receives the model's arguments (already
/// checked against `parameters`, a JSON schema) and returns the text the model reads.
///
/// ```
/// use agent_host::embed::{NativeTool, ToolError};
/// use serde_json::json;
///
/// let tool = NativeTool::new(
///     "word_count",
///     "Count the words of a text.",
///     json!({
///         "type": "object",
///         "properties": {"text": {"type": "string"}},
///         "required": ["text"]
///     }),
///     |args| async move {
///         let text = args["text"].as_str().ok_or("text must be a string")?;
///         Ok(text.split_whitespace().count().to_string())
///     },
/// )
/// .read_only();
/// # let _ = tool;
/// ```
#[derive(Clone)]
pub struct NativeTool {
    name: String,
    description: String,
    parameters: Value,
    category: ToolCategory,
    handler: Arc<Handler>,
}

impl NativeTool {
    /// A tool named `name` (as the model calls it). It is a `write` tool unless marked
    /// otherwise: read-only sessions refuse it.
    pub fn new<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
        handler: F,
    ) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, ToolError>> + Send + 'static,
    {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
            category: ToolCategory::Write,
            handler: Arc::new(move |args| Box::pin(handler(args))),
        }
    }

    /// What the tool may do, for approvals (`Read` tools run in read-only sessions).
    pub fn category(mut self, category: ToolCategory) -> Self {
        self.category = category;
        self
    }

    /// Marks the tool as one that only looks at things.
    pub fn read_only(self) -> Self {
        self.category(ToolCategory::Read)
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl std::fmt::Debug for NativeTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeTool")
            .field("name", &self.name)
            .field("category", &self.category)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl HostTool for NativeTool {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters: self.parameters.clone(),
        }
    }

    fn category(&self) -> ToolCategory {
        self.category
    }

    fn origin(&self) -> String {
        format!("native tool {}", self.name)
    }

    async fn call(&self, arguments_json: &str) -> Result<ToolOutput, String> {
        let arguments: Value = serde_json::from_str(arguments_json)
            .map_err(|e| format!("{}: the arguments are not JSON: {e}", self.name))?;
        (self.handler)(arguments)
            .await
            .map(ToolOutput::from)
            .map_err(|ToolError(message)| message)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn the_closure_gets_the_arguments_and_errors_reach_the_model_as_text() {
        let tool = NativeTool::new("add", "Add.", json!({"type": "object"}), |args| async move {
            let a = args["a"].as_i64().ok_or("a must be a number")?;
            let b: i64 = args["b"].to_string().parse()?;
            Ok((a + b).to_string())
        });
        assert_eq!(tool.call(r#"{"a": 2, "b": 3}"#).await, Ok("5".to_string().into()));
        assert_eq!(
            tool.call(r#"{"b": 3}"#).await,
            Err("a must be a number".to_string())
        );
        assert!(tool.call("{").await.unwrap_err().contains("not JSON"));
        assert_eq!(tool.definition().parameters.to_string(), r#"{"type":"object"}"#);
        assert_eq!(HostTool::category(&tool), ToolCategory::Write);
    }
}
