//! `StatsView::new_checked` (the `.rks` statistics file) on arbitrary
//! bytes; on success, every accessor, and the view re-emitted through
//! `StatsFile` must give back the same bytes (minor version aside).
//!
//! Contract under test (core/src/format/stats.rs): once `new_checked`
//! returns `Ok`, no accessor panics, every value is finite, the arrays have
//! the lengths the shape says, qids strictly increase, a Nyström map has
//! `m = d` landmarks and a positive diagonal in `L`, and nothing in the file
//! is ignored. Built with `--cfg fuzzing`, so the CRC comparison is skipped
//! and mutations reach the checks behind it. The bounded version of this
//! target runs in `cargo test` (`core/tests/stats_mutation.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ranklet_core::format::stats::{field, FeatureMap, NystromMap, StatsFile, StatsRef, StatsView};

fuzz_target!(|data: &[u8]| {
    let Ok(v) = StatsView::new_checked(data) else { return };
    let s = v.shape();
    assert!(s.d >= 1 && s.folds >= 1);
    let (mt, mq) = (s.total_len(), s.query_len());
    let totals: Vec<f64> = v.totals().iter().collect();
    let sealed: Vec<f64> = v.sealed().iter().collect();
    let queries: Vec<f64> = v.queries().iter().collect();
    assert_eq!(totals.len(), s.folds * 2 * mt);
    assert_eq!(sealed.len(), s.folds * 2 * mt);
    assert_eq!(queries.len(), v.n_queries() * 2 * mq);
    assert!(totals.iter().chain(&sealed).chain(&queries).all(|x| x.is_finite()));
    let qids: Vec<u64> = (0..v.n_queries()).map(|j| v.qid(j)).collect();
    let sq: Vec<u64> = (0..v.n_sealed()).map(|j| v.sealed_qid(j)).collect();
    assert!(qids.windows(2).all(|w| w[0] < w[1]) && sq.windows(2).all(|w| w[0] < w[1]));
    let _ = (v.qid(usize::MAX), v.sealed_qid(usize::MAX), v.rows(), v.seed());
    let (map, _) = v.feature_map();
    let (lm, fac);
    let nys = match v.nystrom() {
        Some(m) => {
            lm = m.landmarks().iter().collect::<Vec<f64>>();
            let packed: Vec<f64> = m.factor_packed().iter().collect();
            assert_eq!((m.landmarks_len(), lm.len(), packed.len()), (s.d, s.d * m.input_dim(), s.d * (s.d + 1) / 2));
            let mut f = vec![0.0; s.d * s.d];
            for i in 0..s.d {
                assert!(packed[i * (i + 1) / 2 + i] > 0.0);
                for j in 0..=i {
                    f[j * s.d + i] = packed[i * (i + 1) / 2 + j];
                }
            }
            fac = f;
            Some(NystromMap { kernel: m.kernel(), input_dim: m.input_dim(), landmarks: &lm, factor: &fac })
        }
        None => None,
    };
    assert_eq!(nys.is_some(), map == FeatureMap::Nystrom);
    let stats = StatsRef { shape: s, seed: v.seed(), totals: &totals, sealed: &sealed, qids: &qids, queries: &queries };
    let f = StatsFile { stats, sealed_qids: &sq, content: v.content(), map, nystrom: nys };
    let mut out = vec![0u8; f.buffer_len().unwrap()];
    f.emit(&mut out).unwrap();
    out[field::FORMAT_MINOR] = data[field::FORMAT_MINOR];
    let n = out.len();
    // The trailer may differ (the fuzz build skips its comparison).
    assert_eq!(out[..n - 4], data[..n - 4]);
});
