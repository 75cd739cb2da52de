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

/// The pair the rule chooses among all pairs `i < j` of `n = s.len()`
/// items, visiting few of them: the screened search of the online
/// learner's `next_pair_screened` for any posterior whose mean difference
/// is `s_i − s_j` and whose variance `var(i, j)` of the difference is
/// bounded by `(r_i + r_j)²·margin` (a radius `r_i ≥ 0` per item, `margin`
/// covering the rounding of `var`). Items are sorted by score into
/// `order` (`n` entries, left holding that ascending order); the
/// neighbours in score order are offered first, then each item is paired
/// with the items above it in that order, nearest first, until
/// `(r_a + max r)²·margin/m²` falls below the best ratio (`m²` only grows
/// along the order); a single pair whose own bound is below it is skipped
/// without calling `var`. The bound is exact, so the answer is the one
/// offering every pair gives (the rule is a total order).
///
/// # Errors
/// `DimensionMismatch` unless `r.len() == order.len() == n`;
/// `InvalidParameter` if `n > u32::MAX`; `NonFinite` if a score or a radius
/// is not finite.
pub fn best_pair_screened<R: Real>(
    s: &[R],
    r: &[R],
    margin: R,
    order: &mut [u32],
    mut var: impl FnMut(usize, usize) -> R,
) -> Result<Option<PairScore<R>>, crate::LinalgError> {
    let n = s.len();
    if r.len() != n || order.len() != n {
        return Err(crate::LinalgError::DimensionMismatch);
    }
    if u32::try_from(n).is_err() {
        return Err(crate::LinalgError::InvalidParameter);
    }
    if !s.iter().chain(r.iter()).all(|v| v.is_finite()) {
        return Err(crate::LinalgError::NonFinite);
    }
    let rmax = r.iter().fold(R::ZERO, |a, &b| a.max(b));
    for (k, o) in order.iter_mut().enumerate() {
        *o = k as u32;
    }
    // Scores are finite, so the order is total.
    order.sort_unstable_by(|&a, &b| {
        s[a as usize].partial_cmp(&s[b as usize]).unwrap_or(Ordering::Equal).then(a.cmp(&b))
    });
    let mut pair = |a: usize, b: usize, m2: R| {
        let (i, j) = if a < b { (a, b) } else { (b, a) };
        PairScore::new(i, j, var(i, j), m2)
    };
    // Seed the best with the neighbours in score order (where the winner
    // usually is), so the bound prunes from the first scan on.
    let mut best: Option<PairScore<R>> = None;
    for ab in order.windows(2) {
        let (a, b) = (ab[0] as usize, ab[1] as usize);
        let mu = s[b] - s[a];
        offer(&mut best, pair(a, b, mu * mu));
    }
    for p in 0..n {
        let a = order[p] as usize;
        let reach = (r[a] + rmax) * (r[a] + rmax) * margin;
        for &bq in &order[p + 1..] {
            let b = bq as usize;
            let mu = s[b] - s[a];
            let m2 = mu * mu;
            if let (Some(bc), true) = (&best, m2 > R::ZERO) {
                if reach / m2 < bc.ratio() {
                    break;
                }
                let own = (r[a] + r[b]) * (r[a] + r[b]) * margin;
                if own / m2 < bc.ratio() {
                    continue;
                }
            }
            offer(&mut best, pair(a, b, m2));
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    fn pick(cands: &[(usize, usize, f64, f64)]) -> Option<(usize, usize)> {
        let mut best = None;
        for &(a, b, v, m2) in cands {
            offer(&mut best, PairScore::new(a, b, v, m2));
        }
        best.map(|c: PairScore<f64>| (c.i, c.j))
    }

    /// The screened search equals offering every pair (brute force), bit
    /// for bit, with the tight bound and with a bound that screens nothing;
    /// ties in score (and a zero mean difference) included.
    #[test]
    fn screened_search_equals_brute_force() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 10_000) as f64 / 10_000.0
        };
        for (n, d) in [(2, 1), (7, 2), (60, 3), (200, 4)] {
            let z: std::vec::Vec<f64> = (0..n * d).map(|_| next() - 0.5).collect();
            let mut s: std::vec::Vec<f64> = (0..n).map(|_| 3.0 * next()).collect();
            s[n - 1] = s[0];
            let var = |i: usize, j: usize| -> f64 { (0..d).map(|k| (z[i * d + k] - z[j * d + k]).powi(2)).sum() };
            let mut brute = None;
            for i in 0..n {
                for j in i + 1..n {
                    let mu = s[i] - s[j];
                    offer(&mut brute, PairScore::new(i, j, var(i, j), mu * mu));
                }
            }
            let r: std::vec::Vec<f64> =
                (0..n).map(|i| (0..d).map(|k| z[i * d + k] * z[i * d + k]).sum::<f64>().sqrt()).collect();
            let margin = 1.0 + (4 * d + 16) as f64 * f64::EPSILON;
            let mut order = std::vec![0u32; n];
            let tight = best_pair_screened(&s, &r, margin, &mut order, var).unwrap();
            let all = best_pair_screened(&s, &std::vec![1e300; n], 1.0, &mut order, var).unwrap();
            let b = brute.unwrap();
            for got in [tight.unwrap(), all.unwrap()] {
                assert_eq!((got.i, got.j), (b.i, b.j), "n = {n}");
                assert_eq!(got.var.to_bits(), b.var.to_bits());
                assert_eq!(got.ratio().to_bits(), b.ratio().to_bits());
            }
        }
        let mut order = [0u32; 2];
        assert!(best_pair_screened(&[0.0, f64::NAN], &[1.0, 1.0], 1.0, &mut order, |_, _| 1.0).is_err());
        assert!(best_pair_screened(&[0.0, 1.0], &[1.0], 1.0, &mut order, |_, _| 1.0).is_err());
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
