//! Cyclic Jacobi for small symmetric matrices, with high relative accuracy.
//!
//! Row-cyclic sweeps of plane rotations $A \leftarrow J^T A J$, each
//! annihilating one off-diagonal pair (Golub & Van Loan 4th ed. §8.5.2–8.5.3,
//! Rutishauser's formulas). A pair is skipped (set to zero) when
//! $|a_{pq}| \le \mathrm{tol}\cdot\sqrt{|a_{pp} a_{qq}|}$, the stopping test of
//! Demmel & Veselić, "Jacobi's method is more accurate than QR", SIAM J.
//! Matrix Anal. Appl. 13 (1992): for a positive definite `A = D·H·D` (D
//! diagonal) every eigenvalue is then computed with relative error about
//! ε·κ(H), however small it is, while QR only guarantees ε·‖A‖.
//!
//! Costs about 4n³ flops per sweep and typically 6–10 sweeps: use it for
//! n ≲ 30; [`super::tridiag`] is the general solver.
//!
//! Same conventions as [`super::tridiag::sym_eigen`]: lower triangle read,
//! ascending eigenvalues, column `j` of `vecs` ↔ `vals[j]`.

use super::tridiag::pow2_scale;
use super::EigenParams;
use crate::{LinalgError, MatMut, MatRef, Real};

/// Workspace length (elements of `T`) that [`jacobi_eigen`] needs for an
/// `n × n` matrix: `2n²` (the working matrix and the rotations).
pub fn jacobi_eigen_workspace_len(n: usize) -> usize {
    JacobiScratch::<f64>::len(n)
}

crate::scratch! {
    /// Scratch of [`jacobi_eigen`].
    struct JacobiScratch<T: Real>(n: usize) {
        /// The working matrix.
        w: n.saturating_mul(n),
        /// The accumulated rotations.
        v: n.saturating_mul(n),
    }
}

/// All eigenvalues (ascending) and optionally eigenvectors of the symmetric
/// `a` (only the lower triangle is read) by cyclic Jacobi.
///
/// # Arguments
///
/// Same as [`super::tridiag::sym_eigen`]; `params.max_iter` counts sweeps
/// (default 60, far above the ~10 needed) and `params.tol` is the relative
/// off-diagonal threshold (`0` = machine ε).
///
/// # Accuracy
///
/// ‖A·V − V·Λ‖_F ≤ c·n·ε·‖A‖_F, ‖VᵀV − I‖_F ≤ c·n·ε; for positive definite
/// `A = D·H·D`, |λⱼ − λ̂ⱼ| ≤ c·n·ε·κ(H)·|λⱼ| (relative, per eigenvalue).
/// The input is scaled by a power of two (exact) to avoid overflow.
///
/// # Errors
///
/// [`LinalgError::DimensionMismatch`], [`LinalgError::WorkspaceTooSmall`],
/// [`LinalgError::NonFinite`] (NaN/Inf in the lower triangle) and
/// [`LinalgError::NoConvergence`] (`iterations` = sweeps done) as for
/// [`super::tridiag::sym_eigen`].
pub fn jacobi_eigen<T: Real>(
    a: MatRef<'_, T>,
    vals: &mut [T],
    vecs: Option<MatMut<'_, T>>,
    work: &mut [T],
    params: &EigenParams,
) -> Result<(), LinalgError> {
    let n = super::check_shapes(&a, vals, vecs.as_ref())?;
    let (JacobiScratch { w, v }, _) = JacobiScratch::split(work, n)?;
    if n == 0 {
        return Ok(());
    }
    jacobi_in_place(a, vals, w, v, params)?;
    if let Some(mut out) = vecs {
        for j in 0..n {
            for i in 0..n {
                *out.at_mut(i, j) = v[i + j * n];
            }
        }
    }
    Ok(())
}

