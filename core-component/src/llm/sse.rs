//! A Server-Sent Events decoder following the WHATWG event-stream rules: lines end in CR, LF
//! or CRLF (also when split across chunks), `:` starts a comment, `data` lines join with
//! `\n`, a blank line dispatches. Bytes are buffered until a line is complete, so multi-byte
//! UTF-8 characters split across chunks decode correctly.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; `message` when absent.
    pub event: String,
    pub data: String,
    pub id: Option<String>,
    pub retry_ms: Option<u64>,
}

/// Incremental decoder: `feed` chunks as they arrive, then `finish`.
#[derive(Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    /// The previous chunk ended in CR: a leading LF of the next chunk belongs to it.
    pending_cr: bool,
    seen_first_line: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
    retry_ms: Option<u64>,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes a chunk and returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut rest = chunk;
        if self.pending_cr {
            self.pending_cr = false;
            if let Some((&b'\n', tail)) = rest.split_first() {
                rest = tail;
            }
        }
        while let Some(pos) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (complete, terminator) = (&rest[..pos], rest[pos]);
            rest = &rest[pos + 1..];
            if terminator == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.pending_cr = true,
                    Some(_) => {}
                }
            }
            // A line within one chunk is read where it lies; only a line split across
            // chunks is gathered, in a buffer that keeps its room for the next one.
            let event = if self.line.is_empty() {
                self.process_line(complete)
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(complete);
                let event = self.process_line(&line);
                line.clear();
                self.line = line;
                event
            };
            out.extend(event);
        }
        self.line.extend_from_slice(rest);
        out
    }

    /// Ends the stream. A final event that lacks its blank line is still dispatched:
    /// recorded provider streams end that way and SDKs accept them.
    pub fn finish(&mut self) -> Option<SseEvent> {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.process_line(&line);
        }
        self.dispatch()
    }

    fn process_line(&mut self, raw: &[u8]) -> Option<SseEvent> {
        // Checked as UTF-8 first: that check has a word-at-a-time path for ASCII, which
        // the lossy decoder (needed only for invalid bytes) lacks.
        let mut line = match std::str::from_utf8(raw) {
            Ok(line) => std::borrow::Cow::Borrowed(line),
            Err(_) => String::from_utf8_lossy(raw),
        };
        if !self.seen_first_line {
            self.seen_first_line = true;
            if let Some(stripped) = line.strip_prefix('\u{feff}') {
                line = stripped.to_string().into();
            }
        }
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (line.as_ref(), ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.id = Some(value.to_string()),
            "retry" => {
                if let Ok(ms) = value.parse() {
                    self.retry_ms = Some(ms);
                }
            }
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        Some(SseEvent {
            event: event.unwrap_or_else(|| "message".to_string()),
            data: std::mem::take(&mut self.data),
            id: self.id.clone(),
            retry_ms: self.retry_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out: Vec<SseEvent> = chunks.iter().flat_map(|c| d.feed(c)).collect();
        out.extend(d.finish());
        out
    }

    #[test]
    fn lf_crlf_and_cr_terminators_are_equivalent() {
        for sep in ["\n", "\r\n", "\r"] {
            let text = format!("event: a{sep}data: 1{sep}{sep}data: 2{sep}{sep}");
            let events = decode_all(&[text.as_bytes()]);
            assert_eq!(events.len(), 2, "separator {sep:?}");
            assert_eq!(events[0].event, "a");
            assert_eq!(events[0].data, "1");
            assert_eq!(events[1].event, "message");
            assert_eq!(events[1].data, "2");
        }
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_end() {
        let events = decode_all(&[b"data: x\r", b"\n\r", b"\ndata: y\r\n\r\n"]);
        let data: Vec<_> = events.iter().map(|e| e.data.as_str()).collect();
        assert_eq!(data, ["x", "y"]);
    }

    #[test]
    fn comments_multiline_data_and_no_space_after_colon() {
        let events = decode_all(&[b": keep-alive\ndata:a\ndata: b\n\n"]);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "a\nb");
    }

    #[test]
    fn utf8_split_inside_a_character() {
        let text = "data: h\u{e9}llo\n\n".as_bytes();
        let (a, b) = text.split_at(8);
        let events = decode_all(&[a, b]);
        assert_eq!(events[0].data, "h\u{e9}llo");
    }

    #[test]
    fn a_line_over_three_chunks_then_whole_lines_and_invalid_bytes() {
        // The buffer that gathered the split line must be empty again for the next lines.
        let events = decode_all(&[
            b"event: a\nda",
            b"ta: sp",
            b"lit\n\ndata: \xff!\n\ndata: next\n\n",
        ]);
        let data: Vec<_> = events
            .iter()
            .map(|e| (e.event.as_str(), e.data.as_str()))
            .collect();
        assert_eq!(
            data,
            [("a", "split"), ("message", "\u{fffd}!"), ("message", "next")]
        );
    }

    #[test]
    fn event_without_data_is_not_dispatched_and_id_retry_are_kept() {
        let events = decode_all(&[b"event: ping\n\nid: 7\nretry: 1500\ndata: z\n\n"]);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].event, "message");
        assert_eq!(events[0].id.as_deref(), Some("7"));
        assert_eq!(events[0].retry_ms, Some(1500));
    }

    #[test]
    fn final_event_without_blank_line_is_flushed() {
        let events = decode_all(&[b"event: message_stop\ndata: {}"]);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].event, "message_stop");
    }
}
