//! Sparse EP for the preference GPs: the probit (and the score-difference)
//! likelihood of the [parent module](super) on a prior of rank `m ≪ n`
//! carried by `m` inducing inputs, so that one EP round costs O(M·m²) for
//! `M` preferences and the memory is O(n·m + m²) — no `n × n` matrix.
//! Quiñonero-Candela & Rasmussen (2005) for the approximations; the EP
//! itself is the parent module's (000 §5 eq. 10; 001 §4.1 eqs. 6–12), its
//! sites unchanged.
//!
//! # The approximation: DTC
//!
//! With inducing inputs `Z` (`m` rows), `u = f(Z) ~ N(0, K_mm)` and
//! `K_mm + εI = L·Lᵀ` (the parent's jitter policy), the latent values the
//! likelihood sees are the **DTC** (deterministic training conditional)
//! projection
//!
//! ```text
//! f̄ = K_nm·K_mm⁻¹·u = Φ·v,     Φ = K_nm·L⁻ᵀ  (n × m),   v = L⁻¹u ~ N(0, I_m)
//! ```
//!
//! so the prior of `f̄` is `Q = ΦΦᵀ = K_nm K_mm⁻¹ K_mn` (rank `m`). A
//! prediction adds back the conditional variance of `f − f̄`
//! (`k(x, x) − q(x, x)`), which is what distinguishes DTC from the subset
//! of regressors. **Why DTC, not FITC**: FITC would add `K_ii − Q_ii` as
//! extra noise on each item, i.e. a per-pair probit noise
//! `2σ² + δ_w + δ_l`, which changes with the kernel hyperparameters (the
//! evidence gradient then needs `∂Q_ii`, one more `n × m` pass per
//! evaluation) and couples the site scales to the inducing set; DTC keeps
//! the likelihood of the dense model exactly, its predictive form is the
//! inductive model kind's (`mean = k_xᵀα`, `var = k(x,x) − k_xᵀWk_x` over
//! the `m` inducing rows), and both equal the dense GP when `Z` holds all
//! items (`Q = K`).
//!
//! # Inducing inputs: pivoted Cholesky of the kernel
//!
//! [`choose_inducing`] takes the `m` items that the greedy pivoted
//! Cholesky of `K` picks ([`crate::learn::nystrom::pivoted_cholesky`], the
//! landmarks of `--basis` for the row learners): each step adds the item
//! with the largest residual `K_ii − Q_ii`, i.e. the one the current
//! inducing set explains worst, so `tr(K − Q)` (the variance DTC drops from
//! the likelihood) shrinks greedily; it is deterministic without a seed,
//! costs O(n·m²) and no `n × n` matrix, and stops early on duplicated or
//! collinear items (fewer than `m` inducing points, never a singular
//! `K_mm`). k-means++ would need a seed and ignores the kernel. The
//! inducing inputs are chosen once, at the starting hyperparameters, and
//! **held fixed** during the evidence maximisation (their gradient is not
//! taken): the evidence is a smooth function of the kernel parameters for a
//! fixed `Z`, and the pivot choice itself is not differentiable.
//!
//! # EP on the pair projections
//!
//! Preference `s` (`w ≻ l`) depends on `f̄` through `u_s = d_sᵀf̄ = φ_sᵀv`
//! with `φ_s = Φᵀ(e_w − e_l)` (the difference of two rows of `Φ`, stored
//! as `Φᵀ`, `m × n`, one item per column). The sites are the parent's
//! rank-one sites `(τ̃_s, ν̃_s)` on `u_s`; the posterior of `v` is
//!
//! ```text
//! B = I_m + Σ_s τ̃_s φ_s φ_sᵀ = L_B L_Bᵀ,   Σ_v = B⁻¹,   μ_v = B⁻¹h,   h = Σ_s ν̃_s φ_s
//! ```
//!
//! and the marginal of `u_s` is `N(φ_sᵀμ_v, ‖L_B⁻¹φ_s‖²)`. A round of
//! parallel damped EP (the parent's schedule, convergence test and site
//! update, [`super::site_pass`]) is: `B` by blocks of [`PAIR_BLOCK`]
//! scaled columns `√τ̃_s·φ_s` through [`Backend::syrk`] (`M·m²` flops), its
//! Cholesky (`m³/3`), and the `M` variances by blocked triangular solves
//! (`M·m²`): O(M·m² + m³) per round, O(n·m + M·m) for the projections and
//! means. `B`'s eigenvalues are `≥ 1`, so its factorisation cannot fail for
//! `τ̃ ≥ 0` (the parent's argument, unchanged).
//!
//! # Evidence and its gradient
//!
//! `log Z_EP = Σ_s log Z̃_s − ½·log|B| + ½·hᵀμ_v` — the parent's
//! formula with `I + UᵀWU` replaced by the `m × m` `B`
//! (`|I_n + QW| = |I_m + ΦᵀWΦ|`, and `h_fᵀΣ_f h_f = hᵀΣ_v h` with
//! `h_f = Σ_s ν̃_s d_s`, `h = Φᵀh_f`). At an EP fixed point,
//! `∂ log Z_EP/∂θ = ½⟨Q_f, ∂Q/∂θ⟩` with the parent's
//! `Q_f = α_fα_fᵀ − (W − WΣ_fW)`, `α_f = h_f − Wμ_f`, and
//! `∂Q = ∂K_nm K_mm⁻¹K_mn + K_nm K_mm⁻¹∂K_mn − K_nm K_mm⁻¹ ∂K_mm K_mm⁻¹K_mn`:
//!
//! ```text
//! ∂ log Z_EP/∂θ = ⟨P, ∂K_nm/∂θ⟩ − ½⟨S, ∂K_mm/∂θ⟩
//! P = Q_f K_nm K_mm⁻¹ = α_f α_uᵀ − W Φ B⁻¹ L⁻¹          (n × m, built m × n by item blocks)
//! S = K_mm⁻¹K_mn Q_f K_nm K_mm⁻¹ = α_u α_uᵀ − W_u,   W_u = L⁻ᵀ(I − B⁻¹)L⁻¹
//! α_u = L⁻ᵀμ_v  (so that μ_f = K_nm α_u)
//! ```
//!
//! (`P`: `(W − WΦB⁻¹ΦᵀW)Φ = WΦB⁻¹` since `ΦᵀWΦ = B − I`.) For the kernel
//! `a·exp(−γ‖x − x'‖²)`, `∂K/∂log a = K` and `∂K/∂log γ = K∘log(K/a)`.
//! The likelihood noise has the parent's explicit derivative (probit), and
//! for the Gaussian likelihood `noise²·‖β‖² − M + tr(QR)` with
//! `tr(QR) = m − tr(B⁻¹)`. Cost of the gradient: `2n·m²` (one gemm) plus
//! O(n·m) kernel logarithms and O(M·m).
//!
//! # Predictions
//!
//! At a new input with `k_x = a·k(Z, x)`: `mean = k_xᵀα_u`,
//! `var = k(x,x) − k_xᵀW_u k_x = k(x,x) − ‖φ_x‖² + ‖L_B⁻¹φ_x‖²`
//! (`φ_x = L⁻¹k_x`), computed in the last form (no cancellation between
//! `K_mm⁻¹` and `K_mm⁻¹Σ_uK_mm⁻¹`). At the items, the same with `φ_i` a
//! column of `Φᵀ`. The inductive model kind stores `Z`, `α_u` and `W_u`
//! ([`SparsePosterior::inducing_w`]).
//!
//! # Storage and scratch
//!
//! [`SparsePosterior::storage_len`]`(n, m, M) = 2n·m + 3m² + 2m + n + 4M`:
//! the sites and the pair marginals (`4M`), `K_mn` and `Φᵀ` (`m × n` each),
//! `K_mm`, `L`, `L_B`, `μ_v`, `α_u` and the residual variances
//! `K_ii − Q_ii` (`n`). [`evidence_workspace_len`] covers a fit and the
//! gradient (an `m × n` buffer and three `m × m`). Nothing is `n × n`.
//!
//! # More features than inducing inputs
//!
//! Nothing in the EP above depends on where the columns of `Φ` come from.
//! A posterior made by [`SparsePosterior::new_features`] carries `p ≥ m`
//! features: the inducing inputs' `m` first (`Φᵀ` rows `0..m`, from the
//! kernel as above), then features another prior sets (the relation
//! eigenvectors of [`super::xpgp_lowrank`]); `B`, `μ_v` and the pair
//! marginals are `p`-dimensional, O(M·p²) per round. The gradient in
//! feature form is `∂ log Z_EP/∂θ = ⟨P_Φ, ∂Φ/∂θ⟩` with `P_Φ = Q_fΦ`,
//! `P_Φᵀ = μ_vα_fᵀ − B⁻¹ΦᵀW` (`α_fᵀΦ = μ_vᵀ` since `Bμ_v = h`); the
//! attribute block is `P` above (`Pᵀ = L⁻ᵀ` times its rows, `W_u` from the
//! attribute block of `B⁻¹`), and every other feature contributes
//! `⟨P_Φ[:, j], φ_j⟩` times its own scaling. The inductive model and the
//! predictions at new inputs need `p = m` (features beyond the inducing
//! inputs live on the fixed items only).
//!
//! # Errors
//!
//! Those of the parent's EP (pairs, noise, EP parameters, `NoConvergence`,
//! non-finite input), `DimensionMismatch` for rows of other dimensions,
//! `InvalidParameter` for an amplitude not finite and `> 0` or a gradient
//! asked of a kernel other than RBF.

