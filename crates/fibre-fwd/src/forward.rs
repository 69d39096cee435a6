//! What becomes of a received IP packet once the input lookup answered:
//! the route's errors (`ip_error`, `ip6_pkt_drop`), local delivery, and
//! forwarding (`ip_forward`, `ip6_forward`) with their checks in the
//! kernel's order, ICMP errors where the kernel sends them, and the
//! rewrite.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use fibre_base::DropReason;
use fibre_fib::{Errno, Fib, FlowKeyV4, FlowKeyV6, Forward, Forward6, RouteType, RpFilter, Scope};

use crate::config::PortConfig;
use crate::icmp::{self, Icmp4Error, Icmp6Error};
use crate::options::{self, Compiled};
use crate::output::{copy, Destination, Out, ETHERTYPE_IPV4, ETHERTYPE_IPV6, IPV6_MIN_MTU};
use crate::punt::PuntKind;
use crate::receive::{self, Ipv4Header, Ipv6Header, PacketType, ETH_HLEN};
use crate::rewrite::{decrease_hop_limit, decrease_ttl};
use crate::tunnel::{GreEnd, IPPROTO_GRE};
use crate::worker::Core;

const IPPROTO_ICMP: u8 = 1;
use fibre_net::ip::number::ICMPV6 as IPPROTO_ICMPV6;
const ICMP_ECHO: u8 = 8;

