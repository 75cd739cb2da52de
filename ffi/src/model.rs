//! Models: parsing into caller storage ([`rk_model_parse`]), heap-owned
//! models under `std` (`rk_model_new`/`rk_model_free`), the handle check,
//! and [`rk_model_get_info`].

use core::mem::{align_of, size_of};
use core::ptr;

use ranklet_core::format::{ElementType, ModelKind, ModelView, PairKernel};

use crate::guard::{check_out, in_slice};
use crate::status::rk_status;

/// Model kind, as in the file header.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum rk_model_kind {
    /// `score(x) = b + Σ_j w_j·x'_j`.
    Linear = 1,
    /// `score(x) = b + Σ_i a_i·k(x', x_i)` over stored basis rows.
    KernelExpansion = 2,
    /// A bilinear pair model, `score(u, v) = b + x_uᵀ·W·x_v` (scored by
    /// `rk_score_pair`).
    Bilinear = 3,
    /// The saved state of an online RankRLS learner; scores as
    /// `b + Σ_j w_j·x_j`.
    OnlineRankRls = 5,
    /// A dual pair model, `score(u, v) = b + k_uᵀ·A·k_v` over stored node
    /// bases (scored by `rk_score_pair`).
    DualPair = 6,
    /// A quantised linear model, `score(q) = B + Σ_j W_j·q_j` in integers
    /// (scored exactly by `rk_score_dense_i16`/`rk_score_dense_quant`; the
    /// `float` functions return `c·score`).
    QuantLinear = 7,
    /// A preference-GP posterior over a fixed set of items (`dim` is the
    /// number of items; used through `rk_pref_init`, not scored by row).
    PrefGp = 8,
    /// An inductive preference GP (basis rows, `α`, `W`; not scored by row
    /// through this ABI).
    PrefInductive = 9,
    /// A preference-GP posterior over a fixed set of items in low-rank
    /// form, `Σ = CCᵀ + diag(r)` (`dim` is the number of items; read on
    /// the host, not scored by row through this ABI).
    PrefLowRank = 10,
}

/// The pair kernel of a pair model: how `score(u, v)` relates to
/// `score(v, u)`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum rk_pair_kernel {
    /// Not a pair model.
    None = 0,
    /// Any relation.
    Kronecker = 1,
    /// `score(u, v) == score(v, u)`, exactly.
    Symmetric = 2,
    /// `score(u, v) == -score(v, u)`, exactly.
    Reciprocal = 3,
}

/// Element type of the stored parameters (and the arithmetic of the
/// `float` scoring functions: `f32` models score in `float`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum rk_element_type {
    /// IEEE-754 binary32.
    F32 = 1,
    /// IEEE-754 binary64.
    F64 = 2,
}

/// What [`rk_model_get_info`] reports about a model.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rk_model_info {
    /// Model kind.
    pub kind: rk_model_kind,
    /// Element type of the parameters.
    pub element_type: rk_element_type,
    /// Feature dimension: the length of a dense input row (of a pair
    /// model: the first node's, `d_u`).
    pub dim: usize,
    /// Basis rows of a kernel expansion (of a dual pair model: the first
    /// domain's, `m_u`); 0 for a linear model.
    pub basis_rows: usize,
    /// Size of the model file in bytes.
    pub bytes: usize,
    /// Format version of the file, major.
    pub format_major: u8,
    /// Format version of the file, minor.
    pub format_minor: u8,
    /// Oldest reader able to read the file, major.
    pub min_reader_major: u8,
    /// Oldest reader able to read the file, minor.
    pub min_reader_minor: u8,
    /// Version of the ranklet that wrote the file: major, minor, patch.
    pub producer: [u16; 3],
    /// Pair models: the pair kernel; `RK_PAIR_KERNEL_NONE` otherwise.
    pub pair: rk_pair_kernel,
    /// Pair models: the second node's feature dimension `d_v`; 0 otherwise.
    pub dim_v: usize,
    /// Pair models: floats of workspace `rk_score_pair` and
    /// `rk_rank_candidates` need; 0 otherwise.
    pub pair_work_len: usize,
}

/// A parsed model (opaque). Made by [`rk_model_parse`] in caller storage,
/// or by `rk_model_new` on the heap.
pub struct rk_model {
    _private: [u8; 0],
}

const TAG_PARSED: u32 = 0x524B_4D50; // "RKMP"
#[cfg(feature = "std")]
const TAG_OWNED: u32 = 0x524B_4D4F; // "RKMO"

/// What an `rk_model` pointer points at.
#[repr(C)]
pub(crate) struct Slot {
    tag: u32,
    view: ModelView<'static>,
}

