//! The control socket's server side: a nonblocking Unix listener polled by
//! the control thread between its other work, so that no client can hold
//! the router up. Each connection is read until the client shuts its side
//! down, within [`MAX_REQUEST_BYTES`] and [`REQUEST_TIMEOUT`]; its answer
//! is written as the client takes it, within [`WRITE_TIMEOUT`]. Only root
//! and the router's own user may connect (`SO_PEERCRED`), and the socket
//! file is made mode 0600.

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::ctl::{encode_answer, Answer, RequestFlags, MAX_REQUEST_BYTES, REQUEST_TIMEOUT};

/// Connections served at once; more are refused with a message.
const MAX_CLIENTS: usize = 16;

/// How long an answer may take to be read by its client.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// The header line must end within this many bytes.
const MAX_HEADER_BYTES: usize = 256;

/// One request, read whole.
#[derive(Debug)]
pub struct Request<'a> {
    /// The header's options.
    pub flags: RequestFlags,
    /// The lines after the header.
    pub lines: Vec<&'a str>,
}

enum State {
    Reading(Vec<u8>),
    Writing(Vec<u8>, usize),
    /// The answer is written and our side shut down; what the client still
    /// sends (a refused client may be mid-request) is read and dropped
    /// until it shuts down too, so that closing does not reset the
    /// connection before it has read the answer.
    Draining,
}

struct Client {
    stream: UnixStream,
    since: Instant,
    state: State,
}

/// What the control socket counted (shown by `workers show`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SocketCounts {
    /// Requests answered.
    pub answered: u64,
    /// Connections refused: credentials, garbage, oversize, timeouts, too many.
    pub refused: u64,
}

/// The listening socket and its connections.
pub struct ControlSocket {
    listener: UnixListener,
    path: PathBuf,
    clients: Vec<Client>,
    /// The router's effective uid: besides root, the only one served.
    owner: u32,
    counts: SocketCounts,
}

/// The uid at the other end of `stream` (`SO_PEERCRED`).
fn peer_uid(stream: &UnixStream) -> io::Result<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are live and sized for SO_PEERCRED's answer.
    let result = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(cred.uid)
}

/// An answer that only refuses.
fn refusal(message: &str) -> Vec<u8> {
    encode_answer(&Answer {
        stdout: Vec::new(),
        stderr: format!("fibre serve: {message}\n").into_bytes(),
        exit: 1,
    })
}

