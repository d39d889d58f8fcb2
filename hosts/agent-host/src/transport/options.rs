//! The `--record` and `--replay` flags of `agent-host run`, usable by embedders as a plain
//! struct.

use crate::transport::endpoints::Endpoints;
use crate::transport::recorder::{RecordingTransport, recorded_session};
use crate::transport::replay::{REPLAY_PROVIDER, Recording, ReplayTransport};
use crate::transport::session_transport::LlmTransport;
use agent_protocol::SessionConfig;
use std::path::PathBuf;

/// Recording or replaying the LLM exchanges of a run.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Record and replay")]
pub struct RecordReplayOptions {
    /// Save the run's LLM exchanges to FILE (JSON lines, written as they happen; API keys
    /// are never written).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// With --provider replay: serve the LLM exchanges from a recording, without network;
    /// provider, model and protocol come from it, and a request that differs from the
    /// recorded one fails the run.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// With --replay: the recording is yours, so its commands run and its file changes are
    /// made. Without it both are refused: a recording is as trustworthy as whoever made it.
    #[arg(long)]
    pub replay_trusted: bool,
}

/// Why a replay's commands and changes are refused without `--replay-trusted`.
pub const REPLAY_REFUSES_CHANGES: &str = "a replayed recording runs commands and changes files \
only with --replay-trusted (a recording is as trustworthy as whoever made it)";

impl RecordReplayOptions {
    /// For a replay (`--provider replay` or `--replay FILE`): reads the recording, checks it
    /// against the other choices, sets `provider` and `model` to the recorded ones and adds
    /// the recorded endpoint to `endpoints`. `None` when not replaying.
    pub fn open_replay(
        &self,
        endpoints: &mut Endpoints,
        provider: &mut Option<String>,
        model: &mut Option<String>,
    ) -> Result<Option<Recording>, String> {
        let replaying = provider.as_deref() == Some(REPLAY_PROVIDER) || self.replay.is_some();
        if !replaying {
            return Ok(None);
        }
        let Some(path) = &self.replay else {
            return Err("--provider replay needs the recording: --replay FILE".to_string());
        };
        if self.record.is_some() {
            return Err(
                "--record and --replay cannot be combined: a replay makes no new exchanges".to_string(),
            );
        }
        let recording = Recording::open(path)?;
        recording.check_choice(provider.as_deref(), model.as_deref())?;
        endpoints.insert(recording.endpoint()?);
        *provider = Some(recording.session().endpoint.clone());
        *model = Some(recording.session().model.clone());
        Ok(Some(recording))
    }

    /// The transport a session goes over: the replay, or `transport` teed into
    /// `--record FILE`, once the session's configuration is known (a recording's header
    /// holds it); `None` to keep `transport` as it is.
    pub fn transport_for(
        &self,
        transport: &LlmTransport,
        replay: Option<Recording>,
        config: &SessionConfig,
        workspace: String,
    ) -> Result<Option<LlmTransport>, String> {
        if let Some(recording) = replay {
            recording.check_config(config)?;
            return Ok(Some(ReplayTransport::new(recording).into()));
        }
        let Some(path) = &self.record else {
            return Ok(None);
        };
        let Some(http) = transport.http() else {
            return Err("--record needs a provider reached over the network".to_string());
        };
        let recording =
            RecordingTransport::create(http.clone(), path, recorded_session(config), Some(workspace))?;
        Ok(Some(LlmTransport::Recording(recording)))
    }
}
