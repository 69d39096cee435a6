//! A minimal pcap (libpcap "classic" format) writer and reader, for tests,
//! debugging and feeding captured packets to fibre: a global header, then
//! one record per packet. The writer uses microsecond timestamps,
//! little-endian; the reader takes either byte order and microsecond or
//! nanosecond timestamps (what tcpdump, dumpcap `-F pcap` and tshark
//! `-F pcap` write), and refuses pcapng with a message saying how to
//! convert.
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

use std::io::{self, Read, Write};
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

/// Why a pcap stream could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PcapError {
    /// The stream failed (shown as the operating system's error itself,
    /// which is not given again as a source).
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The file is pcapng, not classic pcap.
    #[error("this is a pcapng file; fibre reads classic pcap (write it with `-F pcap`, or convert: `editcap -F pcap IN OUT`)")]
    Pcapng,
    /// The first four bytes are no pcap magic number.
    #[error("not a pcap file (magic number {0:#010x})")]
    BadMagic(u32),
    /// The stream ends inside a header or a packet.
    #[error("truncated {what} at byte {offset}")]
    Truncated {
        /// The global header, a record header or packet data.
        what: &'static str,
        /// Where the missing part starts.
        offset: u64,
    },
    /// A record claims more bytes than any capture keeps (libpcap's
    /// `pcap_next_packet` refuses it in the same words).
    #[error("record at byte {offset}: invalid packet capture length {len}, bigger than maximum of {MAX_RECORD}")]
    Oversized {
        /// Where the record starts.
        offset: u64,
        /// The length it claims.
        len: u32,
    },
}

/// One packet read from a pcap stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PcapPacket {
    /// Capture time since the Unix epoch.
    pub timestamp: Duration,
    /// The bytes captured (possibly fewer than the packet had).
    pub data: Vec<u8>,
    /// The packet's length on the wire.
    pub original_len: u32,
}

/// Reads a classic pcap stream packet by packet.
///
/// ```
/// use std::time::Duration;
/// use fibre_net::pcap::{LinkType, PcapReader, PcapWriter};
/// let mut w = PcapWriter::new(Vec::new(), LinkType::Ethernet).unwrap();
/// w.write_packet(Duration::from_micros(1_500_000), &[1, 2, 3]).unwrap();
/// let bytes = w.into_inner();
/// let mut r = PcapReader::new(&bytes[..]).unwrap();
/// assert_eq!(r.link_type(), 1);
/// let p = r.next_packet().unwrap().unwrap();
/// assert_eq!((p.timestamp, p.data), (Duration::from_micros(1_500_000), vec![1, 2, 3]));
/// assert!(r.next_packet().unwrap().is_none());
/// assert!(PcapReader::new(&b"\x0a\x0d\x0d\x0a...."[..]).is_err()); // pcapng
/// ```
#[derive(Debug)]
pub struct PcapReader<R: Read> {
    reader: R,
    big_endian: bool,
    nanos: bool,
    link_type: u32,
    /// Bytes kept of a record: the header's snapshot length.
    snaplen: u32,
    offset: u64,
}

/// The most bytes a record may claim: libpcap's `MAXIMUM_SNAPLEN`, its
/// largest snapshot length (`max_snaplen_for_dlt`).
pub const MAX_RECORD: u32 = 262_144;

/// The name tcpdump.org gives a LINKTYPE_ value, for the common ones.
///
/// ```
/// assert_eq!(fibre_net::pcap::link_type_name(1), Some("ETHERNET"));
/// assert_eq!(fibre_net::pcap::link_type_name(9999), None);
/// ```
pub fn link_type_name(value: u32) -> Option<&'static str> {
    Some(match value {
        0 => "NULL",
        1 => "ETHERNET",
        9 => "PPP",
        101 => "RAW",
        105 => "IEEE802_11",
        108 => "LOOP",
        113 => "LINUX_SLL",
        127 => "IEEE802_11_RADIOTAP",
        187 => "BLUETOOTH_HCI_H4",
        195 => "IEEE802_15_4_WITHFCS",
        220 => "USB_LINUX_MMAPPED",
        228 => "IPV4",
        229 => "IPV6",
        239 => "NFLOG",
        276 => "LINUX_SLL2",
        _ => return None,
    })
}

