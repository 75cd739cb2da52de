//! Brute-force (O(n²)) cross-checks, properties and edge cases of the metrics.

extern crate std;

use super::*;
use crate::sort::merge_sort_by;
use proptest::prelude::*;
use std::{format, vec, vec::Vec};

const TOL: f64 = 1e-12;

// ------------------------------------------------------------ brute force

/// Per query: `(discordant + ½ tied, concordant + ½ tied, comparable)` over
/// ordered pairs with `labels[i] > labels[j]`.
fn brute_pairs(labels: &[f64], preds: &[f64]) -> (f64, f64, usize) {
    let (mut dis, mut con, mut comp) = (0.0, 0.0, 0);
    for i in 0..labels.len() {
        for j in 0..labels.len() {
            if labels[i] > labels[j] {
                comp += 1;
                if preds[i] < preds[j] {
                    dis += 1.0;
                } else if preds[i] == preds[j] {
                    dis += 0.5;
                    con += 0.5;
                } else {
                    con += 1.0;
                }
            }
        }
    }
    (dis, con, comp)
}

fn brute_disagreement(labels: &[f64], preds: &[f64], ptr: &[usize]) -> Option<(f64, usize, usize)> {
    let (mut sum, mut used, mut skipped) = (0.0, 0, 0);
    for q in ptr.windows(2) {
        let (d, _, comp) = brute_pairs(&labels[q[0]..q[1]], &preds[q[0]..q[1]]);
        if comp == 0 {
            skipped += 1;
        } else {
            sum += d / comp as f64;
            used += 1;
        }
    }
    (used > 0).then(|| (sum / used as f64, used, skipped))
}

fn brute_tau_b(x: &[f64], y: &[f64]) -> Option<f64> {
    let (mut s, mut n1, mut n2, mut n0) = (0i64, 0i64, 0i64, 0i64);
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            n0 += 1;
            let a = (x[i] - x[j]).partial_cmp(&0.0).unwrap() as i64;
            let b = (y[i] - y[j]).partial_cmp(&0.0).unwrap() as i64;
            s += a * b;
            n1 += (a == 0) as i64;
            n2 += (b == 0) as i64;
        }
    }
    let den = ((n0 - n1) as f64 * (n0 - n2) as f64).sqrt();
    (den > 0.0).then(|| s as f64 / den)
}

fn brute_ranks(v: &[f64]) -> Vec<f64> {
    v.iter()
        .map(|&a| {
            let less = v.iter().filter(|&&b| b < a).count() as f64;
            let eq = v.iter().filter(|&&b| b == a).count() as f64;
            less + (eq + 1.0) / 2.0
        })
        .collect()
}

fn brute_spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    let (rx, ry) = (brute_ranks(x), brute_ranks(y));
    let n = x.len() as f64;
    let (mx, my) = (rx.iter().sum::<f64>() / n, ry.iter().sum::<f64>() / n);
    let sxy: f64 = rx.iter().zip(&ry).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = rx.iter().map(|a| (a - mx) * (a - mx)).sum();
    let syy: f64 = ry.iter().map(|b| (b - my) * (b - my)).sum();
    (x.len() >= 2 && sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

fn brute_auc(labels: &[f64], preds: &[f64], thr: f64) -> Option<f64> {
    let (mut num, mut den) = (0.0, 0usize);
    for i in 0..labels.len() {
        for j in 0..labels.len() {
            if labels[i] > thr && labels[j] <= thr {
                den += 1;
                num += if preds[i] > preds[j] {
                    1.0
                } else if preds[i] == preds[j] {
                    0.5
                } else {
                    0.0
                };
            }
        }
    }
    (den > 0).then(|| num / den as f64)
}

fn approx(a: f64, b: f64) -> bool {
    (a - b).abs() <= TOL
}

// ------------------------------------------------------------ strategies

/// Values on a small grid so that ties are frequent.
fn tied_vec(n: core::ops::Range<usize>, levels: i32) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec((0..levels).prop_map(|v| v as f64 * 0.5 - 1.0), n)
}

