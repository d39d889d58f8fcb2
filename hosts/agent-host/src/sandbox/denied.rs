//! What commands may not read by default: the user's credentials and agent-host's own files.

use std::path::PathBuf;

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

/// The default deny list; paths that do not exist are dropped later. agent-host's own
/// configuration and sessions are added by the caller that knows where they are
/// ([`crate::config::merge::Settings::env_options`]).
pub fn default_denied_reads() -> Vec<PathBuf> {
    let mut denied: Vec<PathBuf> = dirs::home_dir()
        .map(|home| HOME_SECRETS.iter().map(|p| home.join(p)).collect())
        .unwrap_or_default();
    // The user's terminals (`/dev/pts/N` gives away keystrokes, prompts included) and
    // disks; the devices commands need are granted one by one (see `filesystem::DEVICES`).
    denied.push(PathBuf::from("/dev"));
    denied
}
