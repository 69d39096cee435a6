//! IPv4 options in the kernel's ICMP replies: `__ip_options_echo` builds a
//! reply's options from the offending packet's, `ip_options_build` fills
//! in the reply's own address (net/ipv4/ip_options.c). Record route is
//! echoed; timestamps (which carry the time of day), source routes (which
//! change the reply's destination) and CIPSO are refused with
//! [`Unsent::OptionsNotModelled`].
//!
//! The offending packet is the one the router holds, after the input
//! path's `ip_options_compile` recorded the router's address in a record
//! route option: [`record_route_on_input`] does that.

use std::net::Ipv4Addr;

use super::kinds::Unsent;

const END: u8 = 0;
const NOOP: u8 = 1;
const RECORD_ROUTE: u8 = 7;
const TIMESTAMP: u8 = 68;
const LOOSE_SOURCE_ROUTE: u8 = 131;
const STRICT_SOURCE_ROUTE: u8 = 137;
const CIPSO: u8 = 134;

/// The options of a reply, at most 40 bytes, and where its record route
/// takes the reply's source address.
#[derive(Debug, Clone, Copy)]
pub(super) struct ReplyOptions {
    bytes: [u8; 40],
    len: usize,
    source_slot: Option<usize>,
}

impl ReplyOptions {
    /// The options with `source` recorded, as `ip_options_build` writes
    /// the reply's address (`ip_rt_get_source`) into the record route.
    pub(super) fn with_source(mut self, source: Ipv4Addr) -> ReplyOptions {
        if let Some(at) = self.source_slot {
            self.bytes[at..at + 4].copy_from_slice(&source.octets());
        }
        self
    }

    /// The option bytes, padded with end-of-list to a multiple of four.
    pub(super) fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// What the options (the bytes after the fixed header) hold for a reply.
struct Scan {
    /// Offset of the record route option.
    record_route: Option<usize>,
    /// An option replies echo that fibre does not model.
    unmodelled: bool,
}

/// Walks `options`; `None` for options `ip_options_compile` refuses (a
/// truncated option, a record route too short, pointing before its data
/// or given twice): the input path answers those with a parameter
/// problem instead.
fn scan(options: &[u8]) -> Option<Scan> {
    let mut found = Scan {
        record_route: None,
        unmodelled: false,
    };
    let mut at = 0;
    while at < options.len() {
        match options[at] {
            END => break,
            NOOP => at += 1,
            kind => {
                let len = usize::from(*options.get(at + 1)?);
                if len < 2 || at + len > options.len() {
                    return None;
                }
                match kind {
                    RECORD_ROUTE => {
                        let pointer = usize::from(*options.get(at + 2)?);
                        if len < 3 || pointer < 4 || found.record_route.is_some() {
                            return None;
                        }
                        found.record_route = Some(at);
                    }
                    TIMESTAMP | LOOSE_SOURCE_ROUTE | STRICT_SOURCE_ROUTE | CIPSO => {
                        found.unmodelled = true;
                    }
                    _ => {}
                }
                at += len;
            }
        }
    }
    Some(found)
}

/// `__ip_options_echo` for `options`: a record route is copied whole; if
/// it still has room (its pointer within it) the pointer moves on by one
/// address, whose slot the reply's source fills. Options not echoed
/// (no-ops, router alert, ...) are left out. `Err` where the kernel
/// refuses (`EINVAL`: no room for a whole address) or fibre does not model
/// the options.
pub(super) fn reply_options(options: &[u8]) -> Result<ReplyOptions, Unsent> {
    let mut reply = ReplyOptions {
        bytes: [0; 40],
        len: 0,
        source_slot: None,
    };
    let found = scan(options).ok_or(Unsent::OptionsNotModelled)?;
    if found.unmodelled {
        return Err(Unsent::OptionsNotModelled);
    }
    if let Some(at) = found.record_route {
        let len = usize::from(options[at + 1]);
        let pointer = usize::from(options[at + 2]);
        reply.bytes[..len].copy_from_slice(&options[at..at + len]);
        if pointer <= len {
            if pointer + 3 > len {
                return Err(Unsent::OptionsNotModelled);
            }
            reply.bytes[2] = (pointer + 4) as u8;
            // ip_options_build: the address before the new pointer.
            reply.source_slot = Some(pointer - 1);
        }
        reply.len = len.next_multiple_of(4);
    }
    Ok(reply)
}

/// What `ip_options_compile` does on input to a record route option with
/// room left in `packet` (an IPv4 packet the router routed: forwarded or
/// delivered locally): records `spec_dst` (`fib_compute_spec_dst`: the
/// packet's destination if it is ours, else the source the route back to
/// the sender picks) in the next slot and moves the pointer on. The header
/// checksum is left as it is, as the kernel leaves it until
/// `ip_forward_options` recomputes it on output; an error quoting the
/// packet before that quotes the stale checksum. Returns whether the
/// packet changed; malformed options are left alone (the input path
/// refuses them).
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
    let options = &mut packet[20..header_len];
    let Some(at) = scan(options).and_then(|found| found.record_route) else {
        return false;
    };
    let (len, pointer) = (usize::from(options[at + 1]), usize::from(options[at + 2]));
    if pointer > len || pointer + 3 > len {
        return false;
    }
    options[at + pointer - 1..at + pointer + 3].copy_from_slice(&spec_dst.octets());
    options[at + 2] = (pointer + 4) as u8;
    true
}
