//! Hyperparameters by maximising the EP evidence (type-II maximum
//! likelihood; 000 §5, and the route 001 §4.3 offers as an alternative to
//! its approximate EM).
//!
//! The objective is `log Z_EP(θ)` of [`super::PrefPosterior`] over the
//! log-parameters `θ` of [`super::xpgp`]. Its gradient is R&W eq. 5.27
//! with rank-one sites: at an EP fixed point the implicit dependence
//! through the sites vanishes, so `∂ log Z_EP/∂θ = ½⟨Q, ∂K/∂θ⟩` with
//! `Q = ααᵀ − (W − WΣW)` for the kernel parameters, and the explicit
//! derivative of the tilted normalisers for the likelihood noise. It is
//! exact for the Gaussian (score-difference) likelihood and agrees with
//! finite differences of the converged EP evidence to the EP tolerance
//! for the probit (tested to 1e-5 relative).
//!
//! The optimiser ([`minimize`]) is a **projected L-BFGS** on box bounds:
//! the two-loop recursion on the free variables (those not at a bound with
//! the gradient pushing outward), a backtracking Armijo search along the
//! projected path `clip(x + t·d)`, memory pairs kept only when `sᵀy > 0`.
//! A failed evaluation (EP not converging at an extreme `θ`) counts as
//! `+∞` and shortens the step. [`fit_hyper`] runs it on `−log Z_EP` with
//! warm-started EP (each evaluation starts from the previous sites).
//!
//! **Default bounds** ([`default_bounds`]), in log space, on the scales the
//! inputs suggest: `a ∈ [10⁻³, 10³]`, `γ ∈ [e⁻¹², e⁸]`, `b_r ∈ [10⁻³, 10³]`, `ι_r ∈ [10⁻², 10³]`,
//! `s ∈ [10⁻³, 10²]`; the noise is held fixed by default (redundant with
//! the kernel scales for the probit).

use super::xpgp::{theta_len, XpgpPrior, THETA_NOISE};
use super::{fit_workspace_len, EpParams, LearnError, Likelihood, PrefPosterior};
use crate::backend::Backend;
use crate::graph::Pair;
use crate::{scratch, LinalgError, MatRef};

/// Optimiser tuning.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct OptParams {
    /// Iterations (accepted steps), `≥ 1`.
    pub max_iter: usize,
    /// Stop when every free component of the projected gradient is below
    /// this in absolute value.
    pub grad_tol: f64,
    /// Stop when an accepted step changes `f` by less than
    /// `f_tol·max(1, |f|)`.
    pub f_tol: f64,
    /// L-BFGS memory (pairs kept), `≥ 1`.
    pub memory: usize,
}

impl Default for OptParams {
    /// 100 iterations, `grad_tol = 1e-5`, `f_tol = 1e-10`, memory 8.
    fn default() -> Self {
        OptParams { max_iter: 100, grad_tol: 1e-5, f_tol: 1e-10, memory: 8 }
    }
}

impl OptParams {
    /// Parameters with the given budget and tolerances.
    pub fn new(max_iter: usize, grad_tol: f64, f_tol: f64, memory: usize) -> Self {
        OptParams { max_iter, grad_tol, f_tol, memory }
    }
}

/// What [`minimize`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OptReport {
    /// Final objective value.
    pub f: f64,
    /// Accepted steps.
    pub iterations: usize,
    /// Objective evaluations.
    pub evaluations: usize,
    /// Whether a tolerance was met (else: the budget ran out or the line
    /// search could not decrease `f` any more).
    pub converged: bool,
}

/// Scratch of [`minimize`] for `p` parameters and memory `mem`.
pub fn minimize_workspace_len(p: usize, mem: usize) -> usize {
    OptScratch::len(p, mem)
}

scratch! {
    /// Scratch of [`minimize`].
    struct OptScratch(p: usize, mem: usize) {
        s: p * mem,
        y: p * mem,
        rho: mem,
        al: mem,
        g: p,
        d: p,
        xt: p,
        gt: p,
    }
}

fn clip(v: f64, lo: f64, hi: f64) -> f64 {
    v.max(lo).min(hi)
}

/// Minimises `f` over the box `[lo, hi]` from `x` (clipped into the box
/// first) by projected L-BFGS (see the module docs). `f(x, grad)` returns
/// the value and writes the gradient; an `Err` is treated as `+∞` except
/// at the starting point, where it is returned. `x` ends at the best point
/// found.
///
/// # Errors
/// Shapes, workspace, `lo > hi` or non-finite bounds (`BadBounds`), or the
/// error of the first evaluation.
pub fn minimize<F>(
    f: F,
    x: &mut [f64],
    lo: &[f64],
    hi: &[f64],
    params: &OptParams,
    work: &mut [f64],
) -> Result<OptReport, LearnError>
where
    F: FnMut(&[f64], &mut [f64]) -> Result<f64, LearnError>,
{
    minimize_until(f, x, lo, hi, params, work, |_| false)
}

