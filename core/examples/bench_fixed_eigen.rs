//! Fixed-capacity eigensolver vs nalgebra: time and accuracy.
//!
//! ```text
//! cargo run --release -p ranklet-core --example bench_fixed_eigen --features nalgebra [-- REPS]
//! ```
//!
//! For N = 8, 16, 32, 64 and three kinds of symmetric matrices (uniform random
//! entries; clustered eigenvalues 1 + k·1e-6 and −1 − k·1e-6 in a random
//! orthogonal basis; graded `D·H·D` with `D` spanning 1…1e-6), decomposes the
//! same `f32` matrix with `SymEigen<f32, N>::compute` and with nalgebra's
//! `SymmetricEigen::new` on `SMatrix<f32, N, N>`, both with eigenvectors.
//!
//! Reports, per solver: the median over batches of the time per decomposition
//! (each batch decomposes every matrix of the set once, a set holds 8 matrices),
//! the max eigenvalue error against an f64 reference (nalgebra's f64
//! `SymmetricEigen` on the f32-rounded matrix, sorted), relative to ‖A‖₂, and
//! the max reconstruction residual ‖A·V − V·Λ‖_max/‖A‖₂ (computed in f64).
//! Only nalgebra's default `SymmetricEigen::new` (ε = f32::EPSILON, no
//! iteration limit) is measured: nalgebra neither sorts nor checks for NaN,
//! ours does both.
//!
//! `-- REPS ours|nalgebra [N]` times only that solver (and only order `N`)
//! and skips the accuracy pass: for instruction counts under
//! `valgrind --tool=callgrind` (the tables' other columns then read 0).
//! `-- REPS both N` runs both solvers at order `N` only.
//!
//! nalgebra is a dev-dependency of ranklet-core, so the example also builds
//! without `--features nalgebra`; the flag only adds the interop module.

use nalgebra::SMatrix;
use ranklet_core::eigen::fixed::SymEigen;
use ranklet_core::eigen::EigenParams;
use std::hint::black_box;
use std::time::Instant;

#[path = "../tests/support/sym_matrices.rs"]
mod sym_matrices;
use sym_matrices::{clustered, graded, random_sym, Rng};

const SET: usize = 8;

/// Builds an n × n column-major symmetric test matrix.
type Maker = fn(usize, &mut Rng) -> Vec<f64>;

fn to_f32(a: &[f64]) -> Vec<f32> {
    a.iter().map(|&x| x as f32).collect()
}

struct Row {
    time_ns: f64,
    eig_err: f64,
    residual: f64,
}

/// Max |λ − λref|/‖A‖ and max |(A·V − V·Λ)ᵢⱼ|/‖A‖ (A in f64), sorted values.
fn accuracy(a: &[f64], n: usize, vals: &[f64], vecs: &[f64], reference: &[f64]) -> (f64, f64) {
    let norm = reference.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(f64::MIN_POSITIVE);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| vals[x].total_cmp(&vals[y]));
    let mut eig = 0.0f64;
    for (k, &j) in order.iter().enumerate() {
        eig = eig.max((vals[j] - reference[k]).abs() / norm);
    }
    let mut res = 0.0f64;
    for j in 0..n {
        for i in 0..n {
            let s: f64 = (0..n).map(|p| a[i + p * n] * vecs[p + j * n]).sum::<f64>() - vals[j] * vecs[i + j * n];
            res = res.max(s.abs() / norm);
        }
    }
    (eig, res)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

