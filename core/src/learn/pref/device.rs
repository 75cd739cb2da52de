//! A preference-GP posterior on a device: `P(i ≻ j)` with its variance,
//! the ranking of the items, the next pair to ask, and the posterior
//! updated by one observed preference, in caller storage, in O(N²) per
//! preference, without a heap.
//!
//! # The model
//!
//! N items with latent utilities `f ~ N(μ, Σ)`, the posterior a host fit
//! wrote as a kind-8 model ([`crate::format::PrefGpView`]). A preference
//! `w ≻ l` has the probit likelihood of 001 eq. 6 (000 §5):
//!
//! ```text
//! P(w ≻ l | f) = Φ(dᵀf / (√2·σ)),   d = e_w − e_l.
//! ```
//!
//! Predictions (001 eqs. 13–14): with `m_ij = μ_i − μ_j` and the variance
//! of the difference `v_ij = Σ_ii + Σ_jj − 2Σ_ij`,
//!
//! ```text
//! P(i ≻ j) = Φ(m_ij / √(2σ² + v_ij)).
//! ```
//!
//! The next pair to ask (001 §5): over all pairs `i < j`, the largest
//! `v_ij / m_ij²`, "the preference with closest latent preference values
//! that we are most uncertain about", with the one tie rule of
//! [`crate::learn::next_pair`]; exact, O(N²).
//!
//! # One observation: ADF, not iterated EP
//!
//! [`observe`](DevicePrefGp::observe) absorbs one preference `w ≻ l` by
//! **assumed-density filtering**: one new EP site on `dᵀf`, computed once
//! from the current posterior (which is the cavity, since the site is
//! new), and never revisited. Iterated EP would refine every earlier site
//! against the others; on a device the earlier sites are not even kept.
//! After several observations the device posterior therefore differs from
//! a host EP fit on the same preferences (it equals the host's ADF pass
//! in the same order; `core/tests/pref_device_reference.rs` checks it
//! against an independent numpy implementation). The site (R&W §3.6,
//! eqs. 3.58 with `y = 1`, for a site on a projection):
//!
//! ```text
//! cavity      m = dᵀμ = μ_w − μ_l,     v = dᵀΣd = v_wl
//! tilted      z = m / √(2σ² + v),      r = N(z)/Φ(z)
//!             E[dᵀf]   = m + v·r/√(2σ² + v)
//!             Var[dᵀf] = v − v²·r(z + r)/(2σ² + v)
//! update      s = Σ·d = Σ_{:,w} − Σ_{:,l}
//!             μ ← μ + s · r/√(2σ² + v)
//!             Σ ← Σ − s·sᵀ · r(z + r)/(2σ² + v)
//! ```
//!
//! (the Gaussian with those moments of `dᵀf` and the prior's conditional
//! of `f` given `dᵀf`: the exact moment projection of the tilted
//! distribution). `0 < r(z + r) < 1`, so the new `Var[dᵀf]` stays positive
//! and so does `Σ` in exact arithmetic. The EP site this adds has
//! precision `τ̃ = β/(1 − β·v)` and shift `ν̃ = (τ̃ + 1/v)·E[dᵀf] − m/v` on
//! `dᵀf`, with `β = r(z + r)/(2σ² + v)`; the device needs neither.
//!
//! `r` and `z + r` are computed in `f64` whatever `R` (they cost O(1)) by
//! [`crate::special::probit_ratio`], the function host EP uses too: from
//! `erfc` for `z ≥ −4`, and below, where `Φ(z)` underflows eventually and
//! `z + r` would cancel, from the continued fraction of the Mills ratio.
//! No NaN for any finite `z`; `z = −1e30` gives `r ≈ 1e30`,
//! `β ≈ 1/(2σ² + v)`.
//!
//! # Storage
//!
//! One caller slice of [`storage_len(n)`](DevicePrefGp::storage_len)
//! `= 2n + n(n+1)/2` elements: `μ` (n), `Σ` lower triangle packed row by
//! row (`Σ[i][j]`, `j ≤ i`, at `i(i+1)/2 + j`; n(n+1)/2), and `s` (n,
//! scratch of `observe`). σ, n and the observation count sit in the
//! struct. The capacity is the caller's array type:
//! `[f32; DevicePrefGp::<f32>::storage_len(64)]` is 8 576 bytes.
//!
//! # Errors
//!
//! All [`LearnError`]: `Unsupported` (a model that is not kind 8),
//! `BadGraph` (an item index `≥ n`, or `w == l`),
//! `Numerics(WorkspaceTooSmall)` (storage or an output too short),
//! `Numerics(DimensionMismatch)` (n = 0), `Numerics(NonFinite)` (a value
//! that does not fit `R`, or an update that would overflow),
//! `Numerics(NotPositiveDefinite)` (an update that would leave a variance
//! `Σ_ii ≤ 0` by rounding). A method that returns an error has changed
//! nothing of the posterior.
//!
//! ```
//! use ranklet_core::format::{ElementType, Model, ModelSpec, ModelView, PrefGpModel, Values};
//! use ranklet_core::learn::pref::device::DevicePrefGp;
//!
//! // Prior over 3 items: N(0, I), σ = 1.
//! let (mean, cov) = ([0.0; 3], [1.0, 0.0, 1.0, 0.0, 0.0, 1.0]);
//! let m = Model::PrefGp(PrefGpModel {
//!     sigma: 1.0, count: 0, mean: Values::F64(&mean), cov_packed: Values::F64(&cov), item_names: "",
//! });
//! let mut file = [0u8; 256];
//! let len = ModelSpec::new(m, ElementType::F32).emit(&mut file).unwrap();
//! let view = ModelView::new_checked(&file[..len]).unwrap();
//!
//! let mut storage = [0.0f32; DevicePrefGp::<f32>::storage_len(3)];
//! let mut gp = DevicePrefGp::from_model(&mut storage, &view).unwrap();
//! gp.observe(2, 0).unwrap(); // item 2 beats item 0
//! let (p, _v) = gp.prob(2, 0).unwrap();
//! assert!(p > 0.5);
//! let mut order = [0u32; 3];
//! gp.rank(&mut order).unwrap();
//! assert_eq!(order, [2, 1, 0]);
//! ```

