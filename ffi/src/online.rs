//! Learning on the device: an online RankRLS learner in caller storage
//! (`ranklet_core::learn::online`), started from a host-trained linear
//! model, updated by one preference at a time, asked for the next pair to
//! compare, and saved to / loaded from a two-slot store
//! (`ranklet_core::store`) that survives power loss during a save.
//!
//! Everything is `float` (the learner's state is `f32`); nothing is
//! allocated. The learner lives in the storage given to [`rk_online_init`]
//! or [`rk_online_load`] ([`rk_online_storage_size`] bytes for dimension d,
//! any alignment) and needs nothing else.

use core::mem::size_of;

use ranklet_core::learn::online::OnlineRankRls;

use crate::device::{self, slot, slot_mut, Handle};
use crate::guard::{check_out, in_slice, out_slice};
use crate::model::rk_model;
use crate::status::rk_status;

/// An online learner (opaque), in caller storage.
pub struct rk_online {
    _private: [u8; 0],
}

impl Handle for rk_online {
    type Learner = OnlineRankRls<'static, f32>;
    const TAG: u32 = 0x524B_4F4C; // "RKOL"
}

/// Bytes of caller storage the learner of dimension `d` needs, at any
/// alignment; 0 if `d` is 0 or absurdly large.
#[no_mangle]
pub extern "C" fn rk_online_storage_size(d: usize) -> usize {
    fence!(0 => usize, { device::storage_size::<rk_online>(d) })
}

/// Starts a learner from a host-trained linear model `prior` (its weights
/// are the prior `w₀` the ridge `lambda > 0` pulls towards; feature
/// centring, if the model has it, is folded into the weights and offset)
/// in caller `storage`. The prior's id recorded in saves is the CRC-32 of
/// its file. The learner does not borrow `prior`.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`,
/// `RK_STATUS_WRONG_MODEL_KIND` (not a linear model),
/// `RK_STATUS_BAD_ARGUMENT` (`lambda` not finite and > 0),
/// `RK_STATUS_NON_FINITE_INPUT` (`lambda` times the prior overflows
/// `float`),
/// `RK_STATUS_STORAGE_TOO_SMALL` (`storage_len < rk_online_storage_size(d)`).
///
/// # Safety
///
/// `prior` is NULL or a live model handle; `storage` points to
/// `storage_len` writable bytes used for nothing else while the learner
/// lives; `out_online` points to a writable `rk_online *`.
#[no_mangle]
pub unsafe extern "C" fn rk_online_init(
    prior: *const rk_model,
    lambda: f32,
    storage: *mut core::ffi::c_void,
    storage_len: usize,
    out_online: *mut *mut rk_online,
) -> rk_status {
    fence!({
        let params = |m: &ranklet_core::format::ModelView<'_>| (lambda, crc_trailer(m.into_inner()));
        // Safety: forwarded caller promises.
        tri!(unsafe { device::init(prior, params, storage, storage_len, out_online) });
        rk_status::Ok
    })
}

/// The last four bytes of a model file, its CRC-32.
fn crc_trailer(bytes: &[u8]) -> u32 {
    let n = bytes.len();
    bytes.get(n.saturating_sub(4)..).and_then(|s| s.try_into().ok()).map_or(0, u32::from_le_bytes)
}

/// One preference: the row `winner` (d floats) was preferred to `loser`,
/// with weight `magnitude > 0` (1 for a plain answer). O(d²). On error
/// the learner is unchanged.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`,
/// `RK_STATUS_MISALIGNED`, `RK_STATUS_DIMENSION_MISMATCH` (`d` is not the
/// learner's), `RK_STATUS_NON_FINITE_INPUT`, `RK_STATUS_BAD_ARGUMENT`
/// (`magnitude` not finite and > 0).
///
/// # Safety
///
/// `online` is NULL or a live handle not used concurrently; `winner` and
/// `loser` point to `d` floats each.
#[no_mangle]
pub unsafe extern "C" fn rk_online_observe(
    online: *mut rk_online,
    winner: *const f32,
    loser: *const f32,
    d: usize,
    magnitude: f32,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let s = tri!(unsafe { slot_mut(online) });
        let w = tri!(unsafe { in_slice(winner, d) });
        let l = tri!(unsafe { in_slice(loser, d) });
        if d != s.learner.dim() {
            return rk_status::DimensionMismatch;
        }
        tri!(s.learner.observe(w, l, magnitude));
        rk_status::Ok
    })
}

