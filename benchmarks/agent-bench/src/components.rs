//! What a call into a WebAssembly tool costs, end to end through the tool as a session
//! calls it (JSON arguments in, text out): a `tool-plugin` component (data-query, whose
//! store is kept between calls) against components with plain exports, each call in a fresh
//! store and instance under its policy: text-stats (Rust, 110 KB) and csv-stats (Python
//! under componentize-py, 18 MB). Code is compiled once, at load, as in agent-host.

use crate::context::Context;
use crate::stats::{median, millis};
use crate::table::Row;
use agent_host::LocalEnvironment;
use agent_host::environments::Environment;
use agent_host::host_tools::component::{ComponentPolicy, FolderRules, PolicyFile, PolicySource};
use agent_host::host_tools::plugin::{Grants, Loaded, PluginHost, PluginLimits};
use agent_host::host_tools::registry::HostTool;
use anyhow::Context as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

pub fn run(ctx: &Context) -> anyhow::Result<Vec<Row>> {
    let calls = ctx.size(200, 5);
    let work = ctx.scratch("components")?;
    std::fs::write(
        work.join("Cargo.toml"),
        "[dependencies]\nserde = \"1\"\nrand = \"0.9\"\n",
    )?;
    let words = "the quick brown fox jumps over the lazy dog\n".repeat(100);
    std::fs::write(work.join("notes.txt"), &words)?;
    let rows: String = (0..100).map(|i| format!("{i},name{i},{}.5\n", i * 3)).collect();
    std::fs::write(work.join("table.csv"), format!("id,name,score\n{rows}"))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let env: Arc<dyn Environment> = Arc::new(LocalEnvironment::new(&work)?);
        let host = PluginHost::new(None, PluginLimits::default()).map_err(|e| anyhow::anyhow!("{e:#}"))?;
        let folders = FolderRules {
            workspace: Some(work.clone()),
            ..FolderRules::default()
        };
        let read_all = |_: &str| {
            let mut file = PolicyFile::default();
            file.files.read = vec![".".into()];
            ComponentPolicy::from_file(&file, PolicySource::UserConfig("bench".into()), PluginLimits::default())
        };
        let mut grants = Grants::new();
        grants.insert("data-query".into(), [agent_host::host_tools::plugin::Capability::Read].into());
        let load = |file: &'static str| {
            let (host, grants, folders, env) = (&host, &grants, &folders, env.clone());
            async move {
                let (loaded, _) = host
                    .load_any(Path::new(file), grants, read_all, folders, env)
                    .await
                    .map_err(|e| anyhow::anyhow!("{file}: {e} (run `make plugins`)"))?;
                Ok::<Loaded, anyhow::Error>(loaded)
            }
        };
        let cases = [
            (
                "tool call: tool-plugin (Rust data-query), store kept",
                load("target/plugins/data-query.wasm").await?,
                "query_data",
                r#"{"path": "Cargo.toml", "query": "dependencies.*"}"#,
            ),
            (
                "tool call: plain exports (Rust text-stats), fresh instance",
                load("target/components/text-stats.wasm").await?,
                "stats_analyze",
                r#"{"path": "notes.txt", "options": {"top-words": 3, "case": "insensitive", "stop-words": ["the"], "count": ["lines", "words"]}}"#,
            ),
            (
                "tool call: plain exports (Python csv-stats), fresh instance",
                load("target/components/csv-stats.wasm").await?,
                "csv_summarize",
                r#"{"path": "table.csv", "options": {"columns": []}}"#,
            ),
        ];
        let mut rows = Vec::new();
        for (figure, loaded, tool, arguments) in cases {
            let tool = loaded
                .tools()
                .into_iter()
                .find(|t| t.definition().name == tool)
                .with_context(|| format!("no tool {tool}"))?;
            let calls = if figure.contains("Python") { calls.min(50) } else { calls };
            let samples = time_calls(tool.as_ref(), arguments, calls).await?;
            rows.push(Row::new(figure, median(&samples), "ms"));
        }
        Ok(rows)
    })
}

async fn time_calls(tool: &dyn HostTool, arguments: &str, calls: usize) -> anyhow::Result<Vec<f64>> {
    // The first call is not counted: it pays for lazily made parts (a tool-plugin's store).
    tool.call(arguments).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut samples = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        tool.call(arguments).await.map_err(|e| anyhow::anyhow!("{e}"))?;
        samples.push(millis(started.elapsed()));
    }
    Ok(samples)
}
