//! What is kept of a command's output: each stream streamed and kept up to a cap, beyond
//! which bytes are counted, not kept, so a runaway command fills neither the host's memory
//! nor the session's log (the model sees far less: the core truncates what it is shown).

use agent_protocol::ports::{OutputChunk, OutputStream};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

/// Bytes of each stream of one command kept for its result and streamed as output deltas,
/// unless [`OUTPUT_CAP_VAR`] says otherwise; beyond it output is counted, not kept, so a
/// runaway command fills neither the host's memory nor the session's log (the model sees far
/// less: the core truncates what it is shown).
pub const OUTPUT_CAP: usize = 16 * 1024 * 1024;
/// The variable that sets the cap, in bytes (`K`, `M` and `G` suffixes allowed).
pub const OUTPUT_CAP_VAR: &str = "AGENT_HOST_MAX_COMMAND_OUTPUT";

/// The cap in effect: [`OUTPUT_CAP_VAR`] when set and valid (else a warning), else
/// [`OUTPUT_CAP`].
pub fn output_cap() -> usize {
    static CAP: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CAP.get_or_init(|| {
        let Ok(value) = std::env::var(OUTPUT_CAP_VAR) else {
            return OUTPUT_CAP;
        };
        parse_size(&value).unwrap_or_else(|| {
            tracing::warn!("{OUTPUT_CAP_VAR}={value:?} is not a size (e.g. 4M); using {OUTPUT_CAP} bytes");
            OUTPUT_CAP
        })
    })
}

/// `4096`, `64K`, `4M`, `1G` as bytes.
pub fn parse_size(value: &str) -> Option<usize> {
    let value = value.trim();
    let (digits, unit) = match value.char_indices().last()? {
        (i, 'K' | 'k') => (&value[..i], 1 << 10),
        (i, 'M' | 'm') => (&value[..i], 1 << 20),
        (i, 'G' | 'g') => (&value[..i], 1 << 30),
        _ => (value, 1),
    };
    digits
        .trim()
        .parse::<usize>()
        .ok()?
        .checked_mul(unit)
        .filter(|n| *n > 0)
}
/// Output of one stream kept up to [`output_cap`]; beyond it bytes are counted only.
#[derive(Default)]
pub struct CappedOutput {
    kept: Vec<u8>,
    dropped: usize,
}

impl CappedOutput {
    /// Keeps what fits and returns it (what should be streamed on).
    pub fn push(&mut self, data: &[u8]) -> Vec<u8> {
        let room = output_cap().saturating_sub(self.kept.len());
        let keep = data.len().min(room);
        self.kept.extend_from_slice(&data[..keep]);
        self.dropped += data.len() - keep;
        data[..keep].to_vec()
    }

    /// Everything kept, with a note of what was discarded.
    pub fn finish(mut self) -> Vec<u8> {
        if self.dropped > 0 {
            self.kept.extend_from_slice(
                format!(
                    "\n[output capped at {} bytes ({OUTPUT_CAP_VAR}): {} further bytes were discarded]\n",
                    output_cap(),
                    self.dropped
                )
                .as_bytes(),
            );
        }
        self.kept
    }
}

/// Reads a pipe to its end, forwarding chunks and keeping up to [`output_cap`] bytes.
pub(crate) async fn drain(
    mut pipe: impl tokio::io::AsyncRead + Unpin,
    stream: OutputStream,
    chunks: mpsc::UnboundedSender<OutputChunk>,
) -> Vec<u8> {
    let mut output = CappedOutput::default();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let live = output.push(&buf[..n]);
                if !live.is_empty() {
                    // A known credential is kept out of the streamed deltas too (one split
                    // across two reads is not recognised; the result is redacted whole).
                    let data = match String::from_utf8(live) {
                        Ok(text) => crate::secrets::redact_known(&text).into_bytes(),
                        Err(raw) => raw.into_bytes(),
                    };
                    let _ = chunks.send(OutputChunk { stream, data });
                }
            }
        }
    }
    output.finish()
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_read_with_their_units() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("64K"), Some(64 << 10));
        assert_eq!(parse_size(" 4m "), Some(4 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("0"), None);
        assert_eq!(parse_size("lots"), None);
    }
}
