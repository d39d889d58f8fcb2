//! Provider profiles (section 3 of the spec): which tools a model family gets and the system
//! prompt it is given. The walking skeleton has the Anthropic toolset's first three tools;
//! the full provider-aligned sets arrive with their issue.

use crate::config::SessionConfig;
use crate::llm::ToolDefinition;
use crate::ports::Environment;
use crate::prompt_context::PromptContext;
use crate::tools::validation::SchemaValidator;
use crate::tools::{
    CommandTool, RegisteredTool, Runner, ToolRegistry, apply_patch, edit_file, glob, grep, list_dir,
    read_file, read_many_files, shell, write_file,
};
use std::rc::Rc;

/// The profile ids a session may name.
pub const PROVIDERS: [&str; 3] = ["anthropic", "openai", "gemini"];

/// A provider profile.
#[derive(Debug, Clone)]
pub struct Profile {
    pub id: String,
    pub registry: ToolRegistry,
    /// Default shell timeout of this profile (Claude Code: 120 s; codex: 10 s).
    pub default_command_timeout_ms: u64,
    pub default_max_output_tokens: u32,
    /// Whether a response's several tool calls may run at once.
    pub supports_parallel_tool_calls: bool,
    /// Tokens the profile's models accept (for the 80 % context warning).
    pub context_window_size: u64,
    /// The compiled argument schemas of the registry's tools.
    pub validator: Rc<SchemaValidator>,
}

impl Profile {
    /// The profile of a session: the provider's tools, filtered by the configuration, plus
    /// the host's tools.
    pub fn for_config(config: &SessionConfig) -> Self {
        let mut registry = builtin_registry(&config.provider);
        if let Some(enabled) = &config.enabled_tools {
            for name in registry.names() {
                if !enabled.contains(&name) {
                    registry.unregister(&name);
                }
            }
        }
        for name in &config.disabled_tools {
            registry.unregister(name);
        }
        for definition in &config.host_tools {
            registry.register(RegisteredTool {
                definition: definition.clone(),
                runner: Runner::Host,
            });
        }
        let default_command_timeout_ms = match config.provider.as_str() {
            "anthropic" => 120_000,
            _ => config.limits.default_command_timeout_ms,
        };
        let context_window_size = match config.provider.as_str() {
            "openai" => 272_000,
            "gemini" => 1_048_576,
            _ => 200_000,
        };
        let validator = Rc::new(SchemaValidator::new(&registry.definitions()));
        Self {
            id: config.provider.clone(),
            registry,
            default_command_timeout_ms,
            default_max_output_tokens: 8_192,
            // All three reference agents run a response's independent calls concurrently.
            supports_parallel_tool_calls: config.parallel_tool_calls.unwrap_or(true),
            context_window_size: config.context_window_size.unwrap_or(context_window_size),
            validator,
        }
    }

    pub fn tools(&self) -> Vec<ToolDefinition> {
        self.registry.definitions()
    }
}

/// The built-in tools of a profile: the shared core, plus the editing tool of the model
/// family (apply_patch for OpenAI, edit_file for the others).
pub fn builtin_registry(provider: &str) -> ToolRegistry {
    let mut registry = ToolRegistry::default();
    for (definition, runner) in [
        (read_file::definition(), Runner::Builtin(read_file::run)),
        (write_file::definition(), Runner::Builtin(write_file::run)),
        (
            shell::definition(),
            Runner::Command(CommandTool {
                prepare: shell::prepare,
                report: shell::report,
            }),
        ),
    ] {
        registry.register(RegisteredTool { definition, runner });
    }
    // Each family edits the way it was trained to: codex with patches, Claude and Gemini
    // with string replacement.
    let (definition, run): (_, crate::tools::Executor) = match provider {
        "openai" => (apply_patch::definition(), apply_patch::run),
        _ => (edit_file::definition(), edit_file::run),
    };
    registry.register(RegisteredTool {
        definition,
        runner: Runner::Builtin(run),
    });
    registry.register(RegisteredTool {
        definition: grep::definition(),
        runner: Runner::Builtin(grep::run),
    });
    registry.register(RegisteredTool {
        definition: glob::definition(),
        runner: Runner::Builtin(glob::run),
    });
    // gemini-cli lists directories and reads several files with tools of its own.
    if provider == "gemini" {
        registry.register(RegisteredTool {
            definition: list_dir::definition(),
            runner: Runner::Builtin(list_dir::run),
        });
        registry.register(RegisteredTool {
            definition: read_many_files::definition(),
            runner: Runner::Builtin(read_many_files::run),
        });
    }
    registry
}

