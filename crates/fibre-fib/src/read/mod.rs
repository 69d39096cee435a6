//! The read side: everything that answers from the FIB without changing
//! it. The data path's batch lookups (output and input, both families),
//! the rules and tables they walk, multipath selection and source address
//! selection, and the full `ip route get` answer built on the same code.
//! Readers run this on every packet, on every core, against a published
//! copy; nothing here writes shared state.

pub mod batch;
pub mod burst;
pub(crate) mod input_batch;
pub(crate) mod input_batch_v4;
pub(crate) mod lookup;
pub mod multipath;
pub(crate) mod reply_source;
pub(crate) mod route_get;
pub(crate) mod rule_match;
pub(crate) mod srcsel;
