//! Packet buffers with headroom, and batches of them: the transmit and
//! receive contract of every device.
//!
//! A buffer is allocated once and reused: a device prepends headers into
//! the headroom in place (no copy, no allocation) and strips them by moving
//! the start forward, as a NIC driver does with an skb or an AF_XDP/
//! AF_PACKET ring frame. A batch is what one call moves, like a NIC queue's
//! burst: each packet carries its own [`Verdict`], so a device can refuse
//! some and pass the rest on.

use crate::DropReason;

/// What has happened to a packet in a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Still to be handled by the next device.
    Pending,
    /// Handed to the wire (or, for a dummy/loopback device, consumed).
    Sent,
    /// Dropped, and counted under this reason on the device that dropped it.
    Dropped(DropReason),
}

/// One packet in a buffer with headroom.
///
/// ```
/// use fibre_dev::PacketBuf;
/// let mut p = PacketBuf::new(64, 128);
/// p.load(b"inner").unwrap();
/// p.push_front(2).unwrap().copy_from_slice(b"hi");
/// assert_eq!(p.data(), b"hiinner");
/// assert_eq!(p.headroom(), 62);
/// assert!(p.pull_front(2));
/// assert_eq!(p.data(), b"inner");
/// ```
#[derive(Debug, Clone)]
pub struct PacketBuf {
    storage: Box<[u8]>,
    start: usize,
    end: usize,
    /// Headroom reserved in front of a freshly loaded packet.
    reserved: usize,
    verdict: Verdict,
}

// A batch walks these in a loop: keep each one small (buffer pointer and
// length, three offsets, a one-byte verdict).
const _: () = assert!(
    core::mem::size_of::<Verdict>() == 1,
    "Verdict must stay one byte (a tag over the one-byte DropReason), so that \
     it fits PacketBuf's padding: if this fires, a variant carries data or \
     DropReason grew past 255 reasons; count the detail on the device instead"
);
const _: () = assert!(
    core::mem::size_of::<PacketBuf>() == 48,
    "PacketBuf must stay 48 bytes (storage pointer and length, three offsets, \
     the verdict), so that a batch walks four in three 64-byte lines: if this \
     fires, a field was added; keep per-batch state in PacketBatch, or narrow \
     the offsets"
);

/// Why a packet could not be placed in a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("packet of {len} bytes does not fit the {room} bytes after the headroom")]
pub struct PacketTooLong {
    /// The packet's length.
    pub len: usize,
    /// Room after the headroom.
    pub room: usize,
}

impl PacketBuf {
    /// A buffer of `headroom + room` bytes, empty, with `headroom` bytes
    /// reserved in front of the data. This is the only allocation.
    pub fn new(headroom: usize, room: usize) -> PacketBuf {
        PacketBuf {
            storage: vec![0u8; headroom + room].into_boxed_slice(),
            start: headroom,
            end: headroom,
            reserved: headroom,
            verdict: Verdict::Pending,
        }
    }

    /// Copies `packet` in right after the reserved headroom and marks it
    /// pending (how a receive ring fills a frame).
    pub fn load(&mut self, packet: &[u8]) -> Result<(), PacketTooLong> {
        let room = self.storage.len() - self.reserved;
        if packet.len() > room {
            return Err(PacketTooLong {
                len: packet.len(),
                room,
            });
        }
        self.start = self.reserved;
        self.end = self.reserved + packet.len();
        self.storage[self.start..self.end].copy_from_slice(packet);
        self.verdict = Verdict::Pending;
        Ok(())
    }

    /// Resets the data window to `len` bytes after the headroom without
    /// touching their contents, and marks it pending: replays the same
    /// packet (benchmarks) after headers were prepended.
    pub fn rewind(&mut self, len: usize) -> Result<(), PacketTooLong> {
        let room = self.storage.len() - self.reserved;
        if len > room {
            return Err(PacketTooLong { len, room });
        }
        self.start = self.reserved;
        self.end = self.reserved + len;
        self.verdict = Verdict::Pending;
        Ok(())
    }

