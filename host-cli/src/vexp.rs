//! A branch-free `exp` for the RBF kernel's arguments `x ≤ 0`, written so
//! that the compiler vectorises a loop over it (no calls, no branches).
//!
//! Method (Cody & Waite range reduction, as in fdlibm's `e_exp.c`):
//! `x = k·ln 2 + r` with `k = round(x/ln 2)` and `|r| ≤ ln 2 / 2`, `r`
//! from the two-part `ln 2 = LN2_HI + LN2_LO` (`k·LN2_HI` is exact for
//! `|k| < 2²¹`); `eʳ` by its Taylor polynomial of degree 13 (truncation
//! `(ln 2/2)¹⁴/14! ≈ 4·10⁻¹⁸` relative); `2ᵏ = 2ʰ·2ᵏ⁻ʰ` with
//! `h = round(k/2)`, so both factors stay normal down to the subnormal
//! range and the product rounds once, as a correctly rounded `exp` would.
//! Arguments below −746 give 0 (`e⁻⁷⁴⁶ < 2⁻¹⁰⁷⁵`, half the smallest
//! subnormal), positive ones are clamped to 0 (outside the domain), NaN
//! stays NaN.
//!
//! **Accuracy** (test `matches_libm_over_the_rbf_range`, against the
//! system libm's `exp` through `f64::exp`, on 2·10⁶ arguments spread over
//! [−746, 0] plus the reduction boundaries and the underflow edges):
//! relative error at most [`MAX_REL_ERR`] = 4·10⁻¹⁶ (under 2 ulp) where
//! the result is normal (x ≥ −708.39); in the subnormal range the error is
//! at most one unit of the smallest subnormal (2⁻¹⁰⁷⁴), which is all a
//! subnormal result can carry.

/// Stated bound on the relative error where `exp(x)` is a normal number.
pub const MAX_REL_ERR: f64 = 4e-16;

const LOG2E: f64 = std::f64::consts::LOG2_E;
/// Upper 32 bits of ln 2 (fdlibm `ln2HI`): `k·LN2_HI` is exact.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
/// ln 2 − LN2_HI (fdlibm `ln2LO`).
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
/// 1.5·2⁵²: adding and subtracting it rounds to the nearest integer (for
/// |v| < 2⁵¹), and its low mantissa bits then hold that integer.
const SHIFT: f64 = 6_755_399_441_055_744.0;
/// Below this the result rounds to 0.
const X_MIN: f64 = -746.0;

/// `1/j!` for `j = 0..=13`, highest first (Horner).
const C: [f64; 14] = [
    1.0 / 6_227_020_800.0,
    1.0 / 479_001_600.0,
    1.0 / 39_916_800.0,
    1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    1.0 / 40_320.0,
    1.0 / 5_040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    0.5,
    1.0,
    1.0,
];

/// `2ᵐ` for an integer-valued `m ∈ [−1022, 1023]`, from the bits of
/// `m + 1023 + SHIFT` (its low 12 mantissa bits are `m + 1023`).
#[inline(always)]
fn pow2(m: f64) -> f64 {
    f64::from_bits((m + (SHIFT + 1023.0)).to_bits() << 52)
}

/// `eˣ` for `x ≤ 0` (see the module docs for the error bound).
#[inline(always)]
pub fn exp_nonpos(x: f64) -> f64 {
    let xc = x.clamp(X_MIN, 0.0);
    let k = (xc * LOG2E + SHIFT) - SHIFT;
    let r = (xc - k * LN2_HI) - k * LN2_LO;
    let mut p = C[0];
    for c in &C[1..] {
        p = p * r + c;
    }
    let h = (k * 0.5 + SHIFT) - SHIFT;
    let y = p * pow2(h) * pow2(k - h);
    if x.is_nan() {
        x
    } else {
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Smallest positive subnormal.
    const TINY: f64 = f64::from_bits(1);

    fn check(x: f64, worst: &mut (f64, f64)) {
        let (got, want) = (exp_nonpos(x), x.exp());
        if want >= f64::MIN_POSITIVE {
            let rel = ((got - want) / want).abs();
            if rel > worst.0 {
                *worst = (rel, x);
            }
            assert!(rel <= MAX_REL_ERR, "x = {x:e}: {got:e} vs libm {want:e}, rel {rel:e}");
        } else {
            assert!((got - want).abs() <= TINY, "x = {x:e}: {got:e} vs libm {want:e} (subnormal range)");
        }
    }

    /// The whole range the RBF kernel uses, `−γ‖x−y‖² ∈ [−∞, 0]`: dense
    /// near 0 (where most kernel values are), uniform over [−746, 0], every
    /// reduction boundary `k·ln 2 / 2` and the subnormal/underflow edges.
    #[test]
    fn matches_libm_over_the_rbf_range() {
        let mut worst = (0.0, 0.0);
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut uniform = || {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..1_000_000 {
            check(-746.0 * uniform(), &mut worst);
            check(-(10f64.powf(-12.0 + 15.0 * uniform())), &mut worst);
        }
        for k in 0..=2160 {
            let b = -(k as f64) * std::f64::consts::LN_2 / 2.0;
            for d in [-1e-12, -1e-15, 0.0, 1e-15, 1e-12] {
                check((b + d).min(0.0), &mut worst);
            }
        }
        for x in [0.0, -0.0, -TINY, -1e-300, -1e-17, -708.39, -708.4, -709.0, -744.4, -745.1, -745.13, -745.14, -745.2]
        {
            check(x, &mut worst);
        }
        eprintln!("worst relative error {:e} at x = {}", worst.0, worst.1);
    }

    #[test]
    fn underflows_to_zero_and_keeps_nan() {
        for x in [-745.2, -746.0, -800.0, -1e300, f64::NEG_INFINITY] {
            assert_eq!(exp_nonpos(x), 0.0, "{x}");
            assert_eq!(x.exp(), 0.0, "{x}");
        }
        assert_eq!(exp_nonpos(0.0), 1.0);
        assert_eq!(exp_nonpos(-0.0), 1.0);
        assert!(exp_nonpos(f64::NAN).is_nan());
        // Subnormal results: smallest subnormal at −744.44, none at −745.2.
        assert!(exp_nonpos(-744.5) > 0.0 && exp_nonpos(-744.5) < f64::MIN_POSITIVE);
    }
}
