//! Tests of [`super`]: Fig. 3 against a direct numpy transcription
//! (`core/tests/fixtures/order/gen_order.py`), ERR against numpy's solve,
//! hostile orders, and the fold-back of a reduced model.

extern crate std;
use std::vec;
use std::vec::Vec;

use super::*;
use crate::backend::Portable;
use crate::metrics::Correlation;

const S41_ITEMS: &str = include_str!("../../../tests/fixtures/order/s41_items.csv");
const S41_ORDERS: &str = include_str!("../../../tests/fixtures/order/s41_orders.txt");
const TIES_ITEMS: &str = include_str!("../../../tests/fixtures/order/ties_items.csv");
const TIES_ORDERS: &str = include_str!("../../../tests/fixtures/order/ties_orders.txt");
const EXPECTED: &str = include_str!("../../../tests/fixtures/order/expected.txt");

/// Row-major attributes and dimension; ids are `o<row>` in row order.
fn items(text: &str) -> (Vec<f64>, usize, usize) {
    let mut lines = text.lines();
    let d = lines.next().unwrap().split(',').count() - 1;
    let mut x = Vec::new();
    let mut n = 0;
    for (j, l) in lines.enumerate() {
        let mut f = l.split(',');
        assert_eq!(f.next().unwrap(), std::format!("o{j}"));
        x.extend(f.map(|v| v.parse::<f64>().unwrap()));
        n += 1;
    }
    (x, n, d)
}

fn orders(text: &str) -> (Vec<usize>, Vec<usize>) {
    let (mut ptr, mut it) = (vec![0], Vec::new());
    for l in text.lines() {
        it.extend(l.split_whitespace().map(|t| t[1..].parse::<usize>().unwrap()));
        ptr.push(it.len());
    }
    (ptr, it)
}

fn expected(name: &str) -> Vec<f64> {
    let line = EXPECTED.lines().find(|l| l.split(' ').next() == Some(name)).unwrap();
    line.split(' ').skip(1).map(|v| v.parse().unwrap()).collect()
}

fn close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol, "{what}[{i}]: got {g}, numpy {w}, |diff| {}", (g - w).abs());
    }
}

fn run_rcdr(
    x: &[f64],
    n: usize,
    d: usize,
    ptr: &[usize],
    it: &[usize],
    m: RankCorr,
    kp: usize,
) -> (Vec<f64>, Vec<f64>) {
    let xm = MatRef::from_row_major(x, n, d).unwrap();
    let (mut b, mut nr) = (vec![0.0; kp * d], vec![0.0; kp]);
    let max_len = ptr.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    let mut work = vec![0.0; rcdr_workspace_len(n, d, kp, max_len)];
    let mut iwork = vec![0; rcdr_iwork_len(n, max_len)];
    rcdr(&super::Orders { x: xm, order_ptr: ptr, items: it }, m, &mut b, &mut nr, &mut work, &mut iwork).unwrap();
    (b, nr)
}

#[test]
fn rcdr_equals_numpy_fig3_on_s41_and_ties() {
    for (tag, it_text, or_text) in [("s41", S41_ITEMS, S41_ORDERS), ("ties", TIES_ITEMS, TIES_ORDERS)] {
        let (x, n, d) = items(it_text);
        let (ptr, it) = orders(or_text);
        for (name, m) in [("kendall", RankCorr::Kendall), ("spearman", RankCorr::Spearman)] {
            let (b, nr) = run_rcdr(&x, n, d, &ptr, &it, m, 3);
            close(&b, &expected(&std::format!("{tag}_{name}_basis")), 1e-9, "basis");
            close(&nr, &expected(&std::format!("{tag}_{name}_norms")), 1e-9, "norms");
            // Orthonormal (Fig. 3 keeps w^(l+1) ⟂ w^(1..l)).
            for a in 0..3 {
                for c in 0..3 {
                    let dp: f64 = (0..d).map(|k| b[a * d + k] * b[c * d + k]).sum();
                    assert!((dp - if a == c { 1.0 } else { 0.0 }).abs() < 1e-12);
                }
            }
        }
    }
}

