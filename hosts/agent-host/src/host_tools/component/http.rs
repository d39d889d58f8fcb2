//! `wasi:http` for components with plain exports: agent-host sends each request itself,
//! only to a host the component's policy lists (`[http] allow`, the network allow-list's
//! syntax and rules: a listed name resolving to a loopback or private address is refused
//! unless that address is listed too), over a connection to an address it checked. A
//! refused request fails in the component as `HTTP-request-denied`, and the reason is
//! added to the tool's result so the model knows what happened.

use egress_proxy::{AllowList, Resolve, VettedError, connect_vetted};
use http::uri::Scheme;
use http_body_util::BodyExt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

/// The most requests one call may send: each holds a connection until it ends.
const MAX_REQUESTS_PER_CALL: usize = 32;
/// The most refusals one call reports, and the length of each.
const MAX_NOTES: usize = 8;
const MAX_NOTE_CHARS: usize = 300;

/// How long a connection or a response's first byte may take when the component sets no
/// timeout of its own (the call's wall-clock limit still holds).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

type Sent = Result<
    (
        http::Response<WasiBody>,
        Box<dyn Future<Output = Result<(), Error>> + Send>,
    ),
    Error,
>;

/// The hosts one component may reach, and what was refused during a call.
pub struct PolicyHttp {
    component: String,
    allow: Arc<AllowList>,
    resolver: Arc<dyn Resolve>,
    refused: Arc<Mutex<Vec<String>>>,
    sent: usize,
    /// Why no request may be sent now (a replay without `--replay-trusted`, `--read-only`).
    changes_refused: Option<String>,
}

impl PolicyHttp {
    pub fn new(
        component: &str,
        allow: Arc<AllowList>,
        resolver: Arc<dyn Resolve>,
        changes_refused: Option<String>,
    ) -> Self {
        Self {
            component: component.to_string(),
            allow,
            resolver,
            refused: Arc::default(),
            sent: 0,
            changes_refused,
        }
    }

    /// What was refused so far, one sentence each.
    pub fn refusals(&self) -> Vec<String> {
        self.refused
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl WasiHttpHooks for PolicyHttp {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _response_errors: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<dyn Future<Output = Sent> + Send> {
        let allow = self.allow.clone();
        let resolver = self.resolver.clone();
        let refused = self.refused.clone();
        let component = self.component.clone();
        self.sent += 1;
        let over_limit = self.sent > MAX_REQUESTS_PER_CALL;
        let changes_refused = self.changes_refused.clone();
        Box::new(async move {
            // Each reason once, a few at most, each cut short: a component may be refused
            // in a loop, under names it makes up.
            let note = |reason: String| {
                let reason: String = reason.chars().take(MAX_NOTE_CHARS).collect();
                let mut refused = refused.lock().unwrap_or_else(PoisonError::into_inner);
                if refused.len() < MAX_NOTES && !refused.contains(&reason) {
                    refused.push(reason);
                }
                Error::HttpRequestDenied
            };
            if let Some(reason) = changes_refused {
                let host = request.uri().host().unwrap_or("a host").to_string();
                return Err(note(format!("agent-host refused {host}: {reason}")));
            }
            if over_limit {
                return Err(note(format!(
                    "agent-host refused a request: component {component} sent more than {MAX_REQUESTS_PER_CALL} in one call"
                )));
            }
            send(request, options, &allow, resolver.as_ref(), &component)
                .await
                .map_err(|failure| match failure {
                    Failure::Refused(reason) => note(reason),
                    Failure::Other(error) => error,
                })
        })
    }
}

enum Failure {
    Refused(String),
    Other(Error),
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Other(error)
    }
}

trait Stream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Stream for T {}

async fn send(
    mut request: http::Request<WasiBody>,
    options: Option<RequestOptions>,
    allow: &AllowList,
    resolver: &dyn Resolve,
    component: &str,
) -> Result<
    (
        http::Response<WasiBody>,
        Box<dyn Future<Output = Result<(), Error>> + Send>,
    ),
    Failure,
> {
    let uri = request.uri().clone();
    let tls = uri.scheme() == Some(&Scheme::HTTPS);
    let host = uri
        .host()
        .map(|h| h.trim_start_matches('[').trim_end_matches(']').to_string())
        .ok_or(Error::HttpRequestUriInvalid)?;
    let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let connect_timeout = options.and_then(|o| o.connect_timeout).unwrap_or(DEFAULT_TIMEOUT);
    let first_byte = options
        .and_then(|o| o.first_byte_timeout)
        .unwrap_or(DEFAULT_TIMEOUT);
    let shown = match port {
        80 | 443 => host.clone(),
        port => format!("{host}:{port}"),
    };
    let list_name = format!("the http.allow of component {component}'s policy");
    let connected = tokio::time::timeout(
        connect_timeout,
        connect_vetted(allow, resolver, &host, port, &list_name),
    )
    .await
    .map_err(|_| Error::ConnectionTimeout)?;
    let (stream, _) = connected.map_err(|error| match error {
        VettedError::NotListed => Failure::Refused(format!(
            "agent-host refused {shown}: not in {list_name} ([plugins.policy.{component}] http.allow)"
        )),
        VettedError::Refused(detail) => Failure::Refused(format!("agent-host refused {shown}: {detail}")),
        VettedError::Failed(message) => Failure::Other(Error::Connect(std::io::Error::other(message))),
    })?;
    let stream: Box<dyn Stream> = match tls {
        true => Box::new(
            tokio::time::timeout(connect_timeout, tls_connect(&host, stream))
                .await
                .map_err(|_| Error::ConnectionTimeout)??,
        ),
        false => Box::new(stream),
    };
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(Error::from)?;
    let driver = tokio::spawn(connection);
    // The request line takes the origin form; the Host header already names the host.
    let origin = uri.path_and_query().map_or("/", |p| p.as_str());
    *request.uri_mut() = origin.parse().map_err(|_| Error::HttpRequestUriInvalid)?;
    let response = tokio::time::timeout(first_byte, sender.send_request(request))
        .await
        .map_err(|_| Error::ConnectionReadTimeout)?
        .map_err(Error::from)?;
    let response = response.map(|body| body.map_err(Error::from).boxed_unsync());
    let finished = async move {
        match driver.await {
            Ok(result) => result.map_err(Error::from),
            Err(error) => Err(Error::InternalError(Some(format!(
                "the connection task failed: {error}"
            )))),
        }
    };
    Ok((response, Box::new(finished)))
}

async fn tls_connect(host: &str, stream: tokio::net::TcpStream) -> Result<impl Stream, Failure> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.into(),
    };
    let config =
        rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::InternalError(Some(format!("TLS set-up: {e}"))))?
            .with_root_certificates(roots)
            .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(host.to_string())
        .map_err(|_| Error::HttpRequestUriInvalid)?;
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, stream)
        .await
        .map_err(|e| Failure::Other(Error::Tls(e)))
}
