//! Frames queued for one `sendmmsg`: copied into slots allocated when the
//! port is made, so that transmitting allocates nothing.

use std::io;
use std::os::fd::RawFd;

/// The queued frames and the message headers that point at them.
#[derive(Debug)]
pub(super) struct TxBatch {
    slots: Vec<u8>,
    lens: Vec<usize>,
    slot_size: usize,
    capacity: usize,
    ifindex: i32,
    /// Whether each frame goes out after an empty `virtio_net_hdr` (the
    /// socket has `PACKET_VNET_HDR`: packet_snd reads one first).
    vnet_header: bool,
    /// Frames the kernel took, and frames it refused (a full device
    /// queue), since the batch was made.
    sent: u64,
    dropped: u64,
}

/// The `virtio_net_hdr` sent before each frame: no checksum to complete,
/// no segmentation.
static EMPTY_VNET_HEADER: [u8; crate::gso::VNET_HEADER_LEN] = [0; crate::gso::VNET_HEADER_LEN];

impl TxBatch {
    /// Room for `capacity` frames of up to `slot_size` bytes, sent out of
    /// interface `ifindex`, each after an empty `virtio_net_hdr` when
    /// `vnet_header`.
    pub fn new(ifindex: i32, capacity: usize, slot_size: usize, vnet_header: bool) -> Self {
        let capacity = capacity.max(1);
        Self {
            slots: vec![0; capacity * slot_size],
            lens: Vec::with_capacity(capacity),
            slot_size,
            capacity,
            ifindex,
            vnet_header,
            sent: 0,
            dropped: 0,
        }
    }

    /// Frames the kernel took and frames it refused, so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.sent, self.dropped)
    }

    /// Queues a copy of `frame` to go out of socket `fd`, first sending
    /// what is queued when the batch is full: what both ports'
    /// `Port::transmit` do.
    pub fn transmit(&mut self, fd: RawFd, frame: &[u8]) -> io::Result<()> {
        if self.is_full() {
            self.flush(fd)?;
        }
        self.push(frame)
    }

    /// Sends what is queued ([`TxBatch::send`]) and counts what the
    /// kernel took and refused: what both ports' `Port::flush` do.
    pub fn flush(&mut self, fd: RawFd) -> io::Result<usize> {
        let queued = self.len();
        let sent = self.send(fd)?;
        self.sent += sent as u64;
        self.dropped += (queued - sent) as u64;
        Ok(sent)
    }

    pub fn len(&self) -> usize {
        self.lens.len()
    }

    pub fn is_full(&self) -> bool {
        self.lens.len() == self.capacity
    }

    /// Queues a copy of `frame`.
    pub fn push(&mut self, frame: &[u8]) -> io::Result<()> {
        if frame.len() > self.slot_size {
            return Err(io::Error::from_raw_os_error(libc::EMSGSIZE));
        }
        let at = self.lens.len() * self.slot_size;
        self.slots[at..at + frame.len()].copy_from_slice(frame);
        self.lens.push(frame.len());
        Ok(())
    }

    /// Sends the queued frames with as few `sendmmsg` calls as the kernel
    /// allows; returns how many it took. A full queue (`EAGAIN`,
    /// `ENOBUFS`) ends the batch: the rest are dropped, not retried.
    pub fn send(&mut self, fd: RawFd) -> io::Result<usize> {
        const CHUNK: usize = 64;
        // SAFETY: zero is a valid sockaddr_ll; the fields are set below.
        let mut address: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        address.sll_family = libc::AF_PACKET as u16;
        address.sll_ifindex = self.ifindex;
        let mut sent = 0;
        while sent < self.lens.len() {
            let n = (self.lens.len() - sent).min(CHUNK);
            // SAFETY: zeroed iovec and mmsghdr are valid (null pointers,
            // zero lengths); each is filled below before use.
            let mut iovecs: [[libc::iovec; 2]; CHUNK] = unsafe { std::mem::zeroed() };
            // SAFETY: as above.
            let mut messages: [libc::mmsghdr; CHUNK] = unsafe { std::mem::zeroed() };
            for i in 0..n {
                let slot = (sent + i) * self.slot_size;
                let [header, frame] = &mut iovecs[i];
                // The kernel only reads the header (packet_snd_vnet_parse).
                header.iov_base = EMPTY_VNET_HEADER.as_ptr().cast_mut().cast();
                header.iov_len = EMPTY_VNET_HEADER.len();
                frame.iov_base = self.slots[slot..].as_mut_ptr().cast();
                frame.iov_len = self.lens[sent + i];
                let parts = if self.vnet_header { 0 } else { 1 };
                messages[i].msg_hdr.msg_iov = iovecs[i][parts..].as_mut_ptr();
                messages[i].msg_hdr.msg_iovlen = 2 - parts;
                messages[i].msg_hdr.msg_name = (&mut address as *mut libc::sockaddr_ll).cast();
                messages[i].msg_hdr.msg_namelen =
                    std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            }
            // SAFETY: `messages[..n]` point at live iovecs, slots and the
            // address, all of which outlive the call.
            let result =
                unsafe { libc::sendmmsg(fd, messages.as_mut_ptr(), n as u32, libc::MSG_DONTWAIT) };
            if result < 0 {
                let error = io::Error::last_os_error();
                match error.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::ENOBUFS) => break,
                    _ => {
                        self.lens.clear();
                        return Err(error);
                    }
                }
            }
            sent += result as usize;
            if (result as usize) < n {
                break;
            }
        }
        self.lens.clear();
        Ok(sent)
    }
}
