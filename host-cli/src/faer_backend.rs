//! The faer implementation of [`ranklet_core::backend::Backend`].
//!
//! Every operation runs on faer 0.24 with an explicit [`Par`] (by default
//! `Par::rayon(0)`: every thread of rayon's global pool, i.e. every core).
//! The backend's only numerical code of its own is the fused symmetric
//! mat-vec of the top-k operator ([`FaerSymOp`]); the rest is faer:
//!
//! - gemm / syrk: `faer::linalg::matmul` (syrk computes the lower triangle
//!   with the triangular matmul and mirrors it);
//! - full symmetric eigen: `faer::linalg::evd::self_adjoint_evd`
//!   (Householder tridiagonalisation + divide and conquer);
//! - top-k: core's [`sym_eigen_top_k`] (thick-restart Lanczos) driven by a
//!   [`SymOperator`] whose `apply` streams the lower triangle once per
//!   block in parallel column panels and whose Gram–Schmidt and restart
//!   products are faer matmuls; when the Lanczos basis would not be much
//!   smaller than the matrix (over a quarter of it), or when it reports
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

use ranklet_core::backend::{Backend, Tri};
use ranklet_core::eigen::topk::{sym_eigen_top_k, top_k_basis_size, top_k_workspace_len_with, SymOperator, TopKInfo};
use ranklet_core::eigen::EigenParams;
use ranklet_core::graph::{Graph, Pair};
use ranklet_core::kernel::Kernel;
use ranklet_core::{LinalgError, MatMut, MatRef};

use crate::kernel_par;

/// Outputs of at most this order are multiplied on one thread (measured:
/// the 136 × 136 Gram matrix of a 10⁵-row X took 2× longer in parallel on
/// 2 cores, the time going to thread barriers).
const SMALL_OUTPUT: usize = 256;

/// Columns per task of [`FaerBackend`]'s `solve_lower_lower_in_place` (the
/// preference GP's `C = L_B⁻¹Uᵀ`): 16 blocks at n = 1 000, enough for the
/// greedy largest-first schedule to balance two threads.
const SOLVE_BLOCK: usize = 64;

/// Runs `f` on a worker of rayon's pool when `par` has two or more
/// threads and the caller is not one already: the parallel regions inside
/// `f` (checks, products, solves) are then forked there, cheaply, instead
/// of each being injected from the calling thread and waited for.
fn on_pool<R: Send>(par: Par, f: impl FnOnce() -> R + Send) -> R {
    if par.degree() >= 2 && rayon::current_thread_index().is_none() {
        rayon::scope(|_| f())
    } else {
        f()
    }
}

/// Row ranges of equal work per thread in [`gemm_lower_rows`]: more than
/// one per thread, so that the greedy hand-out evens out ranges that run
/// at different speeds (a thin range packs the right factor for fewer rows).
const RANGES_PER_THREAD: usize = 2;

/// The lower triangle of `c ← α·a·b (+ c)` (square `c`, operands declared
/// triangular as in [`Backend::gemm_lower`]) as row ranges of about equal
/// work run concurrently, each a single-threaded faer product: range
/// `[r0, r1)` is the rectangle `c[r0..r1, ..r0]` (one gemm) and the
/// triangle on the diagonal, `c[r0..r1, r0..r1]` (faer's lower-triangular
/// product), both over the inner indices row `r0..r1` of `a` can reach.
/// One parallel region instead of faer's recursion, whose sequential steps
/// each start their own (inside the EP fit at n = 1 000 that gained
/// 0.95–1.25× from a second core, these ranges 1.5–1.85×;
/// `docs/performance.md`). Ranges are handed to `threads` workers greedily.
#[allow(clippy::too_many_arguments)]
fn gemm_lower_rows(
    c: faer::MatMut<'_, f64>,
    accum: Accum,
    a: faer::MatRef<'_, f64>,
    a_tri: Tri,
    b: faer::MatRef<'_, f64>,
    b_tri: Tri,
    alpha: f64,
    threads: usize,
) {
    let (m, k) = (a.nrows(), a.ncols());
    // The inner indices row block [r0, r1) needs (core's row-block rule).
    let inner = |r0: usize, r1: usize| {
        let lo = if a_tri == Tri::Upper { r0 } else { 0 };
        let mut hi = if a_tri == Tri::Lower { r1 } else { k };
        if b_tri == Tri::Upper {
            hi = hi.min(r1);
        }
        (lo, hi.max(lo))
    };
    // Cut rows into `parts` ranges of equal multiply-adds (row i: its
    // inner indices times its i + 1 columns), at multiples of 8 rows.
    let parts = (threads * RANGES_PER_THREAD).max(1);
    let work = |i: usize| {
        let (lo, hi) = inner(i, i + 1);
        ((hi - lo) * (i + 1)) as f64
    };
    let total: f64 = (0..m).map(work).sum();
    let mut cuts = Vec::with_capacity(parts + 1);
    cuts.push(0);
    let mut acc = 0.0;
    for i in 0..m {
        acc += work(i);
        let want = total * cuts.len() as f64 / parts as f64;
        let last = cuts.last().copied().unwrap_or(0);
        if acc >= want && cuts.len() < parts && (i + 1) % 8 == 0 && i + 1 > last {
            cuts.push(i + 1);
        }
    }
    cuts.push(m);
    cuts.dedup();
    // Disjoint row views of c, one per range.
    let mut ranges = Vec::with_capacity(cuts.len());
    let mut rest = c;
    for w in cuts.windows(2) {
        let (top, bottom) = rest.split_at_row_mut(w[1] - w[0]);
        ranges.push((w[0], w[1], top));
        rest = bottom;
    }
    let one = |(r0, r1, cr): (usize, usize, faer::MatMut<'_, f64>)| {
        let (lo, hi) = inner(r0, r1);
        let (mut rect, rest) = cr.split_at_col_mut(r0);
        let diag = rest.get_mut(.., ..r1 - r0);
        if lo == hi {
            // Nothing reaches these rows: α·0.
            if accum == Accum::Replace {
                rect.fill(0.0);
                let mut diag = diag;
                diag.fill(0.0);
            }
            return;
        }
        let ar = a.get(r0..r1, lo..hi);
        if r0 > 0 {
            matmul::matmul(rect.rb_mut(), accum, ar, b.get(lo..hi, ..r0), alpha, Par::Seq);
        }
        matmul::triangular::matmul(
            diag,
            BlockStructure::TriangularLower,
            accum,
            ar,
            BlockStructure::Rectangular,
            b.get(lo..hi, r0..r1),
            BlockStructure::Rectangular,
            alpha,
            Par::Seq,
        );
    };
    if threads < 2 || ranges.len() < 2 {
        ranges.into_iter().for_each(one);
        return;
    }
    let queue = std::sync::Mutex::new(ranges.into_iter());
    let next = || queue.lock().ok().and_then(|mut q| q.next());
    use rayon::prelude::*;
    (0..threads).into_par_iter().with_max_len(1).for_each(|_| {
        while let Some(r) = next() {
            one(r);
        }
    });
}

