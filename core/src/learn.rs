//! The least-squares ranking learners: RLS, RankRLS, KPCR and KPCRank.
//!
//! All four minimise `(s − f)ᵀ L (s − f)` plus a penalty, with `L` from a
//! [`Graph`] (identity for the regressors RLS/KPCR, a preference graph for
//! the rankers RankRLS/KPCRank). Each is written once here, over
//! [`Backend`], on caller buffers.
//!
//! - **RLS / RankRLS, primal** (004 §4.3, eq. 30–32; 000 eq. 5):
//!   `(XᵀLX + λI)·w = Xᵀt`, `t = Ls` (or `Dᵀm` for pairs) — [`ls_primal`].
//! - **RLS / RankRLS, dual**: `(LK + λI)·a = t`, `f(x) = Σᵢ aᵢ k(x, xᵢ)` —
//!   [`ls_dual`]. For `Identity`/`Queries` graphs it is solved in the
//!   symmetric form `(L^{½}KL^{½} + λI)·c = L^{½}s`, `a = L^{½}c` (Cholesky,
//!   half the flops of LU); for explicit pairs by LU.
//! - **KPCR / KPCRank** (000 §3–4.2, eqs. 1–9): centre the kernel
//!   (`K̂ = HKH`, 000 §6.1), take its top-p eigenpairs `K̂ ≈ VΛVᵀ`, project
//!   the training rows onto the components, `Z = K̂VΛ^{-½} = VΛ^{½}` (eq. 3),
//!   and solve `(ZᵀLZ + λI)·w̄ = Zᵀt` (eq. 8 with `λ = 0`; `λ > 0` is an
//!   optional ridge). The model is `f(x) = Σᵢ αᵢ k̂(x, xᵢ)` with
//!   `α = VΛ^{-½}w̄` (eq. 9) and `k̂` the test-centred kernel.
//!   KPCR is the same with `L = I` (plus the mean of `s` as offset).
//!
//! **One decomposition for every p** (000 §4.2). `Z_p` is the first `p`
//! columns of `Z`, so `M_p = Z_pᵀLZ_p + λI` is the leading `p × p` block of
//! `M = M_{p_max}`, and the Cholesky factor of a leading block is the leading
//! block of the Cholesky factor. One factorisation of `M` (O(p_max³)) then
//! gives `w̄_p` for every `p` by an O(p²) back substitution ([`kpc_solve`]).
//! (The paper's own suggestion — zeroing eigenvalues of an eigendecomposition
//! of `M` — does not restrict to the first `p` components; the leading-block
//! property does, exactly.)

use crate::backend::Backend;
use crate::graph::Graph;
use crate::linalg::blas::{dot, gemv};
use crate::{LinalgError, MatMut, MatRef};

/// Scratch for [`ls_primal`] with `n` rows and `d` features.
pub fn ls_primal_workspace_len(n: usize, d: usize) -> usize {
    d * d + n * d + 2 * n
}

fn take<'w>(work: &mut &'w mut [f64], len: usize) -> Result<&'w mut [f64], LinalgError> {
    if work.len() < len {
        return Err(LinalgError::WorkspaceTooSmall { needed: len, got: work.len() });
    }
    let (a, b) = core::mem::take(work).split_at_mut(len);
    *work = b;
    Ok(a)
}

fn check_lambda(lambda: f64) -> Result<(), LinalgError> {
    if lambda.is_finite() && lambda >= 0.0 {
        Ok(())
    } else {
        Err(LinalgError::InvalidParameter)
    }
}

/// Primal RLS / RankRLS: solves `(XᵀLX + λI)·w = Xᵀt` for `w` (`d`).
///
/// `x` is `n × d` (dense rows), `s` the `n` scores (ignored for a pair
/// graph). For graphs with a cheap `L^{½}` the Gram matrix is a syrk of
/// `L^{½}X`; otherwise `Xᵀ(LX)` by gemm.
///
/// # Errors
/// `InvalidParameter` for `λ < 0` or non-finite; `NotPositiveDefinite` when
/// `XᵀLX + λI` is singular (e.g. `λ = 0` with fewer rows than features);
/// dimension, workspace and non-finite errors.
pub fn ls_primal<B: Backend>(
    backend: &mut B,
    x: MatRef<'_, f64>,
    graph: &Graph<'_>,
    s: &[f64],
    lambda: f64,
    w: &mut [f64],
    mut work: &mut [f64],
) -> Result<(), LinalgError> {
    let d = x.ncols();
    let a = take(&mut work, d * d)?;
    primal_system(backend, x, graph, s, lambda, a, w, work)?;
    backend.cholesky_solve_in_place(MatRef::from_col_major(a, d, d)?, MatMut::from_col_major(w, d, 1)?)
}

