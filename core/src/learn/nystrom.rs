//! Reduced-basis (Nyström) kernel learners: RLS / RankRLS and KPCR /
//! KPCRank solved in the feature space of `m ≪ n` landmark rows, so that the
//! model is a kernel expansion over the `m` landmarks instead of all `n`
//! training rows (the same model kind, scored unchanged on a device).
//!
//! **Landmarks: pivoted (partial) Cholesky of `K`** ([`pivoted_cholesky`];
//! Harbrecht, Peters & Schneider 2012; Fine & Scheinberg 2001). Step `j`
//! takes the row with the largest residual diagonal
//! `dᵢ = K_ii − Σ_{t<j} G_it²` (ties: the lowest row index — deterministic),
//! computes one kernel column and appends `G[:, j] = (K[:, i*] −
//! G[:, :j]·G[i*, :j]ᵀ)/√d_{i*}`. After `m` steps `G = K_nm·L⁻ᵀ` with
//! `K_mm = LLᵀ` and `L = G[piv, :]` lower triangular: `G` *is* the Nyström
//! feature map of the training rows, `K ≈ GGᵀ`, and `Σᵢ dᵢ = tr(K − GGᵀ)` is
//! the (trace-norm) error of that approximation. Cost: `n` diagonal and
//! `n·m` kernel evaluations, `n·m²` flops, `n·m + n` numbers — no `n × n`
//! matrix, unlike the full learners. It is chosen over k-means++ because it
//! is deterministic without a seed, adapts to the kernel's spectrum (each
//! step removes the largest remaining diagonal error) and yields the factor
//! `L` of `K_mm` for free.
//!
//! **Rank deficiency** (pivot-tolerance policy, no jitter): the
//! factorisation stops early, with `r < m` landmarks, once the largest
//! residual diagonal is `≤ tol·max_i K_ii` ([`default_pivot_tol`] `= n·ε`,
//! the numpy `matrix_rank` rule the KPC learners use). Then every remaining
//! row lies within roundoff of the landmarks' span, and every pivot of `L`
//! is `≥ √(tol·max K_ii)`, which bounds `‖L⁻¹‖` for the coefficient map
//! below. `tol = 0` takes landmarks while any residual is positive.
//!
//! **RLS / RankRLS** ([`ls_fit`]): primal least squares on the features
//! `Φ = G`, `(ΦᵀLΦ + λI)·β = ΦᵀLs` ([`super::ls::ls_primal`]), then
//! `a = L⁻ᵀβ` so that `f(x) = βᵀL⁻¹k_m(x) = Σ_j a_j k(x, z_j)`. Substituting
//! `β = Lᵀa` and multiplying by `L` gives the equivalent reduced system
//! `(K_mn𝓛K_nm + λK_mm)·a = K_mn𝓛s` (subset of regressors); with `m = n`
//! it is `K(𝓛K + λI)a = K𝓛s`, the full dual `(𝓛K + λI)a = 𝓛s` of
//! [`super::ls::ls_dual`] when `K` is invertible.
//!
//! **KPCR / KPCRank** ([`kpc_fit`], [`kpc_cv_fold`]): 000 §3–4 in the
//! landmark space. Centre the features, `G_c = G − 1ḡᵀ` (`ḡ` the column
//! means, i.e. `HG`; `G_cG_cᵀ = HGGᵀH` is the centred kernel of 000 §6.1),
//! take the top-p eigenpairs of the `m × m` `G_cᵀG_c = UΛUᵀ`, so that the
//! components are `Z = G_cU_p = VΛ^{½}` with the same `Λ` as the top-p
//! eigenvalues of `HGGᵀH`; solve `(ZᵀLZ + λI)·w̄ = Zᵀt` as
//! [`super::kpc`] does. A row's components are `U_pᵀ(L⁻¹k_m(x) − ḡ)`, so
//! `f(x) = b + Σ_j a_j k(x, z_j)` with `β = U_pw̄`, `a = L⁻ᵀβ`,
//! `b = b_KPC − βᵀḡ`: the centring folds into the offset and the model needs
//! no `KERNEL_CENTRING` section. With `m = n` and `K` invertible this is the
//! full KPC learner's model (its centring terms also fold away, since its
//! `α` sums to zero).

