//! Progress bars for the long phases, drawn on stderr only when it is a terminal.

use std::borrow::Cow;
use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// Makes progress bars, or hidden ones when progress is off or stderr is not a terminal.
///
/// ```
/// use fibre_bench::progress::Progress;
/// let progress = Progress::new(false);
/// let bar = progress.bar(10, "building");
/// bar.inc(10);
/// bar.finish_and_clear();
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    visible: bool,
}

impl Progress {
    /// `wanted`: whether the caller wants bars; they show only on a terminal.
    pub fn new(wanted: bool) -> Self {
        Self {
            visible: wanted && std::io::stderr().is_terminal(),
        }
    }

    /// A bar counting `len` items.
    pub fn bar(&self, len: u64, message: impl Into<Cow<'static, str>>) -> ProgressBar {
        self.styled(
            len,
            message,
            "{msg:32} [{bar:30}] {human_pos}/{human_len} {elapsed}",
        )
    }

    /// A bar counting `len` bytes.
    pub fn bytes_bar(&self, len: u64, message: impl Into<Cow<'static, str>>) -> ProgressBar {
        self.styled(
            len,
            message,
            "{msg:32} [{bar:30}] {bytes}/{total_bytes} {elapsed}",
        )
    }

    fn styled(
        &self,
        len: u64,
        message: impl Into<Cow<'static, str>>,
        template: &str,
    ) -> ProgressBar {
        if !self.visible {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(len).with_message(message);
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar
    }
}