impl Core {
    /// An IPv4 packet in `frame` (without the link layer's padding) after
    /// the input lookup answered `answer` for `key`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn input_v4(
        &mut self,
        out: &mut Out<'_>,
        config: &PortConfig,
        frame: &[u8],
        h: &Ipv4Header,
        kind: PacketType,
        key: &FlowKeyV4,
        answer: Result<Forward, Errno>,
    ) -> Result<(), DropReason> {
        let packet = &frame[ETH_HLEN..];
        // `ip_route_input_slow` refuses martians (EINVAL) before anything
        // looks at the options; an error route, or none, gets a route
        // whose input is `ip_error`, and the options are compiled first.
        if let Err(errno) = answer {
            if !is_error_route(out.fib, key, errno, h.header_len > 20) {
                return Err(route_drop(errno));
            }
        }
        // `fib_validate_source` again where the lookup's own check (with
        // rp_filter 0, and without the redirect mark) does not settle it.
        let mut redirect = false;
        if let Ok(answer) = &answer {
            let back_out = answer.kind == RouteType::Unicast && answer.dev == config.link;
            if config.rp_filter != RpFilter::Off || (back_out && config.send_redirects) {
                match out
                    .fib
                    .input_source_check_v4(config.link, key, answer, config.rp_filter)
                {
                    Ok(direct) => redirect = back_out && direct && config.send_redirects,
                    Err(Errno::XDev) => return Err(DropReason::RpFilter),
                    Err(_) => return Err(DropReason::InvalidRoute),
                }
            }
        }
        // `ip_rcv_finish_core` compiles the options after the route.
        let mut held = Held::new(packet, h.header_len);
        if h.header_len > 20 {
            let router = InputRouter {
                fib: out.fib,
                h,
                dev: config.link,
                local: matches!(answer, Ok(a) if a.kind == RouteType::Local),
            };
            match options::compile(&mut held.header, h.header_len, &router) {
                Ok(compiled) => held.options = compiled,
                Err(malformed) => {
                    held.options = malformed.recorded;
                    // `icmp_send` answers nothing to a broadcast or
                    // multicast input route.
                    let group = matches!(
                        answer,
                        Ok(a) if matches!(a.kind, RouteType::Broadcast | RouteType::Multicast)
                    );
                    if !group {
                        let error = Icmp4Error::ParameterProblem {
                            pointer: malformed.pointer,
                        };
                        self.send_error_held_v4(out, &held, kind, error);
                    }
                    return Err(DropReason::BadIpHeader);
                }
            }
            // `ip_rcv_options`: a source route is followed only with
            // `accept_source_route` on for "all" and the device
            // (`IN_DEV_SOURCE_ROUTE`); "all" is 0 by default, the worker
            // has no such setting: dropped.
            if held.options.srr != 0 {
                return Err(DropReason::OptionsUnsupported);
            }
        }
        let answer = match answer {
            Ok(answer) => answer,
            Err(errno) => return self.route_error_v4(out, &held, kind, errno),
        };
        match answer.kind {
            RouteType::Local => self.local_v4(out, config, frame, h, &held, kind),
            RouteType::Broadcast | RouteType::Multicast => {
                self.punt(PuntKind::Local, out.in_port, config.link, frame)
            }
            RouteType::Unicast => {
                let forward = Forwarding {
                    answer: &answer,
                    redirect,
                };
                self.forward_v4(out, &held, h, kind, forward)
            }
            _ => Err(DropReason::InvalidRoute),
        }
    }

    /// `ip_error`: the lookup's errno chooses the ICMP error (none for a
    /// blackhole's EINVAL) and the drop reason.
    fn route_error_v4(
        &mut self,
        out: &mut Out<'_>,
        held: &Held<'_>,
        kind: PacketType,
        errno: Errno,
    ) -> Result<(), DropReason> {
        if let Some(error) = Icmp4Error::for_route_error(errno) {
            self.send_error_held_v4(out, held, kind, error);
        }
        Err(route_drop(errno))
    }

    /// `icmp_send` about the packet `held`, as the router holds it.
    fn send_error_held_v4(
        &mut self,
        out: &mut Out<'_>,
        held: &Held<'_>,
        kind: PacketType,
        error: Icmp4Error,
    ) {
        let mut quote = [0u8; icmp::MAX_ERROR_LEN_V4];
        let offending = held.offending(&mut quote);
        self.send_error_v4(out, offending, &held.options, kind, error);
    }

    /// `ip_local_deliver` for a packet to one of our addresses: an echo
    /// request is answered (`icmp_echo`), anything else goes to the
    /// control side.
    fn local_v4(
        &mut self,
        out: &mut Out<'_>,
        config: &PortConfig,
        frame: &[u8],
        h: &Ipv4Header,
        held: &Held<'_>,
        kind: PacketType,
    ) -> Result<(), DropReason> {
        let packet = &frame[ETH_HLEN..];
        // A worker without tunnels is a kernel without `ip_gre`: GRE goes
        // to the control side with every other protocol it has no
        // handler for.
        if h.protocol == IPPROTO_GRE && !h.fragment && !self.tunnels.is_empty() {
            return match self.receive_gre(out, frame, h) {
                GreEnd::Done(end) => end,
                GreEnd::NoTunnel => {
                    self.send_error_held_v4(out, held, kind, Icmp4Error::PortUnreachable);
                    Err(DropReason::NotForTunnel)
                }
            };
        }
        let echo = h.protocol == IPPROTO_ICMP
            && !h.fragment
            && packet.get(h.header_len) == Some(&ICMP_ECHO);
        if echo {
            let mut buf = std::mem::take(&mut self.scratch);
            let written = icmp::write_echo_reply_v4_recorded(
                packet,
                &held.header[..h.header_len],
                &held.options,
                &mut buf,
            );
            let answered = match written {
                Ok(len) => Some(self.send_own_v4(out, &buf[..len])),
                Err(_) => None,
            };
            self.scratch = buf;
            match answered {
                Some(Ok(())) => {
                    self.counters.answered += 1;
                    return Ok(());
                }
                Some(Err(_)) => {
                    self.counters.icmp_unsent += 1;
                    self.counters.answered += 1;
                    return Ok(());
                }
                None => {}
            }
        }
        self.punt(PuntKind::Local, out.in_port, config.link, frame)
    }

    /// `ip_forward`, then `ip_forward_finish` and `ip_output`.
    fn forward_v4(
        &mut self,
        out: &mut Out<'_>,
        held: &Held<'_>,
        h: &Ipv4Header,
        kind: PacketType,
        forward: Forwarding<'_>,
    ) -> Result<(), DropReason> {
        let Forwarding { answer, redirect } = forward;
        // A router alert goes to the sockets that asked for it
        // (`ip_call_ra_chain`); the worker has none, so it is forwarded.
        if kind != PacketType::Host {
            return Err(DropReason::NotUnicastFrame);
        }
        if h.ttl <= 1 {
            self.send_error_held_v4(out, held, kind, Icmp4Error::TimeExceeded);
            return Err(DropReason::TtlExceeded);
        }
        if self.port_of(answer.dev).is_none() && self.tunnel_of(answer.dev).is_none() {
            return Err(DropReason::NoOutputPort);
        }
        let mut mtu = self.route_mtu(out.fib, answer.cache_class, answer.dev);
        if h.total_len > mtu && h.dont_fragment {
            let mtu = u16::try_from(mtu).unwrap_or(u16::MAX);
            let error = Icmp4Error::FragmentationNeeded { mtu };
            self.send_error_held_v4(out, held, kind, error);
            return Err(DropReason::TooBig);
        }
        let next_hop = answer.gateway_addr().unwrap_or(h.dst);
        if redirect {
            self.send_redirect_v4(out, held, next_hop);
        }
        let (dest, path_mtu) = self.egress(out, answer.dev, IpAddr::V4(next_hop), h.tos)?;
        if let Some(path_mtu) = path_mtu {
            // `tnl_update_pmtu`: what leaves (the packet, or its fragments)
            // must fit the underlay with the tunnel's headers. A DF packet
            // is answered with that MTU, quoted as `ip_forward` left it
            // (TTL one less); without DF the kernel's outer packet, DF set,
            // would not leave either.
            if h.total_len.min(mtu) > path_mtu {
                if h.dont_fragment {
                    let mtu = u16::try_from(path_mtu).unwrap_or(u16::MAX);
                    self.send_forwarded_error_v4(
                        out,
                        held,
                        Icmp4Error::FragmentationNeeded { mtu },
                    );
                }
                return Err(DropReason::TooBig);
            }
            mtu = mtu.min(path_mtu);
        }
        // `ip_forward_options`: the outgoing route's source in place of
        // the address the input path recorded.
        let header_len = h.header_len;
        let mut header = held.header;
        let changed = header_len > 20
            && options::forward_options(&mut header[..header_len], &held.options, || {
                outgoing_source(out, h, answer.dev, next_hop)
            });
        let packet = held.packet;
        if h.total_len <= mtu {
            self.put(dest, ETHERTYPE_IPV4, |slot| {
                let len = copy(slot, packet);
                if changed {
                    // `ip_decrease_ttl`, then `ip_send_check` over the
                    // changed header.
                    slot[..header_len].copy_from_slice(&header[..header_len]);
                    slot[8] -= 1;
                    refill_checksum(&mut slot[..header_len]);
                } else {
                    decrease_ttl(slot);
                }
                len
            })?;
        } else {
            let options = changed.then_some(&header[20..header_len]);
            let fragments = self.put_fragments(dest, packet, mtu, h.ttl - 1, options)?;
            self.counters.fragments += fragments as u64;
        }
        self.count_left(dest);
        Ok(())
    }

    /// `ip_rt_send_redirect`: a host redirect to `gateway` for `held`,
    /// sent once `ip_forward` has decremented the TTL (the quote carries
    /// the new one) and before the packet leaves; within the redirect's
    /// own rate limit ([`icmp::RateLimiter::allow_error_v4`]).
    fn send_redirect_v4(&mut self, out: &mut Out<'_>, held: &Held<'_>, gateway: Ipv4Addr) {
        self.send_forwarded_error_v4(out, held, Icmp4Error::Redirect { gateway });
    }

    /// `icmp_send` about `held` once `ip_forward` has decremented its
    /// TTL (a redirect, or a tunnel's fragmentation needed): the quote
    /// carries the new TTL.
    fn send_forwarded_error_v4(&mut self, out: &mut Out<'_>, held: &Held<'_>, error: Icmp4Error) {
        // The error quotes at most its first 548 bytes: a copy of those.
        let mut quote = [0u8; icmp::MAX_ERROR_LEN_V4];
        let len = held.copy_quote(&mut quote);
        decrease_ttl(&mut quote);
        self.send_error_v4(out, &quote[..len], &held.options, PacketType::Host, error);
    }

    /// An IPv6 packet in `frame` (without padding) after the input lookup
    /// answered `answer`.
    pub(crate) fn input_v6(
        &mut self,
        out: &mut Out<'_>,
        config: &PortConfig,
        frame: &[u8],
        h: &Ipv6Header,
        kind: PacketType,
        answer: Result<Forward6, Errno>,
    ) -> Result<(), DropReason> {
        let packet = &frame[ETH_HLEN..];
        let answer = match answer {
            Ok(answer) => answer,
            Err(errno) => {
                // `ip6_pkt_discard`, `ip6_pkt_prohibit`; a blackhole sends nothing.
                if let Some(error) = Icmp6Error::for_route_error(errno) {
                    self.send_error_v6(out, packet, kind, error, config.link);
                }
                return Err(route_drop(errno));
            }
        };
        match answer.kind {
            RouteType::Local | RouteType::Anycast | RouteType::Multicast => {
                if is_neighbour_discovery(packet, h) {
                    return self.punt(PuntKind::Neighbour, out.in_port, config.link, frame);
                }
                if answer.kind == RouteType::Multicast
                    && !joined_group_v6(out.fib, config.link, h.dst)
                {
                    // `ip6_mc_input`: a group the link has not joined is
                    // discarded (the router forwards no multicast).
                    return Err(DropReason::InvalidRoute);
                }
                if answer.kind == RouteType::Anycast {
                    // `icmpv6_echo_ignore_anycast` (default 1): not answered.
                    return self.punt(PuntKind::Local, out.in_port, config.link, frame);
                }
                self.local_v6(out, config, frame, kind)
            }
            k if k.is_unicast_v6() => self.forward_v6(out, config, packet, h, kind, &answer),
            _ => Err(DropReason::InvalidRoute),
        }
    }

    /// Local delivery of IPv6, to one of the router's addresses or a group
    /// it is in: echo requests answered (`icmpv6_echo_reply`, also behind
    /// hop-by-hop, destination options and atomic fragment headers, which
    /// `ip6_input_finish` walks first, and to a group, from the source
    /// [`icmp::echo_source_v6`] picks), a fragment header cut short
    /// answered with a parameter problem ([`icmp::cut_fragment_header_v6`]),
    /// the rest to the control side.
    fn local_v6(
        &mut self,
        out: &mut Out<'_>,
        config: &PortConfig,
        frame: &[u8],
        kind: PacketType,
    ) -> Result<(), DropReason> {
        let packet = &frame[ETH_HLEN..];
        if let Some(pointer) = icmp::cut_fragment_header_v6(packet) {
            let error = Icmp6Error::ParameterProblem { code: 0, pointer };
            self.send_error_v6(out, packet, kind, error, config.link);
            return Err(DropReason::BadIpHeader);
        }
        if !icmp::is_echo_request_v6(packet) {
            return self.punt(PuntKind::Local, out.in_port, config.link, frame);
        }
        let mut buf = std::mem::take(&mut self.scratch);
        // No source (no route back): `ip6_dst_lookup` fails, nothing is sent.
        let answered = match icmp::echo_source_v6(out.fib, packet, config.link) {
            None => Some(Err(DropReason::NoRoute)),
            Some(source) => match icmp::write_echo_reply_v6_from(packet, source, &mut buf) {
                Ok(len) => Some(self.send_own_v6(out, &buf[..len], true)),
                Err(_) => None,
            },
        };
        self.scratch = buf;
        match answered {
            Some(sent) => {
                if sent.is_err() {
                    self.counters.icmp_unsent += 1;
                }
                self.counters.answered += 1;
                Ok(())
            }
            None => self.punt(PuntKind::Local, out.in_port, config.link, frame),
        }
    }

    /// `ip6_forward`, then `ip6_output`.
    fn forward_v6(
        &mut self,
        out: &mut Out<'_>,
        config: &PortConfig,
        packet: &[u8],
        h: &Ipv6Header,
        kind: PacketType,
        answer: &Forward6,
    ) -> Result<(), DropReason> {
        if kind != PacketType::Host {
            return Err(DropReason::NotUnicastFrame);
        }
        if h.hop_limit <= 1 {
            self.send_error_v6(out, packet, kind, Icmp6Error::TimeExceeded, config.link);
            return Err(DropReason::TtlExceeded);
        }
        if self.port_of(answer.dev).is_none() && self.tunnel_of(answer.dev).is_none() {
            return Err(DropReason::NoOutputPort);
        }
        if answer.dev == config.link {
            // Out the way it came: a redirect, and the packet forwarded
            // all the same.
            self.send_redirect_v6(out, config.link, packet, h, answer);
        } else {
            // "This check is security critical."
            if h.src.is_unspecified() {
                return Err(DropReason::AddressError);
            }
            if is_link_local(&h.src) {
                self.send_error_v6(out, packet, kind, Icmp6Error::BeyondScope, config.link);
                return Err(DropReason::AddressError);
            }
        }
        let mtu = self
            .route_mtu(out.fib, answer.cache_class, answer.dev)
            .max(IPV6_MIN_MTU);
        if h.total_len > mtu {
            let mtu = u32::try_from(mtu).unwrap_or(u32::MAX);
            self.send_error_v6(
                out,
                packet,
                kind,
                Icmp6Error::PacketTooBig { mtu },
                config.link,
            );
            return Err(DropReason::TooBig);
        }
        let next_hop = if answer.gateway != 0 {
            Ipv6Addr::from(answer.gateway)
        } else {
            h.dst
        };
        let (dest, path_mtu) =
            self.egress(out, answer.dev, IpAddr::V6(next_hop), h.traffic_class)?;
        if path_mtu.is_some_and(|path_mtu| h.total_len > path_mtu) {
            // `tnl_update_pmtu`: packet too big with the tunnel's path MTU
            // where that is a legal IPv6 MTU, the quote as `ip6_forward`
            // left it (hop limit one less); below 1280, dropped.
            let path_mtu = path_mtu.unwrap_or(0);
            if path_mtu >= IPV6_MIN_MTU {
                let mut quote = [0u8; icmp::MAX_ERROR_LEN_V6];
                let len = packet.len().min(quote.len());
                quote[..len].copy_from_slice(&packet[..len]);
                decrease_hop_limit(&mut quote);
                let mtu = u32::try_from(path_mtu).unwrap_or(u32::MAX);
                let error = Icmp6Error::PacketTooBig { mtu };
                self.send_error_v6(out, &quote[..len], kind, error, config.link);
            }
            return Err(DropReason::TooBig);
        }
        self.put(dest, ETHERTYPE_IPV6, |slot| {
            let len = copy(slot, packet);
            decrease_hop_limit(slot);
            len
        })?;
        self.count_left(dest);
        Ok(())
    }

    /// `ip6_forward`'s redirect for a packet leaving by `link`, the link
    /// it came in on (no IPv6 setting turns it off), then
    /// `ndisc_send_redirect`, in the kernel's order: the destination's
    /// limit; a link-local address on the link to send from; a target
    /// (the route's gateway, else the destination) that is the
    /// destination or link-local unicast; the source reached on the link
    /// without a gateway; the source's limit; the target's link-layer
    /// address when its neighbour is resolved. Sent on the link to the
    /// source's neighbour, before the packet.
    fn send_redirect_v6(
        &mut self,
        out: &Out<'_>,
        link: fibre_fib::LinkIndex,
        packet: &[u8],
        h: &Ipv6Header,
        answer: &Forward6,
    ) {
        let target = if answer.gateway != 0 {
            Ipv6Addr::from(answer.gateway)
        } else {
            h.dst
        };
        // Back into the tunnel it came from: the kernel would send the
        // redirect into the tunnel too; the worker sends none there.
        if self.tunnel_of(link).is_some() {
            return;
        }
        if !self.limiter.allow_redirect_v6(out.now_ns, h.dst) {
            self.counters.icmp_rate_limited += 1;
            return;
        }
        // `ipv6_get_lladdr`: the link's first link-local address.
        let Some(source) = out
            .fib
            .addrs_of_v6(link)
            .iter()
            .find_map(|a| match a.local {
                IpAddr::V6(local) if is_link_local(&local) => Some(local),
                _ => None,
            })
        else {
            return;
        };
        // Link-local unicast: fe80::/10 holds no multicast.
        if target != h.dst && !is_link_local(&target) {
            return;
        }
        let back = FlowKeyV6 {
            dst: u128::from(h.src),
            src: u128::from(source),
            proto: IPPROTO_ICMPV6,
            oif: link,
            ..FlowKeyV6::default()
        };
        match out.fib.lookup_output_v6(&back) {
            Ok(route) if route.gateway == 0 => {}
            _ => return,
        }
        if !self.limiter.allow_redirect_v6(out.now_ns, h.src) {
            self.counters.icmp_rate_limited += 1;
            return;
        }
        let target_mac = out.neighbours.lookup(link, IpAddr::V6(target));
        let mut buf = std::mem::take(&mut self.scratch);
        if let Ok(len) = icmp::write_redirect_v6(packet, target, target_mac, source, &mut buf) {
            let dest = self.destination(out, out.in_port, IpAddr::V6(h.src));
            if self
                .put(dest, ETHERTYPE_IPV6, |slot| copy(slot, &buf[..len]))
                .is_ok()
            {
                self.counters.icmp_errors += 1;
            } else {
                self.counters.icmp_unsent += 1;
            }
        }
        self.scratch = buf;
    }

    /// Counts a forwarded packet by where it went.
    fn count_left(&mut self, dest: Destination) {
        match dest {
            Destination::Port { .. } => self.counters.forwarded += 1,
            Destination::Unresolved { .. } => self.counters.punted_unresolved += 1,
        }
    }
}

