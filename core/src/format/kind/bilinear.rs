//! Model kind 3, bilinear pair model (since format 1.2): a Kronecker
//! conditional ranking model (004 §3–4, [`crate::learn::kron`]) whose node
//! kernels are both linear, stored in primal form:
//!
//! ```text
//! score(u, v) = b + x_uᵀ·W·x_v,        W = X_uᵀ·A·X_v   (d_u × d_v)
//! ```
//!
//! (symmetric and reciprocal pair kernels:
//! `b + ½(g(u, v) ± g(v, u))` with `g(u, v) = x_uᵀ·W·x_v`, which makes
//! `score(u, v) = ±score(v, u)` hold exactly, bit for bit).
//!
//! The header's `dim` is `d_u`, the length of the first node's features;
//! `d_v` is in the section's record. One `BILINEAR` section: a 16-byte
//! record (pair code, `d_v`, offset), then `W` row-major (`W[i, j]` at
//! `i·d_v + j`) in the file's element type.
//!
//! Validation at parse time, on top of the format's own: pair code 1–3,
//! reserved bytes 0, `d_v ≥ 1`; symmetric and reciprocal models have
//! `d_u = d_v` (`BadDimensions`) and `W` exactly symmetric (`W[i, j] ==
//! W[j, i]`) or antisymmetric (`W[i, j] == −W[j, i]`, so a zero
//! diagonal), and a reciprocal model has offset 0 (`BadSection`): a model
//! claiming reciprocity is reciprocal. No feature centring in this version
//! of the kind (a `FEATURE_CENTRING` section is `BadSection`): a centring
//! per domain would fold into `W` and the offset on the host anyway, except
//! for the cross term, which keeps the record simple.

use super::Kind;
use crate::format::array::{le_f64, le_u32};
use crate::format::centring::FeatureCentring;
use crate::format::header::{all_finite, bytes_for, expect_len, finite, Header, Sections};
use crate::format::input::Centred;
use crate::format::pair::{pair_code, pair_from_code, pair_matrix_ok, stored};
use crate::format::section_id as sid;
use crate::format::sum::Arith;
use crate::format::write::{check_dim, storable, Payload, SectionSink, Values, MAX_FIXED};
use crate::format::{Array, ElementType, EmitError, ModelView, PairKernel, ParseError, ScoreError, Version};

/// The `BILINEAR` section's record (offsets relative to the section); also
/// reachable as `format::field::bilinear`.
pub mod layout {
    use crate::format::field::Field;

    /// Pair code (`u8`): 1 Kronecker, 2 symmetric, 3 reciprocal.
    pub const PAIR: usize = 0;
    /// Reserved (3 × `u8`), 0.
    pub const RESERVED: Field = 1..4;
    /// Dimension `d_v` of the second node's features (`u32`).
    pub const DIM_V: Field = 4..8;
    /// Offset (bias) `b` (`f64`).
    pub const OFFSET: Field = 8..16;
    /// Length of the record; `W` (d_u × d_v elements, row-major) follows.
    pub const LEN: usize = OFFSET.end;

    /// The record as `(name, bytes, type, meaning)`, for `docs/format.md`.
    pub const FIELDS: &[(&str, Field, &str, &str)] = &[
        ("pair", PAIR..PAIR + 1, "u8", "1 Kronecker, 2 symmetric, 3 reciprocal"),
        ("reserved", RESERVED, "[u8; 3]", "0"),
        ("dim_v", DIM_V, "u32", "d_v >= 1; = d_u unless Kronecker"),
        ("offset", OFFSET, "f64", "bias b; 0 if reciprocal"),
    ];
}

const _: () = assert!(layout::LEN <= MAX_FIXED);

/// A bilinear pair model `score(u, v) = offset + x_uᵀ·W·x_v`, to write.
#[derive(Clone, Copy, Debug)]
pub struct BilinearModel<'a> {
    /// The pair kernel; symmetric and reciprocal models need `dim_u ==
    /// dim_v` and `w` exactly symmetric / antisymmetric (as stored).
    pub pair: PairKernel,
    /// `d_u`, the first node's feature dimension (the header's `dim`).
    pub dim_u: usize,
    /// `d_v`, the second node's feature dimension.
    pub dim_v: usize,
    /// `W`, `d_u × d_v`, row-major.
    pub w: &'a [f64],
    /// Offset (bias); 0 for a reciprocal model.
    pub offset: f64,
}

/// The parameters of a parsed bilinear pair model.
#[derive(Clone, Copy, Debug)]
pub struct BilinearView<'a> {
    pub(crate) pair: PairKernel,
    pub(crate) dim_u: usize,
    pub(crate) dim_v: usize,
    pub(crate) offset: f64,
    pub(crate) w: Array<'a>,
}

