//! KPCR and KPCRank (000 §3–4.2, eqs. 1–9): least squares on the top-p
//! kernel principal components.
//!
//! Centre the kernel (`K̂ = HKH`, 000 §6.1), take its top-p eigenpairs
//! `K̂ ≈ VΛVᵀ`, project the training rows onto the components,
//! `Z = K̂VΛ^{-½} = VΛ^{½}` (eq. 3), and solve `(ZᵀLZ + λI)·w̄ = Zᵀt`
//! (eq. 8 with `λ = 0`; `λ > 0` is an optional ridge). The model is
//! `f(x) = b + Σᵢ αᵢ k̂(x, xᵢ)` with `α = VΛ^{-½}w̄` (eq. 9) and `k̂` the
//! test-centred kernel. KPCR is the same with `L = I` and `b = mean(s)`.
//!
//! **One decomposition for every p** (000 §4.2). `Z_p` is the first `p`
//! columns of `Z`, so `M_p = Z_pᵀLZ_p + λI` is the leading `p × p` block of
//! `M = M_{p_max}`, and the Cholesky factor of a leading block is the leading
//! block of the Cholesky factor. One factorisation of `M` (O(p_max³),
//! [`cholesky_leading_in_place`]) then gives `w̄_p` for every `p` by an
//! O(p²) solve ([`kpc_solve`]). (The paper's own suggestion — zeroing
//! eigenvalues of an eigendecomposition of `M` — does not restrict to the
//! first `p` components; the leading-block property does, exactly.)
//!
//! Entry points: [`fit`] (data rows → model coefficients and centring
//! terms, one call) and [`cv_fold`] (one fold: every (λ, p) of a grid from
//! one decomposition, one call). The steps they are built from are public
//! for tests and for learners that reuse them.

use super::{check_graph, check_lambda, mean, LearnError};
use crate::backend::Backend;
use crate::graph::Graph;
use crate::kernel::{
    center_test_kernel_in_place, kernel_matrix, kernel_matrix_sym, kernel_matrix_workspace_len, Kernel,
};
use crate::linalg::blas::gemv;
use crate::linalg::chol::{cholesky_leading_in_place, cholesky_solve_in_place};
use crate::linalg::Rows;
use crate::{scratch, LinalgError, MatMut, MatRef};

scratch! {
    /// Scratch of [`kpc_decompose`] when it takes the full solver.
    struct FullEigenScratch(n: usize) {
        /// All eigenvalues.
        vals: n,
        /// All eigenvectors.
        vecs: n * n,
    }
}

/// Scratch for [`kpc_decompose`].
pub fn kpc_decompose_workspace_len(n: usize, p_max: usize) -> usize {
    if use_full_eigen(n, p_max) {
        FullEigenScratch::len(n)
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
    work: &mut [f64],
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
        let (FullEigenScratch { vals: all_vals, vecs: all_vecs }, _) = FullEigenScratch::split(work, n)?;
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
    NormalScratch::len(n, p)
}

scratch! {
    /// Scratch of [`kpc_normal_equations`].
    struct NormalScratch(n: usize, p: usize) {
        /// `Z = VΛ^{½}`.
        z: n * p,
        /// `LZ` or `L^{½}Z`.
        lz: n * p,
        /// The target `Ls`.
        t: n,
        /// Graph products.
        tmp: n,
    }
}

/// The training data of a KPCR / KPCRank fit ([`fit`], [`cv_fold`] and the
/// Nyström variants of [`super::nystrom`]): the kernel, the rows, the
/// preference graph (the identity for KPCR) and the targets `s`.
#[derive(Clone, Copy, Debug)]
pub struct Training<'a> {
    /// The kernel.
    pub kernel: &'a Kernel,
    /// The training rows.
    pub rows: &'a Rows<'a>,
    /// The preference graph over the rows.
    pub graph: &'a Graph<'a>,
    /// One target per row.
    pub s: &'a [f64],
}

