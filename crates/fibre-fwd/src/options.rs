//! IPv4 options on the receive path: `ip_options_compile` as
//! `ip_rcv_options` runs it for every packet with options, after the
//! route lookup (net/ipv4/ip_options.c). A malformed option earns a
//! parameter problem pointing at it; options the worker does not process
//! (record route, timestamp, source routes, CIPSO: each changes the packet
//! or its route) drop the packet, counted; the rest (no-operation, end of
//! list, router alert, and types the kernel ignores) are forwarded as they
//! are.

const IPOPT_END: u8 = 0;
const IPOPT_NOOP: u8 = 1;
const IPOPT_RR: u8 = 7;
const IPOPT_TIMESTAMP: u8 = 68;
const IPOPT_LSRR: u8 = 131;
const IPOPT_CIPSO: u8 = 134;
const IPOPT_SSRR: u8 = 137;
const IPOPT_RA: u8 = 148;

/// What the options of a received packet allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Options {
    /// Valid, nothing to process. `pad_from`: the header offset after an
    /// end-of-list option from which `ip_options_compile` rewrites every
    /// byte to end-of-list (some byte there was not), so that the header
    /// checksum must be made again.
    Pass { pad_from: Option<usize> },
    /// Malformed: an ICMP parameter problem pointing at header byte
    /// `pointer`, and the packet dropped.
    Malformed { pointer: u8 },
    /// An option the worker does not process.
    Unsupported,
}

/// `ip_options_compile` over the options of IPv4 `header` (its first
/// `header_len` bytes, more than 20).
pub(crate) fn check(header: &[u8], header_len: usize) -> Options {
    let options = &header[20..header_len];
    let at = |i: usize| (20 + i) as u8;
    let mut i = 0;
    while i < options.len() {
        match options[i] {
            IPOPT_END => {
                let rest = &options[i + 1..];
                let pad_from = rest.iter().any(|&b| b != IPOPT_END).then_some(20 + i + 1);
                return Options::Pass { pad_from };
            }
            IPOPT_NOOP => {
                i += 1;
                continue;
            }
            _ => {}
        }
        let left = options.len() - i;
        if left < 2 {
            return Options::Malformed { pointer: at(i) };
        }
        let len = usize::from(options[i + 1]);
        if len < 2 || len > left {
            return Options::Malformed { pointer: at(i) };
        }
        match options[i] {
            IPOPT_RR | IPOPT_TIMESTAMP | IPOPT_LSRR | IPOPT_SSRR | IPOPT_CIPSO => {
                return Options::Unsupported;
            }
            IPOPT_RA if len < 4 => return Options::Malformed { pointer: at(i + 1) },
            // Router alert with no socket for it, security, stream id and
            // unknown types: accepted as they are.
            _ => {}
        }
        i += len;
    }
    Options::Pass { pad_from: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(options: &[u8]) -> Vec<u8> {
        let mut h = vec![0u8; 20];
        h[0] = 0x40 | ((20 + options.len()) / 4) as u8;
        h.extend_from_slice(options);
        h
    }

    fn run(options: &[u8]) -> Options {
        let h = header(options);
        check(&h, h.len())
    }

    #[test]
    fn options_are_checked_as_ip_options_compile_checks_them() {
        assert_eq!(run(&[1, 1, 1, 0]), Options::Pass { pad_from: None });
        assert_eq!(run(&[148, 4, 0, 0]), Options::Pass { pad_from: None });
        assert_eq!(run(&[0, 1, 0, 0]), Options::Pass { pad_from: Some(21) });
        // An unknown type is skipped by its length.
        assert_eq!(run(&[0x9e, 4, 9, 9]), Options::Pass { pad_from: None });
        // A length beyond the options, below 2, or no length at all.
        assert_eq!(run(&[1, 0x9e, 9, 0]), Options::Malformed { pointer: 21 });
        assert_eq!(run(&[0x9e, 1, 0, 0]), Options::Malformed { pointer: 20 });
        assert_eq!(run(&[1, 1, 1, 0x9e]), Options::Malformed { pointer: 23 });
        // Router alert shorter than 4: the pointer names its length.
        assert_eq!(run(&[148, 2, 1, 0]), Options::Malformed { pointer: 21 });
        assert_eq!(run(&[7, 7, 4, 0, 0, 0, 0, 0]), Options::Unsupported);
        assert_eq!(run(&[68, 4, 5, 0]), Options::Unsupported);
    }
}
