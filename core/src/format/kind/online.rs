//! Model kind 5, online RankRLS state: the learned state of the online
//! learner (`learn::online`, which builds itself from this view and writes
//! itself as this model), saved on a device and read back by it or by the
//! host.
//!
//! One `ONLINE_STATE` section: a 32-byte record (λ, the number of
//! observations, the prior's id, the prior's offset), then five arrays in
//! the file's element type: the current weights `w` (d), the right-hand
//! side `b = λ·w₀ + Σ m·d` (d), the compensation `c` of the running sum `b`
//! (d; so that a restored learner's `b` continues bit for bit as the saved
//! one's would have), the prior weights `w₀` (d) and the Cholesky factor `L` of
//! `A = λI + Σ d·dᵀ`, lower triangle packed row by row (d(d+1)/2). It scores like a linear model: `score(x) = offset + wᵀx`.
//!
//! Validation at parse time, on top of the format's own (checksum,
//! lengths, finiteness of every value): λ finite and > 0, the reserved
//! word 0, and every diagonal entry of `L` at least `0.999·√λ`. In exact
//! arithmetic `L_ii² = A_ii − Σ_{k<i} L_ik²` is a Schur complement of
//! `A ⪰ λI`, so `L_ii ≥ √λ`; the 0.1 % slack absorbs `f32` rounding of
//! the updates, and a factor that violates it is not one the learner
//! wrote. That `w` solves `L·Lᵀ·w = b` is not checked here (it costs two
//! triangular solves); the learner recomputes `w` from `L` and `b` when it
//! restores a state.

use super::Kind;
use crate::format::array::{le_f64, le_u32, le_u64};
use crate::format::centring::FeatureCentring;
use crate::format::header::{all_finite, bytes_for, expect_len, finite, Header, Sections};
use crate::format::input::Centred;
use crate::format::section_id as sid;
use crate::format::sum::Arith;
use crate::format::write::{check_dim, storable, Payload, SectionSink, Values, MAX_FIXED};
use crate::format::{Array, ElementType, EmitError, ModelView, ParseError, ScoreError, Version};

/// The `ONLINE_STATE` section (offsets relative to the section); also
/// reachable as `format::field::online`.
pub mod layout {
    use crate::format::field::Field;

    /// Ridge λ (`f64`), finite and > 0.
    pub const LAMBDA: Field = 0..8;
    /// Number of observations so far (`u64`).
    pub const COUNT: Field = 8..16;
    /// Id of the prior model (`u32`; by convention the CRC-32 trailer of
    /// the prior's file, 0 if unknown).
    pub const PRIOR_ID: Field = 16..20;
    /// Reserved (`u32`), 0.
    pub const RESERVED: Field = 20..24;
    /// Offset of the prior model, added to every score (`f64`).
    pub const OFFSET: Field = 24..32;
    /// Length of the record; the arrays `w`, `b`, `c`, `w₀`, `L` follow.
    pub const LEN: usize = OFFSET.end;

    /// The record as `(name, bytes, type, meaning)`, for `docs/format.md`.
    pub const FIELDS: &[(&str, Field, &str, &str)] = &[
        ("lambda", LAMBDA, "f64", "ridge towards the prior, finite, > 0"),
        ("count", COUNT, "u64", "observations so far"),
        ("prior_id", PRIOR_ID, "u32", "CRC-32 of the prior's file, or 0"),
        ("reserved", RESERVED, "u32", "0"),
        ("offset", OFFSET, "f64", "prior's offset b"),
    ];
}

const _: () = assert!(layout::LEN <= MAX_FIXED);

/// Number of entries of a packed lower triangle of order d.
pub const fn packed_len(d: usize) -> usize {
    d * (d + 1) / 2
}

/// An online RankRLS state, to write.
#[derive(Clone, Copy, Debug)]
pub struct OnlineModel<'a> {
    /// Ridge λ.
    pub lambda: f64,
    /// Observations so far.
    pub count: u64,
    /// Id of the prior model.
    pub prior_id: u32,
    /// Offset of the prior, added to every score.
    pub offset: f64,
    /// Current weights `w` (d values; their number is the dimension).
    pub w: Values<'a>,
    /// Right-hand side `b` (d values).
    pub b: Values<'a>,
    /// Compensation `c` of the running sum `b` (d values; zeros if not
    /// kept).
    pub b_comp: Values<'a>,
    /// Prior weights `w₀` (d values).
    pub w0: Values<'a>,
    /// Cholesky factor `L`, lower triangle packed row by row (d(d+1)/2).
    pub l_packed: Values<'a>,
}

