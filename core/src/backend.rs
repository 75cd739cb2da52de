//! The small set of heavy operations every learner is written against.
//!
//! A learner in core calls [`Backend`] for the O(n³) work — gemm, syrk,
//! symmetric eigendecomposition (full or top-k), Cholesky and solves — and
//! for the O(n²) passes over a kernel matrix (kernel values, centring, the
//! graph products of the RankRLS system), and does everything else itself
//! on caller buffers. Core ships a portable,
//! allocation-free implementation; the host CLI provides one on faer that
//! uses every core of the machine. Both must agree to ~1e-9 relative on the
//! same input (tested in `host-cli`).
//!
//! Conventions shared by every implementation:
//! - matrices are [`MatRef`]/[`MatMut`] views of any stride;
//! - symmetric inputs: `sym_eigen`, `cholesky_in_place` and
//!   `sym_solve_in_place` read only the lower triangle; `sym_eigen_top_k`
//!   reads the whole matrix, which must be symmetric (the learners always pass
//!   full kernel matrices);
//! - `sym_eigen` returns eigenvalues in ascending order, eigenvectors as the
//!   columns of `vecs` (column `j` belongs to `vals[j]`);
//! - `sym_eigen_top_k` returns the `k = vals.len()` algebraically largest
//!   eigenvalues in descending order with their eigenvectors;
//! - non-finite input is [`LinalgError::NonFinite`], never a silent NaN.

use crate::graph::{Graph, Pair};
use crate::kernel::Kernel;
use crate::{LinalgError, MatMut, MatRef};

/// Heavy dense linear algebra in f64, as the learners need it.
pub trait Backend {
    /// `C ← α·A·B + β·C`.
    fn gemm(
        &mut self,
        alpha: f64,
        a: MatRef<'_, f64>,
        b: MatRef<'_, f64>,
        beta: f64,
        c: MatMut<'_, f64>,
    ) -> Result<(), LinalgError>;

    /// Lower triangle (diagonal included) of `C ← α·A·B + β·C`, where a
    /// square `A` or `B` may be declared triangular ([`Tri`]): its entries
    /// outside the declared triangle must be zero, and a backend may skip
    /// them. The strict upper triangle of `C` is unspecified on return (the
    /// default overwrites the parts of it inside the diagonal blocks).
    ///
    /// The preference GP's EP round is three such products (`I + Uᵀ(WU)`,
    /// `Σ = CᵀC` with `Uᵀ`, `C` lower triangular): ≈ n³/3 flops each
    /// instead of 2n³. The default walks row blocks of [`TRI_BLOCK`] rows
    /// through [`Backend::gemm`], each over the columns and inner indices
    /// that can be nonzero; a backend may do the whole product in one
    /// parallel call.
    // Eight inputs: BLAS's gemm list (α, A, B, β, C) with each operand's stored triangle.
    #[allow(clippy::too_many_arguments)]
    fn gemm_lower(
        &mut self,
        alpha: f64,
        a: MatRef<'_, f64>,
        a_tri: Tri,
        b: MatRef<'_, f64>,
        b_tri: Tri,
        beta: f64,
        c: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        gemm_lower_by_blocks(self, alpha, a, a_tri, b, b_tri, beta, c)
    }

    /// `C ← α·A·Aᵀ + β·C`, both triangles of `C` written.
    fn syrk(&mut self, alpha: f64, a: MatRef<'_, f64>, beta: f64, c: MatMut<'_, f64>) -> Result<(), LinalgError>;

    /// All eigenpairs of the symmetric `A` (lower triangle read), ascending.
    fn sym_eigen(&mut self, a: MatRef<'_, f64>, vals: &mut [f64], vecs: MatMut<'_, f64>) -> Result<(), LinalgError>;

