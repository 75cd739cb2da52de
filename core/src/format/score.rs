//! Scoring on a validated [`ModelView`]: the device path. Nothing here
//! allocates, and nothing panics.
//!
//! All arithmetic is in `f64` whatever the element type: `f32` parameters
//! and inputs widen exactly, sums accumulate in `f64`, and the `f32` entry
//! points round once, at the end. On a device without a double-precision
//! FPU this costs speed, but it makes an `f32` model's score equal the `f64`
//! evaluation of the same stored parameters to within one `f32` rounding.

use super::view::{BasisView, Body, KernelView, LinearView, ModelView};
use super::{Array, FormatError, Kernel};

/// A scoring input, checked by [`Input::check`].
#[derive(Clone, Copy)]
enum Input<'x> {
    D32(&'x [f32]),
    D64(&'x [f64]),
    Sparse(&'x [u32], &'x [f32]),
}

impl Input<'_> {
    fn check(&self, dim: usize) -> Result<(), FormatError> {
        match *self {
            Input::D32(x) => {
                if x.len() != dim {
                    return Err(FormatError::DimensionMismatch { expected: dim, got: x.len() });
                }
                if !x.iter().all(|v| v.is_finite()) {
                    return Err(FormatError::NonFiniteInput);
                }
            }
            Input::D64(x) => {
                if x.len() != dim {
                    return Err(FormatError::DimensionMismatch { expected: dim, got: x.len() });
                }
                if !x.iter().all(|v| v.is_finite()) {
                    return Err(FormatError::NonFiniteInput);
                }
            }
            Input::Sparse(idx, val) => {
                if idx.len() != val.len() {
                    return Err(FormatError::DimensionMismatch { expected: idx.len(), got: val.len() });
                }
                let mut prev: Option<u32> = None;
                for &j in idx {
                    if j as usize >= dim || prev.is_some_and(|p| j <= p) {
                        return Err(FormatError::BadInputIndex);
                    }
                    prev = Some(j);
                }
                if !val.iter().all(|v| v.is_finite()) {
                    return Err(FormatError::NonFiniteInput);
                }
            }
        }
        Ok(())
    }
}

/// Reads the centred input `x'_j = (x_j − mean_j) / scale_j` (or `x_j`) for
/// non-decreasing `j`.
struct Cursor<'v, 'x> {
    input: Input<'x>,
    centring: Option<(Array<'v>, Array<'v>)>,
    p: usize,
}

impl<'v, 'x> Cursor<'v, 'x> {
    fn new(input: Input<'x>, centring: Option<(Array<'v>, Array<'v>)>) -> Self {
        Cursor { input, centring, p: 0 }
    }

    #[inline]
    fn raw(&mut self, j: usize) -> f64 {
        match self.input {
            Input::D32(x) => x.get(j).map_or(0.0, |&v| v as f64),
            Input::D64(x) => x.get(j).copied().unwrap_or(0.0),
            Input::Sparse(idx, val) => {
                while idx.get(self.p).is_some_and(|&i| (i as usize) < j) {
                    self.p += 1;
                }
                match (idx.get(self.p), val.get(self.p)) {
                    (Some(&i), Some(&v)) if i as usize == j => v as f64,
                    _ => 0.0,
                }
            }
        }
    }

    #[inline]
    fn at(&mut self, j: usize) -> f64 {
        let r = self.raw(j);
        match self.centring {
            Some((mean, scale)) => (r - mean.at(j)) / scale.at(j),
            None => r,
        }
    }
}

fn finite_f32(s: f64) -> Result<f32, FormatError> {
    let r = s as f32;
    if s.is_finite() && r.is_finite() {
        Ok(r)
    } else {
        Err(FormatError::ScoreOverflow)
    }
}

fn finite_f64(s: f64) -> Result<f64, FormatError> {
    if s.is_finite() {
        Ok(s)
    } else {
        Err(FormatError::ScoreOverflow)
    }
}

