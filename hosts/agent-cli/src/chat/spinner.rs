//! The status line while the agent works: a spinner, what it is doing, and for how long.

use super::style::Palette;
use std::time::Duration;

const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const FRAME_TIME: Duration = Duration::from_millis(80);

/// `⠋ thinking 3s`: the frame follows the time since the agent started working, so the
/// spinner turns at a steady pace however often the line is redrawn.
pub fn status_line(label: &str, phase: Duration, busy: Duration, palette: &Palette) -> String {
    let frame = FRAMES[(busy.as_millis() / FRAME_TIME.as_millis()) as usize % FRAMES.len()];
    format!(
        "{} {label} {}  {}",
        palette.cyan(frame),
        palette.dim(&format!("{}s", phase.as_secs())),
        palette.dim("(Esc or Ctrl-C to cancel)")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_shows_frame_label_and_whole_seconds() {
        let line = status_line(
            "shell cargo test",
            Duration::from_millis(12_400),
            Duration::from_millis(80),
            &Palette::plain(),
        );
        assert_eq!(line, "⠙ shell cargo test 12s  (Esc or Ctrl-C to cancel)");
    }
}