    /// Two independent [`Backend::sym_eigen`] calls, `A₁` then `A₂`
    /// (Kronecker RLS needs both node kernels decomposed). The default runs
    /// them one after the other; a multi-threaded backend may run them
    /// concurrently. Results are those of the two single calls.
    fn sym_eigen_pair(
        &mut self,
        a1: MatRef<'_, f64>,
        vals1: &mut [f64],
        vecs1: MatMut<'_, f64>,
        a2: MatRef<'_, f64>,
        vals2: &mut [f64],
        vecs2: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        self.sym_eigen(a1, vals1, vecs1)?;
        self.sym_eigen(a2, vals2, vecs2)
    }

    /// The `k = vals.len()` largest eigenpairs of the symmetric `A`, in
    /// descending order; `vecs` is `n × k`.
    fn sym_eigen_top_k(
        &mut self,
        a: MatRef<'_, f64>,
        vals: &mut [f64],
        vecs: MatMut<'_, f64>,
    ) -> Result<(), LinalgError>;

    /// Overwrites the lower triangle of the SPD matrix `A` with its Cholesky
    /// factor `L` (`A = L·Lᵀ`) and zeroes the strict upper triangle.
    fn cholesky_in_place(&mut self, a: MatMut<'_, f64>) -> Result<(), LinalgError>;

    /// Overwrites `B` with `(L·Lᵀ)⁻¹·B` for a factor from
    /// [`Backend::cholesky_in_place`].
    fn cholesky_solve_in_place(&mut self, l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError>;

    /// Overwrites `B` with `L⁻¹·B` for a lower-triangular `L` (lower
    /// triangle with the diagonal read), e.g. a factor from
    /// [`Backend::cholesky_in_place`]. The default is core's
    /// workspace-free [`crate::linalg::chol::solve_lower_in_place`]; a
    /// backend may override it (the preference GP's EP needs `L_B⁻¹Lᵀ`,
    /// whose columns give the variances of differences without the
    /// cancellation of `Σ_ii + Σ_jj − 2Σ_ij`).
    fn solve_lower_in_place(&mut self, l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        crate::linalg::chol::solve_lower_in_place(l, b)
    }

    /// Overwrites the lower-triangular `B` with `L⁻¹·B` for a
    /// lower-triangular `L` (both `n × n`; the lower triangle of `L` with
    /// the diagonal read). The strict upper triangle of `B` must be zero on
    /// entry and is zero on return: the result is lower triangular too, and
    /// its column block `[c0, c1)` needs only rows `≥ c0` of `L` and `B`
    /// (`≈ n³/3` flops against `n³` for a full right-hand side). The
    /// preference GP's EP forms `C = L_B⁻¹Uᵀ` with it once per round.
    ///
    /// The default, [`solve_lower_lower_by_blocks`], solves column blocks
    /// of [`TRI_BLOCK`] one after the other through
    /// [`Backend::solve_lower_in_place`]; the blocks are independent, so a
    /// backend may solve them concurrently.
    fn solve_lower_lower_in_place(&mut self, l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        solve_lower_lower_by_blocks(self, l, b)
    }

    /// Overwrites `B` with `A⁻¹·B` for a symmetric, possibly indefinite `A`
    /// (lower triangle read; `A` itself is not modified).
    fn sym_solve_in_place(&mut self, a: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError>;

    /// Overwrites `B` with `A⁻¹·B` for a general square `A`, destroying `A`
    /// (LU with partial pivoting). The default is core's workspace-free
    /// [`crate::linalg::lu::lu_solve_in_place`]; a backend may override it.
    fn lu_solve_in_place(&mut self, a: MatMut<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        crate::linalg::lu::lu_solve_in_place(a, b)
    }

    /// Kernel values from the inner products in `out`, in place:
    /// `out[i, j] ← k(out[i, j], xn[i], yn[j])` (`xn`, `yn` the squared row
    /// norms when [`Kernel::needs_norms`], else empty). With `symmetric`
    /// (`out` square and exactly symmetric, `xn = yn`) the result must be
    /// exactly symmetric. The default is core's serial
    /// [`crate::kernel::kernel_values`] (libm `exp`); a backend may use
    /// threads and a vectorised `exp` with a stated error.
    fn kernel_values(
        &mut self,
        kernel: &Kernel,
        xn: &[f64],
        yn: &[f64],
        symmetric: bool,
        out: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        crate::kernel::kernel_values(kernel, xn, yn, symmetric, out)
    }

    /// Centres the symmetric kernel matrix `K` in place, `K̂ = HKH`, writing
    /// its column means to `colmean` and returning the grand mean. The
    /// default is core's serial [`crate::kernel::center_kernel_in_place`],
    /// whose result an override must reproduce (the same sums in the same
    /// order make it bit-identical).
    fn center_kernel_in_place(&mut self, k: MatMut<'_, f64>, colmean: &mut [f64]) -> Result<f64, LinalgError> {
        crate::kernel::center_kernel_in_place(k, colmean)
    }

    /// The variances of the pair differences under `Σ = CᵀC` for a
    /// lower-triangular `C` (`n × n`, contiguous columns):
    /// `out[s] ← ‖C·(e_w − e_l)‖²` for every pair `s = (w, l)`, over rows
    /// `≥ min(w, l)` of the two columns (the rows above are zero). The
    /// preference GP's EP needs all of them once per round. The default is
    /// core's serial [`pair_sq_dists`]; an override must give the same
    /// value for each pair (the same [`crate::linalg::sq_dist`] per pair
    /// makes it bit-identical).
    fn pair_sq_dists(&mut self, c: MatRef<'_, f64>, pairs: &[Pair], out: &mut [f64]) -> Result<(), LinalgError> {
        pair_sq_dists(c, pairs, out)
    }

    /// `out ← A·W` for the weighted Laplacian `W = Σ_s τ_s·d_s·d_sᵀ`
    /// (`d_s = e_w − e_l`) and a square `A` (`n × n`, contiguous columns;
    /// the EP round's `(W·U)ᵀ = Uᵀ·W`, the evidence gradient's `Σ·W`):
    /// pair `s` adds `±τ_s·(a_w − a_l)` to columns `w` and `l`, on rows
    /// `≥ min(w, l)` when `a_tri` is [`Tri::Lower`] (the rows above are
    /// zero), on every row otherwise; `out` (`n × n`, contiguous columns)
    /// is overwritten. The default is core's serial [`pair_scatter`], in
    /// pair order; an override must add each column's terms in the same
    /// order (then it is bit-identical).
    fn pair_scatter(
        &mut self,
        a: MatRef<'_, f64>,
        a_tri: Tri,
        pairs: &[Pair],
        tau: &[f64],
        out: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        pair_scatter(a, a_tri, pairs, tau, out)
    }

    /// `q_j ← W·q_j` for every column of `q` (`n` rows, contiguous
    /// columns) and the weighted Laplacian `W` of [`Backend::pair_scatter`];
    /// `tmp` holds `n`. The default is core's serial
    /// [`laplacian_columns`]; an override must do each column as it does
    /// (then it is bit-identical).
    fn laplacian_columns(
        &mut self,
        pairs: &[Pair],
        tau: &[f64],
        q: MatMut<'_, f64>,
        tmp: &mut [f64],
    ) -> Result<(), LinalgError> {
        laplacian_columns(pairs, tau, q, tmp)
    }

    /// `A ← L^{½}·A·L^{½}` in place for a graph with
    /// [`Graph::has_sqrt`]: the dual RankRLS system. The default is core's
    /// serial [`Graph::sqrt_sandwich_in_place`], whose result an override
    /// must reproduce.
    fn sqrt_sandwich_in_place(&mut self, graph: &Graph<'_>, a: MatMut<'_, f64>) -> Result<(), LinalgError> {
        graph.sqrt_sandwich_in_place(a)
    }
}

/// The shape rules of [`Backend::pair_sq_dists`] and
/// [`Backend::pair_scatter`]: `C` square with contiguous columns, every
/// pair inside it and not a self-pair, `out` one value per pair.
pub fn check_pairs_on(c: &MatRef<'_, f64>, pairs: &[Pair], out_len: usize) -> Result<(), LinalgError> {
    let n = c.nrows();
    if c.ncols() != n || out_len != pairs.len() || (n > 1 && c.col(0).is_none()) {
        return Err(LinalgError::DimensionMismatch);
    }
    if pairs.iter().any(|p| p.winner >= n || p.loser >= n || p.winner == p.loser) {
        return Err(LinalgError::DimensionMismatch);
    }
    Ok(())
}

/// `‖C·(e_w − e_l)‖²` for one pair of a lower-triangular `C` with
/// contiguous columns (checked by [`check_pairs_on`]).
#[inline]
pub fn pair_sq_dist(c: &MatRef<'_, f64>, p: &Pair) -> f64 {
    let lo = p.winner.min(p.loser);
    match (c.col(p.winner).and_then(|v| v.get(lo..)), c.col(p.loser).and_then(|v| v.get(lo..))) {
        (Some(a), Some(b)) => crate::linalg::sq_dist(a, b),
        _ => f64::NAN,
    }
}

/// Core's serial [`Backend::pair_sq_dists`].
pub fn pair_sq_dists(c: MatRef<'_, f64>, pairs: &[Pair], out: &mut [f64]) -> Result<(), LinalgError> {
    check_pairs_on(&c, pairs, out.len())?;
    for (o, p) in out.iter_mut().zip(pairs) {
        *o = pair_sq_dist(&c, p);
    }
    Ok(())
}

/// One pair's term of [`Backend::pair_scatter`] on one output column:
/// `o ← o + sign·τ·(a − b)` elementwise, `sign = ±1` (`+` for the
/// winner's column).
#[inline]
pub fn scatter_one(o: &mut [f64], a: &[f64], b: &[f64], t: f64, sign: f64) {
    for ((o, &x), &y) in o.iter_mut().zip(a).zip(b) {
        let d = t * (x - y);
        if sign > 0.0 {
            *o += d;
        } else {
            *o -= d;
        }
    }
}

/// `y ← W·x` for one column (the operation of
/// [`Backend::laplacian_columns`]), skipping pairs of weight 0; pairs
/// checked by the caller.
#[inline]
pub fn laplacian_column(pairs: &[Pair], tau: &[f64], x: &[f64], y: &mut [f64]) {
    y.iter_mut().for_each(|v| *v = 0.0);
    for (p, &t) in pairs.iter().zip(tau) {
        if t == 0.0 {
            continue;
        }
        let v = t * (x[p.winner] - x[p.loser]);
        y[p.winner] += v;
        y[p.loser] -= v;
    }
}

/// Core's serial [`Backend::laplacian_columns`].
pub fn laplacian_columns(
    pairs: &[Pair],
    tau: &[f64],
    mut q: MatMut<'_, f64>,
    tmp: &mut [f64],
) -> Result<(), LinalgError> {
    let n = q.nrows();
    if tau.len() != pairs.len() || tmp.len() < n || (n > 1 && q.ncols() > 0 && q.col_mut(0).is_none()) {
        return Err(LinalgError::DimensionMismatch);
    }
    if pairs.iter().any(|p| p.winner >= n || p.loser >= n || p.winner == p.loser) {
        return Err(LinalgError::DimensionMismatch);
    }
    let tmp = &mut tmp[..n];
    for j in 0..q.ncols() {
        let col = q.col_mut(j).ok_or(LinalgError::DimensionMismatch)?;
        laplacian_column(pairs, tau, col, tmp);
        col.copy_from_slice(tmp);
    }
    Ok(())
}

/// Core's serial [`Backend::pair_scatter`].
pub fn pair_scatter(
    ut: MatRef<'_, f64>,
    a_tri: Tri,
    pairs: &[Pair],
    tau: &[f64],
    mut out: MatMut<'_, f64>,
) -> Result<(), LinalgError> {
    check_pairs_on(&ut, pairs, tau.len())?;
    let n = ut.nrows();
    if out.nrows() != n || out.ncols() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    for j in 0..n {
        out.col_mut(j).ok_or(LinalgError::DimensionMismatch)?.iter_mut().for_each(|v| *v = 0.0);
    }
    for (p, &t) in pairs.iter().zip(tau) {
        if t == 0.0 {
            continue;
        }
        let lo = if a_tri == Tri::Lower { p.winner.min(p.loser) } else { 0 };
        let (Some(cw), Some(cl)) = (ut.col(p.winner), ut.col(p.loser)) else {
            return Err(LinalgError::DimensionMismatch);
        };
        for (sign, col) in [(1.0, p.winner), (-1.0, p.loser)] {
            let o = out.col_mut(col).ok_or(LinalgError::DimensionMismatch)?;
            scatter_one(&mut o[lo..], &cw[lo..], &cl[lo..], t, sign);
        }
    }
    Ok(())
}

/// Which part of a square operand of [`Backend::gemm_lower`] can be
/// nonzero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tri {
    /// Any entry.
    Full,
    /// The lower triangle with the diagonal; zero above it.
    Lower,
    /// The upper triangle with the diagonal; zero below it.
    Upper,
}

/// Rows per block of the default [`Backend::gemm_lower`].
pub const TRI_BLOCK: usize = 128;

/// The shape rules of [`Backend::gemm_lower`]: `A·B` chains into `C`, and
/// an operand declared triangular is square.
pub fn check_gemm_lower(
    a: &MatRef<'_, f64>,
    a_tri: Tri,
    b: &MatRef<'_, f64>,
    b_tri: Tri,
    c: &MatMut<'_, f64>,
) -> Result<(), LinalgError> {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    let square = |t: Tri, r: usize, cc: usize| t == Tri::Full || r == cc;
    if b.nrows() != k || c.nrows() != m || c.ncols() != n || !square(a_tri, m, k) || !square(b_tri, k, n) {
        return Err(LinalgError::DimensionMismatch);
    }
    Ok(())
}

/// The default [`Backend::gemm_lower`]: row block `[r0, r1)` of `C` needs
/// columns `0..r1` only, and of the inner index only `k < r1` when `A` is
/// lower (or `B` upper) triangular and `k ≥ r0` when `A` is upper
/// triangular.
// Eight inputs: BLAS's gemm list (α, A, B, β, C) with each operand's stored triangle.
#[allow(clippy::too_many_arguments)]
pub fn gemm_lower_by_blocks<B: Backend + ?Sized>(
    backend: &mut B,
    alpha: f64,
    a: MatRef<'_, f64>,
    a_tri: Tri,
    b: MatRef<'_, f64>,
    b_tri: Tri,
    beta: f64,
    mut c: MatMut<'_, f64>,
) -> Result<(), LinalgError> {
    check_gemm_lower(&a, a_tri, &b, b_tri, &c)?;
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    let mut r0 = 0;
    while r0 < m {
        let r1 = (r0 + TRI_BLOCK).min(m);
        let cols = r1.min(n);
        let lo = if a_tri == Tri::Upper { r0 } else { 0 };
        let mut hi = if a_tri == Tri::Lower { r1 } else { k };
        if b_tri == Tri::Upper {
            hi = hi.min(cols);
        }
        let mut cb = c.submatrix_mut(r0, 0, r1 - r0, cols)?;
        if lo < hi {
            backend.gemm(
                alpha,
                a.submatrix(r0, lo, r1 - r0, hi - lo)?,
                b.submatrix(lo, 0, hi - lo, cols)?,
                beta,
                cb,
            )?;
        } else {
            if !beta.is_finite() {
                return Err(LinalgError::NonFinite);
            }
            for j in 0..cols {
                for i in 0..r1 - r0 {
                    let v = cb.at_mut(i, j);
                    *v = if beta == 0.0 { 0.0 } else { beta * *v };
                }
            }
        }
        r0 = r1;
    }
    Ok(())
}

/// The default [`Backend::solve_lower_lower_in_place`]: column block
/// `[c0, c1)` of [`TRI_BLOCK`] columns is `L[c0.., c0..]⁻¹·B[c0.., c0..c1]`
/// (the rows of `B` above `c0` are zero in those columns and stay so), one
/// [`Backend::solve_lower_in_place`] per block, in order.
///
/// # Errors
/// `DimensionMismatch` unless `L` and `B` are square of one order; those of
/// [`Backend::solve_lower_in_place`] (non-finite input or result, a zero
/// pivot).
pub fn solve_lower_lower_by_blocks<B: Backend + ?Sized>(
    backend: &mut B,
    l: MatRef<'_, f64>,
    mut b: MatMut<'_, f64>,
) -> Result<(), LinalgError> {
    let n = l.nrows();
    if l.ncols() != n || b.nrows() != n || b.ncols() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    let mut c0 = 0;
    while c0 < n {
        let c1 = (c0 + TRI_BLOCK).min(n);
        backend
            .solve_lower_in_place(l.submatrix(c0, c0, n - c0, n - c0)?, b.submatrix_mut(c0, c0, n - c0, c1 - c0)?)?;
        c0 = c1;
    }
    Ok(())
}

use crate::eigen::topk::{sym_eigen_top_k, top_k_workspace_len, DenseSymOp};
use crate::eigen::tridiag::{sym_eigen, sym_eigen_workspace_len};
use crate::eigen::EigenParams;
use crate::linalg::{blas, chol, ldlt};

/// Core's own backend: every operation on the caller's workspace, no heap,
/// single-threaded. It is what a device (or the FFI) trains with, and the
/// reference the host's faer backend is tested against.
#[derive(Debug)]
pub struct Portable<'w> {
    work: &'w mut [f64],
    params: EigenParams,
}

impl<'w> Portable<'w> {
    /// A backend that takes its scratch from `work`; see
    /// [`Portable::workspace_len`] for how much.
    pub fn new(work: &'w mut [f64]) -> Self {
        Self { work, params: EigenParams::default() }
    }

