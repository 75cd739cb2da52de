//! The XPGP prior covariance (001 eq. 5, §7):
//!
//! ```text
//! K = a·K_attr + Σ_r b_r·K_r,   K_attr(x, x') = exp(−γ‖x − x'‖²)      (001 eq. 1)
//!                               K_r = (Δ_r + I/ι_r²)⁻¹                (001 eq. 2)
//! ```
//!
//! `Δ_r = D_r − W_r` is the combinatorial Laplacian of relation `r`'s
//! weighted undirected graph. Parametrisation against the paper: eq. 1's
//! `κ²·exp(−ρ²/2·‖·‖²)` is `a = κ²`, `γ = ρ²/2`; eq. 2's `β` is a scale of
//! `K_r` and is absorbed into `b_r` (`b_r = ω_r²/(2σ²β_r)` against eq. 5),
//! so each relation has two parameters, `b_r` and `ι_r`. The mixing
//! weights `ω` of eq. 5 and the noise `σ` are likewise only scales of the
//! prior; with the probit likelihood one of `{σ, a, b_r}` is redundant and
//! is best held fixed (the hyperparameter search fixes `σ` by default).
//!
//! **Relation kernels.** `P = Δ + I/ι²` is symmetric positive definite
//! (`Δ ⪰ 0`, `ι` finite and `> 0`), assembled dense from the edge list,
//! factored by Cholesky, and `K_r = P⁻¹` is obtained by solving `P·X = I`
//! with that factor. Why the dense inverse after all: EP needs the prior
//! covariance itself (its Cholesky factor, `LᵀWL`), and `P⁻¹` is dense for
//! any connected graph, so no solve against a thinner right-hand side can
//! replace it; the solve against `I` costs `2n³` flops on top of the
//! `n³/3` of the factorisation, as the explicit inverse would. A
//! disconnected graph is fine: `P` stays definite through `I/ι²`, and
//! `K_r` is block-diagonal (a constant `ι²`-variance offset per
//! component).
//!
//! **Bipartite relations** (`item × group`, 001 §7) are projected to
//! co-membership here in core ([`Relation::Groups`]): `W_ij` = the number
//! of groups items `i ≠ j` share, each group a clique of weight 1. The
//! projection costs O(p²) in the number `p` of memberships (all pairs of
//! memberships are compared; no sorting buffer is needed).
//!
//! **Parameters** are a log-space vector `θ` of [`theta_len`]`(R)`
//! entries: `θ[0] = log a`, `θ[1] = log γ`, `θ[2] = log s` (the
//! likelihood's `σ` or `noise`), then `θ[3 + 2r] = log b_r`,
//! `θ[4 + 2r] = log ι_r` for each relation `r`. Without attributes
//! ([`XpgpPrior::x`] `= None`) the attribute term is absent and `θ[0..2]`
//! are ignored (their gradient is 0).

use super::LearnError;
use crate::backend::Backend;
use crate::kernel::{kernel_matrix, kernel_matrix_workspace_len, Kernel};
use crate::linalg::Rows;
use crate::{LinalgError, MatMut, MatRef};

/// One relation type among the items.
#[derive(Clone, Copy, Debug)]
pub enum Relation<'a> {
    /// Weighted undirected edges `(u, v, w)`, `u ≠ v`, `w` finite and `≥ 0`;
    /// repeated edges add up.
    Edges(&'a [(usize, usize, f64)]),
    /// Bipartite memberships `(item, group)` (any group ids), projected to
    /// co-membership: `W_ij` = number of shared groups.
    Groups(&'a [(usize, usize)]),
}

/// The inputs of the XPGP prior over `n` items.
#[derive(Clone, Copy, Debug)]
pub struct XpgpPrior<'a> {
    /// Number of items.
    pub n: usize,
    /// Item attributes (`n` rows), or `None` for a relations-only prior.
    pub x: Option<Rows<'a>>,
    /// Relation types (possibly none: then XPGP is the plain PGP).
    pub relations: &'a [Relation<'a>],
}

/// Length of `θ` for `r` relations: `3 + 2r`.
pub const fn theta_len(relations: usize) -> usize {
    3 + 2 * relations
}

/// Index of `log s` (the likelihood's noise) in `θ`.
pub const THETA_NOISE: usize = 2;

