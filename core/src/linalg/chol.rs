//! Cholesky factorisation `A = L·Lᵀ` of a symmetric positive definite matrix
//! and triangular solves with matrix right-hand sides.
//!
//! Guarantees:
//! - only the lower triangle of `A` is read; on success `L` is in the lower
//!   triangle and the strict upper triangle is zeroed;
//! - a non-finite input is [`LinalgError::NonFinite`] and leaves `A`
//!   untouched; a pivot `≤ 0` (or one that overflows) is
//!   [`LinalgError::NotPositiveDefinite`] with its column, and leaves `A`
//!   partly overwritten;
//! - the triangular solves check the diagonal and every input for
//!   finiteness before writing anything, so a failed solve leaves `B`
//!   untouched.
//!
//! Accuracy (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd
//! ed., Thm. 10.3 and 10.4): the computed factor satisfies
//! `L·Lᵀ = A + ΔA` with `|ΔA| ≤ γ_{n+1}·|L|·|Lᵀ|`, and a solve through it is
//! backward stable, so `‖x − x̂‖/‖x‖ ≲ c·n·ε·κ₂(A)`.

use super::blas::gemm_lower_unchecked;
use crate::{LinalgError, MatMut, MatRef, Real};

/// Panel width of the blocked factorisation.
const NB: usize = 64;

/// Overwrites the lower triangle of the symmetric positive definite `A`
/// (`n × n`) with its Cholesky factor `L` (`A = L·Lᵀ`, positive diagonal) and
/// zeroes the strict upper triangle.
///
/// Only the lower triangle is read. Column-major views (`row_stride == 1`)
/// take the blocked right-looking algorithm (Golub & Van Loan, *Matrix
/// Computations*, 4th ed., §4.2.9, Alg. 4.2.3 shape: factor an `NB`-wide
/// panel column by column, then update the trailing matrix with one
/// syrk-style blocked product, [`super::blas`]); other layouts take the
/// unblocked column algorithm (§4.2.5), same result, slower.
///
/// # Errors
/// - [`LinalgError::DimensionMismatch`] if `A` is not square;
/// - [`LinalgError::NonFinite`] if the lower triangle holds NaN or ±Inf
///   (checked before anything is written);
/// - [`LinalgError::NotPositiveDefinite`] `{ index }` if pivot `index` is
///   `≤ 0` or not finite; `A` is then partly overwritten.
pub fn cholesky_in_place<T: Real>(mut a: MatMut<'_, T>) -> Result<(), LinalgError> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    for j in 0..n {
        for i in j..n {
            if !a.at(i, j).is_finite() {
                return Err(LinalgError::NonFinite);
            }
        }
    }
    if a.row_stride() == 1 || n <= 1 {
        blocked_col_major(&mut a)?;
    } else {
        unblocked(&mut a, 0, n)?;
    }
    for j in 1..n {
        for i in 0..j {
            *a.at_mut(i, j) = T::ZERO;
        }
    }
    Ok(())
}

/// Cholesky factor of the longest leading block of `A` (`n × n`, lower
/// triangle read and overwritten) whose pivots stay safely positive, for
/// problems that use every leading block (KPCRank's one-decomposition model
/// selection, 000 §4.2: the factor of a leading block is the leading block
/// of the factor). Left-looking, so column `j` depends only on columns
/// `< j`; it stops at the first pivot `≤ n·ε·max|diag|` (relative to the
/// largest diagonal entry) and returns how many leading columns were
/// factored. Those columns hold `L`; the rest of `A` is left as it was read.
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] if `A` is not square;
/// [`LinalgError::NonFinite`] if the lower triangle holds NaN or ±Inf
/// (checked before anything is written).
pub fn cholesky_leading_in_place<T: Real>(mut a: MatMut<'_, T>) -> Result<usize, LinalgError> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    let mut maxdiag = T::ZERO;
    for j in 0..n {
        for i in j..n {
            if !a.at(i, j).is_finite() {
                return Err(LinalgError::NonFinite);
            }
        }
        maxdiag = maxdiag.max(a.at(j, j).abs());
    }
    let tol = T::from_f64(n.max(1) as f64) * T::EPSILON * maxdiag;
    for j in 0..n {
        let mut d = a.at(j, j);
        for t in 0..j {
            d -= a.at(j, t) * a.at(j, t);
        }
        if !(d > tol) {
            return Ok(j);
        }
        let ljj = d.sqrt();
        *a.at_mut(j, j) = ljj;
        for i in j + 1..n {
            let mut v = a.at(i, j);
            for t in 0..j {
                v -= a.at(i, t) * a.at(j, t);
            }
            *a.at_mut(i, j) = v / ljj;
        }
    }
    Ok(n)
}

