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
//!
//! # Structure
//!
//! After Asai & Ohara, "Poptrie: A Compressed Trie with Population Count for
//! Fast and Scalable Software IP Routing Table Lookup" (SIGCOMM 2015), one
//! implementation for both key widths and both value types:
//!
//! * direct pointing on the top bits of the address. IPv4: one array of
//!   2^18 entries (18 + 6 = 24, so every /19../24 of an /18 lives in one
//!   node). IPv6: two levels of 12 bits (12 + 12 + 6 * 4 = 48, so the
//!   dominant /48s end on a level boundary after four nodes): a 16 KiB top
//!   array, and a 16 KiB chunk of second-level entries only under the /12s
//!   that hold longer prefixes (12 on the RIS table). An entry holds a
//!   31-bit leaf value inline, or the index of a root node (a top IPv6 entry:
//!   a chunk number, or for a value too wide to inline the index of a
//!   one-slot leaf block);
//! * internal nodes of 6 bits (`#[repr(C)]`, 24 bytes): a 64-bit `vector`
//!   (which children are nodes), a 64-bit `leafvec` (where the leaf value
//!   changes: leaf compression) and two `u32` bases into the node and leaf
//!   pools, children and leaves found by population count (`popcnt`, chosen
//!   at run time when the CPU has it);
//! * node and leaf pools (addressed by `u32`) handing out blocks of
//!   1..=64 slots, with a coalescing best-fit free list, so churn reuses
//!   space instead of growing the pools. No block straddles a multiple of
//!   256 slots, so the pools live in copy-on-write chunks of 1,024 slots
//!   (see below) with each node's children and leaves still one slice; on
//!   the RIS tables that
//!   costs 0.1-0.6 % more slots (`examples/ris_speed.rs`, after the update
//!   replays: IPv6 13.48 -> 13.54 bytes a prefix).
//!
//! The RIB beside it is a persistent B-tree (`imbl::OrdMap`) keyed by
//! (address, length): it serves
//! [`Poptrie::get`], [`Poptrie::iter`] and [`Poptrie::matches`], and gives the
//! prefixes below any node as one contiguous range for rebuilds.
//! [`Poptrie::build`] builds everything from a list in one pass.
//!
//! [`Poptrie::lookup_batch`] walks 48 (IPv4) or 24 (IPv6) addresses in
//! lockstep, one level per round, prefetching each lane's next node so that
//! the cache misses of the lanes overlap.
//!
//! # Updates and publication
//!
//! An insert or remove longer than the direct-pointing bits rebuilds only the
//! deepest existing node whose range strictly contains the prefix (a handful
//! of prefixes for a typical /24 or /48). A shorter one rebuilds the
//! direct-pointing slots it covers that no longer short prefix shadows, and
//! only if the value they inherit changed; for IPv6, a prefix of at most /12
//! repaints top entries, and under a /12 with a chunk the chunk entries no
//! /13../24 shadows. A /12 gets its chunk when the first longer prefix
//! arrives below it, and folds back to one leaf when the last one goes.
//!
//! Every rebuild writes its nodes and leaves into blocks that no lookup can
//! reach, and the result becomes visible through exactly one aligned 32-bit
//! store: the slot's entry in the direct-pointing array (or in its chunk; a
//! new chunk is filled first and published by the store of its number in the
//! top entry, a folded one by the store of the leaf), or the parent's
//! `base1` after the parent's children were copied into a fresh block with
//! the new child in place (the parent's bitmaps do not change, because the
//! rebuilt node stays a node). Only after that store are the replaced blocks
//! returned to the free lists.
//!
//! # Clones and copy-on-write
//!
//! Concurrent readers do not read the table the writer mutates: the writer
//! publishes a clone (through `fibre_rcu::RcuCell`), and the clone is cheap.
//! Every lookup array (the direct-pointing levels, the node and leaf pools
//! and the per-node defaults) is a `fibre_rcu::CowChunks`: fixed chunks
//! behind reference counts, so a clone copies the chunk directories and
//! shares every chunk, and a later write on either side copies the one
//! chunk it touches, once per clone. The RIB and the pools' free lists are
//! persistent `imbl` maps, shared the same way. Blocks an update unlinks go
//! back to the free lists at once: a published clone keeps its own copy of
//! any chunk the writer changes afterwards, so no grace period is needed.
//! Readers never touch a reference count; a lookup pays one more dependent
//! load per array read (the chunk's pointer in the directory, a few KiB
//! that stay cached).
//!
//! Chunk sizes, chosen on the RIS tables (`examples/ris_speed.rs`): the
//! pools' chunk is 1,024 slots (24 KiB of nodes, 2 or 4 KiB of leaves), a
//! multiple of the 256 no block straddles, so a node's children and leaves
//! stay one slice of one chunk; the direct-pointing arrays use 4,096 entries
//! (16 KiB: the IPv4 top array is 64 chunks, an IPv6 second-level chunk
//! one). Against chunks of 256 slots and 1,024 entries, that cut a clone of
//! the full IPv4 table from 31 to 10 us and made the replay with a clone
//! every 1,024 updates faster (1.7 -> 1.9 M/s), for a first insert after a
//! clone of 33 -> 38 us; lookups did not move. A clone of the full RIS
//! tables copies about 1,300 (IPv4) or 570 (IPv6) chunk pointers.
//!
//! Measured side by side with the flat `Vec`s this replaced (`cargo run
//! --release -p fibre-lpm --example ris_speed`, 3 alternating runs each,
//! 2-core VM shared with other builds, 2026-12-03), this version against
//! the flat one:
//!
//! | | IPv4 (1,042,325 prefixes) | IPv6 (246,175) |
//! |---|---|---|
//! | single lookups (on-CPU rate) | 0.84-0.88x | 0.67-0.79x |
//! | batched lookups | 0.81-0.82x | 0.71-0.80x |
//! | one clone | 9.5-9.7 us (flat: 4.0-6.8 ms) | 5.1-5.6 us (flat: 1.1-1.2 ms) |
//! | first insert after a clone | 38-44 us | 27-31 us |
//! | update replay, no clones | 0.61-0.65x | 0.56-0.61x |
//! | replay with a clone every 1,024 updates | 1.7-1.9 M/s: 0.27x of the flat one without clones (flat with clones: 0.1 M/s) | 1.5-1.7 M/s: 0.33x (flat with clones: 0.4-0.5 M/s) |
//!
//! Those lookup figures predate the batch's lanes keeping a reference to
//! what they prefetched; two later runs on a busier machine (load 3.8) put
//! batched lookups at 0.77-0.78x (IPv4) and 0.83-0.87x (IPv6).
//!
//! The lookups pay the chunk directory's load at every level; the writer
//! pays the persistent RIB and free lists, and after each clone one chunk
//! copy per chunk it first writes.
//!
//! # The `MAX` value
//!
//! The arrays use `V::MAX` as "no route". Storing `MAX` is allowed: while any
//! prefix holds it, lookups that land on the mark confirm through the RIB.

mod arrays;
mod key;
mod lookup;
mod node;
mod pool;
mod poptrie;
mod reference;

pub use key::{Key, Value};
pub use lookup::prefetch;
pub use poptrie::{Poptrie, PoptrieStats};
pub use reference::ReferenceLpm;

/// Why an insert or remove was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LpmError {
    /// The prefix length is longer than the key.
    #[error("prefix length {len} is longer than {max} bits")]
    LengthTooLong {
        /// The length asked for.
        len: u8,
        /// The key's width in bits (32 or 128).
        max: u8,
    },
    /// Bits beyond the prefix length are set (the kernel: "Invalid prefix for given prefix length").
    #[error("host bits are set beyond the prefix length /{len}")]
    HostBitsSet {
        /// The prefix length the bits lie beyond.
        len: u8,
    },
}

/// IPv4 longest-prefix match.
pub type Lpm4<V = u32> = Poptrie<u32, V>;
/// IPv6 longest-prefix match.
pub type Lpm6<V = u32> = Poptrie<u128, V>;
