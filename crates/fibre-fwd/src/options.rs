//! IPv4 options on the receive path: `__ip_options_compile` as
//! `ip_rcv_options` runs it (net/ipv4/ip_options.c, net/ipv4/ip_input.c)
//! for every packet with options once its input route is known, that
//! route an error one (`ip_error`) or not. It checks each option, records
//! where the ones that matter later are ([`Compiled`], the kernel's
//! `struct ip_options`), and changes the header as the kernel does: the
//! router's address in a record route or an address-and-timestamp
//! option, the time in a timestamp option, a timestamp's overflow count,
//! end-of-list after the first end-of-list. A malformed option earns a
//! parameter problem pointing at it ([`Malformed`]).
//!
//! The forwarding path then does `ip_forward_options`' part
//! ([`forward_options`]); the ICMP writers echo what this recorded
//! (`__ip_options_echo`, in `icmp/options.rs`).

use std::net::Ipv4Addr;

pub(crate) const IPOPT_END: u8 = 0;
pub(crate) const IPOPT_NOOP: u8 = 1;
pub(crate) const IPOPT_RR: u8 = 7;
pub(crate) const IPOPT_TIMESTAMP: u8 = 68;
pub(crate) const IPOPT_LSRR: u8 = 131;
pub(crate) const IPOPT_CIPSO: u8 = 134;
pub(crate) const IPOPT_SSRR: u8 = 137;
pub(crate) const IPOPT_RA: u8 = 148;
/// Timestamp flags (the low nibble of the option's fourth byte).
pub(crate) const IPOPT_TS_TSONLY: u8 = 0;
pub(crate) const IPOPT_TS_TSANDADDR: u8 = 1;
pub(crate) const IPOPT_TS_PRESPEC: u8 = 3;

/// What `__ip_options_compile` recorded of a header's options (`struct
/// ip_options`): offsets from the header's start, 0 where there is no
/// such option.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Compiled {
    /// Record route.
    pub rr: usize,
    /// The record route had room: an address was recorded and the
    /// pointer moved on.
    pub rr_needaddr: bool,
    /// Timestamp.
    pub ts: usize,
    /// The timestamp takes addresses, and had room for one.
    pub ts_needaddr: bool,
    /// The timestamp took the time.
    pub ts_needtime: bool,
    /// Loose or strict source route.
    pub srr: usize,
    /// Router alert with value 0.
    pub router_alert: usize,
    /// CIPSO.
    pub cipso: usize,
    /// The header changed (`is_changed`): its checksum is stale until the
    /// forwarding path makes it again (`ip_forward_options`).
    pub is_changed: bool,
}

/// A malformed option: `__ip_options_compile`'s `pp_ptr`, the header
/// offset an ICMP parameter problem names, and what was recorded before
/// it (what `icmp_send` echoes from `IPCB(skb)->opt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Malformed {
    pub pointer: u8,
    pub recorded: Compiled,
}

/// What compiling the options asks of the router.
pub(crate) trait Router {
    /// `fib_compute_spec_dst`: the address the router records for this
    /// packet (its destination if it is one of ours, else the source the
    /// route back to the sender picks).
    fn spec_dst(&self) -> Ipv4Addr;
    /// `inet_addr_type(addr) == RTN_UNICAST`: `addr` is not one of the
    /// router's local or broadcast addresses.
    fn is_unicast(&self, addr: Ipv4Addr) -> bool;
    /// `inet_current_timestamp`: milliseconds since midnight UTC.
    fn timestamp(&self) -> u32;
}

