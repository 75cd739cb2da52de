//! Kronecker learners on incomplete graphs: conjugate gradient over the
//! observed edges with the vec trick (004 §4.4).
//!
//! With `q` labelled edges `e = (u_e, v_e)` (duplicates allowed) and dual
//! coefficients `a ∈ ℝ^q`, the model's coefficient matrix is the scatter
//! `A = Σ_e a_e·e_{u_e}e_{v_e}ᵀ` (`p_u × p_v`; symmetrised or
//! antisymmetrised for those pair kernels, [`edge_coefficients`]) and the
//! edge kernel matrix `K_E = B(K_v ⊗ K_u)Bᵀ` (`B` the bookkeeping matrix of
//! 004 §4.4) is applied as `K_E·a = gather(K_u·scatter(a)·K_v)` — two
//! products of a `p_u × p_v` matrix, memory O(p_u·p_v + q), never `K_E`.
//! For the symmetric/reciprocal kernels the gather takes
//! `½(M[u, v] ± M[v, u])` (004 Prop. 4.3 with eqs. 11).
//!
//! Systems (minimisers of 004 eq. 1 with `h = K_E·a`):
//! - **regression** (004 eq. 5): `(K_E + λI)·a = y`, symmetric positive
//!   definite for `λ > 0` — plain CG;
//! - **conditional ranking** (004 eqs. 6, 31, 36; `L` block-diagonal over
//!   first nodes, each block `c·(I − 11ᵀ/l)`): the reduced normal equations
//!   `(L·K_E + λI)·a = L·y` are not symmetric. `L` is a scaled projector
//!   with the cheap root `L^{½} = √c·(I − 11ᵀ/l)` per block, so we solve the
//!   symmetric positive (semi)definite `(L^{½}K_E L^{½} + λI)·c = L^{½}y` by
//!   CG and set `a = L^{½}c` (then `L·K_E·a + λa = L^{½}(L^{½}K_E L^{½}c + λc)
//!   = L·y`). This keeps CG's optimality and short recurrences, where 004's
//!   non-symmetric form would need a method such as BiCG or GMRES; it is the
//!   same symmetric form as the dual RankRLS of [`crate::learn::ls`].
//!   `L` is applied in O(q) with per-node sums (004 eq. 36), edges need not
//!   be sorted.
//!
//! [`kron_minres`] solves the same systems by MINRES (RLScore's
//! `CGKronRLS` does; 004 says CG): the same Krylov space, other iterates
//! before convergence.
//!
//! Early stopping (004 §4.4, §6) regularises too: `λ = 0` is accepted, with
//! a budget of iterations or a caller callback that sees every iterate; the
//! system is then only semidefinite, and CG reports `NotPositiveDefinite`
//! if it meets a null direction before stopping.

use super::{enforce_pair_symmetry, Domains, LearnError, Loss, PairKernel};
use crate::backend::Backend;
use crate::graph::QueryWeight;
use crate::learn::check_lambda;
use crate::linalg::cg::{cg_solve_with_callback, cg_workspace_len, CgControl, CgInfo, CgParams};
use crate::linalg::minres::{minres_solve, minres_workspace_len, MinresInfo};
use crate::{scratch, LinalgError, MatMut, MatRef};

scratch! {
    /// Scratch of [`kron_cg`].
    struct KronCgScratch(p_u: usize, p_v: usize, q: usize, krylov: usize) {
        /// The scattered coefficients, then `K_u·A·K_v`.
        dense: p_u.saturating_mul(p_v),
        /// `K_u·A`.
        tmp: p_u.saturating_mul(p_v),
        /// The right-hand side `y` or `L^{½}y`.
        b: q,
        /// `L^{½}v` inside the product.
        lt: q,
        /// The iterate `a = L^{½}c` handed to the callback.
        cb_a: q,
        /// Per-node sums inside the product.
        gsum: p_u,
        /// Per-node sums for the callback.
        gsum2: p_u,
        /// Edges per first node.
        cnt: p_u,
        /// The Krylov solver's own scratch (CG or MINRES).
        solver: krylov,
    }
}

