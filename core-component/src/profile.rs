//! Tool profiles (section 3 of the spec): which tools a session gets and the system prompt it
//! is given, one row per profile in `PROFILES`: one per provider family, plus `compact` for
//! small and local models. What hosts also need to know about a family (default model,
//! endpoint, context window, command timeout) is `agent-protocol`'s.

use crate::config::SessionConfig;
use crate::llm::ToolDefinition;
use crate::model_catalog::{self, ModelInfo};
use crate::ports::Environment;
use crate::prompt_context::PromptContext;
use crate::tools::validation::{Origin, SchemaValidator};
use crate::tools::{
    CommandTool, Executor, RegisteredTool, Runner, ToolRegistry, ToolTraits, apply_patch, edit_file, glob,
    grep, list_dir, read_file, read_many_files, shell, subagents, update_plan, write_file,
};
use agent_protocol::Profile as ProfileId;
use std::rc::Rc;

/// A built-in tool (or, for `Subagents`, the four subagent tools).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    ReadFile,
    WriteFile,
    Shell,
    EditFile,
    ApplyPatch,
    Grep,
    Glob,
    ListDir,
    ReadManyFiles,
    UpdatePlan,
    Subagents,
}

/// What a profile gets.
#[derive(Debug)]
pub struct ProfileRow {
    pub id: ProfileId,
    /// Its tools in the order offered. Each family edits the way its reference agent was
    /// trained to: codex with patches, Claude Code and gemini-cli with string replacement;
    /// gemini-cli also lists directories and reads several files at once. Every family
    /// delegates the same way (spec 7). The compact profile keeps Claude Code's core tools
    /// and drops delegation: a small model given `spawn_agent` hands a one-line rename to a
    /// subagent, and every tool it is shown costs it attention and prompt tokens.
    pub tools: &'static [Builtin],
    /// Its base prompt, in the terms of its reference agent's tools (spec 6.2). (Its
    /// instruction files are agent-protocol's, which hosts read too.)
    pub prompt: &'static str,
    /// Whether the first request lists the workspace's files (as gemini-cli sends a folder
    /// structure): a small model that sees which files exist stops inventing paths. The
    /// hosted profiles' models find files with glob, as their reference agents do.
    pub workspace_overview: bool,
    /// Whether failed calls get error-recovery reminders unless the configuration says
    /// (session/reminders.rs): measured to help the compact profile's models (EVAL.md).
    pub reminders: bool,
    /// Whether a call a Chat Completions server left in the answer's text is read as a call
    /// (session/text_calls.rs): the local servers small models run on may not parse the
    /// form their template asks for; hosted models' servers do.
    pub text_tool_calls: bool,
}

pub const PROFILES: [ProfileRow; 4] = [
    ProfileRow {
        id: ProfileId::Anthropic,
        tools: &[
            Builtin::ReadFile,
            Builtin::WriteFile,
            Builtin::Shell,
            Builtin::EditFile,
            Builtin::Grep,
            Builtin::Glob,
            Builtin::UpdatePlan,
            Builtin::Subagents,
        ],
        prompt: include_str!("../prompts/anthropic.md"),
        workspace_overview: false,
        reminders: false,
        text_tool_calls: false,
    },
    ProfileRow {
        id: ProfileId::Openai,
        tools: &[
            Builtin::ReadFile,
            Builtin::WriteFile,
            Builtin::Shell,
            Builtin::ApplyPatch,
            Builtin::Grep,
            Builtin::Glob,
            Builtin::UpdatePlan,
            Builtin::Subagents,
        ],
        prompt: include_str!("../prompts/openai.md"),
        workspace_overview: false,
        reminders: false,
        text_tool_calls: false,
    },
    ProfileRow {
        id: ProfileId::Gemini,
        tools: &[
            Builtin::ReadFile,
            Builtin::WriteFile,
            Builtin::Shell,
            Builtin::EditFile,
            Builtin::Grep,
            Builtin::Glob,
            Builtin::ListDir,
            Builtin::ReadManyFiles,
            Builtin::UpdatePlan,
            Builtin::Subagents,
        ],
        prompt: include_str!("../prompts/gemini.md"),
        workspace_overview: false,
        reminders: false,
        text_tool_calls: false,
    },
    ProfileRow {
        id: ProfileId::Compact,
        tools: &[
            Builtin::ReadFile,
            Builtin::WriteFile,
            Builtin::EditFile,
            Builtin::Shell,
            Builtin::Glob,
            Builtin::Grep,
        ],
        prompt: include_str!("../prompts/compact.md"),
        workspace_overview: true,
        reminders: true,
        text_tool_calls: true,
    },
];

