//! The timed cases: each is prepared once (inputs built, untimed), then reset and run many
//! times (only `run` is timed), then verified. The same code runs natively and in wasm.

use crate::fixtures::{self, FUNCTION_LINES, PATH, Sloppiness};
use agent_core::edit_match::Pass;
use agent_core::ports::Ports;
use agent_core::truncation;
use agent_test_support::fakes::FakeEnv;
use agent_test_support::quiet;
use std::rc::Rc;

/// What is timed. The numbers are the wasm exports' `case` argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// apply_patch (the OpenAI profile's tool) with many hunks on a large file.
    ApplyPatch = 0,
    /// The head/tail truncation a session applies to shell output, on one huge line.
    Truncation = 1,
    /// edit_file (the Anthropic profile's tool) matched by the whitespace-normalized pass.
    EditWhitespace = 2,
    /// edit_file matched by the last pass of the chain, context-aware.
    EditContext = 3,
}

impl Case {
    pub const ALL: [Case; 4] = [
        Self::ApplyPatch,
        Self::Truncation,
        Self::EditWhitespace,
        Self::EditContext,
    ];

    pub fn from_u32(n: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|c| *c as u32 == n)
    }

    /// The edit_file pass the case must be matched by.
    pub fn expected_pass(self) -> Option<Pass> {
        match self {
            Self::EditWhitespace => Some(Pass::WhitespaceNormalized),
            Self::EditContext => Some(Pass::ContextAware),
            Self::ApplyPatch | Self::Truncation => None,
        }
    }
}

/// How big the inputs are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    pub patch_lines: usize,
    pub patch_hunks: usize,
    pub output_bytes: usize,
    pub edit_lines: usize,
}

impl Sizes {
    /// The sizes the targets are set for (BENCHMARKS.md, section 4), or tiny ones that only
    /// check the cases.
    pub fn new(quick: bool) -> Self {
        if quick {
            Self {
                patch_lines: 1_000,
                patch_hunks: 50,
                output_bytes: 100_000,
                edit_lines: 1_000,
            }
        } else {
            Self {
                patch_lines: 100_000,
                patch_hunks: 50,
                output_bytes: 10_000_000,
                edit_lines: 10_000,
            }
        }
    }
}

/// A tool call on one file, and what it must leave behind.
pub struct ToolInputs {
    pub provider: &'static str,
    pub tool: &'static str,
    pub path: &'static str,
    pub original: String,
    pub arguments_json: String,
    pub expected_file: String,
    /// A piece of text the tool's output must contain.
    pub expected_output: String,
}

/// The inputs of a tool case (`None` for truncation, which is no tool call).
pub fn tool_inputs(case: Case, sizes: Sizes) -> Option<ToolInputs> {
    match case {
        Case::Truncation => None,
        Case::ApplyPatch => {
            let functions = sizes.patch_lines / FUNCTION_LINES;
            let patched = fixtures::patched_functions(functions, sizes.patch_hunks);
            let arguments = serde_json::json!({ "patch": fixtures::patch(&patched) });
            Some(ToolInputs {
                provider: "openai",
                tool: "apply_patch",
                path: PATH,
                original: fixtures::code_file(functions, &[]),
                arguments_json: arguments.to_string(),
                expected_file: fixtures::code_file(functions, &patched),
                expected_output: format!("Success. Updated the following files:\nM {PATH}\n"),
            })
        }
        Case::EditWhitespace | Case::EditContext => {
            let functions = sizes.edit_lines / FUNCTION_LINES;
            let sloppiness = if case == Case::EditWhitespace {
                Sloppiness::Whitespace
            } else {
                Sloppiness::Context
            };
            let edit = fixtures::edit(functions / 2, sloppiness);
            let original = fixtures::code_file(functions, &[]);
            let arguments = serde_json::json!({
                "file_path": PATH,
                "old_string": edit.old_string,
                "new_string": edit.new_string,
            });
            let pass = case.expected_pass().map(Pass::name).unwrap_or_default();
            Some(ToolInputs {
                provider: "anthropic",
                tool: "edit_file",
                path: PATH,
                expected_file: original.replacen(&edit.region, &edit.new_string, 1),
                original,
                arguments_json: arguments.to_string(),
                expected_output: format!("replaced 1 occurrence (matched by the {pass} pass"),
            })
        }
    }
}

/// Checks a tool run: its output and the file it left.
pub fn verify_tool(inputs: &ToolInputs, output: &str, file: Option<&[u8]>) -> Result<(), String> {
    if !output.contains(&inputs.expected_output) {
        return Err(format!(
            "{} answered {output:?}, expected it to contain {:?}",
            inputs.tool, inputs.expected_output
        ));
    }
    match file {
        Some(bytes) if bytes == inputs.expected_file.as_bytes() => Ok(()),
        Some(bytes) => Err(format!(
            "{} left {} with {} bytes that differ from the expected {} bytes",
            inputs.tool,
            inputs.path,
            bytes.len(),
            inputs.expected_file.len()
        )),
        None => Err(format!("{} left no {}", inputs.tool, inputs.path)),
    }
}

/// The limits a session truncates shell output with (its default, see `truncation.rs`).
/// The shell's limits: a long line is cut in the middle (`agent_core::tools::shell::TRAITS`).
const TRUNCATED_TOOL: agent_core::truncation::OutputLimits = agent_core::tools::shell::TRAITS.output;

enum Work {
    Tool {
        inputs: ToolInputs,
        env: Rc<FakeEnv>,
        ports: Ports,
    },
    Truncate {
        input: String,
    },
}

