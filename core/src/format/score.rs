//! Scoring on a validated [`ModelView`]: the device path. Nothing here
//! allocates, and nothing panics.
//!
//! # Precision
//!
//! The arithmetic type follows the model and the input:
//!
//! | model element type | entry point | computed in |
//! |---|---|---|
//! | `f32` | `f32` inputs ([`score_dense`](ModelView::score_dense), [`score_sparse`](ModelView::score_sparse), `…_rows`) | `f32` |
//! | `f64` | `f32` inputs | `f64`, rounded to `f32` once |
//! | either | `f64` inputs (`…_f64`) | `f64` |
//!
//! An `f32` model on a device therefore never touches `f64` arithmetic
//! (which a single-precision FPU such as the Cortex-M4F's would emulate in
//! software), except for the stored `f64` offsets and kernel parameters,
//! which are rounded to `f32` once per score.
//!
//! To keep `f32` sums accurate, every sum is *blocked*: the hot dot-product
//! loops run four independent lanes over blocks of [`BLOCK`] terms, and the
//! block sums are combined pairwise (a binary cascade), so the rounding
//! error grows with `BLOCK/4 + log2(n/BLOCK)` rather than with `n`.
//!
//! ## Accuracy bound
//!
//! For an `f32` linear model with `d ≤ 2²⁰` features, the score `s₃₂` and the
//! `f64` training-side prediction `s₆₄` (same `f32` input, *unrounded* `f64`
//! parameters) satisfy
//!
//! `|s₃₂ − s₆₄| ≤ 1e-5 · (|b| + Σ_j |w_j·x'_j|)`
//!
//! (the sum is the condition scale of the dot product: parameter rounding
//! contributes `2⁻²⁴`, each product and the centring `≈ 3·2⁻²⁴`, the blocked
//! sum at most `(BLOCK/4 + 2 + log2(d/BLOCK))·2⁻²⁴ ≈ 34·2⁻²⁴`). When the terms
//! do not cancel (`|s₆₄|` comparable to the scale), this is a relative error
//! of 1e-5. Kernel expansions obey the same bound with the scale
//! `|b| + Σ_i |a_i|·(|k_i| + |c_i| + |k̄| + |g|)`, times the kernel's own
//! amplification (RBF: `1 + γ‖x' − x_i‖²`; polynomial of degree p: `p`). The
//! tests in this module check both bounds on random models.

#[cfg(feature = "kernel")]
use super::view::{BasisView, KernelView};
use super::view::{Body, LinearView, ModelView};
#[cfg(feature = "kernel")]
use super::Kernel;
use super::{Array, ElementType, FormatError};
use crate::real::Real;

/// Terms per block of the blocked sums (see the module docs).
pub const BLOCK: usize = 64;

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

/// Element `i` of a parameter array in the arithmetic type `R` (0 out of
/// range, which cannot happen after validation). For `R = f32` and an `f32`
/// array the widening and narrowing fold away.
#[inline(always)]
fn elem<R: Real>(a: &Array<'_>, i: usize) -> R {
    let b = a.as_bytes();
    match a.element_type() {
        ElementType::F32 => {
            let v = i.checked_mul(4).and_then(|at| b.get(at..at.checked_add(4)?));
            let v = v.and_then(|s| <[u8; 4]>::try_from(s).ok()).map_or(0.0, f32::from_le_bytes);
            R::from_f64(v as f64)
        }
        ElementType::F64 => R::from_f64(a.at(i)),
    }
}

