//! The way out: the next hop's neighbour, the Ethernet header, the output
//! port's transmit queue (or the control side's queue of packets awaiting
//! resolution), IPv4 fragmentation, and the ICMP messages the worker
//! originates, routed like any packet of the router's own and fragmented
//! where they need it (`ip_finish_output2`, `neigh_output`, `ip_fragment`,
//! `icmp_send`, `icmp6_send`, `ip6_fragment`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use fibre_base::DropReason;
use fibre_fib::{Fib, FlowKeyV4, FlowKeyV6, LinkIndex, RouteType};

use crate::fragment::Fragmenter;
use crate::icmp::{self, Icmp4Error, Icmp6Error};
use crate::neighbours::Neighbours;
use crate::options::Compiled;
use crate::receive::{PacketType, ETH_HLEN};
use crate::tunnel::{self, Encap};
use crate::worker::Core;

/// The EtherTypes the worker sends.
pub(crate) const ETHERTYPE_IPV4: u16 = 0x0800;
pub(crate) const ETHERTYPE_IPV6: u16 = 0x86dd;
/// IPv6's minimum link MTU (RFC 8200 section 5): `IPV6_MIN_MTU`.
pub(crate) const IPV6_MIN_MTU: usize = 1280;

/// What a burst's packets leave with: the FIB version of the burst, the
/// neighbours, the input port and the time.
pub(crate) struct Out<'a> {
    pub fib: &'a Fib,
    pub neighbours: &'a dyn Neighbours,
    pub in_port: usize,
    /// The link the packet being handled came in on: the input port's,
    /// or a tunnel's for a decapsulated packet.
    pub in_link: LinkIndex,
    pub now_ns: u64,
}

/// Where a packet goes once routed: a port's transmit queue with the next
/// hop's MAC, or the control side to resolve it first; in a tunnel's
/// headers (`encap`) where it was routed into one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Destination {
    Port {
        port: usize,
        mac: [u8; 6],
        encap: Option<Encap>,
    },
    Unresolved {
        port: usize,
        next_hop: IpAddr,
        encap: Option<Encap>,
    },
}

impl Destination {
    /// The same way out, the packet wrapped in `encap`'s headers.
    pub(crate) fn wrapped(self, encap: Encap) -> Destination {
        match self {
            Destination::Port { port, mac, .. } => Destination::Port {
                port,
                mac,
                encap: Some(encap),
            },
            Destination::Unresolved { port, next_hop, .. } => Destination::Unresolved {
                port,
                next_hop,
                encap: Some(encap),
            },
        }
    }

    fn encap(&self) -> Option<Encap> {
        match *self {
            Destination::Port { encap, .. } | Destination::Unresolved { encap, .. } => encap,
        }
    }
}

impl Core {
    /// `neigh_output`'s question: is `next_hop` resolved on the link of
    /// port `port`?
    pub(crate) fn destination(&self, out: &Out<'_>, port: usize, next_hop: IpAddr) -> Destination {
        let link = self.ports[port].config.link;
        match out.neighbours.lookup(link, next_hop) {
            Some(mac) => Destination::Port {
                port,
                mac,
                encap: None,
            },
            None => Destination::Unresolved {
                port,
                next_hop,
                encap: None,
            },
        }
    }

    /// Where a packet routed out of link `dev` towards `next_hop` goes: a
    /// port's queue, or a tunnel's underlay (the packet's TOS `tos`
    /// choosing the underlay route of a tunnel that inherits it), with the
    /// largest packet that tunnel's path carries; a link that is neither
    /// is [`DropReason::NoOutputPort`].
    pub(crate) fn egress(
        &self,
        out: &Out<'_>,
        dev: LinkIndex,
        next_hop: IpAddr,
        tos: u8,
    ) -> Result<(Destination, Option<usize>), DropReason> {
        if let Some(port) = self.port_of(dev) {
            return Ok((self.destination(out, port, next_hop), None));
        }
        let tunnel = self.tunnel_of(dev).ok_or(DropReason::NoOutputPort)?;
        let egress = self.tunnel_egress(out, tunnel, tos)?;
        Ok((egress.dest, Some(egress.path_mtu)))
    }

