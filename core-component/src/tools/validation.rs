//! Validation of tool-call arguments against each tool's JSON schema (boon, draft 2020-12),
//! with errors that name the offending field so the model can fix its call.

use crate::llm::ToolDefinition;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::HashMap;

/// The parameter schemas of a set of tools, each compiled at its tool's first call: a
/// session compiles only the schemas of the tools it uses.
pub struct SchemaValidator {
    parameters: HashMap<String, (Value, Origin)>,
    compiled: RefCell<Compiled>,
}

/// Where a tool's schema comes from, which decides whether boon checks it against the
/// JSON-schema metaschema when compiling it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The core's own tools: constant schemas, checked against the metaschema by a test.
    /// Checking them again would make every component instance build boon's whole set of
    /// standard metaschemas (about 3 ms a session, nearly half the CPU of the concurrency
    /// benchmark in BENCHMARKS.md).
    Builtin,
    /// A host's tools (plugins, JavaScript or native tools): checked, so that a broken
    /// schema is reported as such.
    Host,
}

#[derive(Default)]
struct Compiled {
    schemas: boon::Schemas,
    /// Per tool: its compiled schema, or why its schema could not be compiled.
    by_tool: HashMap<String, Result<boon::SchemaIndex, String>>,
}

impl std::fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaValidator")
            .field("tools", &self.parameters.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl SchemaValidator {
    /// A schema that does not compile (a host tool's, say) does not stop the session: calls
    /// to that tool fail with the reason.
    pub fn new<'a>(definitions: impl IntoIterator<Item = (&'a ToolDefinition, Origin)>) -> Self {
        Self {
            parameters: definitions
                .into_iter()
                .map(|(d, origin)| (d.name.clone(), (d.parameters.clone(), origin)))
                .collect(),
            compiled: RefCell::new(Compiled::default()),
        }
    }

    /// Checks a call's arguments. Tools the validator does not know pass unchecked.
    pub fn validate(&self, tool: &str, arguments: &Value) -> Result<(), String> {
        let Some((parameters, origin)) = self.parameters.get(tool) else {
            return Ok(());
        };
        let mut compiled = self.compiled.borrow_mut();
        let Compiled { schemas, by_tool } = &mut *compiled;
        let index = by_tool
            .entry(tool.to_string())
            .or_insert_with(|| compile(schemas, tool, parameters, *origin));
        match index {
            Err(reason) => Err(format!("the parameter schema of {tool} is invalid: {reason}")),
            Ok(index) => schemas
                .validate(arguments, *index)
                .map_err(|error| describe(&error)),
        }
    }
}

fn compile(
    schemas: &mut boon::Schemas,
    tool: &str,
    parameters: &Value,
    origin: Origin,
) -> Result<boon::SchemaIndex, String> {
    // Made-up absolute URLs: the schema is handed over in memory, nothing is fetched. boon
    // checks every schema against its metaschema except those whose URL is on json-schema.org
    // (the metaschemas themselves); the built-in tools' schemas are placed there.
    let location = match origin {
        Origin::Builtin => format!("https://json-schema.org/agent-core/builtin-tool/{tool}"),
        Origin::Host => format!("urn:agent-core:tool:{tool}"),
    };
    let mut compiler = boon::Compiler::new();
    compiler.set_default_draft(boon::Draft::V2020_12);
    compiler
        .add_resource(&location, parameters.clone())
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
        let shell = crate::tools::shell::definition(10_000);
        let broken = ToolDefinition {
            name: "broken".to_string(),
            description: String::new(),
            parameters: json!({"type": "no-such-type"}),
        };
        SchemaValidator::new([(&shell, Origin::Builtin), (&broken, Origin::Host)])
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

    #[test]
    fn every_builtin_schema_is_valid_against_the_metaschema() {
        // The component compiles built-in schemas without the metaschema check (see
        // `Origin::Builtin`); this is the check, for every profile's tools.
        for provider in agent_protocol::Profile::ALL {
            let registry = crate::profile::builtin_registry(provider, 10_000);
            let definitions = registry.definitions();
            let checked = SchemaValidator::new(definitions.iter().map(|d| (d, Origin::Host)));
            for definition in &definitions {
                let result = checked.validate(&definition.name, &json!({}));
                assert!(
                    !matches!(&result, Err(m) if m.contains("parameter schema of")),
                    "{provider:?}/{}: {result:?}",
                    definition.name
                );
            }
        }
    }

    #[test]
    fn a_builtin_schema_is_enforced_like_any_other() {
        let shell = crate::tools::shell::definition(10_000);
        let trusted = SchemaValidator::new([(&shell, Origin::Builtin)]);
        let checked = SchemaValidator::new([(&shell, Origin::Host)]);
        for arguments in [
            json!({}),
            json!({"command": 1}),
            json!({"command": "ls", "extra": true}),
        ] {
            let (a, b) = (
                trusted.validate("shell", &arguments),
                checked.validate("shell", &arguments),
            );
            assert!(a.is_err(), "{arguments}");
            assert_eq!(a, b, "{arguments}");
        }
        assert_eq!(trusted.validate("shell", &json!({"command": "ls"})), Ok(()));
    }
}