use super::hyper::{search_evidence, OptReport, Search};
use super::xpgp::THETA_NOISE;
use super::{
    check_pairs, factor_with_jitter, probit_noise_grad, probit_site_terms, site_pass, EpParams, LearnError, Likelihood,
    NewPair, MIN_DAMPING,
};
use crate::backend::Backend;
use crate::graph::Pair;
use crate::kernel::{kernel_matrix, kernel_matrix_workspace_len, kernel_value, Kernel};
use crate::learn::nystrom::{default_pivot_tol, pivoted_cholesky};
use crate::linalg::chol::solve_lower_transpose_in_place;
use crate::linalg::Rows;
use crate::special::HALF_LN_2PI;
use crate::{scratch, LinalgError, MatMut, MatRef};

/// Pairs (or items) per block of the O(M·m²) passes.
pub const PAIR_BLOCK: usize = 256;

/// Scratch of [`choose_inducing`] for `n` items and `m` inducing inputs:
/// `n·m + n`.
pub fn inducing_workspace_len(n: usize, m: usize) -> usize {
    n.saturating_mul(m).saturating_add(n)
}

/// Chooses at most `m = piv.len()` inducing items by the pivoted Cholesky
/// of the kernel of `x` (module docs; relative pivot tolerance
/// [`default_pivot_tol`]): writes their indices to `piv[..r]` and returns
/// `r ≤ m` (fewer when the items span fewer than `m` dimensions, e.g.
/// duplicated items).
///
/// # Errors
/// `DimensionMismatch` for `m = 0`, `m > n` or a short workspace; a bad
/// kernel or non-finite kernel values.
pub fn choose_inducing(
    kernel: &Kernel,
    x: &Rows<'_>,
    piv: &mut [usize],
    work: &mut [f64],
) -> Result<usize, LearnError> {
    let (n, m) = (x.nrows(), piv.len());
    if m == 0 || m > n {
        return Err(LinalgError::DimensionMismatch.into());
    }
    let need = inducing_workspace_len(n, m);
    if work.len() < need {
        return Err(LinalgError::WorkspaceTooSmall { needed: need, got: work.len() }.into());
    }
    let (g, rest) = work.split_at_mut(n * m);
    Ok(pivoted_cholesky(kernel, x, default_pivot_tol(n), g, piv, &mut rest[..n])?)
}

/// The items and the inducing inputs of a sparse prior.
#[derive(Clone, Copy, Debug)]
pub struct SparsePrior<'a> {
    /// The items (`n` rows).
    pub x: Rows<'a>,
    /// The inducing inputs (`m` rows, the items' dimension).
    pub z: Rows<'a>,
}

impl SparsePrior<'_> {
    /// Number of items `n`.
    pub fn n(&self) -> usize {
        self.x.nrows()
    }

    /// Number of inducing inputs `m`.
    pub fn m(&self) -> usize {
        self.z.nrows()
    }

    fn check(&self) -> Result<(), LearnError> {
        if self.z.ncols() != self.x.ncols() || self.m() == 0 {
            return Err(LinalgError::DimensionMismatch.into());
        }
        Ok(())
    }
}

