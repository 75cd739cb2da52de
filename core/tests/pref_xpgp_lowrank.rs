//! The low-rank XPGP (`learn::pref::xpgp_lowrank`) against the dense XPGP,
//! finite differences and a dense eigendecomposition.
//!
//! **Exact in the limit**: with every item an inducing input (`Z = X`) and
//! every eigenpair of each relation (`k = n`), the features carry the dense
//! prior exactly (`ΦΦᵀ = a·K_attr + Σ_r b_r·K_r`), so the sparse EP reaches
//! the dense EP's fixed point: posterior means, variances at the items and
//! the log evidence agree to 1e-8 (both EPs run to `tol = 1e-13`; the
//! attribute kernel is well conditioned and `K_r`'s eigenvalues lie in
//! `[1/(λ_max + ι⁻²), ι²]`, so rounding stays near 1e-12), and so does the
//! evidence gradient (dense: `½⟨Q, ∂K⟩` with `∂K_r/∂log ι = 2ε·K_r²`;
//! low-rank: per-feature sums — different formulas).
//!
//! **Gradients** with `m < n` and `k < n`: central differences of the
//! converged evidence (step 1e-5 in log space), 1e-5 relative.
//!
//! **Eigenpairs**: the Lanczos path (the basis well below `n`) against
//! core's dense tridiagonal solver on the assembled Laplacian: the `k`
//! smallest eigenvalues to 1e-9·‖Δ‖, residuals `‖Δv − λv‖` to 1e-8·‖Δ‖ and
//! orthonormal vectors — which together pin the eigenspaces.
//!
//! **Hostile input**: disconnected relations (eigenvalue 0 with the
//! multiplicity of the components), `k > n`, `k = 1`, `m = 1`, duplicated
//! items, contradictory preferences: a finite posterior with non-negative
//! variances, or a clear error.

use ranklet_core::backend::Portable;
use ranklet_core::eigen::tridiag::{sym_eigen, sym_eigen_workspace_len};
use ranklet_core::eigen::EigenParams;
use ranklet_core::graph::Pair;
use ranklet_core::learn::pref::hyper::{self, HyperProblem};
use ranklet_core::learn::pref::sparse::SparsePrior;
use ranklet_core::learn::pref::xpgp::{Relation, XpgpPrior};
use ranklet_core::learn::pref::xpgp_lowrank::{
    self as lr, default_eigen_params, relation_eigen, relation_eigen_iwork_len, relation_eigen_workspace_len,
    LowRankPrior, LowRankProblem, RelationEigen, RelationEigenInfo,
};
use ranklet_core::learn::pref::{EpParams, Likelihood, PrefPosterior};
use ranklet_core::learn::LearnError;
use ranklet_core::linalg::Rows;
use ranklet_core::{LinalgError, MatRef};

fn tight() -> EpParams {
    EpParams::new(0.5, 1e-13, 5000)
}

/// `|got − want| ≤ rel·max(max|want|, floor)`, elementwise.
fn assert_close(got: &[f64], want: &[f64], rel: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let scale = want.iter().fold(1e-300f64, |m, v| m.max(v.abs()));
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(g.is_finite(), "{what}[{i}] = {g}");
        assert!((g - w).abs() <= rel * scale, "{what}[{i}]: {g} vs {w} (scale {scale})");
    }
}

fn rng(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn rows(x: &[f64], n: usize, d: usize) -> Rows<'_> {
    Rows::Dense(MatRef::from_row_major(x, n, d).unwrap())
}

/// The 8 items and 12 preferences of `pref_reference.rs`.
fn fixture() -> (Vec<f64>, Vec<Pair>) {
    let text = include_str!("fixtures/pref/pref.txt");
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let (mut x, mut pairs) = (Vec::new(), Vec::new());
    while let Some(head) = lines.next() {
        let name = head.split_whitespace().next().unwrap().to_string();
        let vals: Vec<f64> = lines.next().unwrap().split_whitespace().map(|v| v.parse().unwrap()).collect();
        match name.as_str() {
            "p1_X" => x = vals,
            "p1_pairs" => {
                pairs = vals
                    .chunks(2)
                    .map(|c| Pair { winner: c[0] as usize, loser: c[1] as usize, magnitude: 1.0 })
                    .collect()
            }
            _ => {}
        }
    }
    (x, pairs)
}

