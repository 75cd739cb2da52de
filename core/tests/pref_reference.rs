//! Preference GPs against an independent dense numpy implementation
//! (`fixtures/pref/gen_pref.py`; regenerate with
//! `python3 gen_pref.py > pref.txt`): sequential undamped EP from R&W
//! Algorithm 3.5 with the sites on `f_w − f_l`, its evidence in R&W eq.
//! 3.65's `m`-space form, predictions through `K⁻¹`, the score-difference
//! GP in its `m`-space closed form, relation kernels by `numpy.linalg.inv`,
//! and evidence gradients by central finite differences of numpy's own EP.
//!
//! Tolerances: EP (parallel, damped, here to `tol = 1e-13`) and numpy's
//! EP (sequential, to 1e-14) reach the same fixed point by different
//! paths; the fixtures are well conditioned (`κ(K) < 10⁶`), so the posterior
//! and the evidence agree to ~1e-10 and 1e-6 is asserted (four orders of
//! magnitude of room; a wrong formula or another fixed point is far off). The closed forms are asserted to 1e-9. The numpy gradient is a
//! finite difference with step 1e-5 (truncation ~1e-10, EP noise ~1e-9):
//! 1e-5 relative.

use ranklet_core::backend::Portable;
use ranklet_core::graph::Pair;
use ranklet_core::kernel::{kernel_matrix, kernel_matrix_workspace_len, Kernel};
use ranklet_core::learn::pref::hyper::{evidence_gradient, evidence_workspace_len, HyperProblem};
use ranklet_core::learn::pref::xpgp::{relation_kernel, theta_len, Relation, XpgpPrior};
use ranklet_core::learn::pref::{
    fit_workspace_len, predict_workspace_len, prob_latent, EpParams, Likelihood, NewPair, PrefPosterior,
};
use ranklet_core::linalg::Rows;
use ranklet_core::{MatMut, MatRef};

struct Fixture(Vec<(String, usize, usize, Vec<f64>)>);

impl Fixture {
    fn load() -> Self {
        let text = include_str!("fixtures/pref/pref.txt");
        let mut lines = text.lines().filter(|l| !l.starts_with('#'));
        let mut out = Vec::new();
        while let Some(head) = lines.next() {
            let mut h = head.split_whitespace();
            let name = h.next().unwrap().to_string();
            let r: usize = h.next().unwrap().parse().unwrap();
            let c: usize = h.next().unwrap().parse().unwrap();
            let vals: Vec<f64> = lines.next().unwrap().split_whitespace().map(|v| v.parse().unwrap()).collect();
            assert_eq!(vals.len(), r * c, "{name}");
            out.push((name, r, c, vals));
        }
        Fixture(out)
    }
    fn get(&self, name: &str) -> (usize, usize, &[f64]) {
        let e = self.0.iter().find(|e| e.0 == name).unwrap_or_else(|| panic!("no {name}"));
        (e.1, e.2, &e.3)
    }
    fn vec(&self, name: &str) -> Vec<f64> {
        self.get(name).2.to_vec()
    }
    fn pairs(&self, name: &str, mags: Option<&[f64]>) -> Vec<Pair> {
        let (r, _, v) = self.get(name);
        (0..r)
            .map(|s| Pair {
                winner: v[2 * s] as usize,
                loser: v[2 * s + 1] as usize,
                magnitude: mags.map_or(1.0, |m| m[s]),
            })
            .collect()
    }
}

/// `|got − want| ≤ rel·max|want|`, elementwise.
fn assert_close(got: &[f64], want: &[f64], rel: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= rel * scale, "{what}[{i}]: {g} vs {w} (scale {scale})");
    }
}

fn tight() -> EpParams {
    EpParams::new(0.5, 1e-13, 5000)
}

fn backend_work(n: usize) -> Vec<f64> {
    vec![0.0; Portable::workspace_len(n)]
}