/// [`minimize`], asking `stop(iteration)` before each iteration: `true`
/// ends the search there (not converged; `x` at the best point so far).
///
/// # Errors
/// As [`minimize`].
pub fn minimize_until<F, S>(
    mut f: F,
    x: &mut [f64],
    lo: &[f64],
    hi: &[f64],
    params: &OptParams,
    work: &mut [f64],
    mut stop: S,
) -> Result<OptReport, LearnError>
where
    F: FnMut(&[f64], &mut [f64]) -> Result<f64, LearnError>,
    S: FnMut(usize) -> bool,
{
    let p = x.len();
    let mem = params.memory.max(1);
    if lo.len() != p || hi.len() != p {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if lo.iter().zip(hi.iter()).any(|(a, b)| !(a.is_finite() && b.is_finite() && a <= b)) {
        return Err(LearnError::BadBounds);
    }
    let (OptScratch { s, y, rho, al, g, d, xt, gt }, _) = OptScratch::split(work, p, mem)?;
    for i in 0..p {
        x[i] = clip(x[i], lo[i], hi[i]);
    }
    let mut fx = f(x, g)?;
    let mut evals = 1;
    if !fx.is_finite() || g.iter().any(|v| !v.is_finite()) {
        return Err(LinalgError::NonFinite.into());
    }
    let (mut stored, mut head) = (0usize, 0usize);
    let mut report = OptReport { f: fx, iterations: 0, evaluations: 1, converged: false };
    let free = |i: usize, xi: f64, gi: f64| !((xi <= lo[i] && gi > 0.0) || (xi >= hi[i] && gi < 0.0));
    for it in 0..params.max_iter {
        if stop(it) {
            break;
        }
        // Projected gradient test.
        let pg_max = (0..p).filter(|&i| free(i, x[i], g[i])).map(|i| g[i].abs()).fold(0.0, f64::max);
        if pg_max < params.grad_tol {
            report.converged = true;
            break;
        }
        // Two-loop recursion on the free variables.
        for i in 0..p {
            d[i] = if free(i, x[i], g[i]) { -g[i] } else { 0.0 };
        }
        let order = |k: usize| (head + mem - 1 - k) % mem; // newest first
        for k in 0..stored {
            let j = order(k);
            let sj = &s[j * p..(j + 1) * p];
            let a = rho[j] * sj.iter().zip(d.iter()).map(|(u, v)| u * v).sum::<f64>();
            al[j] = a;
            let yj = &y[j * p..(j + 1) * p];
            for i in 0..p {
                d[i] -= a * yj[i];
            }
        }
        if stored > 0 {
            let j = order(0);
            let (sj, yj) = (&s[j * p..(j + 1) * p], &y[j * p..(j + 1) * p]);
            let sy: f64 = sj.iter().zip(yj.iter()).map(|(u, v)| u * v).sum();
            let yy: f64 = yj.iter().map(|v| v * v).sum();
            if yy > 0.0 {
                d.iter_mut().for_each(|v| *v *= sy / yy);
            }
        }
        for k in (0..stored).rev() {
            let j = order(k);
            let yj = &y[j * p..(j + 1) * p];
            let b = rho[j] * yj.iter().zip(d.iter()).map(|(u, v)| u * v).sum::<f64>();
            let sj = &s[j * p..(j + 1) * p];
            for i in 0..p {
                d[i] += (al[j] - b) * sj[i];
            }
        }
        for i in 0..p {
            if !free(i, x[i], g[i]) {
                d[i] = 0.0;
            }
        }
        let slope: f64 = d.iter().zip(g.iter()).map(|(u, v)| u * v).sum();
        if !(slope < 0.0) {
            // Not a descent direction: restart from steepest descent.
            stored = 0;
            for i in 0..p {
                d[i] = if free(i, x[i], g[i]) { -g[i] } else { 0.0 };
            }
        }
        // Steps of at most 2 in any log-parameter.
        let dmax = d.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let mut t = if dmax > 2.0 { 2.0 / dmax } else { 1.0 };
        let mut accepted = None;
        for _ in 0..40 {
            for i in 0..p {
                xt[i] = clip(x[i] + t * d[i], lo[i], hi[i]);
            }
            let dec: f64 = (0..p).map(|i| g[i] * (xt[i] - x[i])).sum();
            evals += 1;
            if let Ok(ft) = f(xt, gt) {
                if ft.is_finite() && gt.iter().all(|v| v.is_finite()) && ft <= fx + 1e-4 * dec.min(0.0) {
                    accepted = Some(ft);
                    break;
                }
            }
            t *= 0.5;
        }
        let Some(ft) = accepted else {
            break;
        };
        // Memory update.
        let j = head;
        let mut sy = 0.0;
        for i in 0..p {
            s[j * p + i] = xt[i] - x[i];
            y[j * p + i] = gt[i] - g[i];
            sy += s[j * p + i] * y[j * p + i];
        }
        if sy > 1e-12 {
            rho[j] = 1.0 / sy;
            head = (head + 1) % mem;
            stored = (stored + 1).min(mem);
        }
        let df = (fx - ft).abs();
        x.copy_from_slice(xt);
        g.copy_from_slice(gt);
        fx = ft;
        report.iterations = it + 1;
        if df <= params.f_tol * fx.abs().max(1.0) {
            report.converged = true;
            break;
        }
    }
    report.f = fx;
    report.evaluations = evals;
    Ok(report)
}

/// Default log-space bounds `(lo, hi)` for `θ` of `r` relations, with the
/// noise held fixed at `θ[2]` (both bounds equal to it). See the module
/// docs.
pub fn default_bounds(theta: &[f64], lo: &mut [f64], hi: &mut [f64]) -> Result<(), LearnError> {
    let p = theta.len();
    if p < 3 || (p - 3) % 2 != 0 || lo.len() != p || hi.len() != p {
        return Err(LinalgError::DimensionMismatch.into());
    }
    let ln10 = core::f64::consts::LN_10;
    lo[0] = -3.0 * ln10;
    hi[0] = 3.0 * ln10;
    lo[1] = -12.0;
    hi[1] = 8.0;
    lo[THETA_NOISE] = theta[THETA_NOISE];
    hi[THETA_NOISE] = theta[THETA_NOISE];
    for r in 0..(p - 3) / 2 {
        lo[3 + 2 * r] = -3.0 * ln10;
        hi[3 + 2 * r] = 3.0 * ln10;
        lo[4 + 2 * r] = -2.0 * ln10;
        hi[4 + 2 * r] = 3.0 * ln10;
    }
    Ok(())
}

/// The probit noise `σ` of the preference GPs' likelihood, held fixed by
/// [`start`] (redundant with the kernel scales): `1/√2`, so that
/// `P(w ≻ l) = Φ(f_w − f_l)` at the prior.
pub const PROBIT_SIGMA: f64 = core::f64::consts::FRAC_1_SQRT_2;

/// The learners' starting point and box for [`fit_hyper`]: the policy of
/// the preference GPs (`pref-gp`, `xpgp`: probit, `gaussian = false`;
/// `diff-gp`: the Gaussian likelihood on differences) over items of `d`
/// attributes and `pairs`. Writes `θ` (log space, `theta.len()` =
/// [`theta_len`]`(r)`), its bounds, and returns the likelihood.
///
/// - every log-scale starts at 0 (`a = b_r = ι_r = 1`), `γ` at `gamma` if
///   given (then fixed) or `1/max(d, 1)`;
/// - the probit `σ` is [`PROBIT_SIGMA`], fixed; the Gaussian noise starts
///   at `0.1·rms` of the observed differences and stays within
///   `[10⁻⁴, 10]·rms` (`rms` at least `10⁻¹²`);
/// - without attributes (`d = 0`, relations only) `a` and `γ` are fixed;
/// - the rest are [`default_bounds`].
///
/// # Errors
/// A `θ` or bound length that is not `3 + 2r` (all equal).
pub fn start(
    gaussian: bool,
    gamma: Option<f64>,
    d: usize,
    pairs: &[Pair],
    theta: &mut [f64],
    lo: &mut [f64],
    hi: &mut [f64],
) -> Result<Likelihood, LearnError> {
    let p = theta.len();
    if p < 3 || lo.len() != p || hi.len() != p {
        return Err(LinalgError::DimensionMismatch.into());
    }
    let lik = if gaussian { Likelihood::Gaussian { noise: 1.0 } } else { Likelihood::Probit { sigma: PROBIT_SIGMA } };
    theta.fill(0.0);
    theta[1] = match gamma {
        Some(g) => libm::log(g),
        None => libm::log(1.0 / d.max(1) as f64),
    };
    let m = pairs.len();
    let rms = libm::sqrt(pairs.iter().map(|q| q.magnitude * q.magnitude).sum::<f64>() / m as f64).max(1e-12);
    theta[THETA_NOISE] = if gaussian { libm::log(0.1 * rms) } else { libm::log(lik.scale()) };
    default_bounds(theta, lo, hi)?;
    if gamma.is_some() {
        (lo[1], hi[1]) = (theta[1], theta[1]);
    }
    if d == 0 {
        (lo[0], hi[0], lo[1], hi[1]) = (theta[0], theta[0], theta[1], theta[1]);
    }
    if gaussian {
        (lo[THETA_NOISE], hi[THETA_NOISE]) = (libm::log(1e-4 * rms), libm::log(10.0 * rms));
    }
    Ok(lik)
}

scratch! {
    /// Scratch of [`evidence_gradient`] beyond the posterior.
    struct EvalScratch(n: usize, extra: usize) {
        /// The unscaled kernel parts.
        parts: extra,
        /// `K`.
        k: n * n,
        /// `Q`.
        q: n * n,
        /// Vectors.
        tmp: 4 * n,
        /// EP's, the prior builder's and the gradient's scratch.
        rest: fit_workspace_len(n).max(n * n),
    }
}

/// Scratch of [`evidence_gradient`] and [`fit_hyper`] for this prior
/// (the posterior's storage not included).
pub fn evidence_workspace_len(prior: &XpgpPrior<'_>) -> usize {
    let n = prior.n;
    EvalScratch::len(n, prior.parts_len()).saturating_add(prior.workspace_len())
}

/// `log Z_EP(θ)` and its gradient (`grad`, `θ.len()`) for `problem`'s XPGP
/// prior and likelihood (its noise taken from `θ[2]`). EP
/// starts from `post`'s current sites (zero for a fresh
/// [`PrefPosterior::new`]) and leaves the converged posterior there.
///
/// # Errors
/// Those of the prior, of EP and of the shapes.
pub fn evidence_gradient<B: Backend>(
    backend: &mut B,
    problem: &HyperProblem<'_>,
    theta: &[f64],
    post: &mut PrefPosterior<'_>,
    grad: &mut [f64],
    work: &mut [f64],
) -> Result<f64, LearnError> {
    let HyperProblem { prior, pairs, lik, ref ep } = *problem;
    let n = prior.n;
    if theta.len() != theta_len(prior.relations.len()) || grad.len() != theta.len() || post.n() != n {
        return Err(LinalgError::DimensionMismatch.into());
    }
    let (EvalScratch { parts, k, q, tmp, rest }, more) = EvalScratch::split(work, n, prior.parts_len())?;
    prior.build_parts(backend, theta, parts, more)?;
    prior.combine(theta, parts, k)?;
    let lik = lik.with_scale(libm::exp(theta[THETA_NOISE]));
    post.refit(backend, MatRef::from_col_major(k, n, n)?, pairs, lik, ep, rest)?;
    post.evidence_grad_matrix_with(backend, pairs, q, tmp)?;
    let lg = post.likelihood_grad(pairs, MatRef::from_col_major(k, n, n)?, tmp)?;
    prior.gradient(backend, theta, parts, q, lg, grad, rest)?;
    Ok(post.log_evidence())
}

/// The evidence maximisation problem of [`fit_hyper`]: the XPGP prior,
/// the preferences, the likelihood's kind (its noise is a hyperparameter,
/// `θ[2]`) and the EP tuning of each evaluation. What the host (CLI or
/// Python) builds once per fit.
#[derive(Clone, Copy, Debug)]
pub struct HyperProblem<'a> {
    /// The prior over the items.
    pub prior: &'a XpgpPrior<'a>,
    /// The observed preferences.
    pub pairs: &'a [Pair],
    /// The likelihood (its noise parameter is replaced by `θ`'s).
    pub lik: Likelihood,
    /// EP tuning.
    pub ep: EpParams,
}

