//! `agent-host chat` in a real terminal: a tmux server of its own (its own socket), one
//! session of a fixed size running the chat, keys sent with `send-keys`, the screen read
//! with `capture-pane`. Waits poll the screen with a generous deadline.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a wait for the screen gives up after. It guards against a hang only: the
/// longest wait, for a reply streamed slowly on purpose, takes about 8 s.
const DEADLINE: Duration = Duration::from_secs(90);
/// What the pane prints once the chat has exited.
pub const EXITED: &str = "chat exited with";
/// Then the terminal's line discipline, to tell whether raw mode was undone.
pub const CANONICAL: &str = "terminal mode: icanon";

/// Whether tmux can be run here; tests print "skipped: tmux not installed" and return
/// otherwise (`scripts/ensure-tmux.sh` installs it).
pub fn available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A tmux server running `agent-host chat` in one pane; killed on drop.
pub struct ChatPane {
    socket: String,
}

impl ChatPane {
    /// Starts `agent-host chat --cwd work` with exactly `env` (nothing of the test's own
    /// environment leaks in but PATH), in a 120x40 terminal. When the chat exits, the pane
    /// shows its exit status ("chat exited with N") and stays.
    pub fn start(work: &Path, env: &[(&str, String)], args: &[&str]) -> Self {
        Self::start_via(work, env, args, "")
    }

    /// Like [`ChatPane::start`], with the chat started through `launcher` (e.g. `setsid`).
    pub fn start_via(work: &Path, env: &[(&str, String)], args: &[&str], launcher: &str) -> Self {
        let work = work.display().to_string();
        let mut command = vec!["chat", "--cwd", &work];
        command.extend_from_slice(args);
        Self::start_command(env, &command, launcher)
    }

    /// `agent-host ARGS` (any command, e.g. `run`) in the pane, like [`ChatPane::start_via`].
    pub fn start_command(env: &[(&str, String)], args: &[&str], launcher: &str) -> Self {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let socket = format!(
            "agent-host-chat-test-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::SeqCst)
        );
        let mut vars = vec![
            ("PATH", std::env::var("PATH").unwrap_or_default()),
            ("TERM", "tmux-256color".to_string()),
            ("LC_ALL", "C.UTF-8".to_string()),
        ];
        vars.extend(env.iter().cloned());
        let mut command = String::from("env -i");
        for (name, value) in &vars {
            command.push_str(&format!(" {name}={}", quote(value)));
        }
        command.push_str(&format!(
            " {launcher} {}",
            quote(env!("CARGO_BIN_EXE_agent-host"))
        ));
        for arg in args {
            command.push_str(&format!(" {}", quote(arg)));
        }
        command.push_str(&format!(
            "; echo \"{EXITED} $?\"; echo \"terminal mode: $(stty -a | grep -o -- '-\\?icanon')\"; sleep 600"
        ));
        let pane = Self { socket };
        let status = pane
            .tmux()
            .args(["new-session", "-d", "-s", "chat", "-x", "120", "-y", "40"])
            .arg(command)
            .status()
            .expect("tmux runs");
        assert!(status.success(), "tmux new-session failed");
        pane
    }

    fn tmux(&self) -> Command {
        let mut command = Command::new("tmux");
        // -u: UTF-8 whatever the test's locale; -f /dev/null: no user configuration.
        command.args(["-u", "-f", "/dev/null", "-L", &self.socket]);
        command
    }

    /// Types `text` literally (no key names).
    pub fn type_text(&self, text: &str) {
        let status = self
            .tmux()
            .args(["send-keys", "-t", "chat", "-l", text])
            .status()
            .expect("tmux runs");
        assert!(status.success());
    }

    /// Presses keys by tmux's names: `Enter`, `C-c`, `C-d`, `Up`...
    pub fn press(&self, key: &str) {
        let status = self
            .tmux()
            .args(["send-keys", "-t", "chat", key])
            .status()
            .expect("tmux runs");
        assert!(status.success());
    }

    /// Pastes `text` as a terminal does: bracketed (the chat asks for it), each line end
    /// sent as CR.
    pub fn paste(&self, text: &str) {
        let status = self
            .tmux()
            .args(["set-buffer", "-b", "pasted", "--", text])
            .status()
            .expect("tmux runs");
        assert!(status.success());
        let status = self
            .tmux()
            .args(["paste-buffer", "-p", "-d", "-b", "pasted", "-t", "chat"])
            .status()
            .expect("tmux runs");
        assert!(status.success());
    }

    /// Types a line and presses Enter.
    pub fn enter(&self, line: &str) {
        self.type_text(line);
        self.press("Enter");
    }

    /// The screen and its scrollback as text, wrapped lines joined; with `escapes`, the
    /// colours and attributes as escape sequences.
    pub fn capture(&self, escapes: bool) -> String {
        let mut command = self.tmux();
        command.args(["capture-pane", "-p", "-J", "-S", "-", "-t", "chat"]);
        if escapes {
            command.arg("-e");
        }
        let output = command.output().expect("tmux runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Polls the screen until `done` holds for it; panics with the screen after the deadline.
    pub async fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            let screen = self.capture(false);
            if done(&screen) {
                return screen;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "timed out after {DEADLINE:?} waiting for {what}; the screen:\n{screen}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until the screen contains `text`.
    pub async fn wait_for(&self, text: &str) -> String {
        self.wait_until(&format!("{text:?}"), |screen| screen.contains(text))
            .await
    }

    /// Waits until the chat is idle at its prompt: the prompt row shows the idle hint (while
    /// the agent works, the spinner line and another hint are shown instead).
    pub async fn wait_for_prompt(&self) -> String {
        self.wait_until("the idle prompt", |screen| {
            prompt_line(screen).starts_with(IDLE_PROMPT)
        })
        .await
    }

    /// The process id of the chat (the pane's shell's child).
    pub fn chat_pid(&self) -> u32 {
        let output = self
            .tmux()
            .args(["display-message", "-p", "-t", "chat", "#{pane_pid}"])
            .output()
            .expect("tmux runs");
        let shell = String::from_utf8_lossy(&output.stdout).trim().to_string();
        let children = Command::new("pgrep")
            .args(["-P", &shell])
            .output()
            .expect("pgrep runs");
        String::from_utf8_lossy(&children.stdout)
            .lines()
            .next()
            .and_then(|pid| pid.trim().parse().ok())
            .expect("the chat runs in the pane")
    }

    /// Waits until the chat has exited; its exit status.
    pub async fn wait_for_exit(&self) -> i32 {
        let screen = self.wait_for(EXITED).await;
        let line = screen.lines().find(|l| l.starts_with(EXITED)).unwrap_or_default();
        line[EXITED.len()..].trim().parse().unwrap_or(-1)
    }
}

impl ChatPane {
    /// Closes the terminal: the tmux server and its panes go away.
    pub fn kill_server(&self) {
        let _ = self.tmux().arg("kill-server").status();
    }
}

impl Drop for ChatPane {
    fn drop(&mut self) {
        self.kill_server();
    }
}

/// The prompt row of an idle chat with nothing typed: `>` and the hint.
pub const IDLE_PROMPT: &str = "> / commands";

/// The prompt's (last) row: the one above the status line, which is the last.
pub fn prompt_line(screen: &str) -> &str {
    screen
        .lines()
        .rev()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .nth(1)
        .unwrap_or_default()
}

/// The last line with something on it (the status line while the chat runs).
pub fn last_line(screen: &str) -> &str {
    screen
        .lines()
        .rev()
        .map(str::trim_end)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
}

/// Single quotes for `sh`.
fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}
