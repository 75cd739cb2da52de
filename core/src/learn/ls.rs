//! RLS and RankRLS: regularised least squares on the scores (RLS, the
//! baseline of 000) or on score differences inside a preference graph
//! (RankRLS, 000 eq. 5; 004 §4.3, eqs. 30–32).
//!
//! - **Primal** ([`ls_primal`], [`ls_primal_sparse`]): `(XᵀLX + λI)·w = Xᵀt`,
//!   `t = Ls` (or `Dᵀm` for pairs), for rows with no more features than
//!   rows; sparse rows are summed as stored (`d²` memory, no `n × d` copy),
//!   or, where even `d²` is too much, solved by conjugate gradient from the
//!   rows ([`ls_primal_sparse_cg`], `2n + 4d` memory).
//! - **Dual** ([`ls_dual`]): `(LK + λI)·a = t`, `f(x) = Σᵢ aᵢ k(x, xᵢ)`. For
//!   `Identity`/`Queries` graphs solved in the symmetric form
//!   `(L^{½}KL^{½} + λI)·c = L^{½}s`, `a = L^{½}c` (Cholesky, half the flops
//!   of LU); for explicit pairs by LU.
//! - **Fit to model** ([`fit`]): picks the cheaper form by shape, builds the
//!   kernel matrix itself, and returns primal weights or dual coefficients.
//! - **Leave-out shortcuts** ([`holdout`], [`ls_primal_holdout`],
//!   [`ls_dual_holdout`]): closed-form leave-one-out (RLS) and
//!   leave-query-out (RankRLS) predictions for every row at the cost of
//!   about one fit.

use super::kpc::Training;
use super::normal::{normal_workspace_len, solve_normal};
use super::{check_graph, check_lambda, LearnError};
use crate::backend::Backend;
use crate::graph::{Graph, QueryWeight};
use crate::kernel::{kernel_matrix_sym, kernel_matrix_workspace_len, Kernel};
use crate::linalg::blas::gemv;
use crate::linalg::cg::{cg_solve, cg_workspace_len, CgInfo, CgParams};
use crate::linalg::{slice_finite, CsrRef, Rows};
use crate::{scratch, LinalgError, MatMut, MatRef};

scratch! {
    /// Scratch of [`primal_system`] beyond its outputs.
    struct SystemScratch(n: usize, d: usize) {
        /// `LX` or `L^{½}X` (`n × d`).
        lx: n * d,
        /// The target `Ls` or `L^{½}s`.
        t: n,
        /// One column for the graph products.
        tmp: n,
    }
}

scratch! {
    /// Scratch of [`ls_primal`].
    struct PrimalScratch(n: usize, d: usize) {
        /// The `d × d` system `XᵀLX`.
        a: d * d,
        /// Its right-hand side.
        rhs: d,
        /// [`solve_normal`]'s scratch.
        normal: normal_workspace_len(d),
        /// Building the system.
        system: SystemScratch::len(n, d),
    }
}

scratch! {
    /// Scratch of [`ls_dual`].
    struct DualScratch(n: usize) {
        /// The `n × n` system.
        m: n * n,
        /// [`ls_dual_in_place`]'s scratch.
        rest: DualInPlaceScratch::len(n),
    }
}

scratch! {
    /// Scratch of [`ls_primal_holdout`].
    struct PrimalHoldoutScratch(n: usize, d: usize, mb: usize) {
        /// The factored `d × d` system.
        a: d * d,
        /// The full-data weights.
        w: d,
        /// `A⁻¹X_Rᵀ` of one block (`d × l`).
        bmat: d * mb,
        /// `H_RR` of one block.
        h: mb * mb,
        /// Block predictions.
        fr: mb,
        /// Row means of `H_RR`.
        tmp: mb,
        /// Held-out predictions of one block.
        res: mb,
        /// Building the system.
        system: SystemScratch::len(n, d),
    }
}

scratch! {
    /// Scratch of [`ls_dual_holdout`].
    struct DualHoldoutScratch(n: usize, mb: usize) {
        /// The full-data coefficients.
        a: n,
        /// The factor of `C = L^{½}KL^{½} + λI`.
        c: n * n,
        /// `C⁻¹`.
        cinv: n * n,
        /// `L^{½}K`.
        lk: n * n,
        /// Graph products.
        tmp: n,
        /// `(C⁻¹)_{:,R}·L^{½}_RR` of one block.
        gr: n * mb,
        /// `H_RR` of one block.
        h: mb * mb,
        /// Block predictions.
        fr: mb,
        /// Held-out predictions of one block.
        res: mb,
    }
}

/// Scratch for [`ls_primal`] with `n` rows and `d` features.
pub fn ls_primal_workspace_len(n: usize, d: usize) -> usize {
    PrimalScratch::len(n, d)
}

/// Primal RLS / RankRLS: solves `(XᵀLX + λI)·w = Xᵀt` for `w` (`d`).
///
/// `x` is `n × d` (dense rows), `s` the `n` scores (ignored for a pair
/// graph). For graphs with a cheap `L^{½}` the Gram matrix is a syrk of
/// `L^{½}X`; otherwise `Xᵀ(LX)` by gemm.
///
/// The system is solved by [`solve_normal`]'s rule (equilibrated; with
/// `λ > 0` never refused for rounding, whatever the features' scales).
///
/// # Errors
/// [`LearnError::BadLambda`] for `λ < 0` or non-finite;
/// `ConstantFeature`/`Collinear` when `XᵀLX` is singular at `λ = 0` (e.g.
/// fewer rows than features); dimension, workspace and non-finite errors.
pub fn ls_primal<B: Backend>(
    backend: &mut B,
    x: MatRef<'_, f64>,
    graph: &Graph<'_>,
    s: &[f64],
    lambda: f64,
    w: &mut [f64],
    work: &mut [f64],
) -> Result<(), LearnError> {
    let (n, d) = (x.nrows(), x.ncols());
    let (ws, _) = PrimalScratch::split(work, n, d)?;
    if w.len() != d {
        return Err(LinalgError::DimensionMismatch.into());
    }
    primal_system(backend, x, graph, s, lambda, ws.a, ws.rhs, ws.system)?;
    solve_normal(backend, ws.a, ws.rhs, lambda, w, ws.normal)
}