/// Orders up to which [`cholesky_recursive`] factors on one thread.
const CHOL_LEAF: usize = 256;

/// Recursive Cholesky (lower) of the column-major `a`: with
/// `A = [A₁₁ ·; A₂₁ A₂₂]` split in halves, `L₁₁ = chol(A₁₁)`, then
/// `L₂₁ = A₂₁L₁₁⁻ᵀ` (row chunks in parallel), `A₂₂ −= L₂₁L₂₁ᵀ` (lower
/// triangle, [`gemm_lower_rows`]) and `L₂₂ = chol(A₂₂)`; blocks of at most
/// [`CHOL_LEAF`] by faer on one thread. Two parallel regions per split
/// (six at n = 1 000), each a large product. Returns the first
/// non-positive pivot.
fn cholesky_recursive(mut a: faer::MatMut<'_, f64>, threads: usize) -> Result<(), usize> {
    let n = a.nrows();
    if n <= CHOL_LEAF || threads < 2 {
        let mut mem = MemBuffer::new(llt::factor::cholesky_in_place_scratch::<f64>(n, Par::Seq, Default::default()));
        return match llt::factor::cholesky_in_place(
            a,
            Default::default(),
            Par::Seq,
            MemStack::new(&mut mem),
            Default::default(),
        ) {
            Ok(_) => Ok(()),
            Err(llt::factor::LltError::NonPositivePivot { index }) => Err(index),
        };
    }
    let h = (n / 2).next_multiple_of(8).min(n - 1);
    let (a11, _, mut a21, a22) = a.rb_mut().split_at_mut(h, h);
    let mut a11 = a11;
    cholesky_recursive(a11.rb_mut(), threads)?;
    let l11 = a11.as_ref();
    let rest = n - h;
    let chunk = rest.div_ceil(threads * 2).next_multiple_of(8);
    let mut chunks = Vec::new();
    let mut r = a21.rb_mut();
    while r.nrows() > 0 {
        let take = chunk.min(r.nrows());
        let (top, bottom) = r.split_at_row_mut(take);
        chunks.push(top);
        r = bottom;
    }
    use rayon::prelude::*;
    chunks.into_par_iter().with_max_len(1).for_each(|x| {
        faer::linalg::triangular_solve::solve_lower_triangular_in_place(l11, x.transpose_mut(), Par::Seq);
    });
    let l21 = a21.as_ref();
    let mut a22 = a22;
    gemm_lower_rows(a22.rb_mut(), Accum::Add, l21, Tri::Full, l21.transpose(), Tri::Full, -1.0, threads);
    cholesky_recursive(a22, threads).map_err(|i| i + h)
}

/// Products of the top-k solver with fewer multiply-adds than this run on
/// one thread: the Gram–Schmidt products of a block (n × μ by n × b, below
/// 2 M multiply-adds at n = 4000, b = 4) took longer in parallel than on
/// one thread on 2 cores (`docs/performance.md`).
const SMALL_GEMM_WORK: usize = 1 << 22;

/// Products of the top-k solver between this and [`SMALL_GEMM_WORK`]
/// multiply-adds are split in two halves for two threads (one
/// `rayon::join`, each half on one thread): by rows of the output when it
/// is tall (`W − V·C`), else along the inner dimension (`Vᵀ·W`, whose
/// output is only μ × b).
const SPLIT_GEMM_WORK: usize = 1 << 18;

