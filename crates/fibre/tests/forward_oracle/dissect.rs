//! Frames taken apart into named fields, for a field-by-field comparison
//! and a readable report: Ethernet, ARP, IPv4 (with options), IPv6 (with
//! extension headers), UDP, TCP, ICMP and ICMPv6 (with the quoted packet
//! taken apart in turn, as far as the quote goes), and whatever is left
//! as bytes.
//!
//! Fields the kernel randomises in the packets the router makes itself
//! (not in those it forwards) are masked: see [`MASKED`].

/// A field's name (`ipv4.ttl`, `icmp.quote.ipv4.id`) and value as text.
pub type Field = (String, String);

/// The fields masked in packets the router originates (ICMP errors and
/// replies, ARP replies, neighbour advertisements), and why:
/// - `ipv4.id`: `ip_select_ident` draws it from `ip_idents`, a table
///   hashed with a random boot-time key (`ip_idents_reserve`), so no
///   other implementation can predict it;
/// - `ipv4.checksum`: follows from the ID; checked for validity instead;
/// - `ipv6.flow_label`: with `auto_flowlabels` on (the default),
///   `ip6_make_flowlabel` hashes the flow with `flow_hash_from_keys`,
///   keyed by a random boot-time `hashrnd`;
/// - `ipv6.fragment_id`: of a reply the router fragments,
///   `ipv6_select_ident` hashes the addresses with a random key.
///
/// A later fragment (no ICMP header of its own) is masked as the first
/// fragment before it is (see `compare.rs`).
pub const MASKED: [&str; 4] = [
    "ipv4.id",
    "ipv4.checksum",
    "ipv6.flow_label",
    "ipv6.fragment_id",
];

/// Whether a frame's packet is one the router made itself, rather than
/// one it forwarded: ARP, ICMP other than an echo request, ICMPv6 other
/// than an echo request (inputs carry only requests; a forwarded frame
/// keeps its type).
pub fn originated(fields: &[Field]) -> bool {
    fields.iter().any(|(name, value)| {
        (name == "arp.op")
            || (name == "icmp.type" && value != "8")
            || (name == "icmp6.type" && value != "128")
    })
}

/// The fields of an Ethernet frame.
pub fn dissect(frame: &[u8]) -> Vec<Field> {
    let mut out = Vec::new();
    if frame.len() < 14 {
        out.push(("eth.bytes".into(), hex(frame)));
        return out;
    }
    out.push(("eth.dst".into(), mac(&frame[0..6])));
    out.push(("eth.src".into(), mac(&frame[6..12])));
    let ethertype = u16::from_be_bytes([frame[12], frame[13]]);
    out.push(("eth.type".into(), format!("{ethertype:#06x}")));
    let body = &frame[14..];
    match ethertype {
        0x0800 => {
            let used = ipv4(body, "", &mut out);
            trailer(&body[used.min(body.len())..], &mut out);
        }
        0x86dd => {
            let used = ipv6(body, "", &mut out);
            trailer(&body[used.min(body.len())..], &mut out);
        }
        0x0806 => arp(body, &mut out),
        _ => out.push(("eth.payload".into(), hex(body))),
    }
    out
}

/// Ethernet padding after the packet: its length only (NICs and veths
/// pad short frames to 60 bytes with bytes nobody reads).
fn trailer(rest: &[u8], out: &mut Vec<Field>) {
    if !rest.is_empty() {
        out.push(("eth.trailer_len".into(), rest.len().to_string()));
    }
}

fn mac(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn hex(b: &[u8]) -> String {
    if b.len() > 48 {
        let digest = b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
            (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3)
        });
        format!(
            "{} bytes {}... (fnv {digest:016x})",
            b.len(),
            b[..16]
                .iter()
                .map(|x| format!("{x:02x}"))
                .collect::<String>()
        )
    } else {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
}

fn push(out: &mut Vec<Field>, prefix: &str, name: &str, value: impl ToString) {
    out.push((format!("{prefix}{name}"), value.to_string()));
}

