//! Fixed-capacity symmetric eigensolver for devices: the capacity is a const
//! generic, every buffer lives inside the value, nothing is allocated and no
//! caller workspace is needed.
//!
//! [`SymEigen::compute`] runs Householder tridiagonalisation + implicit QL
//! with Wilkinson shifts (the algorithm of [`super::tridiag::sym_eigen`])
//! on compact buffers sized for the actual order `n`, not the capacity `N`:
//! one pass over the input copies the lower triangle while checking
//! finiteness and finding the scale; the reduction and Q run on an `n × n`
//! block; each QL rotation is applied at once to two adjacent contiguous
//! columns of the eigenvectors, which are the value's own storage (no copy
//! out). [`SymEigen::compute_jacobi`] runs cyclic Jacobi instead
//! ([`super::jacobi`]), several times slower but with high *relative*
//! accuracy for graded positive definite matrices.
//!
//! # Memory
//!
//! `size_of::<SymEigen<T, N>>()` is `(2N² + 7N)·size_of::<T>() +
//! size_of::<usize>()` bytes, rounded up to the alignment of `T`/`usize`:
//! eigenvalues (N), eigenvectors (N²), the working matrix (N²) and six
//! vectors of length N (off-diagonal, reflector factors, four for the
//! reduction). For example `SymEigen<f32, 16>` takes 2 504 bytes and
//! `SymEigen<f32, 64>` 34 568 bytes on a 64-bit target. Place large instances
//! in a `static` rather than on a small device stack.
//!
//! # Accuracy
//!
//! Same as the underlying solvers: ‖A·V − V·Λ‖ ≤ c·n·ε·‖A‖. In `f32`, for
//! N ≤ 64 the eigenvalues are within 1e-5·‖A‖₂ of an f64 reference on the
//! same input (tested; measured ≤ 1.6e-6·‖A‖₂, about as accurate as nalgebra's
//! `SymmetricEigen` on the same matrices: `core/tests/nalgebra_reference.rs`,
//! `docs/performance.md`).

use super::jacobi::jacobi_in_place;
use super::tridiag::{form_q, pow2_scale, ql_implicit, tridiagonalize, Direct};
use super::EigenParams;
use crate::{LinalgError, MatRef, Real};

/// Orders up to which [`SymEigen::compute_jacobi`] is the recommended choice
/// when relative accuracy of small eigenvalues matters: Jacobi costs about
/// 4n³ flops per sweep and 6–10 sweeps. [`SymEigen::compute`] uses
/// Householder + QL at every order (it used Jacobi up to this order before,
/// at 2–6× the time of nalgebra's `SymmetricEigen`).
pub const JACOBI_MAX_N: usize = 16;

/// Symmetric eigendecomposition of at most `N × N` matrices, with all storage
/// inside the value.
///
/// `N = 0` is rejected at compile time:
///
/// ```compile_fail
/// let s = ranklet_core::eigen::fixed::SymEigen::<f32, 0>::new();
/// ```
///
/// # Examples
///
/// ```
/// use ranklet_core::eigen::{fixed::SymEigen, EigenParams};
/// let mut s = SymEigen::<f32, 4>::new();
/// // [[2, 1], [1, 2]] in a capacity-4 solver.
/// s.compute(&[2.0, 1.0, 1.0, 2.0], 2, &EigenParams::default()).unwrap();
/// assert_eq!(s.values().len(), 2);
/// assert!((s.values()[1] - 3.0).abs() < 1e-6);
/// let v = s.vector(1).unwrap();
/// assert!((v[0].abs() - 0.5f32.sqrt()).abs() < 1e-6);
/// ```
#[derive(Clone, Debug)]
pub struct SymEigen<T, const N: usize> {
    n: usize,
    vals: [T; N],
    /// Eigenvectors, compact: column `j` is `flat[j·n .. (j+1)·n]` of the
    /// flattened array for the current order `n`.
    vecs: [[T; N]; N],
    /// The working matrix (compact, leading dimension `n`).
    work: [[T; N]; N],
    /// Off-diagonal, reflector factors, and 4 vectors for the reduction.
    aux: [[T; N]; 6],
}

impl<T: Real, const N: usize> Default for SymEigen<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Real, const N: usize> SymEigen<T, N> {
    /// The capacity `N`.
    pub const CAPACITY: usize = N;

    /// An empty solver (no decomposition yet). Fails to compile for `N = 0`.
    pub fn new() -> Self {
        const { assert!(N > 0, "SymEigen capacity N must be positive") };
        Self { n: 0, vals: [T::ZERO; N], vecs: [[T::ZERO; N]; N], work: [[T::ZERO; N]; N], aux: [[T::ZERO; N]; 6] }
    }

