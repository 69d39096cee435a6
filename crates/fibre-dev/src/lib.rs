//! Network devices for fibre: dummy, loopback and GRE tunnels, with
//! per-worker statistics and batched, lockless transmit.
//!
//! * [`Registry`]: devices by ifindex; [`Registry::transmit`] is the
//!   transmit contract (a [`PacketBatch`] of buffers with headroom, a
//!   [`WorkerId`], a [`TxReport`]), [`Registry::receive_gre`] the GRE
//!   receive one; NIC queues (AF_XDP/AF_PACKET) join as a [`Port`];
//! * [`gre`]: gre/ip6gre/gretap/ip6gretap tunnels (RFC 2784, RFC 2890),
//!   lockless or locked transmit, `iseq`/`icsum`/key checks on receipt;
//! * [`route`]: what a tunnel needs from the route cache, with
//!   [`FibRoutes`] over `fibre_fib` and a fixed table for tests;
//! * [`stats`]: per-worker counters, summed when read, and `ip -s link`.
//!
//! [`WorkerId`] and [`DropReason`] are `fibre-base`'s, re-exported: every
//! layer shares them. The locked-versus-lockless transmit experiment lives
//! in fibre-bench (`fibre bench greflood`); its "before", a locked transmit
//! (`TxMode::Locked`), is built only with the `baselines` feature, which
//! only fibre-bench enables.
//!
//! ```
//! use std::sync::Arc;
//! use fibre_dev::{gre::{GreConfig, TxMode}, route::{FixedRoutes, UnderlayRoute}};
//! use fibre_dev::{PacketBatch, PacketBuf, Registry, WorkerId};
//! let routes = Arc::new(FixedRoutes::new());
//! routes.set("192.0.2.2".parse().unwrap(), UnderlayRoute { oif: 1, gateway: None,
//!     src: Some("192.0.2.1".parse().unwrap()), mtu: 1500 });
//! let mut reg = Registry::new(1);
//! reg.add_dummy(1, "eth0", 1500).unwrap();
//! let cfg = GreConfig::parse(&["gt0", "type", "gre", "remote", "192.0.2.2", "key", "5", "csum"]).unwrap();
//! reg.add_gre(2, cfg, routes, TxMode::Lltx).unwrap();
//! let mut inner = [0u8; 28];
//! inner[0] = 0x45; inner[6] = 0x40; inner[8] = 64; // IPv4, DF, TTL 64
//! let mut p = PacketBuf::new(64, 1500);
//! p.load(&inner).unwrap();
//! let mut batch = PacketBatch::with_capacity(1);
//! batch.push(p);
//! let report = reg.transmit(2, WorkerId::new(0), &mut batch);
//! assert_eq!(report.sent, 1);
//! assert_eq!(batch.packets()[0].len(), 20 + 12 + 28);
//! assert_eq!(reg.get(1).unwrap().stats().snapshot().tx_packets, 1);
//! ```

#![deny(missing_docs)]

pub mod device;
mod fib_routes;
pub mod gre;
mod packet;
mod registry;
pub mod route;
pub mod stats;
mod worker;

pub use device::{Device, DeviceType, Port};
pub use fib_routes::FibRoutes;
/// Re-exported from `fibre-base`, where every layer shares them.
pub use fibre_base::{DropClass, DropReason, WorkerId};
pub use packet::{PacketBatch, PacketBuf, PacketTooLong, Verdict};
pub use registry::{Registry, RegistryError, RxReport, TxReport};
pub use worker::MAX_WORKERS;
