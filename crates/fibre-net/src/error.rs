//! Why a buffer was refused as a packet.

fibre_base::dense_enum! {
    /// Why a packet could not be parsed or emitted.
    ///
    /// Every variant is a distinct drop reason: a forwarding or tunnel layer
    /// can keep one counter per variant, indexed by [`Error::index`].
    ///
    /// ```
    /// use fibre_net::{gre, Error};
    /// // A GRE header with version 1 (PPTP) is refused with its own reason.
    /// let bytes = [0x00, 0x01, 0x08, 0x00];
    /// let err = gre::Packet::new_checked(&bytes[..]).unwrap_err();
    /// assert_eq!(err, Error::BadVersion);
    /// let mut drops = [0u64; Error::COUNT];
    /// drops[err.index()] += 1;
    /// ```
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
    pub enum Error {
        /// The buffer ends before the header (or a length field) says it should.
        #[error("truncated: the buffer is shorter than the header or its length field")]
        Truncated,
        /// A version field holds a value this parser does not speak.
        #[error("unsupported version")]
        BadVersion,
        /// A checksum does not verify.
        #[error("bad checksum")]
        BadChecksum,
        /// A header length field is smaller than the fixed header (e.g. IPv4 IHL < 5).
        #[error("header length field is smaller than the fixed header")]
        BadHeaderLength,
        /// A total/payload length field is smaller than the headers it must cover.
        #[error("length field is smaller than the headers it must cover")]
        BadLength,
        /// An IPv4 option's length runs past the options area, or is below 2.
        #[error("malformed IPv4 option")]
        BadOption,
        /// An IPv4 fragment would end beyond the 65535-byte datagram limit.
        #[error("fragment ends beyond 65535 bytes")]
        BadFragment,
        /// A GRE header has the routing-present bit (RFC 1701 R) set; Linux drops these.
        #[error("GRE routing present (RFC 1701 source routes are not supported)")]
        GreRoutingPresent,
        /// A UDP datagram over IPv6 carries checksum 0, which RFC 8200 forbids.
        #[error("UDP over IPv6 with a zero checksum")]
        ZeroUdpChecksum,
        /// An ICMP message type (or code), or an ARP hardware/protocol pair,
        /// that this parser does not model.
        #[error("unrecognized message type")]
        Unrecognized,
        /// A `Repr` cannot be emitted as given (e.g. IPv4 options not a multiple of 4).
        #[error("value cannot be encoded in this header")]
        Unencodable,
    }
}

impl From<Error> for fibre_base::DropReason {
    fn from(error: Error) -> Self {
        use fibre_base::DropReason;
        match error {
            // SKB_DROP_REASON_PKT_TOO_SMALL / HDR_TRUNC.
            Error::Truncated => DropReason::Truncated,
            Error::BadVersion => DropReason::BadVersion,
            // SKB_DROP_REASON_IP_CSUM / UDP_CSUM; RFC 8200 makes a zero UDP
            // checksum over IPv6 a checksum error (udp6_csum_init).
            Error::BadChecksum | Error::ZeroUdpChecksum => DropReason::BadChecksum,
            // SKB_DROP_REASON_IP_INHDR: ip_rcv_core's header checks.
            Error::BadHeaderLength | Error::BadLength | Error::BadOption | Error::BadFragment => {
                DropReason::BadIpHeader
            }
            Error::GreRoutingPresent => DropReason::RoutingPresent,
            // SKB_DROP_REASON_UNHANDLED_PROTO.
            Error::Unrecognized => DropReason::UnknownProtocol,
            // Only emitting fails so: the packet cannot be written as given.
            Error::Unencodable => DropReason::BadInnerPacket,
        }
    }
}

/// The result of parsing or emitting a packet.
pub type Result<T> = core::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_are_dense_and_distinct() {
        let all = Error::ALL;
        assert_eq!(all.len(), Error::COUNT);
        let mut seen = [false; Error::COUNT];
        for e in all {
            assert!(!seen[e.index()], "{e:?} shares an index");
            seen[e.index()] = true;
        }
    }

    #[test]
    fn every_wire_error_maps_to_a_receive_or_transmit_drop() {
        use fibre_base::{DropClass, DropReason};
        let parse_errors = Error::ALL.into_iter().filter(|e| *e != Error::Unencodable);
        for e in parse_errors {
            let class = DropReason::from(e).class();
            assert!(
                matches!(class, DropClass::RxErrors | DropClass::RxDropped),
                "{e:?} parses a received packet, yet maps to {class:?}"
            );
        }
        assert_eq!(
            DropReason::from(Error::Unencodable).class(),
            DropClass::TxDropped
        );
    }
}
