//! Statistics shards (`.rks` bytes) from rows in memory, their merge, and
//! the fit from merged statistics: the command-line-free half of `ranklet stats` /
//! `ranklet train --from-stats` that the Python extension calls, one
//! partition of a Dask collection at a time ([`stats_of_rows`]), one merge
//! node of the reduction tree at a time ([`merge_stats`]), and once on the
//! client ([`fit_stats`]).
//!
//! The shards are [`Shard`]s, the same statistics and bytes `ranklet stats`
//! writes: a partition's shard merges with a file's. Rows without qids are
//! one query, qid 0, as the file reader and the in-memory ranker treat them.
//! Queries are sealed when their run of consecutive rows ends, except a
//! partition's first and last runs (which may go on in the neighbouring
//! partitions), as `ranklet stats` seals a file's; with `keep_queries`
//! every query's partial sums are kept and a query may have rows anywhere.
//!
//! The checks and the λ choice are [`crate::family::ls_stats::fit_merged`],
//! the model's bytes [`linear_model`]: the same calls `ranklet train
//! --from-stats` makes on files.

use ranklet_core::format::ElementType;
use ranklet_core::kernel::Kernel;
use ranklet_core::learn::ls_stats::{StatsShape, Target};

use crate::args::QueryWeightArg;
use crate::error::CliError;
use crate::family::ls::{LeastSquares, LsPoint};
use crate::family::ls_stats::{fit_merged, FromStats, RunSealer, Shard};
use crate::family::nystrom_stats::{fit_nystrom, NystromAlgo, NystromFit, NystromSpec};
use crate::family::Family;
use crate::fit::Fitted;
use crate::hostbackend::{BackendChoice, HostBackend};
use crate::model_io::{check_metadata, model_bytes};
use crate::train_rows::{push_chosen, rows_meta};

/// What statistics to keep: the options of `ranklet stats`.
#[derive(Clone, Copy, Debug)]
pub struct StatsRequest {
    /// Query weighting (fixed in the statistics).
    pub weight: QueryWeightArg,
    /// Folds `K` (`None`: no cross-validation).
    pub cv: Option<usize>,
    /// Seed of the fold assignment.
    pub seed: u64,
    /// Keep every query's partial sums (never seal).
    pub keep_queries: bool,
}

impl StatsRequest {
    /// The fold count, checked as `ranklet stats --cv` checks it.
    pub fn folds(&self) -> Result<usize, CliError> {
        match self.cv {
            None => Ok(1),
            Some(k) if (2..=u16::MAX as usize).contains(&k) => Ok(k),
            Some(k) => Err(CliError::input(format!("cv={k}: a number of folds from 2 to 65535"))),
        }
    }
}

/// Rows per block added at once (a block is `rows × d` f64 values, about
/// 4 MB).
fn block_rows(d: usize) -> usize {
    ((1usize << 19) / d.max(1)).max(1)
}

/// The statistics of `n` rows of `d` features as `.rks` bytes: feature
/// `j` of row `i` is `x(i, j)`, its label `y[i]`, its query `qids[i]`
/// (every row qid 0 without). With a Nyström `map` (`d` its input
/// dimension) the rows are mapped to its `m` features first, by
/// [`Shard::add_rows`] as `ranklet stats --landmarks` maps a file's.
/// `source` names the rows in errors (`"partition 3"`); rows are counted
/// from 0 within them.
///
/// # Errors
/// [`CliError::input`] naming the row: a NaN or ±∞ feature or label, a
/// negative qid, a sealed query's rows resuming after other queries'
/// (without `keep_queries`); mismatched lengths, a width other than the
/// map's input dimension; statistics too large for memory
/// ([`CliError::failure`]).
#[allow(clippy::too_many_arguments)]
pub fn stats_of_rows(
    req: &StatsRequest,
    map: Option<&NystromSpec>,
    n: usize,
    d: usize,
    x: impl Fn(usize, usize) -> f64,
    y: &[f64],
    qids: Option<&[i64]>,
    source: &str,
) -> Result<Vec<u8>, CliError> {
    let folds = req.folds()?;
    if d == 0 {
        return Err(CliError::input(format!("{source}: X has no feature columns")));
    }
    if y.len() != n {
        return Err(CliError::input(format!("{source}: X has {n} rows, y has {} values", y.len())));
    }
    if let Some(q) = qids.filter(|q| q.len() != n) {
        return Err(CliError::input(format!("{source}: X has {n} rows, qid has {} values", q.len())));
    }
    if let Some(m) = map.filter(|m| m.input_dim != d) {
        return Err(CliError::input(format!(
            "{source}: X has {d} feature columns, but the landmarks have {} features ({})",
            m.input_dim,
            m.describe()
        )));
    }
    let shape = StatsShape { d: map.map_or(d, NystromSpec::m), folds, weight: req.weight.to_core() };
    let mut shard = Shard::new(shape, req.seed, source.to_string())?;
    shard.map = map.cloned();
    let mut backend = HostBackend::new(BackendChoice::Faer);
    let mut sealer = RunSealer::new(!req.keep_queries);
    let rows = block_rows(d);
    let (mut xb, mut qb) = (Vec::with_capacity(rows.min(n) * d), Vec::with_capacity(rows.min(n)));
    for start in (0..n).step_by(rows) {
        let end = (start + rows).min(n);
        xb.clear();
        qb.clear();
        for i in start..end {
            for j in 0..d {
                let v = x(i, j);
                if !v.is_finite() {
                    return Err(CliError::input(format!("{source}: X[{i}, {j}]: non-finite feature value {v}")));
                }
                xb.push(v);
            }
            if !y[i].is_finite() {
                return Err(CliError::input(format!("{source}: y[{i}]: non-finite label {}", y[i])));
            }
            let q = match qids.map(|q| q[i]) {
                None => 0,
                Some(q) => u64::try_from(q)
                    .map_err(|_| CliError::input(format!("{source}: qid[{i}]: negative query id {q}")))?,
            };
            qb.push(q);
            sealer.row(q).map_err(|q| {
                CliError::input(format!(
                    "{source}: row {i}: rows of qid {q} resume after other queries' rows; statistics seal \
                     each query when its rows end: put each query's rows together, or keep every query's \
                     partial sums (keep_queries)"
                ))
            })?;
        }
        let err = |e| CliError::input(format!("{source}: {e}"));
        shard.add_rows(&mut backend, &xb, &y[start..end], &qb).map_err(err)?;
        sealer.seal_ended(&mut shard).map_err(err)?;
    }
    shard.finish();
    shard.to_bytes()
}

