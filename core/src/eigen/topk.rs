//! The k algebraically largest eigenpairs of a symmetric operator, in
//! O(n²k) for k ≪ n.
//!
//! # Method
//!
//! Thick-restart Lanczos with full reorthogonalisation and locking (Wu &
//! Simon, SIAM J. Matrix Anal. Appl. 22 (2000) 602–616; mathematically the
//! implicit restart of ARPACK, Sorensen 1992, and the Krylov–Schur restart of
//! Stewart, SIAM J. Matrix Anal. Appl. 23 (2001); Golub & Van Loan 4th ed.
//! §10.1–10.3), in block form for a block size `b` ≥ 1 (`b = 1` is the
//! classical single-vector method):
//!
//! 1. **Expansion.** The basis `V = [v₁ … v_μ]` is orthonormal and its next
//!    block `Q` (n × b) is orthonormal to it. `W = A·Q` is orthogonalised by
//!    classical Gram–Schmidt applied twice (CGS2, a third pass when a column
//!    still loses half its norm, the Daniel–Gragg–Kaufman–Stewart test),
//!    each pass two matrix products through [`SymOperator::gemm`]:
//!    `C = [V Q]ᵀ·W`, `W ← W − [V Q]·C`. The coefficients are the new
//!    columns of `H = VᵀAV`; `W = Q'·R` (in-block Gram–Schmidt) gives the
//!    next block, so that `A·V_μ = V_μ·H_μ + Q·R·E_μᵀ` (Lanczos relation,
//!    `E_μ` the last `b` columns of the identity).
//! 2. **Rayleigh–Ritz.** When `μ` reaches the basis size `m`, `H` (dense
//!    `m × m`, its upper triangle as computed; tridiagonal plus an arrow
//!    after restarts) is diagonalised, `H = YΘYᵀ`; the Ritz pair
//!    `(θᵢ, V·yᵢ)` has residual `‖A·V·yᵢ − θᵢ·V·yᵢ‖₂ = ‖R·E_μᵀyᵢ‖₂` (exact
//!    while `V` is orthonormal, which CGS2 keeps to rounding).
//! 3. **Convergence**: every wanted pair (the `k` largest Ritz values) has
//!    that residual ≤ `tol·‖A‖`, with `‖A‖` estimated by the largest |Ritz
//!    value| seen (a lower bound that is sharp for the kernel matrices).
//! 4. **Thick restart** (Wu–Simon §3): keep `l` Ritz vectors, `V ← V·Y_l`,
//!    `H ← diag(θ₁…θ_l)`, and continue from the same `Q`; the couplings
//!    `Vᵀ·A·Q = (R·E_μᵀY_l)ᵀ` (the arrow) come back out of the next CGS.
//!    `l = k + ⌊(m − k)/2⌋` (capped at `m − b`), so each cycle adds about
//!    `(m − k)/2` vectors.
//! 5. **Locking.** A converged wanted pair is moved to the front of `V` and
//!    no longer rotated; its couplings to later vectors (≤ tol·‖A‖) are set to
//!    zero, which deflates it (a perturbation of `A` by at most its residual)
//!    while CGS keeps later vectors orthogonal to it.
//!
//! The basis size is `m = max(2k + 1, k + 20) + b − 1` (ARPACK's `ncv =
//! 2k + 1` rule, with at least 20 spare vectors for small `k` so that each
//! restart adds enough new directions; `b − 1` more so a block step fits).
//!
//! The returned pairs are checked with explicit residuals (`k` more operator
//! applications), reported in [`TopKInfo::max_residual`].
//!
//! A single-vector Krylov space holds one direction of each eigenspace, so
//! an eigenvalue of multiplicity above `b` can be found only through
//! rounding errors, as in ARPACK; multiplicities up to `b` are found.
//!
//! Directions that vanish under orthogonalisation (an invariant subspace was
//! found, e.g. a rank-deficient kernel matrix) are replaced by deterministic
//! pseudo-random vectors (xorshift64*, fixed seed), so the results are
//! reproducible bit for bit on one platform.
//!
//! When the basis would not be much smaller than the matrix (`2(m + b) > n`,
//! which includes `k = n` and tiny `n`), the solver forms `A` by applying the
//! operator to the identity and calls the full solver instead.

use super::tridiag::{sym_eigen, sym_eigen_workspace_len};
use super::EigenParams;
use crate::linalg::blas::{dot_unchecked, gemm, nrm2};
use crate::{LinalgError, MatMut, MatRef, Real};

/// Block size used when [`EigenParams::block`] is 0.
pub const DEFAULT_BLOCK: usize = 1;
/// Largest block size; larger requests are clamped to it.
pub const MAX_BLOCK: usize = 16;

/// A symmetric linear operator applied to a block of vectors: the top-k
/// solver only ever touches `A` through this, so a backend can supply its own
/// (parallel) matrix product.
pub trait SymOperator<T: Real> {
    /// The dimension `n` of the square operator.
    fn dim(&self) -> usize;
    /// `Y ← A·X` for `X`, `Y` of shape `n × b`.
    fn apply(&mut self, x: MatRef<'_, T>, y: MatMut<'_, T>) -> Result<(), LinalgError>;

    /// `C ← α·P·Q + β·C` for the solver's own dense products: the Gram–Schmidt
    /// projections `Vᵀ·W`, `W − V·C` (O(n·m·b) per block) and the restart
    /// rotations `V·Y` (O(n·m²) per restart). The default is core's gemm; an
    /// operator backed by a parallel library can route them there too. `β`
    /// is 0 or 1.
    fn gemm(
        &mut self,
        alpha: T,
        p: MatRef<'_, T>,
        q: MatRef<'_, T>,
        beta: T,
        c: MatMut<'_, T>,
    ) -> Result<(), LinalgError> {
        gemm(alpha, p, q, beta, c)
    }

    /// All eigenpairs of the small projected matrix `s` (order `m` ≤ the
    /// basis size, lower triangle read) in Rayleigh–Ritz: eigenvalues
    /// ascending into `vals`, orthonormal eigenvectors into `vecs`. `work`
    /// has [`sym_eigen_workspace_len`]`(m)` elements. The default is core's
    /// [`sym_eigen`]; a backend may use its own (faster) dense solver.
    fn small_sym_eigen(
        &mut self,
        s: MatRef<'_, T>,
        vals: &mut [T],
        vecs: MatMut<'_, T>,
        work: &mut [T],
    ) -> Result<(), LinalgError> {
        sym_eigen(s, vals, Some(vecs), work, &EigenParams::default())
    }
}