#[test]
fn pca_equals_numpy_eigh() {
    for (tag, it_text, or_text) in [("s41", S41_ITEMS, S41_ORDERS), ("ties", TIES_ITEMS, TIES_ORDERS)] {
        let (x, n, d) = items(it_text);
        let (ptr, it) = orders(or_text);
        let (mut b, mut r) = (vec![0.0; 3 * d], vec![0.0; 3]);
        let mut bw = vec![0.0; Portable::workspace_len(d)];
        let mut be = Portable::new(&mut bw);
        let mut work = vec![0.0; pca_workspace_len(d)];
        let mut iwork = vec![0; pca_iwork_len(n)];
        let xm = MatRef::from_row_major(&x, n, d).unwrap();
        let o = super::Orders { x: xm, order_ptr: &ptr, items: &it };
        pca(&mut be, &o, &mut b, &mut r, &mut work, &mut iwork).unwrap();
        close(&b, &expected(&std::format!("{tag}_pca_basis")), 1e-9, "pca basis");
        close(&r, &expected(&std::format!("{tag}_pca_ratios")), 1e-12, "pca ratios");
    }
}

// Eight inputs: a test helper over a raw order set and every learner option.
#[allow(clippy::too_many_arguments)]
fn fit(
    x: &[f64],
    n: usize,
    d: usize,
    ptr: &[usize],
    it: &[usize],
    learner: OrderLearner,
    lambda: f64,
    basis: Option<&[f64]>,
) -> Result<(Vec<f64>, f64), OrderError> {
    let dz = basis.map_or(d, |b| b.len() / d);
    let mut bw = vec![0.0; Portable::workspace_len(dz)];
    let mut be = Portable::new(&mut bw);
    let mut w = vec![0.0; d];
    let mut work = vec![0.0; fit_linear_workspace_len(it.len(), dz)];
    let mut iwork = vec![0; fit_linear_iwork_len(n)];
    let xm = MatRef::from_row_major(x, n, d).unwrap();
    let off = fit_linear(
        &mut be,
        &super::Orders { x: xm, order_ptr: ptr, items: it },
        learner,
        lambda,
        basis,
        &mut w,
        &mut work,
        &mut iwork,
    )?;
    Ok((w, off))
}

fn heldout_rho(x: &[f64], n: usize, d: usize, w: &[f64], off: f64, ptr: &[usize], it: &[usize]) -> f64 {
    let xm = MatRef::from_row_major(x, n, d).unwrap();
    let (fw, iw) = mean_correlation_workspace_len(n, 8);
    let (mut work, mut iwork) = (vec![0.0; fw], vec![0; iw]);
    let o = super::Orders { x: xm, order_ptr: ptr, items: it };
    mean_correlation_linear(&o, w, off, Correlation::SpearmanRho, &mut work, &mut iwork).unwrap().value
}

/// Orders as (order_ptr, items).
type Orders = (Vec<usize>, Vec<usize>);

/// The first 200 orders train, the last 100 are held out (as in gen_order.py).
fn split(ptr: &[usize], it: &[usize]) -> (Orders, Orders) {
    let cut = ptr[200];
    let tr = (ptr[..=200].to_vec(), it[..cut].to_vec());
    let te = (ptr[200..].iter().map(|p| p - cut).collect(), it[cut..].to_vec());
    (tr, te)
}

