//! The frames neighbour resolution sends, built as the kernel builds them:
//! ARP requests and replies (`arp_create`, net/ipv4/arp.c: 42 bytes, no
//! padding), neighbour solicitations and advertisements (`ndisc_send_ns`,
//! `ndisc_send_na`, net/ipv6/ndisc.c: hop limit 255, traffic class and
//! flow label 0, a link-layer address option of 8 bytes); and the reading
//! of received NS/NA messages with `ndisc_parse_options`' rules.

use std::net::{Ipv4Addr, Ipv6Addr};

use fibre_base::Ipv6;
use fibre_net::arp::{Operation, Repr as ArpRepr};
use fibre_net::checksum;
use fibre_net::ethernet::{Address, EtherType, Repr as EthRepr, HEADER_LEN};
use fibre_net::ip::Protocol;
use fibre_net::ipv6::Repr as Ipv6Repr;

/// ICMPv6 type of a neighbour solicitation (RFC 4861 section 4.3).
pub const NDISC_NEIGHBOUR_SOLICITATION: u8 = 135;
/// ICMPv6 type of a neighbour advertisement (RFC 4861 section 4.4).
pub const NDISC_NEIGHBOUR_ADVERTISEMENT: u8 = 136;
/// `ND_OPT_SOURCE_LL_ADDR`.
const OPT_SOURCE_LL_ADDR: u8 = 1;
/// `ND_OPT_TARGET_LL_ADDR`.
const OPT_TARGET_LL_ADDR: u8 = 2;
/// The fixed part of an NS or NA: type, code, checksum, 4 bytes, target.
pub const ND_MSG_LEN: usize = 24;

/// `arp_create` + `arp_send_dst`: an Ethernet/IPv4 ARP packet in a frame;
/// `dest_hw` None is the broadcast address, `target_hw` None zeros.
pub(crate) fn arp_frame(
    op: Operation,
    dest_ip: Ipv4Addr,
    src_ip: Ipv4Addr,
    dest_hw: Option<[u8; 6]>,
    src_hw: [u8; 6],
    target_hw: Option<[u8; 6]>,
) -> Vec<u8> {
    let mut frame = vec![0u8; HEADER_LEN + fibre_net::arp::ETHERNET_IPV4_LEN];
    let eth = EthRepr {
        dst_addr: Address(dest_hw.unwrap_or([0xff; 6])),
        src_addr: Address(src_hw),
        ethertype: EtherType::Arp,
    };
    let arp = ArpRepr {
        operation: op,
        source_hardware_addr: Address(src_hw),
        source_protocol_addr: src_ip,
        target_hardware_addr: Address(target_hw.unwrap_or([0; 6])),
        target_protocol_addr: dest_ip,
    };
    // Both fit the buffer sized for them: emit cannot fail.
    let _ = eth.emit(&mut frame);
    let _ = arp.emit(&mut frame[HEADER_LEN..]);
    frame
}

/// An NS or NA in an IPv6 packet in a frame, checksummed: the inverse of
/// [`parse_nd`]. `ndisc_send_ns` and `ndisc_send_na` both fill the same
/// `struct nd_msg` (`ndisc_alloc_skb`), add the one link-layer address
/// option their type carries (`ndisc_fill_addr_option`: source for an NS,
/// target for an NA) and send it through `ndisc_send_skb` via `ip6_nd_hdr`
/// (hop limit 255); the callers decide the flags and whether the option
/// is present.
pub(crate) fn nd_frame(
    dst_mac: [u8; 6],
    src_mac: [u8; 6],
    src: Ipv6Addr,
    dst: Ipv6Addr,
    msg: &NdMessage,
) -> Vec<u8> {
    let icmp = nd_body(msg);
    let ip = Ipv6Repr {
        src_addr: src,
        dst_addr: dst,
        next_header: Protocol::Icmpv6,
        payload_len: icmp.len(),
        hop_limit: 255,
        traffic_class: 0,
        flow_label: 0,
    };
    let mut frame = vec![0u8; HEADER_LEN + ip.total_len()];
    let _ = EthRepr {
        dst_addr: Address(dst_mac),
        src_addr: Address(src_mac),
        ethertype: EtherType::Ipv6,
    }
    .emit(&mut frame);
    let body = &mut frame[HEADER_LEN + fibre_net::ipv6::HEADER_LEN..];
    body.copy_from_slice(&icmp);
    let pseudo = checksum::pseudo_header::<Ipv6>(src, dst, 58, icmp.len() as u32);
    let sum = !checksum::add(pseudo, checksum::sum(body));
    body[2..4].copy_from_slice(&sum.to_be_bytes());
    let _ = ip.emit(&mut frame[HEADER_LEN..]);
    frame
}

/// The link-layer address option an NS (source) or NA (target) carries.
fn lladdr_option_type(kind: u8) -> u8 {
    if kind == NDISC_NEIGHBOUR_SOLICITATION {
        OPT_SOURCE_LL_ADDR
    } else {
        OPT_TARGET_LL_ADDR
    }
}

/// The ICMPv6 body of an NS or NA: type, code 0, zero checksum, the NA's
/// flags, target and the link-layer address option when given.
fn nd_body(msg: &NdMessage) -> Vec<u8> {
    let mut body = vec![msg.kind, 0, 0, 0, msg.flags.byte(), 0, 0, 0];
    body.extend_from_slice(&msg.target.octets());
    if let Some(mac) = msg.lladdr {
        body.extend_from_slice(&[lladdr_option_type(msg.kind), 1]);
        body.extend_from_slice(&mac);
    }
    body
}

