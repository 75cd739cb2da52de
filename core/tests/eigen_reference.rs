//! Symmetric eigensolvers against LAPACK reference values.
//!
//! Fixtures: `core/tests/fixtures/eigen/cases.bin`, generated once by
//!
//! ```text
//! python3 core/tests/fixtures/eigen/gen_eigen.py    # numpy 2.4.6 (OpenBLAS 0.3.31 LAPACK dsyevd)
//! ```
//!
//! and committed; these tests need no Python. Each case holds a symmetric
//! matrix and its eigenvalues from `numpy.linalg.eigh`. Checked for the full
//! solver, Jacobi (n ≤ 30), the top-k solver and the fixed-capacity wrapper:
//! - eigenvalue error ≤ 1e-10·‖A‖₂ against LAPACK,
//! - residual ‖A·V − V·Λ‖_F ≤ 1e-9·‖A‖₂,
//! - orthogonality ‖VᵀV − I‖_F ≤ 1e-9.

use proptest::prelude::*;
use ranklet_core::eigen::fixed::SymEigen;
use ranklet_core::eigen::jacobi::{jacobi_eigen, jacobi_eigen_workspace_len};
use ranklet_core::eigen::topk::{sym_eigen_top_k, top_k_workspace_len, DenseSymOp, TopKInfo};
use ranklet_core::eigen::tridiag::{sym_eigen, sym_eigen_workspace_len};
use ranklet_core::eigen::EigenParams;
use ranklet_core::{LinalgError, MatMut, MatRef};

static CASES: &[u8] = include_bytes!("fixtures/eigen/cases.bin");

struct Case {
    name: String,
    n: usize,
    a: Vec<f64>,
    w: Vec<f64>,
}

fn cases() -> Vec<Case> {
    let mut pos = 0;
    let mut take = |len: usize| {
        let s = &CASES[pos..pos + len];
        pos += len;
        s
    };
    assert_eq!(take(8), b"RKEIG001");
    let u32_ = |b: &[u8]| u32::from_le_bytes(b.try_into().unwrap()) as usize;
    let count = u32_(take(4));
    let mut out = Vec::new();
    for _ in 0..count {
        let nl = u32_(take(4));
        let name = String::from_utf8(take(nl).to_vec()).unwrap();
        let n = u32_(take(4));
        let f = |b: &[u8]| b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect::<Vec<_>>();
        let a = f(take(8 * n * n));
        let w = f(take(8 * n));
        out.push(Case { name, n, a, w });
    }
    out
}

fn norm2(w: &[f64]) -> f64 {
    w.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// (‖A·V − V·Λ‖_F / ‖A‖₂, ‖VᵀV − I‖_F) for the `k` columns of `v` (n × k).
fn residual_orth(a: &[f64], n: usize, vals: &[f64], v: &[f64]) -> (f64, f64) {
    let k = vals.len();
    let anorm = {
        let mut s = 0.0f64;
        for x in a {
            s += x * x;
        }
        s.sqrt()
    };
    let (mut res, mut orth) = (0.0f64, 0.0f64);
    for j in 0..k {
        let vj = &v[j * n..(j + 1) * n];
        for i in 0..n {
            let mut s = -vals[j] * vj[i];
            for p in 0..n {
                s += a[i + p * n] * vj[p];
            }
            res += s * s;
        }
        for i in 0..k {
            let vi = &v[i * n..(i + 1) * n];
            let d: f64 = vi.iter().zip(vj).map(|(x, y)| x * y).sum::<f64>() - if i == j { 1.0 } else { 0.0 };
            orth += d * d;
        }
    }
    // Relative to ‖A‖₂ ≥ ‖A‖_F/√n; a zero matrix must give a zero residual.
    let scale = if anorm == 0.0 { 1.0 } else { anorm / (n as f64).sqrt() };
    (res.sqrt() / scale, orth.sqrt())
}

#[derive(Default)]
struct Worst {
    eig: f64,
    res: f64,
    orth: f64,
}

impl Worst {
    fn update(&mut self, name: &str, solver: &str, eig: f64, res: f64, orth: f64) {
        assert!(eig <= 1e-10, "{solver} {name}: eigenvalue error {eig:e}");
        assert!(res <= 1e-9, "{solver} {name}: residual {res:e}");
        assert!(orth <= 1e-9, "{solver} {name}: orthogonality {orth:e}");
        self.eig = self.eig.max(eig);
        self.res = self.res.max(res);
        self.orth = self.orth.max(orth);
    }
}

type Full =
    fn(MatRef<'_, f64>, &mut [f64], Option<MatMut<'_, f64>>, &mut [f64], &EigenParams) -> Result<(), LinalgError>;

fn check_full(solver: &str, f: Full, wl: fn(usize) -> usize, max_n: usize) {
    let mut worst = Worst::default();
    let mut count = 0;
    for c in cases().iter().filter(|c| c.n <= max_n) {
        let n = c.n;
        let mut vals = vec![0.0; n];
        let mut v = vec![0.0; n * n];
        let mut work = vec![0.0; wl(n)];
        f(
            MatRef::from_col_major(&c.a, n, n).unwrap(),
            &mut vals,
            Some(MatMut::from_col_major(&mut v, n, n).unwrap()),
            &mut work,
            &EigenParams::default(),
        )
        .unwrap_or_else(|e| panic!("{solver} {}: {e}", c.name));
        let an = norm2(&c.w).max(f64::MIN_POSITIVE);
        let eig = vals.iter().zip(&c.w).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max) / an;
        let (res, orth) = residual_orth(&c.a, n, &vals, &v);
        worst.update(&c.name, solver, eig, res, orth);
        count += 1;
    }
    eprintln!(
        "{solver}: {count} cases, max eigenvalue error {:.1e}·‖A‖, max residual {:.1e}·‖A‖, max ‖VᵀV−I‖ {:.1e}",
        worst.eig, worst.res, worst.orth
    );
}

