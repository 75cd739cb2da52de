//! KPCR and KPCRank (000 §3–4.2): grid over (kernel, λ, p); a fold is one
//! core call per kernel ([`ranklet_core::learn::kpc::cv_fold`]: one kernel
//! matrix and one decomposition for every (λ, p)); a fit is
//! [`ranklet_core::learn::kpc::fit`]. No closed-form leave-out.
//!
//! With a reduced basis (`--basis M`) the fit is
//! [`ranklet_core::learn::nystrom::kpc_fit`] and a fold
//! [`ranklet_core::learn::nystrom::kpc_cv_fold`]: the landmarks are chosen
//! inside each fold from the fold's training rows (all of them if the fold
//! has fewer than `M`).

use ranklet_core::backend::Backend;
use ranklet_core::kernel::Kernel;
use ranklet_core::learn::nystrom::{self, default_pivot_tol};
use ranklet_core::learn::{kpc, LearnError};
use ranklet_core::LinalgError;

use super::{supervision, Family, Workspace, KERNEL_WAY_OUT};
use crate::args::kernel_name;
use crate::fit::{landmark_table, Fitted, Target};
use crate::mem::try_zeros;
use crate::table::Table;

/// One grid point of KPCR / KPCRank.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KpcPoint {
    /// The kernel.
    pub kernel: Kernel,
    /// Ridge λ ≥ 0 on the components' weights.
    pub lambda: f64,
    /// Number of principal components p ≥ 1.
    pub components: usize,
}

/// KPCR (`ranker = false`) or KPCRank over kernels × λ × p.
#[derive(Clone, Debug)]
pub struct Kpc {
    /// KPCRank (preference graph) rather than KPCR (identity).
    pub ranker: bool,
    /// Kernels of the grid.
    pub kernels: Vec<Kernel>,
    /// λ of the grid.
    pub lambdas: Vec<f64>,
    /// Numbers of components of the grid.
    pub components: Vec<usize>,
    /// At most this many landmark rows (`--basis`): the reduced-basis
    /// (Nyström) learner; `None` for the full learner.
    pub basis: Option<usize>,
}

impl Family for Kpc {
    type Point = KpcPoint;

    fn name(&self) -> &'static str {
        if self.ranker {
            "kpcrank"
        } else {
            "kpcr"
        }
    }

    fn is_ranker(&self) -> bool {
        self.ranker
    }

    /// Kernel-major, then λ, then p: the order of [`kpc::cv_fold`]'s output
    /// within one kernel.
    fn points(&self) -> Vec<KpcPoint> {
        let mut v = Vec::with_capacity(self.kernels.len() * self.lambdas.len() * self.components.len());
        for &kernel in &self.kernels {
            for &lambda in &self.lambdas {
                for &components in &self.components {
                    v.push(KpcPoint { kernel, lambda, components });
                }
            }
        }
        v
    }

    fn columns(&self) -> &'static [&'static str] {
        &["kernel", "lambda", "components"]
    }

    fn values(&self, p: &KpcPoint) -> Vec<String> {
        vec![kernel_name(&p.kernel), p.lambda.to_string(), p.components.to_string()]
    }

    fn fit<B: Backend>(
        &self,
        backend: &mut B,
        p: &KpcPoint,
        table: &Table,
        target: &Target<'_>,
    ) -> Result<Fitted, LearnError> {
        let (g, x) = supervision(self.ranker, table, target)?;
        let n = table.n();
        if let Some(m) = self.basis {
            let m = m.min(n);
            let (mut piv, mut alpha) = (vec![0; m], vec![0.0; m]);
            let mut work = try_zeros(nystrom::kpc_fit_workspace_len(n, m, p.components))?;
            let data = nystrom::Training { kernel: &p.kernel, rows: &x, graph: &g, s: &table.labels };
            let (r, offset) = nystrom::kpc_fit(
                backend,
                &data,
                p.lambda,
                p.components,
                default_pivot_tol(n),
                &mut piv,
                &mut alpha,
                &mut work,
            )?;
            alpha.truncate(r);
            return Fitted::from_expansion(p.kernel, landmark_table(table, &piv[..r]), alpha, offset, None);
        }
        let (mut alpha, mut cm) = (vec![0.0; n], vec![0.0; n]);
        // The n × n kernel matrix lives here: on huge pages (crate::hugebuf).
        let mut work = crate::hugebuf::ZeroedF64::new(kpc::fit_workspace_len(&x, p.components))?;
        let data = kpc::Training { kernel: &p.kernel, rows: &x, graph: &g, s: &table.labels };
        let f = kpc::fit(backend, &data, p.lambda, p.components, &mut alpha, &mut cm, work.as_mut_slice())?;
        Fitted::from_expansion(p.kernel, table.clone(), alpha, f.offset, Some((cm, f.grand_mean)))
    }

    fn fold<B: Backend>(
        &self,
        backend: &mut B,
        train: &Table,
        val: &Table,
        target: &Target<'_>,
    ) -> Vec<Result<Vec<f64>, String>> {
        let per_kernel = self.lambdas.len() * self.components.len();
        let mut out = Vec::with_capacity(self.kernels.len() * per_kernel);
        for kernel in &self.kernels {
            match self.fold_one_kernel(backend, kernel, train, val, target) {
                Ok(block) => out.extend(block),
                Err(e) => out.extend((0..per_kernel).map(|_| Err(e.to_string()))),
            }
        }
        out
    }

    fn workspace(&self, p: &KpcPoint, table: &Table, target: &Target<'_>, _holdout: bool) -> Workspace {
        let n = table.n();
        let Ok((_, x)) = supervision(self.ranker, table, target) else {
            return Workspace::new("the data", n, table.d(), "", || 0);
        };
        match self.basis {
            Some(m) => {
                let m = m.min(n);
                Workspace::new("the reduced-basis features", n, m, "use a smaller --basis M", || {
                    nystrom::kpc_fit_workspace_len(n, m, p.components)
                })
            }
            None => Workspace::new("the kernel matrix over the training rows", n, n, KERNEL_WAY_OUT, || {
                kpc::fit_workspace_len(&x, p.components)
            }),
        }
    }

    fn plot_point(&self, p: &KpcPoint) -> (f64, String) {
        (p.components as f64, format!("{} λ={}", kernel_name(&p.kernel), p.lambda))
    }

    fn plot_axis(&self) -> (&'static str, bool) {
        ("number of components p", false)
    }
}