impl XpgpPrior<'_> {
    /// Elements of the `parts` buffer: the unscaled `K_attr` and every
    /// `K_r`, `n²` each.
    pub fn parts_len(&self) -> usize {
        (1 + self.relations.len()).saturating_mul(self.n.saturating_mul(self.n))
    }

    /// Scratch of [`XpgpPrior::build_parts`] and [`XpgpPrior::gradient`].
    pub fn workspace_len(&self) -> usize {
        let km = self.x.as_ref().map(|x| kernel_matrix_workspace_len(x, x)).unwrap_or(0);
        km.max(self.n.saturating_mul(self.n))
    }

    /// Checks shapes, indices and weights.
    ///
    /// # Errors
    /// `BadGraph` for an edge or membership naming an item `≥ n`, a
    /// self-edge, a negative or non-finite weight; `DimensionMismatch`
    /// if the attribute rows are not `n`.
    pub fn check(&self) -> Result<(), LearnError> {
        if let Some(x) = &self.x {
            if x.nrows() != self.n {
                return Err(LinalgError::DimensionMismatch.into());
            }
        }
        for rel in self.relations {
            match *rel {
                Relation::Edges(e) => {
                    for &(u, v, w) in e {
                        if u >= self.n || v >= self.n || u == v || !(w.is_finite() && w >= 0.0) {
                            return Err(LearnError::BadGraph);
                        }
                    }
                }
                Relation::Groups(g) => {
                    if g.iter().any(|&(i, _)| i >= self.n) {
                        return Err(LearnError::BadGraph);
                    }
                }
            }
        }
        Ok(())
    }

    /// Builds the unscaled parts for `θ`: `parts[0..n²] = K_attr` (RBF with
    /// `γ = exp θ[1]`; zeros without attributes), then `K_r` for each
    /// relation with `ι_r = exp θ[4 + 2r]`. Column-major `n × n` each.
    ///
    /// # Errors
    /// Shapes, workspace, a non-finite `θ`, a bad relation (see
    /// [`XpgpPrior::check`]).
    pub fn build_parts<B: Backend>(
        &self,
        backend: &mut B,
        theta: &[f64],
        parts: &mut [f64],
        work: &mut [f64],
    ) -> Result<(), LearnError> {
        self.check()?;
        let n = self.n;
        let nn = n * n;
        if theta.len() != theta_len(self.relations.len()) || parts.len() != self.parts_len() {
            return Err(LinalgError::DimensionMismatch.into());
        }
        if theta.iter().any(|v| !v.is_finite()) {
            return Err(LinalgError::NonFinite.into());
        }
        let (attr, rest) = parts.split_at_mut(nn);
        match &self.x {
            Some(x) => {
                let kern = Kernel::Rbf { gamma: libm::exp(theta[1]) };
                kernel_matrix(backend, &kern, x, x, MatMut::from_col_major(attr, n, n)?, work)?;
            }
            None => attr.iter_mut().for_each(|v| *v = 0.0),
        }
        for (r, rel) in self.relations.iter().enumerate() {
            let out = &mut rest[r * nn..(r + 1) * nn];
            relation_kernel(backend, n, rel, libm::exp(theta[4 + 2 * r]), out, work)?;
        }
        Ok(())
    }

    /// `K = a·K_attr + Σ_r b_r·K_r` from parts built by
    /// [`XpgpPrior::build_parts`] for the same `θ` (`k`: `n × n`,
    /// column-major).
    ///
    /// # Errors
    /// Shapes; a non-finite result.
    pub fn combine(&self, theta: &[f64], parts: &[f64], k: &mut [f64]) -> Result<(), LearnError> {
        let nn = self.n * self.n;
        if theta.len() != theta_len(self.relations.len()) || parts.len() != self.parts_len() || k.len() != nn {
            return Err(LinalgError::DimensionMismatch.into());
        }
        let a = if self.x.is_some() { libm::exp(theta[0]) } else { 0.0 };
        for (kv, pv) in k.iter_mut().zip(parts[..nn].iter()) {
            *kv = a * pv;
        }
        for r in 0..self.relations.len() {
            let b = libm::exp(theta[3 + 2 * r]);
            let part = &parts[(r + 1) * nn..(r + 2) * nn];
            for (kv, pv) in k.iter_mut().zip(part.iter()) {
                *kv += b * pv;
            }
        }
        if k.iter().any(|v| !v.is_finite()) {
            return Err(LinalgError::NonFinite.into());
        }
        Ok(())
    }

    /// The gradient of the log evidence with respect to `θ` from the
    /// posterior's `Q` ([`super::PrefPosterior::evidence_grad_matrix`]) and
    /// the likelihood derivative ([`super::PrefPosterior::likelihood_grad`],
    /// placed in `grad[2]`):
    ///
    /// ```text
    /// ∂/∂log a   = ½⟨Q, a·K_attr⟩
    /// ∂/∂log γ   = ½⟨Q, a·K_attr ∘ log K_attr⟩     (∂e^{−γd²}/∂log γ = −γd²·e^{−γd²})
    /// ∂/∂log b_r = ½⟨Q, b_r·K_r⟩
    /// ∂/∂log ι_r = b_r·ε_r·⟨Q, K_r²⟩,  ε_r = ι_r⁻²   (∂K_r/∂log ι = 2ε·K_r²)
    /// ```
    ///
    /// The last costs one `n × n` product per relation (`Q·K_r` in `work`).
    ///
    /// # Errors
    /// Shapes, workspace.
    // Eight inputs: θ, its kernel parts, Q and the likelihood's term in; the gradient and the workspace.
    #[allow(clippy::too_many_arguments)]
    pub fn gradient<B: Backend>(
        &self,
        backend: &mut B,
        theta: &[f64],
        parts: &[f64],
        q: &[f64],
        lik_grad: f64,
        grad: &mut [f64],
        work: &mut [f64],
    ) -> Result<(), LearnError> {
        let n = self.n;
        let nn = n * n;
        if theta.len() != theta_len(self.relations.len())
            || grad.len() != theta.len()
            || parts.len() != self.parts_len()
            || q.len() != nn
        {
            return Err(LinalgError::DimensionMismatch.into());
        }
        if work.len() < nn {
            return Err(LinalgError::WorkspaceTooSmall { needed: nn, got: work.len() }.into());
        }
        grad.iter_mut().for_each(|g| *g = 0.0);
        if self.x.is_some() {
            let a = libm::exp(theta[0]);
            let (mut g0, mut g1) = (0.0, 0.0);
            for (qv, kv) in q.iter().zip(parts[..nn].iter()) {
                g0 += qv * kv;
                if *kv > 0.0 {
                    g1 += qv * kv * libm::log(*kv);
                }
            }
            grad[0] = 0.5 * a * g0;
            grad[1] = 0.5 * a * g1;
        }
        grad[THETA_NOISE] = lik_grad;
        for r in 0..self.relations.len() {
            let b = libm::exp(theta[3 + 2 * r]);
            let eps = libm::exp(-2.0 * theta[4 + 2 * r]);
            let kr = &parts[(r + 1) * nn..(r + 2) * nn];
            grad[3 + 2 * r] = 0.5 * b * q.iter().zip(kr.iter()).map(|(a, c)| a * c).sum::<f64>();
            let qk = &mut work[..nn];
            backend.gemm(
                1.0,
                MatRef::from_col_major(q, n, n)?,
                MatRef::from_col_major(kr, n, n)?,
                0.0,
                MatMut::from_col_major(qk, n, n)?,
            )?;
            // ⟨Q, K_r²⟩ = tr(Q·K_r·K_r) = Σ_ij (QK_r)_ij (K_r)_ij (K_r symmetric).
            grad[4 + 2 * r] = b * eps * qk.iter().zip(kr.iter()).map(|(a, c)| a * c).sum::<f64>();
        }
        Ok(())
    }
}

