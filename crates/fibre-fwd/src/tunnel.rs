//! GRE tunnels (RFC 2784, with RFC 2890's key and sequence number) as
//! devices of the worker, over an IPv4 underlay (`type gre`):
//!
//! * **output**: a packet routed to a tunnel link is forwarded as to any
//!   device (`ip_forward`'s TTL and MTU checks against the tunnel's MTU,
//!   fragments where DF is clear), then encapsulated as `ip_tunnel_xmit`
//!   does: the underlay route to `remote` (from `local`, protocol 47),
//!   the path MTU check of `tnl_update_pmtu` (fragmentation needed with
//!   the underlay MTU less the tunnel's headers for a DF packet larger
//!   than it), the outer header (TTL fixed or the inner one after
//!   `ip_forward` decremented it, TOS fixed or inherited with the ECN
//!   field of RFC 6040's `INET_ECN_encapsulate`, DF set as with the
//!   default `pmtudisc`) and the GRE header (`gre_build_header`: checksum,
//!   key and sequence number as configured, the first sequence number 0
//!   as `atomic_fetch_inc(&tunnel->o_seqno)` gives it since the kernel's
//!   "ip_gre: Make o_seqno start from 0 in native mode");
//!   the outer packet then leaves by the underlay port with its
//!   neighbour's MAC, in the same burst;
//! * **input**: a GRE packet to one of the router's addresses is matched
//!   to a tunnel as `ip_tunnel_lookup` does (remote, local or any, key,
//!   the tunnel up), checked by `fibre_dev`'s [`decapsulate`] plus
//!   `ip_tunnel_rcv`'s own rules (a checksum present exactly when the
//!   tunnel expects one; `iseq` ordering), and its inner packet goes
//!   through the input path again with the tunnel as its input device.
//!   A GRE header the kernel's `gre_parse_header` refuses (version,
//!   routing, a bad checksum, too short) is dropped silently; a valid one
//!   that no tunnel takes is answered with port unreachable, as `gre_rcv`
//!   does when `ipgre_rcv` rejects it (`icmp_send(skb, ICMP_DEST_UNREACH,
//!   ICMP_PORT_UNREACH, 0)`; protocol unreachable is what a kernel without
//!   the `ip_gre` module at all sends, and a router with tunnels has it).
//!   A worker given no tunnel stands for a kernel without `ip_gre`: it
//!   hands GRE to the control side as any protocol it has no handler for.
//!
//! Not modelled, each a counted drop: ip6gre and the tap kinds (their
//! links are not devices of the worker: `NoOutputPort`, and their GRE
//! packets `UnknownProtocol`), a tunnel whose underlay is another tunnel
//! (`NoOutputPort`), GRE inside GRE on receipt (`TunnelLoop`), WCCP's
//! protocol rewrite; GRE arriving in IPv4 fragments goes to the control
//! side as every fragment for the router does (the kernel reassembles it
//! before `gre_rcv`); a tunnel MTU larger than its underlay allows drops
//! packets without DF that do not fit (`TooBig`) where the kernel's
//! outer DF packet would fail in `ip_fragment`. The outer IP ID is 0 where the kernel's
//! `iptunnel_xmit` takes one from `__ip_select_ident` (a field it
//! randomises); the sequence numbers are this worker's own (a tunnel with
//! `oseq` should be sent through one worker, as `fibre_dev` explains for
//! its lockless transmit).
//!
//! The kernel on this machine has no GRE module, so the packet-level
//! kernel (forwarding) oracle cannot check any of this: the
//! tests here compare with frames built independently in the test.

use std::net::{IpAddr, Ipv4Addr};

use fibre_base::DropReason;
use fibre_dev::gre::{decapsulate, RxPolicy};
use fibre_fib::{
    Family, Fib, FlowKeyV4, GreKind, GreSpec, Inheritable, LinkIndex, LinkKind, RpFilter,
};
use fibre_net::ethernet::EtherType;
use fibre_net::{checksum, gre};

use crate::config::PortConfig;
use crate::output::{Destination, Out};
use crate::receive::{self, PacketType, ETH_HLEN};
use crate::worker::Core;

/// IP protocol 47.
pub(crate) const IPPROTO_GRE: u8 = 47;
/// The outer IPv4 header the worker writes (no options).
const OUTER_V4_LEN: usize = 20;
/// `IPTOS_TOS_MASK` as `RT_TOS` applies it to the underlay lookup's TOS.
const RT_TOS_MASK: u8 = 0x1e;
/// The ECN field and its values (RFC 3168).
const ECN_MASK: u8 = 0b11;
const ECN_ECT0: u8 = 0b10;
const ECN_CE: u8 = 0b11;

