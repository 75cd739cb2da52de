//! The standard normal distribution's functions that the preference
//! learners and the model format share: `Φ(z)`, `log Φ(z)`, and the
//! inverse Mills ratio `r = N(z)/Φ(z)` with `z + r`, each finite for every
//! finite `z`. This module sits below both [`crate::learn`] (host EP, device
//! ADF, active exploration) and [`crate::format`] (the preference kinds'
//! `P(i ≻ j)`), so that all of them compute the same numbers.
//!
//! # One switch point
//!
//! For `z ≥ −2.5` the functions come from `erfc`: `Φ(z) = ½·erfc(−z/√2)`
//! and `r = N(z)/Φ(z)`. For `z < −2.5`, where `Φ(z)` eventually underflows
//! and `z + r` cancels (`r ≈ −z`), they come from Laplace's continued
//! fraction of the Mills ratio, with `x = −z`:
//!
//! ```text
//! Φ(z)/N(z) = 1/(x + u₁),   u₁ = 1/(x + 2/(x + 3/(x + …))),   r = x + u₁,   z + r = u₁
//! ```
//!
//! 100 terms: for `x ≥ 2.5` the fraction is converged to rounding (60
//! terms leave 50ε at `x = 2.5`, 100 leave 0.6ε; at `x = 4` 40 terms
//! suffice). `z + r` is then `u₁` itself, with no cancellation. `N(z)` is
//! `exp(−z²/2)/√(2π)` with `z²` split into an exact head and a small tail
//! (Cody's device), so that the rounding of `z²` does not cost `z²·ε` of
//! relative accuracy in the tails.
//!
//! # Accuracy
//!
//! Checked against a table of mpmath values (60 digits, then rounded to
//! `f64`; `core/tests/fixtures/special/gen_normal.py`) over
//! `z ∈ [−40, 40]` by `core/tests/special_reference.rs`. The bounds it
//! asserts, in units of `f64::EPSILON` relative to the reference (where the
//! reference is a normal number; the worst measured error in brackets):
//!
//! | function | `z < −2.5` | `−2.5 ≤ z ≤ 0` | `z > 0` |
//! |---|---|---|---|
//! | `Φ(z)` | 3 (1.7) | 5 (3.2) | 1 (0.6) |
//! | `log Φ(z)` | 2 (1.0) | 2 (1.0) | 5 (3.2) |
//! | `r` | 2 (1.0) | 6 (3.9) | 3 (1.5) |
//! | `z + r` | 2 (1.0) | 40 (27) | 2 (0.8) |
//!
//! On `[−2.5, 0]` the `erfc` argument `−z/√2` rounds once, which costs up
//! to `z²·ε` relatively (6ε at the switch), and `z + r` is a difference
//! that loses a further factor `r/(z + r)` (7 at the switch): this bounds
//! how high the switch may go; how low it may go is bounded by the
//! fraction's convergence (above). The switch was at −4 (device) and −8
//! (host EP) before the two were made one; at −8, `z + r` lost 10⁻¹³.

/// `1/√(2π)`.
pub const INV_SQRT_2PI: f64 = 0.398_942_280_401_432_7;

/// `½·ln(2π)`.
pub const HALF_LN_2PI: f64 = 0.918_938_533_204_672_7;

/// Below this `z` the continued fraction replaces `erfc`.
pub const SWITCH: f64 = -2.5;

/// Terms of the continued fraction.
const CF_TERMS: u32 = 100;

/// `u₁ = 1/(x + 2/(x + 3/(x + …)))` for `x = −z > 2.5` (see the module doc).
fn mills_tail(x: f64) -> f64 {
    let mut acc = 0.0;
    let mut k = CF_TERMS;
    while k >= 2 {
        acc = f64::from(k) / (x + acc);
        k -= 1;
    }
    1.0 / (x + acc)
}

/// `exp(−z²/2)`, with `z = h + t` (`h` a multiple of 1/16) so that
/// `z² = h² + t·(z + h)` has an exact head.
fn exp_half_sq(z: f64) -> f64 {
    // Beyond |z| = 64 the result underflows (and `16·z` might overflow).
    if z.abs() > 64.0 {
        return 0.0;
    }
    let h = libm::trunc(z * 16.0) / 16.0;
    let t = z - h;
    libm::exp(-0.5 * h * h) * libm::exp(-0.5 * t * (z + h))
}

/// The standard normal density `N(z) = exp(−z²/2)/√(2π)`.
pub fn norm_pdf(z: f64) -> f64 {
    INV_SQRT_2PI * exp_half_sq(z)
}

/// `Φ(z)`, the standard normal distribution function (0 below `z ≈ −38.5`,
/// where it underflows, and subnormal from `z ≈ −37.5`).
pub fn norm_cdf(z: f64) -> f64 {
    if z >= SWITCH || z.is_nan() {
        0.5 * libm::erfc(-z * core::f64::consts::FRAC_1_SQRT_2)
    } else {
        let x = -z;
        norm_pdf(z) / (x + mills_tail(x))
    }
}

/// `log Φ(z)`, without underflow of `Φ`: finite wherever `z²/2` is
/// (`|z| < 1.3·10¹⁵⁴`), `−∞` beyond.
pub fn log_norm_cdf(z: f64) -> f64 {
    if z > 0.0 {
        libm::log1p(-norm_cdf(-z))
    } else if z >= SWITCH || z.is_nan() {
        libm::log(norm_cdf(z))
    } else {
        // Φ(z) = N(z)/t with t = x + u₁: log Φ = −z²/2 − ½ln2π − ln t.
        let x = -z;
        -0.5 * z * z - HALF_LN_2PI - libm::log(x + mills_tail(x))
    }
}

/// `(r, z + r)` with `r = N(z)/Φ(z)`, the inverse Mills ratio: for every
/// finite `z` both finite and `≥ 0`, and `r·(z + r) ∈ [0, 1]` (1 only by rounding, for `z → −∞`; the factor of
/// a probit site's variance update). `z + r` never cancels.
pub fn probit_ratio(z: f64) -> (f64, f64) {
    if z >= SWITCH || z.is_nan() {
        let r = norm_pdf(z) / norm_cdf(z);
        (r, z + r)
    } else {
        let u = mills_tail(-z);
        (u - z, u)
    }
}

/// `Φ(m/√s2)`, the probit probability of a difference with mean `m` and
/// total variance `s2 = 2σ² + v > 0` (001 eq. 13).
pub fn probit_prob(m: f64, s2: f64) -> f64 {
    norm_cdf(m / libm::sqrt(s2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finite_and_bounded_everywhere() {
        for z in [-1e150, -1e30, -1e8, -38.0, -4.0 - 1e-12, -4.0, 0.0, 1e8, 1e300] {
            let (r, zr) = probit_ratio(z);
            assert!(r.is_finite() && zr.is_finite() && r >= 0.0 && zr >= 0.0, "z = {z}");
            let b = r * zr;
            assert!((0.0..=1.0).contains(&b), "z = {z}: r(z + r) = {b}");
            assert!(log_norm_cdf(z).is_finite() && log_norm_cdf(z) <= 0.0, "z = {z}");
        }
        // Continuity at the switch.
        let (a, b) = (probit_ratio(SWITCH + 1e-13), probit_ratio(SWITCH - 1e-13));
        assert!((a.0 - b.0).abs() < 1e-12 && (a.1 - b.1).abs() < 1e-12);
    }
}