impl Core {
    /// `neigh_invalidate`'s `error_report` for `packet`, an IP packet that
    /// waited on link `link` for a neighbour whose resolution failed, as
    /// it was queued (after `ip_forward` or `ip6_forward`: TTL or hop limit
    /// already one less, `ip_forward_options` applied):
    ///
    /// * IPv4, `arp_error_report` -> `dst_link_failure` ->
    ///   `ipv4_link_failure` -> `ipv4_send_dest_unreach`: nothing for a
    ///   header that is not a whole IPv4 one; options are compiled again
    ///   on the queued header (`__ip_options_compile` with the skb, so a
    ///   record route takes one more address, written into the packet the
    ///   error quotes), nothing if they do not compile; then
    ///   `__icmp_send(ICMP_DEST_UNREACH, ICMP_HOST_UNREACH)`;
    /// * IPv6, `ndisc_error_report` -> `ip6_link_failure` ->
    ///   `icmpv6_send(ICMPV6_DEST_UNREACH, ICMPV6_ADDR_UNREACH)`, with
    ///   `skb->dev` the output device (`icmp6_iif`).
    ///
    /// Both go through the rate limits and source selection of every
    /// other error; the packet itself was already counted when it was
    /// punted ([`crate::PuntKind::Unresolved`]) and is not counted again.
    pub(crate) fn resolution_failed(&mut self, out: &mut Out<'_>, packet: &[u8]) {
        let link = self.ports[out.in_port].config.link;
        match packet.first().map(|b| b >> 4) {
            Some(4) => {
                let Ok(h) = receive::ipv4_header(packet) else {
                    return;
                };
                let packet = &packet[..h.total_len.min(packet.len())];
                let mut held = Held::new(packet, h.header_len);
                if h.header_len > 20 {
                    let router = InputRouter {
                        fib: out.fib,
                        h: &h,
                        dev: link,
                        local: false,
                    };
                    match options::compile(&mut held.header, h.header_len, &router) {
                        Ok(compiled) => held.options = compiled,
                        Err(_) => return,
                    }
                }
                self.send_error_held_v4(out, &held, PacketType::Host, Icmp4Error::LinkFailure);
            }
            Some(6) if packet.len() >= fibre_net::ipv6::HEADER_LEN => {
                // `icmp6_send` takes `icmp6_iif` (the output device) only
                // for a sender that needs a scope; else the source comes
                // from the route back (`ip6_route_get_saddr` on its
                // device), so that device stands for the input link.
                let sender = crate::output::ipv6_at(packet, 8);
                let back = FlowKeyV6 {
                    dst: u128::from(sender),
                    ..FlowKeyV6::default()
                };
                let source_link = match out.fib.lookup_output_v6(&back) {
                    Ok(route) if !icmp::needs_scope_v6(sender) => route.dev,
                    _ => link,
                };
                let error = Icmp6Error::AddressUnreachable;
                self.send_error_v6(out, packet, PacketType::Host, error, source_link);
            }
            _ => {}
        }
    }
}

