//! Conjugate gradient for symmetric positive definite systems `A·x = b`,
//! with `A` given only through a caller's matrix-vector product.
//!
//! Algorithm: Hestenes & Stiefel (1952), as in Golub & Van Loan, *Matrix
//! Computations*, 4th ed., Alg. 11.3.2, with the recursively updated
//! residual. In exact arithmetic the iterate `x_k` minimises the `A`-norm of
//! the error over `x₀ + K_k(A, r₀)`; that is why stopping after a few
//! iterations regularises (used by the Kronecker learners with early
//! stopping), and why reaching `max_iter` is **not** an error here: the
//! result is returned with [`CgInfo::converged`] `= false`.
//!
//! Stopping: `‖r_k‖₂ ≤ rel_tol·‖b‖₂`, where `r_k` is the recursive residual.
//! It drifts from the true residual `b − A·x_k` by roughly
//! `k·ε·‖A‖·max‖x_j‖` (Greenbaum, *Iterative Methods for Solving Linear
//! Systems*, 1997, §7.3), so tolerances below that level are not meaningful.

use super::blas::{axpy_unchecked, dot_unchecked, nrm2};
use crate::{LinalgError, Real};

/// Stopping parameters of [`cg_solve`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct CgParams {
    /// Maximum number of iterations (matrix-vector products after the
    /// initial residual). `0` returns the initial guess with its residual.
    pub max_iter: usize,
    /// Relative residual target `‖r‖₂/‖b‖₂`; must be finite and `≥ 0`.
    pub rel_tol: f64,
}

impl CgParams {
    /// Parameters with the given iteration budget and relative tolerance.
    pub fn new(max_iter: usize, rel_tol: f64) -> Self {
        Self { max_iter, rel_tol }
    }
}

impl Default for CgParams {
    /// `max_iter = 1000`, `rel_tol = 1e-10`.
    fn default() -> Self {
        Self { max_iter: 1000, rel_tol: 1e-10 }
    }
}

/// What [`cg_solve`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CgInfo {
    /// Iterations performed (matrix-vector products after the initial one).
    pub iterations: usize,
    /// Final `‖r‖₂/‖b‖₂` (recursive residual; `0` when `b = 0`).
    pub rel_residual: f64,
    /// Whether `rel_residual ≤ rel_tol` was reached.
    pub converged: bool,
}

/// The caller's verdict after each iteration of [`cg_solve_with_callback`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CgControl {
    /// Keep iterating.
    Continue,
    /// Stop now and return the current iterate (not an error).
    Stop,
}

/// Workspace length (elements of `T`) for [`cg_solve`]: `3·n` (residual,
/// search direction, `A·p`), saturating.
pub fn cg_workspace_len(n: usize) -> usize {
    CgScratch::<f64>::len(n)
}

crate::scratch! {
    /// Scratch of [`cg_solve_with_callback`].
    struct CgScratch<T: Real>(n: usize) {
        /// Residual.
        r: n,
        /// Search direction.
        p: n,
        /// `A·p`.
        q: n,
    }
}

/// Solves `A·x = b` for a symmetric positive definite `A` given by
/// `matvec(v, out)` (`out ← A·v`; `out` has unspecified contents on entry).
///
/// `x` holds the initial guess on entry (zeros is a fine default) and the
/// solution on exit. `work` needs [`cg_workspace_len`]`(n)` elements.
///
/// # Errors
/// - [`LinalgError::DimensionMismatch`] if `x.len() != b.len()`;
/// - [`LinalgError::WorkspaceTooSmall`] if `work` is too short;
/// - [`LinalgError::InvalidParameter`] if `rel_tol` is negative or not finite;
/// - [`LinalgError::NonFinite`] if `b` or `x` holds NaN/Inf, or a residual or
///   step becomes non-finite;
/// - [`LinalgError::NotPositiveDefinite`] `{ index }` if at iteration `index`
///   the curvature `pᵀA·p` is `≤ 0` (`A` is not positive definite);
/// - any error returned by `matvec`, unchanged.
///
/// Running out of iterations is not an error (see the module docs).
pub fn cg_solve<T, F>(matvec: F, b: &[T], x: &mut [T], work: &mut [T], params: &CgParams) -> Result<CgInfo, LinalgError>
where
    T: Real,
    F: FnMut(&[T], &mut [T]) -> Result<(), LinalgError>,
{
    cg_solve_with_callback(matvec, b, x, work, params, |_, _, _| CgControl::Continue)
}