const BASE_INSTRUCTIONS: &str = "\
You are a coding agent working in the user's project through tools. You read files, change \
them and run commands until the task is done, then reply with a short summary of what you did.

Working style:
- Read a file before changing it, and keep changes minimal and in the style of the code around them.
- Prefer changing existing files over creating new ones; create files only when the task needs them.
- Use the shell tool for builds, tests and inspecting the project; check that your change works.
- When a tool returns an error, read it, correct the call and try again instead of giving up.
- When the task is complete, answer with text only (no tool call).";

/// How each model family is told to explore and edit, in the terms of its own tools.
fn editing_guidance(provider: &str) -> &'static str {
    match provider {
        "openai" => {
            "\
Editing: change files with apply_patch. Each patch starts with '*** Begin Patch' and ends with \
'*** End Patch'; use '*** Update File:' with '@@' context lines, '-' for removed and '+' for added \
lines, '*** Add File:' for new files and '*** Delete File:' to remove one. Keep about 3 lines of \
context around each change. If a patch fails, nothing was changed: read the file and send a \
corrected patch. Search with grep and glob before reading whole files."
        }
        "gemini" => {
            "\
Editing: change files with edit_file, copying old_string exactly from what read_file showed \
(without the line-number prefix) with enough lines to be unique. Explore with list_dir, glob and \
grep, and read related files together with read_many_files before making changes."
        }
        _ => {
            "\
Editing: change files with edit_file, copying old_string exactly from what read_file showed \
(without the line-number prefix) with enough surrounding lines to be unique, or set replace_all. \
Use write_file only for new files or complete rewrites. Search with grep and glob rather than \
listing directories with the shell."
        }
    }
}

/// Assembles the system prompt: base instructions, environment context, then the user's
/// instructions (highest precedence, last).
pub fn system_prompt(
    config: &SessionConfig,
    env: &dyn Environment,
    context: &PromptContext,
    now_ms: u64,
) -> String {
    let mut prompt = String::from(BASE_INSTRUCTIONS);
    prompt.push_str("\n\n");
    prompt.push_str(editing_guidance(&config.provider));
    let git = context.git.as_ref();
    prompt.push_str(&format!(
        "\n\n<environment>\nWorking directory: {}\nIs a git repository: {}\n{}Platform: {}\nOS version: {}\n\
         Today's date: {}\nModel: {}\n</environment>",
        env.working_directory(),
        if git.is_some() { "yes" } else { "no" },
        git.and_then(|g| g.branch.as_ref())
            .map(|b| format!("Git branch: {b}\n"))
            .unwrap_or_default(),
        env.platform(),
        env.os_version(),
        civil_date(now_ms),
        config.model,
    ));
    if let Some(git) = git.filter(|g| g.changed_files.is_some() || !g.recent_commits.is_empty()) {
        prompt.push_str("\n\n<git_status>\n");
        if let Some(changed) = git.changed_files {
            prompt.push_str(&format!("Files with uncommitted changes: {changed}\n"));
        }
        if !git.recent_commits.is_empty() {
            prompt.push_str("Recent commits:\n");
            for commit in &git.recent_commits {
                prompt.push_str(&format!("  {commit}\n"));
            }
        }
        prompt.push_str("</git_status>");
    }
    if !context.project_docs.is_empty() {
        prompt.push_str(
            "\n\n<project_instructions>\nInstructions from the project's files; deeper files take \
             precedence over the ones above them.\n",
        );
        for (path, text) in &context.project_docs {
            prompt.push_str(&format!("\n## {path}\n{text}\n"));
        }
        prompt.push_str("</project_instructions>");
    }
    if let Some(instructions) = config
        .user_instructions
        .as_deref()
        .filter(|s| !s.trim().is_empty())
    {
        prompt.push_str("\n\n");
        prompt.push_str(instructions);
    }
    prompt
}

/// `YYYY-MM-DD` (UTC) of a Unix time in milliseconds (Howard Hinnant's days-to-civil).
pub fn civil_date(now_ms: u64) -> String {
    let days = (now_ms / 86_400_000) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::civil_date;

    #[test]
    fn civil_date_known_points() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(951_782_400_000), "2000-02-29");
        assert_eq!(civil_date(1_795_392_000_000), "2026-11-23");
    }
}