/// What the input path decided for a packet to forward.
#[derive(Clone, Copy)]
struct Forwarding<'a> {
    answer: &'a Forward,
    /// `RTCF_DOREDIRECT`: send the sender a redirect.
    redirect: bool,
}

/// A received IPv4 packet as the input path holds it: its header as
/// `ip_options_compile` changed it (a copy; the frame is not written) and
/// what that recorded.
struct Held<'p> {
    packet: &'p [u8],
    header: [u8; 60],
    options: Compiled,
}

impl<'p> Held<'p> {
    fn new(packet: &'p [u8], header_len: usize) -> Held<'p> {
        let mut header = [0u8; 60];
        header[..header_len].copy_from_slice(&packet[..header_len]);
        Held {
            packet,
            header,
            options: Compiled::default(),
        }
    }

    /// The packet as held, as far as an ICMP error quotes it: the packet
    /// itself where its header did not change, else its first bytes
    /// copied into `quote` with the changed header.
    fn offending<'a>(&'a self, quote: &'a mut [u8; icmp::MAX_ERROR_LEN_V4]) -> &'a [u8] {
        if !self.options.is_changed {
            return self.packet;
        }
        let len = self.copy_quote(quote);
        &quote[..len]
    }

    /// Copies the first bytes of the packet as held into `quote`; returns
    /// how many.
    fn copy_quote(&self, quote: &mut [u8; icmp::MAX_ERROR_LEN_V4]) -> usize {
        let len = self.packet.len().min(quote.len());
        copy(quote, &self.packet[..len]);
        if self.options.is_changed {
            let header_len = usize::from(self.header[0] & 0x0f) * 4;
            quote[..header_len].copy_from_slice(&self.header[..header_len]);
        }
        len
    }
}

/// What the options of a received packet ask of the router.
struct InputRouter<'a> {
    fib: &'a Fib,
    h: &'a Ipv4Header,
    /// The device the packet is on (`skb->dev`).
    dev: fibre_fib::LinkIndex,
    /// The input route is local (`RTCF_LOCAL` without broadcast or
    /// multicast).
    local: bool,
}

