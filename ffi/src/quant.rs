//! Integer scoring with a quantised linear model (kind 7,
//! `RK_MODEL_KIND_QUANT_LINEAR`): for cores without an FPU.
//!
//! `rk_score_dense_i16` and `rk_score_dense_i16_batch` take rows already
//! quantised as the model says (`q_j = sat16(round((x_j − z_j)/a_j))`) and
//! need no floating point at all; `rk_quantize_dense` and
//! `rk_score_dense_quant` quantise `float` rows themselves (`f32`
//! arithmetic, soft-float on such cores). Scores are exact `int64_t`
//! integers, `c·S` of the model's units ([`rk_quant_info`]); they cannot
//! overflow (the parser checked the accumulator bound, docs/format.md
//! "QUANT"). The `float` entry points (`rk_score_dense`, …) also accept a
//! quantised model and return `c·S` as a `float`.

use ranklet_core::format::QuantWidth;

use crate::guard::{check_out, in_slice, out_slice};
use crate::model::{rk_model, view};
use crate::status::rk_status;

/// What [`rk_quant_get_info`] reports about a quantised model.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rk_quant_info {
    /// Bits per stored weight: 8 or 16.
    pub weight_bits: u32,
    /// Score per integer unit `c` (> 0): `c · S` approximates the float
    /// model's score.
    pub scale: f64,
    /// Integer bias `B`.
    pub bias: i64,
    /// Worst-case `|c·S − f(x)|` for inputs within the calibrated ranges
    /// (docs/format.md, "QUANT").
    pub error_bound: f64,
}

/// Describes a quantised model.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`, `RK_STATUS_MISALIGNED`,
/// `RK_STATUS_WRONG_MODEL_KIND` (not a quantised model).
///
/// # Safety
///
/// `model` is NULL or a live handle; `out_info` points to a writable
/// `rk_quant_info`.
#[no_mangle]
pub unsafe extern "C" fn rk_quant_get_info(model: *const rk_model, out_info: *mut rk_quant_info) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let v = tri!(unsafe { view(model) });
        tri!(unsafe { check_out(out_info) });
        let Some(q) = v.quant() else { return rk_status::WrongModelKind };
        let weight_bits = match q.width() {
            QuantWidth::I8 => 8,
            QuantWidth::I16 => 16,
        };
        let info = rk_quant_info { weight_bits, scale: q.scale(), bias: q.bias(), error_bound: q.error_bound() };
        // Safety: checked non-NULL and aligned.
        unsafe { *out_info = info };
        rk_status::Ok
    })
}

/// Scores one dense row of `q_len == dim` quantised inputs: the exact
/// integer `B + Σ_j W_j·q_j`. No floating point.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`, `RK_STATUS_MISALIGNED`,
/// `RK_STATUS_WRONG_MODEL_KIND` (not a quantised model),
/// `RK_STATUS_DIMENSION_MISMATCH`.
///
/// # Safety
///
/// `model` is NULL or a live handle; `q` points to `q_len` `int16_t`;
/// `out_score` points to a writable `int64_t`.
#[no_mangle]
pub unsafe extern "C" fn rk_score_dense_i16(
    model: *const rk_model,
    q: *const i16,
    q_len: usize,
    out_score: *mut i64,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let v = tri!(unsafe { view(model) });
        tri!(unsafe { check_out(out_score) });
        let q = tri!(unsafe { in_slice(q, q_len) });
        let s = tri!(v.score_dense_i16(q));
        // Safety: checked non-NULL and aligned.
        unsafe { *out_score = s };
        rk_status::Ok
    })
}

/// Scores `n_rows` quantised rows stored row-major in `q` (`q_len ==
/// n_rows * dim`), writing row `r`'s integer score to `out_scores[r]`. On
/// any error `out_scores` is untouched.
///
/// # Errors
///
/// As [`rk_score_dense_i16`]; `RK_STATUS_DIMENSION_MISMATCH` if `q_len` is
/// not `n_rows * dim`.
///
/// # Safety
///
/// `model` is NULL or a live handle; `q` points to `q_len` `int16_t`;
/// `out_scores` points to `n_rows` writable `int64_t` not overlapping `q`.
#[no_mangle]
pub unsafe extern "C" fn rk_score_dense_i16_batch(
    model: *const rk_model,
    q: *const i16,
    q_len: usize,
    out_scores: *mut i64,
    n_rows: usize,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let v = tri!(unsafe { view(model) });
        let q = tri!(unsafe { in_slice(q, q_len) });
        let out = tri!(unsafe { out_slice(out_scores, n_rows) });
        tri!(v.score_dense_i16_rows(q, out));
        rk_status::Ok
    })
}

/// Quantises one dense `float` row as the model says (per feature
/// `sat16(round((x_j − z_j)/a_j))`, in `float`, ties away from zero) into
/// `out_q`, ready for [`rk_score_dense_i16`].
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`, `RK_STATUS_MISALIGNED`,
/// `RK_STATUS_WRONG_MODEL_KIND`, `RK_STATUS_DIMENSION_MISMATCH` (`x_len` or
/// `out_len` not `dim`), `RK_STATUS_NON_FINITE_INPUT`. On error `out_q` is
/// untouched.
///
/// # Safety
///
/// `model` is NULL or a live handle; `x` points to `x_len` floats; `out_q`
/// points to `out_len` writable `int16_t` not overlapping `x`.
#[no_mangle]
pub unsafe extern "C" fn rk_quantize_dense(
    model: *const rk_model,
    x: *const f32,
    x_len: usize,
    out_q: *mut i16,
    out_len: usize,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let v = tri!(unsafe { view(model) });
        let x = tri!(unsafe { in_slice(x, x_len) });
        let out = tri!(unsafe { out_slice(out_q, out_len) });
        tri!(v.quantize_dense(x, out));
        rk_status::Ok
    })
}

/// Scores one dense `float` row with a quantised model, quantising it as the
/// model says: the integer score of [`rk_quantize_dense`]'s row, without a
/// buffer.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`, `RK_STATUS_MISALIGNED`,
/// `RK_STATUS_WRONG_MODEL_KIND`, `RK_STATUS_DIMENSION_MISMATCH`,
/// `RK_STATUS_NON_FINITE_INPUT`.
///
/// # Safety
///
/// `model` is NULL or a live handle; `x` points to `x_len` floats;
/// `out_score` points to a writable `int64_t`.
#[no_mangle]
pub unsafe extern "C" fn rk_score_dense_quant(
    model: *const rk_model,
    x: *const f32,
    x_len: usize,
    out_score: *mut i64,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let v = tri!(unsafe { view(model) });
        tri!(unsafe { check_out(out_score) });
        let x = tri!(unsafe { in_slice(x, x_len) });
        let s = tri!(v.score_dense_quant(x));
        // Safety: checked non-NULL and aligned.
        unsafe { *out_score = s };
        rk_status::Ok
    })
}