/// `c ← α·p·q (+ c)` as two single-threaded halves run by `rayon::join`
/// (see [`SPLIT_GEMM_WORK`]).
fn split_matmul(
    c: faer::MatMut<'_, f64>,
    accum: Accum,
    p: faer::MatRef<'_, f64>,
    q: faer::MatRef<'_, f64>,
    alpha: f64,
) {
    let (m, k) = (p.nrows(), p.ncols());
    if m >= 2 * SMALL_OUTPUT || k < 2 {
        let h = m / 2;
        let (c0, c1) = c.split_at_row_mut(h);
        let (p0, p1) = p.split_at_row(h);
        rayon::join(
            || matmul::matmul(c0, accum, p0, q, alpha, Par::Seq),
            || matmul::matmul(c1, accum, p1, q, alpha, Par::Seq),
        );
    } else {
        let h = k / 2;
        let (p0, p1) = p.split_at_col(h);
        let (q0, q1) = q.split_at_row(h);
        let mut tmp = Mat::<f64>::zeros(c.nrows(), c.ncols());
        let mut c = c;
        rayon::join(
            || matmul::matmul(c.rb_mut(), accum, p0, q0, alpha, Par::Seq),
            || matmul::matmul(tmp.as_mut(), Accum::Replace, p1, q1, alpha, Par::Seq),
        );
        c += tmp.as_ref();
    }
}

/// [`Backend`] on faer, multi-threaded.
///
/// Owns a growable scratch buffer for the top-k solver, so one value can be
/// reused across calls without reallocating.
#[derive(Debug)]
pub struct FaerBackend {
    par: Par,
    params: EigenParams,
    work: Vec<f64>,
    last_top_k: Option<TopKInfo>,
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
        Self { par, params: EigenParams::default(), work: Vec::new(), last_top_k: None }
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

    /// What core's Lanczos solver reported in the last top-k call that it
    /// answered (`None` when the full decomposition answered).
    pub fn last_top_k(&self) -> Option<TopKInfo> {
        self.last_top_k
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

/// Whether the lower triangle of `a` is finite, on one thread (the checks
/// of single calls; [`kernel_par::lower_finite`] does the walk).
fn lower_finite(a: MatRef<'_, f64>) -> bool {
    kernel_par::lower_finite(false, a)
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

/// `Y ← A·X` for the symmetric `A` of which only the lower triangle is
/// read, and the solver's own products, on faer.
///
/// The product is a fused symmetric mat-vec (the BLAS `dsymv` scheme):
/// column `c` of the lower triangle, read once, gives both
/// `Y[c+1.., :] += A[c+1.., c]·X[c, :]` and `Y[c, :] += A[c+1.., c]ᵀ·X[c+1.., :]`,
/// so the matrix is streamed from memory once per application — half the
/// traffic of a full gemv, which bounds this product — and needs no
/// mirrored n² copy. With several threads each takes a contiguous range of
/// columns of equal area (rayon) and its own `n × b` accumulator; the
/// accumulators are summed.
struct FaerSymOp<'a> {
    /// Column-major lower triangle, leading dimension `lda`.
    a: &'a [f64],
    lda: usize,
    n: usize,
    par: Par,
}

/// `acc[:, t] += A·x[:, t]` over the columns `c0..c1` of the lower
/// triangle of `A` (column-major, leading dimension `lda`); `x` and `acc`
/// are column-major `n × b`. Columns go four at a time so that each row of
/// `x` and `acc` is loaded once per four matrix columns, with four
/// independent dot-product chains (measured 1.5× faster than one column at
/// a time on this machine's SSE2 baseline build).
fn symv_cols(a: &[f64], lda: usize, n: usize, x: &[f64], acc: &mut [f64], c0: usize, c1: usize) {
    let mut c = c0;
    while c < c1 {
        let w = (c1 - c).min(4);
        for (xt, yt) in x.chunks_exact(n).zip(acc.chunks_exact_mut(n)) {
            // The w × w triangle on the diagonal.
            for j in 0..w {
                for i in j..w {
                    let v = a[(c + j) * lda + c + i];
                    yt[c + i] += v * xt[c + j];
                    if i != j {
                        yt[c + j] += v * xt[c + i];
                    }
                }
            }
            let r0 = c + w;
            if r0 >= n {
                continue;
            }
            let col = |j: usize| if j < w { &a[(c + j) * lda + r0..(c + j) * lda + n] } else { &[][..] };
            if w == 4 {
                let s = [xt[c], xt[c + 1], xt[c + 2], xt[c + 3]];
                let d = four_columns([col(0), col(1), col(2), col(3)], &xt[r0..], &mut yt[r0..], s);
                for (j, dj) in d.iter().enumerate() {
                    yt[c + j] += dj;
                }
            } else {
                for j in 0..w {
                    let (xc, cj) = (xt[c + j], col(j));
                    let mut dj = 0.0;
                    for ((yi, &ai), &xi) in yt[r0..].iter_mut().zip(cj).zip(&xt[r0..]) {
                        *yi += xc * ai;
                        dj += ai * xi;
                    }
                    yt[c + j] += dj;
                }
            }
        }
        c += w;
    }
}

/// `y += Σⱼ s[j]·a[j]` and returns `[a[j]ᵀx]ⱼ`, in one pass over the four
/// columns `a` of equal length, with the widest SIMD the CPU offers
/// ([`pulp`]'s runtime dispatch: AVX2 + FMA or AVX-512 on x86-64; the
/// build's baseline is SSE2, which made this loop compute-bound).
#[inline(always)]
fn four_columns(a: [&[f64]; 4], x: &[f64], y: &mut [f64], s: [f64; 4]) -> [f64; 4] {
    pulp::Arch::new().dispatch(FourColumns { a, x, y, s })
}

/// The kernel of [`four_columns`].
struct FourColumns<'a> {
    a: [&'a [f64]; 4],
    x: &'a [f64],
    y: &'a mut [f64],
    s: [f64; 4],
}

impl pulp::WithSimd for FourColumns<'_> {
    type Output = [f64; 4];

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, simd: S) -> [f64; 4] {
        let FourColumns { a, x, y, s } = self;
        let len = y.len().min(x.len()).min(a.iter().map(|c| c.len()).min().unwrap_or(0));
        let (a0h, a0t) = S::as_simd_f64s(&a[0][..len]);
        let (a1h, a1t) = S::as_simd_f64s(&a[1][..len]);
        let (a2h, a2t) = S::as_simd_f64s(&a[2][..len]);
        let (a3h, a3t) = S::as_simd_f64s(&a[3][..len]);
        let (xh, xt) = S::as_simd_f64s(&x[..len]);
        let (yh, yt) = S::as_mut_simd_f64s(&mut y[..len]);
        let (s0, s1, s2, s3) =
            (simd.splat_f64s(s[0]), simd.splat_f64s(s[1]), simd.splat_f64s(s[2]), simd.splat_f64s(s[3]));
        let zero = simd.splat_f64s(0.0);
        let (mut d0, mut d1, mut d2, mut d3) = (zero, zero, zero, zero);
        for (((((yi, &b0), &b1), &b2), &b3), &xi) in yh.iter_mut().zip(a0h).zip(a1h).zip(a2h).zip(a3h).zip(xh) {
            let mut t = simd.mul_add_e_f64s(s0, b0, *yi);
            t = simd.mul_add_e_f64s(s1, b1, t);
            t = simd.mul_add_e_f64s(s2, b2, t);
            *yi = simd.mul_add_e_f64s(s3, b3, t);
            d0 = simd.mul_add_e_f64s(b0, xi, d0);
            d1 = simd.mul_add_e_f64s(b1, xi, d1);
            d2 = simd.mul_add_e_f64s(b2, xi, d2);
            d3 = simd.mul_add_e_f64s(b3, xi, d3);
        }
        let mut out =
            [simd.reduce_sum_f64s(d0), simd.reduce_sum_f64s(d1), simd.reduce_sum_f64s(d2), simd.reduce_sum_f64s(d3)];
        for (((((yi, &b0), &b1), &b2), &b3), &xi) in yt.iter_mut().zip(a0t).zip(a1t).zip(a2t).zip(a3t).zip(xt) {
            *yi += s[0] * b0 + s[1] * b1 + s[2] * b2 + s[3] * b3;
            out[0] += b0 * xi;
            out[1] += b1 * xi;
            out[2] += b2 * xi;
            out[3] += b3 * xi;
        }
        out
    }
}

