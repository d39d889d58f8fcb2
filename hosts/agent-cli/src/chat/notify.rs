//! Telling the user that an input ended or a question waits, when the terminal is not in
//! front of them: the terminal reports focus changes (asked for when the chat starts), and
//! only after it said the focus was lost does the chat ring. `AGENT_HOST_NOTIFY` picks how:
//! `bell` (the default: BEL, which terminals turn into a sound, a flash or an urgent
//! window), `osc9` (a desktop notification with the text, in terminals that show OSC 9:
//! iTerm2, WezTerm, kitty, ghostty, Windows Terminal), or `off`.

use std::io::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Channel {
    Bell,
    Osc9,
    Off,
}

#[derive(Debug)]
pub struct Notifier {
    channel: Channel,
    /// Whether the terminal has the focus: true until it says otherwise (a terminal that
    /// does not report focus is never rung at).
    pub focused: bool,
}

pub const NOTIFY_VAR: &str = "AGENT_HOST_NOTIFY";

impl Notifier {
    pub fn from_env() -> Self {
        let channel = match std::env::var(NOTIFY_VAR).as_deref().map(str::trim) {
            Ok("off" | "none" | "0") => Channel::Off,
            Ok("osc9") => Channel::Osc9,
            Ok("bell") | Ok("") | Err(_) => Channel::Bell,
            Ok(other) => {
                tracing::warn!("{NOTIFY_VAR}={other:?} is not bell, osc9 or off; ringing the bell");
                Channel::Bell
            }
        };
        Self {
            channel,
            focused: true,
        }
    }

    /// Rings when the terminal is not focused.
    pub fn notify(&self, text: &str) {
        if self.focused {
            return;
        }
        let bytes = match self.channel {
            Channel::Off => return,
            Channel::Bell => "\u{7}".to_string(),
            // The text is ours, never the model's: no escape can ride in it.
            Channel::Osc9 => format!("\u{1b}]9;{text}\u{7}"),
        };
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(bytes.as_bytes());
        let _ = out.flush();
    }
}
