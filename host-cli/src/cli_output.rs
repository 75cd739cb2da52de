//! What the binary shows besides results: the exit code of a command's
//! result (an error printed once to stderr with the `ranklet: ` prefix) and
//! of a command line clap refused, the warnings and notes the library
//! returns, and the progress bar that draws the library's progress reports
//! ([`ranklet::progress`]).
//!
//! Exit codes (stable): 0 success, 2 bad input the user can fix (a file, a
//! flag, a value), 1 any other failure (numerical breakdown, I/O on output).

use std::fmt;
use std::ops::ControlFlow;
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};
use ranklet::error::CliError;
use ranklet::progress::Progress;

/// The exit code of a command's result; an error is printed once to stderr
/// with the `ranklet: ` prefix.
pub fn exit_code(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ranklet: {e}");
            ExitCode::from(e.code)
        }
    }
}

/// The exit code of a command line clap refused (printed by clap itself):
/// a usage error is bad input (2); `--help` and `--version` are not errors.
pub fn usage_exit_code(e: &clap::Error) -> ExitCode {
    let _ = e.print();
    ExitCode::from(if e.use_stderr() { 2 } else { 0 })
}

/// Shows a warning the library returned (`ranklet: warning: …` on stderr).
pub fn warn(msg: Option<impl fmt::Display>) {
    if let Some(m) = msg {
        eprintln!("ranklet: warning: {m}");
    }
}

/// Shows a note the library returned (`ranklet: note: …` on stderr).
pub fn note(msg: Option<impl fmt::Display>) {
    if let Some(m) = msg {
        eprintln!("ranklet: note: {m}");
    }
}

/// The CLI's progress: one `indicatif` bar per phase on stderr, cleared
/// when the phase ends.
#[derive(Default)]
pub struct Bar {
    bar: Option<(&'static str, ProgressBar)>,
}

impl Bar {
    /// Shows `p` (a new bar when the phase changes); never stops anything.
    pub fn show(&mut self, p: Progress) -> ControlFlow<()> {
        if self.bar.as_ref().is_none_or(|(what, _)| *what != p.what) {
            self.finish();
            let pb = ProgressBar::new(p.total as u64);
            if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({elapsed}, eta {eta})") {
                pb.set_style(style.progress_chars("=> "));
            }
            pb.set_message(p.what);
            self.bar = Some((p.what, pb));
        }
        if let Some((_, pb)) = &self.bar {
            pb.set_position(p.done as u64);
            if p.done >= p.total {
                self.finish();
            }
        }
        ControlFlow::Continue(())
    }

    /// Clears the current bar, if any.
    pub fn finish(&mut self) {
        if let Some((_, pb)) = self.bar.take() {
            pb.finish_and_clear();
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.finish();
    }
}
