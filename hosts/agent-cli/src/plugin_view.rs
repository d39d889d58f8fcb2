//! `agent-host plugin inspect`: what a plugin is, asks for and offers, without granting it
//! anything.

use crate::terminal_text::multi_line;
use agent_host::LocalEnvironment;
use agent_host::environments::Environment;
use agent_host::host_tools::plugin::manifest::describe;
use agent_host::host_tools::plugin::{Grants, PluginHost, PluginLimits};
use serde_json::{Value, json};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

pub async fn inspect(file: &Path, as_json: bool) -> ExitCode {
    match describe_plugin(file).await {
        Ok(description) if as_json => {
            println!("{description}");
            ExitCode::SUCCESS
        }
        Ok(description) => {
            print!("{}", render(&description));
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("agent-host: {message}");
            ExitCode::from(1)
        }
    }
}

async fn describe_plugin(file: &Path) -> Result<Value, String> {
    // Nothing is granted, so the working directory it would see does not matter.
    let here = std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?;
    let env: Arc<dyn Environment> =
        Arc::new(LocalEnvironment::new(&here).map_err(|e| format!("cannot open {}: {e:?}", here.display()))?);
    let cache = agent_host::compile_cache::default_cache_dir();
    let host = PluginHost::new(cache.as_deref(), PluginLimits::default())
        .map_err(|e| format!("cannot start the plugin engine: {e:#}"))?;
    let plugin = host.load(file, &Grants::new(), env).await?;
    let tools: Vec<Value> = plugin
        .definitions()
        .iter()
        .map(|d| {
            json!({
                "name": d.name,
                "description": d.description,
                "parameters": d.parameters,
            })
        })
        .collect();
    Ok(json!({
        "name": plugin.name(),
        "file": file.display().to_string(),
        "capabilities": plugin.requested().iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "tools": tools,
    }))
}

fn render(description: &Value) -> String {
    // The plugin's author wrote its names and descriptions: shown escaped. The parameters
    // are JSON, whose strings have their control characters escaped already.
    let text = |v: &Value| multi_line(v.as_str().unwrap_or_default()).into_owned();
    let requested: std::collections::BTreeSet<_> = description["capabilities"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| {
            c.as_str()
                .and_then(|c| agent_host::host_tools::plugin::Capability::parse(c).ok())
        })
        .collect();
    let mut out = format!(
        "Plugin {} ({})\n  Asks for: {}\n",
        text(&description["name"]),
        text(&description["file"]),
        describe(&requested)
    );
    if !requested.is_empty() {
        let caps: Vec<&str> = requested.iter().map(|c| c.as_str()).collect();
        out.push_str(&format!(
            "  Grant with: --grant {}={}\n",
            text(&description["name"]),
            caps.join(",")
        ));
    }
    out.push_str("\nTools:\n");
    for tool in description["tools"].as_array().into_iter().flatten() {
        out.push_str(&format!("\n  {}\n", text(&tool["name"])));
        for line in text(&tool["description"]).lines() {
            out.push_str(&format!("    {line}\n"));
        }
        let schema = serde_json::to_string_pretty(&tool["parameters"]).unwrap_or_default();
        out.push_str("    Parameters:\n");
        for line in schema.lines() {
            out.push_str(&format!("      {line}\n"));
        }
    }
    out
}
