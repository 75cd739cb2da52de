//! `ranklet bench kron …`: time one Kronecker RLS fit (regression, two
//! domains, RBF node kernels) on a complete graph (closed form) or an
//! incomplete one (conjugate gradient), and print one JSON line:
//!
//! ```text
//! ranklet bench kron --p 1000 --mode cg --iters 200 --observed 0.5
//! {"mode":"cg","p_u":1000,"p_v":1000,"d":10,"gamma":0.1,"lambda":0.001,"edges":500000,"iters":200,"iterations_run":200,…,"median_s":…}
//! ```
//!
//! **What is timed**: everything from the node features to the model: the
//! two RBF kernel matrices `K_u`, `K_v` (backend gemm + exponentials), the
//! workspace allocations, and the fit — the two eigendecompositions and
//! the four products of [`kron::fit`] (closed form), or `iters` CG
//! iterations of [`kron::kron_cg`] (two `p × p` products each) and the
//! scatter of the dual coefficients. Not timed: generating or reading the
//! data. The line also gives the medians of the phases: `kernels_s`,
//! `eigen_s` (closed form: `KronEigen::new`; 0 for CG) and `solve_s`
//! (`KronEigen::solve`, or CG with the final scatter).
//!
//! `--domains one` times the one-domain problem instead (players against
//! players): one node kernel `K` from the `u` features on both sides
//! (`Domains::One`, Kronecker pair kernel), so one kernel matrix and, in
//! closed form, one eigendecomposition. With `--pair-kernel sym|recip` the
//! one-domain closed form uses the symmetric or reciprocal Kronecker kernel
//! (two of its four products need only a triangle).
//!
//! **Data** (`--p`, `--d`, `--seed`): `p` nodes in each domain with `d`
//! features uniform in [0, 1) (splitmix64 seeded with `S`: first the `u`
//! features row by row, then the `v` features, then the labels `Y`
//! (`p × p`, uniform in [0, 1), column by column); the incomplete graph
//! keeps `round(observed·p²)` edges chosen by a partial Fisher–Yates
//! shuffle of the `p²` pairs from the same stream, in ascending column-major
//! order (`(i, j)` is pair `i + j·p`). `--write-data DIR` writes this
//! problem to files and exits; `--data DIR` reads it back instead of
//! generating it. `bench/kron_rlscore.py` reads the same files, so both
//! sides solve the same problem. Files (little-endian, no header):
//! `x_u.f64` (`p_u × d`, row-major), `x_v.f64` (`p_v × d`), `y.f64`
//! (`p_u × p_v`, column-major: the label of `(u_i, v_j)` at `i + j·p_u`),
//! `edges.i32` (`q` pairs `(i, j)` of the incomplete graph) and `meta.txt`
//! (`key = value`: `p_u`, `p_v`, `d`, `gamma`, `lambda`, `edges`, `seed`).

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, ValueEnum};
use ranklet::family::kron::PairArg;
use ranklet::hostbackend::{BackendChoice, HostBackend};
use ranklet::rng::SplitMix64;
use ranklet_core::kernel::{kernel_matrix, kernel_matrix_workspace_len, Kernel};
use ranklet_core::learn::kron::{self, Domains, Loss, PairKernel};
use ranklet_core::linalg::cg::{CgControl, CgParams};
use ranklet_core::linalg::rows::Rows;
use ranklet_core::{MatMut, MatRef};

use crate::cli_values::{self, lib_enum};

/// Which solver to time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KronMode {
    /// Closed form on the complete graph (two eigendecompositions).
    Closed,
    /// Conjugate gradient on the incomplete graph (`--observed`).
    Cg,
}

impl KronMode {
    fn name(self) -> &'static str {
        match self {
            KronMode::Closed => "closed",
            KronMode::Cg => "cg",
        }
    }
}

