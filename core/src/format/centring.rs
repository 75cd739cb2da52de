//! Per-feature centring and scaling, `x'_j = (x_j − mean_j) / scale_j`:
//! the optional `FEATURE_CENTRING` section every model kind may carry.
//! Its spec, its writer check and its parser live here; scoring applies it
//! through [`Centred`](super::input::Centred).

use super::header::{all_finite, bytes_for, expect_len, Sections};
use super::section_id as sid;
use super::write::all_storable;
use super::{Array, ElementType, EmitError, ParseError};

/// Per-feature centring and scaling: the model sees
/// `x'_j = (x_j − mean_j) / scale_j`.
#[derive(Clone, Copy, Debug)]
pub struct FeatureCentring<'a> {
    /// `mean_j`, d values.
    pub mean: &'a [f64],
    /// `scale_j`, d values, nonzero.
    pub scale: &'a [f64],
}

impl FeatureCentring<'_> {
    /// Checks the writer's spec: d values each, storable as `et`, no scale
    /// that is (or rounds to) zero.
    pub(crate) fn check(&self, dim: usize, et: ElementType) -> Result<(), EmitError> {
        if self.mean.len() != dim || self.scale.len() != dim {
            return Err(EmitError::BadDimensions);
        }
        all_storable(self.mean, et)?;
        all_storable(self.scale, et)?;
        let zero = |s: f64| match et {
            ElementType::F32 => s as f32 == 0.0,
            ElementType::F64 => s == 0.0,
        };
        if self.scale.iter().any(|&s| zero(s)) {
            return Err(EmitError::BadScale);
        }
        Ok(())
    }
}

/// Parses the `FEATURE_CENTRING` section, if present: `(mean, scale)`,
/// d elements each, finite, no zero scale.
pub(crate) fn parse<'a>(
    sections: &Sections<'a>,
    dim: usize,
    elem: ElementType,
) -> Result<Option<(Array<'a>, Array<'a>)>, ParseError> {
    let Some(sec) = sections.get(sid::FEATURE_CENTRING) else { return Ok(None) };
    let d_bytes = bytes_for(dim, elem.size())?;
    expect_len(sec, bytes_for(d_bytes, 2)?, sid::FEATURE_CENTRING)?;
    let (mean, scale) = sec.split_at(d_bytes);
    let (mean, scale) = (Array::new(mean, elem), Array::new(scale, elem));
    all_finite(mean)?;
    all_finite(scale)?;
    if scale.iter().any(|s| s == 0.0) {
        return Err(ParseError::BadScale);
    }
    Ok(Some((mean, scale)))
}
