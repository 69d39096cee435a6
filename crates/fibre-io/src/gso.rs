//! Software segmentation of the super-frames a local sender's segmentation
//! offload (TSO/GSO, veth's default) hands the router: one TCP or UDP
//! packet of up to 64 KiB that the output device was to cut into frames of
//! at most `gso_size` payload each. The Linux router cuts them at output
//! (`ip_finish_output_gso`, `ip6_finish_output` calling `skb_gso_segment`);
//! fibre cuts them on receive, so the forwarding worker only ever sees
//! ordinary frames and decides about each segment (MTU, DF, frag-needed) as
//! `ip_finish_output_gso` does about each segment it made.
//!
//! The receive socket is asked for a `struct virtio_net_hdr` before every
//! frame (`PACKET_VNET_HDR`; `include/uapi/linux/virtio_net.h`, filled by
//! `virtio_net_hdr_from_skb` in `tpacket_rcv`): it says whether the frame is
//! a super-frame (`gso_type`, `gso_size`) and where a partial checksum is
//! to be completed (`VIRTIO_NET_HDR_F_NEEDS_CSUM`, `csum_start`,
//! `csum_offset`).
//!
//! Each segment is written as `tcp_gso_segment` / `__udp_gso_segment` and
//! `inet_gso_segment` / `ipv6_gso_segment` write theirs: the headers copied,
//! IPv4 total length, an IPv4 ID incremented per segment and the header
//! checksum recomputed; IPv6 payload length; TCP sequence number advanced
//! by `gso_size` per segment, FIN and PSH only on the last segment, CWR only
//! on the first; UDP length; and the TCP or UDP checksum complete (the
//! kernel leaves it partial for the device; there is no device after us).
//! Segments are built in a scratch buffer the port allocates once, and lent
//! in batches: nothing is allocated per packet.

use fibre_net::checksum;
use fibre_net::ip::number::{TCP, UDP};

/// `sizeof(struct virtio_net_hdr)`.
pub(crate) const VNET_HEADER_LEN: usize = 10;
/// `VIRTIO_NET_HDR_F_NEEDS_CSUM`.
pub(crate) const NEEDS_CSUM: u8 = 1;
const GSO_NONE: u8 = 0;
const GSO_TCPV4: u8 = 1;
const GSO_TCPV6: u8 = 4;
const GSO_UDP_L4: u8 = 5;
const GSO_ECN: u8 = 0x80;

const ETH_HEADER: usize = 14;
const IPV4: [u8; 2] = [0x08, 0x00];
const IPV6: [u8; 2] = [0x86, 0xdd];
const TCP_FIN: u8 = 0x01;
const TCP_PSH: u8 = 0x08;
const TCP_CWR: u8 = 0x80;

/// Segments lent to one call of the receive callback at the most.
pub(crate) const SEGMENT_BURST: usize = 256;
/// Bytes of scratch per port: one 64 KiB super-frame's segments and their
/// headers fit whole at any `gso_size` from 536 up; smaller ones are lent
/// in several batches.
const SCRATCH_BYTES: usize = 1 << 17;

/// `struct virtio_net_hdr`, in the host's byte order (`vio_le()` on a
/// little-endian host; the legacy header is native-endian).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct VnetHeader {
    pub flags: u8,
    pub gso_type: u8,
    pub gso_size: u16,
    pub csum_start: u16,
    pub csum_offset: u16,
}

impl VnetHeader {
    /// Reads the header from its 10 bytes.
    pub fn read(bytes: &[u8; VNET_HEADER_LEN]) -> Self {
        let word = |at: usize| u16::from_ne_bytes([bytes[at], bytes[at + 1]]);
        Self {
            flags: bytes[0],
            gso_type: bytes[1],
            // bytes 2..4: hdr_len, the kernel's skb_headlen(): a hint for
            // a device, not the headers' length; the headers are parsed.
            gso_size: word(4),
            csum_start: word(6),
            csum_offset: word(8),
        }
    }

