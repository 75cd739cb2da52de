//! Symmetric indefinite factorisation `P·A·Pᵀ = L·D·Lᵀ` with Bunch–Kaufman
//! pivoting, and the solve built on it.
//!
//! `D` is block diagonal with 1×1 and 2×2 blocks, `L` unit lower triangular,
//! `P` a permutation. Pivoting follows Bunch & Kaufman, "Some stable methods
//! for calculating inertia and solving symmetric linear systems", Math. Comp.
//! 31 (1977), in the partial-pivoting form of LAPACK `dsytf2` (lower) with
//! `α = (1 + √17)/8`; the solve follows LAPACK `dsytrs`. See also Golub &
//! Van Loan, *Matrix Computations*, 4th ed., §4.4.4.
//!
//! ## Storage
//!
//! Everything lives in one caller workspace of [`ldlt_workspace_len`]`(n)`
//! `= n² + n` elements of `T`:
//! - `work[..n²]`: the factor, column-major `n × n`, in the `dsytf2` packed
//!   form: `D` on the diagonal (and the sub-diagonal entry of each 2×2
//!   block), the multipliers of `L` below; the strict upper triangle is zero;
//! - `work[n²..n² + n]`: the pivots, encoded as small integers stored in `T`
//!   (exact in `f32` up to 2²⁴ and in `f64` up to 2⁵³, far beyond any `n`
//!   whose `n²` workspace fits in memory): entry `k` is `p ≥ 0` for a 1×1
//!   pivot at `k` after interchanging rows/columns `k` and `p`, and `−(p + 1)`
//!   on both rows of a 2×2 pivot at `k, k+1` after interchanging `k+1` and `p`.
//!
//! Keeping the pivots in the same `&mut [T]` keeps the one-buffer shape of
//! every other core routine (and of the C ABI); [`Ldlt`] borrows the
//! workspace, so the encoding is never seen or altered by the caller between
//! factor and solve.
//!
//! ## Accuracy
//!
//! Bunch–Kaufman is normwise backward stable in practice (Higham, *Accuracy
//! and Stability of Numerical Algorithms*, 2nd ed., §11.1.1: growth factor
//! ≤ 2.57ⁿ⁻¹, small in practice), so a solve gives
//! `‖A·x̂ − b‖ ≲ c·n·ε·‖A‖·‖x̂‖` and `‖x − x̂‖/‖x‖ ≲ c·n·ε·κ(A)`.

use crate::{LinalgError, MatMut, MatRef, Real};

/// Workspace length (elements of `T`) for [`ldlt_factor`]: `n² + n`
/// (saturating at `usize::MAX`).
pub fn ldlt_workspace_len(n: usize) -> usize {
    LdltScratch::<f64>::len(n)
}

crate::scratch! {
    /// Scratch of [`ldlt_factor`], kept by the factorisation it returns.
    struct LdltScratch<T: Real>(n: usize) {
        /// The packed factor.
        f: n.saturating_mul(n),
        /// The pivots.
        piv: n,
    }
}

/// Workspace length for [`sym_indefinite_solve`]; the same as
/// [`ldlt_workspace_len`] (the solve itself needs no extra scratch).
pub fn sym_indefinite_solve_workspace_len(n: usize) -> usize {
    ldlt_workspace_len(n)
}

/// A Bunch–Kaufman `L·D·Lᵀ` factorisation held in a caller's workspace.
#[derive(Debug)]
pub struct Ldlt<'w, T> {
    n: usize,
    factor: &'w [T],
    piv: &'w [T],
}

/// Pivot `k` decoded from its `T` encoding.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Pivot {
    /// 1×1 block at `k` after interchanging `k` and `p`.
    One(usize),
    /// 2×2 block (this row is one of its two) after interchanging the
    /// second row of the block with `p`.
    Two(usize),
}

fn encode<T: Real>(p: Pivot) -> T {
    match p {
        Pivot::One(p) => T::from_f64(p as f64),
        Pivot::Two(p) => T::from_f64(-((p + 1) as f64)),
    }
}

fn decode<T: Real>(v: T) -> Pivot {
    let v = v.to_f64();
    // `as` saturates and maps NaN to 0: never panics; indices are bounds
    // checked where they are used.
    if v.is_nan() || v >= 0.0 {
        Pivot::One(v as usize)
    } else {
        Pivot::Two(((-v) as usize).saturating_sub(1))
    }
}

