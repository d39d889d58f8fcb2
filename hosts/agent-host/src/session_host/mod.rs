//! The application's side of a running session: the store data every import reaches
//! ([`state::HostState`]), and the control handle (steering, follow-ups, interruptions)
//! and event stream an application holds ([`control`]).

pub mod control;
pub mod network_events;
pub mod sandbox_rerun;
pub mod spending;
pub mod state;

pub use control::{AgentEvent, HistorySink, SessionControl};
pub use spending::SpendingLedger;
pub use state::{HostState, NoTools, SubagentHost, ToolHost};
