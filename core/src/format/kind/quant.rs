//! Model kind 7, quantised linear: integer scoring for cores without an FPU.
//!
//! A linear model `f(x) = b + Σ_j v_j·x_j` (feature centring folded into
//! `v` and `b`) stored as integers: the score of an input is the integer
//!
//! `S(q) = B + Σ_j W_j·q_j`
//!
//! over the quantised input `q_j = sat₁₆(round((x_j − z_j) / a_j))`, with
//! per-feature input scale `a_j > 0` and zero point `z_j` (the input value
//! that maps to `q_j = 0`), `W_j` in `i16` (or `i8`), and `B` an `i64`. The
//! per-model scale `c > 0` says what one unit of `S` is worth: `c·S(q(x)) ≈
//! f(x)`. A device either quantises its own inputs (`q_j` are `i16`, given
//! directly: [`ModelView::score_dense_i16`]), or lets the model do it
//! ([`ModelView::score_dense_quant`]); the generic `f32` entry points return
//! `c·S` as a float.
//!
//! One `QUANT` section: a 24-byte record (`c` as `f64`, `B` as `i64`, the
//! weight width, reserved zeros), then `a` (d × `f32`), `z` (d × `f32`) and
//! `W` (d × `i8`/`i16`), all little-endian. The header's element type must
//! be `f32` (that of `a` and `z`), and the file carries no
//! `FEATURE_CENTRING` (it is folded into `z`, `W` and `B`).
//!
//! # No overflow, by construction
//!
//! Accumulation is in `i64`, each product `W_j·q_j` in `i32`. With
//! `|q_j| ≤ 2¹⁵` (an `i16`) and `|W_j| ≤ 2¹⁵` (`i16`; `2⁷` for `i8`), every
//! product satisfies `|W_j·q_j| ≤ 2³⁰ < 2³¹`, so it is exact in `i32`. The
//! parser accepts a file only if
//!
//! `|B| + d·W_max·2¹⁵ ≤ 2⁶³ − 1`   (W_max = 2¹⁵ for `i16`, 2⁷ for `i8`)
//!
//! (computed exactly, in `u128`). Then every partial sum
//! `B + Σ_{j<k} W_j·q_j` has magnitude at most `|B| + k·W_max·2¹⁵ ≤ 2⁶³ − 1`,
//! so no addition overflows, in any order, for any input. For `|B| ≤ 2⁶²`
//! the bound admits every dimension the header can hold (`d < 2³²`); it
//! refuses a dimension only together with a bias that leaves no room for it.
//! `quant_bound_exact_at_the_limit` (format tests) scores the extreme
//! inputs and weights at the largest dimension a bias allows and compares
//! with an `i128` brute force, and checks that one dimension more is refused.
//!
//! # Error bound
//!
//! For an input whose every feature lies in its calibrated range
//! `|x_j − z_j| ≤ 32767·a_j` (no saturation), the real number `c·S(q(x))`
//! differs from the float model `f(x)` by at most
//!
//! `E = c·[(1/2 + 2⁻⁷)·Σ_j (|W_j| + 1/2) + (1/2)·(1 + 32767·d)]`
//!
//! ([`QuantView::error_bound`]). Proof: write `u_j = v_j·a_j` (the weight per
//! input step) and `x̂_j = z_j + a_j·q_j`, so that `f(x̂) = f(z) + Σ_j u_j·q_j`.
//! (i) Input: `t = fl(fl(x_j − z_j) / a_j)` is two correctly rounded `f32`
//! operations on `y = (x_j − z_j)/a_j`, `|y| ≤ 32767`, so `|t − y| ≤
//! (2·2⁻²⁴ + 2⁻⁴⁸)·32767 < 2⁻⁷`; `|t| < 32767.5` rounds without saturating,
//! `|q_j − t| ≤ 1/2`, hence `|x_j − x̂_j| ≤ a_j·(1/2 + 2⁻⁷)` and `|f(x) −
//! f(x̂)| ≤ (1/2 + 2⁻⁷)·Σ|u_j|`. (ii) Weights and bias: the writer rounds
//! `W_j = round(u_j / c)` and `B = round(f(z) / c)`, so `|c·W_j − u_j| ≤
//! c/2`, `|c·B − f(z)| ≤ c/2`, and with `|q_j| ≤ 32767`, `|f(x̂) − c·S| ≤
//! (c/2)·(1 + 32767·d)`. (iii) `|u_j| ≤ c·(|W_j| + 1/2)`. The bound is computed from the
//! file alone, so it holds for any writer that rounds to nearest (the
//! host's `ranklet export --quantize` does; `f64` rounding of the export
//! itself adds a relative 1e-15). A feature outside its range saturates
//! (`q_j = ±32767/−32768`), and the error grows by `|v_j|` times the
//! distance beyond the range.
//!
//! Order: `c > 0`, so whenever `f(x) − f(y) > 2E`, `S(q(x)) > S(q(y))`; items
//! whose float scores differ by less may tie or swap.

