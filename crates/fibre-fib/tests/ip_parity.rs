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
    // ip: line 2 is `Object "d0" is unknown, try "ip help".`
    let e = refused("route add 85.0.0.0/8 dev \\\r\nd0\n");
    assert!(
        e.starts_with("t.conf:2: ") && e.contains("(Object \"d0\" is unknown, try \"ip help\".)"),
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
    let token = "9".repeat(100_000);
    let e = refused(&format!("route add 10.0.0.0/8 dev d0 metric {token}\n"));
    assert!(e.len() < 1000, "{} bytes", e.len());
    assert!(
        e.contains("(100000 bytes, the first 64 characters shown)"),
        "{e}"
    );
}