/// The system [`kpc_normal_equations`] is built from: the preference graph
/// and targets of the training rows, and the components of
/// [`kpc_decompose`] (eigenvalues `vals`, `p`, and eigenvectors `vecs`,
/// `n × ≥p`, of which the first `p` columns are used).
#[derive(Clone, Copy, Debug)]
pub struct KpcSystem<'a> {
    /// The preference graph over the `n` training rows.
    pub graph: &'a Graph<'a>,
    /// One target per training row.
    pub s: &'a [f64],
    /// The `p` usable eigenvalues.
    pub vals: &'a [f64],
    /// The eigenvectors, one column per component.
    pub vecs: MatRef<'a, f64>,
}

/// Builds `M = ZᵀLZ + λI` (`p × p`) and `r = Zᵀt` (`p`) for the components
/// `Z = VΛ^{½}` of [`kpc_decompose`] (`vals`, `vecs` restricted to the first
/// `p` usable components).
pub fn kpc_normal_equations<B: Backend>(
    backend: &mut B,
    system: &KpcSystem<'_>,
    lambda: f64,
    mut m: MatMut<'_, f64>,
    r: &mut [f64],
    work: &mut [f64],
) -> Result<(), LearnError> {
    let KpcSystem { graph, s, vals, vecs } = *system;
    check_lambda(lambda, false)?;
    check_graph(graph)?;
    let (n, p) = (vecs.nrows(), vals.len());
    if vecs.ncols() < p || graph.n() != n || m.nrows() != p || m.ncols() != p || r.len() != p {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if vals.iter().any(|&v| !(v > 0.0) || !v.is_finite()) {
        return Err(LinalgError::InvalidParameter.into());
    }
    let (NormalScratch { z, lz, t, tmp }, _) = NormalScratch::split(work, n, p)?;
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
    Ok(gemv(1.0, zv.t(), t, 0.0, r)?)
}

/// `w̄_p = M_p⁻¹ r_p` for the first `p = w.len()` components from the
/// leading factor of `M` ([`cholesky_leading_in_place`]) — O(p²), no
/// refactorisation.
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] if `l` or `r` hold fewer than `p`
/// components; [`LinalgError::Singular`] if the solution is not finite.
pub fn kpc_solve(l: MatRef<'_, f64>, r: &[f64], w: &mut [f64]) -> Result<(), LinalgError> {
    let p = w.len();
    if l.nrows() < p || l.ncols() < p || r.len() < p {
        return Err(LinalgError::DimensionMismatch);
    }
    w.copy_from_slice(&r[..p]);
    cholesky_solve_in_place(l.submatrix(0, 0, p, p)?, MatMut::from_col_major(w, p, 1)?)?;
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

/// What [`fit`] returns beside the coefficients it writes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KpcFitted {
    /// Grand mean of the training kernel (the model's centring term; the
    /// column means were written to the caller's `col_means`).
    pub grand_mean: f64,
    /// The model's offset: `mean(s)` for KPCR (`Identity` graph), 0 for
    /// KPCRank.
    pub offset: f64,
}

/// The offset of a KPC model: KPCR regresses on centred components, which
/// are orthogonal to the constant, so its offset is the mean label; a
/// ranker's scores are defined up to a constant.
pub(crate) fn offset(graph: &Graph<'_>, s: &[f64]) -> f64 {
    if matches!(graph, Graph::Identity { .. }) {
        mean(s)
    } else {
        0.0
    }
}

scratch! {
    /// The decomposition shared by a fit and by every grid point of a fold.
    struct DecompScratch(n: usize, p: usize) {
        /// The kernel matrix, centred in place.
        k: n * n,
        /// Top eigenvalues.
        vals: p,
        /// Top eigenvectors (`n × p`).
        vecs: n * p,
        /// The eigensolver's scratch.
        eig: kpc_decompose_workspace_len(n, p),
    }
}