use super::Kind;
use crate::format::array::{le_f64, le_u64};
use crate::format::centring::FeatureCentring;
use crate::format::header::{bytes_for, expect_len, Header, Sections};
use crate::format::input::Centred;
use crate::format::section_id as sid;
use crate::format::sum::Arith;
use crate::format::write::{check_dim, Payload, SectionSink, MAX_FIXED};
use crate::format::{ElementType, EmitError, ModelView, ParseError, ScoreError, Version};

/// The `QUANT` section (offsets relative to the section); also reachable
/// as `format::field::quant`.
pub mod layout {
    use crate::format::field::Field;

    /// Per-model score scale `c` (`f64`), finite and > 0.
    pub const SCALE: Field = 0..8;
    /// Integer bias `B` (`i64`).
    pub const BIAS: Field = 8..16;
    /// Weight width code (`u8`): 1 = `i8`, 2 = `i16`.
    pub const WIDTH: usize = 16;
    /// Reserved, zero (7 bytes).
    pub const RESERVED: Field = 17..24;
    /// Length of the record; `a` (d × `f32`), `z` (d × `f32`) and `W` (d ×
    /// width bytes) follow.
    pub const LEN: usize = RESERVED.end;

    /// The record as `(name, bytes, type, meaning)`, for `docs/format.md`.
    pub const FIELDS: &[(&str, Field, &str, &str)] = &[
        ("scale", SCALE, "f64", "score per integer unit `c`, finite, > 0"),
        ("bias", BIAS, "i64", "integer bias `B`"),
        ("width", WIDTH..WIDTH + 1, "u8", "weight width: 1 = i8, 2 = i16"),
        ("reserved", RESERVED, "[u8; 7]", "0"),
    ];
}

const _: () = assert!(layout::LEN <= MAX_FIXED);

/// Largest magnitude of a quantised input, `2¹⁵` (an `i16`).
pub const Q_MAX: u64 = 1 << 15;

/// Real-valued quantised input in steps of `a_j` (the largest value that
/// does not saturate is `Q_SPAN`).
pub const Q_SPAN: f64 = 32767.0;

/// Width of the stored integer weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuantWidth {
    /// `i8` weights, `|W_j| ≤ 2⁷`.
    I8,
    /// `i16` weights, `|W_j| ≤ 2¹⁵`.
    I16,
}

impl QuantWidth {
    /// The code stored in the `width` field.
    pub const fn code(self) -> u8 {
        match self {
            QuantWidth::I8 => 1,
            QuantWidth::I16 => 2,
        }
    }

    /// Decodes the `width` field.
    pub const fn from_code(c: u8) -> Option<Self> {
        match c {
            1 => Some(QuantWidth::I8),
            2 => Some(QuantWidth::I16),
            _ => None,
        }
    }

    /// Bytes per weight.
    pub const fn bytes(self) -> usize {
        match self {
            QuantWidth::I8 => 1,
            QuantWidth::I16 => 2,
        }
    }

    /// Largest weight magnitude, `W_max` of the bound (`|i8::MIN|`,
    /// `|i16::MIN|`).
    pub const fn w_max(self) -> u64 {
        match self {
            QuantWidth::I8 => 1 << 7,
            QuantWidth::I16 => 1 << 15,
        }
    }

    /// The largest positive weight the writer produces (`i8::MAX`,
    /// `i16::MAX`).
    pub const fn w_pos(self) -> i16 {
        match self {
            QuantWidth::I8 => i8::MAX as i16,
            QuantWidth::I16 => i16::MAX,
        }
    }
}

/// The no-overflow bound: whether `|bias| + d·W_max·2¹⁵ ≤ 2⁶³ − 1` (exact,
/// in `u128`). See the module docs for the proof that it makes `i64`
/// accumulation overflow-free.
pub const fn accumulator_fits(d: usize, bias: i64, width: QuantWidth) -> bool {
    let per_term = width.w_max() as u128 * Q_MAX as u128;
    let worst = bias.unsigned_abs() as u128 + d as u128 * per_term;
    worst <= i64::MAX as u128
}

