//! Kronecker conditional ranking: regularised least squares over the edges
//! of a relational graph with the Kronecker pair kernel and its symmetric
//! and reciprocal variants (paper 004, §2–4).
//!
//! ## Orientation (used everywhere in this module)
//!
//! Edges are pairs `(u, v)`: `u` a node of the first domain (training
//! kernel `K_u`, `p_u × p_u`), `v` of the second (`K_v`, `p_v × p_v`;
//! for one domain `K_u = K_v = K`). Labels and dual coefficients are
//! **`p_u × p_v` matrices**, `Y[i, j]` the label of `(u_i, v_j)`, and `vec`
//! stacks columns (004 eq. 10), so edge `(i, j)` is entry `i + j·p_u`. Then
//! the pair kernel matrix is `K_v ⊗ K_u` (004 eq. 7) and
//! `(K_v ⊗ K_u)·vec(A) = vec(K_u·A·K_v)` — the vec trick; no `p²`-order
//! matrix is ever formed. (004 orders edges with the second node fastest,
//! `K ⊗ K` and `L = I ⊗ C`; this order is the same with the Kronecker
//! factors swapped, `L = C ⊗ I`, i.e. the commutation permutation of
//! Def. 4.1 applied on both sides.) A model is its coefficient matrix `A` (`p_u × p_v`):
//!
//! ```text
//! f(u, v) = Σ_{i,j} A[i, j]·k_u(u, u_i)·k_v(v, v_j) = k_uᵀ·A·k_v,    F = K_u·A·K_v on the training nodes.
//! ```
//!
//! The **ranking loss is conditioned on the first node** (004 eq. 6 with
//! `E_v` the edges leaving `v`): each row of `F` ranks the second nodes
//! for one `u`. To condition on the second node, swap the domains and
//! transpose `Y` (views: [`MatRef::t`]).
//!
//! ## What is here
//!
//! - **Complete graphs, closed form** ([`KronEigen`], [`fit`]): every pair
//!   labelled. Two eigendecompositions once, then each `λ` in
//!   O(p_u²p_v + p_u·p_v²) (004 Prop. 4.4, eq. 22):
//!   - regression (004 eq. 5, 18; Cor. 4.5): `K_u = UΛUᵀ`, `K_v = VΣVᵀ`,
//!     `A = U[(UᵀYV) ⊘ (λ_iσ_j + λ)]Vᵀ`;
//!   - conditional ranking (004 eqs. 6, 30–33; Cor. 4.8): with
//!     `C = I − 11ᵀ/p_v`, `L = C ⊗ I` centres each row. The normal
//!     equations `K̄(LK̄a + λa − Ly) = 0` are solved by
//!     `K_u·A·K_v·C + λA = Y·C`. Its solution has centred rows (`A = AC`:
//!     multiply by `11ᵀ/p_v` on the right), so `K_v·C` may be replaced by the
//!     symmetric `G = C·K_v·C = VΣVᵀ`, giving
//!     `A = U[(Uᵀ(YC)V) ⊘ (λ_iσ_j + λ)]Vᵀ`. (004 writes the reduced system
//!     as `(K̄L + λI)a = Ly`, eq. 35, and diagonalises `KC`; the normal
//!     equations give `LK̄` — the two agree after multiplying the solution
//!     by `L` — and the symmetric `CKC` also covers a singular `K`, the case
//!     004 leaves out.) With [`QueryWeight::Pairs`] (`L = p_v·C ⊗ I`, eq. 6
//!     literally) `λ` becomes `λ/p_v`;
//!   - symmetric and reciprocal Kronecker kernels, one domain, regression
//!     (004 eqs. 8–9, Prop. 4.3, Lemma 4.6, Prop. 4.7): the ordinary solver
//!     on `S·y = vec((Y + Yᵀ)/2)` or `A·y = vec((Y − Yᵀ)/2)`; the
//!     coefficient matrix is then made exactly symmetric/antisymmetric.
//!     `UᵀS·yU` and `A` are (anti)symmetric, so two of the four products
//!     compute only a lower triangle.
//!   - both decompositions go through [`Backend::sym_eigen_pair`] (a
//!     multi-threaded backend runs them concurrently); one domain with the
//!     regression loss decomposes its one kernel once.
//!     Symmetric or reciprocal kernels with the ranking loss have no closed
//!     form (004 §4.4): [`LearnError::Unsupported`]; use [`kron_cg`].
//! - **Incomplete graphs, iterative** ([`kron_cg`], module [`iterative`]):
//!   conjugate gradient over the observed edges with the vec trick (004 §4.4);
//!   [`kron_minres`] runs MINRES on the same systems instead (what RLScore's
//!   `CGKronRLS` runs; early-stopped iterates differ from CG's).
//! - **Predictions** for new nodes from their kernel rows: a block
//!   ([`predict_block`]) or a list of pairs ([`predict_pairs`]); symmetric
//!   and reciprocal predictions are exactly (bitwise) symmetric /
//!   antisymmetric by construction.
//! - **The outer-product encoding** of a pair model over precomputed node
//!   kernels (a linear model on `k_u(u, ·) ⊗ k_v(v, ·)`, no stored basis):
//!   its weights ([`outer_weights`]) and the score of a pair
//!   ([`outer_pair_score`]: the pair kernel's (anti)symmetrisation).
//! - Metrics (004 eq. 4 per conditioning node, AUC per node) live in
//!   [`crate::metrics`] (`conditional_disagreement`, `conditional_auc`).
//!
//! Kernel matrices: square, finite; the eigendecompositions and `C·K_v·C`
//! read only their lower triangles. Labels must be finite. `λ > 0` for the
//! closed form.

