//! Evaluation metrics for rankings: pairwise disagreement, concordance (C-index),
//! AUC, Kendall τ-b, Spearman ρ, NDCG@k, MAP, explicit pair error, mean rank
//! correlation against held-out orders, and the conditional ranking metrics of
//! a relation matrix (004 eq. 4 and AUC per conditioning node).
//!
//! Every function here reads `f64` slices, writes nothing but its caller's scratch
//! buffers, never allocates and never panics: bad input is a [`MetricError`].
//!
//! ## Conventions shared by the whole module
//!
//! - **Labels and predictions.** `labels[i]` is the true relevance (graded label,
//!   score, or target) of row `i`; `preds[i]` the model's score. Higher means
//!   better / more preferred in both. Every label and prediction must be finite
//!   (NaN or ±∞ is [`MetricError::NonFinite`]); `0.0` and `-0.0` are equal.
//! - **Queries** are given CSR-style: `query_ptr` has one more entry than there
//!   are queries, query `q` is rows `query_ptr[q]..query_ptr[q + 1]`,
//!   `query_ptr[0] == 0`, the last entry equals the number of rows and the
//!   entries never decrease ([`MetricError::InvalidBoundaries`] otherwise). The
//!   caller groups rows by query. A single query over `n` rows is `[0, n]`. An
//!   empty query (two equal boundaries) is allowed and treated like any query
//!   that carries no information for the metric (see each function).
//! - **Per-query averages** return a [`QueryMean`]: the unweighted mean over the
//!   queries that define the metric, plus how many queries were used and how
//!   many were skipped. If no query is used the mean does not exist and the
//!   function returns [`MetricError::Undefined`] rather than a NaN.
//! - **Ties** in predictions count ½ in every pairwise metric. Ranking metrics
//!   (NDCG, MAP) break prediction ties by input order: of two rows with equal
//!   predictions, the one that comes first in the slice is ranked higher.
//! - **Workspace.** Functions that sort take `work: &mut [usize]` of at least
//!   [`index_workspace_len`]`(m)` elements, where `m` is the size of the largest
//!   query (or order, or the whole input for single-query functions); passing the
//!   total number of rows is always enough. Spearman ρ also takes
//!   `fwork: &mut [f64]` of [`real_workspace_len`]`(m)` elements. Only the first
//!   elements are used; their contents on return are unspecified.
//! - **Cost.** Pairwise counts use one stable merge sort by (label, prediction)
//!   and a second merge sort by prediction that counts exchanges (Knight 1966),
//!   so every metric is O(m log m) per query with no O(m²) pass.

mod conditional;
mod correlation;
mod letor;
mod pairwise;

#[cfg(test)]
mod reference_tests;
#[cfg(test)]
mod tests;

use core::fmt;

pub use conditional::{conditional_auc, conditional_disagreement};
pub use correlation::{correlation_by_query, mean_order_correlation, spearman_rho, Correlation};
pub use letor::{mean_average_precision, ndcg, Gain, IdcgZero, MapParams, NdcgParams, NoRelevant};
pub use pairwise::{
    auc, auc_by_query, concordance_index, concordance_index_by_query, disagreement, kendall_tau_b, pair_error,
};

/// Why a metric could not be computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetricError {
    /// Two slices that must have the same length do not.
    LengthMismatch {
        /// Length required (the length of the first slice).
        expected: usize,
        /// Length given.
        got: usize,
    },
    /// A scratch buffer is shorter than the function needs.
    WorkspaceTooSmall {
        /// Elements needed.
        needed: usize,
        /// Elements given.
        got: usize,
    },
    /// A label, prediction or value is NaN or ±∞.
    NonFinite {
        /// Index of the first offending element in its slice.
        index: usize,
    },
    /// `query_ptr` / `order_ptr` is empty, does not start at 0, decreases, or does
    /// not end at the number of rows (items).
    InvalidBoundaries,
    /// A cutoff `k` of 0 was requested.
    ZeroK,
    /// An index (pair member or order item) is not a valid row.
    IndexOutOfRange {
        /// The offending index.
        index: usize,
        /// Number of rows.
        len: usize,
    },
    /// An item appears twice in one order.
    DuplicateItem {
        /// The repeated item.
        item: usize,
    },
    /// A label is outside the domain of the metric (negative relevance for NDCG).
    InvalidLabel {
        /// Row of the offending label.
        index: usize,
    },
    /// A pair weight is negative or not finite.
    InvalidWeight {
        /// Index of the offending weight.
        index: usize,
    },
    /// A threshold parameter is not finite.
    InvalidThreshold,
    /// An intermediate sum overflowed `f64` (gains such as `2^label − 1` with
    /// labels above about 1023, or weights summing past `f64::MAX`).
    Overflow,
    /// The metric does not exist for this input: no comparable pair, a constant
    /// vector for a correlation, fewer than two values, all pair weights zero, or
    /// no query left to average over.
    Undefined,
}