/// The flags of a neighbour advertisement (RFC 4861 section 4.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NaFlags {
    /// R: the sender is a router.
    pub router: bool,
    /// S: an answer to a solicitation.
    pub solicited: bool,
    /// O: the address should override a cached one.
    pub override_: bool,
}

impl NaFlags {
    fn byte(self) -> u8 {
        (u8::from(self.router) << 7)
            | (u8::from(self.solicited) << 6)
            | (u8::from(self.override_) << 5)
    }

    fn of(byte: u8) -> NaFlags {
        NaFlags {
            router: byte & 0x80 != 0,
            solicited: byte & 0x40 != 0,
            override_: byte & 0x20 != 0,
        }
    }
}

/// `addrconf_addr_solicit_mult`: ff02::1:ffXX:XXXX of an address.
pub fn solicited_node(addr: Ipv6Addr) -> Ipv6Addr {
    let o = addr.octets();
    Ipv6Addr::new(
        0xff02,
        0,
        0,
        0,
        0,
        1,
        0xff00 | u16::from(o[13]),
        u16::from_be_bytes([o[14], o[15]]),
    )
}

/// A received NS or NA, read as `ndisc_recv_ns`/`ndisc_recv_na` read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NdMessage {
    /// 135 or 136.
    pub kind: u8,
    /// The NA's flags (zero for an NS).
    pub flags: NaFlags,
    /// Target address.
    pub target: Ipv6Addr,
    /// The source (NS) or target (NA) link-layer address option, the first
    /// one given (`ndisc_parse_options` keeps the first of duplicates).
    pub lladdr: Option<[u8; 6]>,
}

/// Why a received NS/NA is ignored (the kernel's `ND_PRINTK` reasons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NdBad {
    /// Shorter than `struct nd_msg`.
    TooShort,
    /// An option of length 0 or past the end (`ndisc_parse_options`).
    BadOptions,
    /// A link-layer address option that is not 8 bytes for Ethernet
    /// (`ndisc_opt_addr_data`).
    BadLladdrLength,
}

/// Reads the ICMPv6 body (after the IPv6 header) of an NS or NA.
pub(crate) fn parse_nd(icmp: &[u8]) -> Result<NdMessage, NdBad> {
    if icmp.len() < ND_MSG_LEN {
        return Err(NdBad::TooShort);
    }
    let kind = icmp[0];
    let mut target = [0u8; 16];
    target.copy_from_slice(&icmp[8..24]);
    let wanted = lladdr_option_type(kind);
    let mut lladdr = None;
    let mut seen = false;
    let mut opts = &icmp[ND_MSG_LEN..];
    while !opts.is_empty() {
        if opts.len() < 2 {
            return Err(NdBad::BadOptions);
        }
        let len = usize::from(opts[1]) * 8;
        if len == 0 || len > opts.len() {
            return Err(NdBad::BadOptions);
        }
        if opts[0] == wanted && !seen {
            seen = true;
            if len != 8 {
                return Err(NdBad::BadLladdrLength);
            }
            let mut mac = [0u8; 6];
            mac.copy_from_slice(&opts[2..8]);
            lladdr = Some(mac);
        }
        opts = &opts[len..];
    }
    Ok(NdMessage {
        kind,
        flags: if kind == NDISC_NEIGHBOUR_ADVERTISEMENT {
            NaFlags::of(icmp[4])
        } else {
            NaFlags::default()
        },
        target: Ipv6Addr::from(target),
        lladdr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solicited_node_takes_the_low_24_bits() {
        assert_eq!(
            solicited_node("2001:db8::12:3456".parse().unwrap()),
            "ff02::1:ff12:3456".parse::<Ipv6Addr>().unwrap()
        );
    }

    #[test]
    fn ns_carries_a_valid_checksum_and_parses_back() {
        let src: Ipv6Addr = "fe80::1".parse().unwrap();
        let target: Ipv6Addr = "2001:db8::2".parse().unwrap();
        let ns = NdMessage {
            kind: NDISC_NEIGHBOUR_SOLICITATION,
            flags: NaFlags::default(),
            target,
            lladdr: Some([2, 0, 0, 0, 0, 1]),
        };
        let frame = nd_frame(
            [0x33, 0x33, 0xff, 0, 0, 2],
            [2, 0, 0, 0, 0, 1],
            src,
            solicited_node(target),
            &ns,
        );
        assert_eq!(frame.len(), 14 + 40 + 32);
        let ip = &frame[14..];
        assert_eq!(ip[7], 255);
        let body = &ip[40..];
        let pseudo =
            checksum::pseudo_header::<Ipv6>(src, solicited_node(target), 58, body.len() as u32);
        assert_eq!(checksum::add(pseudo, checksum::sum(body)), 0xffff);
        let msg = parse_nd(body).unwrap();
        assert_eq!(msg, ns);
    }

    #[test]
    fn options_of_length_zero_or_past_the_end_are_refused() {
        let mut body = nd_body(&NdMessage {
            kind: NDISC_NEIGHBOUR_ADVERTISEMENT,
            flags: NaFlags::of(0x60),
            target: "::1".parse().unwrap(),
            lladdr: None,
        });
        body.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(parse_nd(&body), Err(NdBad::BadOptions));
        let len = body.len();
        body[len - 7] = 2;
        assert_eq!(parse_nd(&body), Err(NdBad::BadOptions));
        assert_eq!(parse_nd(&body[..20]), Err(NdBad::TooShort));
    }
}
