//! The bounded queues from a worker to the control side: what the worker
//! does not handle itself waits there, in memory allocated once, until the
//! control side drains it.

use std::net::IpAddr;

use fibre_fib::LinkIndex;

use crate::ring::FrameRing;

/// Why a frame was handed to the control side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PuntKind {
    /// ARP, or IPv6 neighbour discovery (router/neighbour solicitations and
    /// advertisements, redirects): the neighbour state machine's input.
    Neighbour,
    /// A packet for the router itself that the worker does not answer
    /// (`ip_local_deliver`): anything but an echo request.
    Local,
    /// A packet ready to leave whose next hop has no resolved neighbour:
    /// the control side queues it on the neighbour and solicits it
    /// (`__neigh_event_send`). Its Ethernet destination is zero, to be
    /// filled in once resolved; its source is the output port's MAC.
    Unresolved,
}

/// One frame handed to the control side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Punt<'a> {
    /// Why.
    pub kind: PuntKind,
    /// The worker's port: where it was received (`Neighbour`, `Local`) or
    /// where it is to leave (`Unresolved`).
    pub port: usize,
    /// That port's FIB link.
    pub link: LinkIndex,
    /// `Unresolved`: the next hop to resolve on `link`.
    pub next_hop: Option<IpAddr>,
    /// The whole Ethernet frame.
    pub frame: &'a [u8],
}

#[derive(Debug, Clone, Copy, Default)]
struct Meta {
    port: usize,
    link: LinkIndex,
    next_hop: Option<IpAddr>,
}

/// One bounded queue of punted frames.
#[derive(Debug)]
pub(crate) struct PuntQueue {
    kind: PuntKind,
    frames: FrameRing,
    meta: Vec<Meta>,
}

impl PuntQueue {
    pub(crate) fn new(kind: PuntKind, capacity: usize, slot_len: usize) -> PuntQueue {
        PuntQueue {
            kind,
            frames: FrameRing::new(capacity, slot_len),
            meta: vec![Meta::default(); capacity],
        }
    }

    /// Queues a frame written by `write` into a free slot (it returns the
    /// length); false when the queue is full.
    pub(crate) fn push_with(
        &mut self,
        port: usize,
        link: LinkIndex,
        next_hop: Option<IpAddr>,
        write: impl FnOnce(&mut [u8]) -> usize,
    ) -> bool {
        let at = self.frames.len();
        let Some(slot) = self.frames.next_slot() else {
            return false;
        };
        let len = write(slot);
        self.meta[at] = Meta {
            port,
            link,
            next_hop,
        };
        self.frames.commit(len);
        true
    }

    /// Queues a copy of `frame` (cut to a slot); false when full.
    pub(crate) fn push(&mut self, port: usize, link: LinkIndex, frame: &[u8]) -> bool {
        self.push_with(port, link, None, |slot| {
            let len = frame.len().min(slot.len());
            slot[..len].copy_from_slice(&frame[..len]);
            len
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.frames.len()
    }

    /// Hands every queued frame to `f`, oldest first, and empties the queue.
    pub(crate) fn drain(&mut self, mut f: impl FnMut(Punt<'_>)) {
        for i in 0..self.frames.len() {
            let m = self.meta[i];
            f(Punt {
                kind: self.kind,
                port: m.port,
                link: m.link,
                next_hop: m.next_hop,
                frame: self.frames.get(i),
            });
        }
        self.frames.clear();
    }
}
