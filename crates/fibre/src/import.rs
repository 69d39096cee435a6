//! `fibre route import FILE[.gz]`: a plain prefix list (one prefix per
//! line, as the RIPE NCC RIS files in `data/`) loaded as routes.
//!
//! The data carries prefixes only, so next hops are made up, the same way
//! every run:
//!
//! * a dummy link `imp0` is created and brought up, with `198.18.0.1/15`
//!   (IPv4) and `2001:db8:ffff::1/64` (IPv6): RFC 2544's benchmark range and
//!   the documentation prefix, so they cannot clash with Internet prefixes;
//! * gateway `i` (0 ≤ i < N, `--nexthops N`) is `198.18.0.0 + 2 + i` or
//!   `2001:db8:ffff:: + 2 + i` on `imp0`;
//! * a prefix goes via gateway `fnv1a(address bytes ++ [length]) % N`
//!   (64-bit FNV-1a), as `route add PREFIX via GW dev imp0 table T` would.
//!
//! The list is streamed (a pipe, `/dev/stdin`, a gzip of any size): it is
//! opened once, gzip told by its first two bytes, read a line at a time
//! (at most [`MAX_LINE_BYTES`](fibre_fib::lines::MAX_LINE_BYTES) each) and applied [`CHUNK_PREFIXES`]
//! prefixes at a time, so memory does not grow with the file and a bad
//! line stops the import as soon as it is read.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use fibre_fib::lines::{io_message, LineError, LineReader};
use fibre_fib::{
    config, AddrOp, AddressSpec, Command, Family, Fib, LinkKind, NexthopSpec, Prefix, TableId,
};
use flate2::read::MultiGzDecoder;

/// The link the gateways sit on.
pub const IMPORT_LINK: &str = "imp0";
/// Most gateways `--nexthops` may ask for (all fit in the /15 and the /64).
pub const MAX_NEXTHOPS: u16 = 4096;
/// Prefixes read before they are applied: what the import holds at once.
pub const CHUNK_PREFIXES: usize = 1 << 16;
/// gzip's magic number (RFC 1952, section 2.3.1).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

const V4_SUBNET: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 0);
const V4_LEN: u8 = 15;
const V6_SUBNET: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0xffff, 0, 0, 0, 0, 0);
const V6_LEN: u8 = 64;

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportSummary {
    /// IPv4 routes added.
    pub v4: u64,
    /// IPv6 routes added.
    pub v6: u64,
    /// Gateways per family.
    pub nexthops: u16,
    /// Table filled.
    pub table: TableId,
    /// Time spent reading and applying.
    pub elapsed: Duration,
}

impl std::fmt::Display for ImportSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "imported {} routes ({} IPv4, {} IPv6) into table {} via {} next hops on {IMPORT_LINK} in {:.3} s",
            self.v4 + self.v6,
            self.v4,
            self.v6,
            fibre_fib::table_name(self.table),
            self.nexthops,
            self.elapsed.as_secs_f64()
        )
    }
}

/// The gateway a prefix is hashed onto (see the module documentation).
pub fn gateway_for(prefix: &Prefix, nexthops: u16) -> IpAddr {
    let index = u128::from(fnv1a(prefix) % u64::from(nexthops));
    gateway(prefix.family(), index)
}

fn gateway(family: Family, index: u128) -> IpAddr {
    match family {
        Family::V4 => IpAddr::V4(Ipv4Addr::from(u32::from(V4_SUBNET) + 2 + index as u32)),
        Family::V6 => IpAddr::V6(Ipv6Addr::from(u128::from(V6_SUBNET) + 2 + index)),
    }
}