scratch! {
    /// The storage of a [`SparsePosterior`]: `m` inducing inputs, `p ≥ m`
    /// features (the inducing inputs' `m` first, then any others, e.g. the
    /// relation eigenvectors of [`super::xpgp_lowrank`]).
    struct Store(n: usize, m: usize, p: usize, np: usize) {
        tau: np,
        nu: np,
        /// Posterior means of the pair projections.
        pm: np,
        /// Posterior variances of the pair projections.
        pv: np,
        /// `K_mn` (`m × n`, column-major).
        kmn: m.saturating_mul(n),
        /// `Φᵀ` (`p × n`): rows `0..m` are `L⁻¹K_mn`.
        phi: p.saturating_mul(n),
        /// `K_mm`.
        kmm: m.saturating_mul(m),
        /// `L`, `K_mm + εI = LLᵀ`.
        l: m.saturating_mul(m),
        /// `L_B`, `B = L_B L_Bᵀ` (`p × p`).
        lb: p.saturating_mul(p),
        mu: p,
        alpha: m,
        /// `K_ii − Q_ii`.
        resid: n,
    }
}

scratch! {
    /// Scratch of [`SparsePosterior::refit`].
    struct FitScratch(p: usize, kw: usize) {
        kw: kw,
        blk: p.saturating_mul(PAIR_BLOCK),
        h: p,
    }
}

scratch! {
    /// Scratch of [`SparsePosterior::kernel_gradient`] and of the
    /// feature gradient.
    struct GradScratch(n: usize, m: usize, p: usize) {
        /// `ΦᵀW` (`p × n`).
        y: p.saturating_mul(n),
        /// `B⁻¹`, then its rows `0..m` times `L⁻ᵀ`.
        m1: p.saturating_mul(p),
        /// `W_u`.
        wu: m.saturating_mul(m),
        /// Scratch of `W_u`.
        t: m.saturating_mul(m),
        /// `α_f`.
        af: n,
        blk: p.saturating_mul(PAIR_BLOCK),
    }
}

/// Scratch of [`SparsePosterior::refit`] for this prior.
pub fn fit_workspace_len(prior: &SparsePrior<'_>) -> usize {
    let kw = kernel_matrix_workspace_len(&prior.z, &prior.x).max(kernel_matrix_workspace_len(&prior.z, &prior.z));
    FitScratch::len(prior.m(), kw)
}

/// Scratch of a fit with `p` features and attribute kernel workspace `kw`.
pub(crate) fn fit_workspace_len_features(p: usize, kw: usize) -> usize {
    FitScratch::len(p, kw)
}

/// Scratch of [`SparsePosterior::kernel_gradient`] for `n` items and `m`
/// inducing inputs.
pub fn gradient_workspace_len(n: usize, m: usize) -> usize {
    GradScratch::len(n, m, m)
}

/// Scratch of the feature gradient with `m` inducing inputs among `p`
/// features.
pub(crate) fn gradient_workspace_len_features(n: usize, m: usize, p: usize) -> usize {
    GradScratch::len(n, m, p)
}

/// Scratch of [`evidence_gradient`] and [`fit_hyper`] (besides the
/// optimiser's): a fit or a gradient, whichever is larger.
pub fn evidence_workspace_len(prior: &SparsePrior<'_>) -> usize {
    fit_workspace_len(prior).max(gradient_workspace_len(prior.n(), prior.m()))
}

/// A sparse (DTC) preference-GP posterior in caller storage (see the
/// [module docs](self)).
#[derive(Debug)]
pub struct SparsePosterior<'s> {
    n: usize,
    m: usize,
    p: usize,
    np: usize,
    lik: Likelihood,
    amp: f64,
    jitter: f64,
    log_evidence: f64,
    iterations: usize,
    skipped: usize,
    st: Store<'s>,
}

impl<'s> SparsePosterior<'s> {
    /// Elements of storage for `n` items, `m` inducing inputs and `np`
    /// pairs: `2n·m + 3m² + 2m + n + 4·np`.
    pub fn storage_len(n: usize, m: usize, np: usize) -> usize {
        Store::len(n, m, m, np)
    }

    /// Elements of storage for `m` inducing inputs among `p ≥ m` features:
    /// `n·m + p·n + 2m² + p² + p + m + n + 4·np`.
    pub fn storage_len_features(n: usize, m: usize, p: usize, np: usize) -> usize {
        Store::len(n, m, p, np)
    }

    /// A posterior with all sites zero (the prior), the starting point of
    /// [`refit`](Self::refit); not valid until a `refit` succeeds.
    ///
    /// # Errors
    /// `WorkspaceTooSmall` for a short `storage`.
    pub fn new(n: usize, m: usize, np: usize, storage: &'s mut [f64]) -> Result<Self, LearnError> {
        Self::new_features(n, m, m, np, storage)
    }

    /// [`new`](Self::new) for `m` inducing inputs among `p ≥ m` features
    /// (storage [`storage_len_features`](Self::storage_len_features)).
    ///
    /// # Errors
    /// `WorkspaceTooSmall` for a short `storage`; `DimensionMismatch` for
    /// `p < m`.
    pub fn new_features(n: usize, m: usize, p: usize, np: usize, storage: &'s mut [f64]) -> Result<Self, LearnError> {
        if p < m {
            return Err(LinalgError::DimensionMismatch.into());
        }
        let (st, _) = Store::split(storage, n, m, p, np)?;
        let p = SparsePosterior {
            n,
            m,
            p,
            np,
            lik: Likelihood::Probit { sigma: core::f64::consts::FRAC_1_SQRT_2 },
            amp: 1.0,
            jitter: 0.0,
            log_evidence: 0.0,
            iterations: 0,
            skipped: 0,
            st,
        };
        p.st.tau.iter_mut().chain(p.st.nu.iter_mut()).for_each(|v| *v = 0.0);
        Ok(p)
    }

    /// Fits the posterior under the prior `amp·kernel` on `problem`'s
    /// items with its inducing inputs, its pairs, its likelihood (as given:
    /// the evidence search puts `θ`'s noise in first) and its EP tuning,
    /// starting EP from the current sites (a warm start across
    /// hyperparameters). `work` holds [`fit_workspace_len`].
    ///
    /// # Errors
    /// See the [module docs](self#errors).
    pub fn refit<B: Backend>(
        &mut self,
        backend: &mut B,
        problem: &SparseProblem<'_>,
        kernel: &Kernel,
        amp: f64,
        work: &mut [f64],
    ) -> Result<(), LearnError> {
        let SparseProblem { prior, pairs, lik, ep: ref params } = *problem;
        prior.check()?;
        if prior.n() != self.n || prior.m() != self.m || self.p != self.m || pairs.len() != self.np {
            return Err(LinalgError::DimensionMismatch.into());
        }
        self.check_fit(pairs, lik, params)?;
        let kw_len =
            kernel_matrix_workspace_len(&prior.z, &prior.x).max(kernel_matrix_workspace_len(&prior.z, &prior.z));
        let (FitScratch { kw, blk, h }, _) = FitScratch::split(work, self.p, kw_len)?;
        self.set_attr_features(backend, prior, kernel, amp, kw, blk)?;
        self.run_ep(backend, pairs, lik, params, blk, h)
    }

