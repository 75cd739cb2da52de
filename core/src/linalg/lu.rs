//! General (non-symmetric) linear solve by LU factorisation with partial
//! pivoting (Golub & Van Loan, *Matrix Computations*, 4th ed., Alg. 3.4.1,
//! in the blocked right-looking form of LAPACK `dgetrf`).
//!
//! The row interchanges and the unit lower factor are applied to the
//! right-hand sides while `A` is being factored (Gaussian elimination on the
//! augmented matrix `[A | B]`), so no pivot vector has to be stored and the
//! routine needs no workspace at all.
//!
//! Accuracy: the computed solution is the exact solution of `(A + E)x = b`
//! with `‖E‖ ≤ c·n·ε·ρ·‖A‖` where ρ is the growth factor of partial pivoting
//! (small in practice).

use crate::{LinalgError, MatMut, Real};

/// Panel width of the blocked factorisation.
const NB: usize = 32;

/// Swaps rows `j` and `p` of `m` over the columns `cols`.
fn swap_rows<T: Real>(m: &mut MatMut<'_, T>, j: usize, p: usize, cols: core::ops::Range<usize>) {
    for c in cols {
        let t = m.at(j, c);
        *m.at_mut(j, c) = m.at(p, c);
        *m.at_mut(p, c) = t;
    }
}

/// The block elimination of column `c` of `$t` (a trailing column of `A`
/// itself, or a right-hand side): forward-substitute the panel rows
/// `k0..k1` with the unit lower `L11` held in `$a`, then subtract
/// `L21·U12[:, c]` from the rows `k1..n`. A macro rather than a function
/// because `$t` may be `$a` itself (a column right of the panel it reads).
macro_rules! eliminate_column {
    ($a:ident, $t:ident, $k0:expr, $k1:expr, $n:expr, $c:expr) => {{
        let (k0, k1, n, c) = ($k0, $k1, $n, $c);
        let mut u = [T::ZERO; NB];
        for (jj, j) in (k0..k1).enumerate() {
            let mut v = $t.at(j, c);
            for (tt, t) in (k0..j).enumerate() {
                v -= $a.at(j, t) * u[tt];
            }
            u[jj] = v;
            *$t.at_mut(j, c) = v;
        }
        for (jj, j) in (k0..k1).enumerate() {
            let uj = u[jj];
            if uj != T::ZERO {
                for i in k1..n {
                    let l = $a.at(i, j);
                    *$t.at_mut(i, c) -= l * uj;
                }
            }
        }
    }};
}

