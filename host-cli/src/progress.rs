//! Progress and cancellation of a long computation, through a callback:
//! the library reports each finished step and asks whether to go on; it
//! never draws a bar or prints. The binary's callback draws a progress bar
//! on stderr; the Python extension's checks for Ctrl-C and returns `Break`.

use std::ops::ControlFlow;

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