pub use super::kpc::Training;
use super::kpc::{
    kpc_normal_equations, kpc_normal_equations_workspace_len, kpc_predict_projected, kpc_solve, FoldOut, KpcGrid,
    KpcSystem,
};
use super::ls::{ls_primal, ls_primal_holdout, ls_primal_holdout_workspace_len, ls_primal_workspace_len, max_block};
use super::{check_graph, check_lambda, mean, LearnError};
use crate::backend::Backend;
use crate::graph::Graph;
use crate::kernel::{kernel_value, Kernel};
use crate::linalg::blas::gemv;
use crate::linalg::chol::{cholesky_leading_in_place, solve_lower_in_place, solve_lower_transpose_in_place};
use crate::linalg::Rows;
use crate::{scratch, LinalgError, MatMut, MatRef};

/// The default relative pivot tolerance for `n` rows: `n·ε` (see the module
/// docs).
pub fn default_pivot_tol(n: usize) -> f64 {
    n as f64 * f64::EPSILON
}

/// Pivoted partial Cholesky of the kernel matrix of the rows `x`, without
/// forming it: at most `m = piv.len()` greedy steps (largest residual
/// diagonal, lowest index on ties), stopping early once the largest residual
/// is `≤ tol·max_i K_ii`.
///
/// Writes the landmark rows in pivot order to `piv[..r]`, the factor
/// `G = K[:, piv]·L⁻ᵀ` to the first `r` columns of `g` (`n × m`,
/// column-major; the rest zeroed), and the residual diagonal
/// `diag(K − GGᵀ)` to `resid` (`n`; 0 at the landmarks). Returns `r`.
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] on lengths or `m > n`;
/// [`LinalgError::InvalidParameter`] for a negative or non-finite `tol` or
/// invalid kernel parameters; [`LinalgError::NonFinite`] for a non-finite
/// kernel value.
pub fn pivoted_cholesky(
    kernel: &Kernel,
    x: &Rows<'_>,
    tol: f64,
    g: &mut [f64],
    piv: &mut [usize],
    resid: &mut [f64],
) -> Result<usize, LinalgError> {
    kernel.validate()?;
    let (n, m) = (x.nrows(), piv.len());
    if m > n || g.len() != n * m || resid.len() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    if !(tol >= 0.0 && tol.is_finite()) {
        return Err(LinalgError::InvalidParameter);
    }
    g.iter_mut().for_each(|v| *v = 0.0);
    piv.iter_mut().for_each(|v| *v = 0);
    let mut kmax = 0.0f64;
    for (i, d) in resid.iter_mut().enumerate() {
        *d = kernel_value(kernel, x, i, x, i);
        if !d.is_finite() {
            return Err(LinalgError::NonFinite);
        }
        kmax = kmax.max(*d);
    }
    let stop = tol * kmax;
    for j in 0..m {
        // First index of the largest residual: deterministic on ties.
        let (istar, dmax) =
            resid.iter().enumerate().fold((0, f64::NEG_INFINITY), |b, (i, &d)| if d > b.1 { (i, d) } else { b });
        if !(dmax > stop) || !(dmax > 0.0) {
            return Ok(j);
        }
        piv[j] = istar;
        let (done, rest) = g.split_at_mut(j * n);
        let col = &mut rest[..n];
        for (i, c) in col.iter_mut().enumerate() {
            *c = kernel_value(kernel, x, i, x, istar);
            if !c.is_finite() {
                return Err(LinalgError::NonFinite);
            }
        }
        // K[:, i*] − G[:, :j]·G[i*, :j]ᵀ, one column of G at a time.
        for t in 0..j {
            let gt = &done[t * n..][..n];
            let c = gt[istar];
            col.iter_mut().zip(gt).for_each(|(v, &w)| *v -= c * w);
        }
        let ljj = libm::sqrt(dmax);
        col.iter_mut().for_each(|v| *v /= ljj);
        // Exact zeros above the diagonal of L, and the pivot itself.
        for &p in &piv[..j] {
            col[p] = 0.0;
        }
        col[istar] = ljj;
        for (d, &v) in resid.iter_mut().zip(col.iter()) {
            *d = (*d - v * v).max(0.0);
        }
        resid[istar] = 0.0;
    }
    Ok(m)
}