/// Scratch of [`relation_kernel`]: `n²`.
pub fn relation_kernel_workspace_len(n: usize) -> usize {
    n.saturating_mul(n)
}

/// `out ← (Δ + I/ι²)⁻¹` (`n × n`, column-major) for one relation (see
/// the module docs).
///
/// # Errors
/// `BadRelationScale` unless `ι` is finite and `> 0` (and `1/ι²` finite);
/// `BadGraph` for a bad edge;
/// shapes, workspace; `NotPositiveDefinite` only if `1/ι²` is lost to
/// rounding against the degrees (`ι` beyond `~10⁸·√(max degree)`).
pub fn relation_kernel<B: Backend>(
    backend: &mut B,
    n: usize,
    rel: &Relation<'_>,
    iota: f64,
    out: &mut [f64],
    work: &mut [f64],
) -> Result<(), LearnError> {
    if !(iota.is_finite() && iota > 0.0) {
        return Err(LearnError::BadRelationScale);
    }
    let nn = n * n;
    if out.len() != nn {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if work.len() < nn {
        return Err(LinalgError::WorkspaceTooSmall { needed: nn, got: work.len() }.into());
    }
    let p = &mut work[..nn];
    p.iter_mut().for_each(|v| *v = 0.0);
    let add_edge = |p: &mut [f64], u: usize, v: usize, w: f64| {
        p[u * n + u] += w;
        p[v * n + v] += w;
        p[v * n + u] -= w;
        p[u * n + v] -= w;
    };
    match *rel {
        Relation::Edges(e) => {
            for &(u, v, w) in e {
                if u >= n || v >= n || u == v || !(w.is_finite() && w >= 0.0) {
                    return Err(LearnError::BadGraph);
                }
                add_edge(p, u, v, w);
            }
        }
        Relation::Groups(g) => {
            for (a, &(i, gi)) in g.iter().enumerate() {
                if i >= n {
                    return Err(LearnError::BadGraph);
                }
                for &(j, gj) in &g[a + 1..] {
                    if gi == gj && i != j && j < n {
                        add_edge(p, i, j, 1.0);
                    }
                }
            }
        }
    }
    let eps = 1.0 / (iota * iota);
    if !eps.is_finite() {
        return Err(LearnError::BadRelationScale);
    }
    for i in 0..n {
        p[i * n + i] += eps;
    }
    backend.cholesky_in_place(MatMut::from_col_major(p, n, n)?)?;
    out.iter_mut().for_each(|v| *v = 0.0);
    for i in 0..n {
        out[i * n + i] = 1.0;
    }
    backend.cholesky_solve_in_place(MatRef::from_col_major(p, n, n)?, MatMut::from_col_major(out, n, n)?)?;
    // Symmetrise the rounding of the two triangular solves.
    for j in 0..n {
        for i in 0..j {
            let v = 0.5 * (out[j * n + i] + out[i * n + j]);
            out[j * n + i] = v;
            out[i * n + j] = v;
        }
    }
    Ok(())
}
