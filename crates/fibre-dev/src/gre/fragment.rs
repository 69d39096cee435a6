//! Splitting an inner IPv4 packet without DF into fragments that fit the
//! tunnel, as Linux's forwarding path does (`ip_fragment` to the tunnel
//! MTU) before its GRE device encapsulates each fragment.
//!
//! This is the slow path and the only place a transmit allocates: one
//! buffer per extra fragment, as Linux allocates one skb per fragment.

use fibre_net::ipv4;

use crate::{DropReason, PacketBuf};

const FLAG_MORE_FRAGS: u16 = 0x2000;
const FLAG_DONT_FRAG: u16 = 0x4000;
const OFFSET_MASK: u16 = 0x1fff;

/// Cuts the IPv4 packet in `packet` to its first fragment of at most `mtu`
/// bytes, and returns the other fragments in new buffers with `headroom`
/// bytes in front. Refuses (leaving `packet` untouched) a packet with DF
/// set, with IP options (which fragments would have to filter), or one
/// whose header does not check.
pub(crate) fn fragment_ipv4(
    packet: &mut PacketBuf,
    mtu: usize,
    headroom: usize,
) -> Result<Vec<PacketBuf>, DropReason> {
    let data = packet.data();
    let parsed = ipv4::Packet::new_checked(data).map_err(|_| DropReason::BadInnerPacket)?;
    let header_len = parsed.header_len();
    let total_len = parsed.total_len();
    let flags_frag = u16::from_be_bytes([data[6], data[7]]);
    if flags_frag & FLAG_DONT_FRAG != 0 {
        return Err(DropReason::TooBig);
    }
    if header_len != ipv4::MIN_HEADER_LEN {
        return Err(DropReason::FragmentationUnsupported);
    }
    // Each fragment but the last carries a multiple of 8 payload bytes.
    let chunk = (mtu.saturating_sub(header_len)) & !7;
    if chunk == 0 {
        return Err(DropReason::TooBig);
    }
    let first_offset = usize::from(flags_frag & OFFSET_MASK) * 8;
    let last_had_more = flags_frag & FLAG_MORE_FRAGS != 0;
    let payload_len = total_len - header_len;
    let mut header = [0u8; ipv4::MIN_HEADER_LEN];
    header.copy_from_slice(&data[..header_len]);
    let mut extras = Vec::with_capacity(payload_len.div_ceil(chunk).saturating_sub(1));
    let mut at = chunk;
    while at < payload_len {
        let len = chunk.min(payload_len - at);
        let more = at + len < payload_len || last_had_more;
        let mut buf = PacketBuf::new(headroom, header_len + len);
        buf.rewind(header_len + len)
            .map_err(|_| DropReason::BadInnerPacket)?;
        let out = buf.data_mut();
        out[..header_len].copy_from_slice(&header);
        out[header_len..].copy_from_slice(&packet.data()[header_len + at..header_len + at + len]);
        set_fragment_fields(out, first_offset + at, more)?;
        extras.push(buf);
        at += len;
    }
    let first_len = chunk.min(payload_len);
    packet.truncate(header_len + first_len);
    let more = first_len < payload_len || last_had_more;
    set_fragment_fields(packet.data_mut(), first_offset, more)?;
    Ok(extras)
}