/// Builds and factors the primal system: `a ← chol(XᵀLX + λI)` (`d × d`,
/// lower factor) and `rhs ← Xᵀt`.
fn primal_system<B: Backend>(
    backend: &mut B,
    x: MatRef<'_, f64>,
    graph: &Graph<'_>,
    s: &[f64],
    lambda: f64,
    a: &mut [f64],
    rhs: &mut [f64],
    mut work: &mut [f64],
) -> Result<(), LinalgError> {
    check_lambda(lambda)?;
    graph.validate()?;
    let (n, d) = (x.nrows(), x.ncols());
    if graph.n() != n || rhs.len() != d || a.len() != d * d || (!matches!(graph, Graph::Pairs { .. }) && s.len() != n) {
        return Err(LinalgError::DimensionMismatch);
    }
    if !x.all_finite() {
        return Err(LinalgError::NonFinite);
    }
    let lx = take(&mut work, n * d)?;
    let t = take(&mut work, n)?;
    let tmp = take(&mut work, n)?;
    let mut a = MatMut::from_col_major(a, d, d)?;
    let sqrt = graph.has_sqrt();
    graph.apply_cols(x, MatMut::from_col_major(lx, n, d)?, sqrt, tmp)?;
    let lxv = MatRef::from_col_major(lx, n, d)?;
    if sqrt {
        // XᵀLX = (L^{½}X)ᵀ(L^{½}X), Xᵀt = (L^{½}X)ᵀ(L^{½}s).
        backend.syrk(1.0, lxv.t(), 0.0, a.rb_mut())?;
        if s.iter().any(|v| !v.is_finite()) {
            return Err(LinalgError::NonFinite);
        }
        graph.apply_sqrt(s, t)?;
        gemv(1.0, lxv.t(), t, 0.0, rhs)?;
    } else {
        backend.gemm(1.0, x.t(), lxv, 0.0, a.rb_mut())?;
        graph.target(s, t)?;
        gemv(1.0, x.t(), t, 0.0, rhs)?;
    }
    for i in 0..d {
        *a.at_mut(i, i) += lambda;
    }
    backend.cholesky_in_place(a)
}

/// Scratch for [`ls_dual`] with `n` rows.
pub fn ls_dual_workspace_len(n: usize) -> usize {
    n * n + 3 * n
}

/// Dual RLS / RankRLS: solves `(LK + λI)·a = t` for the `n` coefficients
/// `a`, given the `n × n` kernel matrix `k` (both triangles read).
///
/// # Errors
/// `InvalidParameter` unless `λ > 0` (the system is singular at `λ = 0`
/// whenever `L` has a null space); `NotPositiveDefinite`/`Singular` if the
/// system is numerically singular; dimension, workspace, non-finite errors.
pub fn ls_dual<B: Backend>(
    backend: &mut B,
    k: MatRef<'_, f64>,
    graph: &Graph<'_>,
    s: &[f64],
    lambda: f64,
    a: &mut [f64],
    mut work: &mut [f64],
) -> Result<(), LinalgError> {
    check_lambda(lambda)?;
    if lambda == 0.0 {
        return Err(LinalgError::InvalidParameter);
    }
    graph.validate()?;
    let n = k.nrows();
    if k.ncols() != n || graph.n() != n || a.len() != n || (!matches!(graph, Graph::Pairs { .. }) && s.len() != n) {
        return Err(LinalgError::DimensionMismatch);
    }
    if !k.all_finite() {
        return Err(LinalgError::NonFinite);
    }
    let m = take(&mut work, n * n)?;
    let tmp = take(&mut work, n)?;
    let c = take(&mut work, n)?;
    let tmp2 = take(&mut work, n)?;
    if graph.has_sqrt() {
        sqrt_system_factor(backend, k, graph, lambda, m, tmp, tmp2)?;
        sqrt_system_solve(backend, graph, s, m, c, a)
    } else {
        graph.apply_cols(k, MatMut::from_col_major(m, n, n)?, false, tmp)?;
        let mut mm = MatMut::from_col_major(m, n, n)?;
        for i in 0..n {
            *mm.at_mut(i, i) += lambda;
        }
        graph.target(s, a)?;
        backend.lu_solve_in_place(mm, MatMut::from_col_major(a, n, 1)?)
    }
}

