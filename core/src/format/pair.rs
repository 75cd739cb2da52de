//! Pair models (kinds 3 and 6): scoring a pair `(u, v)`, ranking
//! candidates `v` for one `u`, and building a model from a Kronecker fit.
//!
//! # Scoring
//!
//! Both kinds score `b + g(u, v)` with `g(u, v) = φ_u(u)ᵀ·M·φ_v(v)`: for a
//! bilinear model `φ = x` and `M = W`; for a dual model `φ_u(u)` is the
//! kernel row `k_u` of `u` against the first domain's basis, and `M = A`.
//! Symmetric and reciprocal models score `b + ½(g(u, v) ± g(v, u))`.
//!
//! `g(a, b)` is always evaluated as `Σ_j φ(b)_j·t_j(a)` with
//! `t_j(a) = Σ_i M[i, j]·φ(a)_i`, each sum blocked (the `sum` module), in
//! one fixed order. Scoring `(u, v)` first computes `t(u)` (and the kernel
//! row of `u`) into a caller **workspace**, then the terms of `v`; ranking n
//! candidates for one `u` reuses `t(u)`. Because `g(u, v)` and `g(v, u)`
//! are the same two numbers whichever node comes first, `score(u, v) ==
//! score(v, u)` (symmetric) and `score(u, v) == −score(v, u)` (reciprocal)
//! hold exactly, and the row-wise scores equal the single-pair ones bit
//! for bit.
//!
//! Workspace ([`ModelView::pair_workspace_len`], elements of the entry
//! point's float type) and cost per call, `n` candidates:
//!
//! | model | workspace | cost |
//! |---|---|---|
//! | bilinear, Kronecker | `d_v` (`t(u)`) | `d_u·d_v + n·d_v` |
//! | bilinear, sym./recip. | `d` | `d² + n·(d² + 2d)` |
//! | dual, Kronecker | `m_u + m_v` (`k_u`, `t(u)`) | `m_u·d_u + m_u·m_v + n·m_v·(d_v + 1)` |
//! | dual, sym./recip. | `3m` (`k_u`, `t(u)`, `k_v`) | `m·d + m² + n·(m·d + m² + 2m)` |
//!
//! (the second term of `g(v, u)` needs `t(v)`, a full `m²` or `d²` per
//! candidate: the price of exact (anti)symmetry). The kernel rows are not
//! recomputed per coefficient: one kernel evaluation per basis row and
//! node.
//!
//! # Precision
//!
//! Unlike the single-row entry points, the pair entry points compute in
//! the type of their inputs and workspace: the `f32` functions in `f32`
//! (also for an `f64` model, whose parameters are then rounded to `f32` as
//! read), the `f64` functions in `f64`.

use super::kind::bilinear::BilinearView;
use super::kind::dual_pair::{DualPairView, PairDomain};
use super::kind::{Body, Model};
use super::sum::{blocked_sum, elem};
use super::{Array, BilinearModel, DualPairModel, ElementType, EmitError, ModelView, PairKernel, ScoreError};
use crate::real::Real;
use crate::MatRef;

codes! {
    /// Pair codes of the `BILINEAR` and `PAIR_DUAL` records.
    enum PairCode: u8 {
        /// [`PairKernel::Kronecker`].
        Kronecker = 1,
        /// [`PairKernel::Symmetric`].
        Symmetric = 2,
        /// [`PairKernel::Reciprocal`].
        Reciprocal = 3,
    }
}

/// The stored code of a pair kernel.
pub(crate) const fn pair_code(p: PairKernel) -> u8 {
    match p {
        PairKernel::Kronecker => PairCode::Kronecker.code(),
        PairKernel::Symmetric => PairCode::Symmetric.code(),
        PairKernel::Reciprocal => PairCode::Reciprocal.code(),
    }
}