    fn check(&mut self, a: &[T], n: usize) -> Result<(), LinalgError> {
        self.n = 0;
        if n > N {
            return Err(LinalgError::CapacityExceeded { capacity: N, requested: n });
        }
        if n.checked_mul(n) != Some(a.len()) {
            return Err(LinalgError::DimensionMismatch);
        }
        Ok(())
    }

    /// Decomposes the symmetric `n × n` matrix stored column-major in `a`
    /// (`a.len() == n²`; only the lower triangle is read) by Householder
    /// tridiagonalisation and implicit QL. On success, [`Self::values`] holds
    /// the `n` eigenvalues in ascending order and [`Self::vector`]`(j)` the
    /// unit eigenvector of `values()[j]`.
    ///
    /// Work is O(n³) in the actual order `n`, whatever the capacity `N`.
    ///
    /// # Errors
    ///
    /// - [`LinalgError::CapacityExceeded`] if `n > N`;
    /// - [`LinalgError::DimensionMismatch`] if `a.len() != n²`;
    /// - [`LinalgError::NonFinite`], [`LinalgError::NoConvergence`] as for
    ///   [`super::tridiag::sym_eigen`].
    ///
    /// On error the previous decomposition is discarded (`dim() == 0`).
    pub fn compute(&mut self, a: &[T], n: usize, params: &EigenParams) -> Result<(), LinalgError> {
        self.check(a, n)?;
        if n == 0 {
            return Ok(());
        }
        let nn = n * n;
        let w = &mut self.work.as_flattened_mut()[..nn];
        let q = &mut self.vecs.as_flattened_mut()[..nn];
        let vals = &mut self.vals[..n];
        let amax = super::copy_lower_max_abs(a, w, n)?;
        if amax == T::ZERO {
            vals.iter_mut().for_each(|v| *v = T::ZERO);
            q.iter_mut().for_each(|v| *v = T::ZERO);
            q.iter_mut().step_by(n + 1).for_each(|v| *v = T::ONE);
            self.n = n;
            return Ok(());
        }
        // Scale by a power of two (exact) so that nothing overflows or
        // underflows in the reduction.
        let scale = pow2_scale(amax);
        for (j, col) in w.chunks_exact_mut(n).enumerate() {
            col[j..].iter_mut().for_each(|x| *x /= scale);
        }
        let [e, tau, sc @ ..] = &mut self.aux;
        let sc = sc.as_flattened_mut();
        tridiagonalize(w, n, vals, e, tau, sc);
        form_q(w, tau, q, n);
        // QL converges fastest, and most accurately, when the large entries
        // of the tridiagonal sit at its bottom (EISPACK's advice; LAPACK
        // `dsteqr` switches to QR per block for the other case). For a
        // matrix graded the other way, run QL on P·T·P (P the reversal):
        // its eigenvectors are P·Z, and (Q·P)·(P·Z) = Q·Z, so reversing
        // the columns of Q keeps the product right.
        if n > 2 && vals[0].abs() > vals[n - 1].abs() {
            vals.reverse();
            e[..n - 1].reverse();
            for j in 0..n / 2 {
                let (lo, hi) = q.split_at_mut((n - 1 - j) * n);
                lo[j * n..(j + 1) * n].swap_with_slice(&mut hi[..n]);
            }
        }
        ql_implicit(vals, e, &mut Direct { q: &mut *q, n }, n, params)?;
        super::sort_and_unscale(vals, Some(q), n, scale)?;
        self.n = n;
        Ok(())
    }

    /// Like [`Self::compute`], by cyclic Jacobi ([`super::jacobi`]): several
    /// times slower, but for a positive definite `A = D·H·D` (D diagonal)
    /// every eigenvalue, however small, gets a relative error of about
    /// ε·κ(H) instead of ε·‖A‖/|λ|. Recommended up to [`JACOBI_MAX_N`].
    ///
    /// # Errors
    ///
    /// As [`Self::compute`]; `params.max_iter` counts sweeps.
    pub fn compute_jacobi(&mut self, a: &[T], n: usize, params: &EigenParams) -> Result<(), LinalgError> {
        self.check(a, n)?;
        if n == 0 {
            return Ok(());
        }
        let nn = n * n;
        let a = MatRef::from_col_major(a, n, n)?;
        jacobi_in_place(
            a,
            &mut self.vals[..n],
            &mut self.work.as_flattened_mut()[..nn],
            &mut self.vecs.as_flattened_mut()[..nn],
            params,
        )?;
        self.n = n;
        Ok(())
    }

