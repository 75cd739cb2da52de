//! The faer backend against closed forms, and against core's portable backend
//! on the same inputs: the two must agree to ~1e-9 relative (DESIGN.md).
//!
//! Eigenvectors are compared through residuals, reconstructions and
//! |vᵢᵀwᵢ| ≈ 1 for well-separated eigenvalues (their signs are arbitrary).

use ranklet::faer_backend::FaerBackend;
use ranklet_core::backend::{Backend, Portable};
use ranklet_core::{LinalgError, MatMut, MatRef};

// ---------------------------------------------------------------------------
// Helpers.

/// splitmix64: reproducible inputs without a `rand` dependency.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0
    }
}

/// Column-major `m × n` matrix.
#[derive(Clone, Debug)]
struct M {
    m: usize,
    n: usize,
    d: Vec<f64>,
}

impl M {
    fn zeros(m: usize, n: usize) -> Self {
        Self { m, n, d: vec![0.0; m * n] }
    }
    fn random(m: usize, n: usize, rng: &mut Rng) -> Self {
        Self { m, n, d: (0..m * n).map(|_| rng.uniform()).collect() }
    }
    fn sym_random(n: usize, rng: &mut Rng) -> Self {
        let mut a = Self::random(n, n, rng);
        for j in 0..n {
            for i in 0..j {
                let v = a.d[i + j * n];
                a.d[j + i * n] = v;
            }
        }
        a
    }
    fn get(&self, i: usize, j: usize) -> f64 {
        self.d[i + j * self.m]
    }
    fn r(&self) -> MatRef<'_, f64> {
        MatRef::from_col_major(&self.d, self.m, self.n).unwrap()
    }
    fn w(&mut self) -> MatMut<'_, f64> {
        MatMut::from_col_major(&mut self.d, self.m, self.n).unwrap()
    }
    fn max_abs(&self) -> f64 {
        self.d.iter().fold(0.0, |a, &x| a.max(x.abs()))
    }
    fn diff_max(&self, o: &M) -> f64 {
        assert_eq!((self.m, self.n), (o.m, o.n));
        self.d.iter().zip(&o.d).fold(0.0, |a, (x, y)| a.max((x - y).abs()))
    }
}

/// `A·B` by the textbook triple loop (the reference for gemm/syrk).
fn naive_mul(a: &M, b: &M) -> M {
    let mut c = M::zeros(a.m, b.n);
    for j in 0..b.n {
        for l in 0..a.n {
            let blj = b.get(l, j);
            for i in 0..a.m {
                c.d[i + j * a.m] += a.get(i, l) * blj;
            }
        }
    }
    c
}

fn transpose(a: &M) -> M {
    let mut t = M::zeros(a.n, a.m);
    for j in 0..a.n {
        for i in 0..a.m {
            t.d[j + i * a.n] = a.get(i, j);
        }
    }
    t
}

/// RBF kernel exp(−γ‖xᵢ−xⱼ‖²) over `n` points in R^`dim`; `dup` extra
/// copies of earlier points make it exactly rank-deficient.
fn rbf(n: usize, dim: usize, gamma: f64, dup: usize, rng: &mut Rng) -> M {
    let distinct = n - dup;
    let mut x: Vec<Vec<f64>> = (0..distinct).map(|_| (0..dim).map(|_| rng.uniform()).collect()).collect();
    for i in 0..dup {
        x.push(x[i % distinct].clone());
    }
    let mut k = M::zeros(n, n);
    for j in 0..n {
        for i in 0..n {
            let d2: f64 = x[i].iter().zip(&x[j]).map(|(a, b)| (a - b) * (a - b)).sum();
            k.d[i + j * n] = (-gamma * d2).exp();
        }
    }
    k
}

fn portable_work(n: usize) -> Vec<f64> {
    vec![0.0; Portable::workspace_len(n)]
}

/// Full eigendecomposition with either backend.
fn eig(be: &mut dyn Backend, a: &M) -> (Vec<f64>, M) {
    let n = a.n;
    let mut vals = vec![0.0; n];
    let mut v = M::zeros(n, n);
    be.sym_eigen(a.r(), &mut vals, v.w()).unwrap();
    (vals, v)
}

fn top_k(be: &mut dyn Backend, a: &M, k: usize) -> (Vec<f64>, M) {
    let n = a.n;
    let mut vals = vec![0.0; k];
    let mut v = M::zeros(n, k);
    be.sym_eigen_top_k(a.r(), &mut vals, v.w()).unwrap();
    (vals, v)
}

/// max over columns of ‖A·vᵢ − λᵢ·vᵢ‖∞.
fn residual(a: &M, vals: &[f64], v: &M) -> f64 {
    let av = naive_mul(a, v);
    let mut r: f64 = 0.0;
    for (j, &l) in vals.iter().enumerate() {
        for i in 0..a.n {
            r = r.max((av.get(i, j) - l * v.get(i, j)).abs());
        }
    }
    r
}

/// max |VᵀV − I|.
fn orth_err(v: &M) -> f64 {
    let g = naive_mul(&transpose(v), v);
    let mut e: f64 = 0.0;
    for j in 0..g.n {
        for i in 0..g.m {
            e = e.max((g.get(i, j) - if i == j { 1.0 } else { 0.0 }).abs());
        }
    }
    e
}

/// For every eigenvalue separated from its neighbours by more than
/// `gap_min`, |vᵢᵀwᵢ| must be ≈ 1.
fn check_vectors_match(vals: &[f64], v: &M, w: &M, gap_min: f64, tol: f64, what: &str) {
    let k = vals.len();
    for j in 0..k {
        let gap = (0..k).filter(|&l| l != j).map(|l| (vals[l] - vals[j]).abs()).fold(f64::INFINITY, f64::min);
        if gap <= gap_min {
            continue;
        }
        let dot: f64 = (0..v.m).map(|i| v.get(i, j) * w.get(i, j)).sum();
        assert!((dot.abs() - 1.0).abs() < tol, "{what}: |v{j}·w{j}| = {} (gap {gap:e})", dot.abs());
    }
}

const SIZES: &[usize] = &[1, 2, 3, 4, 5, 7, 10, 16, 31, 50, 64, 100, 127, 200, 300];

// ---------------------------------------------------------------------------
// faer against closed forms.

