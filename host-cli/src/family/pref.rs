//! The probabilistic preference learners as the CLI drives them (papers
//! 000 §5 and 001): `--algo pref-gp | xpgp | diff-gp` on preferences between
//! items given by id (`--prefs`), with the items' attributes (`--items`, or
//! the rows of `--data`) and, for xpgp, relations between the items
//! (`--relation`, `--relation-groups`).
//!
//! | `--algo` | likelihood | prior covariance |
//! |---|---|---|
//! | pref-gp | probit `Φ((f_w − f_l)/(√2·σ))` (000 eq. 10, 001 §3.2), EP | `K_attr` (001 eq. 1) |
//! | xpgp | the same | `a·K_attr + Σ_r b_r·K_rel,r` (001 eq. 5; `K_rel,r` the regularised Laplacian of relation r, eq. 2) |
//! | diff-gp | Gaussian on `s_a − s_b` (000 §5, last part), exact | `K_attr` |
//!
//! **Not a [`Family`](super::Family)**: that trait's hooks fit rows under a
//! λ grid chosen by cross-validation; a preference GP has no grid (its
//! hyperparameters are fitted by the evidence with `--kernel rbf:auto`, or
//! fixed with `rbf:G`) and its data are items and judgements between them.
//! This module is its sibling driver: reading and checking the data
//! ([`PrefData`]), the evaluation metrics on held-out judgements
//! ([`PrefMetric`]), and the hooks into core's learner
//! (`ranklet_core::learn::pref`) and the model kinds of the format.
//!
//! Ties: pref-gp and xpgp drop `a b tie` lines (the probit likelihood has
//! no tie outcome) and say how many on stderr; diff-gp keeps a tie as the
//! observed difference 0.

use std::path::Path;

use ranklet_core::backend::Backend;
use ranklet_core::format::ElementType;
use ranklet_core::kernel::Kernel;
use ranklet_core::metrics;

use crate::args::KernelArg;
use crate::data::prefs::{read_groups, read_prefs, read_relation, Binary, Prefs, Relation};
use crate::data::{read_node_features, NodeFeatureOptions};
use crate::error::CliError;
use crate::input::DataArgs;

/// The preference learners.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrefAlgo {
    /// Probit pairwise GP on the attributes, EP (000 §5, eq. 10).
    PrefGp,
    /// Probit pairwise GP on attributes and relations (001, XPGP).
    Xpgp,
    /// Gaussian likelihood on score differences, exact (000 §5).
    DiffGp,
}

impl PrefAlgo {
    /// The `--algo` name.
    pub fn name(self) -> &'static str {
        match self {
            PrefAlgo::PrefGp => "pref-gp",
            PrefAlgo::Xpgp => "xpgp",
            PrefAlgo::DiffGp => "diff-gp",
        }
    }
    /// From the `--algo` (and model metadata) name.
    pub fn from_name(s: &str) -> Option<PrefAlgo> {
        match s {
            "pref-gp" => Some(PrefAlgo::PrefGp),
            "xpgp" => Some(PrefAlgo::Xpgp),
            "diff-gp" => Some(PrefAlgo::DiffGp),
            _ => None,
        }
    }
}

/// `--kernel` of the preference GPs: the RBF kernel of 001 eq. 1, its
/// width fitted by the evidence (`rbf:auto`, the default) or given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PrefKernel {
    /// γ (and the other hyperparameters) fitted.
    Auto,
    /// `exp(−γ‖x − x'‖²)` with this γ; the other hyperparameters fitted.
    Rbf(f64),
}

impl PrefKernel {
    /// From `train --kernel` (absent: `rbf:auto`).
    ///
    /// # Errors
    /// A grid, or a kernel other than RBF.
    pub fn from_arg(k: Option<&KernelArg>) -> Result<PrefKernel, CliError> {
        match k {
            None | Some(KernelArg::RbfAuto) => Ok(PrefKernel::Auto),
            Some(KernelArg::List(l)) => match l.0[..] {
                [Kernel::Rbf { gamma }] => Ok(PrefKernel::Rbf(gamma)),
                _ => Err(CliError::input("--kernel: the preference GPs take one RBF kernel, rbf:G or rbf:auto")),
            },
        }
    }
}

/// Largest dense attribute matrix read (elements).
const MAX_DENSE: usize = 1 << 27;

/// Items: ids and dense attributes, row-major `n × d`.
#[derive(Clone, Debug)]
pub struct PrefItems {
    /// Ids, in file order.
    pub ids: Vec<String>,
    /// Attribute dimension.
    pub d: usize,
    /// Attributes, row-major.
    pub x: Vec<f64>,
    /// The file they came from.
    pub source: String,
}

