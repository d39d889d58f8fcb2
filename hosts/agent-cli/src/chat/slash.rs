//! The chat loop's answers to slash commands and to the keys that reach past the input:
//! Tab's completions, `$EDITOR` (Ctrl-G), the pager (Ctrl-O, `/expand`), and `!command`.

use super::commands::{self, SlashCommand};
use super::compose::{self, Completion};
use super::driver::{Driver, Flow, one_line};
use super::external;
use super::input::Input;
use super::inspect;
use super::tool_lines::folded_output;
use agent_host::protocol::ToolCategory;
use crossterm::event::{KeyCode, KeyModifiers};

fn is_interrupt(input: &Input) -> bool {
    match input {
        Input::Interrupt | Input::Terminate => true,
        Input::Key(key) => key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL),
        _ => false,
    }
}

/// What `/init` asks, as the peers' `/init` does: a file for the next agent, from reading
/// the repository.
const INIT_PROMPT: &str = "Read this repository and write an AGENTS.md at its root for \
coding agents that will work in it: what the project is, how it is laid out, how to build \
it, run its tests and its linters (the exact commands), and the conventions its code \
follows. Keep it short and specific to this repository. If an AGENTS.md already exists, \
improve it rather than starting over.";

impl Driver {
    pub(super) async fn slash_command(&mut self, line: &str) -> Flow {
        let (name, arguments) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let custom = name
            .strip_prefix('/')
            .and_then(|name| agent_host::extensions::commands::find(&self.custom_commands, name));
        if let Some(custom) = custom {
            let prompt = custom.expand(arguments);
            return self.send(prompt).await;
        }
        let command = match commands::parse(line) {
            Ok(command) => command,
            Err(message) => {
                self.screen.line(&self.palette.red(&message));
                return Flow::Continue;
            }
        };
        let p = self.palette;
        match command {
            SlashCommand::Help => {
                self.screen.line(&commands::help());
                if !self.custom_commands.is_empty() {
                    self.screen.line(&commands::custom_help(&self.custom_commands));
                }
            }
            SlashCommand::Quit => return Flow::Quit,
            SlashCommand::Status => self.status(),
            SlashCommand::Cost => self.screen.line(&self.view.bar.usage_text()),
            SlashCommand::Expand => self.expand().await,
            SlashCommand::Sessions => self.sessions(),
            SlashCommand::Approval(None) => self.screen.line(&inspect::approval_text(self.agent.approval())),
            SlashCommand::Sandbox => {
                let text = inspect::sandbox_text(&self.view.bar.sandbox, self.sandbox_rules.as_deref());
                self.screen.line(&text);
            }
            SlashCommand::Mcp => {
                let text = inspect::mcp_text(self.mcp.as_deref()).await;
                self.screen.line(&text);
            }
            _ if self.agent.is_busy() => self.screen.line(
                &p.yellow("the agent is working: wait for it (or press Ctrl-C to cancel), then try again"),
            ),
            SlashCommand::Diff => self.diff().await,
            SlashCommand::Init => return self.send(INIT_PROMPT.to_string()).await,
            command => {
                let reset = command == SlashCommand::Reset;
                let line = commands::apply(command, &mut self.agent, &p).await;
                self.screen.line(&line);
                if reset {
                    self.view.bar.reset();
                }
                self.view.bar.follow(self.agent.config());
                self.view.bar.approval = self.agent.approval().to_string();
            }
        }
        Flow::Continue
    }

    fn status(&mut self) {
        let bar = &self.view.bar;
        let config = self.agent.config();
        let mut text = format!(
            "model: {} (provider {}) · reasoning effort {}\napproval: {} · sandbox: {}\nworkspace: {}",
            one_line(&config.model),
            one_line(&config.endpoint),
            commands::effort_name(config.reasoning_effort),
            bar.approval,
            bar.sandbox,
            self.agent.workspace().display()
        );
        text.push_str(&match self.agent.is_saved() {
            true => format!("\nsession: {} (saved)", self.agent.session_id()),
            false => format!("\nsession: {} (not saved: --no-persist)", self.agent.session_id()),
        });
        text.push('\n');
        text.push_str(&bar.usage_text());
        self.screen.line(&text);
    }

    fn sessions(&mut self) {
        let workspace = self.agent.workspace();
        match crate::sessions::sessions_of(&workspace) {
            Ok(sessions) if sessions.is_empty() => self.screen.line("no saved sessions of this workspace"),
            Ok(sessions) => {
                let mut text = String::from("saved sessions of this workspace, newest first:");
                for line in crate::sessions::picker_lines(&sessions, 20) {
                    text.push_str("\n  ");
                    text.push_str(&line);
                }
                text.push_str("\n(agent-host chat --resume ID re-enters one)");
                self.screen.line(&text);
            }
            Err(message) => self.screen.line(&self.palette.red(&format!("error: {message}"))),
        }
    }