impl<'a> BilinearView<'a> {
    /// The pair kernel.
    pub fn pair(&self) -> PairKernel {
        self.pair
    }
    /// `d_u`.
    pub fn dim_u(&self) -> usize {
        self.dim_u
    }
    /// `d_v`.
    pub fn dim_v(&self) -> usize {
        self.dim_v
    }
    /// Offset (bias) `b`.
    pub fn offset(&self) -> f64 {
        self.offset
    }
    /// `W` (d_u × d_v elements, row-major).
    pub fn w(&self) -> Array<'a> {
        self.w
    }
}

impl<'a> ModelView<'a> {
    /// The bilinear pair model's parameters, if this is one.
    pub fn bilinear(&self) -> Option<BilinearView<'a>> {
        match self.body {
            super::Body::Bilinear(b) => Some(b),
            _ => None,
        }
    }
}

impl<'a> Kind<'a> for BilinearView<'a> {
    type Spec = BilinearModel<'a>;

    const SINCE: Version = Version { major: 1, minor: 2 };

    const SECTIONS: &'static [u16] = &[sid::BILINEAR];

    const IN_BUILD: bool = cfg!(feature = "all-kinds");

    const LAZY_INPUT_CHECK: bool = false;

    fn parse(sections: &Sections<'a>, h: &Header) -> Result<Self, ParseError> {
        let id = sid::BILINEAR;
        sections.forbid(sid::FEATURE_CENTRING)?;
        let sec = sections.require(id)?;
        let rec = sec.get(..layout::LEN).ok_or(ParseError::BadSection { id })?;
        let pair = pair_from_code(rec.get(layout::PAIR).copied().unwrap_or(0)).ok_or(ParseError::BadSection { id })?;
        if rec.get(layout::RESERVED).is_none_or(|r| r.iter().any(|&b| b != 0)) {
            return Err(ParseError::BadSection { id });
        }
        let dim_u = h.dim;
        let dim_v =
            usize::try_from(le_u32(rec, layout::DIM_V.start).unwrap_or(0)).map_err(|_| ParseError::BadDimensions)?;
        if dim_v == 0 || (pair != PairKernel::Kronecker && dim_v != dim_u) {
            return Err(ParseError::BadDimensions);
        }
        let w_bytes = bytes_for(bytes_for(dim_u, dim_v)?, h.elem.size())?;
        expect_len(sec, layout::LEN.checked_add(w_bytes).ok_or(ParseError::BadDimensions)?, id)?;
        let offset = finite(le_f64(rec, layout::OFFSET.start).unwrap_or(f64::NAN))?;
        let w = Array::new(sec.get(layout::LEN..).unwrap_or(&[]), h.elem);
        all_finite(w)?;
        if !pair_matrix_ok(pair, dim_u, dim_v, offset, |i| w.at(i)) {
            return Err(ParseError::BadSection { id });
        }
        Ok(BilinearView { pair, dim_u, dim_v, offset, w })
    }

    fn dim(spec: &BilinearModel<'a>) -> usize {
        spec.dim_u
    }

    fn centring(_: &BilinearModel<'a>) -> Option<FeatureCentring<'a>> {
        None
    }

    fn check(b: &BilinearModel<'a>, et: ElementType) -> Result<(), EmitError> {
        check_dim(b.dim_u)?;
        check_dim(b.dim_v)?;
        if b.dim_u.checked_mul(b.dim_v) != Some(b.w.len()) {
            return Err(EmitError::BadDimensions);
        }
        if b.pair != PairKernel::Kronecker && b.dim_u != b.dim_v {
            return Err(EmitError::BadDimensions);
        }
        storable(b.offset, ElementType::F64)?;
        Values::F64(b.w).storable(et)?;
        // The parser checks the stored (possibly rounded) values.
        if !pair_matrix_ok(b.pair, b.dim_u, b.dim_v, b.offset, |i| stored(b.w.get(i).copied().unwrap_or(0.0), et)) {
            return Err(EmitError::BadPair);
        }
        Ok(())
    }

    fn sections(b: &BilinearModel<'a>, sink: &mut SectionSink<'_, 'a>) {
        let mut rec = [0u8; MAX_FIXED];
        let mut put = |at: usize, bytes: &[u8]| {
            if let Some(dst) = at.checked_add(bytes.len()).and_then(|end| rec.get_mut(at..end)) {
                dst.copy_from_slice(bytes);
            }
        };
        put(layout::PAIR, &[pair_code(b.pair)]);
        put(layout::DIM_V.start, &(b.dim_v as u32).to_le_bytes());
        put(layout::OFFSET.start, &b.offset.to_le_bytes());
        let none = Values::F64(&[]);
        sink.push(sid::BILINEAR, Payload::FixedThen(rec, layout::LEN, [Values::F64(b.w), none, none, none, none]));
    }

    /// Pair models are scored by the `score_pair*` functions.
    fn eval<R: Arith>(&self, _x: Centred<'_, '_>, _dim: usize) -> Result<R, ScoreError> {
        Err(ScoreError::KindMismatch)
    }
}
