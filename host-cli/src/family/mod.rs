//! Learner families as the CLI drives them: one module per family, each a
//! [`Family`] with its own grid-point type, its grid, and its hooks — fit
//! one model, predict the validation rows of one fold for every grid point,
//! and (where the family has one) the closed-form leave-out. Each hook is
//! one core call, or one per grid point where core has no shared path.
//!
//! The generic parts — k-fold splits and the CV loop (`crate::cv`), the CV
//! table and model metadata (`commands/train.rs`), the CV figure
//! (`crate::plot`) — see a family only through this trait. A new family
//! (Kronecker conditional ranking, preference GPs) adds a module with its
//! own point type and a [`RowFamily`] variant; it does not widen another
//! family's grid point.
//!
//! | module | `--algo` | grid point | one fold |
//! |---|---|---|---|
//! | [`ls`] | rls, rankrls | (kernel, λ) | a fit per point ([`ranklet_core::learn::ls::fit`]) |
//! | [`kpc`] | kpcr, kpcrank | (kernel, λ, p) | one core call per kernel ([`ranklet_core::learn::kpc::cv_fold`]) |
//!
//! Supervised ordering (err, rankrls on sample orders) is `crate::ordering`:
//! it has no grid. The Kronecker learners on edges ([`kron`]) and the
//! preference GPs on judgements between items ([`pref`]) are sibling
//! drivers, not `Family`s: their data are not rows.

use ranklet_core::backend::Backend;
use ranklet_core::graph::Graph;
use ranklet_core::kernel::Kernel;
use ranklet_core::learn::LearnError;
use ranklet_core::linalg::Rows;

use crate::error::CliError;
use crate::fit::{Fitted, Target};
use crate::table::Table;

pub mod kpc;
pub mod kron;
pub mod ls;
pub mod ls_stats;
pub mod ls_stream;
pub mod nystrom_stats;
pub mod pref;

/// A learner family: its grid and its hooks into core.
pub trait Family {
    /// One point of the family's hyperparameter grid.
    type Point: Copy + std::fmt::Debug;

    /// The name on the command line (`--algo`).
    fn name(&self) -> &'static str;
    /// Whether the family learns from a preference graph (queries or
    /// pairs) rather than regressing on the labels.
    fn is_ranker(&self) -> bool;
    /// The grid, in the order the CV table lists it.
    fn points(&self) -> Vec<Self::Point>;
    /// Names of a point's hyperparameters (CV table columns, metadata keys).
    fn columns(&self) -> &'static [&'static str];
    /// A point's values for [`Family::columns`].
    fn values(&self, p: &Self::Point) -> Vec<String>;

    /// Fits one model on all rows of `table`.
    fn fit<B: Backend>(
        &self,
        backend: &mut B,
        p: &Self::Point,
        table: &Table,
        target: &Target<'_>,
    ) -> Result<Fitted, LearnError>;

    /// Predictions of the rows of `val` by models fitted on `train`, for
    /// every grid point (in [`Family::points`] order): `Err` with the reason
    /// where a point cannot be fitted on this fold.
    fn fold<B: Backend>(
        &self,
        backend: &mut B,
        train: &Table,
        val: &Table,
        target: &Target<'_>,
    ) -> Vec<Result<Vec<f64>, String>>;

    /// Closed-form leave-out predictions of every row for one point, or
    /// `None` (the default) if the family has no such shortcut.
    fn holdout<B: Backend>(
        &self,
        _backend: &mut B,
        _p: &Self::Point,
        _table: &Table,
        _target: &Target<'_>,
    ) -> Option<Result<Vec<f64>, LearnError>> {
        None
    }

    /// The largest workspace a fit of `p` on all rows of `table` allocates
    /// (with `holdout`, also the closed-form leave-out's), counted with
    /// checked arithmetic: `train` refuses it before any work where it
    /// exceeds the memory available ([`crate::mem::check`]).
    fn workspace(&self, p: &Self::Point, table: &Table, target: &Target<'_>, holdout: bool) -> Workspace;

    /// The CV figure: the x value of a point, and the line it belongs to.
    fn plot_point(&self, p: &Self::Point) -> (f64, String);
    /// The CV figure: the x-axis label and whether it is logarithmic.
    fn plot_axis(&self) -> (&'static str, bool);
}

/// A fit's largest workspace ([`Family::workspace`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Workspace {
    /// `f64` elements; `None` where the count overflows.
    pub elems: Option<usize>,
    /// What it holds, with its shape (`the kernel matrix (100000 × 100000 values)`).
    pub what: String,
    /// How to need less.
    pub way_out: &'static str,
}

/// Why a kernel learner's workspace is large, and the ways out.
pub const KERNEL_WAY_OUT: &str =
    "use --basis M (a reduced basis of M landmark rows, n × M), --kernel linear, or fewer rows";

impl Workspace {
    /// The workspace of a learner whose dominant buffer is `rows × cols`
    /// (`rough`, checked) and whose exact length core gives (`exact`, called
    /// only where `rough` is far from overflowing, as core's lengths are
    /// plain sums of such products).
    pub fn new(
        what: &str,
        rows: usize,
        cols: usize,
        way_out: &'static str,
        exact: impl FnOnce() -> usize,
    ) -> Workspace {
        let rough = rows.checked_mul(cols);
        let elems = rough.filter(|&r| r <= usize::MAX >> 8).map(|_| exact());
        Workspace { elems, what: format!("{what} ({rows} × {cols} values)"), way_out }
    }

