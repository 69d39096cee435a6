//! A Linux `AF_PACKET` socket bound to one interface: a `TPACKET_V3`
//! receive ring ([`ring`]) and `sendmmsg` batches ([`tx`]).
//!
//! The kernel side: `net/packet/af_packet.c` (`packet_set_ring`,
//! `tpacket_rcv`, `prb_retire_current_block`), and
//! `Documentation/networking/packet_mmap.rst` for the ring's protocol.

mod ring;
mod sender;
mod tx;

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::Port;
use ring::RxRing;
pub use sender::PacketSender;
use tx::TxBatch;

/// `ETH_P_ALL`: every protocol (an `ETH_P_IP` socket would miss ARP, and
/// frames an nft ingress rule drops).
const ETH_P_ALL: u16 = 0x0003;
const SOL_PACKET: libc::c_int = 263;
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_VERSION: libc::c_int = 10;
const PACKET_VNET_HDR: libc::c_int = 15;
const PACKET_FANOUT: libc::c_int = 18;
pub(crate) const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const TPACKET_V3: libc::c_int = 2;
/// `PACKET_FANOUT_HASH`: one flow to one socket of the group.
const PACKET_FANOUT_HASH: u32 = 0;

/// How an [`AfPacket`] port is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AfPacketConfig {
    /// Bytes per ring block (a power of two, a multiple of the page size).
    /// A `TPACKET_V3` frame may fill a block, less its header (the
    /// kernel's `max_frame_len`): the default 256 KiB holds a 64 KiB
    /// super-frame; a frame that does not fit is cut and counted as
    /// truncated.
    pub block_size: usize,
    /// Blocks in the receive ring.
    pub blocks: usize,
    /// Milliseconds after which the kernel hands over a block that is not
    /// full (`tp_retire_blk_tov`): the latency bound at low rates.
    pub block_timeout_ms: u32,
    /// Frames queued between flushes (one `sendmmsg`).
    pub tx_batch: usize,
    /// The largest frame transmitted (the link's MTU plus its headers).
    pub max_frame: usize,
    /// A `PACKET_FANOUT` group id shared by the workers of one interface
    /// (flows hashed across them); `None`: no group.
    pub fanout_group: Option<u16>,
    /// Ask for a `virtio_net_hdr` before every received frame
    /// (`PACKET_VNET_HDR`), so that the super-frames of a local sender's
    /// segmentation offload (TSO/GSO) are segmented in software and lent as
    /// ordinary frames, and partial checksums are completed where the
    /// header says. Transmitted frames then carry an empty header (no
    /// offload asked), as the socket option requires. A super-frame must
    /// fit a ring block (`block_size`, less its header): what does not is
    /// counted as truncated.
    pub vnet_header: bool,
}

impl Default for AfPacketConfig {
    fn default() -> Self {
        Self {
            block_size: 1 << 18,
            blocks: 16,
            block_timeout_ms: 1,
            tx_batch: 64,
            max_frame: 1518,
            fanout_group: None,
            vnet_header: true,
        }
    }
}

/// What the port counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AfPacketStats {
    /// Frames received.
    pub received: u64,
    /// Frames received with `TP_STATUS_CSUMNOTREADY` (sent by a local
    /// sender with transmit checksum offload, veth's default: their TCP or
    /// UDP checksum was partial) whose checksum was completed before they
    /// were lent, as `skb_checksum_help` completes it.
    pub partial_checksums: u64,
    /// Frames with `TP_STATUS_CSUMNOTREADY` left as they came: not TCP or
    /// UDP right after a fixed IPv4 or IPv6 header.
    pub partial_left: u64,
    /// Frames cut to fit the ring's block (`tp_snaplen < tp_len`).
    pub truncated: u64,
    /// Super-frames of a sender's segmentation offload (`gso_type` set in
    /// the `virtio_net_hdr`) cut into segments before they were lent.
    pub segmented: u64,
    /// The segments made of them, each lent as one frame.
    pub segments: u64,
    /// Super-frames dropped because they could not be segmented (a
    /// `gso_type` other than TCP or UDP, headers that do not parse).
    pub gso_refused: u64,
    /// Frames the kernel took on flush.
    pub sent: u64,
    /// Frames the kernel refused on flush (its queue was full).
    pub send_dropped: u64,
}

/// An `AF_PACKET` port on one interface.
///
/// Needs `CAP_NET_RAW`. The socket, its ring and its batch are released
/// when the port is dropped.
#[derive(Debug)]
pub struct AfPacket {
    socket: OwnedFd,
    ring: RxRing,
    tx: TxBatch,
    stats: AfPacketStats,
}

fn check(result: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if result < 0 {
        let error = io::Error::last_os_error();
        Err(io::Error::new(error.kind(), format!("{what}: {error}")))
    } else {
        Ok(result)
    }
}

fn set_option<T>(fd: RawFd, name: libc::c_int, value: &T, what: &str) -> io::Result<()> {
    // SAFETY: `value` points at a live `T` of the size given; the kernel
    // only reads it.
    let result = unsafe {
        libc::setsockopt(
            fd,
            SOL_PACKET,
            name,
            (value as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    check(result, what).map(drop)
}

/// The index of interface `name`, or iproute2's refusal.
fn ifindex_of(name: &str) -> io::Result<u32> {
    let c_name = CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in the name"))?;
    // SAFETY: `c_name` is a NUL-terminated string that outlives the call.
    let ifindex = unsafe { libc::if_nametoindex(c_name.as_ptr()) };
    if ifindex == 0 {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("Cannot find device \"{name}\""),
        ));
    }
    Ok(ifindex)
}

/// A nonblocking `AF_PACKET` raw socket for `protocol` (host order; 0:
/// none, a socket that only transmits).
fn packet_socket(protocol: u16) -> io::Result<OwnedFd> {
    let fd = check(
        // SAFETY: plain system call; the descriptor is owned right after.
        unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                libc::c_int::from(protocol.to_be()),
            )
        },
        "socket(AF_PACKET)",
    )?;
    // SAFETY: `fd` was just returned by socket() and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Binds `fd` to interface `ifindex` for `protocol` (host order).
