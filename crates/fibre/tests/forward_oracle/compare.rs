//! Matching outputs to the input frames they came from, and comparing
//! two sides' outputs (the kernel's and fibre's, or two kernel runs)
//! frame by frame and field by field.

use std::collections::{BTreeMap, HashMap};

use super::dissect::{self, Field, MASKED};
use super::frames::{Frame, ID_MAC_PREFIX, MAGIC};

/// What one side sent out of the router for each input frame: per input
/// id, the (router port, frame) outputs in the order they came.
#[derive(Debug, Default, Clone)]
pub struct Outputs {
    /// By input id.
    pub by_id: BTreeMap<u32, Vec<(usize, Vec<u8>)>>,
    /// Frames no input id could be found in (reported, not compared).
    pub unattributed: Vec<(usize, Vec<u8>)>,
    /// The kernel's own chatter (MLD reports), dropped.
    pub chatter: usize,
}

/// Finds the inputs' ids in outputs.
pub struct Attributor {
    ids: HashMap<u32, usize>,
    /// (src, dst, IP ID) of every IPv4 input, for fragments after the
    /// first and packets trimmed to their header.
    headers_v4: HashMap<([u8; 4], [u8; 4], u16), u32>,
    /// (src, dst, flow label) of every IPv6 input, for packets trimmed to
    /// their header.
    headers_v6: HashMap<(Vec<u8>, Vec<u8>, u32), u32>,
    /// (src, dst, source port, destination port) of every TCP input, for
    /// the resets the router's own stack answers with (which quote nothing).
    tcp_flows: HashMap<TcpFlow, u32>,
}

/// The packet an ICMP or ICMPv6 error frame quotes, behind an Ethernet
/// header of its family.
fn quoted_as_frame(b: &[u8]) -> Option<Vec<u8>> {
    let (quote_at, ethertype) = match b.get(12..14)? {
        [0x08, 0x00] => {
            let ihl = usize::from(b.get(14)? & 0x0f) * 4;
            let icmp = 14 + ihl;
            (*b.get(23)? == 1 && matches!(b.get(icmp)?, 3 | 11 | 12))
                .then_some((icmp + 8, [0x08, 0x00]))?
        }
        [0x86, 0xdd] => (*b.get(20)? == 58 && *b.get(54)? < 128).then_some((62, [0x86, 0xdd]))?,
        _ => return None,
    };
    let mut frame = b[..12].to_vec();
    frame.extend(ethertype);
    frame.extend_from_slice(b.get(quote_at..)?);
    Some(frame)
}

/// An IPv4 frame's (src, dst, IP ID).
fn header_key_v4(b: &[u8]) -> Option<([u8; 4], [u8; 4], u16)> {
    (b.len() >= 34 && b[12..14] == [0x08, 0x00]).then(|| {
        (
            [b[26], b[27], b[28], b[29]],
            [b[30], b[31], b[32], b[33]],
            u16::from_be_bytes([b[18], b[19]]),
        )
    })
}

/// An IPv6 frame's (src, dst, flow label).
fn header_key_v6(b: &[u8]) -> Option<(Vec<u8>, Vec<u8>, u32)> {
    (b.len() >= 54 && b[12..14] == [0x86, 0xdd]).then(|| {
        (
            b[22..38].to_vec(),
            b[38..54].to_vec(),
            u32::from_be_bytes([0, b[15] & 0x0f, b[16], b[17]]),
        )
    })
}

/// Source and destination address (as bytes) and ports of a TCP segment.
type TcpFlow = (Vec<u8>, Vec<u8>, u16, u16);

