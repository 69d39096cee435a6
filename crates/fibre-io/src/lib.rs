//! Packet I/O for fibre's forwarding workers: where frames come from and
//! go to. A worker polls its [`Port`]s in bursts: [`Port::receive`] lends
//! it the frames that arrived (borrowed from the backend's ring, not
//! copied), and [`Port::transmit`] queues the frames it made, sent in one
//! batch by [`Port::flush`].
//!
//! Backends:
//! - [`AfPacket`]: a Linux `AF_PACKET` socket bound to one interface,
//!   receiving through a `TPACKET_V3` ring mapped into the process (the
//!   kernel fills blocks of frames, the worker hands each block back when
//!   it has read it: no system call per frame) and transmitting with one
//!   `sendmmsg` per flush, bypassing the qdisc (`PACKET_QDISC_BYPASS`) and
//!   ignoring its own transmissions (`PACKET_IGNORE_OUTGOING`), optionally
//!   in a `PACKET_FANOUT` group that spreads flows across workers. A frame
//!   a local sender left with a partial TCP or UDP checksum (transmit
//!   offload: `TP_STATUS_CSUMNOTREADY`) is completed before it is lent,
//!   and the 64 KiB super-frames of a sender's segmentation offload
//!   (TSO/GSO, veth's default) are cut into ordinary frames first, as the
//!   kernel's `skb_gso_segment` cuts them at output (see `PACKET_VNET_HDR`
//!   in [`AfPacketConfig`]).
//! - [`PacketSender`]: an `AF_PACKET` socket that only transmits (bound
//!   with protocol 0, so the kernel copies it nothing): the control
//!   thread's way out while the workers own the receiving sockets.
//! - [`MemoryPort`]: frames in memory, for tests and fault injection.
//!
//! Why `libc` and not a wrapper crate: the ring is a kernel ABI of a few
//! fixed structures, and the wrappers that exist either stop at the
//! socket calls (`socket2`, `rustix`: no TPACKET rings) or bring their own
//! event loop; `libc` is the well-kept crate everyone else builds on.
//! AF_XDP is not built yet.
//!
//! ```
//! use fibre_io::{MemoryPort, Port};
//! let mut port = MemoryPort::new(1500);
//! port.inject(vec![0u8; 60]);
//! let mut seen = 0;
//! port.receive(64, &mut |frames| seen += frames.len()).unwrap();
//! assert_eq!(seen, 1);
//! port.transmit(&[1u8; 60]).unwrap();
//! port.flush().unwrap();
//! assert_eq!(port.sent().len(), 1);
//! ```

#![deny(unsafe_op_in_unsafe_fn)]

mod af_packet;
mod checksum;
mod gso;
mod memory;

use std::io;

pub use af_packet::{wait_any, AfPacket, AfPacketConfig, AfPacketStats, PacketSender};
pub use memory::MemoryPort;

/// One link's packet I/O, polled by one worker.
pub trait Port {
    /// Lends `deliver` the frames received since the last call, at most
    /// `max`, in one or more calls of at most `max` frames each; returns
    /// how many there were. A super-frame a backend segments is lent
    /// whole, as its segments, each counted toward `max`: the last one
    /// taken may bring the total past `max` by its segments. Never blocks:
    /// none is `Ok(0)`.
    fn receive(&mut self, max: usize, deliver: &mut dyn FnMut(&[&[u8]])) -> io::Result<usize>;

    /// Queues `frame` (a whole Ethernet frame) for the next
    /// [`flush`](Port::flush), flushing first when the queue is full.
    fn transmit(&mut self, frame: &[u8]) -> io::Result<()>;

    /// Sends the queued frames; returns how many the kernel took (the rest
    /// are dropped and counted, as a full device queue drops).
    fn flush(&mut self) -> io::Result<usize>;
}
