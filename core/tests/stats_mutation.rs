//! The `.rks` parser on hostile bytes (property tests): valid statistics
//! files — linear, and Nyström with a map section — with bytes overwritten,
//! bits flipped, ranges deleted or inserted, and the declared length and
//! CRC trailer optionally patched to match (so that mutations reach the
//! checks behind the checksum). `StatsView::new_checked` must return, never
//! panic; a flip without the CRC patched must be refused; and whatever it
//! accepts must keep its contract: every accessor answers without panicking,
//! every value is finite, the arrays have the lengths the shape says, qids
//! strictly increase, and re-emitting the view gives the same bytes.
//! (ranklet-core forbids `unsafe`, so there is no UB to find, only panics,
//! overflow, wrong lengths or a lying file accepted.) The cargo-fuzz target
//! `fuzz/fuzz_targets/stats_parser.rs` runs the same contract unbounded.

use proptest::prelude::*;
use ranklet_core::format::stats::{
    field, FeatureMap, NystromMap, StatsContent, StatsFile, StatsRef, StatsShape, StatsView, STATS_MAGIC,
};
use ranklet_core::graph::QueryWeight;
use ranklet_core::kernel::Kernel;

/// CRC-32 (IEEE, reflected), as the format's trailer: an independent
/// bitwise implementation.
fn crc32(bytes: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0xEDB8_8320 } else { c >> 1 };
        }
    }
    !c
}

/// A valid file: `nystrom` picks the map; `pairs` the weighting.
fn valid(nystrom: bool, pairs: bool) -> Vec<u8> {
    let weight = if pairs { QueryWeight::Pairs } else { QueryWeight::Equal };
    let shape = StatsShape { d: 2, folds: 2, weight };
    let (mt, mq) = (shape.total_len(), shape.query_len());
    let rec = |len: usize, n: f64| {
        let mut r: Vec<f64> = (0..2 * len).map(|i| if i < len { 0.5 + i as f64 } else { 1e-17 * i as f64 }).collect();
        r[0] = n;
        r[len] = 0.0;
        r
    };
    let totals = [rec(mt, 5.0), rec(mt, 3.0)].concat();
    let sealed = [rec(mt, 1.0), rec(mt, 0.0)].concat();
    let queries = [rec(mq, 2.0), rec(mq, 1.0), rec(mq, 4.0)].concat();
    let qids = [2u64, 9, 70];
    let sealed_qids = [40u64];
    let stats = StatsRef { shape, seed: 11, totals: &totals, sealed: &sealed, qids: &qids, queries: &queries };
    let landmarks = [0.5, -1.0, 2.0, 0.25, 1.5, 3.0];
    let factor = [1.0, 0.5, 0.0, 0.75];
    let map = NystromMap { kernel: Kernel::Rbf { gamma: 0.3 }, input_dim: 3, landmarks: &landmarks, factor: &factor };
    let f = if nystrom {
        StatsFile {
            stats,
            sealed_qids: &sealed_qids,
            content: StatsContent::Rows,
            map: FeatureMap::Nystrom,
            nystrom: Some(map),
        }
    } else {
        StatsFile {
            stats,
            sealed_qids: &sealed_qids,
            content: StatsContent::Rows,
            map: FeatureMap::Linear,
            nystrom: None,
        }
    };
    let mut buf = vec![0u8; f.buffer_len().unwrap()];
    f.emit(&mut buf).unwrap();
    buf
}

/// Sets the declared length to the buffer's and recomputes the trailer.
fn patch(b: &mut [u8]) {
    let n = b.len();
    if n >= field::HEADER_LEN + field::CRC_LEN {
        b[field::TOTAL_LEN].copy_from_slice(&(n as u64).to_le_bytes());
        let c = crc32(&b[..n - 4]);
        b[n - 4..].copy_from_slice(&c.to_le_bytes());
    }
}

