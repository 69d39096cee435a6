//! The requests a follower sends: the dumps of a consistent start (and of
//! a resync), and the multicast groups it joins first.

use crate::message::*;
use crate::wire::{Builder, NLM_F_DUMP, NLM_F_REQUEST};

/// The rtnetlink multicast groups a follower joins (`enum rtnetlink_groups`):
/// links, neighbours, IPv4 and IPv6 addresses, routes and rules, nexthop
/// objects.
pub const GROUPS: [(u32, &str); 9] = [
    (1, "RTNLGRP_LINK"),
    (3, "RTNLGRP_NEIGH"),
    (5, "RTNLGRP_IPV4_IFADDR"),
    (7, "RTNLGRP_IPV4_ROUTE"),
    (8, "RTNLGRP_IPV4_RULE"),
    (9, "RTNLGRP_IPV6_IFADDR"),
    (11, "RTNLGRP_IPV6_ROUTE"),
    (19, "RTNLGRP_IPV6_RULE"),
    (32, "RTNLGRP_NEXTHOP"),
];

/// One dump: the request type, the family and the size of its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dump {
    /// RTM_GET*.
    pub kind: u16,
    /// The family asked for (0: all).
    pub family: u8,
    /// `sizeof` the request's family header.
    pub header_len: usize,
    /// What it dumps, for messages.
    pub what: &'static str,
}

/// The dumps of a start, in the order the state depends on itself: links
/// before the addresses on them, nexthop objects before the routes over
/// them, routes of both families, rules, neighbours.
pub const DUMPS: [Dump; 8] = [
    Dump {
        kind: RTM_GETLINK,
        family: 0,
        header_len: 16,
        what: "links",
    },
    Dump {
        kind: RTM_GETADDR,
        family: 0,
        header_len: 8,
        what: "addresses",
    },
    Dump {
        kind: RTM_GETNEXTHOP,
        family: 0,
        header_len: 8,
        what: "nexthop objects",
    },
    Dump {
        kind: RTM_GETROUTE,
        family: AF_INET,
        header_len: 12,
        what: "IPv4 routes",
    },
    Dump {
        kind: RTM_GETROUTE,
        family: AF_INET6,
        header_len: 12,
        what: "IPv6 routes",
    },
    Dump {
        kind: RTM_GETRULE,
        family: AF_INET,
        header_len: 12,
        what: "IPv4 rules",
    },
    Dump {
        kind: RTM_GETRULE,
        family: AF_INET6,
        header_len: 12,
        what: "IPv6 rules",
    },
    Dump {
        kind: RTM_GETNEIGH,
        family: 0,
        header_len: 12,
        what: "neighbours",
    },
];

impl Dump {
    /// The request's bytes, with sequence number `seq`.
    ///
    /// ```
    /// use fibre_netlink::request::DUMPS;
    /// use fibre_netlink::wire::messages;
    /// let bytes = DUMPS[3].request(9);
    /// let m = messages(&bytes).next().unwrap().unwrap();
    /// assert_eq!((m.kind, m.seq, m.payload[0]), (26, 9, 2)); // RTM_GETROUTE, AF_INET
    /// ```
    pub fn request(&self, seq: u32) -> Vec<u8> {
        let mut header = vec![0u8; self.header_len];
        header[0] = self.family;
        let mut b = Builder::new(self.kind, NLM_F_REQUEST | NLM_F_DUMP, seq);
        b.header(&header);
        b.finish()
    }
}
