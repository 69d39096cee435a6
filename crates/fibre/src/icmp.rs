//! `--icmp FILE`: ICMP errors the router received, from a capture, fed to
//! the route cache as the forwarding plane will feed them
//! ([`RouteCache::update_pmtu`]): IPv4 fragmentation-needed and IPv6
//! packet-too-big become path MTU exceptions, which `route get` and
//! `route show cache` then show as the kernel does.
//!
//! A report is used when the kernel would use it: its checksum is right,
//! it is addressed to one of the router's addresses, and the packet it
//! quotes left from one of them (the kernel's output route lookup for the
//! quoted flow fails otherwise). Anything else in the capture (echo
//! replies, other traffic) is skipped; skipped reports are counted in a
//! warning.

use std::fs::File;
use std::io::BufReader;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;

use anyhow::Result;
use fibre_fib::{lines, Family, Fib, RouteAnswer, RouteGetRequest, RouteType};
use fibre_net::ethernet::EtherType;
use fibre_net::ip::Protocol;
use fibre_net::pcap::{self, PcapError, PcapReader};
use fibre_net::{icmpv4, icmpv6, ipv4, ipv6};
use fibre_rcu::Domain;
use fibre_route::exceptions::{Exception, PmtuOutcome};
use fibre_route::{NexthopKey, RouteCache};

use crate::format::get::CacheInfo;
use crate::stdio;

/// The link types whose frames `--icmp` can take the IP packet out of
/// (tcpdump.org LINKTYPE_ values).
const ETHERNET: u32 = 1;
const RAW: u32 = 101;
const LINUX_SLL: u32 = 113;
const IPV4: u32 = 228;
const IPV6: u32 = 229;
const LINUX_SLL2: u32 = 276;
const LINK_TYPES: [u32; 6] = [ETHERNET, RAW, LINUX_SLL, IPV4, IPV6, LINUX_SLL2];

/// ICMPv4 destination unreachable / fragmentation needed.
const ICMP_DEST_UNREACH: u8 = 3;
const ICMP_FRAG_NEEDED: u8 = 4;
/// ICMPv6 packet too big.
const ICMPV6_PKT_TOOBIG: u8 = 2;

/// The router's route cache with the exceptions a capture taught it.
pub struct Learned {
    cache: RouteCache<Fib>,
}

/// One path MTU report found in a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PmtuReport {
    /// Where the report was sent (must be ours).
    to: IpAddr,
    /// The quoted packet's source (must be ours) and destination.
    quoted_src: IpAddr,
    quoted_dst: IpAddr,
    mtu: u32,
}

impl Learned {
    /// Reads `path` (classic pcap: Ethernet, raw IP or Linux cooked
    /// captures) and records every path MTU report in it, in order, as
    /// just received.
    ///
    /// # Errors
    /// The file cannot be read, is not a pcap capture, or of a link type
    /// whose frames cannot be read (which file, which packet, what is
    /// wrong).
    pub fn from_pcap(fib: &Fib, path: &Path) -> Result<Learned> {
        let name = path.display();
        let file = File::open(path).map_err(|err| {
            anyhow::anyhow!("--icmp {name}: cannot read: {}", lines::io_message(&err))
        })?;
        let mut reader = PcapReader::new(BufReader::new(file))
            .map_err(|err| anyhow::anyhow!("--icmp {name}: {}", pcap_message(&err)))?;
        let link_type = reader.link_type();
        if !LINK_TYPES.contains(&link_type) {
            let known = pcap::link_type_name(link_type)
                .map_or(String::new(), |known| format!(" (LINKTYPE_{known})"));
            anyhow::bail!(
                "--icmp {name}: link type {link_type}{known} is not supported; expected \
                 Ethernet (1), raw IP (101, 228, 229) or Linux cooked (113, 276) captures"
            );
        }
        let domain = Domain::new();
        let learned = Learned {
            cache: RouteCache::new(&domain, fib.clone(), 1),
        };
        let mut skipped = 0usize;
        let mut number = 0usize;
        while let Some(packet) = reader.next_packet().map_err(|err| {
            anyhow::anyhow!(
                "--icmp {name}: packet {}: {}",
                number + 1,
                pcap_message(&err)
            )
        })? {
            number += 1;
            let Some(ip) = ip_payload(link_type, &packet.data) else {
                continue;
            };
            match pmtu_report(ip) {
                Report::None => {}
                Report::Malformed => skipped += 1,
                Report::Pmtu(report) => {
                    if !learned.record(&domain, &report) {
                        skipped += 1;
                    }
                }
            }
        }
        if skipped > 0 {
            stdio::warn(format_args!(
                "fibre: --icmp {name}: {skipped} ICMP error(s) not used (bad checksum, truncated, \
                 not addressed to this router, quoting a packet it did not send, or no route)"
            ));
        }
        Ok(learned)
    }