/// The pair kernel of a stored code.
pub(crate) const fn pair_from_code(c: u8) -> Option<PairKernel> {
    match PairCode::from_code(c) {
        Some(PairCode::Kronecker) => Some(PairKernel::Kronecker),
        Some(PairCode::Symmetric) => Some(PairKernel::Symmetric),
        Some(PairCode::Reciprocal) => Some(PairKernel::Reciprocal),
        None => None,
    }
}

/// `x` as stored with element type `et`, widened back.
pub(crate) fn stored(x: f64, et: ElementType) -> f64 {
    match et {
        ElementType::F32 => x as f32 as f64,
        ElementType::F64 => x,
    }
}

/// Whether a `rows × cols` row-major matrix (entry `k` = `at(k)`) and an
/// offset fit the pair kernel: anything for Kronecker; square and exactly
/// symmetric for symmetric; square, exactly antisymmetric and offset 0 for
/// reciprocal.
pub(crate) fn pair_matrix_ok(
    pair: PairKernel,
    rows: usize,
    cols: usize,
    offset: f64,
    at: impl Fn(usize) -> f64,
) -> bool {
    let sign = match pair {
        PairKernel::Kronecker => return true,
        PairKernel::Symmetric => 1.0,
        PairKernel::Reciprocal => -1.0,
    };
    if rows != cols || (pair == PairKernel::Reciprocal && offset != 0.0) {
        return false;
    }
    let n = rows;
    (0..n).all(|i| (i..n).all(|j| at(i * n + j) == sign * at(j * n + i)))
}

/// The feature maps φ of a pair model.
#[derive(Clone, Copy)]
enum Features<'v> {
    /// Bilinear: `φ(x) = x`.
    Identity,
    /// Dual: kernel rows against the bases.
    #[cfg_attr(not(feature = "kernel"), allow(dead_code))]
    Kernel { u: (crate::kernel::Kernel, Array<'v>, usize), v: (crate::kernel::Kernel, Array<'v>, usize) },
}

/// A pair model, as the scorer sees it.
#[derive(Clone, Copy)]
struct PairModel<'v> {
    pair: PairKernel,
    offset: f64,
    /// `M`, `rows × cols`, row-major.
    m: Array<'v>,
    rows: usize,
    cols: usize,
    dim_u: usize,
    dim_v: usize,
    features: Features<'v>,
}

impl<'v> PairModel<'v> {
    fn bilinear(b: &BilinearView<'v>) -> Self {
        PairModel {
            pair: b.pair,
            offset: b.offset,
            m: b.w,
            rows: b.dim_u,
            cols: b.dim_v,
            dim_u: b.dim_u,
            dim_v: b.dim_v,
            features: Features::Identity,
        }
    }

    fn dual(d: &DualPairView<'v>) -> Self {
        PairModel {
            pair: d.pair,
            offset: d.offset,
            m: d.coeffs,
            rows: d.rows_u,
            cols: d.rows_v,
            dim_u: d.dim_u,
            dim_v: d.dim_v,
            features: Features::Kernel { u: (d.kernel_u, d.basis_u, d.dim_u), v: (d.kernel_v, d.basis_v(), d.dim_v) },
        }
    }

    fn workspace_len(&self) -> usize {
        let sym = self.pair != PairKernel::Kronecker;
        match self.features {
            Features::Identity => self.cols,
            Features::Kernel { .. } if sym => self.rows.saturating_mul(3),
            Features::Kernel { .. } => self.rows.saturating_add(self.cols),
        }
    }

    /// `t_j(p) = Σ_i M[i, j]·p_i`.
    #[inline]
    fn t<R: Real>(&self, p: &[R], j: usize) -> R {
        let (m, cols) = (self.m, self.cols);
        blocked_sum(self.rows, |i| elem::<R>(&m, i * cols + j) * p.get(i).copied().unwrap_or(R::ZERO))
    }

