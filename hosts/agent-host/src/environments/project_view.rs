//! A read-only view of the repository above a workspace. When the workspace is a folder
//! below a repository's root, the system prompt still wants the project's instruction files
//! of every folder from the root down (AGENTS.md and each family's own, spec 6.5) and the
//! branch from `.git/HEAD`; confinement would refuse those paths. This view shows exactly
//! those files, for reading, and nothing else of the repository: the rest stays outside
//! what the session may touch. Every folder and the file are opened beneath a handle at the
//! root without following a link, so a link a repository commits in a file's place (to
//! `.git/config`, to a secret elsewhere in the repository, out of it) shows nothing. A
//! repository at the user's home folder (dotfiles) is not a project: no view.

use agent_protocol::ProviderFamily;
use agent_protocol::ports::FsError;
use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};

#[derive(Debug)]
pub(crate) struct ProjectView {
    /// The repository root (canonical), the nearest folder above the workspace holding `.git`.
    root: PathBuf,
    dir: Dir,
    /// Each path the view shows, relative to `root`.
    shown: Vec<PathBuf>,
}

impl ProjectView {
    /// The view for `workspace` (canonical), if it lies below a repository's root; `None`
    /// when the workspace holds `.git` itself or is in no repository.
    pub(crate) fn above(workspace: &Path) -> Option<Self> {
        let root = workspace
            .ancestors()
            .skip(1)
            .find(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok())?;
        let home = std::env::var_os("HOME").and_then(|home| std::fs::canonicalize(home).ok());
        if std::fs::symlink_metadata(workspace.join(".git")).is_ok() || home.as_deref() == Some(root) {
            return None;
        }
        let dir = Dir::open_ambient_dir(root, ambient_authority()).ok()?;
        let names = ProviderFamily::all_instruction_files();
        let folders = workspace
            .ancestors()
            .skip(1)
            .take_while(|folder| folder.starts_with(root))
            .filter_map(|folder| folder.strip_prefix(root).ok());
        let mut shown: Vec<PathBuf> = folders
            .flat_map(|folder| names.iter().map(move |name| folder.join(name)))
            .collect();
        shown.extend([PathBuf::from(".git"), PathBuf::from(".git/HEAD")]);
        Some(Self {
            root: root.to_path_buf(),
            dir,
            shown,
        })
    }

    /// Every path the view shows, absolute.
    pub(crate) fn files(&self) -> Vec<PathBuf> {
        self.shown.iter().map(|shown| self.root.join(shown)).collect()
    }

    /// `path` relative to the root, if the view shows it.
    fn shows(&self, path: &str) -> Option<PathBuf> {
        let relative = Path::new(path).strip_prefix(&self.root).ok()?;
        self.shown.iter().find(|shown| *shown == relative).cloned()
    }

    /// The folder holding `relative` and the file's name, each folder opened without
    /// following a link.
    fn parent(&self, relative: &Path) -> std::io::Result<(Dir, PathBuf)> {
        let mut parts: Vec<&std::ffi::OsStr> = relative
            .components()
            .filter_map(|part| match part {
                Component::Normal(name) => Some(name),
                _ => None,
            })
            .collect();
        let name = parts.pop().map(PathBuf::from).unwrap_or_default();
        let mut dir = self.dir.try_clone()?;
        for part in parts {
            dir = dir.open_dir_nofollow(part)?;
        }
        Ok((dir, name))
    }

