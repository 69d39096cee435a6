//! `neigh` lines judged as iproute2 6.1 (`ip -batch`) and a 6.18 kernel
//! judged them in a namespace with the same links (veth `v0`/`v1`, ifb
//! `i0`, lo; every message below was read from `ip` there): the verdict,
//! the message with file and line, and the entries after.

use fibre_fib::config::apply_str;
use fibre_fib::*;

/// The namespace: lo up, veth v0/v1 (v0 up with 10.1.0.1/24, v1 down, so
/// v0 has no carrier), ifb i0 down.
fn base() -> Fib {
    let text = "link set lo up\n\
                link add v0 type veth peer name v1\n\
                link set v0 up\n\
                addr add 10.1.0.1/24 dev v0\n\
                link add i0 type ifb\n";
    apply_str(&Fib::new(), "base.conf", text, false).unwrap().0
}

fn accepted(text: &str) -> Fib {
    match apply_str(&base(), "t.conf", text, false) {
        Ok((fib, _)) => fib,
        Err(e) => panic!("{text:?} was refused: {e}"),
    }
}

/// The whole refusal of a file whose last line is refused.
fn refusal(text: &str) -> String {
    match apply_str(&base(), "t.conf", text, false) {
        Ok(_) => panic!("{text:?} was accepted"),
        Err(e) => e.to_string().lines().next().unwrap_or_default().to_string(),
    }
}

/// The entries as `ip neigh show nud all` prints them (without the
/// trailing blank), in fibre's order.
fn shown(fib: &Fib) -> Vec<String> {
    fib.neighbours()
        .map(|n| {
            let mut line = format!("{} dev {}", n.addr, fib.link(n.link).unwrap().name);
            if let Some(mac) = n.lladdr() {
                let m: Vec<String> = mac.iter().map(|b| format!("{b:02x}")).collect();
                line += &format!(" lladdr {}", m.join(":"));
            }
            if n.router {
                line += " router";
            }
            if n.state != NudState::None {
                line += &format!(" {}", n.state.name());
            }
            line
        })
        .collect()
}

#[test]
fn refusals_name_file_line_and_ips_message() {
    let cases = [
        (
            "neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev v0\nneigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev v0",
            "t.conf:2: RTNETLINK answers: File exists",
        ),
        (
            "neigh add 10.0.0.21 lladdr 02:00:00:00:00 dev v0",
            "t.conf:1: Error: Invalid link address.",
        ),
        (
            "neigh add 10.0.0.20 dev v0",
            "t.conf:1: Error: No link layer address given.",
        ),
        (
            "neigh add 2001:db8::20 dev v0 nud stale",
            "t.conf:1: Error: No link layer address given.",
        ),
        (
            "neigh add 10.0.0.24 lladdr 02:00:00:00:00:01 dev nope",
            "t.conf:1: Cannot find device \"nope\"",
        ),
        (
            "neigh del 10.0.0.99 dev v0",
            "t.conf:1: RTNETLINK answers: No such file or directory",
        ),
        (
            "neigh change 10.0.0.98 lladdr 02:00:00:00:00:01 dev v0",
            "t.conf:1: RTNETLINK answers: No such file or directory",
        ),
        (
            "neigh flush dev nope",
            "t.conf:1: Cannot find device \"nope\"",
        ),
    ];
    for (text, want) in cases {
        let got = refusal(text);
        assert!(
            got.starts_with(want),
            "{text:?}: got {got:?}, want {want:?}"
        );
    }
}

