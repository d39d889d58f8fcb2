//! A scripted LLM server for tests and demos. It listens on 127.0.0.1, answers each request
//! with the next scripted reply in a provider's real wire format (Anthropic Messages, OpenAI
//! Responses and Chat Completions, Gemini streaming), and records every request it received.

pub use agent_test_support::wire::{Reply, anthropic, chat_completions, gemini, openai_responses};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tower_http::cors::{AllowHeaders, Any, CorsLayer};

/// A request the server received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// The Anthropic `tool_result` blocks the request carries, in order.
    pub fn tool_results(&self) -> Vec<serde_json::Value> {
        let body = self.json();
        body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b["type"] == "tool_result")
            .collect()
    }
}

/// What the server checks and replays.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Script {
    pub replies: Vec<Reply>,
    /// If set, requests without this key (in `x-api-key`, `authorization: Bearer` or
    /// `x-goog-api-key`, as the API expects) get that API's authentication error.
    #[serde(default)]
    pub require_api_key: Option<String>,
}

/// Replies for the requests whose body contains `marker` (e.g. text only a subagent's system
/// prompt has), so concurrent sessions each get their own script whatever order they ask in.
#[derive(Debug, Clone)]
pub struct Route {
    pub marker: String,
    pub replies: Vec<Reply>,
}

#[derive(Default)]
struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    routes: Mutex<Vec<(String, VecDeque<Reply>)>>,
    requests: Mutex<Vec<RecordedRequest>>,
    require_api_key: Option<String>,
}

/// A running server; it stops when dropped.
pub struct ScriptedServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl ScriptedServer {
    /// Starts on an ephemeral port of 127.0.0.1 inside the current tokio runtime.
    pub async fn start(script: Script) -> std::io::Result<Self> {
        Self::start_routed(script, Vec::new()).await
    }

    /// Starts with `replies` and no key check, for tests (panics if it cannot listen).
    pub async fn replying(replies: Vec<Reply>) -> Self {
        match Self::start(Script {
            replies,
            require_api_key: None,
        })
        .await
        {
            Ok(server) => server,
            Err(e) => panic!("the scripted server cannot listen on 127.0.0.1: {e}"),
        }
    }

    /// Like [`ScriptedServer::start`], but a request matching a route's marker takes that
    /// route's next reply (the first route with replies left wins); others take the script's.
    pub async fn start_routed(script: Script, routes: Vec<Route>) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            replies: Mutex::new(script.replies.into()),
            routes: Mutex::new(routes.into_iter().map(|r| (r.marker, r.replies.into())).collect()),
            requests: Mutex::new(Vec::new()),
            require_api_key: script.require_api_key,
        });
        // The real APIs answer browsers' preflights (Anthropic once its direct-browser-access
        // header is sent), so the scripted one does too; preflights are not recorded.
        let app = Router::new()
            .fallback(handle)
            .with_state(shared.clone())
            .layer(cors());
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        Ok(Self {
            addr,
            shared,
            shutdown: Some(tx),
        })
    }

    /// `http://127.0.0.1:PORT`, for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// Replies not yet used.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.replies).len()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let recorded = RecordedRequest {
        method: method.to_string(),
        path: uri.path_and_query().map(|p| p.to_string()).unwrap_or_default(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
            .collect(),
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    // Each protocol checks its own credential header and answers in its own envelope.
    // Each API checks its own credential header and answers in its own error envelope.
    let api = if recorded.path.contains("/chat/completions") || recorded.path.contains("/responses") {
        Api::OpenAi
    } else if recorded.path.contains("GenerateContent") || recorded.path.contains("generateContent") {
        Api::Gemini
    } else {
        Api::Anthropic
    };
    let authorized = match (&shared.require_api_key, api) {
        (None, _) => true,
        (Some(key), Api::OpenAi) => {
            recorded.header("authorization") == Some(format!("Bearer {key}").as_str())
        }
        (Some(key), Api::Gemini) => recorded.header("x-goog-api-key") == Some(key.as_str()),
        (Some(key), Api::Anthropic) => recorded.header("x-api-key") == Some(key.as_str()),
    };
    let routed = lock(&shared.routes)
        .iter_mut()
        .find(|(marker, replies)| !replies.is_empty() && recorded.body.contains(marker.as_str()))
        .and_then(|(_, replies)| replies.pop_front());
    lock(&shared.requests).push(recorded);
    let exhausted = "the scripted server has no more replies";
    let reply = match (authorized, api) {
        (true, _) => routed
            .or_else(|| lock(&shared.replies).pop_front())
            .unwrap_or_else(|| match api {
                Api::OpenAi => chat_completions::error(500, "server_error", "exhausted", exhausted),
                Api::Gemini => gemini::error(500, "INTERNAL", exhausted),
                Api::Anthropic => anthropic::error(500, "api_error", exhausted),
            }),
        (false, Api::OpenAi) => chat_completions::error(
            401,
            "invalid_request_error",
            "invalid_api_key",
            "Incorrect API key provided",
        ),
        // Gemini answers a bad key with 400, not 401.
        (false, Api::Gemini) => gemini::error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid. Please pass a valid API key.",
        ),
        (false, Api::Anthropic) => anthropic::error(401, "authentication_error", "invalid x-api-key"),
    };
    respond(reply)
}

/// Any origin, method and header; headers are mirrored rather than `*` because a wildcard
/// does not cover `authorization` (OpenAI's key), and every response header is readable.
fn cors() -> CorsLayer {
    CorsLayer::new()
        .allow_origin(Any)
        .allow_methods(Any)
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers(Any)
}

/// Which provider API a request is for, by its path.
#[derive(Debug, Clone, Copy)]
enum Api {
    Anthropic,
    OpenAi,
    Gemini,
}

fn respond(reply: Reply) -> Response {
    let delay = Duration::from_millis(reply.delay_ms);
    let chunks = reply.chunks;
    let stream = futures_util::stream::unfold(chunks.into_iter(), move |mut rest| async move {
        let next = rest.next()?;
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        Some((Ok::<_, std::io::Error>(Bytes::from(next)), rest))
    });
    let mut builder = Response::builder()
        .status(StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR));
    for (name, value) in &reply.headers {
        builder = builder.header(name, value);
    }
    builder
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| Response::new(Body::from("invalid scripted reply headers")))
}
