//! Pairwise metrics: disagreement error, C-index, AUC, Kendall τ-b, pair error.

use super::{
    check_boundaries, check_finite, check_len, check_workspace, index_workspace_len, MeanAcc, MetricError, QueryMean,
};
use crate::sort::{pair_counts, PairCounts};

/// Validates `labels`/`preds`/`query_ptr`/`work` and returns the largest query.
fn check_query_inputs(
    labels: &[f64],
    preds: &[f64],
    query_ptr: &[usize],
    work: &[usize],
) -> Result<usize, MetricError> {
    check_len(labels.len(), preds.len())?;
    let max = check_boundaries(query_ptr, labels.len())?;
    check_finite(labels)?;
    check_finite(preds)?;
    check_workspace(index_workspace_len(max), work.len())?;
    Ok(max)
}

/// Pair counts of (label, prediction) over rows `s..e`.
fn query_counts(labels: &[f64], preds: &[f64], s: usize, e: usize, work: &mut [usize]) -> PairCounts {
    let (l, p) = (&labels[s..e], &preds[s..e]);
    pair_counts(e - s, |i| l[i], |i| p[i], work)
}

/// `(discordant + ½·prediction-tied) / comparable`, or `None` without a
/// comparable pair.
pub(super) fn disagreement_of(c: &PairCounts) -> Option<f64> {
    let comparable = c.untied_x();
    if comparable == 0 {
        return None;
    }
    Some((2 * c.discordant + c.tied_y_only()) as f64 / (2 * comparable) as f64)
}

/// `(concordant + ½·prediction-tied) / comparable`, or `None` without a
/// comparable pair.
pub(super) fn concordance_of(c: &PairCounts) -> Option<f64> {
    let comparable = c.untied_x();
    if comparable == 0 {
        return None;
    }
    Some((2 * c.concordant() + c.tied_y_only()) as f64 / (2 * comparable) as f64)
}

/// Normalised pairwise disagreement error (paper 000, eq. 4 normalised, §6),
/// averaged over queries.
///
/// For one query, a *comparable pair* is an unordered pair of its rows with
/// different labels; it is *discordant* if the prediction orders it the other
/// way (`labels[i] > labels[j]` but `preds[i] < preds[j]`) and *tied* if
/// `preds[i] == preds[j]`. The query's error is
///
/// ```text
/// d_q = (#discordant + ½·#tied) / #comparable            ∈ [0, 1]
/// ```
///
/// 0 is a perfect ordering, ½ a constant predictor, 1 the reverse ordering.
/// Queries with no comparable pair (all labels equal, fewer than two rows) are
/// skipped and counted in [`QueryMean::queries_skipped`]; the value is the
/// unweighted mean of `d_q` over the other queries, as in the paper's parse
/// ranking experiment ("calculated for each sentence separately and … averaged
/// over all sentences").
///
/// Paper 000 writes eq. 4 with `sign(0) = −1`, which would also charge
/// label-tied pairs with distinct predictions; like RankRLS practice, this
/// normalised version counts only pairs with distinct labels and charges a
/// prediction tie half a disagreement. For one query it equals
/// `1 − `[`concordance_index`].
///
/// Cost: O(m log m) per query of `m` rows, no allocation.
///
/// # Arguments
///
/// - `labels`, `preds`: one value per row, same length, all finite.
/// - `query_ptr`: CSR query boundaries (see the [module docs](super)).
/// - `work`: at least [`index_workspace_len`]`(largest query)` elements.
///
/// # Errors
///
/// [`MetricError::LengthMismatch`], [`MetricError::InvalidBoundaries`],
/// [`MetricError::NonFinite`], [`MetricError::WorkspaceTooSmall`], and
/// [`MetricError::Undefined`] when no query has a comparable pair.
pub fn disagreement(
    labels: &[f64],
    preds: &[f64],
    query_ptr: &[usize],
    work: &mut [usize],
) -> Result<QueryMean, MetricError> {
    check_query_inputs(labels, preds, query_ptr, work)?;
    let mut acc = MeanAcc::default();
    for q in query_ptr.windows(2) {
        let c = query_counts(labels, preds, q[0], q[1], work);
        acc.push(disagreement_of(&c));
    }
    acc.finish()
}