#[test]
fn syntax_refusals_carry_iproute2s_words() {
    let cases = [
        (
            "neigh add 10.0.0.23 lladdr zz dev v0",
            "(\"zz\" is invalid lladdr.)",
        ),
        (
            "neigh add 10.0.0.43 lladdr 02:00:00:00:00:01:: dev v0",
            "(\"\" is invalid lladdr.)",
        ),
        (
            "neigh add 10.0.0.25 lladdr 02:00:00:00:00:01",
            "(Device and destination are required arguments.)",
        ),
        (
            "neigh add lladdr 02:00:00:00:00:01 dev v0",
            "(Device and destination are required arguments.)",
        ),
        (
            "neigh del 10.0.0.2",
            "(Device and destination are required arguments.)",
        ),
        (
            "neigh add 10.0.0.26 lladdr 02:00:00:00:00:01 dev v0 nud bogus",
            "(Error: argument \"bogus\" is wrong: nud state is bad)",
        ),
        (
            "neigh add 10.0.1.33 lladdr 02:00:00:00:00:01 dev v0 nud 0x3",
            "(Error: argument \"0x3\" is wrong: nud state is bad)",
        ),
        (
            "neigh add 10.0.0.27 10.0.0.28 lladdr 02:00:00:00:00:01 dev v0",
            "(Error: either \"to\" is duplicate, or \"10.0.0.28\" is a garbage.)",
        ),
        (
            "neigh add 10.0.0.34 lladdr 02:00:00:00:00:01 dev v0 foo",
            "(Error: either \"to\" is duplicate, or \"foo\" is a garbage.)",
        ),
        (
            "neigh add 10.0.0.29 lladdr 02:00:00:00:00:01 lladdr 02:00:00:00:00:02 dev v0",
            "(Error: duplicate \"lladdr\": \"02:00:00:00:00:02\" is the second value.)",
        ),
        (
            "neigh add 10.0.0.0/24 lladdr 02:00:00:00:00:01 dev v0",
            "(Error: any valid address is expected rather than \"10.0.0.0/24\".)",
        ),
        (
            "neigh add 10.0.0.32 lladdr 02:00:00:00:00:01 dev v0 nud",
            "(Command line is not complete. Try option \"help\")",
        ),
        (
            "neigh add 10.0.0.33 lladdr",
            "(Command line is not complete. Try option \"help\")",
        ),
        (
            "neigh add help",
            "(Command line is not complete. Try option \"help\")",
        ),
        (
            "neigh bogus 10.0.0.2",
            "(Command \"bogus\" is unknown, try \"ip neigh help\".)",
        ),
    ];
    for (text, want) in cases {
        let got = refusal(text);
        assert!(got.starts_with("t.conf:1: "), "{text:?}: {got}");
        assert!(
            got.ends_with(want),
            "{text:?}: got {got:?}, want it to end {want:?}"
        );
    }
}

#[test]
fn unmodelled_keywords_are_refused_by_name() {
    for (word, line) in [
        (
            "proxy",
            "neigh add 10.0.0.38 lladdr 02:00:00:00:00:01 dev v0 proxy",
        ),
        (
            "extern_learn",
            "neigh add 10.0.0.39 lladdr 02:00:00:00:00:01 dev v0 extern_learn",
        ),
        (
            "managed",
            "neigh add 10.0.0.40 lladdr 02:00:00:00:00:01 dev v0 managed",
        ),
        (
            "protocol",
            "neigh add 10.0.0.41 lladdr 02:00:00:00:00:01 dev v0 protocol static",
        ),
    ] {
        let got = refusal(line);
        assert!(
            got.contains(&format!("fibre does not model \"{word}\"")),
            "{got}"
        );
    }
}

#[test]
fn accepted_entries_hold_what_the_kernel_holds() {
    let fib = accepted(
        "neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev v0\n\
         neigh add 10.0.0.3 lladdr 02:00:00:00:00:03 dev v0 nud reachable router\n\
         neigh a 10.0.0.4 l 02:00:00:00:00:04 dev v0 nud stale\n\
         neigh add 10.0.0.5 lladdr 02:00:00:00:00:05 dev v0 nud noarp\n\
         neigh add to 2001:db8::2 lladdr 02:00:00:00:00:22 dev v0 router router\n\
         neigh add 10.0.0.8 dev i0 lladdr 02:00:00:00:00:08 nud failed\n\
         neigh add 10.0.0.9 dev i0 lladdr 02:00:00:00:00:09 nud incomplete\n\
         neigh add 10.0.0.10 dev i0 nud none\n\
         neigh add 10.0.0.22 lladdr 02:00:00:00:00:00:01 dev v0\n\
         neigh add 10.0.0.35 lladdr 2:0:0:0:0:1 dev v0 nud 0x80\n\
         neigh add 10.0.1.41 lladdr 02:00:00:00:00:01 dev v0 dev i0\n\
         neigh add 224.0.0.5 dev v0\n\
         neigh add ff02::1:2 dev v0 nud perm\n\
         neigh add 10.1.0.255 dev v0\n\
         neigh replace 10.0.0.2 lladdr 02:00:00:00:00:09 dev v0\n",
    );
    assert_eq!(
        shown(&fib),
        [
            "10.0.0.2 dev v0 lladdr 02:00:00:00:00:09 PERMANENT",
            "10.0.0.3 dev v0 lladdr 02:00:00:00:00:03 router REACHABLE",
            "10.0.0.4 dev v0 lladdr 02:00:00:00:00:04 STALE",
            "10.0.0.5 dev v0 lladdr 02:00:00:00:00:05 NOARP",
            "10.0.0.22 dev v0 lladdr 02:00:00:00:00:00 PERMANENT",
            "10.0.0.35 dev v0 lladdr 02:00:00:00:00:01 PERMANENT",
            "10.1.0.255 dev v0 lladdr ff:ff:ff:ff:ff:ff PERMANENT",
            "224.0.0.5 dev v0 lladdr 01:00:5e:00:00:05 PERMANENT",
            "10.0.0.8 dev i0 FAILED",
            "10.0.0.9 dev i0 INCOMPLETE",
            "10.0.0.10 dev i0",
            "10.0.1.41 dev i0 lladdr 02:00:00:00:00:01 PERMANENT",
            "2001:db8::2 dev v0 lladdr 02:00:00:00:00:22 router PERMANENT",
            "ff02::1:2 dev v0 lladdr 33:33:00:01:00:02 PERMANENT",
        ]
    );
}

