//! Devices indexed by ifindex: an array of slots, not a web of pointers.

use std::collections::HashMap;
use std::sync::Arc;

use crate::device::{CountingDevice, Device, Port};
use crate::gre::{GreConfig, GreConfigError, GreTunnel, TxMode};
use crate::packet::{PacketBatch, Verdict};
use crate::route::UnderlayRoutes;
use crate::stats::format_ip_s_link;
use crate::WorkerId;

/// Why a device could not be added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// ifindex 0 is reserved (it means "none").
    #[error("ifindex 0 is reserved")]
    ZeroIndex,
    /// The ifindex is taken.
    #[error("ifindex {0} is already in use")]
    IndexInUse(u32),
    /// The name is taken.
    #[error("device name `{0}` is already in use")]
    NameInUse(String),
    /// ifindexes are dense array slots; this one is too large.
    #[error("ifindex {0} is above the limit of {max}", max = Registry::MAX_INDEX)]
    IndexTooLarge(u32),
    /// The tunnel configuration was refused.
    #[error(transparent)]
    Gre(#[from] GreConfigError),
}

/// What a transmit call did with a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxReport {
    /// Packets handed to the wire (or consumed by a dummy/loopback device).
    pub sent: usize,
    /// Packets dropped (each counted under its reason by the device that
    /// dropped it).
    pub dropped: usize,
    /// When a packet exceeded a path MTU and may not be fragmented: that
    /// MTU, for the ICMP error the caller should send back.
    pub path_mtu: Option<u32>,
}

/// What a receive call did with a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RxReport {
    /// Decapsulated and left pending for the next layer.
    pub accepted: usize,
    /// Claimed by a tunnel and dropped by it (counted there by reason).
    pub dropped: usize,
    /// Claimed by no tunnel.
    pub unmatched: usize,
}

/// Every device, by ifindex, sized for a fixed number of workers.
///
/// ```
/// use fibre_dev::{PacketBatch, PacketBuf, Registry, WorkerId};
/// let mut reg = Registry::new(1);
/// reg.add_dummy(2, "d0", 1500).unwrap();
/// let mut batch = PacketBatch::with_capacity(1);
/// let mut p = PacketBuf::new(64, 128);
/// p.load(&[0x45; 20]).unwrap();
/// batch.push(p);
/// let report = reg.transmit(2, WorkerId::new(0), &mut batch);
/// assert_eq!(report.sent, 1);
/// assert_eq!(reg.get(2).unwrap().stats().snapshot().tx_bytes, 20);
/// ```
#[derive(Debug)]
pub struct Registry {
    devices: Vec<Option<Device>>,
    /// The ifindex of each device by name: every add checks the name is
    /// free, so a registry built from a FIB of many links would otherwise
    /// walk the devices once per device.
    names: HashMap<String, u32>,
    workers: usize,
}

impl Registry {
    /// The largest ifindex accepted (the slot array grows to it).
    pub const MAX_INDEX: u32 = 1 << 20;

    /// An empty registry whose devices keep state for `workers` workers
    /// (1 to [`crate::MAX_WORKERS`]; values outside are clamped).
    pub fn new(workers: usize) -> Registry {
        Registry {
            devices: Vec::new(),
            names: HashMap::new(),
            workers: workers.clamp(1, crate::MAX_WORKERS),
        }
    }

    /// Workers every device keeps state for.
    pub fn workers(&self) -> usize {
        self.workers
    }

    fn check_free(&self, index: u32, name: &str) -> Result<(), RegistryError> {
        if index == 0 {
            return Err(RegistryError::ZeroIndex);
        }
        if index > Registry::MAX_INDEX {
            return Err(RegistryError::IndexTooLarge(index));
        }
        if self.get(index).is_some() {
            return Err(RegistryError::IndexInUse(index));
        }
        if self.by_name(name).is_some() {
            return Err(RegistryError::NameInUse(name.into()));
        }
        Ok(())
    }

    fn insert(&mut self, device: Device) {
        let at = device.index() as usize;
        self.names.insert(device.name().to_string(), device.index());
        if self.devices.len() <= at {
            self.devices.resize_with(at + 1, || None);
        }
        self.devices[at] = Some(device);
    }

    /// Adds a dummy device (counts and discards).
    pub fn add_dummy(&mut self, index: u32, name: &str, mtu: u32) -> Result<(), RegistryError> {
        self.check_free(index, name)?;
        let device = CountingDevice::new(index, name, mtu, false, self.workers);
        self.insert(Device::Port(Box::new(device)));
        Ok(())
    }

    /// Adds a loopback device (MTU 65536, as Linux's `lo`).
    pub fn add_loopback(&mut self, index: u32, name: &str) -> Result<(), RegistryError> {
        self.check_free(index, name)?;
        let device = CountingDevice::new(index, name, 65_536, true, self.workers);
        self.insert(Device::Port(Box::new(device)));
        Ok(())
    }

    /// Adds a device implemented elsewhere (a NIC queue).
    pub fn add_port(&mut self, port: Box<dyn Port>) -> Result<(), RegistryError> {
        self.check_free(port.index(), port.name())?;
        self.insert(Device::Port(port));
        Ok(())
    }