    /// Whether the frame is a super-frame to segment.
    pub fn is_gso(&self) -> bool {
        self.gso_type != GSO_NONE
    }
}

/// Why a super-frame could not be segmented (it is dropped and counted:
/// forwarded whole it would only be refused as longer than the MTU).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// A `gso_type` other than TCPv4, TCPv6 or UDP (`UDP_L4`).
    Type,
    /// Not IPv4 or IPv6 right after an untagged Ethernet header, or the
    /// family does not match the `gso_type`.
    Family,
    /// IP headers cut short, lengths past the frame, a fragment, an IPv6
    /// extension header or jumbogram, or a transport other than the type's.
    Malformed,
    /// `gso_size` 0.
    NoSize,
}

/// Where a super-frame's headers are and how to cut it.
#[derive(Debug, Clone, Copy)]
struct Plan {
    ipv4: bool,
    tcp: bool,
    /// Offset of the transport header.
    l4: usize,
    /// Length of all headers (Ethernet to transport, options included).
    headers: usize,
    /// End of the IP packet in the frame.
    end: usize,
    mss: usize,
}

fn be16(bytes: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([bytes[at], bytes[at + 1]])
}

fn put16(bytes: &mut [u8], at: usize, value: u16) {
    bytes[at..at + 2].copy_from_slice(&value.to_be_bytes());
}

fn plan(frame: &[u8], vnet: &VnetHeader) -> Result<Plan, Refused> {
    let (tcp, family) = match vnet.gso_type & !GSO_ECN {
        GSO_TCPV4 => (true, Some(true)),
        GSO_TCPV6 => (true, Some(false)),
        GSO_UDP_L4 => (false, None),
        _ => return Err(Refused::Type),
    };
    let ipv4 = match frame.get(12..14) {
        Some(t) if t == IPV4 => true,
        Some(t) if t == IPV6 => false,
        _ => return Err(Refused::Family),
    };
    if family.is_some_and(|f| f != ipv4) {
        return Err(Refused::Family);
    }
    let wanted = if tcp { TCP } else { UDP };
    let ip = &frame[ETH_HEADER..];
    let (l4, end) = if ipv4 {
        if ip.len() < 20 || ip[0] >> 4 != 4 || ip[0] & 0x0f < 5 {
            return Err(Refused::Malformed);
        }
        let header = usize::from(ip[0] & 0x0f) * 4;
        let total = usize::from(be16(ip, 2));
        // More fragments, or a fragment offset: not a segment's source.
        let fragment = be16(ip, 6) & 0x3fff != 0;
        if fragment || ip[9] != wanted || total < header || total > ip.len() {
            return Err(Refused::Malformed);
        }
        (ETH_HEADER + header, ETH_HEADER + total)
    } else {
        if ip.len() < 40 || ip[0] >> 4 != 6 || ip[6] != wanted {
            return Err(Refused::Malformed);
        }
        let payload = usize::from(be16(ip, 4));
        if payload == 0 || 40 + payload > ip.len() {
            return Err(Refused::Malformed);
        }
        (ETH_HEADER + 40, ETH_HEADER + 40 + payload)
    };
    let transport = if tcp {
        if l4 + 20 > end {
            return Err(Refused::Malformed);
        }
        usize::from(frame[l4 + 12] >> 4) * 4
    } else {
        8
    };
    if transport < if tcp { 20 } else { 8 } || l4 + transport > end {
        return Err(Refused::Malformed);
    }
    if vnet.gso_size == 0 {
        return Err(Refused::NoSize);
    }
    Ok(Plan {
        ipv4,
        tcp,
        l4,
        headers: l4 + transport,
        end,
        mss: usize::from(vnet.gso_size),
    })
}

