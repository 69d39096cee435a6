//! A received neighbour solicitation or advertisement (`ndisc_rcv`,
//! `ndisc_recv_ns`, `ndisc_recv_na`, net/ipv6/ndisc.c; RFC 4861 sections
//! 7.1, 7.2.3-7.2.5) with `accept_untracked_na` 0, `drop_unsolicited_na`
//! 0, no proxy NDP and no anycast addresses:
//!
//! * hop limit 255 and code 0, or the message is ignored; the ICMPv6
//!   checksum must hold; the frame must be for us (our MAC or a group);
//! * an NS for one of our addresses on the receiving link is answered by a
//!   solicited NA (router flag: forwarding on; override set only when the
//!   NS was multicast, and then with our target link-layer address); its
//!   source link-layer address makes or updates the sender's entry STALE
//!   (a unicast NS without one makes an entry that resolves itself first);
//!   an NS from `::` (duplicate address detection) is answered to
//!   all-nodes, unsolicited, with override;
//! * an NA updates only an existing, not FAILED entry (REACHABLE when
//!   solicited, else STALE; a different address only with the override
//!   flag, or demotes a REACHABLE entry to STALE without it); an NA for our
//!   own address, a multicast target, or a solicited NA sent to a group is
//!   ignored.

use std::net::{IpAddr, Ipv6Addr};

use fibre_base::Ipv6;
use fibre_fib::NudState;
use fibre_net::checksum;
use fibre_net::ethernet::EtherType;
use fibre_net::ip::Protocol;
use fibre_net::ipv6::Packet as Ipv6Packet;

use crate::frames::{
    nd_frame, parse_nd, NaFlags, NdMessage, NDISC_NEIGHBOUR_ADVERTISEMENT,
    NDISC_NEIGHBOUR_SOLICITATION,
};
use crate::router::{received, Received, Router};
use crate::table::{Action, NeighTable, UpdateFlags};

/// ff02::1, all nodes.
const ALL_NODES: Ipv6Addr = Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1);
/// ff02::2, all routers (a router joins it).
const ALL_ROUTERS: Ipv6Addr = Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 2);

/// What `ndisc_recv_ns` and `ndisc_recv_na` read of a received message
/// besides the message itself: when, where, and its addresses.
struct NdReceived<'r> {
    now: u64,
    link: u32,
    /// Our MAC on `link`.
    own: [u8; 6],
    saddr: Ipv6Addr,
    daddr: Ipv6Addr,
    router: &'r dyn Router,
}

/// `ndisc_send_na`: an advertisement of our `target` (its own source) to
/// `dst`, with our MAC as target link-layer address when `with_option`.
fn advertisement(
    rx: &NdReceived<'_>,
    dst_mac: [u8; 6],
    dst: Ipv6Addr,
    target: Ipv6Addr,
    flags: NaFlags,
    with_option: bool,
) -> Vec<u8> {
    let na = NdMessage {
        kind: NDISC_NEIGHBOUR_ADVERTISEMENT,
        flags,
        target,
        lladdr: with_option.then_some(rx.own),
    };
    nd_frame(dst_mac, rx.own, target, dst, &na)
}

impl NeighTable {
    /// An IPv6 frame carrying an NS or NA, received on `link`. Anything
    /// else, and anything the kernel would ignore, changes nothing.
    pub fn receive_ndisc(
        &mut self,
        now: u64,
        link: u32,
        frame: &[u8],
        router: &dyn Router,
    ) -> Vec<Action> {
        let mut out = Vec::new();
        let Some(Received { payload, own, .. }) = received(router, link, frame, EtherType::Ipv6)
        else {
            return out;
        };
        let Ok(ip) = Ipv6Packet::new_checked(payload) else {
            return out;
        };
        if ip.next_header() != Protocol::Icmpv6 || ip.src_addr().is_multicast() {
            return out;
        }
        let (saddr, daddr) = (ip.src_addr(), ip.dst_addr());
        // Delivered to us: our address on this link, or a group we joined.
        let for_us = if daddr.is_multicast() {
            daddr == ALL_NODES
                || daddr == ALL_ROUTERS
                || self.joined_solicited_node(link, daddr, router)
        } else {
            router.ipv6_is_ours_on(link, daddr)
        };
        if !for_us {
            return out;
        }
        let icmp = ip.payload();
        if icmp.len() < 4 {
            return out;
        }
        let pseudo = checksum::pseudo_header::<Ipv6>(saddr, daddr, 58, icmp.len() as u32);
        if checksum::add(pseudo, checksum::sum(icmp)) != 0xffff {
            return out;
        }
        let kind = icmp[0];
        if kind != NDISC_NEIGHBOUR_SOLICITATION && kind != NDISC_NEIGHBOUR_ADVERTISEMENT {
            return out;
        }
        // ndisc_rcv: hop limit 255, code 0.
        if ip.hop_limit() != 255 || icmp[1] != 0 {
            return out;
        }
        let Ok(msg) = parse_nd(icmp) else {
            return out;
        };
        if msg.target.is_multicast() {
            return out;
        }
        let rx = NdReceived {
            now,
            link,
            own,
            saddr,
            daddr,
            router,
        };
        if kind == NDISC_NEIGHBOUR_SOLICITATION {
            self.recv_ns(&rx, msg, &mut out);
        } else {
            self.recv_na(&rx, msg, &mut out);
        }
        out
    }

