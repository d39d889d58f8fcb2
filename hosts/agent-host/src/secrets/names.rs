//! Which variables hold credentials, by name and by value.

use crate::secrets::redact::WHOLE_KEY_SHAPED;

/// Name words (split at anything but letters and digits) ending so mark a credential:
/// `ANTHROPIC_API_KEY`, `AWS_SECRET_ACCESS_KEY`, `PGPASSWORD`, `NPM_TOKEN`.
const SECRET_ENDINGS: &[&str] = &[
    "KEY",
    "KEYS",
    "SECRET",
    "SECRETS",
    "TOKEN",
    "TOKENS",
    "PASSWORD",
    "PASSWORDS",
    "PASSWD",
    "PASS",
    "PASSPHRASE",
    "CREDENTIAL",
    "CREDENTIALS",
    "COOKIE",
];

/// Whole name words that mark a credential: a personal access token (`GITHUB_PAT`), a
/// password (`MYSQL_PWD`; `PWD` alone is the working directory).
const SECRET_WORDS: &[&str] = &["PAT", "PWD"];

/// Credentials whose names say little of it: a password-manager session, Docker's auth
/// blob. (`*_AUTH` counts too; `SSH_AUTH_SOCK`, a socket, does not.)
const SECRET_NAMES: &[&str] = &["BW_SESSION", "DOCKER_AUTH_CONFIG"];

/// Whether a variable holds a credential by its name (case-insensitive). Words are matched
/// by their ending, so `TOKENIZERS_PARALLELISM` and `SECRETARY` are not credentials.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if matches!(upper.as_str(), "PWD" | "OLDPWD") {
        return false;
    }
    if SECRET_NAMES.contains(&upper.as_str()) || upper.starts_with("OP_SESSION_") || upper.ends_with("_AUTH")
    {
        return true;
    }
    upper.split(|c: char| !c.is_ascii_alphanumeric()).any(|word| {
        SECRET_WORDS.contains(&word) || SECRET_ENDINGS.iter().any(|ending| word.ends_with(ending))
    })
}

/// Whether a value is a credential whatever its variable is called: a URL with a password
/// (`postgres://u:pw@db/x`) or a provider key's shape (`sk-…`, `ghp_…`, `AKIA…`).
pub fn is_secret_value(value: &str) -> bool {
    url_has_password(value)
        || WHOLE_KEY_SHAPED
            .as_ref()
            .is_some_and(|shape| shape.is_match(value))
}

fn url_has_password(value: &str) -> bool {
    let Some((_, rest)) = value.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| userinfo.split_once(':').is_some_and(|(_, pw)| !pw.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names_are_recognised_by_their_words() {
        for name in [
            "ANTHROPIC_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "PGPASSWORD",
            "GITHUB_PAT",
            "API_KEY",
            "KEY",
            "github_token",
            "Db_Password",
            "GCP_CREDENTIALS",
            "MYSQL_PWD_PASS",
            "MYSQL_PWD",
            "BW_SESSION",
            "OP_SESSION_my",
            "DOCKER_AUTH_CONFIG",
            "NPM_AUTH",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "TOKENIZERS_PARALLELISM",
            "SECRETARY",
            "KEYBOARD",
            "PWD",
            "OLDPWD",
            "PATCH_LEVEL",
            "XAUTHORITY",
            "XDG_SESSION_ID",
            "SSH_AUTH_SOCK",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn credential_values_are_recognised_by_their_shape() {
        for value in [
            "postgres://app:hunter2@db.internal:5432/app",
            "https://user:tok@git.example.com/repo.git",
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "AKIAIOSFODNN7EXAMPLE",
        ] {
            assert!(is_secret_value(value), "{value}");
        }
        for value in [
            "https://example.com/a@b",
            "http://user@host/",
            "/usr/bin",
            "sk-short",
            // Key-shaped text inside a longer value is not a key.
            "/home/u/task-management-system/.venv/bin:/usr/bin",
        ] {
            assert!(!is_secret_value(value), "{value}");
        }
    }
}
