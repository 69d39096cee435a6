//! Lines that fibre once judged differently from `ip` and the kernel: each
//! test is one line (or a few), the verdict and the message iproute2 6.1
//! (`ip -force -batch`) and a 6.18 kernel gave for it in a namespace set up
//! like [`fib`].

mod common;

use common::*;
use fibre_fib::config::apply_str;
use fibre_fib::*;

/// The namespace the verdicts were taken in: `d0` and `v0` up, with
/// 10.0.0.1/24 and 2001:db8::1/64 on d0 and 192.168.1.1/24 on v0.
fn fib() -> Fib {
    let mut fib = router(&["d0", "v0"]);
    addr(&mut fib, "d0", "10.0.0.1/24").unwrap();
    addr(&mut fib, "d0", "2001:db8::1/64").unwrap();
    addr(&mut fib, "v0", "192.168.1.1/24").unwrap();
    fib
}

/// Applies `text` to [`fib`]: the router, or the refusal's text.
fn run(text: &str) -> Result<Fib, String> {
    apply_str(&fib(), "t.conf", text, false)
        .map(|(fib, _)| fib)
        .map_err(|e| e.to_string())
}

fn accepted(text: &str) -> Fib {
    run(text).unwrap_or_else(|e| panic!("{text:?} was refused: {e}"))
}

fn refused(text: &str) -> String {
    match run(text) {
        Ok(_) => panic!("{text:?} was accepted"),
        Err(e) => e,
    }
}

/// The route of `dst` in main (key fields, see `common::show`), if any.
fn main_route(fib: &Fib, family: Family, dst: &str) -> Option<String> {
    let start = format!(" {dst} ");
    show(fib, family, TABLE_MAIN)
        .into_iter()
        .find(|line| line.contains(&start))
}

fn has_v4(fib: &Fib, dst: &str) -> bool {
    main_route(fib, Family::V4, dst).is_some()
}

// ---- numbers as ip reads them (strtoul with base 0) ----

#[test]
fn a_leading_zero_octet_is_octal() {
    // ip: `route add 010.0.0.0/8 dev d0` installs 8.0.0.0/8.
    let fib = accepted("route add 010.0.0.0/8 dev d0\n");
    assert!(has_v4(&fib, "8.0.0.0/8"));
    assert!(!has_v4(&fib, "10.0.0.0/8"));
}

#[test]
fn hex_octets_are_read() {
    // ip: 0x0b.0.0.0/8 is 11.0.0.0/8; 0xff.0xff.0xff.0xff is 255.255.255.255.
    let fib = accepted("route add 0x0b.0.0.0/8 dev d0\nroute add 0xff.0xff.0xff.0xff dev d0\n");
    assert!(has_v4(&fib, "11.0.0.0/8"));
    assert!(has_v4(&fib, "255.255.255.255"));
}

#[test]
fn an_octal_octet_past_255_is_refused() {
    // ip: `route add 1.2.3.0400 dev d0` -> Error: any valid prefix is expected rather than "1.2.3.0400".
    let e = refused("route add 1.2.3.0400 dev d0\n");
    assert!(
        e.contains("(Error: any valid prefix is expected rather than \"1.2.3.0400\".)"),
        "{e}"
    );
    // 09 is no octal number.
    let e = refused("route add 09.0.0.0/8 dev d0\n");
    assert!(
        e.contains("(Error: any valid prefix is expected rather than \"09.0.0.0/8\".)"),
        "{e}"
    );
}