/// The parameters of a parsed online RankRLS state.
#[derive(Clone, Copy, Debug)]
pub struct OnlineView<'a> {
    pub(crate) lambda: f64,
    pub(crate) count: u64,
    pub(crate) prior_id: u32,
    pub(crate) offset: f64,
    pub(crate) w: Array<'a>,
    pub(crate) b: Array<'a>,
    pub(crate) b_comp: Array<'a>,
    pub(crate) w0: Array<'a>,
    pub(crate) l_packed: Array<'a>,
}

impl<'a> OnlineView<'a> {
    /// Ridge λ.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }
    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Id of the prior model.
    pub fn prior_id(&self) -> u32 {
        self.prior_id
    }
    /// Offset of the prior.
    pub fn offset(&self) -> f64 {
        self.offset
    }
    /// Current weights `w` (d).
    pub fn weights(&self) -> Array<'a> {
        self.w
    }
    /// Right-hand side `b` (d).
    pub fn rhs(&self) -> Array<'a> {
        self.b
    }
    /// Compensation `c` of the running sum `b` (d).
    pub fn rhs_compensation(&self) -> Array<'a> {
        self.b_comp
    }
    /// Prior weights `w₀` (d).
    pub fn prior(&self) -> Array<'a> {
        self.w0
    }
    /// Cholesky factor `L`, packed lower triangle (d(d+1)/2).
    pub fn factor_packed(&self) -> Array<'a> {
        self.l_packed
    }
}

impl<'a> ModelView<'a> {
    /// The online RankRLS state, if this is one.
    pub fn online(&self) -> Option<OnlineView<'a>> {
        match self.body {
            super::Body::OnlineRankRls(o) => Some(o),
            _ => None,
        }
    }
}

/// Whether every diagonal entry of the packed factor is at least
/// `0.999·√λ` (see the module doc).
fn diagonal_ok(d: usize, lambda: f64, l: impl Fn(usize) -> f64) -> bool {
    let floor = 0.999 * libm::sqrt(lambda);
    (0..d).all(|i| l(packed_len(i + 1) - 1) >= floor)
}

