//! Fitting one model with fixed hyperparameters: the glue between a
//! [`Table`] and the learners of `ranklet_core::learn`. No algorithm lives
//! here — one core call per fit, buffers allocated to the sizes core asks
//! for, and the result kept as a host-side model.

use ranklet_core::backend::Backend;
use ranklet_core::graph::{Graph, Pair, QueryWeight};
use ranklet_core::kernel::{kernel_matrix, kernel_matrix_workspace_len, Kernel};
use ranklet_core::learn::expansion::{self, Centring, Expansion};
use ranklet_core::learn::{kpc, ls, LearnError};
use ranklet_core::linalg::Rows;
use ranklet_core::{LinalgError, MatMut};

use crate::table::Table;

/// The learners of the rankers issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Algo {
    /// Regularised least squares on the scores (ridge regression).
    Rls,
    /// Least squares on score differences within queries / pairs.
    Rankrls,
    /// Regression on the top-p kernel principal components.
    Kpcr,
    /// RankRLS on the top-p kernel principal components (000 §4).
    Kpcrank,
}

impl Algo {
    /// Whether the learner ranks (uses the preference graph) rather than
    /// regresses.
    pub fn is_ranker(self) -> bool {
        matches!(self, Algo::Rankrls | Algo::Kpcrank)
    }
    /// Whether the learner uses kernel principal components.
    pub fn is_kpc(self) -> bool {
        matches!(self, Algo::Kpcr | Algo::Kpcrank)
    }
    /// Lower-case name, as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Algo::Rls => "rls",
            Algo::Rankrls => "rankrls",
            Algo::Kpcr => "kpcr",
            Algo::Kpcrank => "kpcrank",
        }
    }
}

/// One point of the hyperparameter grid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// The kernel.
    pub kernel: Kernel,
    /// Ridge λ (RLS/RankRLS: > 0 for dual problems; KPC: ≥ 0).
    pub lambda: f64,
    /// Number of principal components (KPC learners only).
    pub components: usize,
}

/// What the scores of the training rows are compared with.
#[derive(Clone, Copy, Debug)]
pub enum Target<'a> {
    /// The labels of the rows, compared within queries (or as regression
    /// targets).
    Labels(QueryWeight),
    /// Explicit pairs over the table's rows.
    Pairs(&'a [Pair]),
}

/// A trained model in host memory (f64), before it is written as `.rkl`.
#[derive(Clone, Debug)]
pub enum Fitted {
    /// `f(x) = offset + w·x`.
    Linear {
        /// Weights (`d`).
        w: Vec<f64>,
        /// Offset.
        offset: f64,
    },
    /// `f(x) = offset + Σᵢ αᵢ k̃(x, xᵢ)`, with `k̃` the test-centred kernel
    /// when `centring` is present (KPC learners).
    Kernel {
        /// Kernel.
        kernel: Kernel,
        /// The basis rows (the training rows).
        basis: Box<Table>,
        /// Coefficients (`basis.n()`).
        alpha: Vec<f64>,
        /// Offset.
        offset: f64,
        /// Column means of the training kernel and its grand mean.
        centring: Option<(Vec<f64>, f64)>,
    },
}

/// The core graph for a table and target.
pub fn graph<'a>(algo: Algo, table: &'a Table, target: &Target<'a>) -> Graph<'a> {
    match (algo.is_ranker(), target) {
        (_, Target::Pairs(p)) => Graph::Pairs { n: table.n(), pairs: p },
        (false, _) => Graph::Identity { n: table.n() },
        (true, Target::Labels(w)) => Graph::Queries { query_ptr: &table.query_ptr, weight: *w },
    }
}

/// Whether the primal (feature-space) solve is the cheaper one (core's
/// [`ls::Form::choose`]; never for the KPC learners).
pub fn use_primal(algo: Algo, params: &Params, table: &Table) -> bool {
    !algo.is_kpc() && table.rows().is_ok_and(|x| ls::Form::choose(&params.kernel, &x) == ls::Form::Primal)
}