    /// Applies one report as the kernel's `icmp_err` / `icmpv6_err` would;
    /// false if the kernel would not use it.
    fn record(&self, domain: &Domain, report: &PmtuReport) -> bool {
        let fib = self.cache.source();
        if !is_local(fib, report.to) || !is_local(fib, report.quoted_src) {
            return false;
        }
        let mut reader = domain.register();
        let outcome = {
            let guard = reader.read();
            self.cache.update_pmtu_from(
                &guard,
                report.quoted_dst,
                Some(report.quoted_src),
                report.mtu,
            )
        };
        reader.quiescent();
        // A report that changes nothing (not smaller, locked) is still one
        // the kernel accepts.
        outcome != PmtuOutcome::NoRoute
    }

    /// The exception `answer` carries, as `route get` shows it: the one
    /// for its destination on the nexthop it leaves by (an answer through
    /// another nexthop, by `mark` or `oif` say, has none, as in the kernel
    /// where exceptions hang off a nexthop).
    pub fn cache_info(&self, fib: &Fib, answer: &RouteAnswer) -> Option<CacheInfo> {
        let (key, e) = self.cache.exception_for_flow(answer.dst, answer.src)?;
        let dev = answer.dev.as_deref().and_then(|d| fib.link_by_name(d))?;
        let gateway = answer.gateway.map_or(0, |g| fibre_fib::addr_key(&g));
        (e.pmtu != 0 && key.dev == dev.index && key.gateway == gateway).then(|| self.info(&e))
    }

    fn info(&self, e: &Exception) -> CacheInfo {
        CacheInfo {
            expires_sec: e.expires_ms.saturating_sub(self.cache.now_ms()) / 1000,
            mtu: e.pmtu,
            mtu_locked: e.mtu_locked,
        }
    }

    /// Every live path MTU exception of `family`, by destination, with the
    /// nexthop it hangs off (`route show cache`).
    pub fn exceptions(&self, family: Family) -> Vec<(NexthopKey, IpAddr, CacheInfo)> {
        let mut all: Vec<_> = self
            .cache
            .exceptions()
            .into_iter()
            .filter(|(_, e)| e.pmtu != 0 && Family::of(&e.dst) == family)
            .map(|(k, e)| (k, e.dst, self.info(&e)))
            .collect();
        all.sort_by_key(|(_, dst, _)| *dst);
        all
    }
}

/// The exception an answer shows (`route get`, `lookup`): none without a
/// capture, nor for `fibmatch`, which answers with the FIB entry itself.
pub fn cache_info(
    learned: Option<&Learned>,
    fib: &Fib,
    answer: &RouteAnswer,
    fibmatch: bool,
) -> Option<CacheInfo> {
    learned
        .filter(|_| !fibmatch)
        .and_then(|learned| learned.cache_info(fib, answer))
}

/// A pcap error in words, an operating system's error named once.
fn pcap_message(err: &PcapError) -> String {
    match err {
        PcapError::Io(io) => format!("cannot read: {}", lines::io_message(io)),
        other => other.to_string(),
    }
}

/// True when `addr` is one of the router's addresses (its route is local).
fn is_local(fib: &Fib, addr: IpAddr) -> bool {
    fib.route_get(&RouteGetRequest::to(addr))
        .is_ok_and(|a| a.kind == RouteType::Local)
}

/// The IP packet inside a captured frame, by the capture's link type
/// (tcpdump.org LINKTYPE_ values): Ethernet (with any number of 802.1Q
/// or 802.1ad tags), raw IP, Linux cooked v1 and v2 (`-i any` captures).
fn ip_payload(link_type: u32, frame: &[u8]) -> Option<&[u8]> {
    let be16 = |at: usize| Some(u16::from_be_bytes([*frame.get(at)?, *frame.get(at + 1)?]));
    let (ethertype, start) = match link_type {
        ETHERNET => {
            let mut at = 12;
            while matches!(be16(at)?, 0x8100 | 0x88a8) {
                at += 4;
            }
            (be16(at)?, at + 2)
        }
        RAW | IPV4 | IPV6 => return Some(frame),
        LINUX_SLL => (be16(14)?, 16),
        LINUX_SLL2 => (be16(0)?, 20),
        _ => return None,
    };
    match EtherType::from(ethertype) {
        EtherType::Ipv4 | EtherType::Ipv6 => frame.get(start..),
        _ => None,
    }
}

