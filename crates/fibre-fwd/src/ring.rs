//! A bounded queue of frames in memory allocated once: fixed-size slots,
//! filled in place and drained in order. Transmit queues and the punt
//! queues to the control side are both made of it, so that nothing on the
//! packet path allocates.

/// A bounded queue of up to `capacity` frames of at most `slot_len` bytes.
#[derive(Debug)]
pub(crate) struct FrameRing {
    slot_len: usize,
    data: Vec<u8>,
    lens: Vec<usize>,
    len: usize,
}

impl FrameRing {
    /// A ring of `capacity` slots of `slot_len` bytes, allocated now.
    pub(crate) fn new(capacity: usize, slot_len: usize) -> FrameRing {
        FrameRing {
            slot_len,
            data: vec![0; capacity * slot_len],
            lens: vec![0; capacity],
            len: 0,
        }
    }

    /// The next free slot, whole, to be written and then committed with
    /// [`FrameRing::commit`]; `None` when the ring is full.
    pub(crate) fn next_slot(&mut self) -> Option<&mut [u8]> {
        if self.len == self.lens.len() {
            return None;
        }
        let start = self.len * self.slot_len;
        Some(&mut self.data[start..start + self.slot_len])
    }

    /// Queues the slot [`FrameRing::next_slot`] gave, `len` bytes long.
    pub(crate) fn commit(&mut self, len: usize) {
        debug_assert!(self.len < self.lens.len() && len <= self.slot_len);
        self.lens[self.len] = len;
        self.len += 1;
    }

    /// The frame at position `index` (0: the oldest).
    pub(crate) fn get(&self, index: usize) -> &[u8] {
        let start = index * self.slot_len;
        &self.data[start..start + self.lens[index]]
    }

    /// Frames queued.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Empties the ring (its memory stays).
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_fill_in_order_and_refuse_when_full() {
        let mut ring = FrameRing::new(2, 8);
        for n in 1..=2u8 {
            let slot = ring.next_slot().unwrap();
            slot[..n as usize].fill(n);
            ring.commit(n as usize);
        }
        assert!(ring.next_slot().is_none());
        assert_eq!((ring.get(0), ring.get(1)), (&[1u8][..], &[2u8, 2][..]));
        ring.clear();
        assert_eq!(ring.len(), 0);
        assert!(ring.next_slot().is_some());
    }
}
