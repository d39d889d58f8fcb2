//! Redaction: credentials replaced before text is written anywhere it outlives the call
//! (recordings, the session logs, what a command's output tells the model).

use regex::Regex;
use std::sync::{LazyLock, Mutex};

/// What replaces a credential.
pub const REDACTED: &str = "<redacted>";

/// Text shaped like a provider key or token, redacted even when no configured key matches
/// (a key pasted into a prompt or found in a file the agent read).
pub(crate) static KEY_SHAPED: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"sk-[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{30,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_\-]{20,}|xox[abpr]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16}",
    )
    .ok()
});

/// [`KEY_SHAPED`] matching a whole value: a variable whose value merely contains such text
/// (`PATH=/home/u/task-management-system/bin`) is not a credential.
pub(crate) static WHOLE_KEY_SHAPED: LazyLock<Option<Regex>> = LazyLock::new(|| {
    KEY_SHAPED
        .as_ref()
        .and_then(|shape| Regex::new(&format!("^(?:{})$", shape.as_str())).ok())
});

/// Secrets shorter than this are not searched for: they would match ordinary text.
const MIN_SECRET_LEN: usize = 8;

/// The credential values this process knows (withheld variables, endpoint keys).
static KNOWN: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Adds `value` to the secrets [`redact_known`] replaces.
pub fn remember(value: &str) {
    if value.len() < MIN_SECRET_LEN {
        return;
    }
    let mut known = KNOWN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if !known.iter().any(|k| k == value) {
        known.push(value.to_string());
        // Longest first, so a key containing another is replaced whole.
        known.sort_by_key(|k| std::cmp::Reverse(k.len()));
    }
}

/// Replaces `secrets` and anything key-shaped in `text`.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let mut text = text.to_string();
    for secret in secrets {
        text = text.replace(secret.as_str(), REDACTED);
    }
    match KEY_SHAPED.as_ref() {
        Some(pattern) => pattern.replace_all(&text, REDACTED).into_owned(),
        None => text,
    }
}

/// Replaces every credential this process knows (see [`remember`]) in `text`. Shapes are
/// left alone: opaque values the model needs back whole (reasoning signatures) could
/// contain one by chance.
pub fn redact_known(text: &str) -> String {
    let known = KNOWN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut text = text.to_string();
    for secret in known.iter() {
        if text.contains(secret.as_str()) {
            text = text.replace(secret.as_str(), REDACTED);
        }
    }
    text
}

/// A matcher of every credential this process knows, for bytes that cannot be redacted
/// (a file kept whole, to be written back); `None` when none is known.
pub fn known_matcher() -> Option<regex::bytes::Regex> {
    let known = KNOWN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if known.is_empty() {
        return None;
    }
    let pattern: Vec<String> = known.iter().map(|k| regex::escape(k)).collect();
    regex::bytes::Regex::new(&pattern.join("|")).ok()
}

/// A URL with any password replaced: `https://u:secret@h/` → `https://u:***@h/`;
/// a user name without a password is taken for a token and hidden whole.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return url.to_string();
    };
    let userinfo = &rest[..at];
    let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
    let hidden = if userinfo.contains(':') {
        format!("{user}:***")
    } else {
        "***".to_string()
    };
    format!("{scheme}://{hidden}{}", &rest[at..])
}

/// `text` (an error message naming `url`) with `url`'s user information hidden.
pub fn hide_url_credentials(text: &str, url: &str) -> String {
    let hidden = redact_url(url);
    match hidden == url {
        true => text.to_string(),
        false => text.replace(url, &hidden),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_secrets_are_replaced_everywhere_and_key_shapes_in_recordings() {
        remember("hunter2-long-password");
        remember("short");
        let text = "pw=hunter2-long-password short sk-abcdefghijklmnopqrstu";
        assert_eq!(redact_known(text), "pw=<redacted> short sk-abcdefghijklmnopqrstu");
        assert_eq!(redact(text, &[]), "pw=hunter2-long-password short <redacted>");
    }

    #[test]
    fn passwords_in_urls_are_hidden() {
        assert_eq!(
            redact_url("https://u:s3cret@h.example/v1"),
            "https://u:***@h.example/v1"
        );
        assert_eq!(redact_url("http://tok@h/v1"), "http://***@h/v1");
        assert_eq!(redact_url("http://127.0.0.1:8080/v1"), "http://127.0.0.1:8080/v1");
        assert_eq!(redact_url("http://h/a@b"), "http://h/a@b");
    }

    #[test]
    fn an_error_naming_a_url_keeps_its_credentials_hidden() {
        let url = "https://u:s3cret@h.example/v1/messages";
        let message = format!("{url}: error sending request for url ({url})");
        assert!(!hide_url_credentials(&message, url).contains("s3cret"));
    }
}
