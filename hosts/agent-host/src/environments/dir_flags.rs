//! `--allow-dir` and `--deny-dir` as the boundary uses them. Both resolve a relative path
//! alike: locally from the shell's current directory, like `--cwd` and every other path on
//! the command line (a relative `--deny-dir` used to be read from `--cwd` while
//! `--allow-dir` was read from the shell's directory); over SSH from the remote working
//! directory, as the server resolves paths. A directory that does not exist is an error:
//! a misspelt `--deny-dir` would otherwise protect nothing, without a word.

use crate::environments::environment::Environment;
use agent_protocol::ports::EntryKind;
use std::path::{Path, PathBuf};

/// The directories of both flags, ready for the environment and its path boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagDirs {
    pub allow: Vec<PathBuf>,
    pub deny: Vec<PathBuf>,
}

impl FlagDirs {
    /// Local directories, made absolute from `current` (the shell's current directory) and
    /// checked to exist.
    pub fn local(allow: &[PathBuf], deny: &[PathBuf], current: &Path) -> Result<Self, String> {
        Ok(Self {
            allow: existing("--allow-dir", allow, current)?,
            deny: existing("--deny-dir", deny, current)?,
        })
    }

    /// Remote directories as given; [`check_remote`](Self::check_remote) checks them once
    /// connected.
    pub fn remote(allow: &[PathBuf], deny: &[PathBuf]) -> Self {
        Self {
            allow: allow.to_vec(),
            deny: deny.to_vec(),
        }
    }

    /// Checks that every directory exists on the remote host.
    pub async fn check_remote(&self, env: &dyn Environment) -> Result<(), String> {
        let flags = [("--allow-dir", &self.allow), ("--deny-dir", &self.deny)];
        for (flag, dirs) in flags {
            for dir in dirs {
                let shown = dir.display();
                match env.stat(&dir.to_string_lossy()).await {
                    Ok(stat) if stat.kind == EntryKind::Directory => {}
                    Ok(_) => return Err(format!("{flag} {shown}: not a directory")),
                    Err(error) => return Err(format!("{flag} {shown}: {error}")),
                }
            }
        }
        Ok(())
    }
}

fn existing(flag: &str, dirs: &[PathBuf], current: &Path) -> Result<Vec<PathBuf>, String> {
    dirs.iter()
        .map(|dir| {
            let absolute = current.join(dir);
            let shown = dir.display();
            match std::fs::metadata(&absolute) {
                Ok(meta) if meta.is_dir() => Ok(absolute),
                Ok(_) => Err(format!(
                    "{flag} {shown}: {} is not a directory",
                    absolute.display()
                )),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => Err(format!(
                    "{flag} {shown}: {} does not exist (a relative path is taken from the \
                     current directory)",
                    absolute.display()
                )),
                Err(error) => Err(format!("{flag} {shown}: {error}")),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

    use super::*;

    #[test]
    fn relative_dirs_of_both_flags_start_in_the_given_directory_and_must_exist() {
        let top = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(top.path().join("work/keys")).unwrap();
        std::fs::create_dir_all(top.path().join("cache")).unwrap();
        std::fs::write(top.path().join("file"), "x").unwrap();
        let dirs = FlagDirs::local(&["cache".into()], &["work/keys".into()], top.path()).unwrap();
        assert_eq!(dirs.allow, [top.path().join("cache")]);
        assert_eq!(dirs.deny, [top.path().join("work/keys")]);

        let missing = FlagDirs::local(&[], &["keys".into()], top.path()).unwrap_err();
        assert!(
            missing.starts_with("--deny-dir keys: ") && missing.contains("does not exist"),
            "{missing}"
        );
        let file = FlagDirs::local(&["file".into()], &[], top.path()).unwrap_err();
        assert!(file.starts_with("--allow-dir file: ") && file.contains("not a directory"));
    }
}
