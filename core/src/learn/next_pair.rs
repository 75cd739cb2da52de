//! The next pair to ask (001 §5): one score and one tie rule for every
//! learner that asks — the online RankRLS ([`super::online`]), the device
//! preference GP ([`super::pref::device`]) and greedy active exploration
//! ([`super::pref::active`], which the host's `ranklet suggest` calls) —
//! so that one posterior is asked the same question whichever path asks.
//!
//! # The rule
//!
//! A candidate pair `(i, j)` has the posterior variance `v` of the
//! difference of its two latent values and the squared mean difference
//! `m²`. Of all candidates, the next question is the one with
//!
//! 1. `v > 0` — a pair whose difference is certain (`v = 0`, or `v` not a
//!    number) has nothing left to teach and is **never** chosen;
//! 2. the largest ratio `v/m²` ("the preference with closest latent
//!    preference values that we are most uncertain about"), computed by
//!    one division in the working precision, `+∞` where `m² = 0`;
//! 3. on equal ratios (several `m² = 0`, or exact ties), the larger `v`;
//! 4. then the smaller `(min(i, j), max(i, j))`, lexicographically;
//! 5. then the candidate offered first.
//!
//! Rules 2–5 are a total order on eligible candidates, so the answer does
//! not depend on the order in which a search visits them (the screened
//! search of the online learner visits them by score).

use core::cmp::Ordering;

use crate::Real;

/// One candidate of the rule: the pair, its variance and squared mean
/// difference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairScore<R> {
    /// The smaller index.
    pub i: usize,
    /// The larger index.
    pub j: usize,
    /// Posterior variance of the difference.
    pub var: R,
    /// Squared posterior mean of the difference.
    pub m2: R,
}

impl<R: Real> PairScore<R> {
    /// The candidate `(a, b)` (in either order) with variance `var` and
    /// squared mean difference `m2`.
    #[inline]
    pub fn new(a: usize, b: usize, var: R, m2: R) -> Self {
        let (i, j) = if a <= b { (a, b) } else { (b, a) };
        PairScore { i, j, var, m2 }
    }

    /// Whether the rule may choose it at all: `v > 0`.
    #[inline]
    pub fn eligible(&self) -> bool {
        self.var > R::ZERO
    }

    /// `v/m²`, `+∞` when `m² = 0`.
    #[inline]
    pub fn ratio(&self) -> R {
        if self.m2 == R::ZERO {
            R::ONE / R::ZERO
        } else {
            self.var / self.m2
        }
    }

    /// Whether `self` is asked before `other` by rules 2–4 (both eligible).
    #[inline]
    pub fn beats(&self, other: &Self) -> bool {
        let by_value = match self.ratio().partial_cmp(&other.ratio()) {
            Some(Ordering::Equal) | None => self.var.partial_cmp(&other.var).unwrap_or(Ordering::Equal),
            Some(o) => o,
        };
        by_value.then_with(|| (other.i, other.j).cmp(&(self.i, self.j))) == Ordering::Greater
    }
}

/// Offers `c` to the best so far: keeps it if it is eligible and beats
/// `best` (rule 5: a full tie keeps the earlier). Returns whether it was
/// kept.
#[inline]
pub fn offer<R: Real>(best: &mut Option<PairScore<R>>, c: PairScore<R>) -> bool {
    let keep = c.eligible() && best.as_ref().is_none_or(|b| c.beats(b));
    if keep {
        *best = Some(c);
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick(cands: &[(usize, usize, f64, f64)]) -> Option<(usize, usize)> {
        let mut best = None;
        for &(a, b, v, m2) in cands {
            offer(&mut best, PairScore::new(a, b, v, m2));
        }
        best.map(|c: PairScore<f64>| (c.i, c.j))
    }

    #[test]
    fn the_rule_in_order() {
        // 1: v = 0 (or NaN) never, even with m² = 0.
        assert_eq!(pick(&[(0, 1, 0.0, 0.0), (2, 3, f64::NAN, 0.0)]), None);
        assert_eq!(pick(&[(0, 1, 0.0, 0.0), (2, 3, 1.0, 9.0)]), Some((2, 3)));
        // 2: the larger ratio; m² = 0 is +∞.
        assert_eq!(pick(&[(0, 1, 4.0, 1.0), (2, 3, 1.0, 0.0)]), Some((2, 3)));
        assert_eq!(pick(&[(0, 1, 1.0, 1.0), (2, 3, 3.0, 2.0)]), Some((2, 3)));
        // 3: equal ratios → the larger v (also among m² = 0).
        assert_eq!(pick(&[(0, 1, 2.0, 1.0), (2, 3, 4.0, 2.0)]), Some((2, 3)));
        assert_eq!(pick(&[(0, 1, 2.0, 0.0), (2, 3, 4.0, 0.0), (1, 2, 3.0, 0.0)]), Some((2, 3)));
        // 4: then the smaller pair, in whatever order offered or written.
        assert_eq!(pick(&[(3, 2, 2.0, 1.0), (1, 0, 2.0, 1.0)]), Some((0, 1)));
        assert_eq!(pick(&[(0, 1, 2.0, 1.0), (0, 2, 2.0, 1.0)]), Some((0, 1)));
    }
}
