//! MINRES for symmetric (possibly indefinite) systems `A·x = b`, with `A`
//! given only through a caller's matrix-vector product, starting from
//! `x₀ = 0`.
//!
//! Algorithm: Paige & Saunders (1975), *Solution of sparse indefinite
//! systems of linear equations*, SIAM J. Numer. Anal. 12(4), in the form of
//! their reference implementation that SciPy's `scipy.sparse.linalg.minres`
//! ports (no preconditioner, no shift): Lanczos on `b`, the tridiagonal
//! least-squares problem updated by Givens rotations, `x_k` updated by a
//! three-term recurrence of search directions. The iterate `x_k` minimises
//! `‖b − A·x‖₂` over the Krylov space `K_k(A, b)` — the same space as
//! conjugate gradient's ([`super::cg`]), another point of it (CG minimises
//! the `A`-norm of the error). Stopping after a few iterations therefore
//! gives other iterates than CG; at convergence both give `A⁻¹b`.
//!
//! This module exists to reproduce RLScore's `CGKronRLS`, which despite its
//! name calls SciPy's MINRES (`tests/fixtures/kron/README.md` in the host
//! crate). The stopping tests are SciPy's (same order, same estimates), so
//! with the same `max_iter` and `rel_tol` the same number of iterations is
//! run up to rounding: `test1 = ‖r‖/(‖A‖‖x‖) ≤ rel_tol` or
//! `test2 = ‖A r‖/(‖A‖‖r‖) ≤ rel_tol` (both also when `1 + test ≤ 1` in
//! floating point), `cond(A) ≥ 0.1/ε`, `‖A‖‖x‖ε ≥ ‖b‖`, the iteration
//! budget, or `b` found exactly after one step. `‖A‖`, `‖r‖`, `‖A r‖` and
//! `cond(A)` are the recurrences' estimates, not recomputed.

use super::blas::nrm2;
use crate::LinalgError;

/// Why [`minres_solve`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinresStop {
    /// `b = 0` (`x = 0` is exact).
    ZeroRhs,
    /// `β₂/β₁ ≤ 10ε` after the first step: `b` is (nearly) an eigenvector
    /// and the first iterate solves the system (SciPy's `istop = −1`).
    FirstStepExact,
    /// `test1 ≤ rel_tol` or `1 + test1 ≤ 1`: the residual is small
    /// relative to `‖A‖‖x‖` (SciPy's `istop = 1`).
    Residual,
    /// `test2 ≤ rel_tol` or `1 + test2 ≤ 1`: a least-squares solution
    /// (SciPy's `istop = 2`).
    LeastSquares,
    /// `‖A‖‖x‖ε ≥ ‖b‖` (SciPy's `istop = 3`).
    SolutionTooLarge,
    /// The condition estimate reached `0.1/ε` (SciPy's `istop = 4`).
    IllConditioned,
    /// `max_iter` iterations done (SciPy's `istop = 6`).
    MaxIter,
    /// The callback answered [`super::cg::CgControl::Stop`].
    Callback,
}

/// What [`minres_solve`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MinresInfo {
    /// Iterations performed (one matrix-vector product each).
    pub iterations: usize,
    /// `‖b − A·x‖₂/‖b‖₂` as estimated by the recurrence (`φ̄_k/β₁`).
    pub rel_residual: f64,
    /// Why it stopped.
    pub stop: MinresStop,
}

/// Workspace length for [`minres_solve`]: `7·n` (Lanczos vectors `v` and
/// three rotating residual vectors, three search directions), saturating.
pub fn minres_workspace_len(n: usize) -> usize {
    MinresScratch::len(n)
}

crate::scratch! {
    /// Scratch of [`minres_solve`].
    struct MinresScratch(n: usize) {
        /// `v_k = r2/β`.
        v: n,
        /// Lanczos residuals `r1`, `r2` and the next one `y` (rotated).
        ra: n,
        rb: n,
        rc: n,
        /// Search directions `w`, `w1`, `w2` (rotated).
        wa: n,
        wb: n,
        wc: n,
    }
}

