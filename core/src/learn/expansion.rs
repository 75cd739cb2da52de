//! Kernel-expansion models `f(x) = b + Σᵢ αᵢ k̃(x, xᵢ)` over training
//! rows: their batch prediction on the host (kernel matrix by the backend's
//! gemm, then one gemv) and the folding of a linear-kernel expansion into a
//! linear model `f(x) = b + wᵀx`, so that a linear kernel always exports a
//! linear model.
//!
//! `k̃` is the kernel itself, or — for the KPC learners — the test-centred
//! kernel of 000 §6.1, `k̃(x, xᵢ) = k(x, xᵢ) − mean_j k(x, xⱼ) − k̄ᵢ + k̄`,
//! from the training kernel's column means `k̄ᵢ` and grand mean `k̄`
//! ([`crate::kernel::center_kernel`]).
//!
//! The device scores the same models from their `.rkl` bytes
//! ([`crate::format`]); the tests check both paths agree.

use super::LearnError;
use crate::backend::Backend;
use crate::kernel::{center_test_kernel_in_place, kernel_matrix, kernel_matrix_workspace_len, Kernel};
use crate::linalg::blas::gemv;
use crate::linalg::Rows;
use crate::{scratch, LinalgError, MatMut, MatRef};

/// The centring terms of a KPC model's training kernel.
#[derive(Clone, Copy, Debug)]
pub struct Centring<'a> {
    /// Column means `k̄ᵢ` of the training kernel (`n`).
    pub col_means: &'a [f64],
    /// Grand mean `k̄`.
    pub grand_mean: f64,
}

/// A kernel expansion over the rows of `basis`.
#[derive(Clone, Copy, Debug)]
pub struct Expansion<'a> {
    /// The kernel.
    pub kernel: Kernel,
    /// The basis rows (the training rows).
    pub basis: Rows<'a>,
    /// Coefficients `αᵢ` (`basis.nrows()`).
    pub alpha: &'a [f64],
    /// Offset `b`.
    pub offset: f64,
    /// Centring terms for the test-centred kernel, if any.
    pub centring: Option<Centring<'a>>,
}

scratch! {
    /// Scratch of [`Expansion::predict`].
    struct PredictScratch(nt: usize, n: usize, kw: usize) {
        /// The test kernel `nt × n`, centred in place.
        kt: nt * n,
        /// Building it.
        kwork: kw,
    }
}

