//! Progress and cancellation of a long computation, through a callback:
//! the library reports each finished step and asks whether to go on; it
//! never draws a bar or prints. The CLI's callback drives an `indicatif`
//! bar ([`Bar`]); the Python extension's checks for Ctrl-C and returns
//! `Break`.

use std::ops::ControlFlow;

#[cfg(feature = "cli")]
use indicatif::{ProgressBar, ProgressStyle};

/// One report: `done` of `total` steps of the phase `what` are finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The phase ("cross-validating", "leave-out", "final fit").
    pub what: &'static str,
    /// Steps finished.
    pub done: usize,
    /// Steps in the phase.
    pub total: usize,
}

/// The callback: `ControlFlow::Break(())` stops the computation at the end
/// of the step it reports (the caller gets [`interrupted`]'s error).
pub type OnProgress<'a> = &'a mut dyn FnMut(Progress) -> ControlFlow<()>;

/// A callback that never stops anything and reports nowhere.
pub fn silent(_: Progress) -> ControlFlow<()> {
    ControlFlow::Continue(())
}

/// The message of a computation stopped by its callback.
pub const INTERRUPTED: &str = "interrupted";

/// The error of a computation stopped by its callback.
pub fn interrupted() -> crate::error::CliError {
    crate::error::CliError::failure(INTERRUPTED)
}

/// Reports `done` of `total` steps of `what`; `Err` if the callback says stop.
///
/// # Errors
/// [`interrupted`] when the callback returns `Break`.
pub fn report(on: OnProgress<'_>, what: &'static str, done: usize, total: usize) -> Result<(), crate::error::CliError> {
    match on(Progress { what, done, total }) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(()) => Err(interrupted()),
    }
}

/// The CLI's progress: one `indicatif` bar per phase on stderr, cleared
/// when the phase ends.
#[cfg(feature = "cli")]
#[derive(Default)]
pub struct Bar {
    bar: Option<(&'static str, ProgressBar)>,
}

#[cfg(feature = "cli")]
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

#[cfg(feature = "cli")]
impl Drop for Bar {
    fn drop(&mut self) {
        self.finish();
    }
}