#[test]
fn faer_eigen_closed_forms() {
    let mut f = FaerBackend::new();
    // [[2, 1], [1, 2]]: 1, 3.
    let a = M { m: 2, n: 2, d: vec![2.0, 1.0, 1.0, 2.0] };
    let (vals, v) = eig(&mut f, &a);
    assert!((vals[0] - 1.0).abs() < 1e-15 && (vals[1] - 3.0).abs() < 1e-15, "{vals:?}");
    assert!(residual(&a, &vals, &v) < 1e-14);

    // 1 × 1.
    let a = M { m: 1, n: 1, d: vec![-4.5] };
    let (vals, v) = eig(&mut f, &a);
    assert_eq!(vals, vec![-4.5]);
    assert!((v.d[0].abs() - 1.0).abs() < 1e-15);

    // tridiag(−1, 2, −1): λ_k = 2 − 2cos(kπ/(n+1)), ascending.
    for n in [3usize, 10, 57, 200] {
        let mut a = M::zeros(n, n);
        for i in 0..n {
            a.d[i + i * n] = 2.0;
            if i + 1 < n {
                a.d[i + 1 + i * n] = -1.0;
                a.d[i + (i + 1) * n] = -1.0;
            }
        }
        let (vals, v) = eig(&mut f, &a);
        for (k, &l) in vals.iter().enumerate() {
            let exact = 2.0 - 2.0 * ((k + 1) as f64 * std::f64::consts::PI / (n + 1) as f64).cos();
            assert!((l - exact).abs() < 1e-13, "n={n} k={k}: {l} vs {exact}");
        }
        assert!(residual(&a, &vals, &v) < 1e-13);
        assert!(orth_err(&v) < 1e-13);
        // Top 3, descending. At n = 200 the top eigenvalues are clustered
        // (relative gaps ~1e-4) and core's Lanczos solver may run out of
        // cycles; the faer backend then falls back to its full decomposition.
        let (tv, tw) = top_k(&mut f, &a, 3);
        for (i, &l) in tv.iter().enumerate() {
            assert!((l - vals[n - 1 - i]).abs() < 1e-12, "n={n} top {i}: {l} vs {}", vals[n - 1 - i]);
        }
        assert!(residual(&a, &tv, &tw) < 1e-11);
    }

    // Zero matrix: all eigenvalues 0, orthonormal vectors.
    let a = M::zeros(6, 6);
    let (vals, v) = eig(&mut f, &a);
    assert!(vals.iter().all(|&x| x == 0.0));
    assert!(orth_err(&v) < 1e-15);
}

#[test]
fn faer_reads_only_the_lower_triangle() {
    let mut rng = Rng(7);
    let n = 40;
    let a = M::sym_random(n, &mut rng);
    let mut garbage = a.clone();
    for j in 0..n {
        for i in 0..j {
            garbage.d[i + j * n] = f64::NAN;
        }
    }
    let mut f = FaerBackend::new();
    let (v1, _) = eig(&mut f, &a);
    let (v2, w2) = eig(&mut f, &garbage);
    for (x, y) in v1.iter().zip(&v2) {
        assert!((x - y).abs() < 1e-12);
    }
    assert!(residual(&a, &v2, &w2) < 1e-12);
    let (t1, _) = top_k(&mut f, &a, 3);
    let (t2, _) = top_k(&mut f, &garbage, 3);
    for (x, y) in t1.iter().zip(&t2) {
        assert!((x - y).abs() < 1e-12);
    }

    // Cholesky and the indefinite solve read only the lower triangle too.
    let b = M::random(n, n, &mut rng);
    let mut spd = naive_mul(&b, &transpose(&b));
    for i in 0..n {
        spd.d[i + i * n] += n as f64;
    }
    let mut spd_g = spd.clone();
    for j in 0..n {
        for i in 0..j {
            spd_g.d[i + j * n] = f64::NAN;
        }
    }
    let mut l1 = spd.clone();
    f.cholesky_in_place(l1.w()).unwrap();
    let mut l2 = spd_g.clone();
    f.cholesky_in_place(l2.w()).unwrap();
    assert!(l1.diff_max(&l2) < 1e-13);
    let rhs = M::random(n, 2, &mut rng);
    let mut x = rhs.clone();
    f.sym_solve_in_place(garbage.r(), x.w()).unwrap();
    let ax = naive_mul(&a, &x);
    assert!(ax.diff_max(&rhs) < 1e-8, "{}", ax.diff_max(&rhs));
}

#[test]
fn faer_cholesky_and_solves_closed_forms() {
    let mut f = FaerBackend::new();
    // [[4, 2], [2, 3]] = L·Lᵀ with L = [[2, 0], [1, √2]].
    let mut a = M { m: 2, n: 2, d: vec![4.0, 2.0, 2.0, 3.0] };
    f.cholesky_in_place(a.w()).unwrap();
    let expect = [2.0, 1.0, 0.0, 2f64.sqrt()];
    for (x, y) in a.d.iter().zip(expect) {
        assert!((x - y).abs() < 1e-15, "{:?}", a.d);
    }
    // Solve (L·Lᵀ) x = [4+2, 2+3]ᵀ → x = [1, 1].
    let mut b = M { m: 2, n: 1, d: vec![6.0, 5.0] };
    f.cholesky_solve_in_place(a.r(), b.w()).unwrap();
    assert!((b.d[0] - 1.0).abs() < 1e-15 && (b.d[1] - 1.0).abs() < 1e-15, "{:?}", b.d);

    // Indefinite with a zero diagonal (needs a 2×2 pivot): [[0, 1], [1, 0]].
    let a = M { m: 2, n: 2, d: vec![0.0, 1.0, 1.0, 0.0] };
    let mut b = M { m: 2, n: 1, d: vec![3.0, 7.0] };
    f.sym_solve_in_place(a.r(), b.w()).unwrap();
    assert!((b.d[0] - 7.0).abs() < 1e-15 && (b.d[1] - 3.0).abs() < 1e-15, "{:?}", b.d);
}