/// Merges shards (bytes, and a name for errors) into one, in order:
/// shards of another dimension, weighting, fold count or seed are refused
/// naming both, as `ranklet train --from-stats` refuses them.
pub fn merge_stats(parts: &[(&[u8], &str)]) -> Result<Vec<u8>, CliError> {
    let mut it = parts.iter();
    let (b, name) = it.next().ok_or_else(|| CliError::input("nothing to merge: no statistics"))?;
    let mut all = Shard::from_bytes(b, name.to_string())?;
    for (b, name) in it {
        all.merge(&Shard::from_bytes(b, name.to_string())?)?;
    }
    all.to_bytes()
}

/// A fit from merged statistics: the model's bytes and what
/// `ranklet train --from-stats` prints.
pub struct StatsFit {
    /// The `.rkl` bytes.
    pub model: Vec<u8>,
    /// Weights, λ, sizes, CV table.
    pub fit: FromStats,
    /// The chosen λ's index in the grid.
    pub best: usize,
}

/// RLS (`ranker = false`) or RankRLS from merged statistics: every λ of
/// `lambdas`, with `cv` (the statistics' fold count) the λ of least mean
/// held-out objective; the model as `ranklet train --from-stats` writes it,
/// `source` its `training_data`, `metadata` further lines.
///
/// # Errors
/// As `ranklet train --from-stats`: a weighting or fold count other than
/// the statistics', a grid without `cv`, no rows, an empty fold, a bad λ
/// ([`CliError::input`]); a singular system ([`CliError::failure`]).
#[allow(clippy::too_many_arguments)]
pub fn fit_stats(
    stats: &[u8],
    source: &str,
    ranker: bool,
    weight: QueryWeightArg,
    lambdas: &[f64],
    cv: Option<usize>,
    element: ElementType,
    metadata: &[(String, String)],
) -> Result<StatsFit, CliError> {
    let all = Shard::from_bytes(stats, source.to_string())?;
    check_metadata(metadata)?;
    let target = if ranker { Target::RankRls } else { Target::Rls };
    let mut backend = HostBackend::new(BackendChoice::Faer);
    let fit = fit_merged(&mut backend, &all, target, weight.to_core(), lambdas, cv)?;
    let (model, _) = linear_model(&fit, ranker, lambdas, source, weight, element, metadata)?;
    let best = fit.best;
    Ok(StatsFit { model, fit, best })
}

/// The `.rkl` bytes of a linear fit from statistics, with the metadata of
/// the in-memory path (`training_data` = `source`, the CV table, the chosen
/// point, then `extra` lines), and the chosen point's description; what
/// `ranklet train --from-stats` and [`fit_stats`] write.
pub fn linear_model(
    fit: &FromStats,
    ranker: bool,
    lambdas: &[f64],
    source: &str,
    weight: QueryWeightArg,
    element: ElementType,
    extra: &[(String, String)],
) -> Result<(Vec<u8>, String), CliError> {
    let family = LeastSquares {
        ranker,
        kernels: vec![Kernel::Linear],
        lambdas: lambdas.to_vec(),
        basis: None,
        cg_note: Default::default(),
    };
    let mut meta = rows_meta(family.name(), source, fit.rows, fit.queries, weight);
    meta.push_str(&fit.cv_meta());
    let chosen = push_chosen(&mut meta, &family, &LsPoint { kernel: Kernel::Linear, lambda: fit.lambda });
    for (k, v) in extra {
        meta.push_str(&format!("{k}={v}\n"));
    }
    let model = model_bytes(&Fitted::Linear { w: fit.w.clone(), offset: 0.0 }, fit.d, element, &meta, None)?;
    Ok((model, chosen))
}

