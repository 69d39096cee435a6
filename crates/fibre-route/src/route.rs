//! The route object (the kernel's `dst_entry` + `rtable`): what the data
//! path reads per packet after a lookup.
//!
//! Layout, asserted below:
//!
//! | offset | bytes | field | written |
//! |---|---|---|---|
//! | 0 | 16 | `gateway` (neighbour key) | at creation |
//! | 16 | 16 | `src` (preferred source) | at creation |
//! | 32 | 8 | `expires_ms` | at creation |
//! | 40 | 8 | `stamp` (generation seen) | at creation |
//! | 48 | 4 | `dev` | at creation |
//! | 52 | 4 | `mtu` | at creation |
//! | 56 | 4 | `encap` | at creation |
//! | 60 | 2 | `flags` | at creation |
//! | 62 | 1 | `kind` | at creation |
//! | 63 | 1 | `family` | at creation |
//! | [`COUNTER_OFFSET`] | 8 | reference count | per hold/release |
//!
//! Everything the data path reads is on the first 64-byte line and never
//! written after publication. The reference count, the only field that
//! changes per packet, sits alone on its own line, as Tom Herbert's "net:
//! Cache align dst refcnt" (commit 5635c10d976716) put `dst_entry.__refcnt`.
//! Its own line is [`fibre_base::CACHE_LINE`] apart: on x86-64 that is 128,
//! not 64, as the adjacent-line prefetcher fetches 128-byte pairs, so a
//! counter at 64 still drags the read-mostly line with it (fibre-bench's
//! `refcnt` experiment measures both placements).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use fibre_base::{CachePadded, CACHE_LINE};

use crate::rcuref::RefCount;

/// Where the reference count starts: the first cache line
/// ([`CACHE_LINE`]: 128 on x86-64, where the adjacent-line prefetcher
/// pairs lines) after the read-mostly [`RouteData`].
pub const COUNTER_OFFSET: usize = std::mem::size_of::<RouteData>().next_multiple_of(CACHE_LINE);

/// Route flags (the kernel's `RTCF_*` / `DST_*` that matter here).
pub mod flags {
    /// The route has a gateway (`rt_uses_gateway`).
    pub const GATEWAY: u16 = 1 << 0;
    /// Local delivery.
    pub const LOCAL: u16 = 1 << 1;
    /// Held in a per-nexthop cache slot (`rt_is_cached`).
    pub const CACHED: u16 = 1 << 2;
    /// Carries a path MTU from an exception.
    pub const PMTU: u16 = 1 << 3;
    /// The gateway comes from an ICMP redirect (`RTCF_REDIRECTED`).
    pub const REDIRECTED: u16 = 1 << 4;
    /// An input (forwarding) route rather than an output one.
    pub const INPUT: u16 = 1 << 5;
    /// The MTU may not be lowered by PMTU discovery (`mtu lock`).
    pub const MTU_LOCKED: u16 = 1 << 6;
    /// No source address in the route: it depends on the destination
    /// (IPv6 without `prefsrc`: RFC 6724 picks per flow, as the kernel's
    /// `ipv6_dev_get_saddr` does after the route lookup); ask
    /// `RouteCache::source_v6`.
    pub const SRC_PER_FLOW: u16 = 1 << 7;
}

