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
    /// Block size of [`topk`]'s Lanczos process (vectors the operator is
    /// applied to at once, 1..=[`topk::MAX_BLOCK`]); `0` means
    /// [`topk::DEFAULT_BLOCK`]. Ignored by the full solvers.
    pub block: usize,
}

impl Default for EigenParams {
    fn default() -> Self {
        Self { tol: 0.0, max_iter: 60, block: 0 }
    }
}

impl EigenParams {
    /// Params with an explicit tolerance and iteration budget.
    pub fn new(tol: f64, max_iter: usize) -> Self {
        Self { tol, max_iter, block: 0 }
    }

    /// The same params with [`topk`]'s block size set (`0` = default).
    pub fn with_block(mut self, block: usize) -> Self {
        self.block = block;
        self
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

/// Copies the lower triangle of the column-major `n × n` matrix `a` into the
/// same places of `w` (leading dimension `n`), and returns `max |a_ij|` over
/// it, or [`crate::LinalgError::NonFinite`] if it holds NaN/Inf: the one pass
/// over the input of the fixed-capacity solver. `a` and `w` hold `n²`
/// elements (checked by the caller; shorter slices copy less).
pub(crate) fn copy_lower_max_abs<T: crate::Real>(a: &[T], w: &mut [T], n: usize) -> Result<T, crate::LinalgError> {
    let mut amax = T::ZERO;
    let mut finite = true;
    for (j, (src, dst)) in a.chunks_exact(n.max(1)).zip(w.chunks_exact_mut(n.max(1))).enumerate().take(n) {
        for (d, &x) in dst[j..].iter_mut().zip(&src[j..]) {
            let ax = x.abs();
            // `ax <= MAX` is false exactly for ±Inf and NaN; plain compares
            // instead of the NaN-aware `is_finite`/`max` keep this loop cheap.
            finite &= ax <= T::MAX;
            if ax > amax {
                amax = ax;
            }
            *d = x;
        }
    }
    if finite {
        Ok(amax)
    } else {
        Err(crate::LinalgError::NonFinite)
    }
}

/// Sorts `vals[..n]` ascending, moving the columns of the compact
/// (leading dimension `n`) eigenvector matrix `q` along (selection sort: at
/// most n column swaps), then multiplies the values by `scale`; an eigenvalue
/// that overflows is [`crate::LinalgError::NonFinite`]. Shared by every full
/// solver.
pub(crate) fn sort_and_unscale<T: crate::Real>(
    vals: &mut [T],
    mut q: Option<&mut [T]>,
    n: usize,
    scale: T,
) -> Result<(), crate::LinalgError> {
    let vals = &mut vals[..n];
    for i in 0..n {
        let mut kmin = i;
        for j in i + 1..n {
            if vals[j] < vals[kmin] {
                kmin = j;
            }
        }
        if kmin != i {
            vals.swap(i, kmin);
            if let Some(q) = q.as_mut() {
                let (lo, hi) = q.split_at_mut(kmin * n);
                lo[i * n..(i + 1) * n].swap_with_slice(&mut hi[..n]);
            }
        }
    }
    for v in vals.iter_mut() {
        *v *= scale;
        if !v.is_finite() {
            return Err(crate::LinalgError::NonFinite);
        }
    }
    Ok(())
}

/// The shapes every full symmetric eigensolver takes: `A` square (`n × n`),
/// `n` eigenvalues and, if asked for, `n × n` eigenvectors. Returns `n`.
pub(crate) fn check_shapes<T: crate::Real>(
    a: &crate::MatRef<'_, T>,
    vals: &[T],
    vecs: Option<&crate::MatMut<'_, T>>,
) -> Result<usize, crate::LinalgError> {
    let n = a.nrows();
    if a.ncols() != n || vals.len() != n || vecs.is_some_and(|v| v.nrows() != n || v.ncols() != n) {
        return Err(crate::LinalgError::DimensionMismatch);
    }
    Ok(n)
}