/// How an evidence search moves `θ` ([`fit_hyper`],
/// [`super::sparse::fit_hyper`] and their `_until` forms): within the box
/// `[lo, hi]` (see [`default_bounds`]), by the optimiser tuned by `opt`.
#[derive(Clone, Copy, Debug)]
pub struct Search<'a> {
    /// Lower bounds of `θ`, one per component.
    pub lo: &'a [f64],
    /// Upper bounds of `θ`, one per component.
    pub hi: &'a [f64],
    /// Optimiser tuning.
    pub opt: OptParams,
}

/// The evidence search of the dense, sparse and low-rank fits: projected
/// L-BFGS ([`minimize_until`]) on `−log Z_EP` over `θ` in `[lo, hi]`,
/// where `fit(θ, Some(grad), work)` returns `log Z_EP(θ)` and writes its
/// gradient (EP warm-started from the previous evaluation's sites) and
/// `fit(θ, None, work)` only refits the posterior at `θ`. After the search
/// the posterior is refitted at the returned `θ` (the last evaluation may
/// have been a rejected trial point) — unless `stop(iteration)` ended it,
/// when the caller discards the result. `work` holds
/// [`minimize_workspace_len`]`(θ.len(), opt.memory)` followed by what `fit`
/// needs (passed to it).
///
/// # Errors
/// Workspace, the optimiser's, and `fit`'s at the starting point or in the
/// final refit.
pub(crate) fn search_evidence<F, S>(
    theta: &mut [f64],
    (lo, hi): (&[f64], &[f64]),
    opt: &OptParams,
    work: &mut [f64],
    mut fit: F,
    mut stop: S,
) -> Result<OptReport, LearnError>
where
    F: FnMut(&[f64], Option<&mut [f64]>, &mut [f64]) -> Result<f64, LearnError>,
    S: FnMut(usize) -> bool,
{
    let need = minimize_workspace_len(theta.len(), opt.memory.max(1));
    if work.len() < need {
        return Err(LinalgError::WorkspaceTooSmall { needed: need, got: work.len() }.into());
    }
    let (owork, ework) = work.split_at_mut(need);
    let mut stopped = false;
    let report = minimize_until(
        |th, g| {
            let v = fit(th, Some(&mut *g), ework)?;
            g.iter_mut().for_each(|x| *x = -*x);
            Ok(-v)
        },
        theta,
        lo,
        hi,
        opt,
        owork,
        |it| {
            stopped = stop(it);
            stopped
        },
    )?;
    if !stopped {
        fit(theta, None, ework)?;
    }
    Ok(report)
}