use crate::format::kind::pref_gp::packed_len;
use crate::format::{ElementType, Model, ModelView, PrefGpModel, PrefGpView, ValuesReal};
use crate::learn::device::DeviceLearner;
use crate::learn::next_pair::{offer, PairScore};
use crate::learn::pair_log::{Pair, PairRecord};
use crate::learn::LearnError;
use crate::rank::{self, RankError, Score};
use crate::special::norm_cdf;
use crate::{LinalgError, Real};

/// `2⁻⁶⁰⁰`: the rescaling of [`prob_moments`] when a moment overflows.
const MOMENT_SCALE: f64 = f64::from_bits((1023 - 600) << 52);

/// `P(i ≻ j) = Φ((μ_i − μ_j)/√(2σ² + v_ij))` from the moments, in `f64`
/// (so an `f32` posterior whose entries are near `f32::MAX` cannot
/// overflow). `z` is invariant under `μ → k·μ`, `Σ → k²·Σ`, `σ → k·σ`, so
/// when the difference or the total variance overflows even `f64`, the
/// moments are scaled by `k = 2⁻⁶⁰⁰` first. If `z` is still undefined
/// (`0/0`: no spread and no difference), the answer is ½.
fn prob_moments(mi: f64, mj: f64, cii: f64, cjj: f64, cij: f64, sigma: f64) -> f64 {
    let z_at = |k: f64| {
        let k2 = k * k;
        let m = mi * k - mj * k;
        let v = (cii * k2 + cjj * k2 - 2.0 * (cij * k2)).max(0.0);
        let sk = sigma * k;
        m / libm::sqrt(2.0 * sk * sk + v)
    };
    let mut z = z_at(1.0);
    if z.is_nan() {
        z = z_at(MOMENT_SCALE);
    }
    if z.is_nan() {
        return 0.5;
    }
    norm_cdf(z)
}