/// The view behind a handle.
///
/// # Safety
///
/// `m` must be NULL or a live handle from `rk_model_parse`/`rk_model_new`.
pub(crate) unsafe fn view<'a>(m: *const rk_model) -> Result<&'a ModelView<'static>, rk_status> {
    if m.is_null() {
        return Err(rk_status::NullArgument);
    }
    let slot = m.cast::<Slot>();
    if !slot.is_aligned() {
        return Err(rk_status::BadHandle);
    }
    // Safety: aligned, non-NULL, and the caller promises a live handle, so
    // it points at an initialised Slot; the tag check catches storage that
    // was never filled by rk_model_parse.
    let slot = unsafe { &*slot };
    #[cfg(feature = "std")]
    let ok = slot.tag == TAG_PARSED || slot.tag == TAG_OWNED;
    #[cfg(not(feature = "std"))]
    let ok = slot.tag == TAG_PARSED;
    if ok {
        Ok(&slot.view)
    } else {
        Err(rk_status::BadHandle)
    }
}

/// Bytes of static storage that always suffice for one model on every
/// target this crate builds for (checked at compile time), so C can write
/// `static unsigned char storage[RK_MODEL_STORAGE_MAX];`.
/// [`rk_model_storage_size`] gives the exact need of this build.
pub const RK_MODEL_STORAGE_MAX: usize = 512;

const _: () = assert!(size_of::<Slot>() + align_of::<Slot>() - 1 <= RK_MODEL_STORAGE_MAX);

/// Bytes of caller storage [`rk_model_parse`] needs for one model, at any
/// alignment (at most `RK_MODEL_STORAGE_MAX`). Constant for a given build.
#[no_mangle]
pub extern "C" fn rk_model_storage_size() -> usize {
    size_of::<Slot>() + align_of::<Slot>() - 1
}