#[test]
fn a_refused_add_leaves_the_entry_it_made() {
    // Kernel-checked: `neigh add 10.0.0.12 dev v0` (no lladdr) is refused,
    // `ip neigh show nud all` then lists `10.0.0.12 dev v0 `.
    let text = "neigh add 10.0.0.12 dev v0\n";
    let (fib, refused) = apply_str(&base(), "t.conf", text, true).unwrap();
    assert_eq!(refused.len(), 1);
    assert_eq!(shown(&fib), ["10.0.0.12 dev v0"]);
    let err = refusal(
        "neigh add 10.0.0.12 dev v0\nneigh add 10.0.0.12 lladdr 02:00:00:00:00:01 dev v0\n",
    );
    assert!(
        err.starts_with("t.conf:1: Error: No link layer address given."),
        "{err}"
    );
    let (fib, _) = apply_str(
        &base(),
        "t.conf",
        "neigh add 10.0.0.12 dev v0\nneigh change 10.0.0.12 lladdr 02:00:00:00:00:01 dev v0\n",
        true,
    )
    .unwrap();
    assert_eq!(
        shown(&fib),
        ["10.0.0.12 dev v0 lladdr 02:00:00:00:00:01 PERMANENT"]
    );
}

#[test]
fn change_and_del_work_on_existing_entries_only() {
    let fib = accepted(
        "neigh replace 10.0.1.30 lladdr 02:00:00:00:00:01 dev v0 nud stale router\n\
         neigh change 10.0.1.30 dev v0 nud reachable\n\
         neigh add 10.0.1.31 lladdr 02:00:00:00:00:01 dev v0 nud stale\n\
         neigh del 10.0.1.31 dev v0 lladdr 02:00:00:00:00:09\n\
         neigh add 10.0.1.32 lladdr 02:00:00:00:00:01 dev v0 nud reachable router\n\
         neigh change 10.0.1.32 dev v0 nud failed\n",
    );
    assert_eq!(
        shown(&fib),
        [
            // A change without `router` clears the flag (the admin update
            // carries NEIGH_UPDATE_F_OVERRIDE_ISROUTER)...
            "10.0.1.30 dev v0 lladdr 02:00:00:00:00:01 REACHABLE",
            // ...but not into an invalid state, where __neigh_update leaves early.
            "10.0.1.32 dev v0 router FAILED",
        ]
    );
}

#[test]
fn ipv4_neighbours_on_loopback_are_keyed_by_0_0_0_0() {
    let fib = accepted("neigh add 10.0.1.22 dev lo\n");
    assert_eq!(
        shown(&fib),
        ["0.0.0.0 dev lo lladdr 00:00:00:00:00:00 PERMANENT"]
    );
    // Later adds of any address update that one entry; only 0.0.0.0 finds
    // it for del and change, and adding 0.0.0.0 itself is "File exists".
    let fib = accepted(
        "neigh add 10.0.1.22 dev lo\nneigh add 10.9.9.9 lladdr 02:00:00:00:00:01 dev lo nud stale\n",
    );
    assert_eq!(
        shown(&fib),
        ["0.0.0.0 dev lo lladdr 02:00:00:00:00:01 STALE"]
    );
    for (line, want) in [
        (
            "neigh del 10.0.1.22 dev lo",
            "RTNETLINK answers: No such file or directory",
        ),
        (
            "neigh change 10.0.1.22 dev lo nud stale",
            "RTNETLINK answers: No such file or directory",
        ),
        ("neigh add 0.0.0.0 dev lo", "RTNETLINK answers: File exists"),
    ] {
        let err = refusal(&format!("neigh add 10.0.1.22 dev lo\n{line}\n"));
        assert!(
            err.starts_with(&format!("t.conf:2: {want}")),
            "{line}: {err}"
        );
    }
    let fib = accepted("neigh add 10.0.1.22 dev lo\nneigh del 0.0.0.0 dev lo\n");
    assert!(shown(&fib).is_empty());
}

#[test]
fn without_a_local_table_every_ipv4_address_is_broadcast_for_arp() {
    // A fresh namespace (lo down, no local route yet): `arp_constructor`
    // finds RTN_BROADCAST and makes the entry NOARP with the broadcast MAC.
    let text = "link add v0 type veth peer name v1\nneigh add 10.0.0.4 dev v0\nneigh add 10.0.0.5 dev v0 nud stale\n";
    let (fib, _) = apply_str(&Fib::new(), "t.conf", text, false).unwrap();
    assert_eq!(
        shown(&fib),
        [
            "10.0.0.4 dev v0 lladdr ff:ff:ff:ff:ff:ff PERMANENT",
            "10.0.0.5 dev v0 lladdr ff:ff:ff:ff:ff:ff STALE",
        ]
    );
}