    /// Whether `group` is the solicited-node group of one of our
    /// addresses on `link` (joined by `addrconf_join_solict`).
    fn joined_solicited_node(&self, link: u32, group: Ipv6Addr, router: &dyn Router) -> bool {
        let _ = self;
        router.ipv6_joined_solicited_node(link, group)
    }

    fn recv_ns(&mut self, rx: &NdReceived<'_>, msg: NdMessage, out: &mut Vec<Action>) {
        let NdReceived {
            now,
            link,
            saddr,
            daddr,
            router,
            ..
        } = *rx;
        let (target, lladdr) = (msg.target, msg.lladdr);
        let dad = saddr.is_unspecified();
        if dad && !(daddr.segments()[..6] == [0xff02, 0, 0, 0, 0, 1] && daddr.octets()[12] == 0xff)
        {
            return;
        }
        if dad && lladdr.is_some() {
            return;
        }
        if !router.ipv6_is_ours_on(link, target) {
            return;
        }
        let is_router = router.ipv6_forwarding(link);
        if dad {
            let flags = NaFlags {
                router: is_router,
                solicited: false,
                override_: true,
            };
            let mac = fibre_fib::multicast_mac(&IpAddr::V6(ALL_NODES)).unwrap_or([0xff; 6]);
            let frame = advertisement(rx, mac, ALL_NODES, target, flags, true);
            out.push(Action::Send { link, frame });
            return;
        }
        let inc = daddr.is_multicast();
        let key = (link, IpAddr::V6(saddr));
        if !self.lookup_or_create(now, link, IpAddr::V6(saddr), !inc || lladdr.is_some()) {
            return;
        }
        let flags = UpdateFlags {
            override_: true,
            weak_override: true,
            ..UpdateFlags::default()
        };
        self.update(now, key, lladdr, NudState::Stale, flags, out);
        let na_flags = NaFlags {
            router: is_router,
            solicited: true,
            override_: inc,
        };
        // The NA goes to the sender through its entry: at once when the
        // entry has an address, else after resolving it.
        let entry = self.entries.get(&key).map(|e| (e.state, e.ha));
        match entry {
            Some((state, ha)) if state.is_valid() => {
                let frame = advertisement(rx, ha, saddr, target, na_flags, inc);
                out.push(Action::Send { link, frame });
                out.extend(self.used(now, link, IpAddr::V6(saddr), router));
            }
            _ => {
                let frame = advertisement(rx, [0; 6], saddr, target, na_flags, inc);
                let packet = frame[fibre_net::ethernet::HEADER_LEN..].to_vec();
                out.extend(self.resolve(now, link, IpAddr::V6(saddr), packet, router));
            }
        }
    }

    fn recv_na(&mut self, rx: &NdReceived<'_>, msg: NdMessage, out: &mut Vec<Action>) {
        let (target, flags) = (msg.target, msg.flags);
        if rx.daddr.is_multicast() && flags.solicited {
            return;
        }
        // Someone advertises our address: ignored (only logged).
        if rx.router.ipv6_is_ours_on(rx.link, target) {
            return;
        }
        let key = (rx.link, IpAddr::V6(target));
        let Some(state) = self.entries.get(&key).map(|e| e.state) else {
            // accept_untracked_na 0: no entry is made.
            return;
        };
        if state == NudState::Failed {
            return;
        }
        let new = if flags.solicited {
            NudState::Reachable
        } else {
            NudState::Stale
        };
        let update = UpdateFlags {
            override_: flags.override_,
            weak_override: true,
            override_isrouter: true,
            isrouter: flags.router,
            admin: false,
        };
        self.update(rx.now, key, msg.lladdr, new, update, out);
    }
}