/// The ADF step of one site on a difference with cavity mean `m` and
/// variance `v ≥ 0` under noise σ: `(a, β)` with `μ ← μ + a·s`,
/// `Σ ← Σ − β·s·sᵀ` (see the module doc). `None` if not finite.
pub fn adf_step(m: f64, v: f64, sigma: f64) -> Option<(f64, f64)> {
    let c2 = 2.0 * sigma * sigma;
    if !(c2 + v > 0.0) {
        return None;
    }
    let (a, beta, z) = super::probit_match(m, v, c2);
    (z.is_finite() && a.is_finite() && beta.is_finite()).then_some((a, beta))
}

fn err(e: LinalgError) -> LearnError {
    LearnError::Numerics(e)
}

/// A preference-GP posterior over N items in caller storage, updated on
/// the device by ADF (see the [module documentation](self)).
#[derive(Debug)]
pub struct DevicePrefGp<'s, R: Real> {
    n: usize,
    sigma: R,
    count: u64,
    storage: &'s mut [R],
}

impl<'s, R: Real> DevicePrefGp<'s, R> {
    /// Elements of storage for `n` items: `2n + n(n+1)/2` (saturating).
    pub const fn storage_len(n: usize) -> usize {
        let tri = n.saturating_mul(n.saturating_add(1)) / 2;
        tri.saturating_add(n.saturating_mul(2))
    }

    /// Loads a parsed kind-8 model into `storage` (converting to `R`).
    ///
    /// # Errors
    /// `Unsupported` if the model is not a preference GP over items,
    /// and those of [`from_view`](Self::from_view).
    pub fn from_model(storage: &'s mut [R], model: &ModelView<'_>) -> Result<Self, LearnError> {
        let v = model.pref_gp().ok_or(LearnError::Unsupported)?;
        Self::from_view(storage, &v)
    }

    /// Loads a kind-8 posterior into `storage`.
    ///
    /// # Errors
    /// `Numerics(WorkspaceTooSmall)` if `storage` is shorter than
    /// [`storage_len(n)`](Self::storage_len), `Numerics(NonFinite)` if a
    /// value overflows `R`.
    pub fn from_view(storage: &'s mut [R], v: &PrefGpView<'_>) -> Result<Self, LearnError> {
        let n = v.items();
        let needed = Self::storage_len(n);
        if storage.len() < needed {
            return Err(err(LinalgError::WorkspaceTooSmall { needed, got: storage.len() }));
        }
        let sigma = R::from_f64(v.sigma());
        let (mean, cov) = (v.mean(), v.cov_packed());
        let fits = |x: f64| R::from_f64(x).is_finite();
        if !fits(v.sigma()) || !mean.iter().all(fits) || !cov.iter().all(fits) {
            return Err(err(LinalgError::NonFinite));
        }
        let (mu, rest) = storage.split_at_mut(n);
        for (i, m) in mu.iter_mut().enumerate() {
            *m = R::from_f64(mean.at(i));
        }
        for (i, c) in rest.iter_mut().take(packed_len(n)).enumerate() {
            *c = R::from_f64(cov.at(i));
        }
        Ok(DevicePrefGp { n, sigma, count: v.count(), storage })
    }

    /// Number of items N.
    pub fn items(&self) -> usize {
        self.n
    }
    /// Probit noise σ.
    pub fn sigma(&self) -> R {
        self.sigma
    }
    /// Preferences absorbed (the model's count plus this device's).
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Posterior mean `μ` (n).
    pub fn mean(&self) -> &[R] {
        &self.storage[..self.n]
    }
    /// Posterior covariance, packed lower triangle (n(n+1)/2).
    pub fn cov_packed(&self) -> &[R] {
        &self.storage[self.n..self.n + packed_len(self.n)]
    }

    fn check_item(&self, i: usize) -> Result<(), LearnError> {
        if i < self.n {
            Ok(())
        } else {
            Err(LearnError::BadGraph)
        }
    }

    /// `Σ[i][j]` for `i, j < n` (either triangle).
    fn c(&self, i: usize, j: usize) -> R {
        let (i, j) = if j > i { (j, i) } else { (i, j) };
        self.storage[self.n + packed_len(i) + j]
    }