/// `m ← chol(L^{½}KL^{½} + λI)` (`n × n`, lower factor): `L^{½}` applied to
/// the columns of `K`, then to the rows. `tmp`, `tmp2` hold `n` each.
fn sqrt_system_factor<B: Backend>(
    backend: &mut B,
    k: MatRef<'_, f64>,
    graph: &Graph<'_>,
    lambda: f64,
    m: &mut [f64],
    tmp: &mut [f64],
    tmp2: &mut [f64],
) -> Result<(), LinalgError> {
    let n = k.nrows();
    graph.apply_cols(k, MatMut::from_col_major(m, n, n)?, true, tmp)?;
    let mut mm = MatMut::from_col_major(m, n, n)?;
    for i in 0..n {
        (0..n).for_each(|j| tmp[j] = mm.at(i, j));
        graph.apply_sqrt(tmp, tmp2)?;
        (0..n).for_each(|j| *mm.at_mut(i, j) = tmp2[j]);
    }
    for i in 0..n {
        *mm.at_mut(i, i) += lambda;
    }
    backend.cholesky_in_place(mm)
}

/// The dual coefficients from the factor of [`sqrt_system_factor`]:
/// `a = L^{½}(L^{½}KL^{½} + λI)⁻¹L^{½}s`; `c` is `n` elements of scratch.
fn sqrt_system_solve<B: Backend>(
    backend: &mut B,
    graph: &Graph<'_>,
    s: &[f64],
    factor: &[f64],
    c: &mut [f64],
    a: &mut [f64],
) -> Result<(), LinalgError> {
    let n = c.len();
    if s.iter().any(|v| !v.is_finite()) {
        return Err(LinalgError::NonFinite);
    }
    graph.apply_sqrt(s, c)?;
    backend.cholesky_solve_in_place(MatRef::from_col_major(factor, n, n)?, MatMut::from_col_major(c, n, 1)?)?;
    graph.apply_sqrt(c, a)
}

/// `w ← Xᵀa`: the primal weights of a dual solution with the linear kernel,
/// so that a linear-kernel model is always exported as a linear model.
pub fn dual_to_primal(x: &crate::kernel::Rows<'_>, a: &[f64], w: &mut [f64]) -> Result<(), LinalgError> {
    if a.len() != x.nrows() || w.len() != x.ncols() {
        return Err(LinalgError::DimensionMismatch);
    }
    match x {
        crate::kernel::Rows::Dense(m) => gemv(1.0, m.t(), a, 0.0, w),
        crate::kernel::Rows::Sparse(sp) => {
            w.iter_mut().for_each(|v| *v = 0.0);
            for (i, &ai) in a.iter().enumerate() {
                let (c, v) = sp.row(i);
                c.iter().zip(v).for_each(|(&c, &v)| w[c as usize] += ai * v);
            }
            Ok(())
        }
    }
}

/// Centres a symmetric kernel matrix in feature space (000 §6.1):
/// `K̂ = HKH`, `H = I − 11ᵀ/n`. Writes `K̂` to `out` (`n × n`), the column
/// means of `K` to `colmean` (`n`), and returns the grand mean — the terms
/// [`center_test_kernel`] and the model file need.
pub fn center_kernel(k: MatRef<'_, f64>, mut out: MatMut<'_, f64>, colmean: &mut [f64]) -> Result<f64, LinalgError> {
    let n = k.nrows();
    if k.ncols() != n || out.nrows() != n || out.ncols() != n || colmean.len() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    if !k.all_finite() {
        return Err(LinalgError::NonFinite);
    }
    if n == 0 {
        return Ok(0.0);
    }
    for (j, cm) in colmean.iter_mut().enumerate() {
        *cm = (0..n).map(|i| k.at(i, j)).sum::<f64>() / n as f64;
    }
    let grand = colmean.iter().sum::<f64>() / n as f64;
    for j in 0..n {
        for i in 0..n {
            *out.at_mut(i, j) = k.at(i, j) - colmean[i] - colmean[j] + grand;
        }
    }
    Ok(grand)
}

