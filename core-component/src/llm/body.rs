//! What every protocol's request body shares. A body is written as JSON bytes straight from
//! the borrowed request, with no `serde_json::Value` tree in between: its top-level fields
//! in order with the caller's provider options merged over them ([`BodyWriter`]), and its
//! list of messages from fragments that a session's `WireCache` keeps, so a request
//! serialises only what is new since the one before.

use super::types::{MessageView, Request, WireProtocol};
use serde::Serialize;
use serde::ser::Serializer;
use serde_json::{Map, Value};

pub(crate) type Result<T> = std::result::Result<T, serde_json::Error>;

/// Writes a body's top-level fields. `provider_options[key]` (an object) is the escape
/// hatch for parameters the neutral request does not model: its fields are written last and
/// win over a field of the same name, which is then left out; the names in `skip` are
/// options of ours, not of the API.
pub(crate) struct BodyWriter<'r> {
    out: Vec<u8>,
    extra: Option<&'r Map<String, Value>>,
    skip: &'static [&'static str],
    protocol: WireProtocol,
}

/// The JSON of a part of the prompt (`name`: the system prompt or the tools), from the
/// request's cache when it keeps it, else written by `write` (and kept).
pub(crate) fn prompt_json(
    request: &Request,
    protocol: WireProtocol,
    name: &'static str,
    write: impl FnOnce(&mut Vec<u8>) -> Result<()>,
) -> Result<Vec<u8>> {
    // A cache already in use (it never is: no body is written inside another) is passed by.
    match request.cache.and_then(|cache| cache.try_borrow_mut().ok()) {
        Some(mut cache) => Ok(cache
            .prompt_field(protocol, request.system, name, write)?
            .to_vec()),
        None => {
            let mut json = Vec::new();
            write(&mut json)?;
            Ok(json)
        }
    }
}

impl<'r> BodyWriter<'r> {
    /// A body in `protocol`; `key` names its provider options.
    pub(crate) fn new(
        request: &Request<'r>,
        protocol: WireProtocol,
        key: &str,
        skip: &'static [&'static str],
    ) -> Self {
        let mut out = request
            .cache
            .and_then(|cache| cache.try_borrow_mut().ok())
            .map_or_else(|| Vec::with_capacity(4096), |mut cache| cache.take_buffer());
        out.push(b'{');
        Self {
            out,
            extra: provider_options(request, key),
            skip,
            protocol,
        }
    }

    fn overridden(&self, key: &str) -> bool {
        self.extra.is_some_and(|extra| extra.contains_key(key)) && !self.skip.contains(&key)
    }

    /// Writes `"key":` and returns where the value goes, unless the provider options
    /// replace the field.
    fn key(&mut self, key: &str) -> Result<Option<&mut Vec<u8>>> {
        if self.overridden(key) {
            return Ok(None);
        }
        if self.out.len() > 1 {
            self.out.push(b',');
        }
        serde_json::to_writer(&mut self.out, key)?;
        self.out.push(b':');
        Ok(Some(&mut self.out))
    }

    /// Writes a field unless the provider options replace it.
    pub(crate) fn field<V: Serialize + ?Sized>(&mut self, key: &str, value: &V) -> Result<()> {
        match self.key(key)? {
            Some(out) => serde_json::to_writer(out, value),
            None => Ok(()),
        }
    }

    /// Writes a field whose value `write` puts down as JSON bytes.
    pub(crate) fn raw_field(
        &mut self,
        key: &str,
        write: impl FnOnce(&mut Vec<u8>) -> Result<()>,
    ) -> Result<()> {
        match self.key(key)? {
            Some(out) => write(out),
            None => Ok(()),
        }
    }

    /// Writes a field of the prompt (the system prompt or the tools), which the request's
    /// cache keeps once written: `write` puts its value down as JSON bytes.
    pub(crate) fn prompt_field(
        &mut self,
        request: &Request,
        key: &'static str,
        write: impl FnOnce(&mut Vec<u8>) -> Result<()>,
    ) -> Result<()> {
        if self.overridden(key) {
            return Ok(());
        }
        let json = prompt_json(request, self.protocol, key, write)?;
        self.raw_field(key, |out| {
            out.extend_from_slice(&json);
            Ok(())
        })
    }

    /// Writes the provider options' fields and ends the body.
    pub(crate) fn finish(mut self) -> Result<Vec<u8>> {
        let extra = self.extra.take();
        for (key, value) in extra.into_iter().flatten() {
            if !self.skip.contains(&key.as_str()) {
                if self.out.len() > 1 {
                    self.out.push(b',');
                }
                serde_json::to_writer(&mut self.out, key)?;
                self.out.push(b':');
                serde_json::to_writer(&mut self.out, value)?;
            }
        }
        self.out.push(b'}');
        Ok(self.out)
    }
}