impl PrefItems {
    /// Reads `--items` (node features: CSV with an `id` column, or `id i:v
    /// …` lines) or the rows of `--data` (ids `"0"`, `"1"`, …).
    ///
    /// # Errors
    /// The readers' errors (file and line); no items file given; too many
    /// attributes to hold densely.
    pub fn read(data: &DataArgs) -> Result<PrefItems, CliError> {
        if let Some(path) = &data.orders.items {
            let f = read_node_features(path, &NodeFeatureOptions { num_features: data.rows.num_features })?;
            let x = f.to_dense(MAX_DENSE).ok_or_else(|| {
                CliError::input(format!(
                    "{}: {} items × {} attributes is too large",
                    path.display(),
                    f.len(),
                    f.n_features()
                ))
            })?;
            return Ok(PrefItems { ids: f.ids().to_vec(), d: f.n_features(), x, source: path.display().to_string() });
        }
        let path =
            data.rows.path().map_err(|_| CliError::input("--prefs needs the items: --items FILE or --data FILE"))?;
        let ds = data.rows.read(None)?;
        let x = ds.to_dense(MAX_DENSE).ok_or_else(|| {
            CliError::input(format!(
                "{}: {} rows × {} features is too large",
                path.display(),
                ds.n_rows(),
                ds.n_features()
            ))
        })?;
        let ids = (0..ds.n_rows()).map(|i| i.to_string()).collect();
        Ok(PrefItems { ids, d: ds.n_features(), x, source: path.display().to_string() })
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Never empty when read.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Attributes of item `i`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.d..(i + 1) * self.d]
    }
}

/// The observations a learner takes.
#[derive(Clone, Debug)]
pub enum Observations {
    /// `(winner, loser)` pairs (pref-gp, xpgp).
    Binary(Binary),
    /// `(a, b, s_a − s_b)` (diff-gp).
    Differences(Vec<(usize, usize, f64)>),
}

impl Observations {
    /// Number of observations used.
    pub fn len(&self) -> usize {
        match self {
            Observations::Binary(b) => b.pairs.len(),
            Observations::Differences(d) => d.len(),
        }
    }
    /// `true` without observations.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Items, judgements and relations, read and checked.
#[derive(Clone, Debug)]
pub struct PrefData {
    /// The items.
    pub items: PrefItems,
    /// The judgements as read.
    pub prefs: Prefs,
    /// The judgements as the learner takes them.
    pub obs: Observations,
    /// The relations (xpgp), `--relation` files first, then the projected
    /// `--relation-groups`.
    pub relations: Vec<Relation>,
}

impl PrefData {
    /// Reads the items, the preferences and the relations for `algo`.
    /// Relations are refused for pref-gp and diff-gp and required for xpgp;
    /// a tie count is printed to stderr when ties are dropped.
    ///
    /// # Errors
    /// Every reader error (file and line: unknown ids, self-preferences,
    /// edges to unknown items, non-finite or negative weights); diff-gp
    /// given a bare preference; no preference left after dropping ties.
    pub fn read(data: &DataArgs, algo: PrefAlgo) -> Result<PrefData, CliError> {
        let p = &data.prefs;
        let prefs_path = p.prefs.as_deref().ok_or_else(|| CliError::input("--prefs is required"))?;
        let n_rel = p.relation.len() + p.relation_groups.len();
        match algo {
            PrefAlgo::Xpgp if n_rel == 0 => {
                return Err(CliError::input("--algo xpgp needs at least one --relation or --relation-groups"))
            }
            PrefAlgo::PrefGp | PrefAlgo::DiffGp if n_rel > 0 => {
                return Err(CliError::input(format!(
                    "--algo {}: relations (--relation, --relation-groups) are used by xpgp only",
                    algo.name()
                )))
            }
            _ => {}
        }
        let items = PrefItems::read(data)?;
        let prefs = read_prefs(prefs_path, &items.ids)?;
        let mut relations = Vec::with_capacity(n_rel);
        for r in &p.relation {
            relations.push(read_relation(r, &items.ids)?);
        }
        for g in &p.relation_groups {
            relations.push(read_groups(g, &items.ids)?);
        }
        let obs = observations(&prefs, algo, prefs_path)?;
        Ok(PrefData { items, prefs, obs, relations })
    }
}

/// The observations of `prefs` for `algo`, with the tie note.
pub fn observations(prefs: &Prefs, algo: PrefAlgo, path: &Path) -> Result<Observations, CliError> {
    if algo == PrefAlgo::DiffGp {
        return Ok(Observations::Differences(prefs.differences()?));
    }
    let bin = prefs.binary();
    if bin.ties_dropped > 0 {
        eprintln!(
            "ranklet: note: {}: {} ties dropped ({} preferences kept); the probit likelihood has no tie outcome",
            path.display(),
            bin.ties_dropped,
            bin.pairs.len()
        );
    }
    if bin.pairs.is_empty() {
        return Err(CliError::input(format!("{}: no strict preference (every line is a tie)", path.display())));
    }
    Ok(Observations::Binary(bin))
}

/// Fits `algo` on `data` and encodes the model file; returns its bytes and
/// a summary for stderr (hyperparameters, evidence).
///
/// # Errors
/// Numerical failure of the fit ([`CliError::failure`]).
pub fn train<B: Backend>(
    backend: &mut B,
    algo: PrefAlgo,
    kernel: PrefKernel,
    data: &PrefData,
    element: ElementType,
) -> Result<(Vec<u8>, String), CliError> {
    let _ = (backend, algo, kernel, data, element);
    Err(CliError::failure("the preference GP learners are not wired into this build yet"))
}

/// A metric on held-out judgements `w ≻ l` (ties dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrefMetric {
    /// Fraction of judgements whose posterior means are ordered wrongly
    /// (equal means count ½), the "error rate" of 001 §6 and the pair error
    /// of 000 §6.2.
    PairError,
    /// AUC of the predicted probabilities: each judgement once as it was
    /// observed (positive, score `P(w ≻ l)`) and once reversed (negative,
    /// score `P(l ≻ w)`); the Mann–Whitney statistic of the two sets.
    Auc,
    /// Mean negative log predictive probability `−log P(w ≻ l)`.
    LogLoss,
}