/// One prepared case.
pub struct Probe {
    work: Work,
    last: Option<String>,
}

impl Probe {
    pub fn prepare(case: Case, sizes: Sizes) -> Self {
        let work = match tool_inputs(case, sizes) {
            Some(inputs) => {
                let env = Rc::new(FakeEnv::default());
                let ports = quiet::ports(env.clone());
                Work::Tool { inputs, env, ports }
            }
            None => Work::Truncate {
                input: fixtures::long_line(sizes.output_bytes),
            },
        };
        let mut probe = Self { work, last: None };
        probe.reset();
        probe
    }

    /// Puts the original file back (untimed, before each run).
    pub fn reset(&mut self) {
        if let Work::Tool { inputs, env, .. } = &self.work {
            env.put(inputs.path, &inputs.original);
        }
        self.last = None;
    }

    /// The timed part: one tool call or one truncation. Returns the output's length, which
    /// must be the same natively and in wasm.
    pub fn run(&mut self) -> Result<u64, String> {
        let output = match &self.work {
            Work::Tool { inputs, ports, .. } => {
                agent_core::run_tool(inputs.provider, inputs.tool, &inputs.arguments_json, ports)?
            }
            Work::Truncate { input } => truncation::truncate_tool_output(input, &TRUNCATED_TOOL),
        };
        let length = output.len() as u64;
        self.last = Some(output);
        Ok(length)
    }

    /// Whether the last run did the work: the expected file, or both ends of the output kept
    /// and the marker counting what was removed.
    pub fn verify(&self) -> Result<(), String> {
        let output = self
            .last
            .as_deref()
            .ok_or("the case has not run since its reset")?;
        match &self.work {
            Work::Tool { inputs, env, .. } => {
                env.with_file(inputs.path, |file| verify_tool(inputs, output, file))
            }
            Work::Truncate { input } => verify_truncation(input, output),
        }
    }
}

fn verify_truncation(input: &str, output: &str) -> Result<(), String> {
    let max_chars = TRUNCATED_TOOL.max_chars;
    let (head, tail) = (max_chars / 2, max_chars - max_chars / 2);
    // The input is ASCII: characters are bytes.
    let marker = format!(
        "{} characters were removed from the middle",
        input.len() - max_chars
    );
    if !output.starts_with(&input[..head]) {
        return Err(format!(
            "the truncated output does not start with the first {head} characters"
        ));
    }
    if !output.ends_with(&input[input.len() - tail..]) {
        return Err(format!(
            "the truncated output does not end with the last {tail} characters"
        ));
    }
    if !output.contains(&marker) {
        return Err(format!("the truncated output does not say {marker:?}"));
    }
    if output.len() > max_chars + 1_000 {
        return Err(format!("the truncated output still has {} bytes", output.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(case: Case, sizes: Sizes) -> Result<u64, String> {
        let mut probe = Probe::prepare(case, sizes);
        let mut lengths = Vec::new();
        // Twice: the reset must restore what the first run changed.
        for _ in 0..2 {
            probe.reset();
            lengths.push(probe.run()?);
            probe.verify()?;
        }
        assert_eq!(lengths[0], lengths[1], "{case:?}");
        Ok(lengths[0])
    }

    #[test]
    fn every_case_does_and_verifies_its_work() {
        for case in Case::ALL {
            let result = checked(case, Sizes::new(true));
            assert!(result.is_ok(), "{case:?}: {result:?}");
        }
    }

    #[test]
    fn the_cases_also_pass_at_full_size() {
        for case in Case::ALL {
            let result = checked(case, Sizes::new(false));
            assert!(result.is_ok(), "{case:?}: {result:?}");
        }
    }

    #[test]
    fn verification_catches_a_run_that_did_not_change_the_file() {
        let mut probe = Probe::prepare(Case::ApplyPatch, Sizes::new(true));
        assert!(probe.run().is_ok());
        // The file goes back to its original, the output stays: the check must notice.
        if let Work::Tool { inputs, env, .. } = &probe.work {
            env.put(inputs.path, &inputs.original);
        }
        let error = probe.verify().err().unwrap_or_default();
        assert!(error.contains("differ from the expected"), "{error}");
        probe.reset();
        assert_eq!(
            probe.verify(),
            Err("the case has not run since its reset".to_string())
        );
    }

    #[test]
    fn verification_catches_a_truncation_that_kept_the_wrong_part() {
        let input = fixtures::long_line(100_000);
        let tail_only = truncation::truncate_chars(&input, 30_000, truncation::Mode::Tail);
        assert!(verify_truncation(&input, &tail_only).is_err());
        let right = truncation::truncate_tool_output(&input, &TRUNCATED_TOOL);
        assert_eq!(verify_truncation(&input, &right), Ok(()));
    }

    #[test]
    fn edit_cases_fail_if_a_different_pass_matches() {
        let mut inputs = tool_inputs(Case::EditWhitespace, Sizes::new(true)).expect("a tool case");
        inputs.expected_output = "matched by the context-aware pass".to_string();
        let output =
            "Edited src/big.rs: replaced 1 occurrence (matched by the whitespace-normalized pass: ...)";
        let error = verify_tool(&inputs, output, Some(inputs.expected_file.as_bytes()));
        assert!(error.is_err_and(|e| e.contains("expected it to contain")));
    }

    #[test]
    fn case_numbers_round_trip() {
        for case in Case::ALL {
            assert_eq!(Case::from_u32(case as u32), Some(case));
        }
        assert_eq!(Case::from_u32(99), None);
    }
}
