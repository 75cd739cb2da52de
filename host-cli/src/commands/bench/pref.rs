//! `ranklet bench pref …`: time the probit preference GP (core's
//! [`learn::pref`](ranklet_core::learn::pref)) at fixed hyperparameters and
//! print one JSON line:
//!
//! ```text
//! ranklet bench pref --n 1000 --m 5000
//! {"n":1000,"m":5000,"d":5,"a":1,"gamma":2,"sigma":…,"ep_rounds":…,"log_z":…,"kernel_s":…,"ep_s":…,"eval_s":…,"grad_s":…,…}
//! ```
//!
//! **What is timed** (median of `--repeat` runs each):
//! - `kernel_s`: the `n × n` RBF kernel matrix `a·exp(−γ‖x − x'‖²)`;
//! - `ep_s`: EP from zero sites to convergence
//!   ([`PrefPosterior::fit`]: the reversed Cholesky `K = UUᵀ`, then per
//!   round the lower triangle of `Uᵀ(WU)` by blocks, a Cholesky and a
//!   triangular solve of a triangular right-hand side; at the end
//!   `Σ = CᵀC` by blocks);
//! - `eval_s`: one evidence + gradient evaluation as the hyperparameter
//!   search does it ([`hyper::evidence_gradient`] warm-started from the
//!   converged sites): the kernel parts, EP (which confirms convergence in
//!   one round), the matrix `Q`, the noise derivative and `⟨Q, ∂K/∂θ⟩` for
//!   `log a`, `log γ`;
//! - `grad_s`: the gradient part of it alone (`Q`, the noise derivative,
//!   `⟨Q, ∂K/∂θ⟩`), at the converged posterior.
//!
//! `--fit-hyper` adds `fit_s`: one whole [`hyper::fit_hyper`] from
//! `(a, γ)` with `σ` fixed (timed once), with its evaluations and the
//! final `θ`.
//!
//! **Data** (`--n`, `--m`, `--d`, `--seed`): `n` items with `d` features
//! uniform in [0, 1) (splitmix64 seeded with `S`, item by item), a latent
//! `f(x) = Σ_k sin(2π·x_k)`; then `m` pairs: `i` uniform, `j` uniform
//! among the others, the winner the larger of `f + ε`, `ε` a sum of three
//! uniforms on [−½, ½] per item and pair. `--write-data DIR` writes
//! `x.f64` (`n × d` row-major, little-endian), `pairs.i32` (`m` pairs
//! winner, loser) and `meta.txt` and exits; `bench/pref_numpy.py` reads
//! them.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use ranklet::hostbackend::{BackendChoice, HostBackend};
use ranklet::rng::SplitMix64;
use ranklet_core::graph::Pair;
use ranklet_core::learn::pref::hyper::{
    default_bounds, evidence_gradient, evidence_workspace_len, fit_hyper, minimize_workspace_len, HyperProblem,
    OptParams, Search,
};
use ranklet_core::learn::pref::xpgp::{XpgpPrior, THETA_NOISE};
use ranklet_core::learn::pref::{fit_workspace_len, EpParams, Likelihood, PrefPosterior};
use ranklet_core::linalg::rows::Rows;
use ranklet_core::MatRef;

use super::timed::Timed;
use crate::cli_values::{self, lib_enum};