use super::{check_lambda, LearnError};
use crate::backend::{Backend, Tri};
use crate::graph::QueryWeight;
use crate::linalg::blas::mirror_lower;
use crate::{scratch, LinalgError, MatMut, MatRef};

pub mod iterative;

pub use crate::kernel::PairKernel;
pub use iterative::{
    edge_coefficients, kron_cg, kron_cg_workspace_len, kron_minres, kron_minres_workspace_len, KronSystem,
};

/// The least-squares loss over edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    /// `Σ_e (y_e − f(e))²` (004 eq. 5).
    Regression,
    /// Conditional ranking (004 eq. 6): the squared errors of label
    /// differences between edges sharing their **first** node, written
    /// `(y − f)ᵀL(y − f)` with `L` block-diagonal over first nodes. With
    /// [`QueryWeight::Equal`] each block is `I − 11ᵀ/l` (004 eq. 31, every
    /// node counts the same); with [`QueryWeight::Pairs`] `l·I − 11ᵀ`
    /// (eq. 6 as written: every pair counts the same).
    Ranking(QueryWeight),
}

/// The node kernels of the training graph.
#[derive(Clone, Copy, Debug)]
pub enum Domains<'k> {
    /// Two node sets (bipartite graphs): `K_u` (`p_u × p_u`) of the first
    /// nodes, `K_v` (`p_v × p_v`) of the second. Kronecker pair kernel.
    Two {
        /// Kernel matrix of the first domain.
        k_u: MatRef<'k, f64>,
        /// Kernel matrix of the second domain.
        k_v: MatRef<'k, f64>,
    },
    /// One node set: `K_u = K_v = k` (`p × p`), with any pair kernel.
    One {
        /// Kernel matrix of the nodes.
        k: MatRef<'k, f64>,
        /// The pair kernel.
        pair: PairKernel,
    },
}

impl<'k> Domains<'k> {
    /// `(p_u, p_v)`.
    pub fn dims(&self) -> (usize, usize) {
        match *self {
            Domains::Two { k_u, k_v } => (k_u.nrows(), k_v.nrows()),
            Domains::One { k, .. } => (k.nrows(), k.nrows()),
        }
    }

    /// The pair kernel ([`PairKernel::Kronecker`] for two domains).
    pub fn pair(&self) -> PairKernel {
        match *self {
            Domains::Two { .. } => PairKernel::Kronecker,
            Domains::One { pair, .. } => pair,
        }
    }

    /// `(K_u, K_v)`.
    pub(crate) fn kernels(&self) -> (MatRef<'k, f64>, MatRef<'k, f64>) {
        match *self {
            Domains::Two { k_u, k_v } => (k_u, k_v),
            Domains::One { k, .. } => (k, k),
        }
    }

    /// Checks the kernels (square, non-empty, finite) and returns the dims.
    pub(crate) fn check(&self) -> Result<(usize, usize), LearnError> {
        let (k_u, k_v) = self.kernels();
        for k in [k_u, k_v] {
            if !k.is_square() || k.nrows() == 0 {
                return Err(LinalgError::DimensionMismatch.into());
            }
            if !k.all_finite() {
                return Err(LinalgError::NonFinite.into());
            }
        }
        Ok(self.dims())
    }
}