/// The TCP flow of a frame whose IP header is followed at once by TCP.
fn tcp_flow(b: &[u8]) -> Option<TcpFlow> {
    let (src, dst, at) = match (b.get(12..14)?, b.get(14)?) {
        ([0x08, 0x00], &first) if first >> 4 == 4 && b.get(23) == Some(&6) => {
            let ihl = usize::from(first & 0x0f) * 4;
            (b.get(26..30)?, b.get(30..34)?, 14 + ihl)
        }
        ([0x86, 0xdd], _) => {
            // Past the extension headers (hop-by-hop, routing,
            // destination options; a fragment header's 8 bytes).
            let (mut next, mut at) = (*b.get(20)?, 54);
            while matches!(next, 0 | 43 | 44 | 60) {
                let length = if next == 44 {
                    8
                } else {
                    (usize::from(*b.get(at + 1)?) + 1) * 8
                };
                next = *b.get(at)?;
                at += length;
            }
            if next != 6 {
                return None;
            }
            (b.get(22..38)?, b.get(38..54)?, at)
        }
        _ => return None,
    };
    let ports = b.get(at..at + 4)?;
    Some((
        src.to_vec(),
        dst.to_vec(),
        u16::from_be_bytes([ports[0], ports[1]]),
        u16::from_be_bytes([ports[2], ports[3]]),
    ))
}

impl Attributor {
    /// For the inputs `frames`.
    pub fn new(frames: &[Frame]) -> Attributor {
        let mut headers_v4 = HashMap::new();
        let mut headers_v6 = HashMap::new();
        for f in frames {
            if let Some(key) = header_key_v4(&f.bytes) {
                headers_v4.entry(key).or_insert(f.id);
            }
            if let Some(key) = header_key_v6(&f.bytes) {
                headers_v6.entry(key).or_insert(f.id);
            }
        }
        let tcp_flows = frames
            .iter()
            .filter_map(|f| Some((tcp_flow(&f.bytes)?, f.id)))
            .collect();
        Attributor {
            ids: frames.iter().enumerate().map(|(i, f)| (f.id, i)).collect(),
            headers_v4,
            headers_v6,
            tcp_flows,
        }
    }

    /// The id of the input `output` came from.
    pub fn id_of(&self, output: &[u8]) -> Option<u32> {
        // An answer to `02:ee:<id>`, or (a frame handed to fibre's
        // control side) the asking frame itself.
        for at in [0, 6] {
            if output.len() >= at + 6 && output[at..at + 2] == ID_MAC_PREFIX {
                let o = &output[at + 2..at + 6];
                let id = u32::from_be_bytes([o[0], o[1], o[2], o[3]]);
                if self.ids.contains_key(&id) {
                    return Some(id);
                }
            }
        }
        // The last copy of the magic: an ICMP error quoting a frame
        // quotes it after the error's own headers.
        let found = output
            .windows(8)
            .rev()
            .filter(|w| w[..4] == MAGIC)
            .map(|w| u32::from_be_bytes([w[4], w[5], w[6], w[7]]))
            .find(|id| self.ids.contains_key(id));
        if found.is_some() {
            return found;
        }
        // An ICMP error quoting a packet trimmed to its header: the
        // quoted header's keys, as those of a frame of its own.
        for frame in [Some(output.to_vec()), quoted_as_frame(output)]
            .into_iter()
            .flatten()
        {
            if let Some(id) = header_key_v4(&frame).and_then(|k| self.headers_v4.get(&k)) {
                return Some(*id);
            }
            if let Some(id) = header_key_v6(&frame).and_then(|k| self.headers_v6.get(&k)) {
                return Some(*id);
            }
        }
        let (src, dst, sport, dport) = tcp_flow(output)?;
        self.tcp_flows.get(&(dst, src, dport, sport)).copied()
    }
}

/// Whether a frame is the kernel's own multicast listener report or
/// router solicitation (ICMPv6 130-132, 133, 143; behind a hop-by-hop
/// header for MLD): the router sends them on its own when links and
/// addresses come up, fibre's worker never does.
pub fn is_chatter(frame: &[u8]) -> bool {
    if frame.len() < 54 || frame[12..14] != [0x86, 0xdd] {
        return false;
    }
    let mut next = frame[20];
    let mut at = 54;
    if next == 0 && frame.len() >= at + 8 {
        next = frame[at];
        at += (usize::from(frame[at + 1]) + 1) * 8;
    }
    next == 58 && frame.get(at).is_some_and(|t| matches!(t, 130..=133 | 143))
}

