//! The faer implementation of [`ranklet_core::backend::Backend`].
//!
//! Every operation runs on faer 0.24 with an explicit [`Par`] (by default
//! `Par::rayon(0)`: every thread of rayon's global pool, i.e. every core).
//! The backend contains no algorithm of its own:
//!
//! - gemm / syrk: `faer::linalg::matmul` (syrk computes the lower triangle
//!   with the triangular matmul and mirrors it);
//! - full symmetric eigen: `faer::linalg::evd::self_adjoint_evd`
//!   (Householder tridiagonalisation + divide and conquer);
//! - top-k: core's [`sym_eigen_top_k`] (thick-restarted block Krylov) driven
//!   by a [`SymOperator`] whose `apply` is a parallel faer matmul; when the
//!   Krylov basis would not be much smaller than the matrix (under a
//!   quarter of it), or when the Krylov solver reports
//!   `NoConvergence` (tightly clustered top eigenvalues), the full faer
//!   decomposition is used instead, so faer succeeds where core's portable
//!   backend may return `NoConvergence`;
//! - Cholesky: `faer::linalg::cholesky::llt`; symmetric indefinite solve:
//!   faer's Bunch–Kaufman `LBLᵀ` (`faer::linalg::cholesky::lblt`);
//! - the O(n²) kernel-matrix passes (kernel values, centring, the RankRLS
//!   `L^{½}KL^{½}`): rayon over column blocks, in [`crate::kernel_par`].
//!
//! Conventions are those of the trait: symmetric inputs are read from the
//! lower triangle only, non-finite input is [`LinalgError::NonFinite`],
//! shapes are checked, and nothing panics on bad input. Views of any stride
//! are accepted: column- or row-major views (any leading dimension) are
//! handed to faer without a copy, other layouts are copied.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::{lblt, llt};
use faer::linalg::evd;
use faer::linalg::matmul;
use faer::linalg::matmul::triangular::BlockStructure;
use faer::reborrow::ReborrowMut;
use faer::{Accum, Mat, Par};

use ranklet_core::backend::Backend;
use ranklet_core::eigen::topk::{sym_eigen_top_k, top_k_workspace_len, SymOperator};
use ranklet_core::eigen::EigenParams;
use ranklet_core::graph::Graph;
use ranklet_core::kernel::Kernel;
use ranklet_core::linalg::slice_finite;
use ranklet_core::{LinalgError, MatMut, MatRef};

use crate::kernel_par;

/// Outputs of at most this order are multiplied on one thread (measured:
/// the 136 × 136 Gram matrix of a 10⁵-row X took 2× longer in parallel on
/// 2 cores, the time going to thread barriers).
const SMALL_OUTPUT: usize = 256;

/// [`Backend`] on faer, multi-threaded.
///
/// Owns a growable scratch buffer for the top-k solver, so one value can be
/// reused across calls without reallocating.
#[derive(Debug)]
pub struct FaerBackend {
    par: Par,
    params: EigenParams,
    work: Vec<f64>,
}

impl Default for FaerBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl FaerBackend {
    /// A backend using every thread of rayon's global pool.
    pub fn new() -> Self {
        Self::with_par(Par::rayon(0))
    }

    /// A single-threaded backend.
    pub fn sequential() -> Self {
        Self::with_par(Par::Seq)
    }

    /// A backend with an explicit faer parallelism setting.
    pub fn with_par(par: Par) -> Self {
        Self { par, params: EigenParams::default(), work: Vec::new() }
    }

    /// Whether the O(n²) passes of [`crate::kernel_par`] may use rayon's
    /// pool (every setting but `Par::Seq`).
    fn parallel(&self) -> bool {
        !matches!(self.par, Par::Seq)
    }

    /// Replaces the tuning of core's top-k solver.
    pub fn with_params(mut self, params: EigenParams) -> Self {
        self.params = params;
        self
    }

    /// The parallelism in use.
    pub fn par(&self) -> Par {
        self.par
    }
}

// ---------------------------------------------------------------------------
// View conversions.