/// Factors the symmetric `A` (`n × n`, lower triangle read, any strides) as
/// `P·A·Pᵀ = L·D·Lᵀ` into `work` (at least [`ldlt_workspace_len`]`(n)`
/// elements; contents on entry ignored). `A` is not modified.
///
/// # Errors
/// - [`LinalgError::DimensionMismatch`] if `A` is not square;
/// - [`LinalgError::WorkspaceTooSmall`] if `work` is too short;
/// - [`LinalgError::NonFinite`] if the lower triangle of `A` holds NaN/±Inf
///   or the elimination overflows;
/// - [`LinalgError::Singular`] `{ index }` if at step `index` the whole
///   remaining column is exactly zero (`A` is singular).
pub fn ldlt_factor<'w, T: Real>(a: MatRef<'_, T>, work: &'w mut [T]) -> Result<Ldlt<'w, T>, LinalgError> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    let (LdltScratch { f, piv }, _) = LdltScratch::split(work, n)?;
    for j in 0..n {
        for i in 0..n {
            f[i + j * n] = if i >= j {
                let v = a.at(i, j);
                if !v.is_finite() {
                    return Err(LinalgError::NonFinite);
                }
                v
            } else {
                T::ZERO
            };
        }
    }
    bunch_kaufman(f, piv, n)?;
    Ok(Ldlt { n, factor: f, piv })
}

/// The `dsytf2` (lower) elimination on the column-major `n × n` array `f`.
fn bunch_kaufman<T: Real>(f: &mut [T], piv: &mut [T], n: usize) -> Result<(), LinalgError> {
    let alpha = T::from_f64((1.0 + libm::sqrt(17.0)) / 8.0);
    let ix = |i: usize, j: usize| i + j * n;
    let mut k = 0;
    while k < n {
        let absakk = f[ix(k, k)].abs();
        // Largest off-diagonal entry in column k.
        let (mut imax, mut colmax) = (k, T::ZERO);
        for i in k + 1..n {
            let v = f[ix(i, k)].abs();
            if v > colmax {
                (imax, colmax) = (i, v);
            }
        }
        if !absakk.is_finite() || !colmax.is_finite() {
            return Err(LinalgError::NonFinite);
        }
        if absakk.max(colmax) == T::ZERO {
            return Err(LinalgError::Singular { index: k });
        }
        let (kp, kstep) = if absakk >= alpha * colmax {
            (k, 1)
        } else {
            // Largest off-diagonal entry in row/column imax of the trailing
            // matrix: row imax left of the diagonal, column imax below it.
            let mut rowmax = T::ZERO;
            for j in k..imax {
                rowmax = rowmax.max(f[ix(imax, j)].abs());
            }
            for i in imax + 1..n {
                rowmax = rowmax.max(f[ix(i, imax)].abs());
            }
            if absakk >= alpha * colmax * (colmax / rowmax) {
                (k, 1)
            } else if f[ix(imax, imax)].abs() >= alpha * rowmax {
                (imax, 1)
            } else {
                (imax, 2)
            }
        };
        let kk = k + kstep - 1;
        if kp != kk {
            // Interchange rows and columns kk and kp of the trailing matrix.
            for i in kp + 1..n {
                f.swap(ix(i, kk), ix(i, kp));
            }
            for j in kk + 1..kp {
                f.swap(ix(j, kk), ix(kp, j));
            }
            f.swap(ix(kk, kk), ix(kp, kp));
            if kstep == 2 {
                f.swap(ix(k + 1, k), ix(kp, k));
            }
        }
        if kstep == 1 {
            // A₂₂ ← A₂₂ − x·xᵀ/d, then x ← x/d (x = column k below k).
            let d = f[ix(k, k)];
            let r1 = T::ONE / d;
            if !r1.is_finite() {
                return Err(LinalgError::Singular { index: k });
            }
            for j in k + 1..n {
                let xj = f[ix(j, k)];
                if xj != T::ZERO {
                    let s = r1 * xj;
                    for i in j..n {
                        let xi = f[ix(i, k)];
                        f[ix(i, j)] -= xi * s;
                    }
                }
            }
            for i in k + 1..n {
                f[ix(i, k)] *= r1;
            }
            piv[k] = encode(Pivot::One(kp));
        } else {
            // 2×2 pivot D = [[a, b], [b, c]] with b = f(k+1, k) ≠ 0:
            // the dsytf2 formulation, scaled by b to avoid overflow.
            let d21 = f[ix(k + 1, k)];
            let d11 = f[ix(k + 1, k + 1)] / d21;
            let d22 = f[ix(k, k)] / d21;
            let t = T::ONE / (d11 * d22 - T::ONE);
            let d21 = t / d21;
            if !d21.is_finite() || !t.is_finite() {
                return Err(LinalgError::Singular { index: k });
            }
            for j in k + 2..n {
                let wk = d21 * (d11 * f[ix(j, k)] - f[ix(j, k + 1)]);
                let wkp1 = d21 * (d22 * f[ix(j, k + 1)] - f[ix(j, k)]);
                for i in j..n {
                    let (aik, aik1) = (f[ix(i, k)], f[ix(i, k + 1)]);
                    f[ix(i, j)] -= aik * wk + aik1 * wkp1;
                }
                f[ix(j, k)] = wk;
                f[ix(j, k + 1)] = wkp1;
            }
            piv[k] = encode(Pivot::Two(kp));
            piv[k + 1] = encode(Pivot::Two(kp));
        }
        k += kstep;
    }
    if f.iter().any(|v| !v.is_finite()) {
        return Err(LinalgError::NonFinite);
    }
    Ok(())
}

