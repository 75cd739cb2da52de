//! The one C surface of core's device learners
//! (`ranklet_core::learn::device::DeviceLearner`): the handle in caller
//! storage (a tagged slot followed by the learner's `f32` state), its
//! sizes, init from a parsed model, the `.rkl` state and the A/B store.
//! `online.rs` and `pref.rs` hold only their learner's own calls
//! (observe, score, next pair, …) and one thin `rk_*` entry point per
//! shared call, each fenced, whose body is one call into here; a third
//! device learner adds an opaque type, a [`Handle`] impl and its algebra.

use core::mem::{align_of, size_of};
use core::ptr;

use ranklet_core::format::{ElementType, ModelView};
use ranklet_core::learn::device::{self as learner, DeviceLearner};
use ranklet_core::learn::LearnError;
use ranklet_core::LinalgError;

use crate::guard::{check_out, out_slice};
use crate::model::{rk_model, view};
use crate::status::rk_status;

/// The element type of every device state in this library.
const ET: ElementType = ElementType::F32;

/// An opaque C handle type (`rk_online`, `rk_pref`) and the learner it
/// stands for.
pub(crate) trait Handle: Sized {
    /// The learner, over `f32` state in caller storage.
    type Learner: DeviceLearner<'static, Real = f32>;
    /// The tag that marks a live slot of this handle type.
    const TAG: u32;
}

type Extra<H> = <<H as Handle>::Learner as DeviceLearner<'static>>::Extra;
type Params<H> = <<H as Handle>::Learner as DeviceLearner<'static>>::Params;

/// What a handle points at; the learner's `f32` state follows it in the
/// same storage.
#[repr(C)]
pub(crate) struct Slot<H: Handle> {
    tag: u32,
    /// What the learner carries beside its state (the online learner's
    /// prior offset).
    pub(crate) extra: Extra<H>,
    pub(crate) learner: H::Learner,
}

/// Bytes of caller storage a learner of `size` needs, at any alignment; 0
/// if `size` is 0, above `u32::MAX`, or the count overflows.
pub(crate) fn storage_size<H: Handle>(size: usize) -> usize {
    storage_need::<H>(size).map_or(0, |(bytes, _)| bytes)
}

/// The bytes a learner of `size` needs and the floats of its state.
fn storage_need<H: Handle>(size: usize) -> Option<(usize, usize)> {
    if u32::try_from(size).is_err() {
        return None;
    }
    let floats = H::Learner::storage_len(size)?;
    let bytes =
        (size_of::<Slot<H>>() + align_of::<Slot<H>>() - 1).checked_add(floats.checked_mul(size_of::<f32>())?)?;
    Some((bytes, floats))
}

/// Bytes of a store region that holds the state of a learner of `size`;
/// 0 on overflow.
pub(crate) fn store_size<H: Handle>(size: usize) -> usize {
    learner::store_len::<H::Learner>(size, ET).unwrap_or(0)
}

/// Places a slot and its float state in `storage`.
///
/// # Safety
///
/// `storage` points to `storage_len` writable bytes used for nothing else
/// while the learner lives.
unsafe fn carve<H: Handle>(
    storage: *mut core::ffi::c_void,
    storage_len: usize,
    size: usize,
) -> Result<(*mut Slot<H>, &'static mut [f32]), rk_status> {
    if storage.is_null() {
        return Err(rk_status::NullArgument);
    }
    let (need, floats) = storage_need::<H>(size).ok_or(rk_status::LengthMismatch)?;
    if storage_len < need {
        return Err(rk_status::StorageTooSmall);
    }
    let base = storage.cast::<u8>();
    let pad = base.align_offset(align_of::<Slot<H>>());
    if pad == usize::MAX {
        return Err(rk_status::StorageTooSmall);
    }
    // Safety: pad + size_of::<Slot>() + the floats <= need <= storage_len
    // (pad < align_of::<Slot>(), and the floats start right after the
    // slot, 4-aligned because Slot's alignment is at least 4: it holds a
    // u32 tag).
    unsafe {
        let slot = base.add(pad).cast::<Slot<H>>();
        let state = base.add(pad + size_of::<Slot<H>>()).cast::<f32>();
        Ok((slot, core::slice::from_raw_parts_mut(state, floats)))
    }
}

