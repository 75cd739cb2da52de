//! Blocked, cascaded sums and the element access every scorer uses: the
//! arithmetic shared by all model kinds (see the accuracy discussion in the
//! `score` module).

use super::{Array, ElementType};
use crate::real::Real;

/// Terms per block of the blocked sums (see the module docs).
pub(crate) const BLOCK: usize = 64;

/// Element `i` of a parameter array in the arithmetic type `R` (0 out of
/// range, which cannot happen after validation). For `R = f32` and an `f32`
/// array the widening and narrowing fold away.
#[inline(always)]
pub(crate) fn elem<R: Real>(a: &Array<'_>, i: usize) -> R {
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
pub(crate) trait Arith: Real {
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
pub(crate) struct Sum<R> {
    block: R,
    in_block: usize,
    stack: [R; CASCADE],
    depth: usize,
    blocks: u64,
}

impl<R: Real> Sum<R> {
    pub(crate) fn new() -> Self {
        Sum { block: R::ZERO, in_block: 0, stack: [R::ZERO; CASCADE], depth: 0, blocks: 0 }
    }

    #[inline]
    #[cfg_attr(not(feature = "kernel"), allow(dead_code))]
    pub(crate) fn add(&mut self, v: R) {
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

    pub(crate) fn total(&self) -> R {
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
pub(crate) fn blocked_sum<R: Real>(n: usize, mut term: impl FnMut(usize) -> R) -> R {
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

/// The `f32` weights of a dense dot product, in one of two storages with
/// the same arithmetic: little-endian bytes at any alignment (`&[u8]`), or
/// a native slice (`&[f32]`, the aligned fast path of
/// [`DenseF32`](super::view::DenseF32), checked once at parse time).
pub(crate) trait F32Weights: Copy {
    /// Number of weights.
    fn count(self) -> usize;
    /// The first `mid` weights and the rest.
    fn split(self, mid: usize) -> (Self, Self);
    /// One block of [`dot_f32`]: four lanes over 4-term chunks, then the
    /// (at most three) remaining terms in lane 0.
    ///
    /// Both implementations cut the weights and the input to one length and
    /// count the chunks, taking each by `split_first_chunk`: the loop then
    /// compiles to loads and multiply-adds under one counter without relying
    /// on the inliner. A `zip` of two `chunks_exact` iterators compiled the
    /// same only while `Zip::new` was inlined; once another part of core
    /// used the same `Zip` type (the eight-lane `blas` dot), `opt-level =
    /// "s"` kept it out of line and the Cortex-M4F loop grew from 5.7 to 7.9
    /// instructions per feature. `tests/firmware/perf_bounds.txt` holds the
    /// bounds CI checks.
    fn dot_block(self, x: &[f32]) -> f32;
}

impl F32Weights for &[u8] {
    #[inline(always)]
    fn count(self) -> usize {
        self.len() / 4
    }

    #[inline(always)]
    fn split(self, mid: usize) -> (Self, Self) {
        self.split_at(mid.saturating_mul(4).min(self.len()))
    }

    #[inline(always)]
    fn dot_block(self, x: &[f32]) -> f32 {
        let (mut l0, mut l1, mut l2, mut l3) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
        let n = (self.len() / 4).min(x.len());
        let (mut w, mut x) = (&self[..4 * n], &x[..n]);
        for _ in 0..n / 4 {
            let (Some((w4, wr)), Some((x4, xr))) = (w.split_first_chunk::<16>(), x.split_first_chunk::<4>()) else {
                break;
            };
            let [a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3] = *w4;
            l0 += f32::from_le_bytes([a0, a1, a2, a3]) * x4[0];
            l1 += f32::from_le_bytes([b0, b1, b2, b3]) * x4[1];
            l2 += f32::from_le_bytes([c0, c1, c2, c3]) * x4[2];
            l3 += f32::from_le_bytes([d0, d1, d2, d3]) * x4[3];
            (w, x) = (wr, xr);
        }
        while let (Some((w1, wr)), Some((&x1, xr))) = (w.split_first_chunk::<4>(), x.split_first()) {
            l0 += f32::from_le_bytes(*w1) * x1;
            (w, x) = (wr, xr);
        }
        (l0 + l1) + (l2 + l3)
    }
}

impl F32Weights for &[f32] {
    #[inline(always)]
    fn count(self) -> usize {
        self.len()
    }

    #[inline(always)]
    fn split(self, mid: usize) -> (Self, Self) {
        self.split_at(mid.min(self.len()))
    }

    #[inline(always)]
    fn dot_block(self, x: &[f32]) -> f32 {
        let (mut l0, mut l1, mut l2, mut l3) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
        let n = self.len().min(x.len());
        let (mut w, mut x) = (&self[..n], &x[..n]);
        for _ in 0..n / 4 {
            let (Some((w4, wr)), Some((x4, xr))) = (w.split_first_chunk::<4>(), x.split_first_chunk::<4>()) else {
                break;
            };
            l0 += w4[0] * x4[0];
            l1 += w4[1] * x4[1];
            l2 += w4[2] * x4[2];
            l3 += w4[3] * x4[3];
            (w, x) = (wr, xr);
        }
        for (&w1, &x1) in w.iter().zip(x) {
            l0 += w1 * x1;
        }
        (l0 + l1) + (l2 + l3)
    }
}

/// `⟨w, x⟩` for `f32` weights (either storage of [`F32Weights`]; both give
/// the same bits) and an `f32` input, both of length `n`: the hot loop of
/// an `f32` linear model. Blocks of [`BLOCK`] terms run four lanes each;
/// the block sums are combined pairwise by halving the block range
/// (recursion depth `⌈log2(n/BLOCK)⌉`, no cascade state), which gives the
/// same error bound as [`Sum`].
#[inline]
pub(crate) fn dot_f32<W: F32Weights>(w: W, x: &[f32]) -> f32 {
    let n = x.len().min(w.count());
    if n <= BLOCK {
        return w.dot_block(x);
    }
    // Split at a block boundary: the left half holds ⌊blocks/2⌋ blocks.
    let blocks = n.div_ceil(BLOCK);
    let mid = (blocks / 2) * BLOCK;
    let (wl, wr) = w.split(mid);
    let (xl, xr) = x.split_at(mid.min(x.len()));
    dot_f32(wl, xl) + dot_f32(wr, xr)
}

/// [`dot_f32`] on little-endian weight bytes at any alignment.
#[inline]
pub(crate) fn dot_f32_f32(w: &[u8], x: &[f32]) -> f32 {
    dot_f32(w, x)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    use super::{blocked_sum, dot_f32, dot_f32_f32, Sum, BLOCK};

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
            // the native-slice storage of the same weights
            let wf: Vec<f32> = (0..n).map(|j| (j % 7) as f32).collect();
            assert_eq!(dot_f32(&wf[..], &x) as f64, want);
        }
        const { assert!(BLOCK % 4 == 0) };
    }
}