/// A zero-copy faer view of `a` when its layout allows one.
fn try_view(a: MatRef<'_, f64>) -> Option<faer::MatRef<'_, f64>> {
    let (m, n) = (a.nrows(), a.ncols());
    if m == 0 || n == 0 {
        return None;
    }
    let s = a.as_slice();
    if m == 1 || a.row_stride() == 1 {
        let cs = if n == 1 { m } else { a.col_stride() };
        let last = (n - 1).checked_mul(cs)?.checked_add(m - 1)?;
        (cs >= m && last < s.len()).then(|| faer::MatRef::from_column_major_slice_with_stride(s, m, n, cs))
    } else if n == 1 || a.col_stride() == 1 {
        let rs = if m == 1 { n } else { a.row_stride() };
        let last = (m - 1).checked_mul(rs)?.checked_add(n - 1)?;
        (rs >= n && last < s.len()).then(|| faer::MatRef::from_row_major_slice_with_stride(s, m, n, rs))
    } else {
        None
    }
}

/// A zero-copy mutable faer view of `a` when it is column-major (any
/// leading dimension). Other layouts go through a column-major copy: faer
/// 0.24's `self_adjoint_evd` returns wrong eigenvectors into a row-major `u`
/// (seen in `tests/backend_agreement.rs`, `faer_accepts_any_stride`), so
/// outputs are only ever handed to faer column-major.
fn try_view_mut<'a>(a: &'a mut MatMut<'_, f64>) -> Option<faer::MatMut<'a, f64>> {
    let (m, n) = (a.nrows(), a.ncols());
    if m == 0 || n == 0 || (m > 1 && a.row_stride() != 1) {
        return None;
    }
    let cs = if n == 1 { m } else { a.col_stride() };
    let s = a.as_slice_mut();
    let last = (n - 1).checked_mul(cs)?.checked_add(m - 1)?;
    (cs >= m && last < s.len()).then(|| faer::MatMut::from_column_major_slice_with_stride_mut(s, m, n, cs))
}

/// An input matrix as faer sees it: borrowed when possible, else a copy.
enum Input<'a> {
    View(faer::MatRef<'a, f64>),
    Owned(Mat<f64>),
}

impl Input<'_> {
    fn get(&self) -> faer::MatRef<'_, f64> {
        match self {
            Input::View(v) => *v,
            Input::Owned(m) => m.as_ref(),
        }
    }
}

fn input(a: MatRef<'_, f64>) -> Input<'_> {
    match try_view(a) {
        Some(v) => Input::View(v),
        None => Input::Owned(Mat::from_fn(a.nrows(), a.ncols(), |i, j| a.at(i, j))),
    }
}

/// Runs `f` on a faer view of `c`, through a temporary copy (copied back
/// afterwards, whatever `f` returns) when the layout has no direct view.
fn with_output<R>(c: &mut MatMut<'_, f64>, f: impl FnOnce(faer::MatMut<'_, f64>) -> R) -> R {
    if let Some(v) = try_view_mut(c) {
        return f(v);
    }
    let mut tmp = Mat::from_fn(c.nrows(), c.ncols(), |i, j| c.at(i, j));
    let r = f(tmp.as_mut());
    for j in 0..c.ncols() {
        for i in 0..c.nrows() {
            *c.at_mut(i, j) = tmp[(i, j)];
        }
    }
    r
}

/// The symmetric matrix whose lower triangle is that of `a`, as a full
/// column-major faer matrix.
fn symmetrized(a: MatRef<'_, f64>) -> Mat<f64> {
    Mat::from_fn(a.nrows(), a.ncols(), |i, j| if i >= j { a.at(i, j) } else { a.at(j, i) })
}

fn lower_finite(a: MatRef<'_, f64>) -> bool {
    if a.row_stride() == 1 {
        // Column-contiguous: the part of each column on and below the diagonal.
        return (0..a.ncols()).all(|j| a.col(j).is_some_and(|c| slice_finite(c.get(j..).unwrap_or(&[]))));
    }
    (0..a.ncols()).all(|j| (j..a.nrows()).all(|i| a.at(i, j).is_finite()))
}

fn square(a: &MatRef<'_, f64>) -> Result<usize, LinalgError> {
    if a.is_square() {
        Ok(a.nrows())
    } else {
        Err(LinalgError::DimensionMismatch)
    }
}

fn no_convergence(_: evd::EvdError) -> LinalgError {
    LinalgError::NoConvergence { iterations: 0 }
}