/// Everything an accepted view promises; returns the view's re-emitted
/// bytes.
fn check_contract(v: &StatsView<'_>) -> Vec<u8> {
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
    assert!(v.rows().is_finite());
    let _ = (v.qid(usize::MAX), v.sealed_qid(usize::MAX), v.seed());
    let (map, hash) = v.feature_map();
    let (lm, fac);
    let nys = match v.nystrom() {
        Some(m) => {
            assert_eq!(map, FeatureMap::Nystrom);
            assert_eq!(m.landmarks_len(), s.d);
            lm = m.landmarks().iter().collect::<Vec<f64>>();
            let packed: Vec<f64> = m.factor_packed().iter().collect();
            assert_eq!(lm.len(), s.d * m.input_dim());
            assert_eq!(packed.len(), s.d * (s.d + 1) / 2);
            assert!(lm.iter().chain(&packed).all(|x| x.is_finite()));
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
        None => {
            assert_eq!((map, hash), (FeatureMap::Linear, 0));
            None
        }
    };
    let stats = StatsRef { shape: s, seed: v.seed(), totals: &totals, sealed: &sealed, qids: &qids, queries: &queries };
    let f = StatsFile { stats, sealed_qids: &sq, content: v.content(), map, nystrom: nys };
    let mut out = vec![0u8; f.buffer_len().unwrap()];
    f.emit(&mut out).unwrap();
    out
}

#[derive(Clone, Debug)]
enum Edit {
    Set(usize, u8),
    Flip(usize, u8),
    Delete(usize, usize),
    Insert(usize, Vec<u8>),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Edit::Set(a, b)),
        4 => (any::<usize>(), 0u8..8).prop_map(|(a, b)| Edit::Flip(a, b)),
        1 => (any::<usize>(), 1usize..24).prop_map(|(a, n)| Edit::Delete(a, n)),
        1 => (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..24)).prop_map(|(a, v)| Edit::Insert(a, v)),
        1 => any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply(b: &mut Vec<u8>, e: &Edit) {
    let n = b.len().max(1);
    match e {
        Edit::Set(a, v) => {
            if !b.is_empty() {
                b[a % n] = *v;
            }
        }
        Edit::Flip(a, bit) => {
            if !b.is_empty() {
                b[a % n] ^= 1 << bit;
            }
        }
        Edit::Delete(a, k) => {
            let at = a % n;
            let end = (at + k).min(b.len());
            b.drain(at.min(b.len())..end);
        }
        Edit::Insert(a, v) => {
            let at = a % (b.len() + 1);
            b.splice(at..at, v.iter().copied());
        }
        Edit::Truncate(a) => b.truncate(a % n),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// Mutated files: no panic; accepted ones keep the contract and
    /// re-emit to the same bytes (so an accepted file is exactly what the
    /// writer would write for its values: nothing in it is ignored).
    #[test]
    fn mutated_files_are_refused_or_keep_the_contract(
        nystrom in any::<bool>(),
        pairs in any::<bool>(),
        edits in proptest::collection::vec(edit(), 1..6),
        fix in any::<bool>(),
    ) {
        let mut b = valid(nystrom, pairs);
        for e in &edits {
            apply(&mut b, e);
        }
        if fix {
            patch(&mut b);
        }
        if let Ok(v) = StatsView::new_checked(&b) {
            // Minor versions are read alike; the writer writes its own.
            let mut again = check_contract(&v);
            again[field::FORMAT_MINOR] = b[field::FORMAT_MINOR];
            patch(&mut again);
            prop_assert_eq!(again, b);
        }
    }

    /// One flipped bit anywhere, the trailer left alone: always refused.
    #[test]
    fn a_flipped_bit_is_refused(nystrom in any::<bool>(), at in any::<usize>(), bit in 0u8..8) {
        let mut b = valid(nystrom, false);
        let n = b.len();
        b[at % n] ^= 1 << bit;
        prop_assert!(StatsView::new_checked(&b).is_err());
    }
}

/// The seeds themselves are valid and re-emit to themselves; random bytes
/// behind a valid magic and header length are refused without panicking.
#[test]
fn seeds_are_valid_and_noise_is_refused() {
    for (ny, pairs) in [(false, false), (false, true), (true, false), (true, true)] {
        let b = valid(ny, pairs);
        let v = StatsView::new_checked(&b).unwrap();
        assert_eq!(check_contract(&v), b);
    }
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    for len in [0, 10, 59, 60, 61, 200, 1000] {
        let mut b: Vec<u8> = (0..len)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s as u8
            })
            .collect();
        if len >= 4 {
            b[..4].copy_from_slice(&STATS_MAGIC);
        }
        patch(&mut b);
        assert!(StatsView::new_checked(&b).is_err(), "{len}");
    }
}
