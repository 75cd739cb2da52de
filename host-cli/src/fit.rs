//! The host-side model ([`Fitted`]) the families produce, its prediction by
//! core's batch scoring, and what supervision a fit sees ([`Target`],
//! [`graph`]). The learners themselves are `crate::family`.

use ranklet_core::backend::Backend;
use ranklet_core::graph::{Graph, Pair, QueryWeight};
use ranklet_core::kernel::Kernel;
use ranklet_core::learn::expansion::{self, Centring, Expansion};
use ranklet_core::learn::LearnError;
use ranklet_core::LinalgError;

use crate::table::Table;

/// The landmark rows `piv` of `table` as the basis table of a reduced-basis
/// model (one query).
pub fn landmark_table(table: &Table, piv: &[usize]) -> Table {
    table.subset(piv, vec![0, piv.len()])
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
        /// The basis rows (the training rows, or the landmarks of a reduced
        /// basis).
        basis: Box<Table>,
        /// Coefficients (`basis.n()`).
        alpha: Vec<f64>,
        /// Offset.
        offset: f64,
        /// Column means of the training kernel and its grand mean.
        centring: Option<(Vec<f64>, f64)>,
    },
}

/// The core graph for a table and target: the identity for a regressor,
/// the query graph of the labels or the explicit pairs for a ranker.
pub fn graph<'a>(ranker: bool, table: &'a Table, target: &Target<'a>) -> Graph<'a> {
    match (ranker, target) {
        (_, Target::Pairs(p)) => Graph::Pairs { n: table.n(), pairs: p },
        (false, _) => Graph::Identity { n: table.n() },
        (true, Target::Labels(w)) => Graph::Queries { query_ptr: &table.query_ptr, weight: *w },
    }
}

impl Fitted {
    /// A kernel expansion over the rows of `basis` (the training rows, or
    /// the landmarks of a reduced basis) as a model; with the linear kernel
    /// it is folded into `w` by core ([`Expansion::fold_linear`]), so a
    /// linear kernel always gives a linear model.
    ///
    /// # Errors
    /// Dimension errors from core.
    pub fn from_expansion(
        kernel: Kernel,
        basis: Table,
        alpha: Vec<f64>,
        offset: f64,
        centring: Option<(Vec<f64>, f64)>,
    ) -> Result<Fitted, LearnError> {
        let d = basis.d();
        let fitted = Fitted::Kernel { kernel, basis: Box::new(basis), alpha, offset, centring };
        if kernel != Kernel::Linear {
            return Ok(fitted);
        }
        let e = fitted.expansion()?.ok_or(LearnError::Unsupported)?;
        let mut w = vec![0.0; d];
        let mut work = vec![0.0; e.fold_linear_workspace_len()];
        let offset = e.fold_linear(&mut w, &mut work)?;
        Ok(Fitted::Linear { w, offset })
    }

    /// The rows of a kernel model's basis (`None` for a linear model).
    pub fn basis_rows(&self) -> Option<usize> {
        match self {
            Fitted::Linear { .. } => None,
            Fitted::Kernel { basis, .. } => Some(basis.n()),
        }
    }

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
