//! The seccomp filter every sandboxed command gets: no network unless allowed, never a
//! connection to the user's local daemons, and no set-user-ID or set-group-ID file.
//!
//! - Without the network, `socket(2)` is refused for every family but Unix: that closes
//!   TCP, UDP (and so DNS), raw sockets and netlink at once, whatever the address. With an
//!   allow-list, IPv4 and IPv6 TCP and UDP sockets are allowed too, inside the command's own
//!   network namespace (whose only reachable address is agent-host's proxy); every other
//!   family, type (raw, `SOCK_PACKET`) and protocol (SCTP, ...) is refused.
//! - Always, Unix *stream and seqpacket* sockets are refused: through them a command could
//!   ask the user's D-Bus session for an unconfined process (`systemd-run --user`), type
//!   into tmux or X11, drive Docker, or use ssh-agent's keys. Landlock only controls
//!   connecting to socket files from ABI 9, which this code cannot count on. Pairs made by
//!   `socketpair(2)` (what pipes between processes use) and Unix datagrams stay.
//! - io_uring is refused: its operations reach sockets without the calls the filter sees;
//!   so is `open_by_handle_at`, which opens a file without a path for Landlock to judge.
//! - No file gets the set-user-ID or set-group-ID bit, by `chmod` or at its creation: a
//!   command started by root would otherwise leave a set-user-ID root shell in the
//!   workspace for any local user to run (the read-only mounts hold only inside the
//!   command's namespace), and anyone's command a program that runs as its user.
//!   `openat2`, whose mode sits in a structure the filter cannot read, is answered as a
//!   kernel without it would be (`ENOSYS`), so callers fall back to `openat`.
//! - System calls of the x32 ABI (numbers from 0x40000000, same architecture tag) are
//!   refused before the filter's own checks, which would otherwise not recognise them.

use super::{NetworkAccess, SandboxError};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch, sock_filter,
};
use std::collections::BTreeMap;

/// The errno a refused call gets: "Permission denied" reads well in a command's message.
const REFUSED: u32 = libc::EACCES as u32;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
/// The socket type without SOCK_NONBLOCK and SOCK_CLOEXEC.
const SOCK_TYPE_MASK: u64 = 0xf;

fn filter_error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Rules(format!("the system call filter: {e}"))
}

fn condition(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, SandboxError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(filter_error)
}

fn unix_socket_of_type(kind: libc::c_int) -> Result<SeccompRule, SandboxError> {
    SeccompRule::new(vec![
        condition(0, SeccompCmpOp::Eq, libc::AF_UNIX as u64)?,
        condition(1, SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK), kind as u64)?,
    ])
    .map_err(filter_error)
}

/// Rules refusing every socket of `family` but TCP and UDP ones: not raw sockets, nor
/// `SOCK_PACKET` (which the kernel turns into a packet socket), nor SCTP, DCCP or L2TP,
/// whose code a command has no need to reach.
fn only_tcp_and_udp(family: libc::c_int) -> Result<Vec<SeccompRule>, SandboxError> {
    let of_family = || condition(0, SeccompCmpOp::Eq, family as u64);
    // Every type but SOCK_STREAM (1) and SOCK_DGRAM (2), whatever flags are added.
    let mut rules: Vec<SeccompRule> = (0..=SOCK_TYPE_MASK)
        .filter(|kind| ![libc::SOCK_STREAM as u64, libc::SOCK_DGRAM as u64].contains(kind))
        .map(|kind| {
            SeccompRule::new(vec![
                of_family()?,
                condition(1, SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK), kind)?,
            ])
            .map_err(filter_error)
        })
        .collect::<Result<_, _>>()?;
    rules.push(
        SeccompRule::new(vec![
            of_family()?,
            condition(2, SeccompCmpOp::Ne, 0)?,
            condition(2, SeccompCmpOp::Ne, libc::IPPROTO_TCP as u64)?,
            condition(2, SeccompCmpOp::Ne, libc::IPPROTO_UDP as u64)?,
        ])
        .map_err(filter_error)?,
    );
    Ok(rules)
}

