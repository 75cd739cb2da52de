//! Online RankRLS: a linear ranker updated one preference at a time, in
//! caller memory, in O(D²) per preference.
//!
//! # The model
//!
//! RankRLS regresses score differences (000 eq. 5; 004 eq. 6, the edgewise
//! pairwise squared loss). For a linear model `f(x) = wᵀx`, preferences
//! `winner_k ≻ loser_k` with difference vectors `d_k = x_winner − x_loser`
//! and magnitudes `m_k` (the target score difference, 1 by default), and a
//! ridge that pulls towards a prior model `w0`, the minimiser of
//!
//! ```text
//! Σ_k (m_k − wᵀd_k)² + λ‖w − w0‖²
//! ```
//!
//! solves the normal equations
//!
//! ```text
//! A·w = b,   A = λI + Σ_k d_k d_kᵀ,   b = λ·w0 + Σ_k m_k·d_k.
//! ```
//!
//! [`OnlineRankRls`] keeps the Cholesky factor `L` of `A` (`A = L·Lᵀ`) and
//! `b`. One observation is a rank-one Cholesky **update** of `L` by `d`
//! (LINPACK `dchud`: a sweep of Givens rotations with `|c|, |s| ≤ 1`,
//! backward stable, Stewart 1979; Golub & Van Loan, 4th ed., §6.5.4), then
//! `b += m·d`, then `w = A⁻¹b` by one forward and one backward triangular
//! solve: about `5D²` flops in all, no refactorisation. The result after
//! `N` observations equals batch primal RankRLS ([`super::ls`]) on the same
//! `N` pairs with the ridge centred on `w0` (for `w0 = 0`, exactly
//! [`super::ls::ls_primal`] on a pair graph, tested), up to rounding.
//!
//! Read as a Bayesian linear model (000 §5, the probabilistic counterpart
//! of RankRLS), `w ~ N(w0, σ²/λ·I)` and `m_k ~ N(wᵀd_k, σ²)` give the
//! posterior `N(A⁻¹b, σ²A⁻¹)`. With `σ² = 1`, the predictive variance of
//! the score difference of two items is
//! [`difference_variance`](OnlineRankRls::difference_variance)
//! `= (xᵢ − xⱼ)ᵀA⁻¹(xᵢ − xⱼ) = ‖L⁻¹(xᵢ − xⱼ)‖²`, and the next question
//! ([`next_pair`](OnlineRankRls::next_pair)) is 001 §5's greedy rule: the
//! candidate pair with the largest ratio of variance to squared mean
//! difference, "the preference with closest latent preference values that
//! we are most uncertain about".
//!
//! The model has no intercept: `score(x) = wᵀx`. An offset changes no
//! ranking, so the state does not hold one.
//!
//! ```
//! use ranklet_core::learn::online::OnlineRankRls;
//!
//! // Caller memory for d = 3; start from the prior w0 = 0 with λ = 1.
//! let mut storage = [0.0f32; OnlineRankRls::<f32>::storage_len(3)];
//! let mut learner = OnlineRankRls::new(&mut storage, &[0.0; 3], 1.0, 0).unwrap();
//! let items = [1.0f32, 0.0, 0.0, /**/ 0.0, 1.0, 0.0, /**/ 0.0, 0.0, 1.0];
//! // Item 0 beats item 1, item 1 beats item 2.
//! learner.observe(&items[0..3], &items[3..6], 1.0).unwrap();
//! learner.observe(&items[3..6], &items[6..9], 1.0).unwrap();
//! assert!(learner.score(&items[0..3]).unwrap() > learner.score(&items[3..6]).unwrap());
//! // What to ask next among the three items.
//! let mut work = vec![0.0f32; OnlineRankRls::<f32>::next_pair_workspace_len(3, 3)];
//! let (i, j, _ratio) = learner.next_pair(&items, 3, &mut work).unwrap().unwrap();
//! assert!(i < j && j < 3);
//! ```
//!
//! # Storage
//!
//! The state lives in one caller slice of
//! [`storage_len(d)`](OnlineRankRls::storage_len) `= d(d+1) + 4d`
//! elements, in this order:
//!
//! | offset | length | content |
//! |---|---|---|
//! | `0` | `d(d+1)/2` | `L`, lower triangle packed **row-major**: `L[i][j]` (`j ≤ i`) at `i(i+1)/2 + j` |
//! | `d(d+1)/2` | `d` | `b = λ·w0 + Σ m·d` |
//! | `d(d+1)/2 + d` | `d` | `w = A⁻¹b` (the current model) |
//! | `d(d+1)/2 + 2d` | `d` | `w0` (the prior model) |
//! | `d(d+1)/2 + 3d` | `d` | `c`, the compensation of the running sum `b` (Kahan): minus the low-order part the sum has lost, `b_exact ≈ b − c`; zero after `new`/`from_parts` |
//! | `d(d+1)/2 + 4d` | `d(d+1)/2` | the compensation of `L`, packed like `L` (Kahan, as `c`: see [Accuracy and drift](self#accuracy-and-drift)); zero after `new`/`from_parts` |
//!
//! (During an update the difference vector is held in `w`'s slot, which
//! the update then overwrites with the new weights.)
//!
//! `d`, `λ`, the observation count and the caller's `prior_id` sit in the
//! struct. Saving a state means saving `L`, `b`, `w0`, `λ`, the count and
//! the prior id; [`from_parts`](OnlineRankRls::from_parts) rebuilds `w`
//! from them with the same two solves every update ends with, so the
//! rebuilt `w` is bit-identical to the saved state's (the constructor
//! computes its `w` the same way, which is why
//! [`new`](OnlineRankRls::new)'s `w` equals `w0` only up to rounding).
//! The compensations need not be saved: dropping one costs one rounding of
//! `b` or of `L` (half an ulp of each entry), after which compensation
//! starts again. A caller who wants later updates of `b` to be
//! bit-identical to those of the unsaved state saves
//! [`rhs_compensation`](OnlineRankRls::rhs_compensation) too and restores
//! it with
//! [`restore_rhs_compensation`](OnlineRankRls::restore_rhs_compensation)
//! (the model format does); the factor's compensation is not part of a
//! saved state, so the restored factor, and with it `w`, follows the unsaved
//! one's to that half ulp.
//!
//! # Errors
//!
//! All [`LearnError`]: `BadLambda` (`λ` not finite or `≤ 0`), `BadGraph`
//! (a magnitude that is not finite or `≤ 0`: an observation is a one-edge
//! preference graph), `Numerics(DimensionMismatch)` (a slice of the wrong
//! length, `d = 0`), `Numerics(WorkspaceTooSmall)` (storage or workspace
//! too short), `Numerics(NonFinite)` (a non-finite input, or one so large
//! that the update or the weights would overflow), `Numerics(Singular)`
//! (a saved factor with a diagonal entry `≤ 0`). A method that returns an
//! error has written nothing: [`observe`](OnlineRankRls::observe) validates
//! everything, including the overflow guards, before it touches the
//! storage.
//!
//! # Accuracy and drift
//!
//! Nothing is ever refactorised: each update works on the factor the
//! previous one left. Each update is backward stable, so the computed `L`
//! is the exact factor of `A + E`, and the weights carry a relative error of
//! roughly `κ(A)·‖E‖/‖A‖`. Late in a stream every update changes each entry
//! of `L` by a relative `~N^{-1/2}`: each entry is a running sum of small
//! increments, and so is `b`. Rounded plainly, such sums drift like `√N·ε`
//! relative (measured, below: the weights' error grew tenfold from 10⁴ to
//! 10⁵ observations). Both are therefore **compensated** (Kahan): `c` holds
//! what `b` has lost, and a second packed triangle what `L` has lost, so
//! `‖E‖/‖A‖` stays at a few `ε` however long the stream; the update's own
//! arithmetic (the rotations, the difference vector) rounds relative to the
//! increments, which shrink as `N^{-1/2}`, and does not accumulate either.
//! The price: `d(d+1)/2` more elements of storage (at `d = 136` in `f32`,
//! 37 264 bytes, the learner's RAM from 39 440 to 76 704 bytes) and three
//! more additions per entry and update.
//!
//! Measured in `f32` at `D = 136`, `λ = 1`, against an `f64` batch solve
//! of the same pairs (`core/tests/online_reference.rs`, `drift_curve`;
//! winners by a hidden linear model plus noise, magnitudes in `[0.5, 2]`):
//! the error of the scores over the 2 000 items, `‖X(w₃₂ − w₆₄)‖/‖Xw₆₄‖`,
//! with the factor's compensation and, in brackets, without it (the
//! previous update), next to a batch `f32` solve of the same normal
//! equations rounded once to `f32`:
//!
//! | observations | uniform: online | batch `f32` | correlated: online | batch `f32` | ill-conditioned: κ(A) | online | batch `f32` |
//! |---|---|---|---|---|---|---|---|
//! | 1 000 | 2.1e-7 (1.2e-6) | 3.8e-7 | 1.6e-6 (8.4e-6) | 2.7e-6 | 1.3e4 | 1.7e-6 (8.1e-6) | 3.9e-6 |
//! | 10 000 | 2.4e-7 (3.7e-6) | 2.6e-7 | 1.5e-6 (1.8e-5) | 2.7e-6 | 1.1e5 | 1.3e-5 (2.1e-4) | 4.6e-5 |
//! | 100 000 | 2.9e-7 (3.8e-5) | 2.6e-7 | 1.5e-6 (1.1e-4) | 2.2e-6 | 4.6e5 | 4.3e-5 (2.0e-3) | 3.3e-4 |
//!
//! Uniform: features independent, uniform in `[−1, 1]`. Correlated: each
//! feature is `0.8·t_g + 0.2·u` for one of 8 shared latent values `t_g`
//! (families of near-duplicate features, as in LETOR). Ill-conditioned:
//! `0.9935·t_g + 0.0065·u`, the condition number of standardised LETOR
//! features. In weight space (`‖w₃₂ − w₆₄‖/‖w₆₄‖`) the correlated stream
//! ends at 6.4e-6 after 100 000 observations (4.8e-4 before), the
//! ill-conditioned one at 1.2e-3 (5.4e-2 before; batch `f32` 8.9e-3):
//! directions the rows hardly span are where the weights are least
//! determined, and matter least to the scores. The online learner beats
//! the batch `f32` solve because the latter rounds `A` itself to `f32`
//! once, an error of `ε‖A‖` the compensated factor does not carry. Saving
//! a state drops the factor's compensation (the format stores `L`): one
//! rounding of `L`, half an ulp, after which the compensation starts again.
//!
//! Where a deployment expects still worse conditioning than `f32` can
//! carry: keep the state in `f64` (2.9e-15 after 2 000 observations at
//! `D = 136`), or refit periodically on the host — batch RankRLS in `f64`
//! on the logged pairs — and restart from the result as the new prior
//! (`new(storage, w_fit, λ, ..)`).

