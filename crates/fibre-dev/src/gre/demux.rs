//! Which tunnel a received GRE frame belongs to, as Linux's
//! `ip_tunnel_lookup` decides it.

use std::net::IpAddr;

use fibre_net::ethernet::EtherType;
use fibre_net::ip::Protocol;
use fibre_net::{gre, ipv4, ipv6};

use super::GreTunnel;

/// The fields a tunnel lookup keys on. Read without verifying checksums:
/// the chosen tunnel's [`super::decapsulate`] verifies everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TunnelKey {
    /// Outer source (the tunnel's remote).
    pub src: IpAddr,
    /// Outer destination (the tunnel's local).
    pub dst: IpAddr,
    /// GRE key, if present.
    pub key: Option<u32>,
    /// Carries Ethernet (0x6558): only tap tunnels take it, as Linux keeps
    /// gre and gretap tunnels in separate tables.
    pub tap: bool,
}

/// The lookup key of an outer IP + GRE frame, or `None` when it is not
/// one (too short, not GRE, bad GRE version/routing).
///
/// ```
/// use fibre_dev::gre::peek_tunnel_key;
/// assert_eq!(peek_tunnel_key(&[0x45, 0, 0]), None);
/// ```
pub fn peek_tunnel_key(frame: &[u8]) -> Option<TunnelKey> {
    let (src, dst, payload) = match frame.first()? >> 4 {
        4 => {
            let p = ipv4::Packet::new_checked(frame).ok()?;
            if p.protocol() != Protocol::Gre {
                return None;
            }
            let (header_len, total) = (p.header_len(), p.total_len());
            (
                IpAddr::V4(p.src_addr()),
                IpAddr::V4(p.dst_addr()),
                frame.get(header_len..total)?,
            )
        }
        6 => {
            let p = ipv6::Packet::new_checked(frame).ok()?;
            if p.next_header() != Protocol::Gre {
                return None;
            }
            let end = ipv6::HEADER_LEN + p.payload_len();
            (
                IpAddr::V6(p.src_addr()),
                IpAddr::V6(p.dst_addr()),
                frame.get(ipv6::HEADER_LEN..end)?,
            )
        }
        _ => return None,
    };
    let g = gre::Packet::new_checked(payload).ok()?;
    Some(TunnelKey {
        src,
        dst,
        key: g.key(),
        tap: g.protocol() == EtherType::TransparentEthernet,
    })
}

/// How well `tunnel` matches `key`: `None` if not at all; a higher score
/// for a tunnel bound to the exact local address than for one bound to
/// any (Linux prefers the most specific tunnel). Keys must agree exactly:
/// a keyed tunnel takes only its key, a keyless one only keyless frames.
pub(crate) fn match_score(tunnel: &GreTunnel, key: &TunnelKey) -> Option<u8> {
    let config = tunnel.config();
    if !tunnel.is_up()
        || config.spec.remote != key.src
        || config.spec.ikey != key.key
        || config.spec.kind.is_tap() != key.tap
    {
        return None;
    }
    match config.spec.local {
        Some(local) if local == key.dst => Some(2),
        Some(_) => None,
        None => Some(1),
    }
}