// ---------------------------------------------------------------------------
// Top-k operator.

/// `Y ← A·X` with a parallel faer matmul, `A` held as a full faer matrix.
struct FaerSymOp<'a> {
    a: faer::MatRef<'a, f64>,
    par: Par,
}

impl SymOperator<f64> for FaerSymOp<'_> {
    fn dim(&self) -> usize {
        self.a.nrows()
    }

    fn apply(&mut self, x: MatRef<'_, f64>, mut y: MatMut<'_, f64>) -> Result<(), LinalgError> {
        let n = self.a.nrows();
        if x.nrows() != n || y.nrows() != n || x.ncols() != y.ncols() {
            return Err(LinalgError::DimensionMismatch);
        }
        if n == 0 || x.ncols() == 0 {
            return Ok(());
        }
        let x = input(x);
        let (a, par) = (self.a, self.par);
        with_output(&mut y, |y| matmul::matmul(y, Accum::Replace, a, x.get(), 1.0, par));
        Ok(())
    }

    fn gemm(
        &mut self,
        alpha: f64,
        p: MatRef<'_, f64>,
        q: MatRef<'_, f64>,
        beta: f64,
        mut c: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        if p.nrows() != c.nrows() || q.ncols() != c.ncols() || p.ncols() != q.nrows() {
            return Err(LinalgError::DimensionMismatch);
        }
        if c.nrows() == 0 || c.ncols() == 0 {
            return Ok(());
        }
        if beta != 0.0 {
            // The solver only ever overwrites; keep the general case exact.
            return ranklet_core::linalg::blas::gemm(alpha, p, q, beta, c);
        }
        let (fp, fq, par) = (input(p), input(q), self.par);
        with_output(&mut c, |c| matmul::matmul(c, Accum::Replace, fp.get(), fq.get(), alpha, par));
        Ok(())
    }
}

/// Whether the full faer decomposition beats core's Krylov top-k solver
/// for `(n, k)`. The Krylov basis has `m = k + 4·min(k, 16)` columns (see
/// [`top_k_workspace_len`]); core itself goes dense when `2m > n`, and on
/// RBF kernels with 2 cores the parallel full decomposition was measured
/// faster up to `4m ≈ n` (n = 250, k = 50: 0.004 s full vs 0.011 s
/// Krylov; n = 500, k = 50: equal; `docs/performance.md`).
fn top_k_is_dense(n: usize, k: usize) -> bool {
    let b = k.clamp(1, 16);
    4 * (k + 4 * b) > n
}

impl FaerBackend {
    /// Full decomposition of the (already validated, square, finite) `a`
    /// into `vals` (ascending) and `vecs` (`n × n`).
    fn full_eigen(
        &self,
        a: faer::MatRef<'_, f64>,
        vals: &mut [f64],
        vecs: faer::MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        full_eigen_par(a, vals, vecs, self.par)
    }
}

/// [`FaerBackend::full_eigen`] with an explicit parallelism.
fn full_eigen_par(
    a: faer::MatRef<'_, f64>,
    vals: &mut [f64],
    vecs: faer::MatMut<'_, f64>,
    par: Par,
) -> Result<(), LinalgError> {
    let n = a.nrows();
    let req = evd::self_adjoint_evd_scratch::<f64>(n, evd::ComputeEigenvectors::Yes, par, Default::default());
    let mut mem = MemBuffer::new(req);
    let s = faer::ColMut::from_slice_mut(vals).as_diagonal_mut();
    evd::self_adjoint_evd(a, s, Some(vecs), par, MemStack::new(&mut mem), Default::default()).map_err(no_convergence)
}

// ---------------------------------------------------------------------------

impl Backend for FaerBackend {
    fn gemm(
        &mut self,
        alpha: f64,
        a: MatRef<'_, f64>,
        b: MatRef<'_, f64>,
        beta: f64,
        mut c: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
        if b.nrows() != k || c.nrows() != m || c.ncols() != n {
            return Err(LinalgError::DimensionMismatch);
        }
        if !alpha.is_finite() || !beta.is_finite() || !a.all_finite() || !b.all_finite() {
            return Err(LinalgError::NonFinite);
        }
        if beta != 0.0 && !c.rb().all_finite() {
            return Err(LinalgError::NonFinite);
        }
        if m == 0 || n == 0 {
            return Ok(());
        }
        let par = if c.nrows().max(c.ncols()) <= SMALL_OUTPUT { Par::Seq } else { self.par };
        let (fa, fb) = (input(a), input(b));
        with_output(&mut c, |mut c| {
            let accum = if beta == 0.0 {
                Accum::Replace
            } else {
                if beta != 1.0 {
                    c.rb_mut().col_iter_mut().for_each(|col| col.iter_mut().for_each(|x| *x *= beta));
                }
                Accum::Add
            };
            matmul::matmul(c, accum, fa.get(), fb.get(), alpha, par);
        });
        Ok(())
    }

