//! The faer backend's parallel O(n²) passes (`kernel_par`) against core's
//! portable backend on the same inputs, at sizes where they do run in
//! parallel (more than 2¹⁴ entries): centring and `L^{½}KL^{½}` bit for
//! bit (same operations in the same order), kernel values to the stated
//! error of the vectorised exp and exactly symmetric, the Cholesky
//! wrapper's checks, and syrk's parallel mirror.

use ranklet::faer_backend::FaerBackend;
use ranklet::kernel_par;
use ranklet::vexp::MAX_REL_ERR;
use ranklet_core::backend::{Backend, Portable};
use ranklet_core::graph::{Graph, QueryWeight};
use ranklet_core::kernel::{kernel_matrix_sym, kernel_matrix_workspace_len, Kernel};
use ranklet_core::linalg::Rows;
use ranklet_core::{LinalgError, MatMut, MatRef};

/// splitmix64 in [-1, 1).
fn uniform(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0
        })
        .collect()
}

/// The training kernel of `n` rows in R^d with either backend.
fn kernel(be: &mut dyn Backend, kernel: Kernel, x: &[f64], n: usize, d: usize) -> Vec<f64> {
    let rows = Rows::Dense(MatRef::from_row_major(x, n, d).unwrap());
    let mut k = vec![0.0; n * n];
    let mut work = vec![0.0; kernel_matrix_workspace_len(&rows, &rows)];
    kernel_matrix_sym(&mut DynBackend(be), &kernel, &rows, MatMut::from_col_major(&mut k, n, n).unwrap(), &mut work)
        .unwrap();
    k
}

/// `&mut dyn Backend` as a `Backend` (the core functions are generic).
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
    fn sym_solve_in_place(&mut self, a: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.0.sym_solve_in_place(a, b)
    }
    fn kernel_values(
        &mut self,
        kernel: &Kernel,
        xn: &[f64],
        yn: &[f64],
        symmetric: bool,
        out: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        self.0.kernel_values(kernel, xn, yn, symmetric, out)
    }
}

const N: usize = 300;
const D: usize = 20;

/// Kernel values from the same inner products (core's syrk) with both
/// backends: RBF over the whole range of the exp (γ up to 400 pushes most
/// values into underflow) to a relative error ≤ MAX_REL_ERR + the libm
/// side's own ulp where normal, one subnormal unit below; polynomial and
/// linear values bit-identical.
#[test]
fn kernel_values_match_portable() {
    let x = uniform(N * D, 1);
    let xv = MatRef::from_row_major(&x, N, D).unwrap();
    let mut dots = vec![0.0; N * N];
    ranklet_core::linalg::blas::syrk(1.0, xv, 0.0, MatMut::from_col_major(&mut dots, N, N).unwrap()).unwrap();
    let xn: Vec<f64> = (0..N).map(|i| (0..D).map(|t| xv.at(i, t) * xv.at(i, t)).sum()).collect();
    for k in [
        Kernel::Rbf { gamma: 0.025 },
        Kernel::Rbf { gamma: 2.0 },
        Kernel::Rbf { gamma: 40.0 },
        Kernel::Rbf { gamma: 400.0 },
        Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 3 },
        Kernel::Linear,
    ] {
        let norms: &[f64] = if k.needs_norms() { &xn } else { &[] };
        let (mut want, mut got) = (dots.clone(), dots.clone());
        for (sym, be) in [(true, &mut Portable::new(&mut []) as &mut dyn Backend), (false, &mut FaerBackend::new())] {
            let out = if sym { &mut want } else { &mut got };
            be.kernel_values(&k, norms, norms, sym, MatMut::from_col_major(out, N, N).unwrap()).unwrap();
        }
        let (mut zeros, mut subnormal) = (0, 0);
        for (&g, &w) in got.iter().zip(&want) {
            zeros += usize::from(w == 0.0);
            if matches!(k, Kernel::Rbf { .. }) {
                if w >= f64::MIN_POSITIVE {
                    assert!(((g - w) / w).abs() <= MAX_REL_ERR + f64::EPSILON, "{k}: {g:e} vs {w:e}");
                } else {
                    subnormal += usize::from(w > 0.0);
                    assert!((g - w).abs() <= 5e-324, "{k}: {g:e} vs {w:e}");
                }
            } else {
                assert_eq!(g.to_bits(), w.to_bits(), "{k}");
            }
        }
        if k == (Kernel::Rbf { gamma: 400.0 }) {
            assert!(zeros > N * N / 2, "γ = 400 should underflow most values");
        }
        if k == (Kernel::Rbf { gamma: 40.0 }) {
            assert!(subnormal > 0 && zeros > 0, "γ = 40 should reach the subnormal range");
        }
    }
}

