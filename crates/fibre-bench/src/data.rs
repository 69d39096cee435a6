//! The routing data: where the RIS files are, and how their lines parse.
//!
//! A table file holds one prefix per line (`1.0.128.0/17`,
//! `2001:1201:10::/48`); an update file holds `A PREFIX` (announce) or
//! `W PREFIX` (withdraw) lines in time order. Both are gzip-compressed.
//! Blank lines are skipped; anything else that does not parse is an error
//! naming the file and line.

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

use crate::family::Family;
use crate::progress::Progress;
use crate::BenchError;

/// The RIS snapshot the experiments read: its file names start with this.
pub const SNAPSHOT: &str = "ris-2026-05-11-as3333";

/// A prefix: `len` leading bits of `addr`; the other bits are zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Prefix<K> {
    /// The address, host bits cleared.
    pub addr: K,
    /// The prefix length in bits.
    pub len: u8,
}

impl<K: Family> fmt::Display for Prefix<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr.format_addr(), self.len)
    }
}

/// One line of an update file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Update<K> {
    /// `A PREFIX`: the prefix is (re)announced.
    Announce(Prefix<K>),
    /// `W PREFIX`: the prefix is withdrawn.
    Withdraw(Prefix<K>),
}

/// Parses `ADDR/LEN`, refusing lengths beyond the family and set host bits.
///
/// ```
/// use fibre_bench::data::{parse_prefix, Prefix};
/// assert_eq!(parse_prefix::<u32>("10.1.0.0/16"), Ok(Prefix { addr: 0x0a01_0000, len: 16 }));
/// assert!(parse_prefix::<u32>("10.1.0.1/16").is_err());
/// ```
pub fn parse_prefix<K: Family>(text: &str) -> Result<Prefix<K>, String> {
    let (addr_text, len_text) = text
        .split_once('/')
        .ok_or_else(|| format!("expected ADDRESS/LENGTH, found {text:?}"))?;
    let addr = K::parse_addr(addr_text)
        .ok_or_else(|| format!("{addr_text:?} is not an {} address", K::NAME))?;
    let len: u8 = len_text
        .parse()
        .map_err(|_| format!("{len_text:?} is not a prefix length"))?;
    if len > K::BITS {
        return Err(format!(
            "prefix length /{len} is longer than the {} bits of an {} address",
            K::BITS,
            K::NAME
        ));
    }
    if addr.and(K::prefix_mask(len)) != addr {
        return Err(format!("{text} has host bits set beyond /{len}"));
    }
    Ok(Prefix { addr, len })
}

/// Parses one update line: `A PREFIX` or `W PREFIX`.
///
/// ```
/// use fibre_bench::data::{parse_update, Prefix, Update};
/// let p = Prefix { addr: 0x0a00_0000u32, len: 8 };
/// assert_eq!(parse_update::<u32>("W 10.0.0.0/8"), Ok(Update::Withdraw(p)));
/// ```
pub fn parse_update<K: Family>(line: &str) -> Result<Update<K>, String> {
    let (kind, prefix_text) = line
        .split_once(' ')
        .ok_or_else(|| format!("expected `A PREFIX` or `W PREFIX`, found {line:?}"))?;
    let prefix = parse_prefix(prefix_text.trim())?;
    match kind {
        "A" => Ok(Update::Announce(prefix)),
        "W" => Ok(Update::Withdraw(prefix)),
        other => Err(format!("unknown update kind {other:?}: expected A or W")),
    }
}

/// Calls `each` with the number (from 1) and text of every non-blank line of
/// the gzip file at `path`, until `each` returns `Ok(false)` or the file ends.
fn for_each_gz_line(
    path: &Path,
    progress: &Progress,
    mut each: impl FnMut(usize, &str) -> Result<bool, String>,
) -> Result<(), BenchError> {
    let io_error = |source| BenchError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io_error)?;
    let size = file.metadata().map_err(io_error)?.len();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let bar = progress.bytes_bar(size, format!("reading {name}"));
    let mut lines = BufReader::new(MultiGzDecoder::new(bar.wrap_read(file)));
    let mut line = String::new();
    let mut number = 0;
    loop {
        line.clear();
        if lines.read_line(&mut line).map_err(io_error)? == 0 {
            break;
        }
        number += 1;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let more = each(number, text).map_err(|message| BenchError::Parse {
            path: path.to_path_buf(),
            line: number,
            message,
        })?;
        if !more {
            break;
        }
    }
    bar.finish_and_clear();
    Ok(())
}

/// Reads a gzip table file: one prefix per line.
pub fn load_table<K: Family>(
    path: &Path,
    progress: &Progress,
) -> Result<Vec<Prefix<K>>, BenchError> {
    let mut table = Vec::new();
    for_each_gz_line(path, progress, |_, text| {
        table.push(parse_prefix(text)?);
        Ok(true)
    })?;
    Ok(table)
}

/// Reads a gzip update file, at most `limit` updates when given.
pub fn load_updates<K: Family>(
    path: &Path,
    limit: Option<usize>,
    progress: &Progress,
) -> Result<Vec<Update<K>>, BenchError> {
    let mut updates = Vec::new();
    let limit = limit.unwrap_or(usize::MAX);
    if limit == 0 {
        return Ok(updates);
    }
    for_each_gz_line(path, progress, |_, text| {
        updates.push(parse_update(text)?);
        Ok(updates.len() < limit)
    })?;
    Ok(updates)
}

