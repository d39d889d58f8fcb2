//! The chat loop: what the user types (a new input when idle, steering while the agent
//! works, slash commands, Ctrl-C and Ctrl-D), the session's events, and the spinner's
//! ticks, all on one task that alone draws the screen.

use super::agent::{Agent, AgentWake, Settled};
use super::approvals::{self, PendingQuestion};
use super::compose::{self, ShellRun};
use super::input::{Input, InputControl};
use super::line_editor::{EditorAction, LineEditor};
use super::notify::Notifier;
use super::screen::{PromptLine, Screen};
use super::style::Palette;
use super::view::ChatView;
use crate::terminal_text;
use agent_host::extensions::CustomCommand;
use agent_protocol::StopReason;
use std::collections::VecDeque;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// A second Ctrl-C within this time quits.
const DOUBLE_INTERRUPT: Duration = Duration::from_secs(2);
/// How often the spinner is redrawn.
const TICK: Duration = Duration::from_millis(100);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    Continue,
    Quit,
}

enum Wake {
    Agent(AgentWake),
    Input(Input),
    /// A question of the approval policy (`None`: no more will come).
    Question(Option<PendingQuestion>),
    Tick,
}

/// Where the chat's input comes from: what the user types, and the approval policy's
/// questions (read-only mode asks none).
pub struct Channels {
    pub inputs: mpsc::UnboundedReceiver<Input>,
    pub input_control: InputControl,
    pub questions: Option<mpsc::UnboundedReceiver<PendingQuestion>>,
}

pub struct Driver {
    pub agent: Agent,
    pub screen: Screen,
    pub view: ChatView,
    pub palette: Palette,
    pub inputs: mpsc::UnboundedReceiver<Input>,
    pub(super) input_control: InputControl,
    pub credential_hint: Option<String>,
    questions: Option<mpsc::UnboundedReceiver<PendingQuestion>>,
    /// The question the next line answers.
    pub(super) pending: Option<PendingQuestion>,
    pub(super) editor: LineEditor,
    /// `!command`s run since the last input: the next input tells the model.
    pub(super) shell_runs: Vec<ShellRun>,
    /// The workspace's files for `@` completion, listed at the first Tab of an input.
    pub(super) files: Option<Vec<String>>,
    /// Input that came while a `!command` ran, handled next.
    pub(super) stashed: VecDeque<Input>,
    pub(super) notifier: Notifier,
    inputs_open: bool,
    last_interrupt: Option<Instant>,
    /// Lines read from a pipe while the agent worked: the next inputs, in order.
    queued: VecDeque<String>,
    /// Stdin (not a terminal) ended: leave once the queued inputs are done.
    quit_when_idle: bool,
    /// `/NAME [arguments]` sends a custom command's prompt.
    pub custom_commands: Vec<CustomCommand>,
    /// The commands' sandbox (`None`: danger-full-access or remote), for `/sandbox`.
    pub sandbox_rules: Option<std::sync::Arc<agent_host::sandbox::Sandbox>>,
    /// The MCP servers as they started, for `/mcp`.
    pub mcp: crate::McpServers,
}

impl Driver {
    pub fn new(
        agent: Agent,
        screen: Screen,
        view: ChatView,
        palette: Palette,
        channels: Channels,
        credential_hint: Option<String>,
        editor: LineEditor,
    ) -> Self {
        Self {
            agent,
            screen,
            view,
            palette,
            inputs: channels.inputs,
            input_control: channels.input_control,
            credential_hint,
            questions: channels.questions,
            pending: None,
            editor,
            shell_runs: Vec::new(),
            files: None,
            stashed: VecDeque::new(),
            notifier: Notifier::from_env(),
            inputs_open: true,
            last_interrupt: None,
            queued: VecDeque::new(),
            custom_commands: Vec::new(),
            sandbox_rules: None,
            mcp: None,
            quit_when_idle: false,
        }
    }

