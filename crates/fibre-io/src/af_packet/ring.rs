//! The `TPACKET_V3` receive ring: blocks of frames the kernel fills and
//! hands over by setting a block's status to `TP_STATUS_USER`, and takes
//! back when the reader sets it to `TP_STATUS_KERNEL`
//! (`Documentation/networking/packet_mmap.rst`, "TPACKET_V3").

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};

use super::{check, set_option, AfPacketConfig, PACKET_RX_RING};
use crate::gso::{Segmenter, VnetHeader, NEEDS_CSUM, VNET_HEADER_LEN};

const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1 << 0;
const TP_STATUS_CSUMNOTREADY: u32 = 1 << 3;

/// Frames handed to one call of the receive callback at the most.
const RX_BURST: usize = 256;

/// `struct tpacket_req3`.
#[repr(C)]
struct RingRequest {
    block_size: u32,
    block_count: u32,
    frame_size: u32,
    frame_count: u32,
    retire_block_timeout_ms: u32,
    private_size: u32,
    feature_request: u32,
}

/// `struct tpacket_block_desc` with its `tpacket_hdr_v1`, as far as the
/// reader needs it.
#[repr(C)]
struct BlockHeader {
    version: u32,
    offset_to_private: u32,
    status: AtomicU32,
    packet_count: u32,
    offset_to_first_packet: u32,
    block_len: u32,
}

/// `struct tpacket3_hdr`, as far as the reader needs it.
#[repr(C)]
struct PacketHeader {
    next_offset: u32,
    seconds: u32,
    nanoseconds: u32,
    captured_len: u32,
    wire_len: u32,
    status: u32,
    mac_offset: u16,
    network_offset: u16,
}

const _: () = assert!(
    std::mem::size_of::<RingRequest>() == 28,
    "RingRequest must be the kernel's struct tpacket_req3 (7 x u32): if this fires, check the field list against include/uapi/linux/if_packet.h"
);
const _: () = assert!(
    std::mem::offset_of!(BlockHeader, status) == 8
        && std::mem::offset_of!(BlockHeader, offset_to_first_packet) == 16,
    "BlockHeader must match struct tpacket_block_desc + tpacket_hdr_v1 (block_status at 8, offset_to_first_pkt at 16): if this fires, check include/uapi/linux/if_packet.h"
);
const _: () = assert!(
    std::mem::offset_of!(PacketHeader, status) == 20
        && std::mem::offset_of!(PacketHeader, mac_offset) == 24,
    "PacketHeader must match struct tpacket3_hdr (tp_status at 20, tp_mac at 24): if this fires, check include/uapi/linux/if_packet.h"
);

/// What one [`RxRing::receive`] saw.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Seen {
    /// Frames taken from the ring.
    pub frames: u64,
    /// Frames lent: those taken, each super-frame counted as its segments.
    pub lent: u64,
    pub segmented: u64,
    pub segments: u64,
    pub gso_refused: u64,
    pub partial_checksums: u64,
    pub partial_left: u64,
    pub truncated: u64,
}

/// The reader's position in the block it is reading.
#[derive(Debug, Clone, Copy)]
struct Cursor {
    offset: usize,
    left: u32,
}

/// The mapped ring and where the reader is in it.
#[derive(Debug)]
pub(super) struct RxRing {
    map: *mut u8,
    map_len: usize,
    block_size: usize,
    blocks: usize,
    block: usize,
    cursor: Option<Cursor>,
    /// Whether each frame is preceded by a `virtio_net_hdr`
    /// (`PACKET_VNET_HDR`).
    vnet_header: bool,
    segmenter: Segmenter,
}

// SAFETY: the mapping belongs to this ring alone (the socket that shares it
// with the kernel is owned by the same port), so moving the ring to another
// thread moves its only reader.
unsafe impl Send for RxRing {}

