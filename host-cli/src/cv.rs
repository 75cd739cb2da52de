//! Model selection: k-fold cross-validation that never splits a query
//! (folds over pairs for pair data), and the closed-form leave-one-out /
//! leave-query-out shortcuts of RLS / RankRLS.
//!
//! Generic over the learner family ([`crate::family::Family`]): a fold asks
//! the family for the validation predictions of its whole grid, so a family
//! that shares work across grid points (KPCR / KPCRank: one decomposition per
//! fold for every (λ, p), 000 §4.2) does so in one core call.

use std::borrow::Cow;

use ranklet_core::backend::Backend;
use ranklet_core::graph::Pair;

pub use crate::args::Scheme;
use crate::error::CliError;
use crate::family::kron::{predict_problem_edges, EdgeMetric, EdgeProblem};
use crate::family::Family;
use crate::fit::Target;
use crate::metric::Metric;
use crate::progress::{self, OnProgress};
use crate::table::Table;

/// The result for one grid point.
#[derive(Clone, Debug)]
pub struct CvPoint<P> {
    /// The hyperparameters.
    pub params: P,
    /// Metric per fold (NaN where the point could not be fitted).
    pub folds: Vec<f64>,
    /// Why the point failed on some fold, if it did.
    pub failure: Option<String>,
}

impl<P> CvPoint<P> {
    /// Mean over folds (NaN if any fold failed).
    pub fn mean(&self) -> f64 {
        self.folds.iter().sum::<f64>() / self.folds.len() as f64
    }
    /// Sample standard deviation over folds (0 for one fold).
    pub fn std(&self) -> f64 {
        let k = self.folds.len();
        if k < 2 {
            return 0.0;
        }
        let m = self.mean();
        (self.folds.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (k - 1) as f64).sqrt()
    }
}

/// The whole cross-validation table.
#[derive(Clone, Debug)]
pub struct CvReport<P> {
    /// One entry per grid point, in grid order.
    pub points: Vec<CvPoint<P>>,
    /// The metric used.
    pub metric: Metric,
    /// Description of the scheme ("5-fold over queries", …).
    pub scheme: String,
}

impl<P> CvReport<P> {
    /// Index of the best point (by mean; failed points never win).
    pub fn best(&self) -> Option<usize> {
        let sign = if self.metric.higher_is_better() { 1.0 } else { -1.0 };
        self.points
            .iter()
            .enumerate()
            .filter(|(_, p)| p.mean().is_finite())
            .max_by(|a, b| (sign * a.1.mean()).total_cmp(&(sign * b.1.mean())))
            .map(|(i, _)| i)
    }
}