/// An edge relation over the 8 fixture items with a zero-weight edge and
/// item 7 isolated (2 components), and a group relation with items 4 and 7
/// alone (4 components).
const EDGES: [(usize, usize, f64); 7] =
    [(0, 1, 1.0), (1, 2, 0.5), (2, 3, 2.0), (4, 5, 1.0), (5, 6, 0.7), (3, 4, 0.3), (0, 6, 0.0)];
const GROUPS: [(usize, usize); 7] = [(0, 10), (3, 10), (5, 10), (1, 11), (2, 11), (6, 11), (7, 12)];

/// Every eigenpair (or the `k` smallest) of each relation, by
/// [`relation_eigen`].
fn eigs(n: usize, rels: &[Relation<'_>], k: usize) -> Vec<(Vec<f64>, Vec<f64>, RelationEigenInfo)> {
    rels.iter()
        .map(|rel| {
            let params = default_eigen_params();
            let mut vals = vec![0.0; k];
            let mut vecs = vec![0.0; n * k];
            let mut work = vec![0.0; relation_eigen_workspace_len(n, k, rel, &params)];
            let mut iwork = vec![0usize; relation_eigen_iwork_len(n, rel)];
            let info = relation_eigen(n, rel, &mut vals, &mut vecs, &mut work, &mut iwork, &params).unwrap();
            (vals, vecs, info)
        })
        .collect()
}

/// The preferences for `lik`: as they are for the probit, with distinct
/// magnitudes (observed differences) for the Gaussian likelihood.
fn for_likelihood(pairs: &[Pair], lik: Likelihood) -> Vec<Pair> {
    match lik {
        Likelihood::Gaussian { .. } => {
            pairs.iter().enumerate().map(|(s, p)| Pair { magnitude: 0.3 + 0.1 * s as f64, ..*p }).collect()
        }
        _ => pairs.to_vec(),
    }
}

struct Fit {
    mean: Vec<f64>,
    var: Vec<f64>,
    log_z: f64,
    grad: Vec<f64>,
}

fn dense_fit(
    x: Option<Rows<'_>>,
    n: usize,
    rels: &[Relation<'_>],
    pairs: &[Pair],
    lik: Likelihood,
    theta: &[f64],
) -> Fit {
    let prior = XpgpPrior { n, x, relations: rels };
    let mut bw = vec![0.0; Portable::workspace_len(n)];
    let mut be = Portable::new(&mut bw);
    let mut storage = vec![0.0; PrefPosterior::storage_len(n, pairs.len())];
    let mut post = PrefPosterior::new(n, pairs.len(), &mut storage).unwrap();
    let mut work = vec![0.0; hyper::evidence_workspace_len(&prior)];
    let mut grad = vec![0.0; theta.len()];
    let problem = HyperProblem { prior: &prior, pairs, lik, ep: tight() };
    let log_z = hyper::evidence_gradient(&mut be, &problem, theta, &mut post, &mut grad, &mut work).unwrap();
    let cov = post.cov();
    Fit { mean: post.mean().to_vec(), var: (0..n).map(|i| cov[i * n + i]).collect(), log_z, grad }
}

fn lowrank_fit(prior: &LowRankPrior<'_>, pairs: &[Pair], lik: Likelihood, theta: &[f64]) -> Result<Fit, LearnError> {
    let n = prior.n;
    let mut bw = vec![0.0; Portable::workspace_len(prior.p())];
    let mut be = Portable::new(&mut bw);
    let mut storage = vec![0.0; lr::storage_len(prior, pairs.len())];
    let mut post = lr::new_posterior(prior, pairs.len(), &mut storage)?;
    let mut work = vec![0.0; lr::evidence_workspace_len(prior)];
    let mut grad = vec![0.0; theta.len()];
    let problem = LowRankProblem { prior, pairs, lik, ep: tight() };
    let log_z = lr::evidence_gradient(&mut be, &problem, theta, &mut post, &mut grad, &mut work)?;
    let (mut mean, mut var) = (vec![0.0; n], vec![0.0; n]);
    post.item_marginals(&mut be, &mut mean, &mut var, &mut work)?;
    // The covariance factor gives the same variances.
    let p = prior.p();
    let mut c = vec![0.0; p * n];
    post.item_cov_factor(&mut be, &mut c)?;
    for i in 0..n {
        let v = c[i * p..(i + 1) * p].iter().map(|t| t * t).sum::<f64>() + post.residual_variances()[i];
        assert!((v - var[i]).abs() <= 1e-12 * var[i].abs().max(1.0), "factor variance {v} vs {}", var[i]);
    }
    Ok(Fit { mean, var, log_z, grad })
}

fn assert_same(s: &Fit, d: &Fit, rel: f64, what: &str) {
    assert_close(&s.mean, &d.mean, rel, &format!("{what}: item means"));
    assert_close(&s.var, &d.var, rel, &format!("{what}: item variances"));
    assert_close(&[s.log_z], &[d.log_z], rel, &format!("{what}: log evidence"));
    assert_close(&s.grad, &d.grad, rel, &format!("{what}: evidence gradient"));
}

#[test]
fn every_item_inducing_and_every_eigenpair_is_the_dense_xpgp() {
    let (x, pairs) = fixture();
    let (n, d) = (8, 2);
    let rels = [Relation::Edges(&EDGES), Relation::Groups(&GROUPS)];
    let e = eigs(n, &rels, n);
    assert_eq!(e[0].2.components, 2);
    assert_eq!(e[1].2.components, 4);
    let re: Vec<RelationEigen<'_>> =
        e.iter().map(|(v, u, _)| RelationEigen { vals: v, vecs: u, dropped_mean: None }).collect();
    let theta = [0.8f64.ln(), 0.5f64.ln(), 0.7f64.ln(), 1.5f64.ln(), 0.9f64.ln(), 0.6f64.ln(), 1.3f64.ln()];
    for lik in [Likelihood::Probit { sigma: 0.7 }, Likelihood::Gaussian { noise: 0.7 }] {
        let pairs = for_likelihood(&pairs, lik);
        // Attributes and both relations.
        let want = dense_fit(Some(rows(&x, n, d)), n, &rels, &pairs, lik, &theta);
        let prior = LowRankPrior {
            n,
            attr: Some(SparsePrior { x: rows(&x, n, d), z: rows(&x, n, d) }),
            relations: &re,
            residual_items: &[],
        };
        assert_eq!(prior.p(), 3 * n);
        let got = lowrank_fit(&prior, &pairs, lik, &theta).unwrap();
        assert_same(&got, &want, 1e-8, &format!("{lik:?}, attributes + relations"));
        // A residual asked for with k = n: nothing is dropped (n − k = 0),
        // no constant, no residual feature, the same fit.
        assert!(e.iter().all(|(v, _, info)| lr::dropped_mean(n, info.trace, v).is_none()));
        let mut judged = vec![0usize; n];
        let u = lr::judged_items(n, &pairs, &mut judged).unwrap();
        let prior = LowRankPrior { residual_items: &judged[..u], ..prior };
        assert_eq!(prior.p(), 3 * n);
        let got = lowrank_fit(&prior, &pairs, lik, &theta).unwrap();
        assert_same(&got, &want, 1e-8, &format!("{lik:?}, k = n with a residual"));
        // Relations only (θ[0..2] ignored, their gradient 0).
        let want = dense_fit(None, n, &rels, &pairs, lik, &theta);
        let prior = LowRankPrior { n, attr: None, relations: &re, residual_items: &[] };
        let got = lowrank_fit(&prior, &pairs, lik, &theta).unwrap();
        assert_same(&got, &want, 1e-8, &format!("{lik:?}, relations only"));
        assert_eq!(&got.grad[..2], &[0.0, 0.0]);
    }
}

/// A relation whose dropped spectrum is exactly flat: the complete graph
/// on 10 items (Laplacian eigenvalues 0 once and 10 nine times) at `k = 1`,
/// and two disjoint complete graphs of 5 (0 twice, 5 eight times) at
/// `k = 2`; both kept parts are null spaces (union–find), so the test needs
/// no Lanczos. The constant then is the repeated eigenvalue, `K̂_r = K_r`,
/// and the low-rank fit is the dense XPGP's to 1e-8 (as the `k = n` test:
/// the same prior, different formulas), at the two items in no preference
/// too (whose variance the constant reaches only through the residual
/// variances). Without the constant the same ranks differ visibly.
#[test]
fn a_flat_dropped_spectrum_with_its_constant_is_the_dense_xpgp() {
    let (n, d) = (10, 2);
    let complete: Vec<(usize, usize, f64)> = (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j, 1.0))).collect();
    let cliques: Vec<(usize, usize, f64)> = complete.iter().copied().filter(|&(i, j, _)| i / 5 == j / 5).collect();
    let rels = [Relation::Edges(&complete), Relation::Edges(&cliques)];
    let e: Vec<_> = [(rels[0], 1), (rels[1], 2)].iter().map(|&(rel, k)| eigs(n, &[rel], k).remove(0)).collect();
    let means: Vec<f64> = e.iter().map(|(v, _, info)| lr::dropped_mean(n, info.trace, v).unwrap()).collect();
    assert!((means[0] - 10.0).abs() <= 1e-12 * 10.0, "{means:?}");
    assert!((means[1] - 5.0).abs() <= 1e-12 * 5.0, "{means:?}");
    let mut rnd = rng(0x5851_f42d_4c95_7f2d);
    let x: Vec<f64> = (0..n * d).map(|_| 2.0 * rnd() - 1.0).collect();
    // Items 8 and 9 in no preference; a contradiction between 2 and 3.
    let pairs: Vec<Pair> = [(0, 1), (1, 2), (2, 3), (3, 2), (4, 5), (6, 0), (7, 4), (5, 6), (1, 7), (2, 6)]
        .iter()
        .map(|&(w, l)| Pair { winner: w, loser: l, magnitude: 1.0 })
        .collect();
    let mut judged = vec![0usize; n];
    let u = lr::judged_items(n, &pairs, &mut judged).unwrap();
    assert_eq!(&judged[..u], &[0, 1, 2, 3, 4, 5, 6, 7]);
    let theta = [0.8f64.ln(), 0.5f64.ln(), 0.7f64.ln(), 1.5f64.ln(), 0.4f64.ln(), 0.6f64.ln(), 1.3f64.ln()];
    for lik in [Likelihood::Probit { sigma: 0.7 }, Likelihood::Gaussian { noise: 0.7 }] {
        let pairs = for_likelihood(&pairs, lik);
        for attr in [true, false] {
            let want = dense_fit(attr.then(|| rows(&x, n, d)), n, &rels, &pairs, lik, &theta);
            let prior_with = |residual: bool| {
                let re: Vec<RelationEigen<'_>> = e
                    .iter()
                    .zip(&means)
                    .map(|((v, vecs, _), &mean)| RelationEigen {
                        vals: v,
                        vecs,
                        dropped_mean: residual.then_some(mean),
                    })
                    .collect();
                re
            };
            let re = prior_with(true);
            let prior = LowRankPrior {
                n,
                attr: attr.then(|| SparsePrior { x: rows(&x, n, d), z: rows(&x, n, d) }),
                relations: &re,
                residual_items: &judged[..u],
            };
            assert_eq!(prior.p(), if attr { n } else { 0 } + 3 + u);
            let got = lowrank_fit(&prior, &pairs, lik, &theta).unwrap();
            assert_same(&got, &want, 1e-8, &format!("{lik:?}, attributes {attr}, flat dropped spectrum"));
            // The plain truncation of the same ranks is another prior.
            let re = prior_with(false);
            let prior = LowRankPrior { relations: &re, ..prior };
            let plain = lowrank_fit(&prior, &pairs, lik, &theta).unwrap();
            let gap = plain.var.iter().zip(&want.var).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            assert!(gap > 1e-2, "{lik:?}, attributes {attr}: the truncation is as close ({gap})");
        }
    }
}