/// A GRE tunnel the worker runs: the FIB link it is (`link add NAME type
/// gre remote ...`; its parameters are read from the FIB at each packet)
/// and the per-device settings of its input path.
///
/// ```
/// use fibre_fwd::TunnelConfig;
/// let tunnel = TunnelConfig::new(4);
/// assert_eq!(tunnel.link, 4);
/// assert!(tunnel.send_redirects);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TunnelConfig {
    /// The FIB link (ifindex) of the tunnel.
    pub link: LinkIndex,
    /// `net.ipv4.conf.DEV.rp_filter` for inner packets received through it.
    pub rp_filter: RpFilter,
    /// `net.ipv4.conf.DEV.send_redirects` for packets forwarded back into it.
    pub send_redirects: bool,
}

impl TunnelConfig {
    /// A tunnel for `link` with the kernel's defaults (`rp_filter` 0,
    /// `send_redirects` 1).
    pub fn new(link: LinkIndex) -> TunnelConfig {
        TunnelConfig {
            link,
            rp_filter: RpFilter::Off,
            send_redirects: true,
        }
    }

    /// The input path's view of the tunnel: a port without a MAC address.
    fn as_port(&self) -> PortConfig {
        PortConfig {
            link: self.link,
            mac: [0; 6],
            rp_filter: self.rp_filter,
            send_redirects: self.send_redirects,
        }
    }
}

/// What a worker counted for one tunnel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TunnelCounters {
    /// Packets encapsulated and queued (on the underlay port or for its
    /// neighbour's resolution).
    pub tx_packets: u64,
    /// Packets decapsulated and handed to the input path.
    pub rx_packets: u64,
}

/// A tunnel and the state its packets change.
#[derive(Debug)]
pub(crate) struct Tunnel {
    pub config: TunnelConfig,
    /// The next output sequence number (`o_seqno`).
    oseq: u32,
    /// The next sequence number expected (`i_seqno`; 0: none seen yet).
    iseq_next: u32,
    pub counters: TunnelCounters,
}

impl Tunnel {
    pub(crate) fn new(config: TunnelConfig) -> Tunnel {
        Tunnel {
            config,
            oseq: 0,
            iseq_next: 0,
            counters: TunnelCounters::default(),
        }
    }
}

/// How a packet leaving by a tunnel is wrapped: fixed for the packet once
/// the underlay is routed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Encap {
    /// Index of the tunnel in the worker's tunnels.
    tunnel: usize,
    src: Ipv4Addr,
    dst: Ipv4Addr,
    ttl: Inheritable,
    tos: Inheritable,
    csum: bool,
    key: Option<u32>,
    seq: bool,
    /// Outer IPv4 and GRE header: what goes in front of the inner packet.
    pub header_len: usize,
}

/// How a GRE packet for the router ended: as its inner packet did (or
/// dropped), or taken by no tunnel (the caller answers port unreachable).
pub(crate) enum GreEnd {
    Done(Result<(), DropReason>),
    NoTunnel,
}

/// Where a packet routed to a tunnel goes, and the largest inner packet
/// its underlay path carries (`tnl_update_pmtu`'s `mtu`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TunnelEgress {
    pub dest: Destination,
    pub path_mtu: usize,
}

/// The IPv4-underlay, IP-carrying GRE spec of `link`, if it is one.
fn gre_spec(fib: &Fib, link: LinkIndex) -> Option<&GreSpec> {
    match &fib.link(link)?.kind {
        LinkKind::Gre(spec) if spec.kind == GreKind::Gre => Some(spec),
        _ => None,
    }
}

impl Core {
    /// The index of the tunnel for link `link`, if the worker runs one.
    pub(crate) fn tunnel_of(&self, link: LinkIndex) -> Option<usize> {
        self.tunnels.iter().position(|t| t.config.link == link)
    }

