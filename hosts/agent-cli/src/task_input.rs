//! Where a task comes from: the TASK argument, `-f FILE`, or standard input (`-`, or a pipe
//! when no TASK is given), as codex's `exec` and Claude Code's `-p` take theirs.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;

/// The most a task may be: more is a mistake (a binary piped in), not a request.
const MAX_TASK_BYTES: u64 = 16 * 1024 * 1024;

/// The task arguments of `run` and `resume`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TaskInput {
    /// What the agent should do; `-` reads it from standard input (so does a pipe when no
    /// TASK is given). With --command, the command's arguments.
    pub task: Option<String>,
    /// Read the task from FILE.
    #[arg(short = 'f', long = "task-file", value_name = "FILE", conflicts_with = "task")]
    pub task_file: Option<PathBuf>,
}

/// Whether standard input may stand for a TASK that was not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipe {
    /// A pipe or file on standard input is the task (`run`).
    IsTheTask,
    /// Only `-` reads standard input (`resume`, where no task has a meaning of its own).
    OnlyWhenAsked,
}

impl TaskInput {
    /// The task, if one was given; an empty one is refused with what to do instead.
    pub fn read(&self, pipe: Pipe) -> Result<Option<String>, String> {
        let task = match (&self.task_file, self.task.as_deref()) {
            (Some(file), _) => Some(read_file(file)?),
            (None, Some("-")) => Some(read_stdin()?),
            (None, Some(task)) => Some(task.to_string()),
            (None, None) if pipe == Pipe::IsTheTask && stdin_holds_a_task() => {
                eprintln!("agent-host: reading the task from standard input (end it with Ctrl-D)");
                Some(read_stdin()?)
            }
            (None, None) => None,
        };
        match task {
            Some(task) if task.trim().is_empty() => Err(format!(
                "the task is empty{}: say what the agent should do, as an argument \
                 (agent-host run \"fix the failing test\"), with -f FILE, or on standard input",
                self.origin()
            )),
            other => Ok(other),
        }
    }

    fn origin(&self) -> String {
        match (&self.task_file, self.task.as_deref()) {
            (Some(file), _) => format!(" ({} has nothing in it)", file.display()),
            (None, Some("-")) | (None, None) => " (standard input gave nothing)".to_string(),
            (None, Some(_)) => String::new(),
        }
    }
}

/// Whether standard input is a pipe or a file: something that ends. A terminal is a person,
/// and a socket (some process managers' stdin) may never close, so neither is read unasked.
fn stdin_holds_a_task() -> bool {
    use std::os::unix::fs::FileTypeExt;
    !std::io::stdin().is_terminal()
        && std::fs::metadata("/dev/stdin").is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_file())
}

fn read_file(file: &std::path::Path) -> Result<String, String> {
    let opened = std::fs::File::open(file)
        .map_err(|e| format!("cannot read the task from {}: {e}", file.display()))?;
    read_bounded(opened).map_err(|e| format!("cannot read the task from {}: {e}", file.display()))
}

fn read_stdin() -> Result<String, String> {
    read_bounded(std::io::stdin().lock())
        .map_err(|e| format!("cannot read the task from standard input: {e}"))
}

fn read_bounded(reader: impl Read) -> Result<String, String> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_TASK_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_TASK_BYTES {
        return Err(format!("it is longer than {} MiB", MAX_TASK_BYTES / 1024 / 1024));
    }
    String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string())
}