    /// Computes `φ_u(xu)` (dual) and `t(u)` into `work`.
    fn prepare<R: Real>(&self, xu: &[R], work: &mut [R]) {
        let (pu, t) = match self.features {
            Features::Identity => (xu, work),
            Features::Kernel { u, .. } => {
                let (pu, rest) = work.split_at_mut(self.rows.min(work.len()));
                for (i, p) in pu.iter_mut().enumerate() {
                    *p = kernel_row(u, i, xu);
                }
                (&*pu, rest)
            }
        };
        for (j, tj) in t.iter_mut().take(self.cols).enumerate() {
            *tj = self.t(pu, j);
        }
    }

    /// The score of `(u, v)` after [`prepare`](Self::prepare)`(xu, work)`.
    fn eval<R: Real>(&self, xu: &[R], xv: &[R], work: &mut [R]) -> R {
        let (rows, cols) = (self.rows, self.cols);
        let b = R::from_f64(self.offset);
        let sign = match self.pair {
            PairKernel::Kronecker => {
                let g = match self.features {
                    Features::Identity => blocked_sum(cols, |j| xv.get(j).copied().unwrap_or(R::ZERO) * at(work, j)),
                    Features::Kernel { v, .. } => {
                        let t = work.get(rows..).unwrap_or(&[]);
                        blocked_sum(cols, |j| kernel_row(v, j, xv) * at(t, j))
                    }
                };
                return b + g;
            }
            PairKernel::Symmetric => R::ONE,
            PairKernel::Reciprocal => -R::ONE,
        };
        // One domain, rows == cols.
        let (pu, t, pv): (&[R], &[R], &[R]) = match self.features {
            Features::Identity => (xu, work, xv),
            Features::Kernel { v, .. } => {
                let (head, pv) = work.split_at_mut((2 * rows).min(work.len()));
                for (j, p) in pv.iter_mut().take(cols).enumerate() {
                    *p = kernel_row(v, j, xv);
                }
                let (pu, t) = head.split_at(rows.min(head.len()));
                (pu, t, &*pv)
            }
        };
        let g_uv = blocked_sum(cols, |j| at(pv, j) * at(t, j));
        let g_vu = blocked_sum(cols, |j| at(pu, j) * self.t(pv, j));
        b + R::from_f64(0.5) * (g_uv + sign * g_vu)
    }
}

#[inline(always)]
fn at<R: Real>(s: &[R], i: usize) -> R {
    s.get(i).copied().unwrap_or(R::ZERO)
}

