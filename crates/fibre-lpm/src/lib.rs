//! Longest-prefix match (LPM) for IPv4 and IPv6 keys.
//!
//! [`Poptrie`] maps an address to the value of the longest stored prefix
//! that contains it. Keys are plain unsigned integers in host order
//! (`u32` for IPv4, `u128` for IPv6); values are small copyable ids
//! (`u16` or `u32`), typically an index into a table of route records that
//! lives beside the trie.
//!
//! ```
//! use fibre_lpm::Poptrie;
//! let mut t: Poptrie<u32, u32> = Poptrie::new();
//! t.insert(0x0a00_0000, 8, 1).unwrap(); // 10.0.0.0/8
//! t.insert(0x0a01_0000, 16, 2).unwrap(); // 10.1.0.0/16
//! assert_eq!(t.lookup(0x0a01_0203), Some(2));
//! assert_eq!(t.lookup(0x0a02_0203), Some(1));
//! assert_eq!(t.lookup(0x0b00_0000), None);
//! ```

mod arrays;
mod key;
mod lookup;
mod node;
mod pool;
mod poptrie;
mod reference;

pub use key::{Key, Value};
pub use poptrie::{Poptrie, PoptrieStats};
pub use reference::ReferenceLpm;

/// Why an insert or remove was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LpmError {
    /// The prefix length is longer than the key.
    #[error("prefix length {len} is longer than {max} bits")]
    LengthTooLong { len: u8, max: u8 },
    /// Bits beyond the prefix length are set (the kernel: "Invalid prefix for given prefix length").
    #[error("host bits are set beyond the prefix length /{len}")]
    HostBitsSet { len: u8 },
}

/// IPv4 longest-prefix match.
pub type Lpm4<V = u32> = Poptrie<u32, V>;
/// IPv6 longest-prefix match.
pub type Lpm6<V = u32> = Poptrie<u128, V>;
