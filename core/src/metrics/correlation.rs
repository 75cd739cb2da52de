//! Rank correlations: Spearman ρ, and mean τ-b / ρ against held-out orders.

use super::pairwise::tau_b_of;
use super::{
    check_boundaries, check_finite, check_len, check_workspace, index_workspace_len, real_workspace_len, MeanAcc,
    MetricError, QueryMean,
};
use crate::sort::{assign_mid_ranks, cmp_f64, merge_sort_by, pair_counts};
use core::cmp::Ordering;

/// Which rank correlation [`mean_order_correlation`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Correlation {
    /// Kendall's τ-b ([`super::kendall_tau_b`]).
    KendallTauB,
    /// Spearman's ρ with average ranks for ties ([`spearman_rho`]).
    SpearmanRho,
}

/// Writes the average (mid) ranks of `v(0..n)` into `ranks[0..n]`: 1-based, and
/// a run of `t` tied values at sorted positions `s+1..=s+t` all get
/// `s + (t+1)/2`. `idx` and `buf` hold at least `n` elements each.
fn average_ranks<V>(n: usize, v: V, ranks: &mut [f64], idx: &mut [usize], buf: &mut [usize])
where
    V: Fn(usize) -> f64,
{
    let idx = &mut idx[..n];
    for (k, slot) in idx.iter_mut().enumerate() {
        *slot = k;
    }
    merge_sort_by(idx, &mut buf[..n], |a, b| cmp_f64(v(a), v(b)) == Ordering::Less);
    assign_mid_ranks(idx, v, ranks);
}