    /// The checks of a fit that do not depend on the prior.
    pub(crate) fn check_fit(&self, pairs: &[Pair], lik: Likelihood, params: &EpParams) -> Result<(), LearnError> {
        if pairs.len() != self.np {
            return Err(LinalgError::DimensionMismatch.into());
        }
        lik.check()?;
        params.check()?;
        check_pairs(self.n, pairs, &lik)
    }

    /// The attribute block: `K_mn`, `K_mm`, `L`, the rows `0..m` of `Φᵀ`
    /// and the residual variances `a·k(x_i, x_i) − ‖φ_i‖²` (module docs).
    /// `kw` holds the kernel matrices' workspace, `blk` `m·`[`PAIR_BLOCK`].
    pub(crate) fn set_attr_features<B: Backend>(
        &mut self,
        backend: &mut B,
        prior: &SparsePrior<'_>,
        kernel: &Kernel,
        amp: f64,
        kw: &mut [f64],
        blk: &mut [f64],
    ) -> Result<(), LearnError> {
        let (n, m, p) = (self.n, self.m, self.p);
        prior.check()?;
        if prior.n() != n || prior.m() != m || blk.len() < m * PAIR_BLOCK.min(n.max(1)) {
            return Err(LinalgError::DimensionMismatch.into());
        }
        if !(amp.is_finite() && amp > 0.0) {
            return Err(LinalgError::InvalidParameter.into());
        }
        kernel.validate()?;
        self.amp = amp;
        let st = &mut self.st;
        kernel_matrix(backend, kernel, &prior.z, &prior.x, MatMut::from_col_major(st.kmn, m, n)?, kw)?;
        kernel_matrix(backend, kernel, &prior.z, &prior.z, MatMut::from_col_major(st.kmm, m, m)?, kw)?;
        st.kmn.iter_mut().chain(st.kmm.iter_mut()).for_each(|v| *v *= amp);
        self.jitter = factor_with_jitter(backend, MatRef::from_col_major(st.kmm, m, m)?, st.l, false)?;
        // Rows 0..m of Φᵀ = L⁻¹K_mn, a block of items at a time (the
        // column stride of Φᵀ is p).
        let l = MatRef::from_col_major(st.l, m, m)?;
        let mut i0 = 0;
        while i0 < n {
            let i1 = (i0 + PAIR_BLOCK).min(n);
            let b = &mut blk[..m * (i1 - i0)];
            b.copy_from_slice(&st.kmn[i0 * m..i1 * m]);
            backend.solve_lower_in_place(l, MatMut::from_col_major(b, m, i1 - i0)?)?;
            for i in i0..i1 {
                st.phi[i * p..i * p + m].copy_from_slice(&b[(i - i0) * m..(i - i0 + 1) * m]);
            }
            i0 = i1;
        }
        for i in 0..n {
            let q: f64 = st.phi[i * p..i * p + m].iter().map(|v| v * v).sum();
            st.resid[i] = (amp * kernel_value(kernel, &prior.x, i, &prior.x, i) - q).max(0.0);
        }
        Ok(())
    }

    /// Without attributes: no attribute block, no residual variance.
    pub(crate) fn clear_attr(&mut self) {
        self.amp = 1.0;
        self.jitter = 0.0;
        self.st.resid.iter_mut().for_each(|v| *v = 0.0);
    }

    /// `Φᵀ` (`p × n`, one item per column), for the features beyond the
    /// attribute block.
    pub(crate) fn features_mut(&mut self) -> &mut [f64] {
        self.st.phi
    }

    /// Number of features `p`.
    pub fn features(&self) -> usize {
        self.p
    }

    /// EP (or the Gaussian posterior) on the features in place, from the
    /// current sites (module docs); `blk` holds `p·`[`PAIR_BLOCK`], `h`
    /// `p`. The checks of [`check_fit`](Self::check_fit) are the caller's.
    pub(crate) fn run_ep<B: Backend>(
        &mut self,
        backend: &mut B,
        pairs: &[Pair],
        lik: Likelihood,
        params: &EpParams,
        blk: &mut [f64],
        h: &mut [f64],
    ) -> Result<(), LearnError> {
        self.lik = lik;
        if !crate::linalg::slice_finite(self.st.phi) {
            return Err(LinalgError::NonFinite.into());
        }
        self.iterations = 0;
        self.skipped = 0;
        let c2 = lik.diff_noise_var();
        if let Likelihood::Gaussian { noise } = lik {
            let p = 1.0 / (noise * noise);
            for (s, pr) in pairs.iter().enumerate() {
                self.st.tau[s] = p;
                self.st.nu[s] = pr.magnitude * p;
            }
            self.posterior(backend, pairs, blk, h)?;
            self.iterations = 1;
        } else {
            let c = libm::sqrt(c2);
            let mut delta = params.damping;
            let mut last_change = f64::INFINITY;
            loop {
                self.posterior(backend, pairs, blk, h)?;
                if self.iterations >= params.max_iter {
                    return Err(LinalgError::NoConvergence { iterations: self.iterations }.into());
                }
                self.iterations += 1;
                // The parent's schedule: stop, without moving the sites,
                // in the round they would move by less than the tolerance.
                let change = self.site_round(c2, c, delta, false)?;
                if change < params.tol {
                    break;
                }
                self.site_round(c2, c, delta, true)?;
                if change > last_change {
                    delta = (0.5 * delta).max(MIN_DAMPING);
                } else {
                    delta = (1.25 * delta).min(params.damping);
                }
                last_change = change;
            }
        }
        self.log_evidence += self.site_terms(pairs)?;
        if !self.log_evidence.is_finite() {
            return Err(LinalgError::NonFinite.into());
        }
        Ok(())
    }

    fn site_round(&mut self, c2: f64, c: f64, delta: f64, apply: bool) -> Result<f64, LearnError> {
        let (pm, pv) = (&*self.st.pm, &*self.st.pv);
        let (change, skipped) = site_pass(self.st.tau, self.st.nu, |s| (pm[s], pv[s]), c2, c, delta, apply)?;
        self.skipped = skipped;
        Ok(change)
    }