/// Labels, predictions and query boundaries (query sizes 0..=12).
fn queried() -> impl Strategy<Value = (Vec<f64>, Vec<f64>, Vec<usize>)> {
    prop::collection::vec(0usize..=12, 1..6).prop_flat_map(|sizes| {
        let n: usize = sizes.iter().sum();
        let mut ptr = vec![0];
        for s in &sizes {
            ptr.push(ptr.last().unwrap() + s);
        }
        (tied_vec(n..n + 1, 4), tied_vec(n..n + 1, 5), Just(ptr))
    })
}

fn paired(levels: i32) -> impl Strategy<Value = (Vec<f64>, Vec<f64>)> {
    (0usize..80).prop_flat_map(move |n| (tied_vec(n..n + 1, levels), tied_vec(n..n + 1, levels)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn merge_sort_is_stable_and_counts_inversions(v in prop::collection::vec(0u8..6, 0..60)) {
        let n = v.len();
        let mut idx: Vec<usize> = (0..n).collect();
        let mut buf = vec![0usize; n];
        let ex = merge_sort_by(&mut idx, &mut buf, |a, b| v[a] < v[b]);
        let mut inv = 0u128;
        for i in 0..n {
            for j in i + 1..n {
                inv += (v[j] < v[i]) as u128;
            }
        }
        prop_assert_eq!(ex, inv);
        let mut want: Vec<usize> = (0..n).collect();
        want.sort_by_key(|&i| v[i]); // std's stable sort
        prop_assert_eq!(idx, want);
    }

    #[test]
    fn disagreement_matches_brute_force((labels, preds, ptr) in queried()) {
        let mut work = vec![0usize; index_workspace_len(labels.len())];
        let got = disagreement(&labels, &preds, &ptr, &mut work);
        match brute_disagreement(&labels, &preds, &ptr) {
            None => prop_assert_eq!(got, Err(MetricError::Undefined)),
            Some((v, used, skipped)) => {
                let got = got.unwrap();
                prop_assert!(approx(got.value, v), "{} vs {}", got.value, v);
                prop_assert_eq!((got.queries_used, got.queries_skipped), (used, skipped));
                // Per query C = 1 − d, so the means add to 1 over the same queries.
                let c = concordance_index_by_query(&labels, &preds, &ptr, &mut work).unwrap();
                prop_assert!(approx(c.value + got.value, 1.0));
                prop_assert_eq!(c.queries_used, used);
            }
        }
    }

    #[test]
    fn cindex_is_one_minus_disagreement_and_matches_brute((labels, preds) in paired(4)) {
        let n = labels.len();
        let mut work = vec![0usize; index_workspace_len(n)];
        let c = concordance_index(&labels, &preds, &mut work);
        let (_, con, comp) = brute_pairs(&labels, &preds);
        if comp == 0 {
            prop_assert_eq!(c, Err(MetricError::Undefined));
        } else {
            let c = c.unwrap();
            prop_assert!(approx(c, con / comp as f64));
            let d = disagreement(&labels, &preds, &[0, n], &mut work).unwrap();
            prop_assert!(approx(c, 1.0 - d.value));
        }
    }

    #[test]
    fn kendall_matches_brute_force((x, y) in paired(4)) {
        let mut work = vec![0usize; index_workspace_len(x.len())];
        let got = kendall_tau_b(&x, &y, &mut work);
        match brute_tau_b(&x, &y) {
            None => prop_assert_eq!(got, Err(MetricError::Undefined)),
            Some(t) => {
                let g = got.unwrap();
                prop_assert!(approx(g, t), "{} vs {}", g, t);
                // Symmetric in its arguments.
                prop_assert!(approx(kendall_tau_b(&y, &x, &mut work).unwrap(), g));
            }
        }
    }

    #[test]
    fn kendall_few_ties_matches_brute_force((x, y) in paired(1000)) {
        let mut work = vec![0usize; index_workspace_len(x.len())];
        let got = kendall_tau_b(&x, &y, &mut work).ok();
        let want = brute_tau_b(&x, &y);
        prop_assert_eq!(got.is_some(), want.is_some());
        if let (Some(g), Some(w)) = (got, want) {
            prop_assert!(approx(g, w));
        }
    }

    #[test]
    fn spearman_matches_brute_force((x, y) in paired(5)) {
        let n = x.len();
        let mut work = vec![0usize; index_workspace_len(n)];
        let mut fwork = vec![0f64; real_workspace_len(n)];
        let got = spearman_rho(&x, &y, &mut work, &mut fwork);
        match brute_spearman(&x, &y) {
            None => prop_assert_eq!(got, Err(MetricError::Undefined)),
            Some(r) => prop_assert!(approx(got.unwrap(), r)),
        }
    }

    #[test]
    fn auc_matches_brute_force_and_cindex((labels, preds) in paired(4), thr in -1.0f64..1.0) {
        let n = labels.len();
        let mut work = vec![0usize; index_workspace_len(n)];
        let got = auc(&labels, &preds, thr, &mut work);
        match brute_auc(&labels, &preds, thr) {
            None => prop_assert_eq!(got, Err(MetricError::Undefined)),
            Some(a) => {
                let g = got.unwrap();
                prop_assert!(approx(g, a));
                let bin: Vec<f64> = labels.iter().map(|&l| (l > thr) as u8 as f64).collect();
                prop_assert!(approx(g, concordance_index(&bin, &preds, &mut work).unwrap()));
            }
        }
    }

    #[test]
    fn pair_error_on_all_label_pairs_is_disagreement((labels, preds) in paired(4)) {
        let n = labels.len();
        let mut pairs = Vec::new();
        for i in 0..n {
            for j in 0..n {
                if labels[i] > labels[j] {
                    pairs.push((i, j));
                }
            }
        }
        let mut work = vec![0usize; index_workspace_len(n)];
        let e = pair_error(&preds, &pairs, None);
        match disagreement(&labels, &preds, &[0, n], &mut work) {
            Err(_) => prop_assert_eq!(e, Err(MetricError::Undefined)),
            Ok(d) => {
                let e = e.unwrap();
                prop_assert!(approx(e, d.value));
                // Uniform weights change nothing.
                let w = vec![2.5; pairs.len()];
                prop_assert!(approx(pair_error(&preds, &pairs, Some(&w)).unwrap(), e));
            }
        }
    }

    #[test]
    fn ndcg_is_one_for_ideal_ranking_and_in_unit_interval((labels, preds, ptr) in queried()) {
        let mut work = vec![0usize; index_workspace_len(labels.len())];
        let rel: Vec<f64> = labels.iter().map(|l| l + 1.0).collect(); // ≥ 0
        for k in [1, 2, 5, 100] {
            for gain in [Gain::Exponential, Gain::Linear] {
                let p = NdcgParams::at(k).with_gain(gain).with_idcg_zero(IdcgZero::One);
                let ideal = ndcg(&rel, &rel, &ptr, &p, &mut work).unwrap();
                prop_assert!(approx(ideal.value, 1.0));
                let got = ndcg(&rel, &preds, &ptr, &p, &mut work).unwrap();
                prop_assert!((0.0..=1.0).contains(&got.value));
                let m = mean_average_precision(&rel, &preds, &ptr, &MapParams::default().with_threshold(1.0), &mut work).unwrap();
                prop_assert!((0.0..=1.0).contains(&m.value));
            }
        }
    }

    #[test]
    fn one_full_order_equals_plain_correlation(preds in tied_vec(0..30, 4), seed in any::<u64>()) {
        // A permutation of all items, from a cheap LCG shuffle.
        let n = preds.len();
        let mut items: Vec<usize> = (0..n).collect();
        let mut s = seed | 1;
        for i in (1..n).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            items.swap(i, (s >> 33) as usize % (i + 1));
        }
        let x: Vec<f64> = (0..n).map(|p| (n - p) as f64).collect();
        let y: Vec<f64> = items.iter().map(|&i| preds[i]).collect();
        let mut work = vec![0usize; index_workspace_len(n)];
        let mut fwork = vec![0f64; real_workspace_len(n)];
        let ptr = [0, n];
        let t = mean_order_correlation(&preds, &ptr, &items, Correlation::KendallTauB, &mut work, &mut []);
        match kendall_tau_b(&x, &y, &mut work) {
            Ok(v) => prop_assert!(approx(t.unwrap().value, v)),
            Err(e) => prop_assert_eq!(t, Err(e)),
        }
        let r = mean_order_correlation(&preds, &ptr, &items, Correlation::SpearmanRho, &mut work, &mut fwork);
        match spearman_rho(&x, &y, &mut work, &mut fwork) {
            Ok(v) => prop_assert!(approx(r.unwrap().value, v)),
            Err(e) => prop_assert_eq!(r, Err(e)),
        }
    }

    /// Hostile input never panics: arbitrary floats (NaN, ±∞), arbitrary
    /// boundaries and indices, short workspaces.
    #[test]
    fn hostile_input_never_panics(
        labels in prop::collection::vec(prop::num::f64::ANY, 0..12),
        preds in prop::collection::vec(prop::num::f64::ANY, 0..12),
        ptr in prop::collection::vec(0usize..14, 0..5),
        idx in prop::collection::vec(0usize..14, 0..10),
        wlen in 0usize..30,
        k in 0usize..4,
    ) {
        let mut work = vec![0usize; wlen];
        let mut fwork = vec![0f64; wlen];
        let _ = disagreement(&labels, &preds, &ptr, &mut work);
        let _ = concordance_index(&labels, &preds, &mut work);
        let _ = concordance_index_by_query(&labels, &preds, &ptr, &mut work);
        let _ = auc(&labels, &preds, 0.0, &mut work);
        let _ = kendall_tau_b(&labels, &preds, &mut work);
        let _ = spearman_rho(&labels, &preds, &mut work, &mut fwork);
        let _ = ndcg(&labels, &preds, &ptr, &NdcgParams::at(k), &mut work);
        let _ = mean_average_precision(&labels, &preds, &ptr, &MapParams::default(), &mut work);
        let pairs: Vec<(usize, usize)> = idx.chunks(2).map(|c| (c[0], *c.last().unwrap())).collect();
        let _ = pair_error(&preds, &pairs, Some(&labels[..pairs.len().min(labels.len())]));
        let _ = mean_order_correlation(&preds, &ptr, &idx, Correlation::KendallTauB, &mut work, &mut fwork);
        let _ = mean_order_correlation(&preds, &ptr, &idx, Correlation::SpearmanRho, &mut work, &mut fwork);
    }
}

// ------------------------------------------------------------ edge cases

#[test]
fn larger_input_with_ties_matches_brute_force() {
    let n = 2000;
    let mut s = 12345u64;
    let mut next = |m: u64| {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 33) % m) as f64
    };
    let x: Vec<f64> = (0..n).map(|_| next(7)).collect();
    let y: Vec<f64> = (0..n).map(|_| next(11)).collect();
    let mut work = vec![0usize; index_workspace_len(n)];
    let t = kendall_tau_b(&x, &y, &mut work).unwrap();
    assert!((t - brute_tau_b(&x, &y).unwrap()).abs() < 1e-12);
    let d = disagreement(&x, &y, &[0, n], &mut work).unwrap().value;
    let (dis, _, comp) = brute_pairs(&x, &y);
    assert!((d - dis / comp as f64).abs() < 1e-12);
}