/// The arithmetic types scoring runs in, with the one loop that is
/// specialised per type: a dense `f32` input against the weights.
trait Arith: Real {
    /// `Σ_j w_j·x_j` over all `j < w.len()`.
    fn dense_dot(w: &Array<'_>, x: &[f32]) -> Self;
}

impl Arith for f32 {
    #[inline]
    fn dense_dot(w: &Array<'_>, x: &[f32]) -> f32 {
        match w.element_type() {
            ElementType::F32 => dot_f32_f32(w.as_bytes(), x),
            ElementType::F64 => blocked_sum(w.len(), |j| elem::<f32>(w, j) * x.get(j).copied().unwrap_or(0.0)),
        }
    }
}

impl Arith for f64 {
    #[inline]
    fn dense_dot(w: &Array<'_>, x: &[f32]) -> f64 {
        blocked_sum(w.len(), |j| elem::<f64>(w, j) * x.get(j).map_or(0.0, |&v| v as f64))
    }
}

/// Slots of the pairwise cascade of [`Sum`]: enough for 2³² blocks.
const CASCADE: usize = 32;
const _: () = assert!(CASCADE >= 26);

/// A running sum with bounded error growth: terms accumulate sequentially
/// inside a block of [`BLOCK`] terms, and block sums are combined pairwise
/// (a binary counter of partial sums), so the error bound grows as
/// `BLOCK + log2(n/BLOCK)` units of rounding rather than `n`. No allocation:
/// the cascade has one slot per bit of the block counter. Every array a model
/// holds has fewer than 2³² elements, i.e. fewer than 2²⁶ blocks, so
/// [`CASCADE`] slots never run out; fewer slots keep device stacks small.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "kernel"), allow(dead_code))] // `add` and `in_block` serve kernel scoring
struct Sum<R> {
    block: R,
    in_block: usize,
    stack: [R; CASCADE],
    depth: usize,
    blocks: u64,
}

impl<R: Real> Sum<R> {
    fn new() -> Self {
        Sum { block: R::ZERO, in_block: 0, stack: [R::ZERO; CASCADE], depth: 0, blocks: 0 }
    }

    #[inline]
    #[cfg_attr(not(feature = "kernel"), allow(dead_code))]
    fn add(&mut self, v: R) {
        self.block += v;
        self.in_block += 1;
        if self.in_block == BLOCK {
            self.push_block(self.block);
            self.block = R::ZERO;
            self.in_block = 0;
        }
    }

    /// Pushes a finished block sum, merging equal-sized partial sums.
    #[inline]
    fn push_block(&mut self, v: R) {
        let mut v = v;
        let mut c = self.blocks;
        while c & 1 == 1 && self.depth > 0 {
            self.depth -= 1;
            v = self.stack.get(self.depth).copied().unwrap_or(R::ZERO) + v;
            c >>= 1;
        }
        if let Some(slot) = self.stack.get_mut(self.depth) {
            *slot = v;
            self.depth += 1;
        }
        self.blocks = self.blocks.wrapping_add(1);
    }

