//! What a request to the model carries: the history borrowed as it is, and a prefix (the
//! system prompt and the tools) built once and again only when the date changes, since the
//! prompt names it, or when the host's tools change. A turn therefore copies nothing of the
//! conversation before the wire protocol serialises it, and the prefix a provider caches
//! stays byte-identical.

use super::Session;
use crate::history::to_messages;
use crate::llm::Request;
use crate::profile;
use crate::prompt_context::PromptContext;
use std::rc::Rc;

const DAY_MS: u64 = 86_400_000;

/// The system prompt as last built, and its size with the tools'.
#[derive(Debug)]
pub(super) struct RequestPrefix {
    /// The day (since the epoch) the prompt was written for.
    day: u64,
    system: Rc<str>,
    /// Characters of the system prompt and the tools' definitions, for size estimates.
    chars: u64,
}

impl Session {
    /// The system prompt of a request made now, rebuilt when the date changed since the last
    /// one or the project context was gathered since.
    pub(super) fn request_prefix(&self) -> (Rc<str>, u64) {
        let day = self.now() / DAY_MS;
        let mut cached = self.prefix.borrow_mut();
        if let Some(prefix) = cached.as_ref().filter(|p| p.day == day) {
            return (prefix.system.clone(), prefix.chars);
        }
        let system: Rc<str> = profile::system_prompt(
            &self.config,
            &self.profile,
            self.ports.env.as_ref(),
            self.prompt_context.as_ref().unwrap_or(&PromptContext::default()),
            day * DAY_MS,
        )
        .into();
        let tools_chars: usize = self
            .profile
            .tools()
            .iter()
            .map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len())
            .sum();
        let chars = (system.len() + tools_chars) as u64;
        *cached = Some(RequestPrefix {
            day,
            system: system.clone(),
            chars,
        });
        (system, chars)
    }

    /// Offers the host's tools as they are now, when they changed since the last request (an
    /// MCP server announced another list): the profile is built again with them, and the
    /// request's prefix and the serialised tool fields are written again.
    pub(super) fn take_host_tool_changes(&mut self) {
        let Some(definitions) = self.ports.host_tools.changes(&self.id) else {
            return;
        };
        if definitions == self.config.host_tools {
            return;
        }
        self.config.host_tools = definitions;
        self.profile = profile::Profile::for_config(&self.config);
        self.forget_request_prefix();
        self.history.wire_cache().borrow_mut().forget_prompt_fields();
    }

    /// Forgets the prefix (the project context it includes changed).
    pub(super) fn forget_request_prefix(&self) {
        self.prefix.borrow_mut().take();
    }

    /// The request of the next turn, borrowing the history and `system`.
    pub(super) fn conversation_request<'a>(&'a self, system: &'a str) -> Request<'a> {
        Request {
            model: &self.config.model,
            system,
            messages: to_messages(&self.history),
            tools: self.profile.tools(),
            max_tokens: self
                .config
                .max_output_tokens
                .unwrap_or(self.profile.default_max_output_tokens),
            // A model without reasoning rejects the parameter; the catalog knows which.
            reasoning_effort: self
                .config
                .reasoning_effort
                .filter(|_| self.profile.supports_reasoning),
            provider_options: self.config.provider_options.as_ref(),
            output_schema: self.config.output_schema.as_ref(),
            cache_key: Some(&self.id),
            cache: Some(self.history.wire_cache()),
        }
    }
}