impl Kpc {
    /// Every (λ, p) of one kernel on one fold: one core call.
    fn fold_one_kernel<B: Backend>(
        &self,
        backend: &mut B,
        kernel: &Kernel,
        train: &Table,
        val: &Table,
        target: &Target<'_>,
    ) -> Result<Vec<Result<Vec<f64>, String>>, LearnError> {
        let (g, x) = supervision(self.ranker, train, target)?;
        let xv = val.rows()?;
        let grid = kpc::KpcGrid { lambdas: &self.lambdas, components: &self.components };
        let nt = val.n();
        let mut preds = vec![0.0; grid.len() * nt];
        let mut usable = vec![0; self.lambdas.len()];
        if let Some(m) = self.basis {
            let (n, m) = (train.n(), m.min(train.n()));
            if m == 0 {
                return Err(LinalgError::DimensionMismatch.into());
            }
            let mut piv = vec![0; m];
            let mut work = try_zeros(nystrom::kpc_cv_fold_workspace_len(n, nt, m, &grid))?;
            let tol = default_pivot_tol(n);
            let data = nystrom::Training { kernel, rows: &x, graph: &g, s: &train.labels };
            let out = kpc::FoldOut { preds: &mut preds, usable: &mut usable };
            nystrom::kpc_cv_fold(backend, &data, &xv, &grid, tol, &mut piv, out, &mut work)?;
        } else {
            let mut work = try_zeros(kpc::cv_fold_workspace_len(&x, &xv, &grid))?;
            let data = kpc::Training { kernel, rows: &x, graph: &g, s: &train.labels };
            let out = kpc::FoldOut { preds: &mut preds, usable: &mut usable };
            kpc::cv_fold(backend, &data, &xv, &grid, out, &mut work)?;
        }
        let np = self.components.len();
        let mut out = Vec::with_capacity(grid.len());
        for (li, &u) in usable.iter().enumerate() {
            for (pi, &p) in self.components.iter().enumerate() {
                out.push(if p > u {
                    Err(LearnError::TooManyComponents { requested: p, rank: u }.to_string())
                } else {
                    Ok(preds[(li * np + pi) * nt..][..nt].to_vec())
                });
            }
        }
        Ok(out)
    }
}
