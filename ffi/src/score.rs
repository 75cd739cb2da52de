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
/// `RK_STATUS_SCORE_OVERFLOW`, `RK_STATUS_WRONG_MODEL_KIND` (a pair
/// model), `RK_STATUS_NOT_IN_BUILD` (a model this build has no scorer for,
/// see `rk_status`).
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
/// `n_rows * dim` (then nothing is written). Rows are scored in order and
/// each is read once; `RK_STATUS_NON_FINITE_INPUT` or
/// `RK_STATUS_SCORE_OVERFLOW` in row `r` leaves `out_scores[0..r]` holding
/// their scores and `out_scores[r..]` untouched.
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

#[cfg(test)]
mod tests {
    //! The dense entry points through the C ABI in this build's feature
    //! set: models outside the `f32` linear fast path score with the
    //! feature that serves them and get `RK_STATUS_NOT_IN_BUILD` without it
    //! (CI runs this with the default features and with
    //! `--no-default-features --features std`).
    use super::{rk_score_dense, rk_score_dense_batch};
    use crate::model::{rk_model, rk_model_parse};
    use crate::status::rk_status;
    use ranklet_core::format::{
        Basis, ElementType, FeatureCentring, Kernel, KernelModel, LinearModel, Model, ModelSpec,
    };

    fn emit(model: LinearModel<'_>, et: ElementType) -> Vec<u8> {
        let spec = ModelSpec::new(Model::Linear(model), et);
        let mut buf = vec![0u8; spec.buffer_len()];
        spec.emit(&mut buf).unwrap();
        buf
    }

    /// `(single-row status and score, batch status and outputs)` for two
    /// copies of `x`.
    fn score(bytes: &[u8], x: &[f32; 3]) -> ((rk_status, f32), (rk_status, [f32; 2])) {
        let mut storage = [0u64; 64];
        let mut m: *const rk_model = core::ptr::null();
        // Safety: valid pointers and lengths; `bytes` and `storage` outlive `m`.
        unsafe {
            let st = rk_model_parse(bytes.as_ptr(), bytes.len(), storage.as_mut_ptr().cast(), 512, &mut m);
            assert_eq!(st, rk_status::Ok);
            let mut s = -7.0f32;
            let single = rk_score_dense(m, x.as_ptr(), 3, &mut s);
            let rows = [*x, *x].concat();
            let mut out = [-7.0f32; 2];
            let batch = rk_score_dense_batch(m, rows.as_ptr(), 6, out.as_mut_ptr(), 2);
            ((single, s), (batch, out))
        }
    }

    #[test]
    fn models_outside_the_fast_path_score_or_report_not_in_build() {
        let (w, mean, scale) = ([1.0, -2.0, 0.5], [0.5, 0.0, 1.0], [2.0, 1.0, 0.5]);
        let x = [1.0f32, 2.0, 3.0];
        let refused = ((rk_status::NotInBuild, -7.0), (rk_status::NotInBuild, [-7.0; 2]));

        let plain = emit(LinearModel { w: &w, offset: 1.0, centring: None }, ElementType::F32);
        assert_eq!(score(&plain, &x), ((rk_status::Ok, -0.5), (rk_status::Ok, [-0.5; 2])));

        let f64_model = emit(LinearModel { w: &w, offset: 1.0, centring: None }, ElementType::F64);
        let want = if cfg!(feature = "f64") { ((rk_status::Ok, -0.5), (rk_status::Ok, [-0.5; 2])) } else { refused };
        assert_eq!(score(&f64_model, &x), want);

        let c = Some(FeatureCentring { mean: &mean, scale: &scale });
        let centred = emit(LinearModel { w: &w, offset: 1.0, centring: c }, ElementType::F32);
        let kernel = {
            let (coeffs, basis) = ([1.0, -1.0], [1.0, 0.0, 0.0, 1.0]);
            let model = KernelModel {
                dim: 2,
                kernel: Kernel::Rbf { gamma: 0.5 },
                basis: Basis::Dense(&basis),
                coeffs: &coeffs,
                offset: 0.0,
                centring: None,
                kernel_centring: None,
            };
            let spec = ModelSpec::new(Model::Kernel(model), ElementType::F32);
            let mut buf = vec![0u8; spec.buffer_len()];
            spec.emit(&mut buf).unwrap();
            buf
        };
        let mut storage = [0u64; 64];
        let mut m: *const rk_model = core::ptr::null();
        // Safety: valid pointers and lengths.
        let st = unsafe { rk_model_parse(kernel.as_ptr(), kernel.len(), storage.as_mut_ptr().cast(), 512, &mut m) };
        let want =
            if cfg!(any(feature = "all-kinds", feature = "kernel")) { rk_status::Ok } else { rk_status::NotInBuild };
        assert_eq!(st, want, "kernel model through rk_model_parse");
        // x' = (0.25, 2, 4): 1 + 0.25 − 4 + 2
        let want =
            if cfg!(feature = "centring") { ((rk_status::Ok, -0.75), (rk_status::Ok, [-0.75; 2])) } else { refused };
        assert_eq!(score(&centred, &x), want);
    }
}
