//! The session: history, lifecycle and the agentic loop (section 2 of the spec). Tool
//! rounds are in `tool_round`, the context-window check in `context`.

mod call_repair;
mod compaction;
mod context;
mod offload;
mod reminders;
mod request;
mod saved;
mod text_calls;
mod tool_round;

use crate::config::SessionConfig;
use crate::events::{EndReason, Event, EventData, LimitName, Warning};
use crate::history::{History, HistoryEntry, Turn};
use crate::llm::retry::{self, RetryHost};
use crate::llm::{ErrorKind, LlmClient, LlmError, ReasoningEffort, Request, RetryPolicy, StreamEvent};
use crate::loop_detection::LoopDetector;
use crate::ports::{Interruption, Ports};
use crate::profile::Profile;
use crate::prompt_context::{self, PromptContext};
use serde_json::{Value, json};

pub use agent_protocol::{AgentError, SessionState, StopReason, SubmitOutcome};
pub use compaction::CompactionReport;
use std::collections::VecDeque;

/// A conversation with the model and the loop that runs it.
#[derive(Debug)]
pub struct Session {
    id: String,
    config: SessionConfig,
    ports: Ports,
    profile: Profile,
    client: LlmClient,
    history: History,
    state: SessionState,
    total_turns: u32,
    retry_policy: RetryPolicy,
    loop_detector: LoopDetector,
    /// Whether the 80 % context warning was given (it is given once per crossing).
    context_warned: bool,
    /// Git snapshot and project docs, gathered at the first input (not saved: a restored
    /// session gathers them again).
    prompt_context: Option<PromptContext>,
    /// What the session's tools last saw of each file (not saved either).
    stamps: crate::file_stamps::FileStamps,
    /// The system prompt, built once a day (see `request.rs`).
    prefix: std::cell::RefCell<Option<request::RequestPrefix>>,
    /// What the current input's requests used, and the session's (saved in snapshots).
    input_usage: agent_protocol::UsageTotals,
    session_usage: agent_protocol::UsageTotals,
}

/// How one pass of the loop ended.
enum Exit {
    Stopped(StopReason),
    Failed(LlmError),
}

impl Session {
    /// Creates a session and emits SESSION_START.
    pub fn new(config: SessionConfig, ports: Ports) -> Self {
        let id = config
            .session_id
            .clone()
            .unwrap_or_else(|| new_uuid(&ports.host.random_bytes(16)));
        let session = Self::assemble(id, config, ports, Vec::new(), 0, SessionState::Idle);
        session.emit(EventData::SessionStart {
            config: Box::new(session.config.clone()),
        });
        session
    }