/// The TCP or UDP checksum of the segment `s` (a whole Ethernet frame),
/// with its checksum field already zero: pseudo-header (source and
/// destination are contiguous in both IP headers) plus the transport
/// header and payload.
fn transport_checksum(s: &[u8], plan: &Plan) -> u16 {
    let addresses = if plan.ipv4 {
        &s[ETH_HEADER + 12..ETH_HEADER + 20]
    } else {
        &s[ETH_HEADER + 8..ETH_HEADER + 40]
    };
    let length = (s.len() - plan.l4) as u16;
    let protocol = u16::from(if plan.tcp { TCP } else { UDP });
    let pseudo = checksum::add(checksum::sum(addresses), checksum::add(protocol, length));
    !checksum::add(pseudo, checksum::sum(&s[plan.l4..]))
}

/// Rewrites the headers copied into segment `s` (index `index` of `count`,
/// `payload` bytes after the headers) as the kernel's segmentation does.
fn fix_headers(s: &mut [u8], plan: &Plan, index: usize, count: usize, payload: usize) {
    let ip = ETH_HEADER;
    if plan.ipv4 {
        let header = plan.l4 - ip;
        put16(
            s,
            ip + 2,
            (header + (plan.headers - plan.l4) + payload) as u16,
        );
        // inet_gso_segment: the first segment keeps the ID, each next one
        // takes the next ID.
        let id = be16(s, ip + 4).wrapping_add(index as u16);
        put16(s, ip + 4, id);
        put16(s, ip + 10, 0);
        let sum = checksum::checksum(&s[ip..plan.l4]);
        put16(s, ip + 10, sum);
    } else {
        put16(s, ip + 4, (plan.headers - plan.l4 + payload) as u16);
    }
    let l4 = plan.l4;
    if plan.tcp {
        let seq = u32::from_be_bytes([s[l4 + 4], s[l4 + 5], s[l4 + 6], s[l4 + 7]]);
        let seq = seq.wrapping_add((index * plan.mss) as u32);
        s[l4 + 4..l4 + 8].copy_from_slice(&seq.to_be_bytes());
        if index + 1 < count {
            s[l4 + 13] &= !(TCP_FIN | TCP_PSH);
        }
        if index > 0 {
            s[l4 + 13] &= !TCP_CWR;
        }
        put16(s, l4 + 16, 0);
        let sum = transport_checksum(s, plan);
        put16(s, l4 + 16, sum);
    } else {
        put16(s, l4 + 4, (8 + payload) as u16);
        put16(s, l4 + 6, 0);
        // RFC 768: a computed 0 is sent as all ones (CSUM_MANGLED_0).
        let sum = match transport_checksum(s, plan) {
            0 => 0xffff,
            sum => sum,
        };
        put16(s, l4 + 6, sum);
    }
}

/// A port's segmentation scratch: allocated once, reused for every
/// super-frame.
#[derive(Debug)]
pub(crate) struct Segmenter {
    scratch: Box<[u8]>,
    /// End offset in `scratch` of each segment of the batch being built.
    ends: Vec<usize>,
}

impl Default for Segmenter {
    fn default() -> Self {
        Self {
            scratch: vec![0; SCRATCH_BYTES].into_boxed_slice(),
            ends: Vec::with_capacity(SEGMENT_BURST),
        }
    }
}

