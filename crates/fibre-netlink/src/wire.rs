//! The netlink framing (`include/uapi/linux/netlink.h`): message headers
//! and attributes, read bounds-checked from bytes a socket received.
//!
//! Every length is checked against what is left before it is used: a
//! message or attribute that claims more bytes than there are, or fewer
//! than its own header, is an error ([`WireError`]), never a panic or a
//! read past the buffer.

use thiserror::Error;

/// `sizeof(struct nlmsghdr)`.
pub const NLMSG_HDRLEN: usize = 16;
/// `NLMSG_NOOP`.
pub const NLMSG_NOOP: u16 = 1;
/// `NLMSG_ERROR`.
pub const NLMSG_ERROR: u16 = 2;
/// `NLMSG_DONE`.
pub const NLMSG_DONE: u16 = 3;
/// `NLMSG_OVERRUN`.
pub const NLMSG_OVERRUN: u16 = 4;

/// `NLM_F_REQUEST`.
pub const NLM_F_REQUEST: u16 = 0x1;
/// `NLM_F_MULTI`: part of a dump.
pub const NLM_F_MULTI: u16 = 0x2;
/// `NLM_F_DUMP_INTR`: the dump's object set changed while it was taken.
pub const NLM_F_DUMP_INTR: u16 = 0x10;
/// `NLM_F_REPLACE` (new requests and notifications).
pub const NLM_F_REPLACE: u16 = 0x100;
/// `NLM_F_EXCL`.
pub const NLM_F_EXCL: u16 = 0x200;
/// `NLM_F_CREATE`.
pub const NLM_F_CREATE: u16 = 0x400;
/// `NLM_F_APPEND`.
pub const NLM_F_APPEND: u16 = 0x800;
/// `NLM_F_DUMP` (`NLM_F_ROOT | NLM_F_MATCH`).
pub const NLM_F_DUMP: u16 = 0x300;

/// `NLA_TYPE_MASK`: the attribute type without the nested and byte-order bits.
const NLA_TYPE_MASK: u16 = 0x3fff;

/// Why bytes are not a well-formed netlink message.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WireError {
    /// A header claims a length shorter than itself or longer than what is left.
    #[error("{what} at byte {offset}: length {claimed} does not fit the {left} bytes left")]
    BadLength {
        /// Message or attribute.
        what: &'static str,
        /// Where it starts in the buffer read.
        offset: usize,
        /// The length its header claims.
        claimed: usize,
        /// The bytes that were left.
        left: usize,
    },
    /// A fixed header (ifinfomsg, rtmsg, ...) is cut short.
    #[error("message type {kind}: {needed}-byte {header} cut to {got} bytes")]
    ShortHeader {
        /// The netlink message type.
        kind: u16,
        /// The header's C name.
        header: &'static str,
        /// Its size.
        needed: usize,
        /// The bytes there were.
        got: usize,
    },
    /// An attribute's payload has the wrong size for its type.
    #[error("attribute {name} ({number}): {got} bytes, expected {expected}")]
    BadAttribute {
        /// The attribute's C name.
        name: &'static str,
        /// Its type number.
        number: u16,
        /// The payload size there was.
        got: usize,
        /// What was expected ("4", "4 or 16", ...).
        expected: &'static str,
    },
}

/// `NLMSG_ALIGN` / `NLA_ALIGN`: lengths round up to 4 bytes.
pub fn align(len: usize) -> usize {
    (len + 3) & !3
}

/// One message of a received buffer: its header and the bytes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawMessage<'a> {
    /// `nlmsg_type`.
    pub kind: u16,
    /// `nlmsg_flags`.
    pub flags: u16,
    /// `nlmsg_seq`.
    pub seq: u32,
    /// `nlmsg_pid`.
    pub pid: u32,
    /// The payload (`NLMSG_DATA`, up to `nlmsg_len`).
    pub payload: &'a [u8],
}

/// The messages of one received datagram, in order (`NLMSG_NEXT`); stops
/// at the first malformed header, which it yields as an error.
///
/// ```
/// use fibre_netlink::wire::{messages, NLMSG_DONE};
/// let mut done = vec![20, 0, 0, 0, 3, 0, 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
/// let all: Vec<_> = messages(&done).collect();
/// assert_eq!(all.len(), 1);
/// assert_eq!(all[0].as_ref().unwrap().kind, NLMSG_DONE);
/// done[0] = 200; // longer than the buffer
/// assert!(messages(&done).next().unwrap().is_err());
/// ```
pub fn messages(buf: &[u8]) -> Messages<'_> {
    Messages {
        buf,
        offset: 0,
        failed: false,
    }
}