    async fn diff(&mut self) {
        let lines = super::session_diff::lines(self.agent.session(), &self.palette).await;
        for line in lines {
            self.screen.line(&line);
        }
    }

    /// Tab: a slash command's name, an `@` file (fuzzy), or a path.
    pub(super) async fn complete(&mut self, start: usize, word: &str) {
        let env = self.agent.environment();
        let completion = if start == 0 && word.starts_with('/') {
            let mut names = commands::names();
            names.extend(self.custom_commands.iter().map(|c| c.name.clone()));
            compose::complete_command(word, &names)
        } else if let Some(query) = word.strip_prefix('@') {
            if self.files.is_none() {
                self.files = Some(compose::workspace_files(&env).await);
            }
            compose::complete_at(query, self.files.as_deref().unwrap_or_default())
        } else {
            compose::complete_path(word, &compose::folder_entries(&env, word).await)
        };
        let Completion { replacement, listed } = completion;
        if let Some(replacement) = replacement {
            self.editor.complete(start, &replacement);
        }
        if !listed.is_empty() {
            let listed: Vec<String> = listed.iter().map(|l| one_line(l)).collect();
            self.screen.line(&self.palette.dim(&listed.join("  ")));
        }
    }

    /// Ctrl-G: the input in `$EDITOR`, and back.
    pub(super) async fn edit_externally(&mut self) {
        if !self.screen.interactive() {
            return;
        }
        self.screen.set_prompt(None);
        self.screen.set_status(None);
        self.screen.set_footer(None);
        self.screen.refresh();
        match external::edit(&self.input_control, &self.editor.text()).await {
            Ok(text) => self.editor.set_text(&text),
            Err(message) => self.screen.line(&self.palette.red(&format!("error: {message}"))),
        }
    }

    /// Ctrl-O and `/expand`: the last call's whole output in the pager.
    pub(super) async fn expand(&mut self) {
        let Some((label, output)) = self.view.last_output().cloned() else {
            self.screen.line(&self.palette.dim("(no tool output yet)"));
            return;
        };
        if !self.screen.interactive() {
            self.screen.line(&output);
            return;
        }
        self.screen.set_prompt(None);
        self.screen.set_status(None);
        self.screen.set_footer(None);
        self.screen.refresh();
        let text = format!("{label}\n\n{output}\n");
        if let Err(message) = external::page(&self.input_control, &text).await {
            self.screen.line(&self.palette.red(&format!("error: {message}")));
        }
    }

    /// `!command`: run in the session's environment; its output is shown folded and goes to
    /// the model with the next input.
    pub(super) async fn run_shell(&mut self, command: &str) {
        if command.is_empty() {
            self.screen
                .line(&self.palette.yellow("!command runs a command: e.g. !git status"));
            return;
        }
        // The loop would stop showing the agent's work while the command ran.
        if self.agent.is_busy() {
            self.screen.line(
                &self
                    .palette
                    .yellow("the agent is working: run !commands when it is done (or Ctrl-C to cancel it)"),
            );
            return;
        }
        self.screen
            .line(&format!("{} {}", self.palette.cyan("!"), one_line(command)));
        self.screen.refresh();
        let env = self.agent.environment();
        // Ctrl-C stops the command; what else is typed meanwhile waits its turn.
        let (inputs, stashed) = (&mut self.inputs, &mut self.stashed);
        let cancel = async move {
            while let Some(input) = inputs.recv().await {
                if is_interrupt(&input) {
                    // Leaving is still leaving once the command is stopped.
                    if matches!(input, Input::Terminate) {
                        stashed.push_back(input);
                    }
                    return;
                }
                stashed.push_back(input);
            }
            std::future::pending::<()>().await
        };
        match compose::run_shell(&env, command, cancel).await {
            Ok(run) => {
                for line in folded_output(ToolCategory::Command, &run.output, &self.palette) {
                    self.screen.line(&line);
                }
                if run.exit_code != 0 {
                    self.screen
                        .line(&self.palette.yellow(&format!("  exit code {}", run.exit_code)));
                }
                self.view.set_last_output(format!("! {command}"), &run.output);
                self.screen.line(
                    &self
                        .palette
                        .dim("  (the output goes to the model with your next input)"),
                );
                self.shell_runs.push(run);
            }
            Err(message) => self
                .screen
                .line(&self.palette.red(&format!("error: cannot run it: {message}"))),
        }
    }
}
