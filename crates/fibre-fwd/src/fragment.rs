//! IPv4 fragmentation of a forwarded packet without DF that is larger than
//! the next hop's MTU, as `ip_do_fragment`'s slow path cuts it: each
//! fragment carries the header (the TTL already decremented), a multiple
//! of 8 payload bytes but the last, the original offset and MF carried
//! over, its own total length and checksum. Options: the first fragment
//! keeps them all, the others only those with the copied flag, the rest
//! overwritten with NOOP so that every header keeps its length
//! (`ip_options_fragment`); a packet that is itself a later fragment keeps
//! them all in every piece (`ip_frag_next` strips only a datagram's
//! start).
//!
//! Each fragment is written straight into the caller's buffer (a transmit
//! slot): nothing is allocated. fibre-dev's GRE transmit has its own
//! fragmenter, which makes buffers of its own for the extra fragments.

use fibre_net::checksum;

const MORE_FRAGMENTS: u16 = 0x2000;
const OFFSET_MASK: u16 = 0x1fff;
const IPOPT_END: u8 = 0;
const IPOPT_NOOP: u8 = 1;
/// The option type's "copied" flag (RFC 791): kept in every fragment.
const IPOPT_COPIED: u8 = 0x80;

/// Cuts one valid IPv4 packet into fragments of at most `mtu` bytes.
#[derive(Debug)]
pub(crate) struct Fragmenter<'a> {
    packet: &'a [u8],
    header: [u8; 60],
    header_len: usize,
    /// Payload bytes per fragment but the last.
    chunk: usize,
    /// Next payload byte to send (from the packet's payload start).
    at: usize,
    payload_len: usize,
    first_offset: usize,
    original_more: bool,
}

