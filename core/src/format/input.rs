//! Scoring inputs (dense `f32`/`f64`, sparse) with their one check, and
//! the cursors that read them, centred, in the arithmetic type: shared by
//! every model kind's scorer.

use super::sum::elem;
use super::{Array, ScoreError};
use crate::linalg::rows::sparse_indices_ok;
use crate::real::Real;

/// A scoring input, checked by [`Input::check`].
#[derive(Clone, Copy)]
pub(crate) enum Input<'x> {
    // Built by the general dense path only (the smallest build has none).
    #[cfg_attr(not(any(feature = "kernel", feature = "f64", feature = "centring")), allow(dead_code))]
    D32(&'x [f32]),
    D64(&'x [f64]),
    Sparse(&'x [u32], &'x [f32]),
}

impl Input<'_> {
    pub(crate) fn check(&self, dim: usize) -> Result<(), ScoreError> {
        match *self {
            Input::D32(x) => {
                if x.len() != dim {
                    return Err(ScoreError::DimensionMismatch { expected: dim, got: x.len() });
                }
                if !x.iter().all(|v| v.is_finite()) {
                    return Err(ScoreError::NonFiniteInput);
                }
            }
            Input::D64(x) => {
                if x.len() != dim {
                    return Err(ScoreError::DimensionMismatch { expected: dim, got: x.len() });
                }
                if !x.iter().all(|v| v.is_finite()) {
                    return Err(ScoreError::NonFiniteInput);
                }
            }
            Input::Sparse(idx, val) => {
                if idx.len() != val.len() {
                    return Err(ScoreError::DimensionMismatch { expected: idx.len(), got: val.len() });
                }
                if !sparse_indices_ok(idx.iter().copied(), dim) {
                    return Err(ScoreError::BadInputIndex);
                }
                if !val.iter().all(|v| v.is_finite()) {
                    return Err(ScoreError::NonFiniteInput);
                }
            }
        }
        Ok(())
    }
}

/// Reads the raw input value `x_j` in the arithmetic type, for
/// non-decreasing `j` (sparse inputs keep a cursor).
pub(crate) struct Cursor<'x> {
    input: Input<'x>,
    p: usize,
}

impl<'x> Cursor<'x> {
    fn new(input: Input<'x>) -> Self {
        Cursor { input, p: 0 }
    }

    #[inline(always)]
    fn raw<R: Real>(&mut self, j: usize) -> R {
        match self.input {
            Input::D32(x) => R::from_f64(x.get(j).map_or(0.0, |&v| v as f64)),
            Input::D64(x) => R::from_f64(x.get(j).copied().unwrap_or(0.0)),
            Input::Sparse(idx, val) => {
                while idx.get(self.p).is_some_and(|&i| (i as usize) < j) {
                    self.p += 1;
                }
                match (idx.get(self.p), val.get(self.p)) {
                    (Some(&i), Some(&v)) if i as usize == j => R::from_f64(v as f64),
                    _ => R::ZERO,
                }
            }
        }
    }
}

/// The centred input `x'_j = (x_j − mean_j) / scale_j` (or `x_j`).
#[derive(Clone, Copy)]
pub(crate) struct Centred<'v, 'x> {
    pub(crate) input: Input<'x>,
    pub(crate) centring: Option<(Array<'v>, Array<'v>)>,
}

impl Centred<'_, '_> {
    pub(crate) fn cursor(&self) -> CentredCursor<'_, '_> {
        CentredCursor { cur: Cursor::new(self.input), centring: self.centring }
    }
}

pub(crate) struct CentredCursor<'v, 'x> {
    cur: Cursor<'x>,
    centring: Option<(Array<'v>, Array<'v>)>,
}

impl CentredCursor<'_, '_> {
    #[inline(always)]
    pub(crate) fn at<R: Real>(&mut self, j: usize) -> R {
        let r: R = self.cur.raw(j);
        match self.centring {
            Some((mean, scale)) => (r - elem::<R>(&mean, j)) / elem::<R>(&scale, j),
            None => r,
        }
    }
}