/// A usable Cholesky pivot: strictly positive and finite (false for NaN).
#[inline]
fn is_valid_pivot<T: Real>(d: T) -> bool {
    d > T::ZERO && d.is_finite()
}

/// Unblocked left-looking Cholesky of columns `j0..j1` of the whole lower
/// part (rows `j..n` of column `j`), assuming columns `< j0` are final and
/// the trailing update from them has already been applied to columns
/// `≥ j0`. Works on any strides.
fn unblocked<T: Real>(a: &mut MatMut<'_, T>, j0: usize, j1: usize) -> Result<(), LinalgError> {
    let n = a.nrows();
    for j in j0..j1 {
        for p in j0..j {
            let ljp = a.at(j, p);
            if ljp != T::ZERO {
                for i in j..n {
                    let v = a.at(i, p);
                    *a.at_mut(i, j) -= ljp * v;
                }
            }
        }
        let d = a.at(j, j);
        if !is_valid_pivot(d) {
            return Err(LinalgError::NotPositiveDefinite { index: j });
        }
        let d = d.sqrt();
        *a.at_mut(j, j) = d;
        let inv = T::ONE / d;
        for i in j + 1..n {
            *a.at_mut(i, j) *= inv;
        }
    }
    Ok(())
}

/// Blocked right-looking Cholesky on a column-major view (`row_stride == 1`
/// or `n ≤ 1`): column `j` is the contiguous run `data[j·cs .. j·cs + n]`, so
/// the panel (columns `< k + NB`) and the trailing matrix (columns `≥ k + NB`)
/// live in disjoint halves of the slice and can be borrowed separately.
fn blocked_col_major<T: Real>(a: &mut MatMut<'_, T>) -> Result<(), LinalgError> {
    let n = a.nrows();
    let cs = a.col_stride();
    let data = a.as_slice_mut();
    let mut k = 0;
    while k < n {
        let kb = NB.min(n - k);
        // Panel: columns k..k+kb, rows k..n, left-looking inside the panel
        // with contiguous axpys.
        for j in k..k + kb {
            let (left, right) = data.split_at_mut(j * cs);
            let colj = right.get_mut(..n).ok_or(LinalgError::DimensionMismatch)?;
            for p in k..j {
                let colp = left.get(p * cs..p * cs + n).ok_or(LinalgError::DimensionMismatch)?;
                let ljp = colp[j];
                if ljp != T::ZERO {
                    for (x, &y) in colj[j..].iter_mut().zip(&colp[j..]) {
                        *x -= ljp * y;
                    }
                }
            }
            let d = colj[j];
            if !is_valid_pivot(d) {
                return Err(LinalgError::NotPositiveDefinite { index: j });
            }
            let d = d.sqrt();
            colj[j] = d;
            let inv = T::ONE / d;
            colj[j + 1..].iter_mut().for_each(|x| *x *= inv);
        }
        let k1 = k + kb;
        if k1 < n {
            // Trailing update A22 ← A22 − L21·L21ᵀ on the lower triangle.
            let m = n - k1;
            let (left, right) = data.split_at_mut(k1 * cs);
            let l21 = MatRef::new(&left[k * cs + k1..], m, kb, 1, cs)?;
            let a22 = MatMut::new(&mut right[k1..], m, m, 1, cs)?;
            gemm_lower_unchecked(-T::ONE, l21, l21.t(), T::ONE, a22);
        }
        k = k1;
    }
    Ok(())
}

