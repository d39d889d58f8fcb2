//! What a sandboxed command reaches of the network: nothing, every host, or only the hosts
//! the user named (`network_allow`), through agent-host's proxy.
//!
//! With an allow-list the command is cloned into a network namespace of its own, where the
//! only interface is its own loopback. Before it `exec`s, the child brings `lo` up and
//! makes a listening socket on [`PROXY_ADDRESS`] there: a socket stays in the namespace it
//! was made in, so that address is the command's, and agent-host, handed the socket
//! through a Unix socket pair (`SCM_RIGHTS`), accepts its connections from outside and
//! serves them with [`egress_proxy`] (which resolves names itself, checks them and the
//! addresses they resolve to, and connects out from agent-host's own namespace). A direct
//! `connect` to any other address, UDP (so DNS) and raw sockets reach nothing: the
//! namespace has no route out. The kernel enforces it, whatever the command does with the
//! proxy variables it is given.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::str::FromStr;

/// How much of the network sandboxed commands reach, from the strictest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord)]
pub enum NetworkAccess {
    /// No socket but Unix ones.
    #[default]
    Off,
    /// Only the hosts `network_allow` names, through agent-host's proxy.
    AllowList,
    /// Every host, directly.
    On,
}

impl NetworkAccess {
    pub fn name(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::AllowList => "allow-list",
            Self::On => "on",
        }
    }
}

impl NetworkAccess {
    /// The setting in effect: the one given, else the allow-list when hosts are listed (a
    /// list alone asks for it), else off.
    pub fn given_or_implied(given: Option<Self>, hosts_listed: bool) -> Self {
        match (given, hosts_listed) {
            (Some(access), _) => access,
            (None, true) => Self::AllowList,
            (None, false) => Self::Off,
        }
    }
}

impl std::fmt::Display for NetworkAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for NetworkAccess {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "off" | "false" => Ok(Self::Off),
            "allow-list" => Ok(Self::AllowList),
            "on" | "true" => Ok(Self::On),
            // The value is not quoted: a file's mistake may be a pasted secret.
            _ => Err("unknown network setting: use off, allow-list or on".to_string()),
        }
    }
}

/// Where the proxy listens inside a command's namespace. A fixed port: the namespace is
/// the command's alone, and nothing can hold the port before the child does.
pub const PROXY_PORT: u16 = 3128;
pub const PROXY_ADDRESS: &str = "127.0.0.1:3128";

/// The variables that send HTTP clients (curl, pip, npm, cargo, git, Python, Go) to the
/// proxy; both cases, since some read only one (curl only the lower-case `http_proxy`).
pub fn proxy_variables() -> Vec<(String, String)> {
    let proxy = format!("http://{PROXY_ADDRESS}");
    // The namespace's own loopback, where a command's own servers (a test suite's) are.
    let own = "localhost,127.0.0.1,::1".to_string();
    ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"]
        .into_iter()
        .flat_map(|name| [name.to_string(), name.to_lowercase()])
        .map(|name| (name, proxy.clone()))
        .chain(["NO_PROXY", "no_proxy"].map(|name| (name.to_string(), own.clone())))
        .collect()
}

/// The socket pair over which the child hands agent-host the listening socket it made.
pub(super) struct Handover {
    /// agent-host's end.
    receive: OwnedFd,
    /// The child's end (closed in agent-host once the child has `exec`'d).
    send: OwnedFd,
}

impl Handover {
    pub(super) fn new() -> std::io::Result<Self> {
        let mut fds = [0; 2];
        // SAFETY: socketpair fills the two descriptors, owned below.
        let rc = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: two new descriptors we own.
        let (receive, send) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        Ok(Self { receive, send })
    }

    /// The child's end, for the plan.
    pub(super) fn sender(&self) -> RawFd {
        self.send.as_raw_fd()
    }

    /// In agent-host after the clone: the listening socket the child sent.
    pub(super) fn receive(self) -> std::io::Result<std::net::TcpListener> {
        drop(self.send);
        let mut byte = [0u8; 1];
        let mut io = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let mut control = FdMessage::empty();
        // SAFETY: msghdr is plain data; every pointer set below is to a live local.
        let mut message: libc::msghdr = unsafe { std::mem::zeroed() };
        message.msg_iov = &mut io;
        message.msg_iovlen = 1;
        message.msg_control = (&mut control as *mut FdMessage).cast();
        message.msg_controllen = std::mem::size_of::<FdMessage>();
        // SAFETY: receives into the buffers above; the child sent before it exec'd.
        let got = unsafe {
            libc::recvmsg(
                self.receive.as_raw_fd(),
                &mut message,
                libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC,
            )
        };
        if got < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if control.header.cmsg_level != libc::SOL_SOCKET
            || control.header.cmsg_type != libc::SCM_RIGHTS
            || message.msg_controllen < FdMessage::length()
        {
            return Err(std::io::Error::other(
                "the sandboxed command's child sent no proxy socket",
            ));
        }
        // SAFETY: the kernel installed this descriptor for us (SCM_RIGHTS).
        let socket = unsafe { OwnedFd::from_raw_fd(control.fd) };
        let listener = std::net::TcpListener::from(socket);
        listener.set_nonblocking(true)?;
        Ok(listener)
    }
}