/// `k(x, basis_i)` for a dense input.
#[cfg(feature = "kernel")]
#[inline]
fn kernel_row<R: Real>((kernel, basis, dim): (crate::kernel::Kernel, Array<'_>, usize), i: usize, x: &[R]) -> R {
    use super::sum::Sum;
    let row = basis.slice(i.saturating_mul(dim), dim);
    let (mut dot, mut dist) = (Sum::<R>::new(), Sum::<R>::new());
    for j in 0..dim {
        let (xv, b): (R, R) = (at(x, j), elem(&row, j));
        dot.add(xv * b);
        dist.add((xv - b) * (xv - b));
    }
    super::kind::kernel_expansion::kernel_value(&kernel, dot.total(), dist.total())
}

#[cfg(not(feature = "kernel"))]
fn kernel_row<R: Real>(_: (crate::kernel::Kernel, Array<'_>, usize), _i: usize, _x: &[R]) -> R {
    R::ZERO
}

/// The float types of the pair entry points.
trait PairReal: Real {
    fn check_finite(x: f64) -> Result<Self, ScoreError>;
}

impl PairReal for f32 {
    fn check_finite(x: f64) -> Result<f32, ScoreError> {
        let r = x as f32;
        if r.is_finite() {
            Ok(r)
        } else {
            Err(ScoreError::ScoreOverflow)
        }
    }
}

impl PairReal for f64 {
    fn check_finite(x: f64) -> Result<f64, ScoreError> {
        if x.is_finite() {
            Ok(x)
        } else {
            Err(ScoreError::ScoreOverflow)
        }
    }
}

fn check_input<R: Real>(x: &[R], dim: usize) -> Result<(), ScoreError> {
    if x.len() != dim {
        return Err(ScoreError::DimensionMismatch { expected: dim, got: x.len() });
    }
    if !x.iter().all(|v| v.is_finite()) {
        return Err(ScoreError::NonFiniteInput);
    }
    Ok(())
}

impl<'a> ModelView<'a> {
    /// The scorer's view of a pair model; [`ScoreError::KindMismatch`] for
    /// other kinds, [`ScoreError::UnsupportedKind`] for a dual model
    /// without the `kernel` feature.
    fn pair_model(&self) -> Result<PairModel<'a>, ScoreError> {
        match self.body {
            Body::Bilinear(ref b) => Ok(PairModel::bilinear(b)),
            Body::DualPair(ref d) if cfg!(feature = "kernel") => Ok(PairModel::dual(d)),
            Body::DualPair(_) => Err(ScoreError::UnsupportedKind),
            _ => Err(ScoreError::KindMismatch),
        }
    }

    /// Whether this is a pair model (kinds 3 and 6), scored by the
    /// `score_pair*` functions rather than `score_dense` and its kin.
    pub fn is_pair(&self) -> bool {
        matches!(self.body, Body::Bilinear(_) | Body::DualPair(_))
    }

    /// `(d_u, d_v)`, the feature dimensions of the two nodes of a pair
    /// model (`d_u` is [`dim`](Self::dim)); `None` for other kinds.
    pub fn pair_dims(&self) -> Option<(usize, usize)> {
        match self.body {
            Body::Bilinear(ref b) => Some((b.dim_u, b.dim_v)),
            Body::DualPair(ref d) => Some((d.dim_u, d.dim_v)),
            _ => None,
        }
    }

    /// The pair kernel of a pair model; `None` for other kinds.
    pub fn pair_kernel(&self) -> Option<PairKernel> {
        match self.body {
            Body::Bilinear(ref b) => Some(b.pair),
            Body::DualPair(ref d) => Some(d.pair),
            _ => None,
        }
    }

    /// Elements of workspace the `score_pair*` functions need (see the
    /// table in the module docs): `d_v` for a bilinear model, `m_u + m_v`
    /// for a Kronecker dual model, `3m` for a symmetric or reciprocal dual
    /// model; 0 for other kinds.
    pub fn pair_workspace_len(&self) -> usize {
        match self.body {
            Body::Bilinear(ref b) => PairModel::bilinear(b).workspace_len(),
            Body::DualPair(ref d) => PairModel::dual(d).workspace_len(),
            _ => 0,
        }
    }

    fn pair_checked<R: PairReal>(&self, xu: &[R], work: &[R]) -> Result<PairModel<'a>, ScoreError> {
        let p = self.pair_model()?;
        check_input(xu, p.dim_u)?;
        let need = p.workspace_len();
        if work.len() < need {
            return Err(ScoreError::DimensionMismatch { expected: need, got: work.len() });
        }
        Ok(p)
    }

    fn score_pair_generic<R: PairReal>(&self, xu: &[R], xv: &[R], work: &mut [R]) -> Result<R, ScoreError> {
        let p = self.pair_checked(xu, work)?;
        check_input(xv, p.dim_v)?;
        p.prepare(xu, work);
        R::check_finite(p.eval(xu, xv, work).to_f64())
    }

    fn score_pair_rows_generic<R: PairReal>(
        &self,
        xu: &[R],
        xv_rows: &[R],
        work: &mut [R],
        out: &mut [R],
    ) -> Result<(), ScoreError> {
        let p = self.pair_checked(xu, work)?;
        let expected = out
            .len()
            .checked_mul(p.dim_v)
            .ok_or(ScoreError::DimensionMismatch { expected: usize::MAX, got: xv_rows.len() })?;
        if xv_rows.len() != expected {
            return Err(ScoreError::DimensionMismatch { expected, got: xv_rows.len() });
        }
        if !xv_rows.iter().all(|v| v.is_finite()) {
            return Err(ScoreError::NonFiniteInput);
        }
        p.prepare(xu, work);
        for (xv, o) in xv_rows.chunks_exact(p.dim_v).zip(out.iter_mut()) {
            *o = R::check_finite(p.eval(xu, xv, work).to_f64())?;
        }
        Ok(())
    }

    /// Scores the pair `(u, v)` of a pair model (kinds 3 and 6), computing
    /// in `f32` (see the module docs on precision), with `work` of at least
    /// [`pair_workspace_len`](Self::pair_workspace_len) elements.
    ///
    /// # Errors
    ///
    /// [`ScoreError::KindMismatch`] if this is not a pair model,
    /// [`ScoreError::UnsupportedKind`] for a dual model without the
    /// `kernel` feature, [`ScoreError::DimensionMismatch`] if
    /// `xu.len() != d_u`, `xv.len() != d_v` or `work` is too short,
    /// [`ScoreError::NonFiniteInput`], [`ScoreError::ScoreOverflow`].
    pub fn score_pair(&self, xu: &[f32], xv: &[f32], work: &mut [f32]) -> Result<f32, ScoreError> {
        self.score_pair_generic(xu, xv, work)
    }

    /// [`score_pair`](Self::score_pair) in `f64`.
    ///
    /// # Errors
    ///
    /// As [`score_pair`](Self::score_pair).
    pub fn score_pair_f64(&self, xu: &[f64], xv: &[f64], work: &mut [f64]) -> Result<f64, ScoreError> {
        self.score_pair_generic(xu, xv, work)
    }

    /// Scores the pairs `(u, v_r)` for the `out.len()` candidate rows `v_r`
    /// of `xv_rows` (row-major, `out.len() × d_v`), writing score `r` to
    /// `out[r]`; each equals [`score_pair`](Self::score_pair)`(xu, v_r)`
    /// bit for bit, at the cost of one `t(u)` for all rows.
    ///
    /// # Errors
    ///
    /// As [`score_pair`](Self::score_pair); every length and the
    /// finiteness of all inputs are checked before anything is written,
    /// and only [`ScoreError::ScoreOverflow`] can leave `out` partly
    /// written.
    pub fn score_pair_rows(
        &self,
        xu: &[f32],
        xv_rows: &[f32],
        work: &mut [f32],
        out: &mut [f32],
    ) -> Result<(), ScoreError> {
        self.score_pair_rows_generic(xu, xv_rows, work, out)
    }

    /// [`score_pair_rows`](Self::score_pair_rows) in `f64`.
    ///
    /// # Errors
    ///
    /// As [`score_pair_rows`](Self::score_pair_rows).
    pub fn score_pair_rows_f64(
        &self,
        xu: &[f64],
        xv_rows: &[f64],
        work: &mut [f64],
        out: &mut [f64],
    ) -> Result<(), ScoreError> {
        self.score_pair_rows_generic(xu, xv_rows, work, out)
    }
}