/// `lmat ← L = G[piv, :r]` (`r × r`, lower triangular, column-major).
fn gather_l(g: &[f64], n: usize, piv: &[usize], lmat: &mut [f64]) {
    let r = piv.len();
    for j in 0..r {
        for (t, &p) in piv.iter().enumerate() {
            lmat[j * r + t] = if t >= j { g[j * n + p] } else { 0.0 };
        }
    }
}

/// `a ← L⁻ᵀβ`: the expansion coefficients over the landmarks of the
/// feature-space weights `β` (`a.len() = r`; `lmat` is `L`, `r × r`
/// column-major, lower triangle read), so that
/// `βᵀφ(x) = βᵀL⁻¹k_m(x) = Σ_j a_j k(x, z_j)`.
pub fn coefficients(lmat: &[f64], beta: &[f64], a: &mut [f64]) -> Result<(), LinalgError> {
    let r = a.len();
    a.copy_from_slice(&beta[..r]);
    solve_lower_transpose_in_place(MatRef::from_col_major(&lmat[..r * r], r, r)?, MatMut::from_col_major(a, r, 1)?)
}

/// Scratch for [`landmarks`] with `n` sample rows and at most `m`
/// landmarks.
pub fn landmarks_workspace_len(n: usize, m: usize) -> usize {
    n.saturating_mul(m).saturating_add(n)
}

/// The landmarks alone, for a feature map used elsewhere (statistics of
/// row blocks, `super::nystrom_stats`): [`pivoted_cholesky`] of the sample
/// rows `x` (at most `m = piv.len()` steps, tolerance `tol`), the landmark
/// rows to `piv[..r]` and `L = G[piv, :]` to `lmat[..r·r]` (`r × r`,
/// column-major, lower triangular; `lmat.len() = m·m`). The very steps of
/// [`ls_fit`] and [`kpc_fit`], so the same sample gives the same landmarks
/// and the same `L`. Returns `r`.
///
/// # Errors
/// As [`pivoted_cholesky`]; the workspace size.
pub fn landmarks(
    kernel: &Kernel,
    x: &Rows<'_>,
    tol: f64,
    piv: &mut [usize],
    lmat: &mut [f64],
    work: &mut [f64],
) -> Result<usize, LinalgError> {
    let (n, m) = (x.nrows(), piv.len());
    if lmat.len() != m * m {
        return Err(LinalgError::DimensionMismatch);
    }
    let need = landmarks_workspace_len(n, m);
    if work.len() < need {
        return Err(LinalgError::WorkspaceTooSmall { needed: need, got: work.len() });
    }
    let (g, rest) = work.split_at_mut(n * m);
    let r = pivoted_cholesky(kernel, x, tol, g, piv, &mut rest[..n])?;
    lmat.fill(0.0);
    gather_l(g, n, &piv[..r], &mut lmat[..r * r]);
    Ok(r)
}

scratch! {
    /// Scratch of [`ls_fit`] and [`ls_holdout`].
    struct LsScratch(n: usize, m: usize, inner: usize) {
        /// The factor `G` (`n × m`).
        g: n * m,
        /// Residual diagonal.
        resid: n,
        /// `L = G[piv, :]`.
        lmat: m * m,
        /// Feature-space weights `β`.
        beta: m,
        /// The primal solver (or its leave-out).
        inner: inner,
    }
}

/// Scratch for [`ls_fit`] with `n` rows and at most `m` landmarks.
pub fn ls_fit_workspace_len(n: usize, m: usize) -> usize {
    LsScratch::len(n, m, ls_primal_workspace_len(n, m))
}

/// Checks shared by the entry points; returns `n`.
fn check_basis(x: &Rows<'_>, graph: &Graph<'_>, m: usize) -> Result<usize, LearnError> {
    let n = x.nrows();
    if m == 0 || m > n || graph.n() != n {
        return Err(LinalgError::DimensionMismatch.into());
    }
    check_graph(graph).map(|_| n)
}

