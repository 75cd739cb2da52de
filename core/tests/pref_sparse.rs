//! Sparse (DTC) EP against the dense EP and against finite differences.
//!
//! **Exact in the limit**: with every item an inducing input (`Z = X`,
//! `m = n`) the DTC prior is `Q = K`, so the sparse EP runs the dense EP's
//! schedule on the same model from the same zero sites and must reach the
//! same fixed point: posterior means and variances at the items, the pair
//! variances, the log evidence, the evidence gradient (dense: `½⟨Q, ∂K⟩` in
//! `n`-space; sparse: `⟨P, ∂K_nm⟩ − ½⟨S, ∂K_mm⟩` in `m`-space — different
//! formulas), and the predictions at new inputs. Both run to `tol = 1e-13`;
//! the kernels are well conditioned (`κ(K) < 10⁶`), so they agree to ~1e-11
//! and 1e-8 (relative to the largest entry) is asserted. On the fixture of
//! `pref_reference.rs` (8 items, 12 preferences) and on a generated set of
//! 300 items and 600 preferences with repeated and contradictory judgements
//! (several blocks of 256 pairs and items).
//!
//! **Gradients** with `m < n`: central differences of the converged sparse
//! evidence (step 1e-5 in log space; truncation ~1e-10, EP noise ~1e-11),
//! 1e-5 relative. **Hostile input**: duplicated items, contradictory
//! preferences, one inducing point, more inducing rows than distinct items:
//! a finite posterior with non-negative variances, or a clear error.

use ranklet_core::backend::Portable;
use ranklet_core::graph::Pair;
use ranklet_core::kernel::{kernel_matrix, kernel_matrix_workspace_len, Kernel};
use ranklet_core::learn::pref::hyper::{evidence_gradient, evidence_workspace_len, HyperProblem};
use ranklet_core::learn::pref::sparse::{
    self, choose_inducing, inducing_workspace_len, SparsePosterior, SparsePrior, SparseProblem, PAIR_BLOCK,
};
use ranklet_core::learn::pref::xpgp::XpgpPrior;
use ranklet_core::learn::pref::{predict_workspace_len, EpParams, Likelihood, NewPair, PrefPosterior};
use ranklet_core::learn::LearnError;
use ranklet_core::linalg::Rows;
use ranklet_core::{LinalgError, MatMut, MatRef};

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

/// Items `n × d` (row-major), pairs, `θ = (log a, log γ, log σ)`.
struct Case {
    x: Vec<f64>,
    n: usize,
    d: usize,
    pairs: Vec<Pair>,
    theta: [f64; 3],
}

/// The 8-item fixture of `pref_reference.rs` (`p1_X`, `p1_pairs`,
/// `p1_hyp`).
fn fixture_case() -> Case {
    let text = include_str!("fixtures/pref/pref.txt");
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let (mut x, mut pairs, mut hyp) = (Vec::new(), Vec::new(), Vec::new());
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
            "p1_hyp" => hyp = vals,
            _ => {}
        }
    }
    Case { n: x.len() / 2, d: 2, x, pairs, theta: [hyp[0].ln(), hyp[1].ln(), hyp[2].ln()] }
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

/// `n` items in 3-D; `np` judgements of a smooth utility, every fifth
/// one reversed (contradictions), the first ten repeated.
fn generated_case(n: usize, np: usize, seed: u64) -> Case {
    let mut rnd = rng(seed);
    let d = 3;
    let x: Vec<f64> = (0..n * d).map(|_| rnd()).collect();
    let f = |i: usize| (6.0 * x[i * d]).sin() + x[i * d + 1];
    let mut pairs = Vec::new();
    while pairs.len() < np {
        let (a, b) = ((rnd() * n as f64) as usize, (rnd() * n as f64) as usize);
        if a != b {
            let (mut w, mut l) = if f(a) >= f(b) { (a, b) } else { (b, a) };
            if pairs.len() % 5 == 4 {
                core::mem::swap(&mut w, &mut l);
            }
            pairs.push(Pair { winner: w, loser: l, magnitude: f(w) - f(l) + 0.1 * (rnd() - 0.5) });
        }
    }
    for s in 0..10 {
        pairs.push(pairs[s]);
    }
    Case { x, n, d, pairs, theta: [0.5f64.ln(), 4.0f64.ln(), 0.7f64.ln()] }
}

