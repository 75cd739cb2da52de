//! `ranklet bench eigen`: `ranklet bench eigen --n N [--backend faer|portable] [--top K]
//! [--repeat R] [--seed S] [--matrix rbf|random]` times the symmetric
//! eigendecomposition (full, or the `K` largest pairs) of a fixed,
//! reproducible matrix and prints one JSON line to stdout:
//!
//! ```text
//! {"n":1000,"backend":"faer","top":0,"repeat":5,"median_s":0.21,"min_s":0.2,"max_s":0.23,"matrix":"rbf"}
//! ```
//!
//! The matrix is built once, outside the timing. `rbf` is the kernel
//! `exp(−γ‖xᵢ−xⱼ‖²)`, γ = 1/10, over `n` points of R¹⁰ whose coordinates are
//! uniform in [0, 1) from splitmix64 seeded with `S` (drawn point by point,
//! coordinate by coordinate: `bench/eigen_numpy.py` rebuilds the same
//! matrix); `random` is symmetric with entries uniform in [−1, 1) (column by
//! column, lower triangle, mirrored).

use std::time::Instant;

use clap::{Args, ValueEnum};

use ranklet_core::backend::{Backend, Portable};
use ranklet_core::{MatMut, MatRef};

use crate::faer_backend::FaerBackend;
use crate::hostbackend::BackendChoice;
use crate::rng::SplitMix64;

/// Which matrix to decompose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BenchMatrix {
    /// RBF kernel exp(−‖xᵢ−xⱼ‖²/10) over n points of R¹⁰.
    Rbf,
    /// Symmetric, entries uniform in [−1, 1).
    Random,
}

impl BenchMatrix {
    fn name(self) -> &'static str {
        match self {
            BenchMatrix::Rbf => "rbf",
            BenchMatrix::Random => "random",
        }
    }
}

/// Arguments of `ranklet bench eigen`.
#[derive(Args, Debug)]
pub struct EigenArgs {
    /// Order of the matrix.
    #[arg(long)]
    pub n: usize,
    /// Backend to time.
    #[arg(long, value_enum, default_value_t = BackendChoice::Faer)]
    pub backend: BackendChoice,
    /// Number of largest eigenpairs to compute; 0 means the full decomposition.
    #[arg(long, default_value_t = 0)]
    pub top: usize,
    /// Timed repetitions (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Untimed runs before the timed ones.
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// Seed of the point generator.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Matrix to decompose.
    #[arg(long, value_enum, default_value_t = BenchMatrix::Rbf)]
    pub matrix: BenchMatrix,
}

/// Dimension of the RBF points.
pub const RBF_DIM: usize = 10;
/// RBF bandwidth γ.
pub const RBF_GAMMA: f64 = 0.1;

/// The benchmark matrix, column-major `n × n`.
pub fn bench_matrix(kind: BenchMatrix, n: usize, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64(seed);
    let mut a = vec![0.0; n * n];
    match kind {
        BenchMatrix::Rbf => {
            let x: Vec<f64> = (0..n * RBF_DIM).map(|_| rng.next_f64()).collect();
            for j in 0..n {
                let xj = &x[j * RBF_DIM..(j + 1) * RBF_DIM];
                for i in j..n {
                    let xi = &x[i * RBF_DIM..(i + 1) * RBF_DIM];
                    let d2: f64 = xi.iter().zip(xj).map(|(p, q)| (p - q) * (p - q)).sum();
                    let v = (-RBF_GAMMA * d2).exp();
                    a[i + j * n] = v;
                    a[j + i * n] = v;
                }
            }
        }
        BenchMatrix::Random => {
            for j in 0..n {
                for i in j..n {
                    let v = 2.0 * rng.next_f64() - 1.0;
                    a[i + j * n] = v;
                    a[j + i * n] = v;
                }
            }
        }
    }
    a
}

/// One decomposition; returns the seconds it took.
fn decompose_once(
    be: &mut dyn Backend,
    a: MatRef<'_, f64>,
    vals: &mut [f64],
    vecs: &mut [f64],
    top: usize,
) -> Result<f64, String> {
    let n = a.nrows();
    let k = vals.len();
    let v = MatMut::from_col_major(vecs, n, k).map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let r = if top == 0 { be.sym_eigen(a, vals, v) } else { be.sym_eigen_top_k(a, vals, v) };
    let dt = t0.elapsed().as_secs_f64();
    r.map_err(|e| format!("eigendecomposition failed: {e}"))?;
    Ok(dt)
}