/// Arguments of `ranklet bench pref`.
#[derive(Args, Debug)]
pub struct PrefBenchArgs {
    /// Items.
    #[arg(long, default_value_t = 1000)]
    pub n: usize,
    /// Preferences.
    #[arg(long, default_value_t = 5000)]
    pub m: usize,
    /// Features per item.
    #[arg(long, default_value_t = 5)]
    pub d: usize,
    /// Kernel amplitude a.
    #[arg(long, default_value_t = 1.0)]
    pub a: f64,
    /// RBF width γ, exp(−γ‖x − x'‖²).
    #[arg(long, default_value_t = 2.0)]
    pub gamma: f64,
    /// Probit noise σ (likelihood Φ((f_w − f_l)/(√2σ))).
    #[arg(long, default_value_t = std::f64::consts::FRAC_1_SQRT_2)]
    pub sigma: f64,
    /// EP initial damping (adaptive: see `learn::pref`).
    #[arg(long, default_value_t = 0.8)]
    pub damping: f64,
    /// EP tolerance.
    #[arg(long, default_value_t = 1e-8)]
    pub tol: f64,
    /// Timed repetitions (median reported).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Also time one whole hyperparameter fit (a, γ; σ fixed).
    #[arg(long)]
    pub fit_hyper: bool,
    /// Seed of the data.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Backend.
    #[arg(long, value_parser = lib_enum::<cli_values::Backend>(), default_value = "faer")]
    pub backend: BackendChoice,
    /// Write the generated problem to this directory and exit (no timing).
    #[arg(long)]
    pub write_data: Option<PathBuf>,
    /// Instead of the usual timings, time every backend call of EP (and the
    /// core code between calls) over `--repeat` fits and print the
    /// minimum per fit of each (see `commands::bench::timed`).
    #[arg(long)]
    pub breakdown: bool,
}

/// The benchmark problem (see the module docs): features row-major, pairs.
pub fn generate(n: usize, m: usize, d: usize, seed: u64) -> (Vec<f64>, Vec<Pair>) {
    let mut rng = SplitMix64(seed);
    let x: Vec<f64> = (0..n * d).map(|_| rng.next_f64()).collect();
    let f: Vec<f64> = (0..n).map(|i| (0..d).map(|k| (2.0 * std::f64::consts::PI * x[i * d + k]).sin()).sum()).collect();
    let noise = |rng: &mut SplitMix64| rng.next_f64() + rng.next_f64() + rng.next_f64() - 1.5;
    let mut pairs = Vec::with_capacity(m);
    for _ in 0..m {
        let i = (rng.next_u64() % n as u64) as usize;
        let j = (i + 1 + (rng.next_u64() % (n as u64 - 1)) as usize) % n;
        let (fi, fj) = (f[i] + noise(&mut rng), f[j] + noise(&mut rng));
        let (w, l) = if fi >= fj { (i, j) } else { (j, i) };
        pairs.push(Pair { winner: w, loser: l, magnitude: 1.0 });
    }
    (x, pairs)
}

fn write_data(dir: &Path, a: &PrefBenchArgs, x: &[f64], pairs: &[Pair]) -> Result<(), String> {
    let io = |e: std::io::Error| format!("{}: {e}", dir.display());
    fs::create_dir_all(dir).map_err(io)?;
    fs::write(dir.join("x.f64"), x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).map_err(io)?;
    let p: Vec<u8> = pairs
        .iter()
        .flat_map(|p| [(p.winner as i32).to_le_bytes(), (p.loser as i32).to_le_bytes()])
        .flatten()
        .collect();
    fs::write(dir.join("pairs.i32"), p).map_err(io)?;
    let mut meta = String::from("# written by `ranklet bench pref --write-data`\n");
    let _ = write!(
        meta,
        "n = {}\nm = {}\nd = {}\na = {:?}\ngamma = {:?}\nsigma = {:?}\ndamping = {:?}\ntol = {:?}\nseed = {}\n",
        a.n, a.m, a.d, a.a, a.gamma, a.sigma, a.damping, a.tol, a.seed
    );
    fs::write(dir.join("meta.txt"), meta).map_err(io)
}

