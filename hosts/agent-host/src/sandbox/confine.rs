//! Entering the sandbox, between fork and exec.
//!
//! agent-host is multi-threaded, so the forked child may only make async-signal-safe calls:
//! no allocation, no locks. Everything here is a system call on data prepared in the parent.

use super::mounts::CommandMounts;
use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

/// One command's confinement, prepared by [`super::Sandbox::prepare`].
#[derive(Debug)]
pub struct Confinement {
    ruleset: OwnedFd,
    mounts: CommandMounts,
    filter: Arc<seccompiler::BpfProgram>,
    /// With `AllowList`, the command gets a network namespace of its own whose only
    /// reachable address is agent-host's proxy (see [`super::network`]).
    network: super::NetworkAccess,
    /// Whether the command starts as root: it then keeps only the capabilities that
    /// reach files ([`ROOT_KEEPS`]).
    root: bool,
    /// The most processes (threads included) the command may have at once, as
    /// `RLIMIT_NPROC`: counted in the command's own user namespace, so per command. `None`
    /// for root, whom the kernel does not hold to that limit.
    processes: Option<libc::rlimit>,
    /// The Landlock rights a command has on `/proc` (reading).
    proc_access: u64,
    /// The command's directory, entered again once the mounts are made: a directory opened
    /// before them would still see the writable mount beneath a read-only one.
    cwd: Option<CString>,
}

impl Confinement {
    pub(super) fn new(
        ruleset: OwnedFd,
        mounts: CommandMounts,
        filter: Arc<seccompiler::BpfProgram>,
        network: super::NetworkAccess,
        max_processes: u64,
    ) -> Self {
        let root = nix::unistd::geteuid().is_root();
        Self {
            ruleset,
            mounts,
            filter,
            network,
            root,
            processes: (!root).then(|| process_limit(max_processes)),
            proc_access: super::filesystem::read_access_bits(),
            cwd: None,
        }
    }

    /// The namespaces the command's first process is cloned into.
    pub(super) fn clone_flags(&self) -> libc::c_int {
        match self.network_isolated() {
            true => self.mounts.clone_flags() | libc::CLONE_NEWNET,
            false => self.mounts.clone_flags(),
        }
    }

    /// Whether the command runs in a network namespace of its own, the proxy's listening
    /// socket made there by the child.
    pub(super) fn network_isolated(&self) -> bool {
        self.network == super::NetworkAccess::AllowList
    }

    /// The user namespace's maps agent-host writes once the init runs (not for root).
    pub(super) fn id_maps(&self) -> Option<&super::mounts::IdMaps> {
        self.mounts.id_maps()
    }

