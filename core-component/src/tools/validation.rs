//! Validation of tool-call arguments against each tool's JSON schema (boon, draft 2020-12),
//! with errors that name the offending field so the model can fix its call.

use crate::llm::ToolDefinition;
use serde_json::Value;
use std::collections::HashMap;

/// The compiled parameter schemas of a set of tools.
pub struct SchemaValidator {
    schemas: boon::Schemas,
    /// Per tool: its compiled schema, or why its schema could not be compiled.
    compiled: HashMap<String, Result<boon::SchemaIndex, String>>,
}

impl std::fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaValidator")
            .field("tools", &self.compiled.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl SchemaValidator {
    /// Compiles every tool's schema once. A schema that does not compile (a host tool's, say)
    /// does not stop the session: calls to that tool fail with the reason.
    pub fn new(definitions: &[ToolDefinition]) -> Self {
        let mut schemas = boon::Schemas::new();
        let mut compiled = HashMap::new();
        for definition in definitions {
            let result = compile(&mut schemas, definition);
            compiled.insert(definition.name.clone(), result);
        }
        Self { schemas, compiled }
    }

    /// Checks a call's arguments. Tools the validator does not know pass unchecked.
    pub fn validate(&self, tool: &str, arguments: &Value) -> Result<(), String> {
        match self.compiled.get(tool) {
            None => Ok(()),
            Some(Err(reason)) => Err(format!("the parameter schema of {tool} is invalid: {reason}")),
            Some(Ok(index)) => self
                .schemas
                .validate(arguments, *index)
                .map_err(|error| describe(&error)),
        }
    }
}

fn compile(schemas: &mut boon::Schemas, definition: &ToolDefinition) -> Result<boon::SchemaIndex, String> {
    // A made-up absolute URL: the schema is handed over in memory, nothing is fetched.
    let location = format!("urn:agent-core:tool:{}", definition.name);
    let mut compiler = boon::Compiler::new();
    compiler.set_default_draft(boon::Draft::V2020_12);
    compiler
        .add_resource(&location, definition.parameters.clone())
        .map_err(|e| e.to_string())?;
    compiler.compile(&location, schemas).map_err(|e| format!("{e:#}"))
}

/// One line per failed check, each naming the argument it is about.
fn describe(error: &boon::ValidationError<'_, '_>) -> String {
    let mut lines = Vec::new();
    collect_leaves(error, &mut lines);
    if lines.is_empty() {
        lines.push(error.kind.to_string());
    }
    lines.join("; ")
}

fn collect_leaves(error: &boon::ValidationError<'_, '_>, out: &mut Vec<String>) {
    if error.causes.is_empty() {
        let location = error.instance_location.to_string();
        let subject = match location.trim_start_matches('/') {
            "" => "arguments".to_string(),
            path => format!("argument `{}`", path.replace('/', ".")),
        };
        out.push(format!("{subject}: {}", error.kind));
        return;
    }
    for cause in &error.causes {
        collect_leaves(cause, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn validator() -> SchemaValidator {
        SchemaValidator::new(&[
            crate::tools::shell::definition(10_000),
            ToolDefinition {
                name: "broken".to_string(),
                description: String::new(),
                parameters: json!({"type": "no-such-type"}),
            },
        ])
    }

    #[test]
    fn valid_arguments_pass() {
        assert_eq!(
            validator().validate("shell", &json!({"command": "ls", "timeout_ms": 5})),
            Ok(())
        );
    }

    #[test]
    fn errors_name_the_offending_field() {
        let v = validator();
        let wrong_type = v.validate("shell", &json!({"command": "ls", "timeout_ms": "soon"}));
        assert!(
            matches!(&wrong_type, Err(m) if m.contains("argument `timeout_ms`") && m.contains("integer")),
            "{wrong_type:?}"
        );
        let missing = v.validate("shell", &json!({}));
        assert!(
            matches!(&missing, Err(m) if m.contains("arguments") && m.contains("command")),
            "{missing:?}"
        );
        let extra = v.validate("shell", &json!({"command": "ls", "cmd": "ls"}));
        assert!(matches!(&extra, Err(m) if m.contains("cmd")), "{extra:?}");
    }

    #[test]
    fn a_broken_schema_fails_its_own_calls_only() {
        let v = validator();
        let result = v.validate("broken", &json!({}));
        assert!(
            matches!(&result, Err(m) if m.contains("schema of broken is invalid")),
            "{result:?}"
        );
        assert_eq!(v.validate("unknown", &json!({})), Ok(()));
    }
}
