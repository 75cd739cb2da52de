//! Freestanding proof: exercise core's numerics with no `std`, no `alloc`,
//! `panic = "abort"`. `freestanding_main` returns 0 when every check passes;
//! `tests/support/start_x86_64.c` turns that into the process exit status without libc.
#![no_std]

use ranklet_core::format::{ElementType, Model, ModelSpec, ModelView, PrefGpModel, Values};
use ranklet_core::learn::pref::device::DevicePrefGp;
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
    // A preference GP on the device: write a kind-8 prior N(0, I) over 3
    // items into a stack buffer, load it as f32, observe 2 ≻ 0, ask.
    let (mean, cov) = ([0.0f64; 3], [1.0f64, 0.0, 1.0, 0.0, 0.0, 1.0]);
    let model = Model::PrefGp(PrefGpModel {
        sigma: 1.0,
        count: 0,
        mean: Values::F64(&mean),
        cov_packed: Values::F64(&cov),
        item_names: "",
    });
    let mut file = [0u8; 256];
    let Ok(len) = ModelSpec::new(model, ElementType::F32).emit(&mut file) else { return 4 };
    let Ok(view) = ModelView::new_checked(&file[..len]) else { return 5 };
    let mut storage = [0.0f32; DevicePrefGp::<f32>::storage_len(3)];
    let Ok(mut gp) = DevicePrefGp::from_model(&mut storage, &view) else { return 6 };
    if gp.observe(2, 0).is_err() || gp.observe(1, 1).is_ok() {
        return 7;
    }
    let mut order = [0u32; 3];
    if gp.rank(&mut order).is_err() || order != [2, 1, 0] {
        return 8;
    }
    match gp.prob(2, 0) {
        Ok((p, v)) if p > 0.5 && p < 1.0 && v > 0.0 => {}
        _ => return 9,
    }
    match gp.next_pair() {
        Some((i, j, r)) if i < j && j < 3 && r > 0.0 => {}
        _ => return 10,
    }
    0
}
