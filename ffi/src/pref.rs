//! A preference GP on the device (`ranklet_core::learn::pref::device`):
//! the posterior over N items of a host-trained kind-8 model, asked for
//! `P(i ≻ j)` with its variance, the ranking by posterior mean and the
//! next pair to ask, and updated by one observed preference at a time
//! (one ADF site, O(N²); not iterated EP), saved to and loaded from a
//! two-slot store (`ranklet_core::store`).
//!
//! Everything is `float` (the posterior is kept in `f32`); items are
//! `uint32_t` indices `0..N` in the model's order; nothing is allocated.
//! The posterior lives in the storage given to [`rk_pref_init`] or
//! [`rk_pref_load`] ([`rk_pref_storage_size`] bytes for N items, any
//! alignment) and needs nothing else.

use ranklet_core::learn::pref::device::DevicePrefGp;

use crate::device::{self, slot, slot_mut, Handle};
use crate::guard::{check_out, out_slice};
use crate::model::rk_model;
use crate::status::rk_status;

/// A preference-GP posterior (opaque), in caller storage.
pub struct rk_pref {
    _private: [u8; 0],
}

impl Handle for rk_pref {
    type Learner = DevicePrefGp<'static, f32>;
    const TAG: u32 = 0x524B_5047; // "RKPG"
}

/// Bytes of caller storage a posterior over `n_items` items needs, at any
/// alignment: `4·(2N + N(N+1)/2)` plus a small handle (8 616 bytes for
/// N = 64 on a 32-bit device); 0 if `n_items` is 0 or absurdly large.
#[no_mangle]
pub extern "C" fn rk_pref_storage_size(n_items: usize) -> usize {
    fence!(0 => usize, { device::storage_size::<rk_pref>(n_items) })
}

/// Index `i` as an item of a posterior over `n` items.
fn item(i: u32, n: usize) -> Result<usize, rk_status> {
    match usize::try_from(i) {
        Ok(i) if i < n => Ok(i),
        _ => Err(rk_status::BadArgument),
    }
}

/// Loads the posterior of a parsed kind-8 model (`RK_MODEL_KIND_PREF_GP`)
/// into caller `storage`, as `float`. The posterior does not borrow
/// `model`.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`,
/// `RK_STATUS_WRONG_MODEL_KIND` (not a preference GP over items),
/// `RK_STATUS_STORAGE_TOO_SMALL` (`storage_len < rk_pref_storage_size(N)`),
/// `RK_STATUS_NON_FINITE_INPUT` (an `f64` model whose values overflow
/// `float`; before, `RK_STATUS_PREF_UPDATE_FAILED`: the same mapping as
/// the online learner's init now).
///
/// # Safety
///
/// `model` is NULL or a live model handle; `storage` points to
/// `storage_len` writable bytes used for nothing else while the posterior
/// lives; `out_pref` points to a writable `rk_pref *`.
#[no_mangle]
pub unsafe extern "C" fn rk_pref_init(
    model: *const rk_model,
    storage: *mut core::ffi::c_void,
    storage_len: usize,
    out_pref: *mut *mut rk_pref,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        tri!(unsafe { device::init(model, |_| (), storage, storage_len, out_pref) });
        rk_status::Ok
    })
}

/// The number of items N to `*out_n`, and the preferences absorbed so far
/// (the model's count plus this device's) to `*out_count` (if not NULL).
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`, `RK_STATUS_MISALIGNED`.
///
/// # Safety
///
/// `pref` is NULL or a live handle; `out_n` points to a writable `size_t`;
/// `out_count` is NULL or points to a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn rk_pref_items(pref: *const rk_pref, out_n: *mut usize, out_count: *mut u64) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let s = tri!(unsafe { slot(pref) });
        tri!(unsafe { check_out(out_n) });
        if !out_count.is_null() {
            tri!(unsafe { check_out(out_count) });
        }
        // Safety: checked non-NULL and aligned.
        unsafe {
            *out_n = s.learner.items();
            if !out_count.is_null() {
                *out_count = s.learner.count();
            }
        }
        rk_status::Ok
    })
}

/// `P(i ≻ j) = Φ((μ_i − μ_j)/√(2σ² + v_ij))` (paper 001 eqs. 13–14) to
/// `*out_prob`, and `v_ij = Σ_ii + Σ_jj − 2Σ_ij`, the posterior variance
/// of `f_i − f_j`, to `*out_var` (if not NULL). `P(i ≻ i) = 0.5`.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`, `RK_STATUS_MISALIGNED`,
/// `RK_STATUS_BAD_ARGUMENT` (`i` or `j` not below N).
///
/// # Safety
///
/// `pref` is NULL or a live handle; `out_prob` points to a writable
/// `float`; `out_var` is NULL or points to a writable `float`.
#[no_mangle]
pub unsafe extern "C" fn rk_pref_prob(
    pref: *const rk_pref,
    i: u32,
    j: u32,
    out_prob: *mut f32,
    out_var: *mut f32,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let s = tri!(unsafe { slot(pref) });
        tri!(unsafe { check_out(out_prob) });
        if !out_var.is_null() {
            tri!(unsafe { check_out(out_var) });
        }
        let n = s.learner.items();
        let (i, j) = (tri!(item(i, n)), tri!(item(j, n)));
        let (p, v) = tri!(s.learner.prob(i, j));
        // Safety: checked non-NULL and aligned.
        unsafe {
            *out_prob = p;
            if !out_var.is_null() {
                *out_var = v;
            }
        }
        rk_status::Ok
    })
}