impl ModelView<'_> {
    /// Scores one dense input of length [`dim`](Self::dim).
    ///
    /// Computed in `f64` (see the module docs) and rounded to `f32` once.
    ///
    /// # Errors
    ///
    /// [`FormatError::DimensionMismatch`] if `x.len() != dim()`,
    /// [`FormatError::NonFiniteInput`] if `x` holds NaN or infinity,
    /// [`FormatError::ScoreOverflow`] if the score is not a finite `f32`.
    pub fn score_dense(&self, x: &[f32]) -> Result<f32, FormatError> {
        finite_f32(self.score_input(Input::D32(x))?)
    }

    /// Scores one dense `f64` input; as [`score_dense`](Self::score_dense)
    /// but without the final rounding to `f32`.
    ///
    /// # Errors
    ///
    /// As [`score_dense`](Self::score_dense).
    pub fn score_dense_f64(&self, x: &[f64]) -> Result<f64, FormatError> {
        finite_f64(self.score_input(Input::D64(x))?)
    }

    /// Scores one sparse input: `indices` 0-based and strictly increasing,
    /// `values[k]` the value of feature `indices[k]`, all other features 0.
    ///
    /// # Errors
    ///
    /// [`FormatError::DimensionMismatch`] if the slices differ in length,
    /// [`FormatError::BadInputIndex`] if an index is `>= dim()` or the
    /// indices are not strictly increasing, [`FormatError::NonFiniteInput`],
    /// [`FormatError::ScoreOverflow`].
    pub fn score_sparse(&self, indices: &[u32], values: &[f32]) -> Result<f32, FormatError> {
        finite_f32(self.score_input(Input::Sparse(indices, values))?)
    }

    /// Scores `out.len()` dense rows stored row-major in `x`
    /// (`x.len() == out.len() * dim()`), writing score `r` to `out[r]`.
    ///
    /// # Errors
    ///
    /// As [`score_dense`](Self::score_dense). Lengths and finiteness of all
    /// of `x` are checked before anything is written; only
    /// [`FormatError::ScoreOverflow`] can leave `out` partly written (rows
    /// before the failing one hold their scores).
    pub fn score_dense_rows(&self, x: &[f32], out: &mut [f32]) -> Result<(), FormatError> {
        let expected = out.len().checked_mul(self.dim()).ok_or(FormatError::BadDimensions)?;
        if x.len() != expected {
            return Err(FormatError::DimensionMismatch { expected, got: x.len() });
        }
        if !x.iter().all(|v| v.is_finite()) {
            return Err(FormatError::NonFiniteInput);
        }
        for (row, o) in x.chunks_exact(self.dim()).zip(out.iter_mut()) {
            *o = self.score_dense(row)?;
        }
        Ok(())
    }

    /// [`score_dense_rows`](Self::score_dense_rows) for `f64` inputs and
    /// outputs.
    ///
    /// # Errors
    ///
    /// As [`score_dense_rows`](Self::score_dense_rows).
    pub fn score_dense_rows_f64(&self, x: &[f64], out: &mut [f64]) -> Result<(), FormatError> {
        let expected = out.len().checked_mul(self.dim()).ok_or(FormatError::BadDimensions)?;
        if x.len() != expected {
            return Err(FormatError::DimensionMismatch { expected, got: x.len() });
        }
        if !x.iter().all(|v| v.is_finite()) {
            return Err(FormatError::NonFiniteInput);
        }
        for (row, o) in x.chunks_exact(self.dim()).zip(out.iter_mut()) {
            *o = self.score_dense_f64(row)?;
        }
        Ok(())
    }

    /// Scores `out.len()` sparse rows given in CSR form: row `r` is
    /// `indices[row_ptr[r]..row_ptr[r + 1]]` with its `values`
    /// (`row_ptr.len() == out.len() + 1`, `row_ptr[0] == 0`, non-decreasing,
    /// last entry `== indices.len() == values.len()`).
    ///
    /// # Errors
    ///
    /// [`FormatError::DimensionMismatch`] for inconsistent lengths or row
    /// pointers, otherwise as [`score_sparse`](Self::score_sparse). All rows
    /// are checked before anything is written; only
    /// [`FormatError::ScoreOverflow`] can leave `out` partly written.
    pub fn score_sparse_rows(
        &self,
        row_ptr: &[u32],
        indices: &[u32],
        values: &[f32],
        out: &mut [f32],
    ) -> Result<(), FormatError> {
        let expected = out.len().checked_add(1).ok_or(FormatError::BadDimensions)?;
        if row_ptr.len() != expected {
            return Err(FormatError::DimensionMismatch { expected, got: row_ptr.len() });
        }
        if indices.len() != values.len() {
            return Err(FormatError::DimensionMismatch { expected: indices.len(), got: values.len() });
        }
        let row = |r: usize| -> Result<(&[u32], &[f32]), FormatError> {
            let mismatch = FormatError::DimensionMismatch { expected: indices.len(), got: 0 };
            let s = *row_ptr.get(r).ok_or(mismatch)? as usize;
            let e = *row_ptr.get(r + 1).ok_or(mismatch)? as usize;
            match (indices.get(s..e), values.get(s..e)) {
                (Some(i), Some(v)) => Ok((i, v)),
                _ => Err(FormatError::DimensionMismatch { expected: indices.len(), got: e }),
            }
        };
        if row_ptr.first() != Some(&0) || row_ptr.last().map(|&e| e as usize) != Some(indices.len()) {
            return Err(FormatError::DimensionMismatch { expected: indices.len(), got: 0 });
        }
        for r in 0..out.len() {
            let (i, v) = row(r)?;
            Input::Sparse(i, v).check(self.dim())?;
        }
        for (r, o) in out.iter_mut().enumerate() {
            let (i, v) = row(r)?;
            *o = self.score_sparse(i, v)?;
        }
        Ok(())
    }

    fn score_input(&self, input: Input<'_>) -> Result<f64, FormatError> {
        input.check(self.dim())?;
        let centring = self.feature_centring();
        Ok(match self.body {
            Body::Linear(ref l) => score_linear(l, input, centring),
            Body::Kernel(ref k) => score_kernel(k, input, centring, self.dim()),
        })
    }
}

