//! Greedy active preference exploration (001 §5).
//!
//! From candidate pairs `(i, j)` over the fitted items, pick `k` one at a
//! time. Each round takes the unpicked candidate with the highest ratio
//! `v/m²` of the posterior variance `v` of `f_i − f_j` (001 eq. 14) to its
//! squared mean `m²` (eq. 13) — "the preference with closest latent
//! preference values that we are most uncertain about" — by the one rule
//! of [`crate::learn::next_pair`] that the online learner and the device
//! GP use too: ties in the ratio (e.g. several `m = 0`) go to the larger
//! `v`, then to the smaller pair, then to the earlier candidate; candidates
//! with `v = 0` (nothing left to learn) are never picked.
//!
//! Three entry points: [`select_pairs`] on a fitted [`PrefPosterior`],
//! [`select_pairs_cov`] on a posterior given by its mean and packed
//! covariance (a kind-8 model: what `ranklet suggest` reads), whose factor
//! it takes from a symmetric eigendecomposition (`C = Λ^½Vᵀ`, negative
//! eigenvalues of rounding clamped to 0, so a semidefinite `Σ` is fine),
//! and [`select_pairs_lowrank`] on a posterior `Σ = CCᵀ + diag(r)` with an
//! `n × p` factor (a kind-10 model), among every pair without an `n × n`
//! matrix (below).
//!
//! **The "pretend-answered" update** (answers are not available while the
//! `k` questions are chosen): after a pick, the posterior gets one more
//! rank-one site on `d = e_a − e_b`, where `a ≻ b` is **the answer the
//! current posterior finds more probable** (`a = i` if `m ≥ 0`, else `j`),
//! with the site EP would give that answer from the current marginal as
//! its cavity (the probit moment match of [`super`]; for the Gaussian
//! likelihood `τ̃ = 1/noise²` and an answer equal to the current mean, so
//! the mean does not move). The update is exact for that site:
//!
//! ```text
//! Σ ← Σ − κ·(Σd)(Σd)ᵀ,   μ ← μ + Σd·(ν̃ − τ̃·dᵀμ)/(1 + τ̃v),   κ = τ̃/(1 + τ̃v)
//! ```
//!
//! applied to the factor `C` of `Σ = CᵀC` ([`PrefPosterior::cov_factor`]),
//! so that variances of differences stay `‖C(e_i − e_j)‖²` (no
//! cancellation, as in EP): with `g = C·d`, `C ← C − η·g·(gᵀC)`,
//! `η = κ/(1 + √(1 − κ‖g‖²))` (then `(I − ηggᵀ)² = I − κggᵀ`; `κ‖g‖² =
//! τ̃v/(1 + τ̃v) < 1`). O(n²) per pick plus O(n) per candidate to score. The covariance update
//! depends on the answer only through `τ̃`, and the more probable answer is
//! the one that moves `τ̃` least (the probit site precision grows as the
//! answer becomes more surprising), so the rule is the conservative
//! choice. The fitted posterior itself is not changed: the work happens on
//! a copy of `Σ` and `μ` in the caller's workspace.

use super::{probit_site, LearnError, Likelihood, PrefPosterior};
use crate::backend::Backend;
use crate::learn::next_pair::{best_pair_screened, offer, PairScore};
use crate::{LinalgError, MatMut, MatRef};

/// One pick of [`select_pairs`]: the candidate and the moments of its
/// difference `f_i − f_j` when it was picked (after the pretend answers to
/// the earlier picks).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pick {
    /// Index into the candidates.
    pub candidate: usize,
    /// Posterior variance `v` of `f_i − f_j`.
    pub var: f64,
    /// Posterior mean `m` of `f_i − f_j`.
    pub mean_diff: f64,
}

impl Pick {
    /// `v/m²`, `+∞` for `m = 0`.
    pub fn ratio(&self) -> f64 {
        PairScore::new(0, 1, self.var, self.mean_diff * self.mean_diff).ratio()
    }
}

/// Scratch of [`select_pairs`] for `n` items: `n² + 3n`.
pub fn select_workspace_len(n: usize) -> usize {
    n.saturating_mul(n).saturating_add(3 * n)
}

/// Scratch of [`select_pairs_cov`] for `n` items: `2n² + 4n`.
pub fn select_cov_workspace_len(n: usize) -> usize {
    select_workspace_len(n).saturating_add(n.saturating_mul(n)).saturating_add(n)
}

