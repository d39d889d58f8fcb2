//! Provider profiles (section 3 of the spec): which tools a model family gets and the system
//! prompt it is given. The walking skeleton has the Anthropic toolset's first three tools;
//! the full provider-aligned sets arrive with their issue.

use crate::config::SessionConfig;
use crate::llm::ToolDefinition;
use crate::model_catalog::{self, ModelInfo};
use crate::ports::Environment;
use crate::prompt_context::PromptContext;
use crate::tools::validation::{Origin, SchemaValidator};
use crate::tools::{
    CommandTool, RegisteredTool, Runner, ToolRegistry, apply_patch, edit_file, glob, grep, list_dir,
    read_file, read_many_files, shell, subagents, write_file,
};
use std::rc::Rc;

/// The profile ids a session may name.
pub const PROVIDERS: [&str; 3] = ["anthropic", "openai", "gemini"];

/// A provider profile: its tools, its system prompt and what its model can do.
#[derive(Debug, Clone)]
pub struct Profile {
    pub id: String,
    pub registry: ToolRegistry,
    /// Default shell timeout of this profile (Claude Code: 120 s; codex: 10 s).
    pub default_command_timeout_ms: u64,
    pub default_max_output_tokens: u32,
    /// The catalog's entry for the session's model, if it is a known one.
    pub model_info: Option<ModelInfo>,
    /// Whether a reasoning effort may be sent (models without reasoning reject it).
    pub supports_reasoning: bool,
    /// Every adapter streams; the flag is here because the spec's interface names it.
    pub supports_streaming: bool,
    /// Whether a response's several tool calls may run at once.
    pub supports_parallel_tool_calls: bool,
    /// Whether read_file may hand the model images.
    pub supports_images: bool,
    /// Tokens the profile's models accept (for the 80 % context warning).
    pub context_window_size: u64,
    /// The model's knowledge cutoff, for the environment block.
    pub knowledge_cutoff: Option<String>,
    /// The compiled argument schemas of the registry's tools.
    pub validator: Rc<SchemaValidator>,
}

impl Profile {
    /// The profile of a session: the provider's tools, filtered by the configuration, plus
    /// the host's tools; capabilities from the model catalog, overridden by the configuration.
    pub fn for_config(config: &SessionConfig) -> Self {
        let default_command_timeout_ms = match config.provider.as_str() {
            "anthropic" => 120_000,
            _ => config.limits.default_command_timeout_ms,
        };
        let mut registry = builtin_registry(&config.provider, default_command_timeout_ms);
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
        let model_info = model_catalog::get_model_info(&config.model);
        let profile_window = match config.provider.as_str() {
            "openai" => 400_000,
            "gemini" => 1_048_576,
            _ => 200_000,
        };
        let validator = Rc::new(SchemaValidator::new(registry.tools().map(|t| {
            let origin = match t.runner {
                Runner::Host => Origin::Host,
                Runner::Builtin(_) | Runner::Command(_) => Origin::Builtin,
            };
            (&t.definition, origin)
        })));
        Self {
            id: config.provider.clone(),
            registry,
            default_command_timeout_ms,
            default_max_output_tokens: 8_192,
            supports_reasoning: model_info.as_ref().is_none_or(|m| m.supports_reasoning),
            supports_streaming: true,
            // All three reference agents run a response's independent calls concurrently.
            supports_parallel_tool_calls: config.parallel_tool_calls.unwrap_or(true),
            supports_images: config
                .image_input
                .unwrap_or_else(|| model_info.as_ref().is_none_or(|m| m.supports_vision)),
            context_window_size: config
                .context_window_size
                .unwrap_or_else(|| model_info.as_ref().map_or(profile_window, |m| m.context_window)),
            knowledge_cutoff: config
                .knowledge_cutoff
                .clone()
                .or_else(|| model_info.as_ref().and_then(|m| m.knowledge_cutoff.clone())),
            model_info,
            validator,
        }
    }

    pub fn tools(&self) -> Vec<ToolDefinition> {
        self.registry.definitions()
    }

    /// The model's name for people: the catalog's display name and the id, or the id.
    pub fn model_display_name(&self, model: &str) -> String {
        match &self.model_info {
            Some(info) if info.id == model => info.display_name.clone(),
            Some(info) => format!("{} ({model})", info.display_name),
            None => model.to_string(),
        }
    }

    /// What the profile is, for hosts: capabilities, tools and the model's catalog entry.
    pub fn describe(&self, model: &str) -> serde_json::Value {
        serde_json::json!({
            "id": self.id,
            "model": model,
            "model_display_name": self.model_display_name(model),
            "knowledge_cutoff": self.knowledge_cutoff,
            "supports_reasoning": self.supports_reasoning,
            "supports_streaming": self.supports_streaming,
            "supports_parallel_tool_calls": self.supports_parallel_tool_calls,
            "supports_images": self.supports_images,
            "context_window_size": self.context_window_size,
            "default_command_timeout_ms": self.default_command_timeout_ms,
            "tools": self.tools(),
        })
    }
}