/// A deterministic shuffle (splitmix64-driven Fisher–Yates), so folds are
/// reproducible from `--seed`.
pub fn shuffle(v: &mut [usize], seed: u64) {
    let mut rng = crate::rng::SplitMix64(seed ^ 0x9E37_79B9_7F4A_7C15);
    for i in (1..v.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

/// Splits `0..m` into `k` folds of shuffled items (sizes differ by ≤ 1).
pub fn folds_of(m: usize, k: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut items: Vec<usize> = (0..m).collect();
    shuffle(&mut items, seed);
    let mut folds = vec![Vec::new(); k];
    for (i, it) in items.into_iter().enumerate() {
        folds[i % k].push(it);
    }
    folds.iter_mut().for_each(|f| f.sort_unstable());
    folds
}

/// One train/validation split: the tables are the whole table (pair data:
/// the pairs are split, not the rows) or copies of its subsets.
struct Split<'t> {
    train: Cow<'t, Table>,
    val: Cow<'t, Table>,
    /// Training and validation pairs (pair data), indexing the tables' rows.
    train_pairs: Vec<Pair>,
    val_pairs: Vec<Pair>,
}

/// What each of the k folds holds out: pairs, queries or rows (sorted
/// indices).
enum Folds {
    Pairs(Vec<Vec<usize>>),
    Queries(Vec<Vec<usize>>),
    Rows(Vec<Vec<usize>>),
}

/// The k folds of a table, and their description.
fn folds(table: &Table, target: &Target<'_>, k: usize, seed: u64) -> Result<(Folds, String), CliError> {
    match target {
        Target::Pairs(pairs) => {
            if k > pairs.len() {
                return Err(CliError::input(format!("--cv {k} needs at least {k} pairs, there are {}", pairs.len())));
            }
            Ok((Folds::Pairs(folds_of(pairs.len(), k, seed)), format!("{k}-fold over pairs")))
        }
        Target::Labels(_) if table.n_queries() > 1 => {
            let nq = table.n_queries();
            if k > nq {
                return Err(CliError::input(format!("--cv {k} needs at least {k} queries, the data has {nq}")));
            }
            Ok((Folds::Queries(folds_of(nq, k, seed)), format!("{k}-fold over {nq} queries")))
        }
        Target::Labels(_) => {
            let n = table.n();
            if k > n {
                return Err(CliError::input(format!("--cv {k} needs at least {k} rows, the data has {n}")));
            }
            Ok((Folds::Rows(folds_of(n, k, seed)), format!("{k}-fold over rows (the data is one query)")))
        }
    }
}

/// Split `f`, built when its fold runs: one split's copies of the table are
/// held at a time, not k (at 10⁶ rows × 136 features each copy is a
/// gigabyte or more).
fn split<'t>(table: &'t Table, target: &Target<'_>, folds: &Folds, f: usize) -> Split<'t> {
    match folds {
        Folds::Pairs(folds) => {
            let pairs = match target {
                Target::Pairs(pairs) => *pairs,
                Target::Labels(_) => &[],
            };
            let mut is_val = vec![false; pairs.len()];
            folds[f].iter().for_each(|&i| is_val[i] = true);
            Split {
                train: Cow::Borrowed(table),
                val: Cow::Borrowed(table),
                train_pairs: pairs.iter().zip(&is_val).filter(|(_, v)| !**v).map(|(p, _)| *p).collect(),
                val_pairs: folds[f].iter().map(|&i| pairs[i]).collect(),
            }
        }
        Folds::Queries(folds) => {
            let rest: Vec<usize> = (0..table.n_queries()).filter(|q| folds[f].binary_search(q).is_err()).collect();
            Split {
                train: Cow::Owned(table.subset_queries(&rest).0),
                val: Cow::Owned(table.subset_queries(&folds[f]).0),
                train_pairs: Vec::new(),
                val_pairs: Vec::new(),
            }
        }
        Folds::Rows(folds) => {
            let rest: Vec<usize> = (0..table.n()).filter(|r| folds[f].binary_search(r).is_err()).collect();
            Split {
                train: Cow::Owned(table.subset(&rest, vec![0, rest.len()])),
                val: Cow::Owned(table.subset(&folds[f], vec![0, folds[f].len()])),
                train_pairs: Vec::new(),
                val_pairs: Vec::new(),
            }
        }
    }
}

fn score_split(metric: Metric, split: &Split<'_>, preds: &[f64]) -> Result<f64, CliError> {
    if split.val_pairs.is_empty() {
        metric.eval_labels(&split.val.labels, preds, &split.val.query_ptr)
    } else {
        metric.eval_pairs(preds, &split.val_pairs)
    }
}

fn split_target<'a>(target: &Target<'_>, split: &'a Split<'_>) -> Target<'a> {
    match target {
        Target::Pairs(_) => Target::Pairs(&split.train_pairs),
        Target::Labels(w) => Target::Labels(*w),
    }
}