/// The training kernel through each backend (each its own syrk): faer's
/// exactly symmetric, and equal to core's to the rounding of the inner
/// products, which the exp turns into relative errors of the size of the
/// argument's absolute error (here under 1e-13 for γ ≤ 2 on these rows).
#[test]
fn training_kernel_is_exactly_symmetric() {
    let x = uniform(N * D, 6);
    for k in [
        Kernel::Rbf { gamma: 0.025 },
        Kernel::Rbf { gamma: 2.0 },
        Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 3 },
    ] {
        let want = kernel(&mut Portable::new(&mut []), k, &x, N, D);
        let got = kernel(&mut FaerBackend::new(), k, &x, N, D);
        for j in 0..N {
            for i in 0..N {
                let (g, w) = (got[i + j * N], want[i + j * N]);
                assert_eq!(g.to_bits(), got[j + i * N].to_bits(), "{k} not symmetric at ({i}, {j})");
                // Polynomial values near 0 come from cancellation in γ⟨x, y⟩ + c:
                // absolute against the scale 1 there.
                let scale = if k.needs_norms() { w } else { w.abs().max(1.0) };
                assert!((g - w).abs() <= 1e-13 * scale, "{k} ({i}, {j}): {g:e} vs {w:e}");
            }
        }
    }
}

/// `K̂ = HKH` in place: column means, grand mean and every entry equal.
#[test]
fn centring_is_bit_identical() {
    let x = uniform(N * D, 2);
    let k = kernel(&mut Portable::new(&mut []), Kernel::Rbf { gamma: 0.1 }, &x, N, D);
    let (mut a, mut b) = (k.clone(), k);
    let (mut ma, mut mb) = (vec![0.0; N], vec![0.0; N]);
    let ga = Portable::new(&mut []).center_kernel_in_place(MatMut::from_col_major(&mut a, N, N).unwrap(), &mut ma);
    let gb = FaerBackend::new().center_kernel_in_place(MatMut::from_col_major(&mut b, N, N).unwrap(), &mut mb);
    assert_eq!(ga.unwrap().to_bits(), gb.unwrap().to_bits());
    assert_eq!(ma, mb);
    assert_eq!(a, b);
    b[7] = f64::NAN;
    let e = FaerBackend::new().center_kernel_in_place(MatMut::from_col_major(&mut b, N, N).unwrap(), &mut mb);
    assert_eq!(e, Err(LinalgError::NonFinite));
}

/// `L^{½}KL^{½}` for queries of uneven sizes (with an empty one) and both
/// weightings: bit-identical to core's serial pass.
#[test]
fn sqrt_sandwich_is_bit_identical() {
    let x = uniform(N * D, 3);
    let k = kernel(&mut Portable::new(&mut []), Kernel::Rbf { gamma: 0.1 }, &x, N, D);
    let mut qp = vec![0usize];
    let mut at = 0;
    for l in (1..).map(|q| 1 + (q * 7) % 23) {
        at = (at + l).min(N);
        qp.push(at);
        if at == N {
            break;
        }
        if qp.len() == 5 {
            qp.push(at);
        }
    }
    for weight in [QueryWeight::Equal, QueryWeight::Pairs] {
        let g = Graph::Queries { query_ptr: &qp, weight };
        let (mut a, mut b) = (k.clone(), k.clone());
        Portable::new(&mut []).sqrt_sandwich_in_place(&g, MatMut::from_col_major(&mut a, N, N).unwrap()).unwrap();
        FaerBackend::new().sqrt_sandwich_in_place(&g, MatMut::from_col_major(&mut b, N, N).unwrap()).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, k);
    }
}