/// `n` items in 3-D, a 4-nearest-neighbour relation (two clusters far
/// apart: two components), `np` noisy judgements of a smooth utility.
/// Items (`n × 3`, row-major), the relation's edges, the judgements.
type Generated = (Vec<f64>, Vec<(usize, usize, f64)>, Vec<Pair>);

fn generated(n: usize, np: usize, seed: u64) -> Generated {
    let mut rnd = rng(seed);
    let d = 3;
    let x: Vec<f64> = (0..n * d).map(|i| rnd() + if (i / d) % 2 == 0 { 0.0 } else { 10.0 }).collect();
    let dist = |a: usize, b: usize| (0..d).map(|t| (x[a * d + t] - x[b * d + t]).powi(2)).sum::<f64>();
    let mut edges = Vec::new();
    for i in 0..n {
        let mut order: Vec<usize> = (0..n).filter(|&j| j != i).collect();
        order.sort_by(|&a, &b| dist(i, a).total_cmp(&dist(i, b)));
        for &j in &order[..4] {
            edges.push((i, j, (-dist(i, j)).exp()));
        }
    }
    let f = |i: usize| (6.0 * x[i * d]).sin() + x[i * d + 1];
    let mut pairs = Vec::new();
    while pairs.len() < np {
        let (a, b) = ((rnd() * n as f64) as usize, (rnd() * n as f64) as usize);
        if a != b {
            let (mut w, mut l) = if f(a) >= f(b) { (a, b) } else { (b, a) };
            if pairs.len() % 7 == 6 {
                core::mem::swap(&mut w, &mut l);
            }
            pairs.push(Pair { winner: w, loser: l, magnitude: 1.0 });
        }
    }
    (x, edges, pairs)
}