/// One control message carrying one descriptor, laid out as `CMSG_SPACE(sizeof(int))`.
#[repr(C)]
struct FdMessage {
    header: libc::cmsghdr,
    fd: libc::c_int,
}

impl FdMessage {
    fn empty() -> Self {
        // SAFETY: plain data.
        unsafe { std::mem::zeroed() }
    }

    fn length() -> usize {
        // SAFETY: arithmetic on a size.
        unsafe { libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as usize }
    }
}

/// In the child, in its new network namespace, before the confinement: brings `lo` up,
/// listens on [`PROXY_ADDRESS`] and sends the socket over `handover`. Only system calls
/// on the stack (the child shares agent-host's memory).
pub(super) fn listen_in_child(handover: RawFd) -> std::io::Result<()> {
    let last_error = || Err(std::io::Error::last_os_error());
    // SAFETY (whole function): system calls on stack data; each descriptor opened here is
    // close-on-exec and closed before returning.
    unsafe {
        let control = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if control < 0 {
            return last_error();
        }
        let mut request: libc::ifreq = std::mem::zeroed();
        request.ifr_name[0] = b'l' as libc::c_char;
        request.ifr_name[1] = b'o' as libc::c_char;
        let up = libc::ioctl(control, libc::SIOCGIFFLAGS, &mut request) == 0 && {
            request.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            libc::ioctl(control, libc::SIOCSIFFLAGS, &request) == 0
        };
        let error = std::io::Error::last_os_error();
        libc::close(control);
        if !up {
            return Err(error);
        }
        let listener = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if listener < 0 {
            return last_error();
        }
        let mut address: libc::sockaddr_in = std::mem::zeroed();
        address.sin_family = libc::AF_INET as libc::sa_family_t;
        address.sin_port = PROXY_PORT.to_be();
        address.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let listening = libc::bind(
            listener,
            (&address as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        ) == 0
            && libc::listen(listener, 128) == 0;
        let sent = listening && {
            let mut byte = [0u8; 1];
            let mut io = libc::iovec {
                iov_base: byte.as_mut_ptr().cast(),
                iov_len: 1,
            };
            let mut control = FdMessage::empty();
            control.header.cmsg_len = FdMessage::length() as _;
            control.header.cmsg_level = libc::SOL_SOCKET;
            control.header.cmsg_type = libc::SCM_RIGHTS;
            control.fd = listener;
            let mut message: libc::msghdr = std::mem::zeroed();
            message.msg_iov = &mut io;
            message.msg_iovlen = 1;
            message.msg_control = (&mut control as *mut FdMessage).cast();
            message.msg_controllen = std::mem::size_of::<FdMessage>();
            libc::sendmsg(handover, &message, libc::MSG_NOSIGNAL) == 1
        };
        let error = std::io::Error::last_os_error();
        libc::close(listener);
        match sent {
            true => Ok(()),
            false => Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn settings_read_and_print_alike_and_order_from_the_strictest() {
        for access in [NetworkAccess::Off, NetworkAccess::AllowList, NetworkAccess::On] {
            assert_eq!(access.name().parse::<NetworkAccess>().unwrap(), access);
        }
        assert!(NetworkAccess::Off < NetworkAccess::AllowList);
        assert!(NetworkAccess::AllowList < NetworkAccess::On);
        assert!(
            "some"
                .parse::<NetworkAccess>()
                .unwrap_err()
                .contains("off, allow-list or on")
        );
    }

    #[test]
    fn every_proxy_variable_names_the_namespace_s_proxy_in_both_cases() {
        let vars = proxy_variables();
        for name in [
            "HTTP_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
            "http_proxy",
        ] {
            assert!(
                vars.contains(&(name.to_string(), "http://127.0.0.1:3128".to_string())),
                "{name}: {vars:?}"
            );
        }
        assert!(
            vars.iter()
                .any(|(n, v)| n == "no_proxy" && v.contains("127.0.0.1"))
        );
    }
}