#[test]
fn faer_errors_never_panic() {
    let mut f = FaerBackend::new();
    let nan = M { m: 2, n: 2, d: vec![1.0, f64::NAN, 0.0, 1.0] };
    let mut vals = [0.0; 2];
    let mut v = M::zeros(2, 2);
    assert_eq!(f.sym_eigen(nan.r(), &mut vals, v.w()), Err(LinalgError::NonFinite));
    let mut v1 = M::zeros(2, 1);
    assert_eq!(f.sym_eigen_top_k(nan.r(), &mut vals[..1], v1.w()), Err(LinalgError::NonFinite));
    let mut c = nan.clone();
    assert_eq!(f.cholesky_in_place(c.w()), Err(LinalgError::NonFinite));
    let mut b = M::zeros(2, 1);
    assert_eq!(f.sym_solve_in_place(nan.r(), b.w()), Err(LinalgError::NonFinite));
    let id = M { m: 2, n: 2, d: vec![1.0, 0.0, 0.0, 1.0] };
    let mut out = M::zeros(2, 2);
    assert_eq!(f.gemm(1.0, nan.r(), id.r(), 0.0, out.w()), Err(LinalgError::NonFinite));
    let mut binf = M { m: 2, n: 1, d: vec![f64::INFINITY, 0.0] };
    assert_eq!(f.cholesky_solve_in_place(id.r(), binf.w()), Err(LinalgError::NonFinite));

    // Not positive definite: [[1, 2], [2, 1]] fails at pivot 1.
    let mut a = M { m: 2, n: 2, d: vec![1.0, 2.0, 2.0, 1.0] };
    assert_eq!(f.cholesky_in_place(a.w()), Err(LinalgError::NotPositiveDefinite { index: 1 }));
    let mut a = M { m: 2, n: 2, d: vec![-1.0, 0.0, 0.0, 1.0] };
    assert_eq!(f.cholesky_in_place(a.w()), Err(LinalgError::NotPositiveDefinite { index: 0 }));

    // Exactly singular symmetric system.
    let s = M { m: 2, n: 2, d: vec![1.0, 1.0, 1.0, 1.0] };
    let mut b = M { m: 2, n: 1, d: vec![1.0, 2.0] };
    assert!(matches!(f.sym_solve_in_place(s.r(), b.w()), Err(LinalgError::Singular { .. })));
    let z = M::zeros(3, 3);
    let mut b = M::zeros(3, 1);
    assert!(matches!(f.sym_solve_in_place(z.r(), b.w()), Err(LinalgError::Singular { .. })));

    // Shapes.
    let rect = M::zeros(2, 3);
    assert_eq!(f.sym_eigen(rect.r(), &mut vals, v.w()), Err(LinalgError::DimensionMismatch));
    let mut vals3 = [0.0; 3];
    assert_eq!(f.sym_eigen(id.r(), &mut vals3, v.w()), Err(LinalgError::DimensionMismatch));
    let mut v23 = M::zeros(2, 3);
    assert_eq!(f.sym_eigen_top_k(id.r(), &mut vals3, v23.w()), Err(LinalgError::InvalidParameter));
    assert_eq!(f.sym_eigen_top_k(id.r(), &mut vals[..1], v.w()), Err(LinalgError::DimensionMismatch));
    let mut out = M::zeros(2, 2);
    assert_eq!(f.gemm(1.0, rect.r(), id.r(), 0.0, out.w()), Err(LinalgError::DimensionMismatch));
    assert_eq!(f.syrk(1.0, rect.r(), 0.0, M::zeros(3, 3).w()), Err(LinalgError::DimensionMismatch));
    let mut r = rect.clone();
    assert_eq!(f.cholesky_in_place(r.w()), Err(LinalgError::DimensionMismatch));
    let mut b3 = M::zeros(3, 1);
    assert_eq!(f.cholesky_solve_in_place(id.r(), b3.w()), Err(LinalgError::DimensionMismatch));
    assert_eq!(f.sym_solve_in_place(id.r(), b3.w()), Err(LinalgError::DimensionMismatch));

    // Empty problems are fine.
    let e = M::zeros(0, 0);
    let mut ev = M::zeros(0, 0);
    assert_eq!(f.sym_eigen(e.r(), &mut [], ev.w()), Ok(()));
    let mut ee = e.clone();
    assert_eq!(f.cholesky_in_place(ee.w()), Ok(()));
    assert_eq!(f.sym_eigen_top_k(id.r(), &mut [], M::zeros(2, 0).w()), Ok(()));
}

#[test]
fn faer_accepts_any_stride() {
    let mut rng = Rng(11);
    let n = 23;
    let a = M::sym_random(n, &mut rng);
    let mut f = FaerBackend::new();
    let (vals, _) = eig(&mut f, &a);

    // A row-major copy with a padded leading dimension, and a view with no
    // unit stride at all (every other element of a bigger buffer).
    let ld = n + 3;
    let mut rm = vec![0.0; n * ld];
    let mut odd = vec![0.0; 2 * n * n];
    for i in 0..n {
        for j in 0..n {
            rm[i * ld + j] = a.get(i, j);
            odd[2 * i + 2 * n * j] = a.get(i, j);
        }
    }
    for view in [MatRef::new(&rm, n, n, ld, 1).unwrap(), MatRef::new(&odd, n, n, 2, 2 * n).unwrap()] {
        let mut vals2 = vec![0.0; n];
        // Output eigenvectors into a row-major buffer and a strided one.
        let mut out_rm = vec![0.0; n * n];
        f.sym_eigen(view, &mut vals2, MatMut::from_row_major(&mut out_rm, n, n).unwrap()).unwrap();
        for (x, y) in vals.iter().zip(&vals2) {
            assert!((x - y).abs() < 1e-13);
        }
        let mut out_odd = vec![0.0; 3 * n * n];
        let mut vals3 = vec![0.0; n];
        f.sym_eigen(view, &mut vals3, MatMut::new(&mut out_odd, n, n, 3, 3 * n).unwrap()).unwrap();
        let (mut w, mut w_rm) = (M::zeros(n, n), M::zeros(n, n));
        for j in 0..n {
            for i in 0..n {
                w.d[i + j * n] = out_odd[3 * i + 3 * n * j];
                w_rm.d[i + j * n] = out_rm[i * n + j];
            }
        }
        assert!(residual(&a, &vals3, &w) < 1e-12, "strided output: {}", residual(&a, &vals3, &w));
        assert!(residual(&a, &vals2, &w_rm) < 1e-12, "row-major output: {}", residual(&a, &vals2, &w_rm));
        check_vectors_match(&vals, &w, &w_rm, 1e-6, 1e-10, "strided vs row-major output");
    }

    // gemm with transposed views: C = Aᵀ·B where A is stored row-major.
    let x = M::random(7, 5, &mut rng);
    let y = M::random(7, 4, &mut rng);
    let mut c = M::random(5, 4, &mut rng);
    let c0 = c.clone();
    f.gemm(2.0, x.r().t(), y.r(), -0.5, c.w()).unwrap();
    let mut expect = naive_mul(&transpose(&x), &y);
    for (e, c0) in expect.d.iter_mut().zip(&c0.d) {
        *e = 2.0 * *e - 0.5 * c0;
    }
    assert!(c.diff_max(&expect) < 1e-14);
    // Same product written into a row-major C.
    let mut crm = vec![0.0; 20];
    f.gemm(1.0, x.r().t(), y.r(), 0.0, MatMut::from_row_major(&mut crm, 5, 4).unwrap()).unwrap();
    let plain = naive_mul(&transpose(&x), &y);
    for i in 0..5 {
        for j in 0..4 {
            assert!((crm[i * 4 + j] - plain.get(i, j)).abs() < 1e-14);
        }
    }
}

