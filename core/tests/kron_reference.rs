//! Kronecker conditional ranking (`learn::kron`, paper 004 §2–4) against
//! the explicit `p²`-dimensional systems, built here entry by entry from
//! the definitions (pair kernels eqs. 7–9, `L` of eq. 31, the reduced
//! normal equations of eqs. 18 and 33) and solved with core's LU; no
//! Python at test time. Node counts stay ≤ 12 so the explicit systems are
//! at most 144 × 144.

use ranklet_core::backend::Portable;
use ranklet_core::graph::QueryWeight;
use ranklet_core::learn::kron::{
    edge_coefficients, fit, fit_workspace_len, kron_cg, kron_cg_workspace_len, predict_block,
    predict_block_workspace_len, predict_pairs, predict_pairs_workspace_len, Domains, KronEigen, KronSystem, Loss,
    PairKernel,
};
use ranklet_core::learn::LearnError;
use ranklet_core::linalg::cg::{CgControl, CgParams};
use ranklet_core::linalg::lu::lu_solve_in_place;
use ranklet_core::metrics::{auc, auc_by_query, conditional_auc, conditional_disagreement, disagreement};
use ranklet_core::{LinalgError, MatMut, MatRef};

// ---------------------------------------------------------------------------
// Data.

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        // xorshift64*, uniform in [-1, 1).
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let v = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
        v as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.next()).collect()
    }
}

/// `n × d` random points (row-major).
fn points(rng: &mut Rng, n: usize, d: usize) -> Vec<f64> {
    rng.vec(n * d)
}

/// RBF kernel rows of `a` (`m × d`) against `b` (`n × d`): `m × n`
/// column-major.
fn rbf(a: &[f64], b: &[f64], d: usize, gamma: f64) -> Vec<f64> {
    let (m, n) = (a.len() / d, b.len() / d);
    let mut k = vec![0.0; m * n];
    for j in 0..n {
        for i in 0..m {
            let s: f64 = (0..d).map(|c| (a[i * d + c] - b[j * d + c]).powi(2)).sum();
            k[i + j * m] = (-gamma * s).exp();
        }
    }
    k
}

/// Linear kernel (rank ≤ d): a singular PSD kernel matrix when `d < n`.
fn linear(a: &[f64], b: &[f64], d: usize) -> Vec<f64> {
    let (m, n) = (a.len() / d, b.len() / d);
    let mut k = vec![0.0; m * n];
    for j in 0..n {
        for i in 0..m {
            k[i + j * m] = (0..d).map(|c| a[i * d + c] * b[j * d + c]).sum();
        }
    }
    k
}

fn mr(d: &[f64], r: usize, c: usize) -> MatRef<'_, f64> {
    MatRef::from_col_major(d, r, c).unwrap()
}

fn mm(d: &mut [f64], r: usize, c: usize) -> MatMut<'_, f64> {
    MatMut::from_col_major(d, r, c).unwrap()
}

fn bwork(n: usize) -> Vec<f64> {
    vec![0.0; Portable::workspace_len(n)]
}

fn assert_close(got: &[f64], want: &[f64], rel: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
    let err = got.iter().zip(want).fold(0.0f64, |m, (g, w)| m.max((g - w).abs()));
    assert!(err <= rel * scale, "{what}: max error {err:e} > {rel:e}·{scale:e}");
}

// ---------------------------------------------------------------------------
// The explicit systems.

/// The pair kernel between edges `(i, j)` and `(k, l)` (004 eqs. 7–9) for
/// kernel rows `ka` of the first nodes and `kb` of the second nodes
/// (`ka(i, k)`, `kb(j, l)`); for one domain `ka = kb`.
fn pair_k(
    pair: PairKernel,
    ka: &dyn Fn(usize, usize) -> f64,
    kb: &dyn Fn(usize, usize) -> f64,
    e: (usize, usize),
    f: (usize, usize),
) -> f64 {
    let (i, j) = e;
    let (k, l) = f;
    let direct = ka(i, k) * kb(j, l);
    match pair {
        PairKernel::Kronecker => direct,
        // One domain: ka = kb = k(·, ·).
        PairKernel::Symmetric => 0.5 * (direct + ka(i, l) * kb(j, k)),
        PairKernel::Reciprocal => 0.5 * (direct - ka(i, l) * kb(j, k)),
    }
}

/// Explicit `L` over edges grouped by their first node (004 eq. 31; with
/// `Pairs` weighting each block is `l·I − 11ᵀ`).
fn explicit_l(edges: &[(usize, usize)], w: QueryWeight) -> Vec<f64> {
    let q = edges.len();
    let mut l = vec![0.0; q * q];
    for a in 0..q {
        for b in 0..q {
            if edges[a].0 != edges[b].0 {
                continue;
            }
            let cnt = edges.iter().filter(|e| e.0 == edges[a].0).count() as f64;
            let c = match w {
                QueryWeight::Equal => 1.0,
                QueryWeight::Pairs => cnt,
            };
            l[a + b * q] = c * (f64::from(u8::from(a == b)) - 1.0 / cnt);
        }
    }
    l
}

/// Solves the reduced normal equations `(L·K_E + λI)·a = L·y` (`L = I` for
/// regression) explicitly: 004 eq. 18 and the reduced form of eq. 33.
/// The item kernels come as `(K, p)`, `K` being `p × p`.
fn explicit_dual(
    pair: PairKernel,
    (k_u, p_u): (&[f64], usize),
    (k_v, p_v): (&[f64], usize),
    loss: Loss,
    edges: &[(usize, usize)],
    y: &[f64],
    lambda: f64,
) -> Vec<f64> {
    let q = edges.len();
    let ku = |i: usize, k: usize| k_u[i + k * p_u];
    let kv = |j: usize, l: usize| k_v[j + l * p_v];
    let mut ke = vec![0.0; q * q];
    for a in 0..q {
        for b in 0..q {
            ke[a + b * q] = pair_k(pair, &ku, &kv, edges[a], edges[b]);
        }
    }
    let l = match loss {
        Loss::Regression => {
            let mut l = vec![0.0; q * q];
            (0..q).for_each(|a| l[a + a * q] = 1.0);
            l
        }
        Loss::Ranking(w) => explicit_l(edges, w),
    };
    let mut m = vec![0.0; q * q];
    for a in 0..q {
        for b in 0..q {
            m[a + b * q] =
                (0..q).map(|c| l[a + c * q] * ke[c + b * q]).sum::<f64>() + if a == b { lambda } else { 0.0 };
        }
    }
    let mut rhs: Vec<f64> = (0..q).map(|a| (0..q).map(|c| l[a + c * q] * y[c]).sum()).collect();
    lu_solve_in_place(mm(&mut m, q, q), mm(&mut rhs, q, 1)).unwrap();
    rhs
}