    /// `v_ij = Σ_ii + Σ_jj − 2Σ_ij`, clamped at 0, for valid `i, j`.
    fn v(&self, i: usize, j: usize) -> R {
        let v = self.c(i, i) + self.c(j, j) - (self.c(i, j) + self.c(i, j));
        v.max(R::ZERO)
    }

    /// `Σ[i][j]`.
    ///
    /// # Errors
    /// `BadGraph` if `i` or `j` is `≥ n`.
    pub fn cov(&self, i: usize, j: usize) -> Result<R, LearnError> {
        self.check_item(i)?;
        self.check_item(j)?;
        Ok(self.c(i, j))
    }

    /// `P(i ≻ j) = Φ((μ_i − μ_j)/√(2σ² + v_ij))` and `v_ij`, the posterior
    /// variance of `f_i − f_j` (clamped at 0). `P(i ≻ i) = ½`.
    ///
    /// # Errors
    /// `BadGraph` if `i` or `j` is `≥ n`.
    pub fn prob(&self, i: usize, j: usize) -> Result<(R, R), LearnError> {
        self.check_item(i)?;
        self.check_item(j)?;
        let f = |x: R| x.to_f64();
        let (mu, c) = (self.mean(), |a, b| f(self.c(a, b)));
        let p = prob_moments(f(mu[i]), f(mu[j]), c(i, i), c(j, j), c(i, j), self.sigma.to_f64());
        Ok((R::from_f64(p), self.v(i, j)))
    }

    /// The items by posterior mean, highest first, ties in index order
    /// ([`rank::order`]): `out` needs exactly n entries.
    ///
    /// # Errors
    /// [`RankError::LengthMismatch`].
    pub fn rank(&self, out: &mut [u32]) -> Result<(), RankError>
    where
        R: Score,
    {
        rank::order(self.mean(), out)
    }

    /// The k = `out.len()` items of highest posterior mean ([`rank::top_k`]).
    ///
    /// # Errors
    /// [`RankError::LengthMismatch`] if `k > n`.
    pub fn top_k(&self, out: &mut [u32]) -> Result<(), RankError>
    where
        R: Score,
    {
        rank::top_k(self.mean(), out)
    }

    /// The next pair to ask (001 §5): `(i, j, v_ij/m_ij²)` with `i < j`
    /// chosen over all pairs, exactly, in O(N²), by the one rule of
    /// [`learn::next_pair`](crate::learn::next_pair): the largest ratio
    /// (`+∞` where `m_ij = 0 < v_ij`), then the largest `v_ij`, then the
    /// first pair in `(i, j)` order. Pairs with `v_ij = 0` are never
    /// chosen: `None` for N < 2 or when every difference is certain.
    pub fn next_pair(&self) -> Option<(usize, usize, R)> {
        let mu = self.mean();
        let mut best: Option<PairScore<R>> = None;
        for i in 0..self.n {
            for j in i + 1..self.n {
                let m = mu[i] - mu[j];
                offer(&mut best, PairScore::new(i, j, self.v(i, j), m * m));
            }
        }
        best.map(|c| (c.i, c.j, c.ratio()))
    }