    /// Replaces the eigensolver tuning. A top-k block size above
    /// [`crate::eigen::topk::DEFAULT_BLOCK`] needs
    /// [`crate::eigen::topk::top_k_workspace_len_with`] elements, which
    /// [`Portable::workspace_len`] does not cover.
    pub fn with_params(mut self, params: EigenParams) -> Self {
        self.params = params;
        self
    }

    /// Elements of workspace that suffice for every operation on matrices
    /// of order up to `n` (any `k ≤ n` for top-k; Cholesky, LU and gemm need
    /// none, the symmetric indefinite solve a copy of `A`).
    pub fn workspace_len(n: usize) -> usize {
        let topk = (1..=n).map(|k| top_k_workspace_len(n, k)).max().unwrap_or(0);
        let full_fallback = FullScratch::len(n);
        sym_eigen_workspace_len(n).max(topk).max(full_fallback).max(ldlt::sym_indefinite_solve_workspace_len(n))
    }
}

crate::scratch! {
    /// Scratch of the top-k fallback through the full decomposition.
    struct FullScratch(n: usize) {
        /// All eigenvalues.
        all_vals: n,
        /// All eigenvectors.
        all_vecs: n.saturating_mul(n),
        /// The full solver's scratch.
        rest: sym_eigen_workspace_len(n),
    }
}

impl Portable<'_> {
    /// The `k` largest eigenpairs from the full decomposition.
    fn top_k_by_full(
        &mut self,
        a: MatRef<'_, f64>,
        vals: &mut [f64],
        mut vecs: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        let n = a.nrows();
        let (FullScratch { all_vals, all_vecs, rest }, _) = FullScratch::split(self.work, n)?;
        sym_eigen(a, all_vals, Some(MatMut::from_col_major(all_vecs, n, n)?), rest, &self.params)?;
        let v = MatRef::from_col_major(all_vecs, n, n)?;
        for (l, val) in vals.iter_mut().enumerate() {
            let src = n - 1 - l;
            *val = all_vals[src];
            for i in 0..n {
                *vecs.at_mut(i, l) = v.at(i, src);
            }
        }
        Ok(())
    }
}

