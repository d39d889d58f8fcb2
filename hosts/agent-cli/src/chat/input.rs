//! What the user types, read on its own task so it arrives while the agent works. On a
//! terminal: raw mode (keys one by one, Ctrl-C as a key rather than a signal) and
//! bracketed paste; otherwise lines from stdin, and Ctrl-C as the signal it is.

use crossterm::event::{Event, EventStream, KeyEvent};
use crossterm::{execute, terminal};
use futures_util::StreamExt;
use std::io::BufRead;
use tokio::sync::{mpsc, watch};

/// One piece of input.
#[derive(Debug)]
pub enum Input {
    Key(KeyEvent),
    Paste(String),
    /// The terminal changed size: redraw.
    Resize,
    /// The terminal gained (true) or lost the focus.
    Focus(bool),
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
        execute!(
            std::io::stdout(),
            crossterm::event::EnableBracketedPaste,
            crossterm::event::EnableFocusChange
        )?;
        Ok(guard)
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        let _ = execute!(
            std::io::stdout(),
            crossterm::event::DisableBracketedPaste,
            crossterm::event::DisableFocusChange,
            crossterm::cursor::Show
        );
        let _ = terminal::disable_raw_mode();
    }
}

/// Lends the terminal to another program (`$EDITOR`, the pager): while paused, the reader
/// stops reading keys, so the program gets every one.
pub struct InputControl {
    paused: watch::Sender<bool>,
    /// Told by the reader once it has let go of the terminal.
    released: tokio::sync::Mutex<mpsc::UnboundedReceiver<()>>,
}

impl InputControl {
    /// Stops reading keys (and waits until the reader has stopped).
    pub async fn pause(&self) {
        let _ = self.paused.send(true);
        let _ = tokio::time::timeout(
            std::time::Duration::from_secs(2),
            self.released.lock().await.recv(),
        )
        .await;
    }

    pub fn resume(&self) {
        let _ = self.paused.send(false);
    }
}

/// Starts reading: key events from the terminal when `terminal` (raw mode must be on),
/// else lines from stdin.
pub fn spawn_reader(terminal: bool) -> (mpsc::UnboundedReceiver<Input>, InputControl) {
    let (tx, rx) = mpsc::unbounded_channel();
    let (paused, paused_rx) = watch::channel(false);
    let (released_tx, released) = mpsc::unbounded_channel();
    let control = InputControl {
        paused,
        released: tokio::sync::Mutex::new(released),
    };
    tokio::spawn(forward_signals(tx.clone(), paused_rx.clone()));
    if terminal {
        watch_for_hangup(tx.clone());
        tokio::spawn(read_terminal(tx, paused_rx, released_tx));
    } else {
        // A plain thread, not tokio's stdin: its blocking read would hold up the runtime's
        // shutdown until another line came.
        std::thread::spawn(move || read_lines(tx));
    }
    (rx, control)
}

/// Signals as input, so the chat closes its session and restores the terminal rather than
/// dying with the terminal left in raw mode.
async fn forward_signals(tx: mpsc::UnboundedSender<Input>, paused: watch::Receiver<bool>) {
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
            // Ctrl-C in the pager or the editor is theirs (they share our process group).
            _ = interrupt.recv() => match *paused.borrow() {
                true => continue,
                false => Input::Interrupt,
            },
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

async fn read_terminal(
    tx: mpsc::UnboundedSender<Input>,
    mut paused: watch::Receiver<bool>,
    released: mpsc::UnboundedSender<()>,
) {
    loop {
        if *paused.borrow_and_update() {
            if paused.changed().await.is_err() {
                return;
            }
            continue;
        }
        // A new stream after each pause: dropping the old one stops its reading thread.
        let mut events = EventStream::new();
        let closed = loop {
            let event = tokio::select! {
                event = events.next() => event,
                changed = paused.changed() => match changed {
                    Ok(()) => break false,
                    // The chat is gone.
                    Err(_) => return,
                },
            };
            let Some(event) = event else { break true };
            let input = match event {
                Ok(Event::Key(key)) => Input::Key(key),
                Ok(Event::Paste(text)) => Input::Paste(text),
                Ok(Event::Resize(..)) => Input::Resize,
                Ok(Event::FocusGained) => Input::Focus(true),
                Ok(Event::FocusLost) => Input::Focus(false),
                Ok(_) => continue,
                Err(_) => break true,
            };
            if tx.send(input).is_err() {
                return;
            }
        };
        drop(events);
        if closed {
            let _ = tx.send(Input::Closed);
            return;
        }
        let _ = released.send(());
    }
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