    /// Refuses the workspace before work starts where it exceeds the
    /// memory available.
    ///
    /// # Errors
    /// The refusal (exit 1), naming the size in bytes and the way out.
    pub fn check(&self) -> Result<(), CliError> {
        crate::mem::check(&self.what, self.elems, 8, self.way_out)
    }
}

/// The learners on rows (`--data`, `--pairs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// A row family chosen at run time ([`Family`] has generic methods, so it
/// is dispatched by `match`, see [`with_family!`](crate::with_family)).
#[derive(Clone, Debug)]
pub enum RowFamily {
    /// RLS / RankRLS.
    Ls(ls::LeastSquares),
    /// KPCR / KPCRank.
    Kpc(kpc::Kpc),
}

/// Runs `$body` with `$f` bound to the concrete family inside a
/// [`RowFamily`].
#[macro_export]
macro_rules! with_family {
    ($fam:expr, |$f:ident| $body:expr) => {
        match $fam {
            $crate::family::RowFamily::Ls($f) => $body,
            $crate::family::RowFamily::Kpc($f) => $body,
        }
    };
}

impl RowFamily {
    /// The family of `algo` over a grid, with the checks of each family's
    /// domain (`components` only for kpcr/kpcrank and required there).
    ///
    /// # Errors
    /// A [`CliError::input`] naming the offending flag.
    pub fn new(
        algo: Algo,
        kernels: Vec<Kernel>,
        lambdas: Vec<f64>,
        components: Option<Vec<usize>>,
    ) -> Result<RowFamily, CliError> {
        if kernels.is_empty() || lambdas.is_empty() {
            return Err(CliError::input("--kernel and --lambda need at least one value"));
        }
        if let Some(l) = lambdas.iter().find(|l| !(l.is_finite() && **l >= 0.0)) {
            return Err(CliError::input(format!("--lambda must be a finite number ≥ 0, got {l}")));
        }
        let ranker = algo.is_ranker();
        if algo.is_kpc() {
            let components = match components {
                Some(c) if c.contains(&0) || c.is_empty() => return Err(CliError::input("--components must be ≥ 1")),
                Some(c) => c,
                None => return Err(CliError::input(format!("--algo {} needs --components P", algo.name()))),
            };
            return Ok(RowFamily::Kpc(kpc::Kpc { ranker, kernels, lambdas, components, basis: None }));
        }
        if components.is_some() {
            return Err(CliError::input("--components applies to kpcr and kpcrank only"));
        }
        if let Some(l) = lambdas.iter().find(|l| **l == 0.0) {
            if !kernels.iter().all(|k| *k == Kernel::Linear) {
                return Err(CliError::input(format!("--lambda {l}: kernel rls/rankrls need λ > 0")));
            }
        }
        Ok(RowFamily::Ls(ls::LeastSquares { ranker, kernels, lambdas, basis: None, cg_note: Default::default() }))
    }

    /// The reduced-basis (Nyström) learner with at most `m` landmark rows
    /// (`--basis`), or the full learner for `None`.
    ///
    /// # Errors
    /// A [`CliError::input`] for `m = 0`.
    pub fn with_basis(mut self, m: Option<usize>) -> Result<RowFamily, CliError> {
        if m == Some(0) {
            return Err(CliError::input("--basis must be ≥ 1 (the number of landmark rows)"));
        }
        match &mut self {
            RowFamily::Ls(f) => f.basis = m,
            RowFamily::Kpc(f) => f.basis = m,
        }
        Ok(self)
    }

    /// The `--basis` of the family, if any.
    pub fn basis(&self) -> Option<usize> {
        match self {
            RowFamily::Ls(f) => f.basis,
            RowFamily::Kpc(f) => f.basis,
        }
    }

    /// Whether the grid has more than one point.
    pub fn is_grid(&self) -> bool {
        with_family!(self, |f| f.points().len() > 1)
    }

    /// The `--algo` name.
    pub fn name(&self) -> &'static str {
        with_family!(self, |f| f.name())
    }

    /// Fits the first grid point (the only one when there is no grid).
    ///
    /// # Errors
    /// As [`Family::fit`]; [`LearnError::Unsupported`] for an empty grid.
    pub fn fit_first<B: Backend>(
        &self,
        backend: &mut B,
        table: &Table,
        target: &Target<'_>,
    ) -> Result<Fitted, LearnError> {
        with_family!(self, |f| match f.points().first() {
            Some(p) => f.fit(backend, p, table, target),
            None => Err(LearnError::Unsupported),
        })
    }
}

/// What a row family fits on: the preference graph (or identity) and the
/// rows of `table`.
///
/// # Errors
/// [`LearnError::Unsupported`] for a regressor (rls, kpcr) given pairs.
pub(crate) fn supervision<'a>(
    ranker: bool,
    table: &'a Table,
    target: &Target<'a>,
) -> Result<(Graph<'a>, Rows<'a>), LearnError> {
    if matches!(target, Target::Pairs(_)) && !ranker {
        return Err(LearnError::Unsupported);
    }
    Ok((crate::fit::graph(ranker, table, target), table.rows()?))
}

/// `name=value` pairs of a point, space-separated (model metadata).
pub fn describe<F: Family>(family: &F, p: &F::Point) -> String {
    family.columns().iter().zip(family.values(p)).map(|(c, v)| format!("{c}={v}")).collect::<Vec<_>>().join(" ")
}
