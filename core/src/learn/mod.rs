//! The learners, one module per family, each written once over
//! [`Backend`](crate::backend::Backend) on caller buffers.
//!
//! | module | learners | paper |
//! |---|---|---|
//! | [`ls`] | RLS, RankRLS (primal and dual), closed-form leave-one-out / leave-query-out | 000 eq. 5; 004 §4.3 eqs. 30–32 |
//! | [`ls_stats`] | linear RLS, RankRLS from additive statistics of row blocks (exact when a query is split across blocks), merged with compensation; every λ and every CV fold from one eigendecomposition each | 000 eq. 5 |
//! | [`kpc`] | KPCR, KPCRank: every (λ, p) from one decomposition | 000 §3–4.2, eqs. 1–9; §6.1 |
//! | [`kron`] | Kronecker conditional ranking on graphs: closed form on complete graphs (ordinary, symmetric, reciprocal pair kernels; every λ from one decomposition), CG on incomplete graphs, predictions | 004 §2–4, eqs. 4–9, 18–22, 30–36; Prop. 4.4, 4.7, Cor. 4.5, 4.8, Lemma 4.6 |
//! | [`nystrom`] | RLS/RankRLS and KPCR/KPCRank on `m ≪ n` landmarks chosen by pivoted Cholesky: a kernel expansion over the landmarks | 000 eqs. 5, 8–9 in the Nyström feature space `K_nm·L⁻ᵀ` |
//! | [`expansion`] | kernel-expansion models: prediction, folding a linear-kernel expansion into `w` | — |
//! | [`ordering`] | supervised ordering: ERR, Kendall/Spearman RCDR, PCA | 003 §2–3, eqs. 1–7 |
//! | [`pref`] | preference GPs: pairwise probit GP by EP (rank-one sites, parallel damped updates, EP evidence), score-difference GP in closed form, XPGP prior with relational graph kernels, evidence gradients and a projected L-BFGS, greedy active pair choice; `device`: the posterior over a fixed item set on a device (ADF update per preference, `P(i ≻ j)`, next pair) | 000 §5 eq. 10–11; 001 §3–5, §7, eqs. 1–2, 5–14 |
//! | [`next_pair`] | the next pair to ask: one score `v/m²` and one tie rule for the online learner, the device GP and active exploration | 001 §5 |
//! | [`online`] | online RankRLS: one preference per O(D²) Cholesky update in caller storage; posterior variance and next-pair choice | 000 eq. 5, 004 eq. 6 (normal equations), 000 §5 (Bayesian reading), 001 §5 (next pair) |
//!
//! Each family exposes a **fit-to-model** entry point (one call from data
//! rows to the parameters a model file stores) and, where cross-validation
//! can reuse work, a **"one decomposition, every grid point"** entry point
//! (one call per fold); the online learner instead absorbs one preference
//! per call into a state the caller keeps. The host reads data, splits folds, picks grid points
//! and writes files; it never strings the steps below together itself.
//!
//! All least-squares learners minimise `(s − f)ᵀ L (s − f)` plus a penalty,
//! with `L` from a [`Graph`](crate::graph::Graph): the identity for the
//! regressors (RLS, KPCR), a preference graph for the rankers (RankRLS,
//! KPCRank).
//!
//! Errors: a learner reports [`LearnError`]: a parameter outside the
//! learner's domain, a request the data cannot support, or — wrapped — a
//! numerical failure of the layers below ([`LinalgError`]).

use core::fmt;

use crate::LinalgError;

pub mod device;
pub mod expansion;
pub mod kpc;
pub mod kron;
pub mod ls;
pub mod ls_stats;
pub mod next_pair;
pub mod normal;
pub mod nystrom;
pub mod nystrom_stats;
pub mod online;
pub mod ordering;
pub mod pair_log;
pub mod pref;

