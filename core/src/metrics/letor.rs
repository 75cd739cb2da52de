//! Ranking metrics with LETOR conventions: NDCG@k and MAP.

use super::{
    check_boundaries, check_finite, check_len, check_workspace, index_workspace_len, MeanAcc, MetricError, QueryMean,
};
use crate::sort::merge_sort_by;

/// Gain of a relevance label in DCG.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Gain {
    /// `2^label − 1` (LETOR, Järvelin–Kekäläinen as used in web search).
    #[default]
    Exponential,
    /// `label`.
    Linear,
}

impl Gain {
    fn of(self, label: f64) -> f64 {
        match self {
            Gain::Exponential => libm::exp2(label) - 1.0,
            Gain::Linear => label,
        }
    }
}

/// What NDCG a query gets when its ideal DCG is 0 (every label in it is 0, or
/// the query is empty).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdcgZero {
    /// The query scores 0 (the default).
    #[default]
    Zero,
    /// The query scores 1 (no ranking can be wrong).
    One,
    /// The query is left out of the mean and counted in
    /// [`QueryMean::queries_skipped`].
    Skip,
}

/// Parameters of [`ndcg`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NdcgParams {
    /// Cutoff: only the top `k` positions count. Must be ≥ 1; a query with fewer
    /// than `k` rows is evaluated whole.
    pub k: usize,
    /// Gain of a label. Default [`Gain::Exponential`].
    pub gain: Gain,
    /// Value of a query with ideal DCG 0. Default [`IdcgZero::Zero`].
    pub idcg_zero: IdcgZero,
}

impl NdcgParams {
    /// NDCG@`k` with exponential gain and [`IdcgZero::Zero`].
    pub const fn at(k: usize) -> Self {
        NdcgParams { k, gain: Gain::Exponential, idcg_zero: IdcgZero::Zero }
    }

    /// The same parameters with another gain.
    pub const fn with_gain(mut self, gain: Gain) -> Self {
        self.gain = gain;
        self
    }

    /// The same parameters with another rule for queries with ideal DCG 0.
    pub const fn with_idcg_zero(mut self, idcg_zero: IdcgZero) -> Self {
        self.idcg_zero = idcg_zero;
        self
    }
}

/// Sorts `idx[..m]` (row offsets within a query) by prediction, best first,
/// ties by input order.
fn rank_by_prediction(preds: &[f64], work: &mut [usize]) {
    let m = preds.len();
    let (idx, buf) = work.split_at_mut(m);
    for (k, slot) in idx.iter_mut().enumerate() {
        *slot = k;
    }
    merge_sort_by(idx, &mut buf[..m], |a, b| preds[a] > preds[b]);
}

/// Normalised discounted cumulative gain at `k`, averaged over queries.
///
/// Within each query the rows are ranked by decreasing prediction; rows with
/// equal predictions keep their input order (a stable sort), so the result is
/// deterministic and does not depend on how a sort breaks ties. With `r_1, r_2,
/// …` the labels in that ranking and `K = min(k, m)` for a query of `m` rows,
///
/// ```text
/// DCG@k  = Σ_{p=1..K} gain(r_p) / log2(1 + p)
/// NDCG@k = DCG@k / IDCG@k
/// ```
///
/// where IDCG@k is the DCG@k of the rows sorted by decreasing label. The gain is
/// `2^label − 1` by default ([`Gain`]). A query whose IDCG is 0 (all labels 0,
/// or no rows) gets the value chosen by [`IdcgZero`]. The result is the
/// unweighted mean over the used queries.
///
/// This is the formula of the LETOR evaluation tools; it differs from
/// `sklearn.metrics.ndcg_score`, which averages over all orderings of tied
/// predictions instead of using input order.
///
/// Cost: O(m log m) per query of `m` rows.
///
/// # Arguments
///
/// - `labels`: relevance grades, finite and `≥ 0`.
/// - `preds`: finite scores, one per row.
/// - `query_ptr`: CSR query boundaries (see the [module docs](super)).
/// - `params`: cutoff, gain and IDCG-zero rule.
/// - `work`: at least [`index_workspace_len`]`(largest query)` elements.
///
/// # Errors
///
/// [`MetricError::ZeroK`], [`MetricError::LengthMismatch`],
/// [`MetricError::InvalidBoundaries`], [`MetricError::NonFinite`],
/// [`MetricError::InvalidLabel`] for a negative label,
/// [`MetricError::WorkspaceTooSmall`], [`MetricError::Overflow`] when a gain
/// or DCG overflows (exponential gain with labels above about 1023), and
/// [`MetricError::Undefined`] when every query is skipped.
pub fn ndcg(
    labels: &[f64],
    preds: &[f64],
    query_ptr: &[usize],
    params: &NdcgParams,
    work: &mut [usize],
) -> Result<QueryMean, MetricError> {
    if params.k == 0 {
        return Err(MetricError::ZeroK);
    }
    check_len(labels.len(), preds.len())?;
    let max = check_boundaries(query_ptr, labels.len())?;
    check_finite(labels)?;
    check_finite(preds)?;
    if let Some(index) = labels.iter().position(|&l| l < 0.0) {
        return Err(MetricError::InvalidLabel { index });
    }
    check_workspace(index_workspace_len(max), work.len())?;
    let mut acc = MeanAcc::default();
    for q in query_ptr.windows(2) {
        let (l, p) = (&labels[q[0]..q[1]], &preds[q[0]..q[1]]);
        let m = l.len();
        let top = params.k.min(m);
        rank_by_prediction(p, work);
        let actual = dcg(l, &work[..top], params.gain);
        rank_by_prediction(l, work);
        let ideal = dcg(l, &work[..top], params.gain);
        if !(actual.is_finite() && ideal.is_finite()) {
            return Err(MetricError::Overflow);
        }
        let v = if ideal > 0.0 {
            Some((actual / ideal).clamp(0.0, 1.0))
        } else {
            match params.idcg_zero {
                IdcgZero::Zero => Some(0.0),
                IdcgZero::One => Some(1.0),
                IdcgZero::Skip => None,
            }
        };
        acc.push(v);
    }
    acc.finish()
}