    /// Order of the last successful decomposition (0 before any).
    pub fn dim(&self) -> usize {
        self.n
    }

    /// Eigenvalues of the last decomposition, ascending.
    pub fn values(&self) -> &[T] {
        &self.vals[..self.n]
    }

    /// Unit eigenvector `j` (length `n`), or `None` if `j ≥ n`.
    pub fn vector(&self, j: usize) -> Option<&[T]> {
        if j < self.n {
            let n = self.n;
            self.vecs.as_flattened().get(j * n..(j + 1) * n)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::eigen::tridiag::{sym_eigen, sym_eigen_workspace_len};
    use core::mem::{align_of, size_of};
    use std::vec;
    use std::vec::Vec;

    fn expected_size<T, const N: usize>() -> usize {
        let raw = (2 * N * N + 7 * N) * size_of::<T>() + size_of::<usize>();
        let al = align_of::<T>().max(align_of::<usize>());
        raw.div_ceil(al) * al
    }

    #[test]
    fn stack_use_matches_the_documented_formula() {
        assert_eq!(size_of::<SymEigen<f32, 16>>(), expected_size::<f32, 16>());
        assert_eq!(size_of::<SymEigen<f32, 64>>(), expected_size::<f32, 64>());
        assert_eq!(size_of::<SymEigen<f64, 7>>(), expected_size::<f64, 7>());
        assert_eq!(size_of::<SymEigen<f32, 1>>(), expected_size::<f32, 1>());
        #[cfg(target_pointer_width = "64")]
        {
            assert_eq!(size_of::<SymEigen<f32, 16>>(), 2504);
            assert_eq!(size_of::<SymEigen<f32, 64>>(), 34568);
        }
    }

    fn random_sym(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        let mut a = vec![0.0; n * n];
        for j in 0..n {
            for i in j..n {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let x = ((s >> 11) as f64) / ((1u64 << 53) as f64) * 2.0 - 1.0;
                a[i + j * n] = x;
                a[j + i * n] = x;
            }
        }
        a
    }

    fn f32_vs_f64<const N: usize>(n: usize) -> f64 {
        let a64 = random_sym(n, 0x1234_5678 + n as u64);
        let a32: Vec<f32> = a64.iter().map(|&x| x as f32).collect();
        let a64r: Vec<f64> = a32.iter().map(|&x| x as f64).collect();
        let mut s = SymEigen::<f32, N>::new();
        s.compute(&a32, n, &EigenParams::default()).unwrap();
        let mut vals = vec![0.0; n];
        let mut work = vec![0.0; sym_eigen_workspace_len(n)];
        sym_eigen(MatRef::from_col_major(&a64r, n, n).unwrap(), &mut vals, None, &mut work, &EigenParams::default())
            .unwrap();
        let norm = vals[0].abs().max(vals[n - 1].abs());
        let mut worst = 0.0f64;
        for (x, y) in s.values().iter().zip(&vals) {
            worst = worst.max((*x as f64 - y).abs() / norm);
        }
        // Eigenvectors are unit and satisfy A·v ≈ λ·v in f32.
        for j in 0..n {
            let v = s.vector(j).unwrap();
            let nv: f32 = v.iter().map(|x| x * x).sum();
            assert!((nv - 1.0).abs() < 1e-5);
        }
        worst
    }

    #[test]
    fn f32_eigenvalues_within_1e5_of_f64() {
        let mut worst = 0.0f64;
        worst = worst.max(f32_vs_f64::<4>(4));
        worst = worst.max(f32_vs_f64::<16>(16));
        worst = worst.max(f32_vs_f64::<16>(9));
        worst = worst.max(f32_vs_f64::<32>(17));
        worst = worst.max(f32_vs_f64::<32>(32));
        worst = worst.max(f32_vs_f64::<64>(64));
        worst = worst.max(f32_vs_f64::<64>(50));
        std::println!("f32 fixed: worst |λ32 − λ64| / ‖A‖ = {worst:e}");
        assert!(worst < 1e-5, "{worst}");
    }

    #[test]
    fn capacity_and_shape_errors() {
        let mut s = SymEigen::<f32, 2>::new();
        let a = [0.0f32; 9];
        assert_eq!(
            s.compute(&a, 3, &EigenParams::default()),
            Err(LinalgError::CapacityExceeded { capacity: 2, requested: 3 })
        );
        assert_eq!(s.compute(&a[..3], 2, &EigenParams::default()), Err(LinalgError::DimensionMismatch));
        assert_eq!(s.compute(&[f32::NAN], 1, &EigenParams::default()), Err(LinalgError::NonFinite));
        assert_eq!(s.dim(), 0);
        s.compute(&[5.0], 1, &EigenParams::default()).unwrap();
        assert_eq!(s.values(), &[5.0]);
        assert_eq!(s.vector(0), Some(&[1.0f32][..]));
        assert_eq!(s.vector(1), None);
        s.compute(&[], 0, &EigenParams::default()).unwrap();
        assert_eq!(s.values().len(), 0);
    }

    fn residual_orth<const N: usize>(s: &SymEigen<f64, N>, a: &[f64], n: usize) -> (f64, f64) {
        let anorm = a.iter().map(|x| x * x).sum::<f64>().sqrt();
        let (mut res, mut orth) = (0.0f64, 0.0f64);
        for j in 0..n {
            let v = s.vector(j).unwrap();
            for i in 0..n {
                let av: f64 = (0..n).map(|p| a[i + p * n] * v[p]).sum();
                res = res.max((av - s.values()[j] * v[i]).abs() / anorm);
                let d: f64 = s.vector(i).unwrap().iter().zip(v).map(|(x, y)| x * y).sum();
                orth = orth.max((d - if i == j { 1.0 } else { 0.0 }).abs());
            }
        }
        (res, orth)
    }

    #[test]
    fn graded_either_way_and_smaller_than_capacity() {
        // D·H·D with D from 1 down to 1e-8 and the reverse: the first takes
        // the reversed-QL path, the second plain QL; both in a capacity
        // larger than n.
        let n = 20;
        let h = random_sym(n, 77);
        for up in [false, true] {
            let d: Vec<f64> =
                (0..n).map(|i| 10f64.powf(-8.0 * if up { n - 1 - i } else { i } as f64 / (n - 1) as f64)).collect();
            let a: Vec<f64> = (0..n * n).map(|k| d[k % n] * h[k] * d[k / n]).collect();
            let mut s = SymEigen::<f64, 32>::new();
            s.compute(&a, n, &EigenParams::default()).unwrap();
            assert_eq!(s.dim(), n);
            assert!(s.values().windows(2).all(|w| w[0] <= w[1]));
            let (res, orth) = residual_orth(&s, &a, n);
            assert!(res < 1e-14 && orth < 1e-13, "up={up} res={res:e} orth={orth:e}");
            // Jacobi on the same matrix agrees to ‖A‖·ε·n.
            let mut j = SymEigen::<f64, 32>::new();
            j.compute_jacobi(&a, n, &EigenParams::default()).unwrap();
            let an = s.values()[0].abs().max(s.values()[n - 1].abs());
            for (x, y) in s.values().iter().zip(j.values()) {
                assert!((x - y).abs() <= 1e-14 * an * n as f64, "{x} vs {y}");
            }
            let (res, orth) = residual_orth(&j, &a, n);
            assert!(res < 1e-14 && orth < 1e-13, "jacobi up={up} res={res:e} orth={orth:e}");
        }
    }

    #[test]
    fn compute_jacobi_keeps_relative_accuracy() {
        // As in jacobi.rs: A = D·H·D with D spanning 1..1e-8; the product of
        // the eigenvalues equals det(A), known exactly.
        let n = 3;
        let d = [1.0, 1e-4, 1e-8];
        let h = [1.0, 0.3, 0.1, 0.3, 1.0, 0.2, 0.1, 0.2, 1.0];
        let a: Vec<f64> = (0..9).map(|k| d[k % n] * h[k] * d[k / n]).collect();
        let mut s = SymEigen::<f64, 8>::new();
        s.compute_jacobi(&a, n, &EigenParams::default()).unwrap();
        let det_h = 1.0 * (1.0 - 0.04) - 0.3 * (0.3 - 0.02) + 0.1 * (0.06 - 0.1);
        let det_a = det_h * (d[0] * d[1] * d[2]) * (d[0] * d[1] * d[2]);
        let prod: f64 = s.values().iter().product();
        assert!(((prod - det_a) / det_a).abs() < 1e-12, "{prod} vs {det_a}");
        assert_eq!(
            s.compute_jacobi(&a, 9, &EigenParams::default()),
            Err(LinalgError::CapacityExceeded { capacity: 8, requested: 9 })
        );
        assert_eq!(s.dim(), 0);
        assert_eq!(s.compute_jacobi(&[f64::NAN], 1, &EigenParams::default()), Err(LinalgError::NonFinite));
    }
}