/// `__ip_options_compile` on the options of IPv4 `header` (its first
/// `header_len` bytes, more than 20), received with an input route
/// (`skb` and `rt` set): checks, records and changes them in place.
pub(crate) fn compile(
    header: &mut [u8],
    header_len: usize,
    router: &dyn Router,
) -> Result<Compiled, Malformed> {
    let mut opt = Compiled::default();
    // `spec_dst_fill`: looked up once, when first needed.
    let mut spec_dst: Option<Ipv4Addr> = None;
    let mut spec = |router: &dyn Router| *spec_dst.get_or_insert_with(|| router.spec_dst());
    let mut at = 20;
    let error = |pointer: usize, opt: Compiled| Malformed {
        pointer: pointer as u8,
        recorded: opt,
    };
    while at < header_len {
        match header[at] {
            IPOPT_END => {
                for b in &mut header[at + 1..header_len] {
                    if *b != IPOPT_END {
                        *b = IPOPT_END;
                        opt.is_changed = true;
                    }
                }
                return Ok(opt);
            }
            IPOPT_NOOP => {
                at += 1;
                continue;
            }
            _ => {}
        }
        let left = header_len - at;
        if left < 2 {
            return Err(error(at, opt));
        }
        let optlen = usize::from(header[at + 1]);
        if optlen < 2 || optlen > left {
            return Err(error(at, opt));
        }
        let pointer = usize::from(header.get(at + 2).copied().unwrap_or(0));
        match header[at] {
            IPOPT_SSRR | IPOPT_LSRR => {
                if optlen < 3 {
                    return Err(error(at + 1, opt));
                }
                if pointer < 4 {
                    return Err(error(at + 2, opt));
                }
                // RFC 1812 section 5.2.4.1: one source route.
                if opt.srr != 0 {
                    return Err(error(at, opt));
                }
                opt.srr = at;
            }
            IPOPT_RR => {
                if opt.rr != 0 {
                    return Err(error(at, opt));
                }
                if optlen < 3 {
                    return Err(error(at + 1, opt));
                }
                if pointer < 4 {
                    return Err(error(at + 2, opt));
                }
                if pointer <= optlen {
                    if pointer + 3 > optlen {
                        return Err(error(at + 2, opt));
                    }
                    let addr = spec(router);
                    header[at + pointer - 1..at + pointer + 3].copy_from_slice(&addr.octets());
                    opt.is_changed = true;
                    header[at + 2] = (pointer + 4) as u8;
                    opt.rr_needaddr = true;
                }
                opt.rr = at;
            }
            IPOPT_TIMESTAMP => {
                if opt.ts != 0 {
                    return Err(error(at, opt));
                }
                if optlen < 4 {
                    return Err(error(at + 1, opt));
                }
                if pointer < 5 {
                    return Err(error(at + 2, opt));
                }
                let flags = header[at + 3];
                if pointer <= optlen {
                    if pointer + 3 > optlen {
                        return Err(error(at + 2, opt));
                    }
                    let mut time_at = None;
                    match flags & 0x0f {
                        IPOPT_TS_TSONLY => {
                            time_at = Some(at + pointer - 1);
                            opt.ts_needtime = true;
                            header[at + 2] = (pointer + 4) as u8;
                        }
                        IPOPT_TS_TSANDADDR => {
                            if pointer + 7 > optlen {
                                return Err(error(at + 2, opt));
                            }
                            let addr = spec(router);
                            header[at + pointer - 1..at + pointer + 3]
                                .copy_from_slice(&addr.octets());
                            time_at = Some(at + pointer + 3);
                            opt.ts_needaddr = true;
                            opt.ts_needtime = true;
                            header[at + 2] = (pointer + 8) as u8;
                        }
                        IPOPT_TS_PRESPEC => {
                            if pointer + 7 > optlen {
                                return Err(error(at + 2, opt));
                            }
                            let named = &header[at + pointer - 1..at + pointer + 3];
                            let named = Ipv4Addr::new(named[0], named[1], named[2], named[3]);
                            // Not ours: neither time nor pointer change.
                            if !router.is_unicast(named) {
                                time_at = Some(at + pointer + 3);
                                opt.ts_needtime = true;
                                header[at + 2] = (pointer + 8) as u8;
                            }
                        }
                        // Other flags: accepted as they are on input.
                        _ => {}
                    }
                    if let Some(t) = time_at {
                        header[t..t + 4].copy_from_slice(&router.timestamp().to_be_bytes());
                        opt.is_changed = true;
                    }
                } else if flags & 0x0f != IPOPT_TS_PRESPEC {
                    let overflow = flags >> 4;
                    if overflow == 15 {
                        return Err(error(at + 3, opt));
                    }
                    header[at + 3] = (flags & 0x0f) | ((overflow + 1) << 4);
                    opt.is_changed = true;
                }
                opt.ts = at;
            }
            IPOPT_RA => {
                if optlen < 4 {
                    return Err(error(at + 1, opt));
                }
                if header[at + 2] == 0 && header[at + 3] == 0 {
                    opt.router_alert = at;
                }
            }
            IPOPT_CIPSO => {
                if opt.cipso != 0 {
                    return Err(error(at, opt));
                }
                opt.cipso = at;
                if let Some(offset) = cipso_invalid(&header[at..at + optlen]) {
                    return Err(error(at + offset, opt));
                }
            }
            // Security, stream id and unknown types: accepted on input.
            _ => {}
        }
        at += optlen;
    }
    Ok(opt)
}