impl Segmenter {
    /// Cuts super-frame `frame` (described by `vnet`) into segments of at
    /// most `gso_size` payload and lends them to `deliver` in order, in
    /// calls of at most `burst` (and [`SEGMENT_BURST`]) segments; returns
    /// how many segments there were. Refused frames lend nothing.
    pub fn segment(
        &mut self,
        frame: &[u8],
        vnet: &VnetHeader,
        burst: usize,
        deliver: &mut dyn FnMut(&[&[u8]]),
    ) -> Result<u64, Refused> {
        let plan = plan(frame, vnet)?;
        let burst = burst.clamp(1, SEGMENT_BURST);
        let payload = &frame[plan.headers..plan.end];
        let count = payload.len().div_ceil(plan.mss).max(1);
        self.ends.clear();
        let mut used = 0;
        for index in 0..count {
            let from = (index * plan.mss).min(payload.len());
            let to = (from + plan.mss).min(payload.len());
            let len = plan.headers + (to - from);
            if self.ends.len() == burst || used + len > self.scratch.len() {
                self.lend(deliver);
                used = 0;
            }
            let s = &mut self.scratch[used..used + len];
            s[..plan.headers].copy_from_slice(&frame[..plan.headers]);
            s[plan.headers..].copy_from_slice(&payload[from..to]);
            fix_headers(s, &plan, index, count, to - from);
            used += len;
            self.ends.push(used);
        }
        self.lend(deliver);
        Ok(count as u64)
    }

