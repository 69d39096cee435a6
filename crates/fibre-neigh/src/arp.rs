//! A received ARP frame (`arp_rcv` and `arp_process`, net/ipv4/arp.c) with
//! `arp_accept` 0, `arp_ignore` 0, `arp_filter` 0, `drop_gratuitous_arp`
//! 0, `route_localnet` 0 and no proxy ARP:
//!
//! * a request for one of our addresses (an RTN_LOCAL input route from the
//!   sender) is answered, and the sender's entry made or updated STALE
//!   (`neigh_event_ns`), unless the table is full, when there is no answer;
//!   a request from 0.0.0.0 (duplicate address detection) is answered to
//!   the sender's MAC, nothing learned;
//! * anything else only updates an entry that already exists: never one
//!   made by a reply or a gratuitous ARP, so an unsolicited reply cannot
//!   plant an entry, and no entry for our own addresses is ever made (the
//!   sender of a request claiming our address fails the input route's
//!   source check, so it is neither answered nor learned). A unicast reply
//!   makes it REACHABLE, a broadcast reply or a request STALE; the address
//!   changes only after `locktime` since the last update, or for a
//!   gratuitous ARP (`arp_is_garp`).

use std::net::{IpAddr, Ipv4Addr};

use fibre_fib::RouteType;
use fibre_net::arp::{Operation, Packet as ArpPacket, Repr as ArpRepr};
use fibre_net::ethernet::EtherType;

use crate::frames::arp_frame;
use crate::router::{received, Received, Router};
use crate::table::{Action, NeighTable, UpdateFlags};
use fibre_fib::NudState;

use fibre_net::ethernet::PacketType;

impl NeighTable {
    /// An ARP frame received on `link` (Ethernet header first). Malformed
    /// frames, frames for another host and frames on links that do not
    /// resolve are ignored, as `arp_rcv` drops them.
    pub fn receive_arp(
        &mut self,
        now: u64,
        link: u32,
        frame: &[u8],
        router: &dyn Router,
    ) -> Vec<Action> {
        let mut out = Vec::new();
        let Some(Received {
            payload,
            own,
            pkt_type,
        }) = received(router, link, frame, EtherType::Arp)
        else {
            return out;
        };
        let Ok(packet) = ArpPacket::new_checked(payload) else {
            return out;
        };
        // arp_rcv: `ar_hln` must be the device's, `ar_pln` 4; arp_process:
        // Ethernet hardware, IPv4 protocol (Repr::parse checks all four).
        let Ok(arp) = ArpRepr::parse(&packet) else {
            return out;
        };
        if !matches!(arp.operation, Operation::Request | Operation::Reply) {
            return out;
        }
        let sip = arp.source_protocol_addr;
        let tip = arp.target_protocol_addr;
        let sha = arp.source_hardware_addr.0;
        // Requests for multicast or loopback addresses are dropped.
        if tip.is_multicast() || tip.is_loopback() {
            return out;
        }
        let request = arp.operation == Operation::Request;
        if sip.is_unspecified() {
            // Duplicate address detection: answer, learn nothing.
            if request && router.ipv4_addr_type(link, tip) == RouteType::Local {
                let reply = arp_frame(Operation::Reply, sip, tip, Some(sha), own, Some(sha));
                out.push(Action::Send { link, frame: reply });
            }
            return out;
        }
        if request && router.arp_target_is_ours(link, tip, sip) {
            let key = (link, IpAddr::V4(sip));
            if self.lookup_or_create(now, link, IpAddr::V4(sip), true) {
                let flags = UpdateFlags {
                    override_: true,
                    ..UpdateFlags::default()
                };
                self.update(now, key, Some(sha), NudState::Stale, flags, &mut out);
                let reply = arp_frame(Operation::Reply, sip, tip, Some(sha), own, Some(sha));
                out.push(Action::Send { link, frame: reply });
            }
            return out;
        }
        // Update our ARP tables: existing entries only (arp_accept 0).
        let key = (link, IpAddr::V4(sip));
        let Some(updated) = self.entries.get(&key).map(|e| e.updated) else {
            return out;
        };
        let is_garp = is_garp(&arp, link, router);
        let state = if !request && pkt_type == PacketType::Host {
            NudState::Reachable
        } else {
            NudState::Stale
        };
        let override_ = now > updated + self.settings.locktime_ms || is_garp;
        let flags = UpdateFlags {
            override_,
            ..UpdateFlags::default()
        };
        self.update(now, key, Some(sha), state, flags, &mut out);
        out
    }
}

/// `arp_is_garp`: sender and target address the same (a reply also with
/// the same hardware addresses), for a unicast address.
fn is_garp(arp: &ArpRepr, link: u32, router: &dyn Router) -> bool {
    let sip: Ipv4Addr = arp.source_protocol_addr;
    let mut garp = sip == arp.target_protocol_addr;
    if garp && arp.operation == Operation::Reply {
        garp = arp.target_hardware_addr == arp.source_hardware_addr;
    }
    garp && router.ipv4_addr_type(link, sip) == RouteType::Unicast
}