/// Whether a frame is an answer of the router's own sockets rather than
/// of its forwarding path: a TCP reset (`tcp_v4_send_reset`,
/// `tcp_v6_send_reset`) or a port unreachable (`__udp4_lib_rcv`,
/// `__udp6_lib_rcv`: ICMP 3/3, ICMPv6 1/4).
pub fn is_socket_answer(frame: &[u8]) -> bool {
    let fields = dissect::dissect(frame);
    let value = |name: &str| {
        fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let reset = value("tcp.offset_flags")
        .and_then(|v| u16::from_str_radix(v.trim_start_matches("0x"), 16).ok())
        .is_some_and(|flags| flags & 0x04 != 0);
    let port_unreachable = (value("icmp.type"), value("icmp.code")) == (Some("3"), Some("3"))
        || (value("icmp6.type"), value("icmp6.code")) == (Some("1"), Some("4"));
    reset || port_unreachable
}

/// Whether a frame is an ARP reply or a neighbour advertisement (ICMPv6
/// 136): the neighbour subsystem's answers (`arp_process`, `ndisc_recv_ns`).
pub fn is_neighbour_answer(frame: &[u8]) -> bool {
    let fields = dissect::dissect(frame);
    fields
        .iter()
        .any(|(n, v)| (n == "arp.op" && v == "2") || (n == "icmp6.type" && v == "136"))
}

/// A fragment's source, destination and identification: IPv4 with MF
/// or an offset, IPv6 with a fragment header right after the fixed one.
fn fragment_key(b: &[u8]) -> Option<Vec<u8>> {
    if b.len() >= 34 && b[12..14] == [0x08, 0x00] && (b[20] & 0x3f != 0 || b[21] != 0) {
        let mut key = b[26..34].to_vec();
        key.extend_from_slice(&b[18..20]);
        return Some(key);
    }
    (b.len() >= 62 && b[12..14] == [0x86, 0xdd] && b[20] == 44).then(|| {
        let mut key = b[22..54].to_vec();
        key.extend_from_slice(&b[58..62]);
        key
    })
}

/// Groups captured frames by the input they came from.
pub fn attribute(
    attributor: &Attributor,
    captured: impl IntoIterator<Item = (usize, Vec<u8>)>,
) -> Outputs {
    let mut outputs = Outputs::default();
    // Fragments of packets the router made (an echo reply or ICMPv6
    // error too long for its path): the later ones are the first's.
    let mut fragments: HashMap<Vec<u8>, u32> = HashMap::new();
    for (port, bytes) in captured {
        if is_chatter(&bytes) {
            outputs.chatter += 1;
            continue;
        }
        let fragment = fragment_key(&bytes);
        let id = attributor
            .id_of(&bytes)
            .or_else(|| fragment.as_ref().and_then(|k| fragments.get(k).copied()));
        match id {
            Some(id) => {
                if let Some(key) = fragment {
                    fragments.entry(key).or_insert(id);
                }
                outputs.by_id.entry(id).or_default().push((port, bytes));
            }
            None => outputs.unattributed.push((port, bytes)),
        }
    }
    outputs
}

/// One field that differs.
#[derive(Debug, Clone)]
pub struct FieldDifference {
    /// The field's name.
    pub field: String,
    /// The first side's value (absent: the field is not there).
    pub left: Option<String>,
    /// The second side's.
    pub right: Option<String>,
}

/// What differs for one input frame.
#[derive(Debug, Clone)]
pub struct Difference {
    /// The input's id.
    pub id: u32,
    /// The input's kind.
    pub kind: String,
    /// The outputs' ports and count on each side, when they differ.
    pub shape: Option<(Vec<usize>, Vec<usize>)>,
    /// Field differences, output by output (index, differences).
    pub fields: Vec<(usize, Vec<FieldDifference>)>,
    /// What the second side says it did with the input (fibre's counters),
    /// when known.
    pub fate: String,
}

impl Difference {
    /// A short name for what differs, to group differences by.
    pub fn cause(&self) -> String {
        if let Some((l, r)) = &self.shape {
            return format!("outputs {} vs {} [{}]", l.len(), r.len(), self.fate);
        }
        let mut names: Vec<&str> = self
            .fields
            .iter()
            .flat_map(|(_, d)| d.iter().map(|f| f.field.as_str()))
            .collect();
        names.sort_unstable();
        names.dedup();
        names.join(",")
    }
}

/// The fields of an output, masked where it is one the router made
/// (`after_originated`: it follows, as a later fragment, one that is).
pub fn masked_fields(frame: &[u8], after_originated: bool) -> Vec<Field> {
    let mut fields = dissect::dissect(frame);
    let later_fragment = fields
        .iter()
        .any(|(n, v)| (n == "ipv4.frag_offset" || n == "ipv6.frag_offset") && v != "0");
    if dissect::originated(&fields) || (later_fragment && after_originated) {
        for (name, value) in &mut fields {
            if MASKED.contains(&name.as_str()) {
                *value = "(masked)".into();
            }
        }
    }
    fields
}

/// Whether each of `outputs` is one the router made, or a later fragment
/// of one.
fn originated_flags(outputs: &[(usize, Vec<u8>)]) -> Vec<bool> {
    let mut flags = Vec::with_capacity(outputs.len());
    let mut previous = false;
    for (_, frame) in outputs {
        let fields = dissect::dissect(frame);
        let later_fragment = fields
            .iter()
            .any(|(n, v)| (n == "ipv4.frag_offset" || n == "ipv6.frag_offset") && v != "0");
        let made = dissect::originated(&fields) || (later_fragment && previous);
        flags.push(previous);
        previous = made;
    }
    flags
}

fn field_differences(
    left: &[u8],
    right: &[u8],
    after_originated: (bool, bool),
) -> Vec<FieldDifference> {
    let l = masked_fields(left, after_originated.0);
    let r = masked_fields(right, after_originated.1);
    let mut out = Vec::new();
    let mut names: Vec<&String> = l.iter().map(|(n, _)| n).collect();
    for (n, _) in &r {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let value = |fields: &[Field], name: &str| {
        fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    for name in names {
        let (a, b) = (value(&l, name), value(&r, name));
        if a != b {
            out.push(FieldDifference {
                field: name.clone(),
                left: a,
                right: b,
            });
        }
    }
    out
}

/// Compares two sides' outputs for every input.
/// `fate` says what the second side did with an input, if it can.
pub fn compare(
    frames: &[Frame],
    left: &Outputs,
    right: &Outputs,
    fate: impl Fn(u32) -> String,
) -> Vec<Difference> {
    let none = Vec::new();
    let mut differences = Vec::new();
    for frame in frames {
        let l = left.by_id.get(&frame.id).unwrap_or(&none);
        let r = right.by_id.get(&frame.id).unwrap_or(&none);
        // Per port in order: the order between ports is the capture's.
        let ordered = |v: &Vec<(usize, Vec<u8>)>| {
            let mut v: Vec<(usize, Vec<u8>)> = v.clone();
            v.sort_by_key(|(port, _)| *port);
            v
        };
        let (l, r) = (ordered(l), ordered(r));
        let ports = |v: &[(usize, Vec<u8>)]| v.iter().map(|(p, _)| *p).collect::<Vec<_>>();
        let mut difference = Difference {
            id: frame.id,
            kind: frame.kind.clone(),
            shape: None,
            fields: Vec::new(),
            fate: String::new(),
        };
        if ports(&l) != ports(&r) {
            difference.shape = Some((ports(&l), ports(&r)));
        }
        let (lf, rf) = (originated_flags(&l), originated_flags(&r));
        for (i, ((_, a), (_, b))) in l.iter().zip(&r).enumerate() {
            let d = field_differences(a, b, (lf[i], rf[i]));
            if !d.is_empty() {
                difference.fields.push((i, d));
            }
        }
        if difference.shape.is_some() || !difference.fields.is_empty() {
            difference.fate = fate(frame.id);
            differences.push(difference);
        }
    }
    differences
}

/// A readable report of `differences` (at most `show` in detail), the
/// sides named `left` and `right`.
pub fn report(
    differences: &[Difference],
    frames: &[Frame],
    left: (&str, &Outputs),
    right: (&str, &Outputs),
    show: usize,
) -> String {
    let mut text = String::new();
    let mut causes: BTreeMap<String, (usize, u32)> = BTreeMap::new();
    for d in differences {
        let entry = causes.entry(d.cause()).or_insert((0, d.id));
        entry.0 += 1;
    }
    text.push_str(&format!(
        "{} of {} frames differ ({} vs {}); by cause (count, first id):\n",
        differences.len(),
        frames.len(),
        left.0,
        right.0
    ));
    for (cause, (count, first)) in &causes {
        text.push_str(&format!("  {count:6}  {cause}  (first: frame {first})\n"));
    }
    let by_id: HashMap<u32, &Frame> = frames.iter().map(|f| (f.id, f)).collect();
    // The first example of each cause, then more, up to `show`.
    let firsts: Vec<u32> = causes.values().map(|(_, first)| *first).collect();
    let mut shown: Vec<&Difference> = differences
        .iter()
        .filter(|d| firsts.contains(&d.id))
        .collect();
    shown.extend(differences.iter().filter(|d| !firsts.contains(&d.id)));
    for d in shown.into_iter().take(show) {
        text.push_str(&format!("frame {} ({}):\n", d.id, d.kind));
        if !d.fate.is_empty() {
            text.push_str(&format!("  {}: {}\n", right.0, d.fate));
        }
        if let Some(frame) = by_id.get(&d.id) {
            text.push_str(&format!("  input: {}\n", hex_line(&frame.bytes)));
        }
        for (name, outputs) in [left, right] {
            for (port, bytes) in outputs.by_id.get(&d.id).into_iter().flatten() {
                text.push_str(&format!("  {name} out r{port}: {}\n", hex_line(bytes)));
            }
        }
        if let Some((l, r)) = &d.shape {
            text.push_str(&format!(
                "  outputs on ports: {} {l:?}, {} {r:?}\n",
                left.0, right.0
            ));
        }
        for (i, fields) in &d.fields {
            for f in fields {
                text.push_str(&format!(
                    "  output {i} field {}: {} {} / {} {}\n",
                    f.field,
                    left.0,
                    f.left.as_deref().unwrap_or("(absent)"),
                    right.0,
                    f.right.as_deref().unwrap_or("(absent)")
                ));
            }
        }
    }
    for (name, outputs) in [left, right] {
        if !outputs.unattributed.is_empty() {
            text.push_str(&format!(
                "{name}: {} output frames carry no input's id, e.g. {}\n",
                outputs.unattributed.len(),
                hex_line(&outputs.unattributed[0].1)
            ));
        }
    }
    text
}

fn hex_line(b: &[u8]) -> String {
    let shown: String = b.iter().take(96).map(|x| format!("{x:02x}")).collect();
    if b.len() > 96 {
        format!("{shown}... ({} bytes)", b.len())
    } else {
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames;
    use crate::plan;

    fn sample() -> (plan::Plan, Vec<Frame>) {
        let plan = plan::plan(5);
        let mut all = frames::frames(&plan, false, 300, 5, 1);
        all.extend(frames::frames(&plan, true, 300, 5, 1 << 24));
        (plan, all)
    }

    #[test]
    fn every_input_that_keeps_its_payload_is_found_by_its_id() {
        let (_, all) = sample();
        let attributor = Attributor::new(&all);
        let mut found = 0;
        for f in &all {
            if f.kind.contains("truncated") {
                continue;
            }
            assert_eq!(attributor.id_of(&f.bytes), Some(f.id), "{}", f.kind);
            found += 1;
        }
        assert!(found > 500, "{found}");
    }

    #[test]
    fn an_icmp_error_quoting_a_frame_is_that_frames() {
        let (_, all) = sample();
        let frame = all
            .iter()
            .find(|f| {
                f.kind.starts_with("ipv4 ")
                    && f.bytes[12..14] == [8, 0]
                    && !f.kind.contains("truncated")
            })
            .unwrap();
        // Time exceeded from 10.0.0.1: IP header, ICMP 11/0, the quote.
        let quote = &frame.bytes[14..14 + 28 + 8];
        let mut error = frame.bytes[..14].to_vec();
        let mut ip = vec![0x45, 0, 0, 0, 0x12, 0x34, 0, 0, 64, 1, 0, 0, 10, 0, 0, 1];
        ip.extend_from_slice(&frame.bytes[26..30]);
        error.extend(ip);
        error.extend([11, 0, 0, 0, 0, 0, 0, 0]);
        error.extend_from_slice(quote);
        assert_eq!(Attributor::new(&all).id_of(&error), Some(frame.id));
    }

    #[test]
    fn masked_fields_differ_only_in_packets_the_router_made() {
        let (_, all) = sample();
        let attributor = Attributor::new(&all);
        let frame = all
            .iter()
            .find(|f| {
                f.kind.starts_with("ipv4 ")
                    && f.kind.contains("proto 17")
                    && !f.kind.contains("bad")
                    && !f.kind.contains("truncated")
                    && !f.kind.contains("options")
            })
            .unwrap();
        let mut other = frame.bytes.clone();
        other[18] ^= 0xff; // the IP ID
        let left = attribute(&attributor, [(1, frame.bytes.clone())]);
        let right = attribute(&attributor, [(1, other.clone())]);
        let found = compare(std::slice::from_ref(frame), &left, &right, |_| {
            String::new()
        });
        assert_eq!(found.len(), 1, "a forwarded packet's ID is compared");
        assert!(found[0].cause().contains("ipv4.id"), "{}", found[0].cause());
        // The same two as quotes of ICMP errors the router made: masked.
        let wrap = |inner: &[u8], id: u8| {
            let mut e = inner[..14].to_vec();
            let [high, low] = ((20 + 8 + inner.len() - 14) as u16).to_be_bytes();
            e.extend([
                0x45, 0, high, low, id, id, 0, 0, 64, 1, 0, 0, 10, 0, 0, 1, 1, 2, 3, 4,
            ]);
            e.extend([3, 1, 0, 0, 0, 0, 0, 0]);
            e.extend_from_slice(&inner[14..]);
            e
        };
        let left = attribute(&attributor, [(0, wrap(&frame.bytes, 1))]);
        let right = attribute(&attributor, [(0, wrap(&frame.bytes, 2))]);
        assert!(
            compare(std::slice::from_ref(frame), &left, &right, |_| String::new(
            ))
            .is_empty()
        );
        // But not its other fields: another code differs.
        let mut changed = wrap(&frame.bytes, 2);
        changed[14 + 20 + 1] = 3;
        let right = attribute(&attributor, [(0, changed)]);
        let found = compare(std::slice::from_ref(frame), &left, &right, |_| {
            String::new()
        });
        assert_eq!(found.len(), 1);
        assert!(
            found[0].cause().contains("icmp.code"),
            "{}",
            found[0].cause()
        );
        // An output missing on one side is a difference of shape.
        let none = Outputs::default();
        let found = compare(std::slice::from_ref(frame), &left, &none, |_| {
            "dropped".into()
        });
        assert_eq!(found[0].cause(), "outputs 1 vs 0 [dropped]");
    }

    #[test]
    fn mld_reports_are_chatter_and_forwarded_frames_are_not() {
        let (_, all) = sample();
        assert!(all.iter().all(|f| !is_chatter(&f.bytes)));
        // An MLDv2 report behind a hop-by-hop header with router alert.
        let mut mld = vec![0x33, 0x33, 0, 0, 0, 0x16, 2, 0xfb, 0, 0, 0, 3, 0x86, 0xdd];
        mld.extend([0x60, 0, 0, 0, 0, 36, 0, 1]);
        mld.extend([0u8; 32]);
        mld.extend([58, 0, 5, 2, 0, 0, 1, 0]);
        mld.extend([143, 0, 0, 0, 0, 0, 0, 1]);
        mld.extend([0u8; 20]);
        assert!(is_chatter(&mld));
    }
}
