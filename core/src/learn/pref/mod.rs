//! Probabilistic preference learning: the pairwise probit GP by
//! expectation propagation (000 §5 eq. 10; 001 §3.2, §4.1 eqs. 6–12), the
//! score-difference GP in closed form (000 §5, last part), the XPGP prior
//! with relational graph kernels (001 eqs. 1, 2, 5; §7), hyperparameters by
//! the EP evidence ([`hyper`]), and greedy active choice of the next pairs
//! (001 §5, [`active`]); [`device`] holds the kind-8 posterior on a device
//! (ADF update per preference, `P(i ≻ j)`, next pair); [`sparse`] runs the
//! same EP on a rank-`m` (DTC) prior over `m ≪ n` inducing inputs, with no
//! `n × n` matrix.
//!
//! # The model
//!
//! `n` items with latent values `f ~ N(0, K)`. A preference `w ≻ l` is a
//! [`Pair`] and has likelihood
//!
//! ```text
//! Probit { sigma }:   P(w ≻ l | f) = Φ((f_w − f_l) / (√2·σ))          (001 §3.2; 000 eq. 10)
//! Gaussian { noise }: magnitude = f_w − f_l + ε,  ε ~ N(0, noise²)    (000 §5, score differences)
//! ```
//!
//! Write `d = e_w − e_l` and `u = dᵀf`. EP replaces each likelihood by a
//! **rank-one Gaussian site** on `u`, `t̃(f) = Z̃·exp(−½·τ̃·u² + ν̃·u)`
//! (precision `τ̃ ≥ 0`, shift `ν̃`). It is 001's two-dimensional site of
//! eq. 7 with its only informative direction kept: the likelihood depends
//! on `(f_w, f_l)` through `u` alone, so the moment-matched 2-D site has
//! rank one along `ϱ = (1, −1)` (001 eq. 11 updates `Σ̂` only along `ϱ`).
//! With `W = Σ_s τ̃_s d_s d_sᵀ` (a weighted Laplacian of the preference
//! graph) and `h = Σ_s ν̃_s d_s`, the posterior is
//! `N(μ, Σ)`, `Σ = (K⁻¹ + W)⁻¹`, `μ = Σh` (001 eq. 8).
//!
//! # How it is computed, and why it does not produce NaN
//!
//! - `K + εI = L·Lᵀ` (Cholesky; **jitter policy**: `ε = 0` first, then
//!   `ε = 10⁻¹⁰·k̄, 10⁻⁹·k̄, …, 10⁻⁴·k̄` with `k̄` the mean of `diag K` (1 if
//!   that is 0) until the factorisation succeeds; the `ε` used is
//!   [`PrefPosterior::jitter`]; beyond `10⁻⁴·k̄` the fit fails with
//!   `NotPositiveDefinite`). Duplicated items and low-rank kernels take
//!   this path.
//! - `B = I + LᵀWL` (`n × n`), whose eigenvalues are all `≥ 1`: its
//!   Cholesky factorisation cannot fail for `W ⪰ 0`, and its condition
//!   number is at most `1 + λ_max(K)·λ_max(W)`. Every site precision is
//!   bounded, `0 ≤ τ̃ < 1/(2σ²)` (below), so `B` stays well conditioned
//!   however contradictory or repeated the preferences are. `K⁻¹` is never
//!   formed or applied: `Σ = CᵀC` with `C = L_B⁻¹Lᵀ` (one triangular
//!   solve), and `K⁻¹μ = h − Wμ`.
//! - The variance of a difference `f_w − f_l` is computed as
//!   `‖C(e_w − e_l)‖²`, never as `Σ_ww + Σ_ll − 2Σ_wl`: when two items share
//!   a large common variance (a nearly constant kernel, near-duplicates)
//!   and many preferences pin their difference, the latter cancels to
//!   noise (seen: 2 % relative error at a common variance 10⁶ and a
//!   difference variance 5·10⁻⁹, enough to keep EP from converging), the
//!   former loses only `~ε·‖C‖/‖C·d‖`.
//! - The cavity of a site is computed without dividing by a marginal
//!   variance: with the posterior marginal `N(m_s, v_s)` of `u_s`,
//!   `v₋ = v_s/(1 − τ̃v_s)`, `μ₋ = (m_s − v_s·ν̃)/(1 − τ̃v_s)`; a site whose
//!   `1 − τ̃v_s ≤ 10⁻¹⁰` (a cavity that rounding made improper) keeps its
//!   old value that round (counted in [`PrefPosterior::skipped`]).
//! - The moment match of the probit site (001 eqs. 10–12 along `ϱ`),
//!   with `c² = 2σ²`, `s² = c² + v₋`, `z = μ₋/s`, `r = N(z)/Φ(z)`,
//!   `b = r(z + r)/s²`:
//!   `τ̃ = b/(1 − v₋b)`, `ν̃ = (r/s + μ₋b)/(1 − v₋b)`. Since
//!   `0 < r(z + r) < 1`, `1 − v₋b > c²/s² > 0`, so `τ̃ < 1/c²` always, and
//!   nothing divides by `v₋` (a site in the null space of `K`, `v₋ = 0`, is
//!   fine). `r`, `z + r` (formed without cancellation) and `log Φ(z)` are
//!   [`crate::special`]'s, the same the device ADF update uses (no
//!   underflow for any `z`).
//!
//! # EP schedule and convergence
//!
//! **Parallel EP with damping**: each round computes the posterior from
//! the current sites, then
//! updates every site from its cavity, `τ̃ ← (1 − δ)·τ̃ + δ·τ̃_new` (and the
//! same for `ν̃`), `δ` starting at [`EpParams::damping`] (0.8 by default),
//! halved (down to 1/8) after any round whose largest site change exceeds
//! the previous round's — the onset of the oscillation undamped parallel
//! EP can fall into — and grown back by 1.25× (up to the initial value)
//! after a round that moved the sites less. Parallel rather than
//! sequential because one round is three BLAS-3 calls instead of `m`
//! rank-one updates of `Σ`. **Convergence**: the round in which every site
//! would move by less than [`EpParams::tol`] in the scale-free units
//! `c²·|Δτ̃|` and `c·|Δν̃|` (`c = √2σ`); that last update is not applied,
//! so the sites and the posterior of that round are exactly each other's
//! (a warm start at a fixed point costs one posterior). No convergence within [`EpParams::max_iter`]
//! rounds is `NoConvergence`, never a half-converged answer. The Gaussian
//! likelihood needs no iteration: its sites are exact (`τ̃ = 1/noise²`,
//! `ν̃ = magnitude/noise²`), one round gives the exact posterior.
//!
//! # One round in `≈ 4n³/3` flops
//!
//! The prior is factored *upper* triangular, `K + εI = U·Uᵀ` (the Cholesky
//! of `K` with the item order reversed, reversed back), and the posterior
//! is `Σ = U·B⁻¹·Uᵀ` with `B = I + UᵀWU` (`W = Σ_s τ̃_s d_s d_sᵀ`,
//! `d_s = e_w − e_l`). With `B = L_B·L_Bᵀ`, `Σ = CᵀC` for
//! `C = L_B⁻¹·Uᵀ`, and `C` is *lower triangular* (a lower solve of a lower
//! right-hand side). So a round is: `WU` from the sites in O(m·n); the lower
//! triangle of `Uᵀ(WU)` by row blocks, the `I`-th block needing only the
//! first `(I+1)·nb` columns of `Uᵀ` (`≈ 2n³/3`); the Cholesky of `B`
//! (`n³/3`); `C` by column blocks, the `J`-th block solved only on rows
//! `≥ J·nb` (`≈ n³/3`; [`Backend::solve_lower_lower_in_place`], whose
//! blocks are independent, so that a multi-threaded backend solves them
//! concurrently). With a lower factor of `K` instead, the same round
//! is a full gemm, a Cholesky and a full triangular solve, `≈ 3.3n³`.
//! The variance of `f_w − f_l` is `‖C(e_w − e_l)‖²` over rows
//! `≥ min(w, l)` of the two columns.
//!
//! The round's O(m·n) work goes through the backend too, so that a
//! multi-threaded one runs all of it in parallel: forming `(WU)ᵀ` from the
//! sites ([`Backend::pair_scatter`], by output column) and the variances of
//! all `m` differences at once ([`Backend::pair_sq_dists`], stored with the
//! posterior). The convergence test and the site update then read the
//! stored variances, O(m) each: no second O(m·n) pass. Finiteness of `B`
//! is the backend's Cholesky's check.
//!
//! # The evidence
//!
//! R&W eq. 3.65 with rank-one sites, in its `n × n` form:
//! `log Z_EP = Σ_s log Z̃_s − ½·log|B| + ½·hᵀΣh`, where
//! `log Z̃_s = log Ẑ_s + ½·log(1 + τ̃v₋) − ½·(ν̃²v₋ + 2ν̃μ₋ − τ̃μ₋²)/(1 + τ̃v₋)`
//! and `Ẑ_s = Φ(z_s)` is the tilted normaliser (for the Gaussian
//! likelihood, `log Z̃_s = −½·log(2π·noise²) − magnitude²/(2·noise²)` and
//! the whole is exactly `log N(y | 0, DKDᵀ + noise²·I)`).
//!
//! # Predictions
//!
//! With `R = K⁻¹ − K⁻¹ΣK⁻¹ = W − WΣW` and `α = K⁻¹μ = h − Wμ` (no `K⁻¹`
//! needed), a new point with cross-kernel column `k*` has (000 §5)
//! mean `k*ᵀα` and variance `k** − k*ᵀRk*`; two new points have the
//! 2 × 2 covariance `[k(x¹,x²)] − [k*¹ k*²]ᵀR[k*¹ k*²]` (000 eq. 11's `R`).
//! For the difference `δ = f(x¹) − f(x²)` with mean `m` and variance `v`:
//! [`prob_latent`] `= Φ(m/√v)` is `P(f(x¹) > f(x²))`, 000 eq. 11;
//! [`prob_prefer`] `= Φ(m/√(2σ² + v))` is the predictive probability that
//! a judge *states* `x¹ ≻ x²` under the probit likelihood (001 §4.2 with
//! eqs. 13–14, whose `1 +` is `2σ²` in 001's scaled units).
//!
//! # Storage and scratch
//!
//! [`PrefPosterior`] lives in one caller slice of
//! [`PrefPosterior::storage_len`]`(n, m) = 3n² + 2n + 3m` elements: the
//! sites `τ̃` (`m`), `ν̃` (`m`), the factor `U` (`n × n`, column-major),
//! `C = L_B⁻¹Uᵀ` (`n × n`, lower triangular), `Σ = CᵀC` (`n × n`, column-major, both
//! triangles; formed once at convergence by row blocks, `≈ n³/3` flops), `μ` (`n`), `α` (`n`),
//! the variances of the pairs' differences (`m`).
//! [`PrefPosterior::fit`] needs [`fit_workspace_len`]`(n)` `= 3n² + n`
//! elements of scratch.
//!
//! # Errors
//!
//! [`LearnError::BadGraph`]: a pair index out of range or a self-pair; a
//! non-finite magnitude for the Gaussian likelihood.
//! [`LearnError::BadNoise`]: `σ` or `noise` not finite and `> 0`;
//! [`LearnError::BadDamping`], [`LearnError::BadTolerance`],
//! [`LearnError::NoIterations`]: EP parameters outside their domain.
//! `Numerics(..)`: shapes, workspace,
//! non-finite `K`, a kernel not positive semi-definite even with the
//! largest jitter, `NoConvergence`. A failed fit leaves no half-valid
//! posterior: the storage is only handed out as a [`PrefPosterior`] on
//! success.