    fn lend(&mut self, deliver: &mut dyn FnMut(&[&[u8]])) {
        if self.ends.is_empty() {
            return;
        }
        let mut slices: [&[u8]; SEGMENT_BURST] = [&[]; SEGMENT_BURST];
        let mut start = 0;
        for (slot, &end) in slices.iter_mut().zip(&self.ends) {
            *slot = &self.scratch[start..end];
            start = end;
        }
        deliver(&slices[..self.ends.len()]);
        self.ends.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC4: [u8; 4] = [10, 0, 0, 1];
    const DST4: [u8; 4] = [10, 0, 1, 2];
    const SRC6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    const DST6: [u8; 16] = [0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
    const SEQ: u32 = 0xffff_f000; // wraps within the super-frame
    const ID: u16 = 0xfffe; // wraps too

    /// A payload whose bytes say where they were.
    fn payload(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    /// An Ethernet + IPv4 or IPv6 header for `protocol` carrying
    /// `transport_len` bytes, with DF and the test's ID.
    fn ip_header(ipv4: bool, protocol: u8, transport_len: usize) -> Vec<u8> {
        let mut f = vec![0u8; 14];
        f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        if ipv4 {
            f[12..14].copy_from_slice(&IPV4);
            let mut ip = [0u8; 20];
            ip[0] = 0x45;
            ip[2..4].copy_from_slice(&((20 + transport_len) as u16).to_be_bytes());
            ip[4..6].copy_from_slice(&ID.to_be_bytes());
            ip[6] = 0x40; // DF
            ip[8] = 64;
            ip[9] = protocol;
            ip[12..16].copy_from_slice(&SRC4);
            ip[16..20].copy_from_slice(&DST4);
            // As the sender left it: valid for the super-frame.
            let sum = checksum::checksum(&ip);
            ip[10..12].copy_from_slice(&sum.to_be_bytes());
            f.extend_from_slice(&ip);
        } else {
            f[12..14].copy_from_slice(&IPV6);
            let mut ip = [0u8; 40];
            ip[0] = 0x60;
            ip[4..6].copy_from_slice(&(transport_len as u16).to_be_bytes());
            ip[6] = protocol;
            ip[7] = 64;
            ip[8..24].copy_from_slice(&SRC6);
            ip[24..40].copy_from_slice(&DST6);
            f.extend_from_slice(&ip);
        }
        f
    }

    /// A TCP super-frame with a timestamp option (header 32 bytes), the
    /// flags given, and a checksum field holding garbage (a partial sum).
    fn tcp_super(ipv4: bool, flags: u8, data: &[u8]) -> Vec<u8> {
        let mut f = ip_header(ipv4, TCP, 32 + data.len());
        let mut tcp = [0u8; 32];
        tcp[0..2].copy_from_slice(&40000u16.to_be_bytes());
        tcp[2..4].copy_from_slice(&5001u16.to_be_bytes());
        tcp[4..8].copy_from_slice(&SEQ.to_be_bytes());
        tcp[8..12].copy_from_slice(&0x1234_5678u32.to_be_bytes());
        tcp[12] = 8 << 4;
        tcp[13] = flags;
        tcp[14..16].copy_from_slice(&502u16.to_be_bytes());
        tcp[16..18].copy_from_slice(&0xbeefu16.to_be_bytes());
        tcp[20..32].copy_from_slice(&[1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2]);
        f.extend_from_slice(&tcp);
        f.extend_from_slice(data);
        f
    }

    fn udp_super(ipv4: bool, data: &[u8]) -> Vec<u8> {
        let mut f = ip_header(ipv4, UDP, 8 + data.len());
        let mut udp = [0u8; 8];
        udp[0..2].copy_from_slice(&4000u16.to_be_bytes());
        udp[2..4].copy_from_slice(&53u16.to_be_bytes());
        udp[4..6].copy_from_slice(&((8 + data.len()) as u16).to_be_bytes());
        udp[6..8].copy_from_slice(&0x1111u16.to_be_bytes());
        f.extend_from_slice(&udp);
        f.extend_from_slice(data);
        f
    }

    fn vnet(gso_type: u8, gso_size: u16) -> VnetHeader {
        VnetHeader {
            flags: NEEDS_CSUM,
            gso_type,
            gso_size,
            csum_start: 0,
            csum_offset: 0,
        }
    }

    fn segment_all(frame: &[u8], header: &VnetHeader, burst: usize) -> (Vec<Vec<u8>>, Vec<usize>) {
        let mut segmenter = Segmenter::default();
        let mut out = Vec::new();
        let mut batches = Vec::new();
        let count = segmenter
            .segment(frame, header, burst, &mut |segments| {
                batches.push(segments.len());
                out.extend(segments.iter().map(|s| s.to_vec()));
            })
            .expect("segmented");
        assert_eq!(count as usize, out.len());
        (out, batches)
    }

    /// The one's complement sum over the pseudo-header and transport
    /// bytes of segment `s`: 0xffff when its checksum is right.
    fn verify_transport(s: &[u8], ipv4: bool, protocol: u8) -> u16 {
        let (addresses, l4) = if ipv4 {
            (&s[26..34], 34)
        } else {
            (&s[22..54], 54)
        };
        let length = (s.len() - l4) as u16;
        let pseudo = checksum::add(
            checksum::sum(addresses),
            checksum::add(u16::from(protocol), length),
        );
        checksum::add(pseudo, checksum::sum(&s[l4..]))
    }

    /// Every segment's bytes against what tcp_gso_segment writes.
    fn check_tcp(ipv4: bool) {
        let data = payload(10_000);
        let mss = 1448;
        let flags = TCP_CWR | TCP_PSH | TCP_FIN | 0x10; // + ACK
        let frame = tcp_super(ipv4, flags, &data);
        let gso_type = if ipv4 { GSO_TCPV4 } else { GSO_TCPV6 };
        let (segments, _) = segment_all(&frame, &vnet(gso_type, mss as u16), 64);
        let count = data.len().div_ceil(mss);
        assert_eq!(segments.len(), count);
        let l4 = if ipv4 { 34 } else { 54 };
        let mut joined = Vec::new();
        for (i, s) in segments.iter().enumerate() {
            let chunk = &data[i * mss..((i + 1) * mss).min(data.len())];
            assert_eq!(s.len(), l4 + 32 + chunk.len(), "segment {i}");
            // Ethernet untouched.
            assert_eq!(s[..14], frame[..14]);
            if ipv4 {
                assert_eq!(be16(s, 16) as usize, 20 + 32 + chunk.len());
                assert_eq!(be16(s, 18), ID.wrapping_add(i as u16), "IPv4 ID of {i}");
                assert_eq!(
                    checksum::sum(&s[14..34]),
                    0xffff,
                    "IPv4 header checksum of {i}"
                );
                // Everything else of the IP header as it was.
                assert_eq!(s[20..24], frame[20..24]);
                assert_eq!(s[26..34], frame[26..34]);
            } else {
                assert_eq!(be16(s, 18) as usize, 32 + chunk.len());
                assert_eq!(s[14..18], frame[14..18]);
                assert_eq!(s[20..54], frame[20..54]);
            }
            let seq = u32::from_be_bytes(s[l4 + 4..l4 + 8].try_into().unwrap());
            assert_eq!(seq, SEQ.wrapping_add((i * mss) as u32), "sequence of {i}");
            let mut want = flags;
            if i + 1 < count {
                want &= !(TCP_FIN | TCP_PSH);
            }
            if i > 0 {
                want &= !TCP_CWR;
            }
            assert_eq!(s[l4 + 13], want, "flags of {i}");
            // Ports, ack, offset, window, urgent pointer, options: copied.
            assert_eq!(s[l4..l4 + 4], frame[l4..l4 + 4]);
            assert_eq!(s[l4 + 8..l4 + 13], frame[l4 + 8..l4 + 13]);
            assert_eq!(s[l4 + 14..l4 + 16], frame[l4 + 14..l4 + 16]);
            assert_eq!(s[l4 + 18..l4 + 32], frame[l4 + 18..l4 + 32]);
            assert_eq!(
                verify_transport(s, ipv4, TCP),
                0xffff,
                "TCP checksum of {i}"
            );
            assert_eq!(&s[l4 + 32..], chunk);
            joined.extend_from_slice(&s[l4 + 32..]);
        }
        assert_eq!(joined, data);
    }

    #[test]
    fn a_tcp_ipv4_super_frame_is_cut_as_tcp_gso_segment_cuts_it() {
        check_tcp(true);
    }

    #[test]
    fn a_tcp_ipv6_super_frame_is_cut_as_tcp_gso_segment_cuts_it() {
        check_tcp(false);
    }

    #[test]
    fn a_udp_super_frame_is_cut_into_datagrams_with_their_own_lengths_and_checksums() {
        for ipv4 in [true, false] {
            let data = payload(3000);
            let frame = udp_super(ipv4, &data);
            let (segments, _) = segment_all(&frame, &vnet(GSO_UDP_L4, 1200), 64);
            assert_eq!(segments.len(), 3);
            let l4 = if ipv4 { 34 } else { 54 };
            let mut joined = Vec::new();
            for (i, s) in segments.iter().enumerate() {
                let len = if i < 2 { 1200 } else { 600 };
                assert_eq!(s.len(), l4 + 8 + len);
                assert_eq!(be16(s, l4 + 4) as usize, 8 + len);
                assert_ne!(be16(s, l4 + 6), 0, "a UDP checksum is never sent as 0");
                assert_eq!(
                    verify_transport(s, ipv4, UDP),
                    0xffff,
                    "UDP checksum of {i}"
                );
                if ipv4 {
                    assert_eq!(be16(s, 18), ID.wrapping_add(i as u16));
                    assert_eq!(checksum::sum(&s[14..34]), 0xffff);
                } else {
                    assert_eq!(be16(s, 18) as usize, 8 + len);
                }
                joined.extend_from_slice(&s[l4 + 8..]);
            }
            assert_eq!(joined, data);
        }
    }

    #[test]
    fn a_small_gso_size_is_lent_in_bounded_batches_from_the_same_scratch() {
        // 64 KiB at gso_size 100: 640 segments, more than one batch of
        // SEGMENT_BURST and more than the scratch holds at once.
        let data = payload(64_000);
        let frame = tcp_super(true, 0x18, &data);
        let (segments, batches) = segment_all(&frame, &vnet(GSO_TCPV4, 100), 1000);
        assert_eq!(segments.len(), 640);
        assert!(batches.iter().all(|&b| b <= SEGMENT_BURST), "{batches:?}");
        assert_eq!(batches.iter().sum::<usize>(), 640);
        let joined: Vec<u8> = segments.iter().flat_map(|s| s[66..].to_vec()).collect();
        assert_eq!(joined, data);
        // The caller's burst bounds each batch too.
        let (_, batches) = segment_all(&frame, &vnet(GSO_TCPV4, 100), 16);
        assert!(batches.iter().all(|&b| b <= 16));
        // A payload that is a multiple of gso_size ends on a full segment.
        let frame = tcp_super(true, 0x19, &payload(2896));
        let (segments, _) = segment_all(&frame, &vnet(GSO_TCPV4, 1448), 64);
        assert_eq!(segments.len(), 2);
        assert_eq!(segments[0][34 + 13], 0x10, "FIN and PSH only on the last");
        assert_eq!(segments[1][34 + 13], 0x19);
    }

    #[test]
    fn what_cannot_be_segmented_is_refused_and_lends_nothing() {
        let data = payload(3000);
        let good = tcp_super(true, 0x10, &data);
        let mut segmenter = Segmenter::default();
        let mut lent = 0;
        let mut try_it = |frame: &[u8], header: VnetHeader| {
            segmenter.segment(frame, &header, 64, &mut |s| lent += s.len())
        };
        // An unknown gso_type (the legacy UFO, 3).
        assert_eq!(try_it(&good, vnet(3, 1448)), Err(Refused::Type));
        // TCPv6 on an IPv4 packet.
        assert_eq!(try_it(&good, vnet(GSO_TCPV6, 1448)), Err(Refused::Family));
        assert_eq!(try_it(&good, vnet(GSO_TCPV4, 0)), Err(Refused::NoSize));
        // Total length past the frame.
        let mut cut = good.clone();
        cut.truncate(1000);
        assert_eq!(try_it(&cut, vnet(GSO_TCPV4, 1448)), Err(Refused::Malformed));
        // A fragment.
        let mut fragment = good.clone();
        fragment[20] |= 0x20;
        assert_eq!(
            try_it(&fragment, vnet(GSO_TCPV4, 1448)),
            Err(Refused::Malformed)
        );
        // A TCP data offset past the packet.
        let mut offset = tcp_super(true, 0x10, &[]);
        offset[34 + 12] = 0xf0;
        assert_eq!(
            try_it(&offset, vnet(GSO_TCPV4, 1448)),
            Err(Refused::Malformed)
        );
        // UDP declared, TCP inside.
        assert_eq!(
            try_it(&good, vnet(GSO_UDP_L4, 1448)),
            Err(Refused::Malformed)
        );
        // ARP.
        let mut arp = good.clone();
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(try_it(&arp, vnet(GSO_TCPV4, 1448)), Err(Refused::Family));
        // Too short for any header.
        assert_eq!(
            try_it(&good[..20], vnet(GSO_TCPV4, 1448)),
            Err(Refused::Malformed)
        );
        // ECN on the type is accepted.
        assert_eq!(try_it(&good, vnet(GSO_TCPV4 | GSO_ECN, 1448)), Ok(3));
        assert_eq!(lent, 3, "only the accepted frame lent anything");
    }

    #[test]
    fn the_virtio_header_is_read_in_host_order() {
        let mut bytes = [0u8; VNET_HEADER_LEN];
        bytes[0] = NEEDS_CSUM;
        bytes[1] = GSO_TCPV4;
        bytes[2..4].copy_from_slice(&66u16.to_ne_bytes());
        bytes[4..6].copy_from_slice(&1448u16.to_ne_bytes());
        bytes[6..8].copy_from_slice(&34u16.to_ne_bytes());
        bytes[8..10].copy_from_slice(&16u16.to_ne_bytes());
        let header = VnetHeader::read(&bytes);
        assert_eq!(
            header,
            VnetHeader {
                flags: 1,
                gso_type: 1,
                gso_size: 1448,
                csum_start: 34,
                csum_offset: 16
            }
        );
        assert!(header.is_gso());
        assert!(!VnetHeader::default().is_gso());
    }
}
