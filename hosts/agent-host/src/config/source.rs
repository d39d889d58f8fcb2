//! Where a setting comes from: a file (user or project, with its line), a variable, a flag,
//! or the defaults.

use std::fmt;
use std::path::{Path, PathBuf};

/// Which configuration file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerKind {
    User,
    Project,
}

/// Where a value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    UserFile {
        path: PathBuf,
        line: usize,
    },
    ProjectFile {
        path: PathBuf,
        line: usize,
    },
    /// An environment variable, by name.
    Env(String),
    /// A command-line flag, e.g. `--model`.
    Flag(String),
}

impl Source {
    pub fn file(kind: LayerKind, path: &Path, line: usize) -> Self {
        let path = path.to_path_buf();
        match kind {
            LayerKind::User => Source::UserFile { path, line },
            LayerKind::Project => Source::ProjectFile { path, line },
        }
    }

    pub fn env(name: &str) -> Self {
        Source::Env(name.to_string())
    }

    pub fn flag(name: &str) -> Self {
        Source::Flag(name.to_string())
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::UserFile { path, line } => write!(f, "user file {}:{line}", path.display()),
            Source::ProjectFile { path, line } => write!(f, "project file {}:{line}", path.display()),
            Source::Env(name) => write!(f, "env {name}"),
            Source::Flag(name) => write!(f, "flag {name}"),
        }
    }
}

/// A value and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced<T> {
    pub value: T,
    pub source: Source,
}

impl<T> Sourced<T> {
    pub fn new(value: T, source: Source) -> Self {
        Self { value, source }
    }

    pub fn default_value(value: T) -> Self {
        Self::new(value, Source::Default)
    }

    /// The value changed by `f`, from the same place.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Sourced<U> {
        Sourced::new(f(self.value), self.source)
    }
}

/// 1-based line of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |before| before.matches('\n').count() + 1)
}
