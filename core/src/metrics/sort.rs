//! Stable bottom-up merge sort of index permutations, with exchange counting,
//! and the pair counts every pairwise metric is built from.
//!
//! Written here rather than using `core`'s `sort_unstable_by` because the
//! ranking metrics need a *stable* order (ties broken by input order) and the
//! Knight (1966) τ algorithm needs the number of exchanges; `core` has no stable
//! sort without `alloc`.

use core::cmp::Ordering;

/// Total order on finite floats (`-0.0 == 0.0`). Callers have rejected NaN;
/// should one slip through it compares equal, which keeps the sort panic-free.
#[inline]
pub(crate) fn cmp_f64(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// Sorts `v` stably so that `less(a, b)` never holds for `a` after `b`, using
/// `buf` (same length as `v`) as scratch. Returns the number of exchanges: pairs
/// that were in the wrong order in the input, i.e. `a` before `b` in the input
/// with `less(b, a)`.
///
/// `less` must be a strict weak order; otherwise the result is some permutation
/// of `v` (never a panic). Slices of different lengths sort only the common
/// prefix length of `v`.
pub(crate) fn merge_sort_by<F>(v: &mut [usize], buf: &mut [usize], less: F) -> u128
where
    F: Fn(usize, usize) -> bool,
{
    let n = v.len().min(buf.len());
    let v = &mut v[..n];
    let buf = &mut buf[..n];
    let mut exchanges = 0u128;
    let mut width = 1usize;
    let mut in_v = true;
    while width < n {
        exchanges += if in_v { merge_pass(v, buf, width, &less) } else { merge_pass(buf, v, width, &less) };
        in_v = !in_v;
        width = width.saturating_mul(2);
    }
    if !in_v {
        v.copy_from_slice(buf);
    }
    exchanges
}

fn merge_pass<F>(src: &[usize], dst: &mut [usize], width: usize, less: &F) -> u128
where
    F: Fn(usize, usize) -> bool,
{
    let n = src.len();
    let mut exchanges = 0u128;
    let mut start = 0usize;
    while start < n {
        let mid = start.saturating_add(width).min(n);
        let end = mid.saturating_add(width).min(n);
        let (left, right) = src[start..end].split_at(mid - start);
        let out = &mut dst[start..end];
        let (mut i, mut j) = (0usize, 0usize);
        for slot in out.iter_mut() {
            let take_right = match (left.get(i), right.get(j)) {
                (Some(&a), Some(&b)) => less(b, a),
                (None, Some(_)) => true,
                _ => false,
            };
            if take_right {
                *slot = right[j];
                j += 1;
                exchanges += (left.len() - i) as u128;
            } else {
                *slot = left[i];
                i += 1;
            }
        }
        start = end;
    }
    exchanges
}

/// Sum over runs of equal keys in `idx` (already sorted so equal keys are
/// adjacent) of `t(t−1)/2`: the number of pairs tied in that key.
pub(crate) fn tied_pairs<F>(idx: &[usize], eq: F) -> u128
where
    F: Fn(usize, usize) -> bool,
{
    let mut total = 0u128;
    let mut run = 1u128;
    for w in idx.windows(2) {
        if eq(w[0], w[1]) {
            run += 1;
        } else {
            total += run * (run - 1) / 2;
            run = 1;
        }
    }
    if !idx.is_empty() {
        total += run * (run - 1) / 2;
    }
    total
}

/// Counts of the `n(n−1)/2` unordered pairs of two paired samples `x`, `y`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PairCounts {
    /// `n(n−1)/2`.
    pub pairs: u128,
    /// Pairs with `x_i = x_j`.
    pub tied_x: u128,
    /// Pairs with `y_i = y_j`.
    pub tied_y: u128,
    /// Pairs with `x_i = x_j` and `y_i = y_j`.
    pub tied_xy: u128,
    /// Pairs ordered oppositely: `(x_i − x_j)(y_i − y_j) < 0`.
    pub discordant: u128,
}

impl PairCounts {
    /// Pairs ordered the same way: `(x_i − x_j)(y_i − y_j) > 0`.
    pub fn concordant(&self) -> u128 {
        // Inclusion–exclusion, ordered so no intermediate goes negative:
        // tied_x + tied_y − tied_xy = |tied in x or y| ≤ pairs.
        (self.pairs + self.tied_xy) - self.tied_x - self.tied_y - self.discordant
    }

    /// Pairs with distinct `x` but tied `y`.
    pub fn tied_y_only(&self) -> u128 {
        self.tied_y - self.tied_xy
    }

    /// Pairs with distinct `x`.
    pub fn untied_x(&self) -> u128 {
        self.pairs - self.tied_x
    }
}

/// Pair counts of `(x(i), y(i))` for `i in 0..n` in O(n log n) (Knight 1966):
/// sort by `(x, y)`, then merge-sort by `y` counting exchanges; an exchange is
/// exactly a discordant pair, because pairs tied in `x` are already in `y`
/// order and pairs tied in `y` are never exchanged by a stable merge.
///
/// `work` must hold at least `2n` elements (the caller checks); values must be
/// finite (the caller checks).
pub(crate) fn pair_counts<X, Y>(n: usize, x: X, y: Y, work: &mut [usize]) -> PairCounts
where
    X: Fn(usize) -> f64,
    Y: Fn(usize) -> f64,
{
    if work.len() < n.saturating_mul(2) {
        return PairCounts::default();
    }
    let (idx, rest) = work.split_at_mut(n);
    let buf = &mut rest[..n];
    for (k, slot) in idx.iter_mut().enumerate() {
        *slot = k;
    }
    merge_sort_by(idx, buf, |a, b| cmp_f64(x(a), x(b)).then(cmp_f64(y(a), y(b))) == Ordering::Less);
    let tied_x = tied_pairs(idx, |a, b| x(a) == x(b));
    let tied_xy = tied_pairs(idx, |a, b| x(a) == x(b) && y(a) == y(b));
    let discordant = merge_sort_by(idx, buf, |a, b| y(a) < y(b));
    let tied_y = tied_pairs(idx, |a, b| y(a) == y(b));
    let n = n as u128;
    PairCounts { pairs: n * n.saturating_sub(1) / 2, tied_x, tied_y, tied_xy, discordant }
}
