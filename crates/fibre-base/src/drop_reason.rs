//! Why a packet was dropped: one taxonomy for every layer, one counter per
//! reason per worker (the devices' `BatchCounts`/`DeviceStats` in
//! fibre-dev keep an array indexed by [`DropReason::index`]).
//!
//! Modelled on Linux's `enum skb_drop_reason`
//! (include/net/dropreason-core.h): each reason says what was wrong, not
//! where, and names its kernel counterpart where there is one. Wire-format
//! errors (`fibre_net::Error`) map onto it with `From` (in fibre-net, which
//! depends on this crate).

/// Why a packet was dropped. Every drop is counted under exactly one reason.
///
/// ```
/// use fibre_base::DropReason;
/// assert_eq!(DropReason::ALL.len(), DropReason::COUNT);
/// assert_eq!(DropReason::ALL[DropReason::KeyMismatch.index()], DropReason::KeyMismatch);
/// assert_eq!(DropReason::BadChecksum.name(), "bad_checksum");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    // --- receive side ---
    /// Shorter than the headers it announces (`SKB_DROP_REASON_PKT_TOO_SMALL`,
    /// `SKB_DROP_REASON_HDR_TRUNC`).
    Truncated,
    /// A tunnel's outer IP header invalid (bad IHL, length or checksum,
    /// fragment): `SKB_DROP_REASON_IP_INHDR` on the outer packet.
    BadOuterHeader,
    /// Outer protocol is not GRE, or the addresses are not this tunnel's.
    NotForTunnel,
    /// GRE version other than 0 (version 1 is PPTP).
    BadVersion,
    /// GRE routing bit set (RFC 1701 source routes).
    RoutingPresent,
    /// A checksum present and wrong (`SKB_DROP_REASON_IP_CSUM`,
    /// `SKB_DROP_REASON_UDP_CSUM`, GRE's `csum`).
    BadChecksum,
    /// `icsum` configured and the packet carries no checksum.
    ChecksumMissing,
    /// Key absent, present when none is configured, or different.
    KeyMismatch,
    /// `iseq` configured and the packet carries no sequence number.
    SeqMissing,
    /// `iseq` configured and the sequence number is not after the last one.
    OutOfOrder,
    /// Outer header marked Congestion Experienced over an inner packet that
    /// is not ECN-capable (RFC 6040: the mark cannot be passed on).
    EcnCeOnNotEct,
    /// Payload protocol is not IPv4 or IPv6, or does not match its header;
    /// a message type not modelled (`SKB_DROP_REASON_UNHANDLED_PROTO`).
    UnknownProtocol,
    // --- transmit side ---
    /// The device is administratively down (`SKB_DROP_REASON_DEV_READY`).
    DeviceDown,
    /// No route (a tunnel's underlay to its remote):
    /// `SKB_DROP_REASON_IP_OUTNOROUTES`.
    NoRoute,
    /// The underlay route leads back into a tunnel beyond the nesting limit.
    TunnelLoop,
    /// The underlay route to the remote leaves through the tunnel itself
    /// (Linux's `ip_tunnel_xmit` counts it in `collisions` as well as
    /// `tx_errors`, and so does `ip -s link` here).
    UnderlayLoop,
    /// Larger than the path MTU and not fragmentable (DF set, or IPv6): the
    /// caller should send ICMP "fragmentation needed"/"packet too big"
    /// (`SKB_DROP_REASON_PKT_TOO_BIG`).
    TooBig,
    /// Larger than the tunnel MTU with DF clear but carrying IPv4 options,
    /// which the fragmenter does not filter per fragment: dropped rather
    /// than sent too large.
    FragmentationUnsupported,
    /// Not enough headroom in the buffer to prepend the headers.
    NoHeadroom,
    /// The worker id is beyond the device's worker count.
    InvalidWorker,
    /// Not an IP packet (the device cannot tell what it carries), or one
    /// whose headers cannot be written as given.
    BadInnerPacket,
    // --- any layer ---
    /// An IP header field is invalid: a header length below the fixed
    /// header, a total length below the headers, a malformed option, a
    /// fragment ending past 65535 bytes (`SKB_DROP_REASON_IP_INHDR`).
    BadIpHeader,
}

/// Which `ip -s link` column a reason adds to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropClass {
    /// RX errors (a malformed or unexpected packet).
    RxErrors,
    /// RX dropped (a well-formed packet refused by policy/state).
    RxDropped,
    /// TX errors (could not be sent: route, loop, size).
    TxErrors,
    /// TX dropped (refused before trying).
    TxDropped,
}

