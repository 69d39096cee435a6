//! Bounded reading of line-oriented text input (configurations, prefix
//! lists, query streams): every line fibre reads goes through
//! [`LineReader`], which holds at most [`MAX_LINE_BYTES`] of it, so an
//! endless line (`/dev/zero`, a corrupt gzip expanding to gigabytes, a
//! stream without a newline) ends with an error instead of exhausting
//! memory.
//!
//! iproute2's `ip -batch` reads lines with `getline(3)` (`getcmdline` in
//! `lib/utils.c`), which has no limit; fibre states one instead. A line of
//! any command `ip` takes is a few hundred bytes at most; 64 KiB leaves
//! room for any real one.

use std::io::{self, BufRead};

/// The most bytes one line may hold, its newline not counted.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Why a line could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// The stream failed.
    #[error("{}", io_message(.0))]
    Io(io::Error),
    /// The line ran past [`LineReader::max_line`] bytes without a newline.
    #[error("line longer than {limit} bytes (the most fibre reads in one line){}", binary_note(*.first_nul))]
    TooLong {
        /// The limit.
        limit: usize,
        /// Where the first NUL byte of the part read was, if it had one
        /// (then the input is binary, not text), as an offset in the stream.
        first_nul: Option<u64>,
    },
}

fn binary_note(first_nul: Option<u64>) -> String {
    first_nul.map_or(String::new(), |offset| {
        format!("; not a text file (a NUL byte at offset {offset})")
    })
}

/// The operating system's words for `err` (`Is a directory`), without
/// the `(os error 21)` Rust's `Display` adds: what `ip` prints from
/// `strerror(3)`.
///
/// ```
/// let err = std::io::Error::from_raw_os_error(21);
/// assert_eq!(fibre_fib::lines::io_message(&err), "Is a directory");
/// let err = std::io::Error::new(std::io::ErrorKind::InvalidData, "corrupt deflate stream");
/// assert_eq!(fibre_fib::lines::io_message(&err), "corrupt deflate stream");
/// ```
pub fn io_message(err: &io::Error) -> String {
    let text = err.to_string();
    match err.raw_os_error() {
        Some(code) => text
            .strip_suffix(&format!(" (os error {code})"))
            .map_or_else(|| text.clone(), str::to_string),
        None => text,
    }
}

/// One line as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// Its bytes, without the `\n` (or `\r\n`).
    pub bytes: &'a [u8],
    /// Its 1-based number.
    pub number: usize,
    /// The offset in the stream of its first byte.
    pub start: u64,
    /// Bytes read from the stream up to the end of it, newline included.
    pub end: u64,
}

/// Reads lines of at most `max_line` bytes from a [`BufRead`], reusing one
/// buffer: memory stays at `max_line` plus the reader's own buffer however
/// long the input.
///
/// ```
/// use fibre_fib::lines::{LineError, LineReader};
/// let mut lines = LineReader::new(&b"one\r\ntwo\nthree"[..]);
/// assert_eq!(lines.next_line().unwrap().unwrap().bytes, b"one");
/// let two = lines.next_line().unwrap().unwrap();
/// assert_eq!((two.bytes, two.number, two.start, two.end), (&b"two"[..], 2, 5, 9));
/// assert_eq!(lines.next_line().unwrap().unwrap().bytes, b"three");
/// assert_eq!(lines.next_line().unwrap(), None);
/// let mut long = LineReader::with_max_line(&b"abcdef\n"[..], 4);
/// assert!(matches!(long.next_line(), Err(LineError::TooLong { limit: 4, first_nul: None })));
/// ```
#[derive(Debug)]
pub struct LineReader<R> {
    reader: R,
    line: Vec<u8>,
    number: usize,
    /// Bytes consumed from the reader so far.
    consumed: u64,
    /// Where the line last returned (or being read) starts.
    start: u64,
    max_line: usize,
}

impl<R: BufRead> LineReader<R> {
    /// A reader with the [`MAX_LINE_BYTES`] limit.
    pub fn new(reader: R) -> Self {
        Self::with_max_line(reader, MAX_LINE_BYTES)
    }