/// Iterator of [`messages`].
#[derive(Debug, Clone)]
pub struct Messages<'a> {
    buf: &'a [u8],
    offset: usize,
    failed: bool,
}

impl<'a> Iterator for Messages<'a> {
    type Item = Result<RawMessage<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.buf.get(self.offset..)?;
        if self.failed || rest.len() < NLMSG_HDRLEN {
            // Trailing bytes shorter than a header are padding.
            return None;
        }
        let len = u32::from_ne_bytes(rest[0..4].try_into().expect("4 bytes")) as usize;
        if len < NLMSG_HDRLEN || len > rest.len() {
            self.failed = true;
            return Some(Err(WireError::BadLength {
                what: "message",
                offset: self.offset,
                claimed: len,
                left: rest.len(),
            }));
        }
        let message = RawMessage {
            kind: u16::from_ne_bytes([rest[4], rest[5]]),
            flags: u16::from_ne_bytes([rest[6], rest[7]]),
            seq: u32::from_ne_bytes(rest[8..12].try_into().expect("4 bytes")),
            pid: u32::from_ne_bytes(rest[12..16].try_into().expect("4 bytes")),
            payload: &rest[NLMSG_HDRLEN..len],
        };
        self.offset += align(len).min(rest.len());
        Some(Ok(message))
    }
}

/// One attribute (`struct nlattr`): type without flag bits, payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attr<'a> {
    /// `nla_type & NLA_TYPE_MASK`.
    pub kind: u16,
    /// The payload.
    pub payload: &'a [u8],
}

impl<'a> Attr<'a> {
    /// The payload as a native-endian u32 (`nla_get_u32`).
    pub fn u32(&self, name: &'static str) -> Result<u32, WireError> {
        self.payload
            .try_into()
            .map(u32::from_ne_bytes)
            .map_err(|_| self.bad(name, "4"))
    }

    /// The payload as a u16 (`nla_get_u16`).
    pub fn u16(&self, name: &'static str) -> Result<u16, WireError> {
        self.payload
            .try_into()
            .map(u16::from_ne_bytes)
            .map_err(|_| self.bad(name, "2"))
    }

    /// The payload as a u8 (`nla_get_u8`).
    pub fn u8(&self, name: &'static str) -> Result<u8, WireError> {
        match self.payload {
            [b] => Ok(*b),
            _ => Err(self.bad(name, "1")),
        }
    }

    /// The payload as a u64 (`nla_get_u64`; the kernel pads such
    /// attributes, so only the length is checked).
    pub fn u64(&self, name: &'static str) -> Result<u64, WireError> {
        self.payload
            .try_into()
            .map(u64::from_ne_bytes)
            .map_err(|_| self.bad(name, "8"))
    }

    /// A NUL-terminated string (`nla_strscpy`); bytes after the first NUL
    /// are ignored, invalid UTF-8 is replaced.
    pub fn string(&self) -> String {
        let end = self
            .payload
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.payload.len());
        String::from_utf8_lossy(&self.payload[..end]).into_owned()
    }

    /// The error for a payload of the wrong size.
    pub fn bad(&self, name: &'static str, expected: &'static str) -> WireError {
        WireError::BadAttribute {
            name,
            number: self.kind,
            got: self.payload.len(),
            expected,
        }
    }
}

/// The attributes in `buf` (`nla_for_each_attr`), in order; a malformed
/// one ends the walk with an error.
///
/// ```
/// use fibre_netlink::wire::attrs;
/// let buf = [8, 0, 4, 0, 0xdc, 5, 0, 0]; // IFLA_MTU 1500
/// let attr = attrs(&buf).next().unwrap().unwrap();
/// assert_eq!((attr.kind, attr.u32("IFLA_MTU").unwrap()), (4, 1500));
/// ```
pub fn attrs(buf: &[u8]) -> Attrs<'_> {
    Attrs {
        buf,
        offset: 0,
        failed: false,
    }
}

/// Iterator of [`attrs`].
#[derive(Debug, Clone)]
pub struct Attrs<'a> {
    buf: &'a [u8],
    offset: usize,
    failed: bool,
}