    /// The packet bytes.
    pub fn data(&self) -> &[u8] {
        &self.storage[self.start..self.end]
    }

    /// The packet bytes, writable.
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.end]
    }

    /// Length of the packet.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// True when the packet has no bytes.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }

    /// Free bytes in front of the packet.
    pub fn headroom(&self) -> usize {
        self.start
    }

    /// Grows the packet by `n` bytes at the front and returns them, or
    /// `None` if the headroom is too small.
    pub fn push_front(&mut self, n: usize) -> Option<&mut [u8]> {
        let start = self.start.checked_sub(n)?;
        self.start = start;
        Some(&mut self.storage[start..start + n])
    }

    /// Removes `n` bytes from the front; false (and nothing changed) if the
    /// packet is shorter.
    pub fn pull_front(&mut self, n: usize) -> bool {
        if n > self.len() {
            return false;
        }
        self.start += n;
        true
    }

    /// Cuts the packet to `len` bytes (no-op when already shorter).
    pub fn truncate(&mut self, len: usize) {
        self.end = self.start + len.min(self.len());
    }

    /// What has happened to it.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// Records what happened to it.
    pub fn set_verdict(&mut self, verdict: Verdict) {
        self.verdict = verdict;
    }
}

/// The packets one transmit or receive call moves.
///
/// ```
/// use fibre_dev::{PacketBatch, PacketBuf, Verdict};
/// let mut batch = PacketBatch::with_capacity(2);
/// batch.push(PacketBuf::new(64, 256));
/// assert_eq!(batch.len(), 1);
/// assert_eq!(batch.pending().count(), 1);
/// batch.packets_mut()[0].set_verdict(Verdict::Sent);
/// assert_eq!(batch.pending().count(), 0);
/// ```
#[derive(Debug, Clone, Default)]
pub struct PacketBatch {
    packets: Vec<PacketBuf>,
}

impl PacketBatch {
    /// An empty batch with room for `n` buffers.
    pub fn with_capacity(n: usize) -> PacketBatch {
        PacketBatch {
            packets: Vec::with_capacity(n),
        }
    }

    /// Adds a buffer.
    pub fn push(&mut self, packet: PacketBuf) {
        self.packets.push(packet);
    }

    /// Number of buffers.
    pub fn len(&self) -> usize {
        self.packets.len()
    }

    /// True when there are no buffers.
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// The buffers.
    pub fn packets(&self) -> &[PacketBuf] {
        &self.packets
    }

    /// The buffers, writable.
    pub fn packets_mut(&mut self) -> &mut [PacketBuf] {
        &mut self.packets
    }

    /// The packets still to be handled.
    pub fn pending(&self) -> impl Iterator<Item = &PacketBuf> {
        self.packets
            .iter()
            .filter(|p| p.verdict == Verdict::Pending)
    }

    /// The packets still to be handled, writable.
    pub fn pending_mut(&mut self) -> impl Iterator<Item = &mut PacketBuf> {
        self.packets
            .iter_mut()
            .filter(|p| p.verdict == Verdict::Pending)
    }

    /// Removes every buffer, handing them back (to a free list or ring).
    pub fn drain(&mut self) -> std::vec::Drain<'_, PacketBuf> {
        self.packets.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headroom_is_bounded_and_windows_stay_inside() {
        let mut p = PacketBuf::new(4, 8);
        assert_eq!(p.load(&[0; 9]), Err(PacketTooLong { len: 9, room: 8 }));
        p.load(&[1, 2, 3]).unwrap();
        assert!(p.push_front(5).is_none());
        assert_eq!(p.push_front(4).unwrap().len(), 4);
        assert_eq!(p.headroom(), 0);
        assert!(!p.pull_front(8));
        assert!(p.pull_front(7));
        assert!(p.is_empty());
        p.rewind(3).unwrap();
        assert_eq!(p.data(), &[1, 2, 3]);
        p.truncate(1);
        assert_eq!(p.data(), &[1]);
        assert!(p.rewind(9).is_err());
    }
}