/// Scores `n_rows` dense rows (`x` is `n_rows × d`, row-major) with the
/// current weights: `offset + wᵀx`. Rank them with `rk_rank`.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`,
/// `RK_STATUS_MISALIGNED`, `RK_STATUS_LENGTH_MISMATCH` (`x_len` is not
/// `n_rows·d`), `RK_STATUS_NON_FINITE_INPUT`, `RK_STATUS_SCORE_OVERFLOW`.
///
/// # Safety
///
/// `online` is NULL or a live handle; `x` points to `x_len` floats;
/// `out_scores` to `n_rows` writable floats.
#[no_mangle]
pub unsafe extern "C" fn rk_online_score_rows(
    online: *const rk_online,
    x: *const f32,
    x_len: usize,
    n_rows: usize,
    out_scores: *mut f32,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let s = tri!(unsafe { slot(online) });
        let x = tri!(unsafe { in_slice(x, x_len) });
        let out = tri!(unsafe { out_slice(out_scores, n_rows) });
        let d = s.learner.dim();
        if n_rows.checked_mul(d) != Some(x_len) {
            return rk_status::LengthMismatch;
        }
        if !x.iter().all(|v| v.is_finite()) {
            return rk_status::NonFiniteInput;
        }
        for (row, o) in x.chunks_exact(d).zip(out.iter_mut()) {
            let v = s.extra + f64::from(tri!(s.learner.score(row)));
            if !(v as f32).is_finite() {
                return rk_status::ScoreOverflow;
            }
            *o = v as f32;
        }
        rk_status::Ok
    })
}

/// Copies the current weights `w` (d floats) to `out_w`, and the number of
/// preferences observed so far to `*out_count` (if not NULL).
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`,
/// `RK_STATUS_MISALIGNED`, `RK_STATUS_DIMENSION_MISMATCH`.
///
/// # Safety
///
/// `online` is NULL or a live handle; `out_w` points to `d` writable
/// floats; `out_count` is NULL or points to a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn rk_online_weights(
    online: *const rk_online,
    out_w: *mut f32,
    d: usize,
    out_count: *mut u64,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let s = tri!(unsafe { slot(online) });
        if !out_count.is_null() {
            tri!(unsafe { check_out(out_count) });
        }
        let out = tri!(unsafe { out_slice(out_w, d) });
        if d != s.learner.dim() {
            return rk_status::DimensionMismatch;
        }
        out.copy_from_slice(s.learner.weights());
        if !out_count.is_null() {
            // Safety: checked non-NULL and aligned.
            unsafe { *out_count = s.learner.count() };
        }
        rk_status::Ok
    })
}

/// Bytes of `work` that [`rk_online_next_pair`] needs for `n` candidates
/// of the learner's dimension `d`; 0 on overflow.
#[no_mangle]
pub extern "C" fn rk_online_next_pair_work_size(n: usize, d: usize) -> usize {
    fence!(0 => usize, { OnlineRankRls::<f32>::next_pair_workspace_len(n, d).checked_mul(size_of::<f32>()).unwrap_or(0) })
}

/// The pair of candidate rows to ask about next (paper 001 §5 under the
/// learner's Bayesian linear model): among the `n` rows of `x` (`n × d`,
/// row-major), the pair `i < j` with the largest ratio of the predictive
/// variance of the score difference to its squared mean; on equal ratios
/// the larger variance, then the first pair in `(i, j)` order (the tie
/// rule of `rk_pref_next_pair` too); identical rows are never chosen.
/// Writes `*out_i`, `*out_j` and the ratio (`INFINITY` when the current
/// weights score the two equal). `work` is caller scratch of
/// `rk_online_next_pair_work_size(n, d)` bytes, aligned for `float`.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`,
/// `RK_STATUS_MISALIGNED`, `RK_STATUS_LENGTH_MISMATCH` (`x_len != n·d`,
/// `n < 2`, or no two rows differ), `RK_STATUS_STORAGE_TOO_SMALL` (`work`),
/// `RK_STATUS_NON_FINITE_INPUT`, `RK_STATUS_TOO_MANY_ITEMS`.
///
/// # Safety
///
/// `online` is NULL or a live handle; `x` points to `x_len` floats;
/// `work` to `work_len` writable bytes; the outputs are writable.
#[no_mangle]
pub unsafe extern "C" fn rk_online_next_pair(
    online: *const rk_online,
    x: *const f32,
    x_len: usize,
    n: usize,
    work: *mut core::ffi::c_void,
    work_len: usize,
    out_i: *mut u32,
    out_j: *mut u32,
    out_ratio: *mut f32,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let s = tri!(unsafe { slot(online) });
        tri!(unsafe { check_out(out_i) });
        tri!(unsafe { check_out(out_j) });
        tri!(unsafe { check_out(out_ratio) });
        let x = tri!(unsafe { in_slice(x, x_len) });
        let d = s.learner.dim();
        if n < 2 || n.checked_mul(d) != Some(x_len) {
            return rk_status::LengthMismatch;
        }
        if u32::try_from(n).is_err() {
            return rk_status::TooManyItems;
        }
        let floats = work_len / size_of::<f32>();
        // Safety: `work` has `work_len` bytes, so `floats` whole floats.
        let work = tri!(unsafe { out_slice(work.cast::<f32>(), floats) });
        if work.len() < OnlineRankRls::<f32>::next_pair_workspace_len(n, d) {
            return rk_status::StorageTooSmall;
        }
        let best = tri!(s.learner.next_pair(x, n, work));
        let Some((i, j, ratio)) = best else {
            return rk_status::LengthMismatch;
        };
        // Safety: checked non-NULL and aligned.
        unsafe {
            *out_i = i as u32;
            *out_j = j as u32;
            *out_ratio = ratio;
        }
        rk_status::Ok
    })
}

