//! Workspace paths for plain-export components. The host preopens each directory a component
//! may use under its workspace-relative path (`.` for the workspace root, `docs` for `docs/`),
//! so a path such as `docs/api/index.md` is opened in the preopen whose name is its longest
//! directory prefix, with the rest of the path relative to that directory.
//!
//! Absolute paths and `..` components are passed on as given rather than rejected here: the
//! host is the one that must refuse them, and the example components exist to show that it
//! does.

use std::fmt;

#[cfg(target_arch = "wasm32")]
mod wasi;
#[cfg(target_arch = "wasm32")]
pub use wasi::{hard_link, preopen_names, read, symlink, write};

/// Where a path is opened: a preopen (its index in the list given to [`resolve`]) and the
/// path relative to it.
#[derive(Debug, PartialEq, Eq)]
pub struct Resolved {
    pub preopen: usize,
    pub relative: String,
}

/// Why a file could not be read or written.
#[derive(Debug, PartialEq, Eq)]
pub enum FsError {
    /// Nothing exists at the path; the message names it.
    NotFound(String),
    /// Any other failure; the message names the path and the cause.
    Failed(String),
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FsError::NotFound(message) | FsError::Failed(message) => f.write_str(message),
        }
    }
}

/// The components of a path that name something: empty and `.` components are dropped
/// (`./docs//a.md` is `docs/a.md`), `..` is kept.
fn components(path: &str) -> Vec<&str> {
    path.split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect()
}

/// Picks the preopen for `path` among `preopens` (their names, in the host's order).
pub fn resolve<S: AsRef<str>>(preopens: &[S], path: &str) -> Result<Resolved, String> {
    if path.is_empty() {
        return Err("the path is empty".to_string());
    }
    let absolute = path.starts_with('/');
    let parts = components(path);
    let mut best: Option<(usize, usize)> = None;
    for (index, name) in preopens.iter().enumerate() {
        let name = name.as_ref();
        if name.starts_with('/') != absolute {
            continue;
        }
        let prefix = components(name);
        let longer = best.is_none_or(|(_, matched)| prefix.len() > matched);
        if longer && parts.starts_with(&prefix) {
            best = Some((index, prefix.len()));
        }
    }
    if let Some((preopen, matched)) = best {
        let rest = &parts[matched..];
        let relative = if rest.is_empty() {
            ".".to_string()
        } else {
            rest.join("/")
        };
        return Ok(Resolved { preopen, relative });
    }
    // No preopen name is absolute under the workspace convention; the root (or any
    // directory, if the root was not given) receives the path unchanged so that the host's
    // refusal is what the caller sees.
    if absolute {
        let root = preopens
            .iter()
            .position(|name| components(name.as_ref()).is_empty() && !name.as_ref().starts_with('/'));
        if let Some(preopen) = root.or(if preopens.is_empty() { None } else { Some(0) }) {
            return Ok(Resolved {
                preopen,
                relative: path.to_string(),
            });
        }
    }
    let given: Vec<&str> = preopens.iter().map(AsRef::as_ref).collect();
    Err(if given.is_empty() {
        format!("{path}: this component was given no directory")
    } else {
        format!(
            "{path}: outside the directories this component was given ({})",
            given.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(preopen: usize, relative: &str) -> Result<Resolved, String> {
        Ok(Resolved {
            preopen,
            relative: relative.to_string(),
        })
    }

    #[test]
    fn the_longest_directory_prefix_wins() {
        let names = [".", "docs", "docs/api"];
        assert_eq!(resolve(&names, "notes/a.txt"), at(0, "notes/a.txt"));
        assert_eq!(resolve(&names, "docs/guide.md"), at(1, "guide.md"));
        assert_eq!(resolve(&names, "docs/api/index.md"), at(2, "index.md"));
        assert_eq!(resolve(&names, "docs"), at(1, "."));
        // A prefix is a whole directory name, not the start of one.
        assert_eq!(resolve(&names, "docsx/a.md"), at(0, "docsx/a.md"));
        let reordered = ["docs/api", ".", "docs"];
        assert_eq!(resolve(&reordered, "docs/api/x"), at(0, "x"));
        assert_eq!(resolve(&reordered, "docs/y"), at(2, "y"));
    }

    #[test]
    fn dot_and_empty_components_do_not_count() {
        let names = ["./docs/", "."];
        assert_eq!(resolve(&names, "./docs//a.md"), at(0, "a.md"));
        assert_eq!(resolve(&names, "."), at(1, "."));
    }

    #[test]
    fn escapes_are_passed_on_for_the_host_to_refuse() {
        let names = [".", "docs"];
        assert_eq!(resolve(&names, "../outside.txt"), at(0, "../outside.txt"));
        assert_eq!(resolve(&names, "docs/../../x"), at(1, "../../x"));
        assert_eq!(resolve(&names, "/etc/passwd"), at(0, "/etc/passwd"));
        assert_eq!(resolve(&["docs", "."], "/etc/passwd"), at(1, "/etc/passwd"));
        assert_eq!(resolve(&["docs"], "/etc/passwd"), at(0, "/etc/passwd"));
    }

    #[test]
    fn an_absolute_preopen_serves_absolute_paths() {
        assert_eq!(resolve(&[".", "/data"], "/data/x.csv"), at(1, "x.csv"));
    }

    #[test]
    fn paths_outside_every_preopen_are_refused_with_the_list() {
        let error = resolve(&["docs"], "src/main.rs").unwrap_err();
        assert!(
            error.contains("src/main.rs") && error.contains("(docs)"),
            "{error}"
        );
        let none: [&str; 0] = [];
        assert!(resolve(&none, "a.txt").unwrap_err().contains("no directory"));
        assert!(resolve(&["."], "").is_err());
    }
}
