//! The errors a router sends, as ICMP type and code (RFC 792, RFC 1812,
//! RFC 4443), and why a message is not sent.

use std::net::Ipv4Addr;

use fibre_fib::Errno;

/// An ICMPv4 error the forwarding path sends (`icmp_send` callers:
/// `ip_forward`, `ip_error`, `ip_rt_send_redirect`, the transport
/// protocols' unreachables, `ip_options_compile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Icmp4Error {
    /// Time exceeded, TTL expired in transit (type 11 code 0,
    /// `ip_forward`'s `too_many_hops`).
    TimeExceeded,
    /// Destination unreachable, network (3/0): no route (`ip_error`,
    /// `ENETUNREACH`).
    NetUnreachable,
    /// Destination unreachable, host (3/1): an `unreachable` route
    /// (`ip_error`, `EHOSTUNREACH`).
    HostUnreachable,
    /// Destination unreachable, host (3/1) for a packet whose next hop's
    /// neighbour resolution failed (`arp_error_report` ->
    /// `ipv4_link_failure` -> `ipv4_send_dest_unreach`): the same message
    /// as [`Icmp4Error::HostUnreachable`], sent by `__icmp_send` directly,
    /// so only its limits apply, not `ip_error`'s.
    LinkFailure,
    /// Destination unreachable, communication administratively prohibited
    /// (3/13, `ICMP_PKT_FILTERED`): a `prohibit` route (`ip_error`,
    /// `EACCES`).
    AdminProhibited,
    /// Destination unreachable, fragmentation needed and DF set (3/4),
    /// with the next hop's MTU (RFC 1191).
    FragmentationNeeded {
        /// The next hop's MTU.
        mtu: u16,
    },
    /// Destination unreachable, protocol (3/2).
    ProtocolUnreachable,
    /// Destination unreachable, port (3/3).
    PortUnreachable,
    /// Redirect for the host (5/1), as `ip_rt_send_redirect` sends it.
    Redirect {
        /// The better first hop: the route's next hop for the destination.
        gateway: Ipv4Addr,
    },
    /// Parameter problem (12/0), with the offset of the offending octet.
    ParameterProblem {
        /// Offset of the octet in error, from the start of the IPv4 header.
        pointer: u8,
    },
}

impl Icmp4Error {
    /// ICMP type and code, and the four bytes after the checksum
    /// (`icmphdr.un`: the gateway of a redirect, the next-hop MTU of
    /// fragmentation needed, the pointer of a parameter problem).
    pub fn wire(&self) -> (u8, u8, [u8; 4]) {
        match *self {
            Icmp4Error::TimeExceeded => (11, 0, [0; 4]),
            Icmp4Error::NetUnreachable => (3, 0, [0; 4]),
            Icmp4Error::HostUnreachable | Icmp4Error::LinkFailure => (3, 1, [0; 4]),
            Icmp4Error::ProtocolUnreachable => (3, 2, [0; 4]),
            Icmp4Error::PortUnreachable => (3, 3, [0; 4]),
            Icmp4Error::FragmentationNeeded { mtu } => {
                let m = mtu.to_be_bytes();
                (3, 4, [0, 0, m[0], m[1]])
            }
            Icmp4Error::AdminProhibited => (3, 13, [0; 4]),
            Icmp4Error::Redirect { gateway } => (5, 1, gateway.octets()),
            Icmp4Error::ParameterProblem { pointer } => (12, 0, [pointer, 0, 0, 0]),
        }
    }

    /// The ICMP type.
    pub fn icmp_type(&self) -> u8 {
        self.wire().0
    }

    /// The error `ip_error` sends for a packet whose input route lookup
    /// failed with `errno` (the FIB's answer for the route type:
    /// unreachable `EHOSTUNREACH`, prohibit `EACCES`, no route
    /// `ENETUNREACH`); `None` where it sends nothing (blackhole `EINVAL`,
    /// and every other error).
    pub fn for_route_error(errno: Errno) -> Option<Icmp4Error> {
        match errno {
            Errno::HostUnreach => Some(Icmp4Error::HostUnreachable),
            Errno::NetUnreach => Some(Icmp4Error::NetUnreachable),
            Errno::Acces => Some(Icmp4Error::AdminProhibited),
            _ => None,
        }
    }

    /// True for the errors `ip_error` sends, which pass its own
    /// per-source token bucket before `icmp_send`'s
    /// ([`RateLimiter::allow_error_v4`](super::RateLimiter::allow_error_v4)).
    pub fn is_route_error(&self) -> bool {
        matches!(
            self,
            Icmp4Error::NetUnreachable | Icmp4Error::HostUnreachable | Icmp4Error::AdminProhibited
        )
    }

    /// The ICMP code.
    pub fn code(&self) -> u8 {
        self.wire().1
    }
}

