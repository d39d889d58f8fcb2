//! The approval policy: modes, the [`ApprovalPrompt`] an application answers through, and
//! the session's memory of "always" answers.

use crate::approval::category::ToolCategory;
use crate::approval::command_prefix::{self, CommandRule};
use crate::environments::policy::command_guard::dangerous;
use crate::hooks::Hooks;
use agent_protocol::ToolCategory as Kind;
use agent_protocol::ports::{Approval, ApprovalRequest};
use async_trait::async_trait;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// How tool calls are approved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Run every call (dangerous commands excepted).
    #[default]
    Auto,
    /// Ask before writes and commands.
    Ask,
    /// Only reading: writes, commands and non-`read` host tools are refused.
    ReadOnly,
}

impl ApprovalMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Auto => "auto",
            ApprovalMode::Ask => "ask",
            ApprovalMode::ReadOnly => "read-only",
        }
    }
}

impl std::fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ApprovalMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Self::Auto),
            "ask" => Ok(Self::Ask),
            "read-only" | "readonly" | "read_only" => Ok(Self::ReadOnly),
            other => Err(format!(
                "unknown approval mode {other:?}: use auto, ask or read-only"
            )),
        }
    }
}

/// One question to the user about one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalQuestion {
    /// The session asking (a subagent's own session for its calls).
    pub session_id: String,
    pub call_id: String,
    pub tool_name: String,
    /// One line from the core: `run \`cargo test\``, `write src/lib.rs`, `call apply_patch`.
    pub summary: String,
    /// The validated arguments, as JSON text (e.g. to show a patch or an edit in full).
    pub arguments_json: String,
    /// Why the command is dangerous, when it is; such a question offers no "always".
    pub danger: Option<String>,
    /// Set when the question is whether to run a command the sandbox refused again
    /// without the sandbox, with all the user's rights: which sandbox refused it and the
    /// line of its output that shows it (`workspace-write (network off): ... Permission
    /// denied`). Such a question offers no "always".
    pub unsandboxed: Option<String>,
    /// What answering [`ApprovalAnswer::Always`] allows for the rest of the session;
    /// `None` when "always" is not offered (dangerous commands).
    pub always: Option<AlwaysScope>,
}

impl ApprovalQuestion {
    /// A question about writing `a.txt`, offering "always" for `write_file` when `always` is
    /// set: the fixture of the prompts' unit tests, here and in the CLI's chat. Public rather
    /// than `cfg(test)` because the CLI is another crate, which sees this one built without
    /// `test`.
    #[doc(hidden)]
    pub fn sample(always: bool) -> Self {
        Self {
            session_id: "s".into(),
            call_id: "c".into(),
            tool_name: "write_file".into(),
            summary: "write a.txt".into(),
            arguments_json: "{}".into(),
            danger: None,
            unsandboxed: None,
            always: always.then(|| AlwaysScope::Tool("write_file".into())),
        }
    }
}

/// What an "always" answer covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlwaysScope {
    /// Every later call of this tool.
    Tool(String),
    /// Later shell commands covered by these rules (see [`command_prefix`]).
    Commands(Vec<CommandRule>),
}

impl std::fmt::Display for AlwaysScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AlwaysScope::Tool(name) => write!(f, "every {name} call"),
            AlwaysScope::Commands(rules) => {
                let rules: Vec<String> = rules.iter().map(ToString::to_string).collect();
                write!(f, "commands {}", rules.join(" or "))
            }
        }
    }
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalAnswer {
    /// Run this call.
    Once,
    /// Run this call and, for the rest of the session, what the question's `always` covers
    /// (treated as [`ApprovalAnswer::Once`] when it offers nothing).
    Always,
    /// Do not run it; the reason, if any, reaches the model with the refusal.
    Deny { reason: Option<String> },
    /// Do not run it and, for the rest of the session, refuse without asking what the
    /// question's `always` covers (a plain refusal when it offers nothing): an editor's
    /// "always reject".
    Never { reason: Option<String> },
}

/// Asks the user about a tool call. Implemented by the command line's terminal prompt for
/// `run`, by an interactive UI, or by a test's script.
///
/// Questions of one session come one at a time, but subagents run concurrently, so an
/// implementation that shares one screen should serialise them. The call may wait as long
/// as the user takes; interrupting the session abandons it (the future is dropped and the
/// call is denied).
#[async_trait]
pub trait ApprovalPrompt: Send + Sync {
    async fn ask(&self, question: &ApprovalQuestion) -> ApprovalAnswer;
}

