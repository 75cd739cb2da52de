//! Supervised ordering (paper 003, Kamishima & Akaho): Expected Rank
//! Regression, Rank Correlation Dimension Reduction (Kendall and Spearman),
//! PCA as its baseline, and learners on the reduced attributes folded back
//! into one linear model over the original attributes.
//!
//! # Orders
//!
//! Every function takes the objects' attributes `x` (`n × d`, one row per
//! object, any stride) and sample orders given CSR-style like queries:
//! order `i` is `items[order_ptr[i]..order_ptr[i + 1]]`, row indices of `x`,
//! **most preferred first**, so the object at position `p` (0-based) has
//! rank `r = p + 1` (003 §2). Orders are validated before anything is
//! computed: boundaries start at 0, never decrease and end at `items.len()`;
//! every index is `< n`; no index twice in one order; every order has at
//! least 2 objects; at least one order. A violation is an [`OrderError`] and
//! the output buffers are not written.
//!
//! # What is computed
//!
//! - [`err_fit`] — **ERR** (003 §2.1, eq. 5): every object of every order
//!   gets its expected rank `r/(L_i + 1)`, and a ridge regression with an
//!   unpenalised intercept is fitted to them on the attributes (one sample
//!   per occurrence, `Σ L_i` samples). The target is *negated*
//!   (`t = −r/(L_i + 1)`) so that the model scores preferred objects higher,
//!   like every ranklet model.
//! - [`rcdr`] — **RCDR** (003 §3, Fig. 3, eqs. 6–7): `K′` orthonormal basis
//!   vectors, each the normalised projection of the vector `R^(l)` of summed
//!   rank correlations between the sample orders and each (projected)
//!   attribute, and `‖R^(l)‖/N` for each. Kendall τ costs O(N·L̄²·d) per
//!   component, Spearman ρ O(N·d·L̄·log L̄).
//! - [`pca`] — the baseline: top eigenvectors of the covariance of the
//!   objects that occur in the orders, with their contribution ratios.
//! - [`fit_linear`] — ERR or RankRLS on the reduced attributes
//!   `z = Bᵀx`, folded back (`w = B·v`) into one linear model over the
//!   original attributes, which a device scores like any linear model.
//! - [`mean_correlation_linear`] — mean Spearman ρ / Kendall τ-b between a
//!   linear model's scores and held-out orders.
//!
//! # Ties (attributes with equal values inside one order)
//!
//! Eq. 4 defines `τ = Σ sgn((r_a − r_b)(r′_a − r′_b)) / M`, so a tie in the
//! attribute contributes 0 and the denominator stays `M = L(L−1)/2` (τ-a).
//! For Spearman (eq. 2), tied attribute values get their mean rank
//! (mid-ranks) and `ρ = 1 − 6·Σ(r − r′)²/(L³ − L)` is used as written. With
//! continuous attributes there are no ties and both are the paper's values.
//!
//! # Workspace
//!
//! `work: &mut [f64]` and `iwork: &mut [usize]` are caller scratch; each
//! function has a `*_workspace_len` companion. Contents on return are
//! unspecified. Nothing allocates and nothing panics.

use core::fmt;

use crate::backend::Backend;
use crate::graph::{Graph, QueryWeight};
use crate::learn::ls::{ls_primal, ls_primal_workspace_len};
use crate::learn::LearnError;
use crate::metrics::{self, Correlation, MetricError, QueryMean};
use crate::scratch;
use crate::sort::{assign_mid_ranks, heap_sort_by};
use crate::{LinalgError, MatMut, MatRef};

/// Why a supervised-ordering routine refused or failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OrderError {
    /// A linear-algebra failure (dimensions, workspace, non-finite input,
    /// singular system, eigensolver).
    Linalg(LinalgError),
    /// `order_ptr` is empty, does not start at 0, decreases or does not end
    /// at `items.len()`.
    InvalidBoundaries,
    /// There is no order.
    NoOrders,
    /// An order has fewer than 2 objects.
    ShortOrder {
        /// 0-based index of the order.
        order: usize,
        /// Its length.
        len: usize,
    },
    /// An object index is not a row of `x`.
    ItemOutOfRange {
        /// The index.
        index: usize,
        /// Number of rows of `x`.
        len: usize,
    },
    /// An object appears twice in one order.
    DuplicateItem {
        /// 0-based index of the order.
        order: usize,
        /// The repeated object.
        item: usize,
    },
    /// The requested number of components is 0 or more than the number of
    /// attributes (an orthonormal basis of `ℝ^d` has at most `d` vectors).
    InvalidComponents {
        /// Requested.
        requested: usize,
        /// Number of attributes.
        dim: usize,
    },
    /// `R^(l)` has no component left in the complement of the basis found so
    /// far (Fig. 3 line 5 would divide by zero): the orders carry no more
    /// rank information along new directions.
    NoCorrelation {
        /// 0-based index of the component that could not be formed.
        component: usize,
    },
    /// Evaluating the rank correlation failed.
    Metric(MetricError),
    /// The least-squares learner refused a parameter (e.g. `λ`).
    Learn(LearnError),
}