#[test]
fn prefix_lengths_are_read_with_base_zero_or_as_netmasks() {
    // ip: /010 is /8, /0x10 is /16, /+8 is /8, /255.0.0.0 is /8.
    let fib = accepted(
        "route add 12.0.0.0/010 dev d0\nroute add 12.0.0.0/0x10 dev d0\n\
         route add 13.0.0.0/+8 dev d0\nroute add 72.0.0.0/255.0.0.0 dev d0\n",
    );
    for dst in ["12.0.0.0/8", "12.0.0.0/16", "13.0.0.0/8", "72.0.0.0/8"] {
        assert!(has_v4(&fib, dst), "{dst}");
    }
    // ip: Error: any valid prefix is expected rather than "16.0.0.0/08".
    let e = refused("route add 16.0.0.0/08 dev d0\n");
    assert!(
        e.contains("(Error: any valid prefix is expected rather than \"16.0.0.0/08\".)"),
        "{e}"
    );
    // A netmask with holes is no length.
    assert!(refused("route add 16.0.0.0/255.0.255.0 dev d0\n").contains("prefix is expected"));
}

#[test]
fn metrics_take_signs_like_strtoul() {
    // ip: metric 010 is 8, 0x10 is 16, +5 is 5, -0 is 0; -1 is refused.
    let fib = accepted(
        "route add 20.0.0.0/8 dev d0 metric 010\nroute add 21.0.0.0/8 dev d0 metric 0x10\n\
         route add 36.0.0.0/8 dev d0 metric +5\nroute add 37.0.0.0/8 dev d0 metric -0\n",
    );
    let metric = |dst| main_route(&fib, Family::V4, dst).unwrap();
    assert!(metric("20.0.0.0/8").ends_with("metric 8"));
    assert!(metric("21.0.0.0/8").ends_with("metric 16"));
    assert!(metric("36.0.0.0/8").ends_with("metric 5"));
    assert!(metric("37.0.0.0/8").ends_with("metric 0"));
    let e = refused("route add 23.0.0.0/8 dev d0 metric -1\n");
    assert!(
        e.contains("(Error: argument \"-1\" is wrong: \"metric\" value is invalid)"),
        "{e}"
    );
}

#[test]
fn scope_and_protocol_numbers_are_base_zero_and_names_are_iproute2_s() {
    // ip: scope 010 is 8, proto 010 is 8 (gated).
    let fib =
        accepted("route add 28.0.0.0/8 dev d0 scope 010\nroute add 26.0.0.0/8 dev d0 proto 010\n");
    assert!(main_route(&fib, Family::V4, "28.0.0.0/8")
        .unwrap()
        .contains("scope 8 "));
    assert!(main_route(&fib, Family::V4, "26.0.0.0/8")
        .unwrap()
        .contains("proto gated "));
    // ip: Error: argument "universe" is wrong: invalid "scope" value
    let e = refused("route add 69.0.0.0/8 dev d0 scope universe\n");
    assert!(
        e.contains("(Error: argument \"universe\" is wrong: invalid \"scope\" value)"),
        "{e}"
    );
    // ip 6.1 knows no protocol "mrouted".
    let e = refused("route add 70.0.0.0/8 dev d0 proto mrouted\n");
    assert!(
        e.contains("(Error: argument \"mrouted\" is wrong: \"protocol\" value is invalid)"),
        "{e}"
    );
}

#[test]
fn tos_takes_the_rt_dsfield_names() {
    // ip: tos CS1 is 0x20, tos +0x10 is 0x10.
    let fib =
        accepted("route add 71.0.0.0/8 dev d0 tos CS1\nroute add 23.0.0.0/8 dev d0 tos +0x10\n");
    let tos = |dst: &str| {
        fib.routes(Family::V4, Some(TABLE_MAIN))
            .into_iter()
            .find(|r| r.dst.to_string() == dst)
            .unwrap()
            .tos
    };
    assert_eq!(tos("71.0.0.0/8"), 0x20);
    assert_eq!(tos("23.0.0.0/8"), 0x10);
}

// ---- how ip -batch splits lines ----

#[test]
fn a_hash_inside_a_word_starts_a_comment() {
    // ip: `route add 75.0.0.0/8 dev d0# c` adds the route on d0.
    let fib = accepted("route add 75.0.0.0/8 dev d0# c\n");
    assert!(has_v4(&fib, "75.0.0.0/8"));
}

