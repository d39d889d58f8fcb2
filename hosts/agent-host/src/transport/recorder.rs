//! `--record FILE`: an HTTP transport that tees every exchange into a recording, line by
//! line as it happens, with credentials kept out.

use super::format::{
    Body, ChunkData, ChunkLine, EndLine, ErrorLine, FORMAT, Header, Line, RecordedError, RecordedSession,
    RequestLine, ResponseLine, Stage, VERSION,
};
use crate::transport::http::HttpTransport;
use crate::transport::response::{BodyObserver, ResponseHandle};
use agent_protocol::SessionConfig;
use agent_protocol::ports::{HttpRequest, TransportError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub use crate::secrets::redact::{REDACTED, redact};

/// Whether a header's value is a credential, by its name.
pub fn is_credential_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "authorization",
        "api-key",
        "api_key",
        "apikey",
        "token",
        "secret",
        "cookie",
        "password",
        "credential",
    ]
    .iter()
    .any(|part| name.contains(part))
}

/// Writes one recording; shared by the exchanges in flight.
struct Recorder {
    file: Mutex<std::fs::File>,
    path: PathBuf,
    started: Instant,
    next_exchange: AtomicU64,
    /// The configured keys, never written.
    secrets: Vec<String>,
    /// Set after the first failed write, so a full disk warns once, not per chunk.
    failed: AtomicBool,
}

impl Recorder {
    fn t_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Appends a line and flushes it: what was written survives a crash of the host.
    fn write(&self, line: &Line) {
        let text = match serde_json::to_string(line) {
            Ok(text) => redact(&text, &self.secrets),
            Err(e) => {
                tracing::warn!("cannot encode a recording line: {e}");
                return;
            }
        };
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let written = file
            .write_all(text.as_bytes())
            .and_then(|()| file.write_all(b"\n"))
            .and_then(|()| file.flush());
        if let Err(e) = written
            && !self.failed.swap(true, Ordering::Relaxed)
        {
            // The run goes on: losing the recording is no reason to lose the work.
            tracing::warn!("cannot write the recording {}: {e}", self.path.display());
        }
    }
}

/// An [`HttpTransport`] whose exchanges are also written to a recording file.
#[derive(Clone)]
pub struct RecordingTransport {
    http: HttpTransport,
    recorder: Arc<Recorder>,
}

impl RecordingTransport {
    /// Creates (or truncates) `path` and writes its header.
    pub fn create(
        http: HttpTransport,
        path: &Path,
        session: RecordedSession,
        workspace: Option<String>,
    ) -> Result<Self, String> {
        let file = crate::private_files::create_private(path)
            .map_err(|e| format!("cannot create the recording {}: {e}", path.display()))?;
        let secrets = http
            .endpoints()
            .names()
            .iter()
            .filter_map(|name| http.endpoints().get(name)?.api_key.clone())
            .filter(|key| key.len() >= 4)
            .collect();
        let recorder = Recorder {
            file: Mutex::new(file),
            path: path.to_path_buf(),
            started: Instant::now(),
            next_exchange: AtomicU64::new(1),
            secrets,
            failed: AtomicBool::new(false),
        };
        let created_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(0))
            .unwrap_or(0);
        recorder.write(&Line::Header(Header {
            format: FORMAT.to_string(),
            version: VERSION,
            agent_host_version: env!("CARGO_PKG_VERSION").to_string(),
            created_unix_ms,
            workspace,
            session,
        }));
        if recorder.failed.load(Ordering::Relaxed) {
            return Err(format!("cannot write the recording {}", path.display()));
        }
        Ok(Self {
            http,
            recorder: Arc::new(recorder),
        })
    }

    pub fn http(&self) -> &HttpTransport {
        &self.http
    }

    /// Sends through HTTP, writing the request, the response head or the error, and (as the
    /// component reads it) the body.
    pub async fn send(&self, request: HttpRequest) -> Result<ResponseHandle, TransportError> {
        let recorder = &self.recorder;
        let exchange = recorder.next_exchange.fetch_add(1, Ordering::Relaxed);
        let headers = request
            .headers
            .iter()
            .map(|(name, value)| {
                let value = if is_credential_header(name) {
                    REDACTED
                } else {
                    value
                };
                (name.clone(), value.to_string())
            })
            .collect();
        recorder.write(&Line::Request(RequestLine {
            exchange,
            t_ms: recorder.t_ms(),
            endpoint: request.endpoint.clone(),
            method: request.method.clone(),
            path: request.path.clone(),
            headers,
            body: Body::from_bytes(&request.body),
        }));
        match self.http.send(request).await {
            Err(error) => {
                recorder.write(&Line::Error(ErrorLine {
                    exchange,
                    t_ms: recorder.t_ms(),
                    stage: Stage::Send,
                    error: RecordedError::from_transport(&error),
                }));
                Err(error)
            }
            Ok(response) => {
                let headers = response
                    .headers
                    .iter()
                    .filter(|(name, _)| !is_credential_header(name))
                    .cloned()
                    .collect();
                recorder.write(&Line::Response(ResponseLine {
                    exchange,
                    t_ms: recorder.t_ms(),
                    status: response.status,
                    headers,
                }));
                Ok(response.observed_by(Box::new(BodyTap {
                    recorder: recorder.clone(),
                    exchange,
                    done: false,
                })))
            }
        }
    }
}

/// Writes the body reads of one exchange.
struct BodyTap {
    recorder: Arc<Recorder>,
    exchange: u64,
    done: bool,
}

impl BodyObserver for BodyTap {
    fn observe(&mut self, read: &Result<Option<Vec<u8>>, TransportError>) {
        if self.done {
            return;
        }
        let (exchange, t_ms) = (self.exchange, self.recorder.t_ms());
        let line = match read {
            Ok(Some(chunk)) => Line::Chunk(ChunkLine {
                exchange,
                t_ms,
                data: ChunkData::from_bytes(chunk),
            }),
            Ok(None) => {
                self.done = true;
                Line::End(EndLine { exchange, t_ms })
            }
            Err(error) => {
                self.done = true;
                Line::Error(ErrorLine {
                    exchange,
                    t_ms,
                    stage: Stage::Read,
                    error: RecordedError::from_transport(error),
                })
            }
        };
        self.recorder.write(&line);
    }
}

/// What a recording's header says about a session configuration.
pub fn recorded_session(config: &SessionConfig) -> RecordedSession {
    RecordedSession {
        provider: config.provider.clone(),
        endpoint: config.endpoint.clone(),
        protocol: config.protocol.as_str().to_string(),
        model: config.model.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_keys_and_key_shaped_text_are_redacted() {
        let secrets = vec!["sk-secret".to_string()];
        assert_eq!(
            redact(
                r#"{"k":"sk-secret","o":"sk-ant-api03-abcdefghijklmnopqrstuvwx"}"#,
                &secrets
            ),
            r#"{"k":"<redacted>","o":"<redacted>"}"#
        );
        assert_eq!(
            redact("no keys here: sk-short", &secrets),
            "no keys here: sk-short"
        );
        assert!(is_credential_header("X-Api-Key") && is_credential_header("authorization"));
        assert!(!is_credential_header("anthropic-version"));
    }
}