    /// `blk[.., t] ← φ_w − φ_l` for the pairs `s0 + t`, times `√τ̃_s` with
    /// `scaled`.
    fn fill_block(&self, pairs: &[Pair], s0: usize, blk: &mut [f64], scaled: bool) {
        let m = self.p;
        let phi = &*self.st.phi;
        for (t, p) in pairs.iter().enumerate() {
            let r = if scaled { libm::sqrt(self.st.tau[s0 + t]) } else { 1.0 };
            let (pw, pl) = (&phi[p.winner * m..(p.winner + 1) * m], &phi[p.loser * m..(p.loser + 1) * m]);
            for ((b, a), c) in blk[t * m..(t + 1) * m].iter_mut().zip(pw).zip(pl) {
                *b = r * (a - c);
            }
        }
    }

    /// The posterior of `v` from the sites (module docs): `L_B`, `μ_v`,
    /// `α_u`, the pair marginals, and `−½log|B| + ½hᵀμ_v` in
    /// `log_evidence`.
    fn posterior<B: Backend>(
        &mut self,
        backend: &mut B,
        pairs: &[Pair],
        blk: &mut [f64],
        h: &mut [f64],
    ) -> Result<(), LearnError> {
        let m = self.p;
        self.st.lb.iter_mut().for_each(|v| *v = 0.0);
        (0..m).for_each(|i| self.st.lb[i * m + i] = 1.0);
        let mut s0 = 0;
        while s0 < pairs.len() {
            let s1 = (s0 + PAIR_BLOCK).min(pairs.len());
            let bs = s1 - s0;
            self.fill_block(&pairs[s0..s1], s0, blk, true);
            backend.syrk(
                1.0,
                MatRef::from_col_major(&blk[..m * bs], m, bs)?,
                1.0,
                MatMut::from_col_major(self.st.lb, m, m)?,
            )?;
            s0 = s1;
        }
        if !crate::linalg::slice_finite(self.st.lb) {
            return Err(LinalgError::NonFinite.into());
        }
        backend.cholesky_in_place(MatMut::from_col_major(self.st.lb, m, m)?)?;
        let lb = MatRef::from_col_major(self.st.lb, m, m)?;
        let log_det_b: f64 = (0..m).map(|i| 2.0 * libm::log(lb.at(i, i))).sum();
        // h = Σ ν̃_s φ_s, μ_v = B⁻¹h.
        h.iter_mut().for_each(|v| *v = 0.0);
        let phi = &*self.st.phi;
        for (s, p) in pairs.iter().enumerate() {
            let nu = self.st.nu[s];
            let (pw, pl) = (&phi[p.winner * m..(p.winner + 1) * m], &phi[p.loser * m..(p.loser + 1) * m]);
            for ((hv, a), c) in h.iter_mut().zip(pw).zip(pl) {
                *hv += nu * (a - c);
            }
        }
        self.st.mu.copy_from_slice(h);
        backend.cholesky_solve_in_place(lb, MatMut::from_col_major(self.st.mu, m, 1)?)?;
        let quad: f64 = h.iter().zip(self.st.mu.iter()).map(|(a, b)| a * b).sum();
        // Pair marginals: mean φ_sᵀμ_v, variance ‖L_B⁻¹φ_s‖².
        let mut s0 = 0;
        while s0 < pairs.len() {
            let s1 = (s0 + PAIR_BLOCK).min(pairs.len());
            let bs = s1 - s0;
            self.fill_block(&pairs[s0..s1], s0, blk, false);
            for t in 0..bs {
                self.st.pm[s0 + t] = blk[t * m..(t + 1) * m].iter().zip(self.st.mu.iter()).map(|(a, b)| a * b).sum();
            }
            backend.solve_lower_in_place(lb, MatMut::from_col_major(&mut blk[..m * bs], m, bs)?)?;
            for t in 0..bs {
                self.st.pv[s0 + t] = blk[t * m..(t + 1) * m].iter().map(|v| v * v).sum();
            }
            s0 = s1;
        }
        // α_u = L⁻ᵀμ_v (the attribute block of μ_v).
        let ma = self.m;
        self.st.alpha.copy_from_slice(&self.st.mu[..ma]);
        if ma > 0 {
            solve_lower_transpose_in_place(
                MatRef::from_col_major(self.st.l, ma, ma)?,
                MatMut::from_col_major(self.st.alpha, ma, 1)?,
            )?;
        }
        self.log_evidence = -0.5 * log_det_b + 0.5 * quad;
        if !(self.log_evidence.is_finite()
            && crate::linalg::slice_finite(self.st.pm)
            && crate::linalg::slice_finite(self.st.pv)
            && crate::linalg::slice_finite(self.st.alpha))
        {
            return Err(LinalgError::NonFinite.into());
        }
        Ok(())
    }

    /// `Σ_s log Z̃_s` at the current posterior (the parent's terms).
    fn site_terms(&self, pairs: &[Pair]) -> Result<f64, LearnError> {
        match self.lik {
            Likelihood::Gaussian { noise } => {
                let v = noise * noise;
                Ok(pairs.iter().map(|p| -HALF_LN_2PI - libm::log(noise) - p.magnitude * p.magnitude / (2.0 * v)).sum())
            }
            Likelihood::Probit { .. } => {
                let (pm, pv) = (&*self.st.pm, &*self.st.pv);
                probit_site_terms(self.st.tau, self.st.nu, |s| (pm[s], pv[s]), self.lik.diff_noise_var())
            }
        }
    }

    /// Number of items `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of inducing inputs `m`.
    pub fn m(&self) -> usize {
        self.m
    }

    /// Number of preferences.
    pub fn pairs(&self) -> usize {
        self.np
    }

    /// The likelihood of the last fit.
    pub fn likelihood(&self) -> Likelihood {
        self.lik
    }

    /// EP's log evidence under the sparse prior.
    pub fn log_evidence(&self) -> f64 {
        self.log_evidence
    }

    /// EP rounds of the last fit (1 for the Gaussian likelihood).
    pub fn iterations(&self) -> usize {
        self.iterations
    }

    /// Sites left unchanged in the last round (improper cavities).
    pub fn skipped(&self) -> usize {
        self.skipped
    }

    /// The jitter `ε` added to `diag K_mm`.
    pub fn jitter(&self) -> f64 {
        self.jitter
    }

    /// Site precisions `τ̃`.
    pub fn site_precision(&self) -> &[f64] {
        self.st.tau
    }

    /// Site shifts `ν̃`.
    pub fn site_shift(&self) -> &[f64] {
        self.st.nu
    }

    /// `α_u = K_mm⁻¹μ_u` (`m`): the mean at `x` is `Σ_j α_j·a·k(x, z_j)`.
    pub fn alpha(&self) -> &[f64] {
        self.st.alpha
    }