// ---------------------------------------------------------------------------
// faer against core's portable backend.

#[test]
fn agree_full_eigen_random() {
    let mut rng = Rng(1);
    let mut f = FaerBackend::new();
    for &n in SIZES {
        let a = M::sym_random(n, &mut rng);
        let mut work = portable_work(n);
        let mut p = Portable::new(&mut work);
        let (fv, fw) = eig(&mut f, &a);
        let (pv, pw) = eig(&mut p, &a);
        let scale = a.max_abs().max(1.0) * n as f64;
        for (x, y) in fv.iter().zip(&pv) {
            assert!((x - y).abs() <= 1e-9 * scale.max(x.abs()), "n={n}: {x} vs {y}");
            assert!((x - y).abs() <= 1e-12 * scale, "n={n}: {x} vs {y} (tighter)");
        }
        assert!(fv.windows(2).all(|w| w[0] <= w[1]), "faer not ascending at n={n}");
        assert!(residual(&a, &fv, &fw) < 1e-12 * scale, "faer residual n={n}");
        assert!(residual(&a, &pv, &pw) < 1e-12 * scale, "portable residual n={n}");
        assert!(orth_err(&fw) < 1e-12 * n as f64);
        check_vectors_match(&fv, &fw, &pw, 1e-3 * scale / n as f64, 1e-9, &format!("full n={n}"));
    }
}

/// `sym_eigen_pair` on two threads (the two decompositions run
/// concurrently, each sequential) against core's portable backend on each
/// matrix alone; also two matrices of different orders, and a bad second
/// input must be an error, not a panic.
#[test]
fn agree_eigen_pair_concurrent() {
    let mut rng = Rng(11);
    let mut f = FaerBackend::with_par(faer::Par::rayon(2));
    for &(n1, n2) in &[(1, 1), (7, 3), (50, 64), (300, 200)] {
        let (a1, a2) = (M::sym_random(n1, &mut rng), M::sym_random(n2, &mut rng));
        let (mut v1, mut v2) = (vec![0.0; n1], vec![0.0; n2]);
        let (mut w1, mut w2) = (M::zeros(n1, n1), M::zeros(n2, n2));
        f.sym_eigen_pair(a1.r(), &mut v1, w1.w(), a2.r(), &mut v2, w2.w()).unwrap();
        for (a, fv, fw) in [(&a1, &v1, &w1), (&a2, &v2, &w2)] {
            let n = a.n;
            let mut work = portable_work(n);
            let (pv, pw) = eig(&mut Portable::new(&mut work), a);
            let scale = a.max_abs().max(1.0) * n as f64;
            for (x, y) in fv.iter().zip(&pv) {
                assert!((x - y).abs() <= 1e-12 * scale, "n={n}: {x} vs {y}");
            }
            assert!(residual(a, fv, fw) < 1e-12 * scale, "pair residual n={n}");
            check_vectors_match(fv, fw, &pw, 1e-3 * scale / n as f64, 1e-9, &format!("pair n={n}"));
        }
    }
    let a = M::sym_random(5, &mut rng);
    let mut bad = M::sym_random(4, &mut rng);
    bad.d[3] = f64::NAN;
    let (mut v1, mut v2) = (vec![0.0; 5], vec![0.0; 4]);
    let (mut w1, mut w2) = (M::zeros(5, 5), M::zeros(4, 4));
    let r = f.sym_eigen_pair(a.r(), &mut v1, w1.w(), bad.r(), &mut v2, w2.w());
    assert_eq!(r, Err(LinalgError::NonFinite));
    let r = f.sym_eigen_pair(a.r(), &mut v1, w1.w(), a.r(), &mut v2, w2.w());
    assert_eq!(r, Err(LinalgError::DimensionMismatch));
}

#[test]
fn agree_top_k_random() {
    let mut rng = Rng(2);
    let mut f = FaerBackend::new();
    for &n in SIZES {
        let a = M::sym_random(n, &mut rng);
        let mut work = portable_work(n);
        let (full_v, full_w) = eig(&mut f, &a);
        let scale = a.max_abs().max(1.0) * n as f64;
        let mut ks = vec![1, 5, 10, 50, n];
        ks.retain(|&k| k <= n);
        ks.dedup();
        for k in ks {
            let mut p = Portable::new(&mut work);
            let (fv, fw) = top_k(&mut f, &a, k);
            let (pv, pw) = top_k(&mut p, &a, k);
            for i in 0..k {
                let exact = full_v[n - 1 - i];
                assert!((fv[i] - exact).abs() <= 1e-11 * scale, "faer top-{k} n={n} i={i}: {} vs {exact}", fv[i]);
                assert!((fv[i] - pv[i]).abs() <= 1e-11 * scale, "top-{k} n={n} i={i}: {} vs {}", fv[i], pv[i]);
            }
            assert!(fv.windows(2).all(|w| w[0] >= w[1]), "faer top-k not descending");
            assert!(residual(&a, &fv, &fw) < 1e-10 * scale, "faer top-{k} residual n={n}");
            assert!(residual(&a, &pv, &pw) < 1e-10 * scale, "portable top-{k} residual n={n}");
            assert!(orth_err(&fw) < 1e-10);
            let mut full_top = M::zeros(n, k);
            for i in 0..k {
                for r in 0..n {
                    full_top.d[r + i * n] = full_w.get(r, n - 1 - i);
                }
            }
            let gap = 1e-3 * scale / n as f64;
            check_vectors_match(&fv, &fw, &pw, gap, 1e-8, &format!("top-{k} n={n}"));
            check_vectors_match(&fv, &fw, &full_top, gap, 1e-8, &format!("top-{k} vs full n={n}"));
        }
    }
}