/// Picks up to `picks.len()` candidates (see the module docs) of a fitted
/// posterior, writing them in the order picked. Returns how many were
/// picked (fewer than `picks.len()` only when no unpicked candidate with
/// `v > 0` remains).
///
/// # Errors
/// `BadGraph` for a candidate out of range or `i = j`; shapes, workspace.
pub fn select_pairs(
    post: &PrefPosterior<'_>,
    candidates: &[(usize, usize)],
    picks: &mut [Pick],
    work: &mut [f64],
) -> Result<usize, LearnError> {
    let n = post.n();
    check(n, candidates, work.len(), select_workspace_len(n))?;
    let (cf, rest) = work.split_at_mut(n * n);
    let (mu, rest) = rest.split_at_mut(n);
    cf.copy_from_slice(post.cov_factor());
    mu.copy_from_slice(post.mean());
    select_on(cf, mu, post.likelihood(), candidates, picks, &mut rest[..2 * n])
}

/// [`select_pairs`] on the posterior `N(mean, Σ)` with `Σ` given as its
/// lower triangle packed row by row (`Σ[i][j]`, `j ≤ i`, at
/// `i(i+1)/2 + j`: a kind-8 model's layout) and the likelihood `lik`.
/// One symmetric eigendecomposition by `backend` (O(n³)), then as
/// [`select_pairs`].
///
/// # Errors
/// As [`select_pairs`], with [`select_cov_workspace_len`]; `Numerics`
/// `DimensionMismatch` if `cov_packed` is not `n(n+1)/2` long,
/// `NonFinite` for a non-finite input, and the eigensolver's.
pub fn select_pairs_cov<B: Backend>(
    backend: &mut B,
    mean: &[f64],
    cov_packed: &[f64],
    lik: Likelihood,
    candidates: &[(usize, usize)],
    picks: &mut [Pick],
    work: &mut [f64],
) -> Result<usize, LearnError> {
    let n = mean.len();
    if n.checked_mul(n + 1).map(|t| t / 2) != Some(cov_packed.len()) {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if !mean.iter().chain(cov_packed).all(|x| x.is_finite()) {
        return Err(LinalgError::NonFinite.into());
    }
    lik.check()?;
    check(n, candidates, work.len(), select_cov_workspace_len(n))?;
    if n == 0 {
        return Ok(0);
    }
    let (cf, rest) = work.split_at_mut(n * n);
    let (sigma, rest) = rest.split_at_mut(n * n);
    let (vals, rest) = rest.split_at_mut(n);
    let (mu, rest) = rest.split_at_mut(n);
    for i in 0..n {
        for j in 0..=i {
            let c = cov_packed[i * (i + 1) / 2 + j];
            sigma[i * n + j] = c;
            sigma[j * n + i] = c;
        }
    }
    let a = MatRef::from_row_major(sigma, n, n)?;
    backend.sym_eigen(a, vals, MatMut::from_row_major(cf, n, n)?)?;
    // Row i of V·Λ^½: Σ_ij = Σ_k V_ik λ_k V_jk is the dot of rows i and j.
    for row in cf.chunks_exact_mut(n.max(1)) {
        for (c, &l) in row.iter_mut().zip(vals.iter()) {
            *c *= libm::sqrt(l.max(0.0));
        }
    }
    mu.copy_from_slice(mean);
    select_on(cf, mu, lik, candidates, picks, &mut rest[..2 * n])
}

/// The checks both entry points share.
fn check(n: usize, candidates: &[(usize, usize)], got: usize, needed: usize) -> Result<(), LearnError> {
    if candidates.iter().any(|&(i, j)| i >= n || j >= n || i == j) {
        return Err(LearnError::BadGraph);
    }
    if got < needed {
        return Err(LinalgError::WorkspaceTooSmall { needed, got }.into());
    }
    Ok(())
}

/// The greedy picks on a factor `cf` (`n × n`, row `i` such that
/// `Σ_ij = ⟨row i, row j⟩`) and mean `mu`, both overwritten by the pretend
/// answers; `tmp` holds `2n`.
fn select_on(
    cf: &mut [f64],
    mu: &mut [f64],
    lik: Likelihood,
    candidates: &[(usize, usize)],
    picks: &mut [Pick],
    tmp: &mut [f64],
) -> Result<usize, LearnError> {
    let n = mu.len();
    let (g, sd) = tmp.split_at_mut(n);
    let var = |cf: &[f64], i: usize, j: usize| -> f64 {
        crate::linalg::sq_dist(&cf[i * n..(i + 1) * n], &cf[j * n..(j + 1) * n])
    };
    let mut picked = 0;
    while picked < picks.len() {
        let mut best: Option<PairScore<f64>> = None;
        let mut best_c = 0;
        for (c, &(i, j)) in candidates.iter().enumerate() {
            if picks[..picked].iter().any(|p| p.candidate == c) {
                continue;
            }
            let m = mu[i] - mu[j];
            if offer(&mut best, PairScore::new(i, j, var(cf, i, j), m * m)) {
                best_c = c;
            }
        }
        let Some(PairScore { var: v, .. }) = best else {
            break;
        };
        let (i, j) = candidates[best_c];
        picks[picked] = Pick { candidate: best_c, var: v, mean_diff: mu[i] - mu[j] };
        picked += 1;
        // Pretend-answered update with the more probable answer.
        let (a, b) = more_probable(mu, i, j);
        pretend_answer(cf, n, n, mu, lik, (a, b), v, g, sd)?;
    }
    Ok(picked)
}

/// The pick `(i, j)` as `(a, b)`, `a ≻ b` the answer `mu` finds more
/// probable (`a = i` on a tie).
fn more_probable(mu: &[f64], i: usize, j: usize) -> (usize, usize) {
    if mu[i] >= mu[j] {
        (i, j)
    } else {
        (j, i)
    }
}

/// The pretend answer `a ≻ b` (module docs) to a pick whose difference has
/// variance `v`, applied to the factor rows `f` (row `x` at `x·stride`, its
/// first `width` entries in use: `Σ = FFᵀ`, plus a diagonal that is 0 at
/// `a` and `b`) and the mean `mu`: with `g = f_a − f_b`
/// (into `g`, `width` long) and `Σd = F·g` (into `sd`, one per row),
/// `F ← F − η·(Σd)·gᵀ` and `μ ← μ + Σd·(ν̃ − τ̃·m)/(1 + τ̃v)`. The one
/// step of both [`select_on`] and [`select_pairs_lowrank`].
#[allow(clippy::too_many_arguments)]
fn pretend_answer(
    f: &mut [f64],
    stride: usize,
    width: usize,
    mu: &mut [f64],
    lik: Likelihood,
    (a, b): (usize, usize),
    v: f64,
    g: &mut [f64],
    sd: &mut [f64],
) -> Result<(), LearnError> {
    let md = mu[a] - mu[b];
    let (tau, nu) = pretend_site(lik, md, v)?;
    let g = &mut g[..width];
    for (c, gc) in g.iter_mut().enumerate() {
        *gc = f[a * stride + c] - f[b * stride + c];
    }
    let g = &*g;
    for (x, s) in sd.iter_mut().enumerate() {
        *s = f[x * stride..x * stride + width].iter().zip(g).map(|(p, q)| p * q).sum();
    }
    let den = 1.0 + tau * v;
    let kappa = tau / den;
    let g2: f64 = g.iter().map(|x| x * x).sum();
    let eta = kappa / (1.0 + libm::sqrt((1.0 - kappa * g2).max(0.0)));
    let shift = (nu - tau * md) / den;
    for (x, &s) in sd.iter().enumerate() {
        let e = eta * s;
        for (fv, gv) in f[x * stride..x * stride + width].iter_mut().zip(g) {
            *fv -= e * gv;
        }
        mu[x] += s * shift;
    }
    Ok(())
}

/// The site `(τ̃, ν̃)` of the more probable answer `a ≻ b` to a pair whose
/// difference `f_a − f_b` has mean `md ≥ 0` and variance `v` (module docs).
fn pretend_site(lik: Likelihood, md: f64, v: f64) -> Result<(f64, f64), LearnError> {
    let (tau, nu) = match lik {
        Likelihood::Probit { .. } => {
            let (t, nv, _) = probit_site(md, v, 2.0 * lik.scale() * lik.scale());
            (t, nv)
        }
        Likelihood::Gaussian { noise } => {
            let t = 1.0 / (noise * noise);
            (t, t * md)
        }
    };
    if !(tau.is_finite() && nu.is_finite()) {
        return Err(LinalgError::NonFinite.into());
    }
    Ok((tau, nu))
}

/// One pick of [`select_pairs_lowrank`]: the pair (`i < j`) and the
/// moments of `f_i − f_j` when it was picked (after the pretend answers to
/// the earlier picks).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PairPick {
    /// The smaller item.
    pub i: usize,
    /// The larger item.
    pub j: usize,
    /// Posterior variance `v` of `f_i − f_j`.
    pub var: f64,
    /// Posterior mean `m` of `f_i − f_j`.
    pub mean_diff: f64,
}