fn rows(x: &[f64], n: usize, d: usize) -> Rows<'_> {
    Rows::Dense(MatRef::from_row_major(x, n, d).unwrap())
}

/// `a·k(X, Y)` (`nx × ny`, column-major).
fn kmat(x: &Rows<'_>, y: &Rows<'_>, theta: &[f64]) -> Vec<f64> {
    let (nx, ny) = (x.nrows(), y.nrows());
    let mut out = vec![0.0; nx * ny];
    let mut bw = vec![0.0; Portable::workspace_len(1)];
    let mut be = Portable::new(&mut bw);
    let mut kw = vec![0.0; kernel_matrix_workspace_len(x, y)];
    let k = Kernel::Rbf { gamma: theta[1].exp() };
    kernel_matrix(&mut be, &k, x, y, MatMut::from_col_major(&mut out, nx, ny).unwrap(), &mut kw).unwrap();
    out.iter_mut().for_each(|v| *v *= theta[0].exp());
    out
}

/// What is compared: item means, item variances, pair variances, log Z,
/// gradient (3), predictive means and variances at new points.
struct Fit {
    mean: Vec<f64>,
    var: Vec<f64>,
    pair_var: Vec<f64>,
    log_z: f64,
    grad: Vec<f64>,
    pred_mean: Vec<f64>,
    pred_var: Vec<f64>,
}

fn dense(c: &Case, lik: Likelihood, xt: &Rows<'_>) -> Fit {
    let x = rows(&c.x, c.n, c.d);
    let n = c.n;
    let prior = XpgpPrior { n, x: Some(x), relations: &[] };
    let mut bw = vec![0.0; Portable::workspace_len(n)];
    let mut be = Portable::new(&mut bw);
    let mut storage = vec![0.0; PrefPosterior::storage_len(n, c.pairs.len())];
    let mut post = PrefPosterior::new(n, c.pairs.len(), &mut storage).unwrap();
    let mut work = vec![0.0; evidence_workspace_len(&prior)];
    let mut grad = vec![0.0; 3];
    let problem = HyperProblem { prior: &prior, pairs: &c.pairs, lik, ep: tight() };
    let log_z = evidence_gradient(&mut be, &problem, &c.theta, &mut post, &mut grad, &mut work).unwrap();
    assert_eq!(post.jitter(), 0.0);
    let cov = post.cov();
    let var = (0..n).map(|i| cov[i * n + i]).collect();
    let pair_var = c.pairs.iter().map(|p| post.pair(p.winner, p.loser).unwrap().1).collect();
    let t = xt.nrows();
    let ks = kmat(&x, xt, &c.theta);
    let (mut pm, mut pv) = (vec![0.0; t], vec![0.0; t]);
    let mut pw = vec![0.0; predict_workspace_len(n)];
    let kd = vec![c.theta[0].exp(); t];
    post.predict(&c.pairs, MatRef::from_col_major(&ks, n, t).unwrap(), &kd, &mut pm, &mut pv, &mut pw).unwrap();
    Fit { mean: post.mean().to_vec(), var, pair_var, log_z, grad, pred_mean: pm, pred_var: pv }
}

