//! Scoring inputs (dense `f32`/`f64`, sparse `f32`/`f64`) with their one
//! check, and the cursors that read them, centred, in the arithmetic type:
//! shared by every model kind's scorer.
//!
//! # Features beyond the model's dimension
//!
//! A sparse input may name features `j >= dim` (its *tail*), as SVMlight
//! test files do when they hold features no training row had. The training
//! rows were 0 there, so the tail is scored exactly as if the model had been
//! trained on `j + 1` features: every weight and basis value is 0 in the
//! tail, the trainer's feature centring of such an all-zero column is the
//! identity (mean 0, scale 1), and a kernel sees the tail only through
//! `⟨x, x_i⟩` (unchanged) and `‖x − x_i‖² = ‖x_head − x_i‖² + ‖x_tail‖²`.
//! [`Input::split_tail`] cuts it off; the kernel scorer adds `‖x_tail‖²`.

#[cfg(feature = "kernel")]
use super::sum::blocked_sum;
use super::sum::elem;
use super::{Array, ScoreError};
use crate::real::Real;

/// The values of a sparse input (or of its tail).
#[derive(Clone, Copy)]
pub(crate) enum Vals<'x> {
    F32(&'x [f32]),
    F64(&'x [f64]),
}

impl<'x> Vals<'x> {
    pub(crate) const EMPTY: Vals<'static> = Vals::F64(&[]);

    pub(crate) fn len(&self) -> usize {
        match self {
            Vals::F32(v) => v.len(),
            Vals::F64(v) => v.len(),
        }
    }

    /// Value `k` widened to `f64` (exact), `None` past the end.
    #[inline(always)]
    pub(crate) fn get(&self, k: usize) -> Option<f64> {
        match self {
            Vals::F32(v) => v.get(k).map(|&x| x as f64),
            Vals::F64(v) => v.get(k).copied(),
        }
    }

    fn all_finite(&self) -> bool {
        match self {
            Vals::F32(v) => v.iter().all(|x| x.is_finite()),
            Vals::F64(v) => v.iter().all(|x| x.is_finite()),
        }
    }

    fn split_at(self, k: usize) -> (Vals<'x>, Vals<'x>) {
        match self {
            Vals::F32(v) => {
                let (a, b) = v.split_at(k.min(v.len()));
                (Vals::F32(a), Vals::F32(b))
            }
            Vals::F64(v) => {
                let (a, b) = v.split_at(k.min(v.len()));
                (Vals::F64(a), Vals::F64(b))
            }
        }
    }

    /// `Σ_k v_k²` in the arithmetic type (blocked).
    #[cfg(feature = "kernel")]
    pub(crate) fn norm2<R: Real>(&self) -> R {
        blocked_sum(self.len(), |k| {
            let v = R::from_f64(self.get(k).unwrap_or(0.0));
            v * v
        })
    }
}

/// A scoring input, checked by [`Input::check`].
#[derive(Clone, Copy)]
pub(crate) enum Input<'x> {
    // Built by the general dense path only (the smallest build has none).
    #[cfg_attr(not(any(feature = "kernel", feature = "f64", feature = "centring")), allow(dead_code))]
    D32(&'x [f32]),
    D64(&'x [f64]),
    /// 0-based, strictly increasing indices and their values.
    Sparse(&'x [u32], Vals<'x>),
}

impl<'x> Input<'x> {
    /// Checks lengths, indices and finiteness: a dense input has `dim`
    /// values; sparse indices are strictly increasing and may reach past
    /// `dim` (see the module docs).
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
                if !idx.windows(2).all(|w| w[0] < w[1]) {
                    return Err(ScoreError::BadInputIndex);
                }
                if !val.all_finite() {
                    return Err(ScoreError::NonFiniteInput);
                }
            }
        }
        Ok(())
    }

    /// The input cut at `dim`: the features `< dim` and the values of the
    /// tail (features `>= dim`, empty for dense inputs). Needs a checked
    /// input (sorted indices).
    pub(crate) fn split_tail(self, dim: usize) -> (Input<'x>, Vals<'x>) {
        match self {
            Input::Sparse(idx, val) => {
                let k = idx.partition_point(|&j| (j as usize) < dim);
                let (head, tail) = val.split_at(k);
                (Input::Sparse(idx.get(..k).unwrap_or(&[]), head), tail)
            }
            dense => (dense, Vals::EMPTY),
        }
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
                    (Some(&i), Some(v)) if i as usize == j => R::from_f64(v),
                    _ => R::ZERO,
                }
            }
        }
    }
}

/// The centred input `x'_j = (x_j − mean_j) / scale_j` (or `x_j`).
#[derive(Clone, Copy)]
pub(crate) struct Centred<'v, 'x> {
    /// The features `< dim`.
    pub(crate) input: Input<'x>,
    pub(crate) centring: Option<(Array<'v>, Array<'v>)>,
    /// The values of the features `>= dim` (uncentred: see the module docs).
    #[cfg_attr(not(feature = "kernel"), allow(dead_code))] // only kernels read the tail
    pub(crate) tail: Vals<'x>,
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