/// The data directory of the workspace this crate was compiled in.
pub fn compiled_data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

/// The path of the full table of family `K` under `dir`.
pub fn table_path<K: Family>(dir: &Path) -> PathBuf {
    dir.join(format!("{SNAPSHOT}-{}.txt.gz", K::FILE_TAG))
}

/// The path of the update stream of family `K` under `dir`.
pub fn updates_path<K: Family>(dir: &Path) -> PathBuf {
    dir.join(format!("{SNAPSHOT}-{}-updates.txt.gz", K::FILE_TAG))
}

/// Finds the data directory: `explicit` when given (it must hold the IPv4
/// table), else the workspace's `data/` as compiled in, else `data/` under
/// the current directory.
///
/// ```
/// use fibre_bench::data::resolve_data_dir;
/// let error = resolve_data_dir(Some(std::path::Path::new("/nonexistent"))).unwrap_err();
/// assert!(error.to_string().contains("--data"));
/// ```
pub fn resolve_data_dir(explicit: Option<&Path>) -> Result<PathBuf, BenchError> {
    let candidates: Vec<PathBuf> = match explicit {
        Some(dir) => vec![dir.to_path_buf()],
        None => vec![compiled_data_dir(), PathBuf::from("data")],
    };
    for dir in &candidates {
        if table_path::<u32>(dir).is_file() {
            return Ok(dir.clone());
        }
    }
    let tried = candidates
        .iter()
        .map(|d| table_path::<u32>(d).display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    Err(BenchError::DataNotFound { tried })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::write::GzEncoder;
    use flate2::Compression;

    use super::*;

    #[test]
    fn parses_ipv4_and_ipv6_prefixes() {
        assert_eq!(
            parse_prefix::<u32>("1.0.128.0/17"),
            Ok(Prefix {
                addr: 0x0100_8000,
                len: 17
            })
        );
        assert_eq!(
            parse_prefix::<u32>("0.0.0.0/0"),
            Ok(Prefix { addr: 0, len: 0 })
        );
        assert_eq!(
            parse_prefix::<u128>("2001:1201:10::/48"),
            Ok(Prefix {
                addr: 0x2001_1201_0010_u128 << 80,
                len: 48
            })
        );
    }

    #[test]
    fn refuses_malformed_prefixes() {
        for bad in [
            "1.0.128.0",
            "1.0.128/17",
            "1.0.128.0/33",
            "1.0.128.0/x",
            "1.0.128.1/17",
            "2001::/16",
            "",
        ] {
            assert!(parse_prefix::<u32>(bad).is_err(), "accepted {bad:?}");
        }
        assert!(parse_prefix::<u128>("2001::/129").is_err());
        assert!(parse_prefix::<u128>("10.0.0.0/8").is_err());
        let message = parse_prefix::<u32>("10.0.0.1/8").unwrap_err();
        assert!(message.contains("host bits"), "{message}");
    }

    #[test]
    fn parses_updates() {
        let p = Prefix {
            addr: 0xcc7e_8100_u32,
            len: 24,
        };
        assert_eq!(parse_update("A 204.126.129.0/24"), Ok(Update::Announce(p)));
        assert_eq!(parse_update("W 204.126.129.0/24"), Ok(Update::Withdraw(p)));
        assert!(parse_update::<u32>("X 204.126.129.0/24").is_err());
        assert!(parse_update::<u32>("A").is_err());
        assert!(parse_update::<u32>("A 204.126.129.1/24").is_err());
    }

    fn write_gz(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        let mut encoder = GzEncoder::new(File::create(&path).unwrap(), Compression::fast());
        encoder.write_all(text.as_bytes()).unwrap();
        encoder.finish().unwrap();
        path
    }

    #[test]
    fn loads_gzip_files_and_names_the_bad_line() {
        let dir = tempfile::tempdir().unwrap();
        let progress = Progress::new(false);
        let table = write_gz(dir.path(), "t.gz", "10.0.0.0/8\n\n10.1.0.0/16\n");
        let loaded = load_table::<u32>(&table, &progress).unwrap();
        assert_eq!(loaded.len(), 2);
        assert_eq!(loaded[1].to_string(), "10.1.0.0/16");

        let updates = write_gz(
            dir.path(),
            "u.gz",
            "A 10.2.0.0/16\nW 10.0.0.0/8\nA 10.3.0.0/16\n",
        );
        assert_eq!(
            load_updates::<u32>(&updates, None, &progress)
                .unwrap()
                .len(),
            3
        );
        assert_eq!(
            load_updates::<u32>(&updates, Some(2), &progress)
                .unwrap()
                .len(),
            2
        );
        assert!(load_updates::<u32>(&updates, Some(0), &progress)
            .unwrap()
            .is_empty());

        let bad = write_gz(dir.path(), "bad.gz", "10.0.0.0/8\n10.0.0.300/32\n");
        let error = load_table::<u32>(&bad, &progress).unwrap_err().to_string();
        assert!(error.contains("bad.gz:2:"), "{error}");
    }

    #[test]
    fn missing_data_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = resolve_data_dir(Some(dir.path())).unwrap_err().to_string();
        assert!(error.contains("--data"), "{error}");
        write_gz(dir.path(), &format!("{SNAPSHOT}-v4.txt.gz"), "10.0.0.0/8\n");
        assert_eq!(resolve_data_dir(Some(dir.path())).unwrap(), dir.path());
    }
}
