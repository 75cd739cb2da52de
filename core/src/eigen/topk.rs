//! The k algebraically largest eigenpairs of a symmetric operator, in
//! O(n²k) for k ≪ n.
//!
//! # Method
//!
//! Thick-restarted block Krylov subspace with Rayleigh–Ritz (a block form of
//! the thick-restart Lanczos of Wu & Simon, SIAM J. Matrix Anal. Appl. 22
//! (2000), and of Stewart's Krylov–Schur restart, SIAM J. Matrix Anal. Appl.
//! 23 (2001); Golub & Van Loan 4th ed. §10.1–10.3 for Lanczos and
//! Rayleigh–Ritz; Saad, *Numerical Methods for Large Eigenvalue Problems*
//! 2nd ed. §5.3 and §7.3 for block and restarted variants):
//!
//! 1. the basis `V` (n × m, m = k + 4b, block size b = clamp(k, 4, 16)) is kept
//!    orthonormal by classical Gram–Schmidt applied twice ("twice is
//!    enough") against every earlier basis vector, i.e. full
//!    reorthogonalisation;
//! 2. it grows block by block: the next block is `A·(previous block)`
//!    orthogonalised, so each cycle spans a block Krylov space; a block
//!    start makes repeated top eigenvalues (up to multiplicity b) visible;
//! 3. Rayleigh–Ritz: `H = Vᵀ(AV)` (m × m) is diagonalised by
//!    [`super::tridiag::sym_eigen`]; the `p = k + b` largest Ritz pairs are
//!    kept (`V ← V·Y_p`, `AV ← AV·Y_p`, so no extra products), and the next
//!    cycle starts from the residual vectors of the unconverged pairs;
//! 4. convergence is tested on explicit residuals ‖A·x − θ·x‖₂ of each
//!    wanted Ritz pair against `tol · ‖A‖`, with ‖A‖ estimated by the largest
//!    |Ritz value| seen so far.
//!
//! Directions that vanish under orthogonalisation (an invariant subspace was
//! found, e.g. a rank-deficient kernel matrix) are replaced by deterministic
//! pseudo-random vectors (xorshift64*, fixed seed), so the results are
//! reproducible bit for bit on one platform.
//!
//! When the basis would not be much smaller than the matrix (`2m > n`, which
//! includes `k = n` and tiny `n`), the solver forms `A` by applying the
//! operator to the identity and calls the full solver instead.

use super::tridiag::{sym_eigen, sym_eigen_workspace_len};
use super::EigenParams;
use crate::linalg::blas::{gemm, gemv};
use crate::{LinalgError, MatMut, MatRef, Real};

/// A symmetric linear operator applied to a block of vectors: the top-k
/// solver only ever touches `A` through this, so a backend can supply its own
/// (parallel) matrix product.
pub trait SymOperator<T: Real> {
    /// The dimension `n` of the square operator.
    fn dim(&self) -> usize;
    /// `Y ← A·X` for `X`, `Y` of shape `n × b`.
    fn apply(&mut self, x: MatRef<'_, T>, y: MatMut<'_, T>) -> Result<(), LinalgError>;

    /// `C ← α·P·Q + β·C` for the solver's own dense products (the
    /// Rayleigh–Ritz projection `Vᵀ(AV)` and the basis rotations, O(n·m²)
    /// per restart). The default is core's gemm; an operator backed by a
    /// parallel library can route them there too.
    fn gemm(
        &mut self,
        alpha: T,
        p: MatRef<'_, T>,
        q: MatRef<'_, T>,
        beta: T,
        c: MatMut<'_, T>,
    ) -> Result<(), LinalgError> {
        gemm(alpha, p, q, beta, c)
    }
}

/// A dense symmetric matrix as a [`SymOperator`], applied with
/// [`crate::linalg::blas::gemm`].
///
/// Unlike [`super::tridiag::sym_eigen`], the **whole** matrix is read (both
/// triangles); it must be symmetric, which is not checked.
#[derive(Clone, Copy, Debug)]
pub struct DenseSymOp<'a, T> {
    a: MatRef<'a, T>,
}

impl<'a, T: Real> DenseSymOp<'a, T> {
    /// Wraps a square view.
    ///
    /// # Errors
    ///
    /// [`LinalgError::DimensionMismatch`] if `a` is not square.
    pub fn new(a: MatRef<'a, T>) -> Result<Self, LinalgError> {
        if !a.is_square() {
            return Err(LinalgError::DimensionMismatch);
        }
        Ok(Self { a })
    }
}