fn median(mut t: Vec<f64>) -> f64 {
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// `--breakdown`: the kernel once, then `--repeat` EP fits through a
/// [`Timed`] backend; the JSON line lists each operation (and each stretch
/// of core code between two calls) with its calls per fit and the minimum
/// over the fits of its total time per fit.
fn breakdown(
    a: &PrefBenchArgs,
    prior: &XpgpPrior<'_>,
    theta: &[f64],
    pairs: &[Pair],
    lik: Likelihood,
    ep: &EpParams,
    be: HostBackend,
) -> Result<String, String> {
    let (n, m) = (a.n, a.m);
    let err = |e: ranklet_core::learn::LearnError| e.to_string();
    let mut be = Timed::new(be);
    let mut parts = vec![0.0; prior.parts_len()];
    let mut pw = vec![0.0; prior.workspace_len()];
    let mut k = vec![0.0; n * n];
    prior.build_parts(&mut be, theta, &mut parts, &mut pw).map_err(err)?;
    prior.combine(theta, &parts, &mut k).map_err(err)?;
    let kv = MatRef::from_col_major(&k, n, n).map_err(|e| e.to_string())?;
    let mut storage = vec![0.0; PrefPosterior::storage_len(n, m)];
    let mut work = vec![0.0; fit_workspace_len(n)];
    // Per operation: calls per fit and the smallest total of a fit.
    let mut best: Vec<(String, usize, f64)> = Vec::new();
    let (mut fit_min, mut rounds, mut log_z) = (f64::INFINITY, 0, 0.0);
    for _ in 0..a.repeat {
        be.start();
        let t0 = Instant::now();
        let post = PrefPosterior::fit(&mut be, kv, pairs, lik, ep, &mut storage, &mut work).map_err(err)?;
        let t = t0.elapsed().as_secs_f64();
        let ops = be.finish();
        fit_min = fit_min.min(t);
        rounds = post.iterations();
        log_z = post.log_evidence();
        for o in ops {
            let s = o.total.as_secs_f64();
            match best.iter_mut().find(|b| b.0 == o.name) {
                Some(b) => b.2 = b.2.min(s),
                None => best.push((o.name, o.calls, s)),
            }
        }
    }
    let mut line = format!(
        "{{\"n\":{n},\"m\":{m},\"threads\":{},\"backend\":\"{}\",\"repeat\":{},\"ep_rounds\":{rounds},\"log_z\":{log_z},\"fit_min_s\":{fit_min},\"ops\":[",
        rayon::current_num_threads(),
        a.backend.name(),
        a.repeat
    );
    for (i, (name, calls, s)) in best.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(line, "{sep}{{\"op\":\"{name}\",\"calls\":{calls},\"min_s\":{s}}}");
    }
    line.push_str("]}");
    Ok(line)
}