/// Centres a test kernel `K_t` (`n_t × n`, rows = test points) against the
/// training centring terms (000 §6.1):
/// `K̂_t = (K_t − 1 colmeanᵀ)(I − 11ᵀ/n)`, i.e.
/// `k̂(x, xᵢ) = k(x, xᵢ) − mean_j k(x, xⱼ) − colmeanᵢ + grand`.
pub fn center_test_kernel(
    kt: MatRef<'_, f64>,
    colmean: &[f64],
    grand: f64,
    mut out: MatMut<'_, f64>,
) -> Result<(), LinalgError> {
    let (nt, n) = (kt.nrows(), kt.ncols());
    if colmean.len() != n || out.nrows() != nt || out.ncols() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    if n == 0 {
        return Ok(());
    }
    for t in 0..nt {
        let rowmean = (0..n).map(|j| kt.at(t, j)).sum::<f64>() / n as f64;
        for i in 0..n {
            *out.at_mut(t, i) = kt.at(t, i) - rowmean - colmean[i] + grand;
        }
    }
    Ok(())
}

/// Scratch for [`kpc_decompose`].
pub fn kpc_decompose_workspace_len(n: usize, p_max: usize) -> usize {
    if use_full_eigen(n, p_max) {
        n + n * n
    } else {
        0
    }
}

/// Above this fraction of `n` the full solver is cheaper than top-k.
fn use_full_eigen(n: usize, p_max: usize) -> bool {
    3 * p_max >= n
}

/// The top `p_max` eigenpairs of the centred kernel `kc`, largest first,
/// into `vals` (`p_max`) and `vecs` (`n × p_max`). Returns the numerical
/// rank among them: the number of eigenvalues above `n·ε·λ_max` (the numpy
/// `matrix_rank` rule); components past it must not be used.
pub fn kpc_decompose<B: Backend>(
    backend: &mut B,
    kc: MatRef<'_, f64>,
    vals: &mut [f64],
    mut vecs: MatMut<'_, f64>,
    mut work: &mut [f64],
) -> Result<usize, LinalgError> {
    let n = kc.nrows();
    let p = vals.len();
    if kc.ncols() != n || vecs.nrows() != n || vecs.ncols() != p || p > n {
        return Err(LinalgError::DimensionMismatch);
    }
    if p == 0 {
        return Err(LinalgError::InvalidParameter);
    }
    if use_full_eigen(n, p) {
        let all_vals = take(&mut work, n)?;
        let all_vecs = take(&mut work, n * n)?;
        backend.sym_eigen(kc, all_vals, MatMut::from_col_major(all_vecs, n, n)?)?;
        let v = MatRef::from_col_major(all_vecs, n, n)?;
        for l in 0..p {
            let src = n - 1 - l;
            vals[l] = all_vals[src];
            for i in 0..n {
                *vecs.at_mut(i, l) = v.at(i, src);
            }
        }
    } else {
        backend.sym_eigen_top_k(kc, vals, vecs.rb_mut())?;
    }
    let tol = n as f64 * f64::EPSILON * vals[0].abs().max(f64::MIN_POSITIVE);
    Ok(vals.iter().take_while(|&&v| v > tol).count())
}

/// Scratch for [`kpc_normal_equations`].
pub fn kpc_normal_equations_workspace_len(n: usize, p: usize) -> usize {
    2 * n * p + 3 * n
}

