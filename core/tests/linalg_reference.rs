//! Dense linear algebra against numpy/scipy reference values, plus property
//! tests of reconstructions.
//!
//! The reference outputs are in `fixtures/linalg/linalg.bin`, written by
//! `fixtures/linalg/gen_linalg.py` (numpy 2.4.6, scipy 1.17.1). Inputs are
//! rebuilt here bit-for-bit from the same xorshift64* stream, so only outputs
//! are stored (≈ 270 kB).
//!
//! Tolerances, with ε = f64::EPSILON:
//! - gemm/syrk, entrywise: `|C − C_ref| ≤ 2·(k+2)·ε·(|α|·(|A|·|B|)ᵢⱼ + |β|·|C₀ᵢⱼ|)`:
//!   γ_k for the k-term sum plus the two scalings (Higham 2nd ed. §3.5),
//!   doubled because numpy's value carries the same kind of error;
//! - Cholesky factor: `‖L − L_ref‖_F ≤ 2·n·ε·κ₂(A)·‖L_ref‖_F` (backward error
//!   γ_{n+1}, amplified at most by κ₂(A); both sides err);
//! - solves: `‖X − X_ref‖_F ≤ 4·n·ε·κ₂(A)·‖X_ref‖_F` (backward-stable solve,
//!   forward error ≤ κ·backward error; factor 4 for the reference's own error
//!   and Bunch–Kaufman's small growth); κ₂(A) is numpy's `cond(A)`, stored.
//! - residuals in property tests: `‖A·x − b‖∞ ≤ c·n·ε·‖A‖∞·‖x‖∞` with the
//!   constant given at each test.

use proptest::prelude::*;
use ranklet_core::linalg::{
    blas::{gemm, gemm_with_workspace, gemm_workspace_len, gemv, syrk},
    cg::{cg_solve, CgParams},
    chol::{cholesky_in_place, cholesky_solve_in_place, solve_lower_in_place, solve_upper_in_place},
    ldlt::{ldlt_factor, ldlt_workspace_len, sym_indefinite_solve, sym_indefinite_solve_workspace_len},
};
use ranklet_core::{LinalgError, MatMut, MatRef};
use std::collections::HashMap;

const EPS: f64 = f64::EPSILON;

/// xorshift64*, identical to `Rng` in gen_linalg.py.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next_u64(&mut self) -> u64 {
        let mut s = self.0;
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        self.0 = s;
        s.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * 2f64.powi(-52) - 1.0
    }
    fn int_in(&mut self, lo: i64, hi: i64) -> f64 {
        (lo + ((self.next_u64() >> 33) % (hi - lo + 1) as u64) as i64) as f64
    }
}

/// Column-major `rows × cols` of uniforms, as `uniform_colmajor` in Python.
fn uniform_colmajor(seed: u64, rows: usize, cols: usize) -> Vec<f64> {
    let mut r = Rng::new(seed);
    (0..rows * cols).map(|_| r.uniform()).collect()
}

fn spd_int(seed: u64, n: usize) -> Vec<f64> {
    let mut r = Rng::new(seed);
    let m: Vec<f64> = (0..n * n).map(|_| r.int_in(-4, 4)).collect();
    let mut a = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..n {
            let s: f64 = (0..n).map(|p| m[i + n * p] * m[j + n * p]).sum();
            a[i + n * j] = s + if i == j { n as f64 } else { 0.0 };
        }
    }
    a
}

fn sym_int(seed: u64, n: usize, zero_diag: bool) -> Vec<f64> {
    let mut r = Rng::new(seed);
    let mut a = vec![0.0; n * n];
    for j in 0..n {
        for i in j..n {
            let v = r.int_in(-9, 9);
            a[i + n * j] = v;
            a[j + n * i] = v;
        }
    }
    if zero_diag {
        (0..n).for_each(|i| a[i * (n + 1)] = 0.0);
    }
    if n == 2 {
        a = vec![0.0, 1.0, 1.0, 0.0];
    }
    if n == 3 {
        a = vec![0.0, 2.0, 1.0, 2.0, 0.0, 3.0, 1.0, 3.0, 0.0];
    }
    a
}

fn int_rhs(seed: u64, n: usize, m: usize) -> Vec<f64> {
    let mut r = Rng::new(seed);
    (0..n * m).map(|_| r.int_in(-5, 5)).collect()
}

struct Fixture {
    rows: usize,
    cols: usize,
    data: Vec<f64>,
}