/// Scratch for [`kron_cg`] with `q` edges: `2·p_u·p_v + 6·q + 3·p_u`.
pub fn kron_cg_workspace_len(p_u: usize, p_v: usize, q: usize) -> usize {
    KronCgScratch::len(p_u, p_v, q, cg_workspace_len(q))
}

/// Scratch for [`kron_minres`] with `q` edges: `2·p_u·p_v + 10·q + 3·p_u`.
pub fn kron_minres_workspace_len(p_u: usize, p_v: usize, q: usize) -> usize {
    KronCgScratch::len(p_u, p_v, q, minres_workspace_len(q))
}

/// `x ← L^{½}·x`: per first node, `√c·(x_e − mean)` (`c = 1` or the node's
/// edge count).
fn apply_half(edges: &[(usize, usize)], cnt: &[f64], gsum: &mut [f64], weight: QueryWeight, x: &mut [f64]) {
    gsum.iter_mut().for_each(|s| *s = 0.0);
    for (&(u, _), &xe) in edges.iter().zip(x.iter()) {
        gsum[u] += xe;
    }
    for (&(u, _), xe) in edges.iter().zip(x.iter_mut()) {
        let scale = match weight {
            QueryWeight::Equal => 1.0,
            QueryWeight::Pairs => libm::sqrt(cnt[u]),
        };
        *xe = scale * (*xe - gsum[u] / cnt[u]);
    }
}

/// The coefficient matrix of a model from dual coefficients over edges:
/// `coef ← Σ_e a_e·e_{u_e}e_{v_e}ᵀ` (`p_u × p_v`), then `½(A ± Aᵀ)` for a
/// symmetric or reciprocal pair kernel, exactly. Use it inside a
/// [`kron_cg`] callback to score validation pairs with
/// [`predict_pairs`](super::predict_pairs).
///
/// # Errors
/// Wrong lengths, an edge out of range, a non-square `coef` for a
/// symmetric/reciprocal kernel.
pub fn edge_coefficients(
    pair: PairKernel,
    edges: &[(usize, usize)],
    a: &[f64],
    mut coef: MatMut<'_, f64>,
) -> Result<(), LearnError> {
    let (p_u, p_v) = (coef.nrows(), coef.ncols());
    if a.len() != edges.len()
        || edges.iter().any(|&(u, v)| u >= p_u || v >= p_v)
        || (pair != PairKernel::Kronecker && p_u != p_v)
    {
        return Err(LinalgError::DimensionMismatch.into());
    }
    coef.fill(0.0);
    for (&(u, v), &ae) in edges.iter().zip(a) {
        *coef.at_mut(u, v) += ae;
    }
    enforce_pair_symmetry(pair, coef);
    Ok(())
}

/// Trains on the system `sys` ([`KronSystem`]: the labelled edges, the
/// loss and λ) by conjugate gradient (see the module docs for the systems). Writes the
/// dual coefficients `a` (`q`, output only: CG starts from zero) and the
/// model's coefficient matrix `coef` (`p_u × p_v`, as from
/// [`edge_coefficients`]), and returns the iterations and the final
/// relative residual of the system CG solves (`‖r‖/‖y‖`, or
/// `‖r‖/‖L^{½}y‖` for ranking).
///
/// Stops when the relative residual reaches `params.rel_tol`, after
/// `params.max_iter` iterations, or when `callback(iteration, a, rel_residual)`
/// answers [`CgControl::Stop`] (`a` the current dual coefficients over
/// edges); none of these is an error. Each iteration costs two products of
/// a `p_u × p_v` matrix by `K_u` and `K_v` through the backend plus O(q).
/// Kernel matrices are read whole and should be symmetric.
///
/// # Errors
/// [`LearnError::BadLambda`] for `λ < 0` or non-finite; dimension (lengths,
/// an edge out of range, a non-square or empty kernel), non-finite
/// (kernels, labels), workspace errors; CG's `NotPositiveDefinite` if the
/// system meets a null direction (only possible with `λ = 0`).
pub fn kron_cg<B, C>(
    backend: &mut B,
    sys: &KronSystem<'_>,
    params: &CgParams,
    a: &mut [f64],
    coef: MatMut<'_, f64>,
    work: &mut [f64],
    callback: C,
) -> Result<CgInfo, LearnError>
where
    B: Backend,
    C: FnMut(usize, &[f64], f64) -> CgControl,
{
    let len = cg_workspace_len(sys.edges.len());
    kron_krylov(backend, sys, (a, coef, work), len, callback, |mv, b, x, w, hook| {
        cg_solve_with_callback(mv, b, x, w, params, hook)
    })
}