/// Builds `M = ZᵀLZ + λI` (`p × p`) and `r = Zᵀt` (`p`) for the components
/// `Z = VΛ^{½}` of [`kpc_decompose`] (`vals`, `vecs` restricted to the first
/// `p` usable components).
pub fn kpc_normal_equations<B: Backend>(
    backend: &mut B,
    graph: &Graph<'_>,
    s: &[f64],
    vals: &[f64],
    vecs: MatRef<'_, f64>,
    lambda: f64,
    mut m: MatMut<'_, f64>,
    r: &mut [f64],
    mut work: &mut [f64],
) -> Result<(), LinalgError> {
    check_lambda(lambda)?;
    graph.validate()?;
    let (n, p) = (vecs.nrows(), vals.len());
    if vecs.ncols() < p || graph.n() != n || m.nrows() != p || m.ncols() != p || r.len() != p {
        return Err(LinalgError::DimensionMismatch);
    }
    if vals.iter().any(|&v| !(v > 0.0) || !v.is_finite()) {
        return Err(LinalgError::InvalidParameter);
    }
    let z = take(&mut work, n * p)?;
    let lz = take(&mut work, n * p)?;
    let t = take(&mut work, n)?;
    let tmp = take(&mut work, n)?;
    for l in 0..p {
        let sq = libm::sqrt(vals[l]);
        for i in 0..n {
            z[l * n + i] = vecs.at(i, l) * sq;
        }
    }
    let zv = MatRef::from_col_major(z, n, p)?;
    let sqrt = graph.has_sqrt();
    graph.apply_cols(zv, MatMut::from_col_major(lz, n, p)?, sqrt, tmp)?;
    let lzv = MatRef::from_col_major(lz, n, p)?;
    if sqrt {
        backend.syrk(1.0, lzv.t(), 0.0, m.rb_mut())?;
    } else {
        backend.gemm(1.0, zv.t(), lzv, 0.0, m.rb_mut())?;
    }
    for i in 0..p {
        *m.at_mut(i, i) += lambda;
    }
    graph.target(s, t)?;
    gemv(1.0, zv.t(), t, 0.0, r)
}

/// In-place left-looking Cholesky of `M` (`p × p`, lower triangle read and
/// overwritten) that stops at the first pivot that is not safely positive
/// (`≤ p·ε·max diag`). Returns how many leading columns were factored: the
/// largest usable number of components. Left-looking order makes the
/// leading-block property explicit: column `j` depends only on columns `< j`.
pub fn kpc_factor(mut m: MatMut<'_, f64>) -> Result<usize, LinalgError> {
    let p = m.nrows();
    if m.ncols() != p {
        return Err(LinalgError::DimensionMismatch);
    }
    if !m.rb().all_finite() {
        return Err(LinalgError::NonFinite);
    }
    let maxdiag = (0..p).map(|i| m.at(i, i).abs()).fold(0.0f64, f64::max);
    let tol = (p.max(1) as f64) * f64::EPSILON * maxdiag;
    for j in 0..p {
        let mut d = m.at(j, j);
        for t in 0..j {
            d -= m.at(j, t) * m.at(j, t);
        }
        if !(d > tol) {
            return Ok(j);
        }
        let ljj = libm::sqrt(d);
        *m.at_mut(j, j) = ljj;
        for i in j + 1..p {
            let mut v = m.at(i, j);
            for t in 0..j {
                v -= m.at(i, t) * m.at(j, t);
            }
            *m.at_mut(i, j) = v / ljj;
        }
    }
    Ok(p)
}

/// `w̄_p = M_p⁻¹ r_p` for the first `p = w.len()` components from the factor
/// of [`kpc_factor`] — O(p²), no refactorisation.
pub fn kpc_solve(l: MatRef<'_, f64>, r: &[f64], w: &mut [f64]) -> Result<(), LinalgError> {
    let p = w.len();
    if l.nrows() < p || l.ncols() < p || r.len() < p {
        return Err(LinalgError::DimensionMismatch);
    }
    for i in 0..p {
        let mut v = r[i];
        for t in 0..i {
            v -= l.at(i, t) * w[t];
        }
        w[i] = v / l.at(i, i);
    }
    for i in (0..p).rev() {
        let mut v = w[i];
        for t in i + 1..p {
            v -= l.at(t, i) * w[t];
        }
        w[i] = v / l.at(i, i);
    }
    if w.iter().any(|v| !v.is_finite()) {
        return Err(LinalgError::Singular { index: 0 });
    }
    Ok(())
}

/// Expansion coefficients `α = V_pΛ_p^{-½}w̄` (000 eq. 9), so that
/// `f(x) = Σᵢ αᵢ k̂(x, xᵢ)`.
pub fn kpc_coefficients(vals: &[f64], vecs: MatRef<'_, f64>, w: &[f64], alpha: &mut [f64]) -> Result<(), LinalgError> {
    let (n, p) = (vecs.nrows(), w.len());
    if vals.len() < p || vecs.ncols() < p || alpha.len() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    alpha.iter_mut().for_each(|v| *v = 0.0);
    for l in 0..p {
        let c = w[l] / libm::sqrt(vals[l]);
        for (i, ai) in alpha.iter_mut().enumerate() {
            *ai += c * vecs.at(i, l);
        }
    }
    Ok(())
}

