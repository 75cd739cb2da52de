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

/// Runs the body, turning a panic into `RK_STATUS_PANIC` under `std`.
macro_rules! fence {
    ($body:block) => {{
        #[cfg(feature = "std")]
        {
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> rk_status { $body })) {
                Ok(s) => s,
                Err(_) => rk_status::Panic,
            }
        }
        #[cfg(not(feature = "std"))]
        {
            (|| -> rk_status { $body })()
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
    if p.is_null() {
        return Err(rk_status::NullArgument);
    }
    if !p.is_aligned() {
        return Err(rk_status::Misaligned);
    }
    if len.checked_mul(size_of::<T>()).is_none_or(|b| b > isize::MAX as usize) {
        return Err(rk_status::LengthMismatch);
    }
    // Safety: non-NULL, aligned, size fits isize; the caller promises `len`
    // valid elements for 'a.
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
    if p.is_null() {
        return Err(rk_status::NullArgument);
    }
    if !p.is_aligned() {
        return Err(rk_status::Misaligned);
    }
    if len.checked_mul(size_of::<T>()).is_none_or(|b| b > isize::MAX as usize) {
        return Err(rk_status::LengthMismatch);
    }
    // Safety: as in_slice, and the caller promises exclusive access.
    Ok(unsafe { core::slice::from_raw_parts_mut(p, len) })
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