fn fixtures() -> HashMap<String, Fixture> {
    let bytes: &[u8] = include_bytes!("fixtures/linalg/linalg.bin");
    let mut out = HashMap::new();
    let mut pos = 0;
    let u32_at = |p: usize| u32::from_le_bytes(bytes[p..p + 4].try_into().unwrap()) as usize;
    while pos < bytes.len() {
        let len = u32_at(pos);
        let name = std::str::from_utf8(&bytes[pos + 4..pos + 4 + len]).unwrap().to_string();
        pos += 4 + len;
        let (rows, cols) = (u32_at(pos), u32_at(pos + 4));
        pos += 8;
        let data = (0..rows * cols)
            .map(|i| f64::from_le_bytes(bytes[pos + 8 * i..pos + 8 * i + 8].try_into().unwrap()))
            .collect();
        pos += 8 * rows * cols;
        out.insert(name, Fixture { rows, cols, data });
    }
    out
}

fn get<'a>(f: &'a HashMap<String, Fixture>, name: &str) -> &'a Fixture {
    f.get(name).unwrap_or_else(|| panic!("fixture {name} missing"))
}

fn fro(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    fro(&d) / fro(b)
}

#[test]
fn gemm_matches_numpy() {
    let fx = fixtures();
    let cases = [
        (1, 1, 1, false, false, 0),
        (7, 3, 5, false, false, 0),
        (7, 3, 5, true, true, 2),
        (129, 65, 257, false, false, 0),
        (129, 65, 257, true, false, 3),
        (33, 200, 17, false, true, 1),
    ];
    for (m, n, k, ta, tb, pad) in cases {
        let (ar, ac) = if ta { (k, m) } else { (m, k) };
        let (br, bc) = if tb { (n, k) } else { (k, n) };
        let abuf = uniform_colmajor(1000 + m as u64, ar + pad, ac);
        let bbuf = uniform_colmajor(2000 + n as u64, br + pad, bc);
        let c0 = uniform_colmajor(3000 + k as u64, m, n);
        let a = MatRef::new(&abuf, ar, ac, 1, ar + pad).unwrap();
        let b = MatRef::new(&bbuf, br, bc, 1, br + pad).unwrap();
        let (a, b) = (if ta { a.t() } else { a }, if tb { b.t() } else { b });
        let want = get(&fx, &format!("gemm_{m}x{n}x{k}_t{}{}_p{pad}", ta as u8, tb as u8));
        assert_eq!((want.rows, want.cols), (m, n));
        // Both entry points: stack panels and caller workspace.
        for use_ws in [false, true] {
            let mut c = c0.clone();
            let cv = MatMut::from_col_major(&mut c, m, n).unwrap();
            if use_ws {
                let mut w = vec![0.0; gemm_workspace_len(m, n, k)];
                gemm_with_workspace(0.75, a, b, -0.5, cv, &mut w).unwrap();
            } else {
                gemm(0.75, a, b, -0.5, cv).unwrap();
            }
            let mut worst = 0.0f64;
            for j in 0..n {
                for i in 0..m {
                    let abs: f64 = (0..k).map(|p| (a.at(i, p) * b.at(p, j)).abs()).sum();
                    let bound = 2.0 * (k as f64 + 2.0) * EPS * (0.75 * abs + 0.5 * c0[i + m * j].abs());
                    let err = (c[i + m * j] - want.data[i + m * j]).abs();
                    assert!(err <= bound, "gemm {m}x{n}x{k} ({i},{j}): err {err:e} > {bound:e}");
                    worst = worst.max(err / bound);
                }
            }
            println!("gemm {m}x{n}x{k} ta={ta} tb={tb} ws={use_ws}: max err/bound = {worst:.3}");
        }
    }
}

#[test]
fn syrk_matches_numpy() {
    let fx = fixtures();
    for (n, k) in [(1, 1), (7, 3), (65, 129)] {
        let abuf = uniform_colmajor(4000 + n as u64, n, k);
        let a = MatRef::from_col_major(&abuf, n, k).unwrap();
        let mut c = vec![f64::NAN; n * n];
        syrk(1.0, a, 0.0, MatMut::from_col_major(&mut c, n, n).unwrap()).unwrap();
        let want = get(&fx, &format!("syrk_{n}x{k}"));
        for j in 0..n {
            for i in 0..n {
                assert_eq!(c[i + n * j], c[j + n * i]);
                let abs: f64 = (0..k).map(|p| (a.at(i, p) * a.at(j, p)).abs()).sum();
                let bound = 2.0 * (k as f64 + 2.0) * EPS * abs;
                assert!((c[i + n * j] - want.data[i + n * j]).abs() <= bound, "syrk {n}x{k} ({i},{j})");
            }
        }
    }
}