fn sparse_fit(c: &Case, z: &[f64], m: usize, lik: Likelihood, xt: &Rows<'_>) -> Fit {
    let (x, zr) = (rows(&c.x, c.n, c.d), rows(z, m, c.d));
    let n = c.n;
    let prior = SparsePrior { x, z: zr };
    let problem = SparseProblem { prior: &prior, pairs: &c.pairs, lik, ep: tight() };
    let mut bw = vec![0.0; Portable::workspace_len(m)];
    let mut be = Portable::new(&mut bw);
    let mut storage = vec![0.0; SparsePosterior::storage_len(n, m, c.pairs.len())];
    let mut post = SparsePosterior::new(n, m, c.pairs.len(), &mut storage).unwrap();
    let mut work = vec![0.0; sparse::evidence_workspace_len(&prior)];
    let mut grad = vec![0.0; 3];
    let log_z = sparse::evidence_gradient(&mut be, &problem, &c.theta, &mut post, &mut grad, &mut work).unwrap();
    let (mut mean, mut var) = (vec![0.0; n], vec![0.0; n]);
    post.item_marginals(&mut be, &mut mean, &mut var, &mut work).unwrap();
    // Pair variances through the new-input path with the items as inputs.
    let kzx = kmat(&zr, &x, &c.theta);
    let kxx = kmat(&x, &x, &c.theta);
    let pair_var = c
        .pairs
        .iter()
        .map(|p| {
            let (w, l) = (p.winner, p.loser);
            let (k1, k2) = (&kzx[w * m..(w + 1) * m], &kzx[l * m..(l + 1) * m]);
            let new = NewPair { k1, k2, k11: kxx[w * n + w], k22: kxx[l * n + l], k12: kxx[l * n + w] };
            let (_, v) = post.predict_pair(&mut be, &new, &mut work).unwrap();
            v
        })
        .collect();
    let t = xt.nrows();
    let kzt = kmat(&zr, xt, &c.theta);
    let (mut pm, mut pv) = (vec![0.0; t], vec![0.0; t]);
    for j in 0..t {
        (pm[j], pv[j]) = post.predict(&mut be, &kzt[j * m..(j + 1) * m], c.theta[0].exp(), &mut work).unwrap();
    }
    // The inductive kind's W gives the same variances: a·k − k_xᵀWk_x.
    let mut w = vec![0.0; m * m];
    let mut tmp = vec![0.0; m * m];
    post.inducing_w(&mut be, &mut w, &mut tmp).unwrap();
    for j in 0..t {
        let kx = &kzt[j * m..(j + 1) * m];
        let q: f64 = (0..m).map(|a| (0..m).map(|b| kx[a] * w[b * m + a] * kx[b]).sum::<f64>()).sum();
        let v = c.theta[0].exp() - q;
        assert!((v - pv[j]).abs() <= 1e-9 * c.theta[0].exp(), "W_u variance {v} vs {}", pv[j]);
    }
    Fit { mean, var, pair_var, log_z, grad, pred_mean: pm, pred_var: pv }
}

fn assert_same(s: &Fit, d: &Fit, rel: f64, what: &str) {
    assert_close(&s.mean, &d.mean, rel, &format!("{what}: item means"));
    assert_close(&s.var, &d.var, rel, &format!("{what}: item variances"));
    assert_close(&s.pair_var, &d.pair_var, rel, &format!("{what}: pair variances"));
    assert_close(&[s.log_z], &[d.log_z], rel, &format!("{what}: log evidence"));
    assert_close(&s.grad, &d.grad, rel, &format!("{what}: evidence gradient"));
    assert_close(&s.pred_mean, &d.pred_mean, rel, &format!("{what}: predictive means"));
    assert_close(&s.pred_var, &d.pred_var, rel, &format!("{what}: predictive variances"));
}

fn new_points(d: usize) -> Vec<f64> {
    let mut rnd = rng(77);
    (0..5 * d).map(|_| 2.0 * rnd() - 0.5).collect()
}

#[test]
fn every_item_inducing_is_the_dense_ep_on_the_fixture() {
    let c = fixture_case();
    let xt = new_points(c.d);
    let xtr = rows(&xt, 5, c.d);
    for lik in [Likelihood::Probit { sigma: 1.0 }, Likelihood::Gaussian { noise: 1.0 }] {
        let d = dense(&c, lik, &xtr);
        // Z = X in item order, and Z = the pivoted-Cholesky order of all items.
        let s = sparse_fit(&c, &c.x, c.n, lik, &xtr);
        assert_same(&s, &d, 1e-8, "Z = X");
        let x = rows(&c.x, c.n, c.d);
        let mut piv = vec![0usize; c.n];
        let mut w = vec![0.0; inducing_workspace_len(c.n, c.n)];
        let r = choose_inducing(&Kernel::Rbf { gamma: c.theta[1].exp() }, &x, &mut piv, &mut w).unwrap();
        assert_eq!(r, c.n);
        let z: Vec<f64> = piv.iter().flat_map(|&i| c.x[i * c.d..(i + 1) * c.d].to_vec()).collect();
        let s = sparse_fit(&c, &z, c.n, lik, &xtr);
        assert_same(&s, &d, 1e-8, "Z = pivoted X");
    }
}

