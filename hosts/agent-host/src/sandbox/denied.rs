//! What commands may not read by default: the user's credentials and agent-host's own files.

use std::path::{Path, PathBuf};

/// Under the home directory: keys, cloud and registry credentials, password stores.
const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/gh/hosts.yml",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".pypirc",
    ".password-store",
    ".vault-token",
    ".gem/credentials",
    ".terraform.d/credentials.tfrc.json",
    ".config/rclone/rclone.conf",
    ".local/share/keyrings",
];

/// The default deny list; paths that do not exist are dropped later. It holds agent-host's
/// own folders wherever the environment puts them, so that no way of running commands
/// (`run`, `chat`, `tool`, `batch`, `worker`, `mcp-server`, an embedding application) can
/// leave them out: the configuration folder (endpoints' key variables, trusted projects) and
/// the state folder (other sessions' histories, saved outputs, checkpoints).
pub fn default_denied_reads() -> Vec<PathBuf> {
    let mut denied: Vec<PathBuf> = dirs::home_dir()
        .map(|home| HOME_SECRETS.iter().map(|p| home.join(p)).collect())
        .unwrap_or_default();
    denied.extend(own_folders());
    // The user's terminals (`/dev/pts/N` gives away keystrokes, prompts included) and
    // disks; the devices commands need are granted one by one (see `filesystem::DEVICES`).
    denied.push(PathBuf::from("/dev"));
    denied
}

/// agent-host's configuration folder (`$AGENT_HOST_CONFIG_DIR`, else the platform's) and
/// state folder (`$AGENT_HOST_STATE_DIR`, else the platform's), absolute: a relative
/// variable names a folder from agent-host's working directory, not the command's.
fn own_folders() -> Vec<PathBuf> {
    let config = crate::config::locations::user_config_file(&|name| std::env::var(name).ok())
        .and_then(|file| file.parent().map(Path::to_path_buf));
    config
        .into_iter()
        .chain(crate::persist::state_dir_location())
        .filter(|dir| !dir.as_os_str().is_empty())
        .filter_map(|dir| std::path::absolute(dir).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn agent_hosts_own_folders_are_denied_wherever_they_are() {
        let denied = default_denied_reads();
        let state = crate::persist::state_dir_location().unwrap();
        let config = crate::config::locations::user_config_file(&|name| std::env::var(name).ok())
            .unwrap()
            .parent()
            .unwrap()
            .to_path_buf();
        for own in [state, config] {
            let own = std::path::absolute(own).unwrap();
            assert!(denied.contains(&own), "{} not in {denied:?}", own.display());
        }
    }
}