/// Splits the columns of an order-`n` lower triangle into `t` contiguous
/// ranges of about equal area; returns the end of range `i`.
fn column_split(n: usize, t: usize, i: usize) -> usize {
    if i + 1 >= t {
        return n;
    }
    // Columns 0..c hold n·c − c(c−1)/2 elements; find c for the share.
    let total = n * (n + 1) / 2;
    let goal = total * (i + 1) / t;
    let (mut lo, mut hi) = (0usize, n);
    while lo < hi {
        let c = (lo + hi) / 2;
        let area = n * c - c * c.saturating_sub(1) / 2;
        if area < goal {
            lo = c + 1;
        } else {
            hi = c;
        }
    }
    lo
}

impl SymOperator<f64> for FaerSymOp<'_> {
    fn dim(&self) -> usize {
        self.n
    }

    fn apply(&mut self, x: MatRef<'_, f64>, mut y: MatMut<'_, f64>) -> Result<(), LinalgError> {
        let n = self.n;
        if x.nrows() != n || y.nrows() != n || x.ncols() != y.ncols() {
            return Err(LinalgError::DimensionMismatch);
        }
        let b = x.ncols();
        if n == 0 || b == 0 {
            return Ok(());
        }
        // X as a contiguous column-major copy (n × b, small next to A).
        let xs: Vec<f64> = match x.as_slice().get(..n * b) {
            Some(s) if x.row_stride() == 1 && (b == 1 || x.col_stride() == n) => s.to_vec(),
            _ => (0..b).flat_map(|t| (0..n).map(move |i| (i, t))).map(|(i, t)| x.at(i, t)).collect(),
        };
        let (a, lda) = (self.a, self.lda);
        let t = self.par.degree().clamp(1, n);
        let mut sum = vec![0.0; n * b];
        if t == 1 {
            symv_cols(a, lda, n, &xs, &mut sum, 0, n);
        } else {
            use rayon::prelude::*;
            let parts: Vec<Vec<f64>> = (0..t)
                .into_par_iter()
                .map(|i| {
                    let c0 = if i == 0 { 0 } else { column_split(n, t, i - 1) };
                    let mut acc = vec![0.0; n * b];
                    symv_cols(a, lda, n, &xs, &mut acc, c0, column_split(n, t, i));
                    acc
                })
                .collect();
            for part in &parts {
                for (s, p) in sum.iter_mut().zip(part) {
                    *s += p;
                }
            }
        }
        for (tcol, chunk) in sum.chunks_exact(n).enumerate() {
            match y.col_mut(tcol) {
                Some(dst) => dst.copy_from_slice(chunk),
                None => chunk.iter().enumerate().for_each(|(i, &v)| *y.at_mut(i, tcol) = v),
            }
        }
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
        let accum = if beta == 0.0 {
            Accum::Replace
        } else if beta == 1.0 {
            Accum::Add
        } else {
            // The solver only ever overwrites or accumulates.
            return ranklet_core::linalg::blas::gemm(alpha, p, q, beta, c);
        };
        if p.ncols() == 0 {
            if beta == 0.0 {
                (0..c.ncols()).for_each(|j| (0..c.nrows()).for_each(|i| *c.at_mut(i, j) = 0.0));
            }
            return Ok(());
        }
        // The Gram–Schmidt products (n × μ by n × b) are too small to pay
        // for a parallel region each; the restart rotations are not.
        let work = c.nrows().saturating_mul(c.ncols()).saturating_mul(p.ncols());
        let (fp, fq) = (input(p), input(q));
        if work >= SMALL_GEMM_WORK || self.par.degree() < 2 {
            let par = if work < SMALL_GEMM_WORK { Par::Seq } else { self.par };
            with_output(&mut c, |c| matmul::matmul(c, accum, fp.get(), fq.get(), alpha, par));
        } else if work >= SPLIT_GEMM_WORK {
            with_output(&mut c, |c| split_matmul(c, accum, fp.get(), fq.get(), alpha));
        } else {
            with_output(&mut c, |c| matmul::matmul(c, accum, fp.get(), fq.get(), alpha, Par::Seq));
        }
        Ok(())
    }

    /// faer's dense decomposition on one thread (the projected matrix has
    /// order ~2k + b): faster than core's tridiagonal QR, which was the
    /// larger part of the solver's serial time at n = 2000.
    fn small_sym_eigen(
        &mut self,
        s: MatRef<'_, f64>,
        vals: &mut [f64],
        mut vecs: MatMut<'_, f64>,
        _work: &mut [f64],
    ) -> Result<(), LinalgError> {
        let m = square(&s)?;
        if vals.len() != m || vecs.nrows() != m || vecs.ncols() != m {
            return Err(LinalgError::DimensionMismatch);
        }
        if m == 0 {
            return Ok(());
        }
        if !lower_finite(s) {
            return Err(LinalgError::NonFinite);
        }
        let fs = input(s);
        with_output(&mut vecs, |v| full_eigen_par(fs.get(), vals, v, Par::Seq))
    }
}