/// The learner behind a handle.
///
/// # Safety
///
/// `h` is NULL or a live handle of this type (from its init or load).
pub(crate) unsafe fn slot<'a, H: Handle>(h: *const H) -> Result<&'a Slot<H>, rk_status> {
    if h.is_null() {
        return Err(rk_status::NullArgument);
    }
    let s = h.cast::<Slot<H>>();
    if !s.is_aligned() {
        return Err(rk_status::BadHandle);
    }
    // Safety: aligned, non-NULL, a live handle points at an initialised
    // Slot; the tag catches storage never filled by this library.
    let s = unsafe { &*s };
    if s.tag == H::TAG {
        Ok(s)
    } else {
        Err(rk_status::BadHandle)
    }
}

/// As [`slot`], mutably.
///
/// # Safety
///
/// As [`slot`], and no other reference to the learner is in use.
pub(crate) unsafe fn slot_mut<'a, H: Handle>(h: *mut H) -> Result<&'a mut Slot<H>, rk_status> {
    // Safety: forwarded; the shared check first, then the exclusive borrow
    // the caller promises.
    unsafe {
        slot(h.cast_const())?;
        Ok(&mut *h.cast::<Slot<H>>())
    }
}

/// Places a learner made by `make` from its state slice in `storage` and
/// hands out its handle: the one path of init and load.
///
/// # Safety
///
/// `storage` as in [`carve`]; `out` was checked.
unsafe fn place<H: Handle>(
    storage: *mut core::ffi::c_void,
    storage_len: usize,
    size: usize,
    make: impl FnOnce(&'static mut [f32]) -> Result<(H::Learner, Extra<H>), LearnError>,
    out: *mut *mut H,
) -> Result<(), rk_status> {
    // Safety: forwarded caller promises.
    let (at, state) = unsafe { carve::<H>(storage, storage_len, size)? };
    let (learner, extra) = make(state)?;
    // Safety: `at` lies in the caller's storage, aligned (carve); `out`
    // was checked.
    unsafe {
        ptr::write(at, Slot { tag: H::TAG, extra, learner });
        *out = at.cast::<H>();
    }
    Ok(())
}

/// Starts a learner from a parsed prior `model` (`WrongModelKind` if the
/// learner does not start from its kind) in caller `storage`; `params`
/// from the prior's view.
///
/// # Safety
///
/// `model` is NULL or a live model handle; `storage` as in [`carve`];
/// `out` points to a writable handle pointer.
pub(crate) unsafe fn init<H: Handle>(
    model: *const rk_model,
    params: impl FnOnce(&ModelView<'_>) -> Params<H>,
    storage: *mut core::ffi::c_void,
    storage_len: usize,
    out: *mut *mut H,
) -> Result<(), rk_status> {
    // Safety: forwarded caller promises.
    let m = unsafe { view(model)? };
    unsafe { check_out(out)? };
    let prior = H::Learner::prior(m).ok_or(rk_status::WrongModelKind)?;
    let size = H::Learner::prior_size(&prior);
    // The parameters are read after the carve, so nothing of them is kept
    // across it. Safety: forwarded caller promises.
    unsafe { place::<H>(storage, storage_len, size, |state| H::Learner::init(state, &prior, params(m)), out) }
}

/// Bytes of the `.rkl` file of the learner's state.
///
/// # Safety
///
/// `h` is NULL or a live handle; `out_len` points to a writable `size_t`.
pub(crate) unsafe fn model_size<H: Handle>(h: *const H, out_len: *mut usize) -> Result<(), rk_status> {
    // Safety: forwarded caller promises.
    let s = unsafe { slot(h)? };
    unsafe { check_out(out_len)? };
    let len = ranklet_core::format::ModelSpec::new(s.learner.state(s.extra), ET).buffer_len();
    // Safety: checked non-NULL and aligned.
    unsafe { *out_len = len };
    Ok(())
}

/// Writes the learner's state as a `.rkl` file into `out[0..len]`, its
/// length to `*out_written`.
///
/// # Safety
///
/// `h` is NULL or a live handle; `out` points to `len` writable bytes;
/// `out_written` to a writable `size_t`.
pub(crate) unsafe fn write_model<H: Handle>(
    h: *const H,
    out: *mut u8,
    len: usize,
    out_written: *mut usize,
) -> Result<(), rk_status> {
    // Safety: forwarded caller promises.
    let s = unsafe { slot(h)? };
    unsafe { check_out(out_written)? };
    let buf = unsafe { out_slice(out, len)? };
    let n = ranklet_core::format::ModelSpec::new(s.learner.state(s.extra), ET).emit(buf)?;
    // Safety: checked non-NULL and aligned.
    unsafe { *out_written = n };
    Ok(())
}

/// Saves the learner's state into a two-slot store `region`, its sequence
/// number to `*out_seq`.
///
/// # Safety
///
/// `h` is NULL or a live handle; `region` points to `region_len` writable
/// bytes not overlapping the learner's storage; `out_seq` points to a
/// writable `uint32_t`.
pub(crate) unsafe fn save<H: Handle>(
    h: *const H,
    region: *mut u8,
    region_len: usize,
    out_seq: *mut u32,
) -> Result<(), rk_status> {
    // Safety: forwarded caller promises.
    let s = unsafe { slot(h)? };
    unsafe { check_out(out_seq)? };
    if region.is_null() {
        return Err(rk_status::NullArgument);
    }
    // Safety: the caller promises `region_len` writable bytes.
    let region = unsafe { core::slice::from_raw_parts_mut(region, region_len) };
    let seq = learner::save(&s.learner, s.extra, ET, region)?;
    // Safety: checked non-NULL and aligned.
    unsafe { *out_seq = seq };
    Ok(())
}

/// Restores the newest valid state of a two-slot store `region` into
/// caller `storage`, its sequence number to `*out_seq` (if not NULL).
///
/// # Safety
///
/// `region` points to `region_len` readable bytes (read only during the
/// call); `storage` as in [`carve`]; `out` points to a writable handle
/// pointer; `out_seq` is NULL or writable.
pub(crate) unsafe fn load<H: Handle>(
    region: *const u8,
    region_len: usize,
    storage: *mut core::ffi::c_void,
    storage_len: usize,
    out: *mut *mut H,
    out_seq: *mut u32,
) -> Result<(), rk_status> {
    // Safety: forwarded caller promises.
    unsafe { check_out(out)? };
    if !out_seq.is_null() {
        unsafe { check_out(out_seq)? };
    }
    if region.is_null() {
        return Err(rk_status::NullArgument);
    }
    // Safety: the caller promises `region_len` readable bytes.
    let region = unsafe { core::slice::from_raw_parts(region, region_len) };
    let loaded = ranklet_core::store::load(region).ok_or(rk_status::NoSavedState)?;
    let (v, seq) = (ModelView::new_checked(loaded.payload)?, loaded.seq);
    let saved = H::Learner::saved(&v).ok_or(rk_status::WrongModelKind)?;
    let size = H::Learner::saved_size(&saved);
    // Safety: forwarded caller promises.
    unsafe { place::<H>(storage, storage_len, size, |state| H::Learner::restore(state, &saved), out)? };
    if !out_seq.is_null() {
        // Safety: checked non-NULL and aligned.
        unsafe { *out_seq = seq };
    }
    Ok(())
}

/// A learner's error from an update whose input holds no float (the
/// GP's observe of two item indices): a non-finite value there is an
/// update `float` cannot hold (`RK_STATUS_PREF_UPDATE_FAILED`), not the
/// caller's input; otherwise the one mapping of `LearnError`.
pub(crate) fn state_status(e: LearnError) -> rk_status {
    match e {
        LearnError::Numerics(LinalgError::NonFinite) => rk_status::PrefUpdateFailed,
        e => rk_status::from(e),
    }
}
