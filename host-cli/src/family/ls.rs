//! RLS and RankRLS (000 eq. 5; 004 §4.3): grid over (kernel, λ); a fold
//! fits every point ([`ranklet_core::learn::ls::fit`] picks primal or
//! dual); the closed-form leave-one-out / leave-query-out is
//! [`ranklet_core::learn::ls::holdout`].
//!
//! With a reduced basis (`--basis M`) a fit is
//! [`ranklet_core::learn::nystrom::ls_fit`] (landmarks from the rows it is
//! given — inside a CV fold, the fold's training rows, all of them if fewer
//! than `M`) and the leave-out [`ranklet_core::learn::nystrom::ls_holdout`]
//! (landmarks from all rows).

use ranklet_core::backend::Backend;
use ranklet_core::kernel::Kernel;
use ranklet_core::learn::nystrom::{self, default_pivot_tol};
use ranklet_core::learn::{ls, LearnError};
use ranklet_core::linalg::cg::CgParams;
use ranklet_core::linalg::Rows;
use ranklet_core::LinalgError;

use super::{supervision, Family, Workspace, KERNEL_WAY_OUT};
use crate::args::kernel_name;
use crate::fit::{landmark_table, Fitted, Target};
use crate::mem::try_zeros;
use crate::table::Table;

/// How to make the primal system smaller.
const PRIMAL_WAY_OUT: &str = "use fewer features (number them 1, 2, … without gaps), or --basis M with a kernel";

/// Conjugate gradient where the sparse primal system does not fit: to a
/// relative residual of 1e-10 (the weights to about κ·1e-10), at most
/// 10 000 products of `2·nnz` flops each.
fn cg_params() -> CgParams {
    CgParams::new(10_000, 1e-10)
}

/// Whether the `d × d` system of the sparse primal form
/// ([`ls::ls_primal_sparse`]) fits in the memory available; where not, the
/// fit solves it by conjugate gradient ([`ls::ls_primal_sparse_cg`]).
fn sparse_system_fits(n: usize, d: usize) -> bool {
    d.checked_mul(d).is_some_and(|dd| dd <= usize::MAX >> 8)
        && crate::mem::check("", Some(ls::ls_primal_sparse_workspace_len(n, d)), 8, "").is_ok()
}

/// One grid point of RLS / RankRLS.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LsPoint {
    /// The kernel.
    pub kernel: Kernel,
    /// Ridge λ (> 0 unless the kernel is linear).
    pub lambda: f64,
}

/// RLS (`ranker = false`) or RankRLS over a grid of kernels × λ.
#[derive(Clone, Debug)]
pub struct LeastSquares {
    /// RankRLS (preference graph) rather than RLS (identity).
    pub ranker: bool,
    /// Kernels of the grid.
    pub kernels: Vec<Kernel>,
    /// λ of the grid.
    pub lambdas: Vec<f64>,
    /// At most this many landmark rows (`--basis`): the reduced-basis
    /// (Nyström) learner; `None` for the full learner.
    pub basis: Option<usize>,
    /// Set by a fit that solved its primal system by conjugate gradient
    /// (it did not fit in memory): what the caller may tell the user.
    pub cg_note: std::sync::OnceLock<String>,
}

impl LeastSquares {
    /// Whether the fit of `p` on `table` takes the primal (feature-space)
    /// form: core's [`ls::Form::choose`].
    pub fn use_primal(&self, p: &LsPoint, table: &Table) -> bool {
        self.basis.is_none() && table.rows().is_ok_and(|x| ls::Form::choose(&p.kernel, &x) == ls::Form::Primal)
    }
}

impl Family for LeastSquares {
    type Point = LsPoint;