impl From<LinalgError> for OrderError {
    fn from(e: LinalgError) -> Self {
        OrderError::Linalg(e)
    }
}

impl From<LearnError> for OrderError {
    fn from(e: LearnError) -> Self {
        match e {
            LearnError::Numerics(e) => OrderError::Linalg(e),
            e => OrderError::Learn(e),
        }
    }
}

impl From<MetricError> for OrderError {
    fn from(e: MetricError) -> Self {
        OrderError::Metric(e)
    }
}

impl fmt::Display for OrderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            OrderError::Linalg(e) => write!(f, "{e}"),
            OrderError::InvalidBoundaries => f.write_str("order boundaries are not valid CSR offsets over the items"),
            OrderError::NoOrders => f.write_str("no sample orders"),
            OrderError::ShortOrder { order, len } => {
                write!(f, "order {order} has {len} object(s); an order needs at least 2")
            }
            OrderError::ItemOutOfRange { index, len } => {
                write!(f, "object index {index} out of range ({len} objects)")
            }
            OrderError::DuplicateItem { order, item } => write!(f, "object {item} appears twice in order {order}"),
            OrderError::InvalidComponents { requested, dim } => {
                write!(f, "{requested} components requested; between 1 and {dim} (the number of attributes) allowed")
            }
            OrderError::NoCorrelation { component } => write!(
                f,
                "component {}: the rank-correlation vector has nothing left orthogonal to the basis",
                component + 1
            ),
            OrderError::Metric(e) => write!(f, "{e}"),
            OrderError::Learn(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for OrderError {}

/// The rank correlation RCDR sums (003 §3: Kendall RCDR uses τ, Spearman
/// RCDR uses ρ in line 3 of Fig. 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankCorr {
    /// Kendall's τ (eq. 4), O(L²) per order and attribute.
    Kendall,
    /// Spearman's ρ (eq. 2), O(L log L) per order and attribute.
    Spearman,
}

/// The learner [`fit_linear`] trains on the (reduced) attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderLearner {
    /// Expected Rank Regression (eq. 5): ridge regression with intercept on
    /// `−r/(L_i + 1)`.
    Err,
    /// RankRLS: each order is a query whose scores are `−r/(L_i + 1)`,
    /// least squares on within-order score differences
    /// (`L_q = I − 11ᵀ/L_i`, every order counts equally). No intercept (the
    /// loss does not see one); the offset is 0.
    RankRls,
}

fn check_iwork(needed: usize, got: usize) -> Result<(), OrderError> {
    if got < needed {
        return Err(LinalgError::WorkspaceTooSmall { needed, got }.into());
    }
    Ok(())
}

/// Validates orders over `n` objects and returns the longest order's length.
///
/// `marks` must hold at least `n` elements; it is overwritten.
///
/// # Errors
///
/// The order errors of the [module docs](self).
pub fn validate_orders(
    n: usize,
    order_ptr: &[usize],
    items: &[usize],
    marks: &mut [usize],
) -> Result<usize, OrderError> {
    if order_ptr.first() != Some(&0)
        || order_ptr.last() != Some(&items.len())
        || order_ptr.windows(2).any(|w| w[0] > w[1])
    {
        return Err(OrderError::InvalidBoundaries);
    }
    if order_ptr.len() < 2 {
        return Err(OrderError::NoOrders);
    }
    check_iwork(n, marks.len())?;
    let marks = &mut marks[..n];
    marks.iter_mut().for_each(|m| *m = 0);
    let mut longest = 0;
    for (o, w) in order_ptr.windows(2).enumerate() {
        let order = &items[w[0]..w[1]];
        if order.len() < 2 {
            return Err(OrderError::ShortOrder { order: o, len: order.len() });
        }
        longest = longest.max(order.len());
        for &it in order {
            if it >= n {
                return Err(OrderError::ItemOutOfRange { index: it, len: n });
            }
            // Stamp o + 1 marks membership of the current order.
            if marks[it] == o + 1 {
                return Err(OrderError::DuplicateItem { order: o, item: it });
            }
            marks[it] = o + 1;
        }
    }
    Ok(longest)
}