/// Scratch of [`select_pairs_lowrank`] for `n` items, rank `p` and `k`
/// picks: `n·(p + 2k) + 3n + p + 2k`; `None` where that overflows `usize`
/// (no buffer is that long).
pub fn select_lowrank_workspace_len(n: usize, p: usize, k: usize) -> Option<usize> {
    let q = p.checked_add(k.checked_mul(2)?)?;
    n.checked_mul(q)?.checked_add(n.checked_mul(3)?)?.checked_add(q)
}

/// [`select_pairs`] among **every** pair `i < j` of the posterior
/// `N(mean, Σ)`, `Σ = CCᵀ + diag(r)` (`factor` = `C`, `n × p` row-major;
/// `resid` = `r ≥ 0`: a kind-10 model), without an `n × n` matrix: each
/// pick is the pair the rule of [`crate::learn::next_pair`] chooses
/// (by its screened search, [`best_pair_screened`], with the radius
/// `√Σ_ii` and `v_ij = ‖c_i − c_j‖² + r_i + r_j`; the pairs already picked
/// count as `v = 0`), then the posterior gets the same pretend answer as in
/// [`select_pairs`]. That update `Σ ← Σ − κ(Σd)(Σd)ᵀ` keeps the form
/// `FFᵀ + diag(r)`: the diagonal variances of the two items of the pick
/// move into two new columns of `F` (`√r_a·e_a`, then `r_a = 0`), after
/// which `Σd = F·g` with `g = f_a − f_b` and `F ← F(I − η·ggᵀ)` as in the
/// module docs. So the picks are those of [`select_pairs_cov`] on the
/// dense `Σ` and the candidates of every pair (up to rounding), at
/// O(n·(p + 2k)) per pick plus the search. `work` holds
/// [`select_lowrank_workspace_len`]`(n, p, picks.len())`, `order` `n`.
/// Returns how many were picked (fewer than `picks.len()` only when no
/// unpicked pair with `v > 0` remains).
///
/// # Errors
/// `DimensionMismatch` for `factor` other than `n·p` long, `resid` or
/// `order` other than `n`; `WorkspaceTooSmall` (`needed = usize::MAX`
/// where the length overflows); `NonFinite` for a
/// non-finite input; `InvalidParameter` for a negative `r_i` or
/// `n > u32::MAX`; the likelihood's checks.
#[allow(clippy::too_many_arguments)]
pub fn select_pairs_lowrank(
    mean: &[f64],
    factor: &[f64],
    p: usize,
    resid: &[f64],
    lik: Likelihood,
    picks: &mut [PairPick],
    work: &mut [f64],
    order: &mut [u32],
) -> Result<usize, LearnError> {
    let n = mean.len();
    let k = picks.len();
    if n.checked_mul(p) != Some(factor.len()) || resid.len() != n || order.len() != n {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if !mean.iter().chain(factor).chain(resid).all(|x| x.is_finite()) {
        return Err(LinalgError::NonFinite.into());
    }
    if resid.iter().any(|&v| v < 0.0) {
        return Err(LinalgError::InvalidParameter.into());
    }
    lik.check()?;
    // An overflowing length is more than any workspace holds.
    let need = select_lowrank_workspace_len(n, p, k).unwrap_or(usize::MAX);
    if work.len() < need {
        return Err(LinalgError::WorkspaceTooSmall { needed: need, got: work.len() }.into());
    }
    let qm = p + 2 * k;
    let (f, rest) = work.split_at_mut(n * qm);
    let (r, rest) = rest.split_at_mut(n);
    let (mu, rest) = rest.split_at_mut(n);
    let (rad, rest) = rest.split_at_mut(n);
    let g = &mut rest[..qm];
    for i in 0..n {
        let row = &mut f[i * qm..(i + 1) * qm];
        row[..p].copy_from_slice(&factor[i * p..(i + 1) * p]);
        row[p..].iter_mut().for_each(|v| *v = 0.0);
    }
    r.copy_from_slice(resid);
    mu.copy_from_slice(mean);
    // Columns of F in use.
    let mut q = p;
    let mut picked = 0;
    while picked < k {
        for (i, ri) in rad.iter_mut().enumerate() {
            let fi = &f[i * qm..i * qm + q];
            *ri = libm::sqrt((fi.iter().map(|v| v * v).sum::<f64>() + r[i]).max(0.0));
        }
        // ‖f_i − f_j‖² rounds within (4q + 16)ε of the bound's terms.
        let margin = 1.0 + (4 * q + 16) as f64 * f64::EPSILON;
        let best = {
            let done = &picks[..picked];
            let (f, r) = (&*f, &*r);
            let var = |i: usize, j: usize| -> f64 {
                if done.iter().any(|d| d.i == i && d.j == j) {
                    return 0.0;
                }
                crate::linalg::sq_dist(&f[i * qm..i * qm + q], &f[j * qm..j * qm + q]) + r[i] + r[j]
            };
            best_pair_screened(mu, rad, margin, order, var)?
        };
        let Some(PairScore { i, j, var: v, .. }) = best else {
            break;
        };
        picks[picked] = PairPick { i, j, var: v, mean_diff: mu[i] - mu[j] };
        picked += 1;
        if picked == k {
            break;
        }
        let (a, b) = more_probable(mu, i, j);
        // The pick's diagonal variances into columns of F.
        for x in [a, b] {
            if r[x] > 0.0 {
                f[x * qm + q] = libm::sqrt(r[x]);
                r[x] = 0.0;
                q += 1;
            }
        }
        // Σd = F·g into rad (free until the next pick's radii).
        pretend_answer(f, qm, q, mu, lik, (a, b), v, g, rad)?;
    }
    Ok(picked)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    /// The workspace length, and `None` (not a saturated count) where it
    /// overflows, whichever term does.
    #[test]
    fn lowrank_workspace_len_is_none_on_overflow() {
        assert_eq!(select_lowrank_workspace_len(2, 1, 3), Some(2 * 7 + 6 + 7));
        assert_eq!(select_lowrank_workspace_len(0, 0, 0), Some(0));
        let big = usize::MAX / 2;
        assert_eq!(select_lowrank_workspace_len(1, 0, big + 1), None);
        assert_eq!(select_lowrank_workspace_len(1, usize::MAX, 1), None);
        assert_eq!(select_lowrank_workspace_len(big, 2, 0), None);
        assert_eq!(select_lowrank_workspace_len(usize::MAX / 3 + 1, 0, 0), None);
        assert_eq!(select_lowrank_workspace_len(1, usize::MAX - 4, 0), None);
    }

    /// The dense picks ([`select_on`]) and the low-rank ones
    /// ([`select_pairs_lowrank`]) share their pretend answer
    /// ([`pretend_answer`]): on an `n × n` factor without a diagonal, every
    /// pair a candidate, both run the same arithmetic on the same rows (the
    /// low-rank search only screens), so every pick's pair, variance and
    /// mean difference are the same bits, several picks deep, for both
    /// likelihoods.
    #[test]
    fn dense_and_lowrank_pretend_answers_are_bit_identical() {
        let mut state = 0x853c_49e6_748f_ea9b_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let (n, k) = (12, 8);
        let mean: Vec<f64> = (0..n).map(|_| next()).collect();
        let c: Vec<f64> = (0..n * n).map(|_| next()).collect();
        let cands: Vec<(usize, usize)> = (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).collect();
        for lik in [Likelihood::Probit { sigma: 0.3 }, Likelihood::Gaussian { noise: 0.4 }] {
            let (mut cf, mut mu, mut tmp) = (c.clone(), mean.clone(), vec![0.0; 2 * n]);
            let mut dense = [Pick::default(); 8];
            assert_eq!(select_on(&mut cf, &mut mu, lik, &cands, &mut dense, &mut tmp).unwrap(), k);
            let mut low = [PairPick::default(); 8];
            let mut work = vec![0.0; select_lowrank_workspace_len(n, n, k).unwrap()];
            let mut order = vec![0u32; n];
            let got = select_pairs_lowrank(&mean, &c, n, &vec![0.0; n], lik, &mut low, &mut work, &mut order).unwrap();
            assert_eq!(got, k);
            for (t, (d, l)) in dense.iter().zip(&low).enumerate() {
                assert_eq!(cands[d.candidate], (l.i, l.j), "{lik:?}, pick {t}");
                assert_eq!(d.var.to_bits(), l.var.to_bits(), "{lik:?}, pick {t}: {} vs {}", d.var, l.var);
                assert_eq!(d.mean_diff.to_bits(), l.mean_diff.to_bits(), "{lik:?}, pick {t}");
            }
        }
    }
}