    /// Adds a GRE tunnel resolving its underlay through `routes`.
    pub fn add_gre(
        &mut self,
        index: u32,
        config: GreConfig,
        routes: Arc<dyn UnderlayRoutes>,
        mode: TxMode,
    ) -> Result<(), RegistryError> {
        self.check_free(index, &config.name)?;
        let tunnel = GreTunnel::new(index, config, routes, mode, self.workers)?;
        self.insert(Device::Gre(Box::new(tunnel)));
        Ok(())
    }

    /// A registry with a device for every link of `fib`, under the link's
    /// ifindex, name, MTU and up state: `lo` a loopback device, each GRE
    /// link a tunnel built from its [`fibre_fib::GreSpec`] (resolving its
    /// underlay through `routes`), every other kind (dummy, ifb, veth
    /// until real ports exist) a counting device. Fresh devices: every
    /// counter is zero.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use fibre_dev::{gre::TxMode, FibRoutes, Registry};
    /// let text = "link add eth0 up type dummy\nlink add gre1 up type gre remote 192.0.2.2 key 5\n";
    /// let (fib, _) = fibre_fib::config::apply_str(&fibre_fib::Fib::new(), "t", text, false).unwrap();
    /// let routes = Arc::new(FibRoutes::new(fib.clone()));
    /// let reg = Registry::from_fib(&fib, routes, 1, TxMode::Lltx).unwrap();
    /// let gre1 = reg.by_name("gre1").unwrap();
    /// assert_eq!((gre1.index(), gre1.mtu(), gre1.is_up()), (3, 1472, true));
    /// assert_eq!(gre1.as_gre().unwrap().config().spec.okey, Some(5));
    /// ```
    pub fn from_fib(
        fib: &fibre_fib::Fib,
        routes: Arc<dyn UnderlayRoutes>,
        workers: usize,
        mode: TxMode,
    ) -> Result<Registry, RegistryError> {
        let mut registry = Registry::new(workers);
        for link in fib.links() {
            match &link.kind {
                fibre_fib::LinkKind::Loopback => registry.add_loopback(link.index, &link.name)?,
                fibre_fib::LinkKind::Gre(spec) => {
                    let config = GreConfig {
                        name: link.name.clone(),
                        spec: spec.clone(),
                    };
                    registry.add_gre(link.index, config, routes.clone(), mode)?
                }
                _ => registry.add_dummy(link.index, &link.name, link.mtu)?,
            }
            let device = registry.get(link.index).expect("just added");
            // The FIB's MTU is the configured one (the kernel's default or
            // `mtu N`); a tunnel still clamps each batch to its underlay.
            device.set_mtu(link.mtu);
            device.set_up(link.up);
        }
        Ok(registry)
    }

    /// The device with ifindex `index`.
    pub fn get(&self, index: u32) -> Option<&Device> {
        self.devices.get(index as usize).and_then(Option::as_ref)
    }

    /// The device named `name`.
    pub fn by_name(&self, name: &str) -> Option<&Device> {
        self.get(*self.names.get(name)?)
    }

    /// Every device, by ifindex.
    pub fn iter(&self) -> impl Iterator<Item = &Device> {
        self.devices.iter().flatten()
    }

    /// Transmits the batch's pending packets through device `index`:
    /// tunnels encapsulate in place and pass the batch on to their
    /// underlay device. Every pending packet ends sent or dropped (and
    /// counted by the device that dropped it). The report counts the whole
    /// batch by verdict afterwards, so reuse buffers through
    /// [`crate::PacketBuf::load`] or [`crate::PacketBuf::rewind`], which
    /// make them pending again.
    pub fn transmit(&self, index: u32, worker: WorkerId, batch: &mut PacketBatch) -> TxReport {
        let path_mtu = self.transmit_nested(index, worker, batch, 0);
        let mut report = TxReport {
            path_mtu,
            ..TxReport::default()
        };
        for p in batch.packets() {
            match p.verdict() {
                Verdict::Sent => report.sent += 1,
                Verdict::Dropped(_) => report.dropped += 1,
                Verdict::Pending => {}
            }
        }
        report
    }

    pub(crate) fn transmit_nested(
        &self,
        index: u32,
        worker: WorkerId,
        batch: &mut PacketBatch,
        depth: u8,
    ) -> Option<u32> {
        match self.get(index) {
            Some(Device::Port(d)) => {
                d.transmit(worker, batch);
                None
            }
            Some(Device::Gre(t)) => t.transmit(self, worker, batch, depth),
            None => {
                // The route names a device we do not have: nowhere to send.
                // Counted nowhere but in the verdicts (there is no device).
                for p in batch.pending_mut() {
                    p.set_verdict(Verdict::Dropped(crate::DropReason::NoRoute));
                }
                None
            }
        }
    }