/// Spearman ρ of `x(0..n)`, `y(0..n)`; `None` if `n < 2` or either is constant.
/// Needs `work ≥ 2n`, `fwork ≥ 2n` (checked by callers).
fn spearman_of<X, Y>(n: usize, x: X, y: Y, work: &mut [usize], fwork: &mut [f64]) -> Option<f64>
where
    X: Fn(usize) -> f64,
    Y: Fn(usize) -> f64,
{
    if n < 2 || work.len() < 2 * n || fwork.len() < 2 * n {
        return None;
    }
    let (idx, buf) = work.split_at_mut(n);
    let (rx, ry) = fwork.split_at_mut(n);
    average_ranks(n, x, rx, idx, buf);
    average_ranks(n, y, ry, idx, buf);
    // Average ranks always sum to n(n+1)/2, so both means are (n+1)/2 exactly.
    let mean = (n as f64 + 1.0) * 0.5;
    let (mut sxy, mut sxx, mut syy) = (0.0f64, 0.0f64, 0.0f64);
    for (&a, &b) in rx.iter().zip(ry[..n].iter()) {
        let (da, db) = (a - mean, b - mean);
        sxy += da * db;
        sxx += da * da;
        syy += db * db;
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    Some((sxy / (libm::sqrt(sxx) * libm::sqrt(syy))).clamp(-1.0, 1.0))
}

/// Spearman's rank correlation ρ between `x` and `y`, ties given average ranks.
///
/// ρ is the Pearson correlation of the average ranks: with `r_i`, `s_i` the
/// 1-based ranks of `x_i`, `y_i` (a run of tied values gets the mean of the
/// ranks it spans),
///
/// ```text
/// ρ = Σ (r_i − r̄)(s_i − s̄) / sqrt(Σ (r_i − r̄)² · Σ (s_i − s̄)²)
/// ```
///
/// which is `scipy.stats.spearmanr(x, y).statistic`. The `1 − 6Σd²/(n(n²−1))`
/// shortcut is *not* used because it is wrong with ties. The result is clamped
/// to `[−1, 1]` against rounding. Cost O(n log n).
///
/// # Arguments
///
/// - `x`, `y`: same length, all finite.
/// - `work`: at least [`index_workspace_len`]`(n)` elements.
/// - `fwork`: at least [`real_workspace_len`]`(n)` elements.
///
/// # Errors
///
/// [`MetricError::LengthMismatch`], [`MetricError::NonFinite`],
/// [`MetricError::WorkspaceTooSmall`] (for `work` first, then `fwork`), and
/// [`MetricError::Undefined`] when `n < 2` or either vector is constant
/// (where scipy returns NaN).
pub fn spearman_rho(x: &[f64], y: &[f64], work: &mut [usize], fwork: &mut [f64]) -> Result<f64, MetricError> {
    check_len(x.len(), y.len())?;
    check_finite(x)?;
    check_finite(y)?;
    let n = x.len();
    check_workspace(index_workspace_len(n), work.len())?;
    check_workspace(real_workspace_len(n), fwork.len())?;
    spearman_of(n, |i| x[i], |i| y[i], work, fwork).ok_or(MetricError::Undefined)
}

/// Rank correlation between labels and predictions inside each query,
/// averaged over queries (the per-query form of [`super::kendall_tau_b`] and
/// [`spearman_rho`]). Queries where the correlation is undefined (fewer than
/// two rows, or constant labels or predictions) are skipped and counted.
///
/// `work`: [`index_workspace_len`]`(m)`; `fwork`: [`real_workspace_len`]`(m)`
/// (only for Spearman), `m` the largest query.
///
/// # Errors
/// As [`spearman_rho`], plus [`MetricError::InvalidBoundaries`];
/// [`MetricError::Undefined`] when no query defines the correlation.
pub fn correlation_by_query(
    labels: &[f64],
    preds: &[f64],
    query_ptr: &[usize],
    method: Correlation,
    work: &mut [usize],
    fwork: &mut [f64],
) -> Result<QueryMean, MetricError> {
    check_len(labels.len(), preds.len())?;
    check_finite(labels)?;
    check_finite(preds)?;
    let m = check_boundaries(query_ptr, labels.len())?;
    check_workspace(index_workspace_len(m), work.len())?;
    if method == Correlation::SpearmanRho {
        check_workspace(real_workspace_len(m), fwork.len())?;
    }
    let mut acc = MeanAcc::default();
    for q in query_ptr.windows(2) {
        let (l, p) = (&labels[q[0]..q[1]], &preds[q[0]..q[1]]);
        let v = match method {
            Correlation::KendallTauB => tau_b_of(&pair_counts(l.len(), |i| l[i], |i| p[i], work)),
            Correlation::SpearmanRho => spearman_of(l.len(), |i| l[i], |i| p[i], work, fwork),
        };
        acc.push(v);
    }
    acc.finish()
}

/// Mean rank correlation between predicted scores and held-out orders.
///
/// An *order* lists item indices (rows of `preds`) from most to least
/// preferred. Orders are given CSR-style like queries: order `o` is
/// `items[order_ptr[o]..order_ptr[o + 1]]`. For an order `(i_1, …, i_L)` the
/// order's own score of `i_p` is `L − p` (higher = more preferred, no ties),
/// and the per-order value is the chosen correlation ([`Correlation`]) between
/// those scores and `preds[i_1], …, preds[i_L]`. So +1 means the predictions
/// rank the order's items exactly as the order does, −1 exactly reversed.
/// Items not in an order do not affect it.
///
/// Orders where the correlation is undefined (fewer than two items, or all
/// their items predicted equal) are skipped and counted in
/// [`QueryMean::queries_skipped`]; the value is the unweighted mean over the
/// other orders (here "queries" means orders).
///
/// Cost: O(L log L) per order of `L` items.
///
/// # Arguments
///
/// - `preds`: one score per item; every entry must be finite (also those no
///   order refers to).
/// - `order_ptr`: CSR boundaries over `items` (start 0, non-decreasing, end
///   `items.len()`).
/// - `items`: item indices, each `< preds.len()`, no item twice in one order.
/// - `work`: at least [`index_workspace_len`]`(longest order)` elements.
/// - `fwork`: for [`Correlation::SpearmanRho`] at least
///   [`real_workspace_len`]`(longest order)` elements; unused (may be empty)
///   for [`Correlation::KendallTauB`].
///
/// # Errors
///
/// [`MetricError::NonFinite`], [`MetricError::InvalidBoundaries`],
/// [`MetricError::IndexOutOfRange`], [`MetricError::DuplicateItem`],
/// [`MetricError::WorkspaceTooSmall`], and [`MetricError::Undefined`] when no
/// order has a defined correlation.
pub fn mean_order_correlation(
    preds: &[f64],
    order_ptr: &[usize],
    items: &[usize],
    method: Correlation,
    work: &mut [usize],
    fwork: &mut [f64],
) -> Result<QueryMean, MetricError> {
    check_finite(preds)?;
    let max = check_boundaries(order_ptr, items.len())?;
    if let Some(&index) = items.iter().find(|&&i| i >= preds.len()) {
        return Err(MetricError::IndexOutOfRange { index, len: preds.len() });
    }
    check_workspace(index_workspace_len(max), work.len())?;
    if method == Correlation::SpearmanRho {
        check_workspace(real_workspace_len(max), fwork.len())?;
    }
    // Reject duplicates first so that no partial result is computed.
    for o in order_ptr.windows(2) {
        let order = &items[o[0]..o[1]];
        let l = order.len();
        let (idx, buf) = work.split_at_mut(l);
        for (k, slot) in idx.iter_mut().enumerate() {
            *slot = k;
        }
        merge_sort_by(idx, &mut buf[..l], |a, b| order[a] < order[b]);
        if let Some(w) = idx.windows(2).find(|w| order[w[0]] == order[w[1]]) {
            return Err(MetricError::DuplicateItem { item: order[w[0]] });
        }
    }
    let mut acc = MeanAcc::default();
    for o in order_ptr.windows(2) {
        let order = &items[o[0]..o[1]];
        let l = order.len();
        // Position p in the order has order-score L − p; −p orders the same way.
        let x = |p: usize| -(p as f64);
        let y = |p: usize| preds[order[p]];
        let v = match method {
            Correlation::KendallTauB => tau_b_of(&pair_counts(l, x, y, work)),
            Correlation::SpearmanRho => spearman_of(l, x, y, work, fwork),
        };
        acc.push(v);
    }
    acc.finish()
}