    fn assemble(
        id: String,
        config: SessionConfig,
        ports: Ports,
        history: Vec<Turn>,
        total_turns: u32,
        state: SessionState,
    ) -> Self {
        let profile = Profile::for_config(&config);
        let retry_policy = config
            .retry
            .as_ref()
            .map_or_else(RetryPolicy::default, RetryPolicy::from_settings);
        let client = LlmClient::new(ports.transport.clone(), config.endpoint.clone(), config.protocol);
        let stamps = crate::file_stamps::FileStamps::new(config.limits.stale_read_guard);
        Self {
            id,
            config,
            ports,
            profile,
            client,
            history: History::new(history),
            state,
            total_turns,
            retry_policy,
            loop_detector: LoopDetector::default(),
            context_warned: false,
            prompt_context: None,
            stamps,
            prefix: std::cell::RefCell::new(None),
            input_usage: Default::default(),
            session_usage: Default::default(),
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn state(&self) -> SessionState {
        self.state
    }

    pub fn history(&self) -> &[Turn] {
        &self.history
    }

    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// Takes effect on the next LLM call.
    pub fn set_reasoning_effort(&mut self, effort: Option<ReasoningEffort>) {
        self.config.reasoning_effort = effort;
    }

    pub fn history_json(&self) -> String {
        serde_json::to_string(&*self.history).unwrap_or_else(|_| "[]".to_string())
    }

    /// Closes the session (SESSION_END); idempotent.
    pub fn close(&mut self) {
        self.close_with(EndReason::Closed);
    }

    fn close_with(&mut self, reason: EndReason) {
        if self.state == SessionState::Closed {
            return;
        }
        self.state = SessionState::Closed;
        self.emit(EventData::SessionEnd {
            final_state: SessionState::Closed,
            reason,
        });
    }

    fn now(&self) -> u64 {
        self.ports.host.now_ms()
    }

    fn emit(&self, data: EventData) {
        self.ports
            .host
            .emit(Event::new(self.id.clone(), self.now(), data));
    }

    /// Appends to the history and hands the host the new item for its journal.
    fn append(&mut self, turn: Turn) {
        let index = self.history.len() as u32;
        self.ports.host.record_history(
            &self.id,
            &HistoryEntry::Append {
                index,
                turn: turn.clone(),
            },
        );
        self.history.push(turn);
    }

    /// Runs the loop on an input, then on each queued follow-up.
    pub fn submit(&mut self, input: &str) -> Result<SubmitOutcome, AgentError> {
        match self.state {
            SessionState::Closed => return Err(AgentError::Closed),
            SessionState::Processing => return Err(AgentError::Busy),
            SessionState::Idle | SessionState::AwaitingInput => {}
        }
        self.config.validate().map_err(AgentError::InvalidConfig)?;
        if self.config.limits.max_cost_cents > 0.0
            && crate::model_catalog::price_of(&self.config.model).is_none()
        {
            return Err(AgentError::InvalidConfig(format!(
                "limits.max-cost-cents: the model catalog has no price for {:?}, so a cost budget cannot be kept; use limits.max-session-tokens instead",
                self.config.model
            )));
        }
        let mut queue = VecDeque::from([input.to_string()]);
        let mut outcome = None;
        while let Some(input) = queue.pop_front() {
            let result = self.process_input(&input)?;
            // A queued follow-up is the user's next message, so it also answers a question.
            let finished = matches!(
                result.stop_reason,
                StopReason::Completed
                    | StopReason::AwaitingInput
                    | StopReason::RoundLimit
                    | StopReason::TurnLimit
            );
            outcome = Some(result);
            if !finished {
                break;
            }
            queue.extend(self.ports.host.take_follow_ups(&self.id));
        }
        outcome.ok_or_else(|| AgentError::Internal("no input was processed".to_string()))
    }

    /// The project's git snapshot and instruction files, read once per session (spec 6.4).
    fn gather_prompt_context(&mut self) {
        if self.prompt_context.is_none() {
            let family = crate::profile::id_of(&self.config).family();
            self.prompt_context = Some(prompt_context::gather(
                self.ports.env.as_ref(),
                family.instruction_files(),
            ));
            self.forget_request_prefix();
        }
    }

    /// A profile that lists the workspace's files gets them once, before the first input,
    /// as a note in the history rather than in the system prompt: the prompt (and the tools
    /// that follow it in local models' templates) stays the same from one workspace to the
    /// next, so a server's prompt cache keeps it, and a resumed session sees the list it saw.
    fn add_workspace_overview(&mut self, input: &str) {
        if !crate::profile::row_of(&self.config).workspace_overview {
            return;
        }
        let env = self.ports.env.as_ref();
        if let Some(overview) = prompt_context::workspace_overview(env, input) {
            // A file shown whole counts as read, as read_file would have it.
            let working_dir = env.working_directory();
            for (path, bytes) in &overview.shown {
                self.stamps.saw(path, &working_dir, bytes);
            }
            self.append(Turn::System {
                content: overview.text,
                timestamp_ms: self.now(),
            });
        }
    }

    /// The profile as this session uses it: capabilities, tools and the system prompt the
    /// next request will carry, as a JSON object.
    pub fn describe(&mut self) -> Result<Value, AgentError> {
        self.config.validate().map_err(AgentError::InvalidConfig)?;
        self.gather_prompt_context();
        let mut description = self.profile.describe(&self.config.model);
        description["system_prompt"] = json!(&*self.request_prefix().0);
        Ok(description)
    }

    /// Adds a response's usage to the input's and the session's totals and returns it.
    pub(super) fn add_usage(&mut self, usage: &crate::llm::Usage) -> agent_protocol::UsageTotals {
        let price = crate::model_catalog::price_of(&self.config.model);
        let totals = crate::usage::request_totals(usage, self.config.protocol, price.as_ref());
        self.input_usage.add(&totals);
        self.session_usage.add(&totals);
        totals
    }

    /// Counts a response's usage: the session's totals, and its tree's spending, where it
    /// takes the place of what [`Self::reserve`] spent for the request.
    pub(super) fn count_usage(&mut self, usage: &crate::llm::Usage, reserved: agent_protocol::Spending) {
        let totals = self.add_usage(usage);
        self.ports
            .host
            .spend(&self.id, agent_protocol::Spending::of(&totals), reserved);
    }

    /// Before a request of an estimated `prompt_tokens`: spends them (at the input price)
    /// from the tree's budget at once, so that a request cut short (a cancel, a closed
    /// subagent, a broken stream), whose usage never arrives, still counts its prompt.
    /// Returns what was spent, for [`Self::count_usage`].
    pub(super) fn reserve(&self, prompt_tokens: u64) -> agent_protocol::Spending {
        let price = crate::model_catalog::price_of(&self.config.model);
        let reserved = agent_protocol::Spending {
            tokens: prompt_tokens,
            cost_usd: price.map_or(0.0, |p| prompt_tokens as f64 * p.input / 1e6),
        };
        self.ports.host.spend(&self.id, reserved, Default::default());
        reserved
    }

    /// Gives a reservation back: its request was refused before anything was generated.
    fn release(&self, reserved: agent_protocol::Spending) {
        self.ports.host.spend(&self.id, Default::default(), reserved);
    }

    /// What the session's tree has spent by now: the host's total, never below what this
    /// session alone has.
    pub(super) fn tree_spending(&self) -> agent_protocol::Spending {
        self.ports
            .host
            .spend(&self.id, Default::default(), Default::default())
            .max(&agent_protocol::Spending::of(&self.session_usage))
    }

    fn process_input(&mut self, input: &str) -> Result<SubmitOutcome, AgentError> {
        self.state = SessionState::Processing;
        self.input_usage = Default::default();
        self.gather_prompt_context();
        if self.history.is_empty() {
            self.add_workspace_overview(input);
        }
        self.append(Turn::User {
            content: input.to_string(),
            timestamp_ms: self.now(),
        });
        self.emit(EventData::UserInput {
            content: input.to_string(),
        });
        self.drain_steering();

        let mut rounds = 0u32;
        let mut final_text = String::new();
        let exit = self.run_rounds(&mut rounds, &mut final_text);
        let stop = match exit {
            Exit::Stopped(stop) => stop,
            Exit::Failed(error) if error.kind == ErrorKind::ContextLength => {
                // Not fatal (spec appendix B): the host decides how to make room.
                self.emit(EventData::Warning(Warning::ContextLength {
                    message: format!("The conversation no longer fits the model's context window: {error}"),
                }));
                StopReason::ContextLength
            }
            Exit::Failed(error) => {
                self.emit(EventData::Error {
                    message: error.to_string(),
                    kind: error.kind,
                    retryable: error.kind.retryable(),
                });
                // A network blip, an overloaded or failing server, a stream cut mid-answer:
                // the input ends with the error once the retries are spent, and the session
                // takes the next input. What no retry can fix (authentication,
                // permission, an invalid request, the configuration) closes it (spec 2.8).
                if transient(error.kind) {
                    self.state = SessionState::Idle;
                } else {
                    self.close_with(EndReason::Error);
                }
                return Err(AgentError::Llm(error.to_string()));
            }
        };
        self.emit(EventData::ProcessingEnd {
            stop_reason: stop,
            rounds,
            turns: self.total_turns,
            usage: self.input_usage,
            session_usage: self.session_usage,
        });
        match stop {
            StopReason::Aborted => self.close_with(EndReason::Aborted),
            StopReason::AwaitingInput => self.state = SessionState::AwaitingInput,
            _ => self.state = SessionState::Idle,
        }
        Ok(SubmitOutcome {
            stop_reason: stop,
            rounds,
            turns: self.total_turns,
            final_text,
        })
    }

    /// Checks the host's interruption flag; a cancel or abort ends the input.
    fn interruption(&self) -> Option<StopReason> {
        match self.ports.host.abort_requested(&self.id)? {
            Interruption::CancelInput => Some(StopReason::Cancelled),
            Interruption::AbortSession => Some(StopReason::Aborted),
        }
    }

    fn run_rounds(&mut self, rounds: &mut u32, final_text: &mut String) -> Exit {
        let mut nudged = false;
        loop {
            let limits = &self.config.limits;
            if limits.max_tool_rounds_per_input > 0 && *rounds >= limits.max_tool_rounds_per_input {
                self.emit(EventData::TurnLimit {
                    limit: LimitName::MaxToolRoundsPerInput,
                    value: *rounds,
                });
                return Exit::Stopped(StopReason::RoundLimit);
            }
            if limits.max_turns > 0 && self.total_turns >= limits.max_turns {
                // max_turns counts LLM cycles (assistant turns) across the session.
                self.emit(EventData::TurnLimit {
                    limit: LimitName::MaxTurns,
                    value: self.total_turns,
                });
                return Exit::Stopped(StopReason::TurnLimit);
            }
            if let Some(stop) = self.budget_spent() {
                return Exit::Stopped(stop);
            }
            if let Some(stop) = self.interruption() {
                return Exit::Stopped(stop);
            }

            self.take_host_tool_changes();
            self.compact_if_needed();
            // A summary request may have spent the rest of a budget.
            if let Some(stop) = self.budget_spent() {
                return Exit::Stopped(stop);
            }
            let reserved = self.reserve(self.estimated_tokens());
            let mut response = self.call_with_retries(|| self.call_model());
            if response
                .as_ref()
                .is_err_and(|error| error.kind == ErrorKind::ContextLength)
                && self.make_room_after_refusal()
            {
                if let Some(stop) = self.budget_spent() {
                    // Refused as too long: nothing was generated, nothing billed.
                    self.release(reserved);
                    return Exit::Stopped(stop);
                }
                // Once per refusal: the provider's count decides whether it fits now.
                response = self.call_with_retries(|| self.call_model());
            }
            let mut response = match response {
                Ok(response) => response,
                Err(error) if error.kind == ErrorKind::Cancelled => {
                    return Exit::Stopped(self.interruption().unwrap_or(StopReason::Cancelled));
                }
                Err(error) => {
                    // Refused with an error status (authentication, a bad request, rate
                    // limits once retries are spent): nothing was generated, nothing billed.
                    // A stream that broke mid-answer keeps its reservation.
                    if error.status.is_some_and(|status| status >= 400) {
                        self.release(reserved);
                    }
                    return Exit::Failed(error);
                }
            };
            self.total_turns += 1;
            if self.reads_calls_from_text() {
                let turn = self.total_turns;
                let available = self.profile.registry.names();
                let history = &self.history;
                text_calls::take_calls_from_text(
                    &mut response.message,
                    &available,
                    |block| text_calls::quoted_in(history, block),
                    |i| format!("call_text_{turn}_{i}"),
                );
            }
            call_repair::repair_arguments(&mut response.message);
            let text = response.message.text();
            let tool_calls = response.message.tool_calls();
            self.emit(EventData::AssistantTextEnd {
                text: text.clone(),
                reasoning: response.message.reasoning(),
                tool_calls: tool_calls.clone(),
                usage: response.usage,
                finish_reason: response.finish_reason,
            });
            let usage = response.usage;
            self.count_usage(&usage, reserved);
            self.append(Turn::Assistant {
                message: response.message,
                usage,
                response_id: response.id,
                timestamp_ms: self.now(),
            });
            self.check_context_usage(&usage);
            *final_text = text;
            if tool_calls.is_empty()
                && !nudged
                && self.reminders_on()
                && !asks_a_question(final_text)
                && self.may_send_another_request()
                && let Some(reminder) = self.unverified_finish()
            {
                nudged = true;
                self.append(Turn::System {
                    content: reminder,
                    timestamp_ms: self.now(),
                });
                continue;
            }
            if tool_calls.is_empty() {
                let stop = if asks_a_question(final_text) {
                    StopReason::AwaitingInput
                } else {
                    StopReason::Completed
                };
                return Exit::Stopped(stop);
            }

            *rounds += 1;
            let results = self.execute_round(&tool_calls);
            self.append(Turn::ToolResults {
                results,
                timestamp_ms: self.now(),
            });
            self.drain_steering();
            self.detect_loop(&tool_calls);
        }
    }

    /// Whether the limits let the input send one more request (a reminder is never the
    /// reason an input ends at a limit instead of completing).
    fn may_send_another_request(&self) -> bool {
        let limits = &self.config.limits;
        !(limits.max_turns > 0 && self.total_turns >= limits.max_turns) && self.budget_exceeded().is_none()
    }

    /// Stops the input (TURN_LIMIT) once the token or cost budget is spent: by the session
    /// and its subagents together, whichever of them is about to send a request.
    fn budget_spent(&self) -> Option<StopReason> {
        let (limit, value) = self.budget_exceeded()?;
        self.emit(EventData::TurnLimit { limit, value });
        Some(StopReason::TurnLimit)
    }

    /// The budget limit the session tree has reached, with the amount spent.
    fn budget_exceeded(&self) -> Option<(LimitName, u32)> {
        let limits = &self.config.limits;
        if limits.max_session_tokens == 0 && limits.max_cost_cents <= 0.0 {
            return None;
        }
        let spent = self.tree_spending();
        let tokens = spent.tokens;
        let cents = spent.cost_usd * 100.0;
        let (limit, value) = if limits.max_session_tokens > 0 && tokens >= limits.max_session_tokens {
            (
                LimitName::MaxSessionTokens,
                u32::try_from(tokens).unwrap_or(u32::MAX),
            )
        } else if limits.max_cost_cents > 0.0 && cents >= limits.max_cost_cents {
            (LimitName::MaxCostCents, cents.ceil() as u32)
        } else {
            return None;
        };
        Some((limit, value))
    }

    /// Compacts after the provider refused a request as too long; whether the history
    /// became smaller (so the request is worth sending again).
    fn make_room_after_refusal(&mut self) -> bool {
        let (report, failure) = self.compact_with(crate::events::CompactionTrigger::ContextLength, true);
        if let Some(error) = failure {
            self.emit(EventData::Warning(Warning::Compaction {
                message: format!("The conversation could not be summarised: {error}"),
            }));
        }
        report.tokens_after < report.tokens_before
    }

    /// Records the round's calls and, when the recent ones repeat a pattern, tells the model
    /// (a steering turn) and the host (LOOP_DETECTION).
    fn detect_loop(&mut self, calls: &[crate::llm::ToolCall]) {
        let limits = &self.config.limits;
        if !limits.enable_loop_detection {
            return;
        }
        let window = limits.loop_detection_window.max(1) as usize;
        for call in calls {
            self.loop_detector.record(&call.name, &call.arguments, window);
        }
        let Some(pattern) = self.loop_detector.detect(window) else {
            return;
        };
        self.loop_detector.reset();
        let warning = format!(
            "Loop detected: the last {window} tool calls follow a repeating pattern. \
             Try a different approach."
        );
        self.append(Turn::Steering {
            content: warning.clone(),
            timestamp_ms: self.now(),
        });
        self.emit(EventData::LoopDetection {
            message: warning,
            window: window as u32,
            pattern_length: pattern as u32,
        });
    }

    fn drain_steering(&mut self) {
        for message in self.ports.host.take_steering(&self.id) {
            self.append(Turn::Steering {
                content: message.clone(),
                timestamp_ms: self.now(),
            });
            self.emit(EventData::SteeringInjected { content: message });
        }
    }

    /// An LLM call, retried by the policy while nothing of the answer has been shown.
    fn call_with_retries(
        &self,
        attempt: impl FnMut() -> Result<crate::llm::Response, (LlmError, bool)>,
    ) -> Result<crate::llm::Response, LlmError> {
        struct Host<'a>(&'a Session);
        impl RetryHost for Host<'_> {
            fn pause(&mut self, ms: u64) -> bool {
                self.0.ports.host.sleep(&self.0.id, ms)
            }
            fn unit_random(&mut self) -> f64 {
                let bytes = self.0.ports.host.random_bytes(8);
                let mut word = [0u8; 8];
                for (slot, byte) in word.iter_mut().zip(bytes) {
                    *slot = byte;
                }
                // 53 random bits make a uniform double in [0, 1).
                (u64::from_le_bytes(word) >> 11) as f64 / (1u64 << 53) as f64
            }
            fn retrying(&mut self, error: &LlmError, attempt: u32, delay_ms: u64) {
                self.0.emit(EventData::Warning(Warning::LlmRetry {
                    message: format!("LLM request failed ({error}); retrying in {delay_ms} ms"),
                    attempt,
                    delay_ms,
                    error_kind: error.kind,
                }));
            }
        }
        let policy = self.retry_policy;
        retry::run(&policy, &mut Host(self), attempt)
    }

