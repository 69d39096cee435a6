//! The internal node of the lookup arrays and the direct-pointing entry format.

/// Bits of the address one internal node consumes (64 children).
pub(crate) const STRIDE: u32 = 6;

/// One internal node: 64 children, each either another node or a leaf.
///
/// Children that are nodes sit contiguously in the node pool from `base1`, in
/// the order of their bit in `vector`; a child `v` that is a node is at
/// `base1 + popcnt(vector & mask_through(v)) - 1`. Leaves are compressed: a bit
/// of `leafvec` is set only where the leaf value changes (internal children
/// are skipped), and a leaf child `v` reads
/// `leaves[base0 + popcnt(leafvec & mask_through(v)) - 1]`.
///
/// 24 bytes, so a 64-byte cache line holds 2.67 nodes; the two bitmaps come
/// first because every level reads `vector` and most read one of the bases.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Node {
    /// Bit `v` set: child `v` is an internal node.
    pub vector: u64,
    /// Bit `v` set: a run of equal leaves starts at child `v`.
    pub leafvec: u64,
    /// First leaf of this node in the leaf pool.
    pub base0: u32,
    /// First child node of this node in the node pool.
    pub base1: u32,
}

const _: () = assert!(
    std::mem::size_of::<Node>() == 24,
    "Node must stay 24 bytes (two 64-bit bitmaps, two 32-bit bases), so that \
     a 64-byte line holds 2.67 nodes and one level of a lookup costs one \
     line most of the time: if this fires, a field was added; keep it in a \
     side array indexed like the node pool"
);
const _: () = assert!(
    std::mem::align_of::<Node>() == 8,
    "Node must be 8-aligned, so that the pool packs nodes 24 bytes apart with \
     no padding: if this fires, a field wider than u64 was added; split it"
);
const _: () = assert!(
    std::mem::offset_of!(Node, vector) == 0,
    "Node::vector must open the node: every level reads it first; if this \
     fires, restore the field order vector, leafvec, base0, base1"
);
const _: () = assert!(
    std::mem::offset_of!(Node, leafvec) == 8,
    "Node::leafvec must follow vector in the node's first 16 bytes: a level \
     that ends on a leaf reads both bitmaps; if this fires, restore the field \
     order vector, leafvec, base0, base1"
);
const _: () = assert!(
    std::mem::offset_of!(Node, base0) == 16,
    "Node::base0 must follow the two bitmaps: if this fires, restore the \
     field order vector, leafvec, base0, base1"
);
const _: () = assert!(
    std::mem::offset_of!(Node, base1) == 20,
    "Node::base1 must close the node, after base0: if this fires, restore the \
     field order vector, leafvec, base0, base1"
);

impl Node {
    /// Number of children that are nodes.
    #[inline(always)]
    pub fn child_count(&self) -> u32 {
        self.vector.count_ones()
    }

    /// Number of distinct leaf runs stored for this node.
    #[inline(always)]
    pub fn leaf_count(&self) -> u32 {
        self.leafvec.count_ones()
    }
}

/// Mask of bits `0..=v` (`v` < 64).
#[inline(always)]
pub(crate) fn mask_through(v: u32) -> u64 {
    u64::MAX >> (63 - v)
}

/// Set bits of `bits` at positions `0..=v` (`v` < 64): one shift and one
/// `popcnt`, cheaper than building the mask.
#[inline(always)]
pub(crate) fn ones_through(bits: u64, v: u32) -> u32 {
    (bits << (63 - v)).count_ones()
}

/// Set in a direct-pointing entry that holds a leaf value inline.
pub(crate) const DIRECT_LEAF: u32 = 0x8000_0000;
/// Set (with `DIRECT_LEAF` clear) in a top entry of a two-level key that
/// holds the index of a one-slot leaf block: a value too wide to inline.
pub(crate) const WIDE_LEAF: u32 = 0x4000_0000;
/// The inline payload that means "no route".
pub(crate) const INLINE_NO_ROUTE: u32 = 0x7fff_ffff;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_through_covers_bits_up_to_v() {
        assert_eq!(mask_through(0), 1);
        assert_eq!(mask_through(5), 0b11_1111);
        assert_eq!(mask_through(63), u64::MAX);
    }

    #[test]
    fn ones_through_counts_like_the_mask() {
        for bits in [
            0u64,
            1,
            u64::MAX,
            0x8000_0000_0000_0001,
            0xdead_beef_0123_4567,
        ] {
            for v in 0..64 {
                assert_eq!(ones_through(bits, v), (bits & mask_through(v)).count_ones());
            }
        }
    }
}