impl options::Router for InputRouter<'_> {
    /// `fib_compute_spec_dst`: the destination itself when the route is
    /// local, else [`Fib::spec_dst_v4`] on the device the packet is on
    /// (`skb->dev`: the input device, or the output one for a packet that
    /// waited for its neighbour); 0.0.0.0 where that finds no address.
    fn spec_dst(&self) -> Ipv4Addr {
        if self.local {
            return self.h.dst;
        }
        self.fib
            .spec_dst_v4(self.dev, self.h.src, self.h.tos)
            .unwrap_or(Ipv4Addr::UNSPECIFIED)
    }

    /// `inet_addr_type(addr) == RTN_UNICAST`: not 0.0.0.0/8 nor the
    /// limited broadcast (`RTN_BROADCAST`), not multicast, and not a
    /// local or broadcast route of the local table.
    fn is_unicast(&self, addr: Ipv4Addr) -> bool {
        if addr.octets()[0] == 0 || addr.is_broadcast() || addr.is_multicast() {
            return false;
        }
        let key = FlowKeyV4 {
            dst: u32::from(addr),
            ..FlowKeyV4::default()
        };
        !matches!(
            self.fib.lookup_output_v4(&key),
            Ok(f) if matches!(f.kind, RouteType::Local | RouteType::Broadcast)
        )
    }

    fn timestamp(&self) -> u32 {
        options::current_timestamp()
    }
}

