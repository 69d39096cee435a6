//! ICMP and ICMPv6 messages as the Linux kernel sends them (RFC 792, 1812,
//! 4443): which error a drop earns, its source address, how much of the
//! offending packet it quotes, and the rate limits in front of it.
//!
//! * [`write_error_v4`] / [`write_error_v6`]: the whole IP packet of an
//!   error, as `icmp_send` / `icmp6_send` build it, or why the kernel sends
//!   none ([`Unsent`]);
//! * [`write_echo_reply_v4`] / [`write_echo_reply_v6`]: `icmp_echo` and
//!   `icmpv6_echo_reply`;
//! * [`error_source_v4`] / [`error_source_v6`]: the source the kernel
//!   picks for an error, from the FIB's answers ([`error_route_v4`] also
//!   gives the MTU of the route back, which bounds an IPv4 quote,
//!   [`error_route_v6`] its prefix length, which the IPv6 rate limit
//!   needs);
//! * [`RateLimiter`]: `icmp_global_allow`, `inet_peer_xrlim_allow`, the
//!   type masks, `ip_error`'s and `ip_rt_send_redirect`'s limits.
//!
//! # Fields the kernel randomises
//!
//! Two fields of the kernel's messages depend on keys it draws at boot, so
//! no model can reproduce them and comparisons mask them, and only them:
//! the IPv4 identification of errors and echo replies (DF is clear, so
//! `ip_select_ident` hashes the addresses with a random key; fibre writes
//! the ICMP checksum there) and the IPv6 flow label of errors and echo
//! replies (`ip6_make_flowlabel`'s automatic label, a keyed flow hash;
//! fibre writes a hash of the addresses, never zero).
//!
//! # Differences from the agreed API
//!
//! The writers return `Result<usize, Unsent>` instead of `Option<usize>`,
//! so a caller can count why nothing was sent. The rate limiter's checks
//! take what the kernel's depend on beyond a type: the code for IPv4
//! (fragmentation needed is never limited), the prefix length of the
//! route back for IPv6 (kernels before commit 0201eedb69b2 scaled the
//! period by it; the reference kernel does not, and its
//! `net.ipv6.icmp.ratelimit` is 100 ms, not 1000);
//! [`RateLimiter::allow_error_v4`] also applies the routing code's own
//! limits that share the per-destination state.
//!
//! # Not modelled
//!
//! Of the IPv4 options the kernel echoes in its replies, record route,
//! timestamps, source routes (reversed, the reply sent to their first
//! hop) and CIPSO are (see [`record_route_on_input`] for the input path's
//! part); a prespecified timestamp that took the time is refused with
//! [`Unsent::OptionsNotModelled`] rather than answered differently.
//! IPv6 redirects are neighbour discovery messages (`ndisc_send_redirect`),
//! written by [`write_redirect_v6`] under their own limits
//! ([`RateLimiter::allow_redirect_v6`]).

mod kinds;
mod options;
mod ratelimit;
mod redirect6;
mod source;
mod v4;
mod v6;

pub use kinds::{Icmp4Error, Icmp6Error, Unsent};
pub use options::record_route_on_input;
pub use ratelimit::{RateLimitSettings, RateLimiter, WAYS};
pub use redirect6::write_redirect_v6;
pub(crate) use source::error_route_v4_to;
pub use source::{
    echo_source_v6, error_route_v4, error_route_v6, error_source_v4, error_source_v6,
    needs_scope_v6, ErrorRoute, ErrorRoute6, INADDR_DUMMY,
};
pub(crate) use v4::{error_destination_v4, write_echo_reply_v4_recorded, write_error_v4_recorded};
pub use v4::{
    write_echo_reply_v4, write_error_v4, write_error_v4_mtu, MAX_ERROR_LEN as MAX_ERROR_LEN_V4,
    REPLY_TTL,
};
pub use v6::{
    cut_fragment_header_v6, is_echo_request_v6, write_echo_reply_v6, write_echo_reply_v6_from,
    write_error_v6, MAX_ERROR_LEN as MAX_ERROR_LEN_V6, REPLY_HOP_LIMIT,
};

#[cfg(test)]
mod tests;
