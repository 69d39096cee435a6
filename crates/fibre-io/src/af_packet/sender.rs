//! A transmit-only `AF_PACKET` socket: bound to an interface with
//! protocol 0, so the kernel hands it no frames (`packet_bind` registers no
//! protocol hook), and sending in `sendmmsg` batches as [`AfPacket`] does.
//! The control side of `fibre serve` sends its ARP and neighbour discovery
//! frames, and the packets a resolution released, through one per
//! interface, while the workers own the receiving sockets.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::tx::TxBatch;
use super::{bind_to, ifindex_of, packet_socket, set_option, PACKET_QDISC_BYPASS};
use crate::Port;

/// A socket that only transmits, on one interface.
///
/// ```no_run
/// use fibre_io::{PacketSender, Port};
/// let mut sender = PacketSender::open("veth0", 1518, 16)?;
/// sender.transmit(&[0xff; 60])?;
/// assert_eq!(sender.flush()?, 1);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct PacketSender {
    socket: OwnedFd,
    tx: TxBatch,
}

impl PacketSender {
    /// Opens one on interface `name` (in the calling thread's network
    /// namespace), for frames of up to `max_frame` bytes, `batch` of them
    /// per `sendmmsg`. Needs `CAP_NET_RAW`.
    pub fn open(name: &str, max_frame: usize, batch: usize) -> io::Result<Self> {
        let ifindex = ifindex_of(name)?;
        let socket = packet_socket(0)?;
        let fd = socket.as_raw_fd();
        set_option(fd, PACKET_QDISC_BYPASS, &1i32, "PACKET_QDISC_BYPASS")?;
        bind_to(fd, ifindex, 0)?;
        Ok(Self {
            socket,
            tx: TxBatch::new(ifindex as i32, batch, max_frame, false),
        })
    }

    /// Frames the kernel took, and frames it refused (a full device
    /// queue), so far.
    pub fn counts(&self) -> (u64, u64) {
        self.tx.counts()
    }
}

impl Port for PacketSender {
    /// Nothing is ever received.
    fn receive(&mut self, _max: usize, _deliver: &mut dyn FnMut(&[&[u8]])) -> io::Result<usize> {
        Ok(0)
    }

    fn transmit(&mut self, frame: &[u8]) -> io::Result<()> {
        self.tx.transmit(self.socket.as_raw_fd(), frame)
    }

    fn flush(&mut self) -> io::Result<usize> {
        self.tx.flush(self.socket.as_raw_fd())
    }
}