/// syrk's parallel mirror: `X·Xᵀ` exactly symmetric and equal to the
/// triple loop to rounding, into a column-major view with a padded column
/// stride (a sub-view of a larger buffer).
#[test]
fn syrk_mirror_is_exact() {
    let x = uniform(N * D, 4);
    let xv = MatRef::from_row_major(&x, N, D).unwrap();
    let ld = N + 5;
    let mut buf = vec![f64::NAN; ld * N];
    let mut full = MatMut::new(&mut buf, N, N, 1, ld).unwrap();
    FaerBackend::new().syrk(1.0, xv, 0.0, full.rb_mut()).unwrap();
    for j in 0..N {
        for i in 0..N {
            let want: f64 = (0..D).map(|t| xv.at(i, t) * xv.at(j, t)).sum();
            assert_eq!(full.at(i, j).to_bits(), full.at(j, i).to_bits());
            assert!((full.at(i, j) - want).abs() < 1e-13, "({i}, {j})");
        }
    }
    // The padding between columns is untouched.
    assert!(buf[N..ld].iter().all(|v| v.is_nan()));
}

/// The Cholesky wrapper: the factor of an SPD matrix as core's to
/// rounding with a zero strict upper triangle; an indefinite matrix
/// reports the same pivot index as core; the parallel checks directly.
#[test]
fn cholesky_checks_match_portable() {
    let x = uniform(N * D, 5);
    let mut k = kernel(&mut Portable::new(&mut []), Kernel::Rbf { gamma: 0.1 }, &x, N, D);
    for i in 0..N {
        k[i + i * N] += 1.0;
    }
    let (mut a, mut b) = (k.clone(), k.clone());
    Portable::new(&mut []).cholesky_in_place(MatMut::from_col_major(&mut a, N, N).unwrap()).unwrap();
    FaerBackend::new().cholesky_in_place(MatMut::from_col_major(&mut b, N, N).unwrap()).unwrap();
    for j in 0..N {
        for i in 0..N {
            if i < j {
                assert_eq!(b[i + j * N], 0.0);
            }
            assert!((a[i + j * N] - b[i + j * N]).abs() < 1e-12, "({i}, {j})");
        }
    }
    // Indefinite: a negative diagonal entry at 200.
    let mut c = k.clone();
    c[200 + 200 * N] = -5.0;
    let mut d = c.clone();
    let ec = Portable::new(&mut []).cholesky_in_place(MatMut::from_col_major(&mut c, N, N).unwrap());
    let ed = FaerBackend::new().cholesky_in_place(MatMut::from_col_major(&mut d, N, N).unwrap());
    assert_eq!(ec, Err(LinalgError::NotPositiveDefinite { index: 200 }));
    assert_eq!(ed, ec);
    // Non-finite lower triangle is refused; the upper one is not read.
    let mut e = k.clone();
    e[5 * N] = f64::NAN;
    assert!(kernel_par::lower_finite(true, MatRef::from_col_major(&e, N, N).unwrap()));
    e[5] = f64::INFINITY;
    assert!(!kernel_par::lower_finite(true, MatRef::from_col_major(&e, N, N).unwrap()));
    let mut z = k;
    z[17 + 17 * N] = 0.0;
    z[40 + 40 * N] = f64::NAN;
    assert_eq!(kernel_par::zero_upper_check_diag(true, MatMut::from_col_major(&mut z, N, N).unwrap()), Some(17));
    assert!((0..N).all(|j| (0..j).all(|i| z[i + j * N] == 0.0)));
}