#[test]
fn err_equals_numpy_and_heldout_rho() {
    let (x, n, d) = items(S41_ITEMS);
    let (ptr, it) = orders(S41_ORDERS);
    let ((trp, tri), (tep, tei)) = split(&ptr, &it);
    let (w, off) = fit(&x, n, d, &trp, &tri, OrderLearner::Err, 1.0, None).unwrap();
    close(&w, &expected("s41_err_w"), 1e-9, "ERR w");
    close(&[off], &expected("s41_err_offset"), 1e-9, "ERR offset");
    let rho = heldout_rho(&x, n, d, &w, off, &tep, &tei);
    close(&[rho], &expected("s41_err_heldout_rho"), 1e-6, "ERR held-out mean rho");
    // err_fit is the same thing.
    let mut bw = vec![0.0; Portable::workspace_len(d)];
    let mut be = Portable::new(&mut bw);
    let (mut w2, mut work, mut iwork) = (vec![0.0; d], vec![0.0; fit_linear_workspace_len(tri.len(), d)], vec![0; n]);
    let xm = MatRef::from_row_major(&x, n, d).unwrap();
    let off2 =
        err_fit(&mut be, &super::Orders { x: xm, order_ptr: &trp, items: &tri }, 1.0, &mut w2, &mut work, &mut iwork)
            .unwrap();
    assert_eq!((w2, off2), (w, off));
}

#[test]
fn err_on_spearman_rcdr_basis_folds_back() {
    let (x, n, d) = items(S41_ITEMS);
    let (ptr, it) = orders(S41_ORDERS);
    let ((trp, tri), (tep, tei)) = split(&ptr, &it);
    let (b, _) = run_rcdr(&x, n, d, &trp, &tri, RankCorr::Spearman, 2);
    let (w, off) = fit(&x, n, d, &trp, &tri, OrderLearner::Err, 1.0, Some(&b)).unwrap();
    close(&w, &expected("s41_srcdr2_err_w"), 1e-9, "folded w");
    close(&[off], &expected("s41_srcdr2_err_offset"), 1e-9, "folded offset");
    let rho = heldout_rho(&x, n, d, &w, off, &tep, &tei);
    close(&[rho], &expected("s41_srcdr2_err_heldout_rho"), 1e-6, "folded held-out rho");
    // The folded model scores x exactly as the reduced model scores B x.
    for j in 0..5 {
        let xj = &x[j * d..(j + 1) * d];
        let full: f64 = off + (0..d).map(|k| w[k] * xj[k]).sum::<f64>();
        let z: Vec<f64> = (0..2).map(|c| (0..d).map(|k| b[c * d + k] * xj[k]).sum()).collect();
        // v = B w since B has orthonormal rows and w = Bᵀv.
        let v: Vec<f64> = (0..2).map(|c| (0..d).map(|k| b[c * d + k] * w[k]).sum()).collect();
        let red: f64 = off + z.iter().zip(&v).map(|(a, b)| a * b).sum::<f64>();
        assert!((full - red).abs() < 1e-12);
    }
}

#[test]
fn rankrls_on_orders_ranks_well() {
    let (x, n, d) = items(S41_ITEMS);
    let (ptr, it) = orders(S41_ORDERS);
    let ((trp, tri), (tep, tei)) = split(&ptr, &it);
    let (w, off) = fit(&x, n, d, &trp, &tri, OrderLearner::RankRls, 1.0, None).unwrap();
    assert_eq!(off, 0.0);
    // Direction close to w* = [1, 1, 0.5, 0, 0] (normalised 0.667, 0.667, 0.333).
    let nw = w.iter().map(|v| v * v).sum::<f64>().sqrt();
    let cos = (w[0] + w[1] + 0.5 * w[2]) / (1.5 * nw);
    assert!(cos > 0.99, "cos {cos}");
    assert!(heldout_rho(&x, n, d, &w, off, &tep, &tei) > 0.95);
}

