//! Which variables hold credentials, by name and by value.

use crate::secrets::redact::WHOLE_KEY_SHAPED;

/// Name words (split at anything but letters and digits) ending so mark a credential:
/// `ANTHROPIC_API_KEY`, `AWS_SECRET_ACCESS_KEY`, `PGPASSWORD`, `NPM_TOKEN`, `CI_JOB_JWT`,
/// `SENTRY_DSN` (a DSN carries its key or password), `SLACK_WEBHOOK_URL` (a webhook's
/// address is its credential), `HTTP_AUTHORIZATION`, `JSESSIONID`.
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
    "CREDS",
    "COOKIE",
    "COOKIES",
    "JWT",
    "DSN",
    "WEBHOOK",
    "WEBHOOKS",
    "AUTHORIZATION",
    "SESSIONID",
    "SESSID",
];

/// Whole name words that mark a credential: a personal access token (`GITHUB_PAT`), a
/// password (`MYSQL_PWD`; `PWD` alone is the working directory), a bearer token.
const SECRET_WORDS: &[&str] = &["PAT", "PWD", "PW", "BEARER"];

/// Credentials whose names say little of it: a password-manager session, Docker's auth
/// blob, agent-host's own queue address (its password, `redis://:pw@...` or
/// `redis+unix:///path?pass=pw`). (`*_AUTH` counts too; `SSH_AUTH_SOCK`, a socket, does
/// not.)
const SECRET_NAMES: &[&str] = &["AUTH", "BW_SESSION", "DOCKER_AUTH_CONFIG", "AGENT_HOST_QUEUE"];

/// A name word saying what follows is how a request authenticates (`AUTH_HEADER`,
/// `BEARER_HEADERS`), when a word of [`HEADER_WORDS`] is in the name too.
const AUTH_WORDS: &[&str] = &["AUTH", "AUTHN", "AUTHZ", "BEARER"];
const HEADER_WORDS: &[&str] = &["HEADER", "HEADERS"];

/// Names ending in a `SESSION` word that are no credential: the desktop's session's name.
const NOT_SECRET_SESSIONS: &[&str] = &["DESKTOP_SESSION"];

/// Whether a variable holds a credential by its name (case-insensitive). Words are matched
/// by their ending, so `TOKENIZERS_PARALLELISM` and `SECRETARY` are not credentials, nor are
/// `AUTHOR` and `GIT_AUTHOR_NAME` (no `AUTH` word) or `XDG_SESSION_ID` (a session's number,
/// not a session ending the name).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if matches!(upper.as_str(), "PWD" | "OLDPWD") {
        return false;
    }
    if SECRET_NAMES.contains(&upper.as_str()) || upper.starts_with("OP_SESSION_") || upper.ends_with("_AUTH")
    {
        return true;
    }
    let words: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |set: &[&str]| words.iter().any(|word| set.contains(word));
    // A session token named only as a session (`BW_SESSION`, `SLACK_SESSION`).
    let session = words.last() == Some(&"SESSION") && !NOT_SECRET_SESSIONS.contains(&upper.as_str());
    session
        || (has(AUTH_WORDS) && has(HEADER_WORDS))
        || words.iter().any(|word| {
            SECRET_WORDS.contains(word) || SECRET_ENDINGS.iter().any(|ending| word.ends_with(ending))
        })
}

/// Whether a value is a credential whatever its variable is called: a URL carrying one (a
/// password, `postgres://u:pw@db/x`; a token as its user, `https://ghp_…@github.com`; a
/// password, token, key or signature in its query, `redis+unix:///s?pass=pw`) or a provider
/// key's shape (`sk-…`, `ghp_…`, `AKIA…`).
pub fn is_secret_value(value: &str) -> bool {
    !url_credentials(value).is_empty()
        || has_connection_string_password(value)
        || WHOLE_KEY_SHAPED
            .as_ref()
            .is_some_and(|shape| shape.is_match(value))
}

