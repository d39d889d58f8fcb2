//! `query_data`: reads a JSON, YAML or TOML file from the workspace and returns the values
//! at a path such as `dependencies.serde.version`, `jobs.*.runs-on` or `items[0].name`, so
//! the model can look into a large config without reading all of it.

mod path;

use agent_tool_sdk::serde_json::{self, Value, json};
use agent_tool_sdk::{Plugin, ToolSpec, export_plugin, workspace};

struct DataQuery;

/// More text than this is cut: the model asked for a part, not the whole file.
const MAX_OUTPUT: usize = 64 * 1024;

impl Plugin for DataQuery {
    fn tools() -> Vec<ToolSpec> {
        vec![ToolSpec::new(
            "query_data",
            "Query a JSON, YAML or TOML file in the workspace by path and return the matching values as \
             JSON. Path syntax: keys separated by dots (`package.name`), array indexes in brackets \
             (`items[0]`), `*` for every key or element (`dependencies.*.version`), quoted keys for keys \
             with dots (`[\"a.b\"]`). An empty path returns the whole document. With keys_only, returns the \
             keys (or indexes) of each match instead of its value.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "The file, relative to the working directory."},
                    "query": {"type": "string", "description": "The path to look up; empty for the whole document."},
                    "format": {"type": "string", "enum": ["json", "yaml", "toml"], "description": "Overrides the format guessed from the file extension."},
                    "keys_only": {"type": "boolean", "description": "Return the keys of each match instead of its value."}
                },
                "required": ["path", "query"],
                "additionalProperties": false
            }),
        )]
    }

    fn call(tool: &str, arguments: Value) -> Result<String, String> {
        if tool != "query_data" {
            return Err(format!("this plugin has no tool named {tool}"));
        }
        let file = arguments["path"].as_str().unwrap_or_default();
        let query = arguments["query"].as_str().unwrap_or_default();
        let format = match arguments["format"].as_str() {
            Some(format) => format.to_string(),
            None => format_of(file)?,
        };
        let text = workspace::read_to_string(file)?;
        let document = parse(&text, &format).map_err(|e| format!("{file} is not valid {format}: {e}"))?;
        let steps = path::parse(query)?;
        let matches = path::select(&document, &steps);
        if matches.is_empty() {
            return Err(format!(
                "nothing in {file} matches {query:?}; the top-level keys are: {}",
                keys(&document).join(", ")
            ));
        }
        let wildcard = steps.iter().any(|s| matches!(s, path::Step::Any));
        let shown: Vec<Value> = if arguments["keys_only"].as_bool() == Some(true) {
            matches.iter().map(|v| json!(keys(v))).collect()
        } else {
            matches.into_iter().cloned().collect()
        };
        let value = if wildcard {
            Value::Array(shown)
        } else {
            shown.into_iter().next().unwrap_or(Value::Null)
        };
        let mut text = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
        if text.len() > MAX_OUTPUT {
            let mut end = MAX_OUTPUT;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str("\n[cut: narrow the query or use keys_only]");
        }
        Ok(text)
    }
}

fn format_of(file: &str) -> Result<String, String> {
    let extension = file
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "json" | "jsonc" | "json5" => Ok("json".into()),
        "yaml" | "yml" => Ok("yaml".into()),
        "toml" => Ok("toml".into()),
        "lock" if file.ends_with("Cargo.lock") => Ok("toml".into()),
        _ => Err(format!(
            "cannot tell the format of {file} from its extension: pass format (json, yaml or toml)"
        )),
    }
}

fn parse(text: &str, format: &str) -> Result<Value, String> {
    match format {
        "json" => serde_json::from_str(text).map_err(|e| e.to_string()),
        "yaml" => serde_norway::from_str(text).map_err(|e| e.to_string()),
        "toml" => toml::from_str(text).map_err(|e| e.to_string()),
        other => Err(format!("unknown format {other}")),
    }
}

fn keys(value: &Value) -> Vec<String> {
    match value {
        Value::Object(map) => map.keys().cloned().collect(),
        Value::Array(items) => (0..items.len()).map(|i| format!("[{i}]")).collect(),
        _ => Vec::new(),
    }
}

export_plugin!(
    DataQuery,
    manifest = "name = \"data-query\"\ncapabilities = [\"read\"]\n"
);