fn check_x(x: MatRef<'_, f64>) -> Result<(), OrderError> {
    if x.nrows() == 0 || x.ncols() == 0 {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if !x.all_finite() {
        return Err(LinalgError::NonFinite.into());
    }
    Ok(())
}

scratch! {
    /// Scratch of [`rcdr`].
    struct RcdrScratch(n: usize, d: usize, kp: usize, max_len: usize) {
        /// `x^(l)`, row-major `n × d`.
        xl: n.saturating_mul(d),
        /// `R`.
        r: d,
        /// Mid-ranks of one order.
        ranks: max_len,
        /// The basis under construction.
        wb: kp.saturating_mul(d),
        /// Its norms.
        wn: kp,
    }
}

scratch! {
    /// Scratch of [`pca`].
    struct PcaScratch(d: usize) {
        /// Covariance.
        cov: d.saturating_mul(d),
        /// Eigenvectors.
        vecs: d.saturating_mul(d),
        /// Eigenvalues.
        vals: d,
        /// Mean object.
        mean: d,
    }
}

scratch! {
    /// Scratch of [`fit_linear`].
    struct FitLinearScratch(m: usize, dz: usize) {
        /// Reduced sample objects, column-major `m × dz`.
        z: m.saturating_mul(dz),
        /// Targets.
        t: m,
        /// Weights in the reduced space.
        v: dz,
        /// Mean reduced object.
        zbar: dz,
        /// The least-squares solve.
        primal: ls_primal_workspace_len(m, dz),
    }
}

// ---------------------------------------------------------------------------
// RCDR (003 §3, Fig. 3)
// ---------------------------------------------------------------------------

/// `work` (f64) elements [`rcdr`] needs for `n` objects, `d` attributes,
/// `kp` components and orders of at most `max_len` objects: the projected
/// objects `x^(l)` (`n·d`), `R` (`d`), the mid-ranks (`max_len`) and the
/// basis and norms under construction (`kp·(d + 1)`, so that the outputs are
/// written only on success).
pub fn rcdr_workspace_len(n: usize, d: usize, kp: usize, max_len: usize) -> usize {
    RcdrScratch::len(n, d, kp, max_len)
}

/// `iwork` (usize) elements [`rcdr`] needs: `max(n, max_len)` (membership
/// marks while validating, then the sort permutation).
pub fn rcdr_iwork_len(n: usize, max_len: usize) -> usize {
    n.max(max_len)
}

/// Rank Correlation Dimension Reduction, Fig. 3 of 003 line by line.
///
/// ```text
/// 1  x_j^(0) = x_j
/// 2  for l in 0..K′
/// 3    R_k^(l) = Σ_i corr(O_i, O(X_i, x_jk^(l)))             (eq. 6)
/// 4    R^(l)⊥ = (I − W^(l) W^(l)ᵀ) R^(l)   (R^(0)⊥ = R^(0))
/// 5    w^(l+1) = R^(l)⊥ / ‖R^(l)⊥‖                            (eq. 7)
/// 6-7  x_j^(l+1) = x_j^(l) − w^(l+1) w^(l+1)ᵀ x_j^(l)
/// ```
///
/// `O(X_i, x_jk^(l))` sorts the order's objects by descending projected
/// attribute `k`, so `R_k > 0` means "larger attribute, preferred".
/// Every object (row of `x`) is projected in lines 6–7; only those in the
/// orders influence the result, as in the paper (`X_S`).
///
/// # Arguments
///
/// - `orders`: the attributes `x` (`n × d`, finite, any stride) and the
///   sample orders (see the [module docs](self)).
/// - `basis`: output, `K′ × d` row-major; row `l` is `w^(l+1)`. `K′ =
///   basis.len() / d`, `1 ≤ K′ ≤ d`.
/// - `norms`: output, `K′` values `‖R^(l)‖/N` (`N` = number of orders),
///   the importance index of 003 §4.1.
/// - `work`, `iwork`: [`rcdr_workspace_len`], [`rcdr_iwork_len`].
///
/// # Errors
///
/// Order errors, [`OrderError::InvalidComponents`],
/// [`OrderError::NoCorrelation`] when `‖R^(l)⊥‖` is zero (or below
/// `1e-12·N`: nothing rank-correlated is left), dimension, non-finite and
/// workspace errors. On error the outputs are not written.
pub fn rcdr(
    orders: &Orders<'_>,
    method: RankCorr,
    basis: &mut [f64],
    norms: &mut [f64],
    work: &mut [f64],
    iwork: &mut [usize],
) -> Result<(), OrderError> {
    let Orders { x, order_ptr, items } = *orders;
    check_x(x)?;
    let (n, d) = (x.nrows(), x.ncols());
    let kp = norms.len();
    if basis.len() != kp.saturating_mul(d) {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if kp == 0 || kp > d {
        return Err(OrderError::InvalidComponents { requested: kp, dim: d });
    }
    let max_len = validate_orders(n, order_ptr, items, iwork)?;
    check_iwork(rcdr_iwork_len(n, max_len), iwork.len())?;
    let n_orders = order_ptr.len() - 1;
    let (RcdrScratch { xl, r, ranks, wb, wn }, _) = RcdrScratch::split(work, n, d, kp, max_len)?;
    // Line 1: x^(0) = x.
    for j in 0..n {
        for k in 0..d {
            xl[j * d + k] = x.at(j, k);
        }
    }
    for l in 0..kp {
        // Line 3 (eq. 6).
        for (k, rk) in r.iter_mut().enumerate() {
            let mut sum = 0.0;
            for w in order_ptr.windows(2) {
                let order = &items[w[0]..w[1]];
                let attr = |p: usize| xl[order[p] * d + k];
                sum += match method {
                    RankCorr::Kendall => kendall_tau(order.len(), attr),
                    RankCorr::Spearman => spearman_rho(order.len(), attr, &mut iwork[..order.len()], ranks),
                };
            }
            *rk = sum;
        }
        wn[l] = libm::sqrt(r.iter().map(|v| v * v).sum::<f64>()) / n_orders as f64;
        // Line 4: R⊥ = R − W (Wᵀ R), with W the l vectors found so far.
        let (done, rest) = wb.split_at_mut(l * d);
        let wnew = &mut rest[..d];
        wnew.copy_from_slice(r);
        for wm in done.chunks_exact(d) {
            let c: f64 = wm.iter().zip(r.iter()).map(|(a, b)| a * b).sum();
            wnew.iter_mut().zip(wm).for_each(|(v, a)| *v -= c * a);
        }
        // Line 5 (eq. 7).
        let nrm = libm::sqrt(wnew.iter().map(|v| v * v).sum::<f64>());
        if !(nrm > 1e-12 * n_orders as f64) {
            return Err(OrderError::NoCorrelation { component: l });
        }
        wnew.iter_mut().for_each(|v| *v /= nrm);
        // Lines 6–7: x_j ← x_j − w (wᵀ x_j).
        for xj in xl.chunks_exact_mut(d) {
            let c: f64 = wnew.iter().zip(xj.iter()).map(|(a, b)| a * b).sum();
            xj.iter_mut().zip(wnew.iter()).for_each(|(v, a)| *v -= c * a);
        }
    }
    basis.copy_from_slice(wb);
    norms.copy_from_slice(wn);
    Ok(())
}

fn sgn(v: f64) -> f64 {
    if v > 0.0 {
        1.0
    } else if v < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// Eq. 4 between an order (position `p` has rank `p + 1`) and the order of
/// its objects by descending `attr`: `Σ_{p<q} sgn(attr(p) − attr(q)) / M`.
/// (`r_p − r_q < 0` for `p < q`, and descending order ranks the larger value
/// first, so the product's sign is the sign of `attr(p) − attr(q)`.)
fn kendall_tau(len: usize, attr: impl Fn(usize) -> f64) -> f64 {
    let mut s = 0.0;
    for p in 0..len {
        let ap = attr(p);
        for q in p + 1..len {
            s += sgn(ap - attr(q));
        }
    }
    let m = (len * (len - 1) / 2) as f64;
    s / m
}

/// Eq. 2 between an order and the descending order of `attr` (mid-ranks
/// for ties): `1 − 6 Σ_p (p + 1 − r′_p)² / (L³ − L)`. O(L log L).
fn spearman_rho(len: usize, attr: impl Fn(usize) -> f64, perm: &mut [usize], ranks: &mut [f64]) -> f64 {
    for (i, p) in perm.iter_mut().enumerate() {
        *p = i;
    }
    // Descending by value; the index breaks exact ties so the sort is total.
    heap_sort_by(perm, |a, b| {
        let (va, vb) = (attr(a), attr(b));
        va > vb || (va == vb && a < b)
    });
    assign_mid_ranks(perm, &attr, ranks);
    let ds: f64 = (0..len)
        .map(|p| {
            let e = (p + 1) as f64 - ranks[p];
            e * e
        })
        .sum();
    let l = len as f64;
    1.0 - 6.0 * ds / (l * l * l - l)
}

// ---------------------------------------------------------------------------
// PCA baseline
// ---------------------------------------------------------------------------

/// `work` elements [`pca`] needs for `d` attributes (the backend's own
/// scratch is separate): covariance and eigenvectors (`2·d²`), eigenvalues
/// and mean (`2·d`).
pub fn pca_workspace_len(d: usize) -> usize {
    PcaScratch::len(d)
}

/// `iwork` elements [`pca`] needs for `n` objects: `n` (membership marks).
pub fn pca_iwork_len(n: usize) -> usize {
    n
}

/// PCA over the objects that occur in the orders (`X_S`, each counted
/// once): the `K′` eigenvectors of `C = (1/|X_S|) Σ (x − x̄)(x − x̄)ᵀ` with
/// the largest eigenvalues, largest first, via [`Backend::sym_eigen`].
///
/// `basis` (`K′ × d`, row-major) receives the eigenvectors, each signed so
/// that its entry of largest magnitude (the first such) is positive;
/// `ratios` (`K′`) the contribution ratios `λ_l / tr C` (003 Table 2,
/// "contribution ratio").
///
/// # Errors
///
/// Order errors, [`OrderError::InvalidComponents`], and backend errors
/// (non-finite input, eigensolver failure). A zero covariance (all objects
/// equal) gives ratios of 0, not an error.
pub fn pca<B: Backend>(
    backend: &mut B,
    orders: &Orders<'_>,
    basis: &mut [f64],
    ratios: &mut [f64],
    work: &mut [f64],
    iwork: &mut [usize],
) -> Result<(), OrderError> {
    let Orders { x, order_ptr, items } = *orders;
    check_x(x)?;
    let (n, d) = (x.nrows(), x.ncols());
    let kp = ratios.len();
    if basis.len() != kp.saturating_mul(d) {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if kp == 0 || kp > d {
        return Err(OrderError::InvalidComponents { requested: kp, dim: d });
    }
    validate_orders(n, order_ptr, items, iwork)?;
    // After validation iwork[j] != 0 exactly for the objects in X_S.
    let (PcaScratch { cov, vecs, vals, mean }, _) = PcaScratch::split(work, d)?;
    let in_s = |j: usize| iwork[j] != 0;
    let ns = (0..n).filter(|&j| in_s(j)).count() as f64;
    for (k, m) in mean.iter_mut().enumerate() {
        *m = (0..n).filter(|&j| in_s(j)).map(|j| x.at(j, k)).sum::<f64>() / ns;
    }
    cov.iter_mut().for_each(|c| *c = 0.0);
    for j in (0..n).filter(|&j| in_s(j)) {
        for a in 0..d {
            let da = x.at(j, a) - mean[a];
            for b in 0..=a {
                cov[a + b * d] += da * (x.at(j, b) - mean[b]);
            }
        }
    }
    for a in 0..d {
        for b in 0..=a {
            let v = cov[a + b * d] / ns;
            cov[a + b * d] = v;
            cov[b + a * d] = v;
        }
    }
    let trace: f64 = (0..d).map(|a| cov[a + a * d]).sum();
    backend.sym_eigen(MatRef::from_col_major(cov, d, d)?, vals, MatMut::from_col_major(vecs, d, d)?)?;
    for l in 0..kp {
        let col = d - 1 - l; // ascending → largest first
        let v = &vecs[col * d..(col + 1) * d];
        let mut big = 0;
        for k in 1..d {
            if v[k].abs() > v[big].abs() {
                big = k;
            }
        }
        let s = if v[big] < 0.0 { -1.0 } else { 1.0 };
        basis[l * d..(l + 1) * d].iter_mut().zip(v).for_each(|(b, a)| *b = s * a);
        ratios[l] = if trace > 0.0 { vals[col].max(0.0) / trace } else { 0.0 };
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// ERR / RankRLS on (reduced) attributes, folded into one linear model
// ---------------------------------------------------------------------------

/// `work` elements [`fit_linear`] needs for `m = items.len()` sample objects
/// and `dz` features learned over (`K′` with a basis, else `d`).
pub fn fit_linear_workspace_len(m: usize, dz: usize) -> usize {
    FitLinearScratch::len(m, dz)
}

/// `iwork` elements [`fit_linear`] and [`err_fit`] need for `n` objects.
pub fn fit_linear_iwork_len(n: usize) -> usize {
    n
}

/// The data of the ordering learners ([`rcdr`], [`pca`], [`fit_linear`],
/// [`err_fit`], [`mean_correlation_linear`]): the item attributes `x` (`n × d`) and the orders over the
/// items in CSR form (`items[order_ptr[q]..order_ptr[q + 1]]` is order `q`,
/// best first).
#[derive(Clone, Copy, Debug)]
pub struct Orders<'a> {
    /// Item attributes, one row per item.
    pub x: MatRef<'a, f64>,
    /// Offsets of the orders in `items` (`q + 1` entries for `q` orders).
    pub order_ptr: &'a [usize],
    /// Item indices of every order, concatenated.
    pub items: &'a [usize],
}

/// Trains `learner` on the sample orders over the reduced attributes
/// `z_j = B x_j` (`B` = `basis`, `K′ × d` row-major, e.g. from [`rcdr`] or
/// [`pca`]) or, with `basis = None`, over the original attributes, and
/// returns one linear model over the **original** attributes:
/// `score(x) = wᵀx + offset` with `w = Bᵀv` (003 §4.2: "the ordering
/// function was learned from … reduced attributes").
///
/// The samples are one per occurrence of an object in an order (`Σ L_i`),
/// with target `t = −r/(L_i + 1)` (eq. 5, negated so that preferred objects
/// score higher).
///
/// - [`OrderLearner::Err`]: ridge regression with an unpenalised intercept:
///   features and targets are centred over the samples, `(Z_cᵀZ_c + λI)v =
///   Z_cᵀt_c` ([`ls_primal`], identity graph), `offset = t̄ − z̄ᵀv`.
/// - [`OrderLearner::RankRls`]: [`ls_primal`] with one query per order
///   (`L_q = I − 11ᵀ/L_i`); offset 0.
///
/// # Arguments
///
/// `w`: output, `d` weights. `work`: [`fit_linear_workspace_len`]`(m, dz)`;
/// `iwork`: [`fit_linear_iwork_len`]`(n)`.
///
/// # Errors
///
/// Order errors; `InvalidParameter` for a negative or non-finite `λ`;
/// `NotPositiveDefinite` when the system is singular (e.g. `λ = 0` with a
/// constant attribute); dimension, non-finite and workspace errors.
// Eight inputs: the order set, the learner and its two scalars, the output and two workspaces.
#[allow(clippy::too_many_arguments)]
pub fn fit_linear<B: Backend>(
    backend: &mut B,
    orders: &Orders<'_>,
    learner: OrderLearner,
    lambda: f64,
    basis: Option<&[f64]>,
    w: &mut [f64],
    work: &mut [f64],
    iwork: &mut [usize],
) -> Result<f64, OrderError> {
    let Orders { x, order_ptr, items } = *orders;
    check_x(x)?;
    let (n, d) = (x.nrows(), x.ncols());
    if w.len() != d {
        return Err(LinalgError::DimensionMismatch.into());
    }
    let dz = match basis {
        Some(b) => {
            if b.is_empty() || b.len() % d != 0 || b.len() / d > d {
                return Err(OrderError::InvalidComponents { requested: b.len() / d, dim: d });
            }
            if b.iter().any(|v| !v.is_finite()) {
                return Err(LinalgError::NonFinite.into());
            }
            b.len() / d
        }
        None => d,
    };
    validate_orders(n, order_ptr, items, iwork)?;
    let m = items.len();
    let (FitLinearScratch { z, t, v, zbar, primal: work }, _) = FitLinearScratch::split(work, m, dz)?;
    // Reduced features of every sample: z = B x (or x itself).
    for (row, &j) in items.iter().enumerate() {
        for c in 0..dz {
            z[row + c * m] = match basis {
                Some(b) => (0..d).map(|k| b[c * d + k] * x.at(j, k)).sum(),
                None => x.at(j, c),
            };
        }
    }
    // Eq. 5: expected rank r/(L_i + 1), negated.
    for wnd in order_ptr.windows(2) {
        let len = (wnd[1] - wnd[0]) as f64;
        for (p, tp) in t[wnd[0]..wnd[1]].iter_mut().enumerate() {
            *tp = -((p + 1) as f64) / (len + 1.0);
        }
    }
    let offset = match learner {
        OrderLearner::Err => {
            // Unpenalised intercept: centre features and targets.
            let mf = m as f64;
            for c in 0..dz {
                let col = &mut z[c * m..(c + 1) * m];
                zbar[c] = col.iter().sum::<f64>() / mf;
                col.iter_mut().for_each(|v| *v -= zbar[c]);
            }
            let tbar = t.iter().sum::<f64>() / mf;
            t.iter_mut().for_each(|v| *v -= tbar);
            let g = Graph::Identity { n: m };
            ls_primal(backend, MatRef::from_col_major(z, m, dz)?, &g, t, lambda, v, work)?;
            tbar - zbar.iter().zip(v.iter()).map(|(a, b)| a * b).sum::<f64>()
        }
        OrderLearner::RankRls => {
            let g = Graph::Queries { query_ptr: order_ptr, weight: QueryWeight::Equal };
            ls_primal(backend, MatRef::from_col_major(z, m, dz)?, &g, t, lambda, v, work)?;
            0.0
        }
    };
    if !offset.is_finite() || v.iter().any(|v| !v.is_finite()) {
        return Err(LinalgError::NonFinite.into());
    }
    // Fold back: score = vᵀ(Bx) + offset = (Bᵀv)ᵀx + offset.
    match basis {
        Some(b) => {
            for (k, wk) in w.iter_mut().enumerate() {
                *wk = (0..dz).map(|c| b[c * d + k] * v[c]).sum();
            }
        }
        None => w.copy_from_slice(v),
    }
    Ok(offset)
}

/// ERR on the original attributes (003 eq. 5): [`fit_linear`] with
/// [`OrderLearner::Err`] and no basis. Returns the offset; `w` gets `d`
/// weights.
///
/// # Errors
///
/// As [`fit_linear`].
pub fn err_fit<B: Backend>(
    backend: &mut B,
    orders: &Orders<'_>,
    lambda: f64,
    w: &mut [f64],
    work: &mut [f64],
    iwork: &mut [usize],
) -> Result<f64, OrderError> {
    fit_linear(backend, orders, OrderLearner::Err, lambda, None, w, work, iwork)
}

/// Scratch for [`mean_correlation_linear`] with `n` objects and orders of at
/// most `max_len`: `(f64, usize)` element counts.
pub fn mean_correlation_workspace_len(n: usize, max_len: usize) -> (usize, usize) {
    (n.saturating_add(metrics::real_workspace_len(max_len)), metrics::index_workspace_len(max_len))
}

/// Mean rank correlation (Spearman ρ or Kendall τ-b, via
/// [`metrics::mean_order_correlation`]) between the scores `wᵀx_j + offset`
/// of a linear model and held-out orders (003 §4.2, "mean of ρ").
///
/// # Errors
///
/// Dimension and workspace errors, and the metric's errors (bad orders, no
/// order with a defined correlation).
pub fn mean_correlation_linear(
    orders: &Orders<'_>,
    w: &[f64],
    offset: f64,
    method: Correlation,
    work: &mut [f64],
    iwork: &mut [usize],
) -> Result<QueryMean, OrderError> {
    let Orders { x, order_ptr, items } = *orders;
    let (n, d) = (x.nrows(), x.ncols());
    if w.len() != d {
        return Err(LinalgError::DimensionMismatch.into());
    }
    if work.len() < n {
        return Err(LinalgError::WorkspaceTooSmall { needed: n, got: work.len() }.into());
    }
    let (scores, fwork) = work.split_at_mut(n);
    for (j, s) in scores.iter_mut().enumerate() {
        *s = offset + (0..d).map(|k| w[k] * x.at(j, k)).sum::<f64>();
    }
    Ok(metrics::mean_order_correlation(scores, order_ptr, items, method, iwork, fwork)?)
}

#[cfg(test)]
mod tests;
