//! A port in memory: frames injected by a test come out of
//! [`Port::receive`]; transmitted frames are kept for the test to read.

use std::collections::VecDeque;
use std::io;

use crate::Port;

/// Frames in memory, for tests: what [`MemoryPort::inject`] puts in is
/// received, what is transmitted and flushed is in [`MemoryPort::sent`].
#[derive(Debug, Default)]
pub struct MemoryPort {
    mtu: usize,
    incoming: VecDeque<Vec<u8>>,
    queued: Vec<Vec<u8>>,
    sent: Vec<Vec<u8>>,
}

impl MemoryPort {
    /// A port of `mtu` (frames longer than it plus the Ethernet header
    /// are refused on transmit, as a device refuses them).
    pub fn new(mtu: usize) -> Self {
        Self {
            mtu,
            ..Self::default()
        }
    }

    /// A frame the port will receive.
    pub fn inject(&mut self, frame: Vec<u8>) {
        self.incoming.push_back(frame);
    }

    /// The frames flushed so far.
    pub fn sent(&self) -> &[Vec<u8>] {
        &self.sent
    }
}

impl Port for MemoryPort {
    fn receive(&mut self, max: usize, deliver: &mut dyn FnMut(&[&[u8]])) -> io::Result<usize> {
        let n = self.incoming.len().min(max);
        if n == 0 {
            return Ok(0);
        }
        let burst: Vec<Vec<u8>> = self.incoming.drain(..n).collect();
        let frames: Vec<&[u8]> = burst.iter().map(Vec::as_slice).collect();
        deliver(&frames);
        Ok(n)
    }

    fn transmit(&mut self, frame: &[u8]) -> io::Result<()> {
        if frame.len() > self.mtu + 14 {
            return Err(io::Error::from_raw_os_error(libc::EMSGSIZE));
        }
        self.queued.push(frame.to_vec());
        Ok(())
    }

    fn flush(&mut self) -> io::Result<usize> {
        let n = self.queued.len();
        self.sent.append(&mut self.queued);
        Ok(n)
    }
}