    /// Posterior means (`mean`, `n`) and DTC variances (`var`, `n`) at the
    /// items: `φ_iᵀμ_v` and `K_ii − Q_ii + ‖L_B⁻¹φ_i‖²`. `work` holds
    /// `p·`[`PAIR_BLOCK`] (`p` = [`features`](Self::features)).
    ///
    /// # Errors
    /// Shapes, workspace.
    pub fn item_marginals<B: Backend>(
        &self,
        backend: &mut B,
        mean: &mut [f64],
        var: &mut [f64],
        work: &mut [f64],
    ) -> Result<(), LearnError> {
        let (n, m) = (self.n, self.p);
        if mean.len() != n || var.len() != n {
            return Err(LinalgError::DimensionMismatch.into());
        }
        if work.len() < m * PAIR_BLOCK {
            return Err(LinalgError::WorkspaceTooSmall { needed: m * PAIR_BLOCK, got: work.len() }.into());
        }
        let lb = MatRef::from_col_major(self.st.lb, m, m)?;
        let mut i0 = 0;
        while i0 < n {
            let i1 = (i0 + PAIR_BLOCK).min(n);
            let blk = &mut work[..m * (i1 - i0)];
            blk.copy_from_slice(&self.st.phi[i0 * m..i1 * m]);
            for i in i0..i1 {
                mean[i] = self.st.phi[i * m..(i + 1) * m].iter().zip(self.st.mu.iter()).map(|(a, b)| a * b).sum();
            }
            backend.solve_lower_in_place(lb, MatMut::from_col_major(blk, m, i1 - i0)?)?;
            for i in i0..i1 {
                var[i] = self.st.resid[i] + blk[(i - i0) * m..(i - i0 + 1) * m].iter().map(|v| v * v).sum::<f64>();
            }
            i0 = i1;
        }
        Ok(())
    }

    /// `out ← C = L_B⁻¹Φᵀ` (`p × n`, one item per column): the posterior
    /// covariance at the items is `CᵀC + diag(r)` with `r` the
    /// [`residual_variances`](Self::residual_variances), so
    /// `Cov(f_i, f_j) = c_iᵀc_j + δ_ij·r_i` — O(p) per entry, no `n × n`
    /// matrix.
    ///
    /// # Errors
    /// Shapes.
    pub fn item_cov_factor<B: Backend>(&self, backend: &mut B, out: &mut [f64]) -> Result<(), LearnError> {
        let (n, p) = (self.n, self.p);
        if out.len() != n * p {
            return Err(LinalgError::DimensionMismatch.into());
        }
        out.copy_from_slice(self.st.phi);
        backend.solve_lower_in_place(MatRef::from_col_major(self.st.lb, p, p)?, MatMut::from_col_major(out, p, n)?)?;
        Ok(())
    }

    /// The prior variances at the items that the features do not carry
    /// (`a·k(x_i, x_i) − ‖φ_i‖²` of the attribute block; 0 without one).
    pub fn residual_variances(&self) -> &[f64] {
        self.st.resid
    }

    /// The residual variances, for a caller that adds prior variance the
    /// features do not carry (the low-rank XPGP's residual constant at the
    /// items in no preference); after the attribute block is set.
    pub(crate) fn residual_variances_mut(&mut self) -> &mut [f64] {
        self.st.resid
    }

    /// Mean and variance of `f(x¹) − f(x²)` for two new inputs from their
    /// prior terms `new`: cross-kernel columns `k1 = a·k(Z, x¹)`, `k2`
    /// (`m` each) and prior values `k11`, `k22`, `k12` (module docs'
    /// predictive form). `work` holds `m`.
    ///
    /// # Errors
    /// Shapes, workspace, non-finite input.
    pub fn predict_pair<B: Backend>(
        &self,
        backend: &mut B,
        new: &NewPair<'_>,
        work: &mut [f64],
    ) -> Result<(f64, f64), LearnError> {
        let NewPair { k1, k2, k11, k22, k12 } = *new;
        let m = self.m;
        if k1.len() != m || k2.len() != m || work.len() < m {
            return Err(LinalgError::DimensionMismatch.into());
        }
        let col = &mut work[..m];
        col.iter_mut().zip(k1.iter().zip(k2)).for_each(|(c, (a, b))| *c = a - b);
        self.predict_one(backend, col, k11 + k22 - 2.0 * k12)
    }

    /// Mean and variance at a new input from `kx = a·k(Z, x)` (`m`) and
    /// `kxx = a·k(x, x)`. `work` holds `m`.
    ///
    /// # Errors
    /// Shapes, workspace, non-finite input.
    pub fn predict<B: Backend>(
        &self,
        backend: &mut B,
        kx: &[f64],
        kxx: f64,
        work: &mut [f64],
    ) -> Result<(f64, f64), LearnError> {
        let m = self.m;
        if kx.len() != m || work.len() < m {
            return Err(LinalgError::DimensionMismatch.into());
        }
        let col = &mut work[..m];
        col.copy_from_slice(kx);
        self.predict_one(backend, col, kxx)
    }

    /// Mean `kᵀα_u` and variance `kk − ‖φ‖² + ‖L_B⁻¹φ‖²`, `φ = L⁻¹k`, of
    /// the latent with cross-kernel `k` (overwritten).
    fn predict_one<B: Backend>(&self, backend: &mut B, k: &mut [f64], kk: f64) -> Result<(f64, f64), LearnError> {
        let m = self.m;
        if self.p != m {
            // Features beyond the inducing inputs' (relations) are over the
            // fixed items only.
            return Err(LearnError::Unsupported);
        }
        if !(kk.is_finite() && crate::linalg::slice_finite(k)) {
            return Err(LinalgError::NonFinite.into());
        }
        let mean: f64 = k.iter().zip(self.st.alpha.iter()).map(|(a, b)| a * b).sum();
        backend.solve_lower_in_place(MatRef::from_col_major(self.st.l, m, m)?, MatMut::from_col_major(k, m, 1)?)?;
        let q: f64 = k.iter().map(|v| v * v).sum();
        backend.solve_lower_in_place(MatRef::from_col_major(self.st.lb, m, m)?, MatMut::from_col_major(k, m, 1)?)?;
        let r: f64 = k.iter().map(|v| v * v).sum();
        Ok((mean, (kk - q).max(0.0) + r))
    }