/// `λ` divided by what the ranking loss's weighting multiplies `C` with.
fn effective_lambda(loss: Loss, lambda: f64, p_v: usize) -> f64 {
    match loss {
        Loss::Ranking(QueryWeight::Pairs) => lambda / p_v as f64,
        _ => lambda,
    }
}

scratch! {
    /// The eigendecompositions a [`KronEigen`] holds.
    struct Store(p_u: usize, p_v: usize) {
        /// Eigenvalues of `K_u`.
        vals_u: p_u,
        /// Eigenvectors of `K_u` (column-major `p_u × p_u`).
        vecs_u: p_u.saturating_mul(p_u),
        /// Eigenvalues of `K_v` (regression) or `C·K_v·C` (ranking).
        vals_v: p_v,
        /// Their eigenvectors (column-major `p_v × p_v`).
        vecs_v: p_v.saturating_mul(p_v),
    }
}

scratch! {
    /// Scratch of [`KronEigen::new`].
    struct NewScratch(p_v: usize) {
        /// `C·K_v·C`.
        g: p_v.saturating_mul(p_v),
    }
}

/// The eigendecompositions of a complete-graph Kronecker problem, held in
/// caller memory: computed once by [`KronEigen::new`] (O(p_u³ + p_v³)),
/// then [`KronEigen::solve`] gives the coefficients for any `λ` and labels
/// in O(p_u²p_v + p_u·p_v²) (004 Prop. 4.4).
#[derive(Debug)]
pub struct KronEigen<'s> {
    p_u: usize,
    p_v: usize,
    loss: Loss,
    pair: PairKernel,
    vals_u: &'s [f64],
    vecs_u: &'s [f64],
    vals_v: &'s [f64],
    vecs_v: &'s [f64],
}

impl<'s> KronEigen<'s> {
    /// Elements of `store` for [`KronEigen::new`]: `p_u + p_u² + p_v + p_v²`.
    pub fn store_len(p_u: usize, p_v: usize) -> usize {
        Store::len(p_u, p_v)
    }

    /// Elements of `work` for [`KronEigen::new`]: `p_v²` (beyond the
    /// backend's own scratch for eigendecompositions of order `max(p_u, p_v)`).
    pub fn new_workspace_len(p_v: usize) -> usize {
        NewScratch::len(p_v)
    }

    /// Decomposes `K_u` and `K_v` (regression) or `C·K_v·C` (ranking), into
    /// `store` ([`KronEigen::store_len`]). For one domain and regression the
    /// decomposition of `K` is computed once and copied. Core's
    /// [`Portable`](crate::backend::Portable) backend needs
    /// `Portable::workspace_len(max(p_u, p_v))` of its own.
    ///
    /// # Errors
    /// [`LearnError::Unsupported`] for a symmetric or reciprocal pair kernel
    /// with the ranking loss (no closed form, 004 §4.4); dimension
    /// (non-square or empty kernels), non-finite, workspace and eigensolver
    /// errors as [`LearnError::Numerics`].
    pub fn new<B: Backend>(
        backend: &mut B,
        domains: &Domains<'_>,
        loss: Loss,
        store: &'s mut [f64],
        work: &mut [f64],
    ) -> Result<Self, LearnError> {
        let pair = domains.pair();
        if pair != PairKernel::Kronecker && matches!(loss, Loss::Ranking(_)) {
            return Err(LearnError::Unsupported);
        }
        let (p_u, p_v) = domains.check()?;
        let (k_u, k_v) = domains.kernels();
        let (Store { vals_u, vecs_u, vals_v, vecs_v }, _) = Store::split(store, p_u, p_v)?;
        // The two decompositions are independent: `sym_eigen_pair` lets a
        // multi-threaded backend run them concurrently.
        match (loss, domains) {
            (Loss::Regression, Domains::One { .. }) => {
                // One node kernel for both sides: one decomposition.
                backend.sym_eigen(k_u, vals_u, MatMut::from_col_major(vecs_u, p_u, p_u)?)?;
                vals_v.copy_from_slice(vals_u);
                vecs_v.copy_from_slice(vecs_u);
            }
            (Loss::Regression, Domains::Two { .. }) => {
                backend.sym_eigen_pair(
                    k_u,
                    vals_u,
                    MatMut::from_col_major(vecs_u, p_u, p_u)?,
                    k_v,
                    vals_v,
                    MatMut::from_col_major(vecs_v, p_v, p_v)?,
                )?;
            }
            (Loss::Ranking(_), _) => {
                let (NewScratch { g }, _) = NewScratch::split(work, p_v)?;
                double_centre_lower(k_v, g);
                backend.sym_eigen_pair(
                    k_u,
                    vals_u,
                    MatMut::from_col_major(vecs_u, p_u, p_u)?,
                    MatRef::from_col_major(g, p_v, p_v)?,
                    vals_v,
                    MatMut::from_col_major(vecs_v, p_v, p_v)?,
                )?;
            }
        }
        Ok(KronEigen { p_u, p_v, loss, pair, vals_u, vecs_u, vals_v, vecs_v })
    }

