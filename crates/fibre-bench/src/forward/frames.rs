//! The LAN the frames arrive from and the frames themselves.

use std::net::{Ipv4Addr, Ipv6Addr};

use fibre_fib::{config, Fib, LinkIndex};
use fibre_net::checksum;
use fibre_net::ethernet::HEADER_LEN as ETH_HLEN;
use fibre_net::udp::HEADER_LEN as UDP_HLEN;

use crate::fib::setup::FibFamily;
use crate::nexthop::{splitmix64, NextHop};
use crate::router::fib_error;
use crate::BenchError;

/// The link the frames arrive on.
pub const LAN: &str = "lan0";
/// The LAN port's MAC address: every frame is sent to it.
pub const LAN_MAC: [u8; 6] = [0x02, 0xfb, 0, 0, 0, 0x01];
/// The uplink port's MAC address: every forwarded frame comes from it.
pub const WAN_MAC: [u8; 6] = [0x02, 0xfb, 0, 0, 0, 0x02];
/// The LAN hosts' MAC address (the frames' source).
const HOST_MAC: [u8; 6] = [0x02, 0xfb, 0, 0, 1, 0x01];
const IPPROTO_UDP: u8 = 17;

/// The gateway `hop`'s MAC address.
pub fn gateway_mac(hop: NextHop) -> [u8; 6] {
    let [hi, lo] = hop.to_be_bytes();
    [0x02, 0xfb, 0, 2, hi, lo]
}

/// What a family's frames need.
pub trait FrameFamily: FibFamily {
    /// The LAN's address line for `ip addr add` (in no RIS prefix).
    const LAN_ADDRESS: &'static str;
    /// A frame from LAN host `host` to `dst`, TTL 64, its checksums right.
    fn frame(dst: Self, host: u16, sport: u16) -> Vec<u8>;
}

impl FrameFamily for u32 {
    // TEST-NET-2 (RFC 5737).
    const LAN_ADDRESS: &'static str = "198.51.100.1/24";

    fn frame(dst: u32, host: u16, sport: u16) -> Vec<u8> {
        // 60 bytes: the 64-byte minimum Ethernet frame less its FCS.
        let mut frame = vec![0u8; 60];
        let ip_len = frame.len() - ETH_HLEN;
        ethernet(&mut frame, 0x0800);
        let src = u32::from(Ipv4Addr::new(198, 51, 100, 2 + (host % 250) as u8));
        let ip = &mut frame[ETH_HLEN..];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
        ip[8] = 64;
        ip[9] = IPPROTO_UDP;
        ip[12..16].copy_from_slice(&src.to_be_bytes());
        ip[16..20].copy_from_slice(&dst.to_be_bytes());
        let sum = checksum::checksum(&ip[..20]);
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
        udp(&mut ip[20..], sport);
        frame
    }
}

impl FrameFamily for u128 {
    // The documentation prefix (RFC 3849).
    const LAN_ADDRESS: &'static str = "2001:db8:1::1/64";

    fn frame(dst: u128, host: u16, sport: u16) -> Vec<u8> {
        // 70 bytes: the smallest UDP frame (62) and 8 bytes of payload.
        let mut frame = vec![0u8; 70];
        let payload_len = frame.len() - ETH_HLEN - 40;
        ethernet(&mut frame, 0x86dd);
        let src = u128::from(Ipv6Addr::new(
            0x2001,
            0xdb8,
            1,
            0,
            0,
            0,
            0,
            2 + host % 0xfff0,
        ));
        let ip = &mut frame[ETH_HLEN..];
        ip[0] = 0x60;
        ip[4..6].copy_from_slice(&(payload_len as u16).to_be_bytes());
        ip[6] = IPPROTO_UDP;
        ip[7] = 64;
        ip[8..24].copy_from_slice(&src.to_be_bytes());
        ip[24..40].copy_from_slice(&dst.to_be_bytes());
        udp(&mut ip[40..], sport);
        frame
    }
}

fn ethernet(frame: &mut [u8], ethertype: u16) {
    frame[..6].copy_from_slice(&LAN_MAC);
    frame[6..12].copy_from_slice(&HOST_MAC);
    frame[12..14].copy_from_slice(&ethertype.to_be_bytes());
}

/// A UDP header to port 443 over the rest of `segment` (a forwarding
/// router reads none of it; its checksum is left 0, "none" for IPv4).
fn udp(segment: &mut [u8], sport: u16) {
    debug_assert!(segment.len() >= UDP_HLEN);
    let len = segment.len() as u16;
    segment[..2].copy_from_slice(&sport.to_be_bytes());
    segment[2..4].copy_from_slice(&443u16.to_be_bytes());
    segment[4..6].copy_from_slice(&len.to_be_bytes());
}

/// `fib` with the LAN link up and its address; the LAN's index.
pub fn add_lan<K: FrameFamily>(fib: Fib) -> Result<(Fib, LinkIndex), BenchError> {
    let text = format!(
        "link add {LAN} type ifb\nlink set {LAN} up\naddr add {} dev {LAN}\n",
        K::LAN_ADDRESS
    );
    let (fib, _) = config::apply_str(&fib, "forward-core.conf", &text, false)
        .map_err(|e| fib_error(LAN, format!("{e:?}")))?;
    let lan = fib
        .link_by_name(LAN)
        .map(|l| l.index)
        .ok_or_else(|| fib_error(LAN, "the LAN vanished"))?;
    Ok((fib, lan))
}

/// One frame per destination, from LAN hosts and source ports drawn with
/// `seed`.
pub fn udp_frames<K: FrameFamily>(dsts: &[K], seed: u64) -> Vec<Vec<u8>> {
    dsts.iter()
        .enumerate()
        .map(|(i, &dst)| {
            let random = splitmix64(seed ^ i as u64);
            K::frame(dst, random as u16, 1024 + (random >> 16) as u16 % 60_000)
        })
        .collect()
}
