//! Asking on the terminal, for `agent-host run`: one line naming the tool and what it will
//! do, answered with `y` (yes, once), `a` (always, what the line says it covers) or `n`
//! (no; `n <reason>` passes the reason to the model), then Enter.

use crate::terminal_text::one_line;
use agent_host::approval::{ApprovalAnswer, ApprovalMode, ApprovalPolicy, ApprovalPrompt, ApprovalQuestion};
use agent_host::config::Settings;
use agent_host::environments::EnvOptions;
use async_trait::async_trait;
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::sync::Arc;

/// Where the questions go and the answers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Channel {
    /// Answers on stdin (a terminal), questions on stderr.
    Stdin,
    /// The controlling terminal, when stdin is piped but the user watches stderr.
    DevTty,
}

/// Questions on the terminal, one at a time (subagents' questions wait their turn).
pub struct TerminalPrompt {
    channel: Channel,
    turn: tokio::sync::Mutex<()>,
}

impl TerminalPrompt {
    /// A prompt if someone can answer: stdin is a terminal, or stderr is one and
    /// `/dev/tty` opens. `None` in scripts, CI and pipes, where asking would hang.
    pub fn detect() -> Option<Self> {
        let channel = if std::io::stdin().is_terminal() {
            Channel::Stdin
        } else if std::io::stderr().is_terminal() && open_tty().is_ok() {
            Channel::DevTty
        } else {
            return None;
        };
        Some(Self {
            channel,
            turn: tokio::sync::Mutex::new(()),
        })
    }
}

#[async_trait]
impl ApprovalPrompt for TerminalPrompt {
    async fn ask(&self, question: &ApprovalQuestion) -> ApprovalAnswer {
        let _turn = self.turn.lock().await;
        // The call's own event (TOOL_CALL_START) is printed by another task: let it land
        // first, so the question comes after it, not in the middle of the output.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let channel = self.channel;
        let question = Arc::new(question.clone());
        // A plain thread, not `spawn_blocking`: a read abandoned by an interruption must not
        // keep the runtime from shutting down.
        std::thread::spawn(move || {
            let _ = sender.send(ask_blocking(channel, &question));
        });
        let mut unanswered = Unanswered(true);
        let answer = receiver.await.unwrap_or(ApprovalAnswer::Deny {
            reason: Some("the question could not be asked on the terminal".to_string()),
        });
        unanswered.0 = false;
        answer
    }
}

/// Ends the question's line when the session is interrupted while it waits, so what is
/// printed next starts on a line of its own.
struct Unanswered(bool);

impl Drop for Unanswered {
    fn drop(&mut self) {
        if self.0 {
            eprintln!();
        }
    }
}

fn open_tty() -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
}

fn ask_blocking(channel: Channel, question: &ApprovalQuestion) -> ApprovalAnswer {
    // Output waiting in stdout's line buffer (streamed assistant text) goes before the question.
    let _ = std::io::stdout().flush();
    let result = match channel {
        Channel::Stdin => converse(&mut std::io::stdin().lock(), &mut std::io::stderr(), question),
        Channel::DevTty => open_tty().and_then(|tty| {
            let mut output = tty.try_clone()?;
            converse(&mut BufReader::new(tty), &mut output, question)
        }),
    };
    result.unwrap_or_else(|e| ApprovalAnswer::Deny {
        reason: Some(format!("the terminal could not be read: {e}")),
    })
}

/// Asks until the answer is understood; the end of input is a refusal.
fn converse(
    input: &mut dyn BufRead,
    output: &mut dyn Write,
    question: &ApprovalQuestion,
) -> std::io::Result<ApprovalAnswer> {
    write!(output, "\n{} ", question_line(question))?;
    output.flush()?;
    loop {
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            writeln!(output)?;
            return Ok(ApprovalAnswer::Deny {
                reason: Some("nobody answered (the terminal's input ended)".to_string()),
            });
        }
        match parse_answer(&line, question.always.is_some()) {
            Some(answer) => return Ok(answer),
            None => {
                let keys = if question.always.is_some() {
                    "y, a or n"
                } else {
                    "y or n"
                };
                write!(output, "  answer {keys} (n <reason> to say why) > ")?;
                output.flush()?;
            }
        }
    }
}

