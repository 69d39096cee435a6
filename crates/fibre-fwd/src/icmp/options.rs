//! IPv4 options in the kernel's ICMP replies: `__ip_options_echo` builds a
//! reply's options from what the input path's `ip_options_compile`
//! recorded of the offending packet's ([`Compiled`]), `ip_options_build`
//! fills in the reply's own address and time (net/ipv4/ip_options.c).
//! Record route, timestamp, source routes and CIPSO are echoed. A source
//! route is echoed reversed, and the reply goes to the route's last hop
//! (`faddr`) rather than the sender; a source-routed packet reaches an
//! error only through a parameter problem about a later option, as the
//! router refuses it otherwise (`accept_source_route` 0).
//!
//! The offending packet is the one the router holds, after the input
//! path's `ip_options_compile` recorded the router's address in a record
//! route option: [`record_route_on_input`] does that.

use std::net::Ipv4Addr;

use super::kinds::Unsent;
use crate::options::{self, Compiled, IPOPT_END, IPOPT_TS_PRESPEC};

/// The options of a reply, at most 40 bytes, and where
/// `ip_options_build` writes the reply's source and the time.
#[derive(Debug, Clone, Copy)]
pub(super) struct ReplyOptions {
    bytes: [u8; 40],
    len: usize,
    /// Record route's and address-and-timestamp's slots for the source.
    source_slots: [Option<usize>; 2],
    time_slot: Option<usize>,
    /// The reversed source route's last slot, which takes the sender.
    sender_slot: Option<usize>,
    /// Where the reply goes instead of the sender: the first hop of the
    /// reversed source route (`dopt->faddr`).
    pub(super) first_hop: Option<Ipv4Addr>,
}

impl ReplyOptions {
    /// The options with `source` recorded (`ip_rt_get_source` on the
    /// reply's output route: its source), the time taken, and `sender`
    /// (the offending packet's source, `ipc.addr`) at the end of a
    /// reversed source route.
    pub(super) fn with_addresses(mut self, source: Ipv4Addr, sender: Ipv4Addr) -> ReplyOptions {
        for at in self.source_slots.into_iter().flatten() {
            self.bytes[at..at + 4].copy_from_slice(&source.octets());
        }
        if let Some(at) = self.sender_slot {
            self.bytes[at..at + 4].copy_from_slice(&sender.octets());
        }
        if let Some(at) = self.time_slot {
            self.bytes[at..at + 4].copy_from_slice(&options::current_timestamp().to_be_bytes());
        }
        self
    }