/// `cipso_v4_validate` of a kernel without CIPSO domains of
/// interpretation configured (NetLabel's default: `cipso_v4_doi_search`
/// finds none): shorter than 8 bytes is refused at its length, anything
/// longer at its DOI. The offset within the option the error names.
fn cipso_invalid(option: &[u8]) -> Option<usize> {
    if option.len() < 8 {
        Some(1)
    } else {
        Some(2)
    }
}

/// `inet_current_timestamp`: milliseconds since midnight UTC, the time a
/// timestamp option takes (RFC 791). Reads the wall clock; allocates
/// nothing.
pub(crate) fn current_timestamp() -> u32 {
    const SECONDS_PER_DAY: u64 = 86_400;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    ((now.as_secs() % SECONDS_PER_DAY) * 1000 + u64::from(now.subsec_millis())) as u32
}

/// `ip_forward_options` for a packet leaving by a route whose source for
/// it is `source()` (`ip_rt_get_source`, asked only if needed): that
/// address replaces the one recorded on input in a record route and in an
/// address-and-timestamp option. Returns whether the header changed since
/// it arrived, and so needs its checksum made again (`is_changed`, then
/// `ip_send_check`).
pub(crate) fn forward_options(
    header: &mut [u8],
    opt: &Compiled,
    source: impl FnOnce() -> Ipv4Addr,
) -> bool {
    let mut changed = opt.is_changed;
    if !(opt.rr_needaddr || opt.ts_needaddr) {
        return changed;
    }
    let source = source();
    if opt.rr_needaddr {
        let slot = opt.rr + usize::from(header[opt.rr + 2]) - 5;
        header[slot..slot + 4].copy_from_slice(&source.octets());
        changed = true;
    }
    if opt.ts_needaddr {
        let slot = opt.ts + usize::from(header[opt.ts + 2]) - 9;
        header[slot..slot + 4].copy_from_slice(&source.octets());
        changed = true;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Here;

    const SPEC_DST: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
    const OURS: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 1);

    impl Router for Here {
        fn spec_dst(&self) -> Ipv4Addr {
            SPEC_DST
        }
        fn is_unicast(&self, addr: Ipv4Addr) -> bool {
            addr != OURS
        }
        fn timestamp(&self) -> u32 {
            0x0102_0304
        }
    }

    fn header(options: &[u8]) -> Vec<u8> {
        let mut h = vec![0u8; 20];
        h[0] = 0x40 | ((20 + options.len()) / 4) as u8;
        h.extend_from_slice(options);
        h
    }

    fn run(options: &[u8]) -> (Result<Compiled, Malformed>, Vec<u8>) {
        let mut h = header(options);
        let len = h.len();
        let result = compile(&mut h, len, &Here);
        (result, h[20..].to_vec())
    }

    fn pointer(options: &[u8]) -> Option<u8> {
        run(options).0.err().map(|m| m.pointer)
    }

    #[test]
    fn malformed_options_name_the_byte_ip_options_compile_names() {
        assert_eq!(pointer(&[1, 1, 1, 0]), None);
        assert_eq!(pointer(&[148, 4, 0, 0]), None);
        // An unknown type is skipped by its length.
        assert_eq!(pointer(&[0x9e, 4, 9, 9]), None);
        // A length beyond the options, below 2, or no length at all.
        assert_eq!(pointer(&[1, 0x9e, 9, 0]), Some(21));
        assert_eq!(pointer(&[0x9e, 1, 0, 0]), Some(20));
        assert_eq!(pointer(&[1, 1, 1, 0x9e]), Some(23));
        // The oracle's record route of 7 bytes in 4 bytes of options.
        assert_eq!(pointer(&[7, 7, 4, 0]), Some(20));
        // Router alert shorter than 4: the pointer names its length.
        assert_eq!(pointer(&[148, 2, 1, 0]), Some(21));
        // Record route: too short, pointer below 4, no room for a whole
        // address, twice.
        assert_eq!(pointer(&[7, 2, 1, 0]), Some(21));
        assert_eq!(pointer(&[7, 4, 3, 0]), Some(22));
        assert_eq!(pointer(&[7, 6, 4, 0, 0, 0, 0, 0]), Some(22));
        assert_eq!(pointer(&[7, 3, 4, 7, 3, 4, 0, 0]), Some(23));
        // Timestamp: pointer below 5, overflow count full.
        assert_eq!(pointer(&[68, 4, 4, 0]), Some(22));
        assert_eq!(pointer(&[68, 4, 5, 0xf0]), Some(23));
        // Source routes: pointer below 4; two of them.
        assert_eq!(pointer(&[131, 3, 3, 0]), Some(22));
        assert_eq!(pointer(&[131, 3, 4, 137, 3, 4, 0, 0]), Some(23));
        // CIPSO, no domain of interpretation configured.
        assert_eq!(pointer(&[134, 4, 0, 0]), Some(21));
        assert_eq!(pointer(&[134, 8, 0, 0, 0, 1, 0, 0]), Some(22));
    }

    #[test]
    fn record_route_takes_the_routers_address_on_input() {
        let (result, options) = run(&[1, 7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0]);
        let opt = result.unwrap();
        assert_eq!((opt.rr, opt.rr_needaddr, opt.is_changed), (21, true, true));
        assert_eq!(options, [1, 7, 11, 8, 10, 0, 1, 1, 0, 0, 0, 0]);
        // Full: left as it is.
        let (result, options) = run(&[7, 7, 8, 1, 2, 3, 4, 0]);
        assert!(!result.unwrap().rr_needaddr);
        assert_eq!(options, [7, 7, 8, 1, 2, 3, 4, 0]);
    }

    #[test]
    fn end_of_list_pads_the_rest() {
        let (result, options) = run(&[0, 1, 0, 0]);
        assert!(result.unwrap().is_changed);
        assert_eq!(options, [0, 0, 0, 0]);
        let (result, _) = run(&[1, 0, 0, 0]);
        assert!(!result.unwrap().is_changed);
    }

    #[test]
    fn timestamps_take_the_time_and_count_overflows() {
        let (result, options) = run(&[68, 8, 5, 0, 0, 0, 0, 0]);
        assert!(result.unwrap().ts_needtime);
        assert_eq!(options, [68, 8, 9, 0, 1, 2, 3, 4]);
        let (result, options) = run(&[68, 12, 5, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
        let opt = result.unwrap();
        assert!(opt.ts_needaddr && opt.ts_needtime);
        assert_eq!(options, [68, 12, 13, 1, 10, 0, 1, 1, 1, 2, 3, 4]);
        // Full: the overflow count goes up.
        let (_, options) = run(&[68, 4, 5, 0x10]);
        assert_eq!(options, [68, 4, 5, 0x20]);
        // Prespecified: only our own address takes the time.
        let (_, options) = run(&[68, 12, 5, 3, 10, 0, 2, 1, 0, 0, 0, 0]);
        assert_eq!(options, [68, 12, 13, 3, 10, 0, 2, 1, 1, 2, 3, 4]);
        let (_, options) = run(&[68, 12, 5, 3, 10, 0, 9, 1, 0, 0, 0, 0]);
        assert_eq!(options, [68, 12, 5, 3, 10, 0, 9, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn forwarding_replaces_the_recorded_address_with_the_outgoing_one() {
        let mut h = header(&[7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        let len = h.len();
        let opt = compile(&mut h, len, &Here).unwrap();
        assert!(forward_options(&mut h, &opt, || Ipv4Addr::new(10, 0, 3, 1)));
        assert_eq!(&h[20..], &[7, 11, 8, 10, 0, 3, 1, 0, 0, 0, 0, 0]);
    }
}
