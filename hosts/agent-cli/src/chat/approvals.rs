//! Approvals in the chat: the session's approval policy asks through [`ChatPrompt`], which
//! hands the question to the chat loop; the question is shown above the prompt and the
//! next line typed answers it (`y`, `a`, `n [reason]`) instead of steering.

use crate::terminal_prompt::parse_answer;
use crate::terminal_text::one_line;
use agent_host::approval::{ApprovalAnswer, ApprovalPrompt, ApprovalQuestion};
use async_trait::async_trait;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// A question waiting for the user, and where the answer goes.
pub struct PendingQuestion {
    pub question: ApprovalQuestion,
    reply: oneshot::Sender<ApprovalAnswer>,
}

impl PendingQuestion {
    /// What is asked about: `write_file: write hello.py`. Escaped, like every part of the
    /// question that comes from the model's call, so control characters in a command
    /// cannot redraw the line as another command.
    pub fn subject(&self) -> String {
        format!(
            "{}: {}",
            one_line(&self.question.tool_name),
            one_line(&self.question.summary)
        )
    }

    /// The question with its answers, on one line.
    pub fn line(&self) -> String {
        let question = &self.question;
        match (&question.danger, &question.unsandboxed, &question.always) {
            // The warning first: the row is cut at the terminal's width.
            (why, Some(refusal), _) => format!(
                "! RUN WITHOUT THE SANDBOX, with all your rights?{} {}: the sandbox may have \
                 refused it ({})  y yes, this once · n no",
                why.as_ref()
                    .map(|why| format!(" DANGEROUS ({})", one_line(why)))
                    .unwrap_or_default(),
                self.subject(),
                one_line(refusal)
            ),
            (Some(why), None, _) => format!(
                "! {} is DANGEROUS ({}): allow it?  y yes, this once · n no",
                self.subject(),
                one_line(why)
            ),
            (None, None, Some(always)) => format!(
                "? allow {}?  y yes · a always ({}) · n no",
                self.subject(),
                one_line(&always.to_string())
            ),
            (None, None, None) => format!("? allow {}?  y yes · n no", self.subject()),
        }
    }

    /// Whether the session stopped waiting (its input was interrupted).
    pub fn withdrawn(&self) -> bool {
        self.reply.is_closed()
    }

    /// Answers with `line`, or gives the question back when the line is no answer.
    pub fn answer(self, line: &str) -> Result<ApprovalAnswer, Box<Self>> {
        match parse_answer(line, self.question.always.is_some()) {
            Some(answer) => {
                let _ = self.reply.send(answer.clone());
                Ok(answer)
            }
            None => Err(Box::new(self)),
        }
    }

    /// Answers with `answer` (a client's choice, over ACP).
    pub fn reply(self, answer: ApprovalAnswer) {
        let _ = self.reply.send(answer);
    }

    /// Refuses without asking further (the input ended, the chat is quitting).
    pub fn refuse(self, reason: &str) {
        let _ = self.reply.send(ApprovalAnswer::Deny {
            reason: Some(reason.to_string()),
        });
    }

    /// What to type, for a line that was not understood.
    pub fn keys(&self) -> &'static str {
        if self.question.always.is_some() {
            "answer y, a or n (n <reason> to say why)"
        } else {
            "answer y or n (n <reason> to say why)"
        }
    }
}

/// The approval prompt of the chat: one question at a time (subagents ask concurrently and
/// wait their turn), each sent to the chat loop.
pub struct ChatPrompt {
    questions: mpsc::UnboundedSender<PendingQuestion>,
    turn: tokio::sync::Mutex<()>,
}

/// A prompt for the policy, and the questions it will send.
pub fn chat_prompt() -> (Arc<ChatPrompt>, mpsc::UnboundedReceiver<PendingQuestion>) {
    let (questions, receiver) = mpsc::unbounded_channel();
    let prompt = ChatPrompt {
        questions,
        turn: tokio::sync::Mutex::new(()),
    };
    (Arc::new(prompt), receiver)
}

