//! L4 protocol names as iproute2 reads and prints them (`inet_proto_a2n`,
//! `inet_proto_n2a`), which ask the C library's `/etc/protocols`: the
//! table below is that file as Debian's netbase ships it (name, number,
//! aliases).

use super::values;

/// `/etc/protocols`: (official name, number, aliases).
const PROTOCOLS: &[(&str, u16, &[&str])] = &[
    ("ip", 0, &["IP"]),
    ("hopopt", 0, &["HOPOPT"]),
    ("icmp", 1, &["ICMP"]),
    ("igmp", 2, &["IGMP"]),
    ("ggp", 3, &["GGP"]),
    ("ipencap", 4, &["IP-ENCAP"]),
    ("st", 5, &["ST"]),
    ("tcp", 6, &["TCP"]),
    ("egp", 8, &["EGP"]),
    ("igp", 9, &["IGP"]),
    ("pup", 12, &["PUP"]),
    ("udp", 17, &["UDP"]),
    ("hmp", 20, &["HMP"]),
    ("xns-idp", 22, &["XNS-IDP"]),
    ("rdp", 27, &["RDP"]),
    ("iso-tp4", 29, &["ISO-TP4"]),
    ("dccp", 33, &["DCCP"]),
    ("xtp", 36, &["XTP"]),
    ("ddp", 37, &["DDP"]),
    ("idpr-cmtp", 38, &["IDPR-CMTP"]),
    ("ipv6", 41, &["IPv6"]),
    ("ipv6-route", 43, &["IPv6-Route"]),
    ("ipv6-frag", 44, &["IPv6-Frag"]),
    ("idrp", 45, &["IDRP"]),
    ("rsvp", 46, &["RSVP"]),
    ("gre", 47, &["GRE"]),
    ("esp", 50, &["IPSEC-ESP"]),
    ("ah", 51, &["IPSEC-AH"]),
    ("skip", 57, &["SKIP"]),
    ("ipv6-icmp", 58, &["IPv6-ICMP"]),
    ("ipv6-nonxt", 59, &["IPv6-NoNxt"]),
    ("ipv6-opts", 60, &["IPv6-Opts"]),
    ("rspf", 73, &["RSPF", "CPHB"]),
    ("vmtp", 81, &["VMTP"]),
    ("eigrp", 88, &["EIGRP"]),
    ("ospf", 89, &["OSPFIGP"]),
    ("ax.25", 93, &["AX.25"]),
    ("ipip", 94, &["IPIP"]),
    ("etherip", 97, &["ETHERIP"]),
    ("encap", 98, &["ENCAP"]),
    ("pim", 103, &["PIM"]),
    ("ipcomp", 108, &["IPCOMP"]),
    ("vrrp", 112, &["VRRP"]),
    ("l2tp", 115, &["L2TP"]),
    ("isis", 124, &["ISIS"]),
    ("sctp", 132, &["SCTP"]),
    ("fc", 133, &["FC"]),
    ("mobility-header", 135, &["Mobility-Header"]),
    ("udplite", 136, &["UDPLite"]),
    ("mpls-in-ip", 137, &["MPLS-in-IP"]),
    ("manet", 138, &[]),
    ("hip", 139, &["HIP"]),
    ("shim6", 140, &["Shim6"]),
    ("wesp", 141, &["WESP"]),
    ("rohc", 142, &["ROHC"]),
    ("ethernet", 143, &["Ethernet"]),
    ("mptcp", 262, &["MPTCP"]),
];

/// `inet_proto_a2n`: a decimal number up to 255 (`get_u8` with base 10),
/// else a name or alias of `/etc/protocols` (case as written there). The
/// caller puts the result in a byte (`addattr8`), so `mptcp` (262) is 6.
pub(crate) fn ip_protocol(token: &str) -> Option<u8> {
    if let Some(number) = values::strtoul_whole(token, 10).filter(|n| *n <= 255) {
        return u8::try_from(number).ok();
    }
    PROTOCOLS
        .iter()
        .find(|(name, _, aliases)| *name == token || aliases.contains(&token))
        .map(|(_, number, _)| (*number & 0xff) as u8)
}

/// `inet_proto_n2a`: the first official name of the number, else
/// `ipproto-N`.
pub(crate) fn ip_protocol_name(number: u8) -> String {
    PROTOCOLS
        .iter()
        .find(|(_, n, _)| *n == u16::from(number))
        .map_or_else(
            || format!("ipproto-{number}"),
            |(name, _, _)| (*name).to_string(),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_read_as_inet_proto_a2n_reads_them() {
        // Kernel-checked with iproute2 6.1: `ipproto TCP` is shown `tcp`,
        // `ipproto 0x11` and `256` are refused, `ipproto 255` is shown
        // `ipproto-255`.
        assert_eq!(ip_protocol("TCP"), Some(6));
        assert_eq!(ip_protocol("ipv6-icmp"), Some(58));
        assert_eq!(ip_protocol("017"), Some(17));
        assert_eq!(ip_protocol("0x11"), None);
        assert_eq!(ip_protocol("256"), None);
        assert_eq!(ip_protocol("Tcp"), None);
        assert_eq!(ip_protocol("mptcp"), Some(6));
        assert_eq!(ip_protocol_name(6), "tcp");
        assert_eq!(ip_protocol_name(0), "ip");
        assert_eq!(ip_protocol_name(255), "ipproto-255");
    }
}
