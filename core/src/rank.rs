//! Ranking on a device: the order of a list and its top k, into caller
//! buffers, without allocation.
//!
//! Items are ranked by score, **highest first**. Ties keep input order
//! (the sort is stable: among equal scores the lower index comes first),
//! `-0.0` equals `0.0`, and the whole result is a deterministic function of
//! the scores. NaN scores are rejected ([`RankError::NanScore`]); the
//! scoring functions of [`format`](crate::format) never produce them.
//!
//! Two layers:
//!
//! - over scores the caller already has: [`order`] (a permutation of
//!   `0..n`) and [`top_k`] (its first `k` entries, in `O(n log k)`);
//! - over a model and rows: [`order_dense_rows`], [`top_k_dense_rows`],
//!   [`order_sparse_rows`], [`top_k_sparse_rows`] score into a caller
//!   `scores` buffer (n floats, which doubles as the output of the scores)
//!   and then rank;
//! - over a pair model, one node `u` and candidate rows `v`:
//!   [`order_candidates`], [`top_k_candidates`] (the conditional ranking
//!   of 004: every candidate for this `u`).
//!
//! Indices are `u32` (what a C caller and a device both want), so at most
//! `u32::MAX` items.
//!
//! # Examples
//!
//! ```
//! use ranklet_core::rank;
//!
//! let scores = [0.5f32, 2.0, -1.0, 2.0, 0.0];
//! let mut perm = [0u32; 5];
//! rank::order(&scores, &mut perm).unwrap();
//! assert_eq!(perm, [1, 3, 0, 4, 2]); // the two 2.0 keep input order
//! let mut best = [0u32; 2];
//! rank::top_k(&scores, &mut best).unwrap();
//! assert_eq!(best, [1, 3]);
//! ```

use core::cmp::Ordering;
use core::fmt;

use crate::format::{ModelView, ScoreError};

/// Why a ranking could not be computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RankError {
    /// An output buffer has the wrong length: `order` needs exactly `n`
    /// entries, `top_k` at most `n`, `scores` exactly `n`.
    LengthMismatch {
        /// Length expected (for `top_k`: the maximum).
        expected: usize,
        /// Length given.
        got: usize,
    },
    /// More than `u32::MAX` items.
    TooManyItems,
    /// A score is NaN.
    NanScore,
    /// Scoring the rows failed.
    Score(ScoreError),
}

impl fmt::Display for RankError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RankError::LengthMismatch { expected, got } => {
                write!(f, "ranking buffer length mismatch: expected {expected}, got {got}")
            }
            RankError::TooManyItems => f.write_str("more than u32::MAX items to rank"),
            RankError::NanScore => f.write_str("a score is NaN"),
            RankError::Score(e) => write!(f, "scoring failed: {e}"),
        }
    }
}

