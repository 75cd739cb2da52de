//! Model kind 1, linear: `score(x) = b + Σ_j w_j·x'_j`.
//!
//! One `LINEAR` section: the offset `b` as `f64`, then the d weights in the
//! file's element type. Its layout, view, writer spec and scorer are all
//! here.

use super::Kind;
use crate::format::centring::FeatureCentring;
use crate::format::header::{bytes_for, scalar_then_elems, Header, Sections};
use crate::format::input::{Centred, Input};
use crate::format::section_id as sid;
use crate::format::sum::{blocked_sum, elem, Arith};
use crate::format::write::{all_storable, check_dim, storable, Payload, SectionSink};
use crate::format::{Array, ElementType, EmitError, ModelView, ParseError, ScoreError, Version};

/// The `LINEAR` section (offsets relative to the section); also reachable
/// as `format::field::linear`.
pub mod layout {
    use crate::format::field::Field;

    /// Offset (bias) `b` (`f64`, whatever the element type).
    pub const OFFSET: Field = 0..8;
    /// Start of the weights `w` (d elements).
    pub const WEIGHTS: usize = OFFSET.end;
}

/// A linear model `score(x) = offset + Σ_j w_j·x'_j`, to write.
#[derive(Clone, Copy, Debug)]
pub struct LinearModel<'a> {
    /// Weights; their number is the dimension d.
    pub w: &'a [f64],
    /// Offset (bias).
    pub offset: f64,
    /// Optional feature centring and scaling.
    pub centring: Option<FeatureCentring<'a>>,
}

/// The parameters of a parsed linear model.
#[derive(Clone, Copy, Debug)]
pub struct LinearView<'a> {
    pub(crate) offset: f64,
    pub(crate) weights: Array<'a>,
}

impl<'a> LinearView<'a> {
    /// Offset (bias) `b`.
    pub fn offset(&self) -> f64 {
        self.offset
    }

    /// Weights `w` (d elements).
    pub fn weights(&self) -> Array<'a> {
        self.weights
    }
}

impl<'a> ModelView<'a> {
    /// The linear model's parameters, if this is a linear model.
    pub fn linear(&self) -> Option<LinearView<'a>> {
        match self.body {
            super::Body::Linear(l) => Some(l),
            _ => None,
        }
    }
}

impl<'a> Kind<'a> for LinearView<'a> {
    type Spec = LinearModel<'a>;

    const SINCE: Version = Version { major: 1, minor: 0 };

    const SECTIONS: &'static [u16] = &[sid::LINEAR];

    // A linear score is a sum of products `w_j·x'_j` with finite `w_j`
    // (validated) and `x'_j` finite iff `x_j` is (centring subtracts a
    // finite mean and divides by a finite non-zero scale), so a NaN or
    // infinite input always makes the score NaN or infinite.
    const IN_BUILD: bool = true;

    const LAZY_INPUT_CHECK: bool = true;

    fn parse(sections: &Sections<'a>, h: &Header) -> Result<Self, ParseError> {
        let sec = sections.require(sid::LINEAR)?;
        let d_bytes = bytes_for(h.dim, h.elem.size())?;
        let (offset, weights) = scalar_then_elems(sec, layout::WEIGHTS, d_bytes, h.elem, sid::LINEAR)?;
        Ok(LinearView { offset, weights })
    }

    fn dim(spec: &LinearModel<'a>) -> usize {
        spec.w.len()
    }

    fn centring(spec: &LinearModel<'a>) -> Option<FeatureCentring<'a>> {
        spec.centring
    }

    fn check(l: &LinearModel<'a>, et: ElementType) -> Result<(), EmitError> {
        check_dim(l.w.len())?;
        storable(l.offset, ElementType::F64)?;
        all_storable(l.w, et)?;
        if let Some(ref c) = l.centring {
            c.check(l.w.len(), et)?;
        }
        Ok(())
    }

    fn sections(l: &LinearModel<'a>, sink: &mut SectionSink<'_, 'a>) {
        sink.push(sid::LINEAR, Payload::ScalarThen(l.offset, l.w));
    }

    fn eval<R: Arith>(&self, x: Centred<'_, '_>, _dim: usize) -> Result<R, ScoreError> {
        Ok(linear_eval(self.offset, self.weights, x))
    }
}

/// `offset + Σ_j w_j·x'_j` of a checked input: the score of every kind
/// that is linear in the features. The tail (features `>= dim`) has weight
/// 0 and is not read.
pub(crate) fn linear_eval<R: Arith>(offset: f64, w: Array<'_>, x: Centred<'_, '_>) -> R {
    let n = w.len();
    let s: R = match (x.input, x.centring) {
        (Input::D32(xs), None) => R::dense_dot(&w, xs),
        (Input::D64(xs), None) => blocked_sum(n, |j| elem::<R>(&w, j) * R::from_f64(xs.get(j).copied().unwrap_or(0.0))),
        (Input::Sparse(idx, val), None) => blocked_sum(idx.len(), |k| {
            let j = idx.get(k).map_or(usize::MAX, |&j| j as usize);
            elem::<R>(&w, j) * R::from_f64(val.get(k).unwrap_or(0.0))
        }),
        _ => {
            let mut cur = x.cursor();
            blocked_sum(n, |j| elem::<R>(&w, j) * cur.at::<R>(j))
        }
    };
    R::from_f64(offset) + s
}