    /// `ip_tunnel_xmit`'s routing for a packet (of TOS `inner_tos`) sent
    /// into tunnel `tunnel`: the underlay route to the remote end, its
    /// source, the underlay port and next hop, and the path MTU left
    /// for the inner packet.
    pub(crate) fn tunnel_egress(
        &self,
        out: &Out<'_>,
        tunnel: usize,
        inner_tos: u8,
    ) -> Result<TunnelEgress, DropReason> {
        let link = self.tunnels[tunnel].config.link;
        let spec = gre_spec(out.fib, link).ok_or(DropReason::NoOutputPort)?;
        if !out.fib.link(link).is_some_and(|l| l.up) {
            return Err(DropReason::DeviceDown);
        }
        let (IpAddr::V4(remote), local) = (spec.remote, spec.local) else {
            return Err(DropReason::NoOutputPort);
        };
        let local = match local {
            Some(IpAddr::V4(local)) => Some(local),
            Some(IpAddr::V6(_)) => return Err(DropReason::NoOutputPort),
            None => None,
        };
        let tos = match spec.tos {
            Inheritable::Inherit => inner_tos,
            Inheritable::Fixed(tos) => tos,
        };
        let key = FlowKeyV4 {
            dst: u32::from(remote),
            src: local.map_or(0, u32::from),
            tos: tos & RT_TOS_MASK,
            proto: IPPROTO_GRE,
            ..FlowKeyV4::default()
        };
        let route = out
            .fib
            .lookup_output_v4(&key)
            .map_err(|_| DropReason::NoRoute)?;
        if route.dev == link {
            return Err(DropReason::UnderlayLoop);
        }
        let port = self.port_of(route.dev).ok_or(DropReason::NoOutputPort)?;
        let src = match local {
            Some(local) => local,
            None => out
                .fib
                .output_source_v4(remote, tos & RT_TOS_MASK)
                .ok()
                .flatten()
                .ok_or(DropReason::NoRoute)?,
        };
        let header_len = OUTER_V4_LEN + spec.gre_header_len() as usize;
        let encap = Encap {
            tunnel,
            src,
            dst: remote,
            ttl: spec.ttl,
            tos: spec.tos,
            csum: spec.ocsum,
            key: spec.okey,
            seq: spec.oseq,
            header_len,
        };
        let underlay_mtu = self.route_mtu(out.fib, route.cache_class, route.dev);
        let next_hop = route.gateway_addr().unwrap_or(remote);
        let dest = self
            .destination(out, port, IpAddr::V4(next_hop))
            .wrapped(encap);
        Ok(TunnelEgress {
            dest,
            path_mtu: underlay_mtu.saturating_sub(header_len),
        })
    }

    /// The next output sequence number of the tunnel `encap` wraps for,
    /// if it sends them.
    pub(crate) fn take_seq(&mut self, encap: &Encap) -> Option<u32> {
        let tunnel = &mut self.tunnels[encap.tunnel];
        tunnel.counters.tx_packets += 1;
        encap.seq.then(|| {
            let seq = tunnel.oseq;
            tunnel.oseq = seq.wrapping_add(1);
            seq
        })
    }

    /// A GRE packet (`packet`, the IP packet of `frame` without padding;
    /// a whole datagram with header `h`) delivered locally: `gre_rcv`,
    /// then `ipgre_rcv`/`ip_tunnel_rcv`, then the inner packet's input
    /// path with the tunnel as its device.
    pub(crate) fn receive_gre(
        &mut self,
        out: &mut Out<'_>,
        frame: &[u8],
        h: &receive::Ipv4Header,
    ) -> GreEnd {
        match self.receive_gre_inner(out, frame, h) {
            Ok(()) => GreEnd::Done(Ok(())),
            Err(None) => GreEnd::NoTunnel,
            Err(Some(reason)) => GreEnd::Done(Err(reason)),
        }
    }

