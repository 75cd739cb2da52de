//! Pointer guards: the `catch_unwind` fence around every entry point, `?`
//! for statuses, and the NULL / alignment / length checks that turn C
//! pointers into Rust slices. Every `unsafe` dereference of a caller's
//! array goes through here.

use core::mem::size_of;

use crate::status::rk_status;

#[cfg(not(feature = "std"))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // Unreachable by construction (see the crate docs); firmware is built
    // with panic = "abort", so there is nothing to unwind.
    loop {}
}

/// Runs the body, turning a panic into `RK_STATUS_PANIC` under `std`;
/// `fence!(0 => usize, { … })` for an entry point that returns a size
/// instead of a status (a panic then returns that value, 0: "no size").
macro_rules! fence {
    ($body:block) => {
        fence!(rk_status::Panic => rk_status, $body)
    };
    ($on_panic:expr => $ty:ty, $body:block) => {{
        #[cfg(feature = "std")]
        {
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> $ty { $body })) {
                Ok(s) => s,
                Err(_) => $on_panic,
            }
        }
        #[cfg(not(feature = "std"))]
        {
            (|| -> $ty { $body })()
        }
    }};
}

/// `?` for `Result<T, rk_status>` inside a fenced body.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(s) => return rk_status::from(s),
        }
    };
}

/// The checks shared by [`in_slice`] and [`out_slice`] for a non-empty
/// array: not NULL, aligned for `T`, and `len` elements within `isize::MAX`
/// bytes.
fn check_array<T>(p: *const T, len: usize) -> Result<(), rk_status> {
    if p.is_null() {
        return Err(rk_status::NullArgument);
    }
    if !p.is_aligned() {
        return Err(rk_status::Misaligned);
    }
    if len.checked_mul(size_of::<T>()).is_none_or(|b| b > isize::MAX as usize) {
        return Err(rk_status::LengthMismatch);
    }
    Ok(())
}

/// An input array: NULL with length 0 is empty.
///
/// # Safety
///
/// If `p` is not NULL it must point to `len` initialised `T`s that stay
/// valid and unmodified for `'a`.
pub(crate) unsafe fn in_slice<'a, T>(p: *const T, len: usize) -> Result<&'a [T], rk_status> {
    if len == 0 {
        return Ok(&[]);
    }
    check_array(p, len)?;
    // Safety: non-NULL, aligned, size fits isize (check_array); the caller
    // promises `len` valid elements for 'a.
    Ok(unsafe { core::slice::from_raw_parts(p, len) })
}

/// An output array: NULL with length 0 is empty.
///
/// # Safety
///
/// If `p` is not NULL it must point to `len` writable `T`s, not aliased by
/// any other argument, valid for `'a`.
pub(crate) unsafe fn out_slice<'a, T>(p: *mut T, len: usize) -> Result<&'a mut [T], rk_status> {
    if len == 0 {
        return Ok(&mut []);
    }
    check_array(p.cast_const(), len)?;
    // Safety: as in_slice, and the caller promises exclusive access.
    Ok(unsafe { core::slice::from_raw_parts_mut(p, len) })
}

/// `(row_ptr, indices, values)` of sparse rows in CSR form.
pub(crate) type Csr<'a> = (&'a [u32], &'a [u32], &'a [f32]);

/// The three input arrays of `n_rows` sparse rows in CSR form: `row_ptr`
/// (`n_rows + 1` entries), `indices` and `values` (`nnz` each).
///
/// # Safety
///
/// As [`in_slice`] for each array.
pub(crate) unsafe fn csr_rows<'a>(
    row_ptr: *const u32,
    indices: *const u32,
    values: *const f32,
    nnz: usize,
    n_rows: usize,
) -> Result<Csr<'a>, rk_status> {
    let n_ptr = n_rows.checked_add(1).ok_or(rk_status::LengthMismatch)?;
    // Safety: forwarded caller promises.
    unsafe { Ok((in_slice(row_ptr, n_ptr)?, in_slice(indices, nnz)?, in_slice(values, nnz)?)) }
}

/// Writes `v` through an output pointer (checked non-NULL and aligned
/// before).
///
/// # Safety
///
/// `p` must be NULL or valid for a write of `T`.
pub(crate) unsafe fn check_out<T>(p: *mut T) -> Result<(), rk_status> {
    if p.is_null() {
        Err(rk_status::NullArgument)
    } else if !p.is_aligned() {
        Err(rk_status::Misaligned)
    } else {
        Ok(())
    }
}