impl fmt::Display for MetricError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            MetricError::LengthMismatch { expected, got } => {
                write!(f, "length mismatch: expected {expected} elements, got {got}")
            }
            MetricError::WorkspaceTooSmall { needed, got } => {
                write!(f, "workspace too small: {needed} elements needed, {got} given")
            }
            MetricError::NonFinite { index } => {
                write!(f, "value at index {index} is NaN or infinite")
            }
            MetricError::InvalidBoundaries => {
                f.write_str("query/order boundaries must start at 0, never decrease and end at the row count")
            }
            MetricError::ZeroK => f.write_str("cutoff k must be at least 1"),
            MetricError::IndexOutOfRange { index, len } => {
                write!(f, "index {index} out of range for {len} rows")
            }
            MetricError::DuplicateItem { item } => {
                write!(f, "item {item} appears twice in one order")
            }
            MetricError::InvalidLabel { index } => {
                write!(f, "label at row {index} is outside the metric's domain")
            }
            MetricError::InvalidWeight { index } => {
                write!(f, "weight at index {index} is negative or not finite")
            }
            MetricError::InvalidThreshold => f.write_str("threshold is not finite"),
            MetricError::Overflow => f.write_str("intermediate sum overflowed f64"),
            MetricError::Undefined => f.write_str("metric is undefined for this input"),
        }
    }
}

impl core::error::Error for MetricError {}

/// A metric averaged over queries (or orders), with the bookkeeping needed to
/// interpret it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueryMean {
    /// Unweighted mean of the per-query values over the used queries.
    pub value: f64,
    /// Queries that contributed a value.
    pub queries_used: usize,
    /// Queries left out because the metric is undefined on them (see each
    /// function for when that happens).
    pub queries_skipped: usize,
}

/// Elements of `work: &mut [usize]` every function in this module needs when
/// the largest query (order, or whole input for single-query functions) has `m`
/// rows: `2·m` (a permutation and a merge buffer). Saturates at `usize::MAX`.
pub const fn index_workspace_len(m: usize) -> usize {
    m.saturating_mul(2)
}

/// Elements of `fwork: &mut [f64]` that Spearman ρ ([`spearman_rho`],
/// [`mean_order_correlation`] with [`Correlation::SpearmanRho`]) needs for
/// vectors (orders) of at most `m` values: `2·m` (the two rank vectors).
/// Saturates at `usize::MAX`.
pub const fn real_workspace_len(m: usize) -> usize {
    m.saturating_mul(2)
}

// ---------------------------------------------------------------------------
// Shared validation helpers.

pub(crate) fn check_len(expected: usize, got: usize) -> Result<(), MetricError> {
    if expected == got {
        Ok(())
    } else {
        Err(MetricError::LengthMismatch { expected, got })
    }
}

pub(crate) fn check_finite(v: &[f64]) -> Result<(), MetricError> {
    match v.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(MetricError::NonFinite { index }),
        None => Ok(()),
    }
}

/// Checks CSR boundaries over `n` rows and returns the largest segment length.
pub(crate) fn check_boundaries(ptr: &[usize], n: usize) -> Result<usize, MetricError> {
    let (first, last) = match (ptr.first(), ptr.last()) {
        (Some(&f), Some(&l)) => (f, l),
        _ => return Err(MetricError::InvalidBoundaries),
    };
    if first != 0 || last != n {
        return Err(MetricError::InvalidBoundaries);
    }
    let mut max = 0;
    for w in ptr.windows(2) {
        if w[1] < w[0] {
            return Err(MetricError::InvalidBoundaries);
        }
        max = max.max(w[1] - w[0]);
    }
    Ok(max)
}

pub(crate) fn check_workspace(needed: usize, got: usize) -> Result<(), MetricError> {
    if got < needed {
        Err(MetricError::WorkspaceTooSmall { needed, got })
    } else {
        Ok(())
    }
}

/// Accumulates per-query values into a [`QueryMean`].
#[derive(Default)]
pub(crate) struct MeanAcc {
    sum: f64,
    used: usize,
    skipped: usize,
}

impl MeanAcc {
    pub(crate) fn push(&mut self, v: Option<f64>) {
        match v {
            Some(v) => {
                self.sum += v;
                self.used += 1;
            }
            None => self.skipped += 1,
        }
    }

    pub(crate) fn finish(self) -> Result<QueryMean, MetricError> {
        if self.used == 0 {
            return Err(MetricError::Undefined);
        }
        Ok(QueryMean { value: self.sum / self.used as f64, queries_used: self.used, queries_skipped: self.skipped })
    }
}
