//! Symmetric eigensolvers on caller buffers.
//!
//! - [`tridiag`]: Householder tridiagonalisation + implicit QL with
//!   eigenvectors, the general full solver;
//! - [`jacobi`]: cyclic Jacobi for tiny matrices with high relative accuracy;
//! - [`topk`]: the k algebraically largest eigenpairs in O(n²k);
//! - [`fixed`]: fixed-capacity wrappers whose capacity is a const generic.

pub mod fixed;
pub mod jacobi;
pub mod topk;
pub mod tridiag;

/// Tuning of the iterative eigensolvers. `Default` gives values that reach
/// the documented accuracy on every input the test suite knows.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct EigenParams {
    /// Relative convergence tolerance; `0.0` means "machine precision" for
    /// the element type.
    pub tol: f64,
    /// Iteration budget: QL iterations per eigenvalue for [`tridiag`], sweeps
    /// for [`jacobi`], restarts for [`topk`].
    pub max_iter: usize,
}

impl Default for EigenParams {
    fn default() -> Self {
        Self { tol: 0.0, max_iter: 60 }
    }
}

impl EigenParams {
    /// Params with an explicit tolerance and iteration budget.
    pub fn new(tol: f64, max_iter: usize) -> Self {
        Self { tol, max_iter }
    }
}

/// `max |a_ij|` over the lower triangle of a square view, or
/// [`crate::LinalgError::NonFinite`] if it holds NaN/Inf: the input scan the
/// full solvers share (they scale by this maximum).
pub(crate) fn lower_max_abs<T: crate::Real>(a: crate::MatRef<'_, T>) -> Result<T, crate::LinalgError> {
    let mut amax = T::ZERO;
    for j in 0..a.ncols() {
        for i in j..a.nrows() {
            let x = a.at(i, j);
            if !x.is_finite() {
                return Err(crate::LinalgError::NonFinite);
            }
            amax = amax.max(x.abs());
        }
    }
    Ok(amax)
}
