//! What a host tool may do, as its author declares it.

/// What a tool may do, for approvals: a read-only session runs only `Read` tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCategory {
    /// Looks at things and changes nothing.
    Read,
    /// Changes files or state in the workspace.
    Write,
    /// Changes things beyond the workspace (deployments, clusters, accounts).
    Admin,
}

impl ToolCategory {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolCategory::Read => "read",
            ToolCategory::Write => "write",
            ToolCategory::Admin => "admin",
        }
    }
}