impl<T: Real> SymOperator<T> for DenseSymOp<'_, T> {
    fn dim(&self) -> usize {
        self.a.nrows()
    }
    fn apply(&mut self, x: MatRef<'_, T>, y: MatMut<'_, T>) -> Result<(), LinalgError> {
        gemm(T::ONE, self.a, x, T::ZERO, y)
    }
}

/// What [`sym_eigen_top_k`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct TopKInfo {
    /// Rayleigh–Ritz cycles (restarts + 1); 0 on the dense path.
    pub iterations: usize,
    /// Operator applications, counted in vectors (`apply` on an `n × b`
    /// block counts `b`).
    pub applies: usize,
    /// Largest ‖A·x − θ·x‖₂ / ‖A‖ over the returned pairs (‖A‖ estimated by
    /// the largest |Ritz value|); 0 on the dense path, which is exact to
    /// rounding.
    pub max_residual: f64,
}

/// Block size, kept Ritz pairs and basis size for `k` wanted pairs.
fn sizes(k: usize) -> (usize, usize, usize) {
    let b = k.clamp(4, 16);
    let p = k.saturating_add(b);
    (b, p, p.saturating_add(3 * b))
}

fn use_dense(n: usize, k: usize) -> bool {
    let (_, _, m) = sizes(k);
    m > n / 2 // ⇔ 2m > n, without overflow
}

/// Workspace length (elements of `T`) that [`sym_eigen_top_k`] needs for
/// dimension `n` and `k` wanted pairs: `n·(2m + p) + 2m² + 2m +
/// sym_eigen_workspace_len(m)` with `b = clamp(k, 4, 16)`, `p = k + b`,
/// `m = p + 3b`, or `2n² + n + sym_eigen_workspace_len(n)` when `2m > n`
/// (dense path). For k ≪ n this is O(n·k).
pub fn top_k_workspace_len(n: usize, k: usize) -> usize {
    if k == 0 {
        return 0;
    }
    // Saturating: an absurd n gives usize::MAX (then WorkspaceTooSmall).
    if use_dense(n, k) {
        DenseScratch::<f64>::len(n)
    } else {
        let (_, p, m) = sizes(k);
        KrylovScratch::<f64>::len(n, p, m)
    }
}

crate::scratch! {
    /// Scratch of the block-Krylov path.
    struct KrylovScratch<T: Real>(n: usize, p: usize, m: usize) {
        /// The basis `V` (`n × m`).
        v: n.saturating_mul(m),
        /// `A·V`.
        av: n.saturating_mul(m),
        /// Products of the restart (`n × p`).
        tmp: n.saturating_mul(p),
        /// The projected matrix `H = VᵀAV`.
        h: m.saturating_mul(m),
        /// Its eigenvectors.
        y: m.saturating_mul(m),
        /// Its eigenvalues.
        theta: m,
        /// Orthogonalisation coefficients.
        coef: m,
        /// The small dense eigensolver.
        ws: sym_eigen_workspace_len(m),
    }
}

crate::scratch! {
    /// Scratch of the dense path (`2m > n`).
    struct DenseScratch<T: Real>(n: usize) {
        /// The matrix, materialised.
        x: n.saturating_mul(n),
        /// Its eigenvectors.
        a: n.saturating_mul(n),
        /// All eigenvalues.
        full: n,
        /// The dense eigensolver.
        ws: sym_eigen_workspace_len(n),
    }
}

/// Deterministic pseudo-random numbers in [-1, 1) (xorshift64*, Vigna 2016).
struct XorShift(u64);

impl XorShift {
    fn next<T: Real>(&mut self) -> T {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        T::from_f64(((r >> 11) as f64) * (2.0 / (1u64 << 53) as f64) - 1.0)
    }
}