    /// Runs until the user quits; the session is closed on the way out. False when the
    /// session could not be stopped (see [`Agent::shutdown`]); and the session's id.
    pub async fn run(mut self) -> (bool, String) {
        self.refresh();
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            let busy = self.agent.is_busy();
            let wake = if let Some(input) = self.stashed.pop_front() {
                Wake::Input(input)
            } else {
                tokio::select! {
                    wake = self.agent.next() => Wake::Agent(wake),
                    input = self.inputs.recv(), if self.inputs_open => {
                        Wake::Input(input.unwrap_or(Input::Closed))
                    }
                    question = next_question(&mut self.questions), if self.pending.is_none() => {
                        Wake::Question(question)
                    }
                    _ = tick.tick(), if busy => Wake::Tick,
                }
            };
            let flow = match wake {
                Wake::Agent(AgentWake::Event(event)) => {
                    self.view.show(&event, &mut self.screen);
                    Flow::Continue
                }
                Wake::Agent(AgentWake::Finished(finished)) => {
                    for event in self.agent.drain_events() {
                        self.view.show(&event, &mut self.screen);
                    }
                    self.view.end_text(&mut self.screen);
                    self.view.input_finished();
                    self.files = None;
                    let settled = self.agent.settle(finished).await;
                    self.view.bar.follow(self.agent.config());
                    self.notifier.notify("agent-host: the input is done");
                    self.report(settled).await
                }
                Wake::Input(input) => self.on_input(input).await,
                Wake::Question(Some(question)) => {
                    // What is asked about first: the diff or the whole command.
                    let env = self.agent.environment();
                    for line in
                        super::approval_preview::preview(&question.question, &env, &self.palette).await
                    {
                        self.screen.line(&line);
                    }
                    // The question's row is cut at the terminal's width; a question whose
                    // "yes" lifts a guard is also written out whole, so the end of a long
                    // command cannot hide past the edge.
                    if question.question.danger.is_some() || question.question.unsandboxed.is_some() {
                        self.screen.line(&self.palette.red(&question.line()));
                    }
                    self.pending = Some(question);
                    self.view.waiting(true);
                    self.notifier
                        .notify("agent-host: a question waits for your answer");
                    Flow::Continue
                }
                Wake::Question(None) => {
                    self.questions = None;
                    Flow::Continue
                }
                Wake::Tick => Flow::Continue,
            };
            if flow == Flow::Quit {
                break;
            }
            self.refresh();
        }
        self.screen.set_prompt(None);
        self.screen.set_status(None);
        self.screen.set_question(None);
        if let Some(pending) = self.pending.take() {
            pending.refuse("the user quit the chat");
        }
        // No more questions: a subagent's later one is refused at once.
        self.questions = None;
        if self.agent.is_busy() {
            self.screen.line(&self.palette.dim("stopping the agent…"));
            self.screen.refresh();
        }
        let stopped = self.agent.shutdown().await;
        for event in self.agent.drain_events() {
            self.view.show(&event, &mut self.screen);
        }
        self.screen.finish();
        (stopped, self.agent.session_id().to_string())
    }

    fn refresh(&mut self) {
        if self.pending.as_ref().is_some_and(PendingQuestion::withdrawn) {
            self.pending = None;
            self.view.waiting(false);
            self.screen.line(
                &self
                    .palette
                    .dim("(the question was withdrawn: the input was interrupted)"),
            );
        }
        let question = self.pending.as_ref().map(|pending| {
            let question = &pending.question;
            match question.danger.is_some() || question.unsandboxed.is_some() {
                true => self.palette.red(&pending.line()),
                false => self.palette.yellow(&pending.line()),
            }
        });
        self.screen.set_question(question);
        self.screen.set_status(self.view.status());
        if self.screen.interactive() {
            let answers = self
                .pending
                .as_ref()
                .map(|pending| match pending.question.always {
                    Some(_) => "y, a or n",
                    None => "y or n",
                });
            let hint = if let Some(answers) = answers.filter(|_| self.editor.is_empty()) {
                self.palette.dim(answers)
            } else if self.editor.is_empty() && self.agent.is_busy() {
                self.palette.dim("type to steer the agent")
            } else if self.editor.is_empty() {
                self.palette
                    .dim("/ commands · @ attaches a file · ! runs a command · Alt-Enter new line")
            } else {
                String::new()
            };
            let (text, cursor) = self.editor.display();
            self.screen.set_prompt(Some(PromptLine {
                prefix: self.palette.bold("> "),
                text,
                cursor,
                hint,
            }));
            self.view.bar.queued = self.queued.len() + usize::from(!self.shell_runs.is_empty());
            self.screen.set_footer(Some(self.view.bar.line(&self.palette)));
        }
        self.screen.refresh();
    }

    async fn on_input(&mut self, input: Input) -> Flow {
        match input {
            Input::Key(key) => match self.editor.handle(key) {
                EditorAction::Edited => Flow::Continue,
                EditorAction::Submit(line) => self.on_line(line).await,
                EditorAction::Interrupt => self.on_interrupt(),
                EditorAction::Escape => {
                    // Only a cancel: unlike Ctrl-C, Esc never arms quitting.
                    if self.agent.is_busy() {
                        self.agent.control().cancel();
                        self.screen.line(&self.palette.dim("cancelling…"));
                    }
                    Flow::Continue
                }
                EditorAction::EndOfInput => Flow::Quit,
                EditorAction::ClearScreen => {
                    self.screen.clear_all();
                    Flow::Continue
                }
                EditorAction::Complete { start, word } => {
                    self.complete(start, &word).await;
                    Flow::Continue
                }
                EditorAction::External => {
                    self.edit_externally().await;
                    Flow::Continue
                }
                EditorAction::Expand => {
                    self.expand().await;
                    Flow::Continue
                }
            },
            Input::Paste(text) => {
                self.editor.paste(&text);
                Flow::Continue
            }
            Input::Resize => Flow::Continue,
            Input::Focus(focused) => {
                self.notifier.focused = focused;
                Flow::Continue
            }
            Input::Line(line) if self.agent.is_busy() && self.pending.is_none() => {
                self.queued.push_back(line);
                Flow::Continue
            }
            Input::Line(line) => self.on_line(line).await,
            Input::Interrupt => self.on_interrupt(),
            Input::Terminate => Flow::Quit,
            Input::Closed => {
                self.inputs_open = false;
                if let Some(pending) = self.pending.take() {
                    pending.refuse("nobody answered (the input ended)");
                }
                let work_left = self.agent.is_busy() || !self.queued.is_empty();
                if self.screen.interactive() || !work_left {
                    return Flow::Quit;
                }
                self.quit_when_idle = true;
                Flow::Continue
            }
        }
    }

    async fn on_line(&mut self, line: String) -> Flow {
        let text = line.trim();
        if text.is_empty() {
            return Flow::Continue;
        }
        // A slash command; else, while a question waits, its answer; else a message
        // (`//text` sends `/text` as it is).
        if text.starts_with('/') && !text.starts_with("//") {
            self.editor.remember(text);
            return self.slash_command(text).await;
        }
        if let Some(pending) = self.pending.take() {
            self.answer(pending, text);
            return Flow::Continue;
        }
        self.editor.remember(&line);
        if let Some(command) = text.strip_prefix('!') {
            self.run_shell(command.trim()).await;
            return Flow::Continue;
        }
        if let Some(literal) = text.strip_prefix("//") {
            return self.send(format!("/{literal}")).await;
        }
        self.send(line).await
    }

    /// Answers the pending question with `text`, or asks again.
    fn answer(&mut self, pending: PendingQuestion, text: &str) {
        let asked = format!("? {}", pending.subject());
        match pending.answer(text) {
            Ok(answer) => {
                let p = self.palette;
                let decision = approvals::describe(&answer);
                let decision = match answer {
                    agent_host::approval::ApprovalAnswer::Deny { .. } => p.red(&decision),
                    _ => p.green(&decision),
                };
                self.screen.line(&format!("{} → {decision}", p.dim(&asked)));
            }
            Err(pending) => {
                self.screen.line(&self.palette.yellow(pending.keys()));
                self.pending = Some(*pending);
                return;
            }
        }
        self.view.waiting(false);
    }

    /// A new input when idle, steering while the agent works; the files it names with `@`
    /// attached, and the `!command`s run since the last input quoted before it.
    pub(super) async fn send(&mut self, line: String) -> Flow {
        let env = self.agent.environment();
        let (message, attached) = compose::attach_files(&env, &line).await;
        if self.agent.is_busy() {
            self.agent.control().steer(message);
            self.screen
                .line(&self.palette.cyan(&format!("↳ steering: {}", one_line(&line))));
            self.show_attached(&attached);
            return Flow::Continue;
        }
        self.screen.line("");
        self.screen
            .line(&self.palette.bold(&format!("> {}", one_line(&line))));
        self.show_attached(&attached);
        let mut input = String::new();
        for run in self.shell_runs.drain(..) {
            input.push_str(&run.context());
            input.push_str("\n\n");
        }
        input.push_str(&message);
        self.start(input);
        Flow::Continue
    }

    fn show_attached(&mut self, attached: &[compose::Attached]) {
        for file in attached {
            let cut = if file.cut { ", cut" } else { "" };
            let line = format!(
                "  @ attached {} ({} bytes{cut})",
                one_line(&file.path),
                file.bytes
            );
            self.screen.line(&self.palette.dim(&line));
        }
    }

    fn start(&mut self, input: String) {
        self.last_interrupt = None;
        if self.agent.submit(input) {
            self.view.input_started();
        } else {
            self.screen
                .line(&self.palette.red("error: there is no session: /reset starts one"));
        }
    }

    fn on_interrupt(&mut self) -> Flow {
        let now = Instant::now();
        let again = self
            .last_interrupt
            .is_some_and(|t| now.duration_since(t) < DOUBLE_INTERRUPT);
        if again {
            return Flow::Quit;
        }
        self.last_interrupt = Some(now);
        if self.agent.is_busy() {
            self.agent.control().cancel();
            self.screen
                .line(&self.palette.dim("cancelling… (Ctrl-C again to quit)"));
        } else if !self.editor.is_empty() {
            self.editor.clear();
            self.last_interrupt = None;
        } else {
            self.screen
                .line(&self.palette.dim("(Ctrl-C again or Ctrl-D to quit)"));
        }
        Flow::Continue
    }

    /// Says how the input ended, then sends what waits: steering that came too late for
    /// the answer, and lines read from a pipe.
    async fn report(&mut self, settled: Settled) -> Flow {
        let p = self.palette;
        let mut cancelled = false;
        if let Some(outcome) = &settled.outcome {
            match outcome.stop_reason {
                StopReason::Cancelled | StopReason::Aborted => {
                    cancelled = true;
                    self.screen.line(&p.yellow("cancelled"));
                }
                StopReason::TurnLimit | StopReason::RoundLimit => self
                    .screen
                    .line(&p.yellow(&format!("stopped by a limit after {} turns", outcome.turns))),
                StopReason::ContextLength => self.screen.line(&p.yellow(
                    "the conversation no longer fits the model's context window: /reset starts over",
                )),
                StopReason::Completed | StopReason::AwaitingInput => {}
            }
        }
        if let Some(error) = &settled.error {
            // An endpoint's error can quote its reply or the model's words.
            self.screen
                .line(&p.red(&format!("error: {}", terminal_text::multi_line(error))));
            if settled.auth_error
                && let Some(hint) = &self.credential_hint
            {
                self.screen.line(&p.red(hint));
            }
        }
        if let Some(restored) = &settled.restored {
            self.screen.line(&p.dim(&format!("({restored})")));
        }
        // Steering is taken after a tool round; typed during the final answer, it waits.
        let late = self.agent.control().take_steering();
        if !late.is_empty() {
            if cancelled || settled.error.is_some() {
                self.screen
                    .line(&p.dim(&format!("(not sent: {})", one_line(&late.join(" / ")))));
            } else {
                self.screen
                    .line(&p.dim("(the agent had finished: steering sent as the next input)"));
                self.start(late.join("\n"));
                return Flow::Continue;
            }
        }
        if let Some(next) = self.queued.pop_front() {
            return Box::pin(self.send(next)).await;
        }
        if self.quit_when_idle {
            return Flow::Quit;
        }
        Flow::Continue
    }
}

/// Text on one line, as echoed back: pasted text may hold escape sequences too.
pub(super) fn one_line(text: &str) -> String {
    terminal_text::one_line(&text.trim().replace('\n', " ↵ ")).into_owned()
}

/// The next question, if there is a channel for them; never resolves otherwise.
async fn next_question(
    questions: &mut Option<mpsc::UnboundedReceiver<PendingQuestion>>,
) -> Option<PendingQuestion> {
    match questions {
        Some(questions) => questions.recv().await,
        None => std::future::pending().await,
    }
}