/// The object `provider_options[key]`, if there is one.
pub(crate) fn provider_options<'r>(request: &Request<'r>, key: &str) -> Option<&'r Map<String, Value>> {
    request.provider_options?.get(key)?.as_object()
}

/// The JSON values a message contributes to a protocol's list (of messages, input items,
/// contents or content blocks), comma-separated, for each message of the request: taken from
/// the request's `WireCache` where it has them, written by `fragment` (and kept) where it
/// does not. `fragment(index, out)` writes the values of message `index`, or nothing.
pub(crate) fn message_fragments<R>(
    request: &Request,
    protocol: WireProtocol,
    fragment: impl Fn(usize, &mut Vec<u8>) -> Result<()>,
    use_them: impl FnOnce(&[&[u8]]) -> Result<R>,
) -> Result<R> {
    let write = |index: usize| -> Result<Vec<u8>> {
        let mut out = Vec::new();
        fragment(index, &mut out)?;
        Ok(out)
    };
    match request.cache.and_then(|cache| cache.try_borrow_mut().ok()) {
        Some(mut cache) => {
            let fragments = cache.fragments(protocol, request.messages.len(), write)?;
            use_them(&fragments)
        }
        None => {
            let owned = (0..request.messages.len())
                .map(write)
                .collect::<Result<Vec<_>>>()?;
            let fragments: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
            use_them(&fragments)
        }
    }
}

/// Writes `[`, the non-empty fragments joined by commas, `]`.
pub(crate) fn write_list(out: &mut Vec<u8>, fragments: &[&[u8]]) {
    out.push(b'[');
    let mut first = true;
    for fragment in fragments.iter().filter(|f| !f.is_empty()) {
        if !first {
            out.push(b',');
        }
        out.extend_from_slice(fragment);
        first = false;
    }
    out.push(b']');
}

/// Appends one JSON value to a fragment (comma-separated values).
pub(crate) fn push_value<V: Serialize + ?Sized>(out: &mut Vec<u8>, value: &V) -> Result<()> {
    if !out.is_empty() {
        out.push(b',');
    }
    serde_json::to_writer(out, value)
}

/// The messages before `index` (for a protocol that names a tool call in its result).
pub(crate) fn earlier<'v, 'a>(request: &'v Request<'a>, index: usize) -> &'v [MessageView<'a>] {
    &request.messages[..index.min(request.messages.len())]
}

/// `{}`: replayed in place of tool-call arguments that were not a JSON object (a truncated
/// answer); the tool result explains what went wrong.
#[derive(Serialize)]
pub(crate) struct EmptyObject {}

/// Tool-call arguments as a JSON object, or `{}`.
pub(crate) enum Arguments<'a> {
    Object(&'a Value),
    Empty(EmptyObject),
}

impl<'a> Arguments<'a> {
    pub(crate) fn of(arguments: &'a Value) -> Self {
        if arguments.is_object() {
            Self::Object(arguments)
        } else {
            Self::Empty(EmptyObject {})
        }
    }

    /// The arguments as JSON text, for the protocols that send them as a string.
    pub(crate) fn to_json(&self) -> String {
        match self {
            Self::Object(value) => value.to_string(),
            Self::Empty(_) => "{}".to_string(),
        }
    }
}

impl Serialize for Arguments<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Self::Object(value) => value.serialize(serializer),
            Self::Empty(empty) => empty.serialize(serializer),
        }
    }
}

/// A sequence written from a function that makes a fresh iterator each time (a `Serialize`
/// impl can be asked to write more than once, an iterator runs once).
pub(crate) struct Seq<F>(pub(crate) F);

impl<F, I> Serialize for Seq<F>
where
    F: Fn() -> I,
    I: IntoIterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
    }
}