/// Harrell's concordance index over all rows (one query).
///
/// ```text
/// C = (#concordant + ½·#prediction-tied) / #comparable     ∈ [0, 1]
/// ```
///
/// where a comparable pair has different labels (see [`disagreement`] for the
/// terms). For a single query `C = 1 − d`. With binary labels it equals the
/// [`auc`].
///
/// Cost: O(n log n), no allocation.
///
/// # Errors
///
/// [`MetricError::LengthMismatch`], [`MetricError::NonFinite`],
/// [`MetricError::WorkspaceTooSmall`] (needs [`index_workspace_len`]`(n)`),
/// and [`MetricError::Undefined`] when all labels are equal or `n < 2`.
pub fn concordance_index(labels: &[f64], preds: &[f64], work: &mut [usize]) -> Result<f64, MetricError> {
    let ptr = [0, labels.len()];
    check_query_inputs(labels, preds, &ptr, work)?;
    let c = query_counts(labels, preds, 0, labels.len(), work);
    concordance_of(&c).ok_or(MetricError::Undefined)
}

/// The C-index ([`concordance_index`]) computed per query and averaged over the
/// queries that have a comparable pair (the others are skipped and counted).
///
/// For every query `C_q = 1 − d_q`, so the mean equals `1 − `[`disagreement`]
/// on the same input, with the same queries used and skipped.
///
/// # Errors
///
/// As [`disagreement`].
pub fn concordance_index_by_query(
    labels: &[f64],
    preds: &[f64],
    query_ptr: &[usize],
    work: &mut [usize],
) -> Result<QueryMean, MetricError> {
    check_query_inputs(labels, preds, query_ptr, work)?;
    let mut acc = MeanAcc::default();
    for q in query_ptr.windows(2) {
        let c = query_counts(labels, preds, q[0], q[1], work);
        acc.push(concordance_of(&c));
    }
    acc.finish()
}

/// Area under the ROC curve for binary relevance, over all rows (one query).
///
/// Row `i` is *positive* when `labels[i] > threshold` and *negative* otherwise;
/// for labels in `{0, 1}` pass `threshold = 0.0` (or `0.5`). The AUC is the
/// Mann–Whitney statistic
///
/// ```text
/// AUC = (#(pos, neg) with pred_pos > pred_neg + ½·#(pos, neg) with equal preds)
///       / (#pos · #neg)
/// ```
///
/// which is [`concordance_index`] of the binarised labels and equals
/// `sklearn.metrics.roc_auc_score` (trapezoidal ROC, ties ½).
///
/// Cost: O(n log n), no allocation.
///
/// # Errors
///
/// [`MetricError::InvalidThreshold`] for a non-finite threshold,
/// [`MetricError::LengthMismatch`], [`MetricError::NonFinite`],
/// [`MetricError::WorkspaceTooSmall`] (needs [`index_workspace_len`]`(n)`),
/// and [`MetricError::Undefined`] when there is no positive or no negative row.
pub fn auc(labels: &[f64], preds: &[f64], threshold: f64, work: &mut [usize]) -> Result<f64, MetricError> {
    if !threshold.is_finite() {
        return Err(MetricError::InvalidThreshold);
    }
    let ptr = [0, labels.len()];
    check_query_inputs(labels, preds, &ptr, work)?;
    let c = pair_counts(labels.len(), |i| if labels[i] > threshold { 1.0 } else { 0.0 }, |i| preds[i], work);
    concordance_of(&c).ok_or(MetricError::Undefined)
}

/// [`auc`] per query, averaged over the queries that have both a positive
/// and a negative row (the others are skipped and counted). With the edges
/// of a relational graph grouped by their conditioning node as queries, this
/// is the per-node AUC of conditional ranking (004 §6).
///
/// # Errors
/// [`MetricError::InvalidThreshold`] for a non-finite threshold; otherwise
/// as [`disagreement`] (`Undefined` when no query has both classes).
pub fn auc_by_query(
    labels: &[f64],
    preds: &[f64],
    query_ptr: &[usize],
    threshold: f64,
    work: &mut [usize],
) -> Result<QueryMean, MetricError> {
    if !threshold.is_finite() {
        return Err(MetricError::InvalidThreshold);
    }
    check_query_inputs(labels, preds, query_ptr, work)?;
    let mut acc = MeanAcc::default();
    for q in query_ptr.windows(2) {
        let (l, p) = (&labels[q[0]..q[1]], &preds[q[0]..q[1]]);
        let c = pair_counts(l.len(), |i| if l[i] > threshold { 1.0 } else { 0.0 }, |i| p[i], work);
        acc.push(concordance_of(&c));
    }
    acc.finish()
}

