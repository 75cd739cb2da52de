//! KPCR and KPCRank (000 §3–4.2): grid over (kernel, λ, p); a fold is one
//! core call per kernel ([`ranklet_core::learn::kpc::cv_fold`]: one kernel
//! matrix and one decomposition for every (λ, p)); a fit is
//! [`ranklet_core::learn::kpc::fit`]. No closed-form leave-out.

use ranklet_core::backend::Backend;
use ranklet_core::kernel::Kernel;
use ranklet_core::learn::{kpc, LearnError};

use super::{supervision, Family};
use crate::args::kernel_name;
use crate::fit::{Fitted, Target};
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
        let (mut alpha, mut cm) = (vec![0.0; n], vec![0.0; n]);
        let mut work = vec![0.0; kpc::fit_workspace_len(&x, p.components)];
        let f = kpc::fit(
            backend,
            &p.kernel,
            &x,
            &g,
            &table.labels,
            p.lambda,
            p.components,
            &mut alpha,
            &mut cm,
            &mut work,
        )?;
        Fitted::from_expansion(p.kernel, table, alpha, f.offset, Some((cm, f.grand_mean)))
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
        let mut work = vec![0.0; kpc::cv_fold_workspace_len(&x, &xv, &grid)];
        kpc::cv_fold(backend, kernel, &x, &xv, &g, &train.labels, &grid, &mut preds, &mut usable, &mut work)?;
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