#[test]
fn full_solver_matches_lapack() {
    check_full("tridiag", sym_eigen::<f64>, sym_eigen_workspace_len, usize::MAX);
}

#[test]
fn jacobi_matches_lapack_on_small_cases() {
    check_full("jacobi", jacobi_eigen::<f64>, jacobi_eigen_workspace_len, 64);
}

#[test]
fn full_solver_values_only_matches_lapack() {
    for c in cases() {
        let n = c.n;
        let mut vals = vec![0.0; n];
        let mut work = vec![0.0; sym_eigen_workspace_len(n)];
        sym_eigen(MatRef::from_col_major(&c.a, n, n).unwrap(), &mut vals, None, &mut work, &EigenParams::default())
            .unwrap();
        let an = norm2(&c.w).max(f64::MIN_POSITIVE);
        for (x, y) in vals.iter().zip(&c.w) {
            assert!((x - y).abs() <= 1e-10 * an, "{}: {x} vs {y}", c.name);
        }
    }
}

#[test]
fn top_k_matches_lapack() {
    let mut worst = Worst::default();
    let mut iterative = 0;
    for c in cases() {
        let n = c.n;
        let mut ks = vec![1.min(n), 5.min(n), n];
        ks.dedup();
        for k in ks {
            let mut op = DenseSymOp::new(MatRef::from_col_major(&c.a, n, n).unwrap()).unwrap();
            let mut vals = vec![0.0; k];
            let mut v = vec![0.0; n * k];
            let mut work = vec![0.0; top_k_workspace_len(n, k)];
            let info: TopKInfo = sym_eigen_top_k(
                &mut op,
                &mut vals,
                MatMut::from_col_major(&mut v, n, k).unwrap(),
                &mut work,
                &EigenParams::default(),
            )
            .unwrap_or_else(|e| panic!("top-k {} k={k}: {e}", c.name));
            if info.iterations > 0 {
                iterative += 1;
            }
            assert!(vals.windows(2).all(|w| w[0] >= w[1]), "{}: not descending", c.name);
            let an = norm2(&c.w).max(f64::MIN_POSITIVE);
            let eig = (0..k).map(|i| (vals[i] - c.w[n - 1 - i]).abs()).fold(0.0, f64::max) / an;
            let (res, orth) = residual_orth(&c.a, n, &vals, &v);
            worst.update(&c.name, "top-k", eig, res, orth);
        }
    }
    assert!(iterative >= 6, "the iterative path was exercised only {iterative} times");
    eprintln!(
        "top-k: {iterative} iterative runs; max eigenvalue error {:.1e}·‖A‖, max residual {:.1e}·‖A‖, max ‖VᵀV−I‖ {:.1e}",
        worst.eig, worst.res, worst.orth
    );
}

#[test]
fn fixed_capacity_matches_lapack() {
    let mut worst = 0.0f64;
    for c in cases().iter().filter(|c| c.n <= 64) {
        let mut s = SymEigen::<f64, 64>::new();
        s.compute(&c.a, c.n, &EigenParams::default()).unwrap();
        let an = norm2(&c.w).max(f64::MIN_POSITIVE);
        for (x, y) in s.values().iter().zip(&c.w) {
            worst = worst.max((x - y).abs() / an);
        }
        let mut s32 = SymEigen::<f32, 64>::new();
        let a32: Vec<f32> = c.a.iter().map(|&x| x as f32).collect();
        s32.compute(&a32, c.n, &EigenParams::default()).unwrap();
        for (x, y) in s32.values().iter().zip(&c.w) {
            // f32 rounding of the input alone moves eigenvalues by ~6e-8·‖A‖.
            assert!((*x as f64 - y).abs() <= 1e-5 * an, "f32 {}: {x} vs {y}", c.name);
        }
    }
    assert!(worst <= 1e-10, "{worst:e}");
}