/// Runs `ranklet bench eigen` and returns its JSON line.
pub fn bench_eigen(args: &EigenArgs) -> Result<String, String> {
    let n = args.n;
    if n == 0 {
        return Err("--n must be at least 1".into());
    }
    if args.top > n {
        return Err(format!("--top {} exceeds --n {n}", args.top));
    }
    if args.repeat == 0 {
        return Err("--repeat must be at least 1".into());
    }
    n.checked_mul(n).ok_or_else(|| format!("--n {n} is too large"))?;
    let data = bench_matrix(args.matrix, n, args.seed);
    let a = MatRef::from_col_major(&data, n, n).map_err(|e| e.to_string())?;
    let k = if args.top == 0 { n } else { args.top };
    let mut vals = vec![0.0; k];
    let mut vecs = vec![0.0; n * k];

    let mut times = Vec::with_capacity(args.repeat);
    let mut work: Vec<f64>;
    let mut faer;
    let mut portable;
    let be: &mut dyn Backend = match args.backend {
        BackendChoice::Faer => {
            faer = FaerBackend::new();
            &mut faer
        }
        BackendChoice::Portable => {
            work = vec![0.0; Portable::workspace_len(n)];
            portable = Portable::new(&mut work);
            &mut portable
        }
    };
    for _ in 0..args.warmup {
        decompose_once(be, a, &mut vals, &mut vecs, args.top)?;
    }
    for _ in 0..args.repeat {
        times.push(decompose_once(be, a, &mut vals, &mut vecs, args.top)?);
    }
    times.sort_by(f64::total_cmp);
    let r = times.len();
    let median = if r % 2 == 1 { times[r / 2] } else { 0.5 * (times[r / 2 - 1] + times[r / 2]) };
    Ok(format!(
        "{{\"n\":{n},\"backend\":\"{}\",\"top\":{},\"repeat\":{},\"median_s\":{median:.6},\"min_s\":{:.6},\"max_s\":{:.6},\"matrix\":\"{}\"}}",
        args.backend.name(),
        args.top,
        args.repeat,
        times[0],
        times[r - 1],
        args.matrix.name(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rbf_matrix_is_a_symmetric_unit_diagonal_kernel() {
        let n = 7;
        let a = bench_matrix(BenchMatrix::Rbf, n, 3);
        for i in 0..n {
            assert_eq!(a[i + i * n], 1.0);
            for j in 0..n {
                assert_eq!(a[i + j * n], a[j + i * n]);
                assert!(a[i + j * n] > 0.0 && a[i + j * n] <= 1.0);
            }
        }
    }

    #[test]
    fn rbf_matrix_matches_the_numpy_script() {
        // Values printed by `bench/eigen_numpy.py`'s `rbf_matrix(5, 42)`
        // (numpy computes the distances differently: agreement to rounding).
        let a = bench_matrix(BenchMatrix::Rbf, 5, 42);
        assert!((a[1] - 0.8613749979534274).abs() < 1e-14, "{}", a[1]);
        assert!((a[4 + 2 * 5] - 0.8362747576125135).abs() < 1e-14, "{}", a[4 + 2 * 5]);
        assert!((a.iter().sum::<f64>() - 22.008091082649774).abs() < 1e-12);
    }

    #[test]
    fn bench_eigen_prints_one_json_line() {
        for (backend, top) in [(BackendChoice::Faer, 0), (BackendChoice::Portable, 3), (BackendChoice::Faer, 2)] {
            let args = EigenArgs { n: 30, backend, top, repeat: 3, warmup: 0, seed: 1, matrix: BenchMatrix::Random };
            let line = bench_eigen(&args).unwrap();
            assert!(line.starts_with("{\"n\":30,\"backend\":\"") && line.ends_with('}'), "{line}");
            assert!(line.contains(&format!("\"top\":{top},\"repeat\":3,\"median_s\":")), "{line}");
        }
        let bad = EigenArgs {
            n: 3,
            backend: BackendChoice::Faer,
            top: 4,
            repeat: 1,
            warmup: 0,
            seed: 1,
            matrix: BenchMatrix::Rbf,
        };
        assert!(bench_eigen(&bad).is_err());
    }
}