#[test]
fn tiny_and_constant_inputs_are_undefined() {
    let mut work = [0usize; 8];
    let mut fwork = [0f64; 8];
    for n in 0..=1 {
        let v = [1.0; 1];
        let v = &v[..n];
        assert_eq!(kendall_tau_b(v, v, &mut work), Err(MetricError::Undefined));
        assert_eq!(spearman_rho(v, v, &mut work, &mut fwork), Err(MetricError::Undefined));
        assert_eq!(concordance_index(v, v, &mut work), Err(MetricError::Undefined));
        assert_eq!(auc(v, v, 0.0, &mut work), Err(MetricError::Undefined));
        assert_eq!(disagreement(v, v, &[0, n], &mut work), Err(MetricError::Undefined));
    }
    let c = [2.0; 4];
    let v = [1.0, 2.0, 3.0, 4.0];
    assert_eq!(kendall_tau_b(&c, &v, &mut work), Err(MetricError::Undefined));
    assert_eq!(kendall_tau_b(&v, &c, &mut work), Err(MetricError::Undefined));
    assert_eq!(spearman_rho(&v, &c, &mut work, &mut fwork), Err(MetricError::Undefined));
    assert_eq!(concordance_index(&c, &v, &mut work), Err(MetricError::Undefined));
    // Constant predictions: every comparable pair is a tie, so d = C = ½.
    assert_eq!(disagreement(&v, &c, &[0, 4], &mut work).unwrap().value, 0.5);
    assert_eq!(concordance_index(&v, &c, &mut work), Ok(0.5));
    assert_eq!(auc(&[0.0, 1.0, 1.0, 0.0], &c, 0.5, &mut work), Ok(0.5));
    // Zero queries.
    assert_eq!(disagreement(&[], &[], &[0], &mut work), Err(MetricError::Undefined));
    assert_eq!(ndcg(&[], &[], &[0], &NdcgParams::at(3), &mut work), Err(MetricError::Undefined));
    // An empty query under IdcgZero::One scores 1; under Skip it is skipped.
    let one = ndcg(&[], &[], &[0, 0], &NdcgParams::at(3).with_idcg_zero(IdcgZero::One), &mut work);
    assert_eq!(one.unwrap().value, 1.0);
}