/// Builds the primal system: `a ← XᵀLX` (`d × d`, lower triangle) and
/// `rhs ← Xᵀt`; checks `λ`.
// Eight inputs: private: the primal problem's parts, the two outputs and the workspace.
#[allow(clippy::too_many_arguments)]
fn primal_system<B: Backend>(
    backend: &mut B,
    x: MatRef<'_, f64>,
    graph: &Graph<'_>,
    s: &[f64],
    lambda: f64,
    a: &mut [f64],
    rhs: &mut [f64],
    work: &mut [f64],
) -> Result<(), LearnError> {
    check_lambda(lambda, false)?;
    check_graph(graph)?;
    let (n, d) = (x.nrows(), x.ncols());
    if graph.n() != n || rhs.len() != d || a.len() != d * d || (!matches!(graph, Graph::Pairs { .. }) && s.len() != n) {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if !x.all_finite() {
        return Err(LinalgError::NonFinite.into());
    }
    let (SystemScratch { lx, t, tmp }, _) = SystemScratch::split(work, n, d)?;
    let mut a = MatMut::from_col_major(a, d, d)?;
    let sqrt = graph.has_sqrt();
    graph.apply_cols(x, MatMut::from_col_major(lx, n, d)?, sqrt, tmp)?;
    let lxv = MatRef::from_col_major(lx, n, d)?;
    if sqrt {
        // XᵀLX = (L^{½}X)ᵀ(L^{½}X), Xᵀt = (L^{½}X)ᵀ(L^{½}s).
        backend.syrk(1.0, lxv.t(), 0.0, a.rb_mut())?;
        if s.iter().any(|v| !v.is_finite()) {
            return Err(LinalgError::NonFinite.into());
        }
        graph.apply_sqrt(s, t)?;
        gemv(1.0, lxv.t(), t, 0.0, rhs)?;
    } else {
        backend.gemm(1.0, x.t(), lxv, 0.0, a.rb_mut())?;
        graph.target(s, t)?;
        gemv(1.0, x.t(), t, 0.0, rhs)?;
    }
    Ok(())
}

scratch! {
    /// Scratch of [`ls_primal_sparse`].
    struct SparsePrimalScratch(n: usize, d: usize) {
        /// The `d × d` system.
        a: d * d,
        /// [`ls_primal_solve`]'s scratch.
        solve: ls_primal_solve_workspace_len(d),
        /// The target `t = Ls` (or `Dᵀm` for pairs).
        t: n,
        /// Per feature: 0 outside the current block, else its place in
        /// `cols` plus one.
        place: d,
        /// The block's features, in the order first met (integers below
        /// 2³², exact in `f64`).
        cols: d,
        /// The block's feature means over `cols`.
        mean: d,
        /// One centred row over `cols`.
        z: d,
    }
}

/// Scratch for [`ls_primal_sparse`] with `n` rows and `d` features:
/// about `3d² + n + 8d`, the `d × d` systems dominating; nothing of size `n × d`.
pub fn ls_primal_sparse_workspace_len(n: usize, d: usize) -> usize {
    SparsePrimalScratch::len(n, d)
}

/// [`ls_primal`] on sparse rows: `(XᵀLX + λI)·w = Xᵀt` with `XᵀLX` summed
/// from the rows as stored, never densifying `X` (memory `d² + n + 4d`).
///
/// `L` is a sum of blocks `c·(I − 11ᵀ/l)` over row sets: the queries of a
/// `Queries` graph (`c` by its weighting), each pair `{winner, loser}` of a
/// `Pairs` graph (`c = 2`: `2I − 11ᵀ` is the pair's Laplacian), while
/// `Identity` is `I` row by row. Each centred block adds
/// `c·Σᵢ (xᵢ − m)(xᵢ − m)ᵀ` over the union of its rows' features (`m` the
/// block's mean), the same centred products the dense path forms from
/// `L^{½}X`, at `l·u²/2` flops for a block of `l` rows over `u` features
/// (never more than the dense syrk); an identity row adds `xᵢxᵢᵀ` over its
/// own entries. `Xᵀt` is the sparse product with [`Graph::target`].
///
/// # Errors
/// As [`ls_primal`].
pub fn ls_primal_sparse<B: Backend>(
    backend: &mut B,
    x: CsrRef<'_>,
    graph: &Graph<'_>,
    s: &[f64],
    lambda: f64,
    w: &mut [f64],
    work: &mut [f64],
) -> Result<(), LearnError> {
    check_lambda(lambda, false)?;
    check_sparse_primal_args(x, graph, s, w)?;
    let (n, d) = (x.nrows(), x.ncols());
    let (SparsePrimalScratch { a, solve, t, place, cols, mean, z }, _) = SparsePrimalScratch::split(work, n, d)?;
    a.fill(0.0);
    place.fill(0.0);
    mean.fill(0.0);
    let mut block = SparseBlock { x, a, d, place, cols, mean, z };
    match *graph {
        Graph::Identity { .. } => (0..n).for_each(|i| block.add_row(i)),
        Graph::Queries { query_ptr, weight } => {
            for q in query_ptr.windows(2).filter(|q| q[1] > q[0]) {
                block.add_centred(q[0]..q[1], Graph::query_scale(weight, q[1] - q[0]));
            }
        }
        Graph::Pairs { pairs, .. } => pairs.iter().for_each(|p| block.add_centred([p.winner, p.loser], 2.0)),
    }
    graph.target(s, t)?;
    sparse_t_times(x, t, w);
    ls_primal_solve(backend, a, lambda, w, solve)
}

/// The shapes [`ls_primal_sparse`] and [`ls_primal_sparse_cg`] take:
/// a graph over the `n` rows, `d` weights, `n` scores unless pairs.
fn check_sparse_primal_args(x: CsrRef<'_>, graph: &Graph<'_>, s: &[f64], w: &[f64]) -> Result<(), LearnError> {
    check_graph(graph)?;
    let (n, d) = (x.nrows(), x.ncols());
    if graph.n() != n || w.len() != d || (!matches!(graph, Graph::Pairs { .. }) && s.len() != n) {
        return Err(LinalgError::DimensionMismatch.into());
    }
    Ok(())
}

scratch! {
    /// Scratch of [`ls_primal_sparse_cg`].
    struct SparseCgScratch(n: usize, d: usize) {
        /// The target `t`, then `Xv`.
        t: n,
        /// `LXv`.
        lxv: n,
        /// The right-hand side `Xᵀt`.
        rhs: d,
        /// Conjugate gradient.
        cg: cg_workspace_len(d),
    }
}

/// Scratch for [`ls_primal_sparse_cg`]: `2n + 4d`, nothing of size `d²`.
pub fn ls_primal_sparse_cg_workspace_len(n: usize, d: usize) -> usize {
    SparseCgScratch::len(n, d)
}

/// [`ls_primal_sparse`]'s system solved without forming it, for feature
/// spaces whose `d × d` matrix does not fit: conjugate gradient on
/// `(XᵀLX + λI)·w = Xᵀt`, each product `v ↦ Xᵀ(L(Xv)) + λv` read from the
/// sparse rows (`2·nnz + O(n)` flops) and [`Graph::apply`]. Memory
/// `2n + 4d`. Starts from `w = 0`; stops at `‖r‖ ≤ rel_tol·‖Xᵀt‖` with
/// `params`. `λ > 0` (the system is then positive definite whatever `X`).
///
/// # Errors
/// [`LearnError::BadLambda`] for `λ ≤ 0` or non-finite;
/// [`LinalgError::NoConvergence`] when `params.max_iter` iterations do not
/// reach the tolerance; dimension, workspace and graph errors.
pub fn ls_primal_sparse_cg(
    x: CsrRef<'_>,
    graph: &Graph<'_>,
    s: &[f64],
    lambda: f64,
    params: &CgParams,
    w: &mut [f64],
    work: &mut [f64],
) -> Result<CgInfo, LearnError> {
    check_lambda(lambda, true)?;
    check_sparse_primal_args(x, graph, s, w)?;
    let (n, d) = (x.nrows(), x.ncols());
    let (SparseCgScratch { t, lxv, rhs, cg }, _) = SparseCgScratch::split(work, n, d)?;
    graph.target(s, t)?;
    sparse_t_times(x, t, rhs);
    w.fill(0.0);
    let matvec = |v: &[f64], out: &mut [f64]| -> Result<(), LinalgError> {
        for (i, xv) in t.iter_mut().enumerate() {
            let (ci, vi) = x.row(i);
            *xv = ci.iter().zip(vi).map(|(&j, &a)| a * v[j as usize]).sum();
        }
        graph.apply(t, lxv)?;
        sparse_t_times(x, lxv, out);
        out.iter_mut().zip(v).for_each(|(o, &vj)| *o += lambda * vj);
        Ok(())
    };
    let info = cg_solve(matvec, rhs, w, cg, params)?;
    if !info.converged {
        return Err(LinalgError::NoConvergence { iterations: info.iterations }.into());
    }
    Ok(info)
}

/// `out ← Xᵀy` for sparse rows `X`.
fn sparse_t_times(x: CsrRef<'_>, y: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    for (i, &yi) in y.iter().enumerate() {
        let (ci, vi) = x.row(i);
        for (&j, &v) in ci.iter().zip(vi) {
            out[j as usize] += v * yi;
        }
    }
}