#[test]
fn every_item_inducing_is_the_dense_ep_over_several_blocks() {
    let c = generated_case(300, 600, 0x2545_f491_4f6c_dd1d);
    assert!(c.n > PAIR_BLOCK && c.pairs.len() > 2 * PAIR_BLOCK);
    let xt = new_points(c.d);
    let xtr = rows(&xt, 5, c.d);
    for lik in [Likelihood::Probit { sigma: 0.7 }, Likelihood::Gaussian { noise: 0.3 }] {
        let d = dense(&c, lik, &xtr);
        let s = sparse_fit(&c, &c.x, c.n, lik, &xtr);
        assert_same(&s, &d, 1e-8, "generated");
    }
}

/// Central differences of the converged sparse evidence in each of
/// `(log a, log γ, log σ)`, with `m < n` inducing inputs chosen by pivoted
/// Cholesky.
#[test]
fn sparse_gradient_is_central_differences() {
    let c = generated_case(120, 300, 0x9e37_79b9_7f4a_7c15);
    for (lik, m) in [(Likelihood::Probit { sigma: 1.0 }, 15), (Likelihood::Gaussian { noise: 0.5 }, 25)] {
        let x = rows(&c.x, c.n, c.d);
        let mut piv = vec![0usize; m];
        let mut w = vec![0.0; inducing_workspace_len(c.n, m)];
        let r = choose_inducing(&Kernel::Rbf { gamma: c.theta[1].exp() }, &x, &mut piv, &mut w).unwrap();
        assert_eq!(r, m);
        let z: Vec<f64> = piv.iter().flat_map(|&i| c.x[i * c.d..(i + 1) * c.d].to_vec()).collect();
        let prior = SparsePrior { x, z: rows(&z, m, c.d) };
        let problem = SparseProblem { prior: &prior, pairs: &c.pairs, lik, ep: tight() };
        let mut bw = vec![0.0; Portable::workspace_len(m)];
        let mut be = Portable::new(&mut bw);
        let mut storage = vec![0.0; SparsePosterior::storage_len(c.n, m, c.pairs.len())];
        let mut post = SparsePosterior::new(c.n, m, c.pairs.len(), &mut storage).unwrap();
        let mut work = vec![0.0; sparse::evidence_workspace_len(&prior)];
        let mut grad = vec![0.0; 3];
        let mut scratch = vec![0.0; 3];
        sparse::evidence_gradient(&mut be, &problem, &c.theta, &mut post, &mut grad, &mut work).unwrap();
        // A warm start at the fixed point costs one round.
        sparse::evidence_gradient(&mut be, &problem, &c.theta, &mut post, &mut scratch, &mut work).unwrap();
        assert_eq!(post.iterations(), 1);
        let h = 1e-5;
        for i in 0..3 {
            let mut at = |t: f64| {
                let mut th = c.theta;
                th[i] += t;
                sparse::evidence_gradient(&mut be, &problem, &th, &mut post, &mut scratch, &mut work).unwrap()
            };
            let fd = (at(h) - at(-h)) / (2.0 * h);
            assert!(
                (grad[i] - fd).abs() <= 1e-5 * fd.abs().max(1e-2),
                "{lik:?} m = {m}: gradient[{i}] = {} vs central difference {fd}",
                grad[i]
            );
        }
    }
}

/// Fits with the given inducing rows; `Ok` only with a finite posterior.
fn fit_hostile(x: &[f64], n: usize, d: usize, z: &[f64], m: usize, pairs: &[Pair]) -> Result<(), LearnError> {
    let prior = SparsePrior { x: rows(x, n, d), z: rows(z, m, d) };
    let problem =
        SparseProblem { prior: &prior, pairs, lik: Likelihood::Probit { sigma: 0.7 }, ep: EpParams::default() };
    let mut bw = vec![0.0; Portable::workspace_len(m)];
    let mut be = Portable::new(&mut bw);
    let mut storage = vec![0.0; SparsePosterior::storage_len(n, m, pairs.len())];
    let mut post = SparsePosterior::new(n, m, pairs.len(), &mut storage)?;
    let mut work = vec![0.0; sparse::evidence_workspace_len(&prior)];
    let mut grad = vec![0.0; 3];
    let lz = sparse::evidence_gradient(&mut be, &problem, &[0.0, 0.0, 0.7f64.ln()], &mut post, &mut grad, &mut work)?;
    let (mut mean, mut var) = (vec![0.0; n], vec![0.0; n]);
    post.item_marginals(&mut be, &mut mean, &mut var, &mut work)?;
    assert!(lz.is_finite() && grad.iter().all(|g| g.is_finite()));
    assert!(mean.iter().all(|v| v.is_finite()) && var.iter().all(|v| v.is_finite() && *v >= 0.0));
    assert!(post.alpha().iter().all(|v| v.is_finite()));
    Ok(())
}