#[test]
fn agree_on_rank_deficient_rbf_kernel() {
    let mut rng = Rng(3);
    let mut f = FaerBackend::new();
    // 300 points in R^3, 40 of them duplicates: rank ≤ 260 exactly, and the
    // smooth kernel makes most of the remaining spectrum numerically zero.
    let n = 300;
    let k = rbf(n, 3, 0.5, 40, &mut rng);
    let mut work = portable_work(n);
    let mut p = Portable::new(&mut work);
    let (fv, fw) = eig(&mut f, &k);
    let (pv, pw) = eig(&mut p, &k);
    let lmax = fv[n - 1];
    for (x, y) in fv.iter().zip(&pv) {
        assert!((x - y).abs() <= 1e-12 * lmax, "{x} vs {y}");
    }
    assert!(fv[0] > -1e-12 * lmax, "PSD kernel: smallest {}", fv[0]);
    // At least the 40 duplicate directions are zero.
    assert!(fv[39].abs() < 1e-12 * lmax);
    assert!(residual(&k, &fv, &fw) < 1e-12 * lmax);
    assert!(residual(&k, &pv, &pw) < 1e-12 * lmax);
    check_vectors_match(&fv, &fw, &pw, 1e-6 * lmax, 1e-8, "rbf full");

    for kk in [1usize, 10, 50] {
        let mut p = Portable::new(&mut work);
        let (tf, tfw) = top_k(&mut f, &k, kk);
        let (tp, tpw) = top_k(&mut p, &k, kk);
        for i in 0..kk {
            assert!((tf[i] - fv[n - 1 - i]).abs() <= 1e-12 * lmax);
            assert!((tf[i] - tp[i]).abs() <= 1e-12 * lmax, "top-{kk} i={i}: {} vs {}", tf[i], tp[i]);
        }
        assert!(residual(&k, &tf, &tfw) < 1e-11 * lmax);
        check_vectors_match(&tf, &tfw, &tpw, 1e-4 * lmax, 1e-8, &format!("rbf top-{kk}"));
    }

    // Cholesky of the regularised kernel, and solves, agree too.
    let mut reg = k.clone();
    for i in 0..n {
        reg.d[i + i * n] += 1e-3;
    }
    let mut lf = reg.clone();
    let mut lp = reg.clone();
    f.cholesky_in_place(lf.w()).unwrap();
    Portable::new(&mut work).cholesky_in_place(lp.w()).unwrap();
    assert!(lf.diff_max(&lp) <= 1e-9 * lp.max_abs(), "{}", lf.diff_max(&lp));
    let b = M::random(n, 3, &mut rng);
    let (mut xf, mut xp) = (b.clone(), b.clone());
    f.cholesky_solve_in_place(lf.r(), xf.w()).unwrap();
    Portable::new(&mut work).cholesky_solve_in_place(lp.r(), xp.w()).unwrap();
    assert!(xf.diff_max(&xp) <= 1e-9 * xp.max_abs(), "{}", xf.diff_max(&xp) / xp.max_abs());
    // One triangular solve L⁻¹B (the preference GP's C = L_B⁻¹Lᵀ), and its
    // residual ‖L·X − B‖.
    let (mut yf, mut yp) = (b.clone(), b.clone());
    f.solve_lower_in_place(lf.r(), yf.w()).unwrap();
    Portable::new(&mut work).solve_lower_in_place(lp.r(), yp.w()).unwrap();
    assert!(yf.diff_max(&yp) <= 1e-9 * yp.max_abs(), "{}", yf.diff_max(&yp) / yp.max_abs());
    let mut lower = lf.clone();
    for j in 0..n {
        for i in 0..j {
            lower.d[i + j * n] = 0.0;
        }
    }
    let back = naive_mul(&lower, &yf);
    assert!(back.diff_max(&b) <= 1e-10 * b.max_abs() * n as f64, "{}", back.diff_max(&b));
}

#[test]
fn agree_cholesky_and_solves_random() {
    let mut rng = Rng(4);
    let mut f = FaerBackend::new();
    for &n in SIZES {
        let mut work = portable_work(n);
        let b = M::random(n, n, &mut rng);
        let mut spd = naive_mul(&b, &transpose(&b));
        for i in 0..n {
            spd.d[i + i * n] += 1.0;
        }
        // Cholesky factors are unique: compare entrywise.
        let (mut lf, mut lp) = (spd.clone(), spd.clone());
        f.cholesky_in_place(lf.w()).unwrap();
        Portable::new(&mut work).cholesky_in_place(lp.w()).unwrap();
        assert!(lf.diff_max(&lp) <= 1e-9 * lp.max_abs(), "chol n={n}: {}", lf.diff_max(&lp));
        for j in 0..n {
            for i in 0..j {
                assert_eq!(lf.get(i, j), 0.0, "upper triangle not zeroed");
            }
        }

        let rhs = M::random(n, 3, &mut rng);
        let (mut xf, mut xp) = (rhs.clone(), rhs.clone());
        f.cholesky_solve_in_place(lf.r(), xf.w()).unwrap();
        Portable::new(&mut work).cholesky_solve_in_place(lp.r(), xp.w()).unwrap();
        assert!(xf.diff_max(&xp) <= 1e-9 * xp.max_abs(), "chol solve n={n}: {}", xf.diff_max(&xp) / xp.max_abs());

        // Symmetric indefinite.
        let s = M::sym_random(n, &mut rng);
        let (mut yf, mut yp) = (rhs.clone(), rhs.clone());
        f.sym_solve_in_place(s.r(), yf.w()).unwrap();
        Portable::new(&mut work).sym_solve_in_place(s.r(), yp.w()).unwrap();
        // Both are backward stable; agreement is limited by κ(S)·ε.
        let res = naive_mul(&s, &yf).diff_max(&rhs);
        assert!(res < 1e-10 * (n as f64) * yf.max_abs().max(1.0), "sym solve residual n={n}: {res}");
        assert!(yf.diff_max(&yp) <= 1e-9 * yp.max_abs(), "sym solve n={n}: {}", yf.diff_max(&yp) / yp.max_abs());
    }
}