/// An ICMPv6 error the forwarding path sends (`icmpv6_send` callers:
/// `ip6_forward`, `ip6_pkt_drop`, the transport protocols, the extension
/// header parsers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Icmp6Error {
    /// Destination unreachable, no route to destination (1/0).
    NoRoute,
    /// Destination unreachable, administratively prohibited (1/1): a
    /// `prohibit` route (`ip6_pkt_prohibit`).
    AdminProhibited,
    /// Destination unreachable, beyond the scope of the source address
    /// (1/2): `ip6_forward` on a link-local source.
    BeyondScope,
    /// Destination unreachable, address unreachable (1/3): neighbour
    /// resolution failed, `ip6_link_failure`.
    AddressUnreachable,
    /// Destination unreachable, port unreachable (1/4).
    PortUnreachable,
    /// Destination unreachable, reject route to destination (1/6). Linux
    /// routes never send it (an `unreachable` route answers
    /// [`Icmp6Error::NoRoute`], see [`Icmp6Error::for_route_error`]); it is
    /// here for the callers that do.
    RejectRoute,
    /// Packet too big (2/0), with the next hop's MTU.
    PacketTooBig {
        /// The next hop's MTU.
        mtu: u32,
    },
    /// Time exceeded, hop limit exceeded in transit (3/0).
    TimeExceeded,
    /// Parameter problem (type 4) with its code and pointer.
    ParameterProblem {
        /// 0 erroneous header field, 1 unrecognised next header, 2
        /// unrecognised option, ...
        code: u8,
        /// Offset of the octet in error from the start of the packet.
        pointer: u32,
    },
}

impl Icmp6Error {
    /// ICMPv6 type and code, and the four bytes after the checksum (the
    /// MTU of packet too big, the pointer of a parameter problem).
    pub fn wire(&self) -> (u8, u8, [u8; 4]) {
        match *self {
            Icmp6Error::NoRoute => (1, 0, [0; 4]),
            Icmp6Error::AdminProhibited => (1, 1, [0; 4]),
            Icmp6Error::BeyondScope => (1, 2, [0; 4]),
            Icmp6Error::AddressUnreachable => (1, 3, [0; 4]),
            Icmp6Error::PortUnreachable => (1, 4, [0; 4]),
            Icmp6Error::RejectRoute => (1, 6, [0; 4]),
            Icmp6Error::PacketTooBig { mtu } => (2, 0, mtu.to_be_bytes()),
            Icmp6Error::TimeExceeded => (3, 0, [0; 4]),
            Icmp6Error::ParameterProblem { code, pointer } => (4, code, pointer.to_be_bytes()),
        }
    }

    /// The ICMPv6 type.
    pub fn icmp_type(&self) -> u8 {
        self.wire().0
    }

    /// The error `ip6_pkt_drop` sends for a packet whose route lookup
    /// failed with `errno`: `ip6_pkt_discard` (no route, `unreachable`
    /// routes) answers no route, `ip6_pkt_prohibit` administratively
    /// prohibited; a blackhole (`EINVAL`, `dst_discard`) nothing.
    pub fn for_route_error(errno: Errno) -> Option<Icmp6Error> {
        match errno {
            Errno::HostUnreach | Errno::NetUnreach => Some(Icmp6Error::NoRoute),
            Errno::Acces => Some(Icmp6Error::AdminProhibited),
            _ => None,
        }
    }

    /// The ICMPv6 code.
    pub fn code(&self) -> u8 {
        self.wire().1
    }
}

/// Why no message was written: the kernel sends nothing in these cases
/// (each names the check it follows), or the caller's buffer is short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unsent {
    /// The offending bytes do not hold a whole IP header of the family
    /// (`icmp_send`'s and `icmp6_send`'s first check).
    Truncated,
    /// The offending packet is an ICMP error itself, or (IPv4) its ICMP
    /// type cannot be read or is unknown (`icmp_send`: "If we send an ICMP
    /// error to an ICMP error a mess would result"; IPv6 `is_ineligible`).
    IcmpError,
    /// IPv4: a fragment other than the first (`icmp_send`: "Only reply to
    /// fragment 0").
    NotFirstFragment,
    /// The offending packet went to a multicast or broadcast address
    /// (`icmp_send`'s `RTCF_BROADCAST | RTCF_MULTICAST`; `icmp6_send`'s
    /// destination check, which lets packet too big and some parameter
    /// problems through).
    MulticastDestination,
    /// The offending packet's source does not name one node: unspecified,
    /// multicast, limited broadcast or loopback (IPv4: such packets are
    /// martians `ip_route_input_slow` drops before any error; IPv6:
    /// `icmp6_send`'s source check, RFC 4443 section 2.4 (e)).
    NonUnicastSource,
    /// IPv4: the reply would quote no more than a header
    /// (`icmp_send`: `room <= sizeof(struct iphdr)`), for a reply route
    /// MTU this small.
    NoRoom,
    /// IPv4: the offending packet carries options the kernel echoes in
    /// its reply that fibre does not build (a prespecified timestamp
    /// that took the time: `__ip_options_echo`; record route, other
    /// timestamps, source routes and CIPSO are echoed), or whose echo the
    /// kernel refuses (`EINVAL`: no room left for the reply's address);
    /// fibre says so rather than send a different reply.
    OptionsNotModelled,
    /// The request is not an echo request this writer answers (wrong
    /// protocol or type, bad checksum, too short, to a multicast or
    /// broadcast address).
    NotEchoRequest,
    /// `out` is too short for the message.
    BufferTooSmall,
}
