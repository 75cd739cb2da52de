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

use crate::eigen::topk::{sym_eigen_top_k, top_k_workspace_len, DenseSymOp};
use crate::eigen::tridiag::{sym_eigen, sym_eigen_workspace_len};
use crate::eigen::EigenParams;
use crate::linalg::{blas, chol, ldlt};

/// Core's own backend: every operation on the caller's workspace, no heap,
/// single-threaded. It is what a device (or the FFI) trains with, and the
/// reference the host's faer backend is tested against.
#[derive(Debug)]
pub struct Portable<'w> {
    work: &'w mut [f64],
    params: EigenParams,
}

impl<'w> Portable<'w> {
    /// A backend that takes its scratch from `work`; see
    /// [`Portable::workspace_len`] for how much.
    pub fn new(work: &'w mut [f64]) -> Self {
        Self { work, params: EigenParams::default() }
    }

    /// Replaces the eigensolver tuning.
    pub fn with_params(mut self, params: EigenParams) -> Self {
        self.params = params;
        self
    }

    /// Elements of workspace that suffice for every operation on matrices
    /// of order up to `n` (any `k ≤ n` for top-k; Cholesky, LU and gemm need
    /// none, the symmetric indefinite solve a copy of `A`).
    pub fn workspace_len(n: usize) -> usize {
        let topk = (1..=n).map(|k| top_k_workspace_len(n, k)).max().unwrap_or(0);
        sym_eigen_workspace_len(n).max(topk).max(ldlt::sym_indefinite_solve_workspace_len(n))
    }
}

impl Backend for Portable<'_> {
    fn gemm(
        &mut self,
        alpha: f64,
        a: MatRef<'_, f64>,
        b: MatRef<'_, f64>,
        beta: f64,
        c: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        blas::gemm(alpha, a, b, beta, c)
    }

    fn syrk(&mut self, alpha: f64, a: MatRef<'_, f64>, beta: f64, c: MatMut<'_, f64>) -> Result<(), LinalgError> {
        blas::syrk(alpha, a, beta, c)
    }

    fn sym_eigen(&mut self, a: MatRef<'_, f64>, vals: &mut [f64], vecs: MatMut<'_, f64>) -> Result<(), LinalgError> {
        sym_eigen(a, vals, Some(vecs), self.work, &self.params)
    }

    fn sym_eigen_top_k(
        &mut self,
        a: MatRef<'_, f64>,
        vals: &mut [f64],
        vecs: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        // The top-k solver reads both triangles; mirror-free callers pass a
        // full symmetric matrix (every learner does).
        let mut op = DenseSymOp::new(a)?;
        sym_eigen_top_k(&mut op, vals, vecs, self.work, &self.params).map(|_| ())
    }

    fn cholesky_in_place(&mut self, a: MatMut<'_, f64>) -> Result<(), LinalgError> {
        chol::cholesky_in_place(a)
    }

    fn cholesky_solve_in_place(&mut self, l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        chol::cholesky_solve_in_place(l, b)
    }

    fn sym_solve_in_place(&mut self, a: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        ldlt::sym_indefinite_solve(a, b, self.work)
    }
}