use super::device::DeviceLearner;
use super::next_pair::{offer, PairScore};
use super::LearnError;
use crate::format::{ElementType, LinearView, Model, ModelView, OnlineModel, OnlineView, ValuesReal};
use crate::linalg::blas::{axpy_unchecked, dot_unchecked};
use crate::rank::{RankError, Score};
use crate::{scratch, LinalgError, Real};

/// An online RankRLS learner whose state lives in caller storage (see the
/// [module documentation](self) for the layout and the mathematics).
#[derive(Debug)]
pub struct OnlineRankRls<'s, R: Real> {
    d: usize,
    lambda: R,
    count: u64,
    prior_id: u32,
    storage: &'s mut [R],
}

scratch! {
    /// Scratch of [`OnlineRankRls::next_pair`].
    struct PairScratch<R: Real>(n: usize, d: usize) {
        /// `zᵢ = L⁻¹xᵢ`, one row per candidate (`n × d` row-major).
        z: n.saturating_mul(d),
        /// Current scores `wᵀxᵢ`.
        s: n,
    }
}

scratch! {
    /// Scratch of [`OnlineRankRls::next_pair_screened`].
    struct ScreenedScratch<R: Real>(n: usize, d: usize) {
        /// `zᵢ` and the scores, as for the exact path.
        pair: PairScratch::<R>::len(n, d),
        /// `‖zᵢ‖`.
        zn: n,
    }
}

/// The mutable parts of the storage an update touches (`w0` never changes).
struct Parts<'a, R> {
    l: &'a mut [R],
    b: &'a mut [R],
    w: &'a mut [R],
    /// The compensation of `b`.
    comp: &'a mut [R],
    /// The compensation of `L` (packed like `L`).
    l_comp: &'a mut [R],
}

