//! What a tool is beyond its schema, declared next to each tool's definition: its category
//! (hosts decide approvals and views by it), how its output is truncated for the history
//! (section 5.2 of the spec), which files a call changes, and how an approval question names
//! a call.

use crate::truncation::Mode;
use agent_protocol::ToolCategory;
use serde_json::Value;

/// How much of a tool's output the model sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    pub max_chars: usize,
    pub max_lines: Option<usize>,
    pub mode: Mode,
}

/// Which files a call changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changes {
    None,
    /// The file named by this argument.
    Argument(&'static str),
    /// The files an apply_patch patch names.
    Patch,
}

/// How an approval question names a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalSummary {
    /// ``run `COMMAND` `` from this argument.
    Run(&'static str),
    /// `VERB PATH` from this argument, e.g. `write a.txt`.
    Verb(&'static str, &'static str),
    /// `call TOOL`.
    Call,
}

/// The properties of one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolTraits {
    pub category: ToolCategory,
    pub output: OutputLimits,
    pub changes: Changes,
    pub approval: ApprovalSummary,
}

impl ToolTraits {
    /// A tool of `category` whose output is cut to `max_chars` by `mode`. It names no files
    /// it changes and is summarised for approval by its call until [`Self::changes`] and
    /// [`Self::approval`] say otherwise.
    pub const fn new(category: ToolCategory, max_chars: usize, mode: Mode) -> Self {
        Self {
            category,
            output: OutputLimits {
                max_chars,
                max_lines: None,
                mode,
            },
            changes: Changes::None,
            approval: ApprovalSummary::Call,
        }
    }

    pub const fn max_lines(mut self, lines: usize) -> Self {
        self.output.max_lines = Some(lines);
        self
    }

    pub const fn changes(mut self, changes: Changes) -> Self {
        self.changes = changes;
        self
    }

    pub const fn approval(mut self, approval: ApprovalSummary) -> Self {
        self.approval = approval;
        self
    }

    /// A tool the host offers: its category is the host's, its output gets the spec's
    /// default limit.
    pub const HOST: Self = Self::new(ToolCategory::Host, 30_000, Mode::HeadTail);

    /// The files a call means to change, as far as its arguments say.
    pub fn changed_paths(&self, arguments: &Value) -> Vec<String> {
        match self.changes {
            Changes::None => Vec::new(),
            Changes::Argument(name) => arguments
                .get(name)
                .and_then(Value::as_str)
                .map(|path| vec![path.to_string()])
                .unwrap_or_default(),
            Changes::Patch => crate::patch::affected_paths(
                arguments.get("patch").and_then(Value::as_str).unwrap_or_default(),
            ),
        }
    }

    /// The one line an approval question shows.
    pub fn approval_summary(&self, tool: &str, arguments: &Value) -> String {
        let field = |name: &str| arguments.get(name).and_then(Value::as_str).unwrap_or_default();
        match self.approval {
            ApprovalSummary::Run(name) => format!("run `{}`", field(name)),
            ApprovalSummary::Verb(verb, name) => format!("{verb} {}", field(name)),
            ApprovalSummary::Call => format!("call {tool}"),
        }
    }
}