use super::LearnError;
use crate::backend::{Backend, Tri};
use crate::graph::Pair;
use crate::special::{log_norm_cdf, norm_cdf, probit_ratio, HALF_LN_2PI};
use crate::{scratch, LinalgError, MatMut, MatRef};

pub mod active;
pub mod device;
pub mod hyper;
pub mod sparse;
pub mod xpgp;
pub mod xpgp_lowrank;

/// The smallest damping the adaptive rule goes down to.
const MIN_DAMPING: f64 = 0.125;

/// The likelihood of one preference (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Likelihood {
    /// `Φ((f_w − f_l)/(√2·σ))`; the pairs' magnitudes are ignored.
    Probit {
        /// Noise `σ` of each item's latent value, finite and `> 0`.
        sigma: f64,
    },
    /// `magnitude ~ N(f_w − f_l, noise²)`: the score-difference GP.
    Gaussian {
        /// Standard deviation of an observed difference, finite and `> 0`.
        noise: f64,
    },
}

impl Likelihood {
    /// The noise parameter (`σ` or `noise`).
    pub fn scale(&self) -> f64 {
        match *self {
            Likelihood::Probit { sigma } => sigma,
            Likelihood::Gaussian { noise } => noise,
        }
    }

    /// The same likelihood with its noise parameter replaced.
    pub fn with_scale(&self, s: f64) -> Self {
        match *self {
            Likelihood::Probit { .. } => Likelihood::Probit { sigma: s },
            Likelihood::Gaussian { .. } => Likelihood::Gaussian { noise: s },
        }
    }

    /// Variance of the noise on a difference: `2σ²` or `noise²`.
    fn diff_noise_var(&self) -> f64 {
        match *self {
            Likelihood::Probit { sigma } => 2.0 * sigma * sigma,
            Likelihood::Gaussian { noise } => noise * noise,
        }
    }

    fn check(&self) -> Result<(), LearnError> {
        let s = self.scale();
        if s.is_finite() && s > 0.0 && self.diff_noise_var() > 0.0 && self.diff_noise_var().is_finite() {
            Ok(())
        } else {
            Err(LearnError::BadNoise)
        }
    }
}

/// EP tuning.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct EpParams {
    /// Initial (and largest) damping `δ ∈ (0, 1]` of the parallel site
    /// updates (1 = undamped); halved (down to 1/8) after a round whose
    /// largest site change exceeds the previous round's, grown back by
    /// 1.25× after one that moved less.
    pub damping: f64,
    /// Convergence threshold on `c²·|Δτ̃|` and `c·|Δν̃|`, `> 0`.
    pub tol: f64,
    /// Rounds before `NoConvergence`, `≥ 1`.
    pub max_iter: usize,
}