/// Whether `value` is a connection string of `;`-separated settings with a password in it
/// (ADO.NET's and ODBC's `Server=db;User Id=sa;Password=...;`, `PWD=...`).
fn has_connection_string_password(value: &str) -> bool {
    value.contains(';')
        && value.split(';').any(|setting| {
            setting.split_once('=').is_some_and(|(name, secret)| {
                matches!(name.trim().to_ascii_lowercase().as_str(), "password" | "pwd")
                    && !secret.trim().is_empty()
            })
        })
}

/// Query parameters that carry a credential though their names say little: a signed URL's
/// signature (`sig`, Azure's; `X-Amz-Signature`), `auth`, `pwd`.
fn is_secret_parameter(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    is_secret_name(name) || matches!(lower.as_str(), "sig" | "auth" | "pwd") || lower.ends_with("signature")
}

/// The credentials the URLs in `value` carry (every `scheme://` in it): passwords, a
/// key-shaped user name, and the values of credential parameters of their queries.
pub fn url_credentials(value: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for (at, _) in value.match_indices("://") {
        let rest = &value[at + 3..];
        let rest = rest.split(char::is_whitespace).next().unwrap_or("");
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        if let Some((userinfo, _)) = authority.rsplit_once('@') {
            match userinfo.split_once(':') {
                Some((_, password)) if !password.is_empty() => found.push(password),
                None if WHOLE_KEY_SHAPED
                    .as_ref()
                    .is_some_and(|shape| shape.is_match(userinfo)) =>
                {
                    found.push(userinfo)
                }
                _ => {}
            }
        }
        let Some((_, query)) = rest.split_once('?') else {
            continue;
        };
        let query = query.split('#').next().unwrap_or("");
        for pair in query.split(['&', ';']) {
            if let Some((name, value)) = pair.split_once('=')
                && !value.is_empty()
                && is_secret_parameter(name)
            {
                found.push(value);
            }
        }
    }
    found
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
            "CI_JOB_JWT",
            "CI_JOB_JWT_V2",
            "SENTRY_DSN",
            "SLACK_WEBHOOK_URL",
            "AUTH_HEADER",
            "HTTP_AUTHORIZATION",
            "BEARER",
            "SLACK_SESSION",
            "JSESSIONID",
            "SESSION_COOKIES",
            "AGENT_HOST_QUEUE",
            "AUTH",
            "CREDS",
            "DB_CREDS",
            "PW",
            "DB_PW",
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
            "XDG_SESSION_TYPE",
            "DBUS_SESSION_BUS_ADDRESS",
            "DESKTOP_SESSION",
            "SSH_AUTH_SOCK",
            "AUTHOR",
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "GIT_COMMITTER_NAME",
            "HEADER_DIR",
            "HOME",
            "LANG",
            "CARGO_HOME",
            "AGENT_HOST_LOG",
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
            "redis+unix:///run/redis.sock?db=0&pass=queue-pw",
            "redis://:queue-pw@redis.internal:6379/0",
            "https://acct.blob.core.windows.net/c/f?sv=2020-08-04&sig=abc%2Fdef",
            "https://h.example/x?access_token=abc",
            "https://h.example/x?X-Amz-Signature=abc",
            "https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r.git",
            // Not the first URL of the value.
            "redis://a:6379,redis://:pw@b:6379",
            "Server=db;User Id=sa;Password=hunter2;",
            "DRIVER={ODBC};SERVER=db;UID=sa;PWD=hunter2",
        ] {
            assert!(is_secret_value(value), "{value}");
        }
        assert_eq!(
            url_credentials("redis+unix:///s?pass=queue-pw#x https://u:pw2@h/?token=t"),
            ["queue-pw", "pw2", "t"]
        );
        for value in [
            "https://example.com/a@b",
            "http://user@host/",
            "https://example.com/search?q=rust&page=2#key=x",
            "https://example.com/?key=",
            "Server=db;User Id=sa;Password=;",
            "a=1;b=2",
            "/usr/bin",
            "sk-short",
            // Key-shaped text inside a longer value is not a key.
            "/home/u/task-management-system/.venv/bin:/usr/bin",
        ] {
            assert!(!is_secret_value(value), "{value}");
        }
    }
}