    fn total(&self) -> R {
        let mut t = self.block;
        for &s in self.stack.iter().take(self.depth).rev() {
            t = s + t;
        }
        t
    }
}

/// `Σ_j term(j)` for `j < n`, four lanes per block of [`BLOCK`], blocks
/// combined pairwise.
#[inline(always)]
fn blocked_sum<R: Real>(n: usize, mut term: impl FnMut(usize) -> R) -> R {
    let mut sum = Sum::<R>::new();
    let mut j = 0;
    while j < n {
        let end = if n - j > BLOCK { j + BLOCK } else { n };
        let (mut l0, mut l1, mut l2, mut l3) = (R::ZERO, R::ZERO, R::ZERO, R::ZERO);
        while j + 4 <= end {
            l0 += term(j);
            l1 += term(j + 1);
            l2 += term(j + 2);
            l3 += term(j + 3);
            j += 4;
        }
        while j < end {
            l0 += term(j);
            j += 1;
        }
        sum.push_block((l0 + l1) + (l2 + l3));
    }
    sum.total()
}

/// `⟨w, x⟩` for an `f32` weight array (little-endian bytes, any
/// alignment) and an `f32` input, both of length `n`: the hot loop of an
/// `f32` linear model. Blocks of [`BLOCK`] terms run four lanes each; the
/// block sums are combined pairwise by halving the block range (recursion
/// depth `⌈log2(n/BLOCK)⌉`, no cascade state), which gives the same error
/// bound as [`Sum`].
#[inline]
fn dot_f32_f32(w: &[u8], x: &[f32]) -> f32 {
    let n = x.len().min(w.len() / 4);
    if n <= BLOCK {
        return dot_block(w, x);
    }
    // Split at a block boundary: the left half holds ⌊blocks/2⌋ blocks.
    let blocks = n.div_ceil(BLOCK);
    let mid = (blocks / 2) * BLOCK;
    let (wl, wr) = w.split_at(mid.saturating_mul(4).min(w.len()));
    let (xl, xr) = x.split_at(mid.min(x.len()));
    dot_f32_f32(wl, xl) + dot_f32_f32(wr, xr)
}

/// One block of [`dot_f32_f32`]: four lanes over 4-term chunks, then the
/// (at most three) remaining terms in lane 0.
#[inline(always)]
fn dot_block(w: &[u8], x: &[f32]) -> f32 {
    let (mut l0, mut l1, mut l2, mut l3) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    let (wc, xc) = (w.chunks_exact(16), x.chunks_exact(4));
    let (wr, xr) = (wc.remainder(), xc.remainder());
    for (w4, x4) in wc.zip(xc) {
        if let (Ok(w4), Ok(x4)) = (<&[u8; 16]>::try_from(w4), <&[f32; 4]>::try_from(x4)) {
            let [a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3] = *w4;
            l0 += f32::from_le_bytes([a0, a1, a2, a3]) * x4[0];
            l1 += f32::from_le_bytes([b0, b1, b2, b3]) * x4[1];
            l2 += f32::from_le_bytes([c0, c1, c2, c3]) * x4[2];
            l3 += f32::from_le_bytes([d0, d1, d2, d3]) * x4[3];
        }
    }
    for (w1, &x1) in wr.chunks_exact(4).zip(xr) {
        if let Ok(w1) = <[u8; 4]>::try_from(w1) {
            l0 += f32::from_le_bytes(w1) * x1;
        }
    }
    (l0 + l1) + (l2 + l3)
}

/// Reads the raw input value `x_j` in the arithmetic type, for
/// non-decreasing `j` (sparse inputs keep a cursor).
struct Cursor<'x> {
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
struct Centred<'v, 'x> {
    input: Input<'x>,
    centring: Option<(Array<'v>, Array<'v>)>,
}

impl Centred<'_, '_> {
    fn cursor(&self) -> CentredCursor<'_, '_> {
        CentredCursor { cur: Cursor::new(self.input), centring: self.centring }
    }
}

struct CentredCursor<'v, 'x> {
    cur: Cursor<'x>,
    centring: Option<(Array<'v>, Array<'v>)>,
}

impl CentredCursor<'_, '_> {
    #[inline(always)]
    fn at<R: Real>(&mut self, j: usize) -> R {
        let r: R = self.cur.raw(j);
        match self.centring {
            Some((mean, scale)) => (r - elem::<R>(&mean, j)) / elem::<R>(&scale, j),
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
    /// Computed in `f32` for an `f32` model, in `f64` (rounded once) for an
    /// `f64` model; see the module docs for the accuracy bound.
    ///
    /// # Errors
    ///
    /// [`FormatError::DimensionMismatch`] if `x.len() != dim()`,
    /// [`FormatError::NonFiniteInput`] if `x` holds NaN or infinity,
    /// [`FormatError::ScoreOverflow`] if the score is not a finite `f32`.
    pub fn score_dense(&self, x: &[f32]) -> Result<f32, FormatError> {
        self.score_f32(Input::D32(x))
    }

    /// Scores one dense `f64` input, computing in `f64` whatever the
    /// element type.
    ///
    /// # Errors
    ///
    /// As [`score_dense`](Self::score_dense), with the overflow test on
    /// `f64`.
    pub fn score_dense_f64(&self, x: &[f64]) -> Result<f64, FormatError> {
        let input = Input::D64(x);
        input.check(self.dim())?;
        finite_f64(self.eval::<f64>(input)?)
    }

    /// Scores one sparse input: `indices` 0-based and strictly increasing,
    /// `values[k]` the value of feature `indices[k]`, all other features 0.
    ///
    /// Precision as [`score_dense`](Self::score_dense).
    ///
    /// # Errors
    ///
    /// [`FormatError::DimensionMismatch`] if the slices differ in length,
    /// [`FormatError::BadInputIndex`] if an index is `>= dim()` or the
    /// indices are not strictly increasing, [`FormatError::NonFiniteInput`],
    /// [`FormatError::ScoreOverflow`].
    pub fn score_sparse(&self, indices: &[u32], values: &[f32]) -> Result<f32, FormatError> {
        self.score_f32(Input::Sparse(indices, values))
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
            *o = self.score_f32_unchecked(Input::D32(row))?;
        }
        Ok(())
    }

    /// [`score_dense_rows`](Self::score_dense_rows) for `f64` inputs and
    /// outputs (computed in `f64`).
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
            *o = finite_f64(self.eval::<f64>(Input::D64(row))?)?;
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
            *o = self.score_f32_unchecked(Input::Sparse(i, v))?;
        }
        Ok(())
    }

