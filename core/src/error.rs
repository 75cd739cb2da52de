//! Errors of the numerical layers.

use core::fmt;

/// Why a linear-algebra or eigen routine refused or failed.
///
/// Every routine in [`crate::linalg`], [`crate::eigen`] and
/// [`crate::backend`] reports bad input and numerical failure through this
/// type; none of them panics on any input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinalgError {
    /// Shapes of the operands do not fit together, or a buffer is shorter
    /// than the view placed on it.
    DimensionMismatch,
    /// The caller's workspace is shorter than the routine needs.
    WorkspaceTooSmall {
        /// Elements needed.
        needed: usize,
        /// Elements given.
        got: usize,
    },
    /// An input contains NaN or ±Inf.
    NonFinite,
    /// Cholesky met a non-positive pivot: the matrix is not (numerically)
    /// positive definite. `index` is the 0-based column where it happened.
    NotPositiveDefinite {
        /// Column of the failing pivot.
        index: usize,
    },
    /// A solve met an exactly or numerically singular pivot.
    Singular {
        /// Column of the failing pivot.
        index: usize,
    },
    /// An iterative method did not converge in its iteration budget.
    NoConvergence {
        /// Iterations (or sweeps) performed.
        iterations: usize,
    },
    /// A parameter is outside its domain (e.g. `k > n` for a top-k solver).
    InvalidParameter,
    /// A fixed-capacity container is too small for the problem.
    CapacityExceeded {
        /// Capacity of the container.
        capacity: usize,
        /// Size requested.
        requested: usize,
    },
}

impl fmt::Display for LinalgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LinalgError::DimensionMismatch => f.write_str("matrix or buffer dimensions do not match"),
            LinalgError::WorkspaceTooSmall { needed, got } => {
                write!(f, "workspace too small: {needed} elements needed, {got} given")
            }
            LinalgError::NonFinite => f.write_str("input contains NaN or infinity"),
            LinalgError::NotPositiveDefinite { index } => {
                write!(f, "matrix is not positive definite (pivot {index})")
            }
            LinalgError::Singular { index } => write!(f, "matrix is singular (pivot {index})"),
            LinalgError::NoConvergence { iterations } => {
                write!(f, "no convergence after {iterations} iterations")
            }
            LinalgError::InvalidParameter => f.write_str("parameter out of range"),
            LinalgError::CapacityExceeded { capacity, requested } => {
                write!(f, "capacity {capacity} exceeded (requested {requested})")
            }
        }
    }
}

impl core::error::Error for LinalgError {}
