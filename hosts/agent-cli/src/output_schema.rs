//! `run --output-schema FILE`: the final answer in a JSON Schema's shape. The schema goes to
//! the model through its protocol's structured output (the core writes it into each request);
//! here the answer is checked against it, and an answer that does not match gets one repair
//! round naming what was wrong before the run fails with exit code 4.

use agent_host::embed::{Error, Outcome, Session, StopReason};
use serde_json::Value;
use std::path::Path;

/// A schema read from its file and compiled.
pub struct OutputSchema {
    pub value: Value,
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

/// Where the schema lives for the compiler: it is added from memory (a `$ref` to another
/// file is read like the schema itself: the user's own files; nothing goes over a network).
const LOCATION: &str = "urn:agent-host:output-schema";

impl OutputSchema {
    /// Reads and compiles `file`; the error names the file and what is wrong with it.
    pub fn read(file: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("--output-schema: cannot read {}: {e}", file.display()))?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| format!("--output-schema: {} is not JSON: {e}", file.display()))?;
        if !value.is_object() {
            return Err(format!(
                "--output-schema: {} is not a JSON Schema object",
                file.display()
            ));
        }
        let mut compiler = boon::Compiler::new();
        compiler.set_default_draft(boon::Draft::V2020_12);
        let mut schemas = boon::Schemas::new();
        let index = compiler
            .add_resource(LOCATION, value.clone())
            .map_err(|e| e.to_string())
            .and_then(|()| {
                compiler
                    .compile(LOCATION, &mut schemas)
                    .map_err(|e| format!("{e:#}"))
            })
            .map_err(|e| {
                format!(
                    "--output-schema: {} is not a usable JSON Schema: {e}",
                    file.display()
                )
            })?;
        Ok(Self {
            value,
            schemas,
            index,
        })
    }

    /// The answer as the JSON value it must be, or what is wrong with it.
    pub fn check(&self, answer: &str) -> Result<Value, String> {
        let text = without_fence(answer.trim());
        let value: Value =
            serde_json::from_str(text).map_err(|e| format!("the final answer is not a JSON value ({e})"))?;
        self.schemas
            .validate(&value, self.index)
            .map_err(|error| format!("the final answer does not match the schema: {}", describe(&error)))?;
        Ok(value)
    }
}

/// The run's outcome once the answer was checked, with one repair round if it did not match:
/// the last outcome, and the check of its answer (`None` when the input did not complete).
pub async fn settle(
    session: &Session,
    schema: &OutputSchema,
    first: Result<Outcome, Error>,
) -> (Result<Outcome, Error>, Option<Result<Value, String>>) {
    let problem = match &first {
        Ok(outcome) if answered(outcome) => match schema.check(&outcome.final_text) {
            Ok(value) => return (first, Some(Ok(value))),
            Err(problem) => problem,
        },
        _ => return (first, None),
    };
    let second = session.submit(&repair_prompt(&problem)).await;
    let checked = match &second {
        Ok(outcome) if answered(outcome) => Some(schema.check(&outcome.final_text)),
        _ => None,
    };
    (second, checked)
}

/// `instructions` with the schema told: every protocol's model sees it (those whose structured
/// output cannot go with tools see only this).
pub fn with_instructions(instructions: Option<String>, schema: &OutputSchema) -> String {
    let told = format!(
        "When you have finished, your final answer (the message you end with, after any tool calls) must \
         be only a JSON value, nothing before or after it, that matches this JSON Schema:\n{}",
        schema.value
    );
    match instructions {
        Some(instructions) if !instructions.trim().is_empty() => format!("{instructions}\n\n{told}"),
        _ => told,
    }
}

/// Whether the input ended with an answer (a question back counts: it is prose where JSON
/// was asked for).
fn answered(outcome: &Outcome) -> bool {
    matches!(
        outcome.stop_reason,
        StopReason::Completed | StopReason::AwaitingInput
    )
}

/// The message of the repair round.
pub fn repair_prompt(problem: &str) -> String {
    format!(
        "Your final answer must be only a JSON value that matches the JSON Schema this session was given \
         for it, and it was not: {problem}. Answer again with only that JSON value, nothing before or after it."
    )
}

/// A model may wrap its JSON in a markdown fence even when asked not to.
fn without_fence(text: &str) -> &str {
    let Some(inner) = text.strip_prefix("```").and_then(|t| t.strip_suffix("```")) else {
        return text;
    };
    let inner = inner.strip_prefix("json").unwrap_or(inner);
    inner.trim()
}

/// One line per failed check, each naming where in the answer it is.
fn describe(error: &boon::ValidationError<'_, '_>) -> String {
    let mut leaves = Vec::new();
    collect_leaves(error, &mut leaves);
    if leaves.is_empty() {
        leaves.push(error.kind.to_string());
    }
    leaves.join("; ")
}

fn collect_leaves(error: &boon::ValidationError<'_, '_>, out: &mut Vec<String>) {
    if error.causes.is_empty() {
        let at = error.instance_location.to_string();
        let at = if at.is_empty() {
            "the answer".to_string()
        } else {
            format!("at {at}")
        };
        out.push(format!("{at}: {}", error.kind));
    }
    for cause in &error.causes {
        collect_leaves(cause, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> OutputSchema {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("schema.json");
        std::fs::write(
            &file,
            r#"{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}"#,
        )
        .unwrap();
        OutputSchema::read(&file).unwrap()
    }

    #[test]
    fn an_answer_is_checked_and_its_violation_named() {
        let schema = schema();
        assert_eq!(schema.check("{\"count\": 3}").unwrap()["count"], 3);
        assert_eq!(schema.check("```json\n{\"count\": 3}\n```").unwrap()["count"], 3);
        let wrong = schema.check("{\"count\": \"three\"}").unwrap_err();
        assert!(wrong.contains("/count"), "{wrong}");
        assert!(schema.check("three").unwrap_err().contains("not a JSON value"));
    }
}