#[test]
fn cholesky_and_solves_match_scipy() {
    let fx = fixtures();
    for n in [1usize, 5, 64, 200] {
        let a0 = spd_int(5000 + n as u64, n);
        let cond = get(&fx, &format!("chol_cond_{n}")).data[0];
        let mut l = a0.clone();
        cholesky_in_place(MatMut::from_col_major(&mut l, n, n).unwrap()).unwrap();
        if let Some(want) = fx.get(&format!("chol_L_{n}")) {
            let r = rel_diff(&l, &want.data);
            println!("cholesky n={n}: ‖L − L_scipy‖_F/‖L_scipy‖_F = {r:e}, bound {:e}", 2.0 * n as f64 * EPS * cond);
            assert!(r <= 2.0 * n as f64 * EPS * cond);
        }
        let mut x = int_rhs(6000 + n as u64, n, 3);
        let lv = MatRef::from_col_major(&l, n, n).unwrap();
        cholesky_solve_in_place(lv, MatMut::from_col_major(&mut x, n, 3).unwrap()).unwrap();
        let want = get(&fx, &format!("chol_X_{n}"));
        let r = rel_diff(&x, &want.data);
        println!("cho_solve n={n}: rel err {r:e} (κ = {cond:.1})");
        assert!(r <= 4.0 * n as f64 * EPS * cond);

        // The two triangular solves separately, through solve_upper on Lᵀ.
        let mut lt = vec![0.0; n * n];
        for j in 0..n {
            for i in 0..n {
                lt[j + n * i] = l[i + n * j];
            }
        }
        let mut y = int_rhs(6000 + n as u64, n, 3);
        solve_lower_in_place(lv, MatMut::from_col_major(&mut y, n, 3).unwrap()).unwrap();
        solve_upper_in_place(MatRef::from_col_major(&lt, n, n).unwrap(), MatMut::from_col_major(&mut y, n, 3).unwrap())
            .unwrap();
        assert!(rel_diff(&y, &want.data) <= 4.0 * n as f64 * EPS * cond);
    }
}

#[test]
fn ldlt_solve_matches_numpy() {
    let fx = fixtures();
    for (n, zd) in [(2, 1), (3, 1), (10, 0), (10, 1), (57, 0), (57, 1), (200, 0), (200, 1)] {
        let a = sym_int(7000 + n as u64 + 100 * zd as u64, n, zd == 1);
        let cond = get(&fx, &format!("ldlt_cond_{n}_z{zd}")).data[0];
        let mut x = int_rhs(8000 + n as u64, n, 2);
        let mut w = vec![0.0; sym_indefinite_solve_workspace_len(n)];
        let av = MatRef::from_col_major(&a, n, n).unwrap();
        sym_indefinite_solve(av, MatMut::from_col_major(&mut x, n, 2).unwrap(), &mut w).unwrap();
        let want = get(&fx, &format!("ldlt_X_{n}_z{zd}"));
        let r = rel_diff(&x, &want.data);
        println!("ldlt n={n} zero_diag={zd}: rel err {r:e} (κ = {cond:.1})");
        assert!(r <= 4.0 * n as f64 * EPS * cond, "n={n}: {r:e}");
        if zd == 1 {
            // A zero diagonal forces 2×2 pivots somewhere.
            let f = ldlt_factor(av, &mut w).unwrap();
            assert!(f.num_2x2_blocks() >= 1);
        }
    }
}