impl Backend for Portable<'_> {
    fn gemm(
        &mut self,
        alpha: f64,
        a: MatRef<'_, f64>,
        b: MatRef<'_, f64>,
        beta: f64,
        c: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        blas::gemm(alpha, a, b, beta, c)
    }

    fn syrk(&mut self, alpha: f64, a: MatRef<'_, f64>, beta: f64, c: MatMut<'_, f64>) -> Result<(), LinalgError> {
        blas::syrk(alpha, a, beta, c)
    }

    fn sym_eigen(&mut self, a: MatRef<'_, f64>, vals: &mut [f64], vecs: MatMut<'_, f64>) -> Result<(), LinalgError> {
        sym_eigen(a, vals, Some(vecs), self.work, &self.params)
    }

    fn sym_eigen_top_k(
        &mut self,
        a: MatRef<'_, f64>,
        vals: &mut [f64],
        mut vecs: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        // The Lanczos solver reads both triangles. If it does not converge
        // within its restart budget (tightly clustered top eigenvalues),
        // fall back to the full decomposition, whose workspace
        // `Portable::workspace_len(n)` also covers.
        let mut op = DenseSymOp::new(a)?;
        match sym_eigen_top_k(&mut op, vals, vecs.rb_mut(), self.work, &self.params) {
            Err(LinalgError::NoConvergence { .. }) => self.top_k_by_full(a, vals, vecs),
            r => r.map(|_| ()),
        }
    }

    fn cholesky_in_place(&mut self, a: MatMut<'_, f64>) -> Result<(), LinalgError> {
        chol::cholesky_in_place(a)
    }

    fn cholesky_solve_in_place(&mut self, l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        chol::cholesky_solve_in_place(l, b)
    }

    fn sym_solve_in_place(&mut self, a: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        ldlt::sym_indefinite_solve(a, b, self.work)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;

    /// tridiag(−1, 2, −1) of order 200: its top eigenvalues
    /// 2 − 2cos(kπ/201) are clustered within 1e-3 of 4, where the Lanczos
    /// solver may give up; the backend must still answer, exactly.
    #[test]
    fn top_k_of_clustered_spectrum_falls_back_to_the_full_solver() {
        const N: usize = 200;
        let mut a = vec![0.0f64; N * N];
        for i in 0..N {
            a[i * N + i] = 2.0;
            if i + 1 < N {
                a[i * N + i + 1] = -1.0;
                a[(i + 1) * N + i] = -1.0;
            }
        }
        let mut work = vec![0.0f64; Portable::workspace_len(N)];
        let mut be = Portable::new(&mut work);
        let mut vals = [0.0f64; 3];
        let mut vecs = vec![0.0f64; N * 3];
        be.sym_eigen_top_k(
            MatRef::from_col_major(&a, N, N).unwrap(),
            &mut vals,
            MatMut::from_col_major(&mut vecs, N, 3).unwrap(),
        )
        .unwrap();
        for (k, v) in vals.iter().enumerate() {
            let exact = 2.0 - 2.0 * libm::cos((N - k) as f64 * core::f64::consts::PI / (N as f64 + 1.0));
            assert!((v - exact).abs() < 1e-12, "λ{k} = {v}, exact {exact}");
        }
    }
}