/// Nyström RLS / RankRLS: landmarks by [`pivoted_cholesky`] (at most
/// `m = piv.len()`, relative pivot tolerance `tol`), then
/// `(ΦᵀLΦ + λI)·β = ΦᵀLs` on `Φ = G = K_nm·L⁻ᵀ` and `a = L⁻ᵀβ` — the
/// reduced system `(K_mn𝓛K_nm + λK_mm)·a = K_mn𝓛s` (module docs).
///
/// Writes the landmarks to `piv[..r]` and their coefficients to `alpha[..r]`
/// (`alpha.len() = m`; zeros after `r`); returns `r`. The model is
/// `f(x) = Σ_{j<r} alpha_j k(x, x_{piv_j})`.
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] for `m = 0`, `m > n` or wrong lengths;
/// as [`pivoted_cholesky`] and [`ls_primal`] (`λ ≥ 0`; a singular system is
/// `NotPositiveDefinite`).
pub fn ls_fit<B: Backend>(
    backend: &mut B,
    data: &Training<'_>,
    lambda: f64,
    tol: f64,
    piv: &mut [usize],
    alpha: &mut [f64],
    work: &mut [f64],
) -> Result<usize, LearnError> {
    let Training { kernel, rows: x, graph, s } = *data;
    let m = piv.len();
    let n = check_basis(x, graph, m)?;
    check_lambda(lambda, false)?;
    if alpha.len() != m {
        return Err(LinalgError::DimensionMismatch.into());
    }
    let (LsScratch { g, resid, lmat, beta, inner }, _) = LsScratch::split(work, n, m, ls_primal_workspace_len(n, m))?;
    let r = pivoted_cholesky(kernel, x, tol, g, piv, resid)?;
    let gv = MatRef::from_col_major(&g[..n * r], n, r)?;
    ls_primal(backend, gv, graph, s, lambda, &mut beta[..r], inner)?;
    gather_l(g, n, &piv[..r], lmat);
    alpha.iter_mut().for_each(|v| *v = 0.0);
    coefficients(lmat, beta, &mut alpha[..r])?;
    Ok(r)
}

/// Scratch for [`ls_holdout`] with `n` rows, at most `m` landmarks.
pub fn ls_holdout_workspace_len(n: usize, m: usize, graph: &Graph<'_>) -> usize {
    LsScratch::len(n, m, ls_primal_holdout_workspace_len(n, m, max_block(graph)))
}

/// Closed-form leave-one-out (RLS) / leave-query-out (RankRLS) predictions
/// of the Nyström learner for every row, into `out` (`n`): the primal
/// leave-out ([`ls_primal_holdout`]) on the features `G`. The landmarks are
/// chosen once from all rows (`m = piv.len()`), so a held-out row may be a
/// landmark; its label is still held out.
///
/// # Errors
/// As [`ls_fit`]; [`LearnError::Unsupported`] for a pair graph.
pub fn ls_holdout<B: Backend>(
    backend: &mut B,
    data: &Training<'_>,
    lambda: f64,
    tol: f64,
    piv: &mut [usize],
    out: &mut [f64],
    work: &mut [f64],
) -> Result<usize, LearnError> {
    let Training { kernel, rows: x, graph, s } = *data;
    let m = piv.len();
    let n = check_basis(x, graph, m)?;
    check_lambda(lambda, false)?;
    let inner_len = ls_primal_holdout_workspace_len(n, m, max_block(graph));
    let (LsScratch { g, resid, inner, .. }, _) = LsScratch::split(work, n, m, inner_len)?;
    let r = pivoted_cholesky(kernel, x, tol, g, piv, resid)?;
    ls_primal_holdout(backend, MatRef::from_col_major(&g[..n * r], n, r)?, graph, s, lambda, out, inner)?;
    Ok(r)
}

scratch! {
    /// The landmark-space decomposition shared by [`kpc_fit`] and
    /// [`kpc_cv_fold`].
    struct Decomp(n: usize, m: usize, p: usize) {
        /// `G`, then `G_c`.
        g: n * m,
        /// Residual diagonal.
        resid: n,
        /// Column means `ḡ`.
        gbar: m,
        /// `L = G[piv, :]`.
        lmat: m * m,
        /// `G_cᵀG_c`, then `U_p` (`r × p`, descending).
        c: m * m,
        /// All eigenvalues of `G_cᵀG_c` (ascending).
        vals: m,
        /// Its eigenvectors.
        vecs: m * m,
        /// The top-p eigenvalues, descending.
        top: p,
        /// `V = G_cU_pΛ^{-½}` (`n × p`).
        v: n * p,
    }
}