/// [`cg_solve`] that calls `callback(iteration, x, rel_residual)` after each
/// iteration (1-based; `x` is the current iterate) and stops early, returning
/// `Ok` with `converged = false`, when it answers [`CgControl::Stop`]. Use it
/// to record iterates or to stop on a validation score.
///
/// # Errors
/// As [`cg_solve`].
pub fn cg_solve_with_callback<T, F, C>(
    mut matvec: F,
    b: &[T],
    x: &mut [T],
    work: &mut [T],
    params: &CgParams,
    mut callback: C,
) -> Result<CgInfo, LinalgError>
where
    T: Real,
    F: FnMut(&[T], &mut [T]) -> Result<(), LinalgError>,
    C: FnMut(usize, &[T], f64) -> CgControl,
{
    let n = b.len();
    if x.len() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    let (CgScratch { r, p, q }, _) = CgScratch::split(work, n)?;
    if !params.rel_tol.is_finite() || params.rel_tol < 0.0 {
        return Err(LinalgError::InvalidParameter);
    }
    if b.iter().chain(x.iter()).any(|v| !v.is_finite()) {
        return Err(LinalgError::NonFinite);
    }
    let bnorm = nrm2(b).to_f64();
    if bnorm == 0.0 {
        // The solution of A·x = 0 for SPD A is 0.
        x.iter_mut().for_each(|v| *v = T::ZERO);
        return Ok(CgInfo { iterations: 0, rel_residual: 0.0, converged: true });
    }

    // r = b − A·x, p = r.
    matvec(x, q)?;
    for ((ri, &bi), &qi) in r.iter_mut().zip(b).zip(q.iter()) {
        *ri = bi - qi;
    }
    p.copy_from_slice(r);
    let mut rr = dot_unchecked(r, r);
    let mut rel = rel_residual(rr, bnorm)?;
    let mut info = CgInfo { iterations: 0, rel_residual: rel, converged: rel <= params.rel_tol };
    while !info.converged && info.iterations < params.max_iter {
        let it = info.iterations;
        matvec(p, q)?;
        let pq = dot_unchecked(p, q);
        if !pq.is_finite() {
            return Err(LinalgError::NonFinite);
        }
        if pq <= T::ZERO {
            return Err(LinalgError::NotPositiveDefinite { index: it });
        }
        let alpha = rr / pq;
        axpy_unchecked(alpha, p, x);
        axpy_unchecked(-alpha, q, r);
        let rr_new = dot_unchecked(r, r);
        rel = rel_residual(rr_new, bnorm)?;
        let beta = rr_new / rr;
        rr = rr_new;
        for (pi, &ri) in p.iter_mut().zip(r.iter()) {
            *pi = ri + beta * *pi;
        }
        info = CgInfo { iterations: it + 1, rel_residual: rel, converged: rel <= params.rel_tol };
        if !info.converged && callback(info.iterations, x, rel) == CgControl::Stop {
            break;
        }
    }
    Ok(info)
}