fn err(e: LinalgError) -> LearnError {
    LearnError::Numerics(e)
}

/// Offset of row `i` of a packed row-major lower triangle.
#[inline]
const fn row_start(i: usize) -> usize {
    i * (i + 1) / 2
}

/// `*sum += v`, compensated (Kahan): `comp` carries minus the low-order
/// part the rounded sum has lost, so `*sum − *comp` stays within a few ulps
/// of the exact running sum however many terms it has absorbed.
#[inline(always)]
fn add_compensated<R: Real>(sum: &mut R, comp: &mut R, v: R) {
    let y = v - *comp;
    let t = *sum + y;
    *comp = (t - *sum) - y;
    *sum = t;
}

/// `L ← chol(L·Lᵀ + x·xᵀ)`; `x` is destroyed. LINPACK `dchud`'s Givens
/// sweep, column by column: rotation `k` maps `(L[k][k], x[k])` to
/// `(r, 0)` with `c = L[k][k]/r`, `s = x[k]/r` and is applied to rows
/// `k+1..d` of column `k` and of `x`. It is applied as an increment,
/// `L' = L + (s·x − t·L)`, `x' = x − (t·x + s·L)` with `t = 1 − c`
/// computed as `s·x[k]/(r + L[k][k])` (no cancellation), and the diagonal
/// as `r = L[k][k] + x[k]·x[k]/(r + L[k][k])`. Late in a long stream the
/// rotations are tiny (`s ~ N^{-1/2}`): every entry of `L` is then a
/// running sum of small increments, and each increment is added
/// compensated (`lc`, the factor's compensation, packed like `L`), so
/// the rounding of the sums does not accumulate over the stream (without
/// it the factor drifted like an uncompensated sum, `~√N·ε` relative; see
/// the module's accuracy table). `|s|, t ≤ 1`, so every intermediate is
/// at most `2·(|L[i][k]| + |x[i]|)`.
fn chol_update<R: Real>(l: &mut [R], lc: &mut [R], x: &mut [R]) {
    let d = x.len();
    for k in 0..d {
        let xk = x[k];
        if xk == R::ZERO {
            continue;
        }
        let kk = row_start(k) + k;
        let lkk = l[kk];
        let r = lkk.hypot(xk);
        let s = xk / r;
        // t = 1 − c without cancellation: (r − L)/r = x²/(r(r + L)), as a
        // product of two factors in [0, 1] so nothing overflows.
        let q = xk / (r + lkk);
        let t = s * q;
        add_compensated(&mut l[kk], &mut lc[kk], xk * q);
        let mut idx = kk + k + 1; // L[k+1][k]
        for i in k + 1..d {
            let lik = l[idx];
            let xi = x[i];
            add_compensated(&mut l[idx], &mut lc[idx], s * xi - t * lik);
            x[i] = xi - (t * xi + s * lik);
            idx += i + 1;
        }
    }
}

/// `y ← L⁻¹y` (forward substitution along the packed rows).
fn solve_lower<R: Real>(l: &[R], y: &mut [R]) {
    for i in 0..y.len() {
        let row = &l[row_start(i)..row_start(i) + i + 1];
        let v = y[i] - dot_unchecked(&row[..i], &y[..i]);
        y[i] = v / row[i];
    }
}

/// `y ← L⁻ᵀy` (backward substitution; column `i` of `Lᵀ` is packed row `i`).
fn solve_lower_transpose<R: Real>(l: &[R], y: &mut [R]) {
    for i in (0..y.len()).rev() {
        let row = &l[row_start(i)..row_start(i) + i + 1];
        let v = y[i] / row[i];
        y[i] = v;
        axpy_unchecked(-v, &row[..i], &mut y[..i]);
    }
}

fn all_finite<R: Real>(x: &[R]) -> bool {
    x.iter().all(|v| v.is_finite())
}

/// `‖z‖²` of a difference of two rows, in the one summation order both
/// pair searches use (so both compute bit-identical variances).
#[inline]
fn diff_sq<R: Real>(a: &[R], b: &[R]) -> R {
    let mut acc = R::ZERO;
    for (x, y) in a.iter().zip(b) {
        let t = *x - *y;
        acc += t * t;
    }
    acc
}

impl<'s, R: Real> OnlineRankRls<'s, R> {
    /// Elements of caller storage for dimension `d`: `d(d+1)/2` for `L`
    /// (packed row-major lower triangle), then `d` each for `b`, `w`, `w0`
    /// and the compensation of `b`, then `d(d+1)/2` for the compensation
    /// of `L`, in that order (the [module table](self#storage)).
    /// Saturates instead of overflowing.
    pub const fn storage_len(d: usize) -> usize {
        Self::factor_len(d).saturating_mul(2).saturating_add(d.saturating_mul(4))
    }

    /// Elements of the packed factor `L` for dimension `d`: `d(d+1)/2`.
    /// Saturates instead of overflowing.
    pub const fn factor_len(d: usize) -> usize {
        d.saturating_mul(d.saturating_add(1)) / 2
    }

    /// Checks `d`, the storage length and `λ` (shared by both constructors).
    fn check_setup(storage_len: usize, d: usize, lambda: R) -> Result<(), LearnError> {
        if d == 0 {
            return Err(err(LinalgError::DimensionMismatch));
        }
        let needed = Self::storage_len(d);
        if storage_len < needed {
            return Err(err(LinalgError::WorkspaceTooSmall { needed, got: storage_len }));
        }
        if !(lambda.is_finite() && lambda > R::ZERO) {
            return Err(LearnError::BadLambda);
        }
        Ok(())
    }

    /// Starts from the prior linear model `w0` (its length is the dimension
    /// `d`) with ridge `λ`: `L = √λ·I`, `b = λ·w0`, `w = A⁻¹b` (`= w0` up
    /// to rounding; computed by the update's own solves, see the
    /// [module documentation](self#storage)), count 0. `prior_id` is the
    /// caller's tag for the prior (kept, never interpreted). Uses the first
    /// [`storage_len(d)`](Self::storage_len) elements of `storage`.
    ///
    /// # Errors
    /// `Numerics(DimensionMismatch)` if `w0` is empty;
    /// `Numerics(WorkspaceTooSmall)` if `storage` is too short;
    /// [`LearnError::BadLambda`] unless `λ` is finite and `> 0`;
    /// `Numerics(NonFinite)` if `w0` or `λ·w0` is not finite. Nothing is
    /// written on error.
    pub fn new(storage: &'s mut [R], w0: &[R], lambda: R, prior_id: u32) -> Result<Self, LearnError> {
        Self::new_with(storage, w0.len(), |j| w0[j], lambda, prior_id)
    }