/// Explicit predictions `f(x, x') = Σ_e a_e·K_pair((x, x'), e)` for every
/// pair of test nodes; `ta` (`m_a × p_u`), `tb` (`m_b × p_v`) column-major.
fn explicit_predict(
    pair: PairKernel,
    a: &[f64],
    edges: &[(usize, usize)],
    ta: &[f64],
    m_a: usize,
    tb: &[f64],
    m_b: usize,
) -> Vec<f64> {
    let mut f = vec![0.0; m_a * m_b];
    for j in 0..m_b {
        for i in 0..m_a {
            // Rows of the test pair: first node from ta, second from tb; for
            // the swapped term of one domain, k(x', ū) comes from tb.
            let mut s = 0.0;
            for (e, &ae) in edges.iter().zip(a) {
                let (k, l) = *e;
                let direct = ta[i + k * m_a] * tb[j + l * m_b];
                s += ae
                    * match pair {
                        PairKernel::Kronecker => direct,
                        PairKernel::Symmetric => 0.5 * (direct + ta[i + l * m_a] * tb[j + k * m_b]),
                        PairKernel::Reciprocal => 0.5 * (direct - ta[i + l * m_a] * tb[j + k * m_b]),
                    };
            }
            f[i + j * m_a] = s;
        }
    }
    f
}

/// All `p_u·p_v` edges in vec order (`(i, j)` at `i + j·p_u`).
fn complete(p_u: usize, p_v: usize) -> Vec<(usize, usize)> {
    (0..p_v).flat_map(|j| (0..p_u).map(move |i| (i, j))).collect()
}

/// Closed-form coefficients and block predictions on test nodes.
// Eight inputs: a test's closed form over both domains' kernels and sizes.
#[allow(clippy::too_many_arguments)]
fn closed(
    domains: &Domains<'_>,
    loss: Loss,
    y: &[f64],
    lambda: f64,
    ta: &[f64],
    m_a: usize,
    tb: &[f64],
    m_b: usize,
) -> (Vec<f64>, Vec<f64>) {
    let (p_u, p_v) = domains.dims();
    let mut bw = bwork(p_u.max(p_v).max(m_a).max(m_b));
    let mut be = Portable::new(&mut bw);
    let mut coef = vec![0.0; p_u * p_v];
    let mut work = vec![0.0; fit_workspace_len(p_u, p_v)];
    fit(&mut be, domains, loss, mr(y, p_u, p_v), lambda, mm(&mut coef, p_u, p_v), &mut work).unwrap();
    let pair = domains.pair();
    let mut out = vec![0.0; m_a * m_b];
    let mut pw = vec![0.0; predict_block_workspace_len(pair, p_u, m_a, m_b)];
    predict_block(
        &mut be,
        pair,
        mr(&coef, p_u, p_v),
        mr(ta, m_a, p_u),
        mr(tb, m_b, p_v),
        mm(&mut out, m_a, m_b),
        &mut pw,
    )
    .unwrap();
    (coef, out)
}

const LOSSES: [Loss; 3] = [Loss::Regression, Loss::Ranking(QueryWeight::Equal), Loss::Ranking(QueryWeight::Pairs)];

// ---------------------------------------------------------------------------
// Closed form against the explicit systems.

#[test]
fn closed_form_two_domains_matches_explicit_system() {
    let mut rng = Rng(7);
    let (p_u, p_v, d, m_a, m_b) = (7, 5, 3, 4, 6);
    let (xu, xv) = (points(&mut rng, p_u, d), points(&mut rng, p_v, d));
    let (k_u, k_v) = (rbf(&xu, &xu, d, 0.7), rbf(&xv, &xv, d, 0.4));
    let (tu, tv) = (points(&mut rng, m_a, d), points(&mut rng, m_b, d));
    let (ta, tb) = (rbf(&tu, &xu, d, 0.7), rbf(&tv, &xv, d, 0.4));
    let y = rng.vec(p_u * p_v);
    let edges = complete(p_u, p_v);
    let domains = Domains::Two { k_u: mr(&k_u, p_u, p_u), k_v: mr(&k_v, p_v, p_v) };
    for loss in LOSSES {
        for lambda in [1e-3, 0.3, 10.0] {
            let a = explicit_dual(PairKernel::Kronecker, (&k_u, p_u), (&k_v, p_v), loss, &edges, &y, lambda);
            let f = explicit_predict(PairKernel::Kronecker, &a, &edges, &ta, m_a, &tb, m_b);
            let (coef, out) = closed(&domains, loss, &y, lambda, &ta, m_a, &tb, m_b);
            // vec order: coef[i + j·p_u] is the dual of edge (i, j).
            assert_close(&coef, &a, 1e-9, &format!("A, {loss:?}, λ = {lambda}"));
            assert_close(&out, &f, 1e-9, &format!("F, {loss:?}, λ = {lambda}"));
        }
    }
}