#[test]
fn agree_gemm_and_syrk() {
    let mut rng = Rng(5);
    let mut f = FaerBackend::new();
    for &(m, k, n) in &[(1, 1, 1), (3, 7, 2), (17, 1, 9), (64, 64, 64), (100, 37, 300), (300, 300, 5), (5, 0, 4)] {
        let a = M::random(m, k, &mut rng);
        let b = M::random(k, n, &mut rng);
        let c0 = M::random(m, n, &mut rng);
        for &(alpha, beta) in &[(1.0, 0.0), (-0.7, 1.0), (2.5, -0.3)] {
            let (mut cf, mut cp) = (c0.clone(), c0.clone());
            f.gemm(alpha, a.r(), b.r(), beta, cf.w()).unwrap();
            Portable::new(&mut []).gemm(alpha, a.r(), b.r(), beta, cp.w()).unwrap();
            let tol = 1e-13 * (k.max(1) as f64) * alpha.abs().max(1.0);
            assert!(cf.diff_max(&cp) <= tol, "gemm {m}x{k}x{n}: {}", cf.diff_max(&cp));
            let mut expect = naive_mul(&a, &b);
            for (e, c) in expect.d.iter_mut().zip(&c0.d) {
                *e = alpha * *e + beta * c;
            }
            assert!(cf.diff_max(&expect) <= tol);
        }
        // Transposed operands: C = Bᵀ·Aᵀ.
        let mut cf = M::zeros(n, m);
        let mut cp = M::zeros(n, m);
        f.gemm(1.0, b.r().t(), a.r().t(), 0.0, cf.w()).unwrap();
        Portable::new(&mut []).gemm(1.0, b.r().t(), a.r().t(), 0.0, cp.w()).unwrap();
        assert!(cf.diff_max(&cp) <= 1e-13 * k.max(1) as f64);

        // syrk: C = α·A·Aᵀ + β·C (C's lower triangle read), both triangles written.
        let mut c0s = M::sym_random(m, &mut rng);
        for j in 0..m {
            for i in 0..j {
                c0s.d[i + j * m] = 1e300; // upper triangle must be ignored
            }
        }
        for &(alpha, beta) in &[(1.0, 0.0), (0.5, 2.0)] {
            let (mut sf, mut sp) = (c0s.clone(), c0s.clone());
            f.syrk(alpha, a.r(), beta, sf.w()).unwrap();
            Portable::new(&mut []).syrk(alpha, a.r(), beta, sp.w()).unwrap();
            assert!(sf.diff_max(&sp) <= 1e-13 * k.max(1) as f64 * 2.0, "syrk {m}x{k}: {}", sf.diff_max(&sp));
            for j in 0..m {
                for i in 0..m {
                    assert_eq!(sf.get(i, j), sf.get(j, i), "syrk result not symmetric");
                }
            }
        }
    }
}

/// The faer top-k path (core's Lanczos with the fused lower-triangle
/// mat-vec, block 4 by default, 1, 2 and 3 threads, odd n so the four-column
/// kernel has remainders) on a slowly decaying RBF spectrum, against the
/// full faer decomposition: eigenvalues to 1e-11·λ₁ and residuals to
/// 1e-12·λ₁ (the solver's tolerance is 2.2e-13·λ₁; the naive product here
/// adds ≤ n·ε·λ₁ ≈ 1.3e-13·λ₁), with an upper triangle of garbage that
/// must not be read, and with block sizes 1 and 3 as well.
#[test]
fn faer_top_k_lanczos_on_a_slow_spectrum_any_thread_count() {
    let mut rng = Rng(11);
    let n = 603;
    let a = rbf(n, 20, 0.025, 0, &mut rng);
    let mut garbage = a.clone();
    for j in 0..n {
        for i in 0..j {
            garbage.d[i + j * n] = f64::NAN;
        }
    }
    let (full, _) = eig(&mut FaerBackend::sequential(), &a);
    let l1 = full[n - 1];
    for threads in [1, 2, 3] {
        for block in [0, 1, 3] {
            let params = ranklet_core::eigen::EigenParams::default().with_block(block);
            let mut f = FaerBackend::with_par(faer::Par::rayon(threads)).with_params(params);
            for k in [10, 50] {
                let (v, w) = top_k(&mut f, &garbage, k);
                let info = f.last_top_k().expect("the Lanczos path answered");
                assert!(info.applies < n, "{info:?}");
                for i in 0..k {
                    assert!((v[i] - full[n - 1 - i]).abs() <= 1e-11 * l1, "t={threads} b={block} k={k} i={i}");
                }
                // residual() is the largest entry of A·V − V·Λ, at most the 2-norms bounded above.
                assert!(residual(&a, &v, &w) <= 1e-12 * l1, "t={threads} b={block} k={k}");
                assert!(orth_err(&w) <= 1e-12);
            }
        }
    }
}

