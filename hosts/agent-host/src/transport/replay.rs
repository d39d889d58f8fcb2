//! `--provider replay --replay FILE`: serves a recording's exchanges in order, without any
//! network, after checking that each request the agent sends is the recorded one.

use super::format::{Body, FORMAT, Header, Line, RecordedError, RecordedSession, Stage, VERSION};
use super::normalize::{first_difference, normalize};
use crate::transport::endpoints::{AuthStyle, Endpoint, REPLAY_SCHEME};
use crate::transport::response::ResponseHandle;
use agent_protocol::ports::{HttpRequest, TransportError};
use agent_protocol::{SessionConfig, WireProtocol};
use bytes::Bytes;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The provider name that selects a replay.
pub const REPLAY_PROVIDER: &str = "replay";

/// A recording read from its file.
#[derive(Debug, Clone)]
pub struct Recording {
    pub path: PathBuf,
    pub header: Header,
    exchanges: Vec<Exchange>,
}

#[derive(Debug, Clone)]
struct Exchange {
    number: u64,
    endpoint: String,
    method: String,
    path: String,
    body: Body,
    outcome: Outcome,
}

#[derive(Debug, Clone)]
enum Outcome {
    /// The run stopped before the response head arrived.
    Missing,
    SendFailed(RecordedError),
    Response {
        status: u16,
        headers: Vec<(String, String)>,
        chunks: Vec<Vec<u8>>,
        end: BodyEnd,
    },
}

#[derive(Debug, Clone)]
enum BodyEnd {
    Complete,
    Failed(RecordedError),
    /// Nothing more was recorded: the run stopped, or the agent stopped reading.
    Cut,
}

impl Exchange {
    /// Adds what a response, chunk, end or error line says about this exchange.
    fn add(&mut self, line: Line) -> Result<(), String> {
        match (line, &mut self.outcome) {
            (Line::Response(r), outcome) => {
                *outcome = Outcome::Response {
                    status: r.status,
                    headers: r.headers,
                    chunks: Vec::new(),
                    end: BodyEnd::Cut,
                };
            }
            (Line::Chunk(c), Outcome::Response { chunks, .. }) => chunks.push(c.data.to_bytes()?),
            (Line::End(_), Outcome::Response { end, .. }) => *end = BodyEnd::Complete,
            (Line::Error(e), Outcome::Response { end, .. }) if e.stage == Stage::Read => {
                *end = BodyEnd::Failed(e.error);
            }
            (Line::Error(e), outcome) => *outcome = Outcome::SendFailed(e.error),
            (Line::Chunk(_) | Line::End(_), _) => return Err("body data before the response".to_string()),
            (Line::Header(_) | Line::Request(_), _) => return Err("an unexpected line".to_string()),
        }
        Ok(())
    }
}

impl Recording {
    /// Reads and checks a recording; a torn last line (a crashed run) is ignored.
    pub fn open(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the recording {}: {e}", path.display()))?;
        let at = |n: usize, what: String| format!("{}, line {}: {what}", path.display(), n + 1);
        let lines: Vec<&str> = text.lines().collect();
        let mut parsed = Vec::with_capacity(lines.len());
        for (n, raw) in lines.iter().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Line>(raw) {
                Ok(line) => parsed.push(line),
                Err(_) if n + 1 == lines.len() && !text.ends_with('\n') => break,
                Err(e) => return Err(at(n, format!("not a recording line: {e}"))),
            }
        }
        let mut parsed = parsed.into_iter();
        let header = match parsed.next() {
            Some(Line::Header(header)) => header,
            _ => {
                return Err(format!(
                    "{} is not an agent-host recording (its first line is not a header)",
                    path.display()
                ));
            }
        };
        if header.format != FORMAT {
            return Err(format!(
                "{}: unknown format {:?} (expected {FORMAT:?})",
                path.display(),
                header.format
            ));
        }
        if header.version > VERSION {
            return Err(format!(
                "{}: recording format version {} is newer than this agent-host reads ({VERSION})",
                path.display(),
                header.version
            ));
        }
        let mut exchanges: Vec<Exchange> = Vec::new();
        let mut index: BTreeMap<u64, usize> = BTreeMap::new();
        for line in parsed {
            let number = match &line {
                Line::Header(_) => return Err(format!("{}: a second header", path.display())),
                Line::Request(request) => {
                    index.insert(request.exchange, exchanges.len());
                    request.exchange
                }
                Line::Response(r) => r.exchange,
                Line::Chunk(c) => c.exchange,
                Line::End(e) => e.exchange,
                Line::Error(e) => e.exchange,
            };
            if let Line::Request(request) = line {
                exchanges.push(Exchange {
                    number,
                    endpoint: request.endpoint,
                    method: request.method,
                    path: request.path,
                    body: request.body,
                    outcome: Outcome::Missing,
                });
                continue;
            }
            let exchange = index
                .get(&number)
                .and_then(|i| exchanges.get_mut(*i))
                .ok_or_else(|| format!("{}: exchange {number} has no request line", path.display()))?;
            exchange
                .add(line)
                .map_err(|e| format!("{}: exchange {number}: {e}", path.display()))?;
        }
        Ok(Self {
            path: path.to_path_buf(),
            header,
            exchanges,
        })
    }

    pub fn session(&self) -> &RecordedSession {
        &self.header.session
    }

    /// How many exchanges the recording holds.
    pub fn len(&self) -> usize {
        self.exchanges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.exchanges.is_empty()
    }
}