impl<R: Read> PcapReader<R> {
    /// Reads the global header.
    ///
    /// # Errors
    /// Not pcap (or pcapng), or a short header.
    pub fn new(mut reader: R) -> Result<PcapReader<R>, PcapError> {
        let mut header = [0u8; GLOBAL_HEADER_LEN];
        let truncated = PcapError::Truncated {
            what: "global header",
            offset: 0,
        };
        // The magic number first: a short pcapng file is still named as one.
        if !read_full(&mut reader, &mut header[..4])? {
            return Err(truncated);
        }
        let magic = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let (big_endian, nanos) = match magic {
            0xa1b2_c3d4 => (false, false),
            0xa1b2_3c4d => (false, true),
            0xd4c3_b2a1 => (true, false),
            0x4d3c_b2a1 => (true, true),
            0x0a0d_0d0a => return Err(PcapError::Pcapng),
            other => return Err(PcapError::BadMagic(other)),
        };
        if !read_full(&mut reader, &mut header[4..])? {
            return Err(truncated);
        }
        let mut r = PcapReader {
            reader,
            big_endian,
            nanos,
            link_type: 0,
            snaplen: MAX_RECORD,
            offset: GLOBAL_HEADER_LEN as u64,
        };
        r.link_type = r.u32_at(&header, 20);
        // As libpcap's `pcap_check_header`: a snapshot length of 0 or past
        // the maximum is taken as the maximum.
        r.snaplen = match r.u32_at(&header, 16) {
            0 => MAX_RECORD,
            snaplen => snaplen.min(MAX_RECORD),
        };
        Ok(r)
    }

    /// The link type of every record (tcpdump.org LINKTYPE_ value: 1
    /// Ethernet, 101 raw IP, 113 Linux cooked).
    pub fn link_type(&self) -> u32 {
        self.link_type
    }

    fn u32_at(&self, b: &[u8], at: usize) -> u32 {
        let bytes = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        if self.big_endian {
            u32::from_be_bytes(bytes)
        } else {
            u32::from_le_bytes(bytes)
        }
    }

    /// The next packet, or `None` at the end of the stream. A record
    /// longer than the header's snapshot length is cut to it, the rest
    /// skipped, as libpcap's `pcap_next_packet` does.
    ///
    /// # Errors
    /// A read error, a truncated record, or a record longer than any
    /// capture keeps ([`MAX_RECORD`]; refused before anything is allocated).
    pub fn next_packet(&mut self) -> Result<Option<PcapPacket>, PcapError> {
        let mut record = [0u8; RECORD_HEADER_LEN];
        let start = self.offset;
        match read_some(&mut self.reader, &mut record)? {
            0 => return Ok(None),
            RECORD_HEADER_LEN => {}
            _ => {
                return Err(PcapError::Truncated {
                    what: "record header",
                    offset: start,
                })
            }
        }
        let seconds = u64::from(self.u32_at(&record, 0));
        let fraction = self.u32_at(&record, 4);
        let kept = self.u32_at(&record, 8);
        let original_len = self.u32_at(&record, 12);
        if kept > MAX_RECORD {
            return Err(PcapError::Oversized {
                offset: start,
                len: kept,
            });
        }
        let truncated = PcapError::Truncated {
            what: "packet data",
            offset: start + RECORD_HEADER_LEN as u64,
        };
        let mut data = vec![0u8; kept.min(self.snaplen) as usize];
        if !read_full(&mut self.reader, &mut data)? {
            return Err(truncated);
        }
        let beyond = u64::from(kept - kept.min(self.snaplen));
        if io::copy(&mut (&mut self.reader).take(beyond), &mut io::sink())? != beyond {
            return Err(truncated);
        }
        self.offset = start + (RECORD_HEADER_LEN as u64) + u64::from(kept);
        let sub = if self.nanos {
            Duration::from_nanos(u64::from(fraction))
        } else {
            Duration::from_micros(u64::from(fraction))
        };
        Ok(Some(PcapPacket {
            timestamp: Duration::from_secs(seconds) + sub,
            data,
            original_len,
        }))
    }
}