    /// Rebuilds a saved state (the format loader's entry point): copies the
    /// packed factor `l_packed` (`d(d+1)/2`), `b` and `w0` (`d` each) into
    /// `storage`, keeps `λ`, `count` and `prior_id`, and recomputes
    /// `w = A⁻¹b` from `L` and `b` exactly as an update does.
    ///
    /// # Errors
    /// `Numerics(DimensionMismatch)` for `d = 0` or a part of the wrong
    /// length; `Numerics(WorkspaceTooSmall)`; [`LearnError::BadLambda`];
    /// `Numerics(NonFinite)` if a part holds NaN/±Inf;
    /// `Numerics(Singular { index })` if `L[index][index] ≤ 0`. All of these
    /// are checked before anything is written. If the recomputed `w`
    /// overflows (a factor with a tiny diagonal), `Numerics(NonFinite)`
    /// after `storage` was written.
    // Eight inputs: a saved state's parts, each checked against the others.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        storage: &'s mut [R],
        d: usize,
        lambda: R,
        count: u64,
        prior_id: u32,
        l_packed: &[R],
        b: &[R],
        w0: &[R],
    ) -> Result<Self, LearnError> {
        if l_packed.len() != Self::factor_len(d) || b.len() != d || w0.len() != d {
            Self::check_setup(storage.len(), d, lambda)?;
            return Err(err(LinalgError::DimensionMismatch));
        }
        let parts = StateParts { l_packed: |i| l_packed[i], b: |i| b[i], comp: |_| R::ZERO, w0: |i| w0[i] };
        Self::from_parts_with(storage, d, lambda, count, prior_id, parts)
    }

    /// The feature dimension `d`.
    pub fn dim(&self) -> usize {
        self.d
    }

    /// The ridge `λ`.
    pub fn lambda(&self) -> R {
        self.lambda
    }

    /// Observations absorbed since the prior (saturating at `u64::MAX`).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The caller's tag for the prior model, as given at construction.
    pub fn prior_id(&self) -> u32 {
        self.prior_id
    }

    fn tri(&self) -> usize {
        Self::factor_len(self.d)
    }

    /// The factor `L` of `A`, packed row-major (`d(d+1)/2`).
    pub fn factor_packed(&self) -> &[R] {
        &self.storage[..self.tri()]
    }

    /// The right-hand side `b = λ·w0 + Σ m·d` (`d`).
    pub fn rhs(&self) -> &[R] {
        let t = self.tri();
        &self.storage[t..t + self.d]
    }

    /// The compensation `c` of the running sum `b` (`d`): `b − c` is the
    /// sum to a few ulps. Not needed to rebuild the state (see the
    /// [module documentation](self#storage)).
    pub fn rhs_compensation(&self) -> &[R] {
        let t = self.tri();
        &self.storage[t + 3 * self.d..t + 4 * self.d]
    }

    /// Restores a saved [`rhs_compensation`](Self::rhs_compensation) (after
    /// [`from_parts`](Self::from_parts)), so that later updates of `b` are
    /// bit-identical to those of the state it was saved from. The weights
    /// do not change.
    ///
    /// # Errors
    /// `Numerics(DimensionMismatch)` unless `c.len() == d`;
    /// `Numerics(NonFinite)` if `c` holds NaN/±Inf. Nothing is written on
    /// error.
    pub fn restore_rhs_compensation(&mut self, c: &[R]) -> Result<(), LearnError> {
        if c.len() != self.d {
            return Err(err(LinalgError::DimensionMismatch));
        }
        if !all_finite(c) {
            return Err(err(LinalgError::NonFinite));
        }
        self.parts_mut().comp.copy_from_slice(c);
        Ok(())
    }

    /// The current weights `w = A⁻¹b` (`d`).
    pub fn weights(&self) -> &[R] {
        let t = self.tri();
        &self.storage[t + self.d..t + 2 * self.d]
    }

    /// The prior model `w0` (`d`).
    pub fn prior(&self) -> &[R] {
        let t = self.tri();
        &self.storage[t + 2 * self.d..t + 3 * self.d]
    }

    /// The whole state as stored: exactly
    /// [`storage_len(dim)`](Self::storage_len) elements in the
    /// [module's layout](self#storage).
    pub fn storage(&self) -> &[R] {
        self.storage
    }

    /// The storage's parts, borrowed mutably.
    fn parts_mut(&mut self) -> Parts<'_, R> {
        let (d, t) = (self.d, self.tri());
        let (l, rest) = self.storage.split_at_mut(t);
        let (b, rest) = rest.split_at_mut(d);
        let (w, rest) = rest.split_at_mut(d);
        let (_w0, rest) = rest.split_at_mut(d);
        let (comp, l_comp) = rest.split_at_mut(d);
        Parts { l, b, w, comp, l_comp }
    }

    /// `w ← L⁻ᵀL⁻¹b`.
    fn refresh_weights(&mut self) {
        let Parts { l, b, w, .. } = self.parts_mut();
        w.copy_from_slice(b);
        solve_lower(l, w);
        solve_lower_transpose(l, w);
    }

    /// One preference, `winner ≻ loser`, with target score difference
    /// `magnitude` (1 for a plain preference): `d = winner − loser`,
    /// `L ← chol(LLᵀ + ddᵀ)`, `b += magnitude·d`, `w = A⁻¹b`, count + 1.
    /// O(d²).
    ///
    /// # Errors
    /// `Numerics(DimensionMismatch)` unless both rows have length `d`;
    /// [`LearnError::BadGraph`] unless `magnitude` is finite and `> 0`;
    /// `Numerics(NonFinite)` if a row, or `winner − loser`, is not finite,
    /// or the update would overflow (`‖d‖²`, `b + m·d` or the bound
    /// `√d·max|b + m·d|/λ` on `‖w‖` out of range). The state is untouched
    /// on error: everything is checked before anything is written.
    pub fn observe(&mut self, winner: &[R], loser: &[R], magnitude: R) -> Result<(), LearnError> {
        if winner.len() != self.d || loser.len() != self.d {
            return Err(err(LinalgError::DimensionMismatch));
        }
        self.check_update(winner.iter().zip(loser).map(|(&a, &b)| a - b), magnitude)?;
        let x = self.parts_mut().w;
        for ((xi, &a), &b) in x.iter_mut().zip(winner).zip(loser) {
            *xi = a - b;
        }
        self.apply_update(magnitude);
        Ok(())
    }

    /// One preference given by its difference vector `diff = x_winner −
    /// x_loser`; otherwise as [`observe`](Self::observe).
    ///
    /// # Errors
    /// As [`observe`](Self::observe); the state is untouched on error.
    pub fn observe_difference(&mut self, diff: &[R], magnitude: R) -> Result<(), LearnError> {
        if diff.len() != self.d {
            return Err(err(LinalgError::DimensionMismatch));
        }
        self.check_update(diff.iter().copied(), magnitude)?;
        let x = self.parts_mut().w;
        x.copy_from_slice(diff);
        self.apply_update(magnitude);
        Ok(())
    }

    /// Every check of an update, reading only: the magnitude, finiteness of
    /// the difference, and the overflow guards.
    fn check_update(&self, diff: impl Iterator<Item = R>, m: R) -> Result<(), LearnError> {
        if !(m.is_finite() && m > R::ZERO) {
            return Err(LearnError::BadGraph);
        }
        let mut ss = R::ZERO;
        let mut bmax = R::ZERO;
        for (x, &b) in diff.zip(self.rhs()) {
            let nb = b + m * x;
            if !(x.is_finite() && nb.is_finite()) {
                return Err(err(LinalgError::NonFinite));
            }
            ss += x * x;
            bmax = bmax.max(nb.abs());
        }
        // ‖w‖ ≤ ‖b‖/λ_min(A) ≤ √d·max|b|/λ; a factor 4 covers rounding.
        let wbound = bmax / self.lambda * (R::from_f64(4.0) * R::from_f64(self.d as f64).sqrt());
        if !(ss.is_finite() && wbound.is_finite()) {
            return Err(err(LinalgError::NonFinite));
        }
        Ok(())
    }

    /// The update proper, on the difference already in `w`'s slot:
    /// `b += m·d` compensated (Kahan: `c` carries minus what the sum has
    /// lost), the factor update (destroying the difference), and the new
    /// weights from `b` alone (so they depend only on `L` and `b`, as
    /// [`from_parts`](Self::from_parts) rebuilds them).
    fn apply_update(&mut self, m: R) {
        let Parts { l, b, w: x, comp, l_comp } = self.parts_mut();
        for ((bk, ck), &xk) in b.iter_mut().zip(comp.iter_mut()).zip(x.iter()) {
            add_compensated(bk, ck, m * xk);
        }
        chol_update(l, l_comp, x);
        self.refresh_weights();
        self.count = self.count.saturating_add(1);
    }

    /// The current score `wᵀx` of one row. No offset: the prior's
    /// intercept, if it had one, is not part of the state (it changes no
    /// ranking).
    ///
    /// # Errors
    /// `Numerics(DimensionMismatch)` unless `x.len() == d`.
    pub fn score(&self, x: &[R]) -> Result<R, LearnError> {
        if x.len() != self.d {
            return Err(err(LinalgError::DimensionMismatch));
        }
        Ok(dot_unchecked(self.weights(), x))
    }

    /// Scores `n = out.len()` rows (`rows`: `n × d` row-major) into `out`.
    ///
    /// # Errors
    /// `Numerics(DimensionMismatch)` unless `rows.len() == out.len()·d`;
    /// `Numerics(NonFinite)` if a row holds NaN/±Inf. `out` is written
    /// only on success.
    pub fn score_rows(&self, rows: &[R], out: &mut [R]) -> Result<(), LearnError> {
        if out.len().checked_mul(self.d) != Some(rows.len()) {
            return Err(err(LinalgError::DimensionMismatch));
        }
        if !all_finite(rows) {
            return Err(err(LinalgError::NonFinite));
        }
        self.score_rows_unchecked(rows, out);
        Ok(())
    }

    fn score_rows_unchecked(&self, rows: &[R], out: &mut [R]) {
        let w = self.weights();
        for (o, x) in out.iter_mut().zip(rows.chunks_exact(self.d)) {
            *o = dot_unchecked(w, x);
        }
    }

    /// Scores `n = scores.len()` rows (`n × d` row-major) into `scores` and
    /// writes their ranking, best first, into `order` (`n`): the current
    /// model through [`rank::order`](crate::rank::order) (ties in input
    /// order).
    ///
    /// # Errors
    /// [`RankError::LengthMismatch`] if `rows.len() != n·d` (expected
    /// `n·d`) or `order.len() != n`, before anything is written; otherwise
    /// as [`rank::order`](crate::rank::order) (a NaN score from non-finite
    /// rows is `NanScore`).
    pub fn order_rows(&self, rows: &[R], scores: &mut [R], order: &mut [u32]) -> Result<(), RankError>
    where
        R: Score,
    {
        self.check_rank_rows(rows, scores.len())?;
        if order.len() != scores.len() {
            return Err(RankError::LengthMismatch { expected: scores.len(), got: order.len() });
        }
        self.score_rows_unchecked(rows, scores);
        crate::rank::order(scores, order)
    }

    /// Scores `n = scores.len()` rows into `scores` and writes the
    /// `k = top.len()` best, best first, into `top`: the current model
    /// through [`rank::top_k`](crate::rank::top_k).
    ///
    /// # Errors
    /// As [`order_rows`](Self::order_rows), with `k ≤ n` for `top`.
    pub fn top_k_rows(&self, rows: &[R], scores: &mut [R], top: &mut [u32]) -> Result<(), RankError>
    where
        R: Score,
    {
        self.check_rank_rows(rows, scores.len())?;
        if top.len() > scores.len() {
            return Err(RankError::LengthMismatch { expected: scores.len(), got: top.len() });
        }
        self.score_rows_unchecked(rows, scores);
        crate::rank::top_k(scores, top)
    }

    fn check_rank_rows(&self, rows: &[R], n: usize) -> Result<(), RankError> {
        let expected = n.saturating_mul(self.d);
        if rows.len() != expected {
            return Err(RankError::LengthMismatch { expected, got: rows.len() });
        }
        Ok(())
    }

    /// Scratch for [`difference_variance`](Self::difference_variance): `d`.
    pub fn difference_variance_workspace_len(d: usize) -> usize {
        d
    }

    /// The posterior variance of the score difference of two items under
    /// the Bayesian reading of the model (noise variance 1, [module
    /// documentation](self)): `(xi − xj)ᵀA⁻¹(xi − xj) = ‖L⁻¹(xi − xj)‖²`.
    /// One forward solve, O(d²). `work` holds at least `d`.
    ///
    /// # Errors
    /// `Numerics(DimensionMismatch)` unless both rows have length `d`;
    /// `Numerics(WorkspaceTooSmall)`; `Numerics(NonFinite)` if an input,
    /// their difference or the result is not finite.
    pub fn difference_variance(&self, xi: &[R], xj: &[R], work: &mut [R]) -> Result<R, LearnError> {
        let d = self.d;
        if xi.len() != d || xj.len() != d {
            return Err(err(LinalgError::DimensionMismatch));
        }
        let got = work.len();
        let z = work.get_mut(..d).ok_or(err(LinalgError::WorkspaceTooSmall { needed: d, got }))?;
        for ((zk, &a), &b) in z.iter_mut().zip(xi).zip(xj) {
            *zk = a - b;
        }
        if !all_finite(z) {
            return Err(err(LinalgError::NonFinite));
        }
        solve_lower(self.factor_packed(), z);
        let v = dot_unchecked(z, z);
        if !v.is_finite() {
            return Err(err(LinalgError::NonFinite));
        }
        Ok(v)
    }

    /// Scratch for [`next_pair`](Self::next_pair) with `n` candidates:
    /// `n·d + n`.
    pub fn next_pair_workspace_len(n: usize, d: usize) -> usize {
        PairScratch::<R>::len(n, d)
    }

    /// Scratch for [`next_pair_screened`](Self::next_pair_screened) with
    /// `n` candidates: `n·d + 2n`.
    pub fn next_pair_screened_workspace_len(n: usize, d: usize) -> usize {
        ScreenedScratch::<R>::len(n, d)
    }

    /// Checks the candidate rows and fills `z` (`zᵢ = L⁻¹xᵢ`) and `s`
    /// (`sᵢ = wᵀxᵢ`).
    fn project(&self, rows: &[R], n: usize, z: &mut [R], s: &mut [R]) -> Result<(), LearnError> {
        if n.checked_mul(self.d) != Some(rows.len()) {
            return Err(err(LinalgError::DimensionMismatch));
        }
        if !all_finite(rows) {
            return Err(err(LinalgError::NonFinite));
        }
        z.copy_from_slice(rows);
        for zi in z.chunks_exact_mut(self.d) {
            solve_lower(self.factor_packed(), zi);
        }
        self.score_rows_unchecked(rows, s);
        if !(all_finite(z) && all_finite(s)) {
            return Err(err(LinalgError::NonFinite));
        }
        Ok(())
    }

    /// The next pair to ask about (001 §5's greedy rule under this linear
    /// model), exactly: among the `n` candidate rows (`rows`: `n × d`
    /// row-major), the pair `i < j` maximising
    /// `ratio = vᵢⱼ / μᵢⱼ²` with variance `vᵢⱼ = ‖L⁻¹(xᵢ − xⱼ)‖²` (as
    /// [`difference_variance`](Self::difference_variance)) and mean
    /// difference `μᵢⱼ = wᵀ(xᵢ − xⱼ)`. Returns `(i, j, ratio)`.
    ///
    /// Precisely, the pair [`next_pair`](super::next_pair)'s one rule
    /// chooses: the larger ratio (`+∞` for a zero `μᵢⱼ²`: equal scores, or
    /// a square that underflows), then the larger variance, then the
    /// smaller `(i, j)`. Pairs with `vᵢⱼ = 0` (identical rows) are never
    /// chosen; `None` if no pair is left (`n < 2`, or all rows equal).
    ///
    /// Cost: `zᵢ = L⁻¹xᵢ` for every row (O(n·d²)), then every pair
    /// (O(n²·d)). [`next_pair_screened`](Self::next_pair_screened) returns
    /// the same answer with far fewer pairs visited.
    ///
    /// # Errors
    /// `Numerics(DimensionMismatch)` unless `rows.len() == n·d`;
    /// `Numerics(WorkspaceTooSmall)` if `work` is shorter than
    /// [`next_pair_workspace_len(n, d)`](Self::next_pair_workspace_len);
    /// `Numerics(NonFinite)` if a row holds NaN/±Inf or a projection
    /// overflows.
    pub fn next_pair(&self, rows: &[R], n: usize, work: &mut [R]) -> Result<Option<(usize, usize, R)>, LearnError> {
        let d = self.d;
        let (PairScratch { z, s }, _) = PairScratch::split(work, n, d)?;
        self.project(rows, n, z, s)?;
        let mut best: Option<PairScore<R>> = None;
        for i in 0..n {
            let zi = &z[i * d..(i + 1) * d];
            for j in i + 1..n {
                let mu = s[i] - s[j];
                let var = diff_sq(zi, &z[j * d..(j + 1) * d]);
                offer(&mut best, PairScore::new(i, j, var, mu * mu));
            }
        }
        Ok(best.map(|c| (c.i, c.j, c.ratio())))
    }

    /// The same answer as [`next_pair`](Self::next_pair) (the same pair,
    /// ratio and tie rule, bit for bit), visiting few pairs: candidates are
    /// sorted by current score into `order` (`n` entries, left holding
    /// that ascending order), and each row is paired only with rows above
    /// it in that order, nearest first, until an upper bound shows no
    /// further pair can win. The bound is exact, not a heuristic:
    /// `vᵢⱼ ≤ (‖zᵢ‖ + ‖zⱼ‖)²` (triangle inequality, inflated by
    /// `1 + (4d + 16)ε` to cover rounding), and `μᵢⱼ²` only grows along the
    /// sorted order, so once `(‖zᵢ‖ + maxₖ‖zₖ‖)²/μᵢⱼ²` falls below the best
    /// ratio so far the scan of row `i` stops; a single pair whose own
    /// bound `(‖zᵢ‖ + ‖zⱼ‖)²/μᵢⱼ²` is below it is skipped without its O(d)
    /// variance (a bound equal to it is not: an equal ratio with a larger
    /// variance would win). Once a zero-mean-difference pair is found
    /// (ratio `+∞`), each scan stops at the first finite bound.
    ///
    /// The neighbours in score order are evaluated first, so the bound
    /// prunes from the first scan on.
    ///
    /// Cost: O(n·d²) for the projections (as the exact path), O(n log n)
    /// for the sort, and O(d) per pair actually evaluated. Scores spread
    /// over a range `S` put the best ratio near `v·n²/S²`, so each scan
    /// typically stops after a few neighbours; the worst case (all scores
    /// nearly equal, very unequal `‖zᵢ‖`) is still O(n²·d). Measured in
    /// `f32` (random rows, 500 observations, release build, one core):
    /// `n = 2000, d = 16`: 0.6 ms against 55 ms for the exact path;
    /// `n = 2000, d = 136`: 11 ms against 400 ms, nearly all of it the
    /// projections.
    ///
    /// # Errors
    /// As [`next_pair`](Self::next_pair), with
    /// [`next_pair_screened_workspace_len`](Self::next_pair_screened_workspace_len)
    /// for `work`; `Numerics(DimensionMismatch)` unless `order.len() == n`;
    /// `Numerics(InvalidParameter)` if `n > u32::MAX`.
    pub fn next_pair_screened(
        &self,
        rows: &[R],
        n: usize,
        work: &mut [R],
        order: &mut [u32],
    ) -> Result<Option<(usize, usize, R)>, LearnError> {
        let d = self.d;
        if order.len() != n {
            return Err(err(LinalgError::DimensionMismatch));
        }
        if u32::try_from(n).is_err() {
            return Err(err(LinalgError::InvalidParameter));
        }
        let (ScreenedScratch { pair, zn }, _) = ScreenedScratch::split(work, n, d)?;
        let (PairScratch { z, s }, _) = PairScratch::split(pair, n, d)?;
        self.project(rows, n, z, s)?;
        let margin = R::ONE + R::from_f64((4 * d + 16) as f64) * R::EPSILON;
        for (nk, zk) in zn.iter_mut().zip(z.chunks_exact(d)) {
            *nk = dot_unchecked(zk, zk).sqrt();
        }
        let var = |i: usize, j: usize| diff_sq(&z[i * d..(i + 1) * d], &z[j * d..(j + 1) * d]);
        let best = super::next_pair::best_pair_screened(s, zn, margin, order, var).map_err(err)?;
        Ok(best.map(|c| (c.i, c.j, c.ratio())))
    }
}