    /// The file's bytes, if the view shows `path` (`None`: not the view's to answer). A
    /// link, a folder or anything but a regular file is refused.
    pub(crate) fn read(&self, path: &str, range: Option<(u64, u64)>) -> Option<Result<Vec<u8>, FsError>> {
        let relative = self.shows(path)?;
        let fail = |e: std::io::Error| crate::environments::local::fs_error(e, path);
        let read = || -> Result<Vec<u8>, FsError> {
            let (dir, name) = self.parent(&relative).map_err(fail)?;
            let mut options = OpenOptions::new();
            options
                .read(true)
                .follow(FollowSymlinks::No)
                .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY);
            let mut file = dir.open_with(&name, &options).map_err(fail)?.into_std();
            let meta = file.metadata().map_err(fail)?;
            if !meta.is_file() {
                return Err(FsError::InvalidInput(format!("{path} is not a regular file")));
            }
            let (offset, length) = crate::environments::read_window(path, meta.len(), false, range)?;
            file.seek(SeekFrom::Start(offset)).map_err(fail)?;
            let mut bytes = Vec::with_capacity(length.min(meta.len()) as usize);
            file.take(length).read_to_end(&mut bytes).map_err(fail)?;
            Ok(bytes)
        };
        Some(read())
    }

    /// Whether `path` exists (and is not a link), if the view shows it.
    pub(crate) fn exists(&self, path: &str) -> Option<bool> {
        let relative = self.shows(path)?;
        let found = self
            .parent(&relative)
            .and_then(|(dir, name)| dir.symlink_metadata(&name))
            .is_ok_and(|meta| !meta.file_type().is_symlink());
        Some(found)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::fs;

    fn repository_with_a_package() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        fs::write(root.join(".git/config"), "[core]\n").unwrap();
        fs::create_dir_all(root.join("pkg/app")).unwrap();
        fs::create_dir_all(root.join(".codex")).unwrap();
        fs::write(root.join("AGENTS.md"), "root rules").unwrap();
        fs::write(root.join(".codex/instructions.md"), "codex rules").unwrap();
        fs::write(root.join("pkg/CLAUDE.md"), "pkg rules").unwrap();
        fs::write(root.join("secret.txt"), "not for the session").unwrap();
        let workspace = root.join("pkg/app");
        (dir, root, workspace)
    }

    #[test]
    fn it_shows_the_instruction_files_above_the_workspace_and_the_head_only() {
        let (_dir, root, workspace) = repository_with_a_package();
        let view = ProjectView::above(&workspace).unwrap();
        let read = |path: PathBuf| view.read(path.to_str().unwrap(), None).map(|r| r.unwrap());
        assert_eq!(read(root.join("AGENTS.md")).unwrap(), b"root rules");
        assert_eq!(read(root.join(".codex/instructions.md")).unwrap(), b"codex rules");
        assert_eq!(read(root.join("pkg/CLAUDE.md")).unwrap(), b"pkg rules");
        assert_eq!(read(root.join(".git/HEAD")).unwrap(), b"ref: refs/heads/main\n");
        assert_eq!(view.exists(root.join(".git").to_str().unwrap()), Some(true));
        assert_eq!(view.exists(root.join("GEMINI.md").to_str().unwrap()), Some(false));
        // Nothing else of the repository.
        for other in [
            "secret.txt",
            ".git/config",
            "pkg",
            "pkg/app/AGENTS.md",
            "../AGENTS.md",
        ] {
            assert!(read(root.join(other)).is_none(), "{other}");
        }
        assert!(
            view.read("AGENTS.md", None).is_none(),
            "relative paths are the workspace's"
        );
    }

    #[test]
    fn a_link_in_place_of_an_instruction_file_cannot_lead_out_of_the_repository() {
        let (_dir, root, workspace) = repository_with_a_package();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("key"), "secret").unwrap();
        fs::remove_file(root.join("AGENTS.md")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("key"), root.join("AGENTS.md")).unwrap();
        let view = ProjectView::above(&workspace).unwrap();
        let result = view.read(root.join("AGENTS.md").to_str().unwrap(), None).unwrap();
        assert!(result.is_err(), "{result:?}");
    }

    #[test]
    fn a_link_inside_the_repository_shows_nothing_either() {
        let (_dir, root, workspace) = repository_with_a_package();
        // A repository can commit links: in a file's place, or a folder's.
        fs::remove_file(root.join("pkg/CLAUDE.md")).unwrap();
        std::os::unix::fs::symlink("../secret.txt", root.join("pkg/CLAUDE.md")).unwrap();
        std::os::unix::fs::symlink(".git/config", root.join("GEMINI.md")).unwrap();
        fs::remove_dir_all(root.join(".codex")).unwrap();
        fs::create_dir_all(root.join("elsewhere")).unwrap();
        fs::write(root.join("elsewhere/instructions.md"), "not the instructions").unwrap();
        std::os::unix::fs::symlink("elsewhere", root.join(".codex")).unwrap();
        let view = ProjectView::above(&workspace).unwrap();
        for path in ["pkg/CLAUDE.md", "GEMINI.md", ".codex/instructions.md"] {
            let path = root.join(path);
            let result = view.read(path.to_str().unwrap(), None).unwrap();
            assert!(result.is_err(), "{path:?}: {result:?}");
            assert_eq!(view.exists(path.to_str().unwrap()), Some(false), "{path:?}");
        }
        assert_eq!(
            view.read(root.join("AGENTS.md").to_str().unwrap(), None)
                .unwrap()
                .unwrap(),
            b"root rules"
        );
    }

    #[test]
    fn no_view_for_a_repository_root_or_a_folder_outside_any_repository() {
        let (_dir, root, _) = repository_with_a_package();
        assert!(ProjectView::above(&root).is_none());
        let plain = tempfile::tempdir().unwrap();
        let plain = fs::canonicalize(plain.path()).unwrap();
        fs::create_dir_all(plain.join("a")).unwrap();
        // A temporary folder may itself sit in some repository; only check when it does not.
        if !plain.ancestors().any(|d| d.join(".git").exists()) {
            assert!(ProjectView::above(&plain.join("a")).is_none());
        }
    }
}