/// Bytes of the `.rkl` file that holds the learner's state
/// ([`rk_online_write_model`]).
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`.
///
/// # Safety
///
/// `online` is NULL or a live handle; `out_len` points to a writable
/// `size_t`.
#[no_mangle]
pub unsafe extern "C" fn rk_online_model_size(online: *const rk_online, out_len: *mut usize) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        tri!(unsafe { device::model_size(online, out_len) });
        rk_status::Ok
    })
}

/// Bytes of a two-slot store region that holds the state of a learner of
/// dimension `d` ([`rk_online_save`]); 0 on overflow.
#[no_mangle]
pub extern "C" fn rk_online_store_size(d: usize) -> usize {
    fence!(0 => usize, { device::store_size::<rk_online>(d) })
}

/// Writes the learner's state as a `.rkl` file (kind 5, readable by
/// `ranklet inspect`/`score` on a host) into `out[0..len]`, and its length
/// to `*out_written`.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`,
/// `RK_STATUS_STORAGE_TOO_SMALL` (`len` below [`rk_online_model_size`]),
/// `RK_STATUS_FORMAT_NON_FINITE` (a state that overflowed `float`).
///
/// # Safety
///
/// `online` is NULL or a live handle; `out` points to `len` writable
/// bytes; `out_written` to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn rk_online_write_model(
    online: *const rk_online,
    out: *mut u8,
    len: usize,
    out_written: *mut usize,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        tri!(unsafe { device::write_model(online, out, len, out_written) });
        rk_status::Ok
    })
}

/// Saves the learner's state into a two-slot store `region` of
/// `region_len` bytes (at least [`rk_online_store_size`]`(d)`), into the
/// slot that does not hold the newest state, and writes the save's
/// sequence number to `*out_seq`. Power lost at any byte of the save
/// leaves the previous state loadable ([`rk_online_load`]).
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`,
/// `RK_STATUS_STORAGE_TOO_SMALL` (region), `RK_STATUS_FORMAT_NON_FINITE`.
///
/// # Safety
///
/// `online` is NULL or a live handle; `region` points to `region_len`
/// writable bytes (any alignment) not overlapping the learner's storage;
/// `out_seq` points to a writable `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn rk_online_save(
    online: *const rk_online,
    region: *mut u8,
    region_len: usize,
    out_seq: *mut u32,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        tri!(unsafe { device::save(online, region, region_len, out_seq) });
        rk_status::Ok
    })
}

/// Restores the newest valid state saved in a two-slot store `region` into
/// caller `storage` (as [`rk_online_init`]'s) and writes its sequence
/// number to `*out_seq` (if not NULL). The state's file is validated in
/// full, and `w` is recomputed from the saved factor.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_NO_SAVED_STATE` (neither slot
/// holds a complete save), `RK_STATUS_FORMAT_*` (a slot whose checksum
/// holds but whose file is not a valid state: not written by this
/// library), `RK_STATUS_WRONG_MODEL_KIND`, `RK_STATUS_STORAGE_TOO_SMALL`.
///
/// # Safety
///
/// `region` points to `region_len` readable bytes (only read during the
/// call); `storage` as in [`rk_online_init`]; `out_online` points to a
/// writable `rk_online *`; `out_seq` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rk_online_load(
    region: *const u8,
    region_len: usize,
    storage: *mut core::ffi::c_void,
    storage_len: usize,
    out_online: *mut *mut rk_online,
    out_seq: *mut u32,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        tri!(unsafe { device::load(region, region_len, storage, storage_len, out_online, out_seq) });
        rk_status::Ok
    })
}