/// A dense symmetric matrix as a [`SymOperator`], applied with
/// [`crate::linalg::blas::gemm`].
///
/// Unlike [`super::tridiag::sym_eigen`], the **whole** matrix is read (both
/// triangles); it must be symmetric, which is not checked.
#[derive(Clone, Copy, Debug)]
pub struct DenseSymOp<'a, T> {
    a: MatRef<'a, T>,
}

impl<'a, T: Real> DenseSymOp<'a, T> {
    /// Wraps a square view.
    ///
    /// # Errors
    ///
    /// [`LinalgError::DimensionMismatch`] if `a` is not square.
    pub fn new(a: MatRef<'a, T>) -> Result<Self, LinalgError> {
        if !a.is_square() {
            return Err(LinalgError::DimensionMismatch);
        }
        Ok(Self { a })
    }
}

impl<T: Real> SymOperator<T> for DenseSymOp<'_, T> {
    fn dim(&self) -> usize {
        self.a.nrows()
    }
    fn apply(&mut self, x: MatRef<'_, T>, y: MatMut<'_, T>) -> Result<(), LinalgError> {
        gemm(T::ONE, self.a, x, T::ZERO, y)
    }
}

/// What [`sym_eigen_top_k`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct TopKInfo {
    /// Rayleigh–Ritz cycles (restarts + 1); 0 on the dense path.
    pub iterations: usize,
    /// Operator applications, counted in vectors (`apply` on an `n × b`
    /// block counts `b`), including the `k` of the final residual check;
    /// `n` on the dense path.
    pub applies: usize,
    /// Largest explicit ‖A·x − θ·x‖₂ / ‖A‖ over the returned pairs (‖A‖
    /// estimated by the largest |Ritz value|); 0 on the dense path, which is
    /// exact to rounding.
    pub max_residual: f64,
    /// Pairs locked before the last cycle.
    pub locked: usize,
    /// Block size used (0 on the dense path).
    pub block: usize,
    /// Basis size `m` (0 on the dense path).
    pub basis: usize,
}

/// The block size `params` ask for, clamped to `1..=MAX_BLOCK`.
fn block_size(params: &EigenParams) -> usize {
    if params.block == 0 {
        DEFAULT_BLOCK
    } else {
        params.block.min(MAX_BLOCK)
    }
}

/// Basis size `m` for `k` wanted pairs and block size `b`:
/// `max(2k + 1, k + 20) + b − 1`.
pub fn top_k_basis_size(k: usize, b: usize) -> usize {
    let two_k = k.saturating_mul(2).saturating_add(1);
    two_k.max(k.saturating_add(20)).saturating_add(b.saturating_sub(1))
}

fn use_dense(n: usize, k: usize, b: usize) -> bool {
    top_k_basis_size(k, b).saturating_add(b) > n / 2 // ⇔ 2(m + b) > n, without overflow
}

/// Workspace length (elements of `T`) that [`sym_eigen_top_k`] needs for
/// dimension `n`, `k` wanted pairs and the default params (block size
/// [`DEFAULT_BLOCK`]); see [`top_k_workspace_len_with`].
pub fn top_k_workspace_len(n: usize, k: usize) -> usize {
    top_k_workspace_len_with(n, k, &EigenParams::default())
}

/// Workspace length for the block size of `params`: with `b` that block
/// size and `m = `[`top_k_basis_size`]`(k, b)`,
/// `n·(2m + b) + (m + b)² + 2m² + (m + b)·b + 3m + sym_eigen_workspace_len(m)`,
/// or `2n² + n + sym_eigen_workspace_len(n)` when `2(m + b) > n` (dense
/// path). For k ≪ n this is about `2n·m ≈ 4n·k`.
pub fn top_k_workspace_len_with(n: usize, k: usize, params: &EigenParams) -> usize {
    if k == 0 {
        return 0;
    }
    let b = block_size(params);
    // Saturating: an absurd n gives usize::MAX (then WorkspaceTooSmall).
    if use_dense(n, k, b) {
        DenseScratch::<f64>::len(n)
    } else {
        LanczosScratch::<f64>::len(n, top_k_basis_size(k, b), b)
    }
}

crate::scratch! {
    /// Scratch of the Lanczos path.
    struct LanczosScratch<T: Real>(n: usize, m: usize, b: usize) {
        /// The basis `V` (`n × m`) and the next block (`n × b`).
        v: n.saturating_mul(m.saturating_add(b)),
        /// Rotated Ritz vectors at a restart, `A·X` at the end (`n × m`).
        tmp: n.saturating_mul(m),
        /// `H = VᵀAV` (upper triangle) and the couplings `R` below it.
        h: m.saturating_add(b).saturating_mul(m.saturating_add(b)),
        /// The active block of `H`, symmetrised, then the kept eigenvectors.
        s: m.saturating_mul(m),
        /// Eigenvectors of the active block.
        y: m.saturating_mul(m),
        /// Its eigenvalues (ascending).
        theta: m,
        /// Residual estimates, descending order of the Ritz values.
        est: m,
        /// Values of the locked pairs (columns `0..nlock` of `V`).
        lockval: m,
        /// Gram–Schmidt coefficients (`(μ + b) × b`).
        coef: m.saturating_add(b).saturating_mul(b),
        /// The small dense eigensolver.
        ws: sym_eigen_workspace_len(m),
    }
}

crate::scratch! {
    /// Scratch of the dense path (`2(m + b) > n`).
    struct DenseScratch<T: Real>(n: usize) {
        /// The matrix, materialised.
        x: n.saturating_mul(n),
        /// Its eigenvectors.
        a: n.saturating_mul(n),
        /// All eigenvalues.
        full: n,
        /// The dense eigensolver.
        ws: sym_eigen_workspace_len(n),
    }
}

/// Deterministic pseudo-random numbers in [-1, 1) (xorshift64*, Vigna 2016).
struct XorShift(u64);

impl XorShift {
    fn next<T: Real>(&mut self) -> T {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        T::from_f64(((r >> 11) as f64) * (2.0 / (1u64 << 53) as f64) - 1.0)
    }
}