/// What "always" answers allowed, or refused, so far in one session.
#[derive(Debug, Default)]
struct Remembered {
    tools: BTreeSet<String>,
    commands: Vec<CommandRule>,
    refused_tools: BTreeSet<String>,
    refused_commands: Vec<CommandRule>,
}

/// What a call does, for the decision.
enum CallKind {
    Read,
    Write,
    Command(String),
}

/// How tool calls are approved, with the session's memory of "always" answers. Sessions
/// hold it in an `Arc`; [`ApprovalPolicy::for_session`] gives each new session its own
/// memory, shared with its subagents.
pub struct ApprovalPolicy {
    mode: ApprovalMode,
    prompt: Option<Arc<dyn ApprovalPrompt>>,
    allow_dangerous: bool,
    memory: Mutex<Remembered>,
    /// Whether this instance already belongs to one session (its memory is that session's).
    session_bound: bool,
    observer: Option<CallObserver>,
    /// Whether `ask` mode offers to run a command the sandbox refused again without it.
    unsandboxed_reruns: bool,
    /// The user's hooks (`[hooks]`): run before each call is decided on, and on events.
    hooks: Option<Arc<Hooks>>,
}

/// Told of every call a session is about to decide on, in the order the calls run.
pub type CallObserver = Arc<dyn Fn(&ApprovalRequest) + Send + Sync>;

impl Default for ApprovalPolicy {
    fn default() -> Self {
        Self::new(ApprovalMode::Auto)
    }
}

impl std::fmt::Debug for ApprovalPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalPolicy")
            .field("mode", &self.mode)
            .field("prompt", &self.prompt.is_some())
            .field("allow_dangerous", &self.allow_dangerous)
            .finish()
    }
}

impl ApprovalPolicy {
    /// A policy of `mode` with nobody to ask: `ask` then denies writes and commands, and
    /// dangerous commands are denied.
    pub fn new(mode: ApprovalMode) -> Self {
        Self {
            mode,
            prompt: None,
            allow_dangerous: false,
            memory: Mutex::default(),
            session_bound: false,
            observer: None,
            unsandboxed_reruns: true,
            hooks: None,
        }
    }

    /// Runs `hooks`: `before_tool` ones before each call is decided on (a refusal denies
    /// it), the others on the session's events.
    pub fn with_hooks(mut self, hooks: Option<Arc<Hooks>>) -> Self {
        self.hooks = hooks;
        self
    }

    pub fn hooks(&self) -> Option<&Arc<Hooks>> {
        self.hooks.as_ref()
    }

    /// Tells `observer` of every tool call before it is decided on (and so before it
    /// runs), whatever the mode: how the chat knows which call made a file change.
    pub fn with_call_observer(mut self, observer: CallObserver) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Whether `ask` mode may offer reruns without the sandbox (on by default); off where
    /// `ask` was chosen by someone who must not open that door (an untrusted project).
    pub fn offer_unsandboxed_reruns(mut self, offer: bool) -> Self {
        self.unsandboxed_reruns = offer;
        self
    }

    /// Asks `prompt` where the mode (or a dangerous command) calls for asking.
    pub fn with_prompt(mut self, prompt: Arc<dyn ApprovalPrompt>) -> Self {
        self.prompt = Some(prompt);
        self
    }

    /// Without a prompt, run dangerous commands instead of denying them.
    pub fn allow_dangerous_commands(mut self, allow: bool) -> Self {
        self.allow_dangerous = allow;
        self
    }

    pub fn mode(&self) -> ApprovalMode {
        self.mode
    }

    /// The same policy with `mode`, fresh memory.
    pub fn with_mode(&self, mode: ApprovalMode) -> Self {
        Self {
            mode,
            prompt: self.prompt.clone(),
            allow_dangerous: self.allow_dangerous,
            memory: Mutex::default(),
            session_bound: false,
            observer: self.observer.clone(),
            unsandboxed_reruns: self.unsandboxed_reruns,
            hooks: self.hooks.clone(),
        }
    }

    /// The policy a new session uses: this one if it already belongs to a session (a
    /// subagent shares its parent's memory), else a copy with empty memory.
    pub fn for_session(self: &Arc<Self>) -> Arc<Self> {
        if self.session_bound {
            return self.clone();
        }
        let mut policy = self.with_mode(self.mode);
        policy.session_bound = true;
        Arc::new(policy)
    }

