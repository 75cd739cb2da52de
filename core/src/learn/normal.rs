//! One rule for the regularised normal equations `(A + λI)·w = b` of the
//! linear learners (000 eq. 5 in the primal: `A = XᵀLX`), whatever built
//! `A`: rows in memory, streamed blocks or merged statistics.
//!
//! `A` is positive semi-definite by construction, but raw features span
//! many orders of magnitude (a count next to a score of `10⁻³`), so a
//! threshold relative to `‖A‖` would call a well-posed system singular.
//! The system is therefore solved **equilibrated**: with
//! `D = diag(1/√(A_jj + λ))`, `D(A + λI)D·z = Db`, `w = Dz`. Cholesky's
//! accuracy then depends on the condition of the scaled matrix, not of `A`
//! (van der Sluis 1969; Demmel 1989), and the unit diagonal makes its pivot
//! test independent of the features' units.
//!
//! - `λ > 0`: never refused. Mathematically `D(A + λI)D ⪰ λD² ⪰ λ·min_j D_j²·I`;
//!   when Cholesky meets a pivot below the rounding level of the unit
//!   diagonal (`4dε`; an exact duplicate column, a feature constant within
//!   every query, whose `λ` is lost beside `A_jj`), the scaled system is
//!   solved through its eigendecomposition with the eigenvalues raised to
//!   `max(λ·min D², d·ε·λ_max)`: directions below rounding are null
//!   directions of the rows, whose right-hand side is rounding too.
//! - `λ = 0`: a feature with `A_jj = 0` is refused as
//!   [`LearnError::ConstantFeature`]; a singular scaled system as
//!   [`LearnError::Collinear`], naming the two features that weigh most in
//!   its null vector.

use super::{check_lambda, LearnError};
use crate::backend::Backend;
use crate::{scratch, LinalgError, MatMut, MatRef};

scratch! {
    /// Scratch of [`solve_normal`].
    struct NormalScratch(d: usize) {
        /// The scaled system, then its factor.
        m: d * d,
        /// Its eigenvectors (fallback).
        v: d * d,
        /// The scaling `D`.
        s: d,
        /// Eigenvalues (fallback).
        vals: d,
        /// The scaled right-hand side.
        z: d,
        /// `Vᵀz` (fallback).
        t: d,
    }
}

/// Scratch for [`solve_normal`] with `d` features.
pub fn normal_workspace_len(d: usize) -> usize {
    NormalScratch::len(d)
}