#[test]
fn kendall_and_spearman_helpers_against_brute_force() {
    // Ties: attribute values 3, 1, 3, 2 for an order of 4 (positions 0..3).
    let a = [3.0, 1.0, 3.0, 2.0];
    // τ: pairs (0,1)+ (0,2)0 (0,3)+ (1,2)- (1,3)- (2,3)+ → 1/6.
    assert!((kendall_tau(4, |p| a[p]) - 1.0 / 6.0).abs() < 1e-15);
    // Descending mid-ranks: 3,3 → 1.5; 2 → 3; 1 → 4. d² = .25+4+2.25+1 = 7.5.
    let (mut perm, mut ranks) = ([0usize; 4], [0.0; 4]);
    let r = spearman_rho(4, |p| a[p], &mut perm, &mut ranks);
    assert!((r - (1.0 - 6.0 * 7.5 / 60.0)).abs() < 1e-15);
    // Perfect agreement and reversal.
    let up = [4.0, 3.0, 2.0, 1.0];
    assert_eq!(kendall_tau(4, |p| up[p]), 1.0);
    assert_eq!(spearman_rho(4, |p| up[p], &mut perm, &mut ranks), 1.0);
    assert_eq!(kendall_tau(4, |p| -up[p]), -1.0);
    assert_eq!(spearman_rho(4, |p| -up[p], &mut perm, &mut ranks), -1.0);
}

#[test]
fn heap_sort_sorts() {
    let vals = [5.0, 1.0, 4.0, 4.0, 9.0, -2.0, 0.0, 7.0, 1.0];
    let mut p: Vec<usize> = (0..vals.len()).collect();
    heap_sort_by(&mut p, |a, b| vals[a] > vals[b] || (vals[a] == vals[b] && a < b));
    assert_eq!(p, vec![4, 7, 0, 2, 3, 1, 8, 6, 5]);
    let mut e: [usize; 0] = [];
    heap_sort_by(&mut e, |a, b| a < b);
}

#[test]
fn hostile_orders_are_errors_and_leave_outputs_alone() {
    let x = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 0.5];
    let xm = MatRef::from_row_major(&x, 4, 2).unwrap();
    let mut iw = vec![0; 16];
    let mut w = vec![0.0; 64];
    let run = |ptr: &[usize], it: &[usize], iw: &mut [usize], w: &mut [f64]| {
        let (mut b, mut nr) = ([7.0; 2], [7.0; 1]);
        let r = rcdr(&super::Orders { x: xm, order_ptr: ptr, items: it }, RankCorr::Spearman, &mut b, &mut nr, w, iw);
        if r.is_err() {
            assert_eq!((b, nr), ([7.0; 2], [7.0; 1]), "outputs touched on error: {ptr:?} {it:?} {r:?}");
        }
        r
    };
    assert_eq!(run(&[0, 2], &[0, 5], &mut iw, &mut w), Err(OrderError::ItemOutOfRange { index: 5, len: 4 }));
    assert_eq!(run(&[0, 3], &[0, 1, 0], &mut iw, &mut w), Err(OrderError::DuplicateItem { order: 0, item: 0 }));
    assert_eq!(run(&[0, 2, 3], &[0, 1, 2], &mut iw, &mut w), Err(OrderError::ShortOrder { order: 1, len: 1 }));
    assert_eq!(run(&[0], &[], &mut iw, &mut w), Err(OrderError::NoOrders));
    assert_eq!(run(&[], &[], &mut iw, &mut w), Err(OrderError::InvalidBoundaries));
    assert_eq!(run(&[0, 3, 2], &[0, 1, 2], &mut iw, &mut w), Err(OrderError::InvalidBoundaries));
    assert_eq!(run(&[1, 3], &[0, 1, 2], &mut iw, &mut w), Err(OrderError::InvalidBoundaries));
    assert!(run(&[0, 2, 4], &[0, 3, 1, 2], &mut iw, &mut w).is_ok());
    // Repeated ids across orders are fine; within an order they are not.
    assert!(run(&[0, 2, 4], &[0, 1, 1, 2], &mut iw, &mut w).is_ok());
    // Workspaces too small.
    assert!(matches!(
        run(&[0, 2], &[0, 1], &mut iw[..2], &mut w),
        Err(OrderError::Linalg(LinalgError::WorkspaceTooSmall { .. }))
    ));
    assert!(matches!(
        run(&[0, 2], &[0, 1], &mut iw, &mut w[..3]),
        Err(OrderError::Linalg(LinalgError::WorkspaceTooSmall { .. }))
    ));
}