scratch! {
    /// The normal equations of one λ.
    struct SolveScratch(n: usize, p: usize) {
        /// `M = ZᵀLZ + λI`, then its leading factor.
        m: p * p,
        /// `r = Zᵀt`.
        r: p,
        /// `w̄_p`.
        w: p,
        /// Building `M`.
        normal: kpc_normal_equations_workspace_len(n, p),
    }
}

/// Centres `K` (in `ds.k`) and decomposes it; returns the grand mean and the
/// numerical rank among the `p` computed components.
fn decompose<B: Backend>(
    backend: &mut B,
    ds: &mut DecompScratch<'_>,
    n: usize,
    p: usize,
    col_means: &mut [f64],
) -> Result<(f64, usize), LearnError> {
    let grand = backend.center_kernel_in_place(MatMut::from_col_major(ds.k, n, n)?, col_means)?;
    let rank = kpc_decompose(
        backend,
        MatRef::from_col_major(ds.k, n, n)?,
        ds.vals,
        MatMut::from_col_major(ds.vecs, n, p)?,
        ds.eig,
    )?;
    Ok((grand, rank))
}

/// Builds and factors `M = Z_pᵀLZ_p + λI` for the first `p` components;
/// returns how many leading components are usable.
fn factor_normal_equations<B: Backend>(
    backend: &mut B,
    ds: &DecompScratch<'_>,
    ss: &mut SolveScratch<'_>,
    data: &Training<'_>,
    lambda: f64,
    n: usize,
    p: usize,
) -> Result<usize, LearnError> {
    let p_all = ds.vals.len();
    let vecs = MatRef::from_col_major(ds.vecs, n, p_all)?;
    let mut m = MatMut::from_col_major(&mut ss.m[..p * p], p, p)?;
    let system = KpcSystem { graph: data.graph, s: data.s, vals: &ds.vals[..p], vecs };
    kpc_normal_equations(backend, &system, lambda, m.rb_mut(), &mut ss.r[..p], ss.normal)?;
    Ok(cholesky_leading_in_place(m)?)
}

scratch! {
    /// Scratch of [`fit`].
    struct FitScratch(n: usize, p: usize, kw: usize) {
        /// The decomposition.
        decomp: DecompScratch::len(n, p),
        /// The normal equations.
        solve: SolveScratch::len(n, p),
        /// Building the kernel matrix.
        kwork: kw,
    }
}

/// Scratch for [`fit`] on the rows `x` with `p` components.
pub fn fit_workspace_len(x: &Rows<'_>, p: usize) -> usize {
    FitScratch::len(x.nrows(), p, kernel_matrix_workspace_len(x, x))
}

/// KPCR / KPCRank from data rows to model parameters in one call: kernel
/// matrix, centring, top-`p` eigenpairs, the normal equations, and the
/// expansion coefficients `α` (`alpha`, `n`) and column means of the
/// training kernel (`col_means`, `n`) a model file stores.
///
/// # Errors
/// [`LearnError::NoComponents`] for `p = 0`; [`LearnError::TooManyComponents`]
/// when `p` exceeds `n`, the numerical rank of the centred kernel, or the
/// components whose normal equations are positive definite;
/// [`LearnError::BadLambda`], [`LearnError::BadGraph`]; numerical errors.
pub fn fit<B: Backend>(
    backend: &mut B,
    data: &Training<'_>,
    lambda: f64,
    p: usize,
    alpha: &mut [f64],
    col_means: &mut [f64],
    work: &mut [f64],
) -> Result<KpcFitted, LearnError> {
    let Training { kernel, rows: x, graph, s } = *data;
    let n = x.nrows();
    if p == 0 {
        return Err(LearnError::NoComponents);
    }
    if p > n {
        return Err(LearnError::TooManyComponents { requested: p, rank: n });
    }
    if alpha.len() != n || col_means.len() != n || graph.n() != n {
        return Err(LinalgError::DimensionMismatch.into());
    }
    check_lambda(lambda, false)?;
    let (FitScratch { decomp, solve, kwork }, _) = FitScratch::split(work, n, p, kernel_matrix_workspace_len(x, x))?;
    let (mut ds, _) = DecompScratch::split(decomp, n, p)?;
    let (mut ss, _) = SolveScratch::split(solve, n, p)?;
    kernel_matrix_sym(backend, kernel, x, MatMut::from_col_major(ds.k, n, n)?, kwork)?;
    let (grand_mean, rank) = decompose(backend, &mut ds, n, p, col_means)?;
    if rank < p {
        return Err(LearnError::TooManyComponents { requested: p, rank });
    }
    let usable = factor_normal_equations(backend, &ds, &mut ss, data, lambda, n, p)?;
    if usable < p {
        return Err(LearnError::TooManyComponents { requested: p, rank: usable });
    }
    kpc_solve(MatRef::from_col_major(ss.m, p, p)?, ss.r, ss.w)?;
    kpc_coefficients(ds.vals, MatRef::from_col_major(ds.vecs, n, p)?, ss.w, alpha)?;
    Ok(KpcFitted { grand_mean, offset: offset(graph, s) })
}