/// The items by posterior mean, highest first (ties in index order), into
/// `out_order[0..n]`; `n` must be N.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`, `RK_STATUS_MISALIGNED`,
/// `RK_STATUS_LENGTH_MISMATCH` (`n` is not N).
///
/// # Safety
///
/// `pref` is NULL or a live handle; `out_order` points to `n` writable
/// `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn rk_pref_rank(pref: *const rk_pref, out_order: *mut u32, n: usize) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let s = tri!(unsafe { slot(pref) });
        let out = tri!(unsafe { out_slice(out_order, n) });
        if n != s.learner.items() {
            return rk_status::LengthMismatch;
        }
        tri!(s.learner.rank(out));
        rk_status::Ok
    })
}

/// Copies the posterior: the mean `μ` (N floats) to `out_mean`, and the
/// covariance `Σ`, lower triangle packed row by row (`Σ[i][j]`, `j ≤ i`, at
/// `i(i+1)/2 + j`; N(N+1)/2 floats) to `out_cov` (if not NULL).
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`, `RK_STATUS_MISALIGNED`,
/// `RK_STATUS_LENGTH_MISMATCH` (`mean_len` is not N, or `cov_len` is not
/// N(N+1)/2 with `out_cov` given).
///
/// # Safety
///
/// `pref` is NULL or a live handle; `out_mean` points to `mean_len`
/// writable floats; `out_cov` is NULL or points to `cov_len` writable
/// floats.
#[no_mangle]
pub unsafe extern "C" fn rk_pref_posterior(
    pref: *const rk_pref,
    out_mean: *mut f32,
    mean_len: usize,
    out_cov: *mut f32,
    cov_len: usize,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let s = tri!(unsafe { slot(pref) });
        let mean = tri!(unsafe { out_slice(out_mean, mean_len) });
        let n = s.learner.items();
        if mean_len != n {
            return rk_status::LengthMismatch;
        }
        if !out_cov.is_null() {
            let cov = tri!(unsafe { out_slice(out_cov, cov_len) });
            if cov_len != s.learner.cov_packed().len() {
                return rk_status::LengthMismatch;
            }
            cov.copy_from_slice(s.learner.cov_packed());
        }
        mean.copy_from_slice(s.learner.mean());
        rk_status::Ok
    })
}

/// The pair to ask about next (paper 001 §5): over all pairs `i < j` of
/// the N items, the largest ratio `v_ij/(μ_i − μ_j)²` of the variance of
/// the difference to its squared mean, exactly (O(N²)); on equal ratios
/// the larger `v_ij`, then the first pair in `(i, j)` order (the tie rule
/// of `rk_online_next_pair` too); pairs with `v_ij = 0` are never chosen.
/// Writes `*out_i < *out_j` and the ratio (`INFINITY` where the means are
/// equal and `v_ij > 0`).
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`, `RK_STATUS_MISALIGNED`,
/// `RK_STATUS_LENGTH_MISMATCH` (N < 2, or every difference is certain:
/// there is no pair).
///
/// # Safety
///
/// `pref` is NULL or a live handle; the outputs are writable.
#[no_mangle]
pub unsafe extern "C" fn rk_pref_next_pair(
    pref: *const rk_pref,
    out_i: *mut u32,
    out_j: *mut u32,
    out_ratio: *mut f32,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let s = tri!(unsafe { slot(pref) });
        tri!(unsafe { check_out(out_i) });
        tri!(unsafe { check_out(out_j) });
        tri!(unsafe { check_out(out_ratio) });
        let Some((i, j, ratio)) = s.learner.next_pair() else {
            return rk_status::LengthMismatch;
        };
        // Safety: checked non-NULL and aligned; i < j < N ≤ u32::MAX.
        unsafe {
            *out_i = i as u32;
            *out_j = j as u32;
            *out_ratio = ratio;
        }
        rk_status::Ok
    })
}