    /// Absorbs one observed preference `w ≻ l` by one ADF site update
    /// (see the module doc), O(N²).
    ///
    /// # Errors
    /// `BadGraph` (`w` or `l` is `≥ n`, or `w == l`),
    /// `Numerics(NonFinite)` (the update would overflow),
    /// `Numerics(NotPositiveDefinite { index })` (rounding would leave
    /// `Σ_index,index ≤ 0`). On error nothing has changed.
    pub fn observe(&mut self, w: usize, l: usize) -> Result<(), LearnError> {
        self.check_item(w)?;
        self.check_item(l)?;
        if w == l {
            return Err(LearnError::BadGraph);
        }
        let n = self.n;
        let m = (self.mean()[w] - self.mean()[l]).to_f64();
        let v = self.v(w, l).to_f64();
        let (a, beta) = adf_step(m, v, self.sigma.to_f64()).ok_or(err(LinalgError::NonFinite))?;
        let (ar, br) = (R::from_f64(a), R::from_f64(beta));
        // s = Σ·d = Σ_{:,w} − Σ_{:,l}, into the scratch slot.
        let s_at = n + packed_len(n);
        for i in 0..n {
            let si = self.c(i, w) - self.c(i, l);
            self.storage[s_at + i] = si;
        }
        // Check everything the update will produce before writing it.
        for i in 0..n {
            let si = self.storage[s_at + i];
            let mu_i = self.storage[i] + si * ar;
            let d_i = self.c(i, i) - br * si * si;
            if !(mu_i.is_finite() && d_i.is_finite() && (br * si).is_finite()) {
                return Err(err(LinalgError::NonFinite));
            }
            if !(d_i > R::ZERO) {
                return Err(err(LinalgError::NotPositiveDefinite { index: i }));
            }
        }
        let (mu, rest) = self.storage.split_at_mut(n);
        let (cov, s) = rest.split_at_mut(packed_len(n));
        for i in 0..n {
            let si = s[i];
            mu[i] += si * ar;
            let bsi = br * si;
            let row = &mut cov[packed_len(i)..packed_len(i) + i + 1];
            for (c, &sj) in row.iter_mut().zip(s.iter()) {
                *c -= bsi * sj;
            }
        }
        self.count = self.count.saturating_add(1);
        Ok(())
    }

    /// [`observe`](Self::observe), and on success `w ≻ l` recorded in
    /// `log` ([`crate::learn::pair_log`]: a ring over caller storage, or
    /// with the feature `heapless` a `heapless::HistoryBuffer`).
    ///
    /// # Errors
    /// Those of [`observe`](Self::observe), and `BadGraph` for an index
    /// above `u32::MAX`; on error neither the posterior nor the log has
    /// changed.
    pub fn observe_logged(&mut self, w: usize, l: usize, log: &mut impl PairRecord) -> Result<(), LearnError> {
        let (Ok(winner), Ok(loser)) = (u32::try_from(w), u32::try_from(l)) else {
            return Err(LearnError::BadGraph);
        };
        self.observe(w, l)?;
        log.record(Pair { winner, loser });
        Ok(())
    }

    /// The posterior as a kind-8 model to write (no item names: the
    /// host's file keeps them, by item index). Written as `f32`, an `f32`
    /// posterior is stored bit for bit.
    pub fn to_model(&self) -> Model<'_>
    where
        R: ValuesReal,
    {
        Model::PrefGp(PrefGpModel {
            sigma: self.sigma.to_f64(),
            count: self.count,
            mean: R::values(self.mean()),
            cov_packed: R::values(self.cov_packed()),
            item_names: "",
        })
    }

    /// Bytes of the file [`to_model`](Self::to_model) gives when written
    /// as `et` without metadata.
    pub fn model_len(&self, et: ElementType) -> Option<usize> {
        PrefGpModel::file_len(self.n, et)
    }
}