    /// Queues one frame towards `dest`: the Ethernet header (destination
    /// the neighbour's MAC, or zero while unresolved; source the port's
    /// MAC), then the IP packet `write` puts after it (it returns the
    /// packet's length). Into a tunnel, `write` puts the inner packet
    /// behind the room for the tunnel's headers, which are written around
    /// it ([`tunnel::write_outer`]), and the frame is IPv4.
    pub(crate) fn put(
        &mut self,
        dest: Destination,
        ethertype: u16,
        write: impl FnOnce(&mut [u8]) -> usize,
    ) -> Result<(), DropReason> {
        let Some(encap) = dest.encap() else {
            return self.put_plain(dest, ethertype, write);
        };
        let seq = self.take_seq(&encap);
        self.put_plain(dest, ETHERTYPE_IPV4, |slot| {
            let inner = write(&mut slot[encap.header_len..]);
            tunnel::write_outer(&mut slot[..encap.header_len + inner], &encap, seq)
        })
    }

    /// [`Core::put`] without a tunnel's headers.
    fn put_plain(
        &mut self,
        dest: Destination,
        ethertype: u16,
        write: impl FnOnce(&mut [u8]) -> usize,
    ) -> Result<(), DropReason> {
        let header = |slot: &mut [u8], dst: [u8; 6], src: [u8; 6]| {
            slot[..6].copy_from_slice(&dst);
            slot[6..12].copy_from_slice(&src);
            slot[12..14].copy_from_slice(&ethertype.to_be_bytes());
        };
        match dest {
            Destination::Port { port, mac, .. } => {
                let p = &mut self.ports[port];
                let src = p.config.mac;
                let slot = p.tx.next_slot().ok_or(DropReason::TxQueueFull)?;
                header(slot, mac, src);
                let len = write(&mut slot[ETH_HLEN..]);
                p.tx.commit(ETH_HLEN + len);
                Ok(())
            }
            Destination::Unresolved { port, next_hop, .. } => {
                let config = self.ports[port].config;
                let queued = self
                    .unresolved
                    .push_with(port, config.link, Some(next_hop), |slot| {
                        header(slot, [0; 6], config.mac);
                        ETH_HLEN + write(&mut slot[ETH_HLEN..])
                    });
                if queued {
                    Ok(())
                } else {
                    Err(DropReason::NeighbourQueueFull)
                }
            }
        }
    }

    /// Queues the fragments of IPv4 `packet` (DF clear, larger than `mtu`)
    /// towards `dest`, each with TTL `ttl` and, if given, the options
    /// `options` instead of the packet's; returns how many.
    pub(crate) fn put_fragments(
        &mut self,
        dest: Destination,
        packet: &[u8],
        mtu: usize,
        ttl: u8,
        options: Option<&[u8]>,
    ) -> Result<usize, DropReason> {
        let mut fragments = Fragmenter::new(packet, mtu).ok_or(DropReason::TooBig)?;
        fragments.set_ttl(ttl);
        if let Some(options) = options {
            fragments.set_options(options);
        }
        let count = fragments.count();
        for _ in 0..count {
            self.put(dest, ETHERTYPE_IPV4, |slot| {
                fragments.next_into(slot).unwrap_or(0)
            })?;
        }
        Ok(count)
    }

    /// The MTU of link `link` for packets leaving by it: the FIB's
    /// (`ip link set mtu`), within what the worker's slots hold.
    pub(crate) fn link_mtu(&self, fib: &Fib, link: LinkIndex) -> usize {
        fib.link(link)
            .map_or(self.config.max_mtu, |l| l.mtu as usize)
            .min(self.config.max_mtu)
    }

