//! `agent-host plugin inspect`: what a plugin is, asks for and offers, without granting it
//! anything.

use crate::terminal_text::multi_line;
use agent_host::LocalEnvironment;
use agent_host::config::{PluginSources, policy_for};
use agent_host::environments::Environment;
use agent_host::host_tools::component::{ComponentPolicy, FolderRules, PlainComponent, sha256_hex};
use agent_host::host_tools::plugin::manifest::describe;
use agent_host::host_tools::plugin::{Grants, Loaded, PluginHost, PluginLimits};
use serde_json::{Value, json};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

pub async fn inspect(file: &Path, config: Option<&Path>, as_json: bool) -> ExitCode {
    match describe_plugin(file, config).await {
        Ok(description) if as_json => {
            println!("{description}");
            ExitCode::SUCCESS
        }
        Ok(description) if description["kind"] == "plain" => {
            print!("{}", render_plain(&description));
            ExitCode::SUCCESS
        }
        Ok(description) => {
            print!("{}", render(&description));
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("agent-host: {}", multi_line(&message));
            ExitCode::from(1)
        }
    }
}

async fn describe_plugin(file: &Path, config: Option<&Path>) -> Result<Value, String> {
    let here = std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?;
    let env: Arc<dyn Environment> =
        Arc::new(LocalEnvironment::new(&here).map_err(|e| format!("cannot open {}: {e:?}", here.display()))?);
    let cache = agent_host::compile_cache::default_cache_dir();
    let host = PluginHost::new(cache.as_deref(), PluginLimits::default())
        .map_err(|e| format!("cannot start the plugin engine: {e:#}"))?;
    // A plain component's effective policy: the configuration's for it (a file beside it
    // only asks). A tool-plugin is granted nothing here.
    let settings = agent_host::config::host_tool_config(Some(&here), config)?;
    let sources = PluginSources::from_config(&settings.plugins)?;
    // No workspace: nothing is opened or run here, and a component a policy must pin is
    // shown with its SHA-256 rather than refused.
    let folders = FolderRules::default();
    let policy = |name: &str| policy_for(name, file, &sources, PluginLimits::default());
    let (loaded, _) = host.load_any(file, &Grants::new(), policy, &folders, env).await?;
    let plugin = match loaded {
        Loaded::Plugin(plugin) => plugin,
        Loaded::Plain(plain) => return describe_plain(&plain, file),
    };
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
        "kind": "tool-plugin",
        "name": plugin.name(),
        "file": file.display().to_string(),
        "capabilities": plugin.requested().iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "tools": tools,
    }))
}

fn describe_plain(plain: &PlainComponent, file: &Path) -> Result<Value, String> {
    let tools: Vec<Value> = plain
        .definitions()
        .map(|d| json!({ "name": d.name, "description": d.description, "parameters": d.parameters }))
        .collect();
    let policy = &plain.policy;
    let folders: Vec<Value> = policy
        .preopens
        .iter()
        .map(|p| json!({ "path": p.path, "access": if p.writable { "read-write" } else { "read-only" } }))
        .collect();
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    // What its author asks for, beside it: shown, never granted.
    let asked = ComponentPolicy::asked_for(file).map(|asked| {
        json!({
            "file": asked.display().to_string(),
            "text": std::fs::read_to_string(&asked).unwrap_or_default(),
        })
    });
    Ok(json!({
        "kind": "plain",
        "name": plain.name(),
        "file": file.display().to_string(),
        "sha256": sha256_hex(&bytes),
        "docs": plain.docs_origin,
        "asks_for": asked,
        "tools": tools,
        "left_out": plain.left_out,
        "policy": {
            "source": policy.source.describe(),
            "folders": folders,
            "env": policy.env_vars,
            "http": policy.http_allow,
            "limits": {
                "memory_mib": policy.limits.memory_bytes >> 20,
                "cpu_ms": policy.limits.cpu.as_millis() as u64,
                "timeout_ms": policy.limits.wall.as_millis() as u64,
                "output_kib": policy.limits.output_bytes >> 10,
            },
        },
    }))
}

fn render_plain(description: &Value) -> String {
    let text = |v: &Value| multi_line(v.as_str().unwrap_or_default()).into_owned();
    let list = |v: &Value| {
        let items: Vec<String> = v
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| multi_line(i.as_str().unwrap_or_default()).into_owned())
            .collect();
        match items.is_empty() {
            true => "none".to_string(),
            false => items.join(", "),
        }
    };
    let policy = &description["policy"];
    let folders: Vec<String> = policy["folders"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| format!("{} ({})", text(&f["path"]), text(&f["access"])))
        .collect();
    let limits = &policy["limits"];
    let mut out = format!(
        "Component {} ({}), plain exports\n  SHA-256: {}\n  Descriptions: {}\n\nPolicy (from {}):\n  Folders: {}\n  Environment: {}\n  HTTP hosts: {}\n  Limits: {} MiB memory, {} ms CPU, {} ms per call, {} KiB output\n",
        text(&description["name"]),
        text(&description["file"]),
        text(&description["sha256"]),
        text(&description["docs"]),
        text(&policy["source"]),
        match folders.is_empty() {
            true => "none".to_string(),
            false => folders.join(", "),
        },
        list(&policy["env"]),
        list(&policy["http"]),
        limits["memory_mib"],
        limits["cpu_ms"],
        limits["timeout_ms"],
        limits["output_kib"],
    );
    if let Some(asked) = description["asks_for"].as_object() {
        out.push_str(&format!(
            "\nIt asks for ({}; granted only by [plugins.policy.{}] in your configuration):\n",
            text(&asked["file"]),
            text(&description["name"])
        ));
        for line in text(&asked["text"]).lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    let left_out = description["left_out"].as_array().cloned().unwrap_or_default();
    if !left_out.is_empty() {
        out.push_str("\nNot offered as tools:\n");
        for why in &left_out {
            out.push_str(&format!("  {}\n", text(why)));
        }
    }
    out.push_str("\nTools:\n");
    append_tools(&mut out, description);
    out
}

fn append_tools(out: &mut String, description: &Value) {
    let text = |v: &Value| multi_line(v.as_str().unwrap_or_default()).into_owned();
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
    append_tools(&mut out, description);
    out
}
