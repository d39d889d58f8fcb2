//! Benchmark 10, rendering markdown in the chat (`terminal-markdown`): a model's answer
//! streamed in 4-byte tokens, as a chat receives it. Times a 1 MB answer of every kind of
//! block (with colour, and without: the renderer's own cost), a 1 MB answer that is one code
//! fence, and syntax highlighting alone; counts what a typical 20 KB answer prints per token:
//! a renderer that redrew its block on every token would print hundreds of bytes per token,
//! ours prints each line once. The work is single-threaded, so the time it spent on the CPU
//! is given too: on a shared machine it says what the wall time cannot. Checks: the streamed
//! lines equal the whole answer rendered at once, and hold every block's text.

use crate::context::Context;
use crate::markdown_docs::{answer, one_fence, tokens};
use crate::stats::{median, millis};
use crate::table::{Row, Target};
use std::time::Instant;
use terminal_markdown::{MarkdownStream, Style, render};

const STYLE: Style = Style {
    color: true,
    width: 100,
};
const PLAIN: Style = Style {
    color: false,
    width: 100,
};
/// terminal-markdown colours this much code per answer, the rest is plain (its code.rs).
const COLOR_BUDGET: usize = 64 << 10;

pub fn run(ctx: &Context) -> anyhow::Result<Vec<Row>> {
    let size = ctx.size(1 << 20, 32 << 10);
    let runs = ctx.size(5, 1);
    let mixed = answer(size);
    let fence = one_fence(size);
    let typical = answer(20 << 10);

    // Within the colour budget: what highlighting itself costs.
    let highlighted = one_fence(ctx.size(COLOR_BUDGET - 1024, 8 << 10));
    // Loads syntect's syntaxes and theme, once per process as in the chat.
    timed(&highlighted, STYLE)?;

    let [
        mut mixed_ms,
        mut mixed_cpu,
        mut plain_ms,
        mut fence_ms,
        mut highlight_ms,
    ]: [Vec<f64>; 5] = Default::default();
    for _ in 0..runs {
        let (wall, cpu) = timed(&mixed, STYLE)?;
        mixed_ms.push(wall);
        mixed_cpu.extend(cpu);
        plain_ms.push(timed(&mixed, PLAIN)?.0);
        fence_ms.push(timed(&fence, STYLE)?.0);
        highlight_ms.push(timed(&highlighted, STYLE)?.0);
    }
    let tokens = tokens(&typical);
    let printed: usize = stream(&tokens, STYLE).iter().map(|line| line.len() + 1).sum();
    let mb = size as f64 / f64::from(1 << 20);
    let mut rows = vec![
        Row::new(
            format!("markdown: {mb:.2} MB answer of every block kind, streamed in 4-byte tokens"),
            median(&mixed_ms),
            "ms",
        )
        .target(Target::AtMost(1000.0)),
    ];
    if !mixed_cpu.is_empty() {
        rows.push(Row::new(
            "markdown: the same, time on the CPU",
            median(&mixed_cpu),
            "ms",
        ));
    }
    rows.extend([
        Row::new("markdown: the same without colour", median(&plain_ms), "ms"),
        Row::new(
            "markdown: bytes printed per token, 20 KB answer",
            printed as f64 / tokens.len() as f64,
            "bytes",
        )
        .target(Target::AtMost(40.0)),
        Row::new(
            format!("markdown: {mb:.2} MB answer that is one Rust code fence (64 KB coloured)"),
            median(&fence_ms),
            "ms",
        ),
        Row::new(
            "markdown: syntax highlighting, Rust fence of 63 KB",
            median(&highlight_ms),
            "ms",
        ),
    ]);
    Ok(rows)
}

/// Milliseconds to stream `text`, on the wall clock and on the CPU (where the system says),
/// checked against rendering it at once.
fn timed(text: &str, style: Style) -> anyhow::Result<(f64, Option<f64>)> {
    let tokens = tokens(text);
    let cpu_start = cpu_ns();
    let start = Instant::now();
    let lines = stream(&tokens, style);
    let elapsed = millis(start.elapsed());
    let cpu = cpu_ns()
        .zip(cpu_start)
        .map(|(end, start)| end.saturating_sub(start) as f64 / 1e6);
    anyhow::ensure!(
        lines == render(text, style),
        "streamed lines differ from the answer rendered at once"
    );
    let printed = lines.join("\n");
    for must in ["Section 1", "step_1", "Row 1"] {
        anyhow::ensure!(
            !text.contains(must) || printed.contains(must),
            "{must:?} missing from the rendered answer"
        );
    }
    anyhow::ensure!(
        printed.len() > text.len() / 2,
        "rendered {} bytes of {}",
        printed.len(),
        text.len()
    );
    Ok((elapsed, cpu))
}

/// Nanoseconds this thread has run (Linux only).
fn cpu_ns() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    stat.split_whitespace().next()?.parse().ok()
}

fn stream(tokens: &[&str], style: Style) -> Vec<String> {
    let mut stream = MarkdownStream::new(style);
    let mut lines = Vec::new();
    for token in tokens {
        lines.extend(stream.push(token));
    }
    lines.extend(stream.finish());
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_cover_the_text_on_character_boundaries() {
        let text = "ab日本語cdefgh";
        let pieces = tokens(text);
        assert_eq!(pieces.concat(), text);
        let (last, rest) = pieces.split_last().unwrap();
        assert!(rest.iter().all(|p| p.len() >= crate::markdown_docs::TOKEN_BYTES) && !last.is_empty());
    }

    #[test]
    fn every_figure_is_measured() {
        let out = std::env::temp_dir().join(format!("agent-bench-markdown-test-{}", std::process::id()));
        let rows = run(&crate::context::quick_for_tests(&out)).unwrap();
        assert!(rows.len() >= 5, "{rows:?}");
        assert!(
            rows.iter().all(|r| r.value.is_finite() && r.value > 0.0),
            "{rows:?}"
        );
        let per_token = rows.iter().find(|r| r.unit == "bytes").unwrap();
        assert!(per_token.value < 40.0, "{per_token:?}");
    }
}