    /// [`Core::receive_gre`]; `Err(None)` where no tunnel takes the packet.
    fn receive_gre_inner(
        &mut self,
        out: &mut Out<'_>,
        frame: &[u8],
        h: &receive::Ipv4Header,
    ) -> Result<(), Option<DropReason>> {
        let packet = &frame[ETH_HLEN..ETH_HLEN + h.total_len];
        // `gre_parse_header`: version 0, no routing, the header whole, the
        // checksum right; anything else is dropped without an answer.
        let greh =
            gre::Packet::new_checked(&packet[h.header_len..]).map_err(
                |e| match DropReason::from(e) {
                    reason @ (DropReason::BadVersion | DropReason::RoutingPresent) => reason,
                    _ => DropReason::Truncated,
                },
            )?;
        let repr = gre::Repr::parse(&greh).map_err(|_| DropReason::BadChecksum)?;
        let tap = repr.protocol == EtherType::TransparentEthernet;
        let (src, dst) = (IpAddr::V4(h.src), IpAddr::V4(h.dst));
        let Some(found) = self.match_tunnel(out.fib, src, dst, repr.key, tap) else {
            if gre_links_match(out.fib, src, dst, repr.key, tap) {
                // A tunnel of the FIB that this worker does not run (a
                // tap, or a link not added to it) would take it.
                return Err(Some(DropReason::UnknownProtocol));
            }
            return Err(None);
        };
        let link = self.tunnels[found].config.link;
        let spec = gre_spec(out.fib, link).ok_or(DropReason::NotForTunnel)?;
        let policy = RxPolicy {
            local: spec.local,
            remote: spec.remote,
            ikey: spec.ikey,
            icsum: spec.icsum,
            iseq: spec.iseq,
            tap: false,
        };
        // `ip_tunnel_rcv`: a checksum present exactly when the tunnel
        // expects one (`decapsulate` refuses only a missing one).
        if repr.csum && !spec.icsum {
            return Err(Some(DropReason::BadChecksum));
        }
        let iseq = spec.iseq;
        let decapsulated = decapsulate(&policy, packet)?;
        if let (true, Some(seq)) = (iseq, decapsulated.seq) {
            let tunnel = &mut self.tunnels[found];
            let expected = tunnel.iseq_next;
            if expected != 0 && (seq.wrapping_sub(expected) as i32) < 0 {
                return Err(Some(DropReason::OutOfOrder));
            }
            tunnel.iseq_next = seq.wrapping_add(1);
        }
        // The inner packet, behind the outer frame's Ethernet addresses
        // (what the control side sees of a punted one), in the worker's
        // own buffer: GRE inside GRE would need a second one.
        let mut buf = std::mem::take(&mut self.decap);
        if buf.is_empty() {
            return Err(Some(DropReason::TunnelLoop));
        }
        let inner = &packet[decapsulated.header_len..][..decapsulated.inner_len];
        let len = ETH_HLEN + inner.len();
        if len > buf.len() {
            self.decap = buf;
            return Err(Some(DropReason::TooBig));
        }
        buf[..12].copy_from_slice(&frame[..12]);
        let ethertype: u16 = decapsulated.protocol.into();
        buf[12..14].copy_from_slice(&ethertype.to_be_bytes());
        buf[ETH_HLEN..len].copy_from_slice(inner);
        if decapsulated.set_ce {
            mark_ce(&mut buf[ETH_HLEN..len]);
        }
        self.tunnels[found].counters.rx_packets += 1;
        let config = self.tunnels[found].config.as_port();
        let end = self.input_inner(out, &config, &buf[..len]);
        self.decap = buf;
        end.map_err(Some)
    }

    /// The input path of an inner packet (in `frame`, behind a stand-in
    /// Ethernet header) received on the tunnel `config`: `ip_rcv_core`,
    /// the input route lookup from the tunnel, then as any packet.
    fn input_inner(
        &mut self,
        out: &mut Out<'_>,
        config: &PortConfig,
        frame: &[u8],
    ) -> Result<(), DropReason> {
        let outer_link = out.in_link;
        out.in_link = config.link;
        let end = match frame[ETH_HLEN] >> 4 {
            4 => receive::ipv4_header(&frame[ETH_HLEN..]).and_then(|h| {
                let key = h.flow_key();
                let mut answer = [Err(fibre_fib::Errno::Inval)];
                out.fib
                    .lookup_input_burst_v4(config.link, &[key], &mut answer);
                let frame = &frame[..ETH_HLEN + h.total_len];
                self.input_v4(out, config, frame, &h, PacketType::Host, &key, answer[0])
            }),
            _ => receive::ipv6_header(&frame[ETH_HLEN..]).and_then(|h| {
                let key = h.flow_key();
                let mut answer = [Err(fibre_fib::Errno::Inval)];
                out.fib
                    .lookup_input_burst_v6(config.link, &[key], &mut answer);
                let frame = &frame[..ETH_HLEN + h.total_len];
                self.input_v6(out, config, frame, &h, PacketType::Host, answer[0])
            }),
        };
        out.in_link = outer_link;
        end
    }

    /// `ip_tunnel_lookup` among the worker's tunnels: the remote, the key
    /// (a keyed tunnel takes only its key, a keyless one only keyless
    /// packets), the kind, the tunnel up; one bound to the packet's
    /// destination before one bound to none.
    fn match_tunnel(
        &self,
        fib: &Fib,
        src: IpAddr,
        dst: IpAddr,
        key: Option<u32>,
        tap: bool,
    ) -> Option<usize> {
        let mut wildcard = None;
        for (i, tunnel) in self.tunnels.iter().enumerate() {
            let Some(link) = fib.link(tunnel.config.link) else {
                continue;
            };
            let LinkKind::Gre(spec) = &link.kind else {
                continue;
            };
            match match_score(spec, link.up, src, dst, key, tap) {
                Some(2) => return Some(i),
                Some(_) if wildcard.is_none() => wildcard = Some(i),
                _ => {}
            }
        }
        wildcard
    }
}

