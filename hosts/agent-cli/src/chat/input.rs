//! What the user types, read on its own task so it arrives while the agent works. On a
//! terminal: raw mode (keys one by one, Ctrl-C as a key rather than a signal) and
//! bracketed paste; otherwise lines from stdin, and Ctrl-C as the signal it is.

use crossterm::event::{Event, EventStream, KeyEvent};
use crossterm::{execute, terminal};
use futures_util::StreamExt;
use std::io::BufRead;
use tokio::sync::mpsc;

/// One piece of input.
#[derive(Debug)]
pub enum Input {
    Key(KeyEvent),
    Paste(String),
    /// The terminal changed size: redraw.
    Resize,
    /// A whole line (stdin is not a terminal).
    Line(String),
    /// SIGINT (from a terminal in raw mode, Ctrl-C arrives as a key instead).
    Interrupt,
    /// SIGTERM or SIGHUP: leave now (the terminal is restored on the way out).
    Terminate,
    /// No more input will come.
    Closed,
}

/// Raw mode and bracketed paste while it lives; the terminal is restored on drop, also
/// when the chat returns early with an error.
pub struct RawTerminal(());

impl RawTerminal {
    pub fn enable() -> std::io::Result<Self> {
        terminal::enable_raw_mode()?;
        let guard = Self(());
        execute!(std::io::stdout(), crossterm::event::EnableBracketedPaste)?;
        Ok(guard)
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        let _ = execute!(
            std::io::stdout(),
            crossterm::event::DisableBracketedPaste,
            crossterm::cursor::Show
        );
        let _ = terminal::disable_raw_mode();
    }
}

/// Starts reading: key events from the terminal when `terminal` (raw mode must be on),
/// else lines from stdin.
pub fn spawn_reader(terminal: bool) -> mpsc::UnboundedReceiver<Input> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(forward_signals(tx.clone()));
    if terminal {
        watch_for_hangup(tx.clone());
        tokio::spawn(read_terminal(tx));
    } else {
        // A plain thread, not tokio's stdin: its blocking read would hold up the runtime's
        // shutdown until another line came.
        std::thread::spawn(move || read_lines(tx));
    }
    rx
}

/// Signals as input, so the chat closes its session and restores the terminal rather than
/// dying with the terminal left in raw mode.
async fn forward_signals(tx: mpsc::UnboundedSender<Input>) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut interrupt), Ok(mut terminate), Ok(mut hangup)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        return;
    };
    loop {
        let input = tokio::select! {
            _ = interrupt.recv() => Input::Interrupt,
            _ = terminate.recv() => Input::Terminate,
            _ = hangup.recv() => Input::Terminate,
        };
        if tx.send(input).is_err() {
            return;
        }
    }
}

/// Leaves when the terminal goes away. SIGHUP does not reach a chat outside the terminal's
/// session (or below a shell that ignores it), and crossterm's reader then spins on the dead
/// terminal instead of ending its stream (crossterm issue 793). `poll` with no requested
/// events reports only hangups and errors, so this never takes a key from the reader.
fn watch_for_hangup(tx: mpsc::UnboundedSender<Input>) {
    use nix::errno::Errno;
    use nix::poll::{PollFd, PollFlags, poll};
    use std::os::fd::AsFd;
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let gone = PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL;
        while !tx.is_closed() {
            let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::empty())];
            match poll(&mut fds, 1000u16) {
                Ok(0) | Err(Errno::EINTR) => {}
                Ok(_) if fds[0].revents().is_some_and(|r| r.intersects(gone)) => {
                    let _ = tx.send(Input::Terminate);
                    return;
                }
                Ok(_) => {}
                Err(_) => return,
            }
        }
    });
}

async fn read_terminal(tx: mpsc::UnboundedSender<Input>) {
    let mut events = EventStream::new();
    while let Some(event) = events.next().await {
        let input = match event {
            Ok(Event::Key(key)) => Input::Key(key),
            Ok(Event::Paste(text)) => Input::Paste(text),
            Ok(Event::Resize(..)) => Input::Resize,
            Ok(_) => continue,
            Err(_) => break,
        };
        if tx.send(input).is_err() {
            return;
        }
    }
    let _ = tx.send(Input::Closed);
}

fn read_lines(tx: mpsc::UnboundedSender<Input>) {
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if tx.send(Input::Line(line)).is_err() {
            return;
        }
    }
    let _ = tx.send(Input::Closed);
}