#[test]
fn perfect_and_reversed_orderings() {
    let mut work = [0usize; 16];
    let l = [3.0, 2.0, 1.0, 0.0];
    let r = [0.0, 1.0, 2.0, 3.0];
    assert_eq!(disagreement(&l, &l, &[0, 4], &mut work).unwrap().value, 0.0);
    assert_eq!(disagreement(&l, &r, &[0, 4], &mut work).unwrap().value, 1.0);
    assert_eq!(kendall_tau_b(&l, &r, &mut work), Ok(-1.0));
    assert_eq!(pair_error(&l, &[(0, 3), (3, 0)], Some(&[3.0, 1.0])), Ok(0.25));
}

#[test]
fn ndcg_hand_computed_and_tie_order() {
    let mut work = [0usize; 8];
    // Ranked labels [0, 2, 1]: DCG = 0 + 3/log2 3 + 1/2; IDCG = 3 + 1/log2 3.
    let labels = [2.0, 0.0, 1.0];
    let preds = [0.5, 0.9, 0.1];
    let l3 = libm::log2(3.0);
    let want = (3.0 / l3 + 0.5) / (3.0 + 1.0 / l3);
    let got = ndcg(&labels, &preds, &[0, 3], &NdcgParams::at(10), &mut work).unwrap();
    assert!((got.value - want).abs() < 1e-15);
    // k = 1: only the top row (label 0) counts.
    let got = ndcg(&labels, &preds, &[0, 3], &NdcgParams::at(1), &mut work).unwrap();
    assert_eq!(got.value, 0.0);
    // Tied predictions: input order decides, so the first row is ranked first.
    let tied = [0.3, 0.3, 0.3];
    let got = ndcg(&labels, &tied, &[0, 3], &NdcgParams::at(1), &mut work).unwrap();
    assert_eq!(got.value, 1.0);
    let got = ndcg(&[0.0, 2.0, 1.0], &tied, &[0, 3], &NdcgParams::at(1), &mut work).unwrap();
    assert_eq!(got.value, 0.0);
    // MAP: ranking [rel, non, rel] → AP = (1/1 + 2/3)/2.
    let m = mean_average_precision(&[1.0, 0.0, 2.0], &tied, &[0, 3], &MapParams::default(), &mut work);
    assert!((m.unwrap().value - (1.0 + 2.0 / 3.0) / 2.0).abs() < 1e-15);
}