fn score_linear(l: &LinearView<'_>, input: Input<'_>, centring: Option<(Array<'_>, Array<'_>)>) -> f64 {
    let w = l.weights;
    let mut s = 0.0;
    match (input, centring) {
        (Input::Sparse(idx, val), None) => {
            for (&j, &v) in idx.iter().zip(val) {
                s += w.at(j as usize) * v as f64;
            }
        }
        (Input::D32(x), None) => {
            for (wj, &xj) in w.iter().zip(x) {
                s += wj * xj as f64;
            }
        }
        (Input::D64(x), None) => {
            for (wj, &xj) in w.iter().zip(x) {
                s += wj * xj;
            }
        }
        _ => {
            let mut cur = Cursor::new(input, centring);
            for (j, wj) in w.iter().enumerate() {
                s += wj * cur.at(j);
            }
        }
    }
    l.offset + s
}

/// `(⟨x', b⟩, ‖x' − b‖²)` for one basis row.
fn row_stats(
    basis: &BasisView<'_>,
    i: usize,
    dim: usize,
    input: Input<'_>,
    centring: Option<(Array<'_>, Array<'_>)>,
    xnorm2: f64,
) -> (f64, f64) {
    let (mut dot, mut dist) = (0.0, 0.0);
    match *basis {
        BasisView::Dense(rows) => {
            let row = rows.slice(i.saturating_mul(dim), dim);
            let mut cur = Cursor::new(input, centring);
            for (j, b) in row.iter().enumerate() {
                let xv = cur.at(j);
                dot += xv * b;
                dist += (xv - b) * (xv - b);
            }
        }
        BasisView::Sparse { row_ptr, indices, values } => {
            let s = row_ptr.get(i).unwrap_or(0) as usize;
            let e = row_ptr.get(i + 1).unwrap_or(0) as usize;
            let n = e.saturating_sub(s);
            let (ri, rv) = (indices.slice(s, n), values.slice(s, n));
            match (input, centring) {
                (Input::Sparse(xi, xv), None) => {
                    // Merge two sorted index lists; the sum runs over their union.
                    let (mut p, mut ri_it, mut rv_it) = (0usize, ri.iter().peekable(), rv.iter());
                    loop {
                        let xj = xi.get(p).map(|&j| j as usize);
                        let bj = ri_it.peek().map(|&j| j as usize);
                        match (xj, bj) {
                            (None, None) => break,
                            (Some(a), Some(b)) if a == b => {
                                let x = xv.get(p).map_or(0.0, |&v| v as f64);
                                let y = rv_it.next().unwrap_or(0.0);
                                ri_it.next();
                                p += 1;
                                dot += x * y;
                                dist += (x - y) * (x - y);
                            }
                            (Some(a), b) if b.is_none_or(|b| a < b) => {
                                let x = xv.get(p).map_or(0.0, |&v| v as f64);
                                p += 1;
                                dist += x * x;
                            }
                            _ => {
                                let y = rv_it.next().unwrap_or(0.0);
                                ri_it.next();
                                dist += y * y;
                            }
                        }
                    }
                }
                _ => {
                    // x' is dense here: ‖x' − b‖² = ‖x'‖² + Σ_{j∈row} ((x'_j − b_j)² − x'_j²).
                    let mut cur = Cursor::new(input, centring);
                    for (j, b) in ri.iter().zip(rv.iter()) {
                        let xv = cur.at(j as usize);
                        dot += xv * b;
                        dist += (xv - b) * (xv - b) - xv * xv;
                    }
                    dist = (dist + xnorm2).max(0.0);
                }
            }
        }
    }
    (dot, dist)
}