/// Projections of (centred) test rows onto the components:
/// `T = K̂_t·V·Λ^{-½}` (`n_t × p`, 000 eq. 2), so that the predictions with
/// `p' ≤ p` components are `T[:, :p']·w̄_{p'}`.
pub fn kpc_project<B: Backend>(
    backend: &mut B,
    kt_centred: MatRef<'_, f64>,
    vals: &[f64],
    vecs: MatRef<'_, f64>,
    mut out: MatMut<'_, f64>,
) -> Result<(), LinalgError> {
    let p = vals.len();
    let (nt, n) = (kt_centred.nrows(), kt_centred.ncols());
    if vecs.nrows() != n || vecs.ncols() < p || out.nrows() != nt || out.ncols() != p {
        return Err(LinalgError::DimensionMismatch);
    }
    backend.gemm(1.0, kt_centred, vecs.submatrix(0, 0, n, p)?, 0.0, out.rb_mut())?;
    for (l, &v) in vals.iter().enumerate() {
        let c = 1.0 / libm::sqrt(v);
        for t in 0..nt {
            *out.at_mut(t, l) *= c;
        }
    }
    Ok(())
}

/// Predictions `T[:, :p]·w̄_p` for one `p = w.len()`.
pub fn kpc_predict_projected(t: MatRef<'_, f64>, w: &[f64], out: &mut [f64]) -> Result<(), LinalgError> {
    let p = w.len();
    if t.ncols() < p || out.len() != t.nrows() {
        return Err(LinalgError::DimensionMismatch);
    }
    gemv(1.0, t.submatrix(0, 0, t.nrows(), p)?, w, 0.0, out)
}

/// Mean of `s` — the offset of a KPCR model, whose centred components are
/// orthogonal to the constant vector.
pub fn mean(s: &[f64]) -> f64 {
    if s.is_empty() {
        0.0
    } else {
        s.iter().sum::<f64>() / s.len() as f64
    }
}

/// `Σᵢ aᵢ bᵢ` (re-exported for the host's prediction loops).
pub fn inner(a: &[f64], b: &[f64]) -> Result<f64, LinalgError> {
    dot(a, b)
}

/// Held-out blocks of a block-diagonal graph: the queries of a `Queries`
/// graph (leave-query-out), singletons of `Identity` (leave-one-out).
fn holdout_block(graph: &Graph<'_>, q: usize) -> Option<(usize, usize)> {
    match *graph {
        Graph::Identity { n } => (q < n).then_some((q, q + 1)),
        Graph::Queries { query_ptr, .. } => query_ptr.get(q + 1).map(|&e| (query_ptr[q], e)),
        Graph::Pairs { .. } => None,
    }
}

/// Largest held-out block (1 for `Identity`, 0 for `Pairs`).
fn max_block(graph: &Graph<'_>) -> usize {
    match *graph {
        Graph::Identity { .. } => 1,
        Graph::Queries { query_ptr, .. } => query_ptr.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0),
        Graph::Pairs { .. } => 0,
    }
}

/// `(c, centre)` with `L_RR = c·(I − 11ᵀ/l)` if `centre`, else `I`.
fn block_laplacian_form(graph: &Graph<'_>, l: usize) -> (f64, bool) {
    match *graph {
        Graph::Queries { weight: crate::graph::QueryWeight::Pairs, .. } => (l as f64, true),
        Graph::Queries { .. } => (1.0, true),
        _ => (1.0, false),
    }
}

/// Solves the held-out identity of a linear smoother `f = H·s` whose loss is
/// block-diagonal: the prediction for block R with R's labels removed is
/// `f_R⁻ = (I − H_RR)⁻¹ (f_R − H_RR·s_R)` — replacing the held-out labels by
/// their held-out predictions leaves the fit unchanged, because their loss
/// block then vanishes with zero gradient. `h` is `H_RR` (`l × l`,
/// column-major, destroyed); `out` receives `f_R⁻`.
fn holdout_from_hat(h: &mut [f64], f_r: &[f64], s_r: &[f64], out: &mut [f64]) -> Result<(), LinalgError> {
    let l = f_r.len();
    for i in 0..l {
        out[i] = f_r[i] - (0..l).map(|j| h[j * l + i] * s_r[j]).sum::<f64>();
    }
    for v in h.iter_mut() {
        *v = -*v;
    }
    for i in 0..l {
        h[i * l + i] += 1.0;
    }
    crate::linalg::lu::lu_solve_in_place(MatMut::from_col_major(h, l, l)?, MatMut::from_col_major(out, l, 1)?)
}

