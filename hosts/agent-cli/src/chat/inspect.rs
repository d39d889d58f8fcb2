//! `/approval`, `/sandbox` and `/mcp`: what the session may do, and with which tools.

use super::commands::approval_meaning;
use super::driver::one_line;
use agent_host::approval::ApprovalMode;
use agent_host::host_tools::mcp::StartedServers;
use agent_host::sandbox::NetworkAccess;
use agent_host::sandbox::Sandbox;
use std::path::Path;
use std::time::Duration;

/// How long `/mcp` waits for a server busy with a call before saying so.
const MCP_PATIENCE: Duration = Duration::from_secs(3);

/// The mode, what it means, and the others to choose from.
pub fn approval_text(mode: ApprovalMode) -> String {
    let mut text = format!("approval: {mode} ({})", approval_meaning(mode));
    for other in [ApprovalMode::Auto, ApprovalMode::Ask, ApprovalMode::ReadOnly] {
        if other != mode {
            text.push_str(&format!("\n  /approval {other:<9}  {}", approval_meaning(other)));
        }
    }
    text
}

/// Where commands may write, what they may not read, the network; `summary` is the banner's
/// line (the mode, or why there is no sandbox).
pub fn sandbox_text(summary: &str, sandbox: Option<&Sandbox>) -> String {
    let mut text = format!("sandbox: {summary}");
    match sandbox {
        None => text.push_str("\n  nothing confines commands: they have every right of the user they run as"),
        Some(sandbox) => {
            let roots = sandbox.writable_roots();
            if roots.is_empty() {
                text.push_str("\n  commands may write only in their private temporary folder ($TMPDIR)");
            } else {
                text.push_str("\n  commands may write in:");
                for root in roots {
                    text.push_str(&format!("\n    {}", shown(root)));
                }
                text.push_str("\n    their private temporary folder ($TMPDIR)");
                text.push_str(
                    "\n  but not in the .git and .agent folders there (those present when each command starts)",
                );
            }
            text.push_str("\n  commands may not read:");
            for path in sandbox.denied_reads() {
                text.push_str(&format!("\n    {}", shown(path)));
                // The sandbox grants the harmless devices back, one by one.
                if path == Path::new("/dev") {
                    text.push_str(" (but /dev/null, zero, full, random and urandom)");
                }
            }
            match sandbox.network() {
                NetworkAccess::On => text.push_str("\n  network: on"),
                NetworkAccess::Off => text.push_str("\n  network: off (no connections, no name lookups)"),
                NetworkAccess::AllowList => {
                    text.push_str(
                        "\n  network: only these hosts, through agent-host's proxy (each connection shown):",
                    );
                    let list = sandbox.network_allow();
                    for entry in list.iter().flat_map(|l| l.entries()) {
                        text.push_str(&format!("\n    {entry}"));
                    }
                }
            }
        }
    }
    text.push_str(
        "\n  the file tools reach only the workspace and the --allow-dir folders\n  \
         hooks and MCP servers of your own configuration run with your rights; a trusted project's in the sandbox\n  \
         (the sandbox is fixed for this chat: leave, then agent-host chat --continue -s MODE -a MODE)",
    );
    text
}

/// The servers, their state and tools, as `agent-host mcp list` shows them.
pub async fn mcp_text(servers: Option<&StartedServers>) -> String {
    let Some(servers) = servers else {
        return "no MCP servers are configured ([mcp_servers.NAME] in config.toml; see agent-host mcp list)"
            .to_string();
    };
    match tokio::time::timeout(MCP_PATIENCE, crate::mcp_cmd::describe(servers)).await {
        Ok(described) if described.is_empty() => "no MCP servers are running".to_string(),
        Ok(described) => format!(
            "MCP servers (their tools as the model sees them):\n{}",
            crate::mcp_cmd::render(&described).trim_end()
        ),
        Err(_) => "an MCP server is busy with a call: try /mcp again when it ends".to_string(),
    }
}

/// A path for the screen: the home folder as `~`, escaped.
fn shown(path: &Path) -> String {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let text = match home.as_deref().and_then(|home| path.strip_prefix(home).ok()) {
        Some(rest) if !rest.as_os_str().is_empty() => format!("~/{}", rest.display()),
        _ => path.display().to_string(),
    };
    one_line(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_approval_text_offers_the_other_modes() {
        let text = approval_text(ApprovalMode::Ask);
        assert!(text.starts_with("approval: ask (you are asked"), "{text}");
        assert!(
            text.contains("/approval auto") && text.contains("/approval read-only"),
            "{text}"
        );
        assert!(!text.contains("/approval ask"), "{text}");
    }

    #[test]
    fn no_sandbox_says_commands_run_with_the_users_rights() {
        let text = sandbox_text("danger-full-access", None);
        assert!(text.contains("nothing confines commands"), "{text}");
    }
}
