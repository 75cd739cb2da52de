//! The online learner's state saved through the two-slot store, end to end:
//! a save torn after any byte, or a newest slot with any single bit
//! flipped, restores the previous learner state exactly (weights bit for
//! bit, count, λ); a complete save restores the new one. This is what a
//! device does after power loss (`rk_online_load`).

use ranklet_core::format::{ElementType, ModelSpec, ModelView};
use ranklet_core::learn::online::OnlineRankRls;
use ranklet_core::store;

const D: usize = 6;

/// A deterministic stream of features in [-1, 1).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
    fn row(&mut self) -> [f32; D] {
        core::array::from_fn(|_| self.next())
    }
}

/// The state's .rkl file and (weights, count) after `n` observations.
fn state_after(n: usize) -> (Vec<u8>, Vec<f32>, u64) {
    let mut storage = vec![0f32; OnlineRankRls::<f32>::storage_len(D)];
    let w0 = [0.5f32, -0.25, 0.0, 1.0, 0.125, -1.5];
    let mut l = OnlineRankRls::new(&mut storage, &w0, 0.75, 0xABCD).unwrap();
    let mut rng = Lcg(9);
    for k in 0..n {
        let (a, b) = (rng.row(), rng.row());
        l.observe(&a, &b, 1.0 + (k % 3) as f32).unwrap();
    }
    let spec = ModelSpec::new(l.to_model(0.25), ElementType::F32);
    let mut file = vec![0u8; spec.buffer_len()];
    spec.emit(&mut file).unwrap();
    (file, l.weights().to_vec(), l.count())
}

/// Restores the newest state of a region: (weights, count).
fn restore(region: &[u8]) -> (Vec<f32>, u64) {
    let saved = store::load(region).expect("a state loads");
    let v = ModelView::new_checked(saved.payload).expect("a loaded slot is a valid model");
    let o = v.online().expect("an online state");
    let mut storage = vec![0f32; OnlineRankRls::<f32>::storage_len(D)];
    let l = OnlineRankRls::restore(&mut storage, &o).expect("restores");
    (l.weights().to_vec(), l.count())
}

fn bits(w: &[f32]) -> Vec<u32> {
    w.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn a_restored_state_is_the_saved_one_bit_for_bit() {
    let (file, w, count) = state_after(40);
    let mut region = vec![0u8; store::region_len_for(file.len()).unwrap()];
    store::save(&mut region, &file).unwrap();
    let (w2, c2) = restore(&region);
    assert_eq!((bits(&w2), c2), (bits(&w), count));
}

#[test]
fn a_save_torn_after_any_byte_restores_the_previous_or_the_new_state() {
    let (old, w_old, c_old) = state_after(25);
    let (new, w_new, c_new) = state_after(26);
    assert_ne!(bits(&w_old), bits(&w_new));
    // Two earlier saves, so the slot being overwritten holds an older valid
    // state that a torn write must not bring back.
    let (older, _, _) = state_after(24);
    let mut base = vec![0u8; store::region_len_for(new.len().max(old.len())).unwrap()];
    store::save(&mut base, &older).unwrap();
    store::save(&mut base, &old).unwrap();
    let mut writes = Vec::new();
    store::save_with(&base, &new, |at, bytes: &[u8]| {
        writes.extend(bytes.iter().enumerate().map(|(k, &b)| (at + k, b)));
        Ok::<(), ()>(())
    })
    .unwrap();
    assert!(writes.len() > new.len());
    for cut in 0..=writes.len() {
        let mut r = base.clone();
        for &(at, b) in &writes[..cut] {
            r[at] = b;
        }
        let got = restore(&r);
        let want = if cut == writes.len() { (bits(&w_new), c_new) } else { (bits(&w_old), c_old) };
        assert_eq!((bits(&got.0), got.1), want, "cut after {cut} of {} byte writes", writes.len());
    }
}

#[test]
fn any_flipped_bit_in_the_newest_slot_restores_the_previous_state() {
    let (old, w_old, c_old) = state_after(30);
    let (new, _, _) = state_after(31);
    let mut base = vec![0u8; store::region_len_for(new.len()).unwrap()];
    store::save(&mut base, &old).unwrap();
    store::save(&mut base, &new).unwrap();
    let newest = store::load(&base).unwrap().slot;
    let start = newest * base.len() / 2;
    for byte in start..start + store::SLOT_HEADER_LEN + new.len() {
        for bit in 0..8 {
            let mut r = base.clone();
            r[byte] ^= 1 << bit;
            let (w, c) = restore(&r);
            assert_eq!((bits(&w), c), (bits(&w_old), c_old), "byte {byte} bit {bit}");
        }
    }
}

#[test]
fn a_restored_learner_continues_as_the_saved_one() {
    let mut s1 = vec![0f32; OnlineRankRls::<f32>::storage_len(D)];
    let mut l1 = OnlineRankRls::new(&mut s1, &[0.1; D], 0.5, 1).unwrap();
    let mut rng = Lcg(77);
    for _ in 0..50 {
        let (a, b) = (rng.row(), rng.row());
        l1.observe(&a, &b, 1.0).unwrap();
    }
    let spec = ModelSpec::new(l1.to_model(0.0), ElementType::F32);
    let mut file = vec![0u8; spec.buffer_len()];
    spec.emit(&mut file).unwrap();
    let v = ModelView::new_checked(&file).unwrap();
    let mut s2 = vec![0f32; OnlineRankRls::<f32>::storage_len(D)];
    let mut l2 = OnlineRankRls::restore(&mut s2, &v.online().unwrap()).unwrap();
    assert!(l1.rhs_compensation().iter().any(|&c| c != 0.0), "the test needs a non-zero compensation");
    for _ in 0..50 {
        let (a, b) = (rng.row(), rng.row());
        l1.observe(&a, &b, 1.5).unwrap();
        l2.observe(&a, &b, 1.5).unwrap();
    }
    // `b` and its compensation bit for bit; the factor (whose compensation
    // the file does not hold) and the weights to rounding.
    assert_eq!(bits(l1.rhs()), bits(l2.rhs()));
    assert_eq!(bits(l1.rhs_compensation()), bits(l2.rhs_compensation()));
    let close = |a: &[f32], b: &[f32]| {
        let n = a.iter().zip(b).map(|(x, y)| ((x - y) as f64).powi(2)).sum::<f64>().sqrt();
        n / a.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt()
    };
    assert!(close(l1.factor_packed(), l2.factor_packed()) <= 4.0 * f32::EPSILON as f64);
    assert!(close(l1.weights(), l2.weights()) <= 1e-5);
}