/// The largest dimension [`accumulator_fits`] allows with this bias
/// (possibly beyond what the header's `u32` can hold).
pub const fn max_dim(bias: i64, width: QuantWidth) -> u128 {
    let per_term = width.w_max() as u128 * Q_MAX as u128;
    (i64::MAX as u128).saturating_sub(bias.unsigned_abs() as u128) / per_term
}

/// Quantises one input value: `sat₁₆(round((x − zero) / scale))`, computed
/// in `f32` (`x − zero` and the division correctly rounded, ties rounded
/// away from zero), saturating to `[−32768, 32767]` (and `±∞` with it). The
/// same bits on every IEEE-754 target, with or without an FPU, so a device
/// and the host quantise alike. `x` must not be NaN (the entry points check).
#[inline]
pub fn quantize(x: f32, zero: f32, scale: f32) -> i16 {
    let t = (x - zero) / scale;
    if !(t > -32768.0) {
        return i16::MIN;
    }
    if t >= 32767.0 {
        return i16::MAX;
    }
    // |t| < 2¹⁵: `as` truncates exactly, and `t − r` is exact (the
    // fraction bits of t).
    let r = t as i32;
    let f = t - r as f32;
    let r = if f >= 0.5 {
        r + 1
    } else if f <= -0.5 {
        r - 1
    } else {
        r
    };
    r.clamp(i16::MIN as i32, i16::MAX as i32) as i16
}

/// A quantised linear model, to write. Build one from a float model with
/// the host's `ranklet export --quantize`; the writer checks lengths,
/// ranges and the accumulator bound.
#[derive(Clone, Copy, Debug)]
pub struct QuantModel<'a> {
    /// Width of the stored weights.
    pub width: QuantWidth,
    /// Score per integer unit `c`, finite and > 0.
    pub scale: f64,
    /// Integer bias `B`.
    pub bias: i64,
    /// Per-feature input scale `a_j`, finite and > 0; its length is d.
    pub input_scale: &'a [f32],
    /// Per-feature zero point `z_j`, finite, d values.
    pub zero_point: &'a [f32],
    /// Integer weights `W_j`, d values, in the `i8` range when `width` is
    /// [`QuantWidth::I8`].
    pub weights: &'a [i16],
}

/// The parameters of a parsed quantised model.
#[derive(Clone, Copy, Debug)]
pub struct QuantView<'a> {
    pub(crate) width: QuantWidth,
    pub(crate) scale: f64,
    pub(crate) bias: i64,
    pub(crate) input_scale: &'a [u8],
    pub(crate) zero_point: &'a [u8],
    pub(crate) weights: &'a [u8],
}

fn f32_at(b: &[u8], j: usize) -> f32 {
    let at = j.wrapping_mul(4);
    b.get(at..at.wrapping_add(4)).and_then(|s| <[u8; 4]>::try_from(s).ok()).map_or(0.0, f32::from_le_bytes)
}

impl<'a> QuantView<'a> {
    /// Width of the stored weights.
    pub fn width(&self) -> QuantWidth {
        self.width
    }

    /// Score per integer unit `c`: `c·S ≈` the float model's score.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Integer bias `B`.
    pub fn bias(&self) -> i64 {
        self.bias
    }

    /// Number of features d.
    pub fn dim(&self) -> usize {
        self.input_scale.len() / 4
    }

    /// Input scale `a_j` (0 if `j >= d`).
    pub fn input_scale(&self, j: usize) -> f32 {
        f32_at(self.input_scale, j)
    }

    /// Zero point `z_j` (0 if `j >= d`).
    pub fn zero_point(&self, j: usize) -> f32 {
        f32_at(self.zero_point, j)
    }

    /// Weight `W_j` (0 if `j >= d`).
    pub fn weight(&self, j: usize) -> i16 {
        match self.width {
            QuantWidth::I8 => self.weights.get(j).map_or(0, |&b| b as i8 as i16),
            QuantWidth::I16 => {
                let at = j.wrapping_mul(2);
                self.weights.get(at..at.wrapping_add(2)).map_or(0, |s| i16::from_le_bytes([s[0], s[1]]))
            }
        }
    }

