//! `fibre ctl [--socket PATH] LINE...`: talks to a running `fibre serve`
//! over its control socket (a Unix stream socket, [`DEFAULT_SOCKET`]
//! unless `--socket` says otherwise; mode 0600, and the router serves only
//! root and the user it runs as, checked by `SO_PEERCRED`).
//!
//! Each LINE is one line of the ip-batch grammar. Configuration lines
//! (`route`, `rule`, `addr`, `neigh`, `link set`, ...) are applied by the
//! router's FIB writer, one line per published batch, all of the line or
//! none of it, and the workers see the result at their next burst. As
//! `ip -batch` does, the first refused line is answered with the kernel's
//! message and `Command failed ctl:N`, and the lines after it are not
//! applied. Queries read the running router: `route show|get`, `rule
//! show`, `addr show`, `link show` (`-s`: the interfaces' counters),
//! `neigh show` (the live ARP and ND table) and `workers show` (each
//! worker's counters and drop reasons, and their sum), in `ip`'s formats,
//! `-j` for JSON.
//!
//! ```text
//! fibre ctl 'route replace 10.9.0.0/16 via 10.0.2.3'
//! fibre ctl -j 'neigh show' 'workers show'
//! ```
//!
//! The protocol, one request per connection: the client sends a header
//! line `fibre-ctl 1 [-j] [-s] [-d] [-4|-6]`, its lines, and shuts its
//! side down; the router answers with chunks `out LEN\n` or `err LEN\n`
//! followed by LEN bytes (the command's stdout and stderr), then `exit
//! CODE\n`, and closes. A request is at most [`MAX_REQUEST_BYTES`]; one
//! that is longer, not of this form, or not finished within
//! [`REQUEST_TIMEOUT`] is refused and the connection closed.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;

/// Where `fibre serve` listens and `fibre ctl` connects by default.
pub const DEFAULT_SOCKET: &str = "/run/fibre.sock";

/// The first word of a request's header line, and the protocol version.
pub const MAGIC: &str = "fibre-ctl 1";

/// The longest request the router reads (header and lines).
pub const MAX_REQUEST_BYTES: usize = 1 << 20;

/// How long a client has, from connecting, to send its whole request.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest answer the client accepts (a full table shown as JSON is
/// tens of megabytes).
const MAX_RESPONSE_BYTES: usize = 1 << 30;

/// `fibre ctl`'s options.
#[derive(Debug, Args)]
pub struct CtlArgs {
    /// The router's control socket.
    #[arg(long = "socket", value_name = "PATH", default_value = DEFAULT_SOCKET)]
    pub socket: PathBuf,
    /// How long to wait for the answer, in seconds.
    #[arg(long = "timeout", default_value_t = 30)]
    pub timeout: u64,
    /// Lines of the ip-batch grammar, each one argument.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub lines: Vec<String>,
}

/// The options a request carries from `fibre`'s global flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestFlags {
    /// `-j`.
    pub json: bool,
    /// `-s`.
    pub stats: bool,
    /// `-d`.
    pub details: bool,
    /// `-4` (4) or `-6` (6).
    pub family: Option<u8>,
}

impl RequestFlags {
    /// The header line, without its newline.
    pub fn header(&self) -> String {
        let mut header = MAGIC.to_string();
        for (on, word) in [
            (self.json, " -j"),
            (self.stats, " -s"),
            (self.details, " -d"),
            (self.family == Some(4), " -4"),
            (self.family == Some(6), " -6"),
        ] {
            if on {
                header.push_str(word);
            }
        }
        header
    }

    /// Reads a header line (`fibre-ctl 1 -j -6`).
    pub fn parse_header(line: &str) -> Result<RequestFlags, String> {
        let Some(rest) = line.strip_prefix(MAGIC) else {
            return Err(format!(
                "not a fibre ctl request (expected a first line \"{MAGIC} ...\")"
            ));
        };
        let mut flags = RequestFlags::default();
        for word in rest.split_ascii_whitespace() {
            match word {
                "-j" => flags.json = true,
                "-s" => flags.stats = true,
                "-d" => flags.details = true,
                "-4" => flags.family = Some(4),
                "-6" => flags.family = Some(6),
                other => {
                    return Err(format!(
                        "unknown option \"{other}\" in the request's header"
                    ))
                }
            }
        }
        Ok(flags)
    }
}

/// The router's answer to one request.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Answer {
    /// What the command printed on stdout.
    pub stdout: Vec<u8>,
    /// What it printed on stderr.
    pub stderr: Vec<u8>,
    /// Its exit status.
    pub exit: u8,
}