impl core::error::Error for RankError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            RankError::Score(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ScoreError> for RankError {
    fn from(e: ScoreError) -> Self {
        RankError::Score(e)
    }
}

/// A score type that can be ranked: `f32` or `f64`.
pub trait Score: Copy + PartialOrd + sealed::Sealed {
    /// Whether the value is NaN.
    fn is_nan(self) -> bool;
}
impl Score for f32 {
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}
impl Score for f64 {
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
}
mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// `Less` if item `a` ranks before item `b`: higher score first, then lower
/// index. Scores are known not to be NaN, so `partial_cmp` is total here
/// (and `-0.0 == 0.0`).
#[inline]
fn before<S: Score>(scores: &[S], a: u32, b: u32) -> Ordering {
    let (sa, sb) = (scores.get(a as usize), scores.get(b as usize));
    match (sa, sb) {
        (Some(x), Some(y)) => y.partial_cmp(x).unwrap_or(Ordering::Equal).then(a.cmp(&b)),
        _ => a.cmp(&b),
    }
}

fn check_scores<S: Score>(scores: &[S]) -> Result<(), RankError> {
    if u32::try_from(scores.len()).is_err() {
        return Err(RankError::TooManyItems);
    }
    if scores.iter().any(|s| s.is_nan()) {
        return Err(RankError::NanScore);
    }
    Ok(())
}

/// Writes the ranking of `scores` into `out`: `out[0]` is the index of the
/// best item, `out[n-1]` of the worst (ties in input order).
///
/// `O(n log n)` comparisons, no allocation, no recursion on the caller's
/// stack beyond `core`'s in-place sort. `out` is written only on success.
///
/// # Errors
///
/// [`RankError::LengthMismatch`] if `out.len() != scores.len()`,
/// [`RankError::TooManyItems`], [`RankError::NanScore`].
pub fn order<S: Score>(scores: &[S], out: &mut [u32]) -> Result<(), RankError> {
    if out.len() != scores.len() {
        return Err(RankError::LengthMismatch { expected: scores.len(), got: out.len() });
    }
    check_scores(scores)?;
    for (i, o) in out.iter_mut().enumerate() {
        *o = i as u32;
    }
    // The index tie-break makes the order total, so the unstable (in-place,
    // allocation-free) sort gives the stable result.
    out.sort_unstable_by(|&a, &b| before(scores, a, b));
    Ok(())
}

/// Writes the `k = out.len()` best items of `scores` into `out`, best
/// first: exactly the first `k` entries of [`order`].
///
/// A bounded heap of `k` candidates in `out` itself: `O(n log k)`, no
/// allocation. `k = 0` is allowed and does nothing. `out` is written only
/// on success.
///
/// # Errors
///
/// [`RankError::LengthMismatch`] if `k > scores.len()`,
/// [`RankError::TooManyItems`], [`RankError::NanScore`].
pub fn top_k<S: Score>(scores: &[S], out: &mut [u32]) -> Result<(), RankError> {
    let k = out.len();
    if k > scores.len() {
        return Err(RankError::LengthMismatch { expected: scores.len(), got: k });
    }
    check_scores(scores)?;
    if k == 0 {
        return Ok(());
    }
    // Max-heap by "ranks later": the root is the worst of the candidates.
    let worse = |a: u32, b: u32| before(scores, a, b) == Ordering::Less;
    let sift_down = |h: &mut [u32], i: usize| crate::sort::sift_down(h, i, k, &worse);
    for (i, o) in out.iter_mut().enumerate() {
        *o = i as u32;
    }
    for start in (0..k / 2).rev() {
        sift_down(out, start);
    }
    for i in k..scores.len() {
        let i = i as u32;
        // i beats the current worst candidate?
        if out.first().is_some_and(|&root| before(scores, i, root) == Ordering::Less) {
            if let Some(root) = out.first_mut() {
                *root = i;
            }
            sift_down(out, 0);
        }
    }
    out.sort_unstable_by(|&a, &b| before(scores, a, b));
    Ok(())
}

fn check_rows(n: usize, order_len: usize, exact: bool) -> Result<(), RankError> {
    if u32::try_from(n).is_err() {
        return Err(RankError::TooManyItems);
    }
    if (exact && order_len != n) || order_len > n {
        return Err(RankError::LengthMismatch { expected: n, got: order_len });
    }
    Ok(())
}

/// Scores the `scores.len()` dense rows of `x` (row-major,
/// `x.len() == scores.len() * dim`) into `scores`, then writes their
/// ranking into `order` (`order.len() == scores.len()`).
///
/// # Errors
///
/// [`RankError::LengthMismatch`] before anything is written; scoring
/// errors as [`ModelView::score_dense_rows`] (an input or overflow error in
/// row `r` leaves the scores of the rows before `r` written; `order` is
/// written only on success).
pub fn order_dense_rows(
    view: &ModelView<'_>,
    x: &[f32],
    scores: &mut [f32],
    order: &mut [u32],
) -> Result<(), RankError> {
    check_rows(scores.len(), order.len(), true)?;
    view.score_dense_rows(x, scores)?;
    self::order(scores, order)
}

/// As [`order_dense_rows`], keeping only the best `order.len()` rows
/// (`order.len() <= scores.len()`).
///
/// # Errors
///
/// As [`order_dense_rows`].
pub fn top_k_dense_rows(view: &ModelView<'_>, x: &[f32], scores: &mut [f32], top: &mut [u32]) -> Result<(), RankError> {
    check_rows(scores.len(), top.len(), false)?;
    view.score_dense_rows(x, scores)?;
    top_k(scores, top)
}

/// As [`order_dense_rows`] for sparse rows in CSR form (see
/// [`ModelView::score_sparse_rows`]).
///
/// # Errors
///
/// As [`order_dense_rows`] and [`ModelView::score_sparse_rows`].
pub fn order_sparse_rows(
    view: &ModelView<'_>,
    row_ptr: &[u32],
    indices: &[u32],
    values: &[f32],
    scores: &mut [f32],
    order: &mut [u32],
) -> Result<(), RankError> {
    check_rows(scores.len(), order.len(), true)?;
    view.score_sparse_rows(row_ptr, indices, values, scores)?;
    self::order(scores, order)
}

/// As [`top_k_dense_rows`] for sparse rows in CSR form.
///
/// # Errors
///
/// As [`order_sparse_rows`].
pub fn top_k_sparse_rows(
    view: &ModelView<'_>,
    row_ptr: &[u32],
    indices: &[u32],
    values: &[f32],
    scores: &mut [f32],
    top: &mut [u32],
) -> Result<(), RankError> {
    check_rows(scores.len(), top.len(), false)?;
    view.score_sparse_rows(row_ptr, indices, values, scores)?;
    top_k(scores, top)
}

/// Ranks the candidates `v_r` (rows of `candidates`, row-major,
/// `scores.len() × d_v`) for one node `u` of a pair model (kinds 3 and 6):
/// scores them into `scores` with [`ModelView::score_pair_rows`] (`work`
/// of [`ModelView::pair_workspace_len`] elements), then writes their
/// ranking, best first, into `order` (`order.len() == scores.len()`).
///
/// # Errors
///
/// [`RankError::LengthMismatch`] before anything is written; scoring
/// errors as [`ModelView::score_pair_rows`] (only a score overflow leaves
/// `scores` partly written; `order` is written only on success).
pub fn order_candidates(
    view: &ModelView<'_>,
    xu: &[f32],
    candidates: &[f32],
    work: &mut [f32],
    scores: &mut [f32],
    order: &mut [u32],
) -> Result<(), RankError> {
    check_rows(scores.len(), order.len(), true)?;
    view.score_pair_rows(xu, candidates, work, scores)?;
    self::order(scores, order)
}

/// As [`order_candidates`], keeping only the best `top.len()` candidates
/// (`top.len() <= scores.len()`), in `O(n log k)` after scoring.
///
/// # Errors
///
/// As [`order_candidates`].
pub fn top_k_candidates(
    view: &ModelView<'_>,
    xu: &[f32],
    candidates: &[f32],
    work: &mut [f32],
    scores: &mut [f32],
    top: &mut [u32],
) -> Result<(), RankError> {
    check_rows(scores.len(), top.len(), false)?;
    view.score_pair_rows(xu, candidates, work, scores)?;
    top_k(scores, top)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::format::{ElementType, LinearModel, Model, ModelSpec};

    /// The stable descending order by brute force.
    fn reference(scores: &[f32]) -> Vec<u32> {
        let mut idx: Vec<u32> = (0..scores.len() as u32).collect();
        idx.sort_by(|&a, &b| scores[b as usize].partial_cmp(&scores[a as usize]).unwrap());
        idx
    }

    #[test]
    fn order_and_top_k_match_a_stable_sort() {
        let mut state = 12345u64;
        for n in [0usize, 1, 2, 3, 7, 50, 333] {
            for levels in [2u64, 5, 1000] {
                let scores: Vec<f32> = (0..n)
                    .map(|_| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        ((state >> 33) % levels) as f32 - 1.0
                    })
                    .collect();
                let want = reference(&scores);
                let mut got = vec![0u32; n];
                order(&scores, &mut got).unwrap();
                assert_eq!(got, want, "n={n} levels={levels}");
                for k in [0, 1, 2, n / 2, n] {
                    if k > n {
                        continue;
                    }
                    let mut top = vec![u32::MAX; k];
                    top_k(&scores, &mut top).unwrap();
                    assert_eq!(top, want[..k], "n={n} k={k}");
                }
            }
        }
    }

    #[test]
    fn signed_zeros_tie_and_infinities_order() {
        let s = [0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, -0.0];
        let mut o = [0u32; 5];
        order(&s, &mut o).unwrap();
        assert_eq!(o, [2, 0, 1, 4, 3]);
        let s64 = [1.0f64, 3.0, 3.0];
        let mut t = [9u32; 2];
        top_k(&s64, &mut t).unwrap();
        assert_eq!(t, [1, 2]);
    }

    #[test]
    fn errors_leave_outputs_untouched() {
        let mut o = [7u32; 3];
        assert_eq!(order(&[1.0f32, 2.0], &mut o), Err(RankError::LengthMismatch { expected: 2, got: 3 }));
        assert_eq!(top_k(&[1.0f32, 2.0], &mut o), Err(RankError::LengthMismatch { expected: 2, got: 3 }));
        assert_eq!(order(&[1.0f32, f32::NAN, 0.0], &mut o), Err(RankError::NanScore));
        assert_eq!(top_k(&[1.0f32, f32::NAN, 0.0], &mut o[..1]), Err(RankError::NanScore));
        assert_eq!(o, [7, 7, 7]);
    }

    #[test]
    fn rows_are_scored_then_ranked() {
        let w = [1.0, -2.0];
        let spec = ModelSpec::new(Model::Linear(LinearModel { w: &w, offset: 0.5, centring: None }), ElementType::F32);
        let mut buf = vec![0u8; spec.buffer_len()];
        spec.emit(&mut buf).unwrap();
        let v = ModelView::new_checked(&buf).unwrap();
        let x = [1.0f32, 0.0, 0.0, 1.0, 3.0, 1.0, 1.0, 0.0];
        let mut scores = [0.0f32; 4];
        let mut o = [0u32; 4];
        order_dense_rows(&v, &x, &mut scores, &mut o).unwrap();
        assert_eq!(scores, [1.5, -1.5, 1.5, 1.5]);
        assert_eq!(o, [0, 2, 3, 1]);
        let mut top = [0u32; 2];
        top_k_sparse_rows(&v, &[0, 1, 2, 4, 5], &[0, 1, 0, 1, 0], &[1.0, 1.0, 3.0, 1.0, 1.0], &mut scores, &mut top)
            .unwrap();
        assert_eq!(top, [0, 2]);
        let mut o3 = [0u32; 3];
        assert!(matches!(order_dense_rows(&v, &x, &mut scores, &mut o3), Err(RankError::LengthMismatch { .. })));
        assert_eq!(
            order_dense_rows(&v, &x[..7], &mut scores, &mut o),
            Err(RankError::Score(ScoreError::DimensionMismatch { expected: 8, got: 7 }))
        );
    }
}