    fn syrk(&mut self, alpha: f64, a: MatRef<'_, f64>, beta: f64, mut c: MatMut<'_, f64>) -> Result<(), LinalgError> {
        let n = a.nrows();
        if c.nrows() != n || c.ncols() != n {
            return Err(LinalgError::DimensionMismatch);
        }
        if !alpha.is_finite() || !beta.is_finite() || !a.all_finite() {
            return Err(LinalgError::NonFinite);
        }
        if beta != 0.0 && !lower_finite(c.rb()) {
            return Err(LinalgError::NonFinite);
        }
        if n == 0 {
            return Ok(());
        }
        // A small output (e.g. the d × d Gram matrix of a tall X) offers
        // little parallelism and the thread barriers cost more than they
        // save: run it on one thread.
        let par = if n <= SMALL_OUTPUT { Par::Seq } else { self.par };
        let fa = input(a);
        with_output(&mut c, |mut c| {
            let accum = if beta == 0.0 {
                Accum::Replace
            } else {
                if beta != 1.0 {
                    for j in 0..n {
                        for i in j..n {
                            c[(i, j)] *= beta;
                        }
                    }
                }
                Accum::Add
            };
            matmul::triangular::matmul(
                c.rb_mut(),
                BlockStructure::TriangularLower,
                accum,
                fa.get(),
                BlockStructure::Rectangular,
                fa.get().transpose(),
                BlockStructure::Rectangular,
                alpha,
                par,
            );
        });
        kernel_par::mirror_lower(!matches!(par, Par::Seq), c);
        Ok(())
    }

    fn sym_eigen(
        &mut self,
        a: MatRef<'_, f64>,
        vals: &mut [f64],
        mut vecs: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        let n = square(&a)?;
        if vals.len() != n || vecs.nrows() != n || vecs.ncols() != n {
            return Err(LinalgError::DimensionMismatch);
        }
        if !lower_finite(a) {
            return Err(LinalgError::NonFinite);
        }
        if n == 0 {
            return Ok(());
        }
        // faer reads only the lower triangle of `a`.
        let fa = input(a);
        with_output(&mut vecs, |v| self.full_eigen(fa.get(), vals, v))
    }

    /// With two or more threads the two decompositions run concurrently,
    /// each on half of the threads (faer's own parallel decomposition
    /// gained 9 % from the second core at p = 2000, `docs/performance.md`,
    /// "Kronecker RLS vs RLScore"); same results as two
    /// [`Backend::sym_eigen`] calls with that parallelism.
    fn sym_eigen_pair(
        &mut self,
        a1: MatRef<'_, f64>,
        vals1: &mut [f64],
        mut vecs1: MatMut<'_, f64>,
        a2: MatRef<'_, f64>,
        vals2: &mut [f64],
        mut vecs2: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        let threads = self.par.degree();
        if threads < 2 {
            self.sym_eigen(a1, vals1, vecs1)?;
            return self.sym_eigen(a2, vals2, vecs2);
        }
        for (a, vals, vecs) in [(a1, &*vals1, &vecs1), (a2, &*vals2, &vecs2)] {
            let n = square(&a)?;
            if vals.len() != n || vecs.nrows() != n || vecs.ncols() != n {
                return Err(LinalgError::DimensionMismatch);
            }
            if !lower_finite(a) {
                return Err(LinalgError::NonFinite);
            }
        }
        let half = |t: usize| if t <= 1 { Par::Seq } else { Par::rayon(t) };
        let (par1, par2) = (half(threads / 2), half(threads - threads / 2));
        let one = |a: MatRef<'_, f64>, vals: &mut [f64], vecs: &mut MatMut<'_, f64>, par: Par| {
            if a.nrows() == 0 {
                return Ok(());
            }
            let fa = input(a);
            with_output(vecs, |v| full_eigen_par(fa.get(), vals, v, par))
        };
        let (r1, r2) = rayon::join(|| one(a1, vals1, &mut vecs1, par1), || one(a2, vals2, &mut vecs2, par2));
        r1.and(r2)
    }