/// Overwrites `B` (`n × m`) with `A⁻¹·B` and `A` (`n × n`) with its LU factors
/// (row-permuted; the permutation is not kept).
///
/// # Errors
/// - [`LinalgError::DimensionMismatch`] if `A` is not square or `B` has the
///   wrong number of rows;
/// - [`LinalgError::NonFinite`] if `A` or `B` contains NaN/Inf;
/// - [`LinalgError::Singular`] if a pivot column is exactly zero (the matrix
///   is singular) or the solution overflows.
///
/// On error, the contents of `A` and `B` are unspecified.
pub fn lu_solve_in_place<T: Real>(mut a: MatMut<'_, T>, mut b: MatMut<'_, T>) -> Result<(), LinalgError> {
    let n = a.nrows();
    if a.ncols() != n || b.nrows() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    let m = b.ncols();
    if !a.rb().all_finite() || !b.rb().all_finite() {
        return Err(LinalgError::NonFinite);
    }
    let mut k0 = 0;
    while k0 < n {
        let kb = NB.min(n - k0);
        let k1 = k0 + kb;
        // Unblocked factorisation of the panel A[k0.., k0..k1], interchanges
        // applied to all trailing columns of A and to B.
        for j in k0..k1 {
            let mut p = j;
            let mut best = a.at(j, j).abs();
            for i in j + 1..n {
                let v = a.at(i, j).abs();
                if v > best {
                    best = v;
                    p = i;
                }
            }
            if best == T::ZERO {
                return Err(LinalgError::Singular { index: j });
            }
            if p != j {
                swap_rows(&mut a, j, p, k0..n);
                swap_rows(&mut b, j, p, 0..m);
            }
            let inv = T::ONE / a.at(j, j);
            for i in j + 1..n {
                *a.at_mut(i, j) *= inv;
            }
            // Rank-1 update of the rest of the panel.
            for c in j + 1..k1 {
                let u = a.at(j, c);
                if u != T::ZERO {
                    for i in j + 1..n {
                        let l = a.at(i, j);
                        *a.at_mut(i, c) -= l * u;
                    }
                }
            }
        }
        // U12 = L11⁻¹·A12 and B1 = L11⁻¹·B1 (unit lower triangular), then the
        // trailing updates A22 -= L21·U12 and B2 -= L21·B1.
        for c in k1..n {
            eliminate_column!(a, a, k0, k1, n, c);
        }
        for c in 0..m {
            eliminate_column!(a, b, k0, k1, n, c);
        }
        k0 = k1;
    }
    // Back substitution U·X = B.
    for c in 0..m {
        for j in (0..n).rev() {
            let x = b.at(j, c) / a.at(j, j);
            *b.at_mut(j, c) = x;
            if x != T::ZERO {
                for i in 0..j {
                    let u = a.at(i, j);
                    *b.at_mut(i, c) -= u * x;
                }
            }
        }
        for j in 0..n {
            if !b.at(j, c).is_finite() {
                return Err(LinalgError::Singular { index: j });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MatRef;

    fn lcg(state: &mut u64) -> f64 {
        *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((*state >> 11) as f64) / ((1u64 << 53) as f64) - 0.5
    }

    #[test]
    fn solves_random_nonsymmetric_systems() {
        for &n in &[1usize, 2, 5, 31, 32, 33, 70, 130] {
            let mut st = n as u64 + 7;
            let a0: [f64; 130 * 130] = core::array::from_fn(|_| lcg(&mut st));
            let a0 = &a0[..n * n];
            let x0: [f64; 130 * 2] = core::array::from_fn(|_| lcg(&mut st));
            let x0 = &x0[..n * 2];
            // b = A·x0
            let mut b = [0.0f64; 130 * 2];
            let av = MatRef::from_col_major(a0, n, n).unwrap();
            for c in 0..2 {
                for i in 0..n {
                    b[c * n + i] = (0..n).map(|j| av.at(i, j) * x0[c * n + j]).sum();
                }
            }
            let mut a = [0.0f64; 130 * 130];
            a[..n * n].copy_from_slice(a0);
            lu_solve_in_place(
                MatMut::from_col_major(&mut a[..n * n], n, n).unwrap(),
                MatMut::from_col_major(&mut b[..n * 2], n, 2).unwrap(),
            )
            .unwrap();
            // Random matrices of this size have condition numbers below 1e4,
            // so the forward error stays far below 1e-9.
            for i in 0..n * 2 {
                assert!((b[i] - x0[i]).abs() < 1e-9, "n={n} i={i} {} vs {}", b[i], x0[i]);
            }
        }
    }

    #[test]
    fn needs_pivoting_and_reports_singularity() {
        let mut a = [0.0f64, 1.0, 1.0, 0.0]; // [[0,1],[1,0]]
        let mut b = [2.0f64, 3.0];
        lu_solve_in_place(MatMut::from_col_major(&mut a, 2, 2).unwrap(), MatMut::from_col_major(&mut b, 2, 1).unwrap())
            .unwrap();
        assert_eq!(b, [3.0, 2.0]);
        let mut s = [1.0f64, 2.0, 2.0, 4.0];
        let mut b = [1.0f64, 1.0];
        let e = lu_solve_in_place(
            MatMut::from_col_major(&mut s, 2, 2).unwrap(),
            MatMut::from_col_major(&mut b, 2, 1).unwrap(),
        );
        assert_eq!(e, Err(LinalgError::Singular { index: 1 }));
        let mut a = [f64::NAN, 0.0, 0.0, 1.0];
        let mut b = [1.0f64, 1.0];
        let e = lu_solve_in_place(
            MatMut::from_col_major(&mut a, 2, 2).unwrap(),
            MatMut::from_col_major(&mut b, 2, 1).unwrap(),
        );
        assert_eq!(e, Err(LinalgError::NonFinite));
    }
}