/// The `k = vals.len()` algebraically largest eigenvalues of the symmetric
/// operator `op`, in **descending** order, with orthonormal eigenvectors as
/// the columns of `vecs` (column `i` ↔ `vals[i]`).
///
/// # Arguments
///
/// - `op`: the operator; see [`DenseSymOp`] for a dense matrix.
/// - `vals`: output, length `k` (`0 ≤ k ≤ n`); `k = 0` returns at once with
///   a zero [`TopKInfo`].
/// - `vecs`: output `n × k` view of any stride.
/// - `work`: at least [`top_k_workspace_len`]`(n, k)` elements.
/// - `params`: `tol` is the relative residual target: each returned pair
///   satisfies ‖A·x − λ·x‖₂ ≤ tol·‖A‖₂; `tol = 0` means the default
///   `1000·ε` (2.2e-13 in f64, 1.2e-4 in f32). `max_iter` bounds the
///   Rayleigh–Ritz cycles (default 60; a 2000 × 2000 RBF kernel needs < 10
///   for k = 10).
///
/// # Accuracy
///
/// Residuals as above; each eigenvalue is then within tol·‖A‖ of an exact
/// one, and within (tol·‖A‖)²/gap of it when separated by `gap` from the
/// rest of the spectrum.
///
/// # Cost
///
/// About `4b` operator applications per cycle (O(n²) each for a dense
/// matrix) plus O(n·m²) for orthogonalisation and Rayleigh–Ritz.
///
/// # Errors
///
/// - [`LinalgError::InvalidParameter`]: `k > n`;
/// - [`LinalgError::DimensionMismatch`]: `vecs` not `n × k`;
/// - [`LinalgError::WorkspaceTooSmall`];
/// - [`LinalgError::NonFinite`]: the operator produced NaN/Inf;
/// - [`LinalgError::NoConvergence`]: the wanted pairs were not all within
///   `tol` after `max_iter` cycles (`iterations` = cycles done);
/// - any error of `op.apply`.
///
/// # Examples
///
/// ```
/// use ranklet_core::eigen::topk::{sym_eigen_top_k, top_k_workspace_len, DenseSymOp};
/// use ranklet_core::eigen::EigenParams;
/// use ranklet_core::{MatMut, MatRef};
/// let n = 3;
/// let a = [2.0, 0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0, 1.0];
/// let mut op = DenseSymOp::new(MatRef::from_col_major(&a, n, n).unwrap()).unwrap();
/// let mut vals = [0.0f64; 2];
/// let mut v = [0.0; 6];
/// let mut work = vec![0.0; top_k_workspace_len(n, 2)];
/// sym_eigen_top_k(&mut op, &mut vals, MatMut::from_col_major(&mut v, n, 2).unwrap(), &mut work, &EigenParams::default())
///     .unwrap();
/// assert!((vals[0] - 5.0).abs() < 1e-14 && (vals[1] - 2.0).abs() < 1e-14);
/// ```
pub fn sym_eigen_top_k<T: Real, O: SymOperator<T>>(
    op: &mut O,
    vals: &mut [T],
    mut vecs: MatMut<'_, T>,
    work: &mut [T],
    params: &EigenParams,
) -> Result<TopKInfo, LinalgError> {
    let n = op.dim();
    let k = vals.len();
    if k > n {
        return Err(LinalgError::InvalidParameter);
    }
    if vecs.nrows() != n || vecs.ncols() != k {
        return Err(LinalgError::DimensionMismatch);
    }
    let needed = top_k_workspace_len(n, k);
    if work.len() < needed {
        return Err(LinalgError::WorkspaceTooSmall { needed, got: work.len() });
    }
    if k == 0 {
        return Ok(TopKInfo::default());
    }
    if use_dense(n, k) {
        return dense_top_k(op, vals, vecs, work, params);
    }
    let (b, p, m) = sizes(k);
    let tol = if params.tol > 0.0 { T::from_f64(params.tol) } else { T::from_f64(1000.0) * T::EPSILON };
    let (KrylovScratch { v, av, tmp, h, y, theta, coef, ws }, _) = KrylovScratch::split(work, n, p, m)?;
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut info = TopKInfo::default();
    let mut anorm = T::ZERO;

    // Initial block: pseudo-random.
    for x in v[..n * b].iter_mut() {
        *x = rng.next();
    }
    let mut cols = 0;
    extend(op, v, av, n, cols, b, coef, &mut rng, &mut info)?;
    cols += b;
    let mut cycle = 0;
    loop {
        // Grow the block Krylov space up to m columns.
        while cols < m {
            let nb = b.min(m - cols);
            let (src, dst) = (cols - nb, cols);
            v[dst * n..(dst + nb) * n].copy_from_slice(&av[src * n..(src + nb) * n]);
            extend(op, v, av, n, cols, nb, coef, &mut rng, &mut info)?;
            cols += nb;
        }
        cycle += 1;
        info.iterations = cycle;
        // Rayleigh–Ritz: H = Vᵀ·AV, symmetrised.
        {
            let vm = MatRef::from_col_major(&v[..n * m], n, m)?;
            let avm = MatRef::from_col_major(&av[..n * m], n, m)?;
            op.gemm(T::ONE, vm.t(), avm, T::ZERO, MatMut::from_col_major(h, m, m)?)?;
        }
        for j in 0..m {
            for i in j + 1..m {
                let s = (h[i + j * m] + h[j + i * m]) * T::from_f64(0.5);
                h[i + j * m] = s;
            }
        }
        sym_eigen(MatRef::from_col_major(h, m, m)?, theta, Some(MatMut::from_col_major(y, m, m)?), ws, params)?;
        anorm = anorm.max(theta[0].abs()).max(theta[m - 1].abs());
        // Keep the p largest, descending: Y_p in h (m × p).
        for i in 0..p {
            let src = m - 1 - i;
            h[i * m..(i + 1) * m].copy_from_slice(&y[src * m..(src + 1) * m]);
            coef[i] = theta[src];
        }
        {
            let yp = MatRef::from_col_major(&h[..m * p], m, p)?;
            let vm = MatRef::from_col_major(&v[..n * m], n, m)?;
            op.gemm(T::ONE, vm, yp, T::ZERO, MatMut::from_col_major(tmp, n, p)?)?;
            v[..n * p].copy_from_slice(tmp);
            let avm = MatRef::from_col_major(&av[..n * m], n, m)?;
            op.gemm(T::ONE, avm, yp, T::ZERO, MatMut::from_col_major(tmp, n, p)?)?;
            av[..n * p].copy_from_slice(tmp);
        }
        cols = p;
        // Residuals r_i = A·x_i − θ_i·x_i into tmp (n × p).
        let thr = tol * anorm;
        let mut worst = T::ZERO;
        let mut unconv = 0;
        for i in 0..p {
            let r = &mut tmp[i * n..(i + 1) * n];
            let (x, ax) = (&v[i * n..(i + 1) * n], &av[i * n..(i + 1) * n]);
            for ((ri, &xi), &axi) in r.iter_mut().zip(x).zip(ax) {
                *ri = axi - coef[i] * xi;
            }
            let rn = crate::linalg::blas::nrm2(r);
            if i < k {
                worst = worst.max(rn);
                if rn > thr {
                    unconv += 1;
                }
            }
            theta[i] = rn;
        }
        info.max_residual = if anorm > T::ZERO { (worst / anorm).to_f64() } else { 0.0 };
        if unconv == 0 {
            for i in 0..k {
                vals[i] = coef[i];
                let x = &v[i * n..(i + 1) * n];
                match vecs.col_mut(i) {
                    Some(dst) => dst.copy_from_slice(x),
                    None => {
                        for (r, &xv) in x.iter().enumerate() {
                            *vecs.at_mut(r, i) = xv;
                        }
                    }
                }
            }
            return Ok(info);
        }
        if cycle > params.max_iter {
            return Err(LinalgError::NoConvergence { iterations: cycle });
        }
        // Next block: residuals of unconverged pairs (wanted ones first),
        // padded with pseudo-random vectors.
        let mut nb = 0;
        for i in 0..p {
            if nb == b {
                break;
            }
            if theta[i] > thr {
                v[(p + nb) * n..(p + nb + 1) * n].copy_from_slice(&tmp[i * n..(i + 1) * n]);
                nb += 1;
            }
        }
        for x in v[(p + nb) * n..(p + b) * n].iter_mut() {
            *x = rng.next();
        }
        extend(op, v, av, n, cols, b, coef, &mut rng, &mut info)?;
        cols += b;
    }
}

