//! `make bench`: runs every benchmark in release mode and prints one table (figure, value,
//! unit, target, met?). Each benchmark is a module; `--only` picks some, `--quick` shrinks
//! every size so the whole suite checks itself in seconds (its figures then mean nothing).

mod acp;
mod compaction;
mod components;
mod concurrency;
mod context;
mod llm_server;
mod loop_overhead;
mod machine;
mod markdown;
mod markdown_docs;
mod network_allow;
mod parallel;
mod queue;
mod sandbox;
mod search;
mod startup;
mod stats;
mod table;
mod tools_in_component;

use anyhow::Context as _;
use clap::{Parser, Subcommand, ValueEnum};
use context::Context;
use std::path::PathBuf;
use table::Row;

#[derive(Parser)]
#[command(about = "Benchmarks of the agent-core component (see BENCHMARKS.md)")]
struct Cli {
    /// Run only these benchmarks (default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    only: Vec<Bench>,
    /// Tiny sizes, for checking the benchmarks themselves.
    #[arg(long)]
    quick: bool,
    /// The core component.
    #[arg(long, default_value = "target/agent-core.wasm")]
    component: PathBuf,
    /// The agent-host binary whose start-up is measured.
    #[arg(long, default_value = "target/release/agent-host")]
    agent_host: PathBuf,
    /// The core's tools compiled to a plain wasm module (benchmarks/wasm-probe).
    #[arg(long, default_value = "target/bench-probe.wasm")]
    probe: PathBuf,
    /// The tree searched by the search benchmark.
    #[arg(long, default_value = "/usr/lib/rustlib/src/rust/library")]
    search_tree: PathBuf,
    /// Where results (results.json, results.md) and scratch files go.
    #[arg(long, default_value = "target/bench")]
    out: PathBuf,
    #[command(subcommand)]
    worker: Option<Worker>,
}

#[derive(Subcommand)]
enum Worker {
    /// Internal: the process that hosts N concurrent sessions (see concurrency.rs).
    #[command(hide = true)]
    ConcurrencyWorker(concurrency::WorkerArgs),
}

/// A benchmark: its rows, or why it could not measure.
type Suite = fn(&Context) -> anyhow::Result<Vec<Row>>;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Bench {
    Loop,
    Startup,
    Concurrency,
    Tools,
    Search,
    Sandbox,
    Compaction,
    Queue,
    Parallel,
    Markdown,
    Acp,
    Network,
    Components,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Some(Worker::ConcurrencyWorker(args)) = cli.worker {
        return concurrency::worker(&cli.component, args);
    }
    std::fs::create_dir_all(&cli.out).with_context(|| format!("cannot create {}", cli.out.display()))?;
    let ctx = Context {
        component: cli.component,
        agent_host: cli.agent_host,
        probe: cli.probe,
        search_tree: cli.search_tree,
        out: cli.out,
        quick: cli.quick,
    };
    let chosen = |b| cli.only.is_empty() || cli.only.contains(&b);
    let mut rows: Vec<Row> = Vec::new();
    let suites: [(Bench, &str, Suite); 13] = [
        (Bench::Loop, "loop overhead", loop_overhead::run),
        (Bench::Startup, "start-up", startup::run),
        (Bench::Concurrency, "concurrency", concurrency::run),
        (
            Bench::Tools,
            "tools inside the component",
            tools_in_component::run,
        ),
        (Bench::Search, "search", search::run),
        (Bench::Sandbox, "command sandbox", sandbox::run),
        (Bench::Compaction, "compaction", compaction::run),
        (Bench::Queue, "distributed batch", queue::run),
        (Bench::Parallel, "parallelism", parallel::run),
        (Bench::Markdown, "rendering markdown", markdown::run),
        (Bench::Acp, "editors over ACP", acp::run),
        (Bench::Network, "network allow-list", network_allow::run),
        (
            Bench::Components,
            "WebAssembly components as tools",
            components::run,
        ),
    ];
    for (bench, name, run) in suites {
        if !chosen(bench) {
            continue;
        }
        eprintln!("bench: {name} ...");
        let found = run(&ctx).with_context(|| format!("benchmark {name:?} failed"))?;
        eprint!("{}", table::render(&found));
        rows.extend(found);
    }
    let machine = machine::describe();
    let rendered = table::render(&rows);
    println!("\n{machine}\n\n{rendered}");
    let missed = rows.iter().filter(|r| r.met() == Some(false)).count();
    println!(
        "{} figures, {} with targets, {missed} missed",
        rows.len(),
        rows.iter().filter(|r| r.target.is_some()).count()
    );
    std::fs::write(ctx.out.join("results.md"), format!("{machine}\n\n{rendered}"))?;
    std::fs::write(ctx.out.join("results.json"), serde_json::to_string_pretty(&rows)?)?;
    eprintln!("bench: results in {}/results.{{md,json}}", ctx.out.display());
    Ok(())
}