impl PrefMetric {
    /// Parses `pairerror`, `auc`, `logloss`.
    pub fn parse(s: &str) -> Result<PrefMetric, CliError> {
        match s.trim() {
            "pairerror" => Ok(PrefMetric::PairError),
            "auc" => Ok(PrefMetric::Auc),
            "logloss" => Ok(PrefMetric::LogLoss),
            other => Err(CliError::input(format!(
                "--metric: '{other}' does not apply to preferences (pairerror, auc, logloss)"
            ))),
        }
    }

    /// The name as printed.
    pub fn name(self) -> &'static str {
        match self {
            PrefMetric::PairError => "pairerror",
            PrefMetric::Auc => "auc",
            PrefMetric::LogLoss => "logloss",
        }
    }

    /// The metric of `pairs` (winner, loser) given each item's posterior
    /// mean `mean` and, per pair, the predictive `P(w ≻ l)` and its
    /// logarithm (computed by core, stable in the tails).
    ///
    /// # Errors
    /// No pairs, or a non-finite input (core's metric errors).
    pub fn eval(self, mean: &[f64], pairs: &[(usize, usize)], prob: &[f64], log_prob: &[f64]) -> Result<f64, CliError> {
        let err = |e: metrics::MetricError| CliError::failure(format!("{}: {e}", self.name()));
        if pairs.is_empty() {
            return Err(CliError::input(format!("{}: no held-out preference", self.name())));
        }
        match self {
            PrefMetric::PairError => metrics::pair_error(mean, pairs, None).map_err(err),
            PrefMetric::Auc => {
                let m = prob.len();
                let labels: Vec<f64> = (0..2 * m).map(|k| if k < m { 1.0 } else { 0.0 }).collect();
                let scores: Vec<f64> = prob.iter().copied().chain(prob.iter().map(|p| 1.0 - p)).collect();
                let mut work = vec![0usize; metrics::index_workspace_len(2 * m)];
                metrics::auc(&labels, &scores, 0.5, &mut work).map_err(err)
            }
            PrefMetric::LogLoss => {
                if let Some(v) = log_prob.iter().find(|v| !v.is_finite()) {
                    return Err(CliError::failure(format!("logloss: a log probability of {v}")));
                }
                Ok(-log_prob.iter().sum::<f64>() / log_prob.len() as f64)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_on_a_small_case_by_hand() {
        // Items 0..3 with means 3, 2, 1; pairs 0≻1 (right), 2≻1 (wrong),
        // 0≻2 (right).
        let mean = [3.0, 2.0, 1.0];
        let pairs = [(0, 1), (2, 1), (0, 2)];
        let prob = [0.9, 0.3, 0.6];
        let logp: Vec<f64> = prob.iter().map(|p: &f64| p.ln()).collect();
        let e = PrefMetric::PairError.eval(&mean, &pairs, &prob, &logp).unwrap();
        assert!((e - 1.0 / 3.0).abs() < 1e-15);
        // Positives {0.9, 0.3, 0.6}, negatives {0.1, 0.7, 0.4}: of the 9
        // (pos, neg) comparisons, 0.9 beats 3, 0.6 beats 2 (0.1, 0.4), 0.3
        // beats 1 (0.1): 6/9.
        let auc = PrefMetric::Auc.eval(&mean, &pairs, &prob, &logp).unwrap();
        assert!((auc - 6.0 / 9.0).abs() < 1e-15, "{auc}");
        let ll = PrefMetric::LogLoss.eval(&mean, &pairs, &prob, &logp).unwrap();
        let want = -(0.9f64.ln() + 0.3f64.ln() + 0.6f64.ln()) / 3.0;
        assert!((ll - want).abs() < 1e-15);
        assert!(PrefMetric::parse("ndcg").is_err());
        assert_eq!(PrefMetric::parse(" auc").unwrap(), PrefMetric::Auc);
    }
}