/// `H_RR ← G·L_RR` for the `l × l` column-major `G`, using `tmp` (`l`).
fn times_block_laplacian(graph: &Graph<'_>, g: &mut [f64], l: usize, tmp: &mut [f64]) {
    let (c, centre) = block_laplacian_form(graph, l);
    if !centre {
        return;
    }
    // (G·c(I − 11ᵀ/l))[:, j] = c·(G[:, j] − rowmean(G)).
    for i in 0..l {
        tmp[i] = (0..l).map(|j| g[j * l + i]).sum::<f64>() / l as f64;
    }
    for j in 0..l {
        for i in 0..l {
            g[j * l + i] = c * (g[j * l + i] - tmp[i]);
        }
    }
}

/// Scratch for [`ls_primal_holdout`].
pub fn ls_primal_holdout_workspace_len(n: usize, d: usize, max_block: usize) -> usize {
    ls_primal_workspace_len(n, d) + d + d * max_block + max_block * max_block + 3 * max_block
}

/// Fast closed-form leave-one-out (RLS, `Identity` graph) or
/// leave-query-out (RankRLS, `Queries` graph) predictions of the primal
/// learner for every row, into `out` (`n`). One d×d factorisation, then
/// per held-out block `H_RR = X_R·A⁻¹·X_Rᵀ·L_RR` (`A = XᵀLX + λI`): in all
/// O(n·d² + Σ l_q·d²) instead of one refit per block.
///
/// # Errors
/// `InvalidParameter` for a pair graph (its loss is not block-diagonal);
/// otherwise as [`ls_primal`].
pub fn ls_primal_holdout<B: Backend>(
    backend: &mut B,
    x: MatRef<'_, f64>,
    graph: &Graph<'_>,
    s: &[f64],
    lambda: f64,
    out: &mut [f64],
    mut work: &mut [f64],
) -> Result<(), LinalgError> {
    let (n, d) = (x.nrows(), x.ncols());
    let mb = max_block(graph);
    if mb == 0 {
        return Err(LinalgError::InvalidParameter);
    }
    if out.len() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    let a = take(&mut work, d * d)?;
    let w = take(&mut work, d)?;
    let bmat = take(&mut work, d * mb)?;
    let h = take(&mut work, mb * mb)?;
    let fr = take(&mut work, mb)?;
    let tmp = take(&mut work, mb)?;
    let res = take(&mut work, mb)?;
    primal_system(backend, x, graph, s, lambda, a, w, work)?;
    let av = MatRef::from_col_major(a, d, d)?;
    backend.cholesky_solve_in_place(av, MatMut::from_col_major(w, d, 1)?)?;
    gemv(1.0, x, w, 0.0, out)?;
    let mut q = 0;
    while let Some((r0, r1)) = holdout_block(graph, q) {
        q += 1;
        let l = r1 - r0;
        if l == 0 {
            continue;
        }
        // B = A⁻¹·X_Rᵀ (d × l); H_RR = X_R·B·L_RR (l × l).
        for c in 0..l {
            for j in 0..d {
                bmat[c * d + j] = x.at(r0 + c, j);
            }
        }
        backend.cholesky_solve_in_place(av, MatMut::from_col_major(&mut bmat[..d * l], d, l)?)?;
        for c in 0..l {
            for i in 0..l {
                h[c * l + i] = (0..d).map(|j| x.at(r0 + i, j) * bmat[c * d + j]).sum();
            }
        }
        times_block_laplacian(graph, &mut h[..l * l], l, tmp);
        fr[..l].copy_from_slice(&out[r0..r1]);
        holdout_from_hat(&mut h[..l * l], &fr[..l], &s[r0..r1], &mut res[..l])?;
        out[r0..r1].copy_from_slice(&res[..l]);
    }
    Ok(())
}