/// Node sets of the timed problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KronDomains {
    /// Two domains, `K_u` from the `u` features and `K_v` from the `v`
    /// features: two eigendecompositions.
    Two,
    /// One domain (players against players): the `u` features give the one
    /// node kernel `K`, used on both sides (`Domains::One`, Kronecker pair
    /// kernel, labels `Y` as for two domains); one eigendecomposition. The
    /// `v` features are not used.
    One,
}

/// Arguments of `ranklet bench kron`.
#[derive(Args, Debug)]
pub struct KronBenchArgs {
    /// Nodes per domain (the complete graph has p² edges); not with --data.
    #[arg(long)]
    pub p: Option<usize>,
    /// Features per node.
    #[arg(long, default_value_t = 10)]
    pub d: usize,
    /// RBF width γ of both node kernels, exp(−γ‖x − x'‖²).
    #[arg(long, default_value_t = 0.1)]
    pub gamma: f64,
    /// Ridge λ.
    #[arg(long, default_value_t = 1e-3)]
    pub lambda: f64,
    /// Solver.
    #[arg(long, value_enum, default_value_t = KronMode::Closed)]
    pub mode: KronMode,
    /// Two node sets, or one shared by both sides of every edge.
    #[arg(long, value_enum, default_value_t = KronDomains::Two)]
    pub domains: KronDomains,
    /// Pair kernel of the one-domain problem (`sym`, `recip`: labels
    /// (anti)symmetrised by the learner; closed form only).
    #[arg(long = "pair-kernel", value_parser = lib_enum::<cli_values::PairKernel>(), default_value = "kron")]
    pub pair: PairArg,
    /// CG iterations (exactly this many: the tolerance is 0).
    #[arg(long, default_value_t = 200)]
    pub iters: usize,
    /// Share of the p² edges observed in the incomplete graph (CG).
    #[arg(long, default_value_t = 0.5)]
    pub observed: f64,
    /// Timed repetitions (median reported).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Seed of the data.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Backend.
    #[arg(long, value_parser = lib_enum::<cli_values::Backend>(), default_value = "faer")]
    pub backend: BackendChoice,
    /// Read the problem from this directory (written by --write-data).
    #[arg(long, conflicts_with = "write_data")]
    pub data: Option<PathBuf>,
    /// Write the generated problem to this directory and exit (no timing).
    #[arg(long)]
    pub write_data: Option<PathBuf>,
}

/// One benchmark problem (see the module docs).
pub struct KronData {
    pub p_u: usize,
    pub p_v: usize,
    pub d: usize,
    pub gamma: f64,
    pub lambda: f64,
    pub seed: u64,
    /// `p_u × d`, row-major.
    pub x_u: Vec<f64>,
    /// `p_v × d`, row-major.
    pub x_v: Vec<f64>,
    /// `p_u × p_v`, column-major.
    pub y: Vec<f64>,
    /// Observed edges of the incomplete graph, ascending `i + j·p_u`.
    pub edges: Vec<(usize, usize)>,
}

/// Generates the problem (see the module docs).
pub fn generate(p: usize, d: usize, gamma: f64, lambda: f64, observed: f64, seed: u64) -> KronData {
    let mut rng = SplitMix64(seed);
    let x_u: Vec<f64> = (0..p * d).map(|_| rng.next_f64()).collect();
    let x_v: Vec<f64> = (0..p * d).map(|_| rng.next_f64()).collect();
    let y: Vec<f64> = (0..p * p).map(|_| rng.next_f64()).collect();
    let n = p * p;
    let q = ((observed * n as f64).round() as usize).min(n);
    let mut idx: Vec<u32> = (0..n as u32).collect();
    for k in 0..q {
        let r = k + (rng.next_u64() % (n - k) as u64) as usize;
        idx.swap(k, r);
    }
    let mut chosen = idx[..q].to_vec();
    chosen.sort_unstable();
    let edges = chosen.iter().map(|&e| (e as usize % p, e as usize / p)).collect();
    KronData { p_u: p, p_v: p, d, gamma, lambda, seed, x_u, x_v, y, edges }
}