#[test]
fn closed_form_one_domain_all_pair_kernels_match_explicit_system() {
    let mut rng = Rng(11);
    let (p, d, m) = (9, 2, 5);
    let x = points(&mut rng, p, d);
    let k = rbf(&x, &x, d, 0.9);
    let t = points(&mut rng, m, d);
    let tk = rbf(&t, &x, d, 0.9);
    let y = rng.vec(p * p);
    let edges = complete(p, p);
    for pair in [PairKernel::Kronecker, PairKernel::Symmetric, PairKernel::Reciprocal] {
        let domains = Domains::One { k: mr(&k, p, p), pair };
        let losses: &[Loss] = if pair == PairKernel::Kronecker { &LOSSES } else { &LOSSES[..1] };
        for &loss in losses {
            for lambda in [1e-2, 1.0] {
                let a = explicit_dual(pair, (&k, p), (&k, p), loss, &edges, &y, lambda);
                let (coef, out) = closed(&domains, loss, &y, lambda, &tk, m, &tk, m);
                let f = explicit_predict(pair, &a, &edges, &tk, m, &tk, m);
                assert_close(&out, &f, 1e-9, &format!("F, {pair:?} {loss:?} λ = {lambda}"));
                // Training predictions too (test rows = K).
                let ftr = explicit_predict(pair, &a, &edges, &k, p, &k, p);
                let (_, otr) = closed(&domains, loss, &y, lambda, &k, p, &k, p);
                assert_close(&otr, &ftr, 1e-9, &format!("F train, {pair:?} {loss:?}"));
                // The coefficient matrix is S·a / A·a of the explicit dual
                // (004 Prop. 4.7): the effective coefficients of the model.
                let mut sa = vec![0.0; p * p];
                for j in 0..p {
                    for i in 0..p {
                        sa[i + j * p] = match pair {
                            PairKernel::Kronecker => a[i + j * p],
                            PairKernel::Symmetric => 0.5 * (a[i + j * p] + a[j + i * p]),
                            PairKernel::Reciprocal => 0.5 * (a[i + j * p] - a[j + i * p]),
                        };
                    }
                }
                assert_close(&coef, &sa, 1e-9, &format!("A, {pair:?} {loss:?}"));
            }
        }
    }
}

/// A rank-deficient (linear, d < p) kernel: 004 Cor. 4.8 leaves the PSD
/// case out; the eigendecomposition of `C·K·C` covers it.
#[test]
fn closed_form_ranking_with_singular_kernels_matches_explicit_system() {
    let mut rng = Rng(3);
    let (p_u, p_v, d) = (8, 6, 2);
    let (xu, xv) = (points(&mut rng, p_u, d), points(&mut rng, p_v, d));
    let (k_u, k_v) = (linear(&xu, &xu, d), linear(&xv, &xv, d));
    let y = rng.vec(p_u * p_v);
    let edges = complete(p_u, p_v);
    let domains = Domains::Two { k_u: mr(&k_u, p_u, p_u), k_v: mr(&k_v, p_v, p_v) };
    for loss in LOSSES {
        let a = explicit_dual(PairKernel::Kronecker, (&k_u, p_u), (&k_v, p_v), loss, &edges, &y, 0.1);
        let (coef, out) = closed(&domains, loss, &y, 0.1, &k_u, p_u, &k_v, p_v);
        let f = explicit_predict(PairKernel::Kronecker, &a, &edges, &k_u, p_u, &k_v, p_v);
        assert_close(&coef, &a, 1e-9, &format!("A, {loss:?}"));
        assert_close(&out, &f, 1e-9, &format!("F, {loss:?}"));
    }
}

/// The ranking solution satisfies the full normal equations of 004 eq. 33,
/// `K̄(L·K̄·a + λa − L·y) = 0`; 004's reduced eq. 35, `(K̄L + λI)·a = Ly`,
/// taken literally, does not — but `L` times its solution is ours.
#[test]
fn ranking_solution_satisfies_eq_33_and_eq_35_needs_l() {
    let mut rng = Rng(5);
    let (p, d, lambda) = (5, 2, 0.2);
    let x = points(&mut rng, p, d);
    let k = rbf(&x, &x, d, 1.0);
    let y = rng.vec(p * p);
    let q = p * p;
    let edges = complete(p, p);
    let loss = Loss::Ranking(QueryWeight::Equal);
    let (coef, _) =
        closed(&Domains::One { k: mr(&k, p, p), pair: PairKernel::Kronecker }, loss, &y, lambda, &k, p, &k, p);
    let kb: Vec<f64> = (0..q * q)
        .map(|ix| {
            let (r, c) = (ix % q, ix / q);
            k[edges[r].0 + edges[c].0 * p] * k[edges[r].1 + edges[c].1 * p]
        })
        .collect();
    let l = explicit_l(&edges, QueryWeight::Equal);
    let mv = |m: &[f64], v: &[f64]| -> Vec<f64> { (0..q).map(|r| (0..q).map(|c| m[r + c * q] * v[c]).sum()).collect() };
    let ka = mv(&kb, &coef);
    let lka = mv(&l, &ka);
    let ly = mv(&l, &y);
    let inner: Vec<f64> = (0..q).map(|r| lka[r] + lambda * coef[r] - ly[r]).collect();
    let ne = mv(&kb, &inner);
    let scale = mv(&kb, &ly).iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(ne.iter().all(|v| v.abs() <= 1e-10 * scale), "eq. 33 residual");
    // Eq. 35 literally: (K̄L + λI)·b = Ly.
    let mut m: Vec<f64> = (0..q * q)
        .map(|ix| {
            let (r, c) = (ix % q, ix / q);
            (0..q).map(|t| kb[r + t * q] * l[t + c * q]).sum::<f64>() + if r == c { lambda } else { 0.0 }
        })
        .collect();
    let mut b = ly.clone();
    lu_solve_in_place(mm(&mut m, q, q), mm(&mut b, q, 1)).unwrap();
    let diff = b.iter().zip(&coef).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(diff > 1e-3, "eq. 35 literal coincides ({diff})");
    assert_close(&mv(&l, &b), &coef, 1e-9, "L·(eq. 35 solution)");
}

