//! The exported `web` interface over `wasi:http`.

use crate::url::{Target, body_limit, body_text, is_redirect};
use bindings::exports::example::fetcher::web::{Guest, Page};
use wasip2::http::outgoing_handler;
use wasip2::http::types::{
    ErrorCode, Fields, IncomingResponse, Method, OutgoingRequest, RequestOptions, Scheme,
};
use wasip2::io::streams::StreamError;

mod bindings {
    wit_bindgen::generate!({ path: "wit/fetcher.wit", world: "fetcher" });
}

#[used]
#[unsafe(link_section = "agent-tool-wit")]
static WIT: [u8; include_bytes!("../wit/fetcher.wit").len()] = *include_bytes!("../wit/fetcher.wit");

const MAX_REDIRECTS: usize = 5;
const SECOND: u64 = 1_000_000_000;
/// Bytes asked of the body stream at a time.
const CHUNK: usize = 64 << 10;

struct Fetcher;

enum Fetched {
    Redirect(String),
    Page {
        status: u16,
        content_type: Option<String>,
        body: Vec<u8>,
    },
}

impl Guest for Fetcher {
    fn fetch(url: String, max_bytes: Option<u32>) -> Result<Page, String> {
        let limit = body_limit(max_bytes);
        let mut target = Target::parse(&url)?;
        for _ in 0..=MAX_REDIRECTS {
            match get(&target, limit)? {
                Fetched::Redirect(location) => target = target.join(&location)?,
                Fetched::Page {
                    status,
                    content_type,
                    body,
                } => {
                    let (body, truncated) = body_text(body, limit);
                    return Ok(Page {
                        status,
                        content_type,
                        body,
                        truncated,
                    });
                }
            }
        }
        Err(format!(
            "{url}: more than {MAX_REDIRECTS} redirects, the last to {}",
            target.url()
        ))
    }
}

fn get(target: &Target, limit: usize) -> Result<Fetched, String> {
    let url = target.url();
    let headers = Fields::from_list(&[(
        "user-agent".to_string(),
        b"example-fetcher/0.1 (WebAssembly component)".to_vec(),
    )])
    .map_err(|error| format!("{url}: the request headers were refused: {error:?}"))?;
    let request = OutgoingRequest::new(headers);
    request
        .set_method(&Method::Get)
        .map_err(|()| format!("{url}: the GET method was refused"))?;
    let scheme = if target.https { Scheme::Https } else { Scheme::Http };
    request
        .set_scheme(Some(&scheme))
        .map_err(|()| format!("{url}: the scheme was refused"))?;
    request
        .set_authority(Some(&target.authority))
        .map_err(|()| format!("{url}: invalid host or port {:?}", target.authority))?;
    request
        .set_path_with_query(Some(&target.path_and_query))
        .map_err(|()| format!("{url}: invalid path {:?}", target.path_and_query))?;
    let options = RequestOptions::new();
    // A host that does not support a timeout says so with an error; its own limits apply then.
    let _ = options.set_connect_timeout(Some(10 * SECOND));
    let _ = options.set_first_byte_timeout(Some(30 * SECOND));
    let _ = options.set_between_bytes_timeout(Some(30 * SECOND));
    let pending = outgoing_handler::handle(request, Some(options)).map_err(|code| failed(&url, &code))?;
    let outcome = loop {
        if let Some(outcome) = pending.get() {
            break outcome;
        }
        pending.subscribe().block();
    };
    let response = match outcome {
        Ok(Ok(response)) => response,
        Ok(Err(code)) => return Err(failed(&url, &code)),
        Err(()) => return Err(format!("{url}: the response was already taken")),
    };
    let status = response.status();
    let (content_type, location) = {
        let headers = response.headers();
        let first = |name: &str| {
            headers
                .get(name)
                .first()
                .map(|value| String::from_utf8_lossy(value).trim().to_string())
        };
        (first("content-type"), first("location"))
    };
    if is_redirect(status)
        && let Some(location) = location
    {
        return Ok(Fetched::Redirect(location));
    }
    let body = read_body(&response, limit).map_err(|error| format!("{url}: reading the body: {error}"))?;
    Ok(Fetched::Page {
        status,
        content_type,
        body,
    })
}

/// Up to `limit + 1` bytes of the body: one more than kept, to know whether it was cut.
fn read_body(response: &IncomingResponse, limit: usize) -> Result<Vec<u8>, String> {
    // Declared in this order so that the stream, a child of the body, is dropped first.
    let body = response
        .consume()
        .map_err(|()| "the body was already taken".to_string())?;
    let stream = body
        .stream()
        .map_err(|()| "the body stream was already taken".to_string())?;
    let mut bytes = Vec::new();
    while bytes.len() <= limit {
        let wanted = (limit + 1 - bytes.len()).min(CHUNK);
        match stream.blocking_read(wanted as u64) {
            Ok(piece) => bytes.extend_from_slice(&piece),
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(error)) => return Err(error.to_debug_string()),
        }
    }
    Ok(bytes)
}

fn failed(url: &str, code: &ErrorCode) -> String {
    let reason = match code {
        ErrorCode::DnsError(_) => "the host name could not be resolved".to_string(),
        ErrorCode::DestinationNotFound => "the destination was not found".to_string(),
        ErrorCode::DestinationUnavailable => "the destination is unavailable".to_string(),
        ErrorCode::ConnectionRefused => "connection refused".to_string(),
        ErrorCode::ConnectionTimeout => "the connection timed out".to_string(),
        ErrorCode::ConnectionReadTimeout | ErrorCode::HttpResponseTimeout => {
            "the server did not answer in time".to_string()
        }
        ErrorCode::HttpRequestDenied => "the request was denied by the host".to_string(),
        ErrorCode::TlsCertificateError | ErrorCode::TlsAlertReceived(_) | ErrorCode::TlsProtocolError => {
            format!("TLS failed ({code:?})")
        }
        other => format!("{other:?}"),
    };
    format!("{url}: {reason}")
}

bindings::export!(Fetcher with_types_in bindings);
