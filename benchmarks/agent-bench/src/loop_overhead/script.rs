//! The scripted conversation both sides run, and the timeline of its requests.

use serde_json::json;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The files the model reads, one a round (different files, so loop detection stays quiet).
pub fn file_name(round: usize) -> String {
    format!("notes/f{round:03}.txt")
}

/// A workspace with one small file per round.
pub fn seed_workspace(dir: &Path, rounds: usize) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir.join("notes"))?;
    for round in 0..rounds {
        let lines: String = (0..12)
            .map(|i| format!("note {round} line {i}: the quick brown fox jumps over the lazy dog\n"))
            .collect();
        std::fs::write(dir.join(file_name(round)), lines)?;
    }
    Ok(())
}

/// Anthropic Messages event streams: `rounds` replies each with one small `read_file` call,
/// then a text reply. Each body is split into the pieces the real API sends.
pub fn replies(rounds: usize) -> Vec<Vec<String>> {
    use scripted_llm::anthropic::{message, text, tool_use};
    let mut replies: Vec<Vec<String>> = (0..rounds)
        .map(|round| {
            let call = tool_use(
                &format!("toolu_{round:04}"),
                "read_file",
                json!({"file_path": file_name(round)}),
            );
            message(&[call]).chunks
        })
        .collect();
    replies.push(message(&[text("All notes read.")]).chunks);
    replies
}

/// When each request was sent and how big its body (the serialised history) was.
#[derive(Default)]
pub struct Timeline {
    next: AtomicUsize,
    sends: Mutex<Vec<(Instant, usize)>>,
}

impl Timeline {
    /// Records a request and returns its index (which reply it gets).
    pub fn record(&self, body_len: usize) -> usize {
        let now = Instant::now();
        if let Ok(mut sends) = self.sends.lock() {
            sends.push((now, body_len));
        }
        self.next.fetch_add(1, Ordering::SeqCst)
    }

    /// Milliseconds from each request to the next: entry `k` is round `k + 1`'s cost
    /// (parse the reply, run the tool, emit events, build the next request).
    pub fn round_costs_ms(&self) -> Vec<f64> {
        let sends = self.sends.lock().map(|s| s.clone()).unwrap_or_default();
        sends
            .windows(2)
            .map(|w| w[1].0.duration_since(w[0].0).as_secs_f64() * 1e3)
            .collect()
    }

    /// Request body sizes in bytes, in order.
    pub fn body_sizes(&self) -> Vec<usize> {
        self.sends
            .lock()
            .map(|s| s.iter().map(|(_, len)| *len).collect())
            .unwrap_or_default()
    }
}

/// What one run of the session produced, checked the same way on both sides.
pub struct RunResult {
    pub rounds: u32,
    pub final_text: String,
    pub round_costs_ms: Vec<f64>,
    pub body_sizes: Vec<usize>,
    pub events: usize,
}

impl RunResult {
    pub fn check(&self, rounds: usize, side: &str) -> anyhow::Result<()> {
        if self.rounds as usize != rounds || self.final_text != "All notes read." {
            anyhow::bail!(
                "{side}: the session ran {} rounds and ended with {:?}; expected {rounds} rounds and \"All notes read.\"",
                self.rounds,
                self.final_text
            );
        }
        if self.round_costs_ms.len() != rounds {
            anyhow::bail!(
                "{side}: {} requests recorded for {rounds} rounds",
                self.round_costs_ms.len() + 1
            );
        }
        // Each request carries the previous ones' tool results: the history must grow.
        if self.body_sizes.windows(2).any(|w| w[1] <= w[0]) {
            anyhow::bail!("{side}: a request was not larger than the one before it");
        }
        Ok(())
    }
}
