//! Tools the model can call: the registry, argument helpers, and the built-in tools.

pub mod read_file;
pub mod shell;
pub mod write_file;

use crate::llm::ToolDefinition;
use crate::ports::{Environment, OutputStream};
use serde_json::Value;

/// What a tool run needs from its session.
pub struct ToolContext<'a> {
    pub env: &'a dyn Environment,
    /// Timeout of a command that names none (the profile's default).
    pub default_timeout_ms: u64,
    /// Upper bound of any command's timeout.
    pub max_timeout_ms: u64,
    /// Receives process output as it arrives (TOOL_CALL_OUTPUT_DELTA).
    pub on_output: &'a mut dyn FnMut(OutputStream, &str),
}

/// A built-in tool's implementation: the arguments, already checked to be an object.
/// `Err` becomes an `is_error` tool result the model can recover from.
pub type Executor = fn(&Value, &mut ToolContext<'_>) -> Result<String, String>;

/// How a registered tool runs.
#[derive(Debug, Clone, Copy)]
pub enum Runner {
    Builtin(Executor),
    /// Through the `host-tools` import.
    Host,
}

/// A tool the session offers.
#[derive(Debug, Clone)]
pub struct RegisteredTool {
    pub definition: ToolDefinition,
    pub runner: Runner,
}

/// The tools of a session, in the order they are offered; registering a name again
/// replaces the earlier tool (latest wins).
#[derive(Debug, Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<RegisteredTool>,
}

impl ToolRegistry {
    pub fn register(&mut self, tool: RegisteredTool) {
        match self
            .tools
            .iter_mut()
            .find(|t| t.definition.name == tool.definition.name)
        {
            Some(existing) => *existing = tool,
            None => self.tools.push(tool),
        }
    }

    pub fn unregister(&mut self, name: &str) {
        self.tools.retain(|t| t.definition.name != name);
    }

    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.iter().find(|t| t.definition.name == name)
    }

    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools.iter().map(|t| t.definition.clone()).collect()
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.definition.name.clone()).collect()
    }
}

/// A required string argument; the error names the field.
pub fn required_str<'a>(args: &'a Value, field: &str) -> Result<&'a str, String> {
    match args.get(field) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!(
            "argument `{field}` must be a string, got {}",
            type_name(other)
        )),
        None => Err(format!("missing required argument `{field}`")),
    }
}

/// An optional non-negative integer argument; the error names the field.
pub fn optional_u64(args: &Value, field: &str) -> Result<Option<u64>, String> {
    match args.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("argument `{field}` must be a non-negative integer, got {v}")),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
