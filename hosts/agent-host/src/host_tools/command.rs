//! Declarative command tools (spec 6.3): a program and an argument template from the
//! configuration, run directly, never through a shell. Each argument value becomes (part
//! of) its own argv element after schema validation, so `; rm -rf /` or `$(id)` reaches the
//! program as inert text. Local execution only: the program runs on this machine, in the
//! workspace, with the session's environment-variable policy plus the declared `env`.

pub(crate) mod names;
mod spec;
mod template;
#[cfg(test)]
mod tests;

pub use spec::{CommandToolSpec, ParameterSpec, ParameterType, SpecError};

use crate::approval::ToolCategory;
use crate::environments::env_vars::EnvPolicy;
use crate::environments::options::EnvOptions;
use crate::environments::process;
use crate::host_tools::ToolOutput;
use crate::host_tools::registry::HostTool;
use crate::sandbox::Sandbox;
use agent_protocol::ToolDefinition;
use agent_protocol::ports::ExecResult;
use async_trait::async_trait;
use serde_json::Value;
use spec::Plan;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use template::Piece;

/// Timeout of a tool that declares none.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;

/// Where command tools run and where they were configured.
#[derive(Debug, Clone)]
pub struct CommandToolContext {
    /// The session's workspace, absolute: every program runs there.
    pub workspace: PathBuf,
    /// Which host variables the programs see (credentials are filtered by default).
    pub env_policy: EnvPolicy,
    /// The configuration file the tools come from, for messages.
    pub source: Option<PathBuf>,
    /// Why no program may run now (see `EnvOptions::changes_refused`).
    pub refused: Option<String>,
    /// The sandbox programs run in (`None`: with all the user's rights).
    pub sandbox: Option<Arc<Sandbox>>,
}

impl CommandToolContext {
    /// Programs run in `workspace` (made absolute) under `env_policy`.
    pub fn new(workspace: &Path, env_policy: EnvPolicy) -> Result<Self, String> {
        let workspace = std::fs::canonicalize(workspace).map_err(|e| {
            format!(
                "command tools cannot use {} as their directory: {e}",
                workspace.display()
            )
        })?;
        Ok(Self {
            workspace,
            env_policy,
            source: None,
            refused: None,
            sandbox: None,
        })
    }

    /// The context of a session built from `options`. Command tools run on this machine
    /// only, so a remote environment is an error rather than tools that silently run
    /// somewhere else than the agent's files.
    pub fn from_options(options: &EnvOptions) -> Result<Self, String> {
        match options.env.as_deref() {
            None | Some("local") => {}
            Some(other) => {
                return Err(format!(
                    "command tools run on this machine only, but the session's environment is {other}; \
                     remove the [[tools]] entries or use --env local"
                ));
            }
        }
        let workspace = match &options.cwd {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?,
        };
        let mut context = Self::new(&workspace, options.env_policy())?;
        context.refused = options.changes_refused.clone();
        let mut roots = vec![context.workspace.clone()];
        roots.extend(options.allow_dirs.iter().cloned());
        context.sandbox = options.sandbox_for(&roots)?;
        Ok(context)
    }
}

/// Checks every spec and builds its tool; the first mistake is the error.
pub fn load_command_tools(
    specs: &[CommandToolSpec],
    context: &CommandToolContext,
) -> Result<Vec<Arc<dyn HostTool>>, SpecError> {
    specs
        .iter()
        .map(|spec| {
            CommandTool::new(spec.clone(), context.clone()).map(|tool| Arc::new(tool) as Arc<dyn HostTool>)
        })
        .collect()
}

/// A configured command, offered to the model as a tool.
pub struct CommandTool {
    spec: CommandToolSpec,
    plan: Plan,
    context: CommandToolContext,
}

impl CommandTool {
    pub fn new(spec: CommandToolSpec, context: CommandToolContext) -> Result<Self, SpecError> {
        let plan = spec.plan()?;
        Ok(Self { spec, plan, context })
    }

    /// Checks a spec without building the tool (for loading a configuration early).
    pub fn check(spec: &CommandToolSpec) -> Result<(), SpecError> {
        spec.plan().map(|_| ())
    }

    /// The arguments the program gets for a call: the arguments are validated against the
    /// parameters, then each value fills its placeholders within one argv element.
    pub fn argv(&self, arguments: &Value) -> Result<Vec<String>, String> {
        if let Err(error) = self.plan.schemas.validate(arguments, self.plan.index) {
            return Err(format!("invalid arguments: {}", describe(&error)));
        }
        let Some(values) = arguments.as_object() else {
            return Err("invalid arguments: expected a JSON object".to_string());
        };
        if let Some((name, _)) = values
            .iter()
            .find(|(_, v)| v.as_str().is_some_and(|s| s.contains('\0')))
        {
            return Err(format!(
                "invalid arguments: argument `{name}` contains a NUL byte"
            ));
        }
        let fill = |pieces: &Vec<Piece>| -> String {
            pieces
                .iter()
                .map(|piece| match piece {
                    Piece::Text(text) => text.clone(),
                    Piece::Slot(name) => values.get(name).map(render).unwrap_or_default(),
                })
                .collect()
        };
        let mut argv: Vec<String> = self.plan.args.iter().map(fill).collect();
        for (key, group) in &self.plan.optional_args {
            // Absent, or a boolean flag turned off: the group is left out.
            if matches!(
                values.get(key),
                None | Some(Value::Null) | Some(Value::Bool(false))
            ) {
                continue;
            }
            argv.extend(group.iter().map(fill));
        }
        Ok(argv)
    }

