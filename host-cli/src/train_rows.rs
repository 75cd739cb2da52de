//! Training on rows without a command line: the one driver of RLS,
//! RankRLS, KPCR and KPCRank from a data set in memory to the `.rkl` bytes
//! — the checks of the request, standardisation, model selection by
//! cross-validation, the final fit, the metadata and the model writer.
//! `ranklet train --data` and the Python estimators both call
//! [`fit_rows`], so a model trained by either is the same bytes (apart from
//! the metadata line naming the data).
//!
//! Nothing here parses flags, draws a bar or prints: the request is plain
//! values ([`RowsRequest`]), progress and cancellation come through a
//! callback ([`crate::progress`]), and what the CLI prints (the chosen
//! point, the landmarks, the CV table) comes back in [`RowsFit`].

use ranklet_core::format::{self, ElementType};
use ranklet_core::graph::Pair;
use ranklet_core::kernel::Kernel;
use ranklet_core::learn::LearnError;
use ranklet_core::LinalgError;

use crate::args::{QueryWeightArg, Scheme};
use crate::cv::{self, CvReport};
use crate::data::Dataset;
use crate::error::CliError;
use crate::family::kpc::KpcPoint;
use crate::family::ls::LsPoint;
use crate::family::{describe, Algo, Family, RowFamily};
use crate::fit::{Fitted, Target};
use crate::hostbackend::{BackendChoice, HostBackend};
use crate::metric::Metric;
use crate::model_io::model_bytes;
use crate::progress::{self, OnProgress};
use crate::table::Table;

/// What to train, in plain values (the CLI's `train` flags after parsing).
#[derive(Clone, Debug)]
pub struct RowsRequest {
    /// The learner.
    pub algo: Algo,
    /// Kernels of the grid (at least one).
    pub kernels: Vec<Kernel>,
    /// λ of the grid; `None` for the learner's default (1 for rls and
    /// rankrls, 0 for kpcr and kpcrank).
    pub lambdas: Option<Vec<f64>>,
    /// Numbers of principal components (kpcr and kpcrank only).
    pub components: Option<Vec<usize>>,
    /// At most this many landmark rows (reduced basis).
    pub basis: Option<usize>,
    /// Weighting of the within-query graphs.
    pub query_weight: QueryWeightArg,
    /// Standardise the features over the training rows.
    pub standardize: bool,
    /// Cross-validation; required for a grid.
    pub cv: Option<Scheme>,
    /// Metric that selects the grid point (default: disagreement, or
    /// pairerror with pairs).
    pub metric: Option<Metric>,
    /// Seed of the fold assignment.
    pub seed: u64,
    /// Element type of the model.
    pub element: ElementType,
    /// Linear-algebra backend.
    pub backend: BackendChoice,
    /// Further `key=value` metadata lines, after the driver's own (the
    /// Python estimators record the column names of a DataFrame).
    pub metadata: Vec<(String, String)>,
}

/// A checked request: the family with its grid and the selection rule.
#[derive(Clone, Debug)]
pub struct RowsPlan {
    /// The family and its grid.
    pub family: RowFamily,
    /// Cross-validation, if any.
    pub scheme: Option<Scheme>,
    /// Metric of the model selection.
    pub metric: Metric,
    /// The request it came from.
    pub request: RowsRequest,
}

impl RowsRequest {
    /// The checks that need no data: the family's domain, a grid without
    /// cross-validation, the metric of pair data (`pairs`: the data comes
    /// with explicit pairs).
    ///
    /// # Errors
    /// A [`CliError::input`] naming the offending flag (the Python
    /// estimators raise it as `ValueError`).
    pub fn plan(&self, pairs: bool) -> Result<RowsPlan, CliError> {
        let default_lambda = if self.algo.is_kpc() { 0.0 } else { 1.0 };
        let lambdas = self.lambdas.clone().unwrap_or_else(|| vec![default_lambda]);
        let family = RowFamily::new(self.algo, self.kernels.clone(), lambdas, self.components.clone())?
            .with_basis(self.basis)?;
        if family.is_grid() && self.cv.is_none() {
            return Err(CliError::input("a grid of values (comma list) needs --cv K to choose among them"));
        }
        let metric = match self.metric {
            Some(m) => m,
            None if pairs => Metric::PairError,
            None => Metric::Disagreement,
        };
        if pairs && metric != Metric::PairError {
            return Err(CliError::input("with --pairs, model selection uses --metric pairerror"));
        }
        if let Some((k, _)) =
            self.metadata.iter().find(|(k, v)| k.is_empty() || k.contains(['=', '\n']) || v.contains('\n'))
        {
            return Err(CliError::input(format!(
                "metadata key {k:?}: a key is one word without '=', a value one line"
            )));
        }
        Ok(RowsPlan { family, scheme: self.cv, metric, request: self.clone() })
    }
}

