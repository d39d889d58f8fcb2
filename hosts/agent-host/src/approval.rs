//! The host's answer when the core asks whether a tool call may run. Built-in tools are
//! confined by the environment's own policies (a read-only environment refuses writes and
//! commands itself); host tools run outside it, so their declared category decides here.

use crate::bindings::session_host::Approval;
use crate::host_tools::{HostTools, ToolCategory};

/// How tool calls are approved for a session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ApprovalPolicy {
    /// Read-only mode: only host tools of the `read` category may run.
    pub read_only: bool,
}

impl ApprovalPolicy {
    /// The decision on a call of `tool_name`; tools that are not host tools are allowed
    /// here and left to the environment.
    pub fn decide(&self, tools: &HostTools, tool_name: &str) -> Approval {
        let Some(tool) = tools.get(tool_name) else {
            return Approval::Allow;
        };
        let category = tool.category();
        if self.read_only && category != ToolCategory::Read {
            return Approval::Deny(format!(
                "{tool_name} is a `{}` tool and this session is in read-only mode, where only \
                 `read` tools run; report what you would do with it instead",
                category.as_str()
            ));
        }
        Approval::Allow
    }
}