/// `gemm_lower`: the lower triangle of `α·A·B + β·C` with `A`/`B` declared
/// full, lower or upper triangular (zero outside), by faer's one triangular
/// product and by core's row blocks, against the triple loop on the masked
/// operands. Sizes below, at and past the 128-row block; β = 0 and 1 (faer's
/// path) and 0.5 (core's row blocks on both); a non-square destination
/// (row blocks on both). Tolerance 1e-12 · (Σ|a||b| ≤ n here, entries in
/// [-1, 1)): rounding of an n-term sum differs only by the order of terms.
#[test]
fn gemm_lower_agrees_with_the_triple_loop() {
    use ranklet_core::backend::Tri;
    let mut rng = Rng(0x7a1);
    let mask = |a: &mut M, t: Tri| {
        for j in 0..a.n {
            for i in 0..a.m {
                if (t == Tri::Lower && i < j) || (t == Tri::Upper && i > j) {
                    a.d[i + j * a.m] = 0.0;
                }
            }
        }
    };
    let shapes: [(usize, usize, usize); 7] =
        [(0, 0, 0), (1, 1, 1), (5, 5, 5), (128, 128, 128), (131, 131, 131), (300, 300, 300), (140, 9, 7)];
    let tris = [Tri::Full, Tri::Lower, Tri::Upper];
    for &(m, k, n) in &shapes {
        for &ta in &tris {
            for &tb in &tris {
                if (ta != Tri::Full && m != k) || (tb != Tri::Full && k != n) {
                    continue;
                }
                for &beta in &[0.0, 1.0, 0.5] {
                    let (mut a, mut b, c0) =
                        (M::random(m, k, &mut rng), M::random(k, n, &mut rng), M::random(m, n, &mut rng));
                    mask(&mut a, ta);
                    mask(&mut b, tb);
                    let ab = naive_mul(&a, &b);
                    let mut wf = portable_work(m.max(n).max(k));
                    let mut f = FaerBackend::new();
                    let mut p = Portable::new(&mut wf);
                    let (mut cf, mut cp) = (c0.clone(), c0.clone());
                    f.gemm_lower(-1.5, a.r(), ta, b.r(), tb, beta, cf.w()).unwrap();
                    p.gemm_lower(-1.5, a.r(), ta, b.r(), tb, beta, cp.w()).unwrap();
                    for j in 0..n {
                        for i in j..m {
                            let want = -1.5 * ab.get(i, j) + beta * c0.get(i, j);
                            let tol = 1e-12 * (k as f64 + 1.0);
                            let what = format!("m={m} k={k} n={n} {ta:?}·{tb:?} β={beta} at ({i},{j})");
                            assert!((cf.get(i, j) - want).abs() <= tol, "faer {what}: {} vs {want}", cf.get(i, j));
                            assert!((cp.get(i, j) - want).abs() <= tol, "core {what}: {} vs {want}", cp.get(i, j));
                        }
                    }
                }
            }
        }
    }
    // A triangular operand must be square; the shapes must chain.
    let (a, b) = (M::random(4, 3, &mut rng), M::random(3, 4, &mut rng));
    let mut c = M::zeros(4, 4);
    let mut f = FaerBackend::new();
    assert_eq!(f.gemm_lower(1.0, a.r(), Tri::Lower, b.r(), Tri::Full, 0.0, c.w()), Err(LinalgError::DimensionMismatch));
    assert_eq!(f.gemm_lower(1.0, b.r(), Tri::Full, b.r(), Tri::Full, 0.0, c.w()), Err(LinalgError::DimensionMismatch));
    let mut bad = a.clone();
    bad.d[2] = f64::NAN;
    assert_eq!(f.gemm_lower(1.0, bad.r(), Tri::Full, b.r(), Tri::Full, 0.0, c.w()), Err(LinalgError::NonFinite));
}

/// `solve_lower_lower_in_place` (the preference GP's `C = L_B⁻¹Uᵀ`): faer's
/// concurrent column blocks on 1 to 3 threads and core's default (one
/// solve per 128-column block) against one full solve `L⁻¹B` of the same
/// lower-triangular `B`, for orders below, at and past the 64-column task
/// and the 128-column block, with a leading dimension larger than `n`. The
/// result's strict upper triangle stays exactly zero. Tolerance: the three
/// are forward substitutions of the same system in another order, backward
/// stable, so they differ by ~n·ε·κ(L)·max|x|; `L` is the factor of
/// `XXᵀ/n + I` (κ(L) ≤ √(1 + max eig) ≈ 2 here), so 1e-12 · n relative has
/// a wide margin.
#[test]
fn solve_lower_lower_agrees_with_the_full_solve() {
    let mut rng = Rng(0x5017e);
    for n in [0usize, 1, 2, 5, 63, 64, 65, 128, 129, 300] {
        let x = M::random(n, n, &mut rng);
        let mut spd = naive_mul(&x, &transpose(&x));
        spd.d.iter_mut().for_each(|v| *v /= n.max(1) as f64);
        for i in 0..n {
            spd.d[i + i * n] += 1.0;
        }
        let mut l = spd.clone();
        let mut work = portable_work(n);
        Portable::new(&mut work).cholesky_in_place(l.w()).unwrap();
        let mut b = M::random(n, n, &mut rng);
        for j in 0..n {
            for i in 0..j {
                b.d[i + j * n] = 0.0;
            }
        }
        let mut want = b.clone();
        Portable::new(&mut work).solve_lower_in_place(l.r(), want.w()).unwrap();
        let scale = want.max_abs().max(1.0);
        let tol = 1e-12 * (n.max(1) as f64) * scale;
        let mut got = b.clone();
        Portable::new(&mut work).solve_lower_lower_in_place(l.r(), got.w()).unwrap();
        assert!(got.diff_max(&want) <= tol, "core n={n}: {}", got.diff_max(&want));
        for threads in [1, 2, 3] {
            let mut f = FaerBackend::with_par(faer::Par::rayon(threads));
            // Leading dimension n + 3, the padding NaN (never read).
            let lda = n + 3;
            let mut padded = vec![f64::NAN; lda * n];
            for j in 0..n {
                padded[j * lda..j * lda + n].copy_from_slice(&b.d[j * n..(j + 1) * n]);
            }
            if n > 0 {
                f.solve_lower_lower_in_place(l.r(), MatMut::new(&mut padded, n, n, 1, lda).unwrap()).unwrap();
            }
            for j in 0..n {
                for i in 0..n {
                    let g = padded[j * lda + i];
                    if i < j {
                        assert_eq!(g, 0.0, "n={n} t={threads}: upper ({i},{j}) = {g}");
                    } else {
                        assert!((g - want.get(i, j)).abs() <= tol, "n={n} t={threads} ({i},{j}): {g}");
                    }
                }
                assert!(padded[j * lda + n..(j + 1) * lda].iter().all(|v| v.is_nan()), "padding written");
            }
        }
    }
    // Errors: a non-finite right-hand side, a zero pivot, shapes.
    let mut f = FaerBackend::new();
    let n = 200;
    let mut l = M::zeros(n, n);
    for i in 0..n {
        l.d[i + i * n] = 2.0;
    }
    let mut b = M::zeros(n, n);
    b.d[150 + 140 * n] = f64::NAN;
    assert_eq!(f.solve_lower_lower_in_place(l.r(), b.w()), Err(LinalgError::NonFinite));
    let mut b = M::zeros(n, n);
    l.d[7 + 7 * n] = 0.0;
    assert_eq!(f.solve_lower_lower_in_place(l.r(), b.w()), Err(LinalgError::Singular { index: 7 }));
    let mut short = M::zeros(n, n - 1);
    assert_eq!(f.solve_lower_lower_in_place(l.r(), short.w()), Err(LinalgError::DimensionMismatch));
}