// ----------------------------------------- construction without a copy

/// The arrays of a saved state, element by element (so that they can come
/// straight from a model file, without a second buffer):
/// [`OnlineRankRls::from_parts_with`] reads each index once or more.
#[derive(Clone, Copy, Debug)]
pub struct StateParts<L, B, C, W> {
    /// `L`, packed row-major lower triangle (`d(d+1)/2`).
    pub l_packed: L,
    /// `b` (`d`).
    pub b: B,
    /// The compensation of `b` (`d`; zero when it was not saved).
    pub comp: C,
    /// The prior `w₀` (`d`).
    pub w0: W,
}

impl<'s, R: Real> OnlineRankRls<'s, R> {
    /// [`new`](Self::new) with `w0` given element by element (so that it
    /// can come straight from a model file, without a second buffer).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn new_with(
        storage: &'s mut [R],
        d: usize,
        w0: impl Fn(usize) -> R,
        lambda: R,
        prior_id: u32,
    ) -> Result<Self, LearnError> {
        Self::check_setup(storage.len(), d, lambda)?;
        if !(0..d).all(|j| (lambda * w0(j)).is_finite()) {
            return Err(err(LinalgError::NonFinite));
        }
        let storage = &mut storage[..Self::storage_len(d)];
        let tri = Self::factor_len(d);
        let sq = lambda.sqrt();
        storage.iter_mut().for_each(|v| *v = R::ZERO);
        for i in 0..d {
            storage[row_start(i) + i] = sq;
            storage[tri + i] = lambda * w0(i);
            storage[tri + 2 * d + i] = w0(i);
        }
        let mut s = OnlineRankRls { d, lambda, count: 0, prior_id, storage };
        s.refresh_weights();
        Ok(s)
    }

    /// [`from_parts`](Self::from_parts) with the parts given element by
    /// element ([`StateParts`]), and the compensation `c` of `b`
    /// ([`rhs_compensation`](Self::rhs_compensation); `|_| 0` when it was
    /// not saved), so that a restored learner continues exactly as the
    /// saved one would have.
    ///
    /// # Errors
    /// As [`from_parts`](Self::from_parts); a non-finite `c` is
    /// `Numerics(NonFinite)`.
    pub fn from_parts_with<L, B, C, W>(
        storage: &'s mut [R],
        d: usize,
        lambda: R,
        count: u64,
        prior_id: u32,
        parts: StateParts<L, B, C, W>,
    ) -> Result<Self, LearnError>
    where
        L: Fn(usize) -> R,
        B: Fn(usize) -> R,
        C: Fn(usize) -> R,
        W: Fn(usize) -> R,
    {
        let StateParts { l_packed, b, comp, w0 } = parts;
        Self::check_setup(storage.len(), d, lambda)?;
        let tri = Self::factor_len(d);
        if !((0..tri).all(|i| l_packed(i).is_finite())
            && (0..d).all(|i| b(i).is_finite() && w0(i).is_finite() && comp(i).is_finite()))
        {
            return Err(err(LinalgError::NonFinite));
        }
        if let Some(index) = (0..d).find(|&i| !(l_packed(row_start(i) + i) > R::ZERO)) {
            return Err(err(LinalgError::Singular { index }));
        }
        let storage = &mut storage[..Self::storage_len(d)];
        for (i, v) in storage[..tri].iter_mut().enumerate() {
            *v = l_packed(i);
        }
        for i in 0..d {
            storage[tri + i] = b(i);
            storage[tri + 2 * d + i] = w0(i);
            storage[tri + 3 * d + i] = comp(i);
        }
        // The factor's compensation is not saved: it restarts at zero.
        storage[tri + 4 * d..].iter_mut().for_each(|v| *v = R::ZERO);
        let mut s = OnlineRankRls { d, lambda, count, prior_id, storage };
        s.refresh_weights();
        if !all_finite(s.weights()) {
            return Err(err(LinalgError::NonFinite));
        }
        Ok(s)
    }
}

