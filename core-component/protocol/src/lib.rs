//! The typed contract between the agent core and every host, defined once.
//!
//! The component's WIT carries events as a kind plus a JSON payload (`data-json`), history
//! items as JSON, and the session configuration as a record. This crate owns those JSON
//! shapes: the core produces them from these types and Rust hosts parse them back into these
//! types, so a field is added in one place. The browser host's TypeScript types are checked
//! against the fixtures in `fixtures/events/` (see `hosts/web/test/types.test.mjs`).

pub mod config;
pub mod defaults;
pub mod event;
pub mod history;
pub mod outcome;
pub mod ports;
pub mod provider;
pub mod usage;

pub use config::{Limits, RetrySettings, SessionConfig, ToolOutputLimit};
pub use defaults::FamilyDefaults;
pub use event::{
    CompactionStage, CompactionTrigger, EndReason, Event, EventData, EventKind, ImageInfo, LimitName,
    NetworkConnection, OutputStream, TokenSource, ToolCategory, ToolOutcome, Warning, WireError,
};
pub use history::{
    ContentPart, FinishReason, HistoryEntry, ImageData, Message, ResumeRequest, Role, ToolCall,
    ToolDefinition, ToolResult, Turn, Usage,
};
pub use outcome::{AgentError, CompactionReport, ErrorKind, SessionState, StopReason, SubmitOutcome};
pub use provider::{AuthStyle, Profile, ProviderFamily, ReasoningEffort, WireProtocol};
pub use usage::{Spending, UsageTotals};