impl Default for EpParams {
    /// `δ = 0.8`, `tol = 1e-8`, 500 rounds.
    fn default() -> Self {
        EpParams { damping: 0.8, tol: 1e-8, max_iter: 500 }
    }
}

impl EpParams {
    /// Parameters with the given damping, tolerance and round budget.
    pub fn new(damping: f64, tol: f64, max_iter: usize) -> Self {
        EpParams { damping, tol, max_iter }
    }

    fn check(&self) -> Result<(), LearnError> {
        if !(self.damping > 0.0 && self.damping <= 1.0) {
            Err(LearnError::BadDamping)
        } else if !(self.tol > 0.0 && self.tol.is_finite()) {
            Err(LearnError::BadTolerance)
        } else if self.max_iter == 0 {
            Err(LearnError::NoIterations)
        } else {
            Ok(())
        }
    }
}

/// Checks the pairs against `n` items (and the magnitudes for the
/// Gaussian likelihood).
pub fn check_pairs(n: usize, pairs: &[Pair], lik: &Likelihood) -> Result<(), LearnError> {
    for p in pairs {
        if p.winner >= n || p.loser >= n || p.winner == p.loser {
            return Err(LearnError::BadGraph);
        }
        if matches!(lik, Likelihood::Gaussian { .. }) && !p.magnitude.is_finite() {
            return Err(LearnError::BadGraph);
        }
    }
    Ok(())
}

/// `P(f(x¹) > f(x²)) = Φ(m/√v)` for a latent difference `N(m, v)`
/// (000 eq. 11); `v = 0` gives 1, ½ or 0 by the sign of `m`.
pub fn prob_latent(mean_diff: f64, var_diff: f64) -> f64 {
    if var_diff > 0.0 {
        norm_cdf(mean_diff / libm::sqrt(var_diff))
    } else if mean_diff > 0.0 {
        1.0
    } else if mean_diff < 0.0 {
        0.0
    } else {
        0.5
    }
}

/// Predictive `P(x¹ ≻ x²) = Φ(m/√(2σ² + v))` under the probit likelihood
/// for a latent difference `N(m, v)` (001 §4.2, eqs. 13–14).
pub fn prob_prefer(mean_diff: f64, var_diff: f64, sigma: f64) -> f64 {
    norm_cdf(mean_diff / libm::sqrt(2.0 * sigma * sigma + var_diff.max(0.0)))
}

/// The tilted moments of one probit site: from the cavity `(μ₋, v₋)` and
/// `c² = 2σ²`, the new `(τ̃, ν̃, log Ẑ)` (see the module docs).
#[inline]
pub(crate) fn probit_site(mu_c: f64, v_c: f64, c2: f64) -> (f64, f64, f64) {
    let (a, b, z) = probit_match(mu_c, v_c, c2);
    let den = 1.0 - v_c * b;
    (b / den, (a + mu_c * b) / den, log_norm_cdf(z))
}

/// The moment match of one probit site on a difference with cavity mean
/// `μ₋`, variance `v₋` and `c² = 2σ²` (module docs; the host's EP and the
/// device's ADF step both use it): `(r/s, b, z)` with `s² = c² + v₋`,
/// `z = μ₋/s`, `r = N(z)/Φ(z)` and `b = r(z + r)/s²`.
#[inline]
pub(crate) fn probit_match(mu_c: f64, v_c: f64, c2: f64) -> (f64, f64, f64) {
    let s2 = c2 + v_c;
    let s = libm::sqrt(s2);
    let z = mu_c / s;
    let (r, zr) = probit_ratio(z);
    (r / s, r * zr / s2, z)
}

/// The cavity `(μ₋, v₋)` of a site `(τ̃, ν̃)` from the posterior marginal
/// `(m, v)` of its `u`, or `None` if rounding made it improper.
#[inline]
pub(crate) fn cavity(m: f64, v: f64, tau: f64, nu: f64) -> Option<(f64, f64)> {
    let den = 1.0 - tau * v;
    if den > 1e-10 && v >= 0.0 {
        Some(((m - v * nu) / den, v / den))
    } else {
        None
    }
}

/// `log Z̃_s − log Ẑ_s` of the module docs: the site normaliser's part
/// that is not the tilted normaliser.
#[inline]
fn site_log_norm_rest(tau: f64, nu: f64, mu_c: f64, v_c: f64) -> f64 {
    let a = 1.0 + tau * v_c;
    0.5 * libm::log(a) - 0.5 * (nu * nu * v_c + 2.0 * nu * mu_c - tau * mu_c * mu_c) / a
}

/// Scratch of [`PrefPosterior::fit`] for `n` items.
pub fn fit_workspace_len(n: usize) -> usize {
    FitScratch::len(n)
}

scratch! {
    /// Scratch of one posterior computation.
    struct FitScratch(n: usize) {
        /// `Uᵀ` (column-major: its columns are the rows of `U`).
        lt: n.saturating_mul(n),
        /// `(W·U)ᵀ`.
        wl: n.saturating_mul(n),
        /// `B = I + UᵀWU` (lower triangle), then its factor.
        b: n.saturating_mul(n),
        /// `h`.
        h: n,
    }
}

scratch! {
    /// The storage of a [`PrefPosterior`].
    struct Store(n: usize, m: usize) {
        tau: m,
        nu: m,
        l: n.saturating_mul(n),
        c: n.saturating_mul(n),
        sigma: n.saturating_mul(n),
        mean: n,
        alpha: n,
        /// The variance of each pair's difference at the current posterior.
        var: m,
    }
}

/// Two new points whose score difference a posterior predicts
/// ([`PrefPosterior::predict_pair`], [`sparse::SparsePosterior::predict_pair`]):
/// their cross-kernel columns against the posterior's inputs (the items,
/// or the inducing inputs of a sparse posterior, each column scaled as
/// that posterior's kernel) and their prior values `k11 = k(x¹,x¹)`,
/// `k22`, `k12`.
#[derive(Clone, Copy, Debug)]
pub struct NewPair<'a> {
    /// `k(·, x¹)` over the posterior's inputs.
    pub k1: &'a [f64],
    /// `k(·, x²)` over the posterior's inputs.
    pub k2: &'a [f64],
    /// `k(x¹, x¹)`.
    pub k11: f64,
    /// `k(x², x²)`.
    pub k22: f64,
    /// `k(x¹, x²)`.
    pub k12: f64,
}

/// A preference-GP posterior in caller storage (see the
/// [module docs](self) for the mathematics and the layout).
#[derive(Debug)]
pub struct PrefPosterior<'s> {
    n: usize,
    m: usize,
    lik: Likelihood,
    jitter: f64,
    log_evidence: f64,
    iterations: usize,
    skipped: usize,
    tau: &'s mut [f64],
    nu: &'s mut [f64],
    l: &'s mut [f64],
    c: &'s mut [f64],
    sigma: &'s mut [f64],
    mean: &'s mut [f64],
    alpha: &'s mut [f64],
    var: &'s mut [f64],
}