#[test]
fn bad_input_is_reported() {
    let mut work = [0usize; 16];
    let mut fwork = [0f64; 16];
    let v = [1.0, 2.0, 3.0];
    let nan = [1.0, f64::NAN, 3.0];
    let inf = [1.0, 2.0, f64::NEG_INFINITY];
    assert_eq!(disagreement(&v, &v[..2], &[0, 3], &mut work), Err(MetricError::LengthMismatch { expected: 3, got: 2 }));
    assert_eq!(disagreement(&v, &nan, &[0, 3], &mut work), Err(MetricError::NonFinite { index: 1 }));
    assert_eq!(kendall_tau_b(&inf, &v, &mut work), Err(MetricError::NonFinite { index: 2 }));
    assert_eq!(spearman_rho(&v, &nan, &mut work, &mut fwork), Err(MetricError::NonFinite { index: 1 }));
    assert_eq!(auc(&v, &v, f64::NAN, &mut work), Err(MetricError::InvalidThreshold));
    assert_eq!(auc(&v, &nan, 1.0, &mut work), Err(MetricError::NonFinite { index: 1 }));
    for ptr in [&[][..], &[1, 3], &[0, 2], &[0, 2, 1, 3], &[0, 4]] {
        assert_eq!(disagreement(&v, &v, ptr, &mut work), Err(MetricError::InvalidBoundaries));
        assert_eq!(ndcg(&v, &v, ptr, &NdcgParams::at(1), &mut work), Err(MetricError::InvalidBoundaries));
    }
    // Workspace is sized by the largest query.
    assert_eq!(
        disagreement(&v, &v, &[0, 2, 3], &mut work[..3]),
        Err(MetricError::WorkspaceTooSmall { needed: 4, got: 3 })
    );
    assert!(disagreement(&v, &v, &[0, 2, 3], &mut work[..4]).is_ok());
    assert_eq!(
        spearman_rho(&v, &v, &mut work, &mut fwork[..5]),
        Err(MetricError::WorkspaceTooSmall { needed: 6, got: 5 })
    );
    assert_eq!(ndcg(&v, &v, &[0, 3], &NdcgParams::at(0), &mut work), Err(MetricError::ZeroK));
    assert_eq!(
        ndcg(&[1.0, -1.0, 0.0], &v, &[0, 3], &NdcgParams::at(2), &mut work),
        Err(MetricError::InvalidLabel { index: 1 })
    );
    assert_eq!(ndcg(&[2000.0, 1.0, 0.0], &v, &[0, 3], &NdcgParams::at(2), &mut work), Err(MetricError::Overflow));
    assert!(ndcg(&[2000.0, 1.0, 0.0], &v, &[0, 3], &NdcgParams::at(2).with_gain(Gain::Linear), &mut work).is_ok());
    assert_eq!(
        mean_average_precision(&v, &v, &[0, 3], &MapParams::default().with_threshold(f64::INFINITY), &mut work),
        Err(MetricError::InvalidThreshold)
    );
    // Explicit pairs.
    assert_eq!(pair_error(&v, &[(0, 3)], None), Err(MetricError::IndexOutOfRange { index: 3, len: 3 }));
    assert_eq!(pair_error(&v, &[], None), Err(MetricError::Undefined));
    assert_eq!(pair_error(&v, &[(0, 1)], Some(&[0.0])), Err(MetricError::Undefined));
    assert_eq!(pair_error(&v, &[(0, 1)], Some(&[-1.0])), Err(MetricError::InvalidWeight { index: 0 }));
    assert_eq!(pair_error(&v, &[(0, 1)], Some(&[])), Err(MetricError::LengthMismatch { expected: 1, got: 0 }));
    assert_eq!(pair_error(&nan, &[(0, 1)], None), Err(MetricError::NonFinite { index: 1 }));
    assert_eq!(pair_error(&v, &[(0, 1), (1, 2)], Some(&[f64::MAX, f64::MAX])), Err(MetricError::Overflow));
    // Orders.
    let k = Correlation::KendallTauB;
    assert_eq!(
        mean_order_correlation(&v, &[0, 2], &[0, 5], k, &mut work, &mut []),
        Err(MetricError::IndexOutOfRange { index: 5, len: 3 })
    );
    assert_eq!(
        mean_order_correlation(&v, &[0, 3], &[0, 2, 0], k, &mut work, &mut []),
        Err(MetricError::DuplicateItem { item: 0 })
    );
    // The same item in two different orders is fine.
    assert!(mean_order_correlation(&v, &[0, 2, 4], &[0, 2, 2, 0], k, &mut work, &mut []).is_ok());
    assert_eq!(
        mean_order_correlation(&v, &[0, 3], &[0, 1, 2], Correlation::SpearmanRho, &mut work, &mut []),
        Err(MetricError::WorkspaceTooSmall { needed: 6, got: 0 })
    );
}