/// A tool whose output is text only, as an `Executor`.
macro_rules! text {
    ($run:path) => {
        |args, ctx| $run(args, ctx).map(crate::tools::ToolOutput::from)
    };
}

/// The built-in tools of a profile: the shared core, plus the editing tool of the model
/// family (apply_patch for OpenAI, edit_file for the others).
pub fn builtin_registry(provider: &str, default_command_timeout_ms: u64) -> ToolRegistry {
    let mut registry = ToolRegistry::default();
    for (definition, runner) in [
        (read_file::definition(), Runner::Builtin(read_file::run)),
        (write_file::definition(), Runner::Builtin(text!(write_file::run))),
        (
            shell::definition(default_command_timeout_ms),
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
        "openai" => (apply_patch::definition(), text!(apply_patch::run)),
        _ => (edit_file::definition(), text!(edit_file::run)),
    };
    registry.register(RegisteredTool {
        definition,
        runner: Runner::Builtin(run),
    });
    registry.register(RegisteredTool {
        definition: grep::definition(),
        runner: Runner::Builtin(text!(grep::run)),
    });
    registry.register(RegisteredTool {
        definition: glob::definition(),
        runner: Runner::Builtin(text!(glob::run)),
    });
    // gemini-cli lists directories and reads several files with tools of its own.
    if provider == "gemini" {
        registry.register(RegisteredTool {
            definition: list_dir::definition(),
            runner: Runner::Builtin(text!(list_dir::run)),
        });
        registry.register(RegisteredTool {
            definition: read_many_files::definition(),
            runner: Runner::Builtin(text!(read_many_files::run)),
        });
    }
    // Every profile delegates the same way (spec 7); the depth limit is checked when called.
    let runners: [crate::tools::Executor; 4] = [
        text!(subagents::spawn_agent),
        text!(subagents::send_input),
        text!(subagents::wait),
        text!(subagents::close_agent),
    ];
    for (definition, run) in subagents::definitions().into_iter().zip(runners) {
        registry.register(RegisteredTool {
            definition,
            runner: Runner::Builtin(run),
        });
    }
    registry
}

/// Each family's base prompt, in the terms of its reference agent's tools: codex-rs for
/// OpenAI, Claude Code for Anthropic, gemini-cli for Gemini (spec 6.2).
fn base_instructions(provider: &str) -> &'static str {
    match provider {
        "openai" => include_str!("../prompts/openai.md"),
        "gemini" => include_str!("../prompts/gemini.md"),
        _ => include_str!("../prompts/anthropic.md"),
    }
}

/// Assembles the system prompt (spec 6.1): the provider's base instructions, the
/// environment block, the git snapshot, the project's instruction files, then the user's
/// instructions (highest precedence, last).
pub fn system_prompt(
    config: &SessionConfig,
    profile: &Profile,
    env: &dyn Environment,
    context: &PromptContext,
    now_ms: u64,
) -> String {
    let mut prompt = String::from(base_instructions(&config.provider).trim_end());
    let git = context.git.as_ref();
    prompt.push_str(&format!(
        "\n\n<environment>\nWorking directory: {}\nIs git repository: {}\n{}Platform: {}\nOS version: {}\n\
         Today's date: {}\nModel: {}\nKnowledge cutoff: {}\n</environment>",
        env.working_directory(),
        git.is_some(),
        git.and_then(|g| g.branch.as_ref())
            .map(|b| format!("Git branch: {b}\n"))
            .unwrap_or_default(),
        env.platform(),
        env.os_version(),
        civil_date(now_ms),
        profile.model_display_name(&config.model),
        profile.knowledge_cutoff.as_deref().unwrap_or("unknown"),
    ));
    if env.platform() == "browser" {
        // Said up front so the model plans with the file tools instead of discovering, one
        // failed shell call at a time, that nothing can be run.
        prompt.push_str(
            "\n\n<no_processes>\nThis workspace lives in a web browser's memory: no process can be \
             run here (no shell, interpreters, compilers, package managers, git or tests). A \
             shell call fails. Read, search and change files with the file tools, and check \
             your work by reading the files back.\n</no_processes>",
        );
    }
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
    if config.depth > 0 {
        prompt.push_str(&format!(
            "\n\n<subagent>\nYou are a subagent: another agent gave you this task and is waiting for your \
             result. Your scope is your working directory, {}: read and change files only inside it. \
             Work on your own: nobody will answer questions. When you are done, end with a short, \
             complete report of what you did and found (files changed, commands run and their \
             outcome); that final message is all the other agent receives.\n</subagent>",
            env.working_directory()
        ));
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