    /// The option bytes, padded with end-of-list to a multiple of four.
    pub(super) fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// `__ip_options_echo` for the options `recorded` of `held` (the IPv4
/// packet as the router holds it, from its header). `Err` where the
/// kernel refuses (`EINVAL`: a pointer with no room for a whole address
/// or time) or fibre does not model the options (a prespecified
/// timestamp that took the time).
pub(super) fn echo(held: &[u8], recorded: &Compiled) -> Result<ReplyOptions, Unsent> {
    let mut reply = ReplyOptions {
        bytes: [IPOPT_END; 40],
        len: 0,
        source_slots: [None; 2],
        time_slot: None,
        sender_slot: None,
        first_hop: None,
    };
    let copy = |reply: &mut ReplyOptions, at: usize| -> Result<usize, Unsent> {
        let len = usize::from(*held.get(at + 1).ok_or(Unsent::Truncated)?);
        let src = held.get(at..at + len).ok_or(Unsent::Truncated)?;
        let start = reply.len;
        reply
            .bytes
            .get_mut(start..start + len)
            .ok_or(Unsent::OptionsNotModelled)?
            .copy_from_slice(src);
        reply.len += len;
        Ok(start)
    };
    if recorded.rr != 0 {
        let start = copy(&mut reply, recorded.rr)?;
        let (len, pointer) = (
            usize::from(reply.bytes[start + 1]),
            usize::from(reply.bytes[start + 2]),
        );
        if recorded.rr_needaddr && pointer <= len {
            if pointer + 3 > len {
                return Err(Unsent::OptionsNotModelled);
            }
            reply.bytes[start + 2] = (pointer + 4) as u8;
            // ip_options_build: the address before the new pointer.
            reply.source_slots[0] = Some(start + pointer - 1);
        }
    }
    if recorded.ts != 0 {
        let start = copy(&mut reply, recorded.ts)?;
        let len = usize::from(reply.bytes[start + 1]);
        let mut pointer = usize::from(reply.bytes[start + 2]);
        if pointer <= len {
            if recorded.ts_needaddr {
                if pointer + 3 > len {
                    return Err(Unsent::OptionsNotModelled);
                }
                reply.source_slots[1] = Some(start + pointer - 1);
                pointer += 4;
            }
            if recorded.ts_needtime {
                if pointer + 3 > len {
                    return Err(Unsent::OptionsNotModelled);
                }
                // A prespecified timestamp names the next router; the
                // reply's route is not known here, so fibre does not
                // say whether that is the router itself.
                if reply.bytes[start + 3] & 0x0f == IPOPT_TS_PRESPEC {
                    return Err(Unsent::OptionsNotModelled);
                }
                reply.time_slot = Some(start + pointer - 1);
                pointer += 4;
            }
            reply.bytes[start + 2] = pointer as u8;
        }
    }
    if recorded.srr != 0 {
        echo_source_route(&mut reply, held, recorded.srr)?;
    }
    if recorded.cipso != 0 {
        copy(&mut reply, recorded.cipso)?;
    }
    reply.len = reply.len.next_multiple_of(4);
    if reply.len > reply.bytes.len() {
        return Err(Unsent::OptionsNotModelled);
    }
    Ok(reply)
}

/// `__ip_options_echo` for the source route at `at` of `held`: the hops
/// already visited (those before its pointer), in reverse order, the last
/// of them the reply's first hop; the sender itself dropped from the list
/// where it named itself first ("RFC1812 requires to fix illegal source
/// routes"), and the sender's slot at the end. Nothing is echoed where no
/// hop was visited.
fn echo_source_route(reply: &mut ReplyOptions, held: &[u8], at: usize) -> Result<(), Unsent> {
    let start = held.get(at..at + 3).ok_or(Unsent::Truncated)?;
    let (kind, len) = (start[0], usize::from(start[1]));
    let option = held.get(at..at + len).ok_or(Unsent::Truncated)?;
    let addr = |i: usize| Ipv4Addr::new(option[i], option[i + 1], option[i + 2], option[i + 3]);
    let mut soffset = usize::from(start[2]).min(len + 1);
    let mut doffset = 0;
    let base = reply.len;
    let mut first_hop = None;
    // soffset > 3 after the kernel's `soffset -= 4`.
    if soffset > 7 {
        soffset -= 4;
        first_hop = Some(addr(soffset - 1));
        soffset -= 4;
        doffset = 4;
        while soffset > 3 {
            let slot = base + doffset - 1;
            reply
                .bytes
                .get_mut(slot..slot + 4)
                .ok_or(Unsent::OptionsNotModelled)?
                .copy_from_slice(&option[soffset - 1..soffset + 3]);
            soffset -= 4;
            doffset += 4;
        }
        let sender = Ipv4Addr::new(held[12], held[13], held[14], held[15]);
        if addr(soffset + 3) == sender {
            doffset -= 4;
        }
    }
    if doffset > 3 {
        let echoed = doffset + 3;
        if base + echoed > reply.bytes.len() {
            return Err(Unsent::OptionsNotModelled);
        }
        // What the loop wrote past the kept hops goes (the sender's slot
        // is written last, `ip_options_build`).
        reply.bytes[base + echoed..].fill(IPOPT_END);
        reply.bytes[base] = kind;
        reply.bytes[base + 1] = echoed as u8;
        reply.bytes[base + 2] = 4;
        reply.sender_slot = Some(base + echoed - 4);
        reply.first_hop = first_hop;
        reply.len += echoed;
    }
    Ok(())
}

/// What the input path's `ip_options_compile` recorded of the options
/// of `held` (the packet as the router holds it, after that compile
/// changed it): compiled again on a copy, whose changes are dropped. For
/// a malformed option, what was recorded before it.
pub(super) fn recorded(held: &[u8], header_len: usize) -> Compiled {
    if header_len <= 20 || held.len() < header_len {
        return Compiled::default();
    }
    let mut copy = [0u8; 60];
    copy[..header_len].copy_from_slice(&held[..header_len]);
    match options::compile(&mut copy, header_len, &AsHeld) {
        Ok(recorded) => recorded,
        Err(malformed) => malformed.recorded,
    }
}

/// The router as [`recorded`] asks it: what it answers only feeds
/// changes that are dropped.
struct AsHeld;

impl options::Router for AsHeld {
    fn spec_dst(&self) -> Ipv4Addr {
        Ipv4Addr::UNSPECIFIED
    }
    fn is_unicast(&self, _: Ipv4Addr) -> bool {
        true
    }
    fn timestamp(&self) -> u32 {
        0
    }
}

/// What `ip_options_compile` does on input to the options of `packet`
/// (an IPv4 packet the router routed: forwarded or delivered locally):
/// records `spec_dst` (`fib_compute_spec_dst`: the packet's destination
/// if it is ours, else the source the route back to the sender picks) in
/// a record route with room and moves its pointer on, and likewise for
/// timestamps (with the time of day). The header checksum is left as it
/// is, as the kernel leaves it until `ip_forward_options` recomputes it
/// on output; an error quoting the packet before that quotes the stale
/// checksum. Returns whether the packet changed; malformed options are
/// left alone (the input path refuses them).
///
/// ```
/// use fibre_fwd::icmp::record_route_on_input;
/// // A header with a NOP and an empty record route of two slots.
/// let mut p = [0x48, 0, 0, 32, 0, 0, 0, 0, 1, 17, 0, 0, 10, 0, 1, 2, 10, 0, 2, 2,
///              1, 7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0];
/// assert!(record_route_on_input(&mut p, "10.0.1.1".parse().unwrap()));
/// assert_eq!(&p[20..32], &[1, 7, 11, 8, 10, 0, 1, 1, 0, 0, 0, 0]);
/// ```
pub fn record_route_on_input(packet: &mut [u8], spec_dst: Ipv4Addr) -> bool {
    let Some(&ver_ihl) = packet.first() else {
        return false;
    };
    let header_len = usize::from(ver_ihl & 0x0f) * 4;
    if ver_ihl >> 4 != 4 || header_len <= 20 || packet.len() < header_len {
        return false;
    }
    let mut copy = [0u8; 60];
    copy[..header_len].copy_from_slice(&packet[..header_len]);
    match options::compile(&mut copy, header_len, &SpecDst(spec_dst)) {
        Ok(recorded) if recorded.is_changed => {
            packet[..header_len].copy_from_slice(&copy[..header_len]);
            true
        }
        _ => false,
    }
}

/// A router whose `fib_compute_spec_dst` is the address it holds, with
/// no local address a prespecified timestamp could name.
struct SpecDst(Ipv4Addr);

impl options::Router for SpecDst {
    fn spec_dst(&self) -> Ipv4Addr {
        self.0
    }
    fn is_unicast(&self, _: Ipv4Addr) -> bool {
        true
    }
    fn timestamp(&self) -> u32 {
        options::current_timestamp()
    }
}