/// The lower triangle of `XᵀLX` (column-major `d × d`) summed block by
/// block from sparse rows ([`ls_primal_sparse`]); `place` and `mean` are
/// zero between blocks.
struct SparseBlock<'s, 'x> {
    x: CsrRef<'x>,
    a: &'s mut [f64],
    d: usize,
    place: &'s mut [f64],
    cols: &'s mut [f64],
    mean: &'s mut [f64],
    z: &'s mut [f64],
}

impl SparseBlock<'_, '_> {
    /// `a += xᵢxᵢᵀ` over row `i`'s entries (indices increasing, so
    /// `(j, k)` with `k ≤ j` is in the lower triangle).
    fn add_row(&mut self, i: usize) {
        let (ci, vi) = self.x.row(i);
        for (p, (&j, &vj)) in ci.iter().zip(vi).enumerate() {
            let col = &mut self.a[j as usize..];
            for (&k, &vk) in ci[..=p].iter().zip(&vi[..=p]) {
                col[k as usize * self.d] += vj * vk;
            }
        }
    }

    /// `a += c·Σᵢ (xᵢ − m)(xᵢ − m)ᵀ` over the rows `rows` (at least one),
    /// `m` their mean, on the union of their features.
    fn add_centred(&mut self, rows: impl IntoIterator<Item = usize> + Clone, c: f64) {
        let mut u = 0;
        let mut l = 0usize;
        for i in rows.clone() {
            l += 1;
            let (ci, vi) = self.x.row(i);
            for (&j, &v) in ci.iter().zip(vi) {
                let j = j as usize;
                if self.place[j] == 0.0 {
                    self.cols[u] = j as f64;
                    u += 1;
                    self.place[j] = u as f64;
                }
                self.mean[j] += v;
            }
        }
        let sc = libm::sqrt(c);
        for &j in &self.cols[..u] {
            self.mean[j as usize] /= l as f64;
        }
        for i in rows {
            // z = √c·(xᵢ − m) over the block's features.
            for (zk, &j) in self.z[..u].iter_mut().zip(&self.cols[..u]) {
                *zk = -self.mean[j as usize];
            }
            let (ci, vi) = self.x.row(i);
            for (&j, &v) in ci.iter().zip(vi) {
                self.z[self.place[j as usize] as usize - 1] += v;
            }
            self.z[..u].iter_mut().for_each(|v| *v *= sc);
            for p in 0..u {
                let (jp, zp) = (self.cols[p] as usize, self.z[p]);
                for q in 0..=p {
                    let jq = self.cols[q] as usize;
                    let (r, k) = if jp >= jq { (jp, jq) } else { (jq, jp) };
                    self.a[r + k * self.d] += zp * self.z[q];
                }
            }
        }
        for &j in &self.cols[..u] {
            self.place[j as usize] = 0.0;
            self.mean[j as usize] = 0.0;
        }
    }
}

/// Scratch for [`ls_primal_accumulate`] with a block of `n` rows and `d`
/// features: `L^{½}s` and the query means.
pub fn ls_primal_accumulate_workspace_len(n: usize, d: usize) -> usize {
    n + d
}

