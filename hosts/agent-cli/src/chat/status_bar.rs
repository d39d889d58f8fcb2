//! The status line under the prompt: the model and its effort, the approval and sandbox
//! modes, how much of the context window the conversation fills, the session's tokens and
//! cost, and the inputs waiting their turn.

use super::commands::effort_name;
use super::style::Palette;
use agent_protocol::{Profile, ReasoningEffort, SessionConfig, Usage, UsageTotals};

#[derive(Debug, Clone)]
pub struct StatusBar {
    pub model: String,
    pub effort: Option<ReasoningEffort>,
    pub approval: String,
    pub sandbox: String,
    /// The model's context window in tokens (0: unknown).
    window: u64,
    /// The prompt of the last request plus its answer: what the next request starts from.
    context_tokens: Option<u64>,
    session: UsageTotals,
    pub queued: usize,
}

impl StatusBar {
    pub fn new(config: &SessionConfig, approval: String, sandbox: String) -> Self {
        let mut bar = Self {
            model: String::new(),
            effort: None,
            approval,
            sandbox,
            window: 0,
            context_tokens: None,
            session: UsageTotals::default(),
            queued: 0,
        };
        bar.follow(config);
        bar
    }

    /// The session's model and effort (after `/model`, `/effort`, `/reset`).
    pub fn follow(&mut self, config: &SessionConfig) {
        if self.model != config.model {
            self.context_tokens = None;
        }
        // A project's configuration names the model: escaped like any text it gives.
        self.model = crate::terminal_text::one_line(&config.model).into_owned();
        self.effort = config.reasoning_effort;
        self.window = config
            .context_window_size
            .unwrap_or_else(|| Profile::parse(&config.provider).map_or(0, Profile::context_window));
    }

    /// A new session starts empty.
    pub fn reset(&mut self) {
        self.context_tokens = None;
        self.session = UsageTotals::default();
    }

    /// A response's usage: the context it filled.
    pub fn response(&mut self, usage: &Usage) {
        let tokens =
            usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens + usage.output_tokens;
        if tokens > 0 {
            self.context_tokens = Some(tokens);
        }
    }

    /// The core's own count, when it warns about the window (it knows the model's window).
    pub fn context_warning(&mut self, tokens: u64, window: u64) {
        self.context_tokens = Some(tokens);
        if window > 0 {
            self.window = window;
        }
    }

    /// After compaction the last count no longer holds.
    pub fn compacted(&mut self, tokens_after: Option<u64>) {
        self.context_tokens = tokens_after;
    }

    pub fn session_usage(&mut self, totals: &UsageTotals) {
        self.session = *totals;
    }

    /// The share of the window in use, in percent.
    pub fn context_percent(&self) -> Option<u64> {
        let tokens = self.context_tokens?;
        (self.window > 0).then(|| (tokens * 100).div_ceil(self.window).min(100))
    }

    pub fn line(&self, palette: &Palette) -> String {
        let mut parts = vec![match self.effort {
            None => self.model.clone(),
            Some(effort) => format!("{} ({})", self.model, effort_name(Some(effort))),
        }];
        parts.push(format!("approval {}", self.approval));
        parts.push(format!("sandbox {}", self.sandbox));
        // Nothing sent yet: empty; a window nobody knows: no share to claim.
        match (self.context_tokens, self.context_percent()) {
            (None, _) => parts.push("context 0%".to_string()),
            (Some(_), Some(percent)) => parts.push(format!("context {percent}%")),
            (Some(_), None) => {}
        }
        let tokens = self.session.prompt_tokens + self.session.output_tokens;
        if tokens > 0 {
            parts.push(format!("{} tokens", compact_count(tokens)));
        }
        if let Some(cost) = self.session.cost_usd {
            parts.push(format!("${cost:.4}"));
        }
        if self.queued > 0 {
            parts.push(format!("{} queued", self.queued));
        }
        palette.dim(&parts.join(" · "))
    }

    /// The whole story for `/status` and `/cost`.
    pub fn usage_text(&self) -> String {
        let s = &self.session;
        let mut text = format!(
            "requests {} · prompt {} tokens ({} cached) · output {} tokens",
            s.requests, s.prompt_tokens, s.cached_tokens, s.output_tokens
        );
        if s.reasoning_tokens > 0 {
            text.push_str(&format!(" ({} reasoning)", s.reasoning_tokens));
        }
        match s.cost_usd {
            Some(cost) => text.push_str(&format!(" · cost ${cost:.4}")),
            None => text.push_str(" · cost unknown (the model has no price)"),
        }
        if let (Some(tokens), Some(percent)) = (self.context_tokens, self.context_percent()) {
            text.push_str(&format!(
                "\ncontext: {} of {} tokens ({percent}%)",
                compact_count(tokens),
                compact_count(self.window)
            ));
        }
        text
    }
}

/// 1234 → 1.2k, 2_500_000 → 2.5M.
fn compact_count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> SessionConfig {
        let mut config = SessionConfig::new("anthropic", "claude-test");
        config.context_window_size = Some(10_000);
        config
    }

    #[test]
    fn the_line_shows_the_share_of_the_window_and_the_session_totals() {
        let mut bar = StatusBar::new(&config(), "ask".into(), "workspace-write".into());
        assert!(bar.line(&Palette::plain()).contains("context 0%"));
        bar.response(&Usage {
            input_tokens: 2_000,
            output_tokens: 500,
            ..Usage::default()
        });
        bar.session_usage(&UsageTotals {
            requests: 1,
            prompt_tokens: 2_000,
            output_tokens: 500,
            cost_usd: Some(0.0123),
            ..UsageTotals::default()
        });
        bar.queued = 2;
        assert_eq!(
            bar.line(&Palette::plain()),
            "claude-test · approval ask · sandbox workspace-write · context 25% · 2.5k tokens · $0.0123 · 2 queued"
        );
    }

    #[test]
    fn a_model_named_by_a_project_cannot_drive_the_terminal() {
        let mut config = config();
        config.model = "m\u{1b}]52;c;aGk=\u{7}".into();
        let bar = StatusBar::new(&config, "ask".into(), "workspace-write".into());
        assert!(!bar.line(&Palette::plain()).chars().any(char::is_control));
    }

    #[test]
    fn counts_are_compact() {
        assert_eq!(compact_count(999), "999");
        assert_eq!(compact_count(1_234), "1.2k");
        assert_eq!(compact_count(2_500_000), "2.5M");
    }
}