// ----------------------------------------- from and to the model format

impl<'s, R: ValuesReal> OnlineRankRls<'s, R> {
    /// Starts a learner from a parsed linear model (the prior `w₀`) with
    /// ridge `lambda`, in `storage`; returns it and the prior's offset (add
    /// it to the learner's scores to reproduce the prior's). A model with
    /// feature centring `x' = (x − μ)/σ` is folded into raw-feature weights
    /// first (`w₀_j = w_j/σ_j`, offset `b − Σ_j w_j μ_j/σ_j`): the same
    /// scores, but the ridge is then isotropic in the raw features, so give
    /// the learner standardised features where their scales differ widely.
    ///
    /// # Errors
    /// [`LearnError::Unsupported`] if the model is not linear, and the
    /// errors of [`OnlineRankRls::new`].
    pub fn from_linear_model(
        storage: &'s mut [R],
        prior: &ModelView<'_>,
        lambda: R,
        prior_id: u32,
    ) -> Result<(Self, f64), LearnError> {
        let lin = prior.linear().ok_or(LearnError::Unsupported)?;
        Self::from_linear_view(storage, prior, &lin, lambda, prior_id)
    }

    /// [`from_linear_model`](Self::from_linear_model) from `prior`'s linear
    /// view `lin`, already extracted (the device shape checks the kind
    /// once, by extracting it).
    fn from_linear_view(
        storage: &'s mut [R],
        prior: &ModelView<'_>,
        lin: &LinearView<'_>,
        lambda: R,
        prior_id: u32,
    ) -> Result<(Self, f64), LearnError> {
        let (w, d) = (lin.weights(), prior.dim());
        let centring = prior.feature_centring();
        let w0 = |j: usize| match centring {
            None => w.at(j),
            Some((_, scale)) => w.at(j) / scale.at(j),
        };
        let shift: f64 = match centring {
            None => 0.0,
            Some((mean, _)) => (0..d).map(|j| w0(j) * mean.at(j)).sum(),
        };
        let offset = lin.offset() - shift;
        if !offset.is_finite() {
            return Err(err(LinalgError::NonFinite));
        }
        let s = Self::new_with(storage, d, |j| R::from_f64(w0(j)), lambda, prior_id)?;
        Ok((s, offset))
    }