/// Checks the shapes of a triangular solve and that the diagonal of `l` is
/// nonzero and the read triangle of `l` and all of `b` are finite.
fn check_triangular<T: Real>(l: &MatRef<'_, T>, b: &MatMut<'_, T>, lower: bool) -> Result<(), LinalgError> {
    let n = l.nrows();
    if l.ncols() != n || b.nrows() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    for j in 0..n {
        let (i0, i1) = if lower { (j, n) } else { (0, j + 1) };
        for i in i0..i1 {
            if !l.at(i, j).is_finite() {
                return Err(LinalgError::NonFinite);
            }
        }
    }
    for j in 0..b.ncols() {
        for i in 0..n {
            if !b.at(i, j).is_finite() {
                return Err(LinalgError::NonFinite);
            }
        }
    }
    for j in 0..n {
        if l.at(j, j) == T::ZERO {
            return Err(LinalgError::Singular { index: j });
        }
    }
    Ok(())
}

/// Overwrites `B` (`n × m`) with `L⁻¹·B`, solving `L·X = B` by forward
/// substitution (column-oriented, Golub & Van Loan §3.1.2).
///
/// Reads only the lower triangle (with the diagonal) of the `n × n` view `l`;
/// any strides. Backward stable: the computed `X` solves `(L + ΔL)·X = B`
/// with `|ΔL| ≤ γ_n·|L|` column by column (Higham Thm. 8.5).
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] on shapes; [`LinalgError::NonFinite`]
/// if `L`'s lower triangle or `B` holds NaN/Inf; [`LinalgError::Singular`]
/// `{ index }` on a zero diagonal entry. `B` is untouched on error.
pub fn solve_lower_in_place<T: Real>(l: MatRef<'_, T>, mut b: MatMut<'_, T>) -> Result<(), LinalgError> {
    check_triangular(&l, &b, true)?;
    let n = l.nrows();
    for c in 0..b.ncols() {
        for j in 0..n {
            let x = b.at(j, c) / l.at(j, j);
            *b.at_mut(j, c) = x;
            if x == T::ZERO {
                continue;
            }
            match (l.col(j), b.col_mut(c)) {
                (Some(lc), Some(bc)) => {
                    for (y, &v) in bc[j + 1..].iter_mut().zip(&lc[j + 1..]) {
                        *y -= x * v;
                    }
                }
                _ => {
                    for i in j + 1..n {
                        *b.at_mut(i, c) -= x * l.at(i, j);
                    }
                }
            }
        }
    }
    Ok(())
}

/// Overwrites `B` (`n × m`) with `L⁻ᵀ·B`, solving `Lᵀ·X = B` by backward
/// substitution (dot-product form over the columns of `L`).
///
/// Reads only the lower triangle of `l`; any strides. Accuracy and errors as
/// for [`solve_lower_in_place`].
///
/// # Errors
/// As [`solve_lower_in_place`].
pub fn solve_lower_transpose_in_place<T: Real>(l: MatRef<'_, T>, mut b: MatMut<'_, T>) -> Result<(), LinalgError> {
    check_triangular(&l, &b, true)?;
    let n = l.nrows();
    for c in 0..b.ncols() {
        for j in (0..n).rev() {
            let s = match (l.col(j), b.col_mut(c)) {
                (Some(lc), Some(bc)) => super::blas::dot_unchecked(&lc[j + 1..], &bc[j + 1..]),
                _ => {
                    let mut s = T::ZERO;
                    for i in j + 1..n {
                        s += l.at(i, j) * b.at(i, c);
                    }
                    s
                }
            };
            let v = (b.at(j, c) - s) / l.at(j, j);
            *b.at_mut(j, c) = v;
        }
    }
    Ok(())
}