fn sample() -> Case {
    cases().into_iter().find(|c| c.name == "indef_30").unwrap()
}

#[test]
fn bad_inputs_are_errors_not_panics() {
    let c = sample();
    let n = c.n;
    let p = EigenParams::default();
    let mut vals = vec![0.0; n];
    let mut v = vec![0.0; n * n];
    let mut work = vec![0.0; sym_eigen_workspace_len(n)];
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut a = c.a.clone();
        a[n + 3] = bad; // lower triangle
        let m = MatRef::from_col_major(&a, n, n).unwrap();
        assert_eq!(sym_eigen(m, &mut vals, None, &mut work, &p), Err(LinalgError::NonFinite));
        assert_eq!(jacobi_eigen(m, &mut vals, None, &mut work, &p), Err(LinalgError::NonFinite));
        let mut op = DenseSymOp::new(m).unwrap();
        let mut tw = vec![0.0; top_k_workspace_len(n, 3)];
        let mut tv = vec![0.0; n * 3];
        let r = sym_eigen_top_k(&mut op, &mut vals[..3], MatMut::from_col_major(&mut tv, n, 3).unwrap(), &mut tw, &p);
        assert_eq!(r, Err(LinalgError::NonFinite));
    }
    let m = MatRef::from_col_major(&c.a, n, n).unwrap();
    // Mismatched buffers.
    assert_eq!(sym_eigen(m, &mut vals[..n - 1], None, &mut work, &p), Err(LinalgError::DimensionMismatch));
    let mut small = vec![0.0; 4];
    let vm = MatMut::from_col_major(&mut small, 2, 2).unwrap();
    assert_eq!(sym_eigen(m, &mut vals, Some(vm), &mut work, &p), Err(LinalgError::DimensionMismatch));
    let rect = MatRef::from_col_major(&c.a[..n * (n - 1)], n, n - 1).unwrap();
    assert_eq!(sym_eigen(rect, &mut vals, None, &mut work, &p), Err(LinalgError::DimensionMismatch));
    assert_eq!(jacobi_eigen(rect, &mut vals, None, &mut work, &p), Err(LinalgError::DimensionMismatch));
    assert!(DenseSymOp::new(rect).is_err());
    // Short workspace.
    let need = sym_eigen_workspace_len(n);
    let vm = MatMut::from_col_major(&mut v, n, n).unwrap();
    assert_eq!(
        sym_eigen(m, &mut vals, Some(vm), &mut work[..need - 1], &p),
        Err(LinalgError::WorkspaceTooSmall { needed: need, got: need - 1 })
    );
    assert!(matches!(
        jacobi_eigen(m, &mut vals, None, &mut work[..10], &p),
        Err(LinalgError::WorkspaceTooSmall { .. })
    ));
    let mut op = DenseSymOp::new(m).unwrap();
    let mut tv = vec![0.0; n * 3];
    let r =
        sym_eigen_top_k(&mut op, &mut vals[..3], MatMut::from_col_major(&mut tv, n, 3).unwrap(), &mut work[..5], &p);
    assert!(matches!(r, Err(LinalgError::WorkspaceTooSmall { .. })));
    let mut work = vec![0.0; top_k_workspace_len(n, 3)];
    let r = sym_eigen_top_k(&mut op, &mut vals[..3], MatMut::from_col_major(&mut tv, n, 3).unwrap(), &mut work, &p);
    assert!(r.is_ok());
    let r = sym_eigen_top_k(
        &mut op,
        &mut vals[..3],
        MatMut::from_col_major(&mut tv[..2 * n], n, 2).unwrap(),
        &mut work,
        &p,
    );
    assert_eq!(r, Err(LinalgError::DimensionMismatch));
    let mut work = vec![0.0; top_k_workspace_len(n, n)];
    let mut too_many = vec![0.0; n + 1];
    let mut tv = vec![0.0; n * (n + 1)];
    let r = sym_eigen_top_k(&mut op, &mut too_many, MatMut::from_col_major(&mut tv, n, n + 1).unwrap(), &mut work, &p);
    assert_eq!(r, Err(LinalgError::InvalidParameter));
}