#[test]
fn a_hash_inside_quotes_leaves_the_quote_open() {
    // ip: Unterminated quoted string
    let e = refused("route add 87.0.0.0/8 dev \"d0#x\"\n");
    assert!(e.contains("(Unterminated quoted string)"), "{e}");
}

#[test]
fn vertical_tab_form_feed_and_no_break_space_do_not_separate_words() {
    // ip: `route add 77.0.0.0/8\vdev d0`: Error: any valid prefix is expected rather than "77.0.0.0/8\vdev".
    let e = refused("route add 77.0.0.0/8\x0bdev d0\n");
    assert!(e.contains("any valid prefix is expected"), "{e}");
    // ip: Cannot find device "d0\f"; and "d0\u{a0}".
    for line in [
        "route add 78.0.0.0/8 dev d0\x0c\n",
        "route add 79.0.0.0/8 dev d0\u{a0}\n",
    ] {
        let e = refused(line);
        assert!(e.contains("Cannot find device"), "{line:?}: {e}");
    }
}

#[test]
fn a_backslash_at_the_end_of_a_line_joins_the_next() {
    // ip: both add their route; the joined text has no blank where the
    // backslash and newline were.
    let fib = accepted("route add 81.0.0.0/8 \\\ndev d0\n");
    assert!(has_v4(&fib, "81.0.0.0/8"));
    let e = refused("route add 82.0.0.0/8\\\ndev d0\n");
    assert!(
        e.starts_with("t.conf:2: ") && e.contains("rather than \"82.0.0.0/8dev\""),
        "{e}"
    );
    // A backslash in a comment, or before CR LF, continues nothing.
    let fib = accepted("route add 83.0.0.0/8 dev d0 # \\\nroute add 84.0.0.0/8 dev d0\n");
    assert!(has_v4(&fib, "83.0.0.0/8") && has_v4(&fib, "84.0.0.0/8"));
    // ip: line 1 ends in the word `\` (the CR is a separator), which is no
    // device: `Cannot find device "\"`, `Command failed t.conf:1`.
    let e = refused("route add 85.0.0.0/8 dev \\\r\nd0\n");
    assert!(
        e.starts_with("t.conf:1: ") && e.contains("Cannot find device \"\\\""),
        "{e}"
    );
}

#[test]
fn a_backslash_on_the_last_line_is_a_missing_continuation() {
    let e = refused("route add 86.0.0.0/8 dev d0 \\\n");
    assert!(
        e.contains("t.conf:1: ") && e.contains("(Missing continuation line)"),
        "{e}"
    );
}