#[test]
fn errors_on_bad_input() {
    // NotPositiveDefinite on an indefinite matrix (eigenvalues of both signs).
    let mut a = sym_int(7010, 10, false);
    assert!(matches!(
        cholesky_in_place(MatMut::from_col_major(&mut a, 10, 10).unwrap()),
        Err(LinalgError::NotPositiveDefinite { .. })
    ));
    // NonFinite on NaN, before anything is written.
    let mut a = spd_int(5005, 5);
    a[3] = f64::NAN;
    let before = a.clone();
    assert_eq!(cholesky_in_place(MatMut::from_col_major(&mut a, 5, 5).unwrap()), Err(LinalgError::NonFinite));
    assert!(a.iter().zip(&before).all(|(x, y)| x.to_bits() == y.to_bits()));
    let mut w = vec![0.0; ldlt_workspace_len(5)];
    let mut b = vec![1.0; 5];
    assert_eq!(
        sym_indefinite_solve(
            MatRef::from_col_major(&a, 5, 5).unwrap(),
            MatMut::from_col_major(&mut b, 5, 1).unwrap(),
            &mut w
        ),
        Err(LinalgError::NonFinite)
    );
    // DimensionMismatch and WorkspaceTooSmall.
    let a = spd_int(5005, 5);
    let av = MatRef::from_col_major(&a, 5, 5).unwrap();
    let mut b4 = vec![1.0; 4];
    assert_eq!(
        sym_indefinite_solve(av, MatMut::from_col_major(&mut b4, 4, 1).unwrap(), &mut w),
        Err(LinalgError::DimensionMismatch)
    );
    assert_eq!(
        cholesky_solve_in_place(av, MatMut::from_col_major(&mut b4, 4, 1).unwrap()),
        Err(LinalgError::DimensionMismatch)
    );
    assert_eq!(
        sym_indefinite_solve(av, MatMut::from_col_major(&mut b, 5, 1).unwrap(), &mut w[..29]),
        Err(LinalgError::WorkspaceTooSmall { needed: 30, got: 29 })
    );
    let mut c = vec![0.0; 4];
    assert_eq!(
        gemm_with_workspace(1.0, av, av, 0.0, MatMut::from_col_major(&mut c, 2, 2).unwrap(), &mut []),
        Err(LinalgError::DimensionMismatch)
    );
    let mut c = vec![0.0; 25];
    assert!(matches!(
        gemm_with_workspace(1.0, av, av, 0.0, MatMut::from_col_major(&mut c, 5, 5).unwrap(), &mut [0.0; 3]),
        Err(LinalgError::WorkspaceTooSmall { got: 3, .. })
    ));
}

#[test]
fn cg_matches_direct_solve_and_stops_by_iterations() {
    let fx = fixtures();
    let n = 200;
    let a = spd_int(5200, n);
    let cond = get(&fx, "chol_cond_200").data[0];
    let want = &get(&fx, "chol_X_200").data[..n]; // first right-hand side
    let b = &int_rhs(6200, n, 3)[..n];
    let av = MatRef::from_col_major(&a, n, n).unwrap();
    let matvec = |v: &[f64], out: &mut [f64]| gemv(1.0, av, v, 0.0, out);
    let mut w = vec![0.0; 3 * n];
    let mut x = vec![0.0; n];
    let info = cg_solve(matvec, b, &mut x, &mut w, &CgParams::new(1000, 1e-12)).unwrap();
    let r = rel_diff(&x, want);
    println!("cg n=200: {info:?}, rel err vs cho_solve {r:e} (κ = {cond:.1})");
    assert!(info.converged);
    // ‖x − x*‖/‖x*‖ ≤ κ·‖r‖/‖b‖ plus the recursive-residual drift (~n·ε·κ).
    assert!(r <= cond * (1e-12 + 4.0 * n as f64 * EPS));

    // Stopping by iterations is Ok, not an error, and earlier stops are
    // farther from the solution in the A-norm (CG minimises it).
    let a_err = |x: &[f64]| {
        let e: Vec<f64> = x.iter().zip(want).map(|(p, q)| p - q).collect();
        let mut ae = vec![0.0; n];
        gemv(1.0, av, &e, 0.0, &mut ae).unwrap();
        e.iter().zip(&ae).map(|(p, q)| p * q).sum::<f64>().sqrt()
    };
    let mut prev = f64::INFINITY;
    for iters in [1, 3, 6, 12] {
        let mut x = vec![0.0; n];
        let info = cg_solve(matvec, b, &mut x, &mut w, &CgParams::new(iters, 1e-12)).unwrap();
        assert_eq!((info.iterations, info.converged), (iters, false));
        let e = a_err(&x);
        assert!(e < prev, "A-norm error not decreasing at {iters}");
        prev = e;
    }
}