/// The hyperparameter grid of one kernel in a fold of [`cv_fold`].
#[derive(Clone, Copy, Debug)]
pub struct KpcGrid<'a> {
    /// Ridge parameters λ (`≥ 0`).
    pub lambdas: &'a [f64],
    /// Numbers of components p (`≥ 1`).
    pub components: &'a [usize],
}

impl KpcGrid<'_> {
    /// Number of (λ, p) points.
    pub fn len(&self) -> usize {
        self.lambdas.len() * self.components.len()
    }
    /// Whether the grid is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The components decomposed for `n` training rows: the largest p,
    /// at most `n`.
    fn p_max(&self, n: usize) -> usize {
        self.components.iter().copied().max().unwrap_or(0).min(n)
    }
}

scratch! {
    /// Scratch of [`cv_fold`] beyond the decomposition and one λ's solve.
    struct FoldScratch(nt: usize, n: usize, p: usize) {
        /// Column means of the training kernel.
        col_means: n,
        /// The validation-by-training kernel, centred in place.
        kt: nt * n,
        /// Projections of the validation rows on the components.
        proj: nt * p,
    }
}

scratch! {
    /// Scratch of [`cv_fold`].
    struct CvFoldScratch(n: usize, nt: usize, p: usize, kw: usize) {
        /// The decomposition.
        decomp: DecompScratch::len(n, p),
        /// One λ's normal equations.
        solve: SolveScratch::len(n, p),
        /// Centring terms, test kernel, projections.
        fold: FoldScratch::len(nt, n, p),
        /// Building the kernel matrices.
        kwork: kw,
    }
}

/// Kernel-matrix scratch of one fold: the larger of train × train and
/// validation × train.
fn fold_kernel_len(train: &Rows<'_>, val: &Rows<'_>) -> usize {
    kernel_matrix_workspace_len(train, train).max(kernel_matrix_workspace_len(val, train))
}

/// Scratch for [`cv_fold`].
pub fn cv_fold_workspace_len(train: &Rows<'_>, val: &Rows<'_>, grid: &KpcGrid<'_>) -> usize {
    let n = train.nrows();
    CvFoldScratch::len(n, val.nrows(), grid.p_max(n), fold_kernel_len(train, val))
}

/// What one fold of [`cv_fold`] (or [`super::nystrom::kpc_cv_fold`])
/// writes: the validation predictions of every grid point (`preds`,
/// `|grid|·n_val`) and the usable components per λ (`usable`, `|λ|`).
#[derive(Debug)]
pub struct FoldOut<'a> {
    /// Predictions of point `(λ_i, p_j)` at `[(i·|p| + j)·n_val ..][..n_val]`.
    pub preds: &'a mut [f64],
    /// Leading components usable with `λ_i`.
    pub usable: &'a mut [usize],
}