/// The Jacobi iteration proper, shared with [`super::fixed::SymEigen`]:
/// `a` is square with `n ≥ 1` rows and `vals.len() == n` (checked by the
/// callers); `w` and `v` hold at least `n²` elements each. On success `vals`
/// is ascending and `v[..n²]` holds the eigenvectors column-major with
/// leading dimension `n`.
pub(crate) fn jacobi_in_place<T: Real>(
    a: MatRef<'_, T>,
    vals: &mut [T],
    w: &mut [T],
    v: &mut [T],
    params: &EigenParams,
) -> Result<(), LinalgError> {
    let n = a.nrows();
    let amax = super::lower_max_abs(a)?;
    let (w, v) = (&mut w[..n * n], &mut v[..n * n]);
    v.iter_mut().for_each(|x| *x = T::ZERO);
    for j in 0..n {
        v[j * n + j] = T::ONE;
    }
    let scale = if amax == T::ZERO { T::ONE } else { pow2_scale(amax) };
    for j in 0..n {
        for i in j..n {
            let x = a.at(i, j) / scale;
            w[i + j * n] = x;
            w[j + i * n] = x;
        }
    }
    let tol = T::from_f64(params.tol).max(T::EPSILON);
    let mut sweeps = 0;
    loop {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let apq = w[p + q * n];
                if apq == T::ZERO {
                    continue;
                }
                let (app, aqq) = (w[p + p * n], w[q + q * n]);
                if apq.abs() <= tol * (app.abs().sqrt() * aqq.abs().sqrt()) {
                    w[p + q * n] = T::ZERO;
                    w[q + p * n] = T::ZERO;
                    continue;
                }
                if sweeps >= params.max_iter {
                    return Err(LinalgError::NoConvergence { iterations: sweeps });
                }
                rotated = true;
                // Rutishauser: θ = (a_qq − a_pp)/(2 a_pq), t = sgn θ/(|θ| + √(θ²+1)).
                let theta = (aqq - app) / (T::from_f64(2.0) * apq);
                let t = if theta.abs() > T::ONE / T::EPSILON {
                    T::ONE / (T::from_f64(2.0) * theta)
                } else {
                    (T::ONE / (theta.abs() + theta.hypot(T::ONE))).copysign(theta)
                };
                let c = T::ONE / t.hypot(T::ONE);
                let s = t * c;
                for r in 0..n {
                    if r == p || r == q {
                        continue;
                    }
                    let (arp, arq) = (w[r + p * n], w[r + q * n]);
                    let np = c * arp - s * arq;
                    let nq = s * arp + c * arq;
                    w[r + p * n] = np;
                    w[p + r * n] = np;
                    w[r + q * n] = nq;
                    w[q + r * n] = nq;
                }
                w[p + p * n] = app - t * apq;
                w[q + q * n] = aqq + t * apq;
                w[p + q * n] = T::ZERO;
                w[q + p * n] = T::ZERO;
                let (lo, hi) = v.split_at_mut(q * n);
                let vp = &mut lo[p * n..(p + 1) * n];
                let vq = &mut hi[..n];
                for (x, y) in vp.iter_mut().zip(vq.iter_mut()) {
                    let (a0, b0) = (*x, *y);
                    *x = c * a0 - s * b0;
                    *y = s * a0 + c * b0;
                }
            }
        }
        if !rotated {
            break;
        }
        sweeps += 1;
    }
    for (j, val) in vals.iter_mut().enumerate() {
        *val = w[j + j * n];
    }
    super::sort_and_unscale(vals, Some(v), n, scale)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;

    #[test]
    fn graded_spd_matrix_keeps_relative_accuracy() {
        // A = D·H·D with H well conditioned and D spanning 1e-8..1; the small
        // eigenvalues are ~1e-16 and Jacobi gets them to relative accuracy.
        let n = 3;
        let d = [1.0, 1e-4, 1e-8];
        let h = [1.0, 0.3, 0.1, 0.3, 1.0, 0.2, 0.1, 0.2, 1.0];
        let mut a = [0.0; 9];
        for j in 0..n {
            for i in 0..n {
                a[i + j * n] = d[i] * h[i + j * n] * d[j];
            }
        }
        let mut vals = [0.0; 3];
        let mut v = [0.0; 9];
        let mut work = vec![0.0; jacobi_eigen_workspace_len(n)];
        jacobi_eigen(
            MatRef::from_col_major(&a, n, n).unwrap(),
            &mut vals,
            Some(MatMut::from_col_major(&mut v, n, n).unwrap()),
            &mut work,
            &EigenParams::default(),
        )
        .unwrap();
        // det(A) = det(D)² det(H) is known exactly: check the product of eigenvalues.
        let det_h = 1.0 * (1.0 - 0.04) - 0.3 * (0.3 - 0.02) + 0.1 * (0.06 - 0.1);
        let det_a = det_h * (d[0] * d[1] * d[2]) * (d[0] * d[1] * d[2]);
        let prod = vals[0] * vals[1] * vals[2];
        assert!(((prod - det_a) / det_a).abs() < 1e-12, "{prod} vs {det_a}");
        assert!(vals[0] > 0.0 && vals[0] < 2e-16);
    }

    #[test]
    fn errors_not_panics() {
        let a = [1.0, 2.0, 2.0, f64::NAN];
        let mut vals = [0.0; 2];
        let mut work = [0.0; 8];
        let m = MatRef::from_col_major(&a, 2, 2).unwrap();
        assert_eq!(jacobi_eigen(m, &mut vals, None, &mut work, &EigenParams::default()), Err(LinalgError::NonFinite));
        let a = [1.0, 2.0, 2.0, 3.0];
        let m = MatRef::from_col_major(&a, 2, 2).unwrap();
        assert_eq!(
            jacobi_eigen(m, &mut vals, None, &mut work[..7], &EigenParams::default()),
            Err(LinalgError::WorkspaceTooSmall { needed: 8, got: 7 })
        );
        assert_eq!(
            jacobi_eigen(m, &mut vals, None, &mut work, &EigenParams::new(0.0, 0)),
            Err(LinalgError::NoConvergence { iterations: 0 })
        );
        jacobi_eigen(m, &mut vals, None, &mut work, &EigenParams::default()).unwrap();
        assert!((vals[0] + vals[1] - 4.0).abs() < 1e-14 && (vals[0] * vals[1] + 1.0).abs() < 1e-14);
    }
}