    fn score_f32(&self, input: Input<'_>) -> Result<f32, FormatError> {
        if let (Body::Linear(_), Input::D32(x)) = (&self.body, input) {
            // Lazy finiteness check: a linear score is a sum of products
            // `w_j·x'_j` with finite `w_j` (validated) and `x'_j` finite iff
            // `x_j` is (centring subtracts a finite mean and divides by a
            // finite non-zero scale), so a NaN or infinite input always makes
            // the score NaN or infinite. Scan the input only then, which
            // reports the same error as checking first.
            if x.len() != self.dim() {
                return Err(FormatError::DimensionMismatch { expected: self.dim(), got: x.len() });
            }
            return self.score_f32_unchecked(input).map_err(|e| match e {
                FormatError::ScoreOverflow if !x.iter().all(|v| v.is_finite()) => FormatError::NonFiniteInput,
                e => e,
            });
        }
        input.check(self.dim())?;
        self.score_f32_unchecked(input)
    }

    /// The `f32` entry points after the input check: `f32` arithmetic for
    /// an `f32` model, `f64` rounded once for an `f64` model.
    fn score_f32_unchecked(&self, input: Input<'_>) -> Result<f32, FormatError> {
        match self.element_type() {
            ElementType::F32 => {
                let s = self.eval::<f32>(input)?;
                if s.is_finite() {
                    Ok(s)
                } else {
                    Err(FormatError::ScoreOverflow)
                }
            }
            ElementType::F64 => finite_f32(self.eval::<f64>(input)?),
        }
    }

    /// The score in the arithmetic type `R`, on a checked input.
    ///
    /// Without the `kernel` cargo feature, kernel expansions (which parse
    /// and validate as usual) are not scored: [`FormatError::UnsupportedKind`].
    fn eval<R: Arith>(&self, input: Input<'_>) -> Result<R, FormatError> {
        let x = Centred { input, centring: self.feature_centring() };
        match self.body {
            Body::Linear(ref l) => Ok(score_linear::<R>(l, x)),
            #[cfg(feature = "kernel")]
            Body::Kernel(ref k) => Ok(score_kernel::<R>(k, x, self.dim())),
            #[cfg(not(feature = "kernel"))]
            Body::Kernel(_) => Err(FormatError::UnsupportedKind),
        }
    }
}

fn score_linear<R: Arith>(l: &LinearView<'_>, x: Centred<'_, '_>) -> R {
    let w = l.weights;
    let n = w.len();
    let s: R = match (x.input, x.centring) {
        (Input::D32(xs), None) => R::dense_dot(&w, xs),
        (Input::D64(xs), None) => blocked_sum(n, |j| elem::<R>(&w, j) * R::from_f64(xs.get(j).copied().unwrap_or(0.0))),
        (Input::Sparse(idx, val), None) => blocked_sum(idx.len(), |k| {
            let j = idx.get(k).map_or(usize::MAX, |&j| j as usize);
            elem::<R>(&w, j) * R::from_f64(val.get(k).map_or(0.0, |&v| v as f64))
        }),
        _ => {
            let mut cur = x.cursor();
            blocked_sum(n, |j| elem::<R>(&w, j) * cur.at::<R>(j))
        }
    };
    R::from_f64(l.offset) + s
}

