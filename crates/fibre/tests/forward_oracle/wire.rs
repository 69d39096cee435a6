//! Frames onto and off the veths: AF_PACKET sockets opened inside the
//! namespaces (a thread `setns(2)`es into one, opens and binds the socket
//! and ends; the socket stays in that namespace), the frames injected one
//! by one, paced, and what every peer of the router receives collected.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// `ETH_P_ALL`, in network order for `socket(2)` and `sockaddr_ll`.
const ETH_P_ALL_BE: u16 = (libc::ETH_P_ALL as u16).to_be();

/// `PACKET_IGNORE_OUTGOING` (linux/if_packet.h, since 4.20).
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

/// How many frames go out between two drains of the capture sockets
/// (and a short pause, so that the router's backlog never overflows).
const PACE_EVERY: usize = 32;

/// A frame received on a peer of the router: `port` is the router link
/// (0 for the sender's side) that sent it.
#[derive(Debug, Clone)]
pub struct Captured {
    /// Router link index in the plan (`rK`).
    pub port: usize,
    /// The whole Ethernet frame.
    pub bytes: Vec<u8>,
}

fn last_error(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// An AF_PACKET socket on `ifname` in the namespace at `ns_path`,
/// nonblocking, which does not see the frames it (or anyone on this
/// host) sends out of that link.
pub fn open(ns_path: &str, ifname: &str) -> Result<OwnedFd, String> {
    let ns_path = ns_path.to_string();
    let ifname = ifname.to_string();
    std::thread::spawn(move || open_here(&ns_path, &ifname))
        .join()
        .map_err(|_| "the socket-opening thread panicked".to_string())?
}

fn open_here(ns_path: &str, ifname: &str) -> Result<OwnedFd, String> {
    let path = CString::new(ns_path).map_err(|e| e.to_string())?;
    // SAFETY: `path` is a valid NUL-terminated string; the returned fd is
    // checked and owned below.
    let ns = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if ns < 0 {
        return Err(last_error(&format!("open {ns_path}")));
    }
    // SAFETY: `ns` is an fd we just opened and own.
    let ns = unsafe { OwnedFd::from_raw_fd(ns) };
    // SAFETY: setns on this thread only (a thread of our own that ends
    // after opening the socket); `ns` is a network namespace fd.
    if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(last_error(&format!("setns {ns_path}")));
    }
    let name = CString::new(ifname).map_err(|e| e.to_string())?;
    // SAFETY: `name` is a valid NUL-terminated string.
    let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if ifindex == 0 {
        return Err(last_error(&format!("if_nametoindex {ifname}")));
    }
    // SAFETY: plain socket(2) call; the fd is checked and owned below.
    let fd = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            libc::c_int::from(ETH_P_ALL_BE),
        )
    };
    if fd < 0 {
        return Err(last_error("socket(AF_PACKET)"));
    }
    // SAFETY: `fd` is a socket we just made and own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let set = |level: libc::c_int, option: libc::c_int, value: libc::c_int| {
        // SAFETY: `value` lives across the call and its size is passed.
        let done = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                level,
                option,
                std::ptr::from_ref(&value).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if done != 0 {
            Err(last_error(&format!("setsockopt {level}/{option}")))
        } else {
            Ok(())
        }
    };
    set(libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)?;
    set(libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 64 << 20)?;
    // SAFETY: all-zero is a valid sockaddr_ll; the fields are set below.
    let mut address: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    address.sll_family = libc::AF_PACKET as u16;
    address.sll_protocol = ETH_P_ALL_BE;
    address.sll_ifindex = ifindex as i32;
    // SAFETY: `address` is a sockaddr_ll and its size is passed.
    let bound = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            std::ptr::from_ref(&address).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if bound != 0 {
        return Err(last_error(&format!("bind to {ifname}")));
    }
    // Frames of other links may have come in between socket() and bind().
    drop(receive_all(&fd, 0));
    Ok(fd)
}

/// Every frame waiting on `fd` that came in (not one this host sent).
fn receive_all(fd: &OwnedFd, port: usize) -> Vec<Captured> {
    let mut out = Vec::new();
    let mut buffer = vec![0u8; 65536];
    loop {
        // SAFETY: all-zero is a valid sockaddr_ll.
        let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        let mut from_len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        // SAFETY: `buffer` and `from` outlive the call, their sizes are passed.
        let n = unsafe {
            libc::recvfrom(
                fd.as_raw_fd(),
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                libc::MSG_DONTWAIT | libc::MSG_TRUNC,
                std::ptr::from_mut(&mut from).cast(),
                &mut from_len,
            )
        };
        if n < 0 {
            return out;
        }
        if from.sll_pkttype == libc::PACKET_OUTGOING {
            continue;
        }
        let n = (n as usize).min(buffer.len());
        out.push(Captured {
            port,
            bytes: buffer[..n].to_vec(),
        });
    }
}

/// Sends one frame out of `fd`'s link.
fn send(fd: &OwnedFd, frame: &[u8]) -> Result<(), String> {
    // SAFETY: `frame` outlives the call and its length is passed.
    let n = unsafe { libc::send(fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
    if n < 0 {
        return Err(last_error(&format!("send of a {}-byte frame", frame.len())));
    }
    Ok(())
}

/// The sockets of one run, two on the peer of each router link `rK`:
/// `injects[k]` sends there, `captures[k]` receives what the router
/// sends there (and ignores what was injected).
pub struct Wire {
    injects: Vec<OwnedFd>,
    captures: Vec<OwnedFd>,
}

impl Wire {
    /// `injects[k]` and `captures[k]` on the peer of router link k.
    pub fn new(injects: Vec<OwnedFd>, captures: Vec<OwnedFd>) -> Wire {
        Wire { injects, captures }
    }

    fn drain(&self, into: &mut Vec<(usize, Captured)>, input: usize) -> usize {
        let mut got = 0;
        for (port, fd) in self.captures.iter().enumerate() {
            for c in receive_all(fd, port) {
                into.push((input, c));
                got += 1;
            }
        }
        got
    }

    /// Injects `frames` in order, each `(port, bytes)` on the peer of
    /// router link `port`, and returns what came out, each with the
    /// index of the last frame sent before it was read (a hint only: the
    /// outputs are matched to inputs by the ids they carry). After the
    /// last frame, waits until nothing has come for `quiet` (at most
    /// `limit`).
    pub fn run(
        &self,
        frames: &[(usize, &[u8])],
        quiet: Duration,
        limit: Duration,
    ) -> Result<Vec<(usize, Captured)>, String> {
        let mut out = Vec::new();
        for (i, (port, frame)) in frames.iter().enumerate() {
            let socket = self
                .injects
                .get(*port)
                .ok_or_else(|| format!("no router link {port} to inject on"))?;
            send(socket, frame)?;
            if (i + 1) % PACE_EVERY == 0 {
                std::thread::sleep(Duration::from_micros(300));
                self.drain(&mut out, i);
            }
        }
        let started = Instant::now();
        let mut last = Instant::now();
        while started.elapsed() < limit && last.elapsed() < quiet {
            if self.drain(&mut out, frames.len().saturating_sub(1)) > 0 {
                last = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(out)
    }
}