/// What an IP packet is to the path MTU machinery.
enum Report {
    /// Not an ICMP error about path MTU.
    None,
    /// A path MTU report the kernel would drop (bad checksum, truncated).
    Malformed,
    /// A well-formed report.
    Pmtu(PmtuReport),
}

/// Reads an IPv4 fragmentation-needed or IPv6 packet-too-big message.
fn pmtu_report(ip: &[u8]) -> Report {
    match ip.first().map(|b| b >> 4) {
        Some(4) => pmtu_report_v4(ip),
        Some(6) => pmtu_report_v6(ip),
        _ => Report::None,
    }
}

fn pmtu_report_v4(ip: &[u8]) -> Report {
    // A fragmentation-needed message cut short (by the capture's snapshot
    // length, say) is a report we cannot read: counted, not ignored.
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    let frag_needed = ip.get(9) == Some(&1)
        && ip.get(ihl) == Some(&ICMP_DEST_UNREACH)
        && ip.get(ihl + 1) == Some(&ICMP_FRAG_NEEDED);
    let Ok(outer) = ipv4::Packet::new_checked(ip) else {
        return if frag_needed {
            Report::Malformed
        } else {
            Report::None
        };
    };
    if outer.protocol() != Protocol::Icmp || outer.is_fragment() {
        return Report::None;
    }
    let Ok(icmp) = icmpv4::Packet::new_checked(outer.payload()) else {
        return Report::Malformed;
    };
    if icmp.msg_type() != ICMP_DEST_UNREACH || icmp.code() != ICMP_FRAG_NEEDED {
        return Report::None;
    }
    if !icmp.verify_checksum() {
        return Report::Malformed;
    }
    // The quoted header and the 8 bytes after it, as the kernel's
    // icmp_unreach and icmp_socket_deliver require (IHL at least 5).
    let quoted = icmp.data();
    let ihl = usize::from(quoted.first().map_or(0, |b| b & 0x0f)) * 4;
    if quoted.len() < 20 || quoted[0] >> 4 != 4 || ihl < 20 || quoted.len() < ihl + 8 {
        return Report::Malformed;
    }
    let addr =
        |at: usize| Ipv4Addr::new(quoted[at], quoted[at + 1], quoted[at + 2], quoted[at + 3]);
    Report::Pmtu(PmtuReport {
        to: IpAddr::V4(outer.dst_addr()),
        quoted_src: IpAddr::V4(addr(12)),
        quoted_dst: IpAddr::V4(addr(16)),
        mtu: u32::from(icmp.next_hop_mtu()),
    })
}

fn pmtu_report_v6(ip: &[u8]) -> Report {
    let too_big = ip.get(6) == Some(&58) && ip.get(40) == Some(&ICMPV6_PKT_TOOBIG);
    let Ok(outer) = ipv6::Packet::new_checked(ip) else {
        return if too_big {
            Report::Malformed
        } else {
            Report::None
        };
    };
    // Extension headers before ICMPv6 are not followed (routers send none).
    if outer.next_header() != Protocol::Icmpv6 {
        return Report::None;
    }
    let Ok(icmp) = icmpv6::Packet::new_checked(outer.payload()) else {
        return Report::Malformed;
    };
    if icmp.msg_type() != ICMPV6_PKT_TOOBIG {
        return Report::None;
    }
    if !icmp.verify_checksum(outer.src_addr(), outer.dst_addr()) {
        return Report::Malformed;
    }
    let quoted = icmp.data();
    if quoted.len() < 40 || quoted[0] >> 4 != 6 {
        return Report::Malformed;
    }
    let addr = |at: usize| {
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&quoted[at..at + 16]);
        Ipv6Addr::from(bytes)
    };
    Report::Pmtu(PmtuReport {
        to: IpAddr::V6(outer.dst_addr()),
        quoted_src: IpAddr::V6(addr(8)),
        quoted_dst: IpAddr::V6(addr(24)),
        mtu: icmp.mtu(),
    })
}