/// The `k = vals.len()` algebraically largest eigenvalues of the symmetric
/// operator `op`, in **descending** order, with orthonormal eigenvectors as
/// the columns of `vecs` (column `i` ↔ `vals[i]`).
///
/// # Arguments
///
/// - `op`: the operator; see [`DenseSymOp`] for a dense matrix.
/// - `vals`: output, length `k` (`0 ≤ k ≤ n`); `k = 0` returns at once with
///   a zero [`TopKInfo`].
/// - `vecs`: output `n × k` view of any stride.
/// - `work`: at least [`top_k_workspace_len_with`]`(n, k, params)` elements
///   ([`top_k_workspace_len`] for the default params).
/// - `params`: `tol` is the relative residual target: each returned pair
///   satisfies ‖A·x − λ·x‖₂ ≤ tol·‖A‖₂ (to rounding, see `max_residual`);
///   `tol = 0` means the default `1000·ε` (2.2e-13 in f64, 1.2e-4 in f32).
///   `max_iter` bounds the Rayleigh–Ritz cycles (default 60). `block` is the
///   block size (default [`DEFAULT_BLOCK`]).
///
/// # Accuracy
///
/// Residuals as above; each eigenvalue is then within tol·‖A‖ of an exact
/// one, and within (tol·‖A‖)²/gap of it when separated by `gap` from the
/// rest of the spectrum.
///
/// # Cost
///
/// Operator applications: `m` in the first cycle, about `(m − k)/2` per
/// restart, `k` for the final check (counted in [`TopKInfo::applies`]);
/// O(n·m) per applied vector for orthogonalisation and O(n·m²) per restart.
///
/// # Errors
///
/// - [`LinalgError::InvalidParameter`]: `k > n`;
/// - [`LinalgError::DimensionMismatch`]: `vecs` not `n × k`;
/// - [`LinalgError::WorkspaceTooSmall`];
/// - [`LinalgError::NonFinite`]: the operator produced NaN/Inf;
/// - [`LinalgError::NoConvergence`]: the wanted pairs were not all within
///   `tol` after `max_iter` cycles (`iterations` = cycles done);
/// - any error of `op.apply` or `op.gemm`.
///
/// # Examples
///
/// ```
/// use ranklet_core::eigen::topk::{sym_eigen_top_k, top_k_workspace_len, DenseSymOp};
/// use ranklet_core::eigen::EigenParams;
/// use ranklet_core::{MatMut, MatRef};
/// let n = 3;
/// let a = [2.0, 0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0, 1.0];
/// let mut op = DenseSymOp::new(MatRef::from_col_major(&a, n, n).unwrap()).unwrap();
/// let mut vals = [0.0f64; 2];
/// let mut v = [0.0; 6];
/// let mut work = vec![0.0; top_k_workspace_len(n, 2)];
/// sym_eigen_top_k(&mut op, &mut vals, MatMut::from_col_major(&mut v, n, 2).unwrap(), &mut work, &EigenParams::default())
///     .unwrap();
/// assert!((vals[0] - 5.0).abs() < 1e-14 && (vals[1] - 2.0).abs() < 1e-14);
/// ```
pub fn sym_eigen_top_k<T: Real, O: SymOperator<T>>(
    op: &mut O,
    vals: &mut [T],
    vecs: MatMut<'_, T>,
    work: &mut [T],
    params: &EigenParams,
) -> Result<TopKInfo, LinalgError> {
    let n = op.dim();
    let k = vals.len();
    if k > n {
        return Err(LinalgError::InvalidParameter);
    }
    if vecs.nrows() != n || vecs.ncols() != k {
        return Err(LinalgError::DimensionMismatch);
    }
    let needed = top_k_workspace_len_with(n, k, params);
    if work.len() < needed {
        return Err(LinalgError::WorkspaceTooSmall { needed, got: work.len() });
    }
    if k == 0 {
        return Ok(TopKInfo::default());
    }
    let b = block_size(params);
    if use_dense(n, k, b) {
        return dense_top_k(op, vals, vecs, work, params);
    }
    let m = top_k_basis_size(k, b);
    let tol = if params.tol > 0.0 { T::from_f64(params.tol) } else { T::from_f64(1000.0) * T::EPSILON };
    let (sc, _) = LanczosScratch::split(work, n, m, b)?;
    let mut st = Lanczos {
        n,
        m,
        b,
        ldh: m + b,
        mu: 0,
        nlock: 0,
        anorm: T::ZERO,
        rng: XorShift(0x9E37_79B9_7F4A_7C15),
        info: TopKInfo { block: b, basis: m, ..TopKInfo::default() },
        sc,
    };
    st.run(op, vals, vecs, k, tol, params.max_iter)
}

/// State of the thick-restart Lanczos process.
struct Lanczos<'w, T: Real> {
    n: usize,
    m: usize,
    b: usize,
    /// Leading dimension of `h` (`m + b`).
    ldh: usize,
    /// Basis vectors whose columns of `H` are known; the next block is
    /// `V[:, μ..μ+b]`.
    mu: usize,
    /// Locked pairs: `V[:, 0..nlock]`, values in `lockval`.
    nlock: usize,
    anorm: T,
    rng: XorShift,
    info: TopKInfo,
    sc: LanczosScratch<'w, T>,
}

