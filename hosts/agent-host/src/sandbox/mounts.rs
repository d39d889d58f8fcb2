//! Read-only `.git` and `.agent`, and hidden denied paths, inside a writable workspace.
//!
//! Landlock cannot take back, below a directory, a right granted on it; a mount can. The
//! child enters a mount namespace of its own (with a user namespace when it is not root),
//! makes every mount private so nothing propagates back, binds each protected path
//! read-only onto itself and covers each denied path (an empty read-only tmpfs over a
//! directory, `/dev/null` over a file). Landlock, applied next, forbids unmounting them.

use super::SandboxError;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// One protected path, prepared: its name and the flags its mount must keep.
#[derive(Debug)]
struct Protected {
    path: CString,
    /// nosuid, nodev, noexec and atime flags of the mount it is on: a remount in a user
    /// namespace must keep them ("locked" flags).
    kept_flags: libc::c_ulong,
}

/// A denied path inside a writable root, covered in the child.
#[derive(Debug)]
struct Hidden {
    path: CString,
    is_dir: bool,
}

/// The mounts to make in the child, prepared in the parent.
#[derive(Debug, Default)]
pub struct ReadOnlyMounts {
    protected: Vec<Protected>,
    hidden: Vec<Hidden>,
    /// `Some` when not root: the user namespace's maps, written by the child itself.
    id_maps: Option<IdMaps>,
}

#[derive(Debug)]
struct IdMaps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl ReadOnlyMounts {
    pub fn plan(paths: &[PathBuf], hidden: &[PathBuf]) -> Result<Self, SandboxError> {
        if paths.is_empty() && hidden.is_empty() {
            return Ok(Self::default());
        }
        let hidden = hidden
            .iter()
            .map(|path| {
                Ok(Hidden {
                    path: c_path(path)?,
                    is_dir: path.is_dir(),
                })
            })
            .collect::<Result<_, SandboxError>>()?;
        let protected = paths
            .iter()
            .map(|path| {
                let flags = nix::sys::statvfs::statvfs(path).map_err(|e| SandboxError::Prepare {
                    what: format!("reading the mount flags of {}", path.display()),
                    source: e.into(),
                })?;
                Ok(Protected {
                    path: c_path(path)?,
                    kept_flags: kept_flags(flags.flags()),
                })
            })
            .collect::<Result<_, SandboxError>>()?;
        let uid = nix::unistd::geteuid().as_raw();
        let gid = nix::unistd::getegid().as_raw();
        let id_maps = (uid != 0).then(|| IdMaps {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        });
        Ok(Self {
            protected,
            hidden,
            id_maps,
        })
    }

    /// In the forked child: only system calls on prepared data.
    pub fn apply(&self) -> std::io::Result<()> {
        if self.protected.is_empty() && self.hidden.is_empty() {
            return Ok(());
        }
        let namespaces = match self.id_maps {
            Some(_) => libc::CLONE_NEWUSER | libc::CLONE_NEWNS,
            None => libc::CLONE_NEWNS,
        };
        check(unsafe { libc::unshare(namespaces) })?;
        if let Some(maps) = &self.id_maps {
            write_file(c"/proc/self/setgroups", b"deny")?;
            write_file(c"/proc/self/uid_map", &maps.uid_map)?;
            write_file(c"/proc/self/gid_map", &maps.gid_map)?;
        }
        let none = std::ptr::null();
        // SAFETY: constant C strings and null pointers, as mount(2) documents.
        check(unsafe {
            libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            )
        })?;
        for protected in &self.protected {
            let path = protected.path.as_ptr();
            // SAFETY: `path` is a prepared C string that outlives the calls.
            check(unsafe { libc::mount(path, path, none, libc::MS_BIND | libc::MS_REC, std::ptr::null()) })?;
            check(unsafe {
                libc::mount(
                    none,
                    path,
                    none,
                    libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | protected.kept_flags,
                    std::ptr::null(),
                )
            })?;
        }
        let sealed = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        for hidden in &self.hidden {
            let path = hidden.path.as_ptr();
            // SAFETY: prepared C strings and constants.
            check(unsafe {
                match hidden.is_dir {
                    true => libc::mount(
                        c"agent-host-hidden".as_ptr(),
                        path,
                        c"tmpfs".as_ptr(),
                        sealed,
                        c"size=4k,mode=000".as_ptr().cast(),
                    ),
                    false => libc::mount(c"/dev/null".as_ptr(), path, none, libc::MS_BIND, std::ptr::null()),
                }
            })?;
        }
        Ok(())
    }
}

fn c_path(path: &std::path::Path) -> Result<CString, SandboxError> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| SandboxError::Rules(format!("{} has a NUL byte", path.display())))
}

fn kept_flags(flags: nix::sys::statvfs::FsFlags) -> libc::c_ulong {
    use nix::sys::statvfs::FsFlags;
    [
        (FsFlags::ST_NOSUID, libc::MS_NOSUID),
        (FsFlags::ST_NODEV, libc::MS_NODEV),
        (FsFlags::ST_NOEXEC, libc::MS_NOEXEC),
        (FsFlags::ST_NOATIME, libc::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, libc::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, libc::MS_RELATIME),
    ]
    .into_iter()
    .filter(|(st, _)| flags.contains(*st))
    .fold(0, |acc, (_, ms)| acc | ms)
}

fn check(rc: libc::c_int) -> std::io::Result<()> {
    match rc {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// open + write + close, nothing else (async-signal-safe).
fn write_file(path: &std::ffi::CStr, data: &[u8]) -> std::io::Result<()> {
    // SAFETY: a valid C string; the descriptor is closed on every path.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let written = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
    let result = match written {
        n if n == data.len() as isize => Ok(()),
        n if n < 0 => Err(std::io::Error::last_os_error()),
        _ => Err(std::io::Error::from_raw_os_error(libc::EIO)),
    };
    unsafe { libc::close(fd) };
    result
}