/// Runs the benchmark and returns its JSON line.
pub fn bench_pref(a: &PrefBenchArgs) -> Result<String, String> {
    if a.n < 2 || a.d == 0 || a.repeat == 0 {
        return Err("need --n ≥ 2, --d ≥ 1, --repeat ≥ 1".into());
    }
    let (x, pairs) = generate(a.n, a.m, a.d, a.seed);
    if let Some(dir) = &a.write_data {
        write_data(dir, a, &x, &pairs)?;
        return Ok(format!("{{\"written\":\"{}\"}}", dir.display()));
    }
    let (n, m) = (a.n, a.m);
    let err = |e: ranklet_core::learn::LearnError| e.to_string();
    let xr = Rows::Dense(MatRef::from_row_major(&x, n, a.d).map_err(|e| e.to_string())?);
    let prior = XpgpPrior { n, x: Some(xr), relations: &[] };
    let theta = [a.a.ln(), a.gamma.ln(), a.sigma.ln()];
    let lik = Likelihood::Probit { sigma: a.sigma };
    let ep = EpParams::new(a.damping, a.tol, 1000);
    let mut be = HostBackend::new(a.backend);
    if a.breakdown {
        return breakdown(a, &prior, &theta, &pairs, lik, &ep, be);
    }

    let mut parts = vec![0.0; prior.parts_len()];
    let mut pw = vec![0.0; prior.workspace_len()];
    let mut k = vec![0.0; n * n];
    let mut storage = vec![0.0; PrefPosterior::storage_len(n, m)];
    let mut work = vec![0.0; fit_workspace_len(n)];
    let mut ework = vec![0.0; evidence_workspace_len(&prior)];
    let mut grad = [0.0; 3];
    let mut q = vec![0.0; n * n];
    let mut tmp = vec![0.0; 4 * n];
    let (mut tk, mut tep, mut tev, mut tg) = (vec![], vec![], vec![], vec![]);
    let (mut rounds, mut log_z, mut jitter) = (0, 0.0, 0.0);
    let mut eval_log_z = 0.0;
    for _ in 0..a.repeat {
        let t0 = Instant::now();
        prior.build_parts(&mut be, &theta, &mut parts, &mut pw).map_err(err)?;
        prior.combine(&theta, &parts, &mut k).map_err(err)?;
        tk.push(t0.elapsed().as_secs_f64());

        let kv = MatRef::from_col_major(&k, n, n).map_err(|e| e.to_string())?;
        let t0 = Instant::now();
        let mut post = PrefPosterior::fit(&mut be, kv, &pairs, lik, &ep, &mut storage, &mut work).map_err(err)?;
        tep.push(t0.elapsed().as_secs_f64());
        rounds = post.iterations();
        log_z = post.log_evidence();
        jitter = post.jitter();

        let t0 = Instant::now();
        post.evidence_grad_matrix_with(&mut be, &pairs, &mut q, &mut tmp).map_err(err)?;
        let lg = post.likelihood_grad(&pairs, kv, &mut tmp).map_err(err)?;
        prior.gradient(&mut be, &theta, &parts, &q, lg, &mut grad, &mut pw).map_err(err)?;
        tg.push(t0.elapsed().as_secs_f64());

        let t0 = Instant::now();
        eval_log_z = evidence_gradient(
            &mut be,
            &HyperProblem { prior: &prior, pairs: &pairs, lik, ep },
            &theta,
            &mut post,
            &mut grad,
            &mut ework,
        )
        .map_err(err)?;
        tev.push(t0.elapsed().as_secs_f64());
        std::hint::black_box(&grad);
    }
    let mut line = format!(
        "{{\"n\":{n},\"m\":{m},\"d\":{},\"a\":{},\"gamma\":{},\"sigma\":{},\"damping\":{},\"tol\":{},\"backend\":\"{}\",\"repeat\":{},\"ep_rounds\":{rounds},\"jitter\":{jitter},\"log_z\":{log_z},\"eval_log_z\":{eval_log_z},\"grad\":[{},{},{}],\"kernel_s\":{},\"ep_s\":{},\"eval_s\":{},\"grad_s\":{}",
        a.d,
        a.a,
        a.gamma,
        a.sigma,
        a.damping,
        a.tol,
        a.backend.name(),
        a.repeat,
        grad[0],
        grad[1],
        grad[2],
        median(tk),
        median(tep),
        median(tev),
        median(tg)
    );
    if a.fit_hyper {
        let mut th = theta;
        let (mut lo, mut hi) = ([0.0; 3], [0.0; 3]);
        default_bounds(&th, &mut lo, &mut hi).map_err(err)?;
        let opt = OptParams::default();
        let mut fw = vec![0.0; evidence_workspace_len(&prior) + minimize_workspace_len(3, opt.memory)];
        let mut post = PrefPosterior::new(n, m, &mut storage).map_err(err)?;
        let t0 = Instant::now();
        let problem = HyperProblem { prior: &prior, pairs: &pairs, lik, ep };
        let search = Search { lo: &lo, hi: &hi, opt };
        let rep = fit_hyper(&mut be, &problem, &mut th, &search, &mut post, &mut fw).map_err(err)?;
        let t = t0.elapsed().as_secs_f64();
        let _ = write!(
            line,
            ",\"fit_s\":{t},\"fit_evaluations\":{},\"fit_iterations\":{},\"fit_converged\":{},\"fit_log_z\":{},\"fit_a\":{},\"fit_gamma\":{},\"fit_sigma\":{}",
            rep.evaluations,
            rep.iterations,
            rep.converged,
            -rep.f,
            th[0].exp(),
            th[1].exp(),
            th[THETA_NOISE].exp()
        );
    }
    line.push('}');
    Ok(line)
}
