//! Tools the model can call: the registry, how a call starts and finishes, argument
//! helpers, and the built-in tools.

pub mod apply_patch;
pub mod edit_file;
pub mod glob;
pub mod grep;
pub mod images;
pub mod list_dir;
pub mod read_file;
pub mod read_many_files;
pub mod shell;
pub mod subagents;
pub mod traits;
pub mod update_plan;
pub mod validation;
pub mod write_file;

use crate::llm::{ImageData, ToolDefinition};
use crate::ports::{Environment, ExecResult, HostTools, OutputStream, Process, SessionHost, SpawnRequest};
use serde_json::Value;

/// What a tool run needs from its session.
pub struct ToolContext<'a> {
    pub env: &'a dyn Environment,
    pub host_tools: &'a dyn HostTools,
    pub session_id: &'a str,
    /// Timeout of a command that names none (the profile's default).
    pub default_timeout_ms: u64,
    /// Upper bound of any command's timeout.
    pub max_timeout_ms: u64,
    /// Whether the model reads images (the profile's `supports_images`).
    pub images_supported: bool,
    /// The host, for the subagent tools.
    pub host: &'a dyn SessionHost,
    /// The session's nesting depth (0 for a top-level session).
    pub depth: u32,
    /// The deepest a session may be and still spawn subagents is one less than this.
    pub max_subagent_depth: u32,
    /// What the session last saw of each file, for the stale-read guard.
    pub stamps: &'a crate::file_stamps::FileStamps,
}

/// What a tool returns to the model: text, and images for multimodal models.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolOutput {
    pub text: String,
    pub images: Vec<ImageData>,
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        Self {
            text,
            images: Vec::new(),
        }
    }
}

/// A built-in tool's implementation: the arguments, already checked to be an object.
/// `Err` becomes an `is_error` tool result the model can recover from.
pub type Executor = fn(&Value, &ToolContext<'_>) -> Result<ToolOutput, String>;

/// A tool that runs one process. It is split in two so that a round's commands can all be
/// started before any is waited for: parallel tool calls then really run at once.
#[derive(Debug, Clone, Copy)]
pub struct CommandTool {
    /// Checks the arguments and says what to run.
    pub prepare: fn(&Value, &ToolContext<'_>) -> Result<SpawnRequest, String>,
    /// Turns the finished process into the tool's output.
    pub report: fn(&ExecResult, &SpawnRequest) -> String,
}

/// How a registered tool runs.
#[derive(Debug, Clone, Copy)]
pub enum Runner {
    Builtin(Executor),
    Command(CommandTool),
    /// Through the `host-tools` import.
    Host,
}

pub use traits::ToolTraits;

/// A tool the session offers.
#[derive(Debug, Clone)]
pub struct RegisteredTool {
    pub definition: ToolDefinition,
    pub runner: Runner,
    pub traits: ToolTraits,
}

/// A tool call after its start: finished already, or a process still running.
pub enum Started {
    Done(Result<ToolOutput, String>),
    Running(RunningCommand),
    /// Not run: the user (or the approval policy) refused it, or interrupted the session.
    Refused(String),
}

/// A command tool's process, started and not yet waited for.
pub struct RunningCommand {
    process: Box<dyn Process>,
    request: SpawnRequest,
    report: fn(&ExecResult, &SpawnRequest) -> String,
}

impl RunningCommand {
    /// Streams the process's output to `on_output` until it ends, then reports.
    pub fn finish(mut self, on_output: &mut dyn FnMut(OutputStream, &str)) -> String {
        while let Some(chunk) = self.process.read_output() {
            on_output(chunk.stream, &String::from_utf8_lossy(&chunk.data));
        }
        let result = self.process.wait();
        (self.report)(&result, &self.request)
    }
}

impl Started {
    /// Runs a started call to its end.
    pub fn finish(self, on_output: &mut dyn FnMut(OutputStream, &str)) -> Result<ToolOutput, String> {
        match self {
            Self::Done(outcome) => outcome,
            Self::Running(command) => Ok(command.finish(on_output).into()),
            Self::Refused(reason) => Err(reason),
        }
    }
}

/// Starts a call whose arguments have been validated: a builtin or host tool runs to
/// completion, a command tool's process is spawned and left running.
pub fn start(tool: &RegisteredTool, arguments: &Value, ctx: &ToolContext<'_>) -> Started {
    match tool.runner {
        Runner::Builtin(run) => Started::Done(run(arguments, ctx)),
        Runner::Host => Started::Done(
            ctx.host_tools
                .call(ctx.session_id, &tool.definition.name, &arguments.to_string())
                .map(|output| images::from_host(output, ctx.images_supported)),
        ),
        Runner::Command(command) => {
            let request = match (command.prepare)(arguments, ctx) {
                Ok(request) => request,
                Err(error) => return Started::Done(Err(error)),
            };
            match ctx.env.spawn(request.clone()) {
                Ok(process) => Started::Running(RunningCommand {
                    process,
                    request,
                    report: command.report,
                }),
                Err(error) => Started::Done(Err(error.to_string())),
            }
        }
    }
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

    pub fn tools(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.iter()
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str) -> RegisteredTool {
        RegisteredTool {
            definition: ToolDefinition {
                name: name.to_string(),
                description: description.to_string(),
                parameters: json!({"type": "object"}),
            },
            runner: Runner::Host,
            traits: ToolTraits::HOST,
        }
    }

    #[test]
    fn the_latest_registration_of_a_name_wins_and_keeps_its_place() {
        let mut registry = ToolRegistry::default();
        registry.register(tool("a", "first a"));
        registry.register(tool("b", "b"));
        registry.register(tool("a", "second a"));
        assert_eq!(registry.names(), ["a", "b"]);
        assert_eq!(
            registry.get("a").map(|t| t.definition.description.as_str()),
            Some("second a")
        );
        registry.unregister("a");
        assert!(registry.get("a").is_none());
        assert_eq!(registry.names(), ["b"]);
        registry.unregister("missing");
        assert_eq!(registry.definitions().len(), 1);
    }
}