    /// `ip_dst_mtu_maybe_forward(dst, true)` and its IPv6 counterpart: the
    /// `mtu` metric of a route of cache class `class`, locked or not, else
    /// the MTU of its device `link`; within what the worker's slots hold.
    /// Kernel-checked for IPv6 too: a forwarded packet larger than an
    /// unlocked `mtu 1300` on its route gets packet too big with 1300.
    pub(crate) fn route_mtu(&self, fib: &Fib, class: u16, link: LinkIndex) -> usize {
        match fib.class_mtu(class) {
            Some((mtu, _)) => (mtu as usize).min(self.config.max_mtu),
            None => self.link_mtu(fib, link),
        }
    }

    /// Routes and queues IPv4 `packet`, one the router originates (an ICMP
    /// error or an echo reply): the output route from its source to its
    /// destination, fragments where it is larger than the route's MTU (the
    /// kernel's own packets go out with DF clear).
    pub(crate) fn send_own_v4(&mut self, out: &Out<'_>, packet: &[u8]) -> Result<(), DropReason> {
        let dst = Ipv4Addr::new(packet[16], packet[17], packet[18], packet[19]);
        let key = FlowKeyV4 {
            dst: u32::from(dst),
            src: u32::from_be_bytes([packet[12], packet[13], packet[14], packet[15]]),
            tos: packet[1],
            proto: packet[9],
            ..FlowKeyV4::default()
        };
        let route = out
            .fib
            .lookup_output_v4(&key)
            .map_err(|_| DropReason::NoRoute)?;
        let next_hop = route.gateway_addr().unwrap_or(dst);
        let (dest, path_mtu) = match self.port_of(route.dev) {
            // To a broadcast address of the link (an error about a packet
            // from a subnet's broadcast address): `arp_constructor` makes
            // its neighbour NUD_NOARP with the device's broadcast address.
            Some(port) if route.kind == RouteType::Broadcast => (
                Destination::Port {
                    port,
                    mac: fibre_net::ethernet::Address::BROADCAST.0,
                    encap: None,
                },
                None,
            ),
            _ => self.egress(out, route.dev, IpAddr::V4(next_hop), packet[1])?,
        };
        let mtu = self
            .link_mtu(out.fib, route.dev)
            .min(path_mtu.unwrap_or(usize::MAX));
        if packet.len() <= mtu {
            self.put(dest, ETHERTYPE_IPV4, |slot| copy(slot, packet))
        } else {
            self.put_fragments(dest, packet, mtu, packet[8], None)
                .map(drop)
        }
    }

    /// Routes and queues IPv6 `packet`, one the router originates (an
    /// ICMPv6 error or an echo reply, with no extension headers) in answer
    /// to a packet received on the burst's input port, with that port's
    /// link as `flowi6_oif` where the kernel gives it one: always for an
    /// echo reply (`icmpv6_echo_reply`: `icmp6_iif`; `echo`), for an error
    /// only to an address that needs a scope (`icmp6_send`,
    /// [`icmp::needs_scope_v6`]). Larger than the route's MTU (an echo
    /// reply; errors fit 1280 bytes) it leaves in fragments, as
    /// `ip6_append_data` and `ip6_fragment` cut the kernel's own packets.
    pub(crate) fn send_own_v6(
        &mut self,
        out: &Out<'_>,
        packet: &[u8],
        echo: bool,
    ) -> Result<(), DropReason> {
        let dst = ipv6_at(packet, 24);
        let in_link = out.in_link;
        let key = FlowKeyV6 {
            dst: u128::from(dst),
            src: u128::from(ipv6_at(packet, 8)),
            proto: packet[6],
            oif: if echo || icmp::needs_scope_v6(dst) {
                in_link
            } else {
                0
            },
            ..FlowKeyV6::default()
        };
        let route = out
            .fib
            .lookup_output_v6(&key)
            .map_err(|_| DropReason::NoRoute)?;
        let next_hop = if route.gateway != 0 {
            Ipv6Addr::from(route.gateway)
        } else {
            dst
        };
        let traffic_class = (u16::from_be_bytes([packet[0], packet[1]]) >> 4) as u8;
        let (dest, path_mtu) = self.egress(out, route.dev, IpAddr::V6(next_hop), traffic_class)?;
        // Through a tunnel no larger than its path takes (an underlay
        // below 1280 plus the headers sends the packet in smaller
        // fragments rather than overrun it).
        let mtu = self
            .route_mtu(out.fib, route.cache_class, route.dev)
            .max(IPV6_MIN_MTU)
            .min(path_mtu.unwrap_or(usize::MAX));
        if packet.len() <= mtu {
            return self.put(dest, ETHERTYPE_IPV6, |slot| copy(slot, packet));
        }
        // `ipv6_select_ident` hashes the addresses with a random key and
        // adds a per-bucket count: here a hash of the addresses plus the
        // worker's count of answers, so that replies differ.
        let ident = fragment_ident_v6(packet).wrapping_add(self.counters.answered as u32);
        let fragments = self.put_fragments_v6(dest, packet, mtu, ident)?;
        self.counters.fragments += fragments as u64;
        Ok(())
    }