/// The profile a configuration runs with: the one it names, else Anthropic's (a
/// configuration made before profiles were named, whose protocol names no profile).
pub fn id_of(config: &SessionConfig) -> ProfileId {
    config.profile().unwrap_or(ProfileId::Anthropic)
}

/// The row of the profile a configuration runs with.
pub fn row_of(config: &SessionConfig) -> &'static ProfileRow {
    row(id_of(config))
}

/// The row of a profile.
pub fn row(id: ProfileId) -> &'static ProfileRow {
    match id {
        ProfileId::Anthropic => &PROFILES[0],
        ProfileId::Openai => &PROFILES[1],
        ProfileId::Gemini => &PROFILES[2],
        ProfileId::Compact => &PROFILES[3],
    }
}

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
        let id = id_of(config);
        let default_command_timeout_ms = config.default_command_timeout_ms();
        let mut registry = builtin_registry(id, default_command_timeout_ms);
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
                traits: ToolTraits::HOST,
            });
        }
        let model_info = model_catalog::get_model_info(&config.model);
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
            context_window_size: config.context_window_size.unwrap_or_else(|| {
                model_info
                    .as_ref()
                    .map_or(id.context_window(), |m| m.context_window)
            }),
            knowledge_cutoff: config
                .knowledge_cutoff
                .clone()
                .or_else(|| model_info.as_ref().and_then(|m| m.knowledge_cutoff.clone())),
            model_info,
            validator,
        }
    }

    /// The tools' definitions, in the order offered.
    pub fn tools(&self) -> Vec<&ToolDefinition> {
        self.registry.tools().map(|t| &t.definition).collect()
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

/// The built-in tools of a profile, in its table's order.
pub fn builtin_registry(id: ProfileId, default_command_timeout_ms: u64) -> ToolRegistry {
    let mut registry = ToolRegistry::default();
    for builtin in row(id).tools {
        for tool in registered(*builtin, default_command_timeout_ms) {
            registry.register(tool);
        }
    }
    registry
}

fn registered(builtin: Builtin, default_command_timeout_ms: u64) -> Vec<RegisteredTool> {
    let tool = |definition: ToolDefinition, run: Executor, traits: ToolTraits| RegisteredTool {
        definition,
        runner: Runner::Builtin(run),
        traits,
    };
    match builtin {
        Builtin::ReadFile => vec![tool(read_file::definition(), read_file::run, read_file::TRAITS)],
        Builtin::WriteFile => vec![tool(
            write_file::definition(),
            text!(write_file::run),
            write_file::TRAITS,
        )],
        Builtin::Shell => vec![RegisteredTool {
            definition: shell::definition(default_command_timeout_ms),
            runner: Runner::Command(CommandTool {
                prepare: shell::prepare,
                report: shell::report,
            }),
            traits: shell::TRAITS,
        }],
        Builtin::EditFile => vec![tool(
            edit_file::definition(),
            text!(edit_file::run),
            edit_file::TRAITS,
        )],
        Builtin::ApplyPatch => vec![tool(
            apply_patch::definition(),
            text!(apply_patch::run),
            apply_patch::TRAITS,
        )],
        Builtin::Grep => vec![tool(grep::definition(), text!(grep::run), grep::TRAITS)],
        Builtin::Glob => vec![tool(glob::definition(), text!(glob::run), glob::TRAITS)],
        Builtin::ListDir => vec![tool(
            list_dir::definition(),
            text!(list_dir::run),
            list_dir::TRAITS,
        )],
        Builtin::ReadManyFiles => vec![tool(
            read_many_files::definition(),
            text!(read_many_files::run),
            read_many_files::TRAITS,
        )],
        Builtin::UpdatePlan => vec![tool(
            update_plan::definition(),
            text!(update_plan::run),
            update_plan::TRAITS,
        )],
        Builtin::Subagents => {
            let runners: [Executor; 4] = [
                text!(subagents::spawn_agent),
                text!(subagents::send_input),
                text!(subagents::wait),
                text!(subagents::close_agent),
            ];
            subagents::definitions()
                .into_iter()
                .zip(runners)
                .zip(subagents::TRAITS)
                .map(|((definition, run), traits)| tool(definition, run, traits))
                .collect()
        }
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
    let mut prompt = String::from(row_of(config).prompt.trim_end());
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
