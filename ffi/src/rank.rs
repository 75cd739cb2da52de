//! Ranking: top-k or full order of given scores, or of a batch of rows
//! scored with a model (no allocation).

use ranklet_core::rank::{self, RankError};

use crate::guard::{csr_rows, in_slice, out_slice};
use crate::model::{rk_model, view};
use crate::status::rk_status;

/// Ranks `n` scores, highest first: writes the indices of the best `k`
/// items to `out_order[0..k]` (`k <= n`; `k == n` gives the whole
/// permutation). Equal scores keep input order. No allocation,
/// `O(n log k)`.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_MISALIGNED`,
/// `RK_STATUS_LENGTH_MISMATCH` (`k > n`), `RK_STATUS_TOO_MANY_ITEMS`,
/// `RK_STATUS_NAN_SCORE`.
///
/// # Safety
///
/// `scores` points to `n` floats; `out_order` to `k` writable `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn rk_rank(scores: *const f32, n: usize, out_order: *mut u32, k: usize) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let s = tri!(unsafe { in_slice(scores, n) });
        let o = tri!(unsafe { out_slice(out_order, k) });
        tri!(rank_into(s, o));
        rk_status::Ok
    })
}

/// The two outputs of the score-then-rank calls: `n_rows` scores and the
/// best `k <= n_rows` row indices.
///
/// # Safety
///
/// As [`out_slice`] for each array.
unsafe fn rank_outputs<'a>(
    out_scores: *mut f32,
    n_rows: usize,
    out_order: *mut u32,
    k: usize,
) -> Result<(&'a mut [f32], &'a mut [u32]), rk_status> {
    // Safety: forwarded caller promises.
    let (scores, order) = unsafe { (out_slice(out_scores, n_rows)?, out_slice(out_order, k)?) };
    if k > n_rows {
        return Err(rk_status::LengthMismatch);
    }
    Ok((scores, order))
}

fn rank_into(scores: &[f32], out: &mut [u32]) -> Result<(), RankError> {
    if out.len() == scores.len() {
        rank::order(scores, out)
    } else {
        rank::top_k(scores, out)
    }
}

/// Scores `n_rows` dense rows (as [`rk_score_dense_batch`]) into
/// `out_scores`, then writes the best `k` row indices, highest score
/// first, to `out_order` (`k <= n_rows`; `k == n_rows` orders all rows).
/// `out_scores` is the scratch the ranking needs and also returns the
/// scores.
///
/// # Errors
///
/// As [`rk_score_dense_batch`] and [`rk_rank`].
///
/// # Safety
///
/// As [`rk_score_dense_batch`]; `out_order` points to `k` writable
/// `uint32_t` overlapping nothing else.
#[no_mangle]
pub unsafe extern "C" fn rk_rank_dense(
    model: *const rk_model,
    x: *const f32,
    x_len: usize,
    out_scores: *mut f32,
    n_rows: usize,
    out_order: *mut u32,
    k: usize,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let v = tri!(unsafe { view(model) });
        let x = tri!(unsafe { in_slice(x, x_len) });
        let (scores, order) = tri!(unsafe { rank_outputs(out_scores, n_rows, out_order, k) });
        tri!(v.score_dense_rows(x, scores));
        tri!(rank_into(scores, order));
        rk_status::Ok
    })
}

/// As [`rk_rank_dense`] for sparse rows in CSR form (see
/// [`rk_score_sparse_batch`]).
///
/// # Errors
///
/// As [`rk_score_sparse_batch`] and [`rk_rank`].
///
/// # Safety
///
/// As [`rk_score_sparse_batch`] and [`rk_rank_dense`].
#[no_mangle]
pub unsafe extern "C" fn rk_rank_sparse(
    model: *const rk_model,
    row_ptr: *const u32,
    indices: *const u32,
    values: *const f32,
    nnz: usize,
    out_scores: *mut f32,
    n_rows: usize,
    out_order: *mut u32,
    k: usize,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let v = tri!(unsafe { view(model) });
        let (rp, idx, val) = tri!(unsafe { csr_rows(row_ptr, indices, values, nnz, n_rows) });
        let (scores, order) = tri!(unsafe { rank_outputs(out_scores, n_rows, out_order, k) });
        tri!(v.score_sparse_rows(rp, idx, val, scores));
        tri!(rank_into(scores, order));
        rk_status::Ok
    })
}