    fn sym_eigen_top_k(
        &mut self,
        a: MatRef<'_, f64>,
        vals: &mut [f64],
        mut vecs: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        let n = square(&a)?;
        let k = vals.len();
        if k > n {
            return Err(LinalgError::InvalidParameter);
        }
        if vecs.nrows() != n || vecs.ncols() != k {
            return Err(LinalgError::DimensionMismatch);
        }
        if !lower_finite(a) {
            return Err(LinalgError::NonFinite);
        }
        if k == 0 {
            return Ok(());
        }
        if !top_k_is_dense(n, k) {
            // The operator reads the whole matrix: mirror the lower triangle once.
            let full = symmetrized(a);
            let mut op = FaerSymOp { a: full.as_ref(), par: self.par };
            let needed = top_k_workspace_len(n, k);
            if self.work.len() < needed {
                self.work.resize(needed, 0.0);
            }
            match sym_eigen_top_k(&mut op, vals, vecs.rb_mut(), &mut self.work[..needed], &self.params) {
                // Tightly clustered top eigenvalues (e.g. a long 1-D
                // Laplacian) can exhaust the Krylov budget; the host can
                // afford the full decomposition instead of failing.
                Err(LinalgError::NoConvergence { .. }) => {}
                other => return other.map(|_| ()),
            }
        }
        let fa = input(a);
        let mut all_vals = vec![0.0; n];
        let mut all_vecs = Mat::<f64>::zeros(n, n);
        self.full_eigen(fa.get(), &mut all_vals, all_vecs.as_mut())?;
        for (i, v) in vals.iter_mut().enumerate() {
            let src = n - 1 - i;
            *v = all_vals[src];
            for r in 0..n {
                *vecs.at_mut(r, i) = all_vecs[(r, src)];
            }
        }
        Ok(())
    }

    fn cholesky_in_place(&mut self, mut a: MatMut<'_, f64>) -> Result<(), LinalgError> {
        let n = square(&a.rb())?;
        if !kernel_par::lower_finite(self.parallel(), a.rb()) {
            return Err(LinalgError::NonFinite);
        }
        if n == 0 {
            return Ok(());
        }
        let par = self.par;
        let res = with_output(&mut a, |l| {
            let req = llt::factor::cholesky_in_place_scratch::<f64>(n, par, Default::default());
            let mut mem = MemBuffer::new(req);
            llt::factor::cholesky_in_place(l, Default::default(), par, MemStack::new(&mut mem), Default::default())
        });
        match res {
            Ok(_) => {}
            Err(llt::factor::LltError::NonPositivePivot { index }) => {
                return Err(LinalgError::NotPositiveDefinite { index });
            }
        }
        // A pivot that came out non-finite (overflow) is not a usable factor.
        match kernel_par::zero_upper_check_diag(self.parallel(), a) {
            Some(index) => Err(LinalgError::NotPositiveDefinite { index }),
            None => Ok(()),
        }
    }

    fn cholesky_solve_in_place(&mut self, l: MatRef<'_, f64>, mut b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        let n = square(&l)?;
        if b.nrows() != n {
            return Err(LinalgError::DimensionMismatch);
        }
        if !kernel_par::lower_finite(self.parallel(), l) || !b.rb().all_finite() {
            return Err(LinalgError::NonFinite);
        }
        if let Some(index) = (0..n).find(|&j| l.at(j, j) == 0.0) {
            return Err(LinalgError::Singular { index });
        }
        if n == 0 || b.ncols() == 0 {
            return Ok(());
        }
        let (fl, par) = (input(l), self.par);
        let m = b.ncols();
        with_output(&mut b, |x| {
            let req = llt::solve::solve_in_place_scratch::<f64>(n, m, par);
            let mut mem = MemBuffer::new(req);
            llt::solve::solve_in_place_with_conj(fl.get(), faer::Conj::No, x, par, MemStack::new(&mut mem));
        });
        if b.rb().all_finite() {
            Ok(())
        } else {
            Err(LinalgError::NonFinite)
        }
    }