/// [`kron_cg`] with MINRES (module [`crate::linalg::minres`]) in place of
/// conjugate gradient: the same systems, the same cost per iteration (one
/// product with the edge kernel matrix), the same callback; `a` starts
/// from zero. After `k` iterations the iterate minimises the residual over
/// the Krylov space where CG's minimises the energy norm of the error, so
/// truncated (early-stopped) models differ; converged ones agree. This is
/// what RLScore's `CGKronRLS` runs (SciPy's MINRES with `rtol = 1e-20`):
/// with `params = CgParams::new(maxiter, 1e-20)` and the regression loss
/// it reproduces that learner iteration for iteration, up to rounding
/// (host crate, `tests/kron_rlscore.rs`). `work`:
/// [`kron_minres_workspace_len`].
///
/// # Errors
/// As [`kron_cg`], except that MINRES has no positive-definiteness
/// breakdown (it stops on its own tests, [`MinresInfo::stop`]).
pub fn kron_minres<B, C>(
    backend: &mut B,
    sys: &KronSystem<'_>,
    params: &CgParams,
    a: &mut [f64],
    coef: MatMut<'_, f64>,
    work: &mut [f64],
    callback: C,
) -> Result<MinresInfo, LearnError>
where
    B: Backend,
    C: FnMut(usize, &[f64], f64) -> CgControl,
{
    let len = minres_workspace_len(sys.edges.len());
    kron_krylov(backend, sys, (a, coef, work), len, callback, |mv, b, x, w, hook| {
        minres_solve(mv, b, x, w, params, hook)
    })
}

/// One training problem of the iterative Kronecker learners: the node
/// kernels, the loss, the `q` labelled edges `edges[e] = (u, v)` (indices
/// into `K_u`, `K_v`; any order, duplicates allowed) with labels `y`, and
/// the ridge `λ ≥ 0`. What [`kron_cg`] and [`kron_minres`] solve; the host
/// (CLI or Python) builds one per fit.
#[derive(Clone, Copy, Debug)]
pub struct KronSystem<'a> {
    /// Node kernels (and the pair kernel for one domain).
    pub domains: Domains<'a>,
    /// Regression or conditional ranking.
    pub loss: Loss,
    /// The labelled edges.
    pub edges: &'a [(usize, usize)],
    /// One label per edge.
    pub y: &'a [f64],
    /// Ridge `λ`.
    pub lambda: f64,
}

/// A matrix-vector product as the Krylov solvers take it.
type MatVec<'a> = dyn FnMut(&[f64], &mut [f64]) -> Result<(), LinalgError> + 'a;
/// A per-iteration callback as the Krylov solvers take it.
type Hook<'a> = dyn FnMut(usize, &[f64], f64) -> CgControl + 'a;