/// The mode bits no file may get.
const SET_ID_BITS: [u64; 2] = [libc::S_ISUID as u64, libc::S_ISGID as u64];

/// `fchmodat2` (Linux 6.6); one number on every architecture since 424.
const SYS_FCHMODAT2: libc::c_long = 452;

/// Rules matching a call whose argument `mode_arg` has a set-ID bit.
fn setting_an_id_bit(mode_arg: u8) -> Result<Vec<SeccompRule>, SandboxError> {
    SET_ID_BITS
        .iter()
        .map(|bit| {
            SeccompRule::new(vec![condition(mode_arg, SeccompCmpOp::MaskedEq(*bit), *bit)?])
                .map_err(filter_error)
        })
        .collect()
}

/// The calls that set a file's mode, with the argument that holds it.
fn mode_setting_calls() -> Vec<(libc::c_long, u8)> {
    let mut calls = vec![
        (libc::SYS_fchmod, 1),
        (libc::SYS_fchmodat, 2),
        (SYS_FCHMODAT2, 2),
        (libc::SYS_openat, 3),
        (libc::SYS_mkdirat, 2),
        (libc::SYS_mknodat, 2),
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        (libc::SYS_chmod, 1),
        (libc::SYS_open, 2),
        (libc::SYS_creat, 1),
        (libc::SYS_mkdir, 1),
        (libc::SYS_mknod, 1),
    ]);
    calls
}

/// The compiled filter, installed in the child after `no_new_privs`.
pub fn syscall_filter(network: NetworkAccess) -> Result<BpfProgram, SandboxError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(filter_error)?;
    let mut socket_rules = vec![
        unix_socket_of_type(libc::SOCK_STREAM)?,
        unix_socket_of_type(libc::SOCK_SEQPACKET)?,
    ];
    // The families a command may open besides Unix.
    let families: &[libc::c_int] = match network {
        NetworkAccess::Off => &[],
        // Inside the command's network namespace; not netlink (nothing to configure), nor
        // AF_VSOCK and the like, which no network namespace confines.
        NetworkAccess::AllowList => &[libc::AF_INET, libc::AF_INET6],
        NetworkAccess::On => &[],
    };
    if network != NetworkAccess::On {
        let refused = [libc::AF_UNIX]
            .iter()
            .chain(families)
            .map(|family| condition(0, SeccompCmpOp::Ne, *family as u64))
            .collect::<Result<Vec<_>, _>>()?;
        socket_rules.push(SeccompRule::new(refused).map_err(filter_error)?);
    }
    for family in families {
        socket_rules.extend(only_tcp_and_udp(*family)?);
    }
    let mut rules = BTreeMap::from([
        (libc::SYS_socket, socket_rules),
        // An empty rule list matches the call whatever its arguments.
        (libc::SYS_io_uring_setup, vec![]),
        // Opens a file by handle, where no path (and so no Landlock rule) is looked at.
        (libc::SYS_open_by_handle_at, vec![]),
    ]);
    for (call, mode_arg) in mode_setting_calls() {
        rules.insert(call, setting_an_id_bit(mode_arg)?);
    }
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(REFUSED), arch)
        .map_err(filter_error)?;
    let compiled: BpfProgram = filter.try_into().map_err(filter_error)?;
    Ok(refusing_x32_first(compiled))
}

/// `program` behind five instructions that refuse x32 system calls and `openat2`.
/// Prepended, so no jump of the program needs adjusting.
fn refusing_x32_first(program: BpfProgram) -> BpfProgram {
    // Offset of `nr` in struct seccomp_data.
    const NR_OFFSET: u32 = 0;
    let statement = |code: u32, k: u32| sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let mut prefixed = vec![
        statement(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, NR_OFFSET),
        // nr >= 0x40000000: go on to the refusal; otherwise skip it.
        sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        statement(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ERRNO | REFUSED),
        // openat2: answered "no such call" (see the module comment); otherwise skip that.
        sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: libc::SYS_openat2 as u32,
        },
        statement(
            libc::BPF_RET | libc::BPF_K,
            libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
        ),
    ];
    prefixed.extend(program);
    prefixed
}