    fn solve_lower_in_place(&mut self, l: MatRef<'_, f64>, mut b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        let n = square(&l)?;
        if b.nrows() != n {
            return Err(LinalgError::DimensionMismatch);
        }
        if !lower_finite(l) || !b.rb().all_finite() {
            return Err(LinalgError::NonFinite);
        }
        if let Some(index) = (0..n).find(|&j| l.at(j, j) == 0.0) {
            return Err(LinalgError::Singular { index });
        }
        if n == 0 || b.ncols() == 0 {
            return Ok(());
        }
        let (fl, par) = (input(l), self.par);
        with_output(&mut b, |x| {
            faer::linalg::triangular_solve::solve_lower_triangular_in_place(fl.get(), x, par);
        });
        if b.rb().all_finite() {
            Ok(())
        } else {
            Err(LinalgError::NonFinite)
        }
    }

    fn kernel_values(
        &mut self,
        kernel: &Kernel,
        xn: &[f64],
        yn: &[f64],
        symmetric: bool,
        out: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        kernel_par::kernel_values(self.parallel(), kernel, xn, yn, symmetric, out)
    }

    fn center_kernel_in_place(&mut self, k: MatMut<'_, f64>, colmean: &mut [f64]) -> Result<f64, LinalgError> {
        kernel_par::center_kernel_in_place(self.parallel(), k, colmean)
    }

    fn sqrt_sandwich_in_place(&mut self, graph: &Graph<'_>, a: MatMut<'_, f64>) -> Result<(), LinalgError> {
        kernel_par::sqrt_sandwich_in_place(self.parallel(), graph, a)
    }

    fn sym_solve_in_place(&mut self, a: MatRef<'_, f64>, mut b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        let n = square(&a)?;
        if b.nrows() != n {
            return Err(LinalgError::DimensionMismatch);
        }
        if !lower_finite(a) || !b.rb().all_finite() {
            return Err(LinalgError::NonFinite);
        }
        if n == 0 || b.ncols() == 0 {
            return Ok(());
        }
        let par = self.par;
        // The factorisation overwrites its input: work on a copy of the lower
        // triangle (faer reads nothing else).
        let mut lf = Mat::from_fn(n, n, |i, j| if i >= j { a.at(i, j) } else { 0.0 });
        let mut subdiag = faer::diag::Diag::<f64>::zeros(n);
        let mut perm = vec![0usize; n];
        let mut perm_inv = vec![0usize; n];
        let req = lblt::factor::cholesky_in_place_scratch::<usize, f64>(n, par, Default::default())
            .or(lblt::solve::solve_in_place_scratch::<usize, f64>(n, b.ncols(), par));
        let mut mem = MemBuffer::new(req);
        let (_, p) = lblt::factor::cholesky_in_place(
            lf.as_mut(),
            subdiag.as_mut(),
            &mut perm,
            &mut perm_inv,
            par,
            MemStack::new(&mut mem),
            Default::default(),
        );
        // Exactly singular pivots (1×1 zero or 2×2 block with zero
        // determinant) are an error, as in core's LDLᵀ.
        let mut i = 0;
        while i < n {
            let s = subdiag[i];
            if s == 0.0 {
                if lf[(i, i)] == 0.0 {
                    return Err(LinalgError::Singular { index: i });
                }
                i += 1;
            } else {
                if i + 1 >= n || lf[(i, i)] * lf[(i + 1, i + 1)] - s * s == 0.0 {
                    return Err(LinalgError::Singular { index: i });
                }
                i += 2;
            }
        }
        let diag = lf.diagonal().column_vector().to_owned();
        lf.diagonal_mut().column_vector_mut().fill(1.0);
        with_output(&mut b, |x| {
            lblt::solve::solve_in_place_with_conj(
                lf.as_ref(),
                diag.as_diagonal(),
                subdiag.as_ref(),
                faer::Conj::No,
                p,
                x,
                par,
                MemStack::new(&mut mem),
            );
        });
        if b.rb().all_finite() {
            Ok(())
        } else {
            Err(LinalgError::NonFinite)
        }
    }
}