    /// Queues the fragments of IPv6 `packet` (a header without extension
    /// headers, then its payload, larger than `mtu`) towards `dest`, with
    /// fragment identification `ident`; returns how many. Each carries the
    /// header (payload length its own, next header 44), a fragment header
    /// (RFC 8200 section 4.5) and as many payload bytes as fit `mtu`, a
    /// multiple of 8 but the last: `ip6_append_data` fills each skb to
    /// `maxfraglen`, `((mtu - 40) & ~7) - 8` payload bytes, and
    /// `ip6_fragment` sends them as they are.
    fn put_fragments_v6(
        &mut self,
        dest: Destination,
        packet: &[u8],
        mtu: usize,
        ident: u32,
    ) -> Result<usize, DropReason> {
        const HEADER: usize = fibre_net::ipv6::HEADER_LEN;
        const NEXTHDR_FRAGMENT: u8 = 44;
        const FRAGMENT_HEADER: usize = 8;
        const MORE_FRAGMENTS: u16 = 1;
        let chunk = (mtu.checked_sub(HEADER).ok_or(DropReason::TooBig)? & !7)
            .checked_sub(FRAGMENT_HEADER)
            .filter(|&c| c > 0)
            .ok_or(DropReason::TooBig)?;
        let payload = &packet[HEADER..];
        let count = payload.len().div_ceil(chunk);
        for (i, part) in payload.chunks(chunk).enumerate() {
            let offset = i * chunk;
            let more = if i + 1 < count { MORE_FRAGMENTS } else { 0 };
            self.put(dest, ETHERTYPE_IPV6, |slot| {
                slot[..HEADER].copy_from_slice(&packet[..HEADER]);
                let payload_len = (FRAGMENT_HEADER + part.len()) as u16;
                slot[4..6].copy_from_slice(&payload_len.to_be_bytes());
                slot[6] = NEXTHDR_FRAGMENT;
                let fragment = &mut slot[HEADER..HEADER + FRAGMENT_HEADER];
                fragment[0] = packet[6];
                fragment[1] = 0;
                // The offset in 8-byte units in the top 13 bits: the byte
                // offset itself, a multiple of 8.
                fragment[2..4].copy_from_slice(&(offset as u16 | more).to_be_bytes());
                fragment[4..8].copy_from_slice(&ident.to_be_bytes());
                let at = HEADER + FRAGMENT_HEADER;
                slot[at..at + part.len()].copy_from_slice(part);
                at + part.len()
            })?;
        }
        Ok(count)
    }

