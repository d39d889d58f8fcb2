//! Where a path leads once symbolic links are followed, even links whose target does not
//! exist yet. `canonicalize` gives up at a dangling link, and judging such a path by its own
//! name let `notes.txt -> denied/x` pass a deny rule while a write through it created
//! `denied/x`: opening with `O_CREAT` follows the link, so the check must too.

use std::ffi::OsString;
use std::io::{Error, ErrorKind};
use std::path::{Component, Path, PathBuf};

/// Links followed before giving up, as Linux's `MAXSYMLINKS`.
const MAX_LINKS: u32 = 40;

/// A step of a path still to resolve.
enum Step {
    Root,
    Parent,
    Name(OsString),
}

/// The canonical form of `path`, or, when part of it does not exist, the path the kernel
/// would reach: each existing component resolved (links followed, dangling ones too, to
/// where they point), the missing rest appended. The rest may not contain `..`: it names
/// directories that do not exist.
pub fn nearest_real_path(path: &Path) -> std::io::Result<PathBuf> {
    match std::fs::canonicalize(path) {
        Err(error) if error.kind() == ErrorKind::NotFound => follow(path),
        other => other,
    }
}

/// Resolves one component at a time, as path lookup does. The prefix resolved so far has
/// no links in it, so `..` may drop its last component.
fn follow(path: &Path) -> std::io::Result<PathBuf> {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    };
    let mut pending = steps(&absolute);
    let mut real = PathBuf::from("/");
    let mut links = 0;
    let mut missing = false;
    while let Some(step) = pending.pop() {
        match step {
            Step::Root => real = PathBuf::from("/"),
            Step::Parent if missing => {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    "`..` after a directory that does not exist",
                ));
            }
            Step::Parent => {
                real.pop();
            }
            Step::Name(name) if missing => real.push(name),
            Step::Name(name) => {
                let candidate = real.join(&name);
                match std::fs::symlink_metadata(&candidate) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        links += 1;
                        if links > MAX_LINKS {
                            return Err(Error::from_raw_os_error(nix::libc::ELOOP));
                        }
                        // The target replaces the link's name; a relative one starts in
                        // the link's directory, which `real` still is.
                        let target = std::fs::read_link(&candidate)?;
                        pending.extend(steps(&target));
                    }
                    Ok(meta) if !meta.is_dir() && !pending.is_empty() => {
                        return Err(Error::from_raw_os_error(nix::libc::ENOTDIR));
                    }
                    Ok(_) => real = candidate,
                    Err(error) if error.kind() == ErrorKind::NotFound => {
                        missing = true;
                        real = candidate;
                    }
                    Err(error) => return Err(error),
                }
            }
        }
    }
    Ok(real)
}

/// The steps of `path` in reverse, so the next one is popped off the end.
fn steps(path: &Path) -> Vec<Step> {
    let mut steps: Vec<Step> = path
        .components()
        .filter_map(|component| match component {
            Component::RootDir => Some(Step::Root),
            Component::ParentDir => Some(Step::Parent),
            Component::Normal(name) => Some(Step::Name(name.to_os_string())),
            Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    steps.reverse();
    steps
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

    use super::*;
    use std::os::unix::fs::symlink;

    fn top() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(top.join("work/denied")).unwrap();
        std::fs::create_dir_all(top.join("work/src")).unwrap();
        (dir, top)
    }

    #[test]
    fn a_dangling_link_resolves_to_its_target() {
        let (_dir, top) = top();
        let work = top.join("work");
        symlink("denied/x", work.join("notes.txt")).unwrap();
        symlink("notes.txt", work.join("chained")).unwrap();
        symlink("denied/new", work.join("drafts")).unwrap();
        symlink(top.join("work/denied/abs"), work.join("absolute")).unwrap();
        symlink("../work/denied/up", work.join("up")).unwrap();
        for (given, expected) in [
            ("notes.txt", "denied/x"),
            ("chained", "denied/x"),
            ("drafts/deeper/file", "denied/new/deeper/file"),
            ("absolute", "denied/abs"),
            ("up", "denied/up"),
            ("./src/../notes.txt", "denied/x"),
        ] {
            assert_eq!(
                nearest_real_path(&work.join(given)).unwrap(),
                work.join(expected),
                "{given}"
            );
        }
    }

    #[test]
    fn existing_and_new_paths_resolve_as_before() {
        let (_dir, top) = top();
        let work = top.join("work");
        symlink("denied", work.join("alias")).unwrap();
        assert_eq!(
            nearest_real_path(&work.join("alias")).unwrap(),
            work.join("denied")
        );
        assert_eq!(
            nearest_real_path(&work.join("new/dir/file")).unwrap(),
            work.join("new/dir/file")
        );
        let error = nearest_real_path(&work.join("new/../escape")).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
    }

    #[test]
    fn a_link_loop_and_a_file_used_as_a_directory_are_errors() {
        let (_dir, top) = top();
        let work = top.join("work");
        symlink("b", work.join("a")).unwrap();
        symlink("a", work.join("b")).unwrap();
        assert_eq!(
            follow(&work.join("a/file")).unwrap_err().raw_os_error(),
            Some(nix::libc::ELOOP)
        );
        std::fs::write(work.join("file"), "x").unwrap();
        assert!(nearest_real_path(&work.join("file/../denied/x")).is_err());
    }
}