    /// The calibrated range of feature `j`, `z_j ± 32767·a_j`: inputs
    /// inside it do not saturate (as `f64`, exact).
    pub fn range(&self, j: usize) -> (f64, f64) {
        let (z, a) = (self.zero_point(j) as f64, self.input_scale(j) as f64);
        (z - Q_SPAN * a, z + Q_SPAN * a)
    }

    /// Whether input value `x` of feature `j` saturates: it lies more than
    /// half a step beyond the calibrated [`range`](Self::range), so
    /// [`quantize`] clips it (NaN counts as saturated).
    pub fn saturates(&self, j: usize, x: f32) -> bool {
        let t = (x - self.zero_point(j)) / self.input_scale(j);
        !(t > -32768.5 && t < 32767.5)
    }

    /// How many of the d inputs of one row saturate ([`saturates`](Self::saturates)).
    /// The row is given as `(feature, value)` pairs, each feature at most
    /// once; features not listed are 0 (a sparse row), features `≥ d` are
    /// ignored.
    pub fn saturated_inputs(&self, row: impl IntoIterator<Item = (usize, f32)>) -> usize {
        let d = self.dim();
        let mut n = (0..d).filter(|&j| self.saturates(j, 0.0)).count();
        for (j, x) in row {
            if j < d {
                n = n - usize::from(self.saturates(j, 0.0)) + usize::from(self.saturates(j, x));
            }
        }
        n
    }

    /// The worst-case error bound `E` of `c·S(q(x))` against the float
    /// model for inputs within the calibrated ranges (module docs).
    pub fn error_bound(&self) -> f64 {
        let d = self.dim() as f64;
        let sum_w: f64 = (0..self.dim()).map(|j| (self.weight(j) as f64).abs() + 0.5).sum();
        self.scale * ((0.5 + 1.0 / 128.0) * sum_w + 0.5 * (1.0 + Q_SPAN * d))
    }

    /// `B + Σ_j W_j·q_j` (no overflow: the parse-time bound). `q` must have
    /// d elements (the entry points check).
    #[inline]
    pub(crate) fn int_score(&self, q: &[i16]) -> i64 {
        let mut acc = self.bias;
        // Each product is at most 2³⁰ in magnitude (exact in i32), every
        // partial sum within the bound checked at parse time: neither the
        // multiplication nor the addition can wrap (module docs). The
        // product stays an i32 multiply: written as an i64 product it
        // became an `__aeabi_lmul` call per feature on ARMv6-M (measured,
        // bench/device_quant.sh: 57 instead of 16 instructions per feature
        // on the Cortex-M0, for 6.2 instead of 8.2 on the M3).
        match self.width {
            QuantWidth::I16 => {
                for (w, &qj) in self.weights.chunks_exact(2).zip(q) {
                    let w = i16::from_le_bytes([w[0], w[1]]) as i32;
                    acc = acc.wrapping_add(w.wrapping_mul(qj as i32) as i64);
                }
            }
            QuantWidth::I8 => {
                for (&w, &qj) in self.weights.iter().zip(q) {
                    acc = acc.wrapping_add((w as i8 as i32).wrapping_mul(qj as i32) as i64);
                }
            }
        }
        acc
    }

    /// `S(q(x))` for `f32` features read through `x(j)`, quantising on the
    /// fly (no buffer).
    #[inline]
    pub(crate) fn int_score_with(&self, mut x: impl FnMut(usize) -> f32) -> i64 {
        let mut acc = self.bias;
        for j in 0..self.dim() {
            let q = quantize(x(j), self.zero_point(j), self.input_scale(j)) as i32;
            // As in `int_score`: cannot wrap.
            acc = acc.wrapping_add((self.weight(j) as i32).wrapping_mul(q) as i64);
        }
        acc
    }
}