    /// `(p_u, p_v)`: the shape of labels and coefficients.
    pub fn dims(&self) -> (usize, usize) {
        (self.p_u, self.p_v)
    }

    /// Elements of `work` for [`KronEigen::solve`]: `p_u·p_v`.
    pub fn solve_workspace_len(&self) -> usize {
        self.p_u.saturating_mul(self.p_v)
    }

    /// The coefficient matrix `A` (`p_u × p_v`, into `coef`) for labels `Y`
    /// (`p_u × p_v`, every pair labelled) and ridge `λ`; see the module docs
    /// for the formula of each loss and pair kernel. Four products of
    /// `p_u × p_v` by `p_u × p_u` or `p_v × p_v` through the backend; for
    /// the symmetric and reciprocal kernels two of them only need their
    /// lower triangles (three products' worth of work).
    ///
    /// For symmetric (reciprocal) kernels `A` is exactly symmetric
    /// (antisymmetric); for the ranking loss its rows sum to zero up to
    /// rounding. Predictions: [`predict_block`], [`predict_pairs`].
    ///
    /// # Errors
    /// [`LearnError::BadLambda`] unless `λ > 0` and finite; dimension,
    /// non-finite (labels), workspace errors; `NotPositiveDefinite` if
    /// `λ_iσ_j + λ ≤ 0` for some pair of eigenvalues (an indefinite kernel).
    pub fn solve<B: Backend>(
        &self,
        backend: &mut B,
        lambda: f64,
        y: MatRef<'_, f64>,
        mut coef: MatMut<'_, f64>,
        work: &mut [f64],
    ) -> Result<(), LearnError> {
        check_lambda(lambda, true)?;
        let (p_u, p_v) = (self.p_u, self.p_v);
        if y.nrows() != p_u || y.ncols() != p_v || coef.nrows() != p_u || coef.ncols() != p_v {
            return Err(LinalgError::DimensionMismatch.into());
        }
        if !y.all_finite() {
            return Err(LinalgError::NonFinite.into());
        }
        let len = self.solve_workspace_len();
        if work.len() < len {
            return Err(LinalgError::WorkspaceTooSmall { needed: len, got: work.len() }.into());
        }
        let mut t = MatMut::from_col_major(&mut work[..len], p_u, p_v)?;
        let ranking = matches!(self.loss, Loss::Ranking(_));
        let lam = effective_lambda(self.loss, lambda, p_v);
        // Labels: S·y or A·y (004 Prop. 4.7), then L·y for ranking (eq. 31).
        for j in 0..p_v {
            for i in 0..p_u {
                *coef.at_mut(i, j) = match self.pair {
                    PairKernel::Kronecker => y.at(i, j),
                    PairKernel::Symmetric => 0.5 * (y.at(i, j) + y.at(j, i)),
                    PairKernel::Reciprocal => 0.5 * (y.at(i, j) - y.at(j, i)),
                };
            }
        }
        if ranking {
            centre_rows(coef.rb_mut());
        }
        let u = MatRef::from_col_major(self.vecs_u, p_u, p_u)?;
        let v = MatRef::from_col_major(self.vecs_v, p_v, p_v)?;
        if self.pair != PairKernel::Kronecker {
            return self.solve_sym(backend, lam, u, coef, t);
        }
        // 004 eq. 22: A = U[(UᵀYV) ⊘ (λ_iσ_j + λ)]Vᵀ.
        backend.gemm(1.0, u.t(), coef.rb(), 0.0, t.rb_mut())?;
        backend.gemm(1.0, t.rb(), v, 0.0, coef.rb_mut())?;
        for j in 0..p_v {
            for i in 0..p_u {
                let den = self.vals_u[i] * self.vals_v[j] + lam;
                if !(den > 0.0) {
                    return Err(LinalgError::NotPositiveDefinite { index: i + j * p_u }.into());
                }
                *coef.at_mut(i, j) /= den;
            }
        }
        backend.gemm(1.0, u, coef.rb(), 0.0, t.rb_mut())?;
        backend.gemm(1.0, t.rb(), v.t(), 0.0, coef.rb_mut())?;
        if ranking {
            // A = A·C in exact arithmetic; remove the rounding drift.
            centre_rows(coef.rb_mut());
        }
        enforce_pair_symmetry(self.pair, coef);
        Ok(())
    }
}