    /// The decision on one call; `host_category` is a host tool's declared category.
    pub async fn decide(&self, host_category: Option<ToolCategory>, request: &ApprovalRequest) -> Approval {
        if let Some(observer) = &self.observer {
            observer(request);
        }
        let kind = match request.category {
            Kind::Command => CallKind::Command(command_of(&request.arguments_json)),
            Kind::Write => CallKind::Write,
            // A host tool the host does not know (its list changed between the call's
            // approval and its run) counts as a write: only a declared `read` is a read.
            Kind::Host => match host_category {
                Some(ToolCategory::Read) => CallKind::Read,
                _ => CallKind::Write,
            },
            Kind::Read | Kind::Search | Kind::Agent => CallKind::Read,
        };
        if self.mode == ApprovalMode::ReadOnly {
            return read_only_decision(request, host_category);
        }
        if let CallKind::Command(command) = &kind
            && let Some(why) = dangerous(command)
        {
            return self.decide_dangerous(request, command, why).await;
        }
        if self.mode == ApprovalMode::Auto {
            return Approval::Allow;
        }
        if matches!(kind, CallKind::Read) || self.remembers(&request.tool_name, &kind) {
            return Approval::Allow;
        }
        if self.refuses(&request.tool_name, &kind) {
            return Approval::Deny(format!(
                "the user refused {} calls like this one for the rest of the session; do not retry \
                 it, and ask the user if it is really needed",
                request.tool_name
            ));
        }
        let always = match kind {
            CallKind::Read => return Approval::Allow,
            CallKind::Write => AlwaysScope::Tool(request.tool_name.clone()),
            CallKind::Command(command) => AlwaysScope::Commands(command_prefix::rules_for(&command)),
        };
        let Some(prompt) = &self.prompt else {
            return Approval::Deny(format!(
                "the approval mode is `ask` and there is nobody to ask (no terminal), so {} was not \
                 run. The user can allow writes and commands without asking with `--approval auto` \
                 (or approval = \"auto\" in the configuration); tell them what you wanted to do",
                request.tool_name
            ));
        };
        let question = question(request, None, Some(always.clone()));
        match prompt.ask(&question).await {
            ApprovalAnswer::Once => Approval::Allow,
            ApprovalAnswer::Always => {
                self.remember(always);
                Approval::Allow
            }
            ApprovalAnswer::Deny { reason } => Approval::Deny(denial(reason)),
            ApprovalAnswer::Never { reason } => {
                self.remember_refusal(always);
                Approval::Deny(denial(reason))
            }
        }
    }

    /// Whether a command the sandbox refused may run again without it, with all the
    /// user's rights: asked only in `ask` mode with someone to ask, every time (the answer
    /// is never remembered, "always" is not offered), as codex asks after a sandbox
    /// denial. `None` when nobody is asked (see [`ApprovalPolicy::offers_unsandboxed_reruns`]).
    pub async fn rerun_unsandboxed(
        &self,
        request: &ApprovalRequest,
        command: &str,
        refusal: &str,
    ) -> Option<Approval> {
        if !self.offers_unsandboxed_reruns() {
            return None;
        }
        let prompt = self.prompt.as_ref()?;
        // A dangerous command the user let run because the sandbox held it is labelled so
        // again now that nothing would.
        let question = ApprovalQuestion {
            summary: format!("run `{command}` again without the sandbox"),
            unsandboxed: Some(refusal.to_string()),
            ..question(request, dangerous(command), None)
        };
        Some(match prompt.ask(&question).await {
            ApprovalAnswer::Once | ApprovalAnswer::Always => Approval::Allow,
            ApprovalAnswer::Deny { reason } | ApprovalAnswer::Never { reason } => {
                Approval::Deny(denial(reason))
            }
        })
    }

    /// Whether a host the network allow-list refused a command may be reached by every later
    /// command of this process, the command running again in its sandbox: asked as
    /// [`ApprovalPolicy::rerun_unsandboxed`] is, every time, without "always"; one host a
    /// question, named first, so that it is read whole. `host` is the entry that would allow
    /// it (`pypi.org:443`).
    pub async fn allow_host(&self, request: &ApprovalRequest, command: &str, host: &str) -> Option<Approval> {
        if !self.offers_unsandboxed_reruns() {
            return None;
        }
        let prompt = self.prompt.as_ref()?;
        let question = ApprovalQuestion {
            summary: format!(
                "allow {host} (the network allow-list refused it) for every later command until \
                 agent-host exits, and run `{command}` again in the sandbox"
            ),
            ..question(request, None, None)
        };
        Some(match prompt.ask(&question).await {
            ApprovalAnswer::Once | ApprovalAnswer::Always => Approval::Allow,
            ApprovalAnswer::Deny { reason } | ApprovalAnswer::Never { reason } => {
                Approval::Deny(denial(reason))
            }
        })
    }

    /// Whether a command the sandbox refused is offered to run again without it: in `ask`
    /// mode with a prompt. In `auto` mode the model is told what the sandbox refused and
    /// the user widens the sandbox by flag or configuration if needed.
    pub fn offers_unsandboxed_reruns(&self) -> bool {
        self.unsandboxed_reruns && self.mode == ApprovalMode::Ask && self.prompt.is_some()
    }

