//! Metric names on the command line and their evaluation through
//! `ranklet_core::metrics`.

use ranklet_core::graph::Pair;
use ranklet_core::metrics::{self, Correlation, IdcgZero, MapParams, NdcgParams};

use crate::error::CliError;

/// Every metric name `--metric` takes, as a literal (for `concat!` in
/// `--help` texts and for messages): one list, wherever `--metric` is.
#[macro_export]
macro_rules! metric_names {
    () => {
        "disagreement, cindex, kendall, spearman, auc[:T], ndcg[@K], map, pairerror, condrankloss, logloss"
    };
}

/// A metric the CLI can report or select hyperparameters by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Metric {
    /// Normalised pairwise disagreement per query, averaged (000 eq. 4).
    Disagreement,
    /// Concordance index per query, averaged.
    Cindex,
    /// Kendall τ-b per query, averaged.
    Kendall,
    /// Spearman ρ per query, averaged.
    Spearman,
    /// AUC of `label > threshold` over all rows.
    Auc(f64),
    /// NDCG@k per query (`k = usize::MAX`: whole query), LETOR conventions.
    Ndcg(usize),
    /// Mean average precision (relevant: label > 0).
    Map,
    /// Fraction of explicit pairs ordered wrongly (ties ½).
    PairError,
    /// Mean negative log predictive probability of held-out preferences
    /// (preference GPs with `--prefs` only; see `family::pref::PrefMetric`).
    LogLoss,
    /// Conditional rank loss (004 eq. 4) per conditioning node, averaged:
    /// on edges the per-node disagreement; on rows the same as
    /// `disagreement` (a query is the conditioning node).
    CondRankLoss,
}

impl Metric {
    /// Parses one of [`metric_names!`].
    pub fn parse(s: &str) -> Result<Metric, CliError> {
        let s = s.trim();
        let bad = || CliError::input(format!("unknown metric '{s}' (known: {}; e.g. ndcg@10)", crate::metric_names!()));
        Ok(match s {
            "disagreement" => Metric::Disagreement,
            "cindex" => Metric::Cindex,
            "kendall" => Metric::Kendall,
            "spearman" => Metric::Spearman,
            "auc" => Metric::Auc(0.0),
            "ndcg" => Metric::Ndcg(usize::MAX),
            "map" => Metric::Map,
            "pairerror" => Metric::PairError,
            "condrankloss" => Metric::CondRankLoss,
            "logloss" => Metric::LogLoss,
            _ => {
                if let Some(t) = s.strip_prefix("auc:") {
                    Metric::Auc(t.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(bad)?)
                } else if let Some(k) = s.strip_prefix("ndcg@") {
                    Metric::Ndcg(k.parse::<usize>().ok().filter(|&k| k > 0).ok_or_else(bad)?)
                } else {
                    return Err(bad());
                }
            }
        })
    }

    /// Parses a comma list.
    pub fn parse_list(s: &str) -> Result<Vec<Metric>, CliError> {
        s.split(',').filter(|t| !t.trim().is_empty()).map(Metric::parse).collect()
    }

    /// The rank correlation behind `kendall` (τ-b) and `spearman` (ρ), the
    /// metrics that apply to sample orders as well as to labelled rows.
    pub fn correlation(self) -> Option<Correlation> {
        match self {
            Metric::Kendall => Some(Correlation::KendallTauB),
            Metric::Spearman => Some(Correlation::SpearmanRho),
            _ => None,
        }
    }

    /// Whether larger values are better (false for the error metrics).
    pub fn higher_is_better(self) -> bool {
        !matches!(self, Metric::Disagreement | Metric::PairError | Metric::CondRankLoss | Metric::LogLoss)
    }

    /// The name as printed.
    pub fn name(self) -> String {
        match self {
            Metric::Disagreement => "disagreement".into(),
            Metric::Cindex => "cindex".into(),
            Metric::Kendall => "kendall".into(),
            Metric::Spearman => "spearman".into(),
            Metric::Auc(0.0) => "auc".into(),
            Metric::Auc(t) => format!("auc:{t}"),
            Metric::Ndcg(usize::MAX) => "ndcg".into(),
            Metric::Ndcg(k) => format!("ndcg@{k}"),
            Metric::Map => "map".into(),
            Metric::PairError => "pairerror".into(),
            Metric::CondRankLoss => "condrankloss".into(),
            Metric::LogLoss => "logloss".into(),
        }
    }