/// One observed preference: item `winner` was preferred to item `loser`.
/// Absorbed by one ADF site update of the posterior (assumed-density
/// filtering: one new EP site from the current posterior, never revisited;
/// not iterated EP), O(N²). On error the posterior is unchanged.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`,
/// `RK_STATUS_BAD_ARGUMENT` (an index not below N, or `winner == loser`),
/// `RK_STATUS_PREF_UPDATE_FAILED` (the update would overflow `float` or
/// leave a variance `≤ 0` by rounding).
///
/// # Safety
///
/// `pref` is NULL or a live handle not used concurrently.
#[no_mangle]
pub unsafe extern "C" fn rk_pref_observe(pref: *mut rk_pref, winner: u32, loser: u32) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let s = tri!(unsafe { slot_mut(pref) });
        let n = s.learner.items();
        let (w, l) = (tri!(item(winner, n)), tri!(item(loser, n)));
        tri!(s.learner.observe(w, l).map_err(device::state_status));
        rk_status::Ok
    })
}

/// Bytes of the `.rkl` file that holds the posterior
/// ([`rk_pref_write_model`]).
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`, `RK_STATUS_MISALIGNED`.
///
/// # Safety
///
/// `pref` is NULL or a live handle; `out_len` points to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn rk_pref_model_size(pref: *const rk_pref, out_len: *mut usize) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        tri!(unsafe { device::model_size(pref, out_len) });
        rk_status::Ok
    })
}

/// Writes the posterior as a `.rkl` file (kind 8, `float`, no item names;
/// readable by `rk_model_parse` and by `ranklet` on a host) into
/// `out[0..len]`, and its length to `*out_written`.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`,
/// `RK_STATUS_STORAGE_TOO_SMALL` (`len` below [`rk_pref_model_size`]),
/// `RK_STATUS_FORMAT_OTHER` (a posterior the format refuses: a covariance
/// that rounding has pushed outside the file's checks).
///
/// # Safety
///
/// `pref` is NULL or a live handle; `out` points to `len` writable bytes;
/// `out_written` to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn rk_pref_write_model(
    pref: *const rk_pref,
    out: *mut u8,
    len: usize,
    out_written: *mut usize,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        tri!(unsafe { device::write_model(pref, out, len, out_written) });
        rk_status::Ok
    })
}

/// Bytes of a two-slot store region that holds the posterior over
/// `n_items` items ([`rk_pref_save`]); 0 on overflow.
#[no_mangle]
pub extern "C" fn rk_pref_store_size(n_items: usize) -> usize {
    fence!(0 => usize, { device::store_size::<rk_pref>(n_items) })
}

/// Saves the posterior into a two-slot store `region` of `region_len`
/// bytes (at least [`rk_pref_store_size`]`(N)`), into the slot that does
/// not hold the newest state, and writes the save's sequence number to
/// `*out_seq`. Power lost at any byte of the save leaves the previous state
/// loadable ([`rk_pref_load`]).
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_BAD_HANDLE`,
/// `RK_STATUS_STORAGE_TOO_SMALL` (region), `RK_STATUS_FORMAT_OTHER`.
///
/// # Safety
///
/// `pref` is NULL or a live handle; `region` points to `region_len`
/// writable bytes (any alignment) not overlapping the posterior's storage;
/// `out_seq` points to a writable `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn rk_pref_save(
    pref: *const rk_pref,
    region: *mut u8,
    region_len: usize,
    out_seq: *mut u32,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        tri!(unsafe { device::save(pref, region, region_len, out_seq) });
        rk_status::Ok
    })
}

/// Restores the newest valid posterior saved in a two-slot store `region`
/// into caller `storage` (as [`rk_pref_init`]'s) and writes its sequence
/// number to `*out_seq` (if not NULL). The saved file is validated in full.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_NO_SAVED_STATE`,
/// `RK_STATUS_FORMAT_*` (a slot whose checksum holds but whose file is not
/// valid), `RK_STATUS_WRONG_MODEL_KIND`, `RK_STATUS_STORAGE_TOO_SMALL`.
///
/// # Safety
///
/// `region` points to `region_len` readable bytes (only read during the
/// call); `storage` as in [`rk_pref_init`]; `out_pref` points to a writable
/// `rk_pref *`; `out_seq` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn rk_pref_load(
    region: *const u8,
    region_len: usize,
    storage: *mut core::ffi::c_void,
    storage_len: usize,
    out_pref: *mut *mut rk_pref,
    out_seq: *mut u32,
) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        tri!(unsafe { device::load(region, region_len, storage, storage_len, out_pref, out_seq) });
        rk_status::Ok
    })
}