impl<'a> Kind<'a> for OnlineView<'a> {
    type Spec = OnlineModel<'a>;

    const SINCE: Version = Version { major: 1, minor: 1 };

    const SECTIONS: &'static [u16] = &[sid::ONLINE_STATE];

    // Scored as a linear model (finite weights), see `LinearView`.
    const IN_BUILD: bool = cfg!(feature = "all-kinds");

    const LAZY_INPUT_CHECK: bool = true;

    fn parse(sections: &Sections<'a>, h: &Header) -> Result<Self, ParseError> {
        let id = sid::ONLINE_STATE;
        let sec = sections.require(id)?;
        let d = h.dim;
        let es = h.elem.size();
        let d_bytes = bytes_for(d, es)?;
        let l_count = d.checked_mul(d + 1).ok_or(ParseError::BadDimensions)? / 2;
        let l_bytes = bytes_for(l_count, es)?;
        let len = d_bytes
            .checked_mul(4)
            .and_then(|x| x.checked_add(l_bytes))
            .and_then(|x| x.checked_add(layout::LEN))
            .ok_or(ParseError::BadDimensions)?;
        expect_len(sec, len, id)?;
        let lambda = finite(le_f64(sec, layout::LAMBDA.start).unwrap_or(f64::NAN))?;
        let offset = finite(le_f64(sec, layout::OFFSET.start).unwrap_or(f64::NAN))?;
        let count = le_u64(sec, layout::COUNT.start).unwrap_or(0);
        let prior_id = le_u32(sec, layout::PRIOR_ID.start).unwrap_or(0);
        if !(lambda > 0.0) || le_u32(sec, layout::RESERVED.start) != Some(0) {
            return Err(ParseError::BadSection { id });
        }
        let arr = |at: usize, n: usize| Array::new(sec.get(at..at + n).unwrap_or(&[]), h.elem);
        let w = arr(layout::LEN, d_bytes);
        let b = arr(layout::LEN + d_bytes, d_bytes);
        let b_comp = arr(layout::LEN + 2 * d_bytes, d_bytes);
        let w0 = arr(layout::LEN + 3 * d_bytes, d_bytes);
        let l_packed = arr(layout::LEN + 4 * d_bytes, l_bytes);
        for a in [w, b, b_comp, w0, l_packed] {
            all_finite(a)?;
        }
        if !diagonal_ok(d, lambda, |i| l_packed.at(i)) {
            return Err(ParseError::BadSection { id });
        }
        Ok(OnlineView { lambda, count, prior_id, offset, w, b, b_comp, w0, l_packed })
    }

    fn dim(spec: &OnlineModel<'a>) -> usize {
        spec.w.len()
    }

    fn centring(_: &OnlineModel<'a>) -> Option<FeatureCentring<'a>> {
        None
    }

    fn check(o: &OnlineModel<'a>, et: ElementType) -> Result<(), EmitError> {
        let d = o.w.len();
        check_dim(d)?;
        if o.b.len() != d || o.b_comp.len() != d || o.w0.len() != d || o.l_packed.len() != packed_len(d) {
            return Err(EmitError::BadDimensions);
        }
        storable(o.lambda, ElementType::F64)?;
        storable(o.offset, ElementType::F64)?;
        for v in [o.w, o.b, o.b_comp, o.w0, o.l_packed] {
            v.storable(et)?;
        }
        // The parser checks the diagonal on the stored (possibly rounded)
        // values, so check it on those too.
        let stored = |x: f64| match et {
            ElementType::F32 => x as f32 as f64,
            ElementType::F64 => x,
        };
        if !(o.lambda > 0.0) || !diagonal_ok(d, o.lambda, |i| stored(o.l_packed.at(i))) {
            return Err(EmitError::BadState);
        }
        Ok(())
    }

    fn sections(o: &OnlineModel<'a>, sink: &mut SectionSink<'_, 'a>) {
        let mut rec = [0u8; MAX_FIXED];
        let mut put = |at: usize, bytes: &[u8]| {
            if let Some(dst) = at.checked_add(bytes.len()).and_then(|end| rec.get_mut(at..end)) {
                dst.copy_from_slice(bytes);
            }
        };
        put(layout::LAMBDA.start, &o.lambda.to_le_bytes());
        put(layout::COUNT.start, &o.count.to_le_bytes());
        put(layout::PRIOR_ID.start, &o.prior_id.to_le_bytes());
        put(layout::OFFSET.start, &o.offset.to_le_bytes());
        sink.push(sid::ONLINE_STATE, Payload::FixedThen(rec, layout::LEN, [o.w, o.b, o.b_comp, o.w0, o.l_packed]));
    }

    fn eval<R: Arith>(&self, x: Centred<'_, '_>, _dim: usize) -> Result<R, ScoreError> {
        Ok(super::linear::linear_eval(self.offset, self.w, x))
    }
}

impl OnlineModel<'_> {
    /// Bytes of the file of a state of dimension `d` stored as `et`,
    /// without metadata (what `ModelSpec::buffer_len` gives for it); `None`
    /// on overflow.
    pub const fn file_len(d: usize, et: ElementType) -> Option<usize> {
        use crate::format::field;
        let Some(d1) = d.checked_add(1) else { return None };
        let Some(tri) = d.checked_mul(d1) else { return None };
        let Some(d4) = d.checked_mul(4) else { return None };
        let Some(n) = (tri / 2).checked_add(d4) else { return None };
        let Some(arrays) = n.checked_mul(et.size()) else { return None };
        let head = field::HEADER_LEN + field::section::ENTRY_LEN;
        let start = head.div_ceil(field::SECTION_ALIGN) * field::SECTION_ALIGN;
        match arrays.checked_add(start + layout::LEN + field::CRC_LEN) {
            Some(total) if total <= u32::MAX as usize => Some(total),
            _ => None,
        }
    }
}
