//! The floating-point element types ranklet computes in.
//!
//! Training runs in `f64`; scoring on a device runs in `f32` by default. The
//! numerical kernels are generic over [`Real`] so that one implementation
//! serves both. Transcendental functions come from `libm`, because `core`
//! has no float math of its own.

use core::fmt::Debug;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// An IEEE-754 binary floating-point type: `f32` or `f64`.
pub trait Real:
    Copy
    + Debug
    + Default
    + PartialEq
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
    + 'static
{
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// Machine epsilon (distance from 1 to the next larger number).
    const EPSILON: Self;
    /// Smallest positive normal number.
    const MIN_POSITIVE: Self;
    /// Largest finite number.
    const MAX: Self;
    /// Rounds an `f64` to this type.
    fn from_f64(x: f64) -> Self;
    /// Widens (or keeps) this value as an `f64`.
    fn to_f64(self) -> f64;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// `sqrt(self² + other²)` without undue overflow or underflow.
    fn hypot(self, other: Self) -> Self;
    /// Natural exponential.
    fn exp(self) -> Self;
    /// Whether the value is neither infinite nor NaN.
    fn is_finite(self) -> bool;
    /// `|self|` with the sign of `sign`.
    fn copysign(self, sign: Self) -> Self;
    /// The larger of two values (NaN-ignoring, like `f64::max`).
    fn max(self, other: Self) -> Self;
    /// The smaller of two values (NaN-ignoring, like `f64::min`).
    fn min(self, other: Self) -> Self;
    /// `self` raised to the integer power `n`.
    fn powi(self, n: i32) -> Self;
}

macro_rules! impl_real {
    ($t:ty, $sqrt:path, $hypot:path, $exp:path, $copysign:path, $pow:path) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const EPSILON: Self = <$t>::EPSILON;
            const MIN_POSITIVE: Self = <$t>::MIN_POSITIVE;
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                $sqrt(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn hypot(self, other: Self) -> Self {
                $hypot(self, other)
            }
            #[inline(always)]
            fn exp(self) -> Self {
                $exp(self)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline(always)]
            fn copysign(self, sign: Self) -> Self {
                $copysign(self, sign)
            }
            #[inline(always)]
            fn max(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
            #[inline(always)]
            fn min(self, other: Self) -> Self {
                <$t>::min(self, other)
            }
            #[inline(always)]
            fn powi(self, n: i32) -> Self {
                $pow(self, n as $t)
            }
        }
    };
}

impl_real!(f32, libm::sqrtf, libm::hypotf, libm::expf, libm::copysignf, libm::powf);
impl_real!(f64, libm::sqrt, libm::hypot, libm::exp, libm::copysign, libm::pow);