impl KronEigen<'_> {
    /// [`KronEigen::solve`] for the symmetric and reciprocal kernels (one
    /// domain, regression: `V = U`, `σ = λ`), `coef` holding the
    /// (anti)symmetrised labels `Y_s`. `UᵀY_sU` and `A` are then
    /// (anti)symmetric, so the second and the fourth product need only
    /// their lower triangles ([`gemm_lower`]): three `p³` products' worth
    /// of work instead of four, and `A` exactly (anti)symmetric.
    fn solve_sym<B: Backend>(
        &self,
        backend: &mut B,
        lam: f64,
        u: MatRef<'_, f64>,
        mut coef: MatMut<'_, f64>,
        mut t: MatMut<'_, f64>,
    ) -> Result<(), LearnError> {
        let p = self.p_u;
        let sign = if self.pair == PairKernel::Symmetric { 1.0 } else { -1.0 };
        backend.gemm(1.0, u.t(), coef.rb(), 0.0, t.rb_mut())?;
        backend.gemm_lower(1.0, t.rb(), Tri::Full, u, Tri::Full, 0.0, coef.rb_mut())?;
        for j in 0..p {
            for i in j..p {
                let den = self.vals_u[i] * self.vals_u[j] + lam;
                if !(den > 0.0) {
                    return Err(LinalgError::NotPositiveDefinite { index: i + j * p }.into());
                }
                *coef.at_mut(i, j) /= den;
            }
        }
        mirror_lower(coef.rb_mut(), sign);
        backend.gemm(1.0, u, coef.rb(), 0.0, t.rb_mut())?;
        backend.gemm_lower(1.0, t.rb(), Tri::Full, u.t(), Tri::Full, 0.0, coef.rb_mut())?;
        mirror_lower(coef, sign);
        Ok(())
    }
}

/// Scratch for [`fit`]: the store of a [`KronEigen`] plus the larger of its
/// construction's and its solve's scratch.
pub fn fit_workspace_len(p_u: usize, p_v: usize) -> usize {
    KronEigen::store_len(p_u, p_v).saturating_add(KronEigen::new_workspace_len(p_v).max(p_u.saturating_mul(p_v)))
}

/// Closed-form fit on a complete graph in one call: [`KronEigen::new`] then
/// [`KronEigen::solve`]; `coef` is `p_u × p_v`. For a grid of `λ`, build the
/// [`KronEigen`] once instead.
///
/// # Errors
/// As [`KronEigen::new`] and [`KronEigen::solve`].
pub fn fit<B: Backend>(
    backend: &mut B,
    domains: &Domains<'_>,
    loss: Loss,
    y: MatRef<'_, f64>,
    lambda: f64,
    coef: MatMut<'_, f64>,
    work: &mut [f64],
) -> Result<(), LearnError> {
    check_lambda(lambda, true)?;
    let (p_u, p_v) = domains.dims();
    // Shapes before the O(p³) decompositions.
    if y.nrows() != p_u || y.ncols() != p_v || coef.nrows() != p_u || coef.ncols() != p_v {
        return Err(LinalgError::DimensionMismatch.into());
    }
    let need = fit_workspace_len(p_u, p_v);
    if work.len() < need {
        return Err(LinalgError::WorkspaceTooSmall { needed: need, got: work.len() }.into());
    }
    let (store, rest) = work.split_at_mut(KronEigen::store_len(p_u, p_v));
    let eig = KronEigen::new(backend, domains, loss, store, rest)?;
    eig.solve(backend, lambda, y, coef, rest)
}