impl<'s> PrefPosterior<'s> {
    /// Elements of storage for `n` items and `m` pairs: `3n² + 2n + 3m`.
    pub fn storage_len(n: usize, m: usize) -> usize {
        Store::len(n, m)
    }

    /// A posterior of `n` items and `m` pairs with all sites zero (the
    /// prior, before any fit): the starting point of
    /// [`refit`](Self::refit) and of [`hyper::evidence_gradient`]. Its
    /// mean, covariance and evidence are not valid until a `refit`
    /// succeeds.
    ///
    /// # Errors
    /// `WorkspaceTooSmall` if `storage` is shorter than
    /// [`storage_len`](Self::storage_len).
    pub fn new(n: usize, m: usize, storage: &'s mut [f64]) -> Result<Self, LearnError> {
        let (Store { tau, nu, l, c, sigma, mean, alpha, var }, _) = Store::split(storage, n, m)?;
        for v in [&mut *tau, &mut *nu, &mut *l, &mut *c, &mut *sigma, &mut *mean, &mut *alpha, &mut *var] {
            v.iter_mut().for_each(|x| *x = 0.0);
        }
        Ok(PrefPosterior {
            n,
            m,
            lik: Likelihood::Probit { sigma: core::f64::consts::FRAC_1_SQRT_2 },
            jitter: 0.0,
            log_evidence: 0.0,
            iterations: 0,
            skipped: 0,
            tau,
            nu,
            l,
            c,
            sigma,
            mean,
            alpha,
            var,
        })
    }

    /// Fits the posterior of `n = k.nrows()` items under `pairs` from zero
    /// sites (the prior). `k` is the prior covariance (lower triangle read).
    ///
    /// # Errors
    /// See the [module docs](self#errors).
    pub fn fit<B: Backend>(
        backend: &mut B,
        k: MatRef<'_, f64>,
        pairs: &[Pair],
        lik: Likelihood,
        params: &EpParams,
        storage: &'s mut [f64],
        work: &mut [f64],
    ) -> Result<Self, LearnError> {
        let mut post = Self::new(k.nrows(), pairs.len(), storage)?;
        post.refit(backend, k, pairs, lik, params, work)?;
        Ok(post)
    }