    /// Restores a saved state (a parsed `ONLINE_STATE`) into `storage`,
    /// recomputing `w` from the saved factor and right-hand side; with the
    /// saved compensation of `b`, the restored learner's later `b` is bit
    /// for bit the saved one's; its factor differs by the compensation of
    /// `L`, which the file does not hold (at most half an ulp of each entry,
    /// not growing; see "Accuracy and drift" in this module's docs).
    ///
    /// # Errors
    /// Those of [`OnlineRankRls::from_parts`].
    pub fn restore(storage: &'s mut [R], saved: &OnlineView<'_>) -> Result<Self, LearnError> {
        let (l, b, c, w0) = (saved.factor_packed(), saved.rhs(), saved.rhs_compensation(), saved.prior());
        let parts = StateParts {
            l_packed: |i| R::from_f64(l.at(i)),
            b: |i| R::from_f64(b.at(i)),
            comp: |i| R::from_f64(c.at(i)),
            w0: |i| R::from_f64(w0.at(i)),
        };
        let (d, lambda) = (saved.weights().len(), R::from_f64(saved.lambda()));
        Self::from_parts_with(storage, d, lambda, saved.count(), saved.prior_id(), parts)
    }

    /// The learner's state as a model to write (kind 5), with the prior's
    /// `offset`. Written as `f32`, an `f32` learner's state is stored bit
    /// for bit.
    pub fn to_model(&self, offset: f64) -> Model<'_> {
        Model::Online(OnlineModel {
            lambda: self.lambda().to_f64(),
            count: self.count(),
            prior_id: self.prior_id(),
            offset,
            w: R::values(self.weights()),
            b: R::values(self.rhs()),
            b_comp: R::values(self.rhs_compensation()),
            w0: R::values(self.prior()),
            l_packed: R::values(self.factor_packed()),
        })
    }
}