/// Orthonormalises the `nb` candidate columns `v[:, c0..c0+nb]` against all
/// earlier columns (CGS2, replacing vanishing ones by pseudo-random vectors)
/// and sets `av[:, c0..c0+nb] = A·v[:, c0..c0+nb]`.
fn extend<T: Real, O: SymOperator<T>>(
    op: &mut O,
    v: &mut [T],
    av: &mut [T],
    n: usize,
    c0: usize,
    nb: usize,
    coef: &mut [T],
    rng: &mut XorShift,
    info: &mut TopKInfo,
) -> Result<(), LinalgError> {
    for j in c0..c0 + nb {
        let mut tries = 0;
        loop {
            let (lo, hi) = v.split_at_mut(j * n);
            let w = &mut hi[..n];
            let before = crate::linalg::blas::nrm2(w);
            if !before.is_finite() {
                return Err(LinalgError::NonFinite);
            }
            if j > 0 {
                let vj = MatRef::from_col_major(lo, n, j)?;
                for _ in 0..2 {
                    gemv(T::ONE, vj.t(), w, T::ZERO, &mut coef[..j])?;
                    gemv(-T::ONE, vj, &coef[..j], T::ONE, w)?;
                }
            }
            let after = crate::linalg::blas::nrm2(w);
            if before > T::ZERO && after > T::from_f64(1e-8) * before {
                let s = T::ONE / after;
                w.iter_mut().for_each(|x| *x *= s);
                break;
            }
            tries += 1;
            if tries > 4 {
                return Err(LinalgError::NoConvergence { iterations: info.iterations });
            }
            for x in w.iter_mut() {
                *x = rng.next();
            }
        }
    }
    let x = MatRef::from_col_major(&v[c0 * n..(c0 + nb) * n], n, nb)?;
    let y = MatMut::from_col_major(&mut av[c0 * n..(c0 + nb) * n], n, nb)?;
    op.apply(x, y)?;
    info.applies += nb;
    if !av[c0 * n..(c0 + nb) * n].iter().all(|x| x.is_finite()) {
        return Err(LinalgError::NonFinite);
    }
    Ok(())
}

