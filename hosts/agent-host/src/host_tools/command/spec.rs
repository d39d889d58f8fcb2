//! The TOML form of a command tool and everything checked when it is loaded: a mistake in
//! the configuration is an error naming the tool and the field before any session starts,
//! never a surprise when the model first calls the tool.

use super::names::{is_parameter_name, is_variable_name};
use super::template::{Piece, parse_placeholders, parse_references, slots};
use crate::approval::ToolCategory;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Longest `timeout_ms` a tool may declare (a day): longer is a typo, not a plan.
const MAX_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

/// `^[a-zA-Z0-9_-]{1,64}$`, the names every provider accepts for tools.
fn is_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// One `[[tools]]` entry of the configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandToolSpec {
    /// The name the model calls (`^[a-zA-Z0-9_-]{1,64}$`).
    pub name: String,
    /// What the tool does, written for the model.
    pub description: String,
    pub category: ToolCategory,
    /// The program: a name looked up on PATH, an absolute path, or a path relative to the
    /// workspace. Never a shell command line.
    pub cmd: String,
    /// Arguments, each one argv element; `{{param}}` placeholders are replaced by values.
    #[serde(default)]
    pub args: Vec<String>,
    /// Arguments appended (in the order written) only when the optional parameter they are
    /// keyed by is given; for a boolean parameter, only when it is `true`.
    #[serde(default, deserialize_with = "ordered_table")]
    pub optional_args: Vec<(String, Vec<String>)>,
    /// Extra variables for the program; `${NAME}` in a value is taken from the host's
    /// environment, which is how a credential the policy filters out is passed on purpose.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub timeout_ms: Option<u64>,
    #[serde(default, deserialize_with = "ordered_table")]
    pub parameters: Vec<(String, ParameterSpec)>,
}

/// The JSON type of a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParameterType {
    String,
    Integer,
    Number,
    Boolean,
}

impl ParameterType {
    fn as_str(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
        }
    }

    fn admits(self, value: &Value) -> bool {
        match self {
            Self::String => value.is_string(),
            Self::Integer => value.is_i64() || value.is_u64(),
            Self::Number => value.is_number(),
            Self::Boolean => value.is_boolean(),
        }
    }
}

/// One parameter, with the JSON-schema keywords a command argument needs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ParameterSpec {
    #[serde(rename = "type")]
    pub kind: ParameterType,
    pub description: Option<String>,
    #[serde(rename = "enum")]
    pub allowed: Option<Vec<Value>>,
    /// A regular expression the whole value must match only if it is anchored (`^...$`),
    /// as in JSON schema.
    pub pattern: Option<String>,
    pub max_length: Option<u64>,
    pub min_length: Option<u64>,
    pub minimum: Option<serde_json::Number>,
    pub maximum: Option<serde_json::Number>,
    #[serde(default)]
    pub optional: bool,
}

/// A configuration mistake, naming the tool and the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("command tool {tool:?}: {field}: {problem}")]
pub struct SpecError {
    pub tool: String,
    pub field: String,
    pub problem: String,
}

/// What a checked spec turns into: parsed templates and the schema offered to the model,
/// compiled for checking calls.
pub(super) struct Plan {
    pub args: Vec<Vec<Piece>>,
    pub optional_args: Vec<(String, Vec<Vec<Piece>>)>,
    pub env: Vec<(String, Vec<Piece>)>,
    pub schema: Value,
    pub schemas: boon::Schemas,
    pub index: boon::SchemaIndex,
}

/// Compiles a parameter schema with the validator the core uses (boon, draft 2020-12), so a
/// call the core accepts is one this host accepts too.
fn compile_schema(name: &str, schema: &Value) -> Result<(boon::Schemas, boon::SchemaIndex), String> {
    // A made-up absolute URL: the schema is handed over in memory, nothing is fetched.
    let location = format!("urn:agent-host:command-tool:{name}");
    let mut compiler = boon::Compiler::new();
    compiler.set_default_draft(boon::Draft::V2020_12);
    compiler
        .add_resource(&location, schema.clone())
        .map_err(|e| e.to_string())?;
    let mut schemas = boon::Schemas::new();
    let index = compiler
        .compile(&location, &mut schemas)
        .map_err(|e| format!("{e:#}"))?;
    Ok((schemas, index))
}

/// Keeps a TOML table's entries in the order written (argument order matters).
fn ordered_table<'de, D, V>(deserializer: D) -> Result<Vec<(String, V)>, D::Error>
where
    D: serde::Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Entries<V>(std::marker::PhantomData<V>);
    impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for Entries<V> {
        type Value = Vec<(String, V)>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a table")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut entries = Vec::new();
            while let Some(entry) = map.next_entry()? {
                entries.push(entry);
            }
            Ok(entries)
        }
    }
    deserializer.deserialize_map(Entries(std::marker::PhantomData))
}