fn bind_to(fd: RawFd, ifindex: u32, protocol: u16) -> io::Result<()> {
    // SAFETY: zero is a valid sockaddr_ll; the fields are set below.
    let mut address: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    address.sll_family = libc::AF_PACKET as u16;
    address.sll_protocol = protocol.to_be();
    address.sll_ifindex = ifindex as i32;
    check(
        // SAFETY: `address` is a live sockaddr_ll of the size given.
        unsafe {
            libc::bind(
                fd,
                (&address as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        },
        "bind",
    )
    .map(drop)
}

impl AfPacket {
    /// Opens a port on interface `name` in the calling thread's network
    /// namespace.
    pub fn open(name: &str, config: AfPacketConfig) -> io::Result<Self> {
        let ifindex = ifindex_of(name)?;
        let socket = packet_socket(ETH_P_ALL)?;
        let fd = socket.as_raw_fd();
        set_option(fd, PACKET_VERSION, &TPACKET_V3, "PACKET_VERSION")?;
        set_option(fd, PACKET_QDISC_BYPASS, &1i32, "PACKET_QDISC_BYPASS")?;
        set_option(fd, PACKET_IGNORE_OUTGOING, &1i32, "PACKET_IGNORE_OUTGOING")?;
        if config.vnet_header {
            // Before the ring: packet_setsockopt refuses it (EBUSY) after.
            set_option(fd, PACKET_VNET_HDR, &1i32, "PACKET_VNET_HDR")?;
        }
        let ring = RxRing::new(fd, &config)?;
        bind_to(fd, ifindex, ETH_P_ALL)?;
        if let Some(group) = config.fanout_group {
            let word = u32::from(group) | (PACKET_FANOUT_HASH << 16);
            set_option(fd, PACKET_FANOUT, &word, "PACKET_FANOUT")?;
        }
        let tx = TxBatch::new(
            ifindex as i32,
            config.tx_batch,
            config.max_frame,
            config.vnet_header,
        );
        Ok(Self {
            socket,
            ring,
            tx,
            stats: AfPacketStats::default(),
        })
    }

    /// What the port counted so far.
    pub fn stats(&self) -> AfPacketStats {
        let (sent, send_dropped) = self.tx.counts();
        AfPacketStats {
            sent,
            send_dropped,
            ..self.stats
        }
    }

    /// The socket's pending error (`SO_ERROR`, cleared by reading it):
    /// `ENETDOWN` or `ENODEV` once its interface went down or away.
    pub fn take_error(&self) -> Option<io::Error> {
        let mut error: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `error` and `len` are live and sized for SO_ERROR's answer.
        let result = unsafe {
            libc::getsockopt(
                self.socket.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_ERROR,
                (&mut error as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        if result < 0 {
            return Some(io::Error::last_os_error());
        }
        (error != 0).then(|| io::Error::from_raw_os_error(error))
    }

    /// Waits until a frame can be received or `timeout_ms` passed.
    pub fn wait(&self, timeout_ms: i32) -> io::Result<()> {
        if self.ring.ready() {
            return Ok(());
        }
        let mut poll = libc::pollfd {
            fd: self.socket.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd.
        interrupted_is_done(check(
            unsafe { libc::poll(&mut poll, 1, timeout_ms) },
            "poll",
        ))
    }
}

/// Waits until one of `ports` has a frame to receive or `timeout_ms`
/// passed (`poll` on their sockets). Returns the index of a port whose
/// socket is in error (its interface went away: `POLLERR`, read the reason
/// with [`AfPacket::take_error`]), which would otherwise end every wait at
/// once; the caller stops polling it.
pub fn wait_any(ports: &[&AfPacket], timeout_ms: i32) -> io::Result<Option<usize>> {
    if ports.iter().any(|p| p.ring.ready()) {
        return Ok(None);
    }
    let mut polls: Vec<libc::pollfd> = ports
        .iter()
        .map(|p| libc::pollfd {
            fd: p.socket.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: `polls` is a live array of as many pollfds as given.
    let result = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, timeout_ms) };
    interrupted_is_done(check(result, "poll"))?;
    Ok(polls
        .iter()
        .position(|p| p.revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0))
}

/// A wait a signal cut short is over: the caller looks at why (a stop
/// request) before it waits again.
fn interrupted_is_done(result: io::Result<libc::c_int>) -> io::Result<()> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
        other => other.map(drop),
    }
}

impl Port for AfPacket {
    fn receive(&mut self, max: usize, deliver: &mut dyn FnMut(&[&[u8]])) -> io::Result<usize> {
        let seen = self.ring.receive(max, deliver);
        self.stats.received += seen.frames;
        self.stats.partial_checksums += seen.partial_checksums;
        self.stats.partial_left += seen.partial_left;
        self.stats.truncated += seen.truncated;
        self.stats.segmented += seen.segmented;
        self.stats.segments += seen.segments;
        self.stats.gso_refused += seen.gso_refused;
        Ok(seen.lent as usize)
    }

    fn transmit(&mut self, frame: &[u8]) -> io::Result<()> {
        self.tx.transmit(self.socket.as_raw_fd(), frame)
    }

    fn flush(&mut self) -> io::Result<usize> {
        self.tx.flush(self.socket.as_raw_fd())
    }
}