/// `(⟨x', b⟩, ‖x' − b‖²)` for one basis row.
#[cfg(feature = "kernel")]
fn row_stats<R: Real>(basis: &BasisView<'_>, i: usize, dim: usize, x: Centred<'_, '_>, xnorm2: R) -> (R, R) {
    match *basis {
        BasisView::Dense(rows) => {
            let row = rows.slice(i.saturating_mul(dim), dim);
            let mut cur = x.cursor();
            let (mut dot, mut dist) = (Sum::<R>::new(), Sum::<R>::new());
            for j in 0..dim {
                let xv: R = cur.at(j);
                let b: R = elem(&row, j);
                dot.add(xv * b);
                dist.add((xv - b) * (xv - b));
            }
            (dot.total(), dist.total())
        }
        BasisView::Sparse { row_ptr, indices, values } => {
            let s = row_ptr.get(i).unwrap_or(0) as usize;
            let e = row_ptr.get(i + 1).unwrap_or(0) as usize;
            let n = e.saturating_sub(s);
            let (ri, rv) = (indices.slice(s, n), values.slice(s, n));
            let (mut dot, mut dist) = (Sum::<R>::new(), Sum::<R>::new());
            match (x.input, x.centring) {
                (Input::Sparse(xi, xv), None) => {
                    // Merge two sorted index lists; the sum runs over their union.
                    let (mut p, mut q) = (0usize, 0usize);
                    loop {
                        let xj = xi.get(p).map(|&j| j as usize);
                        let bj = ri.get(q).map(|j| j as usize);
                        let xval = || R::from_f64(xv.get(p).map_or(0.0, |&v| v as f64));
                        match (xj, bj) {
                            (None, None) => break,
                            (Some(a), Some(b)) if a == b => {
                                let (xa, yb): (R, R) = (xval(), elem(&rv, q));
                                dot.add(xa * yb);
                                dist.add((xa - yb) * (xa - yb));
                                p += 1;
                                q += 1;
                            }
                            (Some(a), b) if b.is_none_or(|b| a < b) => {
                                let xa: R = xval();
                                dist.add(xa * xa);
                                p += 1;
                            }
                            _ => {
                                let yb: R = elem(&rv, q);
                                dist.add(yb * yb);
                                q += 1;
                            }
                        }
                    }
                    (dot.total(), dist.total())
                }
                _ => {
                    // x' is dense here: ‖x' − b‖² = ‖x'‖² + Σ_{j∈row} ((x'_j − b_j)² − x'_j²).
                    let mut cur = x.cursor();
                    dist.add(xnorm2);
                    for (q, j) in ri.iter().enumerate() {
                        let xa: R = cur.at(j as usize);
                        let yb: R = elem(&rv, q);
                        dot.add(xa * yb);
                        dist.add((xa - yb) * (xa - yb) - xa * xa);
                    }
                    (dot.total(), dist.total().max(R::ZERO))
                }
            }
        }
    }
}

#[cfg(feature = "kernel")]
fn score_kernel<R: Real>(k: &KernelView<'_>, x: Centred<'_, '_>, dim: usize) -> R {
    let needs_xnorm = matches!(k.basis, BasisView::Sparse { .. })
        && matches!(k.kernel, Kernel::Rbf { .. })
        && !matches!((x.input, x.centring), (Input::Sparse(..), None));
    let xnorm2 = if needs_xnorm {
        let mut cur = x.cursor();
        blocked_sum(dim, |j| {
            let v: R = cur.at(j);
            v * v
        })
    } else {
        R::ZERO
    };
    // With test-kernel centring (000 §6.1) the score is
    //   b + Σ_i a_i·(k_i − k̄ − c_i + g) = b + Σ_i a_i·(k_i − c_i) + (Σ_i a_i)·(g − k̄),
    // grouped so that the large, nearly cancelling terms meet early.
    let (mut s1, mut sk, mut sa) = (Sum::<R>::new(), Sum::<R>::new(), Sum::<R>::new());
    let col_means = k.centring.map(|c| c.col_means);
    for i in 0..k.coeffs.len() {
        let a: R = elem(&k.coeffs, i);
        let (dot, dist) = row_stats::<R>(&k.basis, i, dim, x, xnorm2);
        let kv = match k.kernel {
            Kernel::Linear => dot,
            Kernel::Rbf { gamma } => (-R::from_f64(gamma) * dist).exp(),
            Kernel::Polynomial { gamma, coef0, degree } => {
                let base = R::from_f64(gamma) * dot + R::from_f64(coef0);
                (0..degree).fold(R::ONE, |acc, _| acc * base)
            }
        };
        match col_means {
            Some(cm) => {
                s1.add(a * (kv - elem::<R>(&cm, i)));
                sk.add(kv);
                sa.add(a);
            }
            None => s1.add(a * kv),
        }
    }
    let b = R::from_f64(k.offset);
    match k.centring {
        Some(c) => {
            let kbar = sk.total() / R::from_f64(k.rows as f64);
            b + (s1.total() + sa.total() * (R::from_f64(c.grand_mean) - kbar))
        }
        None => b + s1.total(),
    }
}