fn f64s_to_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn read_f64s(path: &Path, len: usize) -> Result<Vec<f64>, String> {
    let b = fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if b.len() != len * 8 {
        return Err(format!("{}: {} bytes, expected {}", path.display(), b.len(), len * 8));
    }
    Ok(b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect())
}

impl KronData {
    /// Writes the problem to `dir` (created if missing).
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let io = |e: std::io::Error| format!("{}: {e}", dir.display());
        fs::create_dir_all(dir).map_err(io)?;
        fs::write(dir.join("x_u.f64"), f64s_to_bytes(&self.x_u)).map_err(io)?;
        fs::write(dir.join("x_v.f64"), f64s_to_bytes(&self.x_v)).map_err(io)?;
        fs::write(dir.join("y.f64"), f64s_to_bytes(&self.y)).map_err(io)?;
        let e: Vec<u8> = self
            .edges
            .iter()
            .flat_map(|&(i, j)| [(i as i32).to_le_bytes(), (j as i32).to_le_bytes()])
            .flatten()
            .collect();
        fs::write(dir.join("edges.i32"), e).map_err(io)?;
        let mut meta = String::from("# written by `ranklet bench kron --write-data`\n");
        let _ = write!(
            meta,
            "p_u = {}\np_v = {}\nd = {}\ngamma = {:?}\nlambda = {:?}\nedges = {}\nseed = {}\n",
            self.p_u,
            self.p_v,
            self.d,
            self.gamma,
            self.lambda,
            self.edges.len(),
            self.seed
        );
        fs::write(dir.join("meta.txt"), meta).map_err(io)
    }

    /// Reads a problem written by [`KronData::write`].
    pub fn read(dir: &Path) -> Result<Self, String> {
        let meta = fs::read_to_string(dir.join("meta.txt")).map_err(|e| format!("{}: {e}", dir.display()))?;
        let get = |key: &str| -> Result<&str, String> {
            meta.lines()
                .filter_map(|l| l.split_once('='))
                .find(|(k, _)| k.trim() == key)
                .map(|(_, v)| v.trim())
                .ok_or_else(|| format!("meta.txt: no {key}"))
        };
        let num =
            |key: &str| -> Result<usize, String> { get(key)?.parse().map_err(|_| format!("meta.txt: bad {key}")) };
        let real = |key: &str| -> Result<f64, String> { get(key)?.parse().map_err(|_| format!("meta.txt: bad {key}")) };
        let (p_u, p_v, d, q) = (num("p_u")?, num("p_v")?, num("d")?, num("edges")?);
        let x_u = read_f64s(&dir.join("x_u.f64"), p_u * d)?;
        let x_v = read_f64s(&dir.join("x_v.f64"), p_v * d)?;
        let y = read_f64s(&dir.join("y.f64"), p_u * p_v)?;
        let eb = fs::read(dir.join("edges.i32")).map_err(|e| format!("edges.i32: {e}"))?;
        if eb.len() != q * 8 {
            return Err(format!("edges.i32: {} bytes, expected {}", eb.len(), q * 8));
        }
        let ints: Vec<i32> = eb.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
        let edges: Vec<(usize, usize)> = ints.chunks_exact(2).map(|c| (c[0] as usize, c[1] as usize)).collect();
        if edges.iter().any(|&(i, j)| i >= p_u || j >= p_v) {
            return Err("edges.i32: an edge out of range".into());
        }
        Ok(KronData {
            p_u,
            p_v,
            d,
            gamma: real("gamma")?,
            lambda: real("lambda")?,
            seed: num("seed")? as u64,
            x_u,
            x_v,
            y,
            edges,
        })
    }
}

