//! The real one: lock-free readers over an [`RcuCell`].

use super::Protected;
use fibre_rcu::{Domain, RcuCell, ReaderHandle};

/// `T` in an [`RcuCell`] of its own [`Domain`]: a read is one acquire load
/// of the published pointer; a write clones the current version, edits the
/// clone and publishes it; replaced versions are freed by later writes once
/// every reader has reported a quiescent state.
///
/// ```
/// use fibre_bench::protect::{Protected, Rcu};
/// let shared = Rcu::new(String::from("a"));
/// let mut reader = shared.reader();
/// shared.write(|s| s.push('b'));
/// assert_eq!(shared.read(&mut reader, |s| s.clone()), "ab");
/// ```
#[derive(Debug)]
pub struct Rcu<T> {
    domain: Domain,
    cell: RcuCell<T>,
}

impl<T> Rcu<T> {
    /// Protects `value` in a new domain.
    pub fn new(value: T) -> Self {
        let domain = Domain::new();
        let cell = RcuCell::new(&domain, value);
        Rcu { domain, cell }
    }

    /// Protects `value` in an existing domain (its readers then serve this
    /// value and the domain's other cells).
    ///
    /// ```
    /// use fibre_bench::protect::{Protected, Rcu};
    /// use fibre_rcu::Domain;
    /// let domain = Domain::new();
    /// let shared = Rcu::in_domain(&domain, 3);
    /// let mut reader = shared.reader();
    /// assert_eq!(shared.read(&mut reader, |v| *v), 3);
    /// assert_eq!(domain.stats().readers_registered, 1);
    /// ```
    pub fn in_domain(domain: &Domain, value: T) -> Self {
        Rcu {
            domain: domain.clone(),
            cell: RcuCell::new(domain, value),
        }
    }

    /// The domain, e.g. for its statistics.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// The cell, for the full RCU API (batches, bounds, synchronize).
    pub fn cell(&self) -> &RcuCell<T> {
        &self.cell
    }
}

impl<T: Clone + Send + Sync> Protected<T> for Rcu<T> {
    type Reader = ReaderHandle;

    fn name(&self) -> &'static str {
        "rcu"
    }

    fn reader(&self) -> ReaderHandle {
        self.domain.register()
    }

    #[inline]
    fn read<R>(&self, reader: &mut ReaderHandle, f: impl FnOnce(&T) -> R) -> R {
        let guard = reader.read();
        f(self.cell.read(&guard))
    }

    #[inline]
    fn quiescent(&self, reader: &mut ReaderHandle) {
        reader.quiescent();
    }

    fn write<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        self.cell.update(f)
    }
}