#[test]
fn every_lambda_of_a_grid_from_one_decomposition_equals_a_fresh_fit() {
    let mut rng = Rng(13);
    let (p_u, p_v, d) = (10, 12, 3);
    let (xu, xv) = (points(&mut rng, p_u, d), points(&mut rng, p_v, d));
    let (k_u, k_v) = (rbf(&xu, &xu, d, 0.5), rbf(&xv, &xv, d, 0.5));
    let y = rng.vec(p_u * p_v);
    let domains = Domains::Two { k_u: mr(&k_u, p_u, p_u), k_v: mr(&k_v, p_v, p_v) };
    let mut bw = bwork(12);
    let mut be = Portable::new(&mut bw);
    for loss in LOSSES {
        let mut store = vec![0.0; KronEigen::store_len(p_u, p_v)];
        let mut w = vec![0.0; KronEigen::new_workspace_len(p_v)];
        let eig = KronEigen::new(&mut be, &domains, loss, &mut store, &mut w).unwrap();
        assert_eq!(eig.dims(), (p_u, p_v));
        let mut sw = vec![0.0; eig.solve_workspace_len()];
        for lambda in [1e-4, 1e-2, 0.1, 1.0, 100.0] {
            let mut a = vec![0.0; p_u * p_v];
            eig.solve(&mut be, lambda, mr(&y, p_u, p_v), mm(&mut a, p_u, p_v), &mut sw).unwrap();
            let mut fresh = vec![0.0; p_u * p_v];
            let mut fw = vec![0.0; fit_workspace_len(p_u, p_v)];
            fit(&mut be, &domains, loss, mr(&y, p_u, p_v), lambda, mm(&mut fresh, p_u, p_v), &mut fw).unwrap();
            assert_eq!(a, fresh, "{loss:?} λ = {lambda}");
        }
    }
}

// ---------------------------------------------------------------------------
// Exact symmetry.