/// The preference GP's dense EP on faer (1 and 2 threads) and on core's
/// portable backend, from the same kernel and pairs: the same number of
/// rounds, and posterior means, pair variances and log evidence within
/// 1e-9 relative (DESIGN.md's backend agreement; the two differ only in
/// the rounding of the round's products, solves and factorisations). The
/// order 300 spans several 64-column tasks and 128-column blocks, and the
/// pairs include repeats and contradictions.
#[test]
fn dense_ep_agrees_across_backends() {
    use ranklet_core::graph::Pair;
    use ranklet_core::learn::pref::{fit_workspace_len, EpParams, Likelihood, PrefPosterior};
    let (n, m, d) = (300usize, 1500usize, 3usize);
    let mut rng = Rng(0xe9);
    let x: Vec<f64> = (0..n * d).map(|_| rng.uniform()).collect();
    let mut k = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..n {
            let r2: f64 = (0..d).map(|t| (x[i * d + t] - x[j * d + t]).powi(2)).sum();
            k[i + j * n] = 1.5 * (-2.0 * r2).exp();
        }
    }
    let f = |i: usize| (0..d).map(|t| (3.0 * x[i * d + t]).sin()).sum::<f64>();
    let pairs: Vec<Pair> = (0..m)
        .map(|_| {
            let i = (rng.next_u64() % n as u64) as usize;
            let j = (i + 1 + (rng.next_u64() % (n as u64 - 1)) as usize) % n;
            let (w, l) = if f(i) + 0.5 * rng.uniform() >= f(j) + 0.5 * rng.uniform() { (i, j) } else { (j, i) };
            Pair { winner: w, loser: l, magnitude: 1.0 }
        })
        .collect();
    let kv = MatRef::from_col_major(&k, n, n).unwrap();
    let lik = Likelihood::Probit { sigma: std::f64::consts::FRAC_1_SQRT_2 };
    let ep = EpParams::default();
    let fit = |be: &mut dyn Backend| {
        let mut storage = vec![0.0; PrefPosterior::storage_len(n, m)];
        let mut work = vec![0.0; fit_workspace_len(n)];
        let post = PrefPosterior::fit(&mut DynBackend(be), kv, &pairs, lik, &ep, &mut storage, &mut work).unwrap();
        let vars: Vec<f64> = pairs.iter().map(|p| post.pair(p.winner, p.loser).unwrap().1).collect();
        (post.mean().to_vec(), vars, post.log_evidence(), post.iterations())
    };
    let mut work = portable_work(n);
    let (pm, pv, pz, pr) = fit(&mut Portable::new(&mut work));
    let mean_scale = pm.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let var_scale = pv.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for threads in [1, 2] {
        let (fm, fv, fz, fr) = fit(&mut FaerBackend::with_par(faer::Par::rayon(threads)));
        assert_eq!(fr, pr, "t={threads}: rounds");
        assert!((fz - pz).abs() <= 1e-9 * pz.abs(), "t={threads}: log Z {fz} vs {pz}");
        let dm = fm.iter().zip(&pm).fold(0.0f64, |a, (u, v)| a.max((u - v).abs()));
        let dv = fv.iter().zip(&pv).fold(0.0f64, |a, (u, v)| a.max((u - v).abs()));
        assert!(dm <= 1e-9 * mean_scale, "t={threads}: means differ by {dm}");
        assert!(dv <= 1e-9 * var_scale, "t={threads}: variances differ by {dv}");
    }
}

/// `&mut dyn Backend` as a `Backend` (core's learners are generic): every
/// method the dense EP calls is forwarded, so the backend's own overrides
/// are the ones used.
struct DynBackend<'a>(&'a mut dyn Backend);

impl Backend for DynBackend<'_> {
    fn gemm(
        &mut self,
        alpha: f64,
        a: MatRef<'_, f64>,
        b: MatRef<'_, f64>,
        beta: f64,
        c: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        self.0.gemm(alpha, a, b, beta, c)
    }
    fn gemm_lower(
        &mut self,
        alpha: f64,
        a: MatRef<'_, f64>,
        a_tri: ranklet_core::backend::Tri,
        b: MatRef<'_, f64>,
        b_tri: ranklet_core::backend::Tri,
        beta: f64,
        c: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        self.0.gemm_lower(alpha, a, a_tri, b, b_tri, beta, c)
    }
    fn syrk(&mut self, alpha: f64, a: MatRef<'_, f64>, beta: f64, c: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.0.syrk(alpha, a, beta, c)
    }
    fn sym_eigen(&mut self, a: MatRef<'_, f64>, vals: &mut [f64], vecs: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.0.sym_eigen(a, vals, vecs)
    }
    fn sym_eigen_top_k(
        &mut self,
        a: MatRef<'_, f64>,
        vals: &mut [f64],
        vecs: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        self.0.sym_eigen_top_k(a, vals, vecs)
    }
    fn cholesky_in_place(&mut self, a: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.0.cholesky_in_place(a)
    }
    fn cholesky_solve_in_place(&mut self, l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.0.cholesky_solve_in_place(l, b)
    }
    fn solve_lower_in_place(&mut self, l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.0.solve_lower_in_place(l, b)
    }
    fn solve_lower_lower_in_place(&mut self, l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.0.solve_lower_lower_in_place(l, b)
    }
    fn sym_solve_in_place(&mut self, a: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.0.sym_solve_in_place(a, b)
    }
    fn pair_sq_dists(
        &mut self,
        c: MatRef<'_, f64>,
        pairs: &[ranklet_core::graph::Pair],
        out: &mut [f64],
    ) -> Result<(), LinalgError> {
        self.0.pair_sq_dists(c, pairs, out)
    }
    fn pair_scatter(
        &mut self,
        a: MatRef<'_, f64>,
        a_tri: ranklet_core::backend::Tri,
        pairs: &[ranklet_core::graph::Pair],
        tau: &[f64],
        out: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        self.0.pair_scatter(a, a_tri, pairs, tau, out)
    }
}