    /// The declared variables, `${NAME}` references taken from the host's environment.
    fn extra_env(&self) -> Result<Vec<(String, String)>, String> {
        let mut env = Vec::with_capacity(self.plan.env.len());
        for (name, pieces) in &self.plan.env {
            let mut value = String::new();
            for piece in pieces {
                match piece {
                    Piece::Text(text) => value.push_str(text),
                    Piece::Slot(var) => match crate::secrets::host_var(var).ok_or(()) {
                        Ok(host_value) => value.push_str(&host_value),
                        Err(_) => {
                            return Err(format!(
                                "the tool passes ${{{var}}} to the program as {name}, but the host has no \
                                 variable {var}; set it before starting the agent"
                            ));
                        }
                    },
                }
            }
            env.push((name.clone(), value));
        }
        Ok(env)
    }

    /// The program file: a path with `/` as written (relative to the workspace), a bare name
    /// looked up in PATH (the tool's own `env.PATH` if declared, else the host's).
    fn program(&self, extra_env: &[(String, String)]) -> Result<PathBuf, String> {
        let cmd = &self.spec.cmd;
        if cmd.contains('/') {
            let path = self.context.workspace.join(cmd);
            return if path.is_file() {
                Ok(path)
            } else {
                Err(format!(
                    "the program {cmd:?} does not exist (looked for {})",
                    path.display()
                ))
            };
        }
        let search: Option<OsString> = extra_env
            .iter()
            .find(|(name, _)| name == "PATH")
            .map(|(_, value)| value.into())
            .or_else(|| std::env::var_os("PATH"));
        search
            .iter()
            .flat_map(std::env::split_paths)
            // A relative entry (`.`) would let a file the agent wrote shadow the program.
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(cmd))
            .find(|candidate| is_executable(candidate))
            .ok_or_else(|| format!("the program {cmd:?} was not found on PATH; is it installed?"))
    }

    fn timeout_ms(&self) -> u64 {
        self.spec.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A value as one argument's text: strings as they are, numbers and booleans in JSON form.
fn render(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// One line per failed check, each naming the argument and the rule it broke.
fn describe(error: &boon::ValidationError<'_, '_>) -> String {
    fn leaves(error: &boon::ValidationError<'_, '_>, out: &mut Vec<String>) {
        if error.causes.is_empty() {
            let location = error.instance_location.to_string();
            let subject = match location.trim_start_matches('/') {
                "" => "arguments".to_string(),
                path => format!("argument `{}`", path.replace('/', ".")),
            };
            out.push(format!("{subject}: {}", error.kind));
        }
        for cause in &error.causes {
            leaves(cause, out);
        }
    }
    let mut lines = Vec::new();
    leaves(error, &mut lines);
    lines.join("; ")
}

/// The model's view of a finished run: stdout, stderr, then why it failed if it did.
fn report(result: &ExecResult, timeout_ms: u64) -> Result<String, String> {
    let mut text = result.stdout.clone();
    let mut add = |line: &str| {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(line);
    };
    if !result.stderr.is_empty() {
        add(&result.stderr);
    }
    if result.timed_out {
        add(&format!(
            "[timed out after {timeout_ms} ms: the program was stopped; partial output is shown above]"
        ));
        return Err(text);
    }
    if result.exit_code != 0 {
        add(&format!("exit code {}", result.exit_code));
        return Err(text);
    }
    if text.is_empty() {
        text.push_str("(no output)");
    }
    Ok(text)
}

#[async_trait]
impl HostTool for CommandTool {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: self.spec.name.clone(),
            description: self.spec.description.clone(),
            parameters: self.plan.schema.clone(),
        }
    }

    fn category(&self) -> ToolCategory {
        self.spec.category
    }

    fn origin(&self) -> String {
        match &self.context.source {
            Some(file) => format!("[[tools]] in {}", file.display()),
            None => "the command tool configuration".to_string(),
        }
    }

    async fn call(&self, arguments_json: &str) -> Result<ToolOutput, String> {
        let arguments: Value =
            serde_json::from_str(arguments_json).map_err(|e| format!("invalid arguments: not JSON: {e}"))?;
        let argv = self.argv(&arguments)?;
        if let Some(reason) = &self.context.refused {
            return Err(format!("{} was not run: {reason}", self.spec.name));
        }
        let extra_env = self.extra_env()?;
        let program = self.program(&extra_env)?;
        let timeout_ms = self.timeout_ms();
        let mut process = process::spawn_program(
            &program,
            &argv,
            process::RunIn {
                cwd: &self.context.workspace,
                timeout: Duration::from_millis(timeout_ms),
                policy: self.context.env_policy,
                extra_env: &extra_env,
                sandbox: self.context.sandbox.clone(),
            },
        )
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
        let result = process.wait().await;
        report(&result, timeout_ms).map(ToolOutput::from)
    }
}