    /// Refits with a new prior covariance `k` and/or likelihood, starting
    /// EP from the current sites (a warm start: the hyperparameter search
    /// calls this once per evaluation). Same `n` and pairs as before.
    ///
    /// # Errors
    /// See the [module docs](self#errors); on error the posterior is not
    /// valid until a later `refit` succeeds.
    pub fn refit<B: Backend>(
        &mut self,
        backend: &mut B,
        k: MatRef<'_, f64>,
        pairs: &[Pair],
        lik: Likelihood,
        params: &EpParams,
        work: &mut [f64],
    ) -> Result<(), LearnError> {
        let n = self.n;
        if k.nrows() != n || k.ncols() != n || pairs.len() != self.m {
            return Err(LinalgError::DimensionMismatch.into());
        }
        lik.check()?;
        params.check()?;
        check_pairs(n, pairs, &lik)?;
        if !k.all_finite() {
            return Err(LinalgError::NonFinite.into());
        }
        let (mut ws, _) = FitScratch::split(work, n)?;
        self.lik = lik;
        // `self.l` ← chol(P(K + εI)P) with P the reversal, then
        // U = P·chol·P (upper) into `ws.lt` as Uᵀ and into `self.l`.
        self.jitter = factor_with_jitter(backend, k, self.l, true)?;
        // U(i, j) = chol(n−1−i, n−1−j): the column-major buffer reversed.
        self.l.reverse();
        transpose_into(n, self.l, ws.lt);
        self.iterations = 0;
        self.skipped = 0;
        let c2 = lik.diff_noise_var();
        if let Likelihood::Gaussian { noise } = lik {
            let p = 1.0 / (noise * noise);
            for (s, pr) in pairs.iter().enumerate() {
                self.tau[s] = p;
                self.nu[s] = pr.magnitude * p;
            }
            self.posterior(backend, pairs, &mut ws)?;
            self.iterations = 1;
            self.form_cov(backend)?;
        } else {
            let c = libm::sqrt(c2);
            let mut delta = params.damping;
            let mut last_change = f64::INFINITY;
            loop {
                self.posterior(backend, pairs, &mut ws)?;
                if self.iterations >= params.max_iter {
                    return Err(LinalgError::NoConvergence { iterations: self.iterations }.into());
                }
                self.iterations += 1;
                // How far does this round move the sites? If less than the
                // tolerance, the current sites are the fixed point and the
                // posterior just computed is theirs: stop without moving
                // them (one posterior fewer than updating and recomputing).
                // One pass moves them, their old values kept in B's scratch
                // (free until the next posterior) to be put back if so;
                // where 2m values do not fit there, a first pass only
                // measures and a second one moves. Same sites either way.
                let m = self.m;
                let change = match ws.b.get_mut(..2 * m) {
                    Some(saved) => {
                        let (old_tau, old_nu) = saved.split_at_mut(m);
                        old_tau.copy_from_slice(self.tau);
                        old_nu.copy_from_slice(self.nu);
                        let moved = self.site_round(pairs, c2, c, delta, true);
                        if !matches!(moved, Ok(change) if change >= params.tol) {
                            self.tau.copy_from_slice(old_tau);
                            self.nu.copy_from_slice(old_nu);
                        }
                        moved?
                    }
                    None => {
                        let change = self.site_round(pairs, c2, c, delta, false)?;
                        if change >= params.tol {
                            self.site_round(pairs, c2, c, delta, true)?;
                        }
                        change
                    }
                };
                if change < params.tol {
                    self.form_cov(backend)?;
                    break;
                }
                // A round that moved the sites more than the one before
                // is the start of an oscillation: halve the damping.
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

    /// One damped update of every probit site from its cavity at the
    /// current posterior; returns the largest move in the scale-free units
    /// of the module docs. With `apply = false` the sites are not written
    /// (the convergence test); with `apply = true` they move. Either way
    /// [`Self::skipped`] counts the improper cavities.
    fn site_round(&mut self, pairs: &[Pair], c2: f64, c: f64, delta: f64, apply: bool) -> Result<f64, LearnError> {
        let (mean, var) = (&*self.mean, &*self.var);
        let marg = |s: usize| (mean[pairs[s].winner] - mean[pairs[s].loser], var[s]);
        let (change, skipped) = site_pass(self.tau, self.nu, marg, c2, c, delta, apply)?;
        self.skipped = skipped;
        Ok(change)
    }

    /// The posterior marginal `(m_s, v_s)` of each site's difference, the
    /// variance from the round's batched [`Backend::pair_sq_dists`].
    fn site_marginals<'a>(&'a self, pairs: &'a [Pair]) -> impl Fn(usize) -> (f64, f64) + 'a {
        let (mean, var) = (&*self.mean, &*self.var);
        move |s: usize| (mean[pairs[s].winner] - mean[pairs[s].loser], var[s])
    }

    /// Posterior from the sites: `C = L_B⁻¹Uᵀ` (`Σ = CᵀC`), `μ = Σh`,
    /// `α = h − Wμ`, the variances of the pairs' differences; leaves
    /// `−½log|B| + ½hᵀΣh` in `log_evidence`. `Σ` itself is formed by
    /// [`Self::form_cov`] once EP has converged.
    fn posterior<B: Backend>(
        &mut self,
        backend: &mut B,
        pairs: &[Pair],
        ws: &mut FitScratch<'_>,
    ) -> Result<(), LearnError> {
        let n = self.n;
        // (W·U)ᵀ = UᵀW from the sites, O(m·n) on contiguous columns of
        // Uᵀ (zero above the diagonal): site s adds ±τ̃(Uᵀe_w − Uᵀe_l) to
        // columns w and l (the backend may do the columns in parallel).
        ws.h.iter_mut().for_each(|v| *v = 0.0);
        for (s, p) in pairs.iter().enumerate() {
            ws.h[p.winner] += self.nu[s];
            ws.h[p.loser] -= self.nu[s];
        }
        backend.pair_scatter(
            MatRef::from_col_major(ws.lt, n, n)?,
            Tri::Lower,
            pairs,
            self.tau,
            MatMut::from_col_major(ws.wl, n, n)?,
        )?;
        {
            // Lower triangle of B = I + Uᵀ(WU), Uᵀ lower triangular.
            let ut = MatRef::from_col_major(ws.lt, n, n)?;
            let wu = MatRef::from_col_major(ws.wl, n, n)?.t();
            let mut b = MatMut::from_col_major(ws.b, n, n)?;
            backend.gemm_lower(1.0, ut, Tri::Lower, wu, Tri::Full, 0.0, b.rb_mut())?;
            for i in 0..n {
                *b.at_mut(i, i) += 1.0;
            }
            // A non-finite B is the backend's `NonFinite` (its contract).
            backend.cholesky_in_place(b)?;
        }
        let lb = MatRef::from_col_major(ws.b, n, n)?;
        let log_det_b: f64 = (0..n).map(|i| 2.0 * libm::log(lb.at(i, i))).sum();
        // C = L_B⁻¹·Uᵀ, so that Σ = CᵀC and var(dᵀf) = ‖C·d‖²; lower
        // triangular like Uᵀ, so column block [c0, c1) is solved on rows
        // ≥ c0 only (the rows above stay exactly zero).
        // The lower triangles only: C's strict upper triangle is zero from
        // `new` on (the solve keeps it so).
        for j in 0..n {
            self.c[j * n + j..(j + 1) * n].copy_from_slice(&ws.lt[j * n + j..(j + 1) * n]);
        }
        backend.solve_lower_lower_in_place(lb, MatMut::from_col_major(self.c, n, n)?)?;
        // μ = Cᵀ(C·h), over the nonzero column tails of C only.
        let cr = MatRef::from_col_major(self.c, n, n)?;
        backend.pair_sq_dists(cr, pairs, self.var)?;
        let ch = ws.wl.get_mut(..n).ok_or(LinalgError::DimensionMismatch)?;
        lower_normal_apply(n, self.c, ws.h, ch, self.mean);
        let quad: f64 = ws.h.iter().zip(self.mean.iter()).map(|(a, b)| a * b).sum();
        self.alpha.copy_from_slice(ws.h);
        for (s, p) in pairs.iter().enumerate() {
            let t = self.tau[s] * (self.mean[p.winner] - self.mean[p.loser]);
            self.alpha[p.winner] -= t;
            self.alpha[p.loser] += t;
        }
        self.log_evidence = -0.5 * log_det_b + 0.5 * quad;
        if !(self.log_evidence.is_finite() && self.mean.iter().all(|v| v.is_finite())) {
            return Err(LinalgError::NonFinite.into());
        }
        Ok(())
    }

    /// `Σ ← CᵀC`, both triangles. `C` is lower triangular, so `Cᵀ` is upper
    /// triangular and the lower triangle costs `≈ n³/3` flops against `n³`
    /// for a syrk ([`Backend::gemm_lower`]); then mirrored.
    fn form_cov<B: Backend>(&mut self, backend: &mut B) -> Result<(), LearnError> {
        let n = self.n;
        let cr = MatRef::from_col_major(self.c, n, n)?;
        {
            let sg = MatMut::from_col_major(self.sigma, n, n)?;
            backend.gemm_lower(1.0, cr.t(), Tri::Upper, cr, Tri::Lower, 0.0, sg)?;
        }
        // The lower triangle is checked, then copied onto the upper one.
        if !(0..n).all(|j| crate::linalg::slice_finite(&self.sigma[j * n + j..(j + 1) * n])) {
            return Err(LinalgError::NonFinite.into());
        }
        crate::linalg::blas::mirror_lower(MatMut::from_col_major(self.sigma, n, n)?, 1.0);
        Ok(())
    }

    /// `Σ_s log Z̃_s` at the current posterior (see the module docs).
    fn site_terms(&self, pairs: &[Pair]) -> Result<f64, LearnError> {
        let mut acc = 0.0;
        match self.lik {
            Likelihood::Gaussian { noise } => {
                let v = noise * noise;
                for p in pairs {
                    acc += -HALF_LN_2PI - libm::log(noise) - p.magnitude * p.magnitude / (2.0 * v);
                }
            }
            Likelihood::Probit { .. } => {
                let c2 = self.lik.diff_noise_var();
                acc = probit_site_terms(self.tau, self.nu, self.site_marginals(pairs), c2)?;
            }
        }
        Ok(acc)
    }

    /// Number of items `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of pairs `m`.
    pub fn m(&self) -> usize {
        self.m
    }

    /// The likelihood of the last fit.
    pub fn likelihood(&self) -> Likelihood {
        self.lik
    }

    /// Posterior mean `μ` (`n`).
    pub fn mean(&self) -> &[f64] {
        self.mean
    }

    /// Posterior covariance `Σ` (`n × n`, column-major, both triangles).
    pub fn cov(&self) -> &[f64] {
        self.sigma
    }

    /// `α = K⁻¹μ` (`n`), the dual coefficients of the posterior mean:
    /// `E f(x*) = Σ_i α_i k(x*, x_i)`.
    pub fn alpha(&self) -> &[f64] {
        self.alpha
    }

    /// Site precisions `τ̃` (`m`).
    pub fn site_precision(&self) -> &[f64] {
        self.tau
    }

    /// Site shifts `ν̃` (`m`).
    pub fn site_shift(&self) -> &[f64] {
        self.nu
    }

    /// Upper triangular factor `U` of `K + εI = U·Uᵀ` (`n × n`,
    /// column-major, strict lower triangle zero; see the module docs).
    pub fn prior_factor(&self) -> &[f64] {
        self.l
    }

    /// The jitter `ε` added to `diag K` (0 unless `K` was singular).
    pub fn jitter(&self) -> f64 {
        self.jitter
    }

    /// The EP approximation of `log p(pairs | K, likelihood)` (exact for
    /// the Gaussian likelihood).
    pub fn log_evidence(&self) -> f64 {
        self.log_evidence
    }

    /// EP rounds of the last fit (1 for the Gaussian likelihood).
    pub fn iterations(&self) -> usize {
        self.iterations
    }

    /// Sites left unchanged in the last round because their cavity was
    /// improper (see the module docs); normally 0.
    pub fn skipped(&self) -> usize {
        self.skipped
    }

    /// Mean and variance of `f_i − f_j` (001 eqs. 13–14).
    ///
    /// # Errors
    /// `BadGraph` if `i` or `j` is not a fitted item.
    pub fn pair(&self, i: usize, j: usize) -> Result<(f64, f64), LearnError> {
        if i >= self.n || j >= self.n {
            return Err(LearnError::BadGraph);
        }
        Ok(self.marginal(i, j))
    }

    /// Predictive `P(i ≻ j)` for two training items under the fitted
    /// likelihood's noise ([`prob_prefer`]; for the Gaussian likelihood
    /// the probability that the noisy difference is positive).
    ///
    /// # Errors
    /// `BadGraph` if `i` or `j` is not a fitted item.
    pub fn prob(&self, i: usize, j: usize) -> Result<f64, LearnError> {
        let (m, v) = self.pair(i, j)?;
        let extra = self.lik.diff_noise_var();
        Ok(norm_cdf(m / libm::sqrt(extra + v.max(0.0))))
    }

    /// Mean and variance of `f_i − f_j`: the variance as `‖C(e_i − e_j)‖²`,
    /// free of the cancellation in `Σ_ii + Σ_jj − 2Σ_ij` when the items
    /// share a large common variance.
    #[inline]
    fn marginal(&self, i: usize, j: usize) -> (f64, f64) {
        marginal_of(self.n, self.c, self.mean, i, j)
    }

    /// The factor `C = L_B⁻¹Uᵀ` with `Σ = CᵀC` (`n × n`, column-major,
    /// lower triangular):
    /// `‖C(e_i − e_j)‖²` is the variance of `f_i − f_j`.
    pub fn cov_factor(&self) -> &[f64] {
        self.c
    }

    /// `y ← R·x` with `R = W − WΣW` (`n`): O(m + n²). `tmp` holds `2n`.
    pub fn apply_r(&self, pairs: &[Pair], x: &[f64], y: &mut [f64], tmp: &mut [f64]) -> Result<(), LearnError> {
        let n = self.n;
        if x.len() != n || y.len() != n || tmp.len() < 2 * n || pairs.len() != self.m {
            return Err(LinalgError::DimensionMismatch.into());
        }
        let (wx, swx) = tmp.split_at_mut(n);
        apply_w(pairs, self.tau, x, wx);
        crate::linalg::blas::gemv(1.0, MatRef::from_col_major(self.sigma, n, n)?, wx, 0.0, &mut swx[..n])?;
        apply_w(pairs, self.tau, &swx[..n], y);
        for i in 0..n {
            y[i] = wx[i] - y[i];
        }
        Ok(())
    }

    /// The matrix `W` of the inductive model (kind 9: `K⁻¹ − K⁻¹ΣK⁻¹`),
    /// which is `R = W − WΣW` of [`Self::apply_r`] (`W` there the site
    /// precisions): `r` (`n × n`, column-major) gets `R` column by column.
    /// `work` holds `3n`.
    ///
    /// # Errors
    /// Shapes, workspace.
    pub fn inductive_w(&self, pairs: &[Pair], r: &mut [f64], work: &mut [f64]) -> Result<(), LearnError> {
        let n = self.n;
        if r.len() != n * n || work.len() < 3 * n {
            return Err(LinalgError::DimensionMismatch.into());
        }
        let (e, tmp) = work.split_at_mut(n);
        for (j, col) in r.chunks_exact_mut(n.max(1)).enumerate().take(n) {
            e.fill(0.0);
            e[j] = 1.0;
            self.apply_r(pairs, e, col, &mut tmp[..2 * n])?;
        }
        Ok(())
    }

    /// Predictions at `t` new points from the cross-kernel `k_star`
    /// (`n × t`, `k(x_i, x*_j)`) and the prior variances `k_diag` (`t`):
    /// means `k*ᵀα` and variances `k** − k*ᵀRk*` (000 §5), clamped at 0.
    /// `work` holds [`predict_workspace_len`]`(n)`.
    ///
    /// # Errors
    /// Shapes, workspace, non-finite input.
    pub fn predict(
        &self,
        pairs: &[Pair],
        k_star: MatRef<'_, f64>,
        k_diag: &[f64],
        mean_out: &mut [f64],
        var_out: &mut [f64],
        work: &mut [f64],
    ) -> Result<(), LearnError> {
        let (n, t) = (self.n, k_star.ncols());
        if k_star.nrows() != n || k_diag.len() != t || mean_out.len() != t || var_out.len() != t {
            return Err(LinalgError::DimensionMismatch.into());
        }
        if !k_star.all_finite() || k_diag.iter().any(|v| !v.is_finite()) {
            return Err(LinalgError::NonFinite.into());
        }
        if work.len() < predict_workspace_len(n) {
            return Err(LinalgError::WorkspaceTooSmall { needed: predict_workspace_len(n), got: work.len() }.into());
        }
        let (col, rest) = work.split_at_mut(n);
        let (rk, tmp) = rest.split_at_mut(n);
        for j in 0..t {
            (0..n).for_each(|i| col[i] = k_star.at(i, j));
            mean_out[j] = col.iter().zip(self.alpha.iter()).map(|(a, b)| a * b).sum();
            self.apply_r(pairs, col, rk, tmp)?;
            let q: f64 = col.iter().zip(rk.iter()).map(|(a, b)| a * b).sum();
            var_out[j] = (k_diag[j] - q).max(0.0);
        }
        Ok(())
    }

    /// Mean and variance of `f(x¹) − f(x²)` for two new points from their
    /// prior terms `new` (cross-kernel columns of `n` each; 000 eq. 11's
    /// `R`: `v = r₁₁ + r₂₂ − 2r₁₂`). `work` holds
    /// [`predict_workspace_len`]`(n)`.
    ///
    /// # Errors
    /// Shapes, workspace, non-finite input.
    pub fn predict_pair(&self, pairs: &[Pair], new: &NewPair<'_>, work: &mut [f64]) -> Result<(f64, f64), LearnError> {
        let NewPair { k1, k2, k11, k22, k12 } = *new;
        let n = self.n;
        if k1.len() != n || k2.len() != n {
            return Err(LinalgError::DimensionMismatch.into());
        }
        if work.len() < predict_workspace_len(n) {
            return Err(LinalgError::WorkspaceTooSmall { needed: predict_workspace_len(n), got: work.len() }.into());
        }
        if k1.iter().chain(k2.iter()).any(|v| !v.is_finite())
            || !(k11.is_finite() && k22.is_finite() && k12.is_finite())
        {
            return Err(LinalgError::NonFinite.into());
        }
        // The difference has cross-kernel k1 − k2 and prior variance k11 + k22 − 2k12.
        let (col, rest) = work.split_at_mut(n);
        let (rk, tmp) = rest.split_at_mut(n);
        (0..n).for_each(|i| col[i] = k1[i] - k2[i]);
        let mean: f64 = col.iter().zip(self.alpha.iter()).map(|(a, b)| a * b).sum();
        self.apply_r(pairs, col, rk, tmp)?;
        let q: f64 = col.iter().zip(rk.iter()).map(|(a, b)| a * b).sum();
        Ok((mean, (k11 + k22 - 2.0 * k12 - q).max(0.0)))
    }

    /// The matrix `Q = ααᵀ − R` (`n × n`, column-major) whose inner product
    /// with `∂K/∂θ` is twice the gradient of the log evidence with the sites
    /// held fixed (R&W eq. 5.27, adapted: `∂ log Z_EP/∂θ = ½·⟨Q, ∂K/∂θ⟩`).
    /// O(m·n + n²). `tmp` holds `n` elements.
    ///
    /// # Errors
    /// Shapes.
    pub fn evidence_grad_matrix(&self, pairs: &[Pair], q: &mut [f64], tmp: &mut [f64]) -> Result<(), LearnError> {
        self.evidence_grad_matrix_with(&mut crate::backend::Portable::new(&mut []), pairs, q, tmp)
    }

    /// [`evidence_grad_matrix`](Self::evidence_grad_matrix) with its two
    /// O(m·n) passes through `backend` ([`Backend::pair_scatter`] for `ΣW`,
    /// [`Backend::laplacian_columns`] for `W(ΣW)`), which may run them in
    /// parallel; the same result bit for bit.
    ///
    /// # Errors
    /// Shapes.
    pub fn evidence_grad_matrix_with<B: Backend>(
        &self,
        backend: &mut B,
        pairs: &[Pair],
        q: &mut [f64],
        tmp: &mut [f64],
    ) -> Result<(), LearnError> {
        let n = self.n;
        if q.len() != n * n || pairs.len() != self.m || tmp.len() < n {
            return Err(LinalgError::DimensionMismatch.into());
        }
        // q ← ΣW (column w gets +τ̃(Σe_w − Σe_l), column l the opposite),
        // then each column q_j ← W·q_j: q = WΣW.
        backend.pair_scatter(
            MatRef::from_col_major(self.sigma, n, n)?,
            Tri::Full,
            pairs,
            self.tau,
            MatMut::from_col_major(q, n, n)?,
        )?;
        backend.laplacian_columns(pairs, self.tau, MatMut::from_col_major(q, n, n)?, tmp)?;
        // q = WΣW now. R = W − WΣW; Q = ααᵀ − W + WΣW.
        for j in 0..n {
            for i in 0..n {
                q[j * n + i] += self.alpha[i] * self.alpha[j];
            }
        }
        for (s, p) in pairs.iter().enumerate() {
            let t = self.tau[s];
            q[p.winner * n + p.winner] -= t;
            q[p.loser * n + p.loser] -= t;
            q[p.loser * n + p.winner] += t;
            q[p.winner * n + p.loser] += t;
        }
        // Symmetrise the rounding (in tiles: both sides walked in cache).
        for j0 in (0..n).step_by(TILE) {
            for i0 in (0..=j0).step_by(TILE) {
                for j in j0..(j0 + TILE).min(n) {
                    for i in i0..(i0 + TILE).min(j) {
                        let v = 0.5 * (q[j * n + i] + q[i * n + j]);
                        q[j * n + i] = v;
                        q[i * n + j] = v;
                    }
                }
            }
        }
        Ok(())
    }

    /// `∂ log Z_EP / ∂ log s` for the likelihood's noise parameter `s`
    /// (`σ` or `noise`) at the fitted sites: for the probit,
    /// `Σ_s −r_s·z_s·c²/(c² + v₋,s)` (the explicit derivative of the tilted
    /// normalisers at fixed cavities, exact at an EP fixed point); for the
    /// Gaussian likelihood, `noise²·‖β‖² − m + tr(KR)` with
    /// `β = (y − Dμ)/noise²`, which needs the prior `k` (both triangles
    /// read; ignored for the probit) and `4n` elements of `tmp`.
    ///
    /// # Errors
    /// Shapes; an improper cavity.
    pub fn likelihood_grad(&self, pairs: &[Pair], k: MatRef<'_, f64>, tmp: &mut [f64]) -> Result<f64, LearnError> {
        let n = self.n;
        if pairs.len() != self.m {
            return Err(LinalgError::DimensionMismatch.into());
        }
        match self.lik {
            Likelihood::Probit { .. } => {
                let c2 = self.lik.diff_noise_var();
                probit_noise_grad(self.tau, self.nu, self.site_marginals(pairs), c2)
            }
            Likelihood::Gaussian { noise } => {
                if k.nrows() != n || k.ncols() != n || tmp.len() < 4 * n {
                    return Err(LinalgError::DimensionMismatch.into());
                }
                let v = noise * noise;
                let mut beta2 = 0.0;
                for (s, p) in pairs.iter().enumerate() {
                    let _ = s;
                    let b = (p.magnitude - (self.mean[p.winner] - self.mean[p.loser])) / v;
                    beta2 += b * b;
                }
                // tr(KR) = Σ_j (K R e_j)_j ... computed column by column:
                // tr(KR) = Σ_j k_jᵀ R e_j with k_j column j of K.
                let (col, rest) = tmp.split_at_mut(n);
                let (rcol, t2) = rest.split_at_mut(n);
                let mut tr = 0.0;
                for j in 0..n {
                    (0..n).for_each(|i| col[i] = k.at(i, j));
                    self.apply_r(pairs, col, rcol, t2)?;
                    tr += rcol[j];
                }
                Ok(v * beta2 - self.m as f64 + tr)
            }
        }
    }
}

/// Mean and variance of `f_i − f_j` from the lower-triangular factor `C`
/// (`Σ = CᵀC`, `n × n`) and the mean (see [`PrefPosterior::pair`]).
#[inline]
fn marginal_of(n: usize, c: &[f64], mean: &[f64], i: usize, j: usize) -> (f64, f64) {
    // C is lower triangular: both columns are zero above min(i, j).
    let lo = i.min(j);
    let (ci, cj) = (&c[i * n + lo..(i + 1) * n], &c[j * n + lo..(j + 1) * n]);
    (mean[i] - mean[j], crate::linalg::sq_dist(ci, cj))
}

/// One damped update of every probit site `s` from its cavity at the
/// posterior marginal `marg(s) = (m_s, v_s)` of its `u_s` (the module
/// docs' schedule; the dense and the sparse EP share it): returns the
/// largest move in the scale-free units `c²·|Δτ̃|`, `c·|Δν̃|` and the
/// number of improper cavities. With `apply = false` the sites are not
/// written (the convergence test).
pub(crate) fn site_pass(
    tau: &mut [f64],
    nu: &mut [f64],
    marg: impl Fn(usize) -> (f64, f64),
    c2: f64,
    c: f64,
    delta: f64,
    apply: bool,
) -> Result<(f64, usize), LearnError> {
    let mut change = 0.0f64;
    let mut skipped = 0;
    for s in 0..tau.len() {
        let (mu, v) = marg(s);
        let Some((mu_c, v_c)) = cavity(mu, v, tau[s], nu[s]) else {
            skipped += 1;
            continue;
        };
        // probit_site without the tilted normaliser, which is not needed here.
        let (a, b, _) = probit_match(mu_c, v_c, c2);
        let den = 1.0 - v_c * b;
        let (t_new, n_new) = (b / den, (a + mu_c * b) / den);
        let t = (1.0 - delta) * tau[s] + delta * t_new;
        let nv = (1.0 - delta) * nu[s] + delta * n_new;
        if !(t.is_finite() && nv.is_finite()) {
            return Err(LinalgError::NonFinite.into());
        }
        change = change.max(c2 * (t - tau[s]).abs()).max(c * (nv - nu[s]).abs());
        if apply {
            tau[s] = t.max(0.0);
            nu[s] = nv;
        }
    }
    Ok((change, skipped))
}

/// `Σ_s log Z̃_s` of probit sites at the posterior marginals `marg(s)`
/// (the module docs' evidence terms).
pub(crate) fn probit_site_terms(
    tau: &[f64],
    nu: &[f64],
    marg: impl Fn(usize) -> (f64, f64),
    c2: f64,
) -> Result<f64, LearnError> {
    let mut acc = 0.0;
    for s in 0..tau.len() {
        let (mu, v) = marg(s);
        let (mu_c, v_c) = cavity(mu, v, tau[s], nu[s]).ok_or(LinalgError::NonFinite)?;
        let log_z = log_norm_cdf(mu_c / libm::sqrt(c2 + v_c));
        acc += log_z + site_log_norm_rest(tau[s], nu[s], mu_c, v_c);
    }
    Ok(acc)
}

/// `∂ log Z_EP / ∂ log σ` of probit sites at the posterior marginals
/// `marg(s)`: `Σ_s −r_s·z_s·c²/(c² + v₋,s)` (see
/// [`PrefPosterior::likelihood_grad`]).
pub(crate) fn probit_noise_grad(
    tau: &[f64],
    nu: &[f64],
    marg: impl Fn(usize) -> (f64, f64),
    c2: f64,
) -> Result<f64, LearnError> {
    let mut g = 0.0;
    for s in 0..tau.len() {
        let (mu, v) = marg(s);
        let (mu_c, v_c) = cavity(mu, v, tau[s], nu[s]).ok_or(LinalgError::NonFinite)?;
        let z = mu_c / libm::sqrt(c2 + v_c);
        let (r, _) = probit_ratio(z);
        g += -r * z * c2 / (c2 + v_c);
    }
    Ok(g)
}

/// `y ← W·x` with `W = Σ_s τ̃_s d_s d_sᵀ`: O(m + n).
pub(crate) fn apply_w(pairs: &[Pair], tau: &[f64], x: &[f64], y: &mut [f64]) {
    y.iter_mut().for_each(|v| *v = 0.0);
    for (s, p) in pairs.iter().enumerate() {
        let v = tau[s] * (x[p.winner] - x[p.loser]);
        y[p.winner] += v;
        y[p.loser] -= v;
    }
}

/// Scratch of [`PrefPosterior::predict`] and
/// [`PrefPosterior::predict_pair`]: `4n`.
pub fn predict_workspace_len(n: usize) -> usize {
    4 * n
}

/// `out ← Cᵀ(C·h)` for the lower-triangular `C` (`n × n`, column-major;
/// `y` holds `C·h`): axpys and dots over the columns' tails from the
/// diagonal down, half of two full mat-vecs.
fn lower_normal_apply(n: usize, c: &[f64], h: &[f64], y: &mut [f64], out: &mut [f64]) {
    y.iter_mut().for_each(|v| *v = 0.0);
    for (j, col) in c.chunks_exact(n.max(1)).enumerate().take(n) {
        crate::linalg::blas::axpy_unchecked(h[j], &col[j..], &mut y[j..]);
    }
    for (j, col) in c.chunks_exact(n.max(1)).enumerate().take(n) {
        out[j] = crate::linalg::blas::dot_unchecked(&col[j..], &y[j..]);
    }
}

/// Side of the square tiles of the O(n²) copies and transposes.
const TILE: usize = 32;

/// `dst ← srcᵀ` for `n × n` column-major buffers, in [`TILE`] × [`TILE`]
/// tiles so that both sides are walked within cache lines.
fn transpose_into(n: usize, src: &[f64], dst: &mut [f64]) {
    for j0 in (0..n).step_by(TILE) {
        for i0 in (0..n).step_by(TILE) {
            for j in j0..(j0 + TILE).min(n) {
                for i in i0..(i0 + TILE).min(n) {
                    dst[j * n + i] = src[i * n + j];
                }
            }
        }
    }
}

/// `L ← chol(P(K + εI)P)`, `P` the reversal of the item order (or the
/// identity without `reverse`), by the jitter policy of the module docs;
/// returns `ε`. The sparse EP factors `K_mm` by the same policy.
pub(crate) fn factor_with_jitter<B: Backend>(
    backend: &mut B,
    k: MatRef<'_, f64>,
    l: &mut [f64],
    reverse: bool,
) -> Result<f64, LearnError> {
    let n = k.nrows();
    let mean_diag = if n == 0 { 1.0 } else { (0..n).map(|i| k.at(i, i)).sum::<f64>() / n as f64 };
    let scale = if mean_diag > 0.0 && mean_diag.is_finite() { mean_diag } else { 1.0 };
    let mut eps = 0.0;
    let mut last = LinalgError::NotPositiveDefinite { index: 0 };
    for step in 0..8 {
        if step > 0 {
            eps = scale * libm::pow(10.0, -11.0 + step as f64);
        }
        let mut lm = MatMut::from_col_major(l, n, n)?;
        // In tiles: the reversed copy reads `k` across its rows.
        for j0 in (0..n).step_by(TILE) {
            for i0 in (0..n).step_by(TILE) {
                for j in j0..(j0 + TILE).min(n) {
                    for i in i0..(i0 + TILE).min(n) {
                        *lm.at_mut(i, j) = match (i >= j, reverse) {
                            (false, _) => 0.0,
                            (true, true) => k.at(n - 1 - j, n - 1 - i),
                            (true, false) => k.at(i, j),
                        };
                    }
                }
            }
        }
        for j in 0..n {
            *lm.at_mut(j, j) += eps;
        }
        match backend.cholesky_in_place(lm) {
            Ok(()) => return Ok(eps),
            Err(e @ LinalgError::NotPositiveDefinite { .. }) => last = e,
            Err(e) => return Err(e.into()),
        }
    }
    Err(last.into())
}

#[cfg(test)]
mod tests {
    /// The host EP site and the device ADF step are one moment match: from
    /// the same cavity they give the same `β = r(z + r)/(2σ² + v)` and mean
    /// step `r/√(2σ² + v)`, bit for bit, from the far lower tail (where the
    /// continued fraction works) to the upper one.
    #[test]
    fn ep_site_and_device_adf_step_agree() {
        let (sigma, v) = (0.7, 0.3);
        let c2 = 2.0 * sigma * sigma;
        let s2 = c2 + v;
        for k in -400..=400 {
            let z = f64::from(k) / 10.0;
            let m = z * libm::sqrt(s2);
            let (tau, nu, _) = super::probit_site(m, v, c2);
            let (a, beta) = super::device::adf_step(m, v, sigma).expect("finite");
            let den = 1.0 - v * beta;
            assert_eq!(tau.to_bits(), (beta / den).to_bits(), "z = {z}");
            assert_eq!(nu.to_bits(), ((a + m * beta) / den).to_bits(), "z = {z}");
        }
    }
}