/// Solves `A·x = b` for a symmetric `A` given by `matvec(v, out)`
/// (`out ← A·v`; `out` has unspecified contents on entry) by MINRES from
/// `x₀ = 0` (`x`'s contents on entry are ignored). `callback(iteration, x,
/// rel_residual)` runs after every iteration (1-based), also the last, and
/// may stop the iteration. `params.rel_tol` is SciPy's `rtol` (see the
/// module docs for the tests it enters); `params.max_iter` the budget.
/// `work` needs [`minres_workspace_len`]`(n)` elements.
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] if `x.len() != b.len()`;
/// [`LinalgError::WorkspaceTooSmall`]; [`LinalgError::InvalidParameter`]
/// for a negative or non-finite `rel_tol`; [`LinalgError::NonFinite`] if
/// `b` or a recurrence becomes non-finite; any error of `matvec`.
pub fn minres_solve<F, C>(
    mut matvec: F,
    b: &[f64],
    x: &mut [f64],
    work: &mut [f64],
    params: &super::cg::CgParams,
    mut callback: C,
) -> Result<MinresInfo, LinalgError>
where
    F: FnMut(&[f64], &mut [f64]) -> Result<(), LinalgError>,
    C: FnMut(usize, &[f64], f64) -> super::cg::CgControl,
{
    let n = b.len();
    if x.len() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    let (MinresScratch { v, ra, rb, rc, wa, wb, wc }, _) = MinresScratch::split(work, n)?;
    if !params.rel_tol.is_finite() || params.rel_tol < 0.0 {
        return Err(LinalgError::InvalidParameter);
    }
    if b.iter().any(|v| !v.is_finite()) {
        return Err(LinalgError::NonFinite);
    }
    x.iter_mut().for_each(|v| *v = 0.0);
    let eps = f64::EPSILON;
    let beta1 = libm::sqrt(b.iter().map(|v| v * v).sum::<f64>());
    if beta1 == 0.0 {
        return Ok(MinresInfo { iterations: 0, rel_residual: 0.0, stop: MinresStop::ZeroRhs });
    }
    let rtol = params.rel_tol;
    // r1 = r2 = b; y is scratch for the next Lanczos vector (SciPy's y
    // equals r2 without a preconditioner, so v = r2/β).
    let (mut r1, mut r2, mut y) = (ra, rb, rc);
    r1.copy_from_slice(b);
    r2.copy_from_slice(b);
    let (mut w, mut w1, mut w2) = (wa, wb, wc);
    w.iter_mut().for_each(|v| *v = 0.0);
    w2.iter_mut().for_each(|v| *v = 0.0);
    let (mut oldb, mut beta, mut dbar, mut epsln) = (0.0f64, beta1, 0.0f64, 0.0f64);
    let (mut phibar, mut rhs1, mut rhs2) = (beta1, beta1, 0.0f64);
    let (mut tnorm2, mut gmax, mut gmin) = (0.0f64, 0.0f64, f64::MAX);
    let (mut cs, mut sn) = (-1.0f64, 0.0f64);
    let mut itn = 0usize;
    let mut stop = None;
    while itn < params.max_iter {
        itn += 1;
        let s = 1.0 / beta;
        for (vi, &ri) in v.iter_mut().zip(r2.iter()) {
            *vi = s * ri;
        }
        matvec(v, y)?;
        if itn >= 2 {
            let c = beta / oldb;
            for (yi, &ri) in y.iter_mut().zip(r1.iter()) {
                *yi -= c * ri;
            }
        }
        let alfa: f64 = v.iter().zip(y.iter()).map(|(a, b)| a * b).sum();
        let c = alfa / beta;
        for (yi, &ri) in y.iter_mut().zip(r2.iter()) {
            *yi -= c * ri;
        }
        // r1 ← r2, r2 ← y; old r1's buffer becomes the next scratch y.
        core::mem::swap(&mut r1, &mut r2);
        core::mem::swap(&mut r2, &mut y);
        oldb = beta;
        beta = libm::sqrt(r2.iter().map(|v| v * v).sum::<f64>());
        if !beta.is_finite() || !alfa.is_finite() {
            return Err(LinalgError::NonFinite);
        }
        tnorm2 += alfa * alfa + oldb * oldb + beta * beta;
        if itn == 1 && beta / beta1 <= 10.0 * eps {
            stop = Some(MinresStop::FirstStepExact);
        }
        // Apply the previous rotation, then compute the next one.
        let oldeps = epsln;
        let delta = cs * dbar + sn * alfa;
        let gbar = sn * dbar - cs * alfa;
        epsln = sn * beta;
        dbar = -cs * beta;
        let root = libm::hypot(gbar, dbar);
        let gamma = libm::hypot(gbar, beta).max(eps);
        cs = gbar / gamma;
        sn = beta / gamma;
        let phi = cs * phibar;
        phibar *= sn;
        // w1 ← w2, w2 ← w, w ← (v − oldeps·w1 − delta·w2)/gamma into old w1.
        let denom = 1.0 / gamma;
        for i in 0..n {
            w1[i] = (v[i] - oldeps * w2[i] - delta * w[i]) * denom;
        }
        // Now w1 holds the new w; rotate (w1, w2, w) ← (w2, w, new).
        core::mem::swap(&mut w1, &mut w2); // w1 = old w2, w2 = new
        core::mem::swap(&mut w2, &mut w); // w2 = old w, w = new
        for (xi, &wi) in x.iter_mut().zip(w.iter()) {
            *xi += phi * wi;
        }
        gmax = gmax.max(gamma);
        gmin = gmin.min(gamma);
        let z = rhs1 / gamma;
        rhs1 = rhs2 - delta * z;
        rhs2 = -epsln * z;
        // Norm estimates and the convergence tests (SciPy's order).
        let anorm = libm::sqrt(tnorm2);
        let ynorm = nrm2(x);
        let epsx = anorm * ynorm * eps;
        let rnorm = phibar;
        let test1 = if ynorm == 0.0 || anorm == 0.0 { f64::INFINITY } else { rnorm / (anorm * ynorm) };
        let test2 = if anorm == 0.0 { f64::INFINITY } else { root / anorm };
        let acond = gmax / gmin;
        if stop.is_none() {
            let mut s = None;
            if 1.0 + test2 <= 1.0 {
                s = Some(MinresStop::LeastSquares);
            }
            if 1.0 + test1 <= 1.0 {
                s = Some(MinresStop::Residual);
            }
            if itn >= params.max_iter {
                s = Some(MinresStop::MaxIter);
            }
            if acond >= 0.1 / eps {
                s = Some(MinresStop::IllConditioned);
            }
            if epsx >= beta1 {
                s = Some(MinresStop::SolutionTooLarge);
            }
            if test2 <= rtol {
                s = Some(MinresStop::LeastSquares);
            }
            if test1 <= rtol {
                s = Some(MinresStop::Residual);
            }
            stop = s;
        }
        if !phibar.is_finite() || !phi.is_finite() {
            return Err(LinalgError::NonFinite);
        }
        let rel = phibar / beta1;
        if callback(itn, x, rel) == super::cg::CgControl::Stop && stop.is_none() {
            stop = Some(MinresStop::Callback);
        }
        if let Some(stop) = stop {
            return Ok(MinresInfo { iterations: itn, rel_residual: rel, stop });
        }
    }
    Ok(MinresInfo { iterations: itn, rel_residual: phibar / beta1, stop: MinresStop::MaxIter })
}