    /// Receives a batch of outer IP + GRE frames (as a NIC queue delivers
    /// them, from the IP header on): each is given to the tunnel it belongs
    /// to (remote = outer source, local = outer destination or any, same
    /// key; an exact local beats a wildcard, as in Linux), which checks and
    /// strips it in place. Accepted packets stay pending, each tagged in
    /// `tunnels` with the receiving tunnel's ifindex (same order as the
    /// batch; 0 for a drop). Frames no tunnel claims are dropped as
    /// [`crate::DropReason::NotForTunnel`] and counted in the report only
    /// (Linux answers them with ICMP unreachable; no device counts them).
    ///
    /// Tunnels are found by a scan, fine for tens of tunnels; a hash on
    /// (remote, key) is the step after that.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use fibre_dev::{gre::{GreConfig, TxMode}, route::{FixedRoutes, UnderlayRoute}};
    /// use fibre_dev::{PacketBatch, PacketBuf, Registry, WorkerId};
    /// // One side sends through gt0 to a dummy underlay...
    /// let routes = Arc::new(FixedRoutes::new());
    /// routes.set("192.0.2.2".parse().unwrap(), UnderlayRoute { oif: 1, gateway: None, src: None, mtu: 1500 });
    /// let mut a = Registry::new(1);
    /// a.add_dummy(1, "eth0", 1500).unwrap();
    /// let tokens = ["gt0", "type", "gre", "remote", "192.0.2.2", "local", "192.0.2.1", "key", "9"];
    /// a.add_gre(2, GreConfig::parse(&tokens).unwrap(), routes.clone(), TxMode::Lltx).unwrap();
    /// let mut inner = [0u8; 20];
    /// inner[0] = 0x45; inner[6] = 0x40; inner[8] = 64;
    /// let mut p = PacketBuf::new(64, 1500);
    /// p.load(&inner).unwrap();
    /// let mut batch = PacketBatch::with_capacity(1);
    /// batch.push(p);
    /// a.transmit(2, WorkerId::new(0), &mut batch);
    /// // ...the other side's tunnel takes the frame and strips it.
    /// let mut b = Registry::new(1);
    /// let tokens = ["gt0", "type", "gre", "remote", "192.0.2.1", "local", "192.0.2.2", "key", "9"];
    /// b.add_gre(5, GreConfig::parse(&tokens).unwrap(), routes, TxMode::Lltx).unwrap();
    /// let mut rx = PacketBatch::with_capacity(1);
    /// let mut p = PacketBuf::new(0, 1500);
    /// p.load(batch.packets()[0].data()).unwrap();
    /// rx.push(p);
    /// let mut owners = Vec::new();
    /// assert_eq!(b.receive_gre(WorkerId::new(0), &mut rx, &mut owners).accepted, 1);
    /// assert_eq!((owners[0], rx.packets()[0].data()), (5, &inner[..]));
    /// ```
    pub fn receive_gre(
        &self,
        worker: WorkerId,
        batch: &mut PacketBatch,
        tunnels: &mut Vec<u32>,
    ) -> RxReport {
        use crate::gre::{match_score, peek_tunnel_key, GreTunnel};
        use crate::stats::BatchCounts;
        tunnels.clear();
        let mut report = RxReport::default();
        // Batches usually belong to one tunnel: count per run of frames of
        // the same tunnel, and add to its statistics once per run.
        let mut current: Option<(&GreTunnel, crate::gre::RxPolicy)> = None;
        let mut counts = BatchCounts::default();
        for p in batch.packets_mut() {
            if p.verdict() != Verdict::Pending {
                tunnels.push(0);
                continue;
            }
            let found = peek_tunnel_key(p.data()).and_then(|key| {
                self.iter()
                    .filter_map(|d| d.as_gre())
                    .filter_map(|t| match_score(t, &key).map(|score| (score, t)))
                    .max_by_key(|(score, _)| *score)
                    .map(|(_, t)| t)
            });
            let Some(tunnel) = found else {
                p.set_verdict(Verdict::Dropped(crate::DropReason::NotForTunnel));
                report.unmatched += 1;
                tunnels.push(0);
                continue;
            };
            let policy = match current {
                Some((t, policy)) if std::ptr::eq(t, tunnel) => policy,
                _ => {
                    if let Some((previous, _)) = current {
                        previous.stats().add(worker, &counts);
                    }
                    counts = BatchCounts::default();
                    let policy = tunnel.rx_policy();
                    current = Some((tunnel, policy));
                    policy
                }
            };
            if tunnel.receive_one(&policy, p, &mut counts) {
                report.accepted += 1;
                tunnels.push(tunnel.index());
            } else {
                report.dropped += 1;
                tunnels.push(0);
            }
        }
        if let Some((t, _)) = current {
            t.stats().add(worker, &counts);
        }
        report
    }

    /// `ip -s link show` of every device.
    ///
    /// ```
    /// let mut reg = fibre_dev::Registry::new(1);
    /// reg.add_loopback(1, "lo").unwrap();
    /// assert!(reg.format_ip_s_link().starts_with("1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 "));
    /// ```
    pub fn format_ip_s_link(&self) -> String {
        self.iter()
            .map(|d| format_ip_s_link(&d.summary(), &d.stats().snapshot().ip_link_stats()))
            .collect()
    }
}
