//! The command's view of the filesystem: read-only everywhere but its writable roots, with
//! `.git` and `.agent` read-only and denied paths hidden inside them, and a `/proc` of its
//! own PID namespace.
//!
//! Landlock decides which files a command may open, but not who may change a file's
//! metadata: `chmod`, `chown`, `utime` and `setxattr` are outside its rights. So the child
//! enters a mount namespace of its own (with a user namespace when it is not root), makes
//! every mount private so nothing propagates back, clones each writable root's mounts,
//! makes every mount of its namespace read-only and puts the writable clones back on their
//! roots: outside them every change fails with `EROFS`, as under bubblewrap's
//! `--ro-bind / /`. Inside them, each protected path is bound read-only onto itself and
//! each denied path covered (an empty read-only tmpfs over a directory, `/dev/null` over a
//! file). Landlock, applied next, forbids undoing any of it.

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

/// Most writable roots a command may have (the workspace, `--allow-dir` roots and the
/// temporary directory): their clones are held on the child's stack, which cannot grow.
pub const MAX_WRITABLE: usize = 64;

/// The mounts to make in the child, prepared in the parent.
#[derive(Debug)]
pub struct CommandMounts {
    /// Where commands may write (canonical), outermost first: these keep their mounts'
    /// own flags; everything else becomes read-only.
    writable: Vec<CString>,
    protected: Vec<Protected>,
    hidden: Vec<Hidden>,
    /// `Some` when not root: the user namespace's maps, written by agent-host once the
    /// child has become the init ([`IdMaps::write`]).
    id_maps: Option<IdMaps>,
}

/// A user namespace's maps: the user's own ids, and nothing else, on both sides.
///
/// The child cannot write them itself: it shares agent-host's memory, which is
/// non-dumpable, so its `/proc` files belong to root and stay closed to it. Nor does it
/// need them for the mounts (the capabilities come with the namespace). The init it
/// becomes is a fresh, dumpable process whose files agent-host, in the parent namespace
/// and as the namespace's owner, may write; the init waits for that before it starts the
/// command, which then sees its own ids.
#[derive(Debug)]
pub struct IdMaps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl IdMaps {
    /// Writes the maps of `pid`'s user namespace (in agent-host, after the clone).
    pub fn write(&self, pid: i32) -> std::io::Result<()> {
        let write = |file: &str, data: &[u8]| {
            let path = format!("/proc/{pid}/{file}");
            std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .and_then(|mut f| std::io::Write::write_all(&mut f, data))
                .map_err(|e| std::io::Error::new(e.kind(), format!("writing {path}: {e}")))
        };
        write("setgroups", b"deny")?;
        write("uid_map", &self.uid_map)?;
        write("gid_map", &self.gid_map)
    }
}

impl CommandMounts {
    pub fn plan(
        writable: &[PathBuf],
        protected: &[PathBuf],
        hidden: &[PathBuf],
    ) -> Result<Self, SandboxError> {
        if writable.len() > MAX_WRITABLE {
            return Err(SandboxError::Rules(format!(
                "{} writable folders, more than the {MAX_WRITABLE} a command can have",
                writable.len()
            )));
        }
        let mut outermost_first = writable.to_vec();
        outermost_first.sort_by_key(|path| path.components().count());
        let writable = outermost_first
            .iter()
            .map(|p| c_path(p))
            .collect::<Result<_, _>>()?;
        let hidden = hidden
            .iter()
            .map(|path| {
                Ok(Hidden {
                    path: c_path(path)?,
                    is_dir: path.is_dir(),
                })
            })
            .collect::<Result<_, SandboxError>>()?;
        let protected = protected
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
            writable,
            protected,
            hidden,
            id_maps,
        })
    }

    /// The namespaces the child is cloned into: mounts and PIDs of its own, and users too
    /// when agent-host is not root (mounting needs privilege over the mount namespace).
    pub fn clone_flags(&self) -> libc::c_int {
        let user = match self.id_maps {
            Some(_) => libc::CLONE_NEWUSER,
            None => 0,
        };
        libc::CLONE_NEWNS | libc::CLONE_NEWPID | user
    }

    /// The maps agent-host writes for the init; `None` for root (no user namespace).
    pub fn id_maps(&self) -> Option<&IdMaps> {
        self.id_maps.as_ref()
    }

    /// In the forked child, in its new namespaces: only system calls on prepared data.
    /// Returns whether `/proc` is a new one (which the Landlock rules, made on the old
    /// one's files, do not cover yet).
    pub fn apply(&self) -> std::io::Result<bool> {
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
        self.everything_read_only_but_the_writable_roots()?;
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
        // A `/proc` of the command's PID namespace: `ps` and `kill` then see its own
        // processes under the numbers they have there, and nothing of agent-host's (its
        // command line, its other commands). Where the kernel refuses a new one (a
        // container that masks parts of `/proc`), the old one stays, read-only.
        // SAFETY: constant C strings.
        let fresh_proc = unsafe {
            libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY,
                std::ptr::null(),
            )
        } == 0;
        Ok(fresh_proc)
    }

    /// Clones the writable roots' mounts (detached, with their flags), makes every mount of
    /// the namespace read-only, then attaches the clones on their roots.
    fn everything_read_only_but_the_writable_roots(&self) -> std::io::Result<()> {
        let mut clones = [-1 as libc::c_int; MAX_WRITABLE];
        let result = (|| {
            for (slot, root) in clones.iter_mut().zip(&self.writable) {
                // SAFETY: open_tree with a prepared path; the descriptor is closed below.
                let fd = unsafe {
                    libc::syscall(
                        libc::SYS_open_tree,
                        libc::AT_FDCWD,
                        root.as_ptr(),
                        libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC | libc::AT_RECURSIVE as libc::c_uint,
                    )
                };
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                *slot = fd as libc::c_int;
            }
            let read_only = libc::mount_attr {
                attr_set: libc::MOUNT_ATTR_RDONLY,
                attr_clr: 0,
                propagation: 0,
                userns_fd: 0,
            };
            // SAFETY: a constant path and a mount_attr of the size given.
            check_long(unsafe {
                libc::syscall(
                    libc::SYS_mount_setattr,
                    libc::AT_FDCWD,
                    c"/".as_ptr(),
                    libc::AT_RECURSIVE as libc::c_uint,
                    &read_only as *const libc::mount_attr,
                    std::mem::size_of::<libc::mount_attr>(),
                )
            })?;
            for (fd, root) in clones.iter().zip(&self.writable) {
                // SAFETY: a detached tree's descriptor and a prepared path.
                check_long(unsafe {
                    libc::syscall(
                        libc::SYS_move_mount,
                        *fd,
                        c"".as_ptr(),
                        libc::AT_FDCWD,
                        root.as_ptr(),
                        libc::MOVE_MOUNT_F_EMPTY_PATH,
                    )
                })?;
            }
            Ok(())
        })();
        for fd in clones.iter().filter(|fd| **fd >= 0) {
            // SAFETY: descriptors this function opened.
            unsafe { libc::close(*fd) };
        }
        result
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

fn check_long(rc: libc::c_long) -> std::io::Result<()> {
    match rc {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

fn check(rc: libc::c_int) -> std::io::Result<()> {
    match rc {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}