/// Fits and returns (mean, Σ, log Z).
fn fit(k: &[f64], n: usize, pairs: &[Pair], lik: Likelihood) -> (Vec<f64>, Vec<f64>, f64) {
    let mut bw = backend_work(n);
    let mut be = Portable::new(&mut bw);
    let mut storage = vec![0.0; PrefPosterior::storage_len(n, pairs.len())];
    let mut work = vec![0.0; fit_workspace_len(n)];
    let post = PrefPosterior::fit(
        &mut be,
        MatRef::from_col_major(k, n, n).unwrap(),
        pairs,
        lik,
        &tight(),
        &mut storage,
        &mut work,
    )
    .unwrap();
    (post.mean().to_vec(), post.cov().to_vec(), post.log_evidence())
}

#[test]
fn probit_ep_matches_numpy_and_predicts_like_000_section_5() {
    let fx = Fixture::load();
    let (n, _, _) = fx.get("p1_K");
    let k = fx.vec("p1_K"); // symmetric: row-major = column-major
    let pairs = fx.pairs("p1_pairs", None);
    let hyp = fx.vec("p1_hyp");
    let lik = Likelihood::Probit { sigma: hyp[2] };
    // The kernel from the attributes equals numpy's.
    let (_, d, x) = fx.get("p1_X");
    let xr = Rows::Dense(MatRef::from_row_major(x, n, d).unwrap());
    let mut kk = vec![0.0; n * n];
    let mut bw = backend_work(n);
    let mut be = Portable::new(&mut bw);
    let mut kw = vec![0.0; kernel_matrix_workspace_len(&xr, &xr)];
    kernel_matrix(
        &mut be,
        &Kernel::Rbf { gamma: hyp[1] },
        &xr,
        &xr,
        MatMut::from_col_major(&mut kk, n, n).unwrap(),
        &mut kw,
    )
    .unwrap();
    kk.iter_mut().for_each(|v| *v *= hyp[0]);
    assert_close(&kk, &k, 1e-12, "K");

    let mut storage = vec![0.0; PrefPosterior::storage_len(n, pairs.len())];
    let mut work = vec![0.0; fit_workspace_len(n)];
    let post = PrefPosterior::fit(
        &mut be,
        MatRef::from_col_major(&k, n, n).unwrap(),
        &pairs,
        lik,
        &tight(),
        &mut storage,
        &mut work,
    )
    .unwrap();
    assert_eq!(post.jitter(), 0.0);
    assert_close(post.mean(), &fx.vec("p1_mu"), 1e-6, "mean");
    assert_close(post.cov(), &fx.vec("p1_Sigma"), 1e-6, "Sigma");
    assert_close(&[post.log_evidence()], &fx.vec("p1_logZ"), 1e-6, "log Z");
    assert_close(post.site_precision(), &fx.vec("p1_tau"), 1e-6, "tau");
    assert_close(post.site_shift(), &fx.vec("p1_nu"), 1e-6, "nu");

    // Predictions at three new points: means, variances and the pair
    // difference of points 0 and 1 (000 eq. 11's R).
    let (t, _, xt) = fx.get("p1_Xt");
    let xtr = Rows::Dense(MatRef::from_row_major(xt, t, d).unwrap());
    let mut ks = vec![0.0; n * t];
    let mut kw = vec![0.0; kernel_matrix_workspace_len(&xr, &xtr)];
    kernel_matrix(
        &mut be,
        &Kernel::Rbf { gamma: hyp[1] },
        &xr,
        &xtr,
        MatMut::from_col_major(&mut ks, n, t).unwrap(),
        &mut kw,
    )
    .unwrap();
    ks.iter_mut().for_each(|v| *v *= hyp[0]);
    let kdiag = vec![hyp[0]; t];
    let (mut pm, mut pv) = (vec![0.0; t], vec![0.0; t]);
    let mut pw = vec![0.0; predict_workspace_len(n)];
    post.predict(&pairs, MatRef::from_col_major(&ks, n, t).unwrap(), &kdiag, &mut pm, &mut pv, &mut pw).unwrap();
    let want_cov = fx.vec("p1_pred_cov");
    assert_close(&pm, &fx.vec("p1_pred_mean"), 1e-6, "predictive mean");
    let want_var: Vec<f64> = (0..t).map(|i| want_cov[i * t + i]).collect();
    assert_close(&pv, &want_var, 1e-6, "predictive variance");
    let k12 = hyp[0] * (-hyp[1] * ((xt[0] - xt[2]).powi(2) + (xt[1] - xt[3]).powi(2))).exp();
    let new = NewPair { k1: &ks[0..n], k2: &ks[n..2 * n], k11: hyp[0], k22: hyp[0], k12 };
    let (dm, dv) = post.predict_pair(&pairs, &new, &mut pw).unwrap();
    let want_dm = fx.vec("p1_pred_mean")[0] - fx.vec("p1_pred_mean")[1];
    let want_dv = want_cov[0] + want_cov[t + 1] - 2.0 * want_cov[1];
    assert_close(&[dm, dv], &[want_dm, want_dv], 1e-6, "pair difference");
    let p = prob_latent(dm, dv);
    assert!(p > 0.0 && p < 1.0);
}