    /// A reader refusing lines over `max_line` bytes.
    pub fn with_max_line(reader: R, max_line: usize) -> Self {
        LineReader {
            reader,
            line: Vec::new(),
            number: 0,
            consumed: 0,
            start: 0,
            max_line,
        }
    }

    /// The most bytes a line may hold.
    pub fn max_line(&self) -> usize {
        self.max_line
    }

    /// The 1-based number of the line last returned, or of the one whose
    /// reading failed.
    pub fn line_number(&self) -> usize {
        self.number
    }

    /// The offset in the stream of that line's first byte.
    pub fn line_start(&self) -> u64 {
        self.start
    }

    /// Bytes read from the stream so far.
    pub fn bytes_read(&self) -> u64 {
        self.consumed
    }

    /// The next line without its `\n` (or `\r\n`), `None` at the end of the
    /// stream. A last line without a newline is still a line.
    ///
    /// # Errors
    /// A read error, or a line longer than the limit (reading stops there:
    /// the rest of such a line may never end).
    pub fn next_line(&mut self) -> Result<Option<Line<'_>>, LineError> {
        self.line.clear();
        self.number += 1;
        self.start = self.consumed;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(bytes) => bytes,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(LineError::Io(err)),
            };
            if available.is_empty() {
                if self.consumed == self.start {
                    self.number -= 1;
                    return Ok(None);
                }
                break;
            }
            let (take, done) = match available.iter().position(|b| *b == b'\n') {
                Some(at) => (at, true),
                None => (available.len(), false),
            };
            if self.line.len() + take > self.max_line {
                let room = self.max_line - self.line.len();
                let first_nul = self
                    .line
                    .iter()
                    .chain(&available[..room])
                    .position(|b| *b == 0)
                    .map(|at| self.start + at as u64);
                return Err(LineError::TooLong {
                    limit: self.max_line,
                    first_nul,
                });
            }
            self.line.extend_from_slice(&available[..take]);
            let used = take + usize::from(done);
            self.reader.consume(used);
            self.consumed += used as u64;
            if done {
                if self.line.last() == Some(&b'\r') {
                    self.line.pop();
                }
                break;
            }
        }
        Ok(Some(Line {
            bytes: &self.line,
            number: self.number,
            start: self.start,
            end: self.consumed,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out one byte per `fill_buf`, so a line crosses
    /// many buffer refills.
    struct Trickle<'a>(&'a [u8]);

    impl io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(buf.len()).min(1);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    impl BufRead for Trickle<'_> {
        fn fill_buf(&mut self) -> io::Result<&[u8]> {
            Ok(&self.0[..self.0.len().min(1)])
        }
        fn consume(&mut self, amt: usize) {
            self.0 = &self.0[amt..];
        }
    }

    #[test]
    fn lines_across_refills_and_the_limit_exactly() {
        let mut lines = LineReader::with_max_line(Trickle(b"abcd\n\nabcde\n"), 4);
        assert_eq!(lines.next_line().unwrap().unwrap().bytes, b"abcd");
        let empty = lines.next_line().unwrap().unwrap();
        assert_eq!((empty.bytes, empty.start), (&b""[..], 5));
        let err = lines.next_line().unwrap_err();
        assert!(matches!(err, LineError::TooLong { limit: 4, .. }), "{err}");
        assert_eq!(lines.line_number(), 3);
    }

    #[test]
    fn an_endless_line_of_nul_bytes_is_named_binary() {
        let zeros = io::BufReader::new(io::repeat(0));
        let mut lines = LineReader::new(zeros);
        let err = lines.next_line().unwrap_err();
        assert_eq!(
            err.to_string(),
            "line longer than 65536 bytes (the most fibre reads in one line); \
             not a text file (a NUL byte at offset 0)"
        );
    }

    #[test]
    fn os_errors_are_named_once() {
        let err = LineError::Io(io::Error::from_raw_os_error(21));
        assert_eq!(err.to_string(), "Is a directory");
        assert!(std::error::Error::source(&err).is_none());
    }
}