/// The read-mostly part of a route: one cache line, written once before
/// the route is published.
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteData {
    /// Gateway (neighbour key) as an integer (IPv4 in the low 32 bits);
    /// 0 when the destination is on link.
    pub gateway: u128,
    /// Preferred source address as an integer; 0 when none.
    pub src: u128,
    /// Expiry on the cache's clock (milliseconds); 0: never.
    pub expires_ms: u64,
    /// Generation of the nexthop when the route was made; the route is
    /// valid while the nexthop's generation still equals it.
    pub stamp: u64,
    /// Output device (ifindex).
    pub dev: u32,
    /// Path MTU in bytes.
    pub mtu: u32,
    /// Encapsulation: a tunnel key or lightweight-tunnel id; 0: none.
    pub encap: u32,
    /// [`flags`].
    pub flags: u16,
    /// Route type as [`fibre_fib::RouteType`] ordinal (see [`RouteData::kind`]).
    pub kind: u8,
    /// 4 or 6.
    pub family: u8,
}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(
        size_of::<RouteData>() == 64,
        "RouteData must be exactly the one 64-byte line every packet reads: \
         if this fires, a field was added; move it off the read-mostly line"
    );
    assert!(
        offset_of!(RouteData, gateway) == 0,
        "RouteData::gateway must sit at 0, as the layout table of route.rs says \
         (widest fields first, so repr(C) adds no padding): if this fires, \
         restore the field order or update the table"
    );
    assert!(
        offset_of!(RouteData, src) == 16,
        "RouteData::src must sit at 16, as the layout table of route.rs says \
         (widest fields first, so repr(C) adds no padding): if this fires, \
         restore the field order or update the table"
    );
    assert!(
        offset_of!(RouteData, expires_ms) == 32,
        "RouteData::expires_ms must sit at 32, as the layout table of route.rs says \
         (widest fields first, so repr(C) adds no padding): if this fires, \
         restore the field order or update the table"
    );
    assert!(
        offset_of!(RouteData, stamp) == 40,
        "RouteData::stamp must sit at 40, as the layout table of route.rs says \
         (widest fields first, so repr(C) adds no padding): if this fires, \
         restore the field order or update the table"
    );
    assert!(
        offset_of!(RouteData, dev) == 48,
        "RouteData::dev must sit at 48, as the layout table of route.rs says \
         (widest fields first, so repr(C) adds no padding): if this fires, \
         restore the field order or update the table"
    );
    assert!(
        offset_of!(RouteData, mtu) == 52,
        "RouteData::mtu must sit at 52, as the layout table of route.rs says \
         (widest fields first, so repr(C) adds no padding): if this fires, \
         restore the field order or update the table"
    );
    assert!(
        offset_of!(RouteData, encap) == 56,
        "RouteData::encap must sit at 56, as the layout table of route.rs says \
         (widest fields first, so repr(C) adds no padding): if this fires, \
         restore the field order or update the table"
    );
    assert!(
        offset_of!(RouteData, flags) == 60,
        "RouteData::flags must sit at 60, as the layout table of route.rs says \
         (widest fields first, so repr(C) adds no padding): if this fires, \
         restore the field order or update the table"
    );
    assert!(
        offset_of!(RouteData, kind) == 62,
        "RouteData::kind must sit at 62, as the layout table of route.rs says \
         (widest fields first, so repr(C) adds no padding): if this fires, \
         restore the field order or update the table"
    );
    assert!(
        offset_of!(RouteData, family) == 63,
        "RouteData::family must sit at 63, as the layout table of route.rs says \
         (widest fields first, so repr(C) adds no padding): if this fires, \
         restore the field order or update the table"
    );
};

impl RouteData {
    /// A route out of `dev` with `mtu`, to `gateway` (none: on link),
    /// from `src`.
    ///
    /// ```
    /// use fibre_route::RouteData;
    /// let r = RouteData::new(2, Some("10.0.0.2".parse().unwrap()), Some("10.0.0.1".parse().unwrap()), 1500);
    /// assert_eq!(r.gateway_addr(), Some("10.0.0.2".parse().unwrap()));
    /// assert_eq!(r.src_addr(), Some("10.0.0.1".parse().unwrap()));
    /// assert!(r.has_gateway());
    /// ```
    pub fn new(dev: u32, gateway: Option<IpAddr>, src: Option<IpAddr>, mtu: u32) -> RouteData {
        let family = match gateway.or(src) {
            Some(IpAddr::V6(_)) => 6,
            _ => 4,
        };
        RouteData {
            gateway: gateway.map_or(0, |a| fibre_fib::addr_key(&a)),
            src: src.map_or(0, |a| fibre_fib::addr_key(&a)),
            expires_ms: 0,
            stamp: 0,
            dev,
            mtu,
            encap: 0,
            flags: if gateway.is_some() { flags::GATEWAY } else { 0 },
            kind: kind_code(fibre_fib::RouteType::Unicast),
            family,
        }
    }

