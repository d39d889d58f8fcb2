//! Benchmark 4, tools inside the component: apply_patch of 50 hunks on a 100,000-line file,
//! head/tail truncation of a 10 MB single-line output, edit_file's fuzzy passes on a
//! 10,000-line file.
//!
//! The component's exports cannot run truncation alone, and a run-tool call also pays for
//! instantiation and host file I/O; so the core's own code is compiled with the component's
//! toolchain and profile into a plain wasm module (benchmarks/wasm-probe), run by an engine
//! configured like agent-host's, and timed per call with its inputs already in memory. The
//! same cases run natively (the probe crate linked into this binary), interleaved with the
//! wasm runs, for the wasm/native ratios. Every run is verified (the patched or edited file
//! equals the expected text, the truncation kept both ends and says what it removed) and the
//! two sides must produce outputs of the same length. Finally apply_patch and edit_file go
//! through the real component's run-tool export, end to end, as informative rows.

mod end_to_end;
mod wasm_probe;

use crate::context::Context;
use crate::stats::{median, millis};
use crate::table::{Row, Target, format_value};
use bench_probe::cases::{Case, Probe, Sizes};
use std::time::Instant;

/// The tools' speed targets (BENCHMARKS.md), in milliseconds.
const PATCH_TARGET_MS: f64 = 20.0;
const TRUNCATION_TARGET_MS: f64 = 10.0;
const EDIT_TARGET_MS: f64 = 20.0;

/// Untimed runs first: page faults of a fresh instance's memory, caches, lazy statics.
const WARM_UP_RUNS: usize = 2;

pub fn run(ctx: &Context) -> anyhow::Result<Vec<Row>> {
    let sizes = Sizes::new(ctx.quick);
    let runs = ctx.size(15, 3);
    let module = wasm_probe::ProbeModule::load(&ctx.probe)?;
    let mut rows = Vec::new();
    for case in Case::ALL {
        rows.extend(compare(&module, case, sizes, runs, ctx.quick)?);
    }
    rows.extend(end_to_end::run(
        ctx,
        sizes,
        runs,
        &[Case::ApplyPatch, Case::EditWhitespace],
    )?);
    Ok(rows)
}

/// Times one case in wasm and natively, interleaved; every run is verified on both sides.
fn compare(
    module: &wasm_probe::ProbeModule,
    case: Case,
    sizes: Sizes,
    runs: usize,
    quick: bool,
) -> anyhow::Result<Vec<Row>> {
    let mut wasm = module.prepare(case, quick)?;
    let mut native = Probe::prepare(case, sizes);
    let (mut wasm_ms, mut native_ms) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for run in 0..WARM_UP_RUNS + runs {
        wasm.reset()?;
        let start = Instant::now();
        let wasm_length = wasm.run()?;
        let wasm_elapsed = millis(start.elapsed());
        wasm.verify()?;

        native.reset();
        let start = Instant::now();
        let native_length = native
            .run()
            .map_err(|e| anyhow::anyhow!("native {case:?}: {e}"))?;
        let native_elapsed = millis(start.elapsed());
        native
            .verify()
            .map_err(|e| anyhow::anyhow!("native {case:?}: {e}"))?;

        if wasm_length != native_length {
            anyhow::bail!(
                "{case:?}: the wasm output has {wasm_length} bytes, the native one {native_length}"
            );
        }
        if run >= WARM_UP_RUNS {
            wasm_ms.push(wasm_elapsed);
            native_ms.push(native_elapsed);
        }
    }
    let (wasm_median, native_median) = (median(&wasm_ms), median(&native_ms));
    let name = label(case, sizes);
    let mut in_wasm = Row::new(format!("{name}, in wasm"), wasm_median, "ms");
    if let Some(target) = target(case) {
        in_wasm = in_wasm.target(Target::AtMost(target));
    }
    Ok(vec![
        in_wasm,
        Row::new(format!("{name}, native"), native_median, "ms"),
        Row::new(format!("{name}, wasm/native"), wasm_median / native_median, "x"),
    ])
}

/// The target for a case; the extra edit case (the whole chain) is informative.
fn target(case: Case) -> Option<f64> {
    match case {
        Case::ApplyPatch => Some(PATCH_TARGET_MS),
        Case::Truncation => Some(TRUNCATION_TARGET_MS),
        Case::EditWhitespace => Some(EDIT_TARGET_MS),
        Case::EditContext => None,
    }
}

/// What a case does, with its sizes.
pub(crate) fn label(case: Case, sizes: Sizes) -> String {
    let pass = case.expected_pass().map(|p| p.name()).unwrap_or_default();
    match case {
        Case::ApplyPatch => format!(
            "tools: apply_patch, {} hunks, {} lines",
            sizes.patch_hunks,
            grouped(sizes.patch_lines)
        ),
        Case::Truncation => format!(
            "tools: head/tail truncation, {} MB single line",
            format_value(sizes.output_bytes as f64 / 1e6)
        ),
        Case::EditWhitespace => format!(
            "tools: edit_file fuzzy ({pass}), {} lines",
            grouped(sizes.edit_lines)
        ),
        Case::EditContext => format!(
            "tools: edit_file fuzzy ({pass}, all passes), {} lines",
            grouped(sizes.edit_lines)
        ),
    }
}

/// 100000 as "100,000".
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_sizes_and_the_pass() {
        assert_eq!(grouped(100_000), "100,000");
        assert_eq!(grouped(999), "999");
        let full = Sizes::new(false);
        assert_eq!(
            label(Case::ApplyPatch, full),
            "tools: apply_patch, 50 hunks, 100,000 lines"
        );
        assert_eq!(
            label(Case::Truncation, full),
            "tools: head/tail truncation, 10 MB single line"
        );
        assert!(label(Case::EditWhitespace, full).contains("(whitespace-normalized), 10,000 lines"));
    }
}