impl<T: Real> Lanczos<'_, T> {
    fn run<O: SymOperator<T>>(
        &mut self,
        op: &mut O,
        vals: &mut [T],
        vecs: MatMut<'_, T>,
        k: usize,
        tol: T,
        max_iter: usize,
    ) -> Result<TopKInfo, LinalgError> {
        let (n, m, b) = (self.n, self.m, self.b);
        // First block: pseudo-random, orthonormalised.
        for x in self.sc.v[..n * b].iter_mut() {
            *x = self.rng.next();
        }
        self.sc.h.iter_mut().for_each(|x| *x = T::ZERO);
        self.orthonormalise_block(op, 0, T::ONE)?;
        let mut cycle = 0;
        loop {
            while self.mu + b <= m {
                self.expand(op)?;
            }
            cycle += 1;
            self.info.iterations = cycle;
            let ma = self.rayleigh_ritz(op)?;
            let thr = tol * self.anorm;
            // Wanted active pairs: rank among locked ∪ active below k. The
            // active values are descending, so they form a prefix.
            let mut wa = 0;
            while wa < ma {
                let th = self.theta_desc(ma, wa);
                let above = self.sc.lockval[..self.nlock].iter().filter(|&&l| l > th).count();
                if wa + above >= k {
                    break;
                }
                wa += 1;
            }
            let done = self.sc.est[..wa].iter().all(|&e| e <= thr);
            if done {
                return self.finish(op, vals, vecs, k, ma, wa);
            }
            if cycle > max_iter {
                return Err(LinalgError::NoConvergence { iterations: cycle });
            }
            self.restart(op, k, ma, wa, thr)?;
        }
    }

    /// Active Ritz value number `i` in descending order.
    fn theta_desc(&self, ma: usize, i: usize) -> T {
        self.sc.theta[ma - 1 - i]
    }

    /// One block step (1. in the module docs): `W = A·Q`, CGS2 against
    /// `[V Q]`, `W = Q'·R`.
    fn expand<O: SymOperator<T>>(&mut self, op: &mut O) -> Result<(), LinalgError> {
        let (n, b, mu, ldh) = (self.n, self.b, self.mu, self.ldh);
        let j = mu + b;
        let mut big = T::ZERO;
        {
            let (lo, hi) = self.sc.v.split_at_mut(j * n);
            let q = MatRef::from_col_major(&lo[mu * n..], n, b)?;
            op.apply(q, MatMut::from_col_major(&mut hi[..b * n], n, b)?)?;
            self.info.applies += b;
            for w in hi[..b * n].chunks_exact(n) {
                let nw = norm(w);
                if !nw.is_finite() {
                    return Err(LinalgError::NonFinite);
                }
                big = big.max(nw);
            }
        }
        // CGS against the j columns, twice (a third or fourth time for a
        // column that still lost more than half its norm).
        let mut before = [T::ZERO; MAX_BLOCK];
        for (c, bc) in before.iter_mut().enumerate().take(b) {
            *bc = norm(&self.sc.v[(j + c) * n..(j + c + 1) * n]);
        }
        let mut pass = 0;
        loop {
            let (lo, hi) = self.sc.v.split_at_mut(j * n);
            let vm = MatRef::from_col_major(lo, n, j)?;
            let w = &mut hi[..b * n];
            let coef = &mut self.sc.coef[..j * b];
            op.gemm(T::ONE, vm.t(), MatRef::from_col_major(w, n, b)?, T::ZERO, MatMut::from_col_major(coef, j, b)?)?;
            op.gemm(-T::ONE, vm, MatRef::from_col_major(coef, j, b)?, T::ONE, MatMut::from_col_major(w, n, b)?)?;
            for c in 0..b {
                let hc = &mut self.sc.h[(mu + c) * ldh..(mu + c) * ldh + j];
                for (hr, &cr) in hc.iter_mut().zip(&coef[c * j..(c + 1) * j]) {
                    *hr += cr;
                }
            }
            pass += 1;
            let mut again = false;
            for (c, bc) in before.iter_mut().enumerate().take(b) {
                let after = norm(&w[c * n..(c + 1) * n]);
                again |= after < T::from_f64(0.5) * *bc;
                *bc = after;
            }
            if pass >= 4 || (pass >= 2 && !again) {
                break;
            }
        }
        // Locked pairs are deflated: their couplings (≤ their residuals)
        // are dropped from H (the vectors stay orthogonal to them).
        for c in 0..b {
            self.sc.h[(mu + c) * ldh..(mu + c) * ldh + self.nlock].iter_mut().for_each(|x| *x = T::ZERO);
        }
        let scale = big.max(self.anorm);
        self.orthonormalise_block(op, j, scale)?;
        self.mu = j;
        Ok(())
    }

    /// Orthonormalises the block `V[:, j..j+b]` in place (already orthogonal
    /// to `V[:, 0..j]`), storing the triangular `R` with `W = Q·R` in
    /// `h[j.., j−b..j]` (when `j ≥ b`). A column whose norm is below
    /// `16·ε·scale` is replaced by a pseudo-random unit vector orthogonal to
    /// everything before it (its `R` diagonal is 0).
    fn orthonormalise_block<O: SymOperator<T>>(&mut self, op: &mut O, j: usize, scale: T) -> Result<(), LinalgError> {
        let (n, b, ldh) = (self.n, self.b, self.ldh);
        let tiny = T::from_f64(16.0) * T::EPSILON * scale;
        for c in 0..b {
            let mut r = [T::ZERO; MAX_BLOCK];
            let (prev, rest) = self.sc.v[j * n..].split_at_mut(c * n);
            let w = &mut rest[..n];
            for _ in 0..2 {
                for (q, rq) in prev.chunks_exact(n).zip(r.iter_mut()) {
                    let d = dot_unchecked(q, w);
                    for (wi, &qi) in w.iter_mut().zip(q) {
                        *wi -= d * qi;
                    }
                    *rq += d;
                }
            }
            let mut beta = norm(w);
            if !(beta > tiny) {
                beta = T::ZERO;
                self.random_orthogonal(op, j + c)?;
            } else {
                let s = T::ONE / beta;
                w.iter_mut().for_each(|x| *x *= s);
            }
            r[c] = beta;
            if j >= b {
                let col = j - b + c;
                for (q, &rq) in r.iter().enumerate().take(c + 1) {
                    self.sc.h[(j + q) + col * ldh] = rq;
                }
            }
        }
        Ok(())
    }

    /// Fills `V[:, col]` with a pseudo-random unit vector orthogonal to
    /// `V[:, 0..col]`.
    fn random_orthogonal<O: SymOperator<T>>(&mut self, op: &mut O, col: usize) -> Result<(), LinalgError> {
        let n = self.n;
        for _ in 0..4 {
            let (lo, hi) = self.sc.v.split_at_mut(col * n);
            let w = &mut hi[..n];
            for x in w.iter_mut() {
                *x = self.rng.next();
            }
            let before = norm(w);
            if col > 0 {
                let vm = MatRef::from_col_major(lo, n, col)?;
                let coef = &mut self.sc.coef[..col];
                for _ in 0..2 {
                    op.gemm(
                        T::ONE,
                        vm.t(),
                        MatRef::from_col_major(w, n, 1)?,
                        T::ZERO,
                        MatMut::from_col_major(coef, col, 1)?,
                    )?;
                    op.gemm(
                        -T::ONE,
                        vm,
                        MatRef::from_col_major(coef, col, 1)?,
                        T::ONE,
                        MatMut::from_col_major(w, n, 1)?,
                    )?;
                }
            }
            let after = norm(w);
            if after > T::from_f64(1e-3) * before {
                let s = T::ONE / after;
                w.iter_mut().for_each(|x| *x *= s);
                return Ok(());
            }
        }
        // Only possible when `col ≥ n`, which the sizes exclude.
        Err(LinalgError::NoConvergence { iterations: self.info.iterations })
    }

    /// Rayleigh–Ritz on the active part `V[:, nlock..μ]` (2. in the module
    /// docs): eigenpairs of `H` into `theta`/`y`, residual estimates into
    /// `est` (descending order), ‖A‖ estimate updated. Returns the active
    /// dimension.
    fn rayleigh_ritz<O: SymOperator<T>>(&mut self, op: &mut O) -> Result<usize, LinalgError> {
        let (b, mu, nl, ldh) = (self.b, self.mu, self.nlock, self.ldh);
        let ma = mu - nl;
        let sc = &mut self.sc;
        // Lower triangle of the active block from H's upper triangle.
        for jj in 0..ma {
            for ii in jj..ma {
                sc.s[ii + jj * ma] = sc.h[(nl + jj) + (nl + ii) * ldh];
            }
        }
        op.small_sym_eigen(
            MatRef::from_col_major(&sc.s[..ma * ma], ma, ma)?,
            &mut sc.theta[..ma],
            MatMut::from_col_major(&mut sc.y[..ma * ma], ma, ma)?,
            &mut sc.ws[..],
        )?;
        let mut an = self.anorm.max(sc.theta[0].abs()).max(sc.theta[ma - 1].abs());
        for &l in sc.lockval[..nl].iter() {
            an = an.max(l.abs());
        }
        self.anorm = an;
        // ‖R·E_μᵀ·y‖ with R = H[μ..μ+b, μ−b..μ] (upper triangular).
        for i in 0..ma {
            let col = ma - 1 - i;
            let yl = &sc.y[col * ma + ma - b..(col + 1) * ma];
            let mut s2 = T::ZERO;
            for r in 0..b {
                let mut t = T::ZERO;
                for (c, &yc) in yl.iter().enumerate().skip(r) {
                    t += sc.h[(mu + r) + (mu - b + c) * ldh] * yc;
                }
                s2 += t * t;
            }
            sc.est[i] = s2.sqrt();
        }
        Ok(ma)
    }

    /// Thick restart with locking (4.–5. in the module docs).
    fn restart<O: SymOperator<T>>(
        &mut self,
        op: &mut O,
        k: usize,
        ma: usize,
        wa: usize,
        thr: T,
    ) -> Result<(), LinalgError> {
        let (n, m, b, mu, ldh) = (self.n, self.m, self.b, self.mu, self.ldh);
        let nl = self.nlock;
        // Newly locked: converged wanted pairs, while fewer than k are locked.
        // Marked by a negative estimate.
        let mut nnew = 0;
        for i in 0..wa {
            if nl + nnew < k && self.sc.est[i] <= thr {
                self.sc.est[i] = -T::ONE;
                nnew += 1;
            }
        }
        let target = (k + (m - k) / 2).max(nl + wa).min(m - b);
        let keep = target.saturating_sub(nl + nnew).min(ma - nnew);
        let nsel = nnew + keep;
        // Selected eigenvectors of H, newly locked first, into s (ma × nsel).
        let mut col = 0;
        for pass in 0..2 {
            let mut kept = 0;
            for i in 0..ma {
                let locked = self.sc.est[i] < T::ZERO;
                let take = if pass == 0 { locked } else { !locked && kept < keep };
                if !take {
                    continue;
                }
                if pass == 1 {
                    kept += 1;
                }
                let src = ma - 1 - i;
                let th = self.sc.theta[src];
                self.sc.s[col * ma..(col + 1) * ma].copy_from_slice(&self.sc.y[src * ma..(src + 1) * ma]);
                // The new diagonal of H; newly locked values also in lockval.
                if pass == 0 {
                    self.sc.lockval[nl + col] = th;
                }
                self.sc.coef[col] = th;
                col += 1;
            }
        }
        // V[:, nl..nl+nsel] = V[:, nl..μ]·Y_sel.
        {
            let vm = MatRef::from_col_major(&self.sc.v[nl * n..mu * n], n, ma)?;
            let ys = MatRef::from_col_major(&self.sc.s[..ma * nsel], ma, nsel)?;
            op.gemm(T::ONE, vm, ys, T::ZERO, MatMut::from_col_major(&mut self.sc.tmp[..n * nsel], n, nsel)?)?;
        }
        self.sc.v[nl * n..(nl + nsel) * n].copy_from_slice(&self.sc.tmp[..n * nsel]);
        let l = nl + nsel;
        self.sc.v.copy_within(mu * n..(mu + b) * n, l * n);
        self.sc.h.iter_mut().for_each(|x| *x = T::ZERO);
        for i in 0..nl + nnew {
            self.sc.h[i + i * ldh] = self.sc.lockval[i];
        }
        for c in 0..nsel {
            self.sc.h[(nl + c) * (ldh + 1)] = self.sc.coef[c];
        }
        self.nlock = nl + nnew;
        self.info.locked = self.nlock;
        self.mu = l;
        Ok(())
    }

    /// Ritz vectors of the wanted pairs, the k largest into `vals`/`vecs`,
    /// and the explicit residual check.
    fn finish<O: SymOperator<T>>(
        &mut self,
        op: &mut O,
        vals: &mut [T],
        mut vecs: MatMut<'_, T>,
        k: usize,
        ma: usize,
        wa: usize,
    ) -> Result<TopKInfo, LinalgError> {
        let (n, nl) = (self.n, self.nlock);
        // Active wanted Ritz vectors: tmp[:, 0..wa] = V[:, nl..μ]·Y[:, desc 0..wa].
        if wa > 0 {
            for i in 0..wa {
                let src = ma - 1 - i;
                self.sc.s[i * ma..(i + 1) * ma].copy_from_slice(&self.sc.y[src * ma..(src + 1) * ma]);
            }
            let vm = MatRef::from_col_major(&self.sc.v[nl * n..self.mu * n], n, ma)?;
            let ys = MatRef::from_col_major(&self.sc.s[..ma * wa], ma, wa)?;
            op.gemm(T::ONE, vm, ys, T::ZERO, MatMut::from_col_major(&mut self.sc.tmp[..n * wa], n, wa)?)?;
        }
        // Candidates: locked 0..nl, then active 0..wa; values in est.
        let nc = nl + wa;
        for c in 0..nc {
            self.sc.est[c] = if c < nl { self.sc.lockval[c] } else { self.theta_desc(ma, c - nl) };
        }
        let gone = -T::MAX;
        for (out, val) in vals.iter_mut().enumerate() {
            let mut best = None;
            for c in 0..nc {
                let e = self.sc.est[c];
                if e != gone && best.is_none_or(|b: usize| e > self.sc.est[b]) {
                    best = Some(c);
                }
            }
            // nc ≥ k candidates by the choice of wa.
            let best = best.ok_or(LinalgError::NoConvergence { iterations: self.info.iterations })?;
            *val = self.sc.est[best];
            self.sc.est[best] = gone;
            let x = if best < nl {
                &self.sc.v[best * n..(best + 1) * n]
            } else {
                &self.sc.tmp[(best - nl) * n..(best - nl + 1) * n]
            };
            match vecs.col_mut(out) {
                Some(dst) => dst.copy_from_slice(x),
                None => {
                    for (r, &xv) in x.iter().enumerate() {
                        *vecs.at_mut(r, out) = xv;
                    }
                }
            }
        }
        // Explicit residuals ‖A·x − θ·x‖.
        op.apply(vecs.rb(), MatMut::from_col_major(&mut self.sc.tmp[..n * k], n, k)?)?;
        self.info.applies += k;
        let mut worst = T::ZERO;
        for (i, &th) in vals.iter().enumerate() {
            let ax = &self.sc.tmp[i * n..(i + 1) * n];
            let mut s2 = T::ZERO;
            for (r, &a) in ax.iter().enumerate() {
                let d = a - th * vecs.at(r, i);
                s2 += d * d;
            }
            worst = worst.max(s2.sqrt());
        }
        if !worst.is_finite() {
            return Err(LinalgError::NonFinite);
        }
        self.info.max_residual = if self.anorm > T::ZERO { (worst / self.anorm).to_f64() } else { 0.0 };
        Ok(self.info)
    }
}