/// The primal system of [`ls_primal`] built block by block, for data read
/// in a stream: adds one block of rows to `a ← a + (L^{½}X)ᵀ(L^{½}X)`
/// (lower triangle, `d × d`) and `rhs ← rhs + (L^{½}X)ᵀ(L^{½}s)`. The block
/// `x` is row-major `n × d` and is overwritten by `L^{½}X`.
///
/// RankRLS (000 eq. 5) solves `(XᵀLX + λI)·w = XᵀLs`. For a graph with a
/// square root (`Identity` or `Queries`) `L` is block diagonal over the
/// queries, so `XᵀLX = Σ_b X_bᵀL_bX_b` and `XᵀLs = Σ_b X_bᵀL_bs_b` over
/// blocks `b` of whole queries: the caller passes each block with the graph
/// of its own queries (`query_ptr` from 0 over the block) and never splits
/// a query between blocks. Start from `a = 0`, `rhs = 0`; finish with
/// [`ls_primal_solve`]. `L^{½}X` is [`ls_primal`]'s bit for bit
/// ([`Graph::apply_sqrt_rows_in_place`]); the result equals
/// [`ls_primal`]'s up to the order of the Gram sums (rounding).
///
/// # Errors
/// [`LearnError::BadGraph`] for explicit pairs (no `L^{½}`) or a malformed
/// graph; dimension, workspace and non-finite errors. A non-finite value
/// (or a query's column sum that overflows) is
/// found query by query as the rows are summed: after that error `rhs` may
/// hold part of the block's sum (and `x` part of `L^{½}X`); discard both
/// sums.
// Eight inputs: the rows (scaled in place), their graph and targets, the two sums and the workspace.
#[allow(clippy::too_many_arguments)]
pub fn ls_primal_accumulate<B: Backend>(
    backend: &mut B,
    x: &mut [f64],
    d: usize,
    graph: &Graph<'_>,
    s: &[f64],
    a: &mut [f64],
    rhs: &mut [f64],
    work: &mut [f64],
) -> Result<(), LearnError> {
    check_graph(graph)?;
    if !graph.has_sqrt() {
        return Err(LearnError::BadGraph);
    }
    let n = graph.n();
    if n.checked_mul(d) != Some(x.len()) || s.len() != n || rhs.len() != d || a.len() != d * d {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if s.iter().any(|v| !v.is_finite()) {
        return Err(LinalgError::NonFinite.into());
    }
    if work.len() < n + d {
        return Err(LinalgError::WorkspaceTooSmall { needed: n + d, got: work.len() }.into());
    }
    let (t, rest) = work.split_at_mut(n);
    graph.apply_sqrt(s, t)?;
    // `L^{½}X` and `(L^{½}X)ᵀ(L^{½}s)` query by query, each query's rows
    // checked, scaled and added while they are in cache (the same
    // operations in the same order as one `apply_sqrt_rows_in_place` and
    // one gemv over all rows, so the same bits); then the Gram matrix of
    // all rows at once.
    match *graph {
        Graph::Queries { query_ptr, weight } => {
            for w in query_ptr.windows(2).filter(|w| w[1] > w[0]) {
                let (lo, hi) = (w[0], w[1]);
                let rows = x.get_mut(lo * d..hi * d).ok_or(LinalgError::DimensionMismatch)?;
                Graph::Queries { query_ptr: &[0, hi - lo], weight }.apply_sqrt_rows_in_place(rows, d, rest)?;
                // The query's column means: finite exactly when its values
                // are (a NaN or an infinity makes its column's sum one) and
                // their sums do not overflow, so no separate pass.
                if !slice_finite(&rest[..d]) {
                    return Err(LinalgError::NonFinite.into());
                }
                let tq = t.get(lo..hi).ok_or(LinalgError::DimensionMismatch)?;
                gemv(1.0, MatRef::from_row_major(rows, hi - lo, d)?.t(), tq, 1.0, rhs)?;
            }
        }
        _ => {
            if !slice_finite(x) {
                return Err(LinalgError::NonFinite.into());
            }
            graph.apply_sqrt_rows_in_place(x, d, rest)?;
            gemv(1.0, MatRef::from_row_major(x, n, d)?.t(), t, 1.0, rhs)?;
        }
    }
    let lx = MatRef::from_row_major(x, n, d)?;
    backend.syrk(1.0, lx.t(), 1.0, MatMut::from_col_major(a, d, d)?)?;
    Ok(())
}

/// Scratch for [`ls_primal_solve`] with `d` features.
pub fn ls_primal_solve_workspace_len(d: usize) -> usize {
    d + normal_workspace_len(d)
}

/// Solves the system of [`ls_primal_accumulate`]: `w ← (A + λI)⁻¹·w`, `w`
/// holding the accumulated right-hand side on entry; `a` (lower triangle
/// read) is left as it is. [`solve_normal`]'s rule.
///
/// # Errors
/// As [`ls_primal`].
pub fn ls_primal_solve<B: Backend>(
    backend: &mut B,
    a: &[f64],
    lambda: f64,
    w: &mut [f64],
    work: &mut [f64],
) -> Result<(), LearnError> {
    let d = w.len();
    if a.len() != d * d {
        return Err(LinalgError::DimensionMismatch.into());
    }
    let need = ls_primal_solve_workspace_len(d);
    if work.len() < need {
        return Err(LinalgError::WorkspaceTooSmall { needed: need, got: work.len() }.into());
    }
    let (rhs, rest) = work.split_at_mut(d);
    rhs.copy_from_slice(w);
    solve_normal(backend, a, rhs, lambda, w, rest)
}

/// Scratch for [`ls_dual`] with `n` rows.
pub fn ls_dual_workspace_len(n: usize) -> usize {
    DualScratch::len(n)
}

/// Scratch for [`ls_dual_in_place`] with `n` rows: `2n`, no `n × n`
/// buffer.
pub fn ls_dual_in_place_workspace_len(n: usize) -> usize {
    DualInPlaceScratch::len(n)
}

scratch! {
    /// Scratch of [`ls_dual_in_place`].
    struct DualInPlaceScratch(n: usize) {
        /// Graph products.
        tmp: n,
        /// `L^{½}s`, then the solution `c`.
        c: n,
    }
}

/// The argument checks shared by [`ls_dual`] and [`ls_dual_in_place`] for
/// a `rows × cols` kernel matrix; returns `n`.
fn check_dual_args(
    rows: usize,
    cols: usize,
    graph: &Graph<'_>,
    s: &[f64],
    lambda: f64,
    a: &[f64],
) -> Result<usize, LearnError> {
    check_lambda(lambda, true)?;
    check_graph(graph)?;
    let n = rows;
    if cols != n || graph.n() != n || a.len() != n || (!matches!(graph, Graph::Pairs { .. }) && s.len() != n) {
        return Err(LinalgError::DimensionMismatch.into());
    }
    Ok(n)
}

/// Dual RLS / RankRLS: solves `(LK + λI)·a = t` for the `n` coefficients
/// `a`, given the `n × n` kernel matrix `k` (both triangles read). The
/// system is formed in an `n × n` workspace; [`ls_dual_in_place`] forms it
/// in `K`'s own buffer instead.
///
/// # Errors
/// [`LearnError::BadLambda`] unless `λ > 0` (the system is singular at `λ = 0`
/// whenever `L` has a null space); `NotPositiveDefinite`/`Singular` if the
/// system is numerically singular; dimension, workspace, non-finite errors.
pub fn ls_dual<B: Backend>(
    backend: &mut B,
    k: MatRef<'_, f64>,
    graph: &Graph<'_>,
    s: &[f64],
    lambda: f64,
    a: &mut [f64],
    work: &mut [f64],
) -> Result<(), LearnError> {
    let n = check_dual_args(k.nrows(), k.ncols(), graph, s, lambda, a)?;
    if !k.all_finite() {
        return Err(LinalgError::NonFinite.into());
    }
    let (DualScratch { m, rest }, _) = DualScratch::split(work, n)?;
    MatMut::from_col_major(&mut *m, n, n)?.copy_from(k)?;
    ls_dual_in_place(backend, MatMut::from_col_major(m, n, n)?, graph, s, lambda, a, rest)
}

/// [`ls_dual`] on `K` in place: the system `L^{½}KL^{½} + λI` (or
/// `LK + λI` for a pair graph) is formed and factored in `K`'s buffer,
/// which holds the factor on return. Workspace
/// [`ls_dual_in_place_workspace_len`] — the fit's peak memory is one
/// `n × n` matrix, not two.
///
/// # Errors
/// As [`ls_dual`] (non-finite entries of `K` are caught by the
/// factorisation).
pub fn ls_dual_in_place<B: Backend>(
    backend: &mut B,
    mut k: MatMut<'_, f64>,
    graph: &Graph<'_>,
    s: &[f64],
    lambda: f64,
    a: &mut [f64],
    work: &mut [f64],
) -> Result<(), LearnError> {
    let n = check_dual_args(k.nrows(), k.ncols(), graph, s, lambda, a)?;
    let (DualInPlaceScratch { tmp, c }, _) = DualInPlaceScratch::split(work, n)?;
    if graph.has_sqrt() {
        sqrt_system_factor(backend, k.rb_mut(), graph, lambda)?;
        sqrt_system_solve(backend, graph, s, k.rb(), c, a)
    } else {
        for j in 0..n {
            (0..n).for_each(|i| tmp[i] = k.at(i, j));
            graph.apply(tmp, c)?;
            (0..n).for_each(|i| *k.at_mut(i, j) = c[i]);
        }
        for i in 0..n {
            *k.at_mut(i, i) += lambda;
        }
        graph.target(s, a)?;
        Ok(backend.lu_solve_in_place(k, MatMut::from_col_major(a, n, 1)?)?)
    }
}

/// `K ← chol(L^{½}KL^{½} + λI)` in place (`n × n`, lower factor): the
/// backend's [`Backend::sqrt_sandwich_in_place`], the ridge, the backend's
/// Cholesky.
fn sqrt_system_factor<B: Backend>(
    backend: &mut B,
    mut k: MatMut<'_, f64>,
    graph: &Graph<'_>,
    lambda: f64,
) -> Result<(), LearnError> {
    backend.sqrt_sandwich_in_place(graph, k.rb_mut())?;
    for i in 0..k.nrows() {
        *k.at_mut(i, i) += lambda;
    }
    Ok(backend.cholesky_in_place(k)?)
}

/// The dual coefficients from the factor of [`sqrt_system_factor`]:
/// `a = L^{½}(L^{½}KL^{½} + λI)⁻¹L^{½}s`; `c` is `n` elements of scratch.
fn sqrt_system_solve<B: Backend>(
    backend: &mut B,
    graph: &Graph<'_>,
    s: &[f64],
    factor: MatRef<'_, f64>,
    c: &mut [f64],
    a: &mut [f64],
) -> Result<(), LearnError> {
    let n = c.len();
    if s.iter().any(|v| !v.is_finite()) {
        return Err(LinalgError::NonFinite.into());
    }
    graph.apply_sqrt(s, c)?;
    backend.cholesky_solve_in_place(factor, MatMut::from_col_major(c, n, 1)?)?;
    Ok(graph.apply_sqrt(c, a)?)
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
pub(crate) fn max_block(graph: &Graph<'_>) -> usize {
    match *graph {
        Graph::Identity { .. } => 1,
        Graph::Queries { query_ptr, .. } => query_ptr.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0),
        Graph::Pairs { .. } => 0,
    }
}

/// `(c, centre)` with `L_RR = c·(I − 11ᵀ/l)` if `centre`, else `I`.
fn block_laplacian_form(graph: &Graph<'_>, l: usize) -> (f64, bool) {
    match *graph {
        Graph::Queries { weight: QueryWeight::Pairs, .. } => (l as f64, true),
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
    PrimalHoldoutScratch::len(n, d, max_block)
}

/// Fast closed-form leave-one-out (RLS, `Identity` graph) or
/// leave-query-out (RankRLS, `Queries` graph) predictions of the primal
/// learner for every row, into `out` (`n`). One d×d factorisation, then
/// per held-out block `H_RR = X_R·A⁻¹·X_Rᵀ·L_RR` (`A = XᵀLX + λI`): in all
/// O(n·d² + Σ l_q·d²) instead of one refit per block.
///
/// # Errors
/// [`LearnError::Unsupported`] for a pair graph (its loss is not block-diagonal);
/// otherwise as [`ls_primal`].
pub fn ls_primal_holdout<B: Backend>(
    backend: &mut B,
    x: MatRef<'_, f64>,
    graph: &Graph<'_>,
    s: &[f64],
    lambda: f64,
    out: &mut [f64],
    work: &mut [f64],
) -> Result<(), LearnError> {
    let (n, d) = (x.nrows(), x.ncols());
    let mb = max_block(graph);
    if mb == 0 {
        return Err(LearnError::Unsupported);
    }
    if out.len() != n {
        return Err(LinalgError::DimensionMismatch.into());
    }
    let (PrimalHoldoutScratch { a, w, bmat, h, fr, tmp, res, system }, _) =
        PrimalHoldoutScratch::split(work, n, d, mb)?;
    primal_system(backend, x, graph, s, lambda, a, w, system)?;
    {
        let mut m = MatMut::from_col_major(a, d, d)?;
        for i in 0..d {
            *m.at_mut(i, i) += lambda;
        }
        backend.cholesky_in_place(m)?;
    }
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
    DualHoldoutScratch::len(n, max_block)
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
    work: &mut [f64],
) -> Result<(), LearnError> {
    let n = k.nrows();
    let mb = max_block(graph);
    if mb == 0 {
        return Err(LearnError::Unsupported);
    }
    if out.len() != n || k.ncols() != n || s.len() != n {
        return Err(LinalgError::DimensionMismatch.into());
    }
    check_lambda(lambda, true)?;
    if !k.all_finite() {
        return Err(LinalgError::NonFinite.into());
    }
    check_graph(graph)?;
    let (DualHoldoutScratch { a, c, cinv, lk, tmp, gr, h, fr, res }, _) = DualHoldoutScratch::split(work, n, mb)?;
    // The fit itself (as ls_dual), keeping the factor of C = L^{½}KL^{½} + λI.
    MatMut::from_col_major(&mut *c, n, n)?.copy_from(k)?;
    sqrt_system_factor(backend, MatMut::from_col_major(&mut *c, n, n)?, graph, lambda)?;
    sqrt_system_solve(backend, graph, s, MatRef::from_col_major(c, n, n)?, tmp, a)?;
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

/// Which system a least-squares fit solves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `d` feature weights `w`: `f(x) = wᵀx`.
    Primal,
    /// `n` expansion coefficients over the training rows:
    /// `f(x) = Σᵢ aᵢ k(x, xᵢ)`.
    Dual,
}

impl Form {
    /// The cheaper form for these rows: primal for the linear kernel with
    /// no more features than rows, dense or sparse (`d³ + n·d²` flops and
    /// `d²` memory against `n³ + n²·d` and `n²`), dual otherwise.
    pub fn choose(kernel: &Kernel, x: &Rows<'_>) -> Form {
        if *kernel == Kernel::Linear && x.ncols() <= x.nrows() {
            Form::Primal
        } else {
            Form::Dual
        }
    }

    /// Length of the coefficient vector of this form.
    pub fn coef_len(self, x: &Rows<'_>) -> usize {
        match self {
            Form::Primal => x.ncols(),
            Form::Dual => x.nrows(),
        }
    }
}

scratch! {
    /// Scratch of a dual [`fit`] or [`holdout`].
    struct KernelFitScratch(n: usize, rest: usize) {
        /// The training kernel matrix.
        k: n * n,
        /// Building the kernel matrix, then solving.
        rest: rest,
    }
}

/// The part of a dual fit's scratch after the kernel matrix: first the
/// kernel matrix's own scratch, then the solver's (`solver` elements).
fn dual_rest(x: &Rows<'_>, solver: usize) -> usize {
    kernel_matrix_workspace_len(x, x).max(solver)
}

/// Scratch for [`fit`] on these rows.
pub fn fit_workspace_len(kernel: &Kernel, x: &Rows<'_>) -> usize {
    let (n, d) = (x.nrows(), x.ncols());
    match (Form::choose(kernel, x), x) {
        (Form::Primal, Rows::Dense(_)) => ls_primal_workspace_len(n, d),
        (Form::Primal, Rows::Sparse(_)) => ls_primal_sparse_workspace_len(n, d),
        (Form::Dual, _) => KernelFitScratch::len(n, dual_rest(x, ls_dual_in_place_workspace_len(n))),
    }
}

/// RLS / RankRLS from data rows to model parameters in one call: chooses
/// the form ([`Form::choose`]) for `data`'s kernel and rows, builds the
/// kernel matrix when dual, solves with `data`'s graph and targets, and
/// writes `coef` (`Form::coef_len` long: `w` or `a`).
///
/// # Errors
/// As [`ls_primal`] / [`ls_dual`]; [`LinalgError::DimensionMismatch`] if
/// `coef` has the wrong length.
pub fn fit<B: Backend>(
    backend: &mut B,
    data: &Training<'_>,
    lambda: f64,
    coef: &mut [f64],
    work: &mut [f64],
) -> Result<Form, LearnError> {
    let Training { kernel, rows: x, graph, s } = *data;
    let form = Form::choose(kernel, x);
    if coef.len() != form.coef_len(x) {
        return Err(LinalgError::DimensionMismatch.into());
    }
    match (form, x) {
        (Form::Primal, Rows::Dense(m)) => ls_primal(backend, *m, graph, s, lambda, coef, work)?,
        (Form::Primal, Rows::Sparse(c)) => ls_primal_sparse(backend, *c, graph, s, lambda, coef, work)?,
        (Form::Dual, _) => {
            let n = x.nrows();
            let kw = dual_rest(x, ls_dual_in_place_workspace_len(n));
            let (ws, _) = KernelFitScratch::split(work, n, kw)?;
            kernel_matrix_sym(backend, kernel, x, MatMut::from_col_major(ws.k, n, n)?, ws.rest)?;
            ls_dual_in_place(backend, MatMut::from_col_major(ws.k, n, n)?, graph, s, lambda, coef, ws.rest)?;
        }
    }
    Ok(form)
}

/// Scratch for [`holdout`] on these rows and graph.
pub fn holdout_workspace_len(kernel: &Kernel, x: &Rows<'_>, graph: &Graph<'_>) -> usize {
    let (n, d, mb) = (x.nrows(), x.ncols(), max_block(graph));
    match holdout_form(kernel, x) {
        Form::Primal => ls_primal_holdout_workspace_len(n, d, mb),
        Form::Dual => KernelFitScratch::len(n, dual_rest(x, ls_dual_holdout_workspace_len(n, mb))),
    }
}

/// The form of [`holdout`]: [`Form::choose`]'s, except that the primal
/// shortcut reads dense rows, so sparse rows take the dual form.
pub fn holdout_form(kernel: &Kernel, x: &Rows<'_>) -> Form {
    match x {
        Rows::Dense(_) => Form::choose(kernel, x),
        Rows::Sparse(_) => Form::Dual,
    }
}

/// Closed-form leave-one-out (RLS, `Identity` graph) or leave-query-out
/// (RankRLS, `Queries` graph) predictions for every row of `data`, in one
/// call: the form is chosen as in [`fit`] and the kernel matrix built when
/// dual.
///
/// # Errors
/// [`LearnError::Unsupported`] for a pair graph; otherwise as
/// [`ls_primal_holdout`] / [`ls_dual_holdout`].
pub fn holdout<B: Backend>(
    backend: &mut B,
    data: &Training<'_>,
    lambda: f64,
    out: &mut [f64],
    work: &mut [f64],
) -> Result<(), LearnError> {
    let Training { kernel, rows: x, graph, s } = *data;
    match (holdout_form(kernel, x), x) {
        (Form::Primal, Rows::Dense(m)) => ls_primal_holdout(backend, *m, graph, s, lambda, out, work),
        _ => {
            let (n, mb) = (x.nrows(), max_block(graph));
            if mb == 0 {
                return Err(LearnError::Unsupported);
            }
            let kw = dual_rest(x, ls_dual_holdout_workspace_len(n, mb));
            let (ws, _) = KernelFitScratch::split(work, n, kw)?;
            kernel_matrix_sym(backend, kernel, x, MatMut::from_col_major(ws.k, n, n)?, ws.rest)?;
            ls_dual_holdout(backend, MatRef::from_col_major(ws.k, n, n)?, graph, s, lambda, out, ws.rest)
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec;

    use super::*;
    use crate::backend::Portable;
    use crate::graph::{Pair, QueryWeight};

    /// Uniform numbers in [0, 1) from a xorshift generator seeded `rng`.
    fn uniform(mut rng: u64) -> impl FnMut() -> f64 {
        move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// The block-by-block primal system gives the one-shot fit's weights
    /// to 1e-12 (only the order of the Gram sums differs; the system is
    /// well conditioned), for both query weightings, with blocks of whole
    /// queries; and the weights also solve the normal equations built
    /// naively from the centred rows (an independent check of the sums).
    #[test]
    fn primal_accumulate_equals_primal() {
        const N: usize = 23;
        const D: usize = 4;
        let mut next = uniform(0x2545_f491_4f6c_dd1d);
        let x: std::vec::Vec<f64> = (0..N * D).map(|_| next()).collect(); // row-major
        let s: std::vec::Vec<f64> = (0..N).map(|_| next()).collect();
        let qp = [0usize, 3, 4, 10, 11, 17, 23];
        for weight in [QueryWeight::Equal, QueryWeight::Pairs] {
            let g = Graph::Queries { query_ptr: &qp, weight };
            let xm = MatRef::from_row_major(&x, N, D).unwrap();
            let mut pw = vec![0.0f64; Portable::workspace_len(D)];
            let mut w = vec![0.0f64; D];
            let mut work = vec![0.0f64; ls_primal_workspace_len(N, D)];
            ls_primal(&mut Portable::new(&mut pw), xm, &g, &s, 0.7, &mut w, &mut work).unwrap();
            // Blocks of queries {0,1}, {2}, {3,4,5}.
            let (mut a, mut rhs) = (vec![0.0f64; D * D], vec![0.0f64; D]);
            for (lo, hi) in [(0usize, 2usize), (2, 3), (3, 6)] {
                let (r0, r1) = (qp[lo], qp[hi]);
                let local: std::vec::Vec<usize> = qp[lo..=hi].iter().map(|&p| p - r0).collect();
                let gb = Graph::Queries { query_ptr: &local, weight };
                let mut xb = x[r0 * D..r1 * D].to_vec();
                let mut wb = vec![0.0f64; ls_primal_accumulate_workspace_len(r1 - r0, D)];
                ls_primal_accumulate(
                    &mut Portable::new(&mut pw),
                    &mut xb,
                    D,
                    &gb,
                    &s[r0..r1],
                    &mut a,
                    &mut rhs,
                    &mut wb,
                )
                .unwrap();
            }
            // Naive XᵀLX and XᵀLs from the query-centred rows.
            let c = |q: usize| if weight == QueryWeight::Pairs { (qp[q + 1] - qp[q]) as f64 } else { 1.0 };
            let (mut na, mut nb) = ([[0.0f64; D]; D], [0.0f64; D]);
            for q in 0..qp.len() - 1 {
                let (r0, r1) = (qp[q], qp[q + 1]);
                let l = (r1 - r0) as f64;
                let mean = |j: usize| (r0..r1).map(|i| x[i * D + j]).sum::<f64>() / l;
                let smean = s[r0..r1].iter().sum::<f64>() / l;
                for i in r0..r1 {
                    for j in 0..D {
                        let xj = x[i * D + j] - mean(j);
                        nb[j] += c(q) * xj * (s[i] - smean);
                        for k in 0..D {
                            na[j][k] += c(q) * xj * (x[i * D + k] - mean(k));
                        }
                    }
                }
            }
            for j in 0..D {
                let lhs: f64 = (0..D).map(|k| na[j][k] * w[k]).sum::<f64>() + 0.7 * w[j];
                assert!((lhs - nb[j]).abs() <= 1e-12 * nb.iter().map(|v| v.abs()).fold(1.0, f64::max), "{j}");
            }
            let mut sw = vec![0.0f64; ls_primal_solve_workspace_len(D)];
            ls_primal_solve(&mut Portable::new(&mut pw), &a, 0.7, &mut rhs, &mut sw).unwrap();
            for (u, v) in rhs.iter().zip(&w) {
                assert!((u - v).abs() <= 1e-12 * v.abs().max(1.0), "{u} vs {v}");
            }
            assert!(w.iter().all(|v| *v != 0.0));
        }
        // Pairs have no L^{½}.
        let pairs = [Pair { winner: 0, loser: 1, magnitude: 1.0 }];
        let (mut a, mut rhs) = (vec![0.0f64; D * D], vec![0.0f64; D]);
        let mut pw = vec![0.0f64; Portable::workspace_len(D)];
        let mut wb = vec![0.0f64; ls_primal_accumulate_workspace_len(2, D)];
        let mut xb = x[..2 * D].to_vec();
        let r = ls_primal_accumulate(
            &mut Portable::new(&mut pw),
            &mut xb,
            D,
            &Graph::Pairs { n: 2, pairs: &pairs },
            &s[..2],
            &mut a,
            &mut rhs,
            &mut wb,
        );
        assert_eq!(r, Err(LearnError::BadGraph));
        // A non-finite value in any query's rows or targets, or in rows
        // without queries, is refused.
        let qp = [0usize, 1, 3];
        for (graph, row, bad_s) in [
            (Graph::Queries { query_ptr: &qp, weight: QueryWeight::Equal }, Some(2), false),
            (Graph::Queries { query_ptr: &qp, weight: QueryWeight::Pairs }, Some(0), false),
            (Graph::Queries { query_ptr: &qp, weight: QueryWeight::Equal }, None, true),
            (Graph::Identity { n: 3 }, Some(1), false),
        ] {
            let (mut a, mut rhs) = (vec![0.0f64; D * D], vec![0.0f64; D]);
            let mut wb = vec![0.0f64; ls_primal_accumulate_workspace_len(3, D)];
            let mut xb = x[..3 * D].to_vec();
            let mut sb = s[..3].to_vec();
            if let Some(r) = row {
                xb[r * D + 1] = f64::NAN;
            }
            if bad_s {
                sb[1] = f64::INFINITY;
            }
            let r =
                ls_primal_accumulate(&mut Portable::new(&mut pw), &mut xb, D, &graph, &sb, &mut a, &mut rhs, &mut wb);
            assert_eq!(r, Err(LearnError::Numerics(LinalgError::NonFinite)), "{graph:?} {row:?} {bad_s}");
        }
        // Finite values whose sum in a query overflows.
        let (mut a, mut rhs) = (vec![0.0f64; D * D], vec![0.0f64; D]);
        let mut wb = vec![0.0f64; ls_primal_accumulate_workspace_len(3, D)];
        let mut xb = x[..3 * D].to_vec();
        xb[D + 2] = f64::MAX;
        xb[2 * D + 2] = f64::MAX;
        let g = Graph::Queries { query_ptr: &qp, weight: QueryWeight::Equal };
        let r = ls_primal_accumulate(&mut Portable::new(&mut pw), &mut xb, D, &g, &s[..3], &mut a, &mut rhs, &mut wb);
        assert_eq!(r, Err(LearnError::Numerics(LinalgError::NonFinite)));
    }

    /// Sparse rows in the primal form give the dense primal's weights to
    /// 1e-12 relative (the same centred products summed in another order;
    /// the system is well conditioned) for every graph: identity, queries
    /// of both weightings (one of a single row, one empty) and explicit
    /// pairs; `fit` takes the primal form for sparse linear rows with
    /// `d ≤ n` and the dual one when `d > n`.
    #[test]
    fn sparse_primal_equals_dense_primal() {
        const N: usize = 19;
        const D: usize = 6;
        let mut next = uniform(0x9e37_79b9_7f4a_7c15);
        // Row-major dense rows with about half the entries zero, and CSR.
        let mut x = vec![0.0f64; N * D];
        let (mut ptr, mut col, mut val) = (vec![0usize], vec![], vec![]);
        for i in 0..N {
            for j in 0..D {
                if next() < 0.5 {
                    let v = 3.0 + next();
                    x[i * D + j] = v;
                    col.push(j as u32);
                    val.push(v);
                }
            }
            ptr.push(col.len());
        }
        let csr = CsrRef::new(D, &ptr, &col, &val).unwrap();
        let s: std::vec::Vec<f64> = (0..N).map(|_| next()).collect();
        let qp = [0usize, 4, 5, 5, 12, 19];
        let pairs = [
            Pair { winner: 0, loser: 3, magnitude: 1.0 },
            Pair { winner: 7, loser: 2, magnitude: 0.5 },
            Pair { winner: 7, loser: 18, magnitude: 2.0 },
            Pair { winner: 11, loser: 5, magnitude: 1.0 },
            Pair { winner: 1, loser: 9, magnitude: 1.0 },
            Pair { winner: 12, loser: 16, magnitude: 1.0 },
            Pair { winner: 14, loser: 4, magnitude: 1.0 },
        ];
        let graphs = [
            Graph::Identity { n: N },
            Graph::Queries { query_ptr: &qp, weight: QueryWeight::Equal },
            Graph::Queries { query_ptr: &qp, weight: QueryWeight::Pairs },
            Graph::Pairs { n: N, pairs: &pairs },
        ];
        let mut pw = vec![0.0f64; Portable::workspace_len(D)];
        for g in &graphs {
            let dense = Rows::Dense(MatRef::from_row_major(&x, N, D).unwrap());
            let sparse = Rows::Sparse(csr);
            let mut want = vec![0.0f64; D];
            let mut work = vec![0.0f64; fit_workspace_len(&Kernel::Linear, &dense)];
            let on_dense = Training { kernel: &Kernel::Linear, rows: &dense, graph: g, s: &s };
            let on_sparse = Training { rows: &sparse, ..on_dense };
            let f = fit(&mut Portable::new(&mut pw), &on_dense, 0.3, &mut want, &mut work);
            assert_eq!(f, Ok(Form::Primal));
            let mut got = vec![0.0f64; D];
            let mut work = vec![0.0f64; fit_workspace_len(&Kernel::Linear, &sparse)];
            assert_eq!(work.len(), ls_primal_sparse_workspace_len(N, D));
            let f = fit(&mut Portable::new(&mut pw), &on_sparse, 0.3, &mut got, &mut work);
            assert_eq!(f, Ok(Form::Primal));
            let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for (u, v) in got.iter().zip(&want) {
                assert!((u - v).abs() <= 1e-12 * scale, "{g:?}: {u} vs {v}");
            }
            assert!(want.iter().any(|v| *v != 0.0));
        }
        // The same system by conjugate gradient, without the d × d matrix:
        // to 1e-9 of the largest weight at a residual of 1e-13 (κ is small).
        for g in &graphs {
            let sparse = Rows::Sparse(csr);
            let mut want = vec![0.0f64; D];
            let mut work = vec![0.0f64; fit_workspace_len(&Kernel::Linear, &sparse)];
            fit(
                &mut Portable::new(&mut pw),
                &Training { kernel: &Kernel::Linear, rows: &sparse, graph: g, s: &s },
                0.3,
                &mut want,
                &mut work,
            )
            .unwrap();
            let mut got = vec![0.0f64; D];
            let mut work = vec![0.0f64; ls_primal_sparse_cg_workspace_len(N, D)];
            let info = ls_primal_sparse_cg(csr, g, &s, 0.3, &CgParams::new(100, 1e-13), &mut got, &mut work).unwrap();
            assert!(info.converged && info.iterations <= 4 * D, "{info:?}");
            let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for (u, v) in got.iter().zip(&want) {
                assert!((u - v).abs() <= 1e-9 * scale, "{g:?}: {u} vs {v}");
            }
            let few = ls_primal_sparse_cg(csr, g, &s, 0.3, &CgParams::new(1, 1e-13), &mut got, &mut work);
            assert_eq!(few, Err(LearnError::Numerics(LinalgError::NoConvergence { iterations: 1 })));
        }
        let zero = ls_primal_sparse_cg(csr, &graphs[0], &s, 0.0, &CgParams::default(), &mut [0.0; D], &mut [0.0; 200]);
        assert_eq!(zero, Err(LearnError::BadLambda));
        // Wider than tall: the dual form.
        let wide = CsrRef::new(N + 1, &ptr, &col, &val).unwrap();
        assert_eq!(Form::choose(&Kernel::Linear, &Rows::Sparse(wide)), Form::Dual);
        assert_eq!(holdout_form(&Kernel::Linear, &Rows::Sparse(csr)), Form::Dual);
    }

    /// The in-place dual fit returns what the copying one does, bit for bit
    /// (same operations on the same values), for a query graph (the
    /// `L^{½}KL^{½}` Cholesky path) and a pair graph (the LU path).
    #[test]
    fn dual_in_place_equals_dual() {
        const N: usize = 8;
        let mut k = vec![0.0f64; N * N];
        for j in 0..N {
            for i in 0..N {
                k[i + j * N] = libm::exp(-0.1 * ((i as f64) - (j as f64)).powi(2));
            }
        }
        let s: std::vec::Vec<f64> = (0..N).map(|i| ((i * 5) % 7) as f64).collect();
        let qp = [0usize, 3, 8];
        let pairs = [Pair { winner: 0, loser: 4, magnitude: 1.0 }, Pair { winner: 6, loser: 2, magnitude: 0.5 }];
        for g in [Graph::Queries { query_ptr: &qp, weight: QueryWeight::Pairs }, Graph::Pairs { n: N, pairs: &pairs }] {
            let mut work = vec![0.0f64; ls_dual_workspace_len(N).max(Portable::workspace_len(N))];
            let mut pw = vec![0.0f64; Portable::workspace_len(N)];
            let mut a = vec![0.0f64; N];
            ls_dual(
                &mut Portable::new(&mut pw),
                MatRef::from_col_major(&k, N, N).unwrap(),
                &g,
                &s,
                0.5,
                &mut a,
                &mut work,
            )
            .unwrap();
            let mut kk = k.clone();
            let mut b = vec![0.0f64; N];
            let mut small = vec![0.0f64; ls_dual_in_place_workspace_len(N)];
            ls_dual_in_place(
                &mut Portable::new(&mut pw),
                MatMut::from_col_major(&mut kk, N, N).unwrap(),
                &g,
                &s,
                0.5,
                &mut b,
                &mut small,
            )
            .unwrap();
            assert_eq!(a, b);
            assert!(a.iter().any(|v| *v != 0.0));
        }
    }
}