/// Landmarks chosen from sample rows in memory (`n × p` row-major) — the
/// pivoted Cholesky `ranklet stats --kernel K --basis M` runs on its sample
/// ([`NystromSpec::from_sample`]) — as the bytes of a `.rks` without rows,
/// which `ranklet stats --landmarks` reads and [`stats_of_rows`] takes
/// (through [`crate::family::nystrom_stats::map_from_bytes`]).
///
/// # Errors
/// As [`NystromSpec::from_sample`].
pub fn landmarks_of_rows(kernel: Kernel, sample: &[f64], p: usize, m: usize) -> Result<Vec<u8>, CliError> {
    if m == 0 || p == 0 || sample.len() % p != 0 {
        return Err(CliError::input(format!(
            "landmarks: {} values are not rows of {p} features, or M = {m} (at least 1)",
            sample.len()
        )));
    }
    if let Some(i) = sample.iter().position(|v| !v.is_finite()) {
        return Err(CliError::input(format!(
            "landmark sample: row {}, column {}: non-finite feature value {}",
            i / p,
            i % p,
            sample[i]
        )));
    }
    NystromSpec::from_sample(kernel, sample, p, m)?.to_rks_bytes()
}

/// The name of a Nyström learner (`--algo`).
pub fn nystrom_algo_name(algo: NystromAlgo) -> &'static str {
    match algo {
        NystromAlgo::Ls(Target::Rls) => "rls",
        NystromAlgo::Ls(Target::RankRls) => "rankrls",
        NystromAlgo::Kpc(Target::Rls) => "kpcr",
        NystromAlgo::Kpc(Target::RankRls) => "kpcrank",
    }
}

/// The reduced-basis kernel model of merged Nyström statistics `merged`
/// (`ranklet train --from-stats` on Nyström `.rks` files, and the Dask
/// layer's KPCRank): the checks (Nyström statistics, their weighting),
/// [`fit_nystrom`] over the grid, and the model's bytes with its metadata
/// (`training_data` = `source`, the map, the chosen point, the CV table,
/// then `extra` lines). Returns the bytes, the fit and the chosen point's
/// description.
///
/// # Errors
/// Linear statistics, another weighting than `weight` (RankRLS, KPCRank),
/// and [`fit_nystrom`]'s.
#[allow(clippy::too_many_arguments)]
pub fn nystrom_model<B: ranklet_core::backend::Backend>(
    backend: &mut B,
    merged: &Shard,
    algo: NystromAlgo,
    weight: QueryWeightArg,
    lambdas: &[f64],
    components: &[usize],
    cv: Option<usize>,
    source: &str,
    element: ElementType,
    extra: &[(String, String)],
) -> Result<(Vec<u8>, NystromFit, String), CliError> {
    let Some(map) = merged.map.as_ref() else {
        return Err(CliError::input(format!(
            "{}: linear statistics: --algo kpcr/kpcrank from statistics needs Nyström ones (`ranklet stats --kernel K --basis M`)",
            merged.source
        )));
    };
    let target = match algo {
        NystromAlgo::Ls(t) | NystromAlgo::Kpc(t) => t,
    };
    if target == Target::RankRls && merged.shape.weight != weight.to_core() {
        return Err(CliError::input(format!(
            "{}: statistics weighted with the other --query-weight than the {} asked",
            merged.source,
            weight.name()
        )));
    }
    check_metadata(extra)?;
    let fit = fit_nystrom(backend, merged, algo, lambdas, components, cv)?;
    let mut meta = rows_meta(nystrom_algo_name(algo), source, fit.rows, fit.queries, weight);
    meta.push_str(&format!("nystrom_map={}\nlambda={}\n", fit.map, fit.lambda));
    if let Some(p) = fit.components {
        meta.push_str(&format!("components={p}\n"));
    }
    meta.push_str(&fit.cv_meta());
    for (k, v) in extra {
        meta.push_str(&format!("{k}={v}\n"));
    }
    let chosen = format!(
        "lambda={}{} ({})",
        fit.lambda,
        fit.components.map(|p| format!(" components={p}")).unwrap_or_default(),
        fit.map
    );
    let bytes = model_bytes(&fit.fitted, map.input_dim, element, &meta, None)?;
    Ok((bytes, fit, chosen))
}

/// [`nystrom_model`] from merged statistics as `.rks` bytes, on the
/// default backend: what the Dask layer calls on the client.
///
/// # Errors
/// Invalid bytes, and [`nystrom_model`]'s.
#[allow(clippy::too_many_arguments)]
pub fn fit_nystrom_stats(
    stats: &[u8],
    source: &str,
    algo: NystromAlgo,
    weight: QueryWeightArg,
    lambdas: &[f64],
    components: &[usize],
    cv: Option<usize>,
    element: ElementType,
    extra: &[(String, String)],
) -> Result<(Vec<u8>, NystromFit, String), CliError> {
    let all = Shard::from_bytes(stats, source.to_string())?;
    let mut backend = HostBackend::new(BackendChoice::Faer);
    nystrom_model(&mut backend, &all, algo, weight, lambdas, components, cv, source, element, extra)
}