fn fnv1a(prefix: &Prefix) -> u64 {
    let mut bytes = match prefix.addr() {
        IpAddr::V4(a) => a.octets().to_vec(),
        IpAddr::V6(a) => a.octets().to_vec(),
    };
    bytes.push(prefix.len());
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Opens a prefix list, decompressing when it starts with gzip's magic.
/// The file is opened and read once: its first bytes are put back in
/// front of the rest, so a pipe loses none of them.
fn open(path: &Path) -> Result<Box<dyn BufRead>> {
    let cannot_read =
        |err: io::Error| anyhow!("{}: cannot read: {}", path.display(), io_message(&err));
    let mut file = File::open(path).map_err(cannot_read)?;
    let mut magic = Vec::with_capacity(GZIP_MAGIC.len());
    (&mut file)
        .take(GZIP_MAGIC.len() as u64)
        .read_to_end(&mut magic)
        .map_err(cannot_read)?;
    let gzip = magic == GZIP_MAGIC;
    let stream = io::Cursor::new(magic).chain(file);
    if gzip {
        Ok(Box::new(BufReader::with_capacity(
            1 << 16,
            MultiGzDecoder::new(BufReader::new(stream)),
        )))
    } else {
        Ok(Box::new(BufReader::with_capacity(1 << 16, stream)))
    }
}

/// Reads one prefix line (`1.0.128.0/17`).
pub fn parse_prefix_line(line: &str) -> std::result::Result<Prefix, String> {
    let wanted = "expected a prefix such as 1.0.0.0/24 or 2001:db8::/32";
    let (addr, len) = line
        .split_once('/')
        .ok_or_else(|| format!("{wanted}, got \"{line}\""))?;
    let addr: IpAddr = addr
        .parse()
        .map_err(|_| format!("{wanted}, got \"{line}\""))?;
    let len: u8 = len
        .parse()
        .ok()
        .filter(|l| *l <= Family::of(&addr).bits())
        .ok_or_else(|| format!("{wanted}, got \"{line}\""))?;
    Prefix::new(addr, len)
        .map_err(|err| format!("{wanted} without host bits, got \"{line}\" ({err})"))
}

/// Sets up `imp0` and its subnet for `family`.
fn prepare(fib: &mut Fib, family: Family, link_made: &mut bool) -> Result<()> {
    if !*link_made {
        fib.apply(&Command::LinkAdd {
            name: IMPORT_LINK.into(),
            kind: LinkKind::Dummy,
            mtu: None,
        })
        .with_context(|| format!("creating link {IMPORT_LINK}"))?;
        fib.apply(&Command::LinkSet {
            name: IMPORT_LINK.into(),
            up: Some(true),
            mtu: None,
        })
        .with_context(|| format!("bringing {IMPORT_LINK} up"))?;
        *link_made = true;
    }
    let (local, prefix_len) = match family {
        Family::V4 => (IpAddr::V4(Ipv4Addr::from(u32::from(V4_SUBNET) + 1)), V4_LEN),
        Family::V6 => (
            IpAddr::V6(Ipv6Addr::from(u128::from(V6_SUBNET) + 1)),
            V6_LEN,
        ),
    };
    fib.apply(&Command::Addr {
        op: AddrOp::Add,
        spec: AddressSpec::new(IMPORT_LINK, local, prefix_len),
    })
    .with_context(|| format!("adding {local}/{prefix_len} to {IMPORT_LINK}"))?;
    Ok(())
}

/// Loads the prefix list at `path` into `fib`'s `table`, as it is read.
///
/// # Errors
/// A bad `--nexthops`, a file that cannot be read, a line that is no
/// prefix or is longer than [`MAX_LINE_BYTES`](fibre_fib::lines::MAX_LINE_BYTES), a prefix the FIB refuses
/// (`FILE:LINE: ...` each), or a list without prefixes. The prefixes of
/// the chunks before the bad line are in `fib` by then.
pub fn import(fib: &mut Fib, path: &Path, table: TableId, nexthops: u16) -> Result<ImportSummary> {
    if !(1..=MAX_NEXTHOPS).contains(&nexthops) {
        bail!("--nexthops: expected a number from 1 to {MAX_NEXTHOPS}, got {nexthops}");
    }
    // `route add ... table 0` puts the route in main (`fib_new_table` and
    // `fib6_new_table` read id 0 as main), where `ip -d route` shows it.
    let table = if table == fibre_fib::TABLE_UNSPEC {
        fibre_fib::TABLE_MAIN
    } else {
        table
    };
    let started = Instant::now();
    let name = path.display().to_string();
    let mut lines = LineReader::new(open(path)?);
    let mut summary = ImportSummary {
        v4: 0,
        v6: 0,
        nexthops,
        table,
        elapsed: Duration::ZERO,
    };
    let mut link_made = false;
    let mut chunk = Vec::with_capacity(CHUNK_PREFIXES);
    loop {
        chunk.clear();
        let more = read_prefixes(&name, &mut lines, &mut chunk)?;
        for (family, had) in [(Family::V4, summary.v4), (Family::V6, summary.v6)] {
            if had == 0 && chunk.iter().any(|(prefix, _)| prefix.family() == family) {
                prepare(fib, family, &mut link_made)?;
            }
        }
        let routes = chunk.iter().map(|(prefix, _)| {
            let path = NexthopSpec {
                gateway: Some(gateway_for(prefix, nexthops)),
                dev: Some(IMPORT_LINK.into()),
                weight: 1,
                onlink: false,
            };
            (*prefix, path)
        });
        fib.import(table, routes).map_err(|err| {
            let line = chunk.get(err.index).map_or(0, |(_, line)| *line);
            anyhow!("{name}:{line}: {}: {}", err.prefix, err.error)
        })?;
        for (prefix, _) in &chunk {
            match prefix.family() {
                Family::V4 => summary.v4 += 1,
                Family::V6 => summary.v6 += 1,
            }
        }
        // An endless list of distinct prefixes is bounded by what the FIB
        // takes, as a configuration is (`config::MAX_ADDRESS_SPACE`).
        if let Some(message) =
            config::past_memory_limit(config::address_space(), config::MAX_ADDRESS_SPACE)
        {
            let line = chunk.last().map_or(0, |(_, line)| *line);
            bail!("{name}:{line}: {message}");
        }
        if !more {
            break;
        }
    }
    if summary.v4 + summary.v6 == 0 {
        bail!("{name}: no prefixes found; expected one prefix per line such as 1.0.0.0/24");
    }
    summary.elapsed = started.elapsed();
    Ok(summary)
}

/// Reads prefixes into `chunk`, with their line numbers, until it holds
/// [`CHUNK_PREFIXES`] (then true) or the list ends (then false); blank
/// and `#` lines are skipped.
fn read_prefixes(
    name: &str,
    lines: &mut LineReader<Box<dyn BufRead>>,
    chunk: &mut Vec<(Prefix, usize)>,
) -> Result<bool> {
    while chunk.len() < CHUNK_PREFIXES {
        let line = match lines.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => return Ok(false),
            Err(LineError::Io(err)) => bail!(
                "{name}:{}: cannot read (corrupt gzip or not text): {}",
                lines.line_number(),
                io_message(&err)
            ),
            Err(err) => bail!("{name}:{}: {err}", lines.line_number()),
        };
        let number = line.number;
        let line = std::str::from_utf8(line.bytes).map_err(|err| {
            anyhow!(
                "{name}:{number}: not text (invalid UTF-8 at column {}); expected one prefix per \
                 line such as 1.0.0.0/24",
                err.valid_up_to() + 1
            )
        })?;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let prefix = parse_prefix_line(line).map_err(|msg| anyhow!("{name}:{number}: {msg}"))?;
        chunk.push((prefix, number));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Prefix {
        parse_prefix_line(s).unwrap()
    }

    #[test]
    fn prefix_lines() {
        assert_eq!(p("1.0.128.0/17").to_string(), "1.0.128.0/17");
        assert_eq!(p("2001:1201:10::/48").to_string(), "2001:1201:10::/48");
        assert!(parse_prefix_line("1.0.128.1/17")
            .unwrap_err()
            .contains("host bits"));
        assert!(parse_prefix_line("1.0.0.0")
            .unwrap_err()
            .contains("got \"1.0.0.0\""));
        assert!(parse_prefix_line("1.0.0.0/33").is_err());
        assert!(parse_prefix_line("banana/8").is_err());
    }

    #[test]
    fn gateways_are_deterministic_and_in_range() {
        let prefix = p("1.0.0.0/24");
        assert_eq!(gateway_for(&prefix, 4), gateway_for(&prefix, 4));
        for n in [1u16, 2, 4, 16] {
            for s in ["1.0.0.0/24", "8.8.8.0/24", "193.0.0.0/21", "10.0.0.0/8"] {
                let IpAddr::V4(gw) = gateway_for(&p(s), n) else {
                    panic!()
                };
                let offset = u32::from(gw) - u32::from(V4_SUBNET);
                assert!((2..2 + u32::from(n)).contains(&offset), "{s} {n} {gw}");
            }
        }
        let IpAddr::V6(gw) = gateway_for(&p("2001:db8::/32"), 1) else {
            panic!()
        };
        assert_eq!(gw, "2001:db8:ffff::2".parse::<Ipv6Addr>().unwrap());
    }

    #[test]
    fn hash_spreads_prefixes() {
        let mut counts = [0u32; 4];
        for i in 0..4096u32 {
            let prefix = Prefix::new(IpAddr::V4(Ipv4Addr::from(i << 8)), 24).unwrap();
            let IpAddr::V4(gw) = gateway_for(&prefix, 4) else {
                panic!()
            };
            counts[(u32::from(gw) - u32::from(V4_SUBNET) - 2) as usize] += 1;
        }
        assert!(counts.iter().all(|c| (900..1150).contains(c)), "{counts:?}");
    }

    #[test]
    fn gzip_is_detected_by_magic() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("fibre-import-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let gz = dir.join("list.txt");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"1.0.0.0/24\n").unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        let mut text = String::new();
        open(&gz).unwrap().read_to_string(&mut text).unwrap();
        assert_eq!(text, "1.0.0.0/24\n");
        let corrupt = dir.join("bad.gz");
        std::fs::write(&corrupt, [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 1, 2, 3]).unwrap();
        let mut text = String::new();
        assert!(open(&corrupt).unwrap().read_to_string(&mut text).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