#[async_trait]
impl ApprovalPrompt for ChatPrompt {
    async fn ask(&self, question: &ApprovalQuestion) -> ApprovalAnswer {
        let _turn = self.turn.lock().await;
        let (reply, answer) = oneshot::channel();
        let pending = PendingQuestion {
            question: question.clone(),
            reply,
        };
        if self.questions.send(pending).is_err() {
            return ApprovalAnswer::Deny {
                reason: Some("the chat has ended".to_string()),
            };
        }
        answer.await.unwrap_or(ApprovalAnswer::Deny {
            reason: Some("the chat ended before the user answered".to_string()),
        })
    }
}

/// How an answer is recorded in the transcript.
pub fn describe(answer: &ApprovalAnswer) -> String {
    match answer {
        ApprovalAnswer::Once => "allowed once".to_string(),
        ApprovalAnswer::Always => "allowed always".to_string(),
        ApprovalAnswer::Deny { reason: None } => "denied".to_string(),
        ApprovalAnswer::Deny { reason: Some(reason) } => format!("denied: {reason}"),
        ApprovalAnswer::Never { reason: None } => "denied always".to_string(),
        ApprovalAnswer::Never { reason: Some(reason) } => format!("denied always: {reason}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_typed_line_answers_the_pending_question() {
        let (prompt, mut questions) = chat_prompt();
        let asking = tokio::spawn(async move { prompt.ask(&ApprovalQuestion::sample(true)).await });
        let pending = questions.recv().await.unwrap();
        assert_eq!(
            pending.line(),
            "? allow write_file: write a.txt?  y yes · a always (every write_file call) · n no"
        );
        let pending = pending.answer("maybe").err().unwrap();
        assert_eq!(pending.keys(), "answer y, a or n (n <reason> to say why)");
        assert_eq!(pending.answer("a").ok(), Some(ApprovalAnswer::Always));
        assert_eq!(asking.await.unwrap(), ApprovalAnswer::Always);
    }

    /// A command whose carriage return and erase-line sequence would leave only
    /// `echo safe` on the question's row.
    #[tokio::test]
    async fn a_command_cannot_rewrite_the_question_with_control_characters() {
        use agent_host::approval::AlwaysScope;
        let (prompt, mut questions) = chat_prompt();
        let question = ApprovalQuestion {
            tool_name: "shell".into(),
            summary: "run `ls\r\u{1b}[2Kecho safe`".into(),
            always: Some(AlwaysScope::Tool("shell\u{9b}2K".into())),
            ..ApprovalQuestion::sample(true)
        };
        let asking = tokio::spawn(async move { prompt.ask(&question).await });
        let pending = questions.recv().await.unwrap();
        assert_eq!(
            pending.line(),
            "? allow shell: run `ls\\r\\x1b[2Kecho safe`?  y yes · a always (every shell\\u{9b}2K call) · n no"
        );
        let dangerous = PendingQuestion {
            question: ApprovalQuestion {
                danger: Some("it\u{1b}[2K\u{202e}".into()),
                ..pending.question.clone()
            },
            reply: oneshot::channel().0,
        };
        assert_eq!(
            dangerous.line(),
            "! shell: run `ls\\r\\x1b[2Kecho safe` is DANGEROUS (it\\x1b[2K\\u{202e}): allow it?  \
             y yes, this once · n no"
        );
        let rerun = PendingQuestion {
            question: ApprovalQuestion {
                unsandboxed: Some("read-only (network off): x: Permission denied\r".into()),
                always: None,
                ..pending.question.clone()
            },
            reply: oneshot::channel().0,
        };
        assert_eq!(
            rerun.line(),
            "! RUN WITHOUT THE SANDBOX, with all your rights? shell: run `ls\\r\\x1b[2Kecho safe`: \
             the sandbox may have refused it (read-only (network off): x: Permission denied\\r)  \
             y yes, this once · n no"
        );
        assert_eq!(rerun.keys(), "answer y or n (n <reason> to say why)");
        assert_eq!(
            pending.answer("n").ok(),
            Some(ApprovalAnswer::Deny { reason: None })
        );
        assert_eq!(asking.await.unwrap(), ApprovalAnswer::Deny { reason: None });
    }

    #[tokio::test]
    async fn an_abandoned_question_is_seen_as_withdrawn() {
        let (prompt, mut questions) = chat_prompt();
        let asking = tokio::spawn(async move { prompt.ask(&ApprovalQuestion::sample(false)).await });
        let pending = questions.recv().await.unwrap();
        asking.abort();
        let _ = asking.await;
        assert!(pending.withdrawn());
    }
}