/// Serves a recording as the LLM transport. Cheap to clone (subagents share it).
#[derive(Clone)]
pub struct ReplayTransport {
    recording: Arc<Recording>,
    /// Which exchanges were served already.
    served: Arc<Mutex<Vec<bool>>>,
    /// Requests received so far, for messages.
    received: Arc<Mutex<u64>>,
}

impl ReplayTransport {
    pub fn new(recording: Recording) -> Self {
        let served = vec![false; recording.exchanges.len()];
        Self {
            recording: Arc::new(recording),
            served: Arc::new(Mutex::new(served)),
            received: Arc::new(Mutex::new(0)),
        }
    }

    pub fn recording(&self) -> &Recording {
        &self.recording
    }

    /// The next recorded exchange if the request matches it, else a `not-configured` error
    /// (the core does not retry those) naming the first difference.
    pub fn send(&self, request: HttpRequest) -> Result<ResponseHandle, TransportError> {
        let ordinal = {
            let mut received = lock(&self.received);
            *received += 1;
            *received
        };
        let mut served = lock(&self.served);
        let Some(next) = served.iter().position(|done| !done) else {
            return Err(TransportError::NotConfigured(format!(
                "replay of {}: the agent sent request #{ordinal} ({} {}) but the recording holds only {} \
                 exchanges",
                self.recording.path.display(),
                request.method,
                request.path,
                self.recording.exchanges.len()
            )));
        };
        let live_body = Body::from_bytes(&request.body);
        let expected = &self.recording.exchanges[next];
        let chosen = match difference(expected, &request, &live_body) {
            None => next,
            Some(first) => {
                // Concurrent sessions (subagents) may ask in another order than recorded;
                // a request equal to a later unserved exchange is that one.
                let later = (next + 1..served.len()).find(|&i| {
                    !served[i] && difference(&self.recording.exchanges[i], &request, &live_body).is_none()
                });
                match later {
                    Some(i) => i,
                    None => {
                        return Err(TransportError::NotConfigured(format!(
                            "replay diverged from the recording {} at request #{ordinal} (recorded exchange \
                             {}): {first}",
                            self.recording.path.display(),
                            expected.number
                        )));
                    }
                }
            }
        };
        served[chosen] = true;
        respond(&self.recording.exchanges[chosen])
    }
}

/// How the live request differs from a recorded one, or `None`.
fn difference(recorded: &Exchange, live: &HttpRequest, live_body: &Body) -> Option<String> {
    for (what, a, b) in [
        ("endpoint", &recorded.endpoint, &live.endpoint),
        ("method", &recorded.method, &live.method),
        ("path", &recorded.path, &live.path),
    ] {
        if a != b {
            return Some(format!(
                "the {what} differs: the recording has {a:?} but the agent sent {b:?}"
            ));
        }
    }
    match (&recorded.body, live_body) {
        (Body::Json(a), Body::Json(b)) => first_difference(&normalize(a), &normalize(b))
            .map(|(pointer, sides)| format!("the request body differs at {pointer}: {sides}")),
        (a, b) if a != b => Some("the request body differs (not JSON)".to_string()),
        _ => None,
    }
}