scratch! {
    /// The normal equations of one λ in the landmark space.
    struct Solve(n: usize, m: usize, p: usize) {
        /// `M = ZᵀLZ + λI`, then its leading factor.
        mm: p * p,
        /// `Zᵀt`.
        r: p,
        /// `w̄_p`.
        w: p,
        /// `β = U_pw̄`.
        beta: m,
        /// Building `M`.
        normal: kpc_normal_equations_workspace_len(n, p),
    }
}

/// Landmarks, centring and the top eigenpairs of `G_cᵀG_c`: returns
/// `(r, pc)`, the landmarks taken and the usable components among the first
/// `min(p, r)` (eigenvalues above `n·ε·λ_max`, as [`super::kpc::kpc_decompose`]).
fn decompose<B: Backend>(
    backend: &mut B,
    kernel: &Kernel,
    x: &Rows<'_>,
    tol: f64,
    piv: &mut [usize],
    p: usize,
    d: &mut Decomp<'_>,
) -> Result<(usize, usize), LearnError> {
    let n = x.nrows();
    let r = pivoted_cholesky(kernel, x, tol, d.g, piv, d.resid)?;
    gather_l(d.g, n, &piv[..r], d.lmat);
    for j in 0..r {
        let col = &mut d.g[j * n..][..n];
        let mu = mean(col);
        d.gbar[j] = mu;
        col.iter_mut().for_each(|v| *v -= mu);
    }
    let gc = MatRef::from_col_major(&d.g[..n * r], n, r)?;
    backend.syrk(1.0, gc.t(), 0.0, MatMut::from_col_major(&mut d.c[..r * r], r, r)?)?;
    backend.sym_eigen(
        MatRef::from_col_major(&d.c[..r * r], r, r)?,
        &mut d.vals[..r],
        MatMut::from_col_major(&mut d.vecs[..r * r], r, r)?,
    )?;
    let pm = p.min(r);
    let lmax = d.vals[..r].last().copied().unwrap_or(0.0);
    let cut = n as f64 * f64::EPSILON * lmax.abs().max(f64::MIN_POSITIVE);
    let mut pc = 0;
    for l in 0..pm {
        let v = d.vals[r - 1 - l];
        if !(v > cut) {
            break;
        }
        pc += 1;
        d.top[l] = v;
        for t in 0..r {
            d.c[l * r + t] = d.vecs[(r - 1 - l) * r + t];
        }
    }
    if pc > 0 {
        let up = MatRef::from_col_major(&d.c[..r * pc], r, pc)?;
        let mut vm = MatMut::from_col_major(&mut d.v[..n * pc], n, pc)?;
        backend.gemm(1.0, gc, up, 0.0, vm.rb_mut())?;
        for l in 0..pc {
            let sc = 1.0 / libm::sqrt(d.top[l]);
            for i in 0..n {
                *vm.at_mut(i, l) *= sc;
            }
        }
    }
    Ok((r, pc))
}

/// Builds and factors `M = Z_pᵀLZ_p + λI` for the first `p` usable
/// components; returns how many leading components are usable.
fn factor<B: Backend>(
    backend: &mut B,
    d: &Decomp<'_>,
    sv: &mut Solve<'_>,
    data: &Training<'_>,
    lambda: f64,
    n: usize,
    p: usize,
) -> Result<usize, LearnError> {
    let v = MatRef::from_col_major(&d.v[..n * p], n, p)?;
    let mut mm = MatMut::from_col_major(&mut sv.mm[..p * p], p, p)?;
    let system = KpcSystem { graph: data.graph, s: data.s, vals: &d.top[..p], vecs: v };
    kpc_normal_equations(backend, &system, lambda, mm.rb_mut(), &mut sv.r[..p], sv.normal)?;
    Ok(cholesky_leading_in_place(mm)?)
}