/// Solves `(A + λI)·w = b` by the module's rule.
///
/// # Arguments
/// - `a`: `d × d` column-major; only the lower triangle is read.
/// - `b`: the right-hand side (`d`); `w`: the solution (`d`).
///
/// # Errors
/// `BadLambda`; `ConstantFeature`/`Collinear` at `λ = 0` (see the module
/// docs); `NonFinite` for a non-finite `A` or `b`; dimension and workspace
/// errors.
pub fn solve_normal<B: Backend>(
    backend: &mut B,
    a: &[f64],
    b: &[f64],
    lambda: f64,
    w: &mut [f64],
    work: &mut [f64],
) -> Result<(), LearnError> {
    let d = b.len();
    if d == 0 || a.len() != d * d || w.len() != d {
        return Err(LinalgError::DimensionMismatch.into());
    }
    check_lambda(lambda, false)?;
    let (NormalScratch { m, v, s, vals, z, t }, _) = NormalScratch::split(work, d)?;
    let lower = |i: usize, j: usize| if i >= j { a[j * d + i] } else { a[i * d + j] };
    if (0..d).any(|j| (j..d).any(|i| !a[j * d + i].is_finite())) || b.iter().any(|v| !v.is_finite()) {
        return Err(LinalgError::NonFinite.into());
    }
    for j in 0..d {
        let diag = lower(j, j) + lambda;
        if !(diag > 0.0) {
            // λ = 0 (λ > 0 makes every diagonal positive): a zero column.
            return Err(LearnError::ConstantFeature { feature: j });
        }
        s[j] = 1.0 / libm::sqrt(diag);
    }
    let fill = |m: &mut [f64]| {
        for j in 0..d {
            for i in 0..d {
                let shift = if i == j { lambda } else { 0.0 };
                m[j * d + i] = s[i] * (lower(i, j) + shift) * s[j];
            }
        }
    };
    fill(m);
    for j in 0..d {
        z[j] = s[j] * b[j];
    }
    // The scaled matrix has a unit diagonal: a pivot below `tiny` is
    // singular to working precision (an exact duplicate column, a feature
    // constant within every query), where Cholesky's answer is rounding.
    let tiny = 4.0 * d as f64 * f64::EPSILON;
    if backend.cholesky_in_place(MatMut::from_col_major(m, d, d)?).is_ok()
        && (0..d).all(|j| m[j * d + j] * m[j * d + j] > tiny)
    {
        w.copy_from_slice(z);
        backend.cholesky_solve_in_place(MatRef::from_col_major(m, d, d)?, MatMut::from_col_major(w, d, 1)?)?;
        for j in 0..d {
            w[j] *= s[j];
        }
        if w.iter().all(|v| v.is_finite()) {
            return Ok(());
        }
    }
    // Rounding made a pivot non-positive: the eigendecomposition of the
    // scaled system (rebuilt; the failed factorisation overwrote it).
    fill(m);
    backend.sym_eigen(MatRef::from_col_major(m, d, d)?, vals, MatMut::from_col_major(v, d, d)?)?;
    if lambda == 0.0 {
        // Eigenvalues ascend: the null vector is the first column.
        let col = &v[..d];
        let mag = |j: usize| col[j].abs();
        let j0 = (0..d).fold(0, |best, j| if mag(j) > mag(best) { j } else { best });
        let j1 = (0..d).filter(|&j| j != j0).fold(usize::MAX, |best, j| {
            if best == usize::MAX || mag(j) > mag(best) {
                j
            } else {
                best
            }
        });
        let order = [j0, if j1 == usize::MAX { j0 } else { j1 }];
        let (first, second) = (order[0].min(order[1]), order[0].max(order[1]));
        return Err(LearnError::Collinear { first, second });
    }
    // Mathematically every eigenvalue is at least λ·min D²; those below
    // the rounding level `d·ε·λ_max` are not resolved at working
    // precision (their directions are null directions of the rows, where
    // the right-hand side is rounding too), so they are raised to that
    // level rather than amplify rounding by 1/(λ·min D²).
    let top = vals.iter().fold(0.0f64, |hi, &v| hi.max(v.abs()));
    let floor = (lambda * s.iter().fold(f64::INFINITY, |lo, &v| lo.min(v * v))).max(d as f64 * f64::EPSILON * top);
    let vm = MatRef::from_col_major(v, d, d)?;
    crate::linalg::blas::gemv(1.0, vm.t(), z, 0.0, t)?;
    for (tj, &e) in t.iter_mut().zip(vals.iter()) {
        *tj /= e.max(floor);
    }
    crate::linalg::blas::gemv(1.0, vm, t, 0.0, w)?;
    for j in 0..d {
        w[j] *= s[j];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::backend::Portable;

    fn solve(a: &[f64], b: &[f64], lambda: f64) -> Result<Vec<f64>, LearnError> {
        let d = b.len();
        let mut pw = vec![0.0; Portable::workspace_len(d)];
        let mut be = Portable::new(&mut pw);
        let mut w = vec![0.0; d];
        let mut work = vec![0.0; normal_workspace_len(d)];
        solve_normal(&mut be, a, b, lambda, &mut w, &mut work).map(|_| w)
    }

    /// Features of scales 10⁹ and 10⁻³ side by side: the relative residual
    /// of `(A + λI)w = b` stays at rounding level for every λ, where a
    /// threshold relative to `‖A‖` refused the system.
    #[test]
    fn graded_systems_are_solved_at_every_lambda() {
        // A = SCS with C a correlation matrix, S the feature scales.
        let scales = [1e9, 1.0, 1e-3, 3e4];
        let c = [[1.0, 0.3, 0.1, 0.2], [0.3, 1.0, -0.4, 0.0], [0.1, -0.4, 1.0, 0.5], [0.2, 0.0, 0.5, 1.0]];
        let d = 4;
        let mut a = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                a[j * d + i] = scales[i] * c[i][j] * scales[j] * 1e3;
            }
        }
        let b: Vec<f64> = (0..d).map(|i| scales[i] * (i as f64 + 1.0)).collect();
        for lambda in [0.0, 1e-6, 0.01, 1.0, 100.0] {
            let w = solve(&a, &b, lambda).unwrap();
            for i in 0..d {
                let r: f64 = (0..d).map(|j| a[j * d + i] * w[j]).sum::<f64>() + lambda * w[i] - b[i];
                let scale: f64 = (0..d).map(|j| (a[j * d + i] * w[j]).abs()).sum::<f64>() + (lambda * w[i]).abs();
                assert!(r.abs() <= 1e-12 * scale.max(b[i].abs()), "λ {lambda} row {i}: {r} vs {scale}");
            }
        }
    }

    #[test]
    fn a_rank_deficient_system_is_solved_with_lambda_and_named_without() {
        // Features 1 and 3 equal: A singular.
        let rows = [[1.0, 2.0, 0.5, 2.0], [0.0, -1.0, 1.5, -1.0], [2.0, 0.5, 0.0, 0.5], [1.0, 1.0, 1.0, 1.0]];
        let d = 4;
        let mut a = vec![0.0; d * d];
        for r in &rows {
            for i in 0..d {
                for j in 0..d {
                    a[j * d + i] += r[i] * r[j];
                }
            }
        }
        let b = [1.0, 2.0, 3.0, 2.0];
        let w = solve(&a, &b, 1e-3).unwrap();
        // The two equal features share their weight equally (the minimum-norm
        // direction of the ridge solution).
        assert!((w[1] - w[3]).abs() <= 1e-9 * w[1].abs().max(1.0), "{w:?}");
        assert_eq!(solve(&a, &b, 0.0), Err(LearnError::Collinear { first: 1, second: 3 }));
        // A zero column.
        let mut z = a.clone();
        for i in 0..d {
            z[2 * d + i] = 0.0;
            z[i * d + 2] = 0.0;
        }
        assert_eq!(solve(&z, &b, 0.0), Err(LearnError::ConstantFeature { feature: 2 }));
        assert!(solve(&z, &b, 0.5).is_ok());
    }

    /// A positive semi-definite matrix made slightly indefinite by rounding
    /// (a negative eigenvalue far below λ): the fallback clamps it.
    #[test]
    fn rounding_negative_eigenvalues_are_clamped_for_positive_lambda() {
        // u uᵀ·10¹⁶ plus a perturbation of −1 along v ⟂ u.
        let d = 3;
        let u = [1.0, 1.0, 0.0];
        let v = [1.0, -1.0, 0.0];
        let mut a = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                a[j * d + i] = 1e16 * u[i] * u[j] - 1.0 * v[i] * v[j];
            }
        }
        a[2 * d + 2] = 1.0;
        let b = [1.0, 1.0, 1.0];
        let w = solve(&a, &b, 1e-9).unwrap();
        assert!(w.iter().all(|x| x.is_finite()), "{w:?}");
        // Along u the system is 2·10¹⁶: w·u ≈ 2/(2·10¹⁶); along e₃: 1/(1 + λ).
        assert!((w[2] - 1.0 / (1.0 + 1e-9)).abs() < 1e-12);
    }
}
