//! The one home of sorting, selection and mid-ranks in core.
//!
//! - [`merge_sort_by`]: stable bottom-up merge sort of index permutations,
//!   with exchange counting, and [`pair_counts`], the concordance counts
//!   every pairwise metric is built from (Knight 1966). Written here rather
//!   than using `core`'s `sort_unstable_by` because the ranking metrics need
//!   a *stable* order (ties broken by input order) and Knight's τ needs the
//!   number of exchanges; `core` has no stable sort without `alloc`.
//! - [`heap_sort_by`] and [`sift_down`]: in-place heapsort (no buffer) and the
//!   bounded heap of [`crate::rank::top_k`].
//! - [`assign_mid_ranks`]: average (mid) ranks of ties over a sorted
//!   permutation — Spearman's ρ in the metrics and in RCDR (003 eq. 2).

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

/// Restores the heap property below `i` in `h[..end]` for a max-heap under
/// the strict order `before` (the root is the element that sorts last).
pub(crate) fn sift_down<T: Copy>(h: &mut [T], mut i: usize, end: usize, before: &impl Fn(T, T) -> bool) {
    let end = end.min(h.len());
    loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let mut top = i;
        if l < end && before(h[top], h[l]) {
            top = l;
        }
        if r < end && before(h[top], h[r]) {
            top = r;
        }
        if top == i {
            return;
        }
        h.swap(i, top);
        i = top;
    }
}

/// In-place heapsort of `v` so that `before(v[i], v[i+1])` holds; O(n log n)
/// comparisons, no extra memory. `before` must be a strict total order
/// (otherwise some permutation of `v`, never a panic).
pub(crate) fn heap_sort_by<T: Copy>(v: &mut [T], before: impl Fn(T, T) -> bool) {
    let n = v.len();
    for start in (0..n / 2).rev() {
        sift_down(v, start, n, &before);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift_down(v, 0, end, &before);
    }
}

/// Writes average (mid) ranks into `ranks`, given `idx`, a permutation
/// sorted by `v`: 1-based, and a run of `t` equal values at sorted positions
/// `s+1..=s+t` all get `s + (t+1)/2`. `ranks` is indexed by the entries of
/// `idx` (which must be `< ranks.len()`).
pub(crate) fn assign_mid_ranks(idx: &[usize], v: impl Fn(usize) -> f64, ranks: &mut [f64]) {
    let n = idx.len();
    let mut s = 0usize;
    while s < n {
        let mut e = s + 1;
        while e < n && v(idx[e]) == v(idx[s]) {
            e += 1;
        }
        // Positions s..e (0-based) carry ranks s+1..=e; their mean is (s+1+e)/2.
        let r = (s + 1 + e) as f64 * 0.5;
        for &i in &idx[s..e] {
            if let Some(slot) = ranks.get_mut(i) {
                *slot = r;
            }
        }
        s = e;
    }
}

#[cfg(test)]
mod heap_tests {
    use super::*;

    #[test]
    fn heap_sort_sorts_and_mid_ranks_average_ties() {
        let vals = [3.0, 1.0, 2.0, 1.0, 5.0, 2.0, 2.0];
        let mut idx = [0usize, 1, 2, 3, 4, 5, 6];
        heap_sort_by(&mut idx, |a, b| vals[a] < vals[b] || (vals[a] == vals[b] && a < b));
        assert_eq!(idx, [1, 3, 2, 5, 6, 0, 4]);
        let mut ranks = [0.0; 7];
        assign_mid_ranks(&idx, |i| vals[i], &mut ranks);
        // 1.0 ×2 → 1.5; 2.0 ×3 → 4; 3.0 → 6; 5.0 → 7.
        assert_eq!(ranks, [6.0, 1.5, 4.0, 1.5, 7.0, 4.0, 4.0]);
        let mut empty: [usize; 0] = [];
        heap_sort_by(&mut empty, |a, b| a < b);
    }
}