impl<T: Real> Ldlt<'_, T> {
    /// The order `n` of the factored matrix.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// The packed factor (`n × n`, column-major, `dsytf2` lower layout; see
    /// the module docs).
    pub fn packed_factor(&self) -> MatRef<'_, T> {
        // Cannot fail: the slice holds exactly n² elements.
        MatRef::new(self.factor, self.n, self.n, 1, self.n.max(1)).unwrap_or(MatRef {
            data: &[],
            nrows: 0,
            ncols: 0,
            rs: 1,
            cs: 1,
        })
    }

    /// Number of 2×2 blocks in `D`.
    pub fn num_2x2_blocks(&self) -> usize {
        self.piv.iter().filter(|&&v| matches!(decode(v), Pivot::Two(_))).count() / 2
    }

    /// Inertia of `A` (Sylvester's law): `(positive, negative)` eigenvalue
    /// counts, read off `D` (each 2×2 block of a Bunch–Kaufman factor has one
    /// eigenvalue of each sign when its determinant is negative). Reliable
    /// only when no eigenvalue is within rounding of zero.
    pub fn inertia(&self) -> (usize, usize) {
        let (n, f) = (self.n, self.factor);
        let (mut pos, mut neg, mut k) = (0, 0, 0);
        while k < n {
            match self.piv.get(k).map(|&v| decode(v)) {
                Some(Pivot::Two(_)) if k + 1 < n => {
                    let (a, b, c) = (f[k * (n + 1)], f[k * (n + 1) + 1], f[(k + 1) * (n + 1)]);
                    let det = a * c - b * b;
                    if det < T::ZERO {
                        pos += 1;
                        neg += 1;
                    } else if a + c > T::ZERO {
                        pos += 2;
                    } else {
                        neg += 2;
                    }
                    k += 2;
                }
                _ => {
                    if f[k * (n + 1)] > T::ZERO {
                        pos += 1;
                    } else {
                        neg += 1;
                    }
                    k += 1;
                }
            }
        }
        (pos, neg)
    }

    /// Overwrites `B` (`n × m`, any strides) with `A⁻¹·B` (LAPACK `dsytrs`:
    /// `P`, `L⁻¹`, `D⁻¹`, `L⁻ᵀ`, `Pᵀ` applied in place; no scratch).
    ///
    /// # Errors
    /// [`LinalgError::DimensionMismatch`] if `B` has not `n` rows;
    /// [`LinalgError::NonFinite`] if `B` holds NaN/Inf on entry (checked
    /// before writing) or the result overflows (then `B` is overwritten).
    pub fn solve_in_place(&self, mut b: MatMut<'_, T>) -> Result<(), LinalgError> {
        let n = self.n;
        if b.nrows() != n {
            return Err(LinalgError::DimensionMismatch);
        }
        let m = b.ncols();
        for c in 0..m {
            for i in 0..n {
                if !b.at(i, c).is_finite() {
                    return Err(LinalgError::NonFinite);
                }
            }
        }
        let f = self.factor;
        let fx = |i: usize, j: usize| f.get(i + j * n).copied().unwrap_or(T::ZERO);
        let swap_rows = |b: &mut MatMut<'_, T>, r1: usize, r2: usize| {
            if r1 != r2 && r1 < n && r2 < n {
                for c in 0..m {
                    let t = b.at(r1, c);
                    *b.at_mut(r1, c) = b.at(r2, c);
                    *b.at_mut(r2, c) = t;
                }
            }
        };
        // Forward: L·D·Y = P·B.
        let mut k = 0;
        while k < n {
            match decode(self.piv.get(k).copied().unwrap_or(T::ZERO)) {
                Pivot::Two(kp) if k + 1 < n => {
                    swap_rows(&mut b, k + 1, kp);
                    let akm1k = fx(k + 1, k);
                    let akm1 = fx(k, k) / akm1k;
                    let ak = fx(k + 1, k + 1) / akm1k;
                    let denom = akm1 * ak - T::ONE;
                    for c in 0..m {
                        let (bk, bk1) = (b.at(k, c), b.at(k + 1, c));
                        for i in k + 2..n {
                            *b.at_mut(i, c) -= fx(i, k) * bk + fx(i, k + 1) * bk1;
                        }
                        let bkm1 = bk / akm1k;
                        let bk = bk1 / akm1k;
                        *b.at_mut(k, c) = (ak * bkm1 - bk) / denom;
                        *b.at_mut(k + 1, c) = (akm1 * bk - bkm1) / denom;
                    }
                    k += 2;
                }
                Pivot::One(kp) | Pivot::Two(kp) => {
                    swap_rows(&mut b, k, kp);
                    let d = fx(k, k);
                    for c in 0..m {
                        let bk = b.at(k, c);
                        if bk != T::ZERO {
                            for i in k + 1..n {
                                *b.at_mut(i, c) -= fx(i, k) * bk;
                            }
                        }
                        *b.at_mut(k, c) = bk / d;
                    }
                    k += 1;
                }
            }
        }
        // Backward: Lᵀ·Pᵀ·X = Y.
        let mut k = n;
        while k > 0 {
            let kk = k - 1;
            match decode(self.piv.get(kk).copied().unwrap_or(T::ZERO)) {
                Pivot::Two(kp) if kk >= 1 => {
                    let k0 = kk - 1;
                    for c in 0..m {
                        let (mut s0, mut s1) = (T::ZERO, T::ZERO);
                        for i in kk + 1..n {
                            let bi = b.at(i, c);
                            s0 += fx(i, k0) * bi;
                            s1 += fx(i, kk) * bi;
                        }
                        *b.at_mut(k0, c) -= s0;
                        *b.at_mut(kk, c) -= s1;
                    }
                    swap_rows(&mut b, kk, kp);
                    k -= 2;
                }
                Pivot::One(kp) | Pivot::Two(kp) => {
                    for c in 0..m {
                        let mut s = T::ZERO;
                        for i in kk + 1..n {
                            s += fx(i, kk) * b.at(i, c);
                        }
                        *b.at_mut(kk, c) -= s;
                    }
                    swap_rows(&mut b, kk, kp);
                    k -= 1;
                }
            }
        }
        for c in 0..m {
            for i in 0..n {
                if !b.at(i, c).is_finite() {
                    return Err(LinalgError::NonFinite);
                }
            }
        }
        Ok(())
    }
}

