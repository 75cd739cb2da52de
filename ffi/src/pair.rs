//! Pair models (kinds 3, bilinear, and 6, dual): scoring a pair `(u, v)`
//! and ranking candidates `v` for one `u` (the conditional ranking of
//! Kronecker models), with a caller workspace.
//!
//! The workspace (`work`, `work_len` floats) is scratch the call may
//! overwrite — like the scores array of a rank call, an exception to "no
//! in/out parameters". Its size is `rk_model_info.pair_work_len`
//! (`d_v` for a bilinear model, `m_u + m_v` for a Kronecker dual model,
//! `3·m` for a symmetric or reciprocal one). Scores are computed in
//! `float` whatever the element type, and `score(u, v) == score(v, u)`
//! (symmetric) or `== -score(v, u)` (reciprocal) holds exactly.

use ranklet_core::rank;

use crate::guard::{check_out, in_slice, out_slice};
use crate::model::{rk_model, view};
use crate::status::rk_status;

/// Scores the pair `(u, v)` with a pair model: `xu` holds the `du` features
/// of `u`, `xv` the `dv` features of `v`.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`, `RK_STATUS_MISALIGNED`,
/// `RK_STATUS_WRONG_MODEL_KIND` (not a pair model),
/// `RK_STATUS_DIMENSION_MISMATCH` (`du`, `dv` not the model's, or
/// `work_len < pair_work_len`), `RK_STATUS_NON_FINITE_INPUT`,
/// `RK_STATUS_SCORE_OVERFLOW`, `RK_STATUS_NOT_IN_BUILD` (a dual model in a
/// library built without kernel scoring).
///
/// # Safety
///
/// `model` is NULL or a live handle; `xu`, `xv` point to `du`, `dv`
/// floats; `work` to `work_len` writable floats overlapping nothing else;
/// `out_score` to a writable float.
#[no_mangle]
pub unsafe extern "C" fn rk_score_pair(
    model: *const rk_model,
    xu: *const f32,
    du: usize,
    xv: *const f32,
    dv: usize,
    work: *mut f32,
    work_len: usize,
    out_score: *mut f32,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let v = tri!(unsafe { view(model) });
        tri!(unsafe { check_out(out_score) });
        let xu = tri!(unsafe { in_slice(xu, du) });
        let xv = tri!(unsafe { in_slice(xv, dv) });
        let work = tri!(unsafe { out_slice(work, work_len) });
        let s = tri!(v.score_pair(xu, xv, work));
        // Safety: checked non-NULL and aligned.
        unsafe { *out_score = s };
        rk_status::Ok
    })
}

/// Ranks `n` candidates `v` for one node `u` of a pair model: scores the
/// pairs `(u, v_r)` for the `n` rows of `candidates` (row-major,
/// `candidates_len == n·d_v`) into `out_scores[0..n]`, then writes the
/// best `k <= n` candidate indices, highest score first (ties in input
/// order), to `out_order` (`k == n` orders them all).
///
/// # Errors
///
/// As [`rk_score_pair`] (`RK_STATUS_DIMENSION_MISMATCH` also for
/// `candidates_len != n·d_v`), `RK_STATUS_LENGTH_MISMATCH` (`k > n`),
/// `RK_STATUS_TOO_MANY_ITEMS`.
///
/// # Safety
///
/// As [`rk_score_pair`]; `candidates` points to `candidates_len` floats,
/// `out_scores` to `n` and `out_order` to `k` writable elements, none
/// overlapping another array.
#[no_mangle]
pub unsafe extern "C" fn rk_rank_candidates(
    model: *const rk_model,
    xu: *const f32,
    du: usize,
    candidates: *const f32,
    candidates_len: usize,
    work: *mut f32,
    work_len: usize,
    out_scores: *mut f32,
    n: usize,
    out_order: *mut u32,
    k: usize,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let v = tri!(unsafe { view(model) });
        let xu = tri!(unsafe { in_slice(xu, du) });
        let rows = tri!(unsafe { in_slice(candidates, candidates_len) });
        let work = tri!(unsafe { out_slice(work, work_len) });
        let scores = tri!(unsafe { out_slice(out_scores, n) });
        let order = tri!(unsafe { out_slice(out_order, k) });
        if k > n {
            return rk_status::LengthMismatch;
        }
        if k == n {
            tri!(rank::order_candidates(v, xu, rows, work, scores, order));
        } else {
            tri!(rank::top_k_candidates(v, xu, rows, work, scores, order));
        }
        rk_status::Ok
    })
}