#[test]
fn a_latin1_byte_in_a_comment_is_never_read() {
    // ip -batch cuts the comment before it looks at the words.
    let text: &[u8] = b"route add 80.0.0.0/8 dev d0 # caf\xe9\nroute add 81.0.0.0/8 dev d0\n";
    let (loaded, _) = fibre_fib::config::load_reader(&fib(), "t.conf", text, false).unwrap();
    assert!(has_v4(&loaded, "80.0.0.0/8") && has_v4(&loaded, "81.0.0.0/8"));
    // Outside a comment it is part of a word, and fibre's words are text.
    let text: &[u8] = b"route add 80.0.0.0/8 dev d\xe9\n";
    let e = fibre_fib::config::load_reader(&fib(), "t.conf", text, false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.conf") && e.contains("invalid UTF-8"), "{e}");
}

#[test]
fn a_nul_byte_ends_the_line() {
    // ip sees a C string: the words end at the NUL.
    let fib = accepted("route add 80.0.0.0/8 dev d0\0garbage\n");
    assert!(has_v4(&fib, "80.0.0.0/8"));
}

#[test]
fn more_than_511_words_are_too_many_arguments() {
    // iproute2's MAX_ARGS is 512: Too many arguments to command
    let line = format!("route add 10.9.0.0/16 dev d0{}\n", " onlink".repeat(508));
    let e = refused(&line);
    assert!(e.contains("(Too many arguments to command)"), "{e}");
}

// ---- messages ----

#[test]
fn control_characters_in_a_token_are_escaped() {
    let e = refused("route add 10.0.0.0/8 dev d0 metric 1\x1b[2J\n");
    assert!(e.contains("got \"1\\u{1b}[2J\""), "{e}");
    assert!(!e.contains('\x1b'), "{e}");
}

#[test]
fn a_long_token_is_shown_once_and_cut() {
    // Within the line limit (64 KiB), past which the line itself is refused.
    let token = "9".repeat(60_000);
    let e = refused(&format!("route add 10.0.0.0/8 dev d0 metric {token}\n"));
    assert!(e.len() < 1000, "{} bytes", e.len());
    assert!(
        e.contains("(60000 bytes, the first 64 characters shown)"),
        "{e}"
    );
}

// ---- route lines ----

/// `route add DST` and `n` nexthops `via 2001:db8::2`, `::3`, ...
fn v6_multipath(dst: &str, n: u32) -> String {
    let mut line = format!("route add {dst}");
    for i in 2..n + 2 {
        line += &format!(" nexthop via 2001:db8::{i:x}");
    }
    line + "\n"
}

#[test]
fn ipv6_multipath_fits_iproute2_s_4096_byte_request() {
    // ip: 144 paths are sent; 145 make a request past 4096 bytes; at 147
    // the nexthops alone overflow parse_nexthops' buffer.
    let fib = accepted(&v6_multipath("2001:db8:50::/64", 144));
    let route = fib
        .routes(Family::V6, Some(TABLE_MAIN))
        .into_iter()
        .find(|r| r.dst.to_string() == "2001:db8:50::/64")
        .unwrap()
        .clone();
    assert_eq!(route.nexthops.len(), 144);
    let e = refused(&v6_multipath("2001:db8:50::/64", 145));
    assert!(
        e.contains("(addattr_l ERROR: message exceeded bound of 4096)"),
        "{e}"
    );
    let e = refused(&v6_multipath("2001:db8:50::/64", 147));
    assert!(
        e.contains("(rta_addattr_l: Error! max allowed bound 4096 exceeded)"),
        "{e}"
    );
}

#[test]
fn ipv4_multipath_is_bounded_by_the_word_limit() {
    // ip: 169 paths of `nexthop via A` fit in 511 words; 170 do not.
    let line = |n: u32| {
        let mut line = "route add 10.50.0.0/16".to_string();
        for i in 0..n {
            line += &format!(" nexthop via 10.0.0.{}", i % 250 + 2);
        }
        line + "\n"
    };
    accepted(&line(169));
    let e = refused(&line(170));
    assert!(e.contains("(Too many arguments to command)"), "{e}");
}

#[test]
fn tos_on_an_ipv6_route_is_refused() {
    // kernel: Error: Invalid dsfield (tos): option not available for IPv6.
    let e = refused("route add 2001:db8:5::/64 dev d0 tos 0x10\n");
    assert!(
        e.contains("(Error: Invalid dsfield (tos): option not available for IPv6.)"),
        "{e}"
    );
    // tos 0 is no tos.
    accepted("route add 2001:db8:6::/64 dev d0 tos 0\n");
}

#[test]
fn device_only_ipv6_multipath_paths_are_refused() {
    // kernel: Error: Device only routes can not be added for IPv6 using the multipath API.
    for line in [
        "route add 2001:db8:7::/64 nexthop dev d0 nexthop dev v0\n",
        "route add 2001:db8:8::/64 nexthop via 2001:db8::2 dev d0 nexthop dev v0\n",
    ] {
        let e = refused(line);
        assert!(
            e.contains(
                "Error: Device only routes can not be added for IPv6 using the multipath API."
            ),
            "{line}: {e}"
        );
    }
}

#[test]
fn ipv6_host_bits_are_masked() {
    // kernel: `route add 2001:db8:a::1/64 dev d0` installs 2001:db8:a::/64;
    // /255.255.0.0 is /16.
    let fib =
        accepted("route add 2001:db8:a::1/64 dev d0\nroute add 2001:db8:d::/255.255.0.0 dev d0\n");
    assert!(main_route(&fib, Family::V6, "2001:db8:a::/64").is_some());
    assert!(main_route(&fib, Family::V6, "2001::/16").is_some());
    // IPv4 keeps refusing them: Error: Invalid prefix for given prefix length.
    let e = refused("route add 10.1.2.3/16 dev d0\n");
    assert!(
        e.contains("(Error: Invalid prefix for given prefix length.)"),
        "{e}"
    );
}

#[test]
fn route_types_are_abbreviated_as_rtnl_rtntype_a2n_takes_them() {
    // ip: blackh/bl blackhole, u/un unreachable, uni unicast, a anycast,
    // brd broadcast, proh prohibit; +6 is RTN_BLACKHOLE.
    let fib = accepted(
        "route add blackh 50.0.0.0/8\nroute add u 52.0.0.0/8\nroute add un 54.0.0.0/8\n\
         route add uni 55.0.0.0/8 dev d0\nroute add proh 57.0.0.0/8\nroute add +6 73.0.0.0/8\n",
    );
    for (dst, kind) in [
        ("50.0.0.0/8", "blackhole"),
        ("52.0.0.0/8", "unreachable"),
        ("54.0.0.0/8", "unreachable"),
        ("55.0.0.0/8", "unicast"),
        ("57.0.0.0/8", "prohibit"),
        ("73.0.0.0/8", "blackhole"),
    ] {
        let route = main_route(&fib, Family::V4, dst).unwrap_or_else(|| panic!("{dst}"));
        assert!(route.starts_with(kind), "{route}");
    }
    let fib = accepted("route add a 56.0.0.0/8 dev d0\nroute add brd 59.0.0.0/8 dev d0\n");
    let local = show(&fib, Family::V4, TABLE_LOCAL);
    assert!(
        local.iter().any(|r| r.starts_with("anycast 56.0.0.0/8")),
        "{local:?}"
    );
    assert!(
        local.iter().any(|r| r.starts_with("broadcast 59.0.0.0/8")),
        "{local:?}"
    );
    // `thr` is no type (throw is matched whole): Error: any valid prefix is expected rather than "thr".
    let e = refused("route add thr 58.0.0.0/8\n");
    assert!(
        e.contains("(Error: any valid prefix is expected rather than \"thr\".)"),
        "{e}"
    );
    // `p` is priority before it is prohibit: Error: argument "53.0.0.0/8" is wrong: "metric" value is invalid
    let e = refused("route add p 53.0.0.0/8\n");
    assert!(
        e.contains("(Error: argument \"53.0.0.0/8\" is wrong: \"metric\" value is invalid)"),
        "{e}"
    );
}

#[test]
fn route_keywords_are_abbreviated_in_iproute_modify_s_order() {
    // ip: m metric, t table, pro protocol, pri priority, d dsfield.
    let fib = accepted(
        "route add 64.0.0.0/8 dev d0 m 5\nroute add 66.0.0.0/8 dev d0 pro static\n\
         route add 67.0.0.0/8 dev d0 pri 7\nroute add 68.0.0.0/8 dev d0 d 0x10\n\
         route add 65.0.0.0/8 dev d0 t 100\n",
    );
    assert!(main_route(&fib, Family::V4, "64.0.0.0/8")
        .unwrap()
        .ends_with("metric 5"));
    assert!(main_route(&fib, Family::V4, "66.0.0.0/8")
        .unwrap()
        .contains("proto static"));
    assert!(main_route(&fib, Family::V4, "67.0.0.0/8")
        .unwrap()
        .ends_with("metric 7"));
    assert!(fib
        .routes(Family::V4, Some(TABLE_MAIN))
        .iter()
        .any(|r| r.dst.to_string() == "68.0.0.0/8" && r.tos == 0x10));
    assert_eq!(show(&fib, Family::V4, 100).len(), 1);
}

#[test]
fn a_second_via_is_refused() {
    // ip: Error: argument "via" is wrong: use nexthop syntax to specify multiple via
    let e = refused("route add 90.0.0.0/8 via 10.0.0.2 via 10.0.0.3\n");
    assert!(
        e.contains(
            "(Error: argument \"via\" is wrong: use nexthop syntax to specify multiple via)"
        ),
        "{e}"
    );
}

// ---- address lines ----

/// The IPv4 addresses as `LOCAL/LEN`.
fn v4_addresses(fib: &Fib) -> Vec<String> {
    fib.addresses(Some(Family::V4))
        .iter()
        .map(|a| format!("{}/{}", a.local, a.prefix_len))
        .collect()
}

#[test]
fn ipv6_loopback_is_refused_off_the_loopback_device() {
    // kernel: Error: ipv6: Cannot assign loopback address on this device.
    for line in ["addr add ::1/128 dev d0\n", "addr add ::1/64 dev v0\n"] {
        let e = refused(line);
        assert!(
            e.contains("Error: ipv6: Cannot assign loopback address on this device."),
            "{line}: {e}"
        );
    }
    // IPv4 loopback addresses go anywhere.
    accepted("addr add 127.0.0.2/8 dev d0\n");
}

#[test]
fn an_ipv4_label_longer_than_15_bytes_fails_the_policy() {
    // kernel: Error: Attribute failed policy validation.
    let e = refused("addr add 10.0.5.1/24 dev d0 label d0:abcdefghijklm\n");
    assert!(
        e.contains("(Error: Attribute failed policy validation.)"),
        "{e}"
    );
    accepted("addr add 10.0.6.1/24 dev d0 label d0:abcdefghijkl\n");
    // IPv6 has no label attribute and ignores it.
    accepted("addr add 2001:db8:44::1/64 dev d0 label d0:abcdefghijklmnopq\n");
}

#[test]
fn lifetimes_are_checked_as_ip_checks_them() {
    accepted(
        "addr add 10.0.9.1/24 dev d0 valid_lft forever preferred_lft forever\n\
         addr add 10.0.12.1/24 dev d0 preferred_lft 100\n\
         addr add 10.0.13.1/24 dev d0 valid_lft 0x10 preferred_lft 010\n\
         addr add 10.0.19.1/24 dev d0 preferred_lft 0\n\
         addr add 10.0.41.1/24 dev d0 preferr 100\n",
    );
    for (line, message) in [
        (
            "addr add 10.0.10.1/24 dev d0 valid_lft 100 preferred_lft 200\n",
            "(preferred_lft is greater than valid_lft)",
        ),
        // preferred_lft stays forever
        (
            "addr add 10.0.11.1/24 dev d0 valid_lft 100\n",
            "(preferred_lft is greater than valid_lft)",
        ),
        // `pre` is preference (the metric), so preferred_lft is forever
        (
            "addr add 10.0.40.1/24 dev d0 v 100 pre 5\n",
            "(preferred_lft is greater than valid_lft)",
        ),
        (
            "addr add 10.0.17.1/24 dev d0 valid_lft 0\n",
            "(valid_lft is zero)",
        ),
        (
            "addr add 10.0.15.1/24 dev d0 valid_lft 4294967296\n",
            "(Error: argument \"4294967296\" is wrong: valid_lft value)",
        ),
        (
            "addr add 10.0.18.1/24 dev d0 valid_lft -1\n",
            "(Error: argument \"-1\" is wrong: valid_lft value)",
        ),
    ] {
        let e = refused(line);
        assert!(e.contains(message), "{line}: {e}");
    }
}

#[test]
fn a_second_broadcast_is_a_duplicate() {
    // ip: Error: duplicate "broadcast": "+" is the second value.
    let e = refused("addr add 10.0.43.1/24 brd 10.0.43.255 dev d0 b +\n");
    assert!(
        e.contains("(Error: duplicate \"broadcast\": \"+\" is the second value.)"),
        "{e}"
    );
}

#[test]
fn addr_del_without_a_length_deletes_the_address_whatever_its_length() {
    // ip: wildcard deletion (no IFA_ADDRESS); the kernel deletes 10.0.0.1/24.
    let fib = accepted("addr del 10.0.0.1 dev d0\n");
    assert!(!v4_addresses(&fib).contains(&"10.0.0.1/24".to_string()));
    // With a length it must match: Error: ipv4: Address not found.
    let e = refused("addr del 10.0.0.1/32 dev d0\n");
    assert!(e.contains("Error: ipv4: Address not found."), "{e}");
    // A label must match too.
    let e =
        refused("addr add 10.0.50.1/24 dev d0 label d0:x\naddr del 10.0.50.1 dev d0 label d0:y\n");
    assert!(e.contains("Error: ipv4: Address not found."), "{e}");
    accepted("addr del 10.0.0.1/24 dev d0 label d0\n");
    // IPv6 without a length is /128: Error: ipv6: address not found.
    let e = refused("addr del 2001:db8::1 dev d0\n");
    assert!(e.contains("Error: ipv6: address not found."), "{e}");
}

#[test]
fn read_only_address_flags_are_taken() {
    // ip warns (`secondary option is not mutable from userspace`) and sends the address.
    accepted(
        "addr add 10.0.60.1/24 dev d0 secondary\naddr add 2001:db8:60::1/64 dev d0 permanent\n",
    );
}

// ---- link lines ----

#[test]
fn ifb_takes_mtu_0_and_loses_ipv4_and_ipv6() {
    // kernel: `link set d0 mtu 0` is taken; d0's addresses and every route
    // through it go; IPv4 stays off (addr add: No buffer space available,
    // route add: No such device) until the MTU is 68 or more again.
    let text = "route add 1.0.0.0/8 dev d0\nroute add 2.0.0.0/8 via 10.0.0.2\nlink set d0 mtu 0\n";
    let fib = accepted(text);
    assert_eq!(fib.link_by_name("d0").unwrap().mtu, 0);
    assert!(!v4_addresses(&fib).contains(&"10.0.0.1/24".to_string()));
    assert!(fib
        .addresses(Some(Family::V6))
        .iter()
        .all(|a| a.local.to_string() != "2001:db8::1"));
    assert!(!has_v4(&fib, "1.0.0.0/8") && !has_v4(&fib, "2.0.0.0/8"));
    assert!(show(&fib, Family::V4, TABLE_LOCAL)
        .iter()
        .all(|r| !r.contains("dev d0")));
    let e = refused(&format!("{text}route add 3.0.0.0/8 dev d0\n"));
    assert!(e.contains("RTNETLINK answers: No such device"), "{e}");
    let e = refused(&format!("{text}addr add 10.0.0.9/24 dev d0\n"));
    assert!(
        e.contains("RTNETLINK answers: No buffer space available"),
        "{e}"
    );
    let fib = accepted(&format!(
        "{text}link set d0 mtu 1500\nroute add 4.0.0.0/8 dev d0\naddr add 10.0.0.9/24 dev d0\n"
    ));
    assert!(has_v4(&fib, "4.0.0.0/8"));
    // A link made with MTU 0 keeps its IPv4 (it never changed below 68).
    accepted("link add n1 mtu 0 type ifb\nlink set n1 up\naddr add 10.5.0.1/24 dev n1\n");
}

#[test]
fn link_mtu_is_an_int() {
    // ip: mtu -1 reaches the kernel: Error: mtu less than device minimum.
    let e = refused("link set d0 mtu -1\n");
    assert!(e.contains("Error: mtu less than device minimum."), "{e}");
    // ip: Error: argument "2147483648" is wrong: Invalid "mtu" value
    let e = refused("link set d0 mtu 2147483648\n");
    assert!(
        e.contains("(Error: argument \"2147483648\" is wrong: Invalid \"mtu\" value)"),
        "{e}"
    );
    // ifb has no maximum; veth stops at 65535.
    accepted("link set d0 mtu 2147483647\nlink set v0 mtu 65535\nlink add x2 mtu 010 type ifb\n");
    // ip: Error: duplicate "mtu": "1400" is the second value.
    let e = refused("link set d0 mtu 1500 mtu 1400\n");
    assert!(
        e.contains("(Error: duplicate \"mtu\": \"1400\" is the second value.)"),
        "{e}"
    );
}

#[test]
fn link_names_are_refused_by_ip_or_by_the_kernel_as_each_does() {
    for (line, message) in [
        ("link set a:b up\n", "Cannot find device \"a:b\""),
        (
            "link add a/b type ifb\n",
            "Error: argument \"a/b\" is wrong: \"dev\" not a valid ifname",
        ),
        (
            "link add name abcdefghijklmnop type ifb\n",
            "Error: argument \"abcdefghijklmnop\" is wrong: \"name\" not a valid ifname",
        ),
        (
            "link add abcdefghijklmnop type ifb\n",
            "Error: Attribute failed policy validation.",
        ),
        (
            "link del abcdefghijklmnopq\n",
            "Cannot find device \"abcdefghijklmnopq\"",
        ),
        (
            "link add vv type veth peer name a:b\n",
            "RTNETLINK answers: Invalid argument",
        ),
        (
            "link add .. type ifb\n",
            "RTNETLINK answers: Invalid argument",
        ),
        (
            "link add dev \"a b\" type ifb\n",
            "Error: argument \"a b\" is wrong: \"dev\" not a valid ifname",
        ),
        (
            "route add 92.0.0.0/8 dev \"d0 \"\n",
            "Cannot find device \"d0 \"",
        ),
    ] {
        let e = refused(line);
        assert!(e.contains(message), "{line}: {e}");
    }
}

#[test]
fn via_0_0_0_0_is_no_gateway() {
    // kernel: `via 0.0.0.0 dev d0` is a route on d0 without a gateway, of
    // the scope ip chose for a gateway (global); without a device it is
    // RTNETLINK answers: No such device.
    let fib = accepted(
        "route add 60.0.0.0/8 via 0.0.0.0 dev d0\n\
         route add 62.0.0.0/8 nexthop via 0.0.0.0 dev d0 nexthop via 10.0.0.2\n",
    );
    let route = main_route(&fib, Family::V4, "60.0.0.0/8").unwrap();
    assert_eq!(
        route,
        "unicast 60.0.0.0/8 dev d0 proto boot scope global metric 0"
    );
    let route = main_route(&fib, Family::V4, "62.0.0.0/8").unwrap();
    assert_eq!(
        route,
        "unicast 62.0.0.0/8 dev d0 via 10.0.0.2 dev d0 proto boot scope global metric 0"
    );
    // So is a route with no path at all.
    for line in [
        "route add 61.0.0.0/8 via 0.0.0.0\n",
        "route add 61.0.0.0/8\n",
    ] {
        let e = refused(line);
        assert!(
            e.ends_with("t.conf:1: RTNETLINK answers: No such device\nnothing applied (1 error)"),
            "{line}: {e}"
        );
    }
    // IPv6: Error: Invalid gateway address.
    let e = refused("route add 2001:db8:b::/64 via :: dev d0\n");
    assert!(e.contains("Error: Invalid gateway address."), "{e}");
}