/// Block size of the top-k Lanczos solver when the params leave it at 0.
/// One pass over the matrix serves the whole block, so a block of 4 costs
/// far less than 4 mat-vecs; it needs more of them to converge (hard RBF
/// kernel, k = 50, tol 2e-15: 394 vectors against 281 for b = 1) but was the
/// fastest of b = 1, 2, 4, 8 at n = 3 000 and within noise of b = 2 at
/// n = 2 000 on this 2-core machine (`docs/performance.md`).
pub const HOST_BLOCK: usize = 4;

/// Whether the full faer decomposition beats core's Lanczos top-k solver
/// for `(n, k)` with block size `b`: when the basis `m` (see
/// [`top_k_basis_size`]) exceeds a quarter of `n`. Core itself goes dense
/// when `2(m + b) > n`; on RBF kernels with 2 cores the parallel full
/// decomposition was measured faster up to about `4m ≈ n` (n = 250, k = 50;
/// `docs/performance.md`).
fn top_k_is_dense(n: usize, k: usize, b: usize) -> bool {
    top_k_basis_size(k, b).saturating_mul(4) > n
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

impl FaerBackend {
    // The bodies of the trait methods below that run on the pool (`on_pool`).

    #[allow(clippy::too_many_arguments)]
    fn gemm_lower_here(
        &mut self,
        alpha: f64,
        a: MatRef<'_, f64>,
        a_tri: Tri,
        b: MatRef<'_, f64>,
        b_tri: Tri,
        beta: f64,
        mut c: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        ranklet_core::backend::check_gemm_lower(&a, a_tri, &b, b_tri, &c)?;
        let (m, n) = (a.nrows(), b.ncols());
        // faer's triangular dst must be square; other shapes, and a β other
        // than 0 or 1, go through core's row blocks.
        if m != n || !(beta == 0.0 || beta == 1.0) {
            return ranklet_core::backend::gemm_lower_by_blocks(self, alpha, a, a_tri, b, b_tri, beta, c);
        }
        let par_checks = self.parallel();
        // A triangular operand is checked on its triangle only (the rest
        // is zero by contract and never read).
        let finite = |x: MatRef<'_, f64>, t: Tri| match t {
            Tri::Full => kernel_par::all_finite(par_checks, x),
            Tri::Lower => kernel_par::lower_finite(par_checks, x),
            Tri::Upper => kernel_par::lower_finite(par_checks, x.t()),
        };
        if !alpha.is_finite() || !finite(a, a_tri) || !finite(b, b_tri) {
            return Err(LinalgError::NonFinite);
        }
        if beta != 0.0 && !kernel_par::lower_finite(par_checks, c.rb()) {
            return Err(LinalgError::NonFinite);
        }
        if m == 0 {
            return Ok(());
        }
        let structure = |t: Tri| match t {
            Tri::Full => BlockStructure::Rectangular,
            Tri::Lower => BlockStructure::TriangularLower,
            Tri::Upper => BlockStructure::TriangularUpper,
        };
        let accum = if beta == 0.0 { Accum::Replace } else { Accum::Add };
        let par = if m <= SMALL_OUTPUT { Par::Seq } else { self.par };
        let (fa, fb) = (input(a), input(b));
        // One operand full and the other triangular: faer recurses with
        // sequential steps there (measured: 1.4× from a second core at
        // n = 1 000 against 1.9× by row ranges); otherwise faer's own
        // parallel product (1.9× for `Cᵀ·C`, upper × lower).
        let one_full = (a_tri == Tri::Full) != (b_tri == Tri::Full);
        if par.degree() >= 2 && one_full {
            let threads = par.degree();
            with_output(&mut c, |c| gemm_lower_rows(c, accum, fa.get(), a_tri, fb.get(), b_tri, alpha, threads));
            return Ok(());
        }
        with_output(&mut c, |c| {
            matmul::triangular::matmul(
                c,
                BlockStructure::TriangularLower,
                accum,
                fa.get(),
                structure(a_tri),
                fb.get(),
                structure(b_tri),
                alpha,
                par,
            )
        });
        Ok(())
    }

    fn cholesky_in_place_here(&mut self, mut a: MatMut<'_, f64>) -> Result<(), LinalgError> {
        let n = square(&a.rb())?;
        if !kernel_par::lower_finite(self.parallel(), a.rb()) {
            return Err(LinalgError::NonFinite);
        }
        if n == 0 {
            return Ok(());
        }
        let par = self.par;
        let threads = par.degree();
        let res = if threads >= 2 && n > CHOL_LEAF {
            // On a worker of the pool, so that the recursion's parallel
            // regions are forked there rather than each injected from this
            // thread and waited for.
            with_output(&mut a, |l| rayon::scope(|_| cholesky_recursive(l, threads)))
        } else {
            with_output(&mut a, |l| {
                let req = llt::factor::cholesky_in_place_scratch::<f64>(n, par, Default::default());
                let mut mem = MemBuffer::new(req);
                match llt::factor::cholesky_in_place(
                    l,
                    Default::default(),
                    par,
                    MemStack::new(&mut mem),
                    Default::default(),
                ) {
                    Ok(_) => Ok(()),
                    Err(llt::factor::LltError::NonPositivePivot { index }) => Err(index),
                }
            })
        };
        if let Err(index) = res {
            return Err(LinalgError::NotPositiveDefinite { index });
        }
        // A pivot that came out non-finite (overflow) is not a usable factor.
        match kernel_par::zero_upper_check_diag(self.parallel(), a) {
            Some(index) => Err(LinalgError::NotPositiveDefinite { index }),
            None => Ok(()),
        }
    }

    fn solve_lower_lower_in_place_here(
        &mut self,
        l: MatRef<'_, f64>,
        mut b: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        let n = square(&l)?;
        if b.nrows() != n || b.ncols() != n {
            return Err(LinalgError::DimensionMismatch);
        }
        if !kernel_par::lower_finite(self.parallel(), l) {
            return Err(LinalgError::NonFinite);
        }
        if let Some(index) = (0..n).find(|&j| l.at(j, j) == 0.0) {
            return Err(LinalgError::Singular { index });
        }
        if n == 0 {
            return Ok(());
        }
        let fl = input(l);
        let Some((data, cs)) = kernel_par::col_major(&mut b) else {
            return ranklet_core::backend::solve_lower_lower_by_blocks(self, l, b);
        };
        let lf = fl.get();
        let blocks = data.chunks_mut(cs * SOLVE_BLOCK).enumerate().map(|(i, chunk)| (i * SOLVE_BLOCK, chunk));
        let solve = |(c0, chunk): (usize, &mut [f64])| {
            // Columns in this chunk: SOLVE_BLOCK, or fewer in the last one
            // (trimmed to end at its last entry).
            let w = (chunk.len() + cs - n) / cs;
            let rows_finite =
                |chunk: &[f64]| (0..w).all(|j| ranklet_core::linalg::slice_finite(&chunk[j * cs + c0..j * cs + n]));
            if !rows_finite(chunk) {
                return false;
            }
            let x = faer::MatMut::from_column_major_slice_with_stride_mut(chunk, n, w, cs);
            faer::linalg::triangular_solve::solve_lower_triangular_in_place(
                lf.submatrix(c0, c0, n - c0, n - c0),
                x.subrows_mut(c0, n - c0),
                Par::Seq,
            );
            rows_finite(chunk)
        };
        let threads = self.par.degree().min(n.div_ceil(SOLVE_BLOCK));
        let ok = if threads < 2 {
            let mut blocks = blocks;
            blocks.all(solve)
        } else {
            let queue = std::sync::Mutex::new(blocks);
            let next = || queue.lock().ok().and_then(|mut q| q.next());
            let worker = |_| {
                let mut ok = true;
                while let Some(block) = next() {
                    ok &= solve(block);
                }
                ok
            };
            use rayon::prelude::*;
            (0..threads).into_par_iter().with_max_len(1).map(worker).reduce(|| true, |a, b| a && b)
        };
        if ok {
            Ok(())
        } else {
            Err(LinalgError::NonFinite)
        }
    }
}

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
        let par = if c.nrows().max(c.ncols()) <= SMALL_OUTPUT { Par::Seq } else { self.par };
        // The checks on every thread when the product is (an n × n by
        // n × 1 product reads as much as it checks).
        let par_checks = !matches!(par, Par::Seq);
        if !alpha.is_finite()
            || !beta.is_finite()
            || !kernel_par::all_finite(par_checks, a)
            || !kernel_par::all_finite(par_checks, b)
        {
            return Err(LinalgError::NonFinite);
        }
        if beta != 0.0 && !kernel_par::all_finite(par_checks, c.rb()) {
            return Err(LinalgError::NonFinite);
        }
        if m == 0 || n == 0 {
            return Ok(());
        }
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

    /// One parallel region for the whole matrix instead of core's row
    /// blocks with one parallel gemm and its barriers each: with one full
    /// and one triangular operand, row ranges of equal work run
    /// concurrently ([`gemm_lower_rows`]); otherwise faer's triangular
    /// product (which splits recursively and skips the zero blocks). On a
    /// pool worker ([`on_pool`]) with its checks.
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
        let par = self.par;
        on_pool(par, || self.gemm_lower_here(alpha, a, a_tri, b, b_tri, beta, c))
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
        if !kernel_par::lower_finite(self.parallel(), a) {
            return Err(LinalgError::NonFinite);
        }
        self.last_top_k = None;
        if k == 0 {
            return Ok(());
        }
        let params = if self.params.block == 0 { self.params.with_block(HOST_BLOCK) } else { self.params };
        if !top_k_is_dense(n, k, params.block) {
            // The operator reads the lower triangle only, in place when `a`
            // is column-major (else from a column-major copy).
            let copy;
            let (data, lda) = match (a.row_stride(), a.col_stride()) {
                (1, cs) if cs >= n && a.as_slice().len() >= (n - 1) * cs + n => (a.as_slice(), cs),
                _ => {
                    copy = (0..n)
                        .flat_map(|j| (0..n).map(move |i| (i, j)))
                        .map(|(i, j)| if i >= j { a.at(i, j) } else { 0.0 })
                        .collect::<Vec<f64>>();
                    (&copy[..], n)
                }
            };
            let mut op = FaerSymOp { a: data, lda, n, par: self.par };
            let needed = top_k_workspace_len_with(n, k, &params);
            if self.work.len() < needed {
                self.work.resize(needed, 0.0);
            }
            let work = &mut self.work[..needed];
            // With several threads the solver runs on a worker of rayon's
            // pool, so that the parallel products it starts (one or more per
            // block step) are joined by work stealing rather than injected
            // from outside the pool and waited for.
            let res = if self.par.degree() >= 2 {
                let vecs = vecs.rb_mut();
                rayon::scope(|_| sym_eigen_top_k(&mut op, vals, vecs, work, &params))
            } else {
                sym_eigen_top_k(&mut op, vals, vecs.rb_mut(), work, &params)
            };
            match res {
                // Tightly clustered top eigenvalues (e.g. a long 1-D
                // Laplacian) can exhaust the Lanczos budget; the host can
                // afford the full decomposition instead of failing.
                Err(LinalgError::NoConvergence { .. }) => {}
                other => {
                    self.last_top_k = other.ok();
                    return other.map(|_| ());
                }
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

    /// faer's Cholesky, or above order [`CHOL_LEAF`] with two or more
    /// threads [`cholesky_recursive`]; the input check, the factorisation
    /// and the zeroing of the upper triangle on a pool worker
    /// ([`on_pool`]).
    fn cholesky_in_place(&mut self, a: MatMut<'_, f64>) -> Result<(), LinalgError> {
        let par = self.par;
        on_pool(par, || self.cholesky_in_place_here(a))
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
        let par_checks = self.parallel();
        if !kernel_par::lower_finite(par_checks, l) || !kernel_par::all_finite(par_checks, b.rb()) {
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
        if kernel_par::all_finite(par_checks, b.rb()) {
            Ok(())
        } else {
            Err(LinalgError::NonFinite)
        }
    }

    /// The column blocks of [`SOLVE_BLOCK`] columns are independent
    /// (block `[c0, c1)` is `L[c0.., c0..]⁻¹·B[c0.., c0..c1]`): they run
    /// concurrently, each a single-threaded faer solve with the finiteness
    /// checks of its input and result in the same task, largest first,
    /// handed to the threads one at a time (greedy: a thread takes the
    /// next block when it is done). One parallel region per call instead
    /// of one per block with faer's barriers inside each, and the same
    /// arithmetic for every thread count. `L` is checked once.
    fn solve_lower_lower_in_place(&mut self, l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        let par = self.par;
        on_pool(par, || self.solve_lower_lower_in_place_here(l, b))
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

    fn pair_sq_dists(&mut self, c: MatRef<'_, f64>, pairs: &[Pair], out: &mut [f64]) -> Result<(), LinalgError> {
        kernel_par::pair_sq_dists(self.parallel(), c, pairs, out)
    }

    fn pair_scatter(
        &mut self,
        a: MatRef<'_, f64>,
        a_tri: Tri,
        pairs: &[Pair],
        tau: &[f64],
        out: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        kernel_par::pair_scatter(self.parallel(), a, a_tri, pairs, tau, out)
    }

    fn laplacian_columns(
        &mut self,
        pairs: &[Pair],
        tau: &[f64],
        q: MatMut<'_, f64>,
        tmp: &mut [f64],
    ) -> Result<(), LinalgError> {
        kernel_par::laplacian_columns(self.parallel(), pairs, tau, q, tmp)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The fused lower-triangle product against a naive full product, for
    /// orders around the four-column and SIMD-lane remainders, blocks of 1
    /// to 5 vectors, 1 to 3 threads, a leading dimension larger than `n`
    /// and NaN in the unread upper triangle. Tolerance: both sums have n
    /// terms of size ≤ max|a|·max|x|, so they differ by at most about
    /// 2n·ε·max|a|·max|x| (1e-12 covers n ≤ 130 with a wide margin).
    #[test]
    fn fused_symmetric_product_equals_the_full_product() {
        let mut state = 0x1234_5678_u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 11) as f64) / (1u64 << 53) as f64 - 0.5
        };
        for n in [1usize, 2, 3, 4, 5, 7, 8, 9, 63, 64, 65, 130] {
            let lda = n + 3;
            let mut full = vec![0.0; n * n];
            let mut stored = vec![f64::NAN; lda * n];
            for j in 0..n {
                for i in j..n {
                    let v = next();
                    full[i + j * n] = v;
                    full[j + i * n] = v;
                    stored[i + j * lda] = v;
                }
            }
            for b in 1..=5 {
                let x: Vec<f64> = (0..n * b).map(|_| next()).collect();
                let mut want = vec![0.0; n * b];
                for t in 0..b {
                    for c in 0..n {
                        for r in 0..n {
                            want[r + t * n] += full[r + c * n] * x[c + t * n];
                        }
                    }
                }
                for threads in [1, 2, 3] {
                    let mut op = FaerSymOp { a: &stored, lda, n, par: Par::rayon(threads) };
                    let mut y = vec![0.0; n * b];
                    op.apply(MatRef::from_col_major(&x, n, b).unwrap(), MatMut::from_col_major(&mut y, n, b).unwrap())
                        .unwrap();
                    for (i, (g, w)) in y.iter().zip(&want).enumerate() {
                        assert!((g - w).abs() <= 1e-12, "n={n} b={b} t={threads} entry {i}: {g} vs {w}");
                    }
                }
            }
        }
    }

    /// Both halves of [`split_matmul`] (rows of a tall output; the inner
    /// dimension of a small one), overwriting and accumulating, against a
    /// naive triple loop: the same sums in another order, so within
    /// k·ε·Σ|p||q| ≤ 1e-12 for these sizes (k ≤ 301, entries in ±0.5).
    #[test]
    fn split_products_equal_the_naive_product() {
        let mut state = 0x9e37_79b9_u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 11) as f64) / (1u64 << 53) as f64 - 0.5
        };
        // (m, k, b): W − V·C (tall, rows split), Vᵀ·W (small, inner split), odd sizes.
        for (m, k, b, transposed) in [(1201, 37, 4, false), (301, 1201, 4, true), (513, 2, 3, false), (7, 301, 1, true)]
        {
            let pd: Vec<f64> = (0..m * k).map(|_| next()).collect();
            let qd: Vec<f64> = (0..k * b).map(|_| next()).collect();
            let c0: Vec<f64> = (0..m * b).map(|_| next()).collect();
            // p as m × k: column-major, or the transpose of a column-major k × m.
            let pa = |i: usize, l: usize| if transposed { pd[l + i * k] } else { pd[i + l * m] };
            let pv = if transposed {
                faer::MatRef::from_column_major_slice(&pd, k, m).transpose()
            } else {
                faer::MatRef::from_column_major_slice(&pd, m, k)
            };
            let qv = faer::MatRef::from_column_major_slice(&qd, k, b);
            for accum in [Accum::Replace, Accum::Add] {
                let mut c = c0.clone();
                split_matmul(faer::MatMut::from_column_major_slice_mut(&mut c, m, b), accum, pv, qv, -1.5);
                for j in 0..b {
                    for i in 0..m {
                        let mut want = if matches!(accum, Accum::Add) { c0[i + j * m] } else { 0.0 };
                        for l in 0..k {
                            want -= 1.5 * pa(i, l) * qd[l + j * k];
                        }
                        assert!((c[i + j * m] - want).abs() <= 1e-12, "m={m} k={k} ({i},{j})");
                    }
                }
            }
        }
    }

    #[test]
    fn column_split_balances_the_triangle() {
        for n in [1usize, 2, 10, 1000, 2001] {
            for t in 1..=4 {
                let ends: Vec<usize> = (0..t).map(|i| column_split(n, t, i)).collect();
                assert_eq!(*ends.last().unwrap(), n);
                assert!(ends.windows(2).all(|w| w[0] <= w[1]), "{ends:?}");
                if n >= 1000 {
                    // Each range holds ≈ 1/t of the n(n+1)/2 elements (± one column).
                    let area = |c: usize| n * c - c * c.saturating_sub(1) / 2;
                    let mut prev = 0;
                    for &e in &ends {
                        let share = (area(e) - area(prev)) as f64 / (n * (n + 1) / 2) as f64;
                        assert!((share - 1.0 / t as f64).abs() < 2.0 / n as f64 + 1e-12, "n={n} t={t} {ends:?}");
                        prev = e;
                    }
                }
            }
        }
    }
}