/// The device shape ([`super::device`]): sized by the dimension `d`,
/// started from a linear prior with `(λ, prior id)`, carrying the prior's
/// offset beside the state, written as kind 5.
impl<'s, R: ValuesReal> DeviceLearner<'s> for OnlineRankRls<'s, R> {
    type Real = R;
    type Extra = f64;
    type Params = (R, u32);

    fn storage_len(d: usize) -> Option<usize> {
        let tri = d.checked_add(1).and_then(|d1| d.checked_mul(d1))? / 2;
        (d > 0).then_some(())?;
        tri.checked_mul(2)?.checked_add(d.checked_mul(4)?)
    }

    fn state_file_len(d: usize, et: ElementType) -> Option<usize> {
        OnlineModel::file_len(d, et)
    }

    /// The model (its dimension and centring) and its linear view,
    /// extracted once.
    type Prior<'v> = (&'v ModelView<'v>, LinearView<'v>);
    type Saved<'v> = OnlineView<'v>;

    fn prior<'v>(model: &'v ModelView<'v>) -> Option<Self::Prior<'v>> {
        model.linear().map(|lin| (model, lin))
    }

    fn prior_size((model, _): &Self::Prior<'_>) -> usize {
        model.dim()
    }

    fn init(
        storage: &'s mut [R],
        (model, lin): &Self::Prior<'_>,
        (lambda, prior_id): (R, u32),
    ) -> Result<(Self, f64), LearnError> {
        Self::from_linear_view(storage, model, lin, lambda, prior_id)
    }

    fn saved<'v>(model: &ModelView<'v>) -> Option<OnlineView<'v>> {
        model.online()
    }

    fn saved_size(saved: &OnlineView<'_>) -> usize {
        saved.weights().len()
    }

    fn restore(storage: &'s mut [R], saved: &OnlineView<'_>) -> Result<(Self, f64), LearnError> {
        Ok((Self::restore(storage, saved)?, saved.offset()))
    }

    fn state(&self, offset: f64) -> Model<'_> {
        self.to_model(offset)
    }
}
