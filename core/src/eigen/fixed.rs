//! Fixed-capacity symmetric eigensolver for devices: the capacity is a const
//! generic, every buffer lives inside the value, nothing is allocated and no
//! caller workspace is needed.
//!
//! [`SymEigen<T, N>`] is a thin wrapper: it forwards to
//! [`super::jacobi::jacobi_eigen`] for `n ≤` [`JACOBI_MAX_N`] (high relative
//! accuracy, cheap at that size) and to [`super::tridiag::sym_eigen`]
//! otherwise, with its internal arrays as the workspace.
//!
//! # Memory
//!
//! `size_of::<SymEigen<T, N>>()` is `(4N² + N)·size_of::<T>() +
//! size_of::<usize>()` bytes, rounded up to the alignment of `T`/`usize`:
//! eigenvalues (N), eigenvectors (N²) and a 3N² workspace. For example
//! `SymEigen<f32, 16>` takes 4 168 bytes and `SymEigen<f32, 64>` 65 800 bytes
//! on a 64-bit target. Place large instances in a `static` rather than on a
//! small device stack.
//!
//! # Accuracy
//!
//! Same as the underlying solvers: ‖A·V − V·Λ‖ ≤ c·n·ε·‖A‖. In `f32`, for
//! N ≤ 64 the eigenvalues are within 1e-5·‖A‖₂ of an f64 reference on the
//! same input (tested).

use super::jacobi::jacobi_eigen;
use super::tridiag::sym_eigen;
use super::EigenParams;
use crate::{LinalgError, MatMut, MatRef, Real};

/// Orders `n ≤ JACOBI_MAX_N` use cyclic Jacobi; larger ones Householder + QL.
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
    vecs: [[T; N]; N],
    work: [[[T; N]; N]; 3],
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
        Self { n: 0, vals: [T::ZERO; N], vecs: [[T::ZERO; N]; N], work: [[[T::ZERO; N]; N]; 3] }
    }

    /// Decomposes the symmetric `n × n` matrix stored column-major in `a`
    /// (`a.len() == n²`; only the lower triangle is read). On success,
    /// [`Self::values`] holds the `n` eigenvalues in ascending order and
    /// [`Self::vector`]`(j)` the unit eigenvector of `values()[j]`.
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
        self.n = 0;
        if n > N {
            return Err(LinalgError::CapacityExceeded { capacity: N, requested: n });
        }
        if n.checked_mul(n) != Some(a.len()) {
            return Err(LinalgError::DimensionMismatch);
        }
        let a = MatRef::from_col_major(a, n, n)?;
        let vecs = MatMut::new(self.vecs.as_flattened_mut(), n, n, 1, N)?;
        let work = self.work.as_flattened_mut().as_flattened_mut();
        let vals = &mut self.vals[..n];
        if n <= JACOBI_MAX_N {
            jacobi_eigen(a, vals, Some(vecs), work, params)?;
        } else {
            sym_eigen(a, vals, Some(vecs), work, params)?;
        }
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
            Some(&self.vecs[j][..self.n])
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::eigen::tridiag::sym_eigen_workspace_len;
    use core::mem::{align_of, size_of};
    use std::vec;
    use std::vec::Vec;

    fn expected_size<T, const N: usize>() -> usize {
        let raw = (4 * N * N + N) * size_of::<T>() + size_of::<usize>();
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
            assert_eq!(size_of::<SymEigen<f32, 16>>(), 4168);
            assert_eq!(size_of::<SymEigen<f32, 64>>(), 65800);
        }
        // The internal workspace is enough for either solver at every n ≤ N.
        for nn in [17usize, 20, 64, 200] {
            assert!(sym_eigen_workspace_len(nn) <= 3 * nn * nn);
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
}