fn rel_residual<T: Real>(rr: T, bnorm: f64) -> Result<f64, LinalgError> {
    let rel = libm::sqrt(rr.to_f64()) / bnorm;
    if rel.is_finite() {
        Ok(rel)
    } else {
        Err(LinalgError::NonFinite)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A = tridiag(−1, 4, −1) (SPD, κ < 3).
    fn tri(v: &[f64], out: &mut [f64]) -> Result<(), LinalgError> {
        let n = v.len();
        for i in 0..n {
            let mut s = 4.0 * v[i];
            if i > 0 {
                s -= v[i - 1];
            }
            if i + 1 < n {
                s -= v[i + 1];
            }
            out[i] = s;
        }
        Ok(())
    }

    #[test]
    fn converges_on_a_well_conditioned_system() {
        let n = 50;
        let xs: [f64; 50] = core::array::from_fn(|i| libm::sin(i as f64 * 0.37));
        let mut b = [0.0; 50];
        tri(&xs, &mut b).unwrap();
        let mut x = [0.0; 50];
        let mut w = [0.0; 150];
        let info = cg_solve(tri, &b, &mut x, &mut w, &CgParams::new(100, 1e-12)).unwrap();
        assert!(info.converged && info.rel_residual <= 1e-12 && info.iterations < 40, "{info:?}");
        // ‖x − x*‖ ≤ κ·‖r‖/‖b‖·‖x*‖ with κ < 3.
        for i in 0..n {
            assert!((x[i] - xs[i]).abs() <= 3.0 * 1e-12 * 8.0 + 1e-14);
        }
    }

    #[test]
    fn iteration_budget_is_not_an_error_and_callback_can_stop() {
        let b = [1.0; 20];
        let mut x = [0.0; 20];
        let mut w = [0.0; 60];
        let info = cg_solve(tri, &b, &mut x, &mut w, &CgParams::new(2, 0.0)).unwrap();
        assert_eq!((info.iterations, info.converged), (2, false));
        let mut seen = 0;
        let mut x = [0.0; 20];
        let info = cg_solve_with_callback(tri, &b, &mut x, &mut w, &CgParams::default(), |it, _, _| {
            seen = it;
            if it == 3 {
                CgControl::Stop
            } else {
                CgControl::Continue
            }
        })
        .unwrap();
        assert_eq!((info.iterations, info.converged, seen), (3, false, 3));
    }

    #[test]
    fn errors() {
        let mut w = [0.0; 6];
        let mut x = [0.0; 2];
        let p = CgParams::default();
        assert_eq!(cg_solve(tri, &[1.0; 3], &mut x, &mut w, &p), Err(LinalgError::DimensionMismatch));
        assert_eq!(
            cg_solve(tri, &[1.0; 2], &mut x, &mut w[..5], &p),
            Err(LinalgError::WorkspaceTooSmall { needed: 6, got: 5 })
        );
        assert_eq!(cg_solve(tri, &[f64::NAN, 1.0], &mut x, &mut w, &p), Err(LinalgError::NonFinite));
        assert_eq!(
            cg_solve(tri, &[1.0; 2], &mut x, &mut w, &CgParams::new(5, -1.0)),
            Err(LinalgError::InvalidParameter)
        );
        let neg = |v: &[f64], o: &mut [f64]| {
            o.iter_mut().zip(v).for_each(|(o, v)| *o = -v);
            Ok(())
        };
        assert_eq!(cg_solve(neg, &[1.0; 2], &mut x, &mut w, &p), Err(LinalgError::NotPositiveDefinite { index: 0 }));
        let nan = |_: &[f64], o: &mut [f64]| {
            o.iter_mut().for_each(|o| *o = f64::NAN);
            Ok(())
        };
        assert_eq!(cg_solve(nan, &[1.0; 2], &mut [0.0; 2], &mut w, &p), Err(LinalgError::NonFinite));
        let fails = |_: &[f64], _: &mut [f64]| Err(LinalgError::InvalidParameter);
        assert_eq!(cg_solve(fails, &[1.0; 2], &mut x, &mut w, &p), Err(LinalgError::InvalidParameter));
        let mut x = [5.0; 2];
        let info = cg_solve(tri, &[0.0; 2], &mut x, &mut w, &p).unwrap();
        assert_eq!((x, info.converged), ([0.0; 2], true));
    }

    #[test]
    fn f32_cg() {
        let f = |v: &[f32], o: &mut [f32]| {
            o[0] = 2.0 * v[0] + v[1];
            o[1] = v[0] + 3.0 * v[1];
            Ok(())
        };
        let mut x = [0.0f32; 2];
        let mut w = [0.0f32; 6];
        let info = cg_solve(f, &[3.0, 4.0], &mut x, &mut w, &CgParams::new(10, 1e-6)).unwrap();
        assert!(info.converged && (x[0] - 1.0).abs() < 1e-5 && (x[1] - 1.0).abs() < 1e-5);
    }
}