#[test]
fn bad_parameters() {
    let x = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 0.5];
    let xm = MatRef::from_row_major(&x, 4, 2).unwrap();
    let (ptr, it) = ([0, 3, 5], [2, 0, 1, 3, 1]);
    let (mut iw, mut w) = (vec![0; 16], vec![0.0; 64]);
    let (mut b3, mut n3) = ([0.0; 6], [0.0; 3]);
    let o = super::Orders { x: xm, order_ptr: &ptr, items: &it };
    assert_eq!(
        rcdr(&o, RankCorr::Kendall, &mut b3, &mut n3, &mut w, &mut iw),
        Err(OrderError::InvalidComponents { requested: 3, dim: 2 })
    );
    let (mut b0, mut n0): ([f64; 0], [f64; 0]) = ([], []);
    assert!(matches!(
        rcdr(&o, RankCorr::Kendall, &mut b0, &mut n0, &mut w, &mut iw),
        Err(OrderError::InvalidComponents { .. })
    ));
    let nan = [1.0, f64::NAN, 0.0, 1.0, 1.0, 1.0, 2.0, 0.5];
    let (mut b, mut nr) = ([0.0; 2], [0.0; 1]);
    assert_eq!(
        rcdr(
            &super::Orders { x: MatRef::from_row_major(&nan, 4, 2).unwrap(), order_ptr: &ptr, items: &it },
            RankCorr::Kendall,
            &mut b,
            &mut nr,
            &mut w,
            &mut iw
        ),
        Err(OrderError::Linalg(LinalgError::NonFinite))
    );
    // Orders that disagree perfectly: R = 0 → no direction.
    let (p2, i2) = ([0, 2, 4], [0, 1, 1, 0]);
    let flat = [0.0, 0.0, 1.0, 1.0, 5.0, 5.0, 6.0, 6.0];
    let (mut b, mut nr) = ([7.0; 2], [7.0; 1]);
    assert_eq!(
        rcdr(
            &super::Orders { x: MatRef::from_row_major(&flat, 4, 2).unwrap(), order_ptr: &p2, items: &i2 },
            RankCorr::Kendall,
            &mut b,
            &mut nr,
            &mut w,
            &mut iw
        ),
        Err(OrderError::NoCorrelation { component: 0 })
    );
    assert_eq!((b, nr), ([7.0; 2], [7.0; 1]), "outputs are written only on success");
    // λ < 0 and non-finite λ.
    for lam in [-1.0, f64::NAN] {
        assert_eq!(
            fit(&x, 4, 2, &ptr, &it, OrderLearner::Err, lam, None),
            Err(OrderError::Learn(crate::learn::LearnError::BadLambda))
        );
    }
    // A basis with a NaN, or more rows than attributes.
    assert_eq!(
        fit(&x, 4, 2, &ptr, &it, OrderLearner::Err, 1.0, Some(&[f64::NAN, 0.0])),
        Err(OrderError::Linalg(LinalgError::NonFinite))
    );
    assert!(matches!(
        fit(&x, 4, 2, &ptr, &it, OrderLearner::Err, 1.0, Some(&[1.0; 6])),
        Err(OrderError::InvalidComponents { .. })
    ));
    // λ = 0 with a constant attribute: singular, an error, not a NaN.
    let konst = [1.0, 3.0, 2.0, 3.0, 0.0, 3.0, 5.0, 3.0];
    assert!(matches!(
        fit(&konst, 4, 2, &ptr, &it, OrderLearner::Err, 0.0, None),
        Err(OrderError::Learn(crate::learn::LearnError::ConstantFeature { .. }))
    ));
}
