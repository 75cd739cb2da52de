//! Scoring: one dense or sparse row, or a batch of rows, with a model.

use crate::guard::{check_out, csr_rows, in_slice, out_slice};
use crate::model::{rk_model, view};
use crate::status::rk_status;

/// Scores one dense row of `x_len == dim` floats.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`, `RK_STATUS_MISALIGNED`,
/// `RK_STATUS_DIMENSION_MISMATCH`, `RK_STATUS_NON_FINITE_INPUT`,
/// `RK_STATUS_SCORE_OVERFLOW`.
///
/// # Safety
///
/// `model` is NULL or a live handle; `x` points to `x_len` floats (or is
/// NULL with `x_len == 0`); `out_score` points to a writable float.
#[no_mangle]
pub unsafe extern "C" fn rk_score_dense(
    model: *const rk_model,
    x: *const f32,
    x_len: usize,
    out_score: *mut f32,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let v = tri!(unsafe { view(model) });
        tri!(unsafe { check_out(out_score) });
        let x = tri!(unsafe { in_slice(x, x_len) });
        let s = tri!(v.score_dense(x));
        // Safety: checked non-NULL and aligned.
        unsafe { *out_score = s };
        rk_status::Ok
    })
}

/// Scores one sparse row: `nnz` pairs `(indices[k], values[k])`, indices
/// 0-based and strictly increasing, all other features 0.
///
/// Indices may be `>= dim` (`rk_model_info.dim`): every training row was 0
/// there, and the score is that of the same model trained with those
/// features (linear weights and polynomial kernels ignore them; an RBF
/// kernel's squared distances gain their squared norm).
///
/// # Errors
///
/// As [`rk_score_dense`], plus `RK_STATUS_BAD_INPUT_INDEX`.
///
/// # Safety
///
/// `model` is NULL or a live handle; `indices` and `values` point to `nnz`
/// elements each (or are NULL with `nnz == 0`); `out_score` points to a
/// writable float.
#[no_mangle]
pub unsafe extern "C" fn rk_score_sparse(
    model: *const rk_model,
    indices: *const u32,
    values: *const f32,
    nnz: usize,
    out_score: *mut f32,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let v = tri!(unsafe { view(model) });
        tri!(unsafe { check_out(out_score) });
        let idx = tri!(unsafe { in_slice(indices, nnz) });
        let val = tri!(unsafe { in_slice(values, nnz) });
        let s = tri!(v.score_sparse(idx, val));
        // Safety: checked non-NULL and aligned.
        unsafe { *out_score = s };
        rk_status::Ok
    })
}

/// Scores `n_rows` dense rows stored row-major in `x`
/// (`x_len == n_rows * dim`), writing row `r`'s score to `out_scores[r]`.
///
/// # Errors
///
/// As [`rk_score_dense`]; `RK_STATUS_DIMENSION_MISMATCH` if `x_len` is not
/// `n_rows * dim`.
///
/// # Safety
///
/// `model` is NULL or a live handle; `x` points to `x_len` floats;
/// `out_scores` points to `n_rows` writable floats not overlapping `x`.
#[no_mangle]
pub unsafe extern "C" fn rk_score_dense_batch(
    model: *const rk_model,
    x: *const f32,
    x_len: usize,
    out_scores: *mut f32,
    n_rows: usize,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let v = tri!(unsafe { view(model) });
        let x = tri!(unsafe { in_slice(x, x_len) });
        let out = tri!(unsafe { out_slice(out_scores, n_rows) });
        tri!(v.score_dense_rows(x, out));
        rk_status::Ok
    })
}

/// Scores `n_rows` sparse rows in CSR form: row `r` is
/// `indices[row_ptr[r] .. row_ptr[r+1]]` with its `values`; `row_ptr` has
/// `n_rows + 1` entries, starts at 0 and ends at `nnz`.
///
/// # Errors
///
/// As [`rk_score_sparse`]; `RK_STATUS_DIMENSION_MISMATCH` for inconsistent
/// row pointers.
///
/// # Safety
///
/// `model` is NULL or a live handle; `row_ptr` points to `n_rows + 1`
/// `uint32_t`; `indices`/`values` to `nnz` elements; `out_scores` to
/// `n_rows` writable floats overlapping no input.
#[no_mangle]
pub unsafe extern "C" fn rk_score_sparse_batch(
    model: *const rk_model,
    row_ptr: *const u32,
    indices: *const u32,
    values: *const f32,
    nnz: usize,
    out_scores: *mut f32,
    n_rows: usize,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let v = tri!(unsafe { view(model) });
        let (rp, idx, val) = tri!(unsafe { csr_rows(row_ptr, indices, values, nnz, n_rows) });
        let out = tri!(unsafe { out_slice(out_scores, n_rows) });
        tri!(v.score_sparse_rows(rp, idx, val, out));
        rk_status::Ok
    })
}