    fn addr(&self, key: u128) -> Option<IpAddr> {
        if key == 0 {
            return None;
        }
        Some(if self.family == 6 {
            IpAddr::V6(Ipv6Addr::from(key))
        } else {
            IpAddr::V4(Ipv4Addr::from(key as u32))
        })
    }

    /// The gateway, if any.
    pub fn gateway_addr(&self) -> Option<IpAddr> {
        self.addr(self.gateway)
    }

    /// The preferred source, if any.
    pub fn src_addr(&self) -> Option<IpAddr> {
        self.addr(self.src)
    }

    /// True when packets go to a gateway rather than on link.
    pub fn has_gateway(&self) -> bool {
        self.flags & flags::GATEWAY != 0
    }

    /// The route type.
    pub fn kind(&self) -> fibre_fib::RouteType {
        kind_from_code(self.kind)
    }

    /// True when the route has an expiry and `now_ms` is past it.
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.expires_ms != 0 && now_ms >= self.expires_ms
    }
}

/// The compact code of a route type stored in [`RouteData::kind`]: its
/// `RTN_*` number, which [`fibre_fib::RouteType::from_number`] reads back
/// (the enum is declared in `RTN_*` order; a test checks the round trip).
pub fn kind_code(kind: fibre_fib::RouteType) -> u8 {
    kind as u8
}

fn kind_from_code(code: u8) -> fibre_fib::RouteType {
    fibre_fib::RouteType::from_number(code).unwrap_or(fibre_fib::RouteType::Unspec)
}

/// A route: read-mostly data on line 0, the reference count alone on the
/// line at [`COUNTER_OFFSET`]. Made and shared by
/// [`HeldRoute`](crate::HeldRoute) and the caches.
#[repr(C)]
#[derive(Debug)]
pub struct Route {
    data: RouteData,
    pub(crate) refs: CachePadded<RefCount>,
}

const _: () = {
    use std::mem::offset_of;
    assert!(
        offset_of!(Route, data) == 0,
        "Route::data must open the route: readers load it from the route's \
         first line; if this fires, put data back as Route's first field \
         (Route is repr(C))"
    );
    assert!(
        offset_of!(Route, refs) % CACHE_LINE == 0 && offset_of!(Route, refs) == COUNTER_OFFSET,
        "Route::refs must start its own cache line: readers of the first line \
         must not share it with the writers of the count; if this fires, \
         re-check the padding before refs"
    );
};

impl Route {
    pub(crate) fn new(data: RouteData) -> Route {
        Route {
            data,
            refs: CachePadded::new(RefCount::new()),
        }
    }

    /// The read-mostly data.
    #[inline]
    pub fn data(&self) -> &RouteData {
        &self.data
    }

    /// The number of held references now (for tests and diagnostics).
    pub fn ref_count(&self) -> i64 {
        self.refs.count()
    }
}

impl std::ops::Deref for Route {
    type Target = RouteData;
    #[inline]
    fn deref(&self) -> &RouteData {
        &self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_code_is_the_rtn_number_and_reads_back() {
        let mut modelled = 0;
        for number in 0..=u8::MAX {
            let Some(kind) = fibre_fib::RouteType::from_number(number) else {
                continue;
            };
            modelled += 1;
            assert_eq!(kind_code(kind), number, "{kind:?}");
            assert_eq!(kind_from_code(number), kind);
        }
        assert_eq!(modelled, 10, "RTN_UNSPEC..=RTN_THROW");
        assert_eq!(kind_from_code(10), fibre_fib::RouteType::Unspec);
    }
}