/// One cross-validation fold of KPCR / KPCRank for every (λ, p) of `grid`
/// from one kernel matrix and one decomposition (000 §4.2).
///
/// Writes the validation predictions of point `(λ_i, p_j)` to
/// `preds[(i·|p| + j)·n_val ..][..n_val]`, and to `usable[i]` the number
/// of leading components usable with `λ_i` (the numerical rank, further
/// cut where the normal equations stop being positive definite). Points
/// with `p_j > usable[i]` get NaN predictions: they cannot be fitted on
/// this fold ([`LearnError::TooManyComponents`] in [`fit`]).
///
/// # Errors
/// [`LearnError::NoComponents`] if the grid has a zero p (or no p);
/// [`LearnError::BadLambda`], [`LearnError::BadGraph`]; dimension, workspace
/// and numerical errors — all before any prediction is written except those
/// of the eigensolver.
pub fn cv_fold<B: Backend>(
    backend: &mut B,
    data: &Training<'_>,
    val: &Rows<'_>,
    grid: &KpcGrid<'_>,
    out: FoldOut<'_>,
    work: &mut [f64],
) -> Result<(), LearnError> {
    let Training { kernel, rows: train, graph, s } = *data;
    let FoldOut { preds, usable } = out;
    let (n, nt) = (train.nrows(), val.nrows());
    if grid.components.contains(&0) || grid.components.is_empty() || n == 0 {
        return Err(LearnError::NoComponents);
    }
    if preds.len() != grid.len() * nt || usable.len() != grid.lambdas.len() || graph.n() != n {
        return Err(LinalgError::DimensionMismatch.into());
    }
    for &l in grid.lambdas {
        check_lambda(l, false)?;
    }
    check_graph(graph)?;
    let p_max = grid.p_max(n);
    let (CvFoldScratch { decomp, solve, fold, kwork }, _) =
        CvFoldScratch::split(work, n, nt, p_max, fold_kernel_len(train, val))?;
    let (mut ds, _) = DecompScratch::split(decomp, n, p_max)?;
    let (mut ss, _) = SolveScratch::split(solve, n, p_max)?;
    let (fs, _) = FoldScratch::split(fold, nt, n, p_max)?;
    kernel_matrix_sym(backend, kernel, train, MatMut::from_col_major(ds.k, n, n)?, kwork)?;
    let (grand, rank) = decompose(backend, &mut ds, n, p_max, fs.col_means)?;
    let pc = rank.min(p_max);
    // Projections of the validation rows onto the usable components.
    kernel_matrix(backend, kernel, val, train, MatMut::from_col_major(fs.kt, nt, n)?, kwork)?;
    center_test_kernel_in_place(MatMut::from_col_major(fs.kt, nt, n)?, fs.col_means, grand)?;
    let proj = &mut fs.proj[..nt * pc];
    kpc_project(
        backend,
        MatRef::from_col_major(fs.kt, nt, n)?,
        &ds.vals[..pc],
        MatRef::from_col_major(ds.vecs, n, p_max)?,
        MatMut::from_col_major(proj, nt, pc)?,
    )?;
    let proj = MatRef::from_col_major(proj, nt, pc)?;
    let b = offset(graph, s);
    let np = grid.components.len();
    for (li, &lambda) in grid.lambdas.iter().enumerate() {
        let u = if pc == 0 { 0 } else { factor_normal_equations(backend, &ds, &mut ss, data, lambda, n, pc)? };
        usable[li] = u;
        let m = MatRef::from_col_major(&ss.m[..pc * pc], pc, pc)?;
        for (pi, &p) in grid.components.iter().enumerate() {
            let out = &mut preds[(li * np + pi) * nt..][..nt];
            if p > u {
                out.iter_mut().for_each(|v| *v = f64::NAN);
                continue;
            }
            let w = &mut ss.w[..p];
            kpc_solve(m, ss.r, w)?;
            kpc_predict_projected(proj, w, out)?;
            out.iter_mut().for_each(|v| *v += b);
        }
    }
    Ok(())
}
