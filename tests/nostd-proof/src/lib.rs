//! Freestanding proof: exercise core's numerics with no `std`, no `alloc`,
//! `panic = "abort"`. `freestanding_main` returns 0 when every check passes;
//! `tests/support/start_x86_64.c` turns that into the process exit status without libc.
#![no_std]

use ranklet_core::linalg::blas::gemv;
use ranklet_core::MatRef;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}

/// Runs a few core routines on stack buffers; 0 = success, else the number
/// of the failing check.
#[no_mangle]
pub extern "C" fn freestanding_main() -> i32 {
    // y = A·x for a 2×2 column-major A.
    let a = [2.0f64, 1.0, 1.0, 3.0];
    let x = [1.0f64, -1.0];
    let mut y = [0.0f64; 2];
    let Ok(view) = MatRef::from_col_major(&a, 2, 2) else { return 1 };
    if gemv(1.0, view, &x, 0.0, &mut y).is_err() {
        return 2;
    }
    if y != [1.0, -2.0] {
        return 3;
    }
    0
}
