//! `[[hooks.before_tool]]`, `[[hooks.after_tool]]`, `[[hooks.session_start]]`,
//! `[[hooks.stop]]`: each a command (an argument vector, never a shell line), an optional
//! `matcher` (a regular expression the tool's name must match, for the tool events) and a
//! timeout.

use serde::Deserialize;
use std::time::Duration;

/// How long a hook may take unless it says (Claude Code's default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
const MAX_TIMEOUT_SECS: f64 = 3600.0;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksConfig {
    #[serde(default)]
    pub before_tool: Vec<HookSpec>,
    #[serde(default)]
    pub after_tool: Vec<HookSpec>,
    #[serde(default)]
    pub session_start: Vec<HookSpec>,
    #[serde(default)]
    pub stop: Vec<HookSpec>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookSpec {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// For tool events: only tools whose name this regular expression matches (whole name).
    pub matcher: Option<String>,
    pub timeout_sec: Option<f64>,
    /// For a hook of the user's own file, that file's folder: the hook runs there, never in
    /// the workspace, so `./guard.sh` or `python guard.py` cannot be a repository's file.
    /// `None`: a trusted project's hook, run in the session's folder, in the session's
    /// command sandbox (its files are the repository's, which commands can rewrite).
    #[serde(skip)]
    pub base_dir: Option<std::path::PathBuf>,
}

impl HooksConfig {
    pub fn is_empty(&self) -> bool {
        self.before_tool.is_empty()
            && self.after_tool.is_empty()
            && self.session_start.is_empty()
            && self.stop.is_empty()
    }

    /// Every mistake, named by event and position (`before_tool[1]`).
    pub fn check(&self) -> Result<(), String> {
        for (event, hooks) in self.events() {
            for (at, hook) in hooks.iter().enumerate() {
                hook.check(event).map_err(|e| format!("{event}[{at}]: {e}"))?;
            }
        }
        Ok(())
    }

    /// The hooks of every event, by the event's name.
    pub fn events(&self) -> [(&'static str, &Vec<HookSpec>); 4] {
        [
            ("before_tool", &self.before_tool),
            ("after_tool", &self.after_tool),
            ("session_start", &self.session_start),
            ("stop", &self.stop),
        ]
    }

    /// Marks every hook as the user's, from the file in `dir`.
    pub fn from_user_file(&mut self, dir: &std::path::Path) {
        for hooks in [
            &mut self.before_tool,
            &mut self.after_tool,
            &mut self.session_start,
            &mut self.stop,
        ] {
            for hook in hooks {
                hook.base_dir = Some(dir.to_path_buf());
            }
        }
    }

    /// Another file's hooks after these.
    pub fn extend(&mut self, other: &HooksConfig) {
        self.before_tool.extend(other.before_tool.iter().cloned());
        self.after_tool.extend(other.after_tool.iter().cloned());
        self.session_start.extend(other.session_start.iter().cloned());
        self.stop.extend(other.stop.iter().cloned());
    }
}

impl HookSpec {
    fn check(&self, event: &str) -> Result<(), String> {
        if self
            .command
            .first()
            .is_none_or(|program| program.trim().is_empty())
        {
            return Err(
                "command is empty: give the program and its arguments, e.g. [\"./check.sh\"]".to_string(),
            );
        }
        if let Some(matcher) = &self.matcher {
            if !event.ends_with("_tool") {
                return Err(format!("matcher is for before_tool and after_tool, not {event}"));
            }
            regex::Regex::new(&format!("^(?:{matcher})$"))
                .map_err(|e| format!("matcher {matcher:?} is not a regular expression: {e}"))?;
        }
        if let Some(secs) = self.timeout_sec
            && !(secs > 0.0 && secs <= MAX_TIMEOUT_SECS)
        {
            return Err(format!(
                "timeout_sec = {secs}: give seconds above 0, at most an hour"
            ));
        }
        Ok(())
    }

    pub fn timeout(&self) -> Duration {
        self.timeout_sec.map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64)
    }

    /// Whether it runs for the tool `name`.
    pub fn matches(&self, name: &str) -> bool {
        self.matcher.as_ref().is_none_or(|matcher| {
            regex::Regex::new(&format!("^(?:{matcher})$")).is_ok_and(|re| re.is_match(name))
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn hooks_are_read_and_checked() {
        let config: HooksConfig = toml::from_str(
            "[[before_tool]]\ncommand = [\"./guard.sh\", \"--strict\"]\nmatcher = \"shell|write_file\"\n\
             [[stop]]\ncommand = [\"notify-send\", \"done\"]\ntimeout_sec = 5\n",
        )
        .unwrap();
        config.check().unwrap();
        assert!(config.before_tool[0].matches("shell") && !config.before_tool[0].matches("shell_x"));
        assert_eq!(config.stop[0].timeout(), Duration::from_secs(5));
        for (text, expected) in [
            ("[[stop]]\ncommand = []", "stop[0]: command is empty"),
            (
                "[[stop]]\ncommand = [\"x\"]\nmatcher = \"a\"",
                "matcher is for before_tool",
            ),
            (
                "[[after_tool]]\ncommand = [\"x\"]\nmatcher = \"(\"",
                "not a regular expression",
            ),
            (
                "[[after_tool]]\ncommand = [\"x\"]\ntimeout_sec = 0",
                "timeout_sec = 0",
            ),
        ] {
            let error = toml::from_str::<HooksConfig>(text).unwrap().check().unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
        assert!(toml::from_str::<HooksConfig>("[[pre_tool_use]]\ncommand = [\"x\"]").is_err());
    }
}