/// Kendall's τ-b between `x` and `y`, in O(n log n) (Knight 1966).
///
/// ```text
/// τ_b = (n_c − n_d) / sqrt((n₀ − n₁)(n₀ − n₂))
/// ```
///
/// with `n₀ = n(n−1)/2` pairs, `n_c`/`n_d` concordant/discordant pairs, `n₁`
/// pairs tied in `x`, `n₂` pairs tied in `y` (pairs tied in both count in each).
/// This is `scipy.stats.kendalltau(x, y)` (its default `variant='b'`). The
/// result is clamped to `[−1, 1]` against rounding.
///
/// # Errors
///
/// [`MetricError::LengthMismatch`], [`MetricError::NonFinite`],
/// [`MetricError::WorkspaceTooSmall`] (needs [`index_workspace_len`]`(n)`),
/// and [`MetricError::Undefined`] when `n < 2` or `x` or `y` is constant (where
/// scipy returns NaN).
pub fn kendall_tau_b(x: &[f64], y: &[f64], work: &mut [usize]) -> Result<f64, MetricError> {
    let ptr = [0, x.len()];
    check_query_inputs(x, y, &ptr, work)?;
    let c = pair_counts(x.len(), |i| x[i], |i| y[i], work);
    tau_b_of(&c).ok_or(MetricError::Undefined)
}

/// τ-b from pair counts; `None` when either vector is constant.
pub(crate) fn tau_b_of(c: &PairCounts) -> Option<f64> {
    let (ux, uy) = (c.untied_x(), c.pairs - c.tied_y);
    if ux == 0 || uy == 0 {
        return None;
    }
    let num = c.concordant() as f64 - c.discordant as f64;
    let den = libm::sqrt(ux as f64) * libm::sqrt(uy as f64);
    Some((num / den).clamp(-1.0, 1.0))
}

/// Weighted fraction of explicit preference pairs the predictions get wrong.
///
/// Each `(winner, loser)` in `pairs` says row `winner` should score above row
/// `loser`. With weights `w_p` (all 1 when `weights` is `None`; e.g. the
/// magnitudes `|s_winner − s_loser|` of score differences):
///
/// ```text
/// E = Σ_p w_p · [pred[winner] < pred[loser]] + ½·w_p · [pred[winner] == pred[loser]]
///     ───────────────────────────────────────────────────────────────────────────────
///                                      Σ_p w_p
/// ```
///
/// Duplicate and contradictory pairs are counted as given. Only the predictions
/// the pairs refer to are read. No workspace; O(#pairs).
///
/// # Errors
///
/// [`MetricError::LengthMismatch`] if `weights` is not one per pair,
/// [`MetricError::IndexOutOfRange`] for an index `≥ preds.len()`,
/// [`MetricError::NonFinite`] for a non-finite prediction that a pair refers to
/// (index into `preds`), [`MetricError::InvalidWeight`] for a negative or
/// non-finite weight, [`MetricError::Overflow`] if the weights sum past
/// `f64::MAX`, and [`MetricError::Undefined`] when there are no pairs or all
/// weights are 0.
pub fn pair_error(preds: &[f64], pairs: &[(usize, usize)], weights: Option<&[f64]>) -> Result<f64, MetricError> {
    if let Some(w) = weights {
        check_len(pairs.len(), w.len())?;
    }
    let n = preds.len();
    let (mut wrong, mut total) = (0.0f64, 0.0f64);
    for (k, &(a, b)) in pairs.iter().enumerate() {
        let (pa, pb) = match (preds.get(a), preds.get(b)) {
            (Some(&pa), Some(&pb)) => (pa, pb),
            (None, _) => return Err(MetricError::IndexOutOfRange { index: a, len: n }),
            (_, None) => return Err(MetricError::IndexOutOfRange { index: b, len: n }),
        };
        if !pa.is_finite() {
            return Err(MetricError::NonFinite { index: a });
        }
        if !pb.is_finite() {
            return Err(MetricError::NonFinite { index: b });
        }
        let w = match weights {
            Some(w) => w[k],
            None => 1.0,
        };
        if !(w.is_finite() && w >= 0.0) {
            return Err(MetricError::InvalidWeight { index: k });
        }
        total += w;
        if pa < pb {
            wrong += w;
        } else if pa == pb {
            wrong += 0.5 * w;
        }
    }
    if !total.is_finite() {
        return Err(MetricError::Overflow);
    }
    if total == 0.0 {
        return Err(MetricError::Undefined);
    }
    Ok((wrong / total).clamp(0.0, 1.0))
}