#[cfg(test)]
mod tests {
    //! The accuracy bound of the module docs, on random models: `f32`
    //! scores against the `f64` training-side prediction (unrounded `f64`
    //! parameters, the same `f32` input).
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    use super::super::{
        Basis, ElementType, FeatureCentring, Kernel, KernelCentring, KernelModel, LinearModel, Model, ModelSpec,
        ModelView,
    };
    use super::{blocked_sum, dot_f32_f32, Sum, BLOCK};

    struct Rng(u64);
    impl Rng {
        fn f(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let u = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
            u as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        }
    }

    fn emit(spec: &ModelSpec<'_>) -> Vec<u8> {
        let mut buf = vec![0u8; spec.buffer_len()];
        spec.emit(&mut buf).unwrap();
        buf
    }

    #[test]
    fn sums_are_exact_on_integers_and_match_f64() {
        for n in [0usize, 1, 3, 4, 5, 63, 64, 65, 255, 256, 257, 1000, 4099] {
            let s: f64 = blocked_sum(n, |j| j as f64);
            assert_eq!(s, (n * n.saturating_sub(1) / 2) as f64, "n = {n}");
            let mut acc = Sum::<f64>::new();
            (0..n).for_each(|j| acc.add(j as f64));
            assert_eq!(acc.total(), s, "n = {n}");
            let w: Vec<u8> = (0..n).flat_map(|j| ((j % 7) as f32).to_le_bytes()).collect();
            let x: Vec<f32> = (0..n).map(|j| (j % 5) as f32).collect();
            let want: f64 = (0..n).map(|j| ((j % 7) * (j % 5)) as f64).sum();
            assert_eq!(dot_f32_f32(&w, &x) as f64, want, "n = {n}");
            // any alignment of the weight bytes
            let mut shifted = vec![0u8; 1];
            shifted.extend_from_slice(&w);
            assert_eq!(dot_f32_f32(&shifted[1..], &x) as f64, want);
        }
        const { assert!(BLOCK % 4 == 0) };
    }

    /// `(max |s32 − s64| / scale, max |s32 − s64| / |s64| over rows with
    /// |s64| ≥ scale / 4)` for random linear models.
    fn linear_errors(d: usize, centring: bool, sparse: bool, seed: u64) -> (f64, f64) {
        let mut rng = Rng(seed);
        let w: Vec<f64> = (0..d).map(|_| rng.f()).collect();
        let mean: Vec<f64> = (0..d).map(|_| 0.3 * rng.f()).collect();
        let scale: Vec<f64> = (0..d).map(|_| 0.5 + rng.f().abs()).collect();
        let b = rng.f();
        let c = centring.then_some(FeatureCentring { mean: &mean, scale: &scale });
        let bytes =
            emit(&ModelSpec::new(Model::Linear(LinearModel { w: &w, offset: b, centring: c }), ElementType::F32));
        let v = ModelView::new_checked(&bytes).unwrap();
        let (mut abs_max, mut rel_max) = (0.0f64, 0.0f64);
        for _ in 0..40 {
            // Inputs with a positive bias, so that many scores do not cancel.
            let x32: Vec<f32> =
                (0..d).map(|j| if sparse && j % 3 != 0 { 0.0 } else { (rng.f() * 2.0 + 0.5) as f32 }).collect();
            let xc = |j: usize| {
                let x = x32[j] as f64;
                if centring {
                    (x - mean[j]) / scale[j]
                } else {
                    x
                }
            };
            let s64 = b + (0..d).map(|j| w[j] * xc(j)).sum::<f64>();
            let cond = b.abs() + (0..d).map(|j| (w[j] * xc(j)).abs()).sum::<f64>();
            let s32 = if sparse {
                let idx: Vec<u32> = (0..d as u32).filter(|&j| x32[j as usize] != 0.0).collect();
                let vals: Vec<f32> = idx.iter().map(|&j| x32[j as usize]).collect();
                v.score_sparse(&idx, &vals).unwrap()
            } else {
                v.score_dense(&x32).unwrap()
            } as f64;
            let err = (s32 - s64).abs();
            abs_max = abs_max.max(err / cond);
            if s64.abs() >= cond / 4.0 {
                rel_max = rel_max.max(err / s64.abs());
            }
        }
        (abs_max, rel_max)
    }