#[test]
fn hostile_input_gives_a_posterior_or_a_clear_error() {
    // Items 0..5, with 5..10 exact duplicates of them.
    let base = [0.0, 0.0, 1.0, 0.5, -0.3, 2.0, 0.7, -1.0, 1.5, 1.5];
    let x: Vec<f64> = base.iter().chain(base.iter()).copied().collect();
    let (n, d) = (10, 2);
    let mut pairs = Vec::new();
    for _ in 0..20 {
        // Contradictory and repeated: 0 ≻ 5 and 5 ≻ 0 (the same point), 1 ≻ 2 and 2 ≻ 1.
        pairs.push(Pair { winner: 0, loser: 5, magnitude: 1.0 });
        pairs.push(Pair { winner: 5, loser: 0, magnitude: 1.0 });
        pairs.push(Pair { winner: 1, loser: 2, magnitude: 1.0 });
        pairs.push(Pair { winner: 2, loser: 1, magnitude: 1.0 });
        pairs.push(Pair { winner: 3, loser: 4, magnitude: 1.0 });
    }
    // Pivoted Cholesky stops at the 5 distinct items.
    let mut piv = vec![0usize; n];
    let mut w = vec![0.0; inducing_workspace_len(n, n)];
    let r = choose_inducing(&Kernel::Rbf { gamma: 1.0 }, &rows(&x, n, d), &mut piv, &mut w).unwrap();
    assert_eq!(r, 5);
    let z: Vec<f64> = piv[..r].iter().flat_map(|&i| x[i * d..(i + 1) * d].to_vec()).collect();
    fit_hostile(&x, n, d, &z, r, &pairs).unwrap();
    // Every row inducing, duplicates included: K_mm singular, jitter.
    fit_hostile(&x, n, d, &x, n, &pairs).unwrap();
    // More inducing rows than items (each twice): still a posterior.
    let zz: Vec<f64> = x.iter().chain(x.iter()).copied().collect();
    fit_hostile(&x, n, d, &zz, 2 * n, &pairs).unwrap();
    // One inducing point.
    fit_hostile(&x, n, d, &x[..d], 1, &pairs).unwrap();
    // choose_inducing refuses m > n and m = 0 by name.
    let mut piv = vec![0usize; n + 1];
    let mut w = vec![0.0; inducing_workspace_len(n, n + 1)];
    let e = choose_inducing(&Kernel::Rbf { gamma: 1.0 }, &rows(&x, n, d), &mut piv, &mut w).unwrap_err();
    assert_eq!(e, LearnError::Numerics(LinalgError::DimensionMismatch));
    let e = choose_inducing(&Kernel::Rbf { gamma: 1.0 }, &rows(&x, n, d), &mut [], &mut w).unwrap_err();
    assert_eq!(e, LearnError::Numerics(LinalgError::DimensionMismatch));
    // A pair out of range, a self-pair: BadGraph.
    let bad = [Pair { winner: 0, loser: n, magnitude: 1.0 }];
    assert_eq!(fit_hostile(&x, n, d, &z, r, &bad), Err(LearnError::BadGraph));
    let bad = [Pair { winner: 3, loser: 3, magnitude: 1.0 }];
    assert_eq!(fit_hostile(&x, n, d, &z, r, &bad), Err(LearnError::BadGraph));
    // Inducing rows of another dimension.
    let prior = SparsePrior { x: rows(&x, n, d), z: rows(&x[..3], 1, 3) };
    let mut storage = vec![0.0; SparsePosterior::storage_len(n, 1, pairs.len())];
    let mut post = SparsePosterior::new(n, 1, pairs.len(), &mut storage).unwrap();
    let mut bw = vec![0.0; Portable::workspace_len(1)];
    let mut be = Portable::new(&mut bw);
    let mut work = vec![0.0; 10_000];
    let problem = SparseProblem { prior: &prior, pairs: &pairs, lik: Likelihood::Probit { sigma: 1.0 }, ep: tight() };
    let e = post.refit(&mut be, &problem, &Kernel::Rbf { gamma: 1.0 }, 1.0, &mut work).unwrap_err();
    assert_eq!(e, LearnError::Numerics(LinalgError::DimensionMismatch));
}