    /// `out ← W_u = L⁻ᵀ(I − [B⁻¹]_aa)L⁻¹` (`m × m`, column-major,
    /// symmetric; `[B⁻¹]_aa` the inducing inputs' block of `B⁻¹`, all of it
    /// when `p = m`): the `W` of the inductive model kind over the inducing
    /// inputs. `tmp` holds `p²`.
    ///
    /// # Errors
    /// Shapes.
    pub fn inducing_w<B: Backend>(&self, backend: &mut B, out: &mut [f64], tmp: &mut [f64]) -> Result<(), LearnError> {
        let (m, p) = (self.m, self.p);
        if out.len() != m * m || tmp.len() < p * p {
            return Err(LinalgError::DimensionMismatch.into());
        }
        let tmp = &mut tmp[..p * p];
        self.b_inverse(backend, tmp)?;
        for j in 0..m {
            for i in 0..m {
                out[j * m + i] = -tmp[j * p + i];
            }
        }
        self.w_u_in_place(out, &mut tmp[..m * m])
    }

    /// `out ← B⁻¹` (`p × p`).
    fn b_inverse<B: Backend>(&self, backend: &mut B, out: &mut [f64]) -> Result<(), LearnError> {
        let p = self.p;
        out.iter_mut().for_each(|v| *v = 0.0);
        (0..p).for_each(|i| out[i * p + i] = 1.0);
        backend
            .cholesky_solve_in_place(MatRef::from_col_major(self.st.lb, p, p)?, MatMut::from_col_major(out, p, p)?)?;
        Ok(())
    }

    /// `out ← L⁻ᵀ(I + out)L⁻¹` from `out = −[B⁻¹]_aa` (`m × m`), then
    /// symmetrised; `tmp` holds `m²`.
    fn w_u_in_place(&self, out: &mut [f64], tmp: &mut [f64]) -> Result<(), LearnError> {
        let m = self.m;
        if m == 0 {
            return Ok(());
        }
        (0..m).for_each(|i| out[i * m + i] += 1.0);
        // L⁻ᵀ·(I − B⁻¹), transposed, L⁻ᵀ again: L⁻ᵀ(I − B⁻¹)L⁻¹.
        let l = MatRef::from_col_major(self.st.l, m, m)?;
        solve_lower_transpose_in_place(l, MatMut::from_col_major(out, m, m)?)?;
        for j in 0..m {
            for i in 0..m {
                tmp[i * m + j] = out[j * m + i];
            }
        }
        solve_lower_transpose_in_place(l, MatMut::from_col_major(tmp, m, m)?)?;
        for j in 0..m {
            for i in 0..=j {
                let v = 0.5 * (tmp[j * m + i] + tmp[i * m + j]);
                out[j * m + i] = v;
                out[i * m + j] = v;
            }
        }
        Ok(())
    }

    /// The gradient of the log evidence at the fitted sites in
    /// `θ = (log a, log γ, log s)` of the kernel `a·exp(−γ‖x − x'‖²)` and
    /// the likelihood's noise `s` (module docs), into `grad` (3).
    /// `work` holds [`gradient_workspace_len`].
    ///
    /// # Errors
    /// Shapes, workspace; an improper cavity.
    pub fn kernel_gradient<B: Backend>(
        &self,
        backend: &mut B,
        pairs: &[Pair],
        grad: &mut [f64],
        work: &mut [f64],
    ) -> Result<(), LearnError> {
        if grad.len() != 3 || self.p != self.m {
            return Err(LinalgError::DimensionMismatch.into());
        }
        let g = self.feature_gradient(backend, pairs, &mut [], work)?;
        grad.copy_from_slice(&g);
        Ok(())
    }

    /// The gradient of the log evidence at the fitted sites by blocks of
    /// features: returns `(∂/∂log a, ∂/∂log γ, ∂/∂log s)` of the attribute
    /// block (0 without inducing inputs) and the noise, and writes
    /// `dfeat[j − m] = ⟨P_Φ[:, j], Φ[:, j]⟩` for each feature `j ≥ m`
    /// (`dfeat`: `p − m`), where `P_Φ = Q_f Φ` and
    /// `P_Φᵀ = μ_vα_fᵀ − B⁻¹ΦᵀW` (module docs): a feature scaled as
    /// `∂φ_j/∂θ = c_j·φ_j` then contributes `c_j·dfeat[j − m]`.
    /// `work` holds [`gradient_workspace_len_features`].
    ///
    /// # Errors
    /// Shapes, workspace; an improper cavity; non-finite values.
    pub(crate) fn feature_gradient<B: Backend>(
        &self,
        backend: &mut B,
        pairs: &[Pair],
        dfeat: &mut [f64],
        work: &mut [f64],
    ) -> Result<[f64; 3], LearnError> {
        let (n, m, p) = (self.n, self.m, self.p);
        if pairs.len() != self.np || dfeat.len() != p - m {
            return Err(LinalgError::DimensionMismatch.into());
        }
        let (GradScratch { y, m1, wu, t, af, blk }, _) = GradScratch::split(work, n, m, p)?;
        let st = &self.st;
        // α_f = h_f − Wμ_f and Y = ΦᵀW (column i: Σ_s ±τ̃_s φ_s).
        af.iter_mut().for_each(|v| *v = 0.0);
        y.iter_mut().for_each(|v| *v = 0.0);
        for (s, pr) in pairs.iter().enumerate() {
            let (tau, nu) = (st.tau[s], st.nu[s]);
            let a = nu - tau * st.pm[s];
            af[pr.winner] += a;
            af[pr.loser] -= a;
            if tau == 0.0 {
                continue;
            }
            for k in 0..p {
                let d = tau * (st.phi[pr.winner * p + k] - st.phi[pr.loser * p + k]);
                y[pr.winner * p + k] += d;
                y[pr.loser * p + k] -= d;
            }
        }
        // M1 = B⁻¹; S's W_u from its attribute block; then rows 0..m of M1
        // times L⁻ᵀ (so that M1·Y holds L⁻ᵀ[B⁻¹Y]_a above [B⁻¹Y]_rest).
        self.b_inverse(backend, m1)?;
        let tr_binv: f64 = (0..p).map(|i| m1[i * p + i]).sum();
        for j in 0..m {
            for i in 0..m {
                wu[j * m + i] = -m1[j * p + i];
            }
        }
        self.w_u_in_place(wu, t)?;
        if m > 0 {
            solve_lower_transpose_in_place(MatRef::from_col_major(st.l, m, m)?, MatMut::new(m1, m, p, 1, p)?)?;
        }
        // ã = (α_u, μ_v[m..]): Pᵀ = ãα_fᵀ − M1·Y, by item blocks; the
        // attribute rows against ∂K_nm, the others against Φᵀ.
        let amp = self.amp;
        let (mut ga, mut gg) = (0.0, 0.0);
        dfeat.iter_mut().for_each(|v| *v = 0.0);
        let mut i0 = 0;
        while i0 < n {
            let i1 = (i0 + PAIR_BLOCK).min(n);
            let bs = i1 - i0;
            let pb = &mut blk[..p * bs];
            backend.gemm(
                -1.0,
                MatRef::from_col_major(m1, p, p)?,
                MatRef::from_col_major(&y[i0 * p..i1 * p], p, bs)?,
                0.0,
                MatMut::from_col_major(pb, p, bs)?,
            )?;
            for t in 0..bs {
                let i = i0 + t;
                let a = af[i];
                let col = &pb[t * p..(t + 1) * p];
                let kcol = &st.kmn[i * m..(i + 1) * m];
                for ((pv, al), kv) in col[..m].iter().zip(st.alpha.iter()).zip(kcol) {
                    let pr = pv + al * a;
                    ga += pr * kv;
                    if *kv > 0.0 {
                        gg += pr * kv * libm::log(kv / amp);
                    }
                }
                let phi = &st.phi[i * p + m..(i + 1) * p];
                for (((dv, pv), mu), ph) in dfeat.iter_mut().zip(&col[m..]).zip(&st.mu[m..]).zip(phi) {
                    *dv += (pv + mu * a) * ph;
                }
            }
            i0 = i1;
        }
        // − ½⟨S, ∂K_mm⟩, S = α_uα_uᵀ − W_u.
        let (mut sa, mut sg) = (0.0, 0.0);
        for j in 0..m {
            for i in 0..m {
                let s = st.alpha[i] * st.alpha[j] - wu[j * m + i];
                let kv = st.kmm[j * m + i];
                sa += s * kv;
                if kv > 0.0 {
                    sg += s * kv * libm::log(kv / amp);
                }
            }
        }
        let noise = match self.lik {
            Likelihood::Probit { .. } => {
                let (pm, pv) = (&*st.pm, &*st.pv);
                probit_noise_grad(st.tau, st.nu, |s| (pm[s], pv[s]), self.lik.diff_noise_var())?
            }
            Likelihood::Gaussian { noise } => {
                let v = noise * noise;
                let beta2: f64 =
                    pairs.iter().zip(st.pm.iter()).map(|(q, m)| (q.magnitude - m) * (q.magnitude - m) / (v * v)).sum();
                v * beta2 - self.np as f64 + (p as f64 - tr_binv)
            }
        };
        let grad = [ga - 0.5 * sa, gg - 0.5 * sg, noise];
        if grad.iter().chain(dfeat.iter()).any(|g| !g.is_finite()) {
            return Err(LinalgError::NonFinite.into());
        }
        Ok(grad)
    }
}