    /// `icmp_send(offending, error)` for a packet (as the router holds it,
    /// its options compiled into `options`) received in a frame of
    /// `kind`: nothing for a frame to a group or broadcast MAC (`__icmp_send`:
    /// "no replies to physical multicast/broadcast"), nor where the kernel
    /// sends none (see [`icmp::write_error_v4`]), nor beyond the rate
    /// limits; else the error is routed back to the sender and queued.
    pub(crate) fn send_error_v4(
        &mut self,
        out: &Out<'_>,
        offending: &[u8],
        options: &Compiled,
        kind: PacketType,
        error: Icmp4Error,
    ) {
        if kind != PacketType::Host {
            return;
        }
        let Some(to) = icmp::error_destination_v4(offending, options) else {
            return;
        };
        let Some(route) = icmp::error_route_v4_to(out.fib, offending, to) else {
            self.counters.icmp_unsent += 1;
            return;
        };
        let mut buf = std::mem::take(&mut self.scratch);
        let written = icmp::write_error_v4_recorded(
            offending,
            options,
            error,
            route.source,
            route.mtu,
            &mut buf,
        );
        if let Ok(len) = written {
            if !self.limiter.allow_error_v4(out.now_ns, to, &error) {
                self.counters.icmp_rate_limited += 1;
            } else if self.send_own_v4(out, &buf[..len]).is_ok() {
                self.counters.icmp_errors += 1;
            } else {
                self.counters.icmp_unsent += 1;
            }
        }
        self.scratch = buf;
    }

    /// `icmp6_send(offending, error)`, its source chosen as for a packet
    /// received on `source_link`. That is the input link even for packet
    /// too big, for which `ip6_forward` sets `skb->dev` to the output
    /// device: the source comes from the route back to the sender
    /// (`ip6_dst_lookup_flow`), which leaves by the input link
    /// (kernel-checked: a router with fd00::1 towards the sender and only
    /// 2001:db8:1::1 towards the destination answers both from fd00::1).
    pub(crate) fn send_error_v6(
        &mut self,
        out: &Out<'_>,
        offending: &[u8],
        kind: PacketType,
        error: Icmp6Error,
        source_link: LinkIndex,
    ) {
        // `icmp6_send`: to a group or broadcast frame only packet too big.
        if kind != PacketType::Host && !matches!(error, Icmp6Error::PacketTooBig { .. }) {
            return;
        }
        let Some(route) = icmp::error_route_v6(out.fib, offending, source_link) else {
            self.counters.icmp_unsent += 1;
            return;
        };
        let mut buf = std::mem::take(&mut self.scratch);
        if let Ok(len) = icmp::write_error_v6(offending, error, route.source, &mut buf) {
            let sender = ipv6_at(offending, 8);
            let allowed = self
                .limiter
                .allow_error_v6(out.now_ns, sender, &error, route.prefix_len);
            if !allowed {
                self.counters.icmp_rate_limited += 1;
            } else if self.send_own_v6(out, &buf[..len], false).is_ok() {
                self.counters.icmp_errors += 1;
            } else {
                self.counters.icmp_unsent += 1;
            }
        }
        self.scratch = buf;
    }
}

/// Copies `packet` to the start of `slot`; returns its length.
pub(crate) fn copy(slot: &mut [u8], packet: &[u8]) -> usize {
    slot[..packet.len()].copy_from_slice(packet);
    packet.len()
}

/// The IPv6 address at byte `at` of `packet`.
pub(crate) fn ipv6_at(packet: &[u8], at: usize) -> Ipv6Addr {
    let mut a = [0u8; 16];
    a.copy_from_slice(&packet[at..at + 16]);
    Ipv6Addr::from(a)
}

/// A hash of the addresses of IPv6 `packet`, standing in for the keyed
/// hash of `ipv6_select_ident` (a field the oracle masks): never zero.
fn fragment_ident_v6(packet: &[u8]) -> u32 {
    let mixed = (u128::from(ipv6_at(packet, 8)) ^ u128::from(ipv6_at(packet, 24)).rotate_left(64))
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    ((mixed >> 96) as u32).max(1)
}