    /// One attempt; the error says whether any of the answer was already streamed out.
    fn call_model(&self) -> Result<crate::llm::Response, (LlmError, bool)> {
        let (system, _) = self.request_prefix();
        self.history.wire_cache().borrow_mut().keep_prompt(&system);
        let request = self.conversation_request(&system);
        let host = self.ports.host.clone();
        let id = self.id.clone();
        let interrupted = move || host.abort_requested(&id).is_some();
        let delivered = std::cell::Cell::new(false);
        let mut emit = |event: StreamEvent| {
            delivered.set(true);
            let data = match event {
                StreamEvent::TextStart => EventData::AssistantTextStart {},
                StreamEvent::TextDelta(delta) => EventData::AssistantTextDelta { delta },
                StreamEvent::ReasoningStart => EventData::ReasoningStart {},
                StreamEvent::ReasoningDelta(delta) => EventData::ReasoningDelta { delta },
                StreamEvent::ReasoningEnd => EventData::ReasoningEnd {},
                // Text end is reported once per response, with the whole text, by the loop.
                StreamEvent::TextEnd
                | StreamEvent::ToolCallStart { .. }
                | StreamEvent::ToolCallEnd { .. } => return,
            };
            self.emit(data);
        };
        self.client
            .stream(&request, &interrupted, &mut emit)
            .map_err(|error| (error, delivered.get()))
    }

    /// One attempt at a request whose answer is not shown as it streams (a summary).
    fn stream_quietly(&self, request: &Request) -> Result<crate::llm::Response, (LlmError, bool)> {
        let host = self.ports.host.clone();
        let id = self.id.clone();
        let interrupted = move || host.abort_requested(&id).is_some();
        self.client
            .stream(request, &interrupted, &mut |_| {})
            .map_err(|error| (error, false))
    }
}

/// Failures that say nothing against the next input: the provider or the network, not the
/// request or the credentials.
fn transient(kind: ErrorKind) -> bool {
    kind.retryable() || kind == ErrorKind::Stream
}

/// Whether a text-only answer ends by asking the user something (state AWAITING_INPUT):
/// its last non-empty line ends with a question mark.
fn asks_a_question(text: &str) -> bool {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .is_some_and(|line| line.ends_with('?'))
}

/// A version-4 UUID from 16 random bytes.
pub fn new_uuid(random: &[u8]) -> String {
    let mut bytes = [0u8; 16];
    for (slot, byte) in bytes.iter_mut().zip(random) {
        *slot = *byte;
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}
