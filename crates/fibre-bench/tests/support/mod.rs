//! What the experiments' tests share: small tables in the RIS files'
//! format.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use fibre_bench::data::SNAPSHOT;
use fibre_bench::timing::Plan;
use fibre_bench::Options;
use flate2::write::GzEncoder;
use flate2::Compression;

/// A table of `count` distinct prefixes, lengths 8 to 24 (IPv4) or 16 to
/// 48 (IPv6), spread by a multiplicative hash.
pub fn table_file(dir: &Path, tag: &str, count: u32) {
    let mut gz = GzEncoder::new(
        File::create(dir.join(format!("{SNAPSHOT}-{tag}.txt.gz"))).unwrap(),
        Compression::fast(),
    );
    let mut seen = std::collections::BTreeSet::new();
    let mut i = 0u32;
    while seen.len() < count as usize {
        i += 1;
        let spread = i.wrapping_mul(0x9e37_79b9);
        let line = if tag == "v6" {
            let len = 16 + i % 33;
            let addr = (0x2000_0000_u128 | u128::from(spread >> 3)) << 96;
            let addr = addr & !(u128::MAX >> len);
            format!("{}/{len}", std::net::Ipv6Addr::from(addr))
        } else {
            let len = 8 + i % 17;
            // Clear of 198.18.0.0/15, the bench's uplink.
            let addr = (spread & !(u32::MAX >> len)) & 0xbfff_ffff;
            format!("{}/{len}", std::net::Ipv4Addr::from(addr))
        };
        if seen.insert(line.clone()) {
            writeln!(gz, "{line}").unwrap();
        }
    }
    gz.finish().unwrap();
}

/// One run of one pass: the least a test can time.
pub fn one_pass() -> Plan {
    Plan {
        runs: 1,
        min_run: Duration::from_millis(1),
        warm_up: Duration::ZERO,
    }
}

/// Quick mode, 2 threads, the tables in `dir`, no progress bars.
pub fn options(dir: &Path) -> Options {
    Options {
        quick: true,
        threads: Some(2),
        data_dir: Some(dir.to_path_buf()),
        progress: false,
        ..Options::default()
    }
}