/// The sparse evidence maximisation problem: the prior (items and fixed
/// inducing inputs), the preferences, the likelihood's kind (its noise is
/// `θ[2]`) and the EP tuning.
#[derive(Clone, Copy, Debug)]
pub struct SparseProblem<'a> {
    /// Items and inducing inputs.
    pub prior: &'a SparsePrior<'a>,
    /// The observed preferences.
    pub pairs: &'a [Pair],
    /// The likelihood (its noise parameter is replaced by `θ`'s).
    pub lik: Likelihood,
    /// EP tuning.
    pub ep: EpParams,
}

/// `log Z_EP(θ)` and its gradient for `θ = (log a, log γ, log s)` (the
/// layout of [`super::xpgp`] without relations). EP starts from `post`'s
/// current sites and leaves the converged posterior there. `work` holds
/// [`evidence_workspace_len`].
///
/// # Errors
/// Those of the fit and of the gradient; `DimensionMismatch` unless `θ`
/// and `grad` have 3 entries.
pub fn evidence_gradient<B: Backend>(
    backend: &mut B,
    problem: &SparseProblem<'_>,
    theta: &[f64],
    post: &mut SparsePosterior<'_>,
    grad: &mut [f64],
    work: &mut [f64],
) -> Result<f64, LearnError> {
    if theta.len() != 3 || grad.len() != 3 {
        return Err(LinalgError::DimensionMismatch.into());
    }
    refit_at(backend, problem, theta, post, work)?;
    post.kernel_gradient(backend, problem.pairs, grad, work)?;
    Ok(post.log_evidence())
}

/// Refits `post` at `θ`.
fn refit_at<B: Backend>(
    backend: &mut B,
    problem: &SparseProblem<'_>,
    theta: &[f64],
    post: &mut SparsePosterior<'_>,
    work: &mut [f64],
) -> Result<(), LearnError> {
    if theta.iter().any(|v| !v.is_finite()) {
        return Err(LinalgError::NonFinite.into());
    }
    let kernel = Kernel::Rbf { gamma: libm::exp(theta[1]) };
    let at = SparseProblem { lik: problem.lik.with_scale(libm::exp(theta[THETA_NOISE])), ..*problem };
    post.refit(backend, &at, &kernel, libm::exp(theta[0]), work)
}

/// Maximises the sparse `log Z_EP` over `θ` within `search`'s box by the
/// parent's projected L-BFGS ([`super::hyper::minimize_until`]) with warm-started EP, leaving
/// the best `θ` in `theta` and its posterior in `post`. `work` holds
/// [`evidence_workspace_len`] plus
/// [`super::hyper::minimize_workspace_len`]`(3, search.opt.memory)`.
///
/// # Errors
/// Those of [`evidence_gradient`] at the starting point, shapes, bounds.
pub fn fit_hyper<B: Backend>(
    backend: &mut B,
    problem: &SparseProblem<'_>,
    theta: &mut [f64],
    search: &Search<'_>,
    post: &mut SparsePosterior<'_>,
    work: &mut [f64],
) -> Result<OptReport, LearnError> {
    fit_hyper_until(backend, problem, theta, search, post, work, |_| false)
}

/// [`fit_hyper`] that calls `stop(iteration)` after each optimiser
/// iteration and ends the search where it returns `true` (as the dense
/// fit's `fit_hyper_until`: a caller's cancellation between steps; `post`
/// is then not refitted at `θ` and the caller discards it).
pub fn fit_hyper_until<B: Backend, S: FnMut(usize) -> bool>(
    backend: &mut B,
    problem: &SparseProblem<'_>,
    theta: &mut [f64],
    search: &Search<'_>,
    post: &mut SparsePosterior<'_>,
    work: &mut [f64],
    stop: S,
) -> Result<OptReport, LearnError> {
    let Search { lo, hi, ref opt } = *search;
    search_evidence(
        theta,
        (lo, hi),
        opt,
        work,
        |th, g, w| match g {
            Some(g) => evidence_gradient(backend, problem, th, post, g, w),
            None => refit_at(backend, problem, th, post, w).map(|()| 0.0),
        },
        stop,
    )
}
