//! A queue password given on the command line (`--queue redis://:PASSWORD@host`) blanked
//! where every local user can read it: `/proc/PID/cmdline` shows the process's own argument
//! area, which is rewritten in place once the arguments are parsed (as `setproctitle` does;
//! through `/proc/self/mem`, so no raw pointer is needed). Until then, at the very start of
//! the process, it is visible: `$AGENT_HOST_QUEUE` keeps it off the command line
//! altogether.

use std::fs::OpenOptions;
use std::io;
use std::ops::Range;
use std::os::unix::fs::FileExt;

/// Blanks the secret parts of the queue address `url` wherever the command line holds it;
/// a failure is logged (the address then stays visible to local users, as before).
pub fn hide_queue_password(url: &str) {
    if let Err(error) = blank_in_arguments(url) {
        tracing::warn!(%error, "could not blank the queue's password in the process list");
    }
}

/// The byte ranges of `url` that are secret: the credentials before `@`, and a Unix socket
/// address's query (`?pass=...&user=...`), as [`super::queue::shown`] leaves them out.
fn secret_ranges(url: &str) -> Vec<Range<usize>> {
    let query = url.find('?');
    let address = &url[..query.unwrap_or(url.len())];
    let mut ranges = Vec::new();
    if let (Some(scheme), Some(at)) = (address.find("://"), address.rfind('@'))
        && at > scheme + 3
    {
        ranges.push(scheme + 3..at);
    }
    if let Some(query) = query.filter(|q| q + 1 < url.len()) {
        ranges.push(query + 1..url.len());
    }
    ranges
}

/// `area` with the secret parts of every occurrence of `url` replaced by `*`; `None` when
/// nothing was replaced.
fn blanked(area: &[u8], url: &str) -> Option<Vec<u8>> {
    let ranges = secret_ranges(url);
    let needle = url.as_bytes();
    if ranges.is_empty() || needle.is_empty() {
        return None;
    }
    let mut out = area.to_vec();
    let mut changed = false;
    let mut from = 0;
    while let Some(found) = out[from..].windows(needle.len()).position(|w| w == needle) {
        let start = from + found;
        for range in &ranges {
            out[start + range.start..start + range.end].fill(b'*');
        }
        changed = true;
        from = start + needle.len();
    }
    changed.then_some(out)
}

fn blank_in_arguments(url: &str) -> io::Result<()> {
    let (start, end) = argument_area()?;
    let Ok(length) = usize::try_from(end.saturating_sub(start)) else {
        return Ok(());
    };
    let memory = OpenOptions::new().read(true).write(true).open("/proc/self/mem")?;
    let mut area = vec![0; length];
    memory.read_exact_at(&mut area, start)?;
    if let Some(replaced) = blanked(&area, url) {
        memory.write_all_at(&replaced, start)?;
    }
    Ok(())
}

/// Where the process's arguments lie in its memory: `arg_start` and `arg_end`, fields 48
/// and 49 of `/proc/self/stat`.
fn argument_area() -> io::Result<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    let unexpected = || io::Error::new(io::ErrorKind::InvalidData, "unexpected /proc/self/stat");
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let after_name = stat.rfind(')').map(|at| &stat[at + 1..]).ok_or_else(unexpected)?;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |number: usize| -> io::Result<u64> {
        fields
            .get(number - 3)
            .and_then(|f| f.parse().ok())
            .ok_or_else(unexpected)
    };
    Ok((field(48)?, field(49)?))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_the_credentials_of_a_queue_address_are_blanked() {
        let area = b"agent-host\0worker\0--queue\0redis://:s3cret@queue:6379/0\0--name\0w1\0";
        let out = blanked(area, "redis://:s3cret@queue:6379/0").unwrap();
        assert_eq!(
            out,
            b"agent-host\0worker\0--queue\0redis://*******@queue:6379/0\0--name\0w1\0"
        );
        let joined = b"x\0--queue=redis+unix:///tmp/r.sock?pass=pw&db=1\0";
        let out = blanked(joined, "redis+unix:///tmp/r.sock?pass=pw&db=1").unwrap();
        assert_eq!(out, b"x\0--queue=redis+unix:///tmp/r.sock?************\0");
        assert_eq!(blanked(area, "redis://queue:6379/0"), None, "nothing secret");
        assert_eq!(
            blanked(b"x\0y\0", "redis://:pw@h"),
            None,
            "not on the command line"
        );
    }

    #[test]
    fn the_argument_area_is_found() {
        let (start, end) = argument_area().unwrap();
        assert!(start > 0 && end > start);
    }
}
