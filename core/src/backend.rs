//! The small set of heavy operations every learner is written against.
//!
//! A learner in core calls [`Backend`] for the O(n³) work — gemm, syrk,
//! symmetric eigendecomposition (full or top-k), Cholesky and solves — and
//! does everything else itself on caller buffers. Core ships a portable,
//! allocation-free implementation; the host CLI provides one on faer that
//! uses every core of the machine. Both must agree to ~1e-9 relative on the
//! same input (tested in `host-cli`).
//!
//! Conventions shared by every implementation:
//! - matrices are [`MatRef`]/[`MatMut`] views of any stride;
//! - symmetric inputs: only the lower triangle is read;
//! - `sym_eigen` returns eigenvalues in ascending order, eigenvectors as the
//!   columns of `vecs` (column `j` belongs to `vals[j]`);
//! - `sym_eigen_top_k` returns the `k = vals.len()` algebraically largest
//!   eigenvalues in descending order with their eigenvectors;
//! - non-finite input is [`LinalgError::NonFinite`], never a silent NaN.

use crate::{LinalgError, MatMut, MatRef};

/// Heavy dense linear algebra in f64, as the learners need it.
pub trait Backend {
    /// `C ← α·A·B + β·C`.
    fn gemm(
        &mut self,
        alpha: f64,
        a: MatRef<'_, f64>,
        b: MatRef<'_, f64>,
        beta: f64,
        c: MatMut<'_, f64>,
    ) -> Result<(), LinalgError>;

    /// `C ← α·A·Aᵀ + β·C`, both triangles of `C` written.
    fn syrk(&mut self, alpha: f64, a: MatRef<'_, f64>, beta: f64, c: MatMut<'_, f64>) -> Result<(), LinalgError>;

    /// All eigenpairs of the symmetric `A` (lower triangle read), ascending.
    fn sym_eigen(&mut self, a: MatRef<'_, f64>, vals: &mut [f64], vecs: MatMut<'_, f64>) -> Result<(), LinalgError>;

    /// The `k = vals.len()` largest eigenpairs of the symmetric `A`, in
    /// descending order; `vecs` is `n × k`.
    fn sym_eigen_top_k(
        &mut self,
        a: MatRef<'_, f64>,
        vals: &mut [f64],
        vecs: MatMut<'_, f64>,
    ) -> Result<(), LinalgError>;

    /// Overwrites the lower triangle of the SPD matrix `A` with its Cholesky
    /// factor `L` (`A = L·Lᵀ`) and zeroes the strict upper triangle.
    fn cholesky_in_place(&mut self, a: MatMut<'_, f64>) -> Result<(), LinalgError>;

    /// Overwrites `B` with `(L·Lᵀ)⁻¹·B` for a factor from
    /// [`Backend::cholesky_in_place`].
    fn cholesky_solve_in_place(&mut self, l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError>;

    /// Overwrites `B` with `A⁻¹·B` for a symmetric, possibly indefinite `A`
    /// (lower triangle read; `A` itself is not modified).
    fn sym_solve_in_place(&mut self, a: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError>;

    /// Overwrites `B` with `A⁻¹·B` for a general square `A`, destroying `A`
    /// (LU with partial pivoting). The default is core's workspace-free
    /// [`crate::linalg::lu::lu_solve_in_place`]; a backend may override it.
    fn lu_solve_in_place(&mut self, a: MatMut<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        crate::linalg::lu::lu_solve_in_place(a, b)
    }
}