impl DropReason {
    /// Number of reasons: the length of a per-reason counter array.
    pub const COUNT: usize = 22;

    /// Every reason, in index order.
    pub const ALL: [DropReason; DropReason::COUNT] = [
        DropReason::Truncated,
        DropReason::BadOuterHeader,
        DropReason::NotForTunnel,
        DropReason::BadVersion,
        DropReason::RoutingPresent,
        DropReason::BadChecksum,
        DropReason::ChecksumMissing,
        DropReason::KeyMismatch,
        DropReason::SeqMissing,
        DropReason::OutOfOrder,
        DropReason::EcnCeOnNotEct,
        DropReason::UnknownProtocol,
        DropReason::DeviceDown,
        DropReason::NoRoute,
        DropReason::TunnelLoop,
        DropReason::UnderlayLoop,
        DropReason::TooBig,
        DropReason::FragmentationUnsupported,
        DropReason::NoHeadroom,
        DropReason::InvalidWorker,
        DropReason::BadInnerPacket,
        DropReason::BadIpHeader,
    ];

    /// Dense index in `0..COUNT`.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// A stable snake_case name for reports.
    pub const fn name(self) -> &'static str {
        match self {
            DropReason::Truncated => "truncated",
            DropReason::BadOuterHeader => "bad_outer_header",
            DropReason::NotForTunnel => "not_for_tunnel",
            DropReason::BadVersion => "bad_version",
            DropReason::RoutingPresent => "routing_present",
            DropReason::BadChecksum => "bad_checksum",
            DropReason::ChecksumMissing => "checksum_missing",
            DropReason::KeyMismatch => "key_mismatch",
            DropReason::SeqMissing => "seq_missing",
            DropReason::OutOfOrder => "out_of_order",
            DropReason::EcnCeOnNotEct => "ecn_ce_on_not_ect",
            DropReason::UnknownProtocol => "unknown_protocol",
            DropReason::DeviceDown => "device_down",
            DropReason::NoRoute => "no_route",
            DropReason::TunnelLoop => "tunnel_loop",
            DropReason::UnderlayLoop => "underlay_loop",
            DropReason::TooBig => "too_big",
            DropReason::FragmentationUnsupported => "fragmentation_unsupported",
            DropReason::NoHeadroom => "no_headroom",
            DropReason::InvalidWorker => "invalid_worker",
            DropReason::BadInnerPacket => "bad_inner_packet",
            DropReason::BadIpHeader => "bad_ip_header",
        }
    }

    /// The `ip -s link` column this reason is summed into. Follows Linux's
    /// GRE receive path where it has one (bad checksum and out-of-order are
    /// `rx_errors`; a key with no matching tunnel never reaches the device
    /// in Linux, here it is an error of the device that was asked).
    pub const fn class(self) -> DropClass {
        match self {
            DropReason::Truncated
            | DropReason::BadOuterHeader
            | DropReason::BadVersion
            | DropReason::RoutingPresent
            | DropReason::BadChecksum
            | DropReason::ChecksumMissing
            | DropReason::KeyMismatch
            | DropReason::SeqMissing
            | DropReason::OutOfOrder
            | DropReason::EcnCeOnNotEct
            | DropReason::BadIpHeader => DropClass::RxErrors,
            DropReason::NotForTunnel | DropReason::UnknownProtocol => DropClass::RxDropped,
            DropReason::NoRoute
            | DropReason::TunnelLoop
            | DropReason::UnderlayLoop
            | DropReason::TooBig
            | DropReason::FragmentationUnsupported => DropClass::TxErrors,
            DropReason::DeviceDown
            | DropReason::NoHeadroom
            | DropReason::InvalidWorker
            | DropReason::BadInnerPacket => DropClass::TxDropped,
        }
    }
}

const _: () = assert!(
    DropReason::BadIpHeader as usize + 1 == DropReason::COUNT,
    "DropReason::COUNT must be one past the last reason: if this fires, \
     a reason was added without updating COUNT and ALL"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_are_dense_and_names_unique() {
        let mut names = std::collections::HashSet::new();
        for (i, reason) in DropReason::ALL.iter().enumerate() {
            assert_eq!(reason.index(), i);
            assert!(names.insert(reason.name()), "{}", reason.name());
        }
    }
}