/// What one timed fit returns besides its total time.
struct FitOut {
    iterations: usize,
    rel_residual: f64,
    coef_sum: f64,
    /// Seconds in the kernel matrices, the eigendecompositions (closed form
    /// only) and the rest (closed-form solve, or CG).
    phases: [f64; 3],
}

/// `K = [k(xᵢ, xⱼ)]` for row-major `x` (`n × d`), column-major `n × n`.
fn rbf_matrix(backend: &mut HostBackend, gamma: f64, x: &[f64], n: usize, d: usize) -> Result<Vec<f64>, String> {
    let e = |e: ranklet_core::LinalgError| e.to_string();
    let rows = Rows::Dense(MatRef::from_row_major(x, n, d).map_err(e)?);
    let mut k = vec![0.0; n * n];
    let mut work = vec![0.0; kernel_matrix_workspace_len(&rows, &rows)];
    kernel_matrix(
        backend,
        &Kernel::Rbf { gamma },
        &rows,
        &rows,
        MatMut::from_col_major(&mut k, n, n).map_err(e)?,
        &mut work,
    )
    .map_err(e)?;
    Ok(k)
}

/// One timed fit: kernels, then the closed form or CG.
fn fit_once(
    backend: &mut HostBackend,
    data: &KronData,
    mode: KronMode,
    nodes: KronDomains,
    pair: PairKernel,
    iters: usize,
    y_e: &[f64],
) -> Result<FitOut, String> {
    let (p_u, p_v) = (data.p_u, data.p_v);
    let e = |e: ranklet_core::LinalgError| e.to_string();
    if nodes == KronDomains::One && p_u != p_v {
        return Err("--domains one needs p_u = p_v".into());
    }
    let t0 = Instant::now();
    let k_u = rbf_matrix(backend, data.gamma, &data.x_u, p_u, data.d)?;
    let k_v = match nodes {
        KronDomains::Two => rbf_matrix(backend, data.gamma, &data.x_v, p_v, data.d)?,
        KronDomains::One => Vec::new(),
    };
    let t_kernels = t0.elapsed().as_secs_f64();
    let mut t_eigen = 0.0;
    let t1 = Instant::now();
    let domains = match nodes {
        KronDomains::Two => Domains::Two {
            k_u: MatRef::from_col_major(&k_u, p_u, p_u).map_err(e)?,
            k_v: MatRef::from_col_major(&k_v, p_v, p_v).map_err(e)?,
        },
        KronDomains::One => Domains::One { k: MatRef::from_col_major(&k_u, p_u, p_u).map_err(e)?, pair },
    };
    let mut coef = vec![0.0; p_u * p_v];
    let coef_view = MatMut::from_col_major(&mut coef, p_u, p_v).map_err(e)?;
    let (iterations, rel_residual) = match mode {
        KronMode::Closed => {
            // kron::fit in its two steps, timed apart.
            let mut store = vec![0.0; kron::KronEigen::store_len(p_u, p_v)];
            let mut work = vec![0.0; kron::KronEigen::new_workspace_len(p_v).max(p_u * p_v)];
            let y = MatRef::from_col_major(&data.y, p_u, p_v).map_err(e)?;
            let eig = kron::KronEigen::new(backend, &domains, Loss::Regression, &mut store, &mut work)
                .map_err(|e| e.to_string())?;
            t_eigen = t1.elapsed().as_secs_f64();
            eig.solve(backend, data.lambda, y, coef_view, &mut work).map_err(|e| e.to_string())?;
            (0, 0.0)
        }
        KronMode::Cg => {
            let q = data.edges.len();
            let mut work = vec![0.0; kron::kron_cg_workspace_len(p_u, p_v, q)];
            let mut a = vec![0.0; q];
            let info = kron::kron_cg(
                backend,
                &kron::KronSystem { domains, loss: Loss::Regression, edges: &data.edges, y: y_e, lambda: data.lambda },
                &CgParams::new(iters, 0.0),
                &mut a,
                coef_view,
                &mut work,
                |_, _, _| CgControl::Continue,
            )
            .map_err(|e| e.to_string())?;
            (info.iterations, info.rel_residual)
        }
    };
    let t_rest = t1.elapsed().as_secs_f64() - t_eigen;
    Ok(FitOut { iterations, rel_residual, coef_sum: coef.iter().sum(), phases: [t_kernels, t_eigen, t_rest] })
}