fn respond(exchange: &Exchange) -> Result<ResponseHandle, TransportError> {
    let (status, headers, chunks, end) = match &exchange.outcome {
        Outcome::Missing => {
            return Err(TransportError::Io(format!(
                "the recording ends before exchange {} had a response (the recorded run stopped there)",
                exchange.number
            )));
        }
        Outcome::SendFailed(error) => return Err(error.to_transport()),
        Outcome::Response {
            status,
            headers,
            chunks,
            end,
        } => (*status, headers.clone(), chunks, end),
    };
    let mut items: Vec<Result<Bytes, TransportError>> =
        chunks.iter().map(|c| Ok(Bytes::from(c.clone()))).collect();
    match end {
        BodyEnd::Complete => {}
        BodyEnd::Failed(error) => items.push(Err(error.to_transport())),
        BodyEnd::Cut => items.push(Err(TransportError::Io(format!(
            "the recording of exchange {} ends here (the recorded run stopped reading)",
            exchange.number
        )))),
    }
    Ok(ResponseHandle::new(
        status,
        headers,
        Box::pin(futures_util::stream::iter(items)),
    ))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Recording {
    /// The recorded session's protocol.
    pub fn protocol(&self) -> Result<WireProtocol, String> {
        WireProtocol::parse(&self.session().protocol).ok_or_else(|| {
            format!(
                "{}: unknown protocol {:?} in the header",
                self.path.display(),
                self.session().protocol
            )
        })
    }

    /// An endpoint of the recorded name and protocol, served by the replay (it has no URL
    /// and no key).
    pub fn endpoint(&self) -> Result<Endpoint, String> {
        Ok(Endpoint {
            name: self.session().endpoint.clone(),
            base_url: format!("{REPLAY_SCHEME}{}", self.path.display()),
            api_key: None,
            auth: AuthStyle::Bearer,
            key_var: String::new(),
            configured: true,
            protocol: self.protocol()?,
            base_url_setting: Some(format!("--replay {}", self.path.display())),
        })
    }

    /// Whether a session asked for with `provider` and `model` (each optional) can replay
    /// this recording; the error names what differs.
    pub fn check_choice(&self, provider: Option<&str>, model: Option<&str>) -> Result<(), String> {
        let session = self.session();
        let what = format!(
            "the recording {} was made with provider {} ({}, model {})",
            self.path.display(),
            session.endpoint,
            session.protocol,
            session.model
        );
        if let Some(provider) = provider.filter(|p| *p != REPLAY_PROVIDER)
            && provider != session.endpoint
            && provider != session.provider
        {
            return Err(format!("{what}; it cannot be replayed as provider {provider}"));
        }
        if let Some(model) = model
            && model != session.model
        {
            return Err(format!("{what}; it cannot be replayed with model {model}"));
        }
        Ok(())
    }

    /// Checks that a session configuration talks the way the recording was made.
    pub fn check_config(&self, config: &SessionConfig) -> Result<(), String> {
        let session = self.session();
        let recorded = self.protocol()?;
        if config.endpoint != session.endpoint || config.protocol != recorded || config.model != session.model
        {
            return Err(format!(
                "the recording {} was made with endpoint {} ({}, model {}); this session uses {} ({}, model {})",
                self.path.display(),
                session.endpoint,
                session.protocol,
                session.model,
                config.endpoint,
                config.protocol.as_str(),
                config.model
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const HEADER: &str = r#"{"type":"header","format":"agent-host/llm-recording","version":1,"session":{"provider":"anthropic","endpoint":"anthropic","protocol":"anthropic-messages","model":"m"}}"#;
    const REQUEST: &str = r#"{"type":"request","exchange":1,"t_ms":0,"endpoint":"anthropic","method":"POST","path":"/v1/messages","headers":[],"body":{"model":"m"}}"#;
    const RESPONSE: &str = r#"{"type":"response","exchange":1,"t_ms":1,"status":200,"headers":[]}"#;
    const CHUNK: &str = r#"{"type":"chunk","exchange":1,"t_ms":2,"text":"data: x\n\n"}"#;

    fn open(text: &str) -> Result<Recording, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, text).unwrap();
        Recording::open(&path)
    }

    fn request(body: &str) -> HttpRequest {
        HttpRequest {
            endpoint: "anthropic".into(),
            method: "POST".into(),
            path: "/v1/messages".into(),
            headers: Vec::new(),
            body: body.as_bytes().to_vec(),
            timeout_ms: None,
        }
    }

    #[tokio::test]
    async fn a_torn_last_line_is_ignored_and_a_cut_body_ends_in_an_error() {
        let recording = open(&format!(
            "{HEADER}\n{REQUEST}\n{RESPONSE}\n{CHUNK}\n{{\"type\":\"ch"
        ))
        .unwrap();
        assert_eq!(recording.len(), 1);
        let replay = ReplayTransport::new(recording);
        let mut response = replay.send(request(r#"{"model":"m"}"#)).unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(
            response.next_chunk().await.unwrap(),
            Some(b"data: x\n\n".to_vec())
        );
        let cut = response.next_chunk().await.unwrap_err();
        assert!(format!("{cut:?}").contains("ends here"), "{cut:?}");
        let exhausted = replay.send(request(r#"{"model":"m"}"#)).err().unwrap();
        assert!(
            format!("{exhausted:?}").contains("holds only 1 exchanges"),
            "{exhausted:?}"
        );
    }

    #[test]
    fn bad_files_are_refused_naming_the_problem() {
        let middle = open(&format!("{HEADER}\nnot json\n{REQUEST}\n")).unwrap_err();
        assert!(middle.contains("line 2"), "{middle}");
        let newer = open(&HEADER.replace("\"version\":1", "\"version\":9")).unwrap_err();
        assert!(newer.contains("version 9 is newer"), "{newer}");
        let headless = open(&format!("{REQUEST}\n")).unwrap_err();
        assert!(headless.contains("not an agent-host recording"), "{headless}");
        let orphan = open(&format!("{HEADER}\n{CHUNK}\n")).unwrap_err();
        assert!(orphan.contains("exchange 1 has no request line"), "{orphan}");
    }

    #[test]
    fn a_different_request_is_refused_with_its_first_difference() {
        let replay = ReplayTransport::new(open(&format!("{HEADER}\n{REQUEST}\n{RESPONSE}\n")).unwrap());
        let error = replay.send(request(r#"{"model":"other"}"#)).err().unwrap();
        let TransportError::NotConfigured(message) = error else {
            panic!("a divergence is not retried: {error:?}");
        };
        assert!(
            message.contains("at /model") && message.contains("\"m\"") && message.contains("\"other\""),
            "{message}"
        );
    }
}
