//! The host library's error: a message and the exit code it maps to (the
//! binary turns it into the process's exit code and prints it), and the
//! checked, atomic writes of output files.
//!
//! Exit codes (stable): 0 success, 2 bad input the user can fix (a file, a
//! flag, a value), 1 any other failure (numerical breakdown, I/O on output).

use std::fmt;

use ranklet_core::learn::LearnError;

use crate::data::DataError;

/// An error that ends a command.
#[derive(Debug)]
pub struct CliError {
    /// Process exit code: 2 for bad input, 1 otherwise.
    pub code: u8,
    /// One-line message, naming the file and line where there is one.
    pub msg: String,
}

impl CliError {
    /// Bad input (exit code 2).
    pub fn input(msg: impl Into<String>) -> Self {
        CliError { code: 2, msg: msg.into() }
    }
    /// Any other failure (exit code 1).
    pub fn failure(msg: impl Into<String>) -> Self {
        CliError { code: 1, msg: msg.into() }
    }
}

impl CliError {
    /// A learner's error after `context` (`"{context}: {e}"`): bad input
    /// (2) where the learner refused the caller's parameters or data,
    /// otherwise a failure (1: a singular system, no convergence, an
    /// overflow), as [`LearnError::is_bad_input`] tells.
    pub fn learn(context: impl fmt::Display, e: LearnError) -> Self {
        let code = if e.is_bad_input() { 2 } else { 1 };
        CliError { code, msg: format!("{context}: {e}") }
    }
}

impl From<LearnError> for CliError {
    fn from(e: LearnError) -> Self {
        CliError { code: if e.is_bad_input() { 2 } else { 1 }, msg: e.to_string() }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for CliError {}

impl From<DataError> for CliError {
    fn from(e: DataError) -> Self {
        CliError { code: if e.is_bad_input() { 2 } else { 1 }, msg: e.to_string() }
    }
}

/// Checks before any work that a file can be written at `path`: its
/// directory exists and takes a new file (one is created and removed), and
/// `path` is not a directory. Bad input (exit 2) naming what to change.
pub fn check_writable(path: &std::path::Path) -> Result<(), CliError> {
    let shown = path.display();
    if path.is_dir() {
        return Err(CliError::input(format!("-o {shown}: is a directory; give a file name, e.g. {shown}/model.rkl")));
    }
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    if !dir.is_dir() {
        return Err(CliError::input(format!(
            "-o {shown}: the directory {} does not exist; create it first (mkdir -p {}) or write elsewhere, e.g. -o model.rkl",
            dir.display(),
            dir.display()
        )));
    }
    let probe = dir.join(format!(".ranklet-probe-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(CliError::input(format!(
            "-o {shown}: cannot create a file in {}: {e}; write elsewhere, e.g. -o /tmp/model.rkl",
            dir.display()
        ))),
    }
}

/// Writes `bytes` to `path` atomically: to a temporary file in the same
/// directory, flushed, then renamed over `path`. A failure leaves no file
/// at `path` (and removes the temporary).
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<(), CliError> {
    use std::io::Write;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let name = path.file_name().ok_or_else(|| CliError::input(format!("{}: not a file name", path.display())))?;
    let tmp = dir.join(format!(".{}.tmp-{}", name.to_string_lossy(), std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        CliError::failure(format!("{}: cannot write: {e}", path.display()))
    })
}

#[cfg(test)]
mod tests {
    use ranklet_core::learn::LearnError;
    use ranklet_core::LinalgError;

    use super::CliError;

    /// A learner's error keeps its cause to the exit code: bad parameters
    /// and data exit 2, numerical failures 1 (the Kronecker driver used to
    /// turn every one into a string, and then into 2).
    #[test]
    fn learner_errors_keep_their_exit_code() {
        for e in [LearnError::BadLambda, LearnError::BadNoise, LearnError::BadGraph, LearnError::Unsupported] {
            assert_eq!(CliError::from(e).code, 2, "{e:?}");
        }
        for e in [
            LinalgError::NotPositiveDefinite { index: 0 },
            LinalgError::Singular { index: 1 },
            LinalgError::NoConvergence { iterations: 9 },
            LinalgError::NonFinite,
        ] {
            assert_eq!(CliError::from(LearnError::Numerics(e)).code, 1, "{e:?}");
        }
        let e = CliError::learn("final fit", LearnError::BadDamping);
        assert_eq!((e.code, e.msg.as_str()), (2, "final fit: the EP damping must be in (0, 1]"));
    }
}