/// `ip_rt_get_source` for a forwarded packet: the source the route to
/// its destination picks (`fib_result_prefsrc`; 0.0.0.0 where it has
/// none); where that lookup fails, `inet_select_addr` on the output
/// device `dev` towards `next_hop` (`rt_nexthop`).
fn outgoing_source(
    out: &Out<'_>,
    h: &Ipv4Header,
    dev: fibre_fib::LinkIndex,
    next_hop: Ipv4Addr,
) -> Ipv4Addr {
    match out.fib.output_source_v4(h.dst, h.tos) {
        Ok(found) => found.unwrap_or(Ipv4Addr::UNSPECIFIED),
        Err(_) => out
            .fib
            .select_source_v4(dev, next_hop, Scope::UNIVERSE)
            .unwrap_or(Ipv4Addr::UNSPECIFIED),
    }
}

/// Whether an input route's `errno` came from `fib_lookup` (an
/// unreachable, prohibit or blackhole route, or none: `ip_route_input_slow`
/// goes to `no_route` and the packet to `ip_error`, after its options are
/// compiled) rather than from its own checks (martians, EINVAL) or the
/// reverse path filter (EXDEV), which drop the packet there. A
/// blackhole's EINVAL is told from a martian's by the route itself: the
/// output lookup of the same flow meets the blackhole too. Only a packet
/// `with_options` needs telling: without, both end silently alike.
fn is_error_route(fib: &Fib, key: &FlowKeyV4, errno: Errno, with_options: bool) -> bool {
    match errno {
        Errno::HostUnreach | Errno::NetUnreach | Errno::Acces => true,
        Errno::Inval => with_options && fib.lookup_output_v4(key) == Err(Errno::Inval),
        _ => false,
    }
}