// ------------------------------------------------------------ the builder

/// Elements of the `buf` that [`pair_model`] needs: `d_u·d_v + d_v` when
/// both node kernels are linear (a bilinear model: `W` and one row of
/// scratch), else `m_u·m_v` (a dual model: `A` row-major). `v = None` means
/// one domain (`u` serves both nodes). Saturates on overflow.
pub fn pair_model_buffer_len(u: &PairDomain<'_>, v: Option<&PairDomain<'_>>) -> usize {
    let v = v.unwrap_or(u);
    if is_linear(u) && is_linear(v) {
        u.dim.saturating_mul(v.dim).saturating_add(v.dim)
    } else {
        u.rows().saturating_mul(v.rows())
    }
}

fn is_linear(d: &PairDomain<'_>) -> bool {
    matches!(d.kernel, crate::kernel::Kernel::Linear)
}

/// A pair model from a Kronecker fit ([`crate::learn::kron`]): the training
/// nodes of each domain (`u.basis`, `p_u × d_u` row-major, and `v`'s; `v =
/// None` for one domain) with their kernels, the pair kernel, the
/// coefficient matrix `coef` (`A`, `p_u × p_v`, any layout) and an offset.
///
/// With both node kernels linear it returns a bilinear model (kind 3),
/// `W = X_uᵀ·A·X_v` computed into `buf` (made exactly symmetric,
/// `½(W + Wᵀ)`, or antisymmetric, `½(W − Wᵀ)`, for those pair kernels,
/// which scores the same: `½(g(u, v) ± g(v, u))`); otherwise a dual model
/// (kind 6) whose bases borrow the training rows and whose `A` is copied
/// row-major into `buf`. `buf` needs [`pair_model_buffer_len`] elements.
/// Wrap the result in a [`ModelSpec`](super::ModelSpec), whose `check`
/// validates the rest.
///
/// # Errors
///
/// [`EmitError::BadDimensions`] (a basis that is not whole rows, `coef`
/// not `p_u × p_v`, a zero dimension), [`EmitError::BadPair`] (a symmetric
/// or reciprocal pair kernel over two domains),
/// [`EmitError::BufferTooSmall`] (`needed`/`got` in elements).
pub fn pair_model<'a>(
    u: PairDomain<'a>,
    v: Option<PairDomain<'a>>,
    pair: PairKernel,
    coef: MatRef<'_, f64>,
    offset: f64,
    buf: &'a mut [f64],
) -> Result<Model<'a>, EmitError> {
    let vd = v.unwrap_or(u);
    for d in [&u, &vd] {
        if d.dim == 0 || d.rows() == 0 || d.rows().checked_mul(d.dim) != Some(d.basis.len()) {
            return Err(EmitError::BadDimensions);
        }
    }
    if pair != PairKernel::Kronecker && v.is_some() {
        return Err(EmitError::BadPair);
    }
    let (p_u, p_v) = (u.rows(), vd.rows());
    if coef.nrows() != p_u || coef.ncols() != p_v {
        return Err(EmitError::BadDimensions);
    }
    let needed = pair_model_buffer_len(&u, v.as_ref());
    let got = buf.len();
    let buf = buf.get_mut(..needed).ok_or(EmitError::BufferTooSmall { needed, got })?;
    if !(is_linear(&u) && is_linear(&vd)) {
        for i in 0..p_u {
            for j in 0..p_v {
                if let Some(o) = buf.get_mut(i * p_v + j) {
                    *o = coef.at(i, j);
                }
            }
        }
        return Ok(Model::DualPair(DualPairModel { pair, u, v, coeffs: buf, offset }));
    }
    let (du, dv) = (u.dim, vd.dim);
    let (w, r) = buf.split_at_mut(du * dv);
    w.fill(0.0);
    // W = Σ_i x_{u,i}·(Σ_j A[i, j]·x_{v,j})ᵀ, one row i of A at a time.
    for i in 0..p_u {
        r.fill(0.0);
        for j in 0..p_v {
            let a = coef.at(i, j);
            let xv = vd.basis.get(j * dv..(j + 1) * dv).unwrap_or(&[]);
            for (rb, &x) in r.iter_mut().zip(xv) {
                *rb += a * x;
            }
        }
        let xu = u.basis.get(i * du..(i + 1) * du).unwrap_or(&[]);
        for (a, &x) in xu.iter().enumerate() {
            for (b, &rb) in r.iter().enumerate() {
                if let Some(o) = w.get_mut(a * dv + b) {
                    *o += x * rb;
                }
            }
        }
    }
    let sign = match pair {
        PairKernel::Kronecker => 0.0,
        PairKernel::Symmetric => 1.0,
        PairKernel::Reciprocal => -1.0,
    };
    if pair != PairKernel::Kronecker {
        let n = du;
        for a in 0..n {
            for b in a..n {
                let (x, y) = (w[a * n + b], w[b * n + a]);
                let s = 0.5 * (x + sign * y);
                w[a * n + b] = s;
                w[b * n + a] = sign * s;
            }
        }
    }
    Ok(Model::Bilinear(BilinearModel { pair, dim_u: du, dim_v: dv, w, offset }))
}