/// Overwrites `B` (`n × m`) with `A⁻¹·B` for a symmetric, possibly
/// indefinite `A` (`n × n`, lower triangle read, not modified), via
/// [`ldlt_factor`] and [`Ldlt::solve_in_place`]. `work` needs
/// [`sym_indefinite_solve_workspace_len`]`(n)` elements.
///
/// Accuracy: `‖A·X̂ − B‖ ≲ c·n·ε·‖A‖·‖X̂‖` (see the module docs).
///
/// # Errors
/// - [`LinalgError::DimensionMismatch`] on shapes;
/// - [`LinalgError::WorkspaceTooSmall`] if `work` is too short;
/// - [`LinalgError::NonFinite`] on NaN/Inf in `A`'s lower triangle or `B`;
/// - [`LinalgError::Singular`] `{ index }` if `A` is exactly singular.
///
/// `B` is untouched by every error except an overflow during the solve.
pub fn sym_indefinite_solve<T: Real>(a: MatRef<'_, T>, b: MatMut<'_, T>, work: &mut [T]) -> Result<(), LinalgError> {
    if b.nrows() != a.nrows() {
        return Err(LinalgError::DimensionMismatch);
    }
    if !b.rb().all_finite() {
        return Err(LinalgError::NonFinite);
    }
    let f = ldlt_factor(a, work)?;
    f.solve_in_place(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solve(a: &[f64], n: usize, b: &mut [f64]) -> Result<(), LinalgError> {
        let mut w = [0.0; 64 * 64 + 64];
        let m = b.len() / n.max(1);
        sym_indefinite_solve(
            MatRef::from_col_major(a, n, n)?,
            MatMut::from_col_major(b, n, m)?,
            &mut w[..sym_indefinite_solve_workspace_len(n)],
        )
    }

    #[test]
    fn zero_diagonal_needs_a_2x2_pivot() {
        let a = [0.0f64, 1.0, 1.0, 0.0];
        let mut w = [0.0f64; 6];
        let f = ldlt_factor(MatRef::from_col_major(&a, 2, 2).unwrap(), &mut w).unwrap();
        assert_eq!(f.num_2x2_blocks(), 1);
        assert_eq!(f.inertia(), (1, 1));
        let mut b = [3.0f64, 5.0];
        f.solve_in_place(MatMut::from_col_major(&mut b, 2, 1).unwrap()).unwrap();
        assert_eq!(b, [5.0, 3.0]);
    }

    #[test]
    fn interchange_1x1_and_2x2_on_small_integer_matrices() {
        // Permutation-heavy 4×4 with zero diagonal, and one with a tiny (1,1).
        let a = [0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 3.0, 0.0, 0.0, 3.0, 0.0, 4.0, 1.0, 0.0, 4.0, 0.0];
        let x = [1.0, -2.0, 3.0, 0.5];
        let mut b = [0.0; 4];
        for i in 0..4 {
            for j in 0..4 {
                b[i] += a[i + 4 * j] * x[j];
            }
        }
        solve(&a, 4, &mut b).unwrap();
        for i in 0..4 {
            assert!((b[i] - x[i]).abs() < 1e-14, "{b:?}");
        }
        let a = [1e-3, 1.0, 2.0, 1.0, 5.0, 1.0, 2.0, 1.0, -3.0];
        let x = [1.0, 2.0, 3.0];
        let mut b = [0.0; 3];
        for i in 0..3 {
            for j in 0..3 {
                b[i] += a[i + 3 * j] * x[j];
            }
        }
        solve(&a, 3, &mut b).unwrap();
        for i in 0..3 {
            assert!((b[i] - x[i]).abs() < 1e-13, "{b:?}");
        }
    }

    #[test]
    fn errors() {
        let a = [1.0, 1.0, 1.0, 1.0];
        let mut b = [1.0, 2.0];
        assert_eq!(solve(&a, 2, &mut b), Err(LinalgError::Singular { index: 1 }));
        assert_eq!(b, [1.0, 2.0]);
        let a = [1.0, f64::NAN, 0.0, 1.0];
        assert_eq!(solve(&a, 2, &mut b), Err(LinalgError::NonFinite));
        let a = [1.0, 0.0, f64::NAN, 1.0]; // NaN in the unread upper triangle
        solve(&a, 2, &mut b).unwrap();
        assert_eq!(b, [1.0, 2.0]);
        let mut w = [0.0f64; 5];
        let a = [1.0f64; 4];
        assert_eq!(
            ldlt_factor(MatRef::from_col_major(&a, 2, 2).unwrap(), &mut w).unwrap_err(),
            LinalgError::WorkspaceTooSmall { needed: 6, got: 5 }
        );
        let mut b3 = [0.0f64; 3];
        assert_eq!(solve(&a, 2, &mut b3[..3]), Err(LinalgError::DimensionMismatch));
        let mut e: [f64; 0] = [];
        solve(&[], 0, &mut e).unwrap();
        assert_eq!(ldlt_workspace_len(usize::MAX), usize::MAX);
    }

    #[test]
    fn pivot_encoding_round_trips() {
        for p in [Pivot::One(0), Pivot::One(7), Pivot::Two(0), Pivot::Two(12345)] {
            assert_eq!(decode(encode::<f32>(p)), p);
            assert_eq!(decode(encode::<f64>(p)), p);
        }
        assert_eq!(decode(f64::NAN), Pivot::One(0));
    }
}