/// `g ← C·K·C` (`C = I − 11ᵀ/p`) from the lower triangle of `k`,
/// column-major `p × p`: column means removed, then row means.
fn double_centre_lower(k: MatRef<'_, f64>, g: &mut [f64]) {
    let p = k.nrows();
    for j in 0..p {
        for i in 0..p {
            g[i + j * p] = if i >= j { k.at(i, j) } else { k.at(j, i) };
        }
    }
    let pf = p as f64;
    for col in g.chunks_exact_mut(p) {
        let mean = col.iter().sum::<f64>() / pf;
        col.iter_mut().for_each(|v| *v -= mean);
    }
    for i in 0..p {
        let mean = (0..p).map(|j| g[i + j * p]).sum::<f64>() / pf;
        (0..p).for_each(|j| g[i + j * p] -= mean);
    }
}

/// Subtracts each row's mean from the row (`X ← X·C`).
fn centre_rows(mut x: MatMut<'_, f64>) {
    let (m, n) = (x.nrows(), x.ncols());
    for i in 0..m {
        let mean = (0..n).map(|j| x.at(i, j)).sum::<f64>() / n as f64;
        for j in 0..n {
            *x.at_mut(i, j) -= mean;
        }
    }
}

/// Makes a square coefficient matrix exactly symmetric (`½(A + Aᵀ)`) or
/// antisymmetric (`½(A − Aᵀ)`, zero diagonal); nothing for Kronecker.
pub(crate) fn enforce_pair_symmetry(pair: PairKernel, mut a: MatMut<'_, f64>) {
    let n = a.nrows();
    match pair {
        PairKernel::Kronecker => {}
        PairKernel::Symmetric => {
            for j in 0..n {
                for i in j + 1..n {
                    let s = 0.5 * (a.at(i, j) + a.at(j, i));
                    *a.at_mut(i, j) = s;
                    *a.at_mut(j, i) = s;
                }
            }
        }
        PairKernel::Reciprocal => {
            for j in 0..n {
                *a.at_mut(j, j) = 0.0;
                for i in j + 1..n {
                    let d = 0.5 * (a.at(i, j) - a.at(j, i));
                    *a.at_mut(i, j) = d;
                    *a.at_mut(j, i) = -d;
                }
            }
        }
    }
}