/// Runs the family's grid under the scheme and returns the table of
/// results: per fold, one call of the family's [`Family::fold`] hook. Each
/// finished fold (or grid point of the leave-out) is reported to `on`,
/// which may stop the run (`progress::silent` never does).
///
/// # Errors
/// A scheme the data cannot support (more folds than queries, rows or
/// pairs; `loo` for a family without the shortcut or for pair data), a
/// metric that fails on a fold; [`progress::interrupted`] when `on` stops
/// it.
pub fn cross_validate<F: Family, B: Backend>(
    backend: &mut B,
    family: &F,
    table: &Table,
    target: &Target<'_>,
    scheme: Scheme,
    metric: Metric,
    seed: u64,
    on: OnProgress<'_>,
) -> Result<CvReport<F::Point>, CliError> {
    match scheme {
        Scheme::Loo => holdout(backend, family, table, target, metric, on),
        Scheme::KFold(k) => {
            if k < 2 {
                return Err(CliError::input("--cv needs at least 2 folds"));
            }
            let (folds, desc) = folds(table, target, k, seed)?;
            let mut points: Vec<CvPoint<F::Point>> = family
                .points()
                .into_iter()
                .map(|params| CvPoint { params, folds: vec![f64::NAN; k], failure: None })
                .collect();
            if !matches!(folds, Folds::Pairs(_)) {
                check_fold_memory(family, table, target)?;
            }
            progress::report(on, "cross-validating", 0, k)?;
            for f in 0..k {
                let split = split(table, target, &folds, f);
                let preds = family.fold(backend, &split.train, &split.val, &split_target(target, &split));
                if preds.len() != points.len() {
                    return Err(CliError::failure(format!(
                        "{}: a fold returned {} predictions for {} grid points",
                        family.name(),
                        preds.len(),
                        points.len()
                    )));
                }
                for (pt, pred) in points.iter_mut().zip(preds) {
                    match pred {
                        Ok(pred) => pt.folds[f] = score_split(metric, &split, &pred)?,
                        Err(why) => pt.failure = Some(why),
                    }
                }
                progress::report(on, "cross-validating", f + 1, k)?;
            }
            Ok(CvReport { points, metric, scheme: desc })
        }
    }
}

/// Refuses, before the first fold, a cross-validation whose fold cannot
/// fit: a fold holds at once a copy of the rows (its training and
/// validation sets together) and its fit's largest workspace, at most that
/// of a fit on all rows ([`Family::workspace`], the largest over the grid),
/// so their sum is checked as one size.
///
/// # Errors
/// The refusal (exit 1) with the size and the ways out.
fn check_fold_memory<F: Family>(family: &F, table: &Table, target: &Target<'_>) -> Result<(), CliError> {
    let ws = family
        .points()
        .iter()
        .map(|p| family.workspace(p, table, target, false))
        .max_by_key(|w| w.elems.map_or(u128::MAX, |e| e as u128));
    let (elems, what) = ws.map_or((Some(0), String::new()), |w| (w.elems, format!(" and {}", w.what)));
    let bytes = elems.and_then(|e| e.checked_mul(8)).and_then(|b| b.checked_add(table.heap_bytes()));
    crate::mem::check(
        &format!("a fold's copy of the rows (its training and validation sets){what}"),
        bytes,
        1,
        "train on a sample of the rows, or, for linear RLS / RankRLS, \
         `ranklet stats --cv K` and `ranklet train --from-stats --cv K` (one pass, O(d²) memory)",
    )
}

/// Closed-form leave-one-out / leave-query-out over the grid.
fn holdout<F: Family, B: Backend>(
    backend: &mut B,
    family: &F,
    table: &Table,
    target: &Target<'_>,
    metric: Metric,
    on: OnProgress<'_>,
) -> Result<CvReport<F::Point>, CliError> {
    const NO_SHORTCUT: &str = "--cv loo is the closed-form shortcut of rls and rankrls on scored data";
    if matches!(target, Target::Pairs(_)) {
        return Err(CliError::input(NO_SHORTCUT));
    }
    let pts = family.points();
    let total = pts.len();
    progress::report(on, "leave-out", 0, total)?;
    let mut points = Vec::with_capacity(total);
    for params in pts {
        let res = family.holdout(backend, &params, table, target).ok_or_else(|| CliError::input(NO_SHORTCUT))?;
        let mut pt = CvPoint { params, folds: vec![f64::NAN], failure: None };
        match res {
            Ok(preds) => pt.folds[0] = metric.eval_labels(&table.labels, &preds, &table.query_ptr)?,
            Err(e) => pt.failure = Some(e.to_string()),
        }
        points.push(pt);
        progress::report(on, "leave-out", points.len(), total)?;
    }
    let scheme = if family.is_ranker() { "leave-query-out (closed form)" } else { "leave-one-out (closed form)" };
    Ok(CvReport { points, metric, scheme: scheme.into() })
}

