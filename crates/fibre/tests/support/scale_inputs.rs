//! Configuration files that grow with one number, for the loading cost of
//! links and tunnels: each generator writes the same shape of file at any
//! size, so a test can load a small one and check the verdict while the
//! `scale_inputs` example writes the large ones that docs/BENCHMARKS.md
//! times.

use std::fmt::Write;

/// eth0 up with 192.0.2.1/24: the underlay every tunnel file starts with
/// (lines 1-3).
pub const UNDERLAY: &str =
    "link add eth0 type dummy\nlink set eth0 up\naddr add 192.0.2.1/24 dev eth0\n";

/// The lines [`UNDERLAY`] takes.
pub const UNDERLAY_LINES: usize = 3;

/// The IPv4 address numbered `i` in `10.0.0.0/8` (i < 2^24).
fn ten(i: usize) -> String {
    format!("10.{}.{}.{}", (i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff)
}

/// `tunnels` GRE tunnels whose `local` (in 198.18.0.0/15, of which the
/// router has nothing) is not the router's: each is refused on its own
/// `link add` line, `UNDERLAY_LINES + i + 1`.
pub fn refused_tunnels(tunnels: usize) -> String {
    let mut text = String::from(UNDERLAY);
    for i in 0..tunnels {
        let _ = writeln!(
            text,
            "link add g{i} type gre remote {} local 198.18.{}.{}",
            ten(i),
            (i >> 8) & 0xff,
            i & 0xff
        );
    }
    text
}

/// The remote of tunnel `i` of [`tunnel_chain`]: g0's is on eth0's subnet.
pub fn chain_remote(i: usize) -> String {
    if i == 0 {
        "192.0.2.2".to_string()
    } else {
        ten(i)
    }
}

/// `depth` tunnels nested in each other: g0 runs over eth0, and the route
/// to the remote of each further tunnel leaves through the one before it
/// (`route add REMOTE dev g(i-1)`), so every underlay ends on eth0 and the
/// file is valid. With `closed`, a last line routes g0's remote through
/// the deepest tunnel: one loop through all of them, refused on that line.
pub fn tunnel_chain(depth: usize, closed: bool) -> String {
    let mut text = String::from(UNDERLAY);
    for i in 0..depth {
        if i > 0 {
            let _ = writeln!(text, "route add {} dev g{}", chain_remote(i), i - 1);
        }
        let _ = writeln!(text, "link add g{i} up type gre remote {}", chain_remote(i));
    }
    if closed && depth > 0 {
        let _ = writeln!(text, "route add {} dev g{}", chain_remote(0), depth - 1);
    }
    text
}

/// `tunnels` tunnels, each with its `local` on the one before it: g0's
/// local is not the router's, so with `--force` g0 is skipped, then the
/// address on g0 cannot be added, which takes g1's local away, and so on
/// down the line. Tunnel `i` is on line `UNDERLAY_LINES + 2i + 1`, the
/// address on it on the next line.
pub fn force_cascade(tunnels: usize) -> String {
    let mut text = String::from(UNDERLAY);
    for i in 0..tunnels {
        let local = if i == 0 {
            "198.18.0.1".to_string()
        } else {
            ten(4 * (i - 1) + 1)
        };
        let _ = writeln!(
            text,
            "link add g{i} type gre remote 192.0.2.{} local {local}",
            2 + i % 250
        );
        let _ = writeln!(text, "addr add {}/30 dev g{i}", ten(4 * i + 1));
    }
    text
}

/// `links` dummy links, each added and brought up.
pub fn dummies_up(links: usize) -> String {
    let mut text = String::new();
    for i in 0..links {
        let _ = writeln!(text, "link add d{i} type dummy\nlink set d{i} up");
    }
    text
}

/// `pairs` veth pairs, both ends brought up.
pub fn veth_pairs_up(pairs: usize) -> String {
    let mut text = String::new();
    for i in 0..pairs {
        let _ = writeln!(
            text,
            "link add va{i} type veth peer name vb{i}\nlink set va{i} up\nlink set vb{i} up"
        );
    }
    text
}
