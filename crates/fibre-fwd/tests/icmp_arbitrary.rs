//! The ICMP writers on arbitrary bytes: never a panic, and whatever they
//! write is a whole, valid message within the kernel's bounds (576 bytes
//! for IPv4 errors, 1280 for IPv6 ones).

use std::net::{Ipv4Addr, Ipv6Addr};

use fibre_base::Ipv6;
use fibre_fwd::icmp::{
    record_route_on_input, write_echo_reply_v4, write_echo_reply_v6, write_error_v4,
    write_error_v4_mtu, write_error_v6, Icmp4Error, Icmp6Error,
};
use fibre_net::checksum;
use proptest::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Messages the proptests wrote: they must reach the writing often.
static WRITTEN: AtomicUsize = AtomicUsize::new(0);

fn v4_valid(message: &[u8]) -> bool {
    let header_len = usize::from(message[0] & 0x0f) * 4;
    message[0] >> 4 == 4
        && usize::from(u16::from_be_bytes([message[2], message[3]])) == message.len()
        && checksum::sum(&message[..header_len]) == 0xffff
        && checksum::sum(&message[header_len..]) == 0xffff
}

fn v6_valid(message: &[u8]) -> bool {
    let src = Ipv6Addr::from(<[u8; 16]>::try_from(&message[8..24]).unwrap());
    let dst = Ipv6Addr::from(<[u8; 16]>::try_from(&message[24..40]).unwrap());
    let icmp = &message[40..];
    let pseudo = checksum::pseudo_header::<Ipv6>(src, dst, 58, icmp.len() as u32);
    message[0] >> 4 == 6
        && usize::from(u16::from_be_bytes([message[4], message[5]])) == icmp.len()
        && checksum::add(pseudo, checksum::sum(icmp)) == 0xffff
}

/// Bytes that, two times in three, start like an IP header of `version`
/// with its length field right (and, for IPv4, an IHL of 5 to 15), so
/// that most reach the writing.
fn packet(version: u8) -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::collection::vec(any::<u8>(), 0..1600),
        5u8..16,
        0u8..3,
    )
        .prop_map(move |(mut bytes, ihl, shape)| {
            let len = bytes.len();
            if shape > 0 && len >= 40 {
                if version == 4 {
                    bytes[0] = 0x40 | if shape == 1 { 5 } else { ihl };
                    bytes[2..4].copy_from_slice(&(len as u16).to_be_bytes());
                } else {
                    bytes[0] = 0x60 | (bytes[0] & 0x0f);
                    bytes[4..6].copy_from_slice(&((len - 40) as u16).to_be_bytes());
                }
            }
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn ipv4_writers_never_panic_and_write_valid_messages(
        bytes in packet(4),
        which in 0usize..9,
        mtu in 0usize..2000,
        out_len in prop::sample::select(vec![0usize, 27, 100, 576, 2048]),
    ) {
        let errors = [
            Icmp4Error::TimeExceeded, Icmp4Error::NetUnreachable, Icmp4Error::HostUnreachable,
            Icmp4Error::AdminProhibited, Icmp4Error::FragmentationNeeded { mtu: 1280 },
            Icmp4Error::PortUnreachable, Icmp4Error::ProtocolUnreachable,
            Icmp4Error::Redirect { gateway: Ipv4Addr::new(10, 0, 0, 9) },
            Icmp4Error::ParameterProblem { pointer: 9 },
        ];
        let mut out = vec![0u8; out_len];
        let source = Ipv4Addr::new(10, 0, 0, 1);
        if let Ok(n) = write_error_v4(&bytes, errors[which], source, &mut out) {
            prop_assert!(n <= 576 && v4_valid(&out[..n]));
            WRITTEN.fetch_add(1, Ordering::Relaxed);
        }
        if let Ok(n) = write_error_v4_mtu(&bytes, errors[which], source, mtu, &mut out) {
            prop_assert!(n <= mtu.min(576) && v4_valid(&out[..n]));
        }
        if let Ok(n) = write_echo_reply_v4(&bytes, &mut out) {
            prop_assert!(v4_valid(&out[..n]));
        }
        let mut held = bytes.clone();
        record_route_on_input(&mut held, source);
        prop_assert_eq!(held.len(), bytes.len());
    }

    #[test]
    fn ipv6_writers_never_panic_and_write_valid_messages(
        bytes in packet(6),
        which in 0usize..9,
        out_len in prop::sample::select(vec![0usize, 47, 100, 1280, 2048]),
    ) {
        let errors = [
            Icmp6Error::NoRoute, Icmp6Error::AdminProhibited, Icmp6Error::BeyondScope,
            Icmp6Error::AddressUnreachable, Icmp6Error::PortUnreachable, Icmp6Error::RejectRoute,
            Icmp6Error::PacketTooBig { mtu: 1280 }, Icmp6Error::TimeExceeded,
            Icmp6Error::ParameterProblem { code: 2, pointer: 42 },
        ];
        let mut out = vec![0u8; out_len];
        let source: Ipv6Addr = "2001:db8::1".parse().unwrap();
        if let Ok(n) = write_error_v6(&bytes, errors[which], source, &mut out) {
            prop_assert!(n <= 1280 && v6_valid(&out[..n]));
            WRITTEN.fetch_add(1, Ordering::Relaxed);
        }
        if let Ok(n) = write_echo_reply_v6(&bytes, &mut out) {
            prop_assert!(v6_valid(&out[..n]));
        }
    }
}

#[test]
fn the_arbitrary_inputs_reach_the_writers() {
    ipv4_writers_never_panic_and_write_valid_messages();
    ipv6_writers_never_panic_and_write_valid_messages();
    let written = WRITTEN.load(Ordering::Relaxed);
    assert!(written > 1000, "only {written} of 6000 inputs were written");
}