impl<'a> Fragmenter<'a> {
    /// A fragmenter of `packet` (header checked, exactly its total length,
    /// DF clear, larger than `mtu`) for `mtu`; `None` when the MTU leaves
    /// no room for 8 payload bytes after the header.
    pub(crate) fn new(packet: &'a [u8], mtu: usize) -> Option<Fragmenter<'a>> {
        let header_len = usize::from(packet[0] & 0x0f) * 4;
        let chunk = mtu.checked_sub(header_len)? & !7;
        if chunk == 0 {
            return None;
        }
        let flags = u16::from_be_bytes([packet[6], packet[7]]);
        let mut header = [0u8; 60];
        header[..header_len].copy_from_slice(&packet[..header_len]);
        Some(Fragmenter {
            packet,
            header,
            header_len,
            chunk,
            at: 0,
            payload_len: packet.len() - header_len,
            first_offset: usize::from(flags & OFFSET_MASK) * 8,
            original_more: flags & MORE_FRAGMENTS != 0,
        })
    }

    /// Gives every fragment TTL `ttl` (a forwarded packet's, decremented
    /// by `ip_forward` before `ip_output` cuts it).
    pub(crate) fn set_ttl(&mut self, ttl: u8) {
        self.header[8] = ttl;
    }

    /// Gives every fragment the options `options` (the packet's as the
    /// input path and `ip_forward_options` changed them), in place of the
    /// received ones; as long as those.
    pub(crate) fn set_options(&mut self, options: &[u8]) {
        self.header[20..self.header_len].copy_from_slice(options);
    }

    /// How many fragments the packet makes.
    pub(crate) fn count(&self) -> usize {
        self.payload_len.div_ceil(self.chunk)
    }

    /// Writes the next fragment into `out` (at least header plus `mtu`
    /// bytes long) and returns its length; `None` once all are written.
    pub(crate) fn next_into(&mut self, out: &mut [u8]) -> Option<usize> {
        if self.at >= self.payload_len {
            return None;
        }
        let left = self.payload_len - self.at;
        let len = left.min(self.chunk);
        let hl = self.header_len;
        out[..hl].copy_from_slice(&self.header[..hl]);
        let start = hl + self.at;
        out[hl..hl + len].copy_from_slice(&self.packet[start..start + len]);
        let more = self.at + len < self.payload_len || self.original_more;
        // The offset fits: the packet was at most 65535 bytes.
        let units = ((self.first_offset + self.at) / 8) as u16;
        let flags = units | if more { MORE_FRAGMENTS } else { 0 };
        let total = (hl + len) as u16;
        out[2..4].copy_from_slice(&total.to_be_bytes());
        out[6..8].copy_from_slice(&flags.to_be_bytes());
        out[10..12].fill(0);
        let sum = checksum::checksum(&out[..hl]);
        out[10..12].copy_from_slice(&sum.to_be_bytes());
        // `ip_frag_next`: "Upgrade options only if the segment to be
        // fragmented was THE FIRST (otherwise, options are already
        // fixed)": a later fragment cut again keeps all of its options.
        if self.at == 0 && self.first_offset == 0 {
            self.strip_uncopied_options();
        }
        self.at += len;
        Some(hl + len)
    }

    /// `ip_options_fragment`: the options the later fragments do not carry
    /// become NOOPs.
    fn strip_uncopied_options(&mut self) {
        let options = &mut self.header[20..self.header_len];
        let mut i = 0;
        while i < options.len() {
            match options[i] {
                IPOPT_END => return,
                IPOPT_NOOP => i += 1,
                kind => {
                    let Some(&len) = options.get(i + 1) else {
                        return;
                    };
                    let len = usize::from(len);
                    if len < 2 || i + len > options.len() {
                        return;
                    }
                    if kind & IPOPT_COPIED == 0 {
                        options[i..i + len].fill(IPOPT_NOOP);
                    }
                    i += len;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An IPv4 packet of `payload_len` bytes with `options`, offset and MF.
    fn packet(payload_len: usize, options: &[u8], offset_units: u16, more: bool) -> Vec<u8> {
        let hl = 20 + options.len();
        let mut p = vec![0u8; hl + payload_len];
        p[0] = 0x40 | (hl / 4) as u8;
        p[2..4].copy_from_slice(&((hl + payload_len) as u16).to_be_bytes());
        p[4..6].copy_from_slice(&0xbeefu16.to_be_bytes());
        let flags = offset_units | if more { MORE_FRAGMENTS } else { 0 };
        p[6..8].copy_from_slice(&flags.to_be_bytes());
        p[8] = 63;
        p[9] = 17;
        p[12..16].copy_from_slice(&[10, 0, 0, 9]);
        p[16..20].copy_from_slice(&[192, 0, 2, 7]);
        p[20..hl].copy_from_slice(options);
        for (i, b) in p[hl..].iter_mut().enumerate() {
            *b = (i * 7) as u8;
        }
        let c = checksum::checksum(&p[..hl]);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p
    }

    fn cut(p: &[u8], mtu: usize) -> Vec<Vec<u8>> {
        let mut f = Fragmenter::new(p, mtu).unwrap();
        let n = f.count();
        let mut out = Vec::new();
        let mut buf = vec![0u8; mtu + 60];
        while let Some(len) = f.next_into(&mut buf) {
            out.push(buf[..len].to_vec());
        }
        assert_eq!(out.len(), n);
        out
    }

    /// Puts fragments back together: (offset of the first, MF of the
    /// last, payload).
    fn reassemble(fragments: &[Vec<u8>]) -> (usize, bool, Vec<u8>) {
        let mut payload = Vec::new();
        let mut first = None;
        let mut last_more = false;
        for f in fragments {
            let hl = usize::from(f[0] & 0x0f) * 4;
            assert_eq!(checksum::checksum(&f[..hl]), 0, "header checksum");
            assert_eq!(usize::from(u16::from_be_bytes([f[2], f[3]])), f.len());
            assert_eq!(u16::from_be_bytes([f[4], f[5]]), 0xbeef);
            let flags = u16::from_be_bytes([f[6], f[7]]);
            let offset = usize::from(flags & OFFSET_MASK) * 8;
            let base = *first.get_or_insert(offset);
            assert_eq!(offset - base, payload.len(), "contiguous");
            payload.extend_from_slice(&f[hl..]);
            last_more = flags & MORE_FRAGMENTS != 0;
        }
        (first.unwrap(), last_more, payload)
    }

    #[test]
    fn uncopied_options_become_noops_after_the_first_fragment() {
        // Record route (7, not copied) then a security-like option with
        // the copied flag (0x82), padded to 12 bytes.
        let options = [7, 7, 4, 0, 0, 0, 0, 0x82, 4, 1, 2, 0];
        let p = packet(100, &options, 0, false);
        let frags = cut(&p, 32 + 40);
        assert_eq!(&frags[0][20..32], &options);
        for f in &frags[1..] {
            assert_eq!(&f[20..32], &[1, 1, 1, 1, 1, 1, 1, 0x82, 4, 1, 2, 0]);
        }
        assert_eq!(reassemble(&frags).2, p[32..]);
    }

    /// The forwarding oracle's kernel, seed 38 frame 3320: a fragment at
    /// offset 8 with a record route, cut in two, keeps the option in both.
    #[test]
    fn a_later_fragment_cut_again_keeps_its_options() {
        let options = [7, 7, 4, 0, 0, 0, 0, 0];
        let p = packet(100, &options, 1, true);
        let frags = cut(&p, 28 + 40);
        assert!(frags.len() > 1);
        for f in &frags {
            assert_eq!(&f[20..28], &options);
        }
        assert_eq!(reassemble(&frags), (8, true, p[28..].to_vec()));
    }

    #[test]
    fn an_mtu_without_room_for_eight_bytes_refuses() {
        let p = packet(100, &[], 0, false);
        assert!(Fragmenter::new(&p, 27).is_none());
        assert!(Fragmenter::new(&p, 28).is_some());
    }

    proptest! {
        /// Reassembly gives the original payload, offset and MF; every
        /// fragment fits the MTU, and all but the last carry a multiple of 8.
        #[test]
        fn reassembly_gives_the_original(
            payload_len in 1usize..4000,
            mtu in 68usize..1600,
            offset_units in 0u16..64,
            more in any::<bool>(),
        ) {
            let p = packet(payload_len, &[], offset_units, more);
            let frags = cut(&p, mtu);
            for f in &frags {
                prop_assert!(f.len() <= mtu);
            }
            for f in &frags[..frags.len() - 1] {
                prop_assert_eq!((f.len() - 20) % 8, 0);
            }
            let (offset, last_more, payload) = reassemble(&frags);
            prop_assert_eq!(offset, usize::from(offset_units) * 8);
            prop_assert_eq!(last_more, more);
            prop_assert_eq!(&payload[..], &p[20..]);
        }
    }
}