fn arp(b: &[u8], out: &mut Vec<Field>) {
    if b.len() < 28 {
        push(out, "", "arp.bytes", hex(b));
        return;
    }
    push(out, "", "arp.htype", u16::from_be_bytes([b[0], b[1]]));
    push(
        out,
        "",
        "arp.ptype",
        format!("{:#06x}", u16::from_be_bytes([b[2], b[3]])),
    );
    push(out, "", "arp.op", u16::from_be_bytes([b[6], b[7]]));
    push(out, "", "arp.sha", mac(&b[8..14]));
    push(
        out,
        "",
        "arp.spa",
        std::net::Ipv4Addr::from([b[14], b[15], b[16], b[17]]),
    );
    push(out, "", "arp.tha", mac(&b[18..24]));
    push(
        out,
        "",
        "arp.tpa",
        std::net::Ipv4Addr::from([b[24], b[25], b[26], b[27]]),
    );
    if b.len() > 28 {
        push(out, "", "eth.trailer_len", b.len() - 28);
    }
}

/// An IPv4 packet (or the part of it quoted); returns the bytes it takes.
fn ipv4(b: &[u8], prefix: &str, out: &mut Vec<Field>) -> usize {
    let p = format!("{prefix}ipv4.");
    if b.len() < 20 {
        push(out, &p, "bytes", hex(b));
        return b.len();
    }
    let ihl = usize::from(b[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([b[2], b[3]]));
    push(out, &p, "version", b[0] >> 4);
    push(out, &p, "ihl", ihl);
    push(out, &p, "tos", format!("{:#04x}", b[1]));
    push(out, &p, "total_length", total);
    push(
        out,
        &p,
        "id",
        format!("{:#06x}", u16::from_be_bytes([b[4], b[5]])),
    );
    push(out, &p, "flags", format!("{:#x}", b[6] >> 5));
    push(
        out,
        &p,
        "frag_offset",
        u16::from_be_bytes([b[6] & 0x1f, b[7]]),
    );
    push(out, &p, "ttl", b[8]);
    push(out, &p, "protocol", b[9]);
    push(
        out,
        &p,
        "checksum",
        format!("{:#06x}", u16::from_be_bytes([b[10], b[11]])),
    );
    let valid = ihl >= 20 && ihl <= b.len() && super::frames::checksum(&b[..ihl], 0) == 0;
    push(out, &p, "checksum_valid", valid);
    push(
        out,
        &p,
        "src",
        std::net::Ipv4Addr::from([b[12], b[13], b[14], b[15]]),
    );
    push(
        out,
        &p,
        "dst",
        std::net::Ipv4Addr::from([b[16], b[17], b[18], b[19]]),
    );
    if ihl < 20 || ihl > b.len() {
        push(out, &p, "rest", hex(&b[20..]));
        return b.len();
    }
    if ihl > 20 {
        push(out, &p, "options", hex(&b[20..ihl]));
    }
    // A quote may end anywhere; a packet ends at its total length.
    let end = if prefix.is_empty() {
        total.clamp(ihl, b.len())
    } else {
        b.len()
    };
    let fragment_offset = u16::from_be_bytes([b[6] & 0x1f, b[7]]);
    if fragment_offset == 0 {
        l4(b[9], &b[ihl..end], prefix, out);
    } else {
        push(out, &p, "fragment_data", hex(&b[ihl..end]));
    }
    end
}

/// An IPv6 packet (or the part quoted); returns the bytes it takes.
fn ipv6(b: &[u8], prefix: &str, out: &mut Vec<Field>) -> usize {
    let p = format!("{prefix}ipv6.");
    if b.len() < 40 {
        push(out, &p, "bytes", hex(b));
        return b.len();
    }
    let first = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    let payload = usize::from(u16::from_be_bytes([b[4], b[5]]));
    push(out, &p, "version", first >> 28);
    push(
        out,
        &p,
        "traffic_class",
        format!("{:#04x}", (first >> 20) & 0xff),
    );
    push(out, &p, "flow_label", format!("{:#07x}", first & 0xfffff));
    push(out, &p, "payload_length", payload);
    push(out, &p, "next_header", b[6]);
    push(out, &p, "hop_limit", b[7]);
    let address = |s: &[u8]| {
        let mut o = [0u8; 16];
        o.copy_from_slice(s);
        std::net::Ipv6Addr::from(o)
    };
    push(out, &p, "src", address(&b[8..24]));
    push(out, &p, "dst", address(&b[24..40]));
    let end = if prefix.is_empty() {
        (40 + payload).min(b.len())
    } else {
        b.len()
    };
    let mut next = b[6];
    let mut at = 40;
    // Extension headers: hop-by-hop (0), routing (43), fragment (44),
    // destination options (60).
    while matches!(next, 0 | 43 | 44 | 60) && at + 8 <= end {
        let length = if next == 44 {
            8
        } else {
            (usize::from(b[at + 1]) + 1) * 8
        };
        let name = match next {
            0 => "hop_by_hop",
            43 => "routing",
            44 => "fragment",
            _ => "destination_options",
        };
        let mut later_fragment = false;
        if next == 44 {
            // Next header, offset and M flag; the identification apart
            // (the kernel draws it for the packets it makes).
            let offset = u16::from_be_bytes([b[at + 2], b[at + 3]]) >> 3;
            push(out, &p, name, hex(&b[at..at + 4]));
            push(out, &p, "frag_offset", offset);
            push(out, &p, "fragment_id", hex(&b[at + 4..at + 8]));
            later_fragment = offset != 0;
        } else {
            push(out, &p, name, hex(&b[at..(at + length).min(end)]));
        }
        next = b[at];
        at += length;
        if later_fragment {
            push(out, &p, "fragment_data", hex(&b[at.min(end)..end]));
            return end;
        }
    }
    if at <= end {
        l4(next, &b[at..end], prefix, out);
    }
    end
}

/// The transport header and what follows; ICMP errors' quotes taken apart.
fn l4(protocol: u8, b: &[u8], prefix: &str, out: &mut Vec<Field>) {
    match protocol {
        17 if b.len() >= 8 => {
            let p = format!("{prefix}udp.");
            push(out, &p, "sport", u16::from_be_bytes([b[0], b[1]]));
            push(out, &p, "dport", u16::from_be_bytes([b[2], b[3]]));
            push(out, &p, "length", u16::from_be_bytes([b[4], b[5]]));
            push(
                out,
                &p,
                "checksum",
                format!("{:#06x}", u16::from_be_bytes([b[6], b[7]])),
            );
            push(out, &p, "payload", hex(&b[8..]));
        }
        6 if b.len() >= 20 => {
            let p = format!("{prefix}tcp.");
            push(out, &p, "sport", u16::from_be_bytes([b[0], b[1]]));
            push(out, &p, "dport", u16::from_be_bytes([b[2], b[3]]));
            push(out, &p, "seq", u32::from_be_bytes([b[4], b[5], b[6], b[7]]));
            push(
                out,
                &p,
                "ack",
                u32::from_be_bytes([b[8], b[9], b[10], b[11]]),
            );
            push(
                out,
                &p,
                "offset_flags",
                format!("{:#06x}", u16::from_be_bytes([b[12], b[13]])),
            );
            push(out, &p, "window", u16::from_be_bytes([b[14], b[15]]));
            push(
                out,
                &p,
                "checksum",
                format!("{:#06x}", u16::from_be_bytes([b[16], b[17]])),
            );
            push(out, &p, "rest", hex(&b[18..]));
        }
        1 | 58 if b.len() >= 8 => {
            let p = format!("{prefix}{}.", if protocol == 1 { "icmp" } else { "icmp6" });
            push(out, &p, "type", b[0]);
            push(out, &p, "code", b[1]);
            push(
                out,
                &p,
                "checksum",
                format!("{:#06x}", u16::from_be_bytes([b[2], b[3]])),
            );
            push(out, &p, "rest_of_header", hex(&b[4..8]));
            let error = if protocol == 1 {
                matches!(b[0], 3 | 4 | 5 | 11 | 12)
            } else {
                b[0] < 128
            };
            if error && prefix.is_empty() {
                let quote = &b[8..];
                push(out, &p, "quote_length", quote.len());
                let inner = format!("{p}quote.");
                if protocol == 1 {
                    ipv4(quote, &inner, out);
                } else {
                    ipv6(quote, &inner, out);
                }
            } else {
                push(out, &p, "data", hex(&b[8..]));
            }
        }
        _ => push(out, prefix, &format!("proto{protocol}.bytes"), hex(b)),
    }
}