impl<'a> ModelView<'a> {
    /// The quantised model's parameters, if this is a quantised model
    /// (kind 7).
    pub fn quant(&self) -> Option<QuantView<'a>> {
        match self.body {
            super::Body::QuantLinear(q) => Some(q),
            _ => None,
        }
    }

    fn quant_or_mismatch(&self) -> Result<QuantView<'a>, ScoreError> {
        self.quant().ok_or(ScoreError::KindMismatch)
    }

    /// The integer score `S(q) = B + Σ_j W_j·q_j` of an input already
    /// quantised as the model says (`q_j = sat₁₆(round((x_j − z_j)/a_j))`,
    /// see [`quantize`]). Exact; cannot overflow (module docs).
    ///
    /// # Errors
    ///
    /// [`ScoreError::KindMismatch`] if the model is not quantised,
    /// [`ScoreError::DimensionMismatch`] if `q.len() != dim()`.
    pub fn score_dense_i16(&self, q: &[i16]) -> Result<i64, ScoreError> {
        let m = self.quant_or_mismatch()?;
        if q.len() != self.dim() {
            return Err(ScoreError::DimensionMismatch { expected: self.dim(), got: q.len() });
        }
        Ok(m.int_score(q))
    }

    /// [`score_dense_i16`](Self::score_dense_i16) of `out.len()` rows stored
    /// row-major in `q` (`q.len() == out.len() * dim()`).
    ///
    /// # Errors
    ///
    /// As [`score_dense_i16`](Self::score_dense_i16); on error `out` is
    /// untouched.
    pub fn score_dense_i16_rows(&self, q: &[i16], out: &mut [i64]) -> Result<(), ScoreError> {
        let m = self.quant_or_mismatch()?;
        let expected = out
            .len()
            .checked_mul(self.dim())
            .ok_or(ScoreError::DimensionMismatch { expected: usize::MAX, got: q.len() })?;
        if q.len() != expected {
            return Err(ScoreError::DimensionMismatch { expected, got: q.len() });
        }
        for (row, o) in q.chunks_exact(self.dim()).zip(out.iter_mut()) {
            *o = m.int_score(row);
        }
        Ok(())
    }

    /// Quantises a dense `f32` input as the model says ([`quantize`] with
    /// each feature's zero point and scale) into `out`.
    ///
    /// # Errors
    ///
    /// [`ScoreError::KindMismatch`], [`ScoreError::DimensionMismatch`] (`x`
    /// or `out` not of length `dim()`), [`ScoreError::NonFiniteInput`] (NaN
    /// or infinity; nothing is written).
    pub fn quantize_dense(&self, x: &[f32], out: &mut [i16]) -> Result<(), ScoreError> {
        let m = self.quant_or_mismatch()?;
        self.check_quant_input(x)?;
        if out.len() != self.dim() {
            return Err(ScoreError::DimensionMismatch { expected: self.dim(), got: out.len() });
        }
        for (j, (o, &xj)) in out.iter_mut().zip(x).enumerate() {
            *o = quantize(xj, m.zero_point(j), m.input_scale(j));
        }
        Ok(())
    }

    /// The integer score of a dense `f32` input, quantised as the model
    /// says: `S(q(x))`, equal to `score_dense_i16` of
    /// [`quantize_dense`](Self::quantize_dense)'s output.
    ///
    /// # Errors
    ///
    /// [`ScoreError::KindMismatch`], [`ScoreError::DimensionMismatch`],
    /// [`ScoreError::NonFiniteInput`].
    pub fn score_dense_quant(&self, x: &[f32]) -> Result<i64, ScoreError> {
        let m = self.quant_or_mismatch()?;
        self.check_quant_input(x)?;
        Ok(m.int_score_with(|j| x.get(j).copied().unwrap_or(0.0)))
    }

    fn check_quant_input(&self, x: &[f32]) -> Result<(), ScoreError> {
        if x.len() != self.dim() {
            return Err(ScoreError::DimensionMismatch { expected: self.dim(), got: x.len() });
        }
        if !x.iter().all(|v| v.is_finite()) {
            return Err(ScoreError::NonFiniteInput);
        }
        Ok(())
    }
}

