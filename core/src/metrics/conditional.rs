//! Conditional ranking metrics over a relation matrix (004 eq. 4): every
//! row is the ranking of the second nodes conditioned on one first node.
//!
//! `labels[i, j]` and `preds[i, j]` belong to the edge `(u_i, v_j)`; each
//! row is scored as one query of [`disagreement`](super::disagreement) or
//! [`auc`](super::auc) and the rows are averaged unweighted
//! ([`QueryMean`]; rows without a comparable pair are skipped). Pass
//! `labels.t()`, `preds.t()` to condition on the second node. For an
//! incomplete graph given as an edge list, group the edges by conditioning
//! node and call [`disagreement`](super::disagreement) /
//! [`auc_by_query`](super::auc_by_query) with the groups as queries.
//!
//! Eq. 4 counts `I(h(e) − h(ē))` over pairs with `y_e < y_ē`, a tie in
//! predictions counting ½; normalised by the number of such pairs per
//! node, that is the disagreement error of the node's row.

use super::pairwise::{concordance_of, disagreement_of};
use super::{check_workspace, index_workspace_len, MeanAcc, MetricError, QueryMean};
use crate::sort::pair_counts;
use crate::MatRef;

/// Same shapes, finite values (the index of a non-finite one is its
/// column-major position), enough workspace for a row.
fn check(labels: MatRef<'_, f64>, preds: MatRef<'_, f64>, work: &[usize]) -> Result<(), MetricError> {
    super::check_len(labels.nrows(), preds.nrows())?;
    super::check_len(labels.ncols(), preds.ncols())?;
    let (m, n) = (labels.nrows(), labels.ncols());
    for mat in [labels, preds] {
        for j in 0..n {
            for i in 0..m {
                if !mat.at(i, j).is_finite() {
                    return Err(MetricError::NonFinite { index: i + j * m });
                }
            }
        }
    }
    check_workspace(index_workspace_len(n), work.len())
}

/// The conditional rank loss (004 eq. 4) normalised per conditioning node
/// and averaged over nodes: the mean over rows of the row's disagreement
/// error `(#discordant + ½·#prediction-tied) / #comparable`.
///
/// `work`: [`index_workspace_len`]`(ncols)` elements.
///
/// # Errors
/// [`MetricError::LengthMismatch`] (shapes), [`MetricError::NonFinite`],
/// [`MetricError::WorkspaceTooSmall`], [`MetricError::Undefined`] when no
/// row has two different labels.
pub fn conditional_disagreement(
    labels: MatRef<'_, f64>,
    preds: MatRef<'_, f64>,
    work: &mut [usize],
) -> Result<QueryMean, MetricError> {
    check(labels, preds, work)?;
    let mut acc = MeanAcc::default();
    for i in 0..labels.nrows() {
        let c = pair_counts(labels.ncols(), |j| labels.at(i, j), |j| preds.at(i, j), work);
        acc.push(disagreement_of(&c));
    }
    acc.finish()
}

/// AUC per conditioning node for binary relations (`labels[i, j] >
/// threshold` is a positive edge; `0.0` or `0.5` for 0/1 labels), averaged
/// over the rows that have both a positive and a negative edge.
///
/// # Errors
/// [`MetricError::InvalidThreshold`] for a non-finite threshold; otherwise
/// as [`conditional_disagreement`].
pub fn conditional_auc(
    labels: MatRef<'_, f64>,
    preds: MatRef<'_, f64>,
    threshold: f64,
    work: &mut [usize],
) -> Result<QueryMean, MetricError> {
    if !threshold.is_finite() {
        return Err(MetricError::InvalidThreshold);
    }
    check(labels, preds, work)?;
    let mut acc = MeanAcc::default();
    for i in 0..labels.nrows() {
        let bin = |j: usize| if labels.at(i, j) > threshold { 1.0 } else { 0.0 };
        let c = pair_counts(labels.ncols(), bin, |j| preds.at(i, j), work);
        acc.push(concordance_of(&c));
    }
    acc.finish()
}