#[test]
fn errors_display_and_are_errors() {
    let all = [
        MetricError::LengthMismatch { expected: 1, got: 2 },
        MetricError::WorkspaceTooSmall { needed: 4, got: 3 },
        MetricError::NonFinite { index: 0 },
        MetricError::InvalidBoundaries,
        MetricError::ZeroK,
        MetricError::IndexOutOfRange { index: 5, len: 3 },
        MetricError::DuplicateItem { item: 1 },
        MetricError::InvalidLabel { index: 2 },
        MetricError::InvalidWeight { index: 0 },
        MetricError::InvalidThreshold,
        MetricError::Overflow,
        MetricError::Undefined,
    ];
    for e in all {
        let e: &dyn core::error::Error = &e;
        assert!(!format!("{e}").is_empty());
    }
}

#[test]
fn correlation_by_query_averages_the_defined_queries() {
    // Three queries: a perfect one, a reversed one, and one of constant
    // labels (undefined, skipped).
    let labels = [1.0, 2.0, 3.0, 3.0, 2.0, 1.0, 0.0, 2.0, 5.0, 5.0, 5.0];
    let preds = [0.1, 0.5, 0.9, 0.1, 0.2, 0.3, 0.7, 0.2, 1.0, 2.0, 3.0];
    let ptr = [0, 3, 8, 11];
    let mut work = vec![0usize; index_workspace_len(11)];
    let mut fwork = vec![0.0; real_workspace_len(11)];
    for method in [Correlation::KendallTauB, Correlation::SpearmanRho] {
        let got = correlation_by_query(&labels, &preds, &ptr, method, &mut work, &mut fwork).unwrap();
        // Direct per-query values from the single-vector functions.
        let mut want = 0.0;
        for q in ptr.windows(2).take(2) {
            let (l, p) = (&labels[q[0]..q[1]], &preds[q[0]..q[1]]);
            want += match method {
                Correlation::KendallTauB => kendall_tau_b(l, p, &mut work).unwrap(),
                _ => spearman_rho(l, p, &mut work, &mut fwork).unwrap(),
            };
        }
        assert!((got.value - want / 2.0).abs() < 1e-15, "{method:?}: {got:?} vs {}", want / 2.0);
        assert_eq!((got.queries_used, got.queries_skipped), (2, 1));
    }
    assert_eq!(
        correlation_by_query(&labels[8..], &preds[8..], &[0, 3], Correlation::KendallTauB, &mut work, &mut fwork),
        Err(MetricError::Undefined)
    );
}