impl RxRing {
    /// Asks the kernel for the ring on socket `fd` and maps it.
    pub fn new(fd: RawFd, config: &AfPacketConfig) -> io::Result<Self> {
        let frame_size = 2048u32;
        let invalid = |why: &str| io::Error::new(io::ErrorKind::InvalidInput, why.to_string());
        if !config.block_size.is_power_of_two() || config.block_size < 4096 {
            return Err(invalid(
                "the ring's block size must be a power of two of at least 4096",
            ));
        }
        if config.blocks == 0 {
            return Err(invalid("the ring needs at least one block"));
        }
        let block_size =
            u32::try_from(config.block_size).map_err(|_| invalid("block size over 4 GiB"))?;
        let block_count =
            u32::try_from(config.blocks).map_err(|_| invalid("too many ring blocks"))?;
        let request = RingRequest {
            block_size,
            block_count,
            frame_size,
            frame_count: block_size / frame_size * block_count,
            retire_block_timeout_ms: config.block_timeout_ms,
            private_size: 0,
            feature_request: 0,
        };
        set_option(fd, PACKET_RX_RING, &request, "PACKET_RX_RING")?;
        let map_len = config.block_size * config.blocks;
        // SAFETY: a new shared mapping of the ring the kernel just made for
        // `fd`; nothing else in the process refers to that memory.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            check(-1, "mmap of the receive ring")?;
        }
        Ok(Self {
            map: map.cast(),
            map_len,
            block_size: config.block_size,
            blocks: config.blocks,
            block: 0,
            cursor: None,
            vnet_header: config.vnet_header,
            segmenter: Segmenter::default(),
        })
    }

    fn header(&self, block: usize) -> &BlockHeader {
        // SAFETY: `block < self.blocks`, so the header lies inside the
        // mapping, at the start of a page-aligned block; the kernel writes
        // only `status` concurrently, which is atomic.
        unsafe { &*self.map.add(block * self.block_size).cast::<BlockHeader>() }
    }

    /// Whether the current block is the reader's.
    pub fn ready(&self) -> bool {
        self.header(self.block).status.load(Ordering::Acquire) & TP_STATUS_USER != 0
    }

    /// Hands the current block back to the kernel and moves to the next.
    fn release(&mut self) {
        self.header(self.block)
            .status
            .store(TP_STATUS_KERNEL, Ordering::Release);
        self.block = (self.block + 1) % self.blocks;
        self.cursor = None;
    }

    /// Lends `deliver` up to `max` frames, one call per block read (and
    /// per run of segments). A super-frame's segments count toward `max`,
    /// so that what one call lends stays near what the caller can queue;
    /// a super-frame is only taken while fewer than `max` were lent, and
    /// then lent whole (it may end the call past `max` by its segments).
    pub fn receive(&mut self, max: usize, deliver: &mut dyn FnMut(&[&[u8]])) -> Seen {
        let mut seen = Seen::default();
        while (seen.lent as usize) < max && self.ready() {
            // The block's frames, lent to `deliver`; dropped before the
            // block is released below.
            let mut slices: [&[u8]; RX_BURST] = [&[]; RX_BURST];
            let header = self.header(self.block);
            let mut cursor = self.cursor.unwrap_or(Cursor {
                offset: header.offset_to_first_packet as usize,
                left: header.packet_count,
            });
            let base = self.block * self.block_size;
            // `n` frames of this block wait in `slices`; `taken` frames were
            // taken from the ring.
            let mut n = 0;
            let mut taken = 0;
            while cursor.left > 0 && n < RX_BURST && (seen.lent as usize) + n < max {
                // SAFETY: the block at `base` is the reader's (`ready`), and
                // the frame is dropped with `slices` before it is released.
                let frame = unsafe {
                    frame_at(
                        self.map,
                        self.block_size,
                        base + cursor.offset,
                        self.vnet_header,
                        &mut seen,
                    )
                };
                let Some(frame) = frame else {
                    // A header that does not fit its block: give the block up.
                    cursor.left = 0;
                    break;
                };
                taken += 1;
                cursor.left -= 1;
                cursor.offset += frame.next_offset;
                if frame.next_offset == 0 {
                    cursor.left = 0;
                }
                let Some(vnet) = frame.gso else {
                    slices[n] = frame.bytes;
                    n += 1;
                    continue;
                };
                // A super-frame: what came before it first, then its
                // segments, so the order on the wire is kept.
                if n > 0 {
                    deliver(&slices[..n]);
                    seen.lent += n as u64;
                    n = 0;
                }
                match self.segmenter.segment(frame.bytes, &vnet, max, deliver) {
                    Ok(segments) => {
                        seen.segmented += 1;
                        seen.segments += segments;
                        seen.lent += segments;
                    }
                    Err(_) => seen.gso_refused += 1,
                }
            }
            seen.frames += taken as u64;
            if n > 0 {
                deliver(&slices[..n]);
                seen.lent += n as u64;
            }
            // `slices` is not used past this point: the block may go back.
            if cursor.left == 0 {
                self.release();
            } else {
                self.cursor = Some(cursor);
            }
        }
        seen
    }
}