/// `Σ_p gain(labels[ranked[p]]) / log2(p + 2)` over 0-based positions `p`.
fn dcg(labels: &[f64], ranked: &[usize], gain: Gain) -> f64 {
    ranked.iter().enumerate().map(|(p, &i)| gain.of(labels[i]) / libm::log2(p as f64 + 2.0)).sum()
}

/// What average precision a query gets when it has no relevant row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoRelevant {
    /// The query scores 0 (LETOR convention; the default).
    #[default]
    Zero,
    /// The query scores 1.
    One,
    /// The query is left out of the mean and counted in
    /// [`QueryMean::queries_skipped`].
    Skip,
}

/// Parameters of [`mean_average_precision`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct MapParams {
    /// A row is relevant when `label > threshold`. Default `0.0` (LETOR: any
    /// positive grade is relevant).
    pub threshold: f64,
    /// Value of a query with no relevant row. Default [`NoRelevant::Zero`].
    pub no_relevant: NoRelevant,
}

impl Default for MapParams {
    fn default() -> Self {
        MapParams { threshold: 0.0, no_relevant: NoRelevant::Zero }
    }
}

impl MapParams {
    /// The same parameters with another relevance threshold.
    pub const fn with_threshold(mut self, threshold: f64) -> Self {
        self.threshold = threshold;
        self
    }

    /// The same parameters with another rule for queries without relevant rows.
    pub const fn with_no_relevant(mut self, no_relevant: NoRelevant) -> Self {
        self.no_relevant = no_relevant;
        self
    }
}

/// Mean average precision over queries (LETOR conventions).
///
/// Within each query the rows are ranked by decreasing prediction, ties by
/// input order (as in [`ndcg`]). A row is relevant when
/// `label > params.threshold`. With `R` relevant rows in the query and
/// `prec@p` the fraction of relevant rows among the top `p`,
///
/// ```text
/// AP = (1/R) Σ_{p : row at p is relevant} prec@p
/// ```
///
/// over the whole ranking (no cutoff). A query with `R = 0` (including an
/// empty query) gets the value chosen by [`NoRelevant`] (LETOR: 0). MAP is the
/// unweighted mean of AP over the used queries.
///
/// Cost: O(m log m) per query of `m` rows.
///
/// # Errors
///
/// [`MetricError::InvalidThreshold`], [`MetricError::LengthMismatch`],
/// [`MetricError::InvalidBoundaries`], [`MetricError::NonFinite`],
/// [`MetricError::WorkspaceTooSmall`] (needs [`index_workspace_len`]`(largest
/// query)`), and [`MetricError::Undefined`] when every query is skipped.
pub fn mean_average_precision(
    labels: &[f64],
    preds: &[f64],
    query_ptr: &[usize],
    params: &MapParams,
    work: &mut [usize],
) -> Result<QueryMean, MetricError> {
    if !params.threshold.is_finite() {
        return Err(MetricError::InvalidThreshold);
    }
    check_len(labels.len(), preds.len())?;
    let max = check_boundaries(query_ptr, labels.len())?;
    check_finite(labels)?;
    check_finite(preds)?;
    check_workspace(index_workspace_len(max), work.len())?;
    let mut acc = MeanAcc::default();
    for q in query_ptr.windows(2) {
        let (l, p) = (&labels[q[0]..q[1]], &preds[q[0]..q[1]]);
        rank_by_prediction(p, work);
        let (mut hits, mut sum) = (0usize, 0.0f64);
        for (pos, &i) in work[..l.len()].iter().enumerate() {
            if l[i] > params.threshold {
                hits += 1;
                sum += hits as f64 / (pos + 1) as f64;
            }
        }
        let v = if hits > 0 {
            Some(sum / hits as f64)
        } else {
            match params.no_relevant {
                NoRelevant::Zero => Some(0.0),
                NoRelevant::One => Some(1.0),
                NoRelevant::Skip => None,
            }
        };
        acc.push(v);
    }
    acc.finish()
}