/// Writes the IPv4 header checksum of `header` anew (`ip_send_check`).
fn refill_checksum(header: &mut [u8]) {
    header[10..12].fill(0);
    let sum = fibre_net::checksum::checksum(header);
    header[10..12].copy_from_slice(&sum.to_be_bytes());
}

/// The drop reason of an input route's errno.
fn route_drop(errno: Errno) -> DropReason {
    match errno {
        Errno::HostUnreach | Errno::NetUnreach => DropReason::Unreachable,
        Errno::Acces => DropReason::Prohibited,
        Errno::NoDev => DropReason::PortDown,
        _ => DropReason::InvalidRoute,
    }
}

/// fe80::/10 (`IPV6_ADDR_LINKLOCAL`).
fn is_link_local(a: &Ipv6Addr) -> bool {
    a.segments()[0] & 0xffc0 == 0xfe80
}

/// `ipv6_chk_mcast_addr`: the groups a router's IPv6 link has joined:
/// all-nodes (`ipv6_add_dev`), link- and site-local all-routers
/// (`dev_forward_change`, forwarding being on), and the solicited-node
/// group (RFC 4291 section 2.7.1) of each of its addresses
/// (`addrconf_join_solict`) and of each address's subnet-router anycast
/// (`addrconf_join_anycast`, for prefixes up to /126).
fn joined_group_v6(fib: &fibre_fib::Fib, link: fibre_fib::LinkIndex, group: Ipv6Addr) -> bool {
    const ALL_NODES: Ipv6Addr = Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1);
    const ALL_ROUTERS: Ipv6Addr = Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 2);
    const SITE_ALL_ROUTERS: Ipv6Addr = Ipv6Addr::new(0xff05, 0, 0, 0, 0, 0, 0, 2);
    const SOLICITED_NODE: u128 = 0xff02_0000_0000_0000_0000_0001_ff00_0000;
    const SOLICITED_NODE_MASK: u128 = !0xff_ffff;
    if group == ALL_NODES || group == ALL_ROUTERS || group == SITE_ALL_ROUTERS {
        return true;
    }
    let group = u128::from(group);
    if group & SOLICITED_NODE_MASK != SOLICITED_NODE {
        return false;
    }
    fib.addrs_of_v6(link).iter().any(|a| {
        let IpAddr::V6(local) = a.local else {
            return false;
        };
        let local = u128::from(local);
        let host_bits = u128::MAX.checked_shr(u32::from(a.prefix_len)).unwrap_or(0);
        // `ipv6_addr_prefix`; `::` is not joined.
        let anycast = Some(local & !host_bits).filter(|&any| a.prefix_len < 127 && any != 0);
        let solicits = |addr: u128| addr & !SOLICITED_NODE_MASK == group & !SOLICITED_NODE_MASK;
        solicits(local) || anycast.is_some_and(solicits)
    })
}

/// ICMPv6 router/neighbour solicitation and advertisement, or redirect
/// (types 133 to 137): `ndisc_rcv`'s, the control side's.
fn is_neighbour_discovery(packet: &[u8], h: &Ipv6Header) -> bool {
    h.next_header == IPPROTO_ICMPV6 && packet.get(40).is_some_and(|t| (133..=137).contains(t))
}
