//! A packet capture running in the background in one namespace: `dumpcap`
//! writing a classic pcap file (Ethernet link type, what `fibre --icmp`
//! reads) until it has a given number of packets, within bounds.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::netns::Namespace;

/// How long dumpcap may take to start capturing, or to get its packets
/// once they were sent.
const DUMPCAP_LIMIT: Duration = Duration::from_secs(10);

/// dumpcap's own stop condition, in case the test dies without stopping it
/// (a SIGKILLed test runs no destructor): the capture then ends by itself.
const AUTOSTOP: &str = "duration:60";

/// A running `dumpcap`; killed on drop if still running.
#[derive(Debug)]
pub struct Capture {
    child: Child,
    file: PathBuf,
    /// The packets it stops after.
    packets: usize,
    /// dumpcap's stderr, line by line, as it comes.
    lines: Receiver<String>,
    /// What was read from `lines` so far.
    said: Vec<String>,
    reader: Option<JoinHandle<()>>,
}

impl Capture {
    /// Starts `dumpcap -i DEV -f FILTER -c PACKETS -w FILE -P` in `ns` and
    /// returns once it captures.
    ///
    /// It stops by itself after PACKETS packets, not by a signal: stopped
    /// with SIGINT right after the pings, dumpcap was seen to write an empty
    /// file (the packets were still in the kernel's capture ring).
    ///
    /// dumpcap prints `Capturing on 'DEV'` before it opens the device and
    /// `File: FILE` once the device is open, its filter set and the output
    /// file written: from then on every packet is kept, so that is the line
    /// waited for.
    pub fn start(
        ns: &Namespace,
        dev: &str,
        filter: &str,
        packets: usize,
        file: &Path,
    ) -> Result<Capture, String> {
        let file_text = file.to_string_lossy().into_owned();
        let count = packets.to_string();
        let mut command = ns.command(
            "dumpcap",
            &[
                "-i", dev, "-f", filter, "-c", &count, "-w", &file_text,
                // Classic pcap, not pcapng: what `fibre --icmp` reads.
                "-P", "-q", "-a", AUTOSTOP,
            ],
        );
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start dumpcap in {}: {e}", ns.name()))?;
        let stderr = child.stderr.take().expect("stderr is piped");
        let (sender, lines) = mpsc::channel();
        let reader = thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut capture = Capture {
            child,
            file: file.to_path_buf(),
            packets,
            lines,
            said: Vec::new(),
            reader: Some(reader),
        };
        let expected = format!("File: {file_text}");
        let deadline = Instant::now() + DUMPCAP_LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match capture.lines.recv_timeout(left) {
                Ok(line) => {
                    let ready = line.trim() == expected;
                    capture.said.push(line);
                    if ready {
                        return Ok(capture);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!(
                        "dumpcap did not start capturing on {dev} within {DUMPCAP_LIMIT:?}: {}",
                        capture.said.join(" | ")
                    ))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let _ = capture.child.wait();
                    return Err(format!(
                        "dumpcap exited before capturing on {dev}: {}",
                        capture.said.join(" | ")
                    ));
                }
            }
        }
    }

    /// Waits until dumpcap has its packets and has exited (it writes
    /// them out and closes the file on reaching its count) and returns the
    /// file.
    pub fn finish(mut self) -> Result<PathBuf, String> {
        let deadline = Instant::now() + DUMPCAP_LIMIT;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                // Killed by drop.
                Ok(None) if Instant::now() >= deadline => {
                    return Err(format!(
                        "dumpcap did not get its {} packets within {DUMPCAP_LIMIT:?}",
                        self.packets
                    ))
                }
                Ok(None) => thread::sleep(Duration::from_millis(10)),
                Err(e) => return Err(format!("waiting for dumpcap: {e}")),
            }
        };
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        self.said.extend(self.lines.try_iter());
        if !status.success() {
            return Err(format!(
                "dumpcap ended with {status}: {}",
                self.said.join(" | ")
            ));
        }
        Ok(self.file.clone())
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