macro_rules! bench_n {
    ($n:literal, $kind:expr, $make:expr, $batches:expr, $only:expr) => {{
        const N: usize = $n;
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (N as u64 * 0x1000_0001));
        let mats64: Vec<Vec<f64>> = (0..SET).map(|_| $make(N, &mut rng)).collect();
        let mats32: Vec<Vec<f32>> = mats64.iter().map(|a| to_f32(a)).collect();
        // The f32-rounded matrices in f64: what both solvers actually see.
        let exact: Vec<Vec<f64>> = mats32.iter().map(|a| a.iter().map(|&x| x as f64).collect()).collect();
        let refs: Vec<Vec<f64>> = exact
            .iter()
            .filter(|_| $only.is_none())
            .map(|a| {
                let m = SMatrix::<f64, N, N>::from_column_slice(a);
                let mut v: Vec<f64> = nalgebra::SymmetricEigen::new(m).eigenvalues.iter().copied().collect();
                v.sort_by(f64::total_cmp);
                v
            })
            .collect();
        let nal: Vec<SMatrix<f32, N, N>> = mats32.iter().map(|a| SMatrix::<f32, N, N>::from_column_slice(a)).collect();
        let params = EigenParams::default();
        let mut ours = Box::new(SymEigen::<f32, N>::new());

        // Accuracy.
        let (mut oe, mut or, mut ne, mut nr) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for k in (0..SET).filter(|_| $only.is_none()) {
            ours.compute(&mats32[k], N, &params).expect("ours");
            let vals: Vec<f64> = ours.values().iter().map(|&x| x as f64).collect();
            let vecs: Vec<f64> = (0..N).flat_map(|j| ours.vector(j).unwrap().iter().map(|&x| x as f64)).collect();
            let (e, r) = accuracy(&exact[k], N, &vals, &vecs, &refs[k]);
            oe = oe.max(e);
            or = or.max(r);
            let se = nalgebra::SymmetricEigen::new(nal[k]);
            let vals: Vec<f64> = se.eigenvalues.iter().map(|&x| x as f64).collect();
            let vecs: Vec<f64> = se.eigenvectors.iter().map(|&x| x as f64).collect();
            let (e, r) = accuracy(&exact[k], N, &vals, &vecs, &refs[k]);
            ne = ne.max(e);
            nr = nr.max(r);
        }

        // Time: interleave the two solvers batch by batch so that load
        // changes hit both alike.
        let (mut to, mut tn) = (Vec::new(), Vec::new());
        for _ in 0..$batches {
            let t = Instant::now();
            for a in mats32.iter().filter(|_| $only != Some("nalgebra")) {
                ours.compute(black_box(a), N, &params).expect("ours");
                black_box(ours.values());
            }
            to.push(t.elapsed().as_nanos() as f64 / SET as f64);
            let t = Instant::now();
            for m in nal.iter().filter(|_| $only != Some("ours")) {
                let se = nalgebra::SymmetricEigen::new(black_box(*m));
                black_box(&se);
            }
            tn.push(t.elapsed().as_nanos() as f64 / SET as f64);
        }
        let o = Row { time_ns: median(to), eig_err: oe, residual: or };
        let n = Row { time_ns: median(tn), eig_err: ne, residual: nr };
        print_row(N, $kind, &o, &n);
    }};
}

fn print_row(n: usize, kind: &str, o: &Row, nal: &Row) {
    println!(
        "| {n:>2} | {kind:<9} | {:>9.2} | {:>9.2} | {:>5.2} | {:>8.1e} | {:>8.1e} | {:>8.1e} | {:>8.1e} |",
        o.time_ns / 1e3,
        nal.time_ns / 1e3,
        nal.time_ns / o.time_ns,
        o.eig_err,
        nal.eig_err,
        o.residual,
        nal.residual
    );
}

fn main() {
    let reps: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(200);
    let only_arg = std::env::args().nth(2);
    let only = only_arg.as_deref().filter(|s| *s != "both");
    let pick: Option<usize> = std::env::args().nth(3).and_then(|s| s.parse().ok());
    let want = |n: usize| pick.is_none_or(|p| p == n);
    println!("ours = ranklet_core::eigen::fixed::SymEigen<f32, N>::compute; nalgebra = SymmetricEigen::new(SMatrix<f32, N, N>)");
    println!("time: median µs per decomposition over {reps} batches (fewer for N ≥ 32); errors relative to ‖A‖₂ vs f64 reference");
    println!();
    println!(
        "|  N | matrices  |  ours µs  | nalg. µs  | nalg/ours | ours λ err | nalg. λ err | ours resid | nalg. resid |"
    );
    println!("|---:|-----------|----------:|----------:|------:|---------:|---------:|---------:|---------:|");
    let kinds: [(&str, Maker); 3] = [("random", random_sym), ("clustered", clustered), ("graded", graded)];
    for (kind, make) in kinds {
        if want(8) {
            bench_n!(8, kind, make, reps, only);
        }
        if want(16) {
            bench_n!(16, kind, make, reps, only);
        }
        if want(32) {
            bench_n!(32, kind, make, (reps / 2).max(5), only);
        }
        if want(64) {
            bench_n!(64, kind, make, (reps / 8).max(5), only);
        }
    }
}