fn arb_matrix(max_n: usize) -> impl Strategy<Value = (usize, Vec<f64>)> {
    (1..=max_n).prop_flat_map(|n| (Just(n), proptest::collection::vec(-1.0f64..1.0, n * n)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// L·Lᵀ ≈ A for A = M·Mᵀ + 0.1·I: `|L·Lᵀ − A|ᵢⱼ ≤ 2·γ_{n+1}·(|L|·|Lᵀ|)ᵢⱼ`
    /// (Higham Thm. 10.3; (|L||Lᵀ|)ᵢⱼ ≤ √(aᵢᵢ·aⱼⱼ) by Cauchy–Schwarz).
    #[test]
    fn cholesky_reconstructs((n, m) in arb_matrix(40)) {
        let mut a = vec![0.0; n * n];
        syrk(1.0, MatRef::from_col_major(&m, n, n).unwrap(), 0.0, MatMut::from_col_major(&mut a, n, n).unwrap()).unwrap();
        (0..n).for_each(|i| a[i * (n + 1)] += 0.1);
        let mut l = a.clone();
        cholesky_in_place(MatMut::from_col_major(&mut l, n, n).unwrap()).unwrap();
        let gamma = (n as f64 + 1.0) * EPS / (1.0 - (n as f64 + 1.0) * EPS);
        for j in 0..n {
            for i in j..n {
                let s: f64 = (0..=j).map(|p| l[i + n * p] * l[j + n * p]).sum();
                let bound = 2.0 * gamma * (a[i * (n + 1)] * a[j * (n + 1)]).sqrt();
                prop_assert!((s - a[i + n * j]).abs() <= bound);
            }
        }
    }

    /// A·x ≈ b for random symmetric (indefinite) A via Bunch–Kaufman:
    /// `‖A·x − b‖∞ ≤ 20·n·ε·(‖A‖∞·‖x‖∞ + ‖b‖∞)`; the 20 covers the
    /// (small, observed) growth factor of random matrices.
    #[test]
    fn ldlt_solves((n, m) in arb_matrix(30), zero_diag in any::<bool>()) {
        let mut a = m.clone();
        for j in 0..n {
            for i in 0..j {
                a[i + n * j] = a[j + n * i];
            }
            if zero_diag {
                a[j * (n + 1)] = 0.0;
            }
        }
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).cos()).collect();
        let mut x = b.clone();
        let mut w = vec![0.0; sym_indefinite_solve_workspace_len(n)];
        let av = MatRef::from_col_major(&a, n, n).unwrap();
        match sym_indefinite_solve(av, MatMut::from_col_major(&mut x, n, 1).unwrap(), &mut w) {
            Ok(()) => {
                let mut r = b.clone();
                gemv(1.0, av, &x, -1.0, &mut r).unwrap();
                let norm_a = (0..n).map(|i| (0..n).map(|j| a[i + n * j].abs()).sum::<f64>()).fold(0.0, f64::max);
                let xn = x.iter().fold(0.0f64, |s, v| s.max(v.abs()));
                let rn = r.iter().fold(0.0f64, |s, v| s.max(v.abs()));
                prop_assert!(rn <= 20.0 * n as f64 * EPS * (norm_a * xn + 1.0), "residual {rn:e}");
            }
            // Exactly singular draws (e.g. n = 1 with a zeroed diagonal).
            Err(LinalgError::Singular { .. }) => {}
            Err(e) => prop_assert!(false, "{e:?}"),
        }
    }

    /// Blocked gemm against the triple loop, with transposes and padding.
    #[test]
    fn gemm_matches_triple_loop(m in 1usize..70, n in 1usize..70, k in 1usize..300, ta: bool, tb: bool, seed: u64) {
        let (ar, ac) = if ta { (k, m) } else { (m, k) };
        let (br, bc) = if tb { (n, k) } else { (k, n) };
        let abuf = uniform_colmajor(seed, ar + 1, ac);
        let bbuf = uniform_colmajor(seed ^ 1, br + 1, bc);
        let a = MatRef::new(&abuf, ar, ac, 1, ar + 1).unwrap();
        let b = MatRef::new(&bbuf, br, bc, 1, br + 1).unwrap();
        let (a, b) = (if ta { a.t() } else { a }, if tb { b.t() } else { b });
        let mut c = vec![0.0; m * n];
        gemm(1.0, a, b, 0.0, MatMut::from_col_major(&mut c, m, n).unwrap()).unwrap();
        for j in 0..n {
            for i in 0..m {
                let s: f64 = (0..k).map(|p| a.at(i, p) * b.at(p, j)).sum();
                let abs: f64 = (0..k).map(|p| (a.at(i, p) * b.at(p, j)).abs()).sum();
                prop_assert!((c[i + m * j] - s).abs() <= 2.0 * (k as f64) * EPS * abs);
            }
        }
    }
}
