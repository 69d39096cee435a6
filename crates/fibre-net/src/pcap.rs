//! A minimal pcap (libpcap "classic" format) writer, for tests and
//! debugging: a global header, then one record per packet, microsecond
//! timestamps, little-endian.
//!
//! ```
//! use std::time::Duration;
//! use fibre_net::pcap::{LinkType, PcapWriter};
//! let mut w = PcapWriter::new(Vec::new(), LinkType::Raw).unwrap();
//! w.write_packet(Duration::from_micros(1_500_000), &[0x45, 0, 0, 20]).unwrap();
//! let bytes = w.into_inner();
//! assert_eq!(&bytes[..4], &[0xd4, 0xc3, 0xb2, 0xa1]); // magic, microsecond resolution
//! assert_eq!(bytes.len(), 24 + 16 + 4);
//! ```

use std::io::{self, Write};
use std::time::Duration;

/// Length of the global header.
pub const GLOBAL_HEADER_LEN: usize = 24;
/// Length of a record header.
pub const RECORD_HEADER_LEN: usize = 16;
/// Bytes kept of each packet; longer packets are truncated in the file.
pub const SNAPLEN: u32 = 65_535;

const MAGIC_MICROS: u32 = 0xa1b2_c3d4;

/// What the first byte of every record is (tcpdump.org LINKTYPE_ values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkType {
    /// LINKTYPE_ETHERNET (1): records start with an Ethernet II header.
    Ethernet,
    /// LINKTYPE_RAW (101): records start with an IPv4 or IPv6 header.
    Raw,
}

impl LinkType {
    /// The value written in the global header.
    pub const fn value(self) -> u32 {
        match self {
            LinkType::Ethernet => 1,
            LinkType::Raw => 101,
        }
    }
}

/// Writes a pcap stream to `W`.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    writer: W,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the global header and returns the writer.
    pub fn new(mut writer: W, link_type: LinkType) -> io::Result<PcapWriter<W>> {
        let mut header = [0u8; GLOBAL_HEADER_LEN];
        header[0..4].copy_from_slice(&MAGIC_MICROS.to_le_bytes());
        header[4..6].copy_from_slice(&2u16.to_le_bytes()); // version 2.4
        header[6..8].copy_from_slice(&4u16.to_le_bytes());
        // 8..16: time zone offset and accuracy, both 0.
        header[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
        header[20..24].copy_from_slice(&link_type.value().to_le_bytes());
        writer.write_all(&header)?;
        Ok(PcapWriter { writer })
    }

    /// Appends one packet captured at `timestamp` (since the Unix epoch).
    /// Packets longer than [`SNAPLEN`] are cut, with their original length
    /// recorded. Timestamps past 2106 are refused.
    pub fn write_packet(&mut self, timestamp: Duration, data: &[u8]) -> io::Result<()> {
        let seconds = u32::try_from(timestamp.as_secs()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "pcap timestamps end in 2106 (32-bit seconds)",
            )
        })?;
        let original_len = u32::try_from(data.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "packet longer than 4 GiB"))?;
        let kept = original_len.min(SNAPLEN);
        let mut record = [0u8; RECORD_HEADER_LEN];
        record[0..4].copy_from_slice(&seconds.to_le_bytes());
        record[4..8].copy_from_slice(&timestamp.subsec_micros().to_le_bytes());
        record[8..12].copy_from_slice(&kept.to_le_bytes());
        record[12..16].copy_from_slice(&original_len.to_le_bytes());
        self.writer.write_all(&record)?;
        self.writer.write_all(&data[..kept as usize])
    }

    /// Flushes and gives the writer back.
    pub fn into_inner(mut self) -> W {
        // A flush failure will surface again on the caller's next write.
        let _ = self.writer.flush();
        self.writer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    #[test]
    fn writes_headers_and_records() {
        let mut w = PcapWriter::new(Vec::new(), LinkType::Ethernet).unwrap();
        w.write_packet(Duration::new(1_700_000_000, 123_456_789), &[1, 2, 3])
            .unwrap();
        w.write_packet(Duration::ZERO, &[]).unwrap();
        let b = w.into_inner();
        assert_eq!(u32_at(&b, 0), MAGIC_MICROS);
        assert_eq!((b[4], b[6]), (2, 4));
        assert_eq!(u32_at(&b, 16), SNAPLEN);
        assert_eq!(u32_at(&b, 20), 1);
        let r = GLOBAL_HEADER_LEN;
        assert_eq!(u32_at(&b, r), 1_700_000_000);
        assert_eq!(u32_at(&b, r + 4), 123_456);
        assert_eq!((u32_at(&b, r + 8), u32_at(&b, r + 12)), (3, 3));
        assert_eq!(&b[r + 16..r + 19], &[1, 2, 3]);
        assert_eq!(b.len(), GLOBAL_HEADER_LEN + 2 * RECORD_HEADER_LEN + 3);
    }

    #[test]
    fn long_packets_are_cut_and_late_timestamps_refused() {
        let mut w = PcapWriter::new(Vec::new(), LinkType::Raw).unwrap();
        w.write_packet(Duration::ZERO, &vec![7u8; 70_000]).unwrap();
        let err = w
            .write_packet(Duration::from_secs(u64::from(u32::MAX) + 1), &[1])
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let b = w.into_inner();
        assert_eq!(u32_at(&b, 20), 101);
        let r = GLOBAL_HEADER_LEN;
        assert_eq!((u32_at(&b, r + 8), u32_at(&b, r + 12)), (SNAPLEN, 70_000));
        assert_eq!(b.len(), GLOBAL_HEADER_LEN + RECORD_HEADER_LEN + 65_535);
    }
}