/// `2m > n`: form A = op·I and use the full solver.
fn dense_top_k<T: Real, O: SymOperator<T>>(
    op: &mut O,
    vals: &mut [T],
    mut vecs: MatMut<'_, T>,
    work: &mut [T],
    params: &EigenParams,
) -> Result<TopKInfo, LinalgError> {
    let n = op.dim();
    let k = vals.len();
    let (DenseScratch { x, a, full, ws }, _) = DenseScratch::split(work, n)?;
    x.iter_mut().for_each(|t| *t = T::ZERO);
    for j in 0..n {
        x[j * n + j] = T::ONE;
    }
    op.apply(MatRef::from_col_major(x, n, n)?, MatMut::from_col_major(a, n, n)?)?;
    sym_eigen(MatRef::from_col_major(a, n, n)?, full, Some(MatMut::from_col_major(x, n, n)?), ws, params)?;
    for i in 0..k {
        let src = n - 1 - i;
        vals[i] = full[src];
        for r in 0..n {
            *vecs.at_mut(r, i) = x[src * n + r];
        }
    }
    Ok(TopKInfo { iterations: 0, applies: n, max_residual: 0.0 })
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn rbf(n: usize, gamma: f64) -> Vec<f64> {
        let mut rng = XorShift(12345);
        let pts: Vec<[f64; 3]> = (0..n).map(|_| [rng.next(), rng.next(), rng.next()]).collect();
        let mut a = vec![0.0; n * n];
        for j in 0..n {
            for i in 0..n {
                let d: f64 = (0..3).map(|t| (pts[i][t] - pts[j][t]).powi(2)).sum();
                a[i + j * n] = libm::exp(-gamma * d);
            }
        }
        a
    }

    fn full_desc(a: &[f64], n: usize) -> Vec<f64> {
        let mut vals = vec![0.0; n];
        let mut work = vec![0.0; sym_eigen_workspace_len(n)];
        sym_eigen(MatRef::from_col_major(a, n, n).unwrap(), &mut vals, None, &mut work, &EigenParams::default())
            .unwrap();
        vals.reverse();
        vals
    }

    fn top(a: &[f64], n: usize, k: usize) -> (Vec<f64>, Vec<f64>, TopKInfo) {
        let mut op = DenseSymOp::new(MatRef::from_col_major(a, n, n).unwrap()).unwrap();
        let mut vals = vec![0.0; k];
        let mut v = vec![0.0; n * k];
        let mut work = vec![0.0; top_k_workspace_len(n, k)];
        let info = sym_eigen_top_k(
            &mut op,
            &mut vals,
            MatMut::from_col_major(&mut v, n, k).unwrap(),
            &mut work,
            &EigenParams::default(),
        )
        .unwrap();
        (vals, v, info)
    }

    #[test]
    fn rbf_top_k_matches_full_solver() {
        let n = 150;
        let a = rbf(n, 2.0);
        let want = full_desc(&a, n);
        for k in [1usize, 3, 10, 20, 60, n] {
            let (vals, v, _) = top(&a, n, k);
            for i in 0..k {
                assert!((vals[i] - want[i]).abs() < 1e-10 * want[0], "k={k} i={i}");
                let mut r = 0.0f64;
                for row in 0..n {
                    let mut s = -vals[i] * v[row + i * n];
                    for c in 0..n {
                        s += a[row + c * n] * v[c + i * n];
                    }
                    r += s * s;
                }
                assert!(r.sqrt() < 1e-9 * want[0], "k={k} i={i} res={}", r.sqrt());
            }
        }
    }

    #[test]
    fn f32_top_k_within_its_default_tolerance() {
        let n = 120;
        let a = rbf(n, 3.0);
        let want = full_desc(&a, n);
        let a32: Vec<f32> = a.iter().map(|&x| x as f32).collect();
        let k = 6;
        let mut op = DenseSymOp::new(MatRef::from_col_major(&a32, n, n).unwrap()).unwrap();
        let mut vals = vec![0.0f32; k];
        let mut v = vec![0.0f32; n * k];
        let mut work = vec![0.0f32; top_k_workspace_len(n, k)];
        let info = sym_eigen_top_k(
            &mut op,
            &mut vals,
            MatMut::from_col_major(&mut v, n, k).unwrap(),
            &mut work,
            &EigenParams::default(),
        )
        .unwrap();
        assert!(info.iterations > 0 && info.max_residual <= 1000.0 * f32::EPSILON as f64);
        for i in 0..k {
            assert!((vals[i] as f64 - want[i]).abs() < 1e-5 * want[0], "i={i}");
        }
    }

    #[test]
    fn workspace_lengths_saturate_instead_of_overflowing() {
        assert_eq!(top_k_workspace_len(usize::MAX, 3), usize::MAX);
        assert_eq!(top_k_workspace_len(usize::MAX, usize::MAX), usize::MAX);
        assert_eq!(sym_eigen_workspace_len(usize::MAX / 2), usize::MAX);
        assert_eq!(crate::eigen::jacobi::jacobi_eigen_workspace_len(usize::MAX), usize::MAX);
        // Zero strides make a huge view over one element legal; still no panic.
        let one = [1.0f64];
        let a = MatRef::new(&one, 1 << 40, 1 << 40, 0, 0).unwrap();
        let mut vals = [0.0; 1];
        let r = crate::eigen::tridiag::sym_eigen(a, &mut vals, None, &mut [], &EigenParams::default());
        assert_eq!(r, Err(LinalgError::DimensionMismatch));
        let mut op = DenseSymOp::new(a).unwrap();
        let r = sym_eigen_top_k(
            &mut op,
            &mut vals,
            MatMut::from_col_major(&mut [0.0], 1, 1).unwrap(),
            &mut [],
            &EigenParams::default(),
        );
        assert_eq!(r, Err(LinalgError::DimensionMismatch));
    }

    #[test]
    fn trivial_and_bad_arguments() {
        let a = [4.0];
        let mut op = DenseSymOp::new(MatRef::from_col_major(&a, 1, 1).unwrap()).unwrap();
        let mut vals = [0.0; 1];
        let mut v = [0.0; 1];
        let mut work = vec![0.0; top_k_workspace_len(1, 1)];
        let p = EigenParams::default();
        sym_eigen_top_k(&mut op, &mut vals, MatMut::from_col_major(&mut v, 1, 1).unwrap(), &mut work, &p).unwrap();
        assert_eq!((vals[0], v[0].abs()), (4.0, 1.0));
        let mut none: [f64; 0] = [];
        let r = sym_eigen_top_k(&mut op, &mut none, MatMut::from_col_major(&mut [], 1, 0).unwrap(), &mut [], &p);
        assert_eq!(r, Ok(TopKInfo::default()));
        let mut two = [0.0; 2];
        let mut v2 = [0.0; 2];
        let r = sym_eigen_top_k(&mut op, &mut two, MatMut::from_col_major(&mut v2, 1, 2).unwrap(), &mut work, &p);
        assert_eq!(r, Err(LinalgError::InvalidParameter));
    }
}
