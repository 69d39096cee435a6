//! The namespace the parity tests judge lines in, as iproute2 6.1 (`ip
//! -force -batch`) and the kernel judged them in one set up alike, and
//! the ways they apply a text to it.

#![allow(dead_code)] // each test uses a part
use fibre_fib::config::apply_str;
use fibre_fib::*;

use super::common::*;

/// The namespace: lo up, `fd0` and `fdv0` up with 10.1.0.1/24,
/// 2001:db8:1::1/64 on fd0 and 2001:db8:2::1/64 on fdv0, `fd2` down.
pub fn fib() -> Fib {
    let mut fib = router(&["fd0", "fdv0"]);
    addr(&mut fib, "fd0", "10.1.0.1/24").unwrap();
    addr(&mut fib, "fd0", "2001:db8:1::1/64").unwrap();
    addr(&mut fib, "fdv0", "2001:db8:2::1/64").unwrap();
    fib.apply(&Command::LinkAdd {
        name: "fd2".into(),
        kind: LinkKind::Ifb,
        mtu: None,
    })
    .unwrap();
    fib
}

/// Applies `text` to [`fib`] with `--force`: the router and the refusals.
pub fn forced(text: &str) -> (Fib, Vec<String>) {
    let (fib, refusals) = apply_str(&fib(), "t.conf", text, true).unwrap();
    (fib, refusals.iter().map(|d| d.to_string()).collect())
}

pub fn accepted(text: &str) -> Fib {
    match apply_str(&fib(), "t.conf", text, false) {
        Ok((fib, _)) => fib,
        Err(e) => panic!("{text:?} was refused: {e}"),
    }
}

/// The refusal of `text`, which must contain ip's own message.
pub fn refused_with(text: &str, ip_says: &str) {
    match apply_str(&fib(), "t.conf", text, false) {
        Ok(_) => panic!("{text:?} was accepted"),
        Err(e) => {
            let e = e.to_string();
            assert!(e.contains(ip_says), "{text:?}: {e} lacks {ip_says:?}");
        }
    }
}