#[test]
fn repeated_contradictory_preferences_match_numpy() {
    let fx = Fixture::load();
    let (n, _, k) = fx.get("p2_K");
    let pairs = fx.pairs("p2_pairs", None);
    let lik = Likelihood::Probit { sigma: fx.vec("p2_sigma")[0] };
    let (mu, sigma, logz) = fit(k, n, &pairs, lik);
    assert_close(&mu, &fx.vec("p2_mu"), 1e-6, "mean");
    assert_close(&sigma, &fx.vec("p2_Sigma"), 1e-6, "Sigma");
    assert_close(&[logz], &fx.vec("p2_logZ"), 1e-6, "log Z");
}

#[test]
fn score_difference_gp_is_its_closed_form() {
    let fx = Fixture::load();
    let (n, _, k) = fx.get("d_K");
    let y = fx.vec("d_y");
    let pairs = fx.pairs("d_pairs", Some(&y));
    let noise = fx.vec("d_noise")[0];
    let lik = Likelihood::Gaussian { noise };
    let mut bw = backend_work(n);
    let mut be = Portable::new(&mut bw);
    let mut storage = vec![0.0; PrefPosterior::storage_len(n, pairs.len())];
    let mut work = vec![0.0; fit_workspace_len(n)];
    let kv = MatRef::from_col_major(k, n, n).unwrap();
    let post = PrefPosterior::fit(&mut be, kv, &pairs, lik, &EpParams::default(), &mut storage, &mut work).unwrap();
    assert_eq!(post.iterations(), 1);
    assert_close(post.mean(), &fx.vec("d_mu"), 1e-9, "mean");
    assert_close(post.cov(), &fx.vec("d_Sigma"), 1e-9, "Sigma");
    assert_close(&[post.log_evidence()], &fx.vec("d_logZ"), 1e-9, "log Z");
    // Gradients: d/dlog a = ½⟨Q, K⟩ (K = a·K0), d/dlog noise.
    let mut q = vec![0.0; n * n];
    let mut tmp = vec![0.0; 4 * n];
    post.evidence_grad_matrix(&pairs, &mut q, &mut tmp).unwrap();
    let ga = 0.5 * q.iter().zip(k.iter()).map(|(a, b)| a * b).sum::<f64>();
    let gs = post.likelihood_grad(&pairs, kv, &mut tmp).unwrap();
    assert_close(&[ga, gs], &fx.vec("d_grad"), 1e-9, "gradient");
}

/// Attributes (row-major), `n`, the edge relation and the memberships.
type XpgpInputs = (Vec<f64>, usize, Vec<(usize, usize, f64)>, Vec<(usize, usize)>);

fn xpgp_inputs(fx: &Fixture) -> XpgpInputs {
    let (n, d, x) = fx.get("x_X");
    assert_eq!(d, 2);
    let (r, _, e) = fx.get("x_edges");
    let edges = (0..r).map(|s| (e[3 * s] as usize, e[3 * s + 1] as usize, e[3 * s + 2])).collect();
    let (r, _, g) = fx.get("x_members");
    let members = (0..r).map(|s| (g[2 * s] as usize, g[2 * s + 1] as usize)).collect();
    (x.to_vec(), n, edges, members)
}