impl ControlSocket {
    /// Listens at `path`, mode 0600. A socket file left by a router that
    /// is gone is replaced; one a live router answers on is refused.
    pub fn bind(path: &Path) -> Result<Self> {
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            if !meta.file_type().is_socket() {
                bail!(
                    "--socket {}: exists and is not a socket; not replacing it",
                    path.display()
                );
            }
            if UnixStream::connect(path).is_ok() {
                bail!(
                    "--socket {}: another router is listening there",
                    path.display()
                );
            }
            std::fs::remove_file(path).with_context(|| {
                format!("--socket {}: removing the stale socket", path.display())
            })?;
        }
        // The file is created by bind() with the umask's mode: 0600 from
        // the start, never briefly open to others.
        // SAFETY: umask only changes the process's file creation mask.
        let old = unsafe { libc::umask(0o177) };
        let bound = UnixListener::bind(path);
        // SAFETY: as above; the previous mask is restored.
        unsafe { libc::umask(old) };
        let listener = bound.with_context(|| format!("--socket {}", path.display()))?;
        listener.set_nonblocking(true)?;
        Ok(Self {
            listener,
            path: path.to_path_buf(),
            clients: Vec::new(),
            // SAFETY: geteuid cannot fail and touches no memory.
            owner: unsafe { libc::geteuid() },
            counts: SocketCounts::default(),
        })
    }

    /// The path it listens at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What it counted.
    pub fn counts(&self) -> SocketCounts {
        self.counts
    }

    /// Accepts, reads, answers (with `answer`) and writes what can be done
    /// now without blocking.
    pub fn poll(&mut self, answer: &mut dyn FnMut(Request<'_>) -> Answer) {
        self.accept();
        let now = Instant::now();
        let mut i = 0;
        while i < self.clients.len() {
            let keep = self.serve(i, now, answer);
            if keep {
                i += 1;
            } else {
                self.clients.swap_remove(i);
            }
        }
    }

    fn accept(&mut self) {
        loop {
            let stream = match self.listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // EMFILE and the like: leave it queued, try at the next poll.
                Err(_) => return,
            };
            if stream.set_nonblocking(true).is_err() {
                continue;
            }
            let refused = match peer_uid(&stream) {
                Ok(uid) if uid == 0 || uid == self.owner => None,
                Ok(uid) => Some(format!(
                    "uid {uid} may not use this control socket (only root and uid {})",
                    self.owner
                )),
                Err(e) => Some(format!("cannot read the client's credentials: {e}")),
            };
            let refused = refused.or_else(|| {
                (self.clients.len() >= MAX_CLIENTS)
                    .then(|| format!("too many control connections (at most {MAX_CLIENTS})"))
            });
            let state = match refused {
                Some(message) => {
                    self.counts.refused += 1;
                    State::Writing(refusal(&message), 0)
                }
                None => State::Reading(Vec::new()),
            };
            self.clients.push(Client {
                stream,
                since: Instant::now(),
                state,
            });
        }
    }

    /// Moves client `i` on; false when it is done with.
    fn serve(
        &mut self,
        i: usize,
        now: Instant,
        answer: &mut dyn FnMut(Request<'_>) -> Answer,
    ) -> bool {
        let client = &mut self.clients[i];
        if let State::Reading(buf) = &mut client.state {
            match read_request(&mut client.stream, buf) {
                Ok(false) if now.duration_since(client.since) < REQUEST_TIMEOUT => return true,
                Ok(false) => {
                    self.counts.refused += 1;
                    client.state = State::Writing(
                        refusal(&format!(
                            "no complete request within {} s",
                            REQUEST_TIMEOUT.as_secs()
                        )),
                        0,
                    );
                }
                // A probe (another router checking the path is in use):
                // nothing asked, nothing to answer.
                Ok(true) if buf.is_empty() => return false,
                Ok(true) => {
                    let bytes = match parse_request(buf) {
                        Ok(request) => {
                            self.counts.answered += 1;
                            encode_answer(&answer(request))
                        }
                        Err(message) => {
                            self.counts.refused += 1;
                            refusal(&message)
                        }
                    };
                    client.state = State::Writing(bytes, 0);
                    client.since = now;
                }
                Err(message) => {
                    self.counts.refused += 1;
                    client.state = State::Writing(refusal(&message), 0);
                }
            }
        }
        if let State::Writing(bytes, at) = &mut client.state {
            while *at < bytes.len() {
                match client.stream.write(&bytes[*at..]) {
                    Ok(0) => return false,
                    Ok(n) => *at += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        return now.duration_since(client.since) < WRITE_TIMEOUT;
                    }
                    Err(_) => return false,
                }
            }
            let _ = client.stream.shutdown(std::net::Shutdown::Write);
            client.state = State::Draining;
            client.since = now;
        }
        // A bounded amount per poll: a client that writes without end
        // cannot keep the control thread here.
        let mut chunk = [0u8; 16 * 1024];
        for _ in 0..16 {
            match client.stream.read(&mut chunk) {
                Ok(0) => return false,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => return false,
            }
        }
        now.duration_since(client.since) < REQUEST_TIMEOUT
    }
}

impl Drop for ControlSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Reads what `stream` has; true once the client has shut its side down.
/// Refuses a request past the size limit, or one whose first line is not
/// a header.
fn read_request(stream: &mut UnixStream, buf: &mut Vec<u8>) -> Result<bool, String> {
    let mut chunk = [0u8; 16 * 1024];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(true),
            Ok(n) => {
                if buf.len() + n > MAX_REQUEST_BYTES {
                    return Err(format!(
                        "request longer than {MAX_REQUEST_BYTES} bytes; nothing applied"
                    ));
                }
                buf.extend_from_slice(&chunk[..n]);
                let header_end = buf.iter().position(|&b| b == b'\n');
                if header_end.is_none_or(|end| end > MAX_HEADER_BYTES)
                    && buf.len() > MAX_HEADER_BYTES
                {
                    return Err("not a fibre ctl request (no header line)".into());
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(format!("reading the request: {e}")),
        }
    }
}