/// The device shape ([`crate::learn::device`]): sized by the number of
/// items N, started from a kind-8 posterior (nothing else), carrying
/// nothing beside the state, written as kind 8.
impl<'s, R: ValuesReal> DeviceLearner<'s> for DevicePrefGp<'s, R> {
    type Real = R;
    type Extra = ();
    type Params = ();

    fn storage_len(n: usize) -> Option<usize> {
        let tri = n.checked_add(1).and_then(|n1| n.checked_mul(n1))? / 2;
        (n > 0).then_some(())?;
        tri.checked_add(n.checked_mul(2)?)
    }

    fn state_file_len(n: usize, et: ElementType) -> Option<usize> {
        PrefGpModel::file_len(n, et)
    }

    type Prior<'v> = PrefGpView<'v>;
    type Saved<'v> = PrefGpView<'v>;

    fn prior<'v>(model: &'v ModelView<'v>) -> Option<PrefGpView<'v>> {
        model.pref_gp()
    }

    fn prior_size(prior: &PrefGpView<'_>) -> usize {
        prior.items()
    }

    fn init(storage: &'s mut [R], prior: &PrefGpView<'_>, (): ()) -> Result<(Self, ()), LearnError> {
        Ok((Self::from_view(storage, prior)?, ()))
    }

    fn saved<'v>(model: &ModelView<'v>) -> Option<PrefGpView<'v>> {
        model.pref_gp()
    }

    fn saved_size(saved: &PrefGpView<'_>) -> usize {
        saved.items()
    }

    fn restore(storage: &'s mut [R], saved: &PrefGpView<'_>) -> Result<(Self, ()), LearnError> {
        Self::init(storage, saved, ())
    }

    // Out of line: inlined into the save, its float conversions widen the
    // save's frame, which stays live under the write (24 B deeper on a
    // Cortex-M4F, `bench/device_pref.sh`).
    #[inline(never)]
    fn state(&self, (): ()) -> Model<'_> {
        self.to_model()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::format::Values;
    use std::vec;
    use std::vec::Vec;

    /// Moments that overflow their own type (found by the model_parser
    /// fuzz target on an `f32` posterior near `f32::MAX`) still give a
    /// probability: computed in `f64`, rescaled past `f64` overflow, ½ when
    /// undefined; and the ordinary case equals the closed form.
    #[test]
    fn prob_moments_never_nan() {
        let big = f64::from(f32::MAX);
        // f32-range moments: exact in f64, m/√s2 = 2·big/√(2 + 4·big) → Φ(large).
        let p = prob_moments(big, -big, big, big, -big, 1.0);
        assert!((0.0..=1.0).contains(&p) && p > 0.5, "{p}");
        // f64 overflow of both m and 2σ² (∞/∞ unscaled): rescaled,
        // z = 2·MAX/√(2·MAX²) = √2.
        let m = f64::MAX;
        let p = prob_moments(m, -m, 0.0, 0.0, 0.0, m);
        assert!((p - norm_cdf(core::f64::consts::SQRT_2)).abs() < 1e-12, "{p}");
        // Both overflow with the difference dominating: z ≈ √MAX, P = 1.
        assert_eq!(prob_moments(m, -m, m, m, -m, 1.0), 1.0);
        // 0/0: no spread and no difference.
        assert_eq!(prob_moments(0.0, 0.0, 0.0, 0.0, 0.0, 1e-200), 0.5);
        // ordinary moments: Φ((1 − 0.5)/√(2·0.25 + 1 + 2 − 2·0.5)).
        let p = prob_moments(1.0, 0.5, 1.0, 2.0, 0.5, 0.5);
        assert!((p - norm_cdf(0.5 / 2.5f64.sqrt())).abs() < 1e-15);
    }

    fn spec(n: usize, mean: &[f64], cov: &[f64]) -> Vec<u8> {
        spec_sigma(n, mean, cov, 0.7)
    }

    fn spec_sigma(n: usize, mean: &[f64], cov: &[f64], sigma: f64) -> Vec<u8> {
        assert_eq!(cov.len(), packed_len(n));
        let m = Model::PrefGp(PrefGpModel {
            sigma,
            count: 3,
            mean: Values::F64(mean),
            cov_packed: Values::F64(cov),
            item_names: "",
        });
        let s = crate::format::ModelSpec::new(m, ElementType::F64);
        let mut b = vec![0u8; s.buffer_len()];
        s.emit(&mut b).unwrap();
        b
    }

    /// `observe_logged` records a pair only when the update succeeded,
    /// and its update is the plain `observe`'s, bit for bit.
    #[test]
    fn observe_logged_records_absorbed_pairs() {
        use crate::learn::pair_log::PairLog;
        let file = spec(3, &[0.3, -0.1, 0.5], &[1.0, 0.2, 0.8, -0.1, 0.3, 1.5]);
        let view = ModelView::new_checked(&file).unwrap();
        let (mut s1, mut s2) = ([0f32; 12], [0f32; 12]);
        let mut plain = DevicePrefGp::from_model(&mut s1, &view).unwrap();
        let mut logged = DevicePrefGp::from_model(&mut s2, &view).unwrap();
        let mut buf = [Pair::default(); 2];
        let mut log = PairLog::new(&mut buf);
        for (w, l) in [(2, 0), (1, 0), (2, 1)] {
            plain.observe(w, l).unwrap();
            logged.observe_logged(w, l, &mut log).unwrap();
        }
        assert_eq!(logged.observe_logged(1, 1, &mut log), Err(LearnError::BadGraph));
        assert_eq!(logged.observe_logged(0, 3, &mut log), Err(LearnError::BadGraph));
        let (a, b) = log.ordered();
        let got: Vec<Pair> = a.iter().chain(b).copied().collect();
        assert_eq!(got, [Pair { winner: 1, loser: 0 }, Pair { winner: 2, loser: 1 }]);
        assert_eq!(plain.mean(), logged.mean());
        assert_eq!(plain.cov_packed(), logged.cov_packed());
    }

    #[test]
    fn errors_change_nothing() {
        let mean = [0.3, -0.1, 0.5];
        let cov = [1.0, 0.2, 0.8, -0.1, 0.3, 1.5];
        let file = spec(3, &mean, &cov);
        let view = ModelView::new_checked(&file).unwrap();
        let mut short = [0.0f64; 11];
        assert!(matches!(
            DevicePrefGp::from_model(&mut short, &view),
            Err(LearnError::Numerics(LinalgError::WorkspaceTooSmall { needed: 12, got: 11 }))
        ));
        let mut st = [0.0f64; 12];
        let mut gp = DevicePrefGp::from_model(&mut st, &view).unwrap();
        let before: Vec<f64> = gp.storage[..9].to_vec();
        assert_eq!(gp.observe(1, 1), Err(LearnError::BadGraph));
        assert_eq!(gp.observe(3, 0), Err(LearnError::BadGraph));
        assert_eq!(gp.observe(0, 7), Err(LearnError::BadGraph));
        assert_eq!(gp.prob(0, 3), Err(LearnError::BadGraph));
        assert_eq!(&gp.storage[..9], &before[..]);
        assert_eq!(gp.count(), 3);
        // P(i ≻ i) = ½ with variance 0; P(i ≻ j) + P(j ≻ i) = 1.
        assert_eq!(gp.prob(2, 2).unwrap(), (0.5, 0.0));
        let (p, v) = gp.prob(0, 2).unwrap();
        let (q, u) = gp.prob(2, 0).unwrap();
        assert!((p + q - 1.0).abs() < 1e-15 && v == u);
        // An update that overflows: μ_0 − μ_1 = −3.4e308 is not finite;
        // refused, nothing written.
        let file = spec_sigma(2, &[-1.7e308, 1.7e308], &[1.0, 0.0, 1.0], 1e-3);
        let view = ModelView::new_checked(&file).unwrap();
        let mut st = [0.0f64; 7];
        let mut gp = DevicePrefGp::from_model(&mut st, &view).unwrap();
        let before: Vec<f64> = gp.storage[..5].to_vec();
        assert_eq!(gp.observe(0, 1), Err(LearnError::Numerics(LinalgError::NonFinite)));
        assert_eq!(&gp.storage[..5], &before[..]);
        assert_eq!(gp.count(), 3);
        // f32 storage refuses a model whose values overflow f32.
        let file = spec(2, &[1e200, 0.0], &[1.0, 0.0, 1.0]);
        let view = ModelView::new_checked(&file).unwrap();
        let mut st = [0.0f32; 7];
        assert!(matches!(DevicePrefGp::from_model(&mut st, &view), Err(LearnError::Numerics(LinalgError::NonFinite))));
    }

    #[test]
    fn a_very_surprising_preference_gives_no_nan() {
        // The loser is far ahead with tiny variance: z ≈ −1e6.
        let file = spec(2, &[1e3, -1e3], &[1e-6, 0.0, 1e-6]);
        let view = ModelView::new_checked(&file).unwrap();
        let mut st = [0.0f64; 7];
        let mut gp = DevicePrefGp::from_model(&mut st, &view).unwrap();
        gp.observe(1, 0).unwrap();
        assert!(gp.mean().iter().chain(gp.cov_packed()).all(|x| x.is_finite()));
        assert!(gp.cov(0, 0).unwrap() > 0.0 && gp.cov(1, 1).unwrap() > 0.0);
        // The update moved the winner up and the loser down.
        assert!(gp.mean()[1] > -1e3 && gp.mean()[0] < 1e3);
    }
}