/// Runs the benchmark and returns its JSON line (or a note after
/// `--write-data`).
pub fn bench_kron(a: &KronBenchArgs) -> Result<String, String> {
    let ok = a.repeat > 0 && a.lambda.is_finite() && a.lambda >= 0.0 && a.gamma.is_finite() && a.gamma > 0.0;
    if !ok || !(0.0..=1.0).contains(&a.observed) {
        return Err("need --repeat ≥ 1, --lambda ≥ 0, --gamma > 0, 0 ≤ --observed ≤ 1".into());
    }
    let data = match (&a.data, a.p) {
        (Some(dir), None) => KronData::read(dir)?,
        (None, Some(p)) if p >= 1 && a.d >= 1 && p * p <= i32::MAX as usize => {
            generate(p, a.d, a.gamma, a.lambda, a.observed, a.seed)
        }
        (Some(_), Some(_)) => return Err("--p and --data exclude each other".into()),
        _ => return Err("need --p N (1 ≤ N ≤ 46340) and --d ≥ 1, or --data DIR".into()),
    };
    if let Some(dir) = &a.write_data {
        data.write(dir)?;
        return Ok(format!(
            "wrote {} ({} × {} nodes, d = {}, {} observed edges)",
            dir.display(),
            data.p_u,
            data.p_v,
            data.d,
            data.edges.len()
        ));
    }
    if a.pair != PairArg::Kron && (a.domains != KronDomains::One || a.mode != KronMode::Closed) {
        return Err("--pair-kernel sym|recip needs --domains one --mode closed".into());
    }
    if a.mode == KronMode::Cg && data.edges.is_empty() {
        return Err("no observed edges (--observed 0?)".into());
    }
    let y_e: Vec<f64> = data.edges.iter().map(|&(i, j)| data.y[i + j * data.p_u]).collect();
    let mut backend = HostBackend::new(a.backend);
    let mut times = Vec::with_capacity(a.repeat);
    let mut phases: [Vec<f64>; 3] = Default::default();
    let mut last = None;
    for _ in 0..a.repeat {
        let t0 = Instant::now();
        let out = fit_once(&mut backend, &data, a.mode, a.domains, a.pair.to_core(), a.iters, &y_e)?;
        times.push(t0.elapsed().as_secs_f64());
        for (v, t) in phases.iter_mut().zip(out.phases) {
            v.push(t);
        }
        last = Some(out);
    }
    let out = last.expect("repeat ≥ 1");
    times.sort_by(f64::total_cmp);
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let [pk, pe, pr] = phases.each_mut().map(median);
    let edges = match a.mode {
        KronMode::Closed => data.p_u * data.p_v,
        KronMode::Cg => data.edges.len(),
    };
    Ok(format!(
        "{{\"mode\":\"{}\",\"domains\":\"{}\",\"pair_kernel\":\"{}\",\"p_u\":{},\"p_v\":{},\"d\":{},\"gamma\":{},\"lambda\":{},\"edges\":{},\"iters\":{},\"iterations_run\":{},\"rel_residual\":{:e},\"coef_sum\":{:e},\"backend\":\"{}\",\"threads\":{},\"timed\":\"rbf kernels + fit\",\"repeat\":{},\"median_s\":{},\"min_s\":{},\"max_s\":{},\"kernels_s\":{},\"eigen_s\":{},\"solve_s\":{}}}",
        a.mode.name(),
        match a.domains {
            KronDomains::Two => "two",
            KronDomains::One => "one",
        },
        a.pair.name(),
        data.p_u,
        data.p_v,
        data.d,
        data.gamma,
        data.lambda,
        edges,
        if a.mode == KronMode::Cg { a.iters } else { 0 },
        out.iterations,
        out.rel_residual,
        out.coef_sum,
        a.backend.name(),
        std::thread::available_parallelism().map_or(1, |n| n.get()).min(
            std::env::var("RAYON_NUM_THREADS").ok().and_then(|s| s.parse().ok()).filter(|&n: &usize| n > 0).unwrap_or(usize::MAX)
        ),
        a.repeat,
        times[times.len() / 2],
        times[0],
        times[times.len() - 1],
        pk,
        pe,
        pr
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_problem_round_trips_through_files() {
        let d = generate(7, 3, 0.1, 1e-3, 0.5, 9);
        assert_eq!(d.edges.len(), 25); // round(0.5 · 49)
        assert!(d.edges.windows(2).all(|w| w[0].0 + 7 * w[0].1 < w[1].0 + 7 * w[1].1));
        let dir = std::env::temp_dir().join(format!("ranklet-kron-bench-{}", std::process::id()));
        d.write(&dir).unwrap();
        let r = KronData::read(&dir).unwrap();
        let _ = fs::remove_dir_all(&dir);
        assert_eq!((r.p_u, r.p_v, r.d, r.gamma, r.lambda, r.seed), (7, 7, 3, 0.1, 1e-3, 9));
        assert_eq!((r.x_u, r.x_v, r.y, r.edges), (d.x_u, d.x_v, d.y, d.edges));
    }

    #[test]
    fn closed_form_and_many_cg_iterations_agree_on_a_complete_graph() {
        let d = generate(12, 3, 0.5, 0.1, 1.0, 3);
        let y_e: Vec<f64> = d.edges.iter().map(|&(i, j)| d.y[i + j * 12]).collect();
        let mut b = HostBackend::new(BackendChoice::Portable);
        let c = fit_once(&mut b, &d, KronMode::Closed, KronDomains::Two, PairKernel::Kronecker, 0, &y_e).unwrap();
        let g = fit_once(&mut b, &d, KronMode::Cg, KronDomains::Two, PairKernel::Kronecker, 400, &y_e).unwrap();
        assert!((c.coef_sum - g.coef_sum).abs() <= 1e-8 * c.coef_sum.abs().max(1.0), "{} {}", c.coef_sum, g.coef_sum);
    }

    /// `--domains one` (one decomposition) against CG on the same one-domain
    /// system, and against the two-domain fit with `K_v = K_u` (two
    /// decompositions of the same matrix).
    #[test]
    fn one_domain_closed_form_matches_cg_and_the_two_domain_fit_with_equal_kernels() {
        let mut d = generate(12, 3, 0.5, 0.1, 1.0, 4);
        let y_e: Vec<f64> = d.edges.iter().map(|&(i, j)| d.y[i + j * 12]).collect();
        let mut b = HostBackend::new(BackendChoice::Portable);
        let c = fit_once(&mut b, &d, KronMode::Closed, KronDomains::One, PairKernel::Kronecker, 0, &y_e).unwrap();
        let g = fit_once(&mut b, &d, KronMode::Cg, KronDomains::One, PairKernel::Kronecker, 400, &y_e).unwrap();
        let tol = 1e-8 * c.coef_sum.abs().max(1.0);
        assert!((c.coef_sum - g.coef_sum).abs() <= tol, "{} {}", c.coef_sum, g.coef_sum);
        d.x_v = d.x_u.clone();
        let t = fit_once(&mut b, &d, KronMode::Closed, KronDomains::Two, PairKernel::Kronecker, 0, &y_e).unwrap();
        assert!((c.coef_sum - t.coef_sum).abs() <= tol, "{} {}", c.coef_sum, t.coef_sum);
    }
}
