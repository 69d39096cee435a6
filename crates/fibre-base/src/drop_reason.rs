//! Why a packet was dropped: one taxonomy for every layer, one counter per
//! reason per worker (the devices' `BatchCounts`/`DeviceStats` in
//! fibre-dev keep an array indexed by [`DropReason::index`]).
//!
//! Modelled on Linux's `enum skb_drop_reason`
//! (include/net/dropreason-core.h): each reason says what was wrong, not
//! where, and names its kernel counterpart where there is one. Wire-format
//! errors (`fibre_net::Error`) map onto it with `From` (in fibre-net, which
//! depends on this crate).

crate::dense_enum! {
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
        // --- forwarding plane ---
        /// A frame for another station's MAC address (`eth_type_trans` marks it
        /// `PACKET_OTHERHOST`; `ip_rcv_core`/`ipv6_rcv` drop it):
        /// `SKB_DROP_REASON_OTHERHOST`.
        OtherHost,
        /// Received on a port whose link is down, or not a port of this worker
        /// (a down device receives nothing: `SKB_DROP_REASON_DEV_READY`).
        PortDown,
        /// A source address no packet may carry: IPv6 multicast or loopback,
        /// or an IPv6 destination of interface-local multicast scope received
        /// from outside (`ip6_rcv_core`: `SKB_DROP_REASON_IP_INHDR`).
        MartianAddress,
        /// The IPv4 input route refused the packet with EINVAL: a martian
        /// source or destination (`ip_route_input_slow`:
        /// `SKB_DROP_REASON_IP_INVALID_SOURCE`, `_IP_INVALID_DEST`), a
        /// multicast group not joined, or a blackhole route (`ip_error`, which
        /// sends nothing for EINVAL); IPv6: a blackhole route (`dst_discard`).
        InvalidRoute,
        /// The reverse path filter (`rp_filter` 1 or 2) refused the source:
        /// `SKB_DROP_REASON_IP_RPFILTER`.
        RpFilter,
        /// An unreachable route, or no route at all, on input (`ip_error`,
        /// `ip6_pkt_discard`): `SKB_DROP_REASON_IP_INNOROUTES`. The sender gets
        /// ICMP destination unreachable.
        Unreachable,
        /// A prohibit route on input (`ip_error` with EACCES,
        /// `ip6_pkt_prohibit`): the sender gets "administratively prohibited".
        Prohibited,
        /// The TTL or hop limit would reach zero (`ip_forward`'s
        /// `too_many_hops`, `ip6_forward`): `SKB_DROP_REASON_IP_INHDR`. The
        /// sender gets ICMP time exceeded.
        TtlExceeded,
        /// A unicast IP packet in a broadcast or multicast frame, which
        /// `ip_forward`/`ip6_forward` do not forward (`pkt_type !=
        /// PACKET_HOST`): `SKB_DROP_REASON_NOT_SPECIFIED` in the kernel.
        NotUnicastFrame,
        /// IPv6 forwarding refused the source: unspecified, multicast, loopback
        /// or link-local (`ip6_forward`'s error label,
        /// `SKB_DROP_REASON_IP_INADDRERRORS`; a link-local source gets ICMPv6
        /// "beyond scope of source address").
        AddressError,
        /// The route leaves by a link that is not one of the worker's ports
        /// (a tunnel or a device the worker was not given).
        NoOutputPort,
        /// The next hop is unresolved and the control side's queue of packets
        /// awaiting resolution is full (`__neigh_event_send` beyond
        /// `unres_qlen`): `SKB_DROP_REASON_NEIGH_QUEUEFULL`.
        NeighbourQueueFull,
        /// A packet for the control side (ARP, neighbour discovery, local
        /// delivery) found its queue full (`enqueue_to_backlog`:
        /// `SKB_DROP_REASON_CPU_BACKLOG`).
        PuntQueueFull,
        /// The output port's transmit queue is full
        /// (`SKB_DROP_REASON_QDISC_DROP`).
        TxQueueFull,
        /// An IPv4 packet with a loose or strict source route option, which
        /// `ip_rcv_options` drops unless `accept_source_route` is on for "all"
        /// and the device (`IN_DEV_SOURCE_ROUTE`; "all" is off by default and
        /// the worker has no such setting).
        OptionsUnsupported,
    }
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
            DropReason::OtherHost => "other_host",
            DropReason::PortDown => "port_down",
            DropReason::MartianAddress => "martian_address",
            DropReason::InvalidRoute => "invalid_route",
            DropReason::RpFilter => "rp_filter",
            DropReason::Unreachable => "unreachable",
            DropReason::Prohibited => "prohibited",
            DropReason::TtlExceeded => "ttl_exceeded",
            DropReason::NotUnicastFrame => "not_unicast_frame",
            DropReason::AddressError => "address_error",
            DropReason::NoOutputPort => "no_output_port",
            DropReason::NeighbourQueueFull => "neighbour_queue_full",
            DropReason::PuntQueueFull => "punt_queue_full",
            DropReason::TxQueueFull => "tx_queue_full",
            DropReason::OptionsUnsupported => "options_unsupported",
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
            | DropReason::BadIpHeader
            | DropReason::MartianAddress => DropClass::RxErrors,
            DropReason::NotForTunnel
            | DropReason::UnknownProtocol
            | DropReason::OtherHost
            | DropReason::PortDown
            | DropReason::InvalidRoute
            | DropReason::RpFilter
            | DropReason::Unreachable
            | DropReason::Prohibited
            | DropReason::TtlExceeded
            | DropReason::NotUnicastFrame
            | DropReason::AddressError
            | DropReason::OptionsUnsupported
            | DropReason::PuntQueueFull => DropClass::RxDropped,
            DropReason::NoRoute
            | DropReason::TunnelLoop
            | DropReason::UnderlayLoop
            | DropReason::TooBig
            | DropReason::FragmentationUnsupported
            | DropReason::NoOutputPort => DropClass::TxErrors,
            DropReason::DeviceDown
            | DropReason::NoHeadroom
            | DropReason::InvalidWorker
            | DropReason::BadInnerPacket
            | DropReason::NeighbourQueueFull
            | DropReason::TxQueueFull => DropClass::TxDropped,
        }
    }
}

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