impl CommandToolSpec {
    fn error(&self, field: impl Into<String>, problem: impl Into<String>) -> SpecError {
        SpecError {
            tool: self.name.clone(),
            field: field.into(),
            problem: problem.into(),
        }
    }

    /// Every check of the spec; the result is what the tool runs from.
    pub(super) fn plan(&self) -> Result<Plan, SpecError> {
        if !is_tool_name(&self.name) {
            return Err(self.error("name", "must be 1 to 64 letters, digits, `_` or `-`"));
        }
        if self.description.trim().is_empty() {
            return Err(self.error("description", "is empty; the model needs it to use the tool"));
        }
        self.check_cmd()?;
        match self.timeout_ms {
            Some(0) => return Err(self.error("timeout_ms", "must be more than 0")),
            Some(ms) if ms > MAX_TIMEOUT_MS => {
                return Err(self.error("timeout_ms", format!("must be at most {MAX_TIMEOUT_MS} (a day)")));
            }
            _ => {}
        }
        let mut types = BTreeMap::new();
        for (name, parameter) in &self.parameters {
            self.check_parameter(name, parameter)?;
            types.insert(name.clone(), parameter.kind);
        }
        let optional = |name: &str| self.parameters.iter().any(|(n, p)| n == name && p.optional);
        let mut used = std::collections::BTreeSet::new();
        let mut args = Vec::new();
        for (index, arg) in self.args.iter().enumerate() {
            let field = format!("args[{index}]");
            let pieces = self.placeholders(&field, arg, &types)?;
            for name in slots(&pieces) {
                if optional(name) {
                    return Err(self.error(
                        field,
                        format!(
                            "uses the optional parameter {{{{{name}}}}}, which may be absent; \
                             move it to optional_args.{name}"
                        ),
                    ));
                }
                used.insert(name.to_string());
            }
            args.push(pieces);
        }
        let mut optional_args = Vec::new();
        for (key, group) in &self.optional_args {
            if !types.contains_key(key) {
                return Err(self.error(format!("optional_args.{key}"), "is not a declared parameter"));
            }
            if !optional(key) {
                return Err(self.error(
                    format!("optional_args.{key}"),
                    format!(
                        "{key} is required, so its arguments belong in args (or mark it optional = true)"
                    ),
                ));
            }
            used.insert(key.clone());
            let mut parsed = Vec::new();
            for (index, arg) in group.iter().enumerate() {
                let field = format!("optional_args.{key}[{index}]");
                let pieces = self.placeholders(&field, arg, &types)?;
                if let Some(other) = slots(&pieces).find(|name| *name != key && optional(name)) {
                    return Err(self.error(
                        field,
                        format!("uses the optional parameter {{{{{other}}}}}, which may be absent when {key} is given"),
                    ));
                }
                parsed.push(pieces);
            }
            optional_args.push((key.clone(), parsed));
        }
        if let Some((name, _)) = self.parameters.iter().find(|(name, _)| !used.contains(name)) {
            return Err(self.error(
                format!("parameters.{name}"),
                "is never used: refer to it as {{name}} in args, or key optional_args by it",
            ));
        }
        let mut env = Vec::new();
        for (name, value) in &self.env {
            if !is_variable_name(name) {
                return Err(self.error(format!("env.{name}"), "is not a valid variable name"));
            }
            let pieces =
                parse_references(value).map_err(|problem| self.error(format!("env.{name}"), problem))?;
            env.push((name.clone(), pieces));
        }
        let schema = self.schema();
        let (schemas, index) =
            compile_schema(&self.name, &schema).map_err(|problem| self.error("parameters", problem))?;
        Ok(Plan {
            args,
            optional_args,
            env,
            schema,
            schemas,
            index,
        })
    }

    fn check_cmd(&self) -> Result<(), SpecError> {
        let cmd = &self.cmd;
        if cmd.trim().is_empty() {
            return Err(self.error("cmd", "is empty; name the program to run"));
        }
        if cmd.contains('\0') || cmd.contains("{{") {
            return Err(self.error("cmd", "must be a fixed program; placeholders belong in args"));
        }
        // A program name with a space is nearly always a command line pasted whole: no shell
        // would split it here, so say so instead of failing with "not found" later.
        if !cmd.contains('/') && cmd.chars().any(char::is_whitespace) {
            return Err(self.error(
                "cmd",
                format!("{cmd:?} is one program name, never split; put its arguments in args"),
            ));
        }
        Ok(())
    }