/// Checks a coefficient matrix against the pair kernel and the test rows.
fn check_predict(
    pair: PairKernel,
    coef: MatRef<'_, f64>,
    k_a: MatRef<'_, f64>,
    k_b: MatRef<'_, f64>,
) -> Result<(), LearnError> {
    let (p_u, p_v) = (coef.nrows(), coef.ncols());
    if k_a.ncols() != p_u || k_b.ncols() != p_v || (pair != PairKernel::Kronecker && p_u != p_v) {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if !coef.all_finite() || !k_a.all_finite() || !k_b.all_finite() {
        return Err(LinalgError::NonFinite.into());
    }
    Ok(())
}

/// Whether two views hold the same values (same shape).
fn same_values(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> bool {
    a.nrows() == b.nrows()
        && a.ncols() == b.ncols()
        && (0..a.ncols()).all(|j| (0..a.nrows()).all(|i| a.at(i, j) == b.at(i, j)))
}

/// Scratch for [`predict_block`]: `p_u·m_b` for the Kronecker kernel;
/// `p_u·(m_a + m_b) + m_a·m_b` for symmetric and reciprocal kernels (the
/// swapped block).
pub fn predict_block_workspace_len(pair: PairKernel, p_u: usize, m_a: usize, m_b: usize) -> usize {
    let t = p_u.saturating_mul(m_b);
    match pair {
        PairKernel::Kronecker => t,
        _ => t.saturating_add(p_u.saturating_mul(m_a)).saturating_add(m_a.saturating_mul(m_b)),
    }
}

/// Predictions for every pair of two sets of nodes:
/// `out ← K_a·A·K_bᵀ` (`m_a × m_b`), where `k_a` (`m_a × p_u`) holds the
/// kernel rows `k_u(a, u_i)` of the first nodes against the training first
/// nodes and `k_b` (`m_b × p_v`) those of the second nodes. On the training
/// nodes (`k_a = K_u`, `k_b = K_v`) this is the fit `F = K_u·A·K_v`.
///
/// Symmetric (reciprocal) kernels: `out[i, j] = ½(g(a_i, b_j) ± g(b_j, a_i))`
/// with `g(x, x') = k_xᵀ·A·k_x'`, so `f(x, x') = ±f(x', x)` holds exactly.
/// When `k_a` and `k_b` hold the same values (one set against itself) the
/// block is computed once and `out` is exactly (anti)symmetric; for two
/// different sets, swapping them gives the exact transpose (negated) as
/// long as the backend's gemm is deterministic (core's `Portable` is).
///
/// # Errors
/// Dimension (a symmetric/reciprocal kernel needs a square `A`), non-finite
/// and workspace errors.
pub fn predict_block<B: Backend>(
    backend: &mut B,
    pair: PairKernel,
    coef: MatRef<'_, f64>,
    k_a: MatRef<'_, f64>,
    k_b: MatRef<'_, f64>,
    mut out: MatMut<'_, f64>,
    work: &mut [f64],
) -> Result<(), LearnError> {
    check_predict(pair, coef, k_a, k_b)?;
    let (p_u, m_a, m_b) = (coef.nrows(), k_a.nrows(), k_b.nrows());
    if out.nrows() != m_a || out.ncols() != m_b {
        return Err(LinalgError::DimensionMismatch.into());
    }
    let need = predict_block_workspace_len(pair, p_u, m_a, m_b);
    if work.len() < need {
        return Err(LinalgError::WorkspaceTooSmall { needed: need, got: work.len() }.into());
    }
    let (t, rest) = work.split_at_mut(p_u * m_b);
    // T = A·K_bᵀ, F = K_a·T.
    backend.gemm(1.0, coef, k_b.t(), 0.0, MatMut::from_col_major(t, p_u, m_b)?)?;
    backend.gemm(1.0, k_a, MatRef::from_col_major(t, p_u, m_b)?, 0.0, out.rb_mut())?;
    if pair == PairKernel::Kronecker {
        return Ok(());
    }
    let sign = if pair == PairKernel::Symmetric { 1.0 } else { -1.0 };
    if same_values(k_a, k_b) {
        for j in 0..m_a {
            for i in j..m_a {
                let (x, y) = (out.at(i, j), out.at(j, i));
                *out.at_mut(i, j) = 0.5 * (x + sign * y);
                *out.at_mut(j, i) = 0.5 * (y + sign * x);
            }
        }
        return Ok(());
    }
    // The swapped block F2 = K_b·A·K_aᵀ (m_b × m_a), combined entrywise.
    let (t2, rest) = rest.split_at_mut(p_u * m_a);
    let f2 = &mut rest[..m_a * m_b];
    backend.gemm(1.0, coef, k_a.t(), 0.0, MatMut::from_col_major(t2, p_u, m_a)?)?;
    backend.gemm(1.0, k_b, MatRef::from_col_major(t2, p_u, m_a)?, 0.0, MatMut::from_col_major(f2, m_b, m_a)?)?;
    for j in 0..m_b {
        for i in 0..m_a {
            *out.at_mut(i, j) = 0.5 * (out.at(i, j) + sign * f2[j + i * m_b]);
        }
    }
    Ok(())
}

/// Scratch for [`predict_pairs`]: `m_a·p_v`, plus `m_b·p_v` for symmetric
/// and reciprocal kernels.
pub fn predict_pairs_workspace_len(pair: PairKernel, p_v: usize, m_a: usize, m_b: usize) -> usize {
    let t = m_a.saturating_mul(p_v);
    match pair {
        PairKernel::Kronecker => t,
        _ => t.saturating_add(m_b.saturating_mul(p_v)),
    }
}

/// Predictions for a list of pairs: `out[e] = f(a_{pairs[e].0}, b_{pairs[e].1})`
/// with `k_a`, `k_b` as in [`predict_block`]. One product `K_a·A`
/// (O(m_a·p_u·p_v)), then O(p_v) per pair.
///
/// Symmetric (reciprocal) kernels: `½(g(x, x') ± g(x', x))` as in
/// [`predict_block`], computed with a fixed summation order, so the score of
/// `(x', x)` is exactly the score of `(x, x')` (negated) whenever it is
/// computed from the same kernel rows: always within one call, and across
/// calls with the sets swapped for a deterministic backend.
///
/// # Errors
/// A pair index out of range, wrong lengths, dimension, non-finite and
/// workspace errors.
// Eight inputs: the pair kernel, the coefficients, the two node kernels, the pairs, output and workspace.
#[allow(clippy::too_many_arguments)]
pub fn predict_pairs<B: Backend>(
    backend: &mut B,
    pair: PairKernel,
    coef: MatRef<'_, f64>,
    k_a: MatRef<'_, f64>,
    k_b: MatRef<'_, f64>,
    pairs: &[(usize, usize)],
    out: &mut [f64],
    work: &mut [f64],
) -> Result<(), LearnError> {
    check_predict(pair, coef, k_a, k_b)?;
    let (p_v, m_a, m_b) = (coef.ncols(), k_a.nrows(), k_b.nrows());
    if out.len() != pairs.len() || pairs.iter().any(|&(i, j)| i >= m_a || j >= m_b) {
        return Err(LinalgError::DimensionMismatch.into());
    }
    let need = predict_pairs_workspace_len(pair, p_v, m_a, m_b);
    if work.len() < need {
        return Err(LinalgError::WorkspaceTooSmall { needed: need, got: work.len() }.into());
    }
    let (ta, rest) = work.split_at_mut(m_a * p_v);
    backend.gemm(1.0, k_a, coef, 0.0, MatMut::from_col_major(ta, m_a, p_v)?)?;
    let ta = MatRef::from_col_major(ta, m_a, p_v)?;
    let dot = |t: MatRef<'_, f64>, i: usize, k: MatRef<'_, f64>, j: usize| {
        let mut s = 0.0;
        for c in 0..p_v {
            s += t.at(i, c) * k.at(j, c);
        }
        s
    };
    if pair == PairKernel::Kronecker {
        for (o, &(i, j)) in out.iter_mut().zip(pairs) {
            *o = dot(ta, i, k_b, j);
        }
        return Ok(());
    }
    let tb = if same_values(k_a, k_b) {
        ta
    } else {
        let tb = &mut rest[..m_b * p_v];
        backend.gemm(1.0, k_b, coef, 0.0, MatMut::from_col_major(tb, m_b, p_v)?)?;
        MatRef::from_col_major(tb, m_b, p_v)?
    };
    let sign = if pair == PairKernel::Symmetric { 1.0 } else { -1.0 };
    for (o, &(i, j)) in out.iter_mut().zip(pairs) {
        *o = 0.5 * (dot(ta, i, k_b, j) + sign * dot(tb, j, k_a, i));
    }
    Ok(())
}

/// The weights of the outer-product encoding: `w[i·p_v + j] = A[i, j]`
/// (row-major `p_u × p_v`, the order of `φ_u ⊗ φ_v`) from the coefficients
/// `coef` of a fit.
///
/// # Errors
/// `w.len() != p_u·p_v`.
pub fn outer_weights(coef: MatRef<'_, f64>, w: &mut [f64]) -> Result<(), LearnError> {
    let (pu, pv) = (coef.nrows(), coef.ncols());
    if w.len() != pu * pv {
        return Err(LinalgError::DimensionMismatch.into());
    }
    for i in 0..pu {
        for j in 0..pv {
            w[i * pv + j] = coef.at(i, j);
        }
    }
    Ok(())
}

/// The score of one pair in the outer-product encoding from its node
/// vectors: `g(φ_u ⊗ φ_v)` by the linear scorer `g` of the model
/// ([`outer_weights`]); a symmetric (reciprocal) pair kernel averages with
/// the swapped pair, `½(g(φ_u ⊗ φ_v) ± g(φ_v ⊗ φ_u))`, so `f(u, v) = ±f(v, u)`
/// holds exactly. `buf` holds `φ_u.len()·φ_v.len()`.
///
/// # Errors
/// `buf` of another length (as `E`); `g`'s errors.
pub fn outer_pair_score<E: From<LearnError>>(
    pair: PairKernel,
    phi_u: &[f64],
    phi_v: &[f64],
    buf: &mut [f64],
    mut g: impl FnMut(&[f64]) -> Result<f64, E>,
) -> Result<f64, E> {
    if buf.len() != phi_u.len() * phi_v.len() {
        return Err(LearnError::from(LinalgError::DimensionMismatch).into());
    }
    let mut outer = |a: &[f64], b: &[f64], buf: &mut [f64]| -> Result<f64, E> {
        for (row, &x) in buf.chunks_exact_mut(b.len().max(1)).zip(a) {
            for (o, &y) in row.iter_mut().zip(b) {
                *o = x * y;
            }
        }
        g(buf)
    };
    let s = outer(phi_u, phi_v, buf)?;
    Ok(match pair {
        PairKernel::Kronecker => s,
        PairKernel::Symmetric => 0.5 * (s + outer(phi_v, phi_u, buf)?),
        PairKernel::Reciprocal => 0.5 * (s - outer(phi_v, phi_u, buf)?),
    })
}