/// The frame whose header is `at` bytes into the mapping at `map`, inside
/// a block of `block_size` bytes that starts at `at - at % block_size`.
///
/// # Safety
/// That block must be the reader's (`TP_STATUS_USER`), and the returned
/// slice must be dropped before the block is handed back to the kernel.
unsafe fn frame_at<'a>(
    map: *mut u8,
    block_size: usize,
    at: usize,
    vnet_header: bool,
    seen: &mut Seen,
) -> Option<Frame<'a>> {
    let block_end = at - at % block_size + block_size;
    if at + std::mem::size_of::<PacketHeader>() > block_end {
        return None;
    }
    // SAFETY: the header lies inside the block (checked above), which the
    // kernel does not write while the reader holds it (the caller's
    // contract); tpacket3_hdr is 4-byte aligned (TPACKET_ALIGNMENT is 16).
    let packet = unsafe { &*map.add(at).cast::<PacketHeader>() };
    let start = at + usize::from(packet.mac_offset);
    let len = packet.captured_len as usize;
    if start + len > block_end {
        return None;
    }
    let truncated = packet.captured_len < packet.wire_len;
    if truncated {
        seen.truncated += 1;
    }
    // tpacket_rcv writes the virtio_net_hdr right before the frame.
    let header_end = at + std::mem::size_of::<PacketHeader>();
    let vnet = (vnet_header && start >= header_end + VNET_HEADER_LEN).then(|| {
        // SAFETY: the ten bytes lie between the packet header and the
        // frame, inside the reader's block (checked above).
        let bytes = unsafe {
            &*map
                .add(start - VNET_HEADER_LEN)
                .cast::<[u8; VNET_HEADER_LEN]>()
        };
        VnetHeader::read(bytes)
    });
    // SAFETY: the frame lies inside the block (checked above), which is the
    // reader's until the caller releases it, after dropping the slice; the
    // mapping is writable, and the kernel reads nothing back from a block
    // it handed over.
    let bytes = unsafe { std::slice::from_raw_parts_mut(map.add(start), len) };
    if let Some(vnet) = vnet.filter(|v| v.is_gso() && !truncated) {
        // Segmented by the caller, every segment's checksum computed whole.
        return Some(Frame {
            bytes,
            next_offset: packet.next_offset as usize,
            gso: Some(vnet),
        });
    }
    if let Some(vnet) = vnet.filter(|v| v.flags & NEEDS_CSUM != 0) {
        let (start, offset) = (usize::from(vnet.csum_start), usize::from(vnet.csum_offset));
        if crate::checksum::complete_at(bytes, start, offset) {
            seen.partial_checksums += 1;
        } else {
            seen.partial_left += 1;
        }
    } else if packet.status & TP_STATUS_CSUMNOTREADY != 0 {
        if crate::checksum::complete_partial(bytes) {
            seen.partial_checksums += 1;
        } else {
            seen.partial_left += 1;
        }
    }
    Some(Frame {
        bytes,
        next_offset: packet.next_offset as usize,
        gso: None,
    })
}

struct Frame<'a> {
    bytes: &'a mut [u8],
    next_offset: usize,
    /// A super-frame to segment, and how.
    gso: Option<VnetHeader>,
}

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once; no slice into it
        // outlives `receive`.
        unsafe {
            libc::munmap(self.map.cast(), self.map_len);
        }
    }
}