/// Overwrites `B` (`n × m`) with `U⁻¹·B`, solving `U·X = B` by backward
/// substitution. Reads only the upper triangle (with the diagonal) of `u`.
///
/// # Errors
/// As [`solve_lower_in_place`] (with "upper" for "lower").
pub fn solve_upper_in_place<T: Real>(u: MatRef<'_, T>, b: MatMut<'_, T>) -> Result<(), LinalgError> {
    // U·X = B  ⇔  (Uᵀ)ᵀ·X = B, and Uᵀ is a lower-triangular view of u.
    solve_lower_transpose_in_place(u.t(), b)
}

/// Overwrites `B` with `(L·Lᵀ)⁻¹·B = A⁻¹·B` for a factor from
/// [`cholesky_in_place`]: a forward then a backward substitution. Reads only
/// the lower triangle of `l`.
///
/// Accuracy: `‖X − X̂‖/‖X‖ ≲ c·n·ε·κ₂(A)` (Higham Thm. 10.4).
///
/// # Errors
/// As [`solve_lower_in_place`]; `B` is untouched on error.
pub fn cholesky_solve_in_place<T: Real>(l: MatRef<'_, T>, mut b: MatMut<'_, T>) -> Result<(), LinalgError> {
    solve_lower_in_place(l, b.rb_mut())?;
    // Cannot fail after the forward solve passed the same checks, unless it
    // overflowed; then the second check reports NonFinite.
    solve_lower_transpose_in_place(l, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spd(n: usize, out: &mut [f64]) {
        // A = M·Mᵀ + n·I with M[i][j] = ((3i + 5j) mod 7) − 3: integer, exact.
        for i in 0..n {
            for j in 0..n {
                let mut s = 0.0;
                for p in 0..n {
                    let mi = ((3 * i + 5 * p) % 7) as f64 - 3.0;
                    let mj = ((3 * j + 5 * p) % 7) as f64 - 3.0;
                    s += mi * mj;
                }
                out[i + n * j] = s + if i == j { n as f64 } else { 0.0 };
            }
        }
    }

    #[test]
    fn blocked_and_unblocked_agree_and_reconstruct() {
        // n = 150 crosses two panel boundaries (NB = 64).
        let n = 150;
        let mut a = [0.0f64; 150 * 150];
        spd(n, &mut a);
        let orig = a;
        let mut at = a; // same matrix, row-major view = unblocked path
        cholesky_in_place(MatMut::from_col_major(&mut a, n, n).unwrap()).unwrap();
        cholesky_in_place(MatMut::from_row_major(&mut at, n, n).unwrap()).unwrap();
        let mut maxa = 0.0f64;
        orig.iter().for_each(|v| maxa = maxa.max(v.abs()));
        for i in 0..n {
            for j in 0..n {
                // Row-major storage of L: element (i, j) at i·n + j.
                assert!((a[i + n * j] - at[i * n + j]).abs() <= 1e-12 * maxa.sqrt());
                if j > i {
                    assert_eq!(a[i + n * j], 0.0);
                }
                let mut s = 0.0;
                for p in 0..n {
                    s += a[i + n * p] * a[j + n * p];
                }
                // |ΔA| ≤ γ_{n+1}·(|L||Lᵀ|)_ij ≤ (n+1)·ε·A_ii^½·A_jj^½ (Cauchy–Schwarz), ×2 margin.
                let bound = 2.0 * (n as f64 + 1.0) * f64::EPSILON * (orig[i * (n + 1)] * orig[j * (n + 1)]).sqrt();
                assert!((s - orig[i + n * j]).abs() <= bound, "({i},{j})");
            }
        }
    }

    #[test]
    fn errors_are_reported() {
        let mut a = [1.0f64, 2.0, 2.0, 1.0]; // eigenvalues 3, −1
        assert_eq!(
            cholesky_in_place(MatMut::from_col_major(&mut a, 2, 2).unwrap()),
            Err(LinalgError::NotPositiveDefinite { index: 1 })
        );
        let mut a = [1.0f64, f64::NAN, 0.0, 1.0];
        let before = a;
        assert_eq!(cholesky_in_place(MatMut::from_col_major(&mut a, 2, 2).unwrap()), Err(LinalgError::NonFinite));
        assert_eq!(a[2], before[2]);
        // NaN in the (unread) upper triangle is ignored.
        let mut a = [4.0f64, 2.0, f64::NAN, 5.0];
        cholesky_in_place(MatMut::from_col_major(&mut a, 2, 2).unwrap()).unwrap();
        assert_eq!(a, [2.0, 1.0, 0.0, 2.0]);
        let mut a = [0.0f64; 6];
        assert_eq!(
            cholesky_in_place(MatMut::from_col_major(&mut a, 2, 3).unwrap()),
            Err(LinalgError::DimensionMismatch)
        );
        let mut e: [f64; 0] = [];
        cholesky_in_place(MatMut::from_col_major(&mut e, 0, 0).unwrap()).unwrap();

        let l = [1.0f64, 1.0, 0.0, 0.0];
        let mut b = [1.0f64, 1.0];
        let lv = MatRef::from_col_major(&l, 2, 2).unwrap();
        assert_eq!(
            solve_lower_in_place(lv, MatMut::from_col_major(&mut b, 2, 1).unwrap()),
            Err(LinalgError::Singular { index: 1 })
        );
        assert_eq!(b, [1.0, 1.0]);
        let mut b3 = [1.0f64; 3];
        assert_eq!(
            solve_lower_in_place(lv, MatMut::from_col_major(&mut b3, 3, 1).unwrap()),
            Err(LinalgError::DimensionMismatch)
        );
    }

    #[test]
    fn triangular_solves_on_small_exact_cases() {
        // L = [[2,0],[1,4]], U = Lᵀ; all results exact in binary.
        let l = [2.0f64, 1.0, 0.0, 4.0];
        let lv = MatRef::from_col_major(&l, 2, 2).unwrap();
        let mut b = [2.0f64, 9.0, 4.0, 2.0]; // two RHS
        solve_lower_in_place(lv, MatMut::from_col_major(&mut b, 2, 2).unwrap()).unwrap();
        assert_eq!(b, [1.0, 2.0, 2.0, 0.0]);
        let mut b = [4.0f64, 8.0];
        solve_lower_transpose_in_place(lv, MatMut::from_col_major(&mut b, 2, 1).unwrap()).unwrap();
        assert_eq!(b, [1.0, 2.0]); // Lᵀ·[1,2] = [2+2, 8]
        let u = [2.0f64, 0.0, 1.0, 4.0];
        let mut b = [4.0f64, 8.0];
        solve_upper_in_place(MatRef::from_col_major(&u, 2, 2).unwrap(), MatMut::from_col_major(&mut b, 2, 1).unwrap())
            .unwrap();
        assert_eq!(b, [1.0, 2.0]);
        // Row-major B (strided columns) takes the generic path.
        let mut b = [2.0f64, 4.0, 9.0, 2.0];
        solve_lower_in_place(lv, MatMut::from_row_major(&mut b, 2, 2).unwrap()).unwrap();
        assert_eq!(b, [1.0, 2.0, 2.0, 0.0]);
    }

    #[test]
    fn f32_cholesky_solve() {
        let mut a = [4.0f32, 2.0, 2.0, 5.0];
        cholesky_in_place(MatMut::from_col_major(&mut a, 2, 2).unwrap()).unwrap();
        let mut b = [6.0f32, 7.0]; // A·[1,1]
        cholesky_solve_in_place(
            MatRef::from_col_major(&a, 2, 2).unwrap(),
            MatMut::from_col_major(&mut b, 2, 1).unwrap(),
        )
        .unwrap();
        assert!((b[0] - 1.0).abs() < 1e-6 && (b[1] - 1.0).abs() < 1e-6);
    }
}