/// The one-line question. Every part of it but our own words comes from the model's call
/// (the tool's name, the command, the paths, what the guard matched in it): escaped, so
/// no control character can rewrite the line into something else than what will run.
pub fn question_line(question: &ApprovalQuestion) -> String {
    let tool = one_line(&question.tool_name);
    let summary = one_line(&question.summary);
    let danger = |why: &String| format!("DANGEROUS: {}. ", one_line(why));
    let mut line = match (&question.danger, &question.unsandboxed) {
        // The warning first: a long command must not push it off a narrow terminal.
        (why, Some(refusal)) => format!(
            "! RUN WITHOUT THE SANDBOX, with all your rights? {}{tool}: {summary} - the sandbox \
             may have refused it ({}). y: yes, this once",
            why.as_ref().map(danger).unwrap_or_default(),
            one_line(refusal)
        ),
        (Some(why), None) => format!(
            "! {tool}: {summary} - DANGEROUS: {}. Allow it? y: yes, this once",
            one_line(why)
        ),
        (None, None) => format!("? {tool}: {summary} - allow? y: yes"),
    };
    if let Some(always) = &question.always {
        line.push_str(&format!(" | a: always ({})", one_line(&always.to_string())));
    }
    line.push_str(" | n: no (n <reason>) >");
    line
}

/// An answer line: `y`/`yes`, `a`/`always` (when offered), `n`/`no` with an optional
/// reason after it. `None` when not understood.
pub fn parse_answer(line: &str, always_offered: bool) -> Option<ApprovalAnswer> {
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    match word.to_ascii_lowercase().as_str() {
        "y" | "yes" if rest.is_empty() => Some(ApprovalAnswer::Once),
        "a" | "always" if always_offered && rest.is_empty() => Some(ApprovalAnswer::Always),
        "n" | "no" => {
            let reason = rest.trim();
            Some(ApprovalAnswer::Deny {
                reason: (!reason.is_empty()).then(|| reason.to_string()),
            })
        }
        _ => None,
    }
}