/// Why a learner refused or failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LearnError {
    /// A numerical routine refused or failed (shapes, workspace, non-finite
    /// input, a singular system, no convergence).
    Numerics(LinalgError),
    /// The ridge parameter is negative or not finite, or zero where the
    /// problem needs `λ > 0` (dual problems, whose `L` has a null space).
    BadLambda,
    /// Zero principal components requested.
    NoComponents,
    /// More principal components requested than the (centred) kernel
    /// matrix has numerically, or than are usable in the normal equations.
    TooManyComponents {
        /// Components requested.
        requested: usize,
        /// Components available.
        rank: usize,
    },
    /// The preference graph is malformed (a pair index out of range, a
    /// non-finite magnitude, a query pointer that is not monotone), or an
    /// online observation's magnitude is not finite and `> 0`.
    BadGraph,
    /// The learner cannot use this kind of supervision (e.g. a closed-form
    /// leave-out over explicit pairs, whose loss is not block-diagonal).
    Unsupported,
    /// The likelihood's noise (the probit `σ`, or the Gaussian noise of
    /// score differences) is not finite and `> 0`.
    BadNoise,
    /// EP's damping is not in `(0, 1]`.
    BadDamping,
    /// A convergence tolerance is not finite and `> 0`.
    BadTolerance,
    /// An iteration budget is 0.
    NoIterations,
    /// A relation kernel's scale `ι` is not finite and `> 0`, or so small
    /// that `1/ι²` overflows.
    BadRelationScale,
    /// An optimiser's box bounds are not finite, or a lower bound exceeds
    /// its upper bound.
    BadBounds,
    /// At `λ = 0`, a feature is zero over the rows of the system (a
    /// constant feature, or one constant within every query for RankRLS).
    ConstantFeature {
        /// The feature (0-based).
        feature: usize,
    },
    /// At `λ = 0`, the features are collinear: the two that weigh most in
    /// the system's null vector.
    Collinear {
        /// The first feature (0-based).
        first: usize,
        /// The second feature (0-based).
        second: usize,
    },
}

impl LearnError {
    /// Whether the error is the caller's input (a parameter outside the
    /// learner's domain, a malformed graph, supervision the learner cannot
    /// use), as opposed to a numerical failure on valid input (a singular
    /// system, no convergence, an overflow) or a wrong call (shapes,
    /// workspace). The host maps the first to exit code 2, the rest to 1.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, LearnError::Numerics(e) if !matches!(e, LinalgError::InvalidParameter))
    }
}

impl From<LinalgError> for LearnError {
    fn from(e: LinalgError) -> Self {
        LearnError::Numerics(e)
    }
}

impl fmt::Display for LearnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LearnError::Numerics(LinalgError::NotPositiveDefinite { .. }) => {
                f.write_str("the training system is singular (increase lambda)")
            }
            LearnError::Numerics(e) => write!(f, "{e}"),
            LearnError::BadLambda => f.write_str("lambda must be finite and >= 0 (> 0 for kernel/dual problems)"),
            LearnError::NoComponents => f.write_str("the number of components must be at least 1"),
            LearnError::TooManyComponents { requested, rank } => {
                write!(f, "{requested} components exceed the numerical rank {rank} of the (centred) kernel matrix")
            }
            LearnError::BadGraph => f.write_str("the preference graph is malformed"),
            LearnError::Unsupported => f.write_str("the learner cannot use this kind of supervision"),
            LearnError::BadNoise => f.write_str("the noise (sigma) must be finite and > 0"),
            LearnError::BadDamping => f.write_str("the EP damping must be in (0, 1]"),
            LearnError::BadTolerance => f.write_str("the convergence tolerance must be finite and > 0"),
            LearnError::NoIterations => f.write_str("the iteration budget must be at least 1"),
            LearnError::BadRelationScale => {
                f.write_str("the relation scale iota must be finite and > 0 (and 1/iota^2 finite)")
            }
            LearnError::BadBounds => f.write_str("the optimiser's bounds must be finite with lower <= upper"),
            LearnError::ConstantFeature { feature } => write!(
                f,
                "feature {} (counting from 1; column {feature} counting from 0) is constant over the training rows \
                 (for RankRLS: within every query), so the system is singular at lambda = 0: drop it or use lambda > 0",
                feature + 1
            ),
            LearnError::Collinear { first, second } => write!(
                f,
                "the features are collinear (features {} and {} counting from 1, columns {first} and {second} \
                 counting from 0, weigh most in the null direction), so the system is singular at lambda = 0: \
                 drop one or use lambda > 0",
                first + 1,
                second + 1
            ),
        }
    }
}

impl core::error::Error for LearnError {}

/// `λ` finite and `≥ 0` (and `> 0` when `strict`).
pub(crate) fn check_lambda(lambda: f64, strict: bool) -> Result<(), LearnError> {
    if lambda.is_finite() && lambda >= 0.0 && !(strict && lambda == 0.0) {
        Ok(())
    } else {
        Err(LearnError::BadLambda)
    }
}

/// Validates a graph, reporting a malformed one as [`LearnError::BadGraph`].
pub(crate) fn check_graph(graph: &crate::graph::Graph<'_>) -> Result<(), LearnError> {
    graph.validate().map_err(|_| LearnError::BadGraph)
}

/// Mean of `s` (0 for an empty slice): the offset of the regressors on
/// centred components (KPCR), whose components are orthogonal to the
/// constant vector.
pub fn mean(s: &[f64]) -> f64 {
    if s.is_empty() {
        0.0
    } else {
        s.iter().sum::<f64>() / s.len() as f64
    }
}
