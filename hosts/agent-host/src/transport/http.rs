//! `llm-transport` over reqwest: resolves endpoint names, attaches credentials, and streams
//! response bodies chunk by chunk.

use crate::secrets::redact::{hide_url_credentials, redact_url};
use crate::transport::endpoints::{Endpoint, Endpoints};
use crate::transport::response::{Deadline, ResponseHandle};
use agent_protocol::ports::{HttpRequest, TransportError};
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::Duration;

/// The HTTP client shared by every session of a host.
#[derive(Clone)]
pub struct HttpTransport {
    client: reqwest::Client,
    endpoints: Arc<Endpoints>,
}

impl HttpTransport {
    pub fn new(endpoints: Endpoints) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(20))
            .redirect(same_origin_redirects())
            .user_agent(concat!("agent-host/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self {
            client,
            endpoints: Arc::new(endpoints),
        })
    }

    pub fn endpoints(&self) -> &Endpoints {
        &self.endpoints
    }

    /// Sends a request and returns once the response head arrived.
    pub async fn send(&self, request: HttpRequest) -> Result<ResponseHandle, TransportError> {
        let endpoint = self.endpoints.get(&request.endpoint).ok_or_else(|| {
            TransportError::UnknownEndpoint(format!("no endpoint named {:?} is configured", request.endpoint))
        })?;
        if !endpoint.configured {
            return Err(TransportError::NotConfigured(format!(
                "endpoint {:?} has no API key: set {} (or its base URL for a local server)",
                endpoint.name, endpoint.key_var
            )));
        }
        let method = reqwest::Method::from_bytes(request.method.as_bytes())
            .map_err(|_| TransportError::Connect(format!("invalid HTTP method {:?}", request.method)))?;
        let url = endpoint.url(&request.path);
        let mut builder = self.client.request(method, &url).body(request.body);
        for (name, value) in request.headers.iter().chain(endpoint.auth_headers().iter()) {
            builder = builder.header(name, value);
        }
        tracing::debug!(url = %redact_url(&url), "sending LLM request");
        // The whole request, head to end of stream, within the overall limit; the wait for
        // the head within the component's timeout too. A long answer may stream for minutes,
        // and its reads have their own idle timeout.
        let deadline = self.endpoints.request_timeout().map(Deadline::after);
        let head_timeout = Duration::from_millis(request.timeout_ms.unwrap_or(600_000).max(1_000));
        let wait = deadline.map_or(head_timeout, |d| d.remaining().min(head_timeout));
        let response = match tokio::time::timeout(wait, builder.send()).await {
            Err(_) => {
                if let Some(deadline) = deadline.filter(Deadline::passed) {
                    return Err(deadline.error());
                }
                return Err(TransportError::Timeout(format!(
                    "{}: no response within {} ms",
                    redact_url(&url),
                    head_timeout.as_millis()
                )));
            }
            Ok(result) => result.map_err(|e| TransportError::Connect(unreachable(endpoint, &url, &e)))?,
        };
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let body = response.bytes_stream().map(|chunk| {
            chunk.map_err(|e| TransportError::Io(crate::secrets::redact_known(&error_chain(&e))))
        });
        Ok(ResponseHandle::new(status, headers, Box::pin(body)).with_deadline(deadline))
    }
}

/// Redirects within the endpoint's origin only: the request carries the key (`x-api-key`,
/// `x-goog-api-key` and `Authorization` alike) and the conversation, and a server must not
/// be able to send both to another host. A redirect elsewhere ends as its 3xx response.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        match same_origin && attempt.previous().len() < 5 {
            true => attempt.follow(),
            false => attempt.stop(),
        }
    })
}

/// `message` with the user information of `url` hidden, however the URL is spelled in it,
/// and every credential this process knows.
fn without_credentials(message: String, url: &str) -> String {
    let mut message = crate::secrets::redact_known(&hide_url_credentials(&message, url));
    if let Ok(parsed) = reqwest::Url::parse(url) {
        if let Some(password) = parsed.password().filter(|p| !p.is_empty()) {
            message = message.replace(password, "***");
        } else if !parsed.username().is_empty() {
            message = message.replace(&format!("{}@", parsed.username()), "***@");
        }
    }
    message
}

/// Why `url` could not be reached, in one line, with the setting to check: the server's own
/// (`ANTHROPIC_BASE_URL`, an `[endpoints]` entry) or, for a public API, the network.
fn unreachable(endpoint: &Endpoint, url: &str, error: &reqwest::Error) -> String {
    let fix = match &endpoint.base_url_setting {
        Some(setting) => format!("is the server at {setting} running?"),
        None => format!("check the network, or {}", endpoint.base_url_hint()),
    };
    let message = match connect_reason(error) {
        Some(reason) => format!("{url}: {reason} ({fix})"),
        None => format!("{url}: {} ({fix})", error_chain(error)),
    };
    without_credentials(message, url)
}

/// The cause of a failed connection in a few words, when it is a common one.
fn connect_reason(error: &reqwest::Error) -> Option<String> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return Some(match io.kind() {
                std::io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
                std::io::ErrorKind::TimedOut => "the connection timed out".to_string(),
                std::io::ErrorKind::ConnectionReset => "the connection was reset".to_string(),
                _ => io.to_string(),
            });
        }
        if cause.to_string().starts_with("dns error") {
            return Some("the host name does not resolve".to_string());
        }
        source = cause.source();
    }
    None
}

/// An error with its causes, e.g. "error sending request: connection refused".
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