impl<'a> Kind<'a> for QuantView<'a> {
    type Spec = QuantModel<'a>;

    const SINCE: Version = Version { major: 1, minor: 3 };

    const SECTIONS: &'static [u16] = &[sid::QUANT];

    // Parsed by device builds with `quant` (integer firmware) or `all-kinds`.
    const IN_BUILD: bool = cfg!(any(feature = "all-kinds", feature = "quant"));

    // Quantisation saturates: an infinite input gives a finite score, so
    // the input must be checked before scoring.
    const LAZY_INPUT_CHECK: bool = false;

    fn parse(sections: &Sections<'a>, h: &Header) -> Result<Self, ParseError> {
        let id = sid::QUANT;
        if h.elem != ElementType::F32 {
            return Err(ParseError::BadElementType { code: h.elem.code() });
        }
        // Centring is folded into z, W and B.
        sections.forbid(sid::FEATURE_CENTRING)?;
        let sec = sections.require(id)?;
        if sec.len() < layout::LEN {
            return Err(ParseError::BadSection { id });
        }
        let width = sec.get(layout::WIDTH).copied().and_then(QuantWidth::from_code);
        let reserved_zero = sec.get(layout::RESERVED).is_some_and(|r| r.iter().all(|&b| b == 0));
        let Some(width) = width.filter(|_| reserved_zero) else {
            return Err(ParseError::BadSection { id });
        };
        let d = h.dim;
        let f_bytes = bytes_for(d, 4)?;
        let w_bytes = bytes_for(d, width.bytes())?;
        let len = f_bytes
            .checked_mul(2)
            .and_then(|x| x.checked_add(w_bytes))
            .and_then(|x| x.checked_add(layout::LEN))
            .ok_or(ParseError::BadDimensions)?;
        expect_len(sec, len, id)?;
        let scale = le_f64(sec, layout::SCALE.start).unwrap_or(f64::NAN);
        let bias = le_u64(sec, layout::BIAS.start).unwrap_or(0) as i64;
        if !scale.is_finite() {
            return Err(ParseError::NonFinite);
        }
        if !(scale > 0.0) {
            return Err(ParseError::BadScale);
        }
        if !accumulator_fits(d, bias, width) {
            return Err(ParseError::BadDimensions);
        }
        let part = |at: usize, n: usize| sec.get(at..at + n).unwrap_or(&[]);
        let input_scale = part(layout::LEN, f_bytes);
        let zero_point = part(layout::LEN + f_bytes, f_bytes);
        let weights = part(layout::LEN + 2 * f_bytes, w_bytes);
        let view = QuantView { width, scale, bias, input_scale, zero_point, weights };
        for j in 0..d {
            let (a, z) = (view.input_scale(j), view.zero_point(j));
            if !a.is_finite() || !z.is_finite() {
                return Err(ParseError::NonFinite);
            }
            if !(a > 0.0) {
                return Err(ParseError::BadScale);
            }
        }
        Ok(view)
    }

    fn dim(spec: &QuantModel<'a>) -> usize {
        spec.input_scale.len()
    }

    fn centring(_: &QuantModel<'a>) -> Option<FeatureCentring<'a>> {
        None
    }

    fn check(m: &QuantModel<'a>, et: ElementType) -> Result<(), EmitError> {
        let d = m.input_scale.len();
        check_dim(d)?;
        if et != ElementType::F32 || m.zero_point.len() != d || m.weights.len() != d {
            return Err(EmitError::BadDimensions);
        }
        if !m.scale.is_finite() || m.input_scale.iter().chain(m.zero_point).any(|v| !v.is_finite()) {
            return Err(EmitError::NonFinite);
        }
        if !(m.scale > 0.0) || m.input_scale.iter().any(|&a| !(a > 0.0)) {
            return Err(EmitError::BadScale);
        }
        let in_range = |w: i16| m.width == QuantWidth::I16 || (i8::MIN as i16..=i8::MAX as i16).contains(&w);
        if !m.weights.iter().all(|&w| in_range(w)) {
            return Err(EmitError::BadQuant);
        }
        if !accumulator_fits(d, m.bias, m.width) {
            return Err(EmitError::BadDimensions);
        }
        Ok(())
    }

    fn sections(m: &QuantModel<'a>, sink: &mut SectionSink<'_, 'a>) {
        let mut rec = [0u8; MAX_FIXED];
        let mut put = |at: usize, bytes: &[u8]| {
            if let Some(dst) = at.checked_add(bytes.len()).and_then(|end| rec.get_mut(at..end)) {
                dst.copy_from_slice(bytes);
            }
        };
        put(layout::SCALE.start, &m.scale.to_le_bytes());
        put(layout::BIAS.start, &m.bias.to_le_bytes());
        put(layout::WIDTH, &[m.width.code()]);
        sink.push(sid::QUANT, Payload::Quant(rec, layout::LEN, m.input_scale, m.zero_point, m.weights, m.width));
    }

    fn eval<R: Arith>(&self, x: Centred<'_, '_>, _dim: usize) -> Result<R, ScoreError> {
        // No centring section (refused at parse time): the cursor yields
        // the raw input, which is quantised as an `f32` (an `f64` input is
        // rounded to `f32` first).
        let mut cur = x.cursor();
        let s = self.int_score_with(|j| cur.at::<f64>(j) as f32);
        Ok(R::from_f64(self.scale * s as f64))
    }
}