fn score_kernel(k: &KernelView<'_>, input: Input<'_>, centring: Option<(Array<'_>, Array<'_>)>, dim: usize) -> f64 {
    let needs_xnorm = matches!(k.basis, BasisView::Sparse { .. })
        && matches!(k.kernel, Kernel::Rbf { .. })
        && !matches!((input, centring), (Input::Sparse(..), None));
    let xnorm2 = if needs_xnorm {
        let mut cur = Cursor::new(input, centring);
        (0..dim).map(|j| cur.at(j)).map(|v| v * v).sum()
    } else {
        0.0
    };
    let (mut s1, mut sk, mut sa, mut sac) = (0.0, 0.0, 0.0, 0.0);
    let col_means = k.centring.map(|c| c.col_means);
    for (i, a) in k.coeffs.iter().enumerate() {
        let (dot, dist) = row_stats(&k.basis, i, dim, input, centring, xnorm2);
        let kv = match k.kernel {
            Kernel::Linear => dot,
            Kernel::Rbf { gamma } => libm::exp(-gamma * dist),
            Kernel::Polynomial { gamma, coef0, degree } => {
                let base = gamma * dot + coef0;
                (0..degree).fold(1.0, |acc, _| acc * base)
            }
        };
        s1 += a * kv;
        if let Some(cm) = col_means {
            sk += kv;
            sa += a;
            sac += a * cm.at(i);
        }
    }
    match k.centring {
        // Σ_i a_i·(k_i − mean_j k_j − c_i + g) = s1 − sa·mean_k − sac + sa·g
        Some(c) => k.offset + s1 - sa * (sk / k.rows as f64) - sac + sa * c.grand_mean,
        None => k.offset + s1,
    }
}