/// The cross-validation table of either row family.
#[derive(Clone, Debug)]
pub enum RowsCv {
    /// RLS / RankRLS: points (kernel, λ).
    Ls(CvReport<LsPoint>),
    /// KPCR / KPCRank: points (kernel, λ, p).
    Kpc(CvReport<KpcPoint>),
}

/// One row of [`RowsCv::rows`]: a grid point's values (as in the model
/// metadata) and its per-fold metric.
#[derive(Clone, Debug)]
pub struct CvRow {
    /// `(column, value)` of the point's hyperparameters.
    pub params: Vec<(&'static str, String)>,
    /// Metric per fold (NaN where it failed).
    pub folds: Vec<f64>,
    /// Mean over folds.
    pub mean: f64,
    /// Sample standard deviation over folds.
    pub std: f64,
    /// Why the point failed, if it did.
    pub failure: Option<String>,
}

impl RowsCv {
    /// The table without the family's point type: one [`CvRow`] per grid
    /// point, in grid order, and the index of the chosen one.
    pub fn rows(&self, family: &RowFamily) -> (Vec<CvRow>, Option<usize>) {
        fn table<F: Family>(f: &F, r: &CvReport<F::Point>) -> (Vec<CvRow>, Option<usize>) {
            let rows = r
                .points
                .iter()
                .map(|p| CvRow {
                    params: f.columns().iter().copied().zip(f.values(&p.params)).collect(),
                    folds: p.folds.clone(),
                    mean: p.mean(),
                    std: p.std(),
                    failure: p.failure.clone(),
                })
                .collect();
            (rows, r.best())
        }
        match (self, family) {
            (RowsCv::Ls(r), RowFamily::Ls(f)) => table(f, r),
            (RowsCv::Kpc(r), RowFamily::Kpc(f)) => table(f, r),
            _ => (Vec::new(), None),
        }
    }