    fn name(&self) -> &'static str {
        if self.ranker {
            "rankrls"
        } else {
            "rls"
        }
    }

    fn is_ranker(&self) -> bool {
        self.ranker
    }

    fn points(&self) -> Vec<LsPoint> {
        self.kernels
            .iter()
            .flat_map(|&kernel| self.lambdas.iter().map(move |&lambda| LsPoint { kernel, lambda }))
            .collect()
    }

    fn columns(&self) -> &'static [&'static str] {
        &["kernel", "lambda"]
    }

    fn values(&self, p: &LsPoint) -> Vec<String> {
        vec![kernel_name(&p.kernel), p.lambda.to_string()]
    }

    fn fit<B: Backend>(
        &self,
        backend: &mut B,
        p: &LsPoint,
        table: &Table,
        target: &Target<'_>,
    ) -> Result<Fitted, LearnError> {
        let (g, x) = supervision(self.ranker, table, target)?;
        if let Some(m) = self.basis {
            let (n, m) = (table.n(), m.min(table.n()));
            let (mut piv, mut alpha) = (vec![0; m], vec![0.0; m]);
            let mut work = try_zeros(nystrom::ls_fit_workspace_len(n, m))?;
            let tol = default_pivot_tol(n);
            let data = nystrom::Training { kernel: &p.kernel, rows: &x, graph: &g, s: &table.labels };
            let r = nystrom::ls_fit(backend, &data, p.lambda, tol, &mut piv, &mut alpha, &mut work)?;
            if r == 0 {
                return Err(LinalgError::Singular { index: 0 }.into());
            }
            alpha.truncate(r);
            return Fitted::from_expansion(p.kernel, landmark_table(table, &piv[..r]), alpha, 0.0, None);
        }
        let form = ls::Form::choose(&p.kernel, &x);
        if let (ls::Form::Primal, Rows::Sparse(csr)) = (form, x) {
            if !sparse_system_fits(table.n(), table.d()) {
                let mut w = try_zeros(table.d())?;
                let mut work = try_zeros(ls::ls_primal_sparse_cg_workspace_len(table.n(), table.d()))?;
                let info = ls::ls_primal_sparse_cg(csr, &g, &table.labels, p.lambda, &cg_params(), &mut w, &mut work)?;
                let _ = self.cg_note.set(format!(
                    "the {} × {} primal system does not fit in memory: solved by conjugate gradient ({} iterations, \
                     relative residual {:.1e})",
                    table.d(),
                    table.d(),
                    info.iterations,
                    info.rel_residual
                ));
                return Ok(Fitted::Linear { w, offset: 0.0 });
            }
        }
        let mut coef = try_zeros(form.coef_len(&x))?;
        let mut work = try_zeros(ls::fit_workspace_len(&p.kernel, &x))?;
        let data = nystrom::Training { kernel: &p.kernel, rows: &x, graph: &g, s: &table.labels };
        ls::fit(backend, &data, p.lambda, &mut coef, &mut work)?;
        match form {
            ls::Form::Primal => Ok(Fitted::Linear { w: coef, offset: 0.0 }),
            ls::Form::Dual => Fitted::from_expansion(p.kernel, table.clone(), coef, 0.0, None),
        }
    }

    fn fold<B: Backend>(
        &self,
        backend: &mut B,
        train: &Table,
        val: &Table,
        target: &Target<'_>,
    ) -> Vec<Result<Vec<f64>, String>> {
        self.points()
            .iter()
            .map(|p| {
                let model = self.fit(backend, p, train, target).map_err(|e| e.to_string())?;
                model.predict(backend, val).map_err(|e| e.to_string())
            })
            .collect()
    }

    fn holdout<B: Backend>(
        &self,
        backend: &mut B,
        p: &LsPoint,
        table: &Table,
        target: &Target<'_>,
    ) -> Option<Result<Vec<f64>, LearnError>> {
        let run = |backend: &mut B| {
            let (g, x) = supervision(self.ranker, table, target)?;
            let mut preds = vec![0.0; table.n()];
            if let Some(m) = self.basis {
                let (n, m) = (table.n(), m.min(table.n()));
                let mut piv = vec![0; m];
                let mut work = try_zeros(nystrom::ls_holdout_workspace_len(n, m, &g))?;
                let tol = default_pivot_tol(n);
                let data = nystrom::Training { kernel: &p.kernel, rows: &x, graph: &g, s: &table.labels };
                nystrom::ls_holdout(backend, &data, p.lambda, tol, &mut piv, &mut preds, &mut work)?;
                return Ok(preds);
            }
            let mut work = try_zeros(ls::holdout_workspace_len(&p.kernel, &x, &g))?;
            let data = nystrom::Training { kernel: &p.kernel, rows: &x, graph: &g, s: &table.labels };
            ls::holdout(backend, &data, p.lambda, &mut preds, &mut work)?;
            Ok(preds)
        };
        Some(run(backend))
    }

    fn workspace(&self, p: &LsPoint, table: &Table, target: &Target<'_>, holdout: bool) -> Workspace {
        let (n, d) = (table.n(), table.d());
        let Ok((g, x)) = supervision(self.ranker, table, target) else {
            return Workspace::new("the data", n, d, "", || 0);
        };
        if let Some(m) = self.basis {
            let m = m.min(n);
            return Workspace::new("the reduced-basis features", n, m, "use a smaller --basis M", || {
                let h = if holdout { nystrom::ls_holdout_workspace_len(n, m, &g) } else { 0 };
                nystrom::ls_fit_workspace_len(n, m).max(h)
            });
        }
        let exact = || {
            let h = if holdout { ls::holdout_workspace_len(&p.kernel, &x, &g) } else { 0 };
            ls::fit_workspace_len(&p.kernel, &x).max(h)
        };
        let primal = ls::Form::choose(&p.kernel, &x) == ls::Form::Primal;
        if primal && matches!(x, Rows::Sparse(_)) && !holdout && !sparse_system_fits(n, d) {
            return Workspace::new("the conjugate-gradient vectors", n + d, 4, PRIMAL_WAY_OUT, || {
                ls::ls_primal_sparse_cg_workspace_len(n, d)
            });
        }
        if primal && !(holdout && ls::holdout_form(&p.kernel, &x) == ls::Form::Dual) {
            Workspace::new("the primal system XᵀLX over the features", d, d, PRIMAL_WAY_OUT, exact)
        } else {
            Workspace::new("the kernel matrix over the training rows", n, n, KERNEL_WAY_OUT, exact)
        }
    }

    fn plot_point(&self, p: &LsPoint) -> (f64, String) {
        (p.lambda, kernel_name(&p.kernel))
    }

    fn plot_axis(&self) -> (&'static str, bool) {
        ("λ (log scale)", true)
    }
}