/// The approvals of `agent-host run`: asked on the terminal when there is one (in
/// every mode but read-only, since dangerous commands are always asked about), else
/// refused where asking is needed. `options` loses its command guard when the
/// terminal answers for dangerous commands. Returns a warning to print, if any.
pub fn terminal_approvals(settings: &Settings, options: &mut EnvOptions) -> (ApprovalPolicy, Option<String>) {
    let mode = settings.approval.value;
    let prompt: Option<Arc<dyn ApprovalPrompt>> = match mode {
        ApprovalMode::ReadOnly => None,
        _ => TerminalPrompt::detect().map(|p| Arc::new(p) as Arc<dyn ApprovalPrompt>),
    };
    let allow_dangerous = options.allow_dangerous_commands;
    options.allow_dangerous_commands |= prompt.is_some();
    let warning = (mode == ApprovalMode::Ask && prompt.is_none()).then(|| {
        format!(
            "the approval mode is `ask` ({}) but there is no terminal to ask on: writes and \
             commands will be refused; use --approval auto to allow them",
            settings.approval.source
        )
    });
    (settings.approval_policy(prompt, allow_dangerous), warning)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_until_understood() {
        let mut output = Vec::new();
        let answer = converse(
            &mut "maybe\n\nn  not that file \n".as_bytes(),
            &mut output,
            &ApprovalQuestion::sample(true),
        )
        .unwrap();
        assert_eq!(
            answer,
            ApprovalAnswer::Deny {
                reason: Some("not that file".into())
            }
        );
        let shown = String::from_utf8(output).unwrap();
        assert!(
            shown.contains("? write_file: write a.txt - allow? y: yes | a: always (every write_file call)"),
            "{shown}"
        );
        assert_eq!(shown.matches("answer y, a or n").count(), 2, "{shown}");
        assert_eq!(parse_answer("Y", true), Some(ApprovalAnswer::Once));
        assert_eq!(parse_answer("always", true), Some(ApprovalAnswer::Always));
        assert_eq!(parse_answer("a", false), None, "always is not offered");
        assert_eq!(
            parse_answer("no", false),
            Some(ApprovalAnswer::Deny { reason: None })
        );
        let ended = converse(
            &mut "".as_bytes(),
            &mut Vec::new(),
            &ApprovalQuestion::sample(false),
        )
        .unwrap();
        assert!(matches!(ended, ApprovalAnswer::Deny { reason: Some(_) }));
    }

    /// The question after a sandbox refusal: what refused it (escaped: the line comes from
    /// the command's output), that the rerun has every right, and no "always".
    #[test]
    fn a_rerun_without_the_sandbox_is_asked_plainly_and_only_once() {
        let question = ApprovalQuestion {
            tool_name: "shell".into(),
            summary: "run `touch ~/x` again without the sandbox".into(),
            unsandboxed: Some("workspace-write (network off): touch: x: Permission denied\u{1b}[2K".into()),
            always: None,
            ..ApprovalQuestion::sample(false)
        };
        let mut output = Vec::new();
        let answer = converse(&mut "a\ny\n".as_bytes(), &mut output, &question).unwrap();
        assert_eq!(answer, ApprovalAnswer::Once, "`a` is no answer here");
        let shown = String::from_utf8(output).unwrap();
        assert!(
            shown.contains(
                "! RUN WITHOUT THE SANDBOX, with all your rights? shell: run `touch ~/x` again \
                 without the sandbox - the sandbox may have refused it (workspace-write (network \
                 off): touch: x: Permission denied\\x1b[2K). y: yes, this once | n: no"
            ),
            "{shown:?}"
        );
        let dangerous = ApprovalQuestion {
            danger: Some("it deletes files".into()),
            ..question
        };
        assert!(
            question_line(&dangerous).starts_with(
                "! RUN WITHOUT THE SANDBOX, with all your rights? DANGEROUS: it deletes files. shell:"
            ),
            "{}",
            question_line(&dangerous)
        );
    }

    /// A command whose carriage return and erase-line sequence would redraw the question
    /// as `echo safe`, with the `ls` part (what really runs first) wiped.
    #[test]
    fn a_command_cannot_rewrite_the_question_with_control_characters() {
        use agent_host::approval::AlwaysScope;
        let command = "ls\r\u{1b}[2Kecho safe";
        let question = ApprovalQuestion {
            tool_name: "shell\u{1b}[8m".into(),
            summary: format!("run `{command}`"),
            arguments_json: serde_json::json!({ "command": command }).to_string(),
            danger: Some("matches `\u{1b}]0;title\u{7}`\u{202e}".into()),
            always: Some(AlwaysScope::Tool("shell\r".into())),
            ..ApprovalQuestion::sample(true)
        };
        let mut output = Vec::new();
        converse(&mut "n\n".as_bytes(), &mut output, &question).unwrap();
        let shown = String::from_utf8(output).unwrap();
        assert!(
            shown.contains(
                "! shell\\x1b[8m: run `ls\\r\\x1b[2Kecho safe` - DANGEROUS: matches \
                 `\\x1b]0;title\\x07`\\u{202e}. Allow it?"
            ),
            "{shown:?}"
        );
        assert!(shown.contains("a: always (every shell\\r call)"), "{shown:?}");
        assert!(
            !shown.contains(['\r', '\u{1b}', '\u{7}', '\u{202e}']),
            "{shown:?}"
        );
    }
}