    async fn decide_dangerous(&self, request: &ApprovalRequest, command: &str, why: &str) -> Approval {
        match &self.prompt {
            Some(prompt) => match prompt.ask(&question(request, Some(why), None)).await {
                ApprovalAnswer::Once | ApprovalAnswer::Always => Approval::Allow,
                ApprovalAnswer::Deny { reason } | ApprovalAnswer::Never { reason } => {
                    Approval::Deny(denial(reason))
                }
            },
            None if self.allow_dangerous => Approval::Allow,
            None => Approval::Deny(format!(
                "the command `{command}` was not run: {why}. Dangerous commands need the user's \
                 approval and nobody can be asked here; if it is really needed, ask the user to run \
                 it themselves (or to allow it with --allow-dangerous-commands)"
            )),
        }
    }

    fn remembers(&self, tool_name: &str, kind: &CallKind) -> bool {
        let memory = lock(&self.memory);
        match kind {
            CallKind::Command(command) => command_prefix::is_covered(&memory.commands, command),
            _ => memory.tools.contains(tool_name),
        }
    }

    fn refuses(&self, tool_name: &str, kind: &CallKind) -> bool {
        let memory = lock(&self.memory);
        match kind {
            CallKind::Command(command) => command_prefix::is_covered(&memory.refused_commands, command),
            _ => memory.refused_tools.contains(tool_name),
        }
    }

    fn remember_refusal(&self, scope: AlwaysScope) {
        let mut guard = lock(&self.memory);
        let memory = &mut *guard;
        add(scope, &mut memory.refused_tools, &mut memory.refused_commands);
    }

    fn remember(&self, scope: AlwaysScope) {
        let mut guard = lock(&self.memory);
        let memory = &mut *guard;
        add(scope, &mut memory.tools, &mut memory.commands);
    }
}

/// Adds what `scope` covers to a memory's tools and command rules.
fn add(scope: AlwaysScope, tools: &mut BTreeSet<String>, commands: &mut Vec<CommandRule>) {
    match scope {
        AlwaysScope::Tool(name) => {
            tools.insert(name);
        }
        AlwaysScope::Commands(rules) => {
            for rule in rules {
                if !commands.contains(&rule) {
                    commands.push(rule);
                }
            }
        }
    }
}

/// Read-only mode: calls the core marks as writes or commands are refused here, before
/// anything runs (the environment's read-only wrapper refuses them too, a second line that
/// holds whatever the category says); host tools run outside any environment, so their
/// declared category decides.
fn read_only_decision(request: &ApprovalRequest, host_category: Option<ToolCategory>) -> Approval {
    let tool_name = &request.tool_name;
    // The environment's read-only wrapper refuses them too; asked here, the model is told why
    // before anything is tried.
    if matches!(request.category, Kind::Write | Kind::Command) {
        return Approval::Deny(format!(
            "{tool_name} changes files or runs commands and this session is in read-only mode; \
             report what you would do with it instead"
        ));
    }
    match host_category {
        Some(category) if category != ToolCategory::Read => Approval::Deny(format!(
            "{tool_name} is a `{}` tool and this session is in read-only mode, where only `read` \
             tools run; report what you would do with it instead",
            category.as_str()
        )),
        None if request.category == Kind::Host => Approval::Deny(format!(
            "{tool_name} is not a tool this host offers now, and this session is in read-only mode, \
             where only `read` tools run"
        )),
        _ => Approval::Allow,
    }
}

fn question(
    request: &ApprovalRequest,
    danger: Option<&str>,
    always: Option<AlwaysScope>,
) -> ApprovalQuestion {
    ApprovalQuestion {
        session_id: request.session_id.clone(),
        call_id: request.call_id.clone(),
        tool_name: request.tool_name.clone(),
        summary: request.summary.clone(),
        arguments_json: request.arguments_json.clone(),
        danger: danger.map(str::to_string),
        unsandboxed: None,
        always,
    }
}

fn denial(reason: Option<String>) -> String {
    match reason.map(|r| r.trim().to_string()).filter(|r| !r.is_empty()) {
        Some(reason) => format!("the user said: {reason}"),
        None => "the user declined it without giving a reason; do not retry it as is".to_string(),
    }
}

/// The `command` argument of a shell call (empty when missing; the core validated it).
pub(crate) fn command_of(arguments_json: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments_json)
        .ok()
        .and_then(|v| v.get("command").and_then(|c| c.as_str()).map(str::to_string))
        .unwrap_or_default()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
