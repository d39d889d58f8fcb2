//! agent-bench's markdown figures without building agent-bench (which links wasmtime):
//! the same answers (its markdown_docs.rs), streamed in 4-byte tokens, median of 5 runs,
//! on the wall clock and on the CPU.
//! `cargo run --release -p terminal-markdown --example bench`

#[path = "../../../benchmarks/agent-bench/src/markdown_docs.rs"]
mod markdown_docs;

use markdown_docs::{TOKEN_BYTES, answer, one_fence, tokens};
use std::time::Instant;
use terminal_markdown::{MarkdownStream, Style};

const RUNS: usize = 5;

/// Wall and CPU milliseconds to stream `text`, and the bytes printed.
fn stream(text: &str, color: bool) -> (f64, f64, usize) {
    let tokens = tokens(text);
    let cpu_start = cpu_ns();
    let start = Instant::now();
    let mut md = MarkdownStream::new(Style { color, width: 100 });
    let mut bytes = 0;
    for token in &tokens {
        bytes += md.push(token).iter().map(|l| l.len() + 1).sum::<usize>();
    }
    bytes += md.finish().iter().map(|l| l.len() + 1).sum::<usize>();
    let wall = start.elapsed().as_secs_f64() * 1e3;
    (wall, (cpu_ns() - cpu_start) as f64 / 1e6, bytes)
}

/// Nanoseconds this thread ran (Linux): on a loaded machine the wall time says little.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or(0.0)
}

fn main() {
    let mixed = answer(1 << 20);
    let fence = one_fence(1 << 20);
    let highlighted = one_fence((64 << 10) - 1024);
    stream(&highlighted, true);
    for (name, text, color) in [
        ("1 MB answer of every block kind", &mixed, true),
        ("the same without colour", &mixed, false),
        (
            "1 MB answer that is one Rust fence (64 KB coloured)",
            &fence,
            true,
        ),
        ("syntax highlighting, Rust fence of 63 KB", &highlighted, true),
    ] {
        let runs: Vec<(f64, f64, usize)> = (0..RUNS).map(|_| stream(text, color)).collect();
        let wall = median(runs.iter().map(|r| r.0).collect());
        let cpu = median(runs.iter().map(|r| r.1).collect());
        println!("{name}: {wall:.0} ms, on the CPU {cpu:.0} ms");
    }
    let typical = answer(20 << 10);
    let (_, _, bytes) = stream(&typical, true);
    let per_token = bytes as f64 / tokens(&typical).len() as f64;
    println!("bytes printed per {TOKEN_BYTES}-byte token, 20 KB answer: {per_token:.1}");
}
