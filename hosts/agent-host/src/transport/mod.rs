//! How LLM requests leave the host: [`LlmTransport`] is what a session's `llm-transport`
//! import talks to, either HTTP to the [`Endpoints`] (URLs and keys from the environment
//! and the configuration), HTTP teed into a recording (`--record FILE`), a recording served
//! without network (`--provider replay --replay FILE`), or a function in this process. The
//! recording format is described in [`format`](mod@format); what replay normalises before
//! comparing requests in [`normalize`].

pub mod endpoints;
pub mod format;
pub mod http;
pub mod in_process;
pub mod normalize;
pub mod options;
pub mod recorder;
pub mod replay;
pub mod response;
pub mod session_transport;

pub use endpoints::{AuthStyle, Endpoint, Endpoints};
pub use http::HttpTransport;
pub use in_process::{InProcessReply, InProcessTransport};
pub use options::RecordReplayOptions;
pub use recorder::RecordingTransport;
pub use replay::{REPLAY_PROVIDER, Recording, ReplayTransport};
pub use response::{BodyObserver, ChunkStream, ResponseHandle};
pub use session_transport::LlmTransport;
