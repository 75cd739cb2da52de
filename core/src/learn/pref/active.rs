//! Greedy active preference exploration (001 §5).
//!
//! From candidate pairs `(i, j)` over the fitted items, pick `k` one at a
//! time. Each round takes the unpicked candidate with the highest ratio
//! `v/m²` of the posterior variance `v` of `f_i − f_j` (001 eq. 14) to its
//! squared mean `m²` (eq. 13) — "the preference with closest latent
//! preference values that we are most uncertain about". Ties in the ratio
//! (e.g. several `m = 0`) go to the larger `v`, then to the earlier
//! candidate; candidates with `v = 0` (nothing left to learn) are picked
//! only when nothing else remains.
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
use crate::LinalgError;

/// Scratch of [`select_pairs`] for `n` items: `n² + 3n`.
pub fn select_workspace_len(n: usize) -> usize {
    n.saturating_mul(n).saturating_add(3 * n)
}

/// Picks up to `out.len()` candidates (see the module docs); writes their
/// indices into `candidates` to `out` in the order picked and the `v/m²`
/// ratio each had when picked to `ratio` (`+∞` for `m = 0`, same length as
/// `out`). Returns how many were picked (fewer than `out.len()` only when
/// the candidates run out).
///
/// # Errors
/// `BadGraph` for a candidate out of range or `i = j`; shapes, workspace.
pub fn select_pairs(
    post: &PrefPosterior<'_>,
    candidates: &[(usize, usize)],
    out: &mut [usize],
    ratio: &mut [f64],
    work: &mut [f64],
) -> Result<usize, LearnError> {
    let n = post.n();
    if ratio.len() != out.len() {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if candidates.iter().any(|&(i, j)| i >= n || j >= n || i == j) {
        return Err(LearnError::BadGraph);
    }
    let need = select_workspace_len(n);
    if work.len() < need {
        return Err(LinalgError::WorkspaceTooSmall { needed: need, got: work.len() }.into());
    }
    let (cf, rest) = work.split_at_mut(n * n);
    let (mu, rest) = rest.split_at_mut(n);
    let (g, sd) = rest.split_at_mut(n);
    let sd = &mut sd[..n];
    cf.copy_from_slice(post.cov_factor());
    mu.copy_from_slice(post.mean());
    let var =
        |cf: &[f64], i: usize, j: usize| -> f64 { super::sq_dist(&cf[i * n..(i + 1) * n], &cf[j * n..(j + 1) * n]) };
    let lik = post.likelihood();
    let mut picked = 0;
    while picked < out.len() {
        // (index, v, m²) of the best candidate so far.
        let mut best: Option<(usize, f64, f64)> = None;
        for (c, &(i, j)) in candidates.iter().enumerate() {
            if out[..picked].contains(&c) {
                continue;
            }
            let v = var(cf, i, j);
            let m = mu[i] - mu[j];
            let m2 = m * m;
            let better = match best {
                None => true,
                Some((_, bv, bm2)) => {
                    // v/m² > bv/bm², cross-multiplied (handles m² = 0).
                    let (l, r) = (v * bm2, bv * m2);
                    l > r || (l == r && v > bv)
                }
            };
            if better {
                best = Some((c, v, m2));
            }
        }
        let Some((c, v, m2)) = best else {
            break;
        };
        out[picked] = c;
        ratio[picked] = if m2 > 0.0 { v / m2 } else { f64::INFINITY };
        picked += 1;
        // Pretend-answered update with the more probable answer.
        let (i, j) = candidates[c];
        let (a, b) = if mu[i] >= mu[j] { (i, j) } else { (j, i) };
        let md = mu[a] - mu[b];
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
        // g = C·d, Σd = Cᵀg (into sd), then C ← C − η·g·(gᵀC) = C − η·g·sdᵀ.
        for r in 0..n {
            g[r] = cf[a * n + r] - cf[b * n + r];
        }
        for col in 0..n {
            sd[col] = cf[col * n..(col + 1) * n].iter().zip(g.iter()).map(|(x, y)| x * y).sum();
        }
        let den = 1.0 + tau * v;
        let kappa = tau / den;
        let g2: f64 = g.iter().map(|x| x * x).sum();
        let eta = kappa / (1.0 + libm::sqrt((1.0 - kappa * g2).max(0.0)));
        for col in 0..n {
            let f = eta * sd[col];
            for (cv, gv) in cf[col * n..(col + 1) * n].iter_mut().zip(g.iter()) {
                *cv -= f * gv;
            }
        }
        let shift = (nu - tau * md) / den;
        for r in 0..n {
            mu[r] += sd[r] * shift;
        }
    }
    Ok(picked)
}