/// Scratch for [`ls_dual_holdout`].
pub fn ls_dual_holdout_workspace_len(n: usize, max_block: usize) -> usize {
    n + 3 * n * n + 2 * n + n * max_block + max_block * max_block + 2 * max_block
}

/// Fast closed-form leave-one-out (RLS) / leave-query-out (RankRLS)
/// predictions of the dual learner for every row, into `out` (`n`).
///
/// With `C = L^{½}KL^{½} + λI` the fit is `f = H·s`,
/// `H = K·L^{½}·C⁻¹·L^{½}`; since `L^{½}` is block-diagonal,
/// `H_RR = (L^{½}K)_{:,R}ᵀ·(C⁻¹)_{:,R}·L^{½}_RR`. One Cholesky of `C` and
/// one solve for `C⁻¹` (O(n³) in all, like a single fit), then O(n·l²) per
/// block.
pub fn ls_dual_holdout<B: Backend>(
    backend: &mut B,
    k: MatRef<'_, f64>,
    graph: &Graph<'_>,
    s: &[f64],
    lambda: f64,
    out: &mut [f64],
    mut work: &mut [f64],
) -> Result<(), LinalgError> {
    let n = k.nrows();
    let mb = max_block(graph);
    if mb == 0 {
        return Err(LinalgError::InvalidParameter);
    }
    if out.len() != n || k.ncols() != n || s.len() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    check_lambda(lambda)?;
    if lambda == 0.0 || !k.all_finite() {
        return Err(if lambda == 0.0 { LinalgError::InvalidParameter } else { LinalgError::NonFinite });
    }
    graph.validate()?;
    let a = take(&mut work, n)?;
    let c = take(&mut work, n * n)?;
    let cinv = take(&mut work, n * n)?;
    let lk = take(&mut work, n * n)?;
    let tmp = take(&mut work, n)?;
    let tmp2 = take(&mut work, n)?;
    let gr = take(&mut work, n * mb)?;
    let h = take(&mut work, mb * mb)?;
    let fr = take(&mut work, mb)?;
    let res = take(&mut work, mb)?;
    // The fit itself (as ls_dual), keeping the factor of C = L^{½}KL^{½} + λI.
    sqrt_system_factor(backend, k, graph, lambda, c, tmp, tmp2)?;
    sqrt_system_solve(backend, graph, s, c, tmp, a)?;
    gemv(1.0, k, a, 0.0, out)?;
    // lk = L^{½}K (L^{½} applied to the columns; K is symmetric).
    graph.apply_cols(k, MatMut::from_col_major(lk, n, n)?, true, tmp)?;
    {
        let mut ci = MatMut::from_col_major(cinv, n, n)?;
        ci.fill(0.0);
        for i in 0..n {
            *ci.at_mut(i, i) = 1.0;
        }
    }
    backend.cholesky_solve_in_place(MatRef::from_col_major(c, n, n)?, MatMut::from_col_major(cinv, n, n)?)?;
    let lkv = MatRef::from_col_major(lk, n, n)?;
    let mut q = 0;
    while let Some((r0, r1)) = holdout_block(graph, q) {
        q += 1;
        let l = r1 - r0;
        if l == 0 {
            continue;
        }
        // G = (C⁻¹)_{:,R}·L^{½}_RR (n × l); L^{½}_RR = √c(I − 11ᵀ/l) or I.
        let (cq, centre) = block_laplacian_form(graph, l);
        let sc = libm::sqrt(cq);
        for i in 0..n {
            let row = &cinv[..];
            let mean = if centre { (r0..r1).map(|j| row[j * n + i]).sum::<f64>() / l as f64 } else { 0.0 };
            for (jj, j) in (r0..r1).enumerate() {
                gr[jj * n + i] = if centre { sc * (row[j * n + i] - mean) } else { row[j * n + i] };
            }
        }
        // H_RR = (L^{½}K)_{:,R}ᵀ·G.
        for cc in 0..l {
            for i in 0..l {
                h[cc * l + i] = (0..n).map(|t| lkv.at(t, r0 + i) * gr[cc * n + t]).sum();
            }
        }
        fr[..l].copy_from_slice(&out[r0..r1]);
        holdout_from_hat(&mut h[..l * l], &fr[..l], &s[r0..r1], &mut res[..l])?;
        out[r0..r1].copy_from_slice(&res[..l]);
    }
    Ok(())
}