/// The header and lines of a whole request.
fn parse_request(buf: &[u8]) -> Result<Request<'_>, String> {
    let text = std::str::from_utf8(buf).map_err(|e| {
        format!(
            "the request is not UTF-8 text (a bad byte at offset {})",
            e.valid_up_to()
        )
    })?;
    if text.contains('\0') {
        return Err("the request holds a NUL byte".into());
    }
    let mut lines = text.lines();
    let header = lines.next().unwrap_or("");
    let flags = RequestFlags::parse_header(header)?;
    Ok(Request {
        flags,
        lines: lines.collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// Polls `socket` (answering with the request's lines echoed) until
    /// `done` finishes.
    fn serve_until<T>(socket: &mut ControlSocket, done: std::thread::JoinHandle<T>) -> T {
        let mut echo = |request: Request<'_>| Answer {
            stdout: request.lines.join("|").into_bytes(),
            stderr: Vec::new(),
            exit: u8::from(request.flags.json),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !done.is_finished() {
            assert!(Instant::now() < deadline, "the client did not finish");
            socket.poll(&mut echo);
            std::thread::sleep(Duration::from_millis(1));
        }
        done.join().unwrap()
    }

    #[test]
    fn a_silent_client_garbage_and_oversize_requests_do_not_hold_up_the_others() {
        let dir = std::env::temp_dir().join(format!("fibre-socket-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ctl.sock");
        let mut socket = ControlSocket::bind(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // A second router on the same path is refused.
        let again = ControlSocket::bind(&path).err().unwrap().to_string();
        assert!(again.contains("another router is listening"), "{again}");

        let silent = UnixStream::connect(&path).unwrap();
        let client_path = path.clone();
        let answer = serve_until(
            &mut socket,
            std::thread::spawn(move || {
                let flags = RequestFlags {
                    json: true,
                    ..RequestFlags::default()
                };
                let lines = ["route show".to_string(), "neigh show".to_string()];
                crate::ctl::request(&client_path, flags, &lines, Duration::from_secs(10))
            }),
        )
        .unwrap();
        assert_eq!(answer.stdout, b"route show|neigh show");
        assert_eq!(answer.exit, 1);

        let client_path = path.clone();
        let oversize = serve_until(
            &mut socket,
            std::thread::spawn(move || {
                let mut stream = UnixStream::connect(&client_path).unwrap();
                let mut request = b"fibre-ctl 1\n".to_vec();
                request.resize(MAX_REQUEST_BYTES + 4096, b'#');
                let _ = stream.write_all(&request);
                let _ = stream.shutdown(std::net::Shutdown::Write);
                let mut answer = Vec::new();
                let _ = stream.read_to_end(&mut answer);
                answer
            }),
        );
        let oversize = crate::ctl::decode_answer(&oversize).unwrap();
        assert!(String::from_utf8_lossy(&oversize.stderr).contains("request longer than"));

        let client_path = path.clone();
        let garbage = serve_until(
            &mut socket,
            std::thread::spawn(move || {
                let mut stream = UnixStream::connect(&client_path).unwrap();
                stream.write_all(&[0xffu8; 300]).unwrap();
                let mut answer = Vec::new();
                let _ = stream.read_to_end(&mut answer);
                answer
            }),
        );
        let garbage = crate::ctl::decode_answer(&garbage).unwrap();
        assert!(String::from_utf8_lossy(&garbage.stderr).contains("no header line"));
        assert_eq!(socket.counts().answered, 1);
        assert_eq!(socket.counts().refused, 2);

        // The silent client is refused once its time is up.
        let waited = serve_until(
            &mut socket,
            std::thread::spawn(move || {
                let mut silent = silent;
                let mut answer = Vec::new();
                let _ = silent.read_to_end(&mut answer);
                answer
            }),
        );
        let waited = crate::ctl::decode_answer(&waited).unwrap();
        assert!(String::from_utf8_lossy(&waited.stderr).contains("no complete request within"));
        drop(socket);
        assert!(!path.exists(), "the socket file is removed");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn requests_are_parsed_and_garbage_refused() {
        let request = parse_request(b"fibre-ctl 1 -j\nroute show\nneigh show\n").unwrap();
        assert!(request.flags.json);
        assert_eq!(request.lines, ["route show", "neigh show"]);
        assert!(parse_request(b"\xff\xfe")
            .unwrap_err()
            .contains("not UTF-8"));
        assert!(parse_request(b"fibre-ctl 1\n\0")
            .unwrap_err()
            .contains("NUL"));
        assert!(parse_request(b"hello\n")
            .unwrap_err()
            .contains("not a fibre ctl request"));
    }
}