#[test]
fn relation_kernels_and_bipartite_projection_match_numpy() {
    let fx = Fixture::load();
    let (_, n, edges, members) = xpgp_inputs(&fx);
    let theta = fx.vec("x_theta");
    let mut bw = backend_work(n);
    let mut be = Portable::new(&mut bw);
    let mut out = vec![0.0; n * n];
    let mut w = vec![0.0; n * n];
    relation_kernel(&mut be, n, &Relation::Edges(&edges), theta[4].exp(), &mut out, &mut w).unwrap();
    assert_close(&out, &fx.vec("x_Krel1"), 1e-10, "edge relation kernel");
    relation_kernel(&mut be, n, &Relation::Groups(&members), theta[6].exp(), &mut out, &mut w).unwrap();
    assert_close(&out, &fx.vec("x_Krel2"), 1e-10, "group relation kernel");
}

#[test]
fn xpgp_posterior_evidence_and_gradient_match_numpy() {
    let fx = Fixture::load();
    let (x, n, edges, members) = xpgp_inputs(&fx);
    let theta = fx.vec("x_theta");
    let pairs = fx.pairs("x_pairs", None);
    let rels = [Relation::Edges(&edges), Relation::Groups(&members)];
    let prior = XpgpPrior { n, x: Some(Rows::Dense(MatRef::from_row_major(&x, n, 2).unwrap())), relations: &rels };
    assert_eq!(theta.len(), theta_len(2));
    let mut bw = backend_work(n);
    let mut be = Portable::new(&mut bw);
    // K from the builder equals numpy's.
    let mut parts = vec![0.0; prior.parts_len()];
    let mut w = vec![0.0; prior.workspace_len()];
    prior.build_parts(&mut be, &theta, &mut parts, &mut w).unwrap();
    let mut k = vec![0.0; n * n];
    prior.combine(&theta, &parts, &mut k).unwrap();
    assert_close(&k, &fx.vec("x_K"), 1e-10, "XPGP K");

    let mut storage = vec![0.0; PrefPosterior::storage_len(n, pairs.len())];
    let mut post = PrefPosterior::new(n, pairs.len(), &mut storage).unwrap();
    let mut grad = vec![0.0; theta.len()];
    let mut work = vec![0.0; evidence_workspace_len(&prior)];
    let lz = evidence_gradient(
        &mut be,
        &HyperProblem { prior: &prior, pairs: &pairs, lik: Likelihood::Probit { sigma: 1.0 }, ep: tight() },
        &theta,
        &mut post,
        &mut grad,
        &mut work,
    )
    .unwrap();
    assert_close(post.mean(), &fx.vec("x_mu"), 1e-6, "mean");
    assert_close(post.cov(), &fx.vec("x_Sigma"), 1e-6, "Sigma");
    assert_close(&[lz], &fx.vec("x_logZ"), 1e-6, "log Z");
    let fd = fx.vec("x_grad_fd");
    for (i, (g, f)) in grad.iter().zip(fd.iter()).enumerate() {
        assert!(
            (g - f).abs() <= 1e-5 * f.abs().max(1e-3),
            "gradient[{i}]: analytic {g} vs numpy finite difference {f}"
        );
    }
}