/// ‖x‖₂ from the plain (lane-split, [`dot_unchecked`]) sum of squares when it can neither have overflowed
/// nor lost accuracy to underflow (each square below `MIN_POSITIVE` errs by
/// at most that, so a sum ≥ `MIN_POSITIVE/ε` is within `n·ε` relative);
/// otherwise the scaled [`nrm2`].
fn norm<T: Real>(x: &[T]) -> T {
    let s = dot_unchecked(x, x);
    if s.is_finite() && s >= T::MIN_POSITIVE / T::EPSILON {
        s.sqrt()
    } else {
        nrm2(x)
    }
}

/// `2(m + b) > n`: form A = op·I and use the full solver.
fn dense_top_k<T: Real, O: SymOperator<T>>(
    op: &mut O,
    vals: &mut [T],
    mut vecs: MatMut<'_, T>,
    work: &mut [T],
    params: &EigenParams,
) -> Result<TopKInfo, LinalgError> {
    let n = op.dim();
    let k = vals.len();
    let (DenseScratch { x, a, full, ws }, _) = DenseScratch::split(work, n)?;
    x.iter_mut().for_each(|t| *t = T::ZERO);
    for j in 0..n {
        x[j * n + j] = T::ONE;
    }
    op.apply(MatRef::from_col_major(x, n, n)?, MatMut::from_col_major(a, n, n)?)?;
    sym_eigen(MatRef::from_col_major(a, n, n)?, full, Some(MatMut::from_col_major(x, n, n)?), ws, params)?;
    for i in 0..k {
        let src = n - 1 - i;
        vals[i] = full[src];
        for r in 0..n {
            *vecs.at_mut(r, i) = x[src * n + r];
        }
    }
    Ok(TopKInfo { applies: n, ..TopKInfo::default() })
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn rbf(n: usize, gamma: f64) -> Vec<f64> {
        let mut rng = XorShift(12345);
        let pts: Vec<[f64; 3]> = (0..n).map(|_| [rng.next(), rng.next(), rng.next()]).collect();
        let mut a = vec![0.0; n * n];
        for j in 0..n {
            for i in 0..n {
                let d: f64 = (0..3).map(|t| (pts[i][t] - pts[j][t]).powi(2)).sum();
                a[i + j * n] = libm::exp(-gamma * d);
            }
        }
        a
    }

    fn full_desc(a: &[f64], n: usize) -> Vec<f64> {
        let mut vals = vec![0.0; n];
        let mut work = vec![0.0; sym_eigen_workspace_len(n)];
        sym_eigen(MatRef::from_col_major(a, n, n).unwrap(), &mut vals, None, &mut work, &EigenParams::default())
            .unwrap();
        vals.reverse();
        vals
    }

    fn top(a: &[f64], n: usize, k: usize) -> (Vec<f64>, Vec<f64>, TopKInfo) {
        let mut op = DenseSymOp::new(MatRef::from_col_major(a, n, n).unwrap()).unwrap();
        let mut vals = vec![0.0; k];
        let mut v = vec![0.0; n * k];
        let mut work = vec![0.0; top_k_workspace_len(n, k)];
        let info = sym_eigen_top_k(
            &mut op,
            &mut vals,
            MatMut::from_col_major(&mut v, n, k).unwrap(),
            &mut work,
            &EigenParams::default(),
        )
        .unwrap();
        (vals, v, info)
    }

    #[test]
    fn rbf_top_k_matches_full_solver() {
        let n = 150;
        let a = rbf(n, 2.0);
        let want = full_desc(&a, n);
        for k in [1usize, 3, 10, 20, 60, n] {
            let (vals, v, _) = top(&a, n, k);
            for i in 0..k {
                assert!((vals[i] - want[i]).abs() < 1e-10 * want[0], "k={k} i={i}");
                let mut r = 0.0f64;
                for row in 0..n {
                    let mut s = -vals[i] * v[row + i * n];
                    for c in 0..n {
                        s += a[row + c * n] * v[c + i * n];
                    }
                    r += s * s;
                }
                assert!(r.sqrt() < 1e-9 * want[0], "k={k} i={i} res={}", r.sqrt());
            }
        }
    }

    /// `Q·diag(d)·Qᵀ` with `Q` a product of 3 pseudo-random Householder
    /// reflections: a dense matrix with the prescribed spectrum `d`.
    fn with_spectrum(d: &[f64], seed: u64) -> Vec<f64> {
        let n = d.len();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            a[i + i * n] = d[i];
        }
        let mut rng = XorShift(seed);
        for _ in 0..3 {
            let mut u: Vec<f64> = (0..n).map(|_| rng.next()).collect();
            let nu = u.iter().map(|x| x * x).sum::<f64>().sqrt();
            u.iter_mut().for_each(|x| *x /= nu);
            // A ← H·A·H with H = I − 2uuᵀ: A ← A − 2u(uᵀA) then A ← A − 2(Au)uᵀ.
            for j in 0..n {
                let s: f64 = (0..n).map(|i| u[i] * a[i + j * n]).sum();
                for i in 0..n {
                    a[i + j * n] -= 2.0 * u[i] * s;
                }
            }
            for i in 0..n {
                let s: f64 = (0..n).map(|j| a[i + j * n] * u[j]).sum();
                for j in 0..n {
                    a[i + j * n] -= 2.0 * s * u[j];
                }
            }
        }
        for j in 0..n {
            for i in j + 1..n {
                let m = 0.5 * (a[i + j * n] + a[j + i * n]);
                a[i + j * n] = m;
                a[j + i * n] = m;
            }
        }
        a
    }

    /// RBF kernel of `n` points of R^d with standard normal coordinates
    /// (Box–Muller): the slowly decaying spectrum of the hard benchmark case
    /// (`ranklet bench eigen --matrix rbf --dist normal`) for d = 20,
    /// γ = 0.025 (λ₁₁/λ₁₀ ≈ 0.97, λ₅₁/λ₅₀ ≈ 0.99 at n = 2000).
    fn rbf_normal(n: usize, d: usize, gamma: f64) -> Vec<f64> {
        let mut rng = XorShift(777);
        let x: Vec<f64> = (0..n * d)
            .map(|_| {
                let u1 = 0.5 * (rng.next::<f64>() + 1.0);
                let u2 = 0.5 * (rng.next::<f64>() + 1.0);
                libm::sqrt(-2.0 * libm::log(1.0 - u1)) * libm::cos(2.0 * core::f64::consts::PI * u2)
            })
            .collect();
        let mut a = vec![0.0; n * n];
        for j in 0..n {
            for i in 0..n {
                let d2: f64 = (0..d).map(|t| (x[i * d + t] - x[j * d + t]).powi(2)).sum();
                a[i + j * n] = libm::exp(-gamma * d2);
            }
        }
        a
    }

    /// Runs the solver with `params` and checks it against the full
    /// solver (brute force): eigenvalues within 1e-11·‖A‖ (a residual r
    /// puts an exact eigenvalue within ‖r‖ ≤ tol·‖A‖ = 2.2e-13·‖A‖ of each
    /// Ritz value, and the full solver is backward stable to ~n·ε·‖A‖ ≈
    /// 1e-13·‖A‖ at these sizes), residuals ‖A·v − λ·v‖ ≤ 1e-12·‖A‖
    /// (tolerance plus this test's own product, ≤ n·ε·‖A‖ ≈ 4e-14·‖A‖),
    /// |VᵀV − I| ≤ 1e-12 (CGS2 keeps orthogonality to a small multiple of ε).
    fn check(a: &[f64], n: usize, k: usize, params: &EigenParams, what: &str) -> TopKInfo {
        check_against(a, n, k, params, what, &full_desc(a, n))
    }

    /// [`check`] against known eigenvalues `want` (descending).
    fn check_against(a: &[f64], n: usize, k: usize, params: &EigenParams, what: &str, want: &[f64]) -> TopKInfo {
        let anorm = want.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let mut op = DenseSymOp::new(MatRef::from_col_major(a, n, n).unwrap()).unwrap();
        let mut vals = vec![0.0; k];
        let mut v = vec![0.0; n * k];
        let mut work = vec![0.0; top_k_workspace_len_with(n, k, params)];
        let info =
            sym_eigen_top_k(&mut op, &mut vals, MatMut::from_col_major(&mut v, n, k).unwrap(), &mut work, params)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
        for i in 0..k {
            assert!((vals[i] - want[i]).abs() <= 1e-11 * anorm, "{what}: λ{i} = {} vs {}", vals[i], want[i]);
            let mut r = 0.0f64;
            for row in 0..n {
                let mut s = -vals[i] * v[row + i * n];
                for c in 0..n {
                    s += a[row + c * n] * v[c + i * n];
                }
                r += s * s;
            }
            assert!(r.sqrt() <= 1e-12 * anorm, "{what}: residual {i} = {:e}", r.sqrt() / anorm);
            for j in 0..=i {
                let d: f64 = (0..n).map(|t| v[t + i * n] * v[t + j * n]).sum();
                assert!((d - if i == j { 1.0 } else { 0.0 }).abs() <= 1e-12, "{what}: (VᵀV)_{i}{j} = {d}");
            }
        }
        assert!(info.max_residual <= 1e-12, "{what}: {info:?}");
        info
    }

    #[test]
    fn slowly_decaying_rbf_spectrum_matches_brute_force() {
        let n = 420;
        let a = rbf_normal(n, 20, 0.025);
        for k in [1, 10, 50] {
            for block in [1, 4] {
                let info = check(&a, n, k, &EigenParams::default().with_block(block), "rbf d=20");
                // The Lanczos path, not the dense one, and fewer applications
                // than the matrix order (the point of a top-k solver).
                assert!(info.iterations > 0 && info.applies < n, "k={k} b={block}: {info:?}");
            }
        }
    }

    #[test]
    fn clustered_and_indefinite_spectra_match_brute_force() {
        let n = 300;
        // Ten top eigenvalues within 1e-3 relative of each other, then a
        // gap, then a slow tail; and negative eigenvalues of larger modulus
        // (the solver wants the algebraically largest).
        let d: Vec<f64> = (0..n)
            .map(|i| {
                if i < 10 {
                    10.0 - 1e-3 * i as f64
                } else {
                    5.0 * libm::pow(0.99, i as f64) - 20.0 * (i % 7 == 0) as u8 as f64
                }
            })
            .collect();
        let a = with_spectrum(&d, 3);
        for k in [3, 10, 12] {
            check(&a, n, k, &EigenParams::default(), "clustered");
        }
    }

    #[test]
    fn repeated_eigenvalues_up_to_the_block_size_are_found() {
        let n = 300;
        // 7 (three times), 6 (twice), then a decaying tail. Blocks of ≥ 3
        // see the triple by construction; with b = 1 this case finds it
        // too (the copies grow from rounding errors after the first one is
        // locked), which the module docs do not promise in general.
        let d: Vec<f64> = (0..n)
            .map(|i| {
                if i < 3 {
                    7.0
                } else if i < 5 {
                    6.0
                } else {
                    5.0 * libm::pow(0.98, i as f64)
                }
            })
            .collect();
        let a = with_spectrum(&d, 5);
        for (k, block) in [(4, 1), (4, 3), (6, 3), (6, 4), (2, 2)] {
            check(&a, n, k, &EigenParams::default().with_block(block), "repeated");
        }
    }

    #[test]
    fn rank_deficient_kernel_finds_its_invariant_subspace() {
        // 198 points at only 6 distinct places, 33 copies each: A = B ⊗ 1₃₃1₃₃ᵀ
        // up to a permutation, so its eigenvalues are 33·eig(B) and 192
        // zeros. The Krylov space is exhausted after 6 vectors and the rest
        // comes from the pseudo-random replacements (eigenvalue 0).
        // (The reference is the 6 × 6 solve: core's full solver returns
        // NoConvergence on this 198 × 198 matrix.)
        let (n, c) = (198, 33);
        let base = rbf(6, 0.5);
        let mut a = vec![0.0; n * n];
        for j in 0..n {
            for i in 0..n {
                a[i + j * n] = base[(i % 6) + (j % 6) * 6];
            }
        }
        let mut want: Vec<f64> = full_desc(&base, 6).iter().map(|x| x * c as f64).collect();
        want.resize(n, 0.0);
        for k in [3, 6, 10] {
            let info = check_against(&a, n, k, &EigenParams::default(), "rank 6", &want);
            assert!(info.iterations > 0, "{info:?}");
        }
    }

    #[test]
    fn tiny_orders_and_k_near_n_take_the_dense_path_exactly() {
        for n in 1..=8 {
            let a = rbf(n, 0.7);
            for k in [n.saturating_sub(1), n] {
                if k > 0 {
                    let info = check(&a, n, k, &EigenParams::default(), "tiny");
                    assert_eq!(info.iterations, 0);
                }
            }
        }
        let n = 90;
        let a = rbf_normal(n, 20, 0.025);
        for k in [n - 1, n / 2] {
            check(&a, n, k, &EigenParams::default(), "k near n");
        }
    }

    #[test]
    fn f32_top_k_within_its_default_tolerance() {
        let n = 120;
        let a = rbf(n, 3.0);
        let want = full_desc(&a, n);
        let a32: Vec<f32> = a.iter().map(|&x| x as f32).collect();
        let k = 6;
        let mut op = DenseSymOp::new(MatRef::from_col_major(&a32, n, n).unwrap()).unwrap();
        let mut vals = vec![0.0f32; k];
        let mut v = vec![0.0f32; n * k];
        let mut work = vec![0.0f32; top_k_workspace_len(n, k)];
        let info = sym_eigen_top_k(
            &mut op,
            &mut vals,
            MatMut::from_col_major(&mut v, n, k).unwrap(),
            &mut work,
            &EigenParams::default(),
        )
        .unwrap();
        assert!(info.iterations > 0 && info.max_residual <= 1000.0 * f32::EPSILON as f64);
        for i in 0..k {
            assert!((vals[i] as f64 - want[i]).abs() < 1e-5 * want[0], "i={i}");
        }
    }

    #[test]
    fn workspace_lengths_saturate_instead_of_overflowing() {
        assert_eq!(top_k_workspace_len(usize::MAX, 3), usize::MAX);
        assert_eq!(top_k_workspace_len(usize::MAX, usize::MAX), usize::MAX);
        assert_eq!(sym_eigen_workspace_len(usize::MAX / 2), usize::MAX);
        assert_eq!(crate::eigen::jacobi::jacobi_eigen_workspace_len(usize::MAX), usize::MAX);
        // Zero strides make a huge view over one element legal; still no panic.
        let one = [1.0f64];
        let a = MatRef::new(&one, 1 << 40, 1 << 40, 0, 0).unwrap();
        let mut vals = [0.0; 1];
        let r = crate::eigen::tridiag::sym_eigen(a, &mut vals, None, &mut [], &EigenParams::default());
        assert_eq!(r, Err(LinalgError::DimensionMismatch));
        let mut op = DenseSymOp::new(a).unwrap();
        let r = sym_eigen_top_k(
            &mut op,
            &mut vals,
            MatMut::from_col_major(&mut [0.0], 1, 1).unwrap(),
            &mut [],
            &EigenParams::default(),
        );
        assert_eq!(r, Err(LinalgError::DimensionMismatch));
    }

    /// The lane-split `norm` and `dot` against the scaled `nrm2` and a
    /// plain loop: the same sums in another order (≤ n·ε relative for
    /// these well-scaled vectors), and `norm` falls back to the scaled
    /// `nrm2` where the squares would overflow or underflow (3-4-5 vectors
    /// scaled by 1e±200, exact up to a few ulps).
    #[test]
    fn lane_split_norm_and_dot_match_the_reference() {
        let mut rng = XorShift(99);
        for len in [0usize, 1, 7, 8, 9, 1001] {
            let x: Vec<f64> = (0..len).map(|_| rng.next()).collect();
            let y: Vec<f64> = (0..len).map(|_| rng.next()).collect();
            let want = nrm2(&x);
            assert!((norm(&x) - want).abs() <= 1e-13 * want.max(1.0), "len={len}");
            let d: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
            assert!((dot_unchecked(&x, &y) - d).abs() <= 1e-13 * len.max(1) as f64, "len={len}");
        }
        for scale in [1e200, 1e-200] {
            let x: Vec<f64> = [3.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 12.0].iter().map(|v| v * scale).collect();
            assert!((norm(&x) / (13.0 * scale) - 1.0).abs() <= 4.0 * f64::EPSILON, "scale={scale:e}");
        }
        assert!(norm(&[f64::NAN, 1.0]).is_nan());
    }

    #[test]
    fn trivial_and_bad_arguments() {
        let a = [4.0];
        let mut op = DenseSymOp::new(MatRef::from_col_major(&a, 1, 1).unwrap()).unwrap();
        let mut vals = [0.0; 1];
        let mut v = [0.0; 1];
        let mut work = vec![0.0; top_k_workspace_len(1, 1)];
        let p = EigenParams::default();
        sym_eigen_top_k(&mut op, &mut vals, MatMut::from_col_major(&mut v, 1, 1).unwrap(), &mut work, &p).unwrap();
        assert_eq!((vals[0], v[0].abs()), (4.0, 1.0));
        let mut none: [f64; 0] = [];
        let r = sym_eigen_top_k(&mut op, &mut none, MatMut::from_col_major(&mut [], 1, 0).unwrap(), &mut [], &p);
        assert_eq!(r, Ok(TopKInfo::default()));
        let mut two = [0.0; 2];
        let mut v2 = [0.0; 2];
        let r = sym_eigen_top_k(&mut op, &mut two, MatMut::from_col_major(&mut v2, 1, 2).unwrap(), &mut work, &p);
        assert_eq!(r, Err(LinalgError::InvalidParameter));
    }
}
