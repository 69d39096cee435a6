//! How many workers a device keeps per-worker state for.

/// Most workers a device keeps per-worker state for. Per-worker slots are
/// a cache line ([`fibre_base::CACHE_LINE`]) or more, so this bounds a
/// device's statistics to a few hundred KiB.
pub const MAX_WORKERS: usize = 1024;
