//! Running the `rg` command line and reading what it printed.

use anyhow::Context as _;
use std::process::{Command, Stdio};

const MISSING: &str = "rg (Debian package ripgrep) is not installed: run scripts/ensure-bench-tools.sh";

pub fn ensure_installed() -> anyhow::Result<()> {
    let out = Command::new("rg")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .context(MISSING)?;
    anyhow::ensure!(out.status.success(), "`rg --version` failed; {MISSING}");
    Ok(())
}

/// rg's whole stdout, read from a pipe. stdin is closed so rg never searches it instead of
/// the tree, and any exit but 0 (1 = nothing found, 2 = an error such as an unreadable file)
/// fails: the comparison is only fair when rg searched everything.
pub fn run(args: &[String]) -> anyhow::Result<Vec<u8>> {
    let out = Command::new("rg")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .context(MISSING)?;
    anyhow::ensure!(
        out.status.success(),
        "`rg {}` exited with {}: {}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    Ok(out.stdout)
}

/// One key per output line: the path relative to `tree` and, for `-n` output
/// (`PATH:LINE:TEXT`), the line number, in the form our results are keyed by.
pub fn keys(stdout: &[u8], tree: &str, with_line: bool) -> anyhow::Result<Vec<String>> {
    let prefix = format!("{}/", tree.trim_end_matches('/'));
    let text = std::str::from_utf8(stdout).context("rg printed a path or line that is not UTF-8")?;
    text.lines()
        .map(|line| {
            let relative = line
                .strip_prefix(&prefix)
                .with_context(|| format!("rg printed {line:?}, which is not under {prefix}"))?;
            if !with_line {
                return Ok(relative.to_string());
            }
            // The tree's paths hold no ':', so the first two separate path and line number.
            let mut fields = relative.splitn(3, ':');
            match (fields.next(), fields.next(), fields.next()) {
                (Some(path), Some(number), Some(_)) if number.parse::<u32>().is_ok() => {
                    Ok(format!("{path}:{number}"))
                }
                _ => anyhow::bail!("rg printed {line:?}, not PATH:LINE:TEXT"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_lines_become_relative_keys() {
        let out = b"/t/a/b.rs:12:impl Iterator for X { // a: b\n/t/c.rs:3:x\n";
        assert_eq!(keys(out, "/t", true).unwrap(), ["a/b.rs:12", "c.rs:3"]);
        assert_eq!(keys(b"/t/a.rs\n", "/t/", false).unwrap(), ["a.rs"]);
        assert!(keys(b"/elsewhere/a.rs\n", "/t", false).is_err());
        assert!(keys(b"/t/a.rs:x:y\n", "/t", true).is_err());
    }
}