    #[test]
    fn f32_linear_within_bound_of_f64_prediction() {
        let mut worst = (0.0f64, 0.0f64);
        for (i, &d) in [1usize, 3, 17, 64, 100, 1000, 4096, 20_000].iter().enumerate() {
            for centring in [false, true] {
                for sparse in [false, true] {
                    let (a, r) = linear_errors(d, centring, sparse, 7 + i as u64);
                    assert!(a <= 1e-5, "d={d} centring={centring} sparse={sparse}: {a:e} of the scale");
                    assert!(r <= 1e-5, "d={d} centring={centring} sparse={sparse}: relative {r:e}");
                    worst = (worst.0.max(a), worst.1.max(r));
                }
            }
        }
        std::eprintln!("f32 linear: worst error {:.2e} of Σ|w·x|+|b|, {:.2e} relative", worst.0, worst.1);
    }

    #[test]
    #[cfg(not(feature = "kernel"))]
    fn kernel_models_parse_but_do_not_score_without_the_feature() {
        let (coeffs, basis) = ([1.0, -1.0], [1.0, 0.0, 0.0, 1.0]);
        let model = KernelModel {
            dim: 2,
            kernel: Kernel::Rbf { gamma: 0.5 },
            basis: Basis::Dense(&basis),
            coeffs: &coeffs,
            offset: 0.0,
            centring: None,
            kernel_centring: None,
        };
        let bytes = emit(&ModelSpec::new(Model::Kernel(model), ElementType::F32));
        let v = ModelView::new_checked(&bytes).unwrap();
        assert_eq!(v.score_dense(&[1.0, 2.0]), Err(super::FormatError::UnsupportedKind));
        assert_eq!(v.score_dense_f64(&[1.0, 2.0]), Err(super::FormatError::UnsupportedKind));
    }