/// How well a tunnel of `spec` (up or not) takes a GRE packet from `src`
/// to `dst` with `key`: 2 bound to `dst`, 1 bound to any address, `None`
/// not at all.
fn match_score(
    spec: &GreSpec,
    up: bool,
    src: IpAddr,
    dst: IpAddr,
    key: Option<u32>,
    tap: bool,
) -> Option<u8> {
    if !up
        || spec.kind.family() != Family::V4
        || spec.kind.is_tap() != tap
        || spec.remote != src
        || spec.ikey != key
    {
        return None;
    }
    match spec.local {
        Some(local) if local == dst => Some(2),
        Some(_) => None,
        None => Some(1),
    }
}

/// Whether any GRE link of the FIB would take the packet (the slow path
/// of a packet no tunnel of the worker takes).
fn gre_links_match(fib: &Fib, src: IpAddr, dst: IpAddr, key: Option<u32>, tap: bool) -> bool {
    fib.links().any(|link| match &link.kind {
        LinkKind::Gre(spec) => match_score(spec, link.up, src, dst, key, tap).is_some(),
        _ => false,
    })
}

/// Writes the outer IPv4 and GRE headers of `encap` into the front of
/// `packet`, whose inner packet (after `encap.header_len` bytes) is in
/// place and already rewritten (its TTL one less); `seq` is the sequence
/// number to send, if any. Returns the outer packet's length.
pub(crate) fn write_outer(packet: &mut [u8], encap: &Encap, seq: Option<u32>) -> usize {
    let hl = encap.header_len;
    let (protocol, inner_ttl, inner_tos) = {
        let inner = &packet[hl..];
        match inner[0] >> 4 {
            4 => (EtherType::Ipv4, inner[8], inner[1]),
            _ => (EtherType::Ipv6, inner[7], (inner[0] << 4) | (inner[1] >> 4)),
        }
    };
    let ttl = match encap.ttl {
        Inheritable::Inherit => inner_ttl,
        Inheritable::Fixed(ttl) => ttl,
    };
    let tos = match encap.tos {
        Inheritable::Inherit => inner_tos,
        Inheritable::Fixed(tos) => tos,
    };
    // `INET_ECN_encapsulate` (RFC 6040 normal mode): the inner ECN field,
    // CE sent as ECT(0).
    let tos = (tos & !ECN_MASK)
        | match inner_tos & ECN_MASK {
            ECN_CE => ECN_ECT0,
            ecn => ecn,
        };
    let repr = gre::Repr {
        csum: encap.csum,
        key: encap.key,
        seq: seq.filter(|_| encap.seq),
        protocol,
    };
    // The GRE header and its checksum over header and payload; the
    // header's length is what `header_len` counted, so this cannot fail.
    let _ = repr.emit(&mut packet[OUTER_V4_LEN..]);
    let total = packet.len();
    let ip = &mut packet[..OUTER_V4_LEN];
    ip[0] = 0x45;
    ip[1] = tos;
    ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    // ID 0 with DF set: the kernel's `__ip_select_ident` value is random.
    ip[4..8].copy_from_slice(&[0, 0, 0x40, 0]);
    ip[8] = ttl;
    ip[9] = IPPROTO_GRE;
    ip[10..12].fill(0);
    ip[12..16].copy_from_slice(&encap.src.octets());
    ip[16..20].copy_from_slice(&encap.dst.octets());
    let sum = checksum::checksum(ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    total
}

/// Sets Congestion Experienced on an inner IPv4 or IPv6 header
/// (`IP_ECN_set_ce`, `IP6_ECN_set_ce`), the IPv4 checksum patched.
fn mark_ce(inner: &mut [u8]) {
    match inner[0] >> 4 {
        4 => {
            inner[1] |= ECN_CE;
            let header_len = usize::from(inner[0] & 0x0f) * 4;
            inner[10..12].fill(0);
            let sum = checksum::checksum(&inner[..header_len]);
            inner[10..12].copy_from_slice(&sum.to_be_bytes());
        }
        _ => inner[1] |= ECN_CE << 4,
    }
}