/// `n = 300` items: the round's triangular products run over three row and
/// column blocks (128 + 128 + 44), which the fixtures above (`n < 128`)
/// never reach. Reference: the `m`-space forms computed here with core's
/// plain Cholesky, independent of the `n`-space round. For the Gaussian
/// likelihood they are the exact posterior (`A = DKDᵀ + s²I`,
/// `μ = KDᵀA⁻¹y`, `Σ = K − KDᵀA⁻¹DK`, `log Z = log N(y | 0, A)`); for the
/// probit likelihood the converged sites `τ̃ > 0` define the same Gaussian
/// with `s²I` replaced by `T̃⁻¹` and `y` by `ν̃/τ̃`, which must give EP's
/// own mean and covariance. Tolerance: `κ(K) < 10³` here and `m = 420`,
/// so both sides carry ~1e-12 of rounding; 1e-9 is asserted.
#[test]
fn rounds_over_several_blocks_match_the_m_space_forms() {
    use ranklet_core::linalg::chol::{cholesky_in_place, cholesky_solve_in_place};
    let (n, m) = (300usize, 420usize);
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let x: Vec<f64> = (0..n * 3).map(|_| rnd()).collect();
    let mut k = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            let d2: f64 = (0..3).map(|c| (x[i * 3 + c] - x[j * 3 + c]).powi(2)).sum();
            k[j * n + i] = (-30.0 * d2).exp() + if i == j { 0.05 } else { 0.0 };
        }
    }
    let mut pairs = Vec::new();
    while pairs.len() < m {
        let (a, b) = ((rnd() * n as f64) as usize, (rnd() * n as f64) as usize);
        if a != b {
            let f = |i: usize| (6.0 * x[i * 3]).sin() + x[i * 3 + 1];
            let (w, l) = if f(a) >= f(b) { (a, b) } else { (b, a) };
            pairs.push(Pair { winner: w, loser: l, magnitude: f(w) - f(l) + 0.1 * (rnd() - 0.5) });
        }
    }
    // m-space reference from per-pair noise variances `s2[s]` and targets `y[s]`.
    let reference = |s2: &[f64], y: &[f64]| -> (Vec<f64>, Vec<f64>, f64) {
        // KDᵀ (n × m), A = D(KDᵀ) + diag(s2) (m × m).
        let mut kd = vec![0.0; n * m];
        for (s, p) in pairs.iter().enumerate() {
            for i in 0..n {
                kd[s * n + i] = k[p.winner * n + i] - k[p.loser * n + i];
            }
        }
        let mut a = vec![0.0; m * m];
        for (t, q) in pairs.iter().enumerate() {
            for s in 0..m {
                a[t * m + s] = kd[t * n + pairs[s].winner] - kd[t * n + pairs[s].loser];
            }
            a[t * m + t] += s2[t];
            let _ = q;
        }
        cholesky_in_place(MatMut::from_col_major(&mut a, m, m).unwrap()).unwrap();
        let log_det: f64 = (0..m).map(|i| 2.0 * a[i * m + i].ln()).sum();
        let l = MatRef::from_col_major(&a, m, m).unwrap();
        let mut ay = y.to_vec();
        cholesky_solve_in_place(l, MatMut::from_col_major(&mut ay, m, 1).unwrap()).unwrap();
        let mu: Vec<f64> = (0..n).map(|i| (0..m).map(|s| kd[s * n + i] * ay[s]).sum()).collect();
        // Σ = K − (KDᵀ)A⁻¹(KDᵀ)ᵀ.
        let mut akd = vec![0.0; m * n];
        for i in 0..n {
            for s in 0..m {
                akd[i * m + s] = kd[s * n + i];
            }
        }
        cholesky_solve_in_place(l, MatMut::from_col_major(&mut akd, m, n).unwrap()).unwrap();
        let mut sigma = k.clone();
        for j in 0..n {
            for i in 0..n {
                sigma[j * n + i] -= (0..m).map(|s| kd[s * n + i] * akd[j * m + s]).sum::<f64>();
            }
        }
        let quad: f64 = y.iter().zip(&ay).map(|(a, b)| a * b).sum();
        let log_z = -0.5 * quad - 0.5 * log_det - 0.5 * m as f64 * (2.0 * core::f64::consts::PI).ln();
        (mu, sigma, log_z)
    };
    let fit_post = |lik: Likelihood| -> (Vec<f64>, Vec<f64>, f64, Vec<f64>, Vec<f64>) {
        let mut bw = backend_work(n);
        let mut be = Portable::new(&mut bw);
        let mut storage = vec![0.0; PrefPosterior::storage_len(n, m)];
        let mut work = vec![0.0; fit_workspace_len(n)];
        let post = PrefPosterior::fit(
            &mut be,
            MatRef::from_col_major(&k, n, n).unwrap(),
            &pairs,
            lik,
            &EpParams::new(0.8, 1e-12, 5000),
            &mut storage,
            &mut work,
        )
        .unwrap();
        (
            post.mean().to_vec(),
            post.cov().to_vec(),
            post.log_evidence(),
            post.site_precision().to_vec(),
            post.site_shift().to_vec(),
        )
    };
    let noise = 0.3;
    let (mu, sigma, log_z, _, _) = fit_post(Likelihood::Gaussian { noise });
    let y: Vec<f64> = pairs.iter().map(|p| p.magnitude).collect();
    let (rmu, rsigma, rlog_z) = reference(&vec![noise * noise; m], &y);
    assert_close(&mu, &rmu, 1e-9, "Gaussian mean");
    assert_close(&sigma, &rsigma, 1e-9, "Gaussian Σ");
    assert_close(&[log_z], &[rlog_z], 1e-9, "Gaussian log Z");

    let (mu, sigma, _, tau, nu) = fit_post(Likelihood::Probit { sigma: 0.5 });
    assert!(tau.iter().all(|&t| t > 0.0), "every probit site is proper here");
    let s2: Vec<f64> = tau.iter().map(|t| 1.0 / t).collect();
    let yt: Vec<f64> = nu.iter().zip(&tau).map(|(v, t)| v / t).collect();
    let (rmu, rsigma, _) = reference(&s2, &yt);
    assert_close(&mu, &rmu, 1e-9, "probit mean from its sites");
    assert_close(&sigma, &rsigma, 1e-9, "probit Σ from its sites");
}