#[test]
fn symmetric_and_reciprocal_predictions_are_exact_on_new_nodes() {
    let mut rng = Rng(17);
    let (p, d, m, n) = (11, 3, 7, 4);
    let x = points(&mut rng, p, d);
    let k = rbf(&x, &x, d, 0.6);
    let (t1, t2) = (points(&mut rng, m, d), points(&mut rng, n, d));
    let (k1, k2) = (rbf(&t1, &x, d, 0.6), rbf(&t2, &x, d, 0.6));
    let y = rng.vec(p * p);
    let mut bw = bwork(p);
    let mut be = Portable::new(&mut bw);
    for (pair, sign) in [(PairKernel::Symmetric, 1.0), (PairKernel::Reciprocal, -1.0)] {
        let domains = Domains::One { k: mr(&k, p, p), pair };
        let mut coef = vec![0.0; p * p];
        let mut w = vec![0.0; fit_workspace_len(p, p)];
        fit(&mut be, &domains, Loss::Regression, mr(&y, p, p), 0.1, mm(&mut coef, p, p), &mut w).unwrap();
        for i in 0..p {
            for j in 0..p {
                assert_eq!(coef[i + j * p], sign * coef[j + i * p], "{pair:?} A");
            }
        }
        let c = mr(&coef, p, p);
        let mut pw = vec![0.0; predict_block_workspace_len(pair, p, m + n, m + n)];
        // One set against itself.
        let mut f11 = vec![0.0; m * m];
        predict_block(&mut be, pair, c, mr(&k1, m, p), mr(&k1, m, p), mm(&mut f11, m, m), &mut pw).unwrap();
        for i in 0..m {
            for j in 0..m {
                assert_eq!(f11[i + j * m], sign * f11[j + i * m], "{pair:?} block (new, new)");
            }
        }
        // Two sets, both orders.
        let mut f12 = vec![0.0; m * n];
        let mut f21 = vec![0.0; n * m];
        predict_block(&mut be, pair, c, mr(&k1, m, p), mr(&k2, n, p), mm(&mut f12, m, n), &mut pw).unwrap();
        predict_block(&mut be, pair, c, mr(&k2, n, p), mr(&k1, m, p), mm(&mut f21, n, m), &mut pw).unwrap();
        for i in 0..m {
            for j in 0..n {
                assert_eq!(f12[i + j * m], sign * f21[j + i * n], "{pair:?} blocks (1, 2) vs (2, 1)");
            }
        }
        // Pairs: (i, j) and (j, i) in one call on one set, and across calls.
        let pairs: Vec<(usize, usize)> = (0..m).flat_map(|i| (0..m).map(move |j| (i, j))).collect();
        let mut s = vec![0.0; pairs.len()];
        let mut qw = vec![0.0; predict_pairs_workspace_len(pair, p, m + n, m + n)];
        predict_pairs(&mut be, pair, c, mr(&k1, m, p), mr(&k1, m, p), &pairs, &mut s, &mut qw).unwrap();
        for (e, &(i, j)) in pairs.iter().enumerate() {
            assert_eq!(s[e], sign * s[j * m + i], "{pair:?} pairs");
            assert!((s[e] - f11[i + j * m]).abs() <= 1e-12, "pairs vs block");
        }
        let p12: Vec<(usize, usize)> = (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect();
        let p21: Vec<(usize, usize)> = p12.iter().map(|&(i, j)| (j, i)).collect();
        let (mut s12, mut s21) = (vec![0.0; p12.len()], vec![0.0; p12.len()]);
        predict_pairs(&mut be, pair, c, mr(&k1, m, p), mr(&k2, n, p), &p12, &mut s12, &mut qw).unwrap();
        predict_pairs(&mut be, pair, c, mr(&k2, n, p), mr(&k1, m, p), &p21, &mut s21, &mut qw).unwrap();
        for e in 0..p12.len() {
            assert_eq!(s12[e], sign * s21[e], "{pair:?} pairs across calls");
        }
        if pair == PairKernel::Reciprocal {
            assert!((0..m).all(|i| f11[i + i * m] == 0.0 && s[i * m + i] == 0.0));
        }
    }
}

#[test]
fn predict_pairs_equals_the_block() {
    let mut rng = Rng(19);
    let (p_u, p_v, d, m_a, m_b) = (6, 9, 2, 5, 3);
    let (xu, xv) = (points(&mut rng, p_u, d), points(&mut rng, p_v, d));
    let coef = rng.vec(p_u * p_v);
    let (ta, tb) = (rbf(&points(&mut rng, m_a, d), &xu, d, 1.0), rbf(&points(&mut rng, m_b, d), &xv, d, 1.0));
    let mut bw = bwork(9);
    let mut be = Portable::new(&mut bw);
    let pk = PairKernel::Kronecker;
    let mut f = vec![0.0; m_a * m_b];
    let mut w = vec![0.0; predict_block_workspace_len(pk, p_u, m_a, m_b)];
    predict_block(&mut be, pk, mr(&coef, p_u, p_v), mr(&ta, m_a, p_u), mr(&tb, m_b, p_v), mm(&mut f, m_a, m_b), &mut w)
        .unwrap();
    let pairs = [(0, 0), (4, 2), (2, 1), (4, 2), (3, 0)];
    let mut s = [0.0; 5];
    let mut w = vec![0.0; predict_pairs_workspace_len(pk, p_v, m_a, m_b)];
    predict_pairs(&mut be, pk, mr(&coef, p_u, p_v), mr(&ta, m_a, p_u), mr(&tb, m_b, p_v), &pairs, &mut s, &mut w)
        .unwrap();
    for (e, &(i, j)) in pairs.iter().enumerate() {
        let want: f64 = (0..p_u)
            .flat_map(|k| (0..p_v).map(move |l| (k, l)))
            .map(|(k, l)| coef[k + l * p_u] * ta[i + k * m_a] * tb[j + l * m_b])
            .sum();
        assert!((s[e] - want).abs() <= 1e-12 && (f[i + j * m_a] - want).abs() <= 1e-12);
    }
}

// ---------------------------------------------------------------------------
// Conjugate gradient.

fn run_cg(
    domains: &Domains<'_>,
    loss: Loss,
    edges: &[(usize, usize)],
    y: &[f64],
    lambda: f64,
    params: &CgParams,
) -> (Vec<f64>, Vec<f64>, ranklet_core::linalg::cg::CgInfo) {
    let (p_u, p_v) = domains.dims();
    let q = edges.len();
    let mut bw = bwork(p_u.max(p_v));
    let mut be = Portable::new(&mut bw);
    let mut a = vec![0.0; q];
    let mut coef = vec![0.0; p_u * p_v];
    let mut w = vec![0.0; kron_cg_workspace_len(p_u, p_v, q)];
    let info = kron_cg(
        &mut be,
        &KronSystem { domains: *domains, loss, edges, y, lambda },
        params,
        &mut a,
        mm(&mut coef, p_u, p_v),
        &mut w,
        |_, _, _| CgControl::Continue,
    )
    .unwrap();
    (a, coef, info)
}

#[test]
fn cg_on_a_complete_graph_equals_the_closed_form() {
    let mut rng = Rng(23);
    let (p_u, p_v, d) = (12, 9, 3);
    let (xu, xv) = (points(&mut rng, p_u, d), points(&mut rng, p_v, d));
    let (k_u, k_v) = (rbf(&xu, &xu, d, 0.5), rbf(&xv, &xv, d, 0.5));
    let y = rng.vec(p_u * p_u);
    let params = CgParams::new(2000, 1e-13);
    let two = Domains::Two { k_u: mr(&k_u, p_u, p_u), k_v: mr(&k_v, p_v, p_v) };
    let mut cases: Vec<(Domains<'_>, Loss)> = LOSSES.iter().map(|&l| (two, l)).collect();
    for pair in [PairKernel::Kronecker, PairKernel::Symmetric, PairKernel::Reciprocal] {
        cases.push((Domains::One { k: mr(&k_u, p_u, p_u), pair }, Loss::Regression));
    }
    cases
        .push((Domains::One { k: mr(&k_u, p_u, p_u), pair: PairKernel::Kronecker }, Loss::Ranking(QueryWeight::Equal)));
    for (domains, loss) in cases {
        let (pu, pv) = domains.dims();
        let yy = &y[..pu * pv];
        // Edges in a scrambled order: CG must not depend on it.
        let mut edges = complete(pu, pv);
        edges.reverse();
        edges.swap(3, 17);
        let ye: Vec<f64> = edges.iter().map(|&(i, j)| yy[i + j * pu]).collect();
        let (_, coef, info) = run_cg(&domains, loss, &edges, &ye, 0.5, &params);
        assert!(info.converged && info.rel_residual <= 1e-13, "{info:?}");
        let (want, _) = closed(&domains, loss, yy, 0.5, &k_u[..0], 0, &k_v[..0], 0);
        assert_close(&coef, &want, 1e-6, &format!("{:?} {loss:?}", domains.pair()));
    }
}

#[test]
fn cg_on_an_incomplete_graph_equals_the_explicit_restricted_system() {
    let mut rng = Rng(29);
    let (p_u, p_v, d) = (9, 7, 2);
    let (xu, xv) = (points(&mut rng, p_u, d), points(&mut rng, p_v, d));
    let (k_u, k_v) = (rbf(&xu, &xu, d, 0.8), rbf(&xv, &xv, d, 0.8));
    // About half of the edges, plus a duplicate and a node with one edge.
    let mut edges: Vec<(usize, usize)> = complete(p_u, p_v).into_iter().filter(|_| rng.next() > 0.0).collect();
    edges.retain(|e| e.0 != 0);
    edges.push((0, 3));
    edges.push(edges[5]);
    let y = rng.vec(edges.len());
    let params = CgParams::new(5000, 1e-14);
    let two = Domains::Two { k_u: mr(&k_u, p_u, p_u), k_v: mr(&k_v, p_v, p_v) };
    let one_edges: Vec<(usize, usize)> = edges.iter().map(|&(i, j)| (i, j % p_u)).collect();
    for (domains, es) in [
        (two, &edges),
        (Domains::One { k: mr(&k_u, p_u, p_u), pair: PairKernel::Kronecker }, &one_edges),
        (Domains::One { k: mr(&k_u, p_u, p_u), pair: PairKernel::Symmetric }, &one_edges),
        (Domains::One { k: mr(&k_u, p_u, p_u), pair: PairKernel::Reciprocal }, &one_edges),
    ] {
        let (pu, pv) = domains.dims();
        let kv: &[f64] = if pv == p_v { &k_v } else { &k_u };
        let pair = domains.pair();
        for loss in LOSSES {
            for lambda in [0.05, 1.0] {
                let want = explicit_dual(pair, (&k_u, pu), (kv, pv), loss, es, &y, lambda);
                let (a, coef, info) = run_cg(&domains, loss, es, &y, lambda, &params);
                assert!(info.converged, "{pair:?} {loss:?} {info:?}");
                assert_close(&a, &want, 1e-8, &format!("a, {pair:?} {loss:?} λ = {lambda}"));
                let mut c2 = vec![0.0; pu * pv];
                edge_coefficients(pair, es, &want, mm(&mut c2, pu, pv)).unwrap();
                assert_close(&coef, &c2, 1e-8, &format!("A, {pair:?} {loss:?}"));
                // And the model's predictions equal the explicit ones.
                let mut bw = bwork(pu.max(pv));
                let mut be = Portable::new(&mut bw);
                let mut f = vec![0.0; pu * pv];
                let mut pw = vec![0.0; predict_block_workspace_len(pair, pu, pu, pv)];
                predict_block(
                    &mut be,
                    pair,
                    mr(&coef, pu, pv),
                    mr(&k_u, pu, pu),
                    mr(kv, pv, pv),
                    mm(&mut f, pu, pv),
                    &mut pw,
                )
                .unwrap();
                let fe = explicit_predict(pair, &want, es, &k_u, pu, kv, pv);
                assert_close(&f, &fe, 1e-8, &format!("F, {pair:?} {loss:?}"));
            }
        }
    }
}

#[test]
fn cg_stops_on_budget_and_callback_and_reports() {
    let mut rng = Rng(31);
    let (p, d) = (10, 2);
    let x = points(&mut rng, p, d);
    let k = rbf(&x, &x, d, 0.5);
    let edges = complete(p, p);
    let y = rng.vec(p * p);
    let domains = Domains::One { k: mr(&k, p, p), pair: PairKernel::Kronecker };
    let (_, _, info) = run_cg(&domains, Loss::Regression, &edges, &y, 1e-3, &CgParams::new(3, 0.0));
    assert_eq!((info.iterations, info.converged), (3, false));
    assert!(info.rel_residual > 0.0 && info.rel_residual.is_finite());
    // λ = 0: early stopping as the only regulariser (004 §6.2).
    let (_, _, info) = run_cg(&domains, Loss::Ranking(QueryWeight::Equal), &edges, &y, 0.0, &CgParams::new(5, 0.0));
    assert_eq!(info.iterations, 5);
    // The callback sees the dual coefficients (for ranking: a = L^{½}c,
    // centred per first node) and can stop.
    let mut bw = bwork(p);
    let mut be = Portable::new(&mut bw);
    let mut a = vec![0.0; p * p];
    let mut coef = vec![0.0; p * p];
    let mut w = vec![0.0; kron_cg_workspace_len(p, p, p * p)];
    let mut seen = Vec::new();
    let mut last = Vec::new();
    let info = kron_cg(
        &mut be,
        &KronSystem { domains, loss: Loss::Ranking(QueryWeight::Equal), edges: &edges, y: &y, lambda: 0.1 },
        &CgParams::default(),
        &mut a,
        mm(&mut coef, p, p),
        &mut w,
        |it, av, rel| {
            seen.push((it, rel));
            last = av.to_vec();
            if it == 4 {
                CgControl::Stop
            } else {
                CgControl::Continue
            }
        },
    )
    .unwrap();
    assert_eq!((info.iterations, info.converged, seen.len()), (4, false, 4));
    assert_eq!(seen[3].1, info.rel_residual);
    assert_close(&last, &a, 1e-14, "callback iterate = result");
    for i in 0..p {
        let s: f64 = (0..p).map(|j| a[i + j * p]).sum();
        assert!(s.abs() < 1e-12, "row {i} of a not centred: {s}");
    }
}

// ---------------------------------------------------------------------------
// Errors.

#[test]
fn bad_inputs_are_errors_not_panics() {
    let mut rng = Rng(37);
    let (p, d) = (4, 2);
    let x = points(&mut rng, p, d);
    let k = rbf(&x, &x, d, 0.5);
    let y = rng.vec(p * p);
    let mut bw = bwork(p);
    let mut be = Portable::new(&mut bw);
    let one = Domains::One { k: mr(&k, p, p), pair: PairKernel::Kronecker };
    let mut coef = vec![0.0; p * p];
    let mut w = vec![0.0; fit_workspace_len(p, p)];
    let bad = LearnError::BadLambda;
    for lambda in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(fit(&mut be, &one, Loss::Regression, mr(&y, p, p), lambda, mm(&mut coef, p, p), &mut w), Err(bad));
    }
    let mut store = vec![0.0; KronEigen::store_len(p, p)];
    let mut nw = vec![0.0; KronEigen::new_workspace_len(p)];
    let eig = KronEigen::new(&mut be, &one, Loss::Regression, &mut store, &mut nw).unwrap();
    let mut sw = vec![0.0; eig.solve_workspace_len()];
    assert_eq!(eig.solve(&mut be, -0.5, mr(&y, p, p), mm(&mut coef, p, p), &mut sw), Err(bad));
    // Shapes.
    let dm = LearnError::Numerics(LinalgError::DimensionMismatch);
    assert_eq!(eig.solve(&mut be, 1.0, mr(&y[..12], 4, 3), mm(&mut coef[..12], 4, 3), &mut sw), Err(dm));
    assert_eq!(eig.solve(&mut be, 1.0, mr(&y, p, p), mm(&mut coef[..12], 3, 4), &mut sw), Err(dm));
    let nonsq = Domains::Two { k_u: mr(&k[..12], 4, 3), k_v: mr(&k, p, p) };
    assert_eq!(fit(&mut be, &nonsq, Loss::Regression, mr(&y, p, p), 1.0, mm(&mut coef, p, p), &mut w), Err(dm));
    let empty = Domains::Two { k_u: mr(&k[..0], 0, 0), k_v: mr(&k, p, p) };
    let mut store2 = vec![0.0; KronEigen::store_len(p, p)];
    assert!(KronEigen::new(&mut be, &empty, Loss::Regression, &mut store2, &mut nw).is_err());
    assert!(matches!(
        eig.solve(&mut be, 1.0, mr(&y, p, p), mm(&mut coef, p, p), &mut sw[..3]),
        Err(LearnError::Numerics(LinalgError::WorkspaceTooSmall { .. }))
    ));
    // Non-finite labels and kernels.
    let mut yn = y.clone();
    yn[5] = f64::NAN;
    let nf = LearnError::Numerics(LinalgError::NonFinite);
    assert_eq!(eig.solve(&mut be, 1.0, mr(&yn, p, p), mm(&mut coef, p, p), &mut sw), Err(nf));
    let mut kn = k.clone();
    kn[1] = f64::INFINITY;
    let badk = Domains::One { k: mr(&kn, p, p), pair: PairKernel::Kronecker };
    assert_eq!(fit(&mut be, &badk, Loss::Regression, mr(&y, p, p), 1.0, mm(&mut coef, p, p), &mut w), Err(nf));
    // Symmetric/reciprocal with the ranking loss: no closed form.
    let sym = Domains::One { k: mr(&k, p, p), pair: PairKernel::Symmetric };
    assert_eq!(
        KronEigen::new(&mut be, &sym, Loss::Ranking(QueryWeight::Equal), &mut store2, &mut nw).unwrap_err(),
        LearnError::Unsupported
    );
    // An indefinite "kernel": λ_iσ_j + λ ≤ 0.
    let mut ind = vec![0.0; p * p];
    for i in 0..p {
        ind[i + i * p] = if i == 0 { -2.0 } else { 1.0 };
    }
    let indd = Domains::Two { k_u: mr(&ind, p, p), k_v: mr(&k, p, p) };
    assert!(matches!(
        fit(&mut be, &indd, Loss::Regression, mr(&y, p, p), 1e-3, mm(&mut coef, p, p), &mut w),
        Err(LearnError::Numerics(LinalgError::NotPositiveDefinite { .. }))
    ));
    // Predictions.
    let mut out = vec![0.0; p * p];
    let mut pw = vec![0.0; 4 * p * p];
    let c = mr(&coef[..12], 4, 3);
    assert_eq!(
        predict_block(
            &mut be,
            PairKernel::Symmetric,
            c,
            mr(&k, p, p),
            mr(&k[..12], 4, 3),
            mm(&mut out[..16], 4, 4),
            &mut pw
        ),
        Err(dm)
    );
    assert_eq!(
        predict_pairs(
            &mut be,
            PairKernel::Kronecker,
            mr(&coef, p, p),
            mr(&k, p, p),
            mr(&k, p, p),
            &[(0, 4)],
            &mut out[..1],
            &mut pw
        ),
        Err(dm)
    );
    // CG.
    let edges = [(0, 1), (3, 3), (2, 0)];
    let mut a = [0.0; 3];
    let mut cw = vec![0.0; kron_cg_workspace_len(p, p, 3)];
    let params = CgParams::default();
    let go = |be: &mut Portable<'_>,
              e: &[(usize, usize)],
              y: &[f64],
              lambda: f64,
              a: &mut [f64],
              coef: &mut [f64],
              cw: &mut [f64]| {
        let sys = KronSystem { domains: one, loss: Loss::Regression, edges: e, y, lambda };
        kron_cg(be, &sys, &params, a, mm(coef, p, p), cw, |_, _, _| CgControl::Continue).map(|_| ())
    };
    assert_eq!(go(&mut be, &edges, &[1.0, 2.0, 3.0], -1.0, &mut a, &mut coef, &mut cw), Err(bad));
    assert_eq!(go(&mut be, &edges, &[1.0, 2.0, 3.0], f64::NAN, &mut a, &mut coef, &mut cw), Err(bad));
    assert_eq!(go(&mut be, &[(0, 1), (4, 0), (2, 0)], &[1.0, 2.0, 3.0], 1.0, &mut a, &mut coef, &mut cw), Err(dm));
    assert_eq!(go(&mut be, &edges, &[1.0, 2.0], 1.0, &mut a, &mut coef, &mut cw), Err(dm));
    assert_eq!(go(&mut be, &edges, &[1.0, f64::NAN, 3.0], 1.0, &mut a, &mut coef, &mut cw), Err(nf));
    assert!(go(&mut be, &edges, &[1.0, 2.0, 3.0], 1.0, &mut a, &mut coef, &mut cw[..5]).is_err());
    assert!(go(&mut be, &edges, &[1.0, 2.0, 3.0], 1.0, &mut a, &mut coef, &mut cw).is_ok());
}

// ---------------------------------------------------------------------------
// Metrics.

/// 004 eq. 4 per row by brute force, normalised by the comparable pairs.
fn brute_eq4(y: &[f64], f: &[f64], m: usize, n: usize) -> f64 {
    let (mut sum, mut rows) = (0.0, 0);
    for i in 0..m {
        let (mut loss, mut cnt) = (0.0, 0);
        for a in 0..n {
            for b in 0..n {
                let (ya, yb) = (y[i + a * m], y[i + b * m]);
                if ya < yb {
                    let h = f[i + a * m] - f[i + b * m];
                    loss += if h > 0.0 {
                        1.0
                    } else if h == 0.0 {
                        0.5
                    } else {
                        0.0
                    };
                    cnt += 1;
                }
            }
        }
        if cnt > 0 {
            sum += loss / cnt as f64;
            rows += 1;
        }
    }
    sum / rows as f64
}

#[test]
fn conditional_metrics_match_brute_force_and_per_query_routines() {
    let mut rng = Rng(41);
    let (m, n) = (6, 8);
    // Graded labels with ties, predictions with ties; a constant row.
    let mut y: Vec<f64> = rng.vec(m * n).iter().map(|v| (v * 2.0).round()).collect();
    (0..n).for_each(|j| y[2 + j * m] = 1.0);
    let f: Vec<f64> = rng.vec(m * n).iter().map(|v| (v * 4.0).round() / 4.0).collect();
    let mut work = vec![0usize; 2 * n.max(m)];
    let r = conditional_disagreement(mr(&y, m, n), mr(&f, m, n), &mut work).unwrap();
    assert!((r.value - brute_eq4(&y, &f, m, n)).abs() < 1e-14);
    assert_eq!((r.queries_used, r.queries_skipped), (5, 1));
    // Row-major copies grouped per row: the per-query routines agree.
    let yr: Vec<f64> = (0..m).flat_map(|i| (0..n).map(|j| y[i + j * m]).collect::<Vec<_>>()).collect();
    let fr: Vec<f64> = (0..m).flat_map(|i| (0..n).map(|j| f[i + j * m]).collect::<Vec<_>>()).collect();
    let ptr: Vec<usize> = (0..=m).map(|i| i * n).collect();
    assert_eq!(disagreement(&yr, &fr, &ptr, &mut work).unwrap(), r);
    // Conditioning on the second node through the transposed views.
    let rt = conditional_disagreement(mr(&y, m, n).t(), mr(&f, m, n).t(), &mut work).unwrap();
    let (yt, ft): (Vec<f64>, Vec<f64>) = (
        (0..m * n).map(|ix| y[(ix / n) + (ix % n) * m]).collect(),
        (0..m * n).map(|ix| f[(ix / n) + (ix % n) * m]).collect(),
    );
    assert!((rt.value - brute_eq4(&yt, &ft, n, m)).abs() < 1e-14);
    // AUC per node.
    let yb: Vec<f64> = y.iter().map(|&v| if v > 0.0 { 1.0 } else { 0.0 }).collect();
    let c = conditional_auc(mr(&yb, m, n), mr(&f, m, n), 0.5, &mut work).unwrap();
    let mut per = Vec::new();
    for i in 0..m {
        let (li, pi): (Vec<f64>, Vec<f64>) =
            ((0..n).map(|j| yb[i + j * m]).collect(), (0..n).map(|j| f[i + j * m]).collect());
        if let Ok(v) = auc(&li, &pi, 0.5, &mut work) {
            per.push(v);
        }
    }
    assert!((c.value - per.iter().sum::<f64>() / per.len() as f64).abs() < 1e-14);
    assert_eq!(c.queries_used, per.len());
    let ybr: Vec<f64> = (0..m).flat_map(|i| (0..n).map(|j| yb[i + j * m]).collect::<Vec<_>>()).collect();
    assert_eq!(auc_by_query(&ybr, &fr, &ptr, 0.5, &mut work).unwrap(), c);
    // Errors.
    assert!(conditional_auc(mr(&yb, m, n), mr(&f, m, n), f64::NAN, &mut work).is_err());
    assert!(conditional_disagreement(mr(&y, m, n), mr(&f[..n * (m - 1)], m - 1, n), &mut work).is_err());
    assert!(conditional_disagreement(mr(&y, m, n), mr(&f, m, n), &mut work[..3]).is_err());
    let mut fnan = f.clone();
    fnan[7] = f64::NAN;
    assert_eq!(
        conditional_disagreement(mr(&y, m, n), mr(&fnan, m, n), &mut work).unwrap_err(),
        ranklet_core::metrics::MetricError::NonFinite { index: 7 }
    );
}

/// The outer-product encoding of a pair model: the linear scorer over
/// `outer_weights(A)` applied to `φ_u ⊗ φ_v` is the bilinear form
/// `φ_uᵀAφ_v` (a double sum here), and the symmetric / reciprocal pair
/// kernels average it with the swapped pair, exactly (anti)symmetric.
#[test]
fn outer_encoding_is_the_bilinear_form_and_its_symmetrisations() {
    use ranklet_core::learn::kron::{outer_pair_score, outer_weights, PairKernel};
    let p = 4;
    let a: Vec<f64> = (0..p * p).map(|k| ((k * 7 + 3) % 11) as f64 / 5.0 - 1.0).collect();
    let coef = MatRef::from_col_major(&a, p, p).unwrap();
    let mut w = vec![0.0; p * p];
    outer_weights(coef, &mut w).unwrap();
    let linear = |x: &[f64]| -> Result<f64, LearnError> { Ok(x.iter().zip(&w).map(|(x, w)| x * w).sum()) };
    let bilinear = |u: &[f64], v: &[f64]| {
        let mut s = 0.0;
        for i in 0..p {
            for j in 0..p {
                s += u[i] * a[i + j * p] * v[j];
            }
        }
        s
    };
    let (u, v) = ([0.3, -1.2, 0.5, 2.0], [1.1, 0.4, -0.7, 0.2]);
    let mut buf = vec![0.0; p * p];
    let f = |pair, x: &[f64], y: &[f64], buf: &mut [f64]| outer_pair_score(pair, x, y, buf, linear).unwrap();
    let kron = f(PairKernel::Kronecker, &u, &v, &mut buf);
    assert!((kron - bilinear(&u, &v)).abs() < 1e-12, "{kron}");
    let sym = f(PairKernel::Symmetric, &u, &v, &mut buf);
    assert!((sym - 0.5 * (bilinear(&u, &v) + bilinear(&v, &u))).abs() < 1e-12);
    assert_eq!(sym.to_bits(), f(PairKernel::Symmetric, &v, &u, &mut buf).to_bits());
    let recip = f(PairKernel::Reciprocal, &u, &v, &mut buf);
    assert!((recip - 0.5 * (bilinear(&u, &v) - bilinear(&v, &u))).abs() < 1e-12);
    assert_eq!(recip.to_bits(), (-f(PairKernel::Reciprocal, &v, &u, &mut buf)).to_bits());
    assert!(outer_pair_score(PairKernel::Kronecker, &u, &v, &mut buf[1..], linear).is_err());
    assert!(outer_weights(coef, &mut w[1..]).is_err());
}