/// Validates `len` model bytes and builds a model in caller storage.
///
/// On success `*out_model` is the model; it lives in `storage` and borrows
/// `bytes`. Nothing is allocated and nothing needs freeing: the model ends
/// when the caller reuses `storage` or `bytes`.
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT` (any pointer NULL), `RK_STATUS_STORAGE_TOO_SMALL`
/// (`storage_len < rk_model_storage_size()`), `RK_STATUS_FORMAT_*` for bytes
/// that are not a valid model (all checks of the format run here, once).
///
/// # Safety
///
/// - `bytes` points to `len` readable bytes (any alignment) that stay valid
///   and unmodified for as long as the model is used.
/// - `storage` points to `storage_len` writable bytes (any alignment) used
///   for nothing else while the model is used.
/// - `out_model` points to a writable `const rk_model *`.
#[no_mangle]
pub unsafe extern "C" fn rk_model_parse(
    bytes: *const u8,
    len: usize,
    storage: *mut core::ffi::c_void,
    storage_len: usize,
    out_model: *mut *const rk_model,
) -> rk_status {
    fence!({
        if bytes.is_null() || storage.is_null() {
            return rk_status::NullArgument;
        }
        tri!(unsafe { check_out(out_model) });
        // Safety: the caller promises `len` bytes valid while the model lives;
        // 'static stands for "as long as the caller keeps them".
        let bytes: &'static [u8] = tri!(unsafe { in_slice(bytes, len) });
        let storage = storage.cast::<u8>();
        let pad = storage.align_offset(align_of::<Slot>());
        if pad == usize::MAX || pad.checked_add(size_of::<Slot>()).is_none_or(|n| n > storage_len) {
            return rk_status::StorageTooSmall;
        }
        let view = tri!(ModelView::new_checked(bytes));
        // Safety: pad + size_of::<Slot>() <= storage_len, so the slot lies
        // inside the caller's storage, and it is aligned for Slot.
        let slot = unsafe { storage.add(pad) }.cast::<Slot>();
        // Safety: slot is valid for a write of Slot (above); out_model was
        // checked non-NULL and aligned.
        unsafe {
            ptr::write(slot, Slot { tag: TAG_PARSED, view });
            *out_model = slot.cast_const().cast::<rk_model>();
        }
        rk_status::Ok
    })
}

#[cfg(feature = "std")]
#[repr(C)]
struct Owned {
    slot: Slot,
    _bytes: Box<[u8]>,
}

/// Copies `len` model bytes to the heap, validates them and returns a model
/// that owns its copy (`std` builds only). Release it with
/// [`rk_model_free`].
///
/// # Errors
///
/// `RK_STATUS_NULL_ARGUMENT`, `RK_STATUS_FORMAT_*` as [`rk_model_parse`].
///
/// # Safety
///
/// `bytes` points to `len` readable bytes (only read during the call);
/// `out_model` points to a writable `rk_model *`.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn rk_model_new(bytes: *const u8, len: usize, out_model: *mut *mut rk_model) -> rk_status {
    fence!({
        if bytes.is_null() {
            return rk_status::NullArgument;
        }
        tri!(unsafe { check_out(out_model) });
        // Safety: the caller promises `len` readable bytes for this call.
        let src = tri!(unsafe { in_slice(bytes, len) });
        let copy: Box<[u8]> = src.into();
        // Safety: the boxed bytes never move and live exactly as long as
        // the Owned that holds both them and the view (freed together).
        let bytes: &'static [u8] = unsafe { core::slice::from_raw_parts(copy.as_ptr(), copy.len()) };
        let view = tri!(ModelView::new_checked(bytes));
        let owned = Box::new(Owned { slot: Slot { tag: TAG_OWNED, view }, _bytes: copy });
        // Safety: out_model checked non-NULL and aligned; Owned is repr(C)
        // with the Slot first, so the pointer is also a Slot pointer.
        unsafe { *out_model = Box::into_raw(owned).cast::<rk_model>() };
        rk_status::Ok
    })
}

/// Releases a model from [`rk_model_new`]. NULL is a no-op (`RK_STATUS_OK`);
/// a model from [`rk_model_parse`] is refused with `RK_STATUS_BAD_HANDLE`
/// (it owns nothing).
///
/// # Safety
///
/// `model` is NULL or a live handle; after `RK_STATUS_OK` it must not be
/// used again.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn rk_model_free(model: *mut rk_model) -> rk_status {
    fence!({
        if model.is_null() {
            return rk_status::Ok;
        }
        let slot = model.cast::<Slot>();
        if !slot.is_aligned() {
            return rk_status::BadHandle;
        }
        // Safety: the caller promises a live handle.
        if unsafe { (*slot).tag } != TAG_OWNED {
            return rk_status::BadHandle;
        }
        // Safety: the tag says this came from Box::into_raw in rk_model_new;
        // clear it first so a double free is caught while the memory is
        // still ours, then drop.
        unsafe {
            (*slot).tag = 0;
            drop(Box::from_raw(model.cast::<Owned>()));
        }
        rk_status::Ok
    })
}

/// Describes a model.
///
/// # Safety
///
/// `model` is NULL or a live handle; `out_info` points to a writable
/// `rk_model_info`.
#[no_mangle]
pub unsafe extern "C" fn rk_model_get_info(model: *const rk_model, out_info: *mut rk_model_info) -> rk_status {
    fence!({
        // Safety: forwarded caller promises.
        let v = tri!(unsafe { view(model) });
        tri!(unsafe { check_out(out_info) });
        let kind = match v.kind() {
            ModelKind::Linear => rk_model_kind::Linear,
            ModelKind::OnlineRankRls => rk_model_kind::OnlineRankRls,
            ModelKind::Bilinear => rk_model_kind::Bilinear,
            ModelKind::DualPair => rk_model_kind::DualPair,
            ModelKind::QuantLinear => rk_model_kind::QuantLinear,
            ModelKind::PrefGp => rk_model_kind::PrefGp,
            ModelKind::PrefInductive => rk_model_kind::PrefInductive,
            ModelKind::PrefLowRank => rk_model_kind::PrefLowRank,
            _ => rk_model_kind::KernelExpansion,
        };
        let pair = match v.pair_kernel() {
            None => rk_pair_kernel::None,
            Some(PairKernel::Kronecker) => rk_pair_kernel::Kronecker,
            Some(PairKernel::Symmetric) => rk_pair_kernel::Symmetric,
            Some(PairKernel::Reciprocal) => rk_pair_kernel::Reciprocal,
        };
        let element_type = match v.element_type() {
            ElementType::F32 => rk_element_type::F32,
            ElementType::F64 => rk_element_type::F64,
        };
        let (fv, mr) = (v.format_version(), v.min_reader_version());
        let info = rk_model_info {
            kind,
            element_type,
            dim: v.dim(),
            basis_rows: v.kernel().map(|k| k.rows()).or(v.dual_pair().map(|d| d.rows_u())).unwrap_or(0),
            bytes: v.into_inner().len(),
            format_major: fv.major,
            format_minor: fv.minor,
            min_reader_major: mr.major,
            min_reader_minor: mr.minor,
            producer: v.producer_version(),
            pair,
            dim_v: v.pair_dims().map_or(0, |(_, dv)| dv),
            pair_work_len: v.pair_workspace_len(),
        };
        // Safety: checked non-NULL and aligned.
        unsafe { *out_info = info };
        rk_status::Ok
    })
}