impl Expansion<'_> {
    fn check(&self) -> Result<(), LearnError> {
        let n = self.basis.nrows();
        if self.alpha.len() != n || self.centring.is_some_and(|c| c.col_means.len() != n) {
            return Err(LinalgError::DimensionMismatch.into());
        }
        Ok(())
    }

    /// Scratch for [`Expansion::predict`] on `x`.
    pub fn predict_workspace_len(&self, x: &Rows<'_>) -> usize {
        PredictScratch::len(x.nrows(), self.basis.nrows(), kernel_matrix_workspace_len(x, &self.basis))
    }

    /// Scores of the rows of `x` into `out` (`x.nrows()`).
    ///
    /// # Errors
    /// Dimension mismatches (`x` must have the basis's number of features),
    /// a short workspace, non-finite kernel values.
    pub fn predict<B: Backend>(
        &self,
        backend: &mut B,
        x: &Rows<'_>,
        out: &mut [f64],
        work: &mut [f64],
    ) -> Result<(), LearnError> {
        self.check()?;
        let (nt, n) = (x.nrows(), self.basis.nrows());
        if out.len() != nt {
            return Err(LinalgError::DimensionMismatch.into());
        }
        let kw = kernel_matrix_workspace_len(x, &self.basis);
        let (ws, _) = PredictScratch::split(work, nt, n, kw)?;
        kernel_matrix(backend, &self.kernel, x, &self.basis, MatMut::from_col_major(ws.kt, nt, n)?, ws.kwork)?;
        if let Some(c) = self.centring {
            center_test_kernel_in_place(MatMut::from_col_major(ws.kt, nt, n)?, c.col_means, c.grand_mean)?;
        }
        gemv(1.0, MatRef::from_col_major(ws.kt, nt, n)?, self.alpha, 0.0, out)?;
        out.iter_mut().for_each(|v| *v += self.offset);
        Ok(())
    }

    /// Scratch for [`Expansion::fold_linear`].
    pub fn fold_linear_workspace_len(&self) -> usize {
        self.basis.nrows()
    }

    /// Folds a linear-kernel expansion into `w` (`basis.ncols()`) and
    /// returns the offset: `w = Xᵀα`, and with centring
    /// `k̃(x, xᵢ) = x·xᵢ − x·x̄ − k̄ᵢ + k̄` (`x̄` the mean training row) gives
    /// `w = Xᵀα − (Σα)·x̄`, `b' = b + (Σα)·k̄ − Σᵢ αᵢ·k̄ᵢ`.
    ///
    /// # Errors
    /// [`LearnError::Unsupported`] unless the kernel is linear; dimension
    /// mismatches; a short workspace.
    pub fn fold_linear(&self, w: &mut [f64], work: &mut [f64]) -> Result<f64, LearnError> {
        self.check()?;
        if self.kernel != Kernel::Linear {
            return Err(LearnError::Unsupported);
        }
        let (n, d) = (self.basis.nrows(), self.basis.ncols());
        if w.len() != d {
            return Err(LinalgError::DimensionMismatch.into());
        }
        dual_to_primal(&self.basis, self.alpha, w)?;
        let Some(c) = self.centring else {
            return Ok(self.offset);
        };
        if n == 0 {
            return Ok(self.offset);
        }
        // Σα·x̄ = Xᵀ(Σα/n · 1).
        let sa: f64 = self.alpha.iter().sum();
        let got = work.len();
        let ones = work.get_mut(..n).ok_or(LinalgError::WorkspaceTooSmall { needed: n, got })?;
        ones.iter_mut().for_each(|v| *v = -sa / n as f64);
        add_dual_to_primal(&self.basis, ones, w)?;
        Ok(self.offset + sa * c.grand_mean - self.alpha.iter().zip(c.col_means).map(|(a, m)| a * m).sum::<f64>())
    }
}

/// Scores `b + wᵀx` of the rows of `x` into `out`. Features of `x` beyond
/// `w.len()` have weight 0 (a model never saw them).
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] if `out.len() != x.nrows()`.
pub fn predict_linear(w: &[f64], offset: f64, x: &Rows<'_>, out: &mut [f64]) -> Result<(), LearnError> {
    if out.len() != x.nrows() {
        return Err(LinalgError::DimensionMismatch.into());
    }
    for (i, o) in out.iter_mut().enumerate() {
        *o = offset
            + match x {
                Rows::Dense(m) => (0..m.ncols().min(w.len())).map(|j| m.at(i, j) * w[j]).sum::<f64>(),
                Rows::Sparse(sp) => {
                    let (c, v) = sp.row(i);
                    c.iter().zip(v).map(|(&c, &v)| w.get(c as usize).copied().unwrap_or(0.0) * v).sum::<f64>()
                }
            };
    }
    Ok(())
}

/// `w ← Xᵀa`: the primal weights of a dual solution with the linear kernel.
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] if `a.len() != x.nrows()` or
/// `w.len() != x.ncols()`.
pub fn dual_to_primal(x: &Rows<'_>, a: &[f64], w: &mut [f64]) -> Result<(), LinalgError> {
    w.iter_mut().for_each(|v| *v = 0.0);
    add_dual_to_primal(x, a, w)
}

/// `w ← w + Xᵀa`.
fn add_dual_to_primal(x: &Rows<'_>, a: &[f64], w: &mut [f64]) -> Result<(), LinalgError> {
    if a.len() != x.nrows() || w.len() != x.ncols() {
        return Err(LinalgError::DimensionMismatch);
    }
    match x {
        Rows::Dense(m) => gemv(1.0, m.t(), a, 1.0, w),
        Rows::Sparse(sp) => {
            for (i, &ai) in a.iter().enumerate() {
                let (c, v) = sp.row(i);
                c.iter().zip(v).for_each(|(&c, &v)| w[c as usize] += ai * v);
            }
            Ok(())
        }
    }
}