    fn placeholders(
        &self,
        field: &str,
        arg: &str,
        types: &BTreeMap<String, ParameterType>,
    ) -> Result<Vec<Piece>, SpecError> {
        if arg.contains('\0') {
            return Err(self.error(field, "contains a NUL byte"));
        }
        let pieces = parse_placeholders(arg).map_err(|problem| self.error(field, problem))?;
        if let Some(unknown) = slots(&pieces).find(|name| !types.contains_key(*name)) {
            let declared: Vec<&str> = types.keys().map(String::as_str).collect();
            return Err(self.error(
                field,
                format!(
                    "the placeholder {{{{{unknown}}}}} is not a declared parameter (declared: {})",
                    if declared.is_empty() {
                        "none".to_string()
                    } else {
                        declared.join(", ")
                    }
                ),
            ));
        }
        Ok(pieces)
    }

    fn check_parameter(&self, name: &str, p: &ParameterSpec) -> Result<(), SpecError> {
        let field = |keyword: &str| format!("parameters.{name}.{keyword}");
        if !is_parameter_name(name) {
            return Err(self.error(
                format!("parameters.{name}"),
                "a parameter name is a letter or `_`, then letters, digits, `_` or `-` (64 at most)",
            ));
        }
        let textual = p.kind == ParameterType::String;
        let numeric = matches!(p.kind, ParameterType::Integer | ParameterType::Number);
        for (keyword, present, fits) in [
            ("pattern", p.pattern.is_some(), textual),
            ("maxLength", p.max_length.is_some(), textual),
            ("minLength", p.min_length.is_some(), textual),
            ("minimum", p.minimum.is_some(), numeric),
            ("maximum", p.maximum.is_some(), numeric),
        ] {
            if present && !fits {
                return Err(self.error(
                    field(keyword),
                    format!("does not apply to a {} parameter", p.kind.as_str()),
                ));
            }
        }
        if let Some(pattern) = &p.pattern {
            regex::Regex::new(pattern).map_err(|e| {
                self.error(
                    field("pattern"),
                    format!("{pattern:?} is not a valid regular expression: {e}"),
                )
            })?;
        }
        if let (Some(min), Some(max)) = (p.min_length, p.max_length)
            && min > max
        {
            return Err(self.error(field("minLength"), format!("{min} is more than maxLength {max}")));
        }
        for (keyword, bound) in [("minimum", &p.minimum), ("maximum", &p.maximum)] {
            if let Some(bound) = bound
                && p.kind == ParameterType::Integer
                && !(bound.is_i64() || bound.is_u64())
            {
                return Err(self.error(field(keyword), format!("{bound} is not an integer")));
            }
        }
        if let (Some(min), Some(max)) = (&p.minimum, &p.maximum)
            && min.as_f64() > max.as_f64()
        {
            return Err(self.error(field("minimum"), format!("{min} is more than maximum {max}")));
        }
        if let Some(allowed) = &p.allowed {
            if allowed.is_empty() {
                return Err(self.error(field("enum"), "is empty, so no value would be accepted"));
            }
            if let Some(bad) = allowed.iter().find(|v| !p.kind.admits(v)) {
                return Err(self.error(field("enum"), format!("{bad} is not a {}", p.kind.as_str())));
            }
        }
        Ok(())
    }

    /// The object schema offered to the model: one property per parameter, the
    /// non-optional ones required, nothing else accepted.
    pub fn schema(&self) -> Value {
        let mut properties = Map::new();
        for (name, p) in &self.parameters {
            let mut property = Map::new();
            property.insert("type".into(), json!(p.kind.as_str()));
            let keywords = [
                ("description", p.description.clone().map(Value::String)),
                ("enum", p.allowed.clone().map(Value::Array)),
                ("pattern", p.pattern.clone().map(Value::String)),
                ("minLength", p.min_length.map(Value::from)),
                ("maxLength", p.max_length.map(Value::from)),
                ("minimum", p.minimum.clone().map(Value::Number)),
                ("maximum", p.maximum.clone().map(Value::Number)),
            ];
            for (keyword, value) in keywords {
                if let Some(value) = value {
                    property.insert(keyword.into(), value);
                }
            }
            properties.insert(name.clone(), Value::Object(property));
        }
        let required: Vec<&str> = self
            .parameters
            .iter()
            .filter(|(_, p)| !p.optional)
            .map(|(name, _)| name.as_str())
            .collect();
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        })
    }
}