    /// The scheme's description ("5-fold over 20 queries", …).
    pub fn scheme(&self) -> &str {
        match self {
            RowsCv::Ls(r) => &r.scheme,
            RowsCv::Kpc(r) => &r.scheme,
        }
    }
}

/// A trained model and what a caller may report about it.
#[derive(Clone, Debug)]
pub struct RowsFit {
    /// The `.rkl` file.
    pub bytes: Vec<u8>,
    /// The chosen grid point, `name=value` separated by spaces.
    pub chosen: String,
    /// The chosen point's `(column, value)` pairs.
    pub chosen_params: Vec<(&'static str, String)>,
    /// Landmark rows of a reduced-basis kernel model.
    pub landmarks: Option<usize>,
    /// The cross-validation table, if there was cross-validation.
    pub cv: Option<RowsCv>,
    /// Training rows, queries and features.
    pub rows: usize,
    /// Queries.
    pub queries: usize,
    /// Features (the model's dimension).
    pub d: usize,
    /// What the fit would tell the user (a solver it fell back to).
    pub notes: Vec<String>,
}

/// The metadata every model trained on rows starts with; `source` names
/// the data (a file, or the arrays of a Python fit).
pub fn rows_meta(algorithm: &str, source: &str, rows: usize, queries: usize, weight: QueryWeightArg) -> String {
    format!(
        "algorithm={algorithm}\ntraining_data={source}\nrows={rows}\nqueries={queries}\nquery_weight={}\n",
        weight.name()
    )
}

/// Records the chosen grid point in the metadata; returns it described.
pub fn push_chosen<F: Family>(meta: &mut String, family: &F, p: &F::Point) -> String {
    for (c, v) in family.columns().iter().zip(family.values(p)) {
        meta.push_str(&format!("{c}={v}\n"));
    }
    describe(family, p)
}

/// The error of a failed final fit: a workspace that could not be
/// allocated or a numerically singular system is a failure, anything else
/// bad input.
pub fn fit_error(e: LearnError) -> CliError {
    if let Some(refused) = match &e {
        LearnError::Numerics(l) => crate::mem::alloc_failure(l),
        _ => None,
    } {
        return refused;
    }
    match e {
        LearnError::Numerics(LinalgError::NotPositiveDefinite { .. } | LinalgError::Singular { .. }) => {
            CliError::failure(e.to_string())
        }
        LearnError::Unsupported => {
            CliError::input("rls and kpcr regress on scores; use rankrls or kpcrank with --pairs")
        }
        _ => CliError::input(e.to_string()),
    }
}

/// Trains the plan on `ds` (with explicit `pairs` over its rows, if any)
/// and writes the model into bytes. `source` names the data in the
/// metadata and in errors.
///
/// # Errors
/// Bad input as [`CliError::input`] (too few rows, a basis larger than the
/// data, standardisation of sparse data, a scheme the data cannot
/// support…), numerical failures as [`CliError::failure`],
/// [`progress::interrupted`] when `on` stops it.
pub fn fit_rows(
    plan: &RowsPlan,
    ds: Dataset,
    pairs: Option<&[Pair]>,
    source: &str,
    on: OnProgress<'_>,
) -> Result<RowsFit, CliError> {
    if pairs.is_none() && ds.n_rows() < 2 {
        return Err(CliError::input(format!("{source}: at least 2 rows are needed to learn a ranking")));
    }
    check_feature_dim(&ds, source)?;
    let table = Table::from_dataset(&ds, pairs.is_none());
    // The table holds the rows from here on: the data set's copy goes.
    drop(ds);
    fit_table(plan, table, pairs, source, on)
}

/// [`fit_rows`] from its training table — rows grouped by query when there
/// are no `pairs`, else in input order as one query (what
/// [`Table::from_dataset`] gives, or `crate::arrays::dense_table` straight
/// from a matrix in memory).
///
/// # Errors
/// As [`fit_rows`].
pub fn fit_table(
    plan: &RowsPlan,
    mut table: Table,
    pairs: Option<&[Pair]>,
    source: &str,
    on: OnProgress<'_>,
) -> Result<RowsFit, CliError> {
    let req = &plan.request;
    if pairs.is_none() && table.n() < 2 {
        return Err(CliError::input(format!("{source}: at least 2 rows are needed to learn a ranking")));
    }
    let n_features = table.d();
    if let Some(m) = plan.family.basis().filter(|&m| m > table.n()) {
        return Err(CliError::input(format!("--basis {m} exceeds the {} training rows of {source}", table.n())));
    }
    let stats = if req.standardize {
        if table.dense().is_none() {
            return Err(CliError::input(format!(
                "--standardize needs dense data; {source} has {} features",
                table.d()
            )));
        }
        // Statistics of all training rows (also used inside CV folds).
        let (mean, scale) = table.feature_stats();
        table = table.standardized(&mean, &scale);
        Some((mean, scale))
    } else {
        None
    };
    let target = match pairs {
        Some(p) => Target::Pairs(p),
        None => Target::Labels(req.query_weight.to_core()),
    };
    // Every grid point's buffers are checked against the memory limit
    // before any work starts: a kernel matrix that cannot fit is an error
    // naming its size and the way out, never an abort after minutes of CV.
    let holdout = matches!(plan.scheme, Some(Scheme::Loo));
    crate::with_family!(&plan.family, |f| f
        .points()
        .iter()
        .try_for_each(|p| f.workspace(p, &table, &target, holdout).check()))?;
    let mut backend = HostBackend::new(req.backend);
    let mut meta = rows_meta(plan.family.name(), source, table.n(), table.n_queries(), req.query_weight);
    let (model, chosen, chosen_params, cv) = match &plan.family {
        RowFamily::Ls(f) => {
            let (m, c, p, r) = select_and_fit(plan, f, &mut backend, &table, &target, &mut meta, on)?;
            (m, c, p, r.map(RowsCv::Ls))
        }
        RowFamily::Kpc(f) => {
            let (m, c, p, r) = select_and_fit(plan, f, &mut backend, &table, &target, &mut meta, on)?;
            (m, c, p, r.map(RowsCv::Kpc))
        }
    };
    let landmarks = plan.family.basis().and_then(|m| {
        meta.push_str(&format!("basis={m}\nbasis_method=pivoted-cholesky\n"));
        let r = model.basis_rows()?;
        meta.push_str(&format!("basis_landmarks={r}\n"));
        Some(r)
    });
    if stats.is_some() {
        meta.push_str("standardize=1\n");
    }
    for (k, v) in &req.metadata {
        meta.push_str(&format!("{k}={v}\n"));
    }
    let centring = stats.as_ref().map(|(m, s)| format::FeatureCentring { mean: m, scale: s });
    let bytes = model_bytes(&model, n_features, req.element, &meta, centring)?;
    Ok(RowsFit {
        bytes,
        chosen,
        chosen_params,
        landmarks,
        cv,
        rows: table.n(),
        queries: table.n_queries(),
        d: n_features,
        notes: match &plan.family {
            RowFamily::Ls(f) => f.cg_note.get().cloned().into_iter().collect(),
            RowFamily::Kpc(_) => Vec::new(),
        },
    })
}

/// The fitted model, the chosen point (described, and as pairs) and the CV
/// report of [`select_and_fit`].
type Selected<P> = (Fitted, String, Vec<(&'static str, String)>, Option<CvReport<P>>);

/// Model selection (when the plan has a scheme) and the final fit, for one
/// family: the CV table and the chosen point go into `meta`.
fn select_and_fit<F: Family>(
    plan: &RowsPlan,
    family: &F,
    backend: &mut HostBackend,
    table: &Table,
    target: &Target<'_>,
    meta: &mut String,
    on: OnProgress<'_>,
) -> Result<Selected<F::Point>, CliError> {
    let mut cv_report = None;
    let chosen = match plan.scheme {
        Some(scheme) => {
            let report =
                cv::cross_validate(backend, family, table, target, scheme, plan.metric, plan.request.seed, &mut *on)?;
            let best = report.best().ok_or_else(|| {
                let why = report.points.iter().find_map(|p| p.failure.clone()).unwrap_or_default();
                CliError::input(format!("no grid point could be evaluated: {why}"))
            })?;
            meta.push_str(&format!("cv={}\ncv_metric={}\n", report.scheme, report.metric.name()));
            for (i, p) in report.points.iter().enumerate() {
                meta.push_str(&format!("cv.{i}={} mean={} std={}\n", describe(family, &p.params), p.mean(), p.std()));
            }
            let chosen = report.points[best].params;
            cv_report = Some(report);
            chosen
        }
        None => *family.points().first().ok_or_else(|| CliError::input("empty grid"))?,
    };
    progress::report(on, "final fit", 0, 1)?;
    let model = family.fit(backend, &chosen, table, target).map_err(fit_error)?;
    progress::report(on, "final fit", 1, 1)?;
    let params = family.columns().iter().copied().zip(family.values(&chosen)).collect();
    let described = push_chosen(meta, family, &chosen);
    Ok((model, described, params, cv_report))
}

/// Refuses a feature dimension whose weight vector alone (8 bytes a
/// feature) exceeds the memory available, naming the largest index and
/// its line (or row of arrays): data numbering its features sparsely (a
/// hash, an id) rather than a data set that is too large (bad input,
/// exit 2).
fn check_feature_dim(ds: &Dataset, source: &str) -> Result<(), CliError> {
    let d = ds.n_features();
    if crate::mem::check("", Some(d), 8, "").is_ok() {
        return Ok(());
    }
    let line = (0..ds.n_rows()).find(|&i| ds.row(i).0.last().is_some_and(|&c| c as usize + 1 == d));
    let at = line.map_or_else(|| source.to_string(), |i| format!("{source}:{}", ds.source_line(i)));
    Err(CliError::input(format!(
        "{at}: feature index {d} makes a weight vector of {} bytes, more than the {} bytes of memory available; \
         number the features 1, 2, … without gaps (e.g. map the feature ids to 1..k in order of first appearance)",
        crate::mem::grouped(d as u128 * 8),
        crate::mem::grouped(crate::mem::limit_bytes()? as u128),
    )))
}