// ------------------------------------------------------------ the writer

/// The caller's buffers [`quantize_linear`] writes, `d` each: `a`
/// (`input_scale`), `z` (`zero_point`) and `W` (`weights`).
#[derive(Debug)]
pub struct QuantArrays<'a> {
    /// `a_j`.
    pub input_scale: &'a mut [f32],
    /// `z_j`.
    pub zero_point: &'a mut [f32],
    /// `W_j`.
    pub weights: &'a mut [i16],
}

/// The scalars [`quantize_linear`] chose; the arrays went into the caller's
/// buffers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quantized {
    /// Score per integer unit `c`.
    pub scale: f64,
    /// Integer bias `B`.
    pub bias: i64,
    /// `(1/2 + 2⁻⁷)·Σ|u_j| + (c/2)·(1 + 32767·d)`: the error bound of the
    /// module docs with the exact `u_j` (at most [`QuantView::error_bound`],
    /// which the file alone gives).
    pub error_bound: f64,
}

/// Headroom of the default calibration, in bits: [`widen_range`] by `2⁴`.
///
/// Held-out inputs beyond the calibration rows' range saturate, and one
/// saturated input can move a score across many others. Widening every
/// range by the same factor keeps every weight's relative precision (the
/// score scale `c` grows with all `u_j = v_j·a_j` alike; widening only the
/// heavy tails, by a tail estimate, raised `c` against the other weights
/// and did worse) and costs each input the same bits of resolution.
/// Measured (`host-cli/tests/quant_cli.rs`, `heldout_tau_by_headroom`: a
/// generated LETOR-like set, d = 136 with lognormal, Pareto, uniform,
/// binary and normal features, calibrated on 600 or 3 000 training rows,
/// 1 500 held-out rows, three seeds), Kendall τ of the held-out integer
/// scores against the float ones, for 0 to 6 bits: 0.970–0.996 at 0 bits
/// (76–562 saturated inputs), 0.9984–0.9999 at 2, 0.99973–0.99985 at 3,
/// 0.99944–0.99967 at 4, 0.9979–0.9988 at 6: saturation dominates below 3
/// bits, resolution above 4. 4 bits rather than 3 for heavier tails than
/// these: with Pareto tails of index 1.3, held-out τ was 0.99886 at 3 bits
/// and ≥ 0.99923 at 4 (3 000 calibration rows). On `data/parse-rank`
/// (sparse, 100 training and 100 held-out rows) τ went from 0.973 to 1.
pub const DEFAULT_HEADROOM_BITS: u32 = 4;

/// The range `[lo, hi]` widened about its midpoint by the factor
/// `2^bits` (a constant feature, `lo == hi`, by that factor times the
/// half-width `max(|lo|, 1)/2` that [`quantize_linear`] gives it), as the
/// nearest finite `f32` values, never inside `[lo, hi]`. `bits = 0`
/// returns the range as given; so does `lo > hi` or a NaN (for
/// [`quantize_linear`] to refuse); `bits` above 30 count as 30.
pub fn widen_range(lo: f32, hi: f32, bits: u32) -> (f32, f32) {
    if bits == 0 || !(lo <= hi) {
        return (lo, hi);
    }
    let (l, h) = (lo as f64, hi as f64);
    let z = (l + h) / 2.0;
    let half = if h > l { (h - l) / 2.0 } else { z.abs().max(1.0) / 2.0 };
    let half = half * (1u64 << bits.min(30)) as f64;
    let f32_of = |v: f64| (v as f32).clamp(-f32::MAX, f32::MAX);
    (f32_of(z - half).min(lo), f32_of(z + half).max(hi))
}