impl<'a> Iterator for Attrs<'a> {
    type Item = Result<Attr<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.buf.get(self.offset..)?;
        if self.failed || rest.len() < 4 {
            return None;
        }
        let len = u16::from_ne_bytes([rest[0], rest[1]]) as usize;
        if len < 4 || len > rest.len() {
            self.failed = true;
            return Some(Err(WireError::BadLength {
                what: "attribute",
                offset: self.offset,
                claimed: len,
                left: rest.len(),
            }));
        }
        let attr = Attr {
            kind: u16::from_ne_bytes([rest[2], rest[3]]) & NLA_TYPE_MASK,
            payload: &rest[4..len],
        };
        self.offset += align(len).min(rest.len());
        Some(Ok(attr))
    }
}

/// Builds netlink messages: requests to the kernel, and the messages tests
/// and fuzz seeds need (the inverse of [`messages`] and [`attrs`]).
///
/// ```
/// use fibre_netlink::wire::{messages, Builder};
/// let mut b = Builder::new(18, 0x301, 7); // RTM_GETLINK dump
/// b.header(&[0u8; 16]);
/// b.attr_u32(29, 1); // IFLA_EXT_MASK
/// let bytes = b.finish();
/// let m = messages(&bytes).next().unwrap().unwrap();
/// assert_eq!((m.kind, m.flags, m.seq, m.payload.len()), (18, 0x301, 7, 24));
/// ```
#[derive(Debug, Clone)]
pub struct Builder {
    bytes: Vec<u8>,
    nests: Vec<usize>,
}

impl Builder {
    /// A message of type `kind` with `flags` and sequence number `seq`.
    pub fn new(kind: u16, flags: u16, seq: u32) -> Builder {
        let mut bytes = vec![0u8; NLMSG_HDRLEN];
        bytes[4..6].copy_from_slice(&kind.to_ne_bytes());
        bytes[6..8].copy_from_slice(&flags.to_ne_bytes());
        bytes[8..12].copy_from_slice(&seq.to_ne_bytes());
        Builder {
            bytes,
            nests: Vec::new(),
        }
    }

    /// Appends the fixed family header (ifinfomsg, rtmsg, ...), padded.
    pub fn header(&mut self, header: &[u8]) -> &mut Self {
        self.bytes.extend_from_slice(header);
        self.pad();
        self
    }

    /// Appends an attribute.
    pub fn attr(&mut self, kind: u16, payload: &[u8]) -> &mut Self {
        let len = 4 + payload.len();
        self.bytes
            .extend_from_slice(&u16::try_from(len).unwrap_or(u16::MAX).to_ne_bytes());
        self.bytes.extend_from_slice(&kind.to_ne_bytes());
        self.bytes.extend_from_slice(payload);
        self.pad();
        self
    }

    /// Appends a u32 attribute.
    pub fn attr_u32(&mut self, kind: u16, value: u32) -> &mut Self {
        self.attr(kind, &value.to_ne_bytes())
    }

    /// Opens a nested attribute; [`Builder::end_nest`] closes it.
    pub fn nest(&mut self, kind: u16) -> &mut Self {
        self.nests.push(self.bytes.len());
        self.attr(kind | 0x8000, &[])
    }

    /// Closes the innermost nested attribute, fixing its length.
    pub fn end_nest(&mut self) -> &mut Self {
        if let Some(start) = self.nests.pop() {
            let len = u16::try_from(self.bytes.len() - start).unwrap_or(u16::MAX);
            self.bytes[start..start + 2].copy_from_slice(&len.to_ne_bytes());
        }
        self
    }

    /// Appends raw bytes (a nested structure such as `rtnexthop`).
    pub fn raw(&mut self, bytes: &[u8]) -> &mut Self {
        self.bytes.extend_from_slice(bytes);
        self
    }

    /// The bytes written so far from `start` (for structures whose length
    /// field comes first, such as `rtnexthop`).
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether only the header was written.
    pub fn is_empty(&self) -> bool {
        self.bytes.len() == NLMSG_HDRLEN
    }

    /// Overwrites a u16 at `at` (a structure's length, known once it is written).
    pub fn patch_u16(&mut self, at: usize, value: u16) -> &mut Self {
        if let Some(slot) = self.bytes.get_mut(at..at + 2) {
            slot.copy_from_slice(&value.to_ne_bytes());
        }
        self
    }

    /// The finished message, its length filled in.
    pub fn finish(mut self) -> Vec<u8> {
        let len = u32::try_from(self.bytes.len()).unwrap_or(u32::MAX);
        self.bytes[0..4].copy_from_slice(&len.to_ne_bytes());
        self.bytes
    }

    fn pad(&mut self) {
        let padded = align(self.bytes.len());
        self.bytes.resize(padded, 0);
    }
}