    #[test]
    #[cfg(feature = "kernel")]
    fn f32_kernel_within_bound_of_f64_prediction() {
        let mut rng = Rng(99);
        let kernels =
            [Kernel::Linear, Kernel::Rbf { gamma: 0.05 }, Kernel::Polynomial { gamma: 0.1, coef0: 1.0, degree: 3 }];
        let mut worst = 0.0f64;
        for kernel in kernels {
            for (m, d) in [(5usize, 3usize), (40, 30), (200, 100)] {
                for sparse in [false, true] {
                    for kc in [false, true] {
                        let dense: Vec<f64> =
                            (0..m * d).map(|t| if sparse && t % 3 == 1 { 0.0 } else { rng.f() }).collect();
                        let (mut row_ptr, mut indices, mut values) = (vec![0u32], Vec::new(), Vec::new());
                        for i in 0..m {
                            for j in 0..d {
                                if dense[i * d + j] != 0.0 {
                                    indices.push(j as u32);
                                    values.push(dense[i * d + j]);
                                }
                            }
                            row_ptr.push(indices.len() as u32);
                        }
                        let coeffs: Vec<f64> = (0..m).map(|_| rng.f()).collect();
                        let col_means: Vec<f64> = (0..m).map(|_| 0.5 * rng.f()).collect();
                        let grand = 0.3 * rng.f();
                        let b = rng.f();
                        let basis = if sparse {
                            Basis::Sparse { row_ptr: &row_ptr, indices: &indices, values: &values }
                        } else {
                            Basis::Dense(&dense)
                        };
                        let model = KernelModel {
                            dim: d,
                            kernel,
                            basis,
                            coeffs: &coeffs,
                            offset: b,
                            centring: None,
                            kernel_centring: kc.then_some(KernelCentring { col_means: &col_means, grand_mean: grand }),
                        };
                        let bytes = emit(&ModelSpec::new(Model::Kernel(model), ElementType::F32));
                        let v = ModelView::new_checked(&bytes).unwrap();
                        for _ in 0..10 {
                            let x32: Vec<f32> = (0..d).map(|_| rng.f() as f32).collect();
                            let x: Vec<f64> = x32.iter().map(|&v| v as f64).collect();
                            let (mut k, mut amp) = (vec![0.0; m], 1.0f64);
                            for i in 0..m {
                                let row = &dense[i * d..(i + 1) * d];
                                let dot: f64 = row.iter().zip(&x).map(|(a, b)| a * b).sum();
                                let dist: f64 = row.iter().zip(&x).map(|(a, b)| (a - b) * (a - b)).sum();
                                k[i] = match kernel {
                                    Kernel::Linear => dot,
                                    Kernel::Rbf { gamma } => {
                                        amp = amp.max(1.0 + gamma * dist);
                                        (-gamma * dist).exp()
                                    }
                                    Kernel::Polynomial { gamma, coef0, degree } => {
                                        amp = amp.max(degree as f64);
                                        (gamma * dot + coef0).powi(degree as i32)
                                    }
                                };
                            }
                            let kbar = k.iter().sum::<f64>() / m as f64;
                            let (mut s64, mut cond) = (b, b.abs());
                            for i in 0..m {
                                let kt = if kc { k[i] - kbar - col_means[i] + grand } else { k[i] };
                                s64 += coeffs[i] * kt;
                                let mag = if kc {
                                    k[i].abs() + kbar.abs() + col_means[i].abs() + grand.abs()
                                } else {
                                    k[i].abs()
                                };
                                cond += coeffs[i].abs() * mag;
                            }
                            let s32 = if sparse {
                                let idx: Vec<u32> = (0..d as u32).collect();
                                v.score_sparse(&idx, &x32).unwrap()
                            } else {
                                v.score_dense(&x32).unwrap()
                            } as f64;
                            let e = (s32 - s64).abs() / (cond * amp);
                            assert!(e <= 1e-5, "{kernel:?} m={m} d={d} sparse={sparse} kc={kc}: {e:e}");
                            worst = worst.max(e);
                        }
                    }
                }
            }
        }
        std::eprintln!("f32 kernel: worst error {worst:.2e} of the scale");
    }

    #[test]
    fn non_finite_input_reported_as_before_the_lazy_check() {
        let w = [1.0, -2.0, 0.0];
        for centring in [false, true] {
            let (mean, scale) = ([0.5, 0.0, 1.0], [2.0, 1.0, 0.5]);
            let c = centring.then_some(FeatureCentring { mean: &mean, scale: &scale });
            for et in [ElementType::F32, ElementType::F64] {
                let bytes = emit(&ModelSpec::new(Model::Linear(LinearModel { w: &w, offset: 1.0, centring: c }), et));
                let v = ModelView::new_checked(&bytes).unwrap();
                for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                    // also where the weight is 0 (0·∞ = NaN)
                    for j in 0..3 {
                        let mut x = [1.0f32; 3];
                        x[j] = bad;
                        assert_eq!(v.score_dense(&x), Err(super::super::FormatError::NonFiniteInput));
                    }
                }
                assert_eq!(v.score_dense(&[f32::MAX, -f32::MAX, 0.0]), Err(super::super::FormatError::ScoreOverflow));
                assert!(matches!(
                    v.score_dense(&[1.0, 2.0]),
                    Err(super::super::FormatError::DimensionMismatch { expected: 3, got: 2 })
                ));
            }
        }
    }

    #[test]
    fn f64_models_still_compute_in_f64() {
        let w = [1.0, 1e-9, -1.0];
        let bytes =
            emit(&ModelSpec::new(Model::Linear(LinearModel { w: &w, offset: 0.0, centring: None }), ElementType::F64));
        let v = ModelView::new_checked(&bytes).unwrap();
        // 1e8 + 1 − 1e8: the f64 path keeps the 1 that an f32 sum would lose.
        assert_eq!(v.score_dense_f64(&[1e8, 1e9, 1e8]).unwrap(), 1.0);
        assert_eq!(v.score_dense(&[1e8, 1e9, 1e8]).unwrap(), 1.0);
    }
}