#[test]
fn lowrank_gradient_is_central_differences() {
    let (n, d, m, k) = (60, 3, 8, 10);
    let (x, edges, pairs) = generated(n, 150, 0x2545_f491_4f6c_dd1d);
    let rels = [Relation::Edges(&edges)];
    let e = eigs(n, &rels, k);
    assert_eq!(e[0].2.components, 2);
    // Inducing inputs: every 7th item.
    let z: Vec<f64> = (0..m).flat_map(|j| x[7 * j * d..(7 * j + 1) * d].to_vec()).collect();
    let theta = [0.8f64.ln(), 0.5f64.ln(), 1.0f64.ln(), 1.5f64.ln(), 0.9f64.ln()];
    // Only the first 40 preferences, so that some items are in none.
    let pairs = &pairs[..40];
    let mut judged = vec![0usize; n];
    let u = lr::judged_items(n, pairs, &mut judged).unwrap();
    assert!(u < n, "every item judged: the test would not reach the unjudged path");
    for (attr, residual) in [(true, false), (false, false), (true, true), (false, true)] {
        let re: Vec<RelationEigen<'_>> = e
            .iter()
            .map(|(v, vecs, info)| RelationEigen {
                vals: v,
                vecs,
                dropped_mean: if residual { lr::dropped_mean(n, info.trace, v) } else { None },
            })
            .collect();
        let prior = LowRankPrior {
            n,
            attr: attr.then(|| SparsePrior { x: rows(&x, n, d), z: rows(&z, m, d) }),
            relations: &re,
            residual_items: &judged[..u],
        };
        assert_eq!(prior.p(), if attr { m } else { 0 } + k + if residual { u } else { 0 });
        let lik = Likelihood::Probit { sigma: 1.0 };
        let problem = LowRankProblem { prior: &prior, pairs, lik, ep: tight() };
        let mut bw = vec![0.0; Portable::workspace_len(prior.p())];
        let mut be = Portable::new(&mut bw);
        let mut storage = vec![0.0; lr::storage_len(&prior, pairs.len())];
        let mut post = lr::new_posterior(&prior, pairs.len(), &mut storage).unwrap();
        let mut work = vec![0.0; lr::evidence_workspace_len(&prior)];
        let mut grad = vec![0.0; theta.len()];
        let mut scratch = vec![0.0; theta.len()];
        lr::evidence_gradient(&mut be, &problem, &theta, &mut post, &mut grad, &mut work).unwrap();
        let h = 1e-5;
        for i in 0..theta.len() {
            if !attr && i < 2 {
                continue;
            }
            let mut at = |t: f64| {
                let mut th = theta;
                th[i] += t;
                lr::evidence_gradient(&mut be, &problem, &th, &mut post, &mut scratch, &mut work).unwrap()
            };
            let fd = (at(h) - at(-h)) / (2.0 * h);
            assert!(
                (grad[i] - fd).abs() <= 1e-5 * fd.abs().max(1e-2),
                "attributes {attr}, residual {residual}: gradient[{i}] = {} vs central difference {fd}",
                grad[i]
            );
        }
    }
}