#[test]
fn exhausted_iteration_budgets_are_no_convergence() {
    let c = sample();
    let n = c.n;
    let m = MatRef::from_col_major(&c.a, n, n).unwrap();
    let mut vals = vec![0.0; n];
    let mut work = vec![0.0; sym_eigen_workspace_len(n)];
    for it in [0, 1] {
        let p = EigenParams::new(0.0, it);
        assert!(matches!(sym_eigen(m, &mut vals, None, &mut work, &p), Err(LinalgError::NoConvergence { .. })));
        assert!(matches!(jacobi_eigen(m, &mut vals, None, &mut work, &p), Err(LinalgError::NoConvergence { .. })));
    }
    // Top-k on the iterative path: an unreachable tolerance and one cycle.
    let big = cases().into_iter().find(|c| c.name == "indef_200").unwrap();
    let n = big.n;
    let mut op = DenseSymOp::new(MatRef::from_col_major(&big.a, n, n).unwrap()).unwrap();
    let mut tv = vec![0.0; n * 3];
    let mut tw = vec![0.0; top_k_workspace_len(n, 3)];
    let r = sym_eigen_top_k(
        &mut op,
        &mut vals[..3],
        MatMut::from_col_major(&mut tv, n, 3).unwrap(),
        &mut tw,
        &EigenParams::new(1e-300, 1),
    );
    assert!(matches!(r, Err(LinalgError::NoConvergence { .. })), "{r:?}");
}

#[test]
fn strided_outputs_and_row_major_input() {
    let c = cases().into_iter().find(|c| c.name == "spd_13").unwrap();
    let n = c.n;
    // Row-major view of a symmetric matrix is the same matrix; output into a
    // row-major eigenvector view with padding.
    let a = MatRef::from_row_major(&c.a, n, n).unwrap();
    let mut vals = vec![0.0; n];
    let mut buf = vec![0.0; n * (n + 3)];
    let v = MatMut::new(&mut buf, n, n, n + 3, 1).unwrap();
    let mut work = vec![0.0; sym_eigen_workspace_len(n)];
    sym_eigen(a, &mut vals, Some(v), &mut work, &EigenParams::default()).unwrap();
    let mut cm = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..n {
            cm[i + j * n] = buf[i * (n + 3) + j];
        }
    }
    let (res, orth) = residual_orth(&c.a, n, &vals, &cm);
    assert!(res < 1e-12 && orth < 1e-12);
}

fn sym_from(n: usize, xs: &[f64]) -> Vec<f64> {
    let mut a = vec![0.0; n * n];
    let mut t = 0;
    for j in 0..n {
        for i in j..n {
            a[i + j * n] = xs[t];
            a[j + i * n] = xs[t];
            t += 1;
        }
    }
    a
}

fn reconstruction_error(a: &[f64], n: usize, vals: &[f64], v: &[f64]) -> f64 {
    let mut err = 0.0f64;
    let mut an = 0.0f64;
    for j in 0..n {
        for i in 0..n {
            let mut s = 0.0;
            for p in 0..n {
                s += v[i + p * n] * vals[p] * v[j + p * n];
            }
            err = err.max((s - a[i + j * n]).abs());
            an = an.max(a[i + j * n].abs());
        }
    }
    if an == 0.0 {
        err
    } else {
        err / an
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn reconstruction_of_random_symmetric(n in 1usize..24, xs in proptest::collection::vec(-1e3f64..1e3, 300),
                                          rank in 0usize..24) {
        let mut a = sym_from(n, &xs);
        // Every other case deliberately singular: A·Bᵀ-style rank cut.
        if rank < n && rank % 2 == 0 {
            let b = a.clone();
            for j in 0..n { for i in 0..n {
                a[i + j * n] = (0..rank).map(|p| b[i + p * n] * b[j + p * n]).sum::<f64>() * 1e-3;
            } }
        }
        for use_jacobi in [false, true] {
            let mut vals = vec![0.0; n];
            let mut v = vec![0.0; n * n];
            let mut work = vec![0.0; sym_eigen_workspace_len(n)];
            let m = MatRef::from_col_major(&a, n, n).unwrap();
            let vm = MatMut::from_col_major(&mut v, n, n).unwrap();
            if use_jacobi {
                jacobi_eigen(m, &mut vals, Some(vm), &mut work, &EigenParams::default()).unwrap();
            } else {
                sym_eigen(m, &mut vals, Some(vm), &mut work, &EigenParams::default()).unwrap();
            }
            prop_assert!(vals.windows(2).all(|w| w[0] <= w[1]));
            let e = reconstruction_error(&a, n, &vals, &v);
            prop_assert!(e <= 1e-12 * (n as f64), "n={} jacobi={} err={:e}", n, use_jacobi, e);
        }
    }
}