#[test]
fn flush_takes_all_but_permanent_and_noarp() {
    let fib = accepted(
        "neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev v0\n\
         neigh add 10.0.0.3 lladdr 02:00:00:00:00:03 dev v0 nud reachable\n\
         neigh add 10.0.0.4 lladdr 02:00:00:00:00:04 dev v0 nud stale\n\
         neigh add 10.0.0.5 lladdr 02:00:00:00:00:05 dev v0 nud noarp\n\
         neigh add 10.0.0.6 lladdr 02:00:00:00:00:05 dev v0 nud failed\n\
         neigh add 10.0.0.7 dev v0 nud none\n\
         neigh add 10.0.0.8 lladdr 02:00:00:00:00:08 dev i0 nud stale\n\
         neigh flush dev v0\n",
    );
    assert_eq!(
        shown(&fib),
        [
            "10.0.0.2 dev v0 lladdr 02:00:00:00:00:02 PERMANENT",
            "10.0.0.5 dev v0 lladdr 02:00:00:00:00:05 NOARP",
            "10.0.0.8 dev i0 lladdr 02:00:00:00:00:08 STALE",
        ]
    );
}

#[test]
fn a_links_neighbours_go_with_its_carrier_its_up_and_itself() {
    let entries = "neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev v0\n\
                   neigh add 10.0.0.3 lladdr 02:00:00:00:00:03 dev v0 nud stale\n\
                   neigh add 2001:db8::2 lladdr 02:00:00:00:00:22 dev v0\n\
                   neigh add 2001:db8::3 lladdr 02:00:00:00:00:23 dev v0 nud noarp\n\
                   neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev i0\n";
    // Carrier comes (v1 up) and goes (v1 down): the permanent ones stay.
    let text = format!("link set v1 up\n{entries}link set v1 down\n");
    let fib = accepted(&text);
    assert_eq!(
        shown(&fib),
        [
            "10.0.0.2 dev v0 lladdr 02:00:00:00:00:02 PERMANENT",
            "10.0.0.2 dev i0 lladdr 02:00:00:00:00:02 PERMANENT",
            "2001:db8::2 dev v0 lladdr 02:00:00:00:00:22 PERMANENT",
        ]
    );
    // Down: every one of the link's goes.
    let fib = accepted(&format!("{entries}link set v0 down\n"));
    assert_eq!(
        shown(&fib),
        ["10.0.0.2 dev i0 lladdr 02:00:00:00:00:02 PERMANENT"]
    );
    // A link that never had carrier keeps them when it comes up.
    let fib = accepted(&format!("link set v0 down\n{entries}link set v0 up\n"));
    assert_eq!(shown(&fib).len(), 5);
    // Deleted: gone, the peer's with it.
    let fib = accepted(&format!("{entries}link del v1\n"));
    assert_eq!(
        shown(&fib),
        ["10.0.0.2 dev i0 lladdr 02:00:00:00:00:02 PERMANENT"]
    );
}

#[test]
fn the_table_of_collectable_entries_is_bounded_by_gc_thresh3() {
    let mut text = String::new();
    for i in 0..GC_THRESH3 {
        text += &format!(
            "neigh add 10.2.{}.{} lladdr 02:00:00:00:00:01 dev v0 nud stale\n",
            i / 256,
            i % 256
        );
    }
    let fib = accepted(&text);
    assert_eq!(fib.neighbours().count(), GC_THRESH3);
    // Permanent entries are exempt (neigh_alloc's exempt_from_gc).
    let more = format!("{text}neigh add 10.3.0.1 lladdr 02:00:00:00:00:01 dev v0\n");
    assert_eq!(accepted(&more).neighbours().count(), GC_THRESH3 + 1);
    let full = format!("{text}neigh add 10.3.0.2 lladdr 02:00:00:00:00:01 dev v0 nud stale\n");
    let err = refusal(&full);
    assert!(
        err.starts_with(&format!(
            "t.conf:{}: RTNETLINK answers: No buffer space available",
            GC_THRESH3 + 1
        )),
        "{err}"
    );
    // The forced GC frees FAILED entries first.
    let freed = format!(
        "{text}neigh change 10.2.0.0 dev v0 nud failed\nneigh add 10.3.0.2 lladdr 02:00:00:00:00:01 dev v0 nud stale\n"
    );
    let fib = accepted(&freed);
    assert_eq!(fib.neighbours().count(), GC_THRESH3);
}