scratch! {
    /// Scratch of [`kpc_fit`].
    struct KpcFitScratch(n: usize, m: usize, p: usize) {
        /// The decomposition.
        decomp: Decomp::len(n, m, p),
        /// The normal equations.
        solve: Solve::len(n, m, p),
    }
}

/// Scratch for [`kpc_fit`] with `n` rows, at most `m` landmarks and `p`
/// components.
pub fn kpc_fit_workspace_len(n: usize, m: usize, p: usize) -> usize {
    KpcFitScratch::len(n, m, p)
}

/// Nyström KPCR / KPCRank: landmarks by [`pivoted_cholesky`] (at most
/// `m = piv.len()`), the top-`p` components of the centred landmark
/// features, the normal equations of 000 eq. 8, and the model
/// `f(x) = offset + Σ_{j<r} alpha_j k(x, x_{piv_j})` (module docs).
/// Returns `(r, offset)`; `alpha` is `m` long (zeros after `r`).
///
/// # Errors
/// [`LearnError::NoComponents`] for `p = 0`; [`LearnError::TooManyComponents`]
/// when `p` exceeds the landmarks taken, the numerical rank of the centred
/// features, or the components whose normal equations are positive
/// definite; as [`ls_fit`] otherwise.
// Eight inputs: the problem is one struct; λ, p and the pivot tolerance, then two outputs and the workspace.
#[allow(clippy::too_many_arguments)]
pub fn kpc_fit<B: Backend>(
    backend: &mut B,
    data: &Training<'_>,
    lambda: f64,
    p: usize,
    tol: f64,
    piv: &mut [usize],
    alpha: &mut [f64],
    work: &mut [f64],
) -> Result<(usize, f64), LearnError> {
    let Training { kernel, rows: x, graph, s } = *data;
    let m = piv.len();
    if p == 0 {
        return Err(LearnError::NoComponents);
    }
    let n = check_basis(x, graph, m)?;
    check_lambda(lambda, false)?;
    if alpha.len() != m {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if p > m {
        return Err(LearnError::TooManyComponents { requested: p, rank: m });
    }
    let (KpcFitScratch { decomp, solve }, _) = KpcFitScratch::split(work, n, m, p)?;
    let (mut d, _) = Decomp::split(decomp, n, m, p)?;
    let (mut sv, _) = Solve::split(solve, n, m, p)?;
    let (r, pc) = decompose(backend, kernel, x, tol, piv, p, &mut d)?;
    if pc < p {
        return Err(LearnError::TooManyComponents { requested: p, rank: pc });
    }
    let usable = factor(backend, &d, &mut sv, data, lambda, n, p)?;
    if usable < p {
        return Err(LearnError::TooManyComponents { requested: p, rank: usable });
    }
    kpc_solve(MatRef::from_col_major(&sv.mm[..p * p], p, p)?, sv.r, &mut sv.w[..p])?;
    // β = U_p·w̄; a = L⁻ᵀβ; the centring −βᵀḡ goes into the offset.
    gemv(1.0, MatRef::from_col_major(&d.c[..r * p], r, p)?, &sv.w[..p], 0.0, &mut sv.beta[..r])?;
    let shift: f64 = sv.beta[..r].iter().zip(&d.gbar[..r]).map(|(b, g)| b * g).sum();
    alpha.iter_mut().for_each(|v| *v = 0.0);
    coefficients(d.lmat, sv.beta, &mut alpha[..r])?;
    Ok((r, super::kpc::offset(graph, s) - shift))
}

scratch! {
    /// Scratch of [`kpc_cv_fold`].
    struct KpcFoldScratch(n: usize, nt: usize, m: usize, p: usize) {
        /// The decomposition.
        decomp: Decomp::len(n, m, p),
        /// One λ's normal equations.
        solve: Solve::len(n, m, p),
        /// `K_mv`, then `L⁻¹K_mv − ḡ1ᵀ` (`m × n_val`).
        kv: m * nt,
        /// Components of the validation rows (`n_val × p`).
        proj: nt * p,
    }
}

/// Scratch for [`kpc_cv_fold`] with `n` training and `nt` validation rows.
pub fn kpc_cv_fold_workspace_len(n: usize, nt: usize, m: usize, grid: &KpcGrid<'_>) -> usize {
    let p = grid.components.iter().copied().max().unwrap_or(0).min(m);
    KpcFoldScratch::len(n, nt, m, p)
}

/// One cross-validation fold of Nyström KPCR / KPCRank for every (λ, p) of
/// `grid` from one landmark factorisation (chosen from the fold's training
/// rows, `data`; `val` the validation rows) and one `m × m` eigendecomposition. Output layout, NaN points and
/// `usable` as [`super::kpc::cv_fold`]; returns the landmarks taken.
///
/// # Errors
/// As [`super::kpc::cv_fold`] and [`ls_fit`].
// Eight inputs: the problem is one struct; validation rows, grid, pivot tolerance, outputs, workspace.
#[allow(clippy::too_many_arguments)]
pub fn kpc_cv_fold<B: Backend>(
    backend: &mut B,
    data: &Training<'_>,
    val: &Rows<'_>,
    grid: &KpcGrid<'_>,
    tol: f64,
    piv: &mut [usize],
    out: FoldOut<'_>,
    work: &mut [f64],
) -> Result<usize, LearnError> {
    let Training { kernel, rows: train, graph, s } = *data;
    let FoldOut { preds, usable } = out;
    let m = piv.len();
    let nt = val.nrows();
    if grid.components.contains(&0) || grid.components.is_empty() {
        return Err(LearnError::NoComponents);
    }
    let n = check_basis(train, graph, m)?;
    if preds.len() != grid.len() * nt || usable.len() != grid.lambdas.len() || val.ncols() != train.ncols() {
        return Err(LinalgError::DimensionMismatch.into());
    }
    for &l in grid.lambdas {
        check_lambda(l, false)?;
    }
    let p_max = grid.components.iter().copied().max().unwrap_or(0).min(m);
    let (KpcFoldScratch { decomp, solve, kv, proj }, _) = KpcFoldScratch::split(work, n, nt, m, p_max)?;
    let (mut d, _) = Decomp::split(decomp, n, m, p_max)?;
    let (mut sv, _) = Solve::split(solve, n, m, p_max)?;
    let (r, pc) = decompose(backend, kernel, train, tol, piv, p_max, &mut d)?;
    // Validation features L⁻¹k_m(x) − ḡ, then their components (·U_p).
    let kv = &mut kv[..r * nt];
    for v in 0..nt {
        for (t, &p) in piv[..r].iter().enumerate() {
            let k = kernel_value(kernel, train, p, val, v);
            if !k.is_finite() {
                return Err(LinalgError::NonFinite.into());
            }
            kv[v * r + t] = k;
        }
    }
    if r > 0 && nt > 0 {
        solve_lower_in_place(MatRef::from_col_major(&d.lmat[..r * r], r, r)?, MatMut::from_col_major(kv, r, nt)?)?;
    }
    for v in 0..nt {
        kv[v * r..][..r].iter_mut().zip(&d.gbar[..r]).for_each(|(k, g)| *k -= g);
    }
    let proj = &mut proj[..nt * pc];
    if pc > 0 && nt > 0 {
        backend.gemm(
            1.0,
            MatRef::from_col_major(kv, r, nt)?.t(),
            MatRef::from_col_major(&d.c[..r * pc], r, pc)?,
            0.0,
            MatMut::from_col_major(proj, nt, pc)?,
        )?;
    }
    let proj = MatRef::from_col_major(proj, nt, pc)?;
    let b = super::kpc::offset(graph, s);
    let np = grid.components.len();
    for (li, &lambda) in grid.lambdas.iter().enumerate() {
        let u = if pc == 0 { 0 } else { factor(backend, &d, &mut sv, data, lambda, n, pc)? };
        usable[li] = u;
        let mm = MatRef::from_col_major(&sv.mm[..pc * pc], pc, pc)?;
        for (pi, &p) in grid.components.iter().enumerate() {
            let out = &mut preds[(li * np + pi) * nt..][..nt];
            if p > u {
                out.iter_mut().for_each(|v| *v = f64::NAN);
                continue;
            }
            let w = &mut sv.w[..p];
            kpc_solve(mm, sv.r, w)?;
            kpc_predict_projected(proj, w, out)?;
            out.iter_mut().for_each(|v| *v += b);
        }
    }
    Ok(r)
}