/// k-fold cross-validation of a Kronecker learner **over conditioning
/// nodes**: the first nodes of the edges are split into `k` folds; a fold's
/// validation edges are all edges leaving its nodes, and its model never
/// sees those nodes — for two node sets the training edges are the edges
/// leaving the other first nodes (every second node kept), for one node set
/// the fold's nodes are removed from the graph entirely (as first and as
/// second nodes), so a validation node is new as in 004's test setting.
/// Every λ of the grid comes from one fit per fold
/// ([`EdgeProblem::fit_subset`]: one eigendecomposition on a complete
/// graph, CG per λ otherwise). The per-fold value is `metric` over the
/// validation edges, per conditioning node, averaged.
///
/// # Errors
/// Fewer conditioning nodes than folds; [`progress::interrupted`] when `on`
/// stops it.
#[allow(clippy::too_many_arguments)]
pub fn cross_validate_edges<B: Backend>(
    backend: &mut B,
    prob: &EdgeProblem,
    lambdas: &[f64],
    k: usize,
    metric: EdgeMetric,
    seed: u64,
    max_iter: usize,
    on: OnProgress<'_>,
) -> Result<CvReport<f64>, CliError> {
    let mut has_edge = vec![false; prob.n_u];
    prob.edges.iter().for_each(|&(u, _)| has_edge[u] = true);
    let conditioning: Vec<usize> = (0..prob.n_u).filter(|&u| has_edge[u]).collect();
    if conditioning.len() < k {
        return Err(CliError::input(format!(
            "--cv {k} needs at least {k} conditioning (first) nodes with edges, there are {}",
            conditioning.len()
        )));
    }
    let folds = folds_of(conditioning.len(), k, seed);
    let mut points: Vec<CvPoint<f64>> =
        lambdas.iter().map(|&l| CvPoint { params: l, folds: Vec::with_capacity(k), failure: None }).collect();
    const WHAT: &str = "cross-validation (folds over conditioning nodes)";
    progress::report(on, WHAT, 0, k)?;
    for (f, fold) in folds.iter().enumerate() {
        let mut in_fold = vec![false; prob.n_u];
        fold.iter().for_each(|&i| in_fold[conditioning[i]] = true);
        let train_u: Vec<usize> = (0..prob.n_u).filter(|&u| !in_fold[u]).collect();
        let train_v: Vec<usize> = if prob.one_domain { train_u.clone() } else { (0..prob.n_v).collect() };
        let val: Vec<usize> = (0..prob.edges.len()).filter(|&e| in_fold[prob.edges[e].0]).collect();
        let val_edges: Vec<(usize, usize)> = val.iter().map(|&e| prob.edges[e]).collect();
        let val_labels: Vec<f64> = val.iter().map(|&e| prob.labels[e]).collect();
        let val_u: Vec<usize> = val_edges.iter().map(|&(u, _)| u).collect();
        // CG iterations may stop the fold (the bar stays at the fold).
        let mut within = |_| on(progress::Progress { what: WHAT, done: f, total: k });
        let fits = prob.fit_subset(backend, &train_u, &train_v, lambdas, max_iter, &mut within);
        if fits.iter().any(|r| r.as_ref().is_err_and(|e| e.msg == progress::INTERRUPTED)) {
            return Err(progress::interrupted());
        }
        for (point, fit) in points.iter_mut().zip(fits) {
            let value = fit
                .and_then(|f| {
                    predict_problem_edges(backend, prob, &f, &train_u, &train_v, &val_edges).map_err(CliError::from)
                })
                .map_err(|e| e.to_string())
                .and_then(|p| metric.eval(&val_u, &val_labels, &p).map(|(v, _)| v));
            match value {
                Ok(v) => point.folds.push(v),
                Err(why) => {
                    point.folds.push(f64::NAN);
                    point.failure.get_or_insert(why);
                }
            }
        }
        progress::report(on, WHAT, f + 1, k)?;
    }
    let metric = match metric {
        EdgeMetric::CondRankLoss => Metric::CondRankLoss,
        EdgeMetric::Auc(t) => Metric::Auc(t),
    };
    Ok(CvReport { points, metric, scheme: format!("{k}-fold over conditioning nodes") })
}
