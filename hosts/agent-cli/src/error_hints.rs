//! What to do about an LLM error that ended a run, from its typed kind and what the run
//! was asked to use: the setting or flag to change, named.

use agent_host::Endpoint;
use agent_host::protocol::{ErrorKind, WireProtocol};
use agent_host::secrets::redact::redact_url;
use agent_host::transport::endpoints::variable_prefix;

/// What a run used, for the hint.
pub struct RunContext<'a> {
    pub provider: &'a str,
    pub model: &'a str,
    pub endpoint: Option<&'a Endpoint>,
    /// Replaying a recording without `--replay-trusted`.
    pub untrusted_replay: bool,
}

/// The line to print after the error, if there is something to do about it.
pub fn hint(kind: ErrorKind, run: &RunContext<'_>) -> Option<String> {
    let endpoint = run.endpoint?;
    let provider = run.provider;
    let url = redact_url(&endpoint.base_url);
    match kind {
        ErrorKind::Authentication => Some(format!(
            "the {provider} endpoint ({url}) rejected the request's credentials: check {}",
            endpoint.key_var
        )),
        ErrorKind::NotFound if endpoint.protocol == WireProtocol::OpenaiResponses => Some(format!(
            "the server at {url} ({}) has no {} or no model {:?}: a server that speaks Chat Completions \
             rather than the Responses API (Ollama, llama.cpp, vLLM) is named as a compatible endpoint, \
             e.g. OPENAI_COMPATIBLE_ENDPOINTS=local={url} with --provider local; otherwise check the \
             model name (--model, or {}_MODEL)",
            endpoint.base_url_hint(),
            redact_url(&endpoint.url("/v1/responses")),
            run.model,
            variable_prefix(provider)
        )),
        ErrorKind::NotFound => Some(format!(
            "the {provider} endpoint ({url}) does not know the model {:?}, or the base URL is wrong: \
             check the model name (--model, or {}_MODEL) and {}",
            run.model,
            variable_prefix(provider),
            endpoint.base_url_hint()
        )),
        ErrorKind::Configuration if run.untrusted_replay => Some(
            "the recording went another way because its commands and file changes were refused: if the \
             recording is yours, replay it with --replay-trusted"
                .to_string(),
        ),
        _ => None,
    }
}