/// Quantises a linear model `f(x) = offset + Σ_j w_j·(x_j − μ_j)/σ_j`
/// (centring optional) for inputs calibrated to `lo[j] ≤ x_j ≤ hi[j]` (as
/// `f32`; typically the smallest and largest value of each feature over
/// the training rows), writing `a` (`input_scale`), `z` (`zero_point`) and
/// `W` (`weights`) of `out`, d each, and returning `c` and `B` (docs/format.md,
/// "QUANT", *Writing one*):
///
/// - `z_j = (lo_j + hi_j)/2` as `f32`; `a_j` the smallest `f32` with
///   `32767·a_j ≥ max(hi_j − z_j, z_j − lo_j)` (times `1 + 2⁻²⁰`); a
///   constant feature gets `a_j = max(|z_j|, 1)·2⁻¹⁶`;
/// - `u_j = v_j·a_j` with `v_j = w_j/σ_j`; `c = max_j |u_j| / W_pos`
///   (`W_pos` = 32767 for `i16`, 127 for `i8`; `c = 1` if every weight is
///   0); `W_j = round(u_j/c)`; `B = round(f(z)/c)`.
///
/// Nothing is written on error.
///
/// # Errors
///
/// [`EmitError::BadDimensions`] for mismatched lengths, zero length, or a
/// bias that breaks the accumulator bound; [`EmitError::NonFinite`] for a
/// non-finite parameter or range, a range with `lo > hi`, or a scale that
/// overflows `f32`; [`EmitError::BadScale`] for a zero centring scale.
pub fn quantize_linear(
    w: &[f64],
    offset: f64,
    centring: Option<FeatureCentring<'_>>,
    (lo, hi): (&[f32], &[f32]),
    width: QuantWidth,
    out: QuantArrays<'_>,
) -> Result<Quantized, EmitError> {
    let QuantArrays { input_scale, zero_point, weights } = out;
    let d = w.len();
    check_dim(d)?;
    if [lo.len(), hi.len(), input_scale.len(), zero_point.len(), weights.len()].iter().any(|&n| n != d) {
        return Err(EmitError::BadDimensions);
    }
    if let Some(c) = centring {
        c.check(d, ElementType::F64)?;
    }
    if !offset.is_finite() || w.iter().any(|v| !v.is_finite()) {
        return Err(EmitError::NonFinite);
    }
    // v_j = w_j/σ_j; centring folded into the offset at the end.
    let v = |j: usize| match centring {
        Some(c) => w[j] / c.scale[j],
        None => w[j],
    };
    let mean = |j: usize| centring.map_or(0.0, |c| c.mean[j]);
    // First pass: a, z and max |u| (nothing written yet).
    let scale_zero = |j: usize| -> Result<(f32, f32), EmitError> {
        let (l, h) = (lo[j], hi[j]);
        if !l.is_finite() || !h.is_finite() || l > h {
            return Err(EmitError::NonFinite);
        }
        let z = ((l as f64 + h as f64) / 2.0) as f32;
        let span = (h as f64 - z as f64).max(z as f64 - l as f64) * (1.0 + 1.0 / (1u64 << 20) as f64);
        let mut a = if span > 0.0 { (span / Q_SPAN) as f32 } else { ((z as f64).abs().max(1.0) / 65536.0) as f32 };
        while a.is_finite() && (a as f64) * Q_SPAN < span {
            a = f32::from_bits(a.to_bits() + 1);
        }
        if !a.is_finite() || !(a > 0.0) {
            return Err(EmitError::NonFinite);
        }
        Ok((a, z))
    };
    let mut u_max = 0.0f64;
    for j in 0..d {
        let (a, _) = scale_zero(j)?;
        u_max = u_max.max((v(j) * a as f64).abs());
    }
    if !u_max.is_finite() {
        return Err(EmitError::NonFinite);
    }
    let c = if u_max > 0.0 { u_max / width.w_pos() as f64 } else { 1.0 };
    // f(z) = offset + Σ_j v_j·(z_j − μ_j).
    let mut fz = offset;
    let mut sum_u = 0.0;
    for j in 0..d {
        let (a, z) = scale_zero(j)?;
        fz += v(j) * (z as f64 - mean(j));
        sum_u += (v(j) * a as f64).abs();
    }
    let b = libm::round(fz / c);
    // `as` saturates, so test the range first (2⁶³ is exact in f64).
    if !(b.abs() < (1u64 << 63) as f64) {
        return Err(EmitError::BadDimensions);
    }
    let bias = b as i64;
    if !accumulator_fits(d, bias, width) {
        return Err(EmitError::BadDimensions);
    }
    for j in 0..d {
        let (a, z) = scale_zero(j)?;
        input_scale[j] = a;
        zero_point[j] = z;
        let wq = libm::round(v(j) * a as f64 / c).clamp(-(width.w_pos() as f64), width.w_pos() as f64);
        weights[j] = wq as i16;
    }
    let error_bound = (0.5 + 1.0 / 128.0) * sum_u + 0.5 * c * (1.0 + Q_SPAN * d as f64);
    Ok(Quantized { scale: c, bias, error_bound })
}