    /// The directory the command starts in (a path with a NUL byte cannot be one).
    pub fn in_dir(mut self, cwd: &Path) -> std::io::Result<Self> {
        let cwd = CString::new(cwd.as_os_str().as_bytes()).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("the command's folder {} contains a NUL byte", cwd.display()),
            )
        })?;
        self.cwd = Some(cwd);
        Ok(self)
    }

    /// In the child, cloned into its namespaces ([`Self::clone_flags`]): its own session,
    /// the mounts, the process limit, `no_new_privs`, Landlock, seccomp.
    pub fn enter(&self) -> std::io::Result<()> {
        // SAFETY (whole function): plain system calls on prepared, live data.
        // A session of its own: no controlling terminal to read keystrokes from or to write
        // escape sequences to; it also leads its process group, which is killed as one.
        if unsafe { libc::setsid() } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if self.mounts.apply()? {
            self.allow_reading_the_new_proc()?;
        }
        if let Some(cwd) = &self.cwd
            && unsafe { libc::chdir(cwd.as_ptr()) } != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        if self.root {
            drop_capabilities()?;
        }
        if let Some(limit) = &self.processes {
            // SAFETY: a prepared rlimit.
            if unsafe { libc::setrlimit(libc::RLIMIT_NPROC, limit) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let restricted = unsafe {
            libc::syscall(
                libc::SYS_landlock_restrict_self,
                self.ruleset.as_raw_fd(),
                0 as libc::c_uint,
            )
        };
        if restricted != 0 {
            return Err(std::io::Error::last_os_error());
        }
        seccompiler::apply_filter(&self.filter).map_err(|e| match e {
            seccompiler::Error::Prctl(e) | seccompiler::Error::Seccomp(e) => e,
            _ => std::io::Error::from_raw_os_error(libc::EINVAL),
        })?;
        Ok(())
    }
}

impl Confinement {
    /// Adds to the command's ruleset the right to read the `/proc` just mounted: the rules
    /// made in agent-host name the files of its own `/proc`, not of this one. Only system
    /// calls on prepared data (the ruleset is this command's own).
    fn allow_reading_the_new_proc(&self) -> std::io::Result<()> {
        /// `struct landlock_path_beneath_attr`, packed as the kernel declares it.
        #[repr(C, packed)]
        struct PathBeneath {
            allowed_access: u64,
            parent_fd: i32,
        }
        const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
        // SAFETY: a constant path; the descriptor is closed below.
        let proc = unsafe {
            libc::open(
                c"/proc".as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if proc < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let rule = PathBeneath {
            allowed_access: self.proc_access,
            parent_fd: proc,
        };
        // SAFETY: the ruleset's descriptor and a rule of the kernel's layout.
        let added = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                self.ruleset.as_raw_fd(),
                LANDLOCK_RULE_PATH_BENEATH,
                &rule as *const PathBeneath,
                0 as libc::c_uint,
            )
        };
        let result = match added {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        };
        // SAFETY: the descriptor opened above.
        unsafe { libc::close(proc) };
        result
    }
}

/// What a command started by root keeps: overriding file permissions, since a workspace
/// may belong to another user. Not DAC_READ_SEARCH: it opens files by handle
/// (`open_by_handle_at`), around the path rules. Not CHOWN, FOWNER or FSETID, nor SETUID
/// and SETGID (with which it would become a file's owner first): with them root changes the
/// owner, mode and times of files it does not own. Gone are the rest: making device nodes (a
/// raw disk in the workspace), loading modules, raw I/O, administration, tracing, the
/// network's administration.
const ROOT_KEEPS: &[u32] = &[
    1, // CAP_DAC_OVERRIDE
];

/// `RLIMIT_NPROC` at `max`, or lower where agent-host's own hard limit is lower (no
/// process may raise it).
fn process_limit(max: u64) -> libc::rlimit {
    let mut current = libc::rlimit {
        rlim_cur: libc::RLIM_INFINITY,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: fills a local rlimit.
    unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut current) };
    let limit = max.min(current.rlim_max);
    libc::rlimit {
        rlim_cur: limit,
        rlim_max: limit,
    }
}

/// Empties the bounding set but [`ROOT_KEEPS`] (so no exec gives more back) and the
/// ambient set, and keeps only those in the current sets.
fn drop_capabilities() -> std::io::Result<()> {
    const LAST_CAP_AT_MOST: u32 = 63;
    let kept = |cap: u32| ROOT_KEEPS.contains(&cap);
    for cap in (0..=LAST_CAP_AT_MOST).filter(|c| !kept(*c)) {
        // SAFETY: a plain prctl; EINVAL past the kernel's last capability is expected.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) } != 0 {
            let error = std::io::Error::last_os_error();
            if error.raw_os_error() != Some(libc::EINVAL) {
                return Err(error);
            }
        }
    }
    // SAFETY: plain prctl.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    let mask = ROOT_KEEPS.iter().fold(0u64, |m, c| m | 1 << c);
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let word = |shift: u32| Data {
        effective: (mask >> shift) as u32,
        permitted: (mask >> shift) as u32,
        inheritable: 0,
    };
    let data = [word(0), word(32)];
    // SAFETY: capset with a version-3 header and its two data words, on the stack.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) };
    match rc {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}