/// The body of [`kron_cg`] and [`kron_minres`]: checks, right-hand side,
/// the edge-kernel product, then `solve(matvec, b, a, solver_work, hook)`.
/// `out` is `(a, coef, work)` of [`kron_cg`].
fn kron_krylov<B, C, R, S>(
    backend: &mut B,
    sys: &KronSystem<'_>,
    (a, coef, work): (&mut [f64], MatMut<'_, f64>, &mut [f64]),
    solver_len: usize,
    mut callback: C,
    solve: S,
) -> Result<R, LearnError>
where
    B: Backend,
    C: FnMut(usize, &[f64], f64) -> CgControl,
    S: FnOnce(&mut MatVec<'_>, &[f64], &mut [f64], &mut [f64], &mut Hook<'_>) -> Result<R, LinalgError>,
{
    let KronSystem { domains, loss, edges, y, lambda } = *sys;
    check_lambda(lambda, false)?;
    let (p_u, p_v) = domains.check()?;
    let q = edges.len();
    if y.len() != q
        || a.len() != q
        || coef.nrows() != p_u
        || coef.ncols() != p_v
        || edges.iter().any(|&(u, v)| u >= p_u || v >= p_v)
    {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if y.iter().any(|v| !v.is_finite()) {
        return Err(LinalgError::NonFinite.into());
    }
    let (KronCgScratch { dense, tmp, b, lt, cb_a, gsum, gsum2, cnt, solver }, _) =
        KronCgScratch::split(work, p_u, p_v, q, solver_len)?;
    let pair = domains.pair();
    let (k_u, k_v) = domains.kernels();
    let half = match loss {
        Loss::Regression => None,
        Loss::Ranking(w) => Some(w),
    };
    cnt.iter_mut().for_each(|c| *c = 0.0);
    for &(u, _) in edges {
        cnt[u] += 1.0;
    }
    let cnt: &[f64] = cnt;
    b.copy_from_slice(y);
    if let Some(w) = half {
        apply_half(edges, cnt, gsum, w, b);
    }
    a.iter_mut().for_each(|v| *v = 0.0);

    let mut matvec = |v: &[f64], out: &mut [f64]| -> Result<(), LinalgError> {
        let src: &[f64] = match half {
            Some(w) => {
                lt.copy_from_slice(v);
                apply_half(edges, cnt, gsum, w, lt);
                lt
            }
            None => v,
        };
        dense.iter_mut().for_each(|d| *d = 0.0);
        for (&(u, vv), &s) in edges.iter().zip(src) {
            dense[u + vv * p_u] += s;
        }
        // M = K_u·A·K_v (004 §4.4: (K_v ⊗ K_u)vec(A) = vec(K_u·A·K_v)).
        backend.gemm(
            1.0,
            k_u,
            MatRef::from_col_major(dense, p_u, p_v)?,
            0.0,
            MatMut::from_col_major(tmp, p_u, p_v)?,
        )?;
        backend.gemm(
            1.0,
            MatRef::from_col_major(tmp, p_u, p_v)?,
            k_v,
            0.0,
            MatMut::from_col_major(dense, p_u, p_v)?,
        )?;
        for (&(u, vv), o) in edges.iter().zip(out.iter_mut()) {
            let m = dense[u + vv * p_u];
            *o = match pair {
                PairKernel::Kronecker => m,
                PairKernel::Symmetric => 0.5 * (m + dense[vv + u * p_u]),
                PairKernel::Reciprocal => 0.5 * (m - dense[vv + u * p_u]),
            };
        }
        if let Some(w) = half {
            apply_half(edges, cnt, gsum, w, out);
        }
        for (o, &vi) in out.iter_mut().zip(v) {
            *o += lambda * vi;
        }
        Ok(())
    };
    let mut hook = |it: usize, c: &[f64], rel: f64| match half {
        Some(w) => {
            cb_a.copy_from_slice(c);
            apply_half(edges, cnt, gsum2, w, cb_a);
            callback(it, cb_a, rel)
        }
        None => callback(it, c, rel),
    };
    let info = solve(&mut matvec, b, a, solver, &mut hook)?;
    if let Some(w) = half {
        apply_half(edges, cnt, gsum2, w, a);
    }
    edge_coefficients(pair, edges, a, coef)?;
    Ok(info)
}