/// The dense Laplacian of `rel` (column-major), assembled as xpgp's
/// projection defines it.
fn dense_laplacian(n: usize, rel: &Relation<'_>) -> Vec<f64> {
    let mut l = vec![0.0; n * n];
    let mut add = |u: usize, v: usize, w: f64| {
        l[u * n + u] += w;
        l[v * n + v] += w;
        l[u * n + v] -= w;
        l[v * n + u] -= w;
    };
    match *rel {
        Relation::Edges(e) => e.iter().for_each(|&(u, v, w)| add(u, v, w)),
        Relation::Groups(g) => {
            for (a, &(i, gi)) in g.iter().enumerate() {
                for &(j, gj) in &g[a + 1..] {
                    if gi == gj && i != j {
                        add(i, j, 1.0);
                    }
                }
            }
        }
    }
    l
}

fn check_eigen(n: usize, rel: &Relation<'_>, k: usize, lanczos: bool) -> RelationEigenInfo {
    let lap = dense_laplacian(n, rel);
    let mut all = vec![0.0; n];
    let mut ws = vec![0.0; sym_eigen_workspace_len(n)];
    sym_eigen(MatRef::from_col_major(&lap, n, n).unwrap(), &mut all, None, &mut ws, &EigenParams::default()).unwrap();
    let norm = all[n - 1].abs().max(1e-300);
    let e = eigs(n, &[*rel], k);
    let (vals, vecs, info) = &e[0];
    assert_eq!(info.lanczos.basis > 0, lanczos, "{info:?}");
    // tr Δ and the mean of the dropped eigenvalues against the dense ones.
    let tr: f64 = all.iter().sum();
    assert!((info.trace - tr).abs() <= 1e-10 * norm * n as f64, "trace {} vs {tr}", info.trace);
    match lr::dropped_mean(n, info.trace, vals) {
        None => assert_eq!(k, n),
        Some(mean) => {
            let want = all[k..].iter().sum::<f64>() / (n - k) as f64;
            assert!((mean - want).abs() <= 1e-9 * norm, "dropped mean {mean} vs {want}");
        }
    }
    for i in 0..k {
        assert!((vals[i] - all[i]).abs() <= 1e-9 * norm, "λ[{i}] = {} vs dense {}", vals[i], all[i]);
        let v = &vecs[i * n..(i + 1) * n];
        // ‖Δv − λv‖ and orthonormality.
        let r: f64 = (0..n)
            .map(|a| ((0..n).map(|b| lap[b * n + a] * v[b]).sum::<f64>() - vals[i] * v[a]).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!(r <= 1e-8 * norm, "residual of pair {i}: {r}");
        for j in 0..=i {
            let w = &vecs[j * n..(j + 1) * n];
            let dot: f64 = v.iter().zip(w).map(|(a, b)| a * b).sum();
            let want = if i == j { 1.0 } else { 0.0 };
            assert!((dot - want).abs() <= 1e-10, "⟨v{i}, v{j}⟩ = {dot}");
        }
    }
    *info
}

#[test]
fn lanczos_eigenpairs_of_laplacians_match_the_dense_solver() {
    // A weighted path of 70 items plus a 10-cycle: two components; the
    // 8 smallest (the zero pair, then 6 by Lanczos: basis 26 ≪ 80).
    let n = 80;
    let mut rnd = rng(0x9e37_79b9_7f4a_7c15);
    let mut edges: Vec<(usize, usize, f64)> = (0..69).map(|i| (i, i + 1, 0.5 + rnd())).collect();
    edges.extend((70..80).map(|i| (i, if i == 79 { 70 } else { i + 1 }, 1.0)));
    edges.push((3, 40, 0.25));
    let info = check_eigen(n, &Relation::Edges(&edges), 8, true);
    assert_eq!(info.components, 2);
    assert!(info.lanczos.max_residual <= 1e-9, "{info:?}");
    // Groups of 60 items: blocks of 5 and shifted blocks of 7 overlap into
    // the components 0..5, 5..40 and 40..55 (both block sequences break at
    // 5 and 40), and items 55..60 are in no group: 8 components.
    let groups: Vec<(usize, usize)> = (0..55).flat_map(|i| [(i, i / 5), (i, 20 + (i + 2) / 7)]).collect();
    let info = check_eigen(60, &Relation::Groups(&groups), 11, true);
    assert_eq!(info.components, 8);
    // k = n: the dense path, every pair.
    check_eigen(12, &Relation::Edges(&edges[..11]), 12, false);
}

#[test]
fn hostile_relations_and_inputs_give_a_posterior_or_a_clear_error() {
    let n = 8;
    let params = default_eigen_params();
    // k > n: a clear error, by name.
    let rel = Relation::Edges(&EDGES);
    let mut vals = vec![0.0; n + 1];
    let mut vecs = vec![0.0; n * (n + 1)];
    let mut work = vec![0.0; relation_eigen_workspace_len(n, n + 1, &rel, &params)];
    let mut iwork = vec![0usize; relation_eigen_iwork_len(n, &rel)];
    let err = relation_eigen(n, &rel, &mut vals, &mut vecs, &mut work, &mut iwork, &params).unwrap_err();
    assert_eq!(err, LearnError::Numerics(LinalgError::InvalidParameter));
    // Bad edges: out of range, self-edge, negative weight.
    for bad in [[(0usize, 8usize, 1.0f64)], [(2, 2, 1.0)], [(0, 1, -1.0)]] {
        let rel = Relation::Edges(&bad);
        let mut vals = vec![0.0; 2];
        let mut vecs = vec![0.0; 2 * n];
        let err = relation_eigen(n, &rel, &mut vals, &mut vecs, &mut work, &mut iwork, &params).unwrap_err();
        assert_eq!(err, LearnError::BadGraph);
    }
    // No edges at all: n components, every eigenvalue 0; k = 1 and k = n.
    let none = Relation::Edges(&[]);
    for k in [1, n] {
        let e = eigs(n, &[none], k);
        assert_eq!(e[0].2.components, n);
        assert!(e[0].0.iter().all(|&v| v == 0.0));
    }
    // k = 1 on a disconnected relation: the largest component's indicator.
    let e = eigs(n, &[Relation::Groups(&GROUPS)], 1);
    assert_eq!(e[0].0, [0.0]);
    let v = &e[0].1;
    let nz: Vec<usize> = (0..n).filter(|&i| v[i] != 0.0).collect();
    assert_eq!(nz, [0, 3, 5]);

    // Duplicated items (5..10 repeat 0..5), contradictory and repeated
    // preferences, one inducing point, relations of rank 1 and n.
    let base = [0.0, 0.0, 1.0, 0.5, -0.3, 2.0, 0.7, -1.0, 1.5, 1.5];
    let x: Vec<f64> = base.iter().chain(base.iter()).copied().collect();
    let (n, d) = (10, 2);
    let mut pairs = Vec::new();
    for _ in 0..20 {
        pairs.push(Pair { winner: 0, loser: 5, magnitude: 1.0 });
        pairs.push(Pair { winner: 5, loser: 0, magnitude: 1.0 });
        pairs.push(Pair { winner: 1, loser: 2, magnitude: 1.0 });
        pairs.push(Pair { winner: 2, loser: 1, magnitude: 1.0 });
        pairs.push(Pair { winner: 3, loser: 4, magnitude: 1.0 });
    }
    let edges = [(0usize, 5usize, 1.0f64), (1, 6, 1.0), (2, 3, 0.5)];
    let rels = [Relation::Edges(&edges)];
    let theta = [0.0, 0.0, 0.7f64.ln(), 0.0, 0.0];
    let lik = Likelihood::Probit { sigma: 0.7 };
    for (k, z, m) in [(1, &x[..d], 1), (n, &x[..], n), (3, &x[..4 * d], 4)] {
        let e = eigs(n, &rels, k);
        let re: Vec<RelationEigen<'_>> =
            e.iter().map(|(v, u, _)| RelationEigen { vals: v, vecs: u, dropped_mean: None }).collect();
        for attr in [true, false] {
            let prior = LowRankPrior {
                n,
                attr: attr.then(|| SparsePrior { x: rows(&x, n, d), z: rows(z, m, d) }),
                relations: &re,
                residual_items: &[],
            };
            let f = lowrank_fit(&prior, &pairs, lik, &theta).unwrap();
            assert!(f.log_z.is_finite() && f.grad.iter().all(|g| g.is_finite()));
            assert!(f.mean.iter().all(|v| v.is_finite()) && f.var.iter().all(|v| v.is_finite() && *v >= 0.0));
        }
    }
    // A prior whose eigenvector block does not match n: a shape error.
    let bad = [RelationEigen { vals: &[0.0], vecs: &[1.0; 3], dropped_mean: None }];
    let prior = LowRankPrior { n, attr: None, relations: &bad, residual_items: &[] };
    assert!(matches!(
        lowrank_fit(&prior, &pairs, lik, &theta),
        Err(LearnError::Numerics(LinalgError::DimensionMismatch))
    ));
    // A negative eigenvalue is refused.
    let v: Vec<f64> = (0..n).map(|_| (1.0 / n as f64).sqrt()).collect();
    let bad = [RelationEigen { vals: &[-1.0], vecs: &v, dropped_mean: None }];
    let prior = LowRankPrior { n, attr: None, relations: &bad, residual_items: &[] };
    assert!(lowrank_fit(&prior, &pairs, lik, &theta).is_err());

    // Residual constants: a pair's item without a residual feature, items
    // out of order or out of range, a dropped mean below a kept eigenvalue
    // or not finite: shape and value errors, never a wrong fit.
    let e = eigs(n, &rels, 3);
    let mean = lr::dropped_mean(n, e[0].2.trace, &e[0].0).unwrap();
    let with = |m: f64| [RelationEigen { vals: &e[0].0, vecs: &e[0].1, dropped_mean: Some(m) }];
    let good = with(mean);
    let mut judged = vec![0usize; n];
    let u = lr::judged_items(n, &pairs, &mut judged).unwrap();
    assert_eq!(&judged[..u], &[0, 1, 2, 3, 4, 5]);
    let prior = LowRankPrior { n, attr: None, relations: &good, residual_items: &judged[..u] };
    assert!(lowrank_fit(&prior, &pairs, lik, &theta).is_ok());
    // Missing items (none at all included), unsorted, out of range,
    // repeated.
    for items in [
        &[0usize, 1, 2, 3, 4][..],
        &[][..],
        &[0, 2, 1, 3, 4, 5][..],
        &[0, 1, 2, 3, 4, 5, 10][..],
        &[0, 1, 1, 2, 3, 4, 5][..],
    ] {
        let prior = LowRankPrior { residual_items: items, ..prior };
        assert_eq!(
            lowrank_fit(&prior, &pairs, lik, &theta).err(),
            Some(LearnError::Numerics(LinalgError::DimensionMismatch)),
            "{items:?}"
        );
    }
    for (m, err) in [(-1.0, LinalgError::InvalidParameter), (f64::NAN, LinalgError::NonFinite)] {
        let bad = with(m);
        let prior = LowRankPrior { relations: &bad, ..prior };
        assert_eq!(lowrank_fit(&prior, &pairs, lik, &theta).err(), Some(LearnError::Numerics(err)), "{m}");
    }
    let far = [Pair { winner: 0, loser: n, magnitude: 1.0 }];
    assert_eq!(lr::judged_items(n, &far, &mut judged), Err(LearnError::BadGraph));
    assert!(matches!(
        lr::judged_items(n, &pairs, &mut judged[..3]),
        Err(LearnError::Numerics(LinalgError::DimensionMismatch))
    ));
}