/// Writes total length, MF and offset into a fragment's header and refills
/// its checksum.
fn set_fragment_fields(fragment: &mut [u8], offset: usize, more: bool) -> Result<(), DropReason> {
    let units = u16::try_from(offset / 8)
        .ok()
        .filter(|u| *u <= OFFSET_MASK)
        .ok_or(DropReason::BadInnerPacket)?;
    let total = u16::try_from(fragment.len()).map_err(|_| DropReason::BadInnerPacket)?;
    fragment[2..4].copy_from_slice(&total.to_be_bytes());
    let flags = units | if more { FLAG_MORE_FRAGS } else { 0 };
    fragment[6..8].copy_from_slice(&flags.to_be_bytes());
    let mut packet = ipv4::Packet::new_checked(fragment).map_err(|_| DropReason::BadInnerPacket)?;
    packet.fill_checksum();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fibre_net::ip::Protocol;

    fn packet(payload_len: usize, flags_frag: u16) -> Vec<u8> {
        let mut buf = vec![0u8; 20 + payload_len];
        for (i, b) in buf[20..].iter_mut().enumerate() {
            *b = i as u8;
        }
        ipv4::Repr {
            src_addr: "10.0.0.1".parse().unwrap(),
            dst_addr: "10.0.0.2".parse().unwrap(),
            protocol: Protocol::Udp,
            payload_len,
            ttl: 9,
            tos: 0,
            ident: 0x1234,
            dont_frag: false,
            more_frags: flags_frag & FLAG_MORE_FRAGS != 0,
            frag_offset: usize::from(flags_frag & OFFSET_MASK) * 8,
            options: &[],
        }
        .emit(&mut buf)
        .unwrap();
        buf
    }

    /// Reassembles fragments (any order) into (offset of first, payload).
    fn reassemble(fragments: &[&[u8]]) -> (usize, bool, Vec<u8>) {
        let mut parts: Vec<(usize, bool, Vec<u8>)> = fragments
            .iter()
            .map(|f| {
                let p = ipv4::Packet::new_checked(*f).unwrap();
                let r = ipv4::Repr::parse(&p).unwrap();
                assert_eq!((r.ident, r.ttl, r.dont_frag), (0x1234, 9, false));
                (r.frag_offset, r.more_frags, p.payload().to_vec())
            })
            .collect();
        parts.sort_by_key(|p| p.0);
        let first = parts[0].0;
        let mut payload = Vec::new();
        for (offset, _, bytes) in &parts {
            assert_eq!(*offset, first + payload.len(), "contiguous");
            payload.extend_from_slice(bytes);
        }
        (first, parts.last().unwrap().1, payload)
    }

    #[test]
    fn fragments_reassemble_to_the_original() {
        for (payload_len, flags_frag, mtu) in [
            (1400, 0, 576),
            (1000, 0, 500),
            (97, 0, 60),
            (800, FLAG_MORE_FRAGS | 10, 300),
        ] {
            let original = packet(payload_len, flags_frag);
            let mut p = PacketBuf::new(64, 2048);
            p.load(&original).unwrap();
            let extras = fragment_ipv4(&mut p, mtu, 64).unwrap();
            let mut all: Vec<&[u8]> = vec![p.data()];
            all.extend(extras.iter().map(PacketBuf::data));
            assert!(all.iter().all(|f| f.len() <= mtu));
            assert_eq!(all.len(), payload_len.div_ceil((mtu - 20) & !7));
            let (offset, more, payload) = reassemble(&all);
            assert_eq!(offset, usize::from(flags_frag & OFFSET_MASK) * 8);
            assert_eq!(more, flags_frag & FLAG_MORE_FRAGS != 0);
            assert_eq!(payload, original[20..]);
            assert!(extras.iter().all(|e| e.headroom() == 64));
        }
    }

    #[test]
    fn refuses_what_it_must_not_cut() {
        let mut df = packet(100, 0);
        df[6] |= 0x40;
        let mut p = PacketBuf::new(0, 256);
        p.load(&df).unwrap();
        // A packet that already fits stays whole, its flags unchanged.
        let small = packet(16, 0);
        let mut whole = PacketBuf::new(0, 256);
        whole.load(&small).unwrap();
        assert!(fragment_ipv4(&mut whole, 60, 0).unwrap().is_empty());
        assert_eq!(whole.data(), &small[..]);
        assert_eq!(
            fragment_ipv4(&mut p, 60, 0).unwrap_err(),
            DropReason::TooBig
        );
        let ok = packet(100, 0);
        p.load(&ok).unwrap();
        assert_eq!(
            fragment_ipv4(&mut p, 27, 0).unwrap_err(),
            DropReason::TooBig
        );
        assert_eq!(p.data(), &ok[..], "untouched when refused");
        p.load(&ok[..30]).unwrap();
        assert_eq!(
            fragment_ipv4(&mut p, 60, 0).unwrap_err(),
            DropReason::BadInnerPacket
        );
    }
}