/// Writes `answer` in the protocol's chunks.
pub fn encode_answer(answer: &Answer) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(answer.stdout.len() + answer.stderr.len() + 32);
    for (tag, chunk) in [("out", &answer.stdout), ("err", &answer.stderr)] {
        if !chunk.is_empty() {
            bytes.extend_from_slice(format!("{tag} {}\n", chunk.len()).as_bytes());
            bytes.extend_from_slice(chunk);
        }
    }
    bytes.extend_from_slice(format!("exit {}\n", answer.exit).as_bytes());
    bytes
}

/// Reads an answer written by [`encode_answer`].
pub fn decode_answer(mut bytes: &[u8]) -> Result<Answer> {
    let mut answer = Answer::default();
    loop {
        let end = bytes
            .iter()
            .position(|&b| b == b'\n')
            .context("the router's answer ended early (no exit status)")?;
        let line = std::str::from_utf8(&bytes[..end]).context("the router's answer")?;
        bytes = &bytes[end + 1..];
        let (tag, value) = line
            .split_once(' ')
            .with_context(|| format!("the router's answer: unexpected \"{line}\""))?;
        if tag == "exit" {
            answer.exit = value
                .parse()
                .with_context(|| format!("the router's exit status \"{value}\""))?;
            return Ok(answer);
        }
        let len: usize = value
            .parse()
            .with_context(|| format!("the router's answer: length \"{value}\""))?;
        let chunk = bytes
            .get(..len)
            .context("the router's answer ended inside a chunk")?;
        match tag {
            "out" => answer.stdout.extend_from_slice(chunk),
            "err" => answer.stderr.extend_from_slice(chunk),
            other => bail!("the router's answer: unknown chunk \"{other}\""),
        }
        bytes = &bytes[len..];
    }
}

/// Sends `lines` to the router at `socket`, returns its answer.
pub fn request(
    socket: &Path,
    flags: RequestFlags,
    lines: &[String],
    timeout: Duration,
) -> Result<Answer> {
    let mut text = flags.header();
    text.push('\n');
    for line in lines {
        if line.contains('\n') {
            bail!("a LINE holds a newline: give each line as its own argument");
        }
        text.push_str(line);
        text.push('\n');
    }
    if text.len() > MAX_REQUEST_BYTES {
        bail!(
            "the request is {} bytes, over the router's limit of {MAX_REQUEST_BYTES}",
            text.len()
        );
    }
    let mut stream = UnixStream::connect(socket).with_context(|| {
        format!(
            "cannot reach the router at {} (is fibre serve running? --socket PATH)",
            socket.display()
        )
    })?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    stream
        .write_all(text.as_bytes())
        .context("sending the request")?;
    stream.shutdown(std::net::Shutdown::Write)?;
    let mut bytes = Vec::new();
    (&mut stream)
        .take(MAX_RESPONSE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                anyhow::anyhow!("no answer from the router within {} s", timeout.as_secs())
            }
            _ => anyhow::Error::new(e).context("reading the answer"),
        })?;
    if bytes.len() > MAX_RESPONSE_BYTES {
        bail!("the router's answer is over {MAX_RESPONSE_BYTES} bytes");
    }
    decode_answer(&bytes)
}

/// `fibre ctl`: prints the answer's streams as the command's own; returns
/// its exit status.
pub fn run(args: &CtlArgs, flags: RequestFlags) -> Result<u8> {
    let answer = request(
        &args.socket,
        flags,
        &args.lines,
        Duration::from_secs(args.timeout.max(1)),
    )?;
    io::stdout().write_all(&answer.stdout)?;
    io::stdout().flush()?;
    io::stderr().write_all(&answer.stderr)?;
    Ok(answer.exit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        let flags = RequestFlags {
            json: true,
            stats: true,
            details: false,
            family: Some(6),
        };
        assert_eq!(RequestFlags::parse_header(&flags.header()), Ok(flags));
        assert!(RequestFlags::parse_header("GET / HTTP/1.1").is_err());
        assert!(RequestFlags::parse_header("fibre-ctl 1 -x").is_err());
    }

    #[test]
    fn answer_round_trips_and_cut_answers_are_refused() {
        let answer = Answer {
            stdout: b"default via 10.0.0.1 dev r0\n".to_vec(),
            stderr: b"RTNETLINK answers: File exists\nCommand failed ctl:2\n".to_vec(),
            exit: 1,
        };
        let bytes = encode_answer(&answer);
        assert_eq!(decode_answer(&bytes).unwrap(), answer);
        for cut in [0, 5, bytes.len() - 1] {
            assert!(decode_answer(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        assert!(decode_answer(b"out 99999999999\nx").is_err());
        assert!(decode_answer(b"what 1\nx").is_err());
    }
}