    /// Evaluates on scored rows grouped by `query_ptr`; where the metric is
    /// undefined, the error says why ([`why_undefined`]).
    pub fn eval_labels(self, labels: &[f64], preds: &[f64], query_ptr: &[usize]) -> Result<f64, CliError> {
        let n = labels.len();
        let mut work = vec![0usize; metrics::index_workspace_len(n)];
        let err = |e: metrics::MetricError| match e {
            metrics::MetricError::Undefined => CliError::failure(format!(
                "{}: undefined here: {}",
                self.name(),
                why_undefined(labels, preds, query_ptr)
            )),
            e => CliError::failure(format!("{}: {e}", self.name())),
        };
        match self {
            Metric::Disagreement | Metric::CondRankLoss => {
                metrics::disagreement(labels, preds, query_ptr, &mut work).map(|q| q.value).map_err(err)
            }
            Metric::Cindex => {
                metrics::concordance_index_by_query(labels, preds, query_ptr, &mut work).map(|q| q.value).map_err(err)
            }
            Metric::Kendall | Metric::Spearman => {
                // Per query, queries of constant labels skipped (as the
                // pairwise metrics skip them), averaged in core.
                let method = self.correlation().unwrap_or(Correlation::KendallTauB);
                let mut fwork = vec![0.0; metrics::real_workspace_len(n)];
                metrics::correlation_by_query(labels, preds, query_ptr, method, &mut work, &mut fwork)
                    .map(|q| q.value)
                    .map_err(err)
            }
            Metric::Auc(t) => metrics::auc(labels, preds, t, &mut work).map_err(err),
            Metric::Ndcg(k) => {
                let params = NdcgParams::at(k.min(n.max(1))).with_idcg_zero(IdcgZero::One);
                metrics::ndcg(labels, preds, query_ptr, &params, &mut work).map(|q| q.value).map_err(err)
            }
            Metric::Map => metrics::mean_average_precision(labels, preds, query_ptr, &MapParams::default(), &mut work)
                .map(|q| q.value)
                .map_err(err),
            Metric::PairError => Err(CliError::input("pairerror needs --pairs")),
            Metric::LogLoss => Err(CliError::input("logloss needs a preference-GP model and --prefs")),
        }
    }

    /// Evaluates on explicit pairs (only `pairerror` is defined there).
    pub fn eval_pairs(self, preds: &[f64], pairs: &[Pair]) -> Result<f64, CliError> {
        if self != Metric::PairError {
            return Err(CliError::input(format!("with --pairs the only metric is pairerror, not {}", self.name())));
        }
        let idx: Vec<(usize, usize)> = pairs.iter().map(|p| (p.winner, p.loser)).collect();
        metrics::pair_error(preds, &idx, None).map_err(|e| CliError::failure(format!("pairerror: {e}")))
    }
}

/// Why a ranking metric has nothing to measure on these rows, in the
/// user's terms: too few rows, every score equal (often a model scored on
/// data unlike its training data), a single label, no query with two
/// distinct labels, or no such query whose scores differ.
pub fn why_undefined(labels: &[f64], preds: &[f64], query_ptr: &[usize]) -> String {
    let n = labels.len().min(preds.len());
    let distinct = |v: &[f64]| v.iter().any(|x| x != &v[0]);
    if n < 2 {
        return format!("{n} row(s); a ranking metric needs at least two rows with different labels");
    }
    if !distinct(&preds[..n]) {
        return format!(
            "all {n} scores are equal ({}): the model tells no row from another; check that the data has the \
             features the model was trained on (same format, indices and width)",
            preds[0]
        );
    }
    if !distinct(&labels[..n]) {
        return format!("every row has the label {}: there is no pair of rows to order", labels[0]);
    }
    let queries = query_ptr.windows(2).filter(|w| w[1] <= n && w[0] < w[1]);
    let mut with_pairs = queries.clone().filter(|w| distinct(&labels[w[0]..w[1]]));
    if with_pairs.clone().next().is_none() {
        return format!(
            "none of the {} queries has two distinct labels: there is no pair to order within a query",
            query_ptr.len().saturating_sub(1)
        );
    }
    if with_pairs.all(|w| !distinct(&preds[w[0]..w[1]])) {
        return "in every query with two distinct labels, all scores are equal".to_owned();
    }
    "no query has two rows to compare".to_owned()
}