/// The kernel matrix between the rows of `a` and `b` (`a.n() × b.n()`,
/// column-major).
pub fn kernel_between<B: Backend>(
    backend: &mut B,
    kernel: &Kernel,
    a: &Table,
    b: &Table,
) -> Result<Vec<f64>, LinalgError> {
    let (x, y) = (a.rows()?, b.rows()?);
    let mut out = vec![0.0; a.n() * b.n()];
    let mut work = vec![0.0; kernel_matrix_workspace_len(&x, &y)];
    kernel_matrix(backend, kernel, &x, &y, MatMut::from_col_major(&mut out, a.n(), b.n())?, &mut work)?;
    Ok(out)
}

/// Fits one model on all rows of `table`: one core call
/// ([`ls::fit`] or [`kpc::fit`]), then the kernel expansion is kept or,
/// for the linear kernel, folded into a linear model by core.
///
/// # Errors
/// The learner's [`LearnError`]; [`LearnError::Unsupported`] for a
/// regressor (rls, kpcr) given pairs.
pub fn fit<B: Backend>(
    backend: &mut B,
    algo: Algo,
    params: &Params,
    table: &Table,
    target: &Target<'_>,
) -> Result<Fitted, LearnError> {
    if matches!(target, Target::Pairs(_)) && !algo.is_ranker() {
        return Err(LearnError::Unsupported);
    }
    let g = graph(algo, table, target);
    let x = table.rows()?;
    let n = table.n();
    let (alpha, offset, centring) = if algo.is_kpc() {
        let (mut alpha, mut cm) = (vec![0.0; n], vec![0.0; n]);
        let mut work = vec![0.0; kpc::fit_workspace_len(&params.kernel, &x, params.components)];
        let f = kpc::fit(
            backend,
            &params.kernel,
            &x,
            &g,
            &table.labels,
            params.lambda,
            params.components,
            &mut alpha,
            &mut cm,
            &mut work,
        )?;
        (alpha, f.offset, Some((cm, f.grand_mean)))
    } else {
        let form = ls::Form::choose(&params.kernel, &x);
        let mut coef = vec![0.0; form.coef_len(&x)];
        let mut work = vec![0.0; ls::fit_workspace_len(&params.kernel, &x)];
        ls::fit(backend, &params.kernel, &x, &g, &table.labels, params.lambda, &mut coef, &mut work)?;
        if form == ls::Form::Primal {
            return Ok(Fitted::Linear { w: coef, offset: 0.0 });
        }
        (coef, 0.0, None)
    };
    let fitted = Fitted::Kernel { kernel: params.kernel, basis: Box::new(table.clone()), alpha, offset, centring };
    if params.kernel != Kernel::Linear {
        return Ok(fitted);
    }
    // A linear kernel always gives a linear model.
    let e = fitted.expansion()?.ok_or(LearnError::Unsupported)?;
    let mut w = vec![0.0; table.d()];
    let mut work = vec![0.0; e.fold_linear_workspace_len()];
    let offset = e.fold_linear(&mut w, &mut work)?;
    Ok(Fitted::Linear { w, offset })
}

impl Fitted {
    /// The core view of a kernel model (`None` for a linear one).
    pub fn expansion(&self) -> Result<Option<Expansion<'_>>, LinalgError> {
        Ok(match self {
            Fitted::Linear { .. } => None,
            Fitted::Kernel { kernel, basis, alpha, offset, centring } => Some(Expansion {
                kernel: *kernel,
                basis: basis.rows()?,
                alpha,
                offset: *offset,
                centring: centring.as_ref().map(|(c, g)| Centring { col_means: c, grand_mean: *g }),
            }),
        })
    }

    /// Scores (f64) of the rows of `table`, by core's batch prediction
    /// ([`expansion::predict_linear`], [`Expansion::predict`]).
    pub fn predict<B: Backend>(&self, backend: &mut B, table: &Table) -> Result<Vec<f64>, LearnError> {
        let x = table.rows()?;
        let mut out = vec![0.0; table.n()];
        match self {
            Fitted::Linear { w, offset } => expansion::predict_linear(w, *offset, &x, &mut out)?,
            Fitted::Kernel { .. } => {
                let e = self.expansion()?.ok_or(LearnError::Unsupported)?;
                let mut work = vec![0.0; e.predict_workspace_len(&x)];
                e.predict(backend, &x, &mut out, &mut work)?;
            }
        }
        Ok(out)
    }
}

/// Rows of a fitted model's basis, for writers.
pub fn basis_rows(t: &Table) -> Result<Rows<'_>, LinalgError> {
    t.rows()
}