/// Maximises `log Z_EP` of `problem` over `θ` within `search`'s box by
/// [`minimize`] on `−log Z_EP`, leaving the best `θ` in `theta` and its
/// posterior in `post`. `work` holds [`evidence_workspace_len`] plus
/// [`minimize_workspace_len`]`(θ.len(), search.opt.memory)`.
///
/// # Errors
/// Those of [`evidence_gradient`] at the starting point, shapes, bounds.
pub fn fit_hyper<B: Backend>(
    backend: &mut B,
    problem: &HyperProblem<'_>,
    theta: &mut [f64],
    search: &Search<'_>,
    post: &mut PrefPosterior<'_>,
    work: &mut [f64],
) -> Result<OptReport, LearnError> {
    fit_hyper_until(backend, problem, theta, search, post, work, |_| false)
}

/// [`fit_hyper`], asking `stop(iteration)` before each iteration of the
/// search (the caller's cancellation): `true` ends it at once, with `θ` at
/// the best point so far and `post` left at the last evaluation, **not**
/// refitted at `θ` — a caller that stops discards the result.
///
/// # Errors
/// As [`fit_hyper`].
pub fn fit_hyper_until<B: Backend, S: FnMut(usize) -> bool>(
    backend: &mut B,
    problem: &HyperProblem<'_>,
    theta: &mut [f64],
    search: &Search<'_>,
    post: &mut PrefPosterior<'_>,
    work: &mut [f64],
    stop: S,
) -> Result<OptReport, LearnError> {
    let Search { lo, hi, ref opt } = *search;
    search_evidence(
        theta,
        (lo, hi),
        opt,
        work,
        |th, g, w| match g {
            Some(g) => evidence_gradient(backend, problem, th, post, g, w),
            None => refit_at(backend, problem, th, post, w).map(|()| 0.0),
        },
        stop,
    )
}

/// Refits `post` at `θ` (no gradient).
fn refit_at<B: Backend>(
    backend: &mut B,
    problem: &HyperProblem<'_>,
    theta: &[f64],
    post: &mut PrefPosterior<'_>,
    work: &mut [f64],
) -> Result<(), LearnError> {
    let HyperProblem { prior, pairs, lik, ref ep } = *problem;
    let n = prior.n;
    let (EvalScratch { parts, k, rest, .. }, more) = EvalScratch::split(work, n, prior.parts_len())?;
    prior.build_parts(backend, theta, parts, more)?;
    prior.combine(theta, parts, k)?;
    let lik = lik.with_scale(libm::exp(theta[THETA_NOISE]));
    post.refit(backend, MatRef::from_col_major(k, n, n)?, pairs, lik, ep, rest)
}