/// The learners' starting point: `θ` inside its box; γ fixed where given,
/// `a` and γ fixed without attributes, the probit σ fixed at 1/√2, the
/// Gaussian noise free within [10⁻⁴, 10]·rms of the differences (rms by
/// hand here).
#[test]
fn start_of_the_evidence_search() {
    use ranklet_core::learn::pref::hyper::{start, PROBIT_SIGMA};
    use ranklet_core::learn::pref::xpgp::THETA_NOISE;
    let pairs = [
        Pair { winner: 0, loser: 1, magnitude: 0.5 },
        Pair { winner: 2, loser: 1, magnitude: -1.5 },
        Pair { winner: 0, loser: 2, magnitude: 2.0 },
    ];
    let p = theta_len(1);
    let (mut th, mut lo, mut hi) = (vec![9.0; p], vec![0.0; p], vec![0.0; p]);
    let lik = start(false, None, 4, &pairs, &mut th, &mut lo, &mut hi).unwrap();
    assert_eq!(lik, Likelihood::Probit { sigma: PROBIT_SIGMA });
    assert!((th[1] - 0.25f64.ln()).abs() < 1e-15);
    assert_eq!((lo[THETA_NOISE], hi[THETA_NOISE]), (th[THETA_NOISE], th[THETA_NOISE]));
    assert!((th[THETA_NOISE] - PROBIT_SIGMA.ln()).abs() < 1e-15);
    assert!(th.iter().zip(lo.iter().zip(&hi)).all(|(t, (l, h))| l <= t && t <= h));
    assert!(lo[0] < hi[0] && lo[1] < hi[1] && lo[3] < hi[3] && lo[4] < hi[4]);

    start(false, Some(0.5), 4, &pairs, &mut th, &mut lo, &mut hi).unwrap();
    assert_eq!((lo[1], hi[1]), (0.5f64.ln(), 0.5f64.ln()));
    start(false, None, 0, &pairs, &mut th, &mut lo, &mut hi).unwrap();
    assert_eq!((lo[0], hi[0], lo[1], hi[1]), (th[0], th[0], th[1], th[1]));

    let lik = start(true, None, 4, &pairs, &mut th, &mut lo, &mut hi).unwrap();
    assert!(matches!(lik, Likelihood::Gaussian { .. }));
    let rms = ((0.25 + 2.25 + 4.0) / 3.0f64).sqrt();
    assert!((th[THETA_NOISE] - (0.1 * rms).ln()).abs() < 1e-14);
    assert!((lo[THETA_NOISE] - (1e-4 * rms).ln()).abs() < 1e-14);
    assert!((hi[THETA_NOISE] - (10.0 * rms).ln()).abs() < 1e-14);
    assert!(start(false, None, 4, &pairs, &mut th[..2], &mut lo[..2], &mut hi[..2]).is_err());
}