#[cfg(test)]
mod tests {
    use super::super::cg::{cg_solve, CgControl, CgParams};
    use super::*;

    /// A = tridiag(−1, d, −1).
    fn tri(d: f64) -> impl FnMut(&[f64], &mut [f64]) -> Result<(), LinalgError> {
        move |v, out| {
            let n = v.len();
            for i in 0..n {
                let mut s = d * v[i];
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
    }

    #[test]
    fn converges_like_cg_on_spd_and_solves_indefinite_systems() {
        let b: [f64; 40] = core::array::from_fn(|i| libm::cos(i as f64 * 0.7));
        let mut w = [0.0; 280];
        let mut x = [0.0; 40];
        let info =
            minres_solve(tri(4.0), &b, &mut x, &mut w, &CgParams::new(200, 1e-14), |_, _, _| CgControl::Continue)
                .unwrap();
        assert!(info.iterations < 40 && info.rel_residual < 1e-12, "{info:?}");
        let mut xc = [0.0; 40];
        let mut wc = [0.0; 120];
        cg_solve(tri(4.0), &b, &mut xc, &mut wc, &CgParams::new(200, 1e-14)).unwrap();
        for i in 0..40 {
            assert!((x[i] - xc[i]).abs() < 1e-12);
        }
        // Indefinite (diagonal 1: eigenvalues in (−1, 3)); CG is not for it.
        let mut x = [0.0; 40];
        minres_solve(tri(1.0), &b, &mut x, &mut w, &CgParams::new(500, 1e-14), |_, _, _| CgControl::Continue).unwrap();
        let mut r = [0.0; 40];
        tri(1.0)(&x, &mut r).unwrap();
        let err = r.iter().zip(&b).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(err < 1e-8, "{err}");
    }

    #[test]
    fn residual_norm_never_increases_and_callback_stops() {
        let b = [1.0; 30];
        let mut w = [0.0; 210];
        let mut x = [0.0; 30];
        let mut last = f64::INFINITY;
        let info = minres_solve(tri(2.05), &b, &mut x, &mut w, &CgParams::new(100, 0.0), |it, _, rel| {
            assert!(rel <= last * (1.0 + 1e-12));
            last = rel;
            if it == 5 {
                CgControl::Stop
            } else {
                CgControl::Continue
            }
        })
        .unwrap();
        assert_eq!((info.iterations, info.stop), (5, MinresStop::Callback));
        let info =
            minres_solve(tri(2.05), &b, &mut x, &mut w, &CgParams::new(3, 0.0), |_, _, _| CgControl::Continue).unwrap();
        assert_eq!((info.iterations, info.stop), (3, MinresStop::MaxIter));
        let z = [0.0; 30];
        let info =
            minres_solve(tri(2.0), &z, &mut x, &mut w, &CgParams::default(), |_, _, _| CgControl::Continue).unwrap();
        assert_eq!(info.stop, MinresStop::ZeroRhs);
        assert!(x.iter().all(|&v| v == 0.0));
    }
}
