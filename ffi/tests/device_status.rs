//! The two device learners behind one C surface give the same status for
//! the same core error: a prior whose values `float` cannot hold is
//! `RK_STATUS_NON_FINITE_INPUT` from `rk_online_init` and from
//! `rk_pref_init` alike, nothing is handed out, and the storage can start
//! a learner from a good prior afterwards.

use core::ffi::c_void;
use core::ptr;

use ranklet_core::format::{ElementType, LinearModel, Model, ModelSpec, PrefGpModel, Values};
use ranklet_ffi::{
    rk_model, rk_model_parse, rk_model_storage_size, rk_online, rk_online_init, rk_online_storage_size, rk_pref,
    rk_pref_init, rk_pref_storage_size, rk_status,
};

fn emit(m: Model<'_>) -> Vec<u8> {
    let spec = ModelSpec::new(m, ElementType::F64);
    let mut buf = vec![0u8; spec.buffer_len()];
    spec.emit(&mut buf).unwrap();
    buf
}

/// Parses `bytes` into `storage` (kept alive by the caller).
fn parse(bytes: &[u8], storage: &mut Vec<u64>) -> *const rk_model {
    storage.resize(rk_model_storage_size().div_ceil(8), 0);
    let mut m = ptr::null();
    let st =
        unsafe { rk_model_parse(bytes.as_ptr(), bytes.len(), storage.as_mut_ptr().cast(), storage.len() * 8, &mut m) };
    assert_eq!(st, rk_status::Ok);
    m
}

#[test]
fn a_prior_float_cannot_hold_is_non_finite_input_for_both_learners() {
    // f64 values past f32::MAX (3.4e38): finite in the file, not in float.
    let big = 1e39;
    let (mut s1, mut s2, mut s3, mut s4) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());

    let online_bad = parse(&emit(Model::Linear(LinearModel { w: &[big, 1.0], offset: 0.0, centring: None })), &mut s1);
    let online_good = parse(&emit(Model::Linear(LinearModel { w: &[0.5, 1.0], offset: 0.0, centring: None })), &mut s2);
    let mut storage = vec![0u8; rk_online_storage_size(2)];
    let mut o: *mut rk_online = ptr::null_mut();
    let st = unsafe { rk_online_init(online_bad, 1.0, storage.as_mut_ptr().cast::<c_void>(), storage.len(), &mut o) };
    assert_eq!(st, rk_status::NonFiniteInput);
    assert!(o.is_null(), "nothing handed out on error");
    let st = unsafe { rk_online_init(online_good, 1.0, storage.as_mut_ptr().cast::<c_void>(), storage.len(), &mut o) };
    assert_eq!(st, rk_status::Ok);

    let gp = |mean: &[f64]| {
        emit(Model::PrefGp(PrefGpModel {
            sigma: 1.0,
            count: 0,
            mean: Values::F64(mean),
            cov_packed: Values::F64(&[1.0, 0.0, 1.0]),
            item_names: "",
        }))
    };
    let pref_bad = parse(&gp(&[big, 0.0]), &mut s3);
    let pref_good = parse(&gp(&[0.5, 0.0]), &mut s4);
    let mut storage = vec![0u8; rk_pref_storage_size(2)];
    let mut p: *mut rk_pref = ptr::null_mut();
    let st = unsafe { rk_pref_init(pref_bad, storage.as_mut_ptr().cast::<c_void>(), storage.len(), &mut p) };
    assert_eq!(st, rk_status::NonFiniteInput);
    assert!(p.is_null(), "nothing handed out on error");
    let st = unsafe { rk_pref_init(pref_good, storage.as_mut_ptr().cast::<c_void>(), storage.len(), &mut p) };
    assert_eq!(st, rk_status::Ok);
}