/// Fills `buf`; false if the stream ended first.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    Ok(read_some(reader, buf)? == buf.len())
}

/// Reads until `buf` is full or the stream ends; returns how much was read.
fn read_some(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reader_takes_both_byte_orders_and_refuses_truncation() {
        let mut w = PcapWriter::new(Vec::new(), LinkType::Raw).unwrap();
        w.write_packet(Duration::from_millis(2_001), &[0x45; 20])
            .unwrap();
        w.write_packet(Duration::from_millis(3_002), &[0x60; 40])
            .unwrap();
        let little = w.into_inner();
        // The same file big-endian: every header word swapped.
        let mut big = little.clone();
        let swap = |b: &mut [u8], at: usize| b[at..at + 4].reverse();
        for at in (0..24).step_by(4).filter(|at| *at != 4) {
            swap(&mut big, at);
        }
        big[4..8].copy_from_slice(&[0, 2, 0, 4]);
        for record in [24, 24 + 16 + 20] {
            for at in (record..record + 16).step_by(4) {
                swap(&mut big, at);
            }
        }
        for bytes in [&little, &big] {
            let mut r = PcapReader::new(&bytes[..]).unwrap();
            assert_eq!(r.link_type(), 101);
            let a = r.next_packet().unwrap().unwrap();
            let b = r.next_packet().unwrap().unwrap();
            assert_eq!(
                (a.timestamp, a.data.len()),
                (Duration::from_millis(2_001), 20)
            );
            assert_eq!(
                (b.timestamp, b.data.len()),
                (Duration::from_millis(3_002), 40)
            );
            assert!(r.next_packet().unwrap().is_none());
        }
        for cut in [10, 30, 50] {
            let mut r = match PcapReader::new(&little[..cut]) {
                Ok(r) => r,
                Err(e) => {
                    assert!(matches!(e, PcapError::Truncated { .. }), "{e}");
                    continue;
                }
            };
            let err = loop {
                match r.next_packet() {
                    Ok(Some(_)) => continue,
                    Ok(None) => panic!("a cut file read to its end"),
                    Err(e) => break e,
                }
            };
            assert!(matches!(err, PcapError::Truncated { .. }), "{err}");
        }
        assert!(matches!(
            PcapReader::new(&[0u8; 24][..]),
            Err(PcapError::BadMagic(0))
        ));
    }

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
    fn records_past_the_snapshot_length_are_cut_and_past_the_maximum_refused() {
        let mut w = PcapWriter::new(Vec::new(), LinkType::Raw).unwrap();
        w.write_packet(Duration::ZERO, &[1u8; 100]).unwrap();
        w.write_packet(Duration::ZERO, &[2u8; 10]).unwrap();
        let mut bytes = w.into_inner();
        bytes[16..20].copy_from_slice(&64u32.to_le_bytes());
        let mut r = PcapReader::new(&bytes[..]).unwrap();
        let first = r.next_packet().unwrap().unwrap();
        assert_eq!((first.data, first.original_len), (vec![1u8; 64], 100));
        assert_eq!(r.next_packet().unwrap().unwrap().data, vec![2u8; 10]);
        assert!(r.next_packet().unwrap().is_none());
        // A record claiming 4 GiB is refused from its header alone.
        let at = GLOBAL_HEADER_LEN + 8;
        bytes[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        let err = PcapReader::new(&bytes[..])
            .unwrap()
            .next_packet()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "record at byte 24: invalid packet capture length 4294967295, bigger than maximum of 262144"
        );
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
