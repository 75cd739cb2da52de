//! Full symmetric eigensolver: Householder tridiagonalisation followed by the
//! implicit QL algorithm with Wilkinson shifts.
//!
//! $A = Q T Q^T$ (Householder, Golub & Van Loan 4th ed. §8.3.1, LAPACK
//! `dsytd2`/`dsytrd` with `uplo = 'L'`), then $T = Z \Lambda Z^T$ by implicit
//! QL sweeps (Golub & Van Loan §8.3.3–8.3.5; EISPACK `tql2`, LAPACK `dsteqr`),
//! so $A = (QZ)\Lambda(QZ)^T$.
//!
//! # Guarantees
//!
//! - Only the **lower triangle** of `A` (including the diagonal) is read.
//! - Eigenvalues come out in **ascending** order; column `j` of the
//!   eigenvector matrix belongs to `vals[j]`, and the columns are orthonormal.
//! - Backward stable: for the computed pairs,
//!   ‖A·V − V·Λ‖_F ≤ c·n·ε·‖A‖_F and ‖VᵀV − I‖_F ≤ c·n·ε with a small
//!   constant c (the reference suite sees ≤ 1e-13 relative for n ≤ 200 in f64;
//!   see `core/tests/eigen_reference.rs`). Each eigenvalue is then within
//!   c·n·ε·‖A‖₂ of the exact one (Weyl).
//! - The input is scaled by a power of two near max |aᵢⱼ| first (exact), so
//!   entries anywhere in the floating-point range neither overflow nor
//!   underflow during the reduction.
//!
//! # Speed
//!
//! The reduction is unblocked but fused: the rank-2 update of step k and the
//! symmetric matrix-vector product of step k+1 share one pass over each
//! trailing column (contiguous, column-major), so the trailing triangle is
//! streamed once per step instead of twice. Q is formed from the reflectors in
//! blocks of `NB` reflectors applied column by column (the block stays in
//! L2). QL rotations are buffered over several sweeps and then applied to row
//! blocks of the eigenvector matrix, so each row block stays in cache while
//! many sweeps pass over it.

use super::EigenParams;
use crate::{LinalgError, MatMut, MatRef, Real};

/// Reflectors applied per block when forming Q.
const NB: usize = 32;
/// Rows of the eigenvector matrix per block when applying buffered rotations.
const RB: usize = 32;

/// Length of the rotation buffer (in elements) for order `n`.
fn rot_len(n: usize) -> usize {
    n.saturating_mul(8).saturating_add(16)
}

/// Workspace length (elements of `T`) that [`sym_eigen`] needs for an
/// `n × n` matrix **with** eigenvectors: `2n² + 14n + 16`.
/// Saturates at `usize::MAX` for absurd `n`.
pub fn sym_eigen_workspace_len(n: usize) -> usize {
    EigScratch::<f64>::len(n, true)
}

crate::scratch! {
    /// Scratch of [`sym_eigen`]; `want` = eigenvectors asked for.
    struct EigScratch<T: Real>(n: usize, want: bool) {
        /// The scaled matrix, then the reflectors.
        w: n.saturating_mul(n),
        /// `Q` of the tridiagonalisation, then the eigenvectors.
        qbuf: if want { n.saturating_mul(n) } else { 0 },
        /// Off-diagonal.
        e: n,
        /// Reflector scalars.
        tau: n,
        /// Tridiagonalisation scratch.
        sc: n.saturating_mul(4),
        /// Buffered QL rotations.
        rot: if want { rot_len(n) } else { 0 },
    }
}

/// Workspace length that [`sym_eigen`] needs when `vecs` is `None`
/// (eigenvalues only): `n² + 6n`.
pub fn sym_eigenvalues_workspace_len(n: usize) -> usize {
    EigScratch::<f64>::len(n, false)
}

/// `√(a² + b²)` by the plain formula when that neither underflows nor
/// overflows (the squares sum to a normal number well away from the limits,
/// so the result is correctly rounded to within an ulp or two), and by
/// `libm::hypot` otherwise. QL works on a matrix scaled to max |aᵢⱼ| ≈ 1, so
/// the fallback is rare; the plain formula is several times cheaper.
#[inline(always)]
pub(crate) fn fast_hypot<T: Real>(a: T, b: T) -> T {
    let t = a * a + b * b;
    // safe_min = MIN_POSITIVE/ε (LAPACK's `safmin` scaled): when t exceeds it
    // a square that underflowed contributed less than ε·t.
    let safe_min = T::MIN_POSITIVE / T::EPSILON;
    if t > safe_min && t < T::ONE / safe_min {
        t.sqrt()
    } else {
        a.hypot(b)
    }
}

/// Power of two close to `m > 0` (finite), computed exactly.
pub(crate) fn pow2_scale<T: Real>(m: T) -> T {
    let (_, e) = libm::frexp(m.to_f64());
    // 2^(e-1) ≤ m < 2^e; keep the exponent in the range of T.
    let s = libm::ldexp(1.0, e - 1);
    let t = T::from_f64(s);
    if t > T::ZERO && t.is_finite() {
        t
    } else {
        m
    }
}

/// All eigenvalues (ascending) and optionally eigenvectors of the symmetric
/// matrix `a`, of which only the lower triangle is read.
///
/// # Arguments
///
/// - `a`: `n × n` view of any stride; the strict upper triangle is ignored.
/// - `vals`: output, length `n`, ascending.
/// - `vecs`: `None` for eigenvalues only (about 4× cheaper), or an `n × n`
///   view of any stride that receives orthonormal eigenvectors as columns
///   (column `j` ↔ `vals[j]`).
/// - `work`: at least [`sym_eigen_workspace_len`]`(n)` elements with vectors,
///   [`sym_eigenvalues_workspace_len`]`(n)` without; contents on return are
///   unspecified.
/// - `params`: `tol` is the relative deflation threshold (`0` = machine ε,
///   values below ε are raised to ε); `max_iter` is the QL iteration budget
///   per eigenvalue (default 60; 30 is LAPACK's).
///
/// # Accuracy
///
/// ‖A·V − V·Λ‖_F ≤ c·n·ε·‖A‖_F, ‖VᵀV − I‖_F ≤ c·n·ε, and
/// |λⱼ − λ̂ⱼ| ≤ c·n·ε·‖A‖₂ (c small; measured ≤ 1e-13 relative at n ≤ 200).
///
/// # Errors
///
/// - [`LinalgError::DimensionMismatch`]: `a` not square, `vals.len() != n`,
///   or `vecs` not `n × n`;
/// - [`LinalgError::WorkspaceTooSmall`]: `work` shorter than needed;
/// - [`LinalgError::NonFinite`]: NaN/Inf in the lower triangle of `a`, or an
///   eigenvalue that overflows when the scaling is undone;
/// - [`LinalgError::NoConvergence`]: some eigenvalue needed more than
///   `max_iter` QL iterations (`iterations` is the total QL iterations done).
///
/// On error, `vals` and `vecs` hold unspecified values.
///
/// # Examples
///
/// ```
/// use ranklet_core::eigen::{tridiag, EigenParams};
/// use ranklet_core::{MatMut, MatRef};
/// let a = [2.0, 1.0, 1.0, 2.0]; // column-major [[2, 1], [1, 2]]
/// let mut vals = [0.0f64; 2];
/// let mut v = [0.0; 4];
/// let mut work = vec![0.0; tridiag::sym_eigen_workspace_len(2)];
/// tridiag::sym_eigen(
///     MatRef::from_col_major(&a, 2, 2).unwrap(),
///     &mut vals,
///     Some(MatMut::from_col_major(&mut v, 2, 2).unwrap()),
///     &mut work,
///     &EigenParams::default(),
/// )
/// .unwrap();
/// assert!((vals[0] - 1.0).abs() < 1e-15 && (vals[1] - 3.0).abs() < 1e-15);
/// ```
pub fn sym_eigen<T: Real>(
    a: MatRef<'_, T>,
    vals: &mut [T],
    vecs: Option<MatMut<'_, T>>,
    work: &mut [T],
    params: &EigenParams,
) -> Result<(), LinalgError> {
    let n = super::check_shapes(&a, vals, vecs.as_ref())?;
    let want = vecs.is_some();
    let (EigScratch { w, qbuf, e, tau, sc, rot: rest }, _) = EigScratch::split(work, n, want)?;
    if n == 0 {
        return Ok(());
    }
    // Scan the lower triangle: finiteness and scale.
    let amax = super::lower_max_abs(a)?;
    if amax == T::ZERO {
        vals.iter_mut().for_each(|v| *v = T::ZERO);
        if let Some(mut v) = vecs {
            v.fill(T::ZERO);
            for j in 0..n {
                *v.at_mut(j, j) = T::ONE;
            }
        }
        return Ok(());
    }
    let scale = pow2_scale(amax);
    for j in 0..n {
        for i in j..n {
            w[i + j * n] = a.at(i, j) / scale;
        }
    }
    tridiagonalize(w, n, vals, e, tau, sc);
    if want {
        form_q(w, tau, qbuf, n);
    }
    let mut rot = if want { Some((qbuf, rest)) } else { None };
    match rot.as_mut() {
        Some((q, buf)) => {
            let mut sink = Buffered { q, buf, n, pos: 0, sweep_at: 0 };
            ql_implicit(vals, e, &mut sink, n, params)?
        }
        None => ql_implicit(vals, e, &mut NoVectors, n, params)?,
    }
    super::sort_and_unscale(vals, rot.as_mut().map(|(q, _)| &mut **q), n, scale)?;
    if let (Some(mut v), Some((q, _))) = (vecs, rot) {
        for j in 0..n {
            let col = &q[j * n..(j + 1) * n];
            match v.col_mut(j) {
                Some(dst) => dst.copy_from_slice(col),
                None => {
                    for (i, &x) in col.iter().enumerate() {
                        *v.at_mut(i, j) = x;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Householder reflector for `x` (LAPACK `dlarfg`): on return `x[1..]` holds
/// `v[1..]` (with `v[0] = 1` implicit); returns `(beta, tau)` with
/// `(I − τ v vᵀ) x = β e₁`. Entries are bounded by the scaling, so the plain
/// sum of squares cannot overflow.
fn reflector<T: Real>(x: &mut [T]) -> (T, T) {
    let alpha = x[0];
    let mut ss = T::ZERO;
    for &v in &x[1..] {
        ss += v * v;
    }
    if ss == T::ZERO {
        return (alpha, T::ZERO);
    }
    let beta = -alpha.hypot(ss.sqrt()).copysign(alpha);
    let tau = (beta - alpha) / beta;
    let s = T::ONE / (alpha - beta);
    for v in &mut x[1..] {
        *v *= s;
    }
    (beta, tau)
}

/// Reduces the lower triangle of `w` (n × n, column-major, scaled) to
/// tridiagonal form `d`, `e` (e[i] couples i and i+1). Reflector k has
/// `v = [1, w[k+2.., k]]` on rows k+1.. and factor `tau[k]`.
/// `sc` has length ≥ 4n.
pub(crate) fn tridiagonalize<T: Real>(w: &mut [T], n: usize, d: &mut [T], e: &mut [T], tau: &mut [T], sc: &mut [T]) {
    tau.iter_mut().for_each(|t| *t = T::ZERO);
    e.iter_mut().for_each(|t| *t = T::ZERO);
    d[0] = w[0];
    if n == 1 {
        return;
    }
    if n == 2 {
        d[1] = w[3];
        e[0] = w[1];
        return;
    }
    let (va, rest) = sc.split_at_mut(n);
    let (vb, rest) = rest.split_at_mut(n);
    let (wv, y) = rest.split_at_mut(n);
    let y = &mut y[..n];
    // Reflector 0 and the plain product y = A22·v.
    let (beta, t) = reflector(&mut w[1..n]);
    e[0] = beta;
    tau[0] = t;
    va[1] = T::ONE;
    va[2..n].copy_from_slice(&w[2..n]);
    y.iter_mut().for_each(|x| *x = T::ZERO);
    for j in 1..n {
        let col = &w[j * n + j..(j + 1) * n];
        let vj = va[j];
        let mut s = col[0] * vj;
        let (yh, yt) = y[j..].split_at_mut(1);
        s += dot_axpy(&col[1..], &va[j + 1..n], vj, yt);
        yh[0] += s;
    }
    let mut cur_is_a = true;
    for k in 0..n - 2 {
        let (v, vn) = if cur_is_a { (&mut *va, &mut *vb) } else { (&mut *vb, &mut *va) };
        let t = tau[k];
        // w = τ y − (τ/2)(τ yᵀv) v over rows k+1..n.
        let mut pv = T::ZERO;
        for i in k + 1..n {
            wv[i] = t * y[i];
            pv += wv[i] * v[i];
        }
        let alpha = -(t * T::from_f64(0.5)) * pv;
        for i in k + 1..n {
            wv[i] += alpha * v[i];
        }
        // Column k+1 (first column of A22), rows k+1..n.
        {
            let (wk, vk) = (wv[k + 1], v[k + 1]);
            let col = &mut w[(k + 1) * n + k + 1..(k + 2) * n];
            for ((c, &vi), &wi) in col.iter_mut().zip(&v[k + 1..n]).zip(&wv[k + 1..n]) {
                *c -= vi * wk + wi * vk;
            }
            d[k + 1] = col[0];
        }
        if k + 3 < n {
            // Next reflector from the updated column k+1.
            let (beta, t2) = reflector(&mut w[(k + 1) * n + k + 2..(k + 2) * n]);
            e[k + 1] = beta;
            tau[k + 1] = t2;
            vn[k + 2] = T::ONE;
            vn[k + 3..n].copy_from_slice(&w[(k + 1) * n + k + 3..(k + 2) * n]);
            y[k + 2..n].iter_mut().for_each(|x| *x = T::ZERO);
            // Fused: update column j of A33 and accumulate y = A33·vn.
            for j in k + 2..n {
                let col = &mut w[j * n + j..(j + 1) * n];
                let (wj, vj, v2j) = (wv[j], v[j], vn[j]);
                let s = fused_col(col, &v[j..n], &wv[j..n], &vn[j..n], &mut y[j..n], wj, vj, v2j);
                y[j] += s - col[0] * v2j;
            }
        } else {
            // k = n-3: update the last column (row n-1 only) and finish.
            let (wk, vk) = (wv[n - 1], v[n - 1]);
            let c = &mut w[(n - 1) * n + n - 1];
            *c -= vk * wk + wk * vk;
            d[n - 1] = *c;
            e[n - 2] = w[(n - 2) * n + n - 1];
        }
        cur_is_a = !cur_is_a;
    }
}

/// `Σ a[i]·x[i]` while doing `y[i] += a[i]·s` (one pass, four accumulators).
#[inline]
fn dot_axpy<T: Real>(a: &[T], x: &[T], s: T, y: &mut [T]) -> T {
    let m = a.len();
    let (x, y) = (&x[..m], &mut y[..m]);
    let mut acc = [T::ZERO; 4];
    let mut i = 0;
    while i + 4 <= m {
        for l in 0..4 {
            let ai = a[i + l];
            acc[l] += ai * x[i + l];
            y[i + l] += ai * s;
        }
        i += 4;
    }
    let mut r = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    while i < m {
        r += a[i] * x[i];
        y[i] += a[i] * s;
        i += 1;
    }
    r
}

/// One trailing column: `c ← c − v·wj − w·vj`, then `y += c·v2j` and return
/// `Σ c[i]·v2[i]`.
// Eight inputs: an inlined inner loop: three columns in, two out, three scalars in registers.
#[allow(clippy::too_many_arguments)]
#[inline]
fn fused_col<T: Real>(c: &mut [T], v: &[T], w: &[T], v2: &[T], y: &mut [T], wj: T, vj: T, v2j: T) -> T {
    let m = c.len();
    let (v, w, v2, y) = (&v[..m], &w[..m], &v2[..m], &mut y[..m]);
    let mut acc = [T::ZERO; 4];
    let mut i = 0;
    while i + 4 <= m {
        for l in 0..4 {
            let a = c[i + l] - v[i + l] * wj - w[i + l] * vj;
            c[i + l] = a;
            acc[l] += a * v2[i + l];
            y[i + l] += a * v2j;
        }
        i += 4;
    }
    let mut r = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    while i < m {
        let a = c[i] - v[i] * wj - w[i] * vj;
        c[i] = a;
        r += a * v2[i];
        y[i] += a * v2j;
        i += 1;
    }
    r
}

/// Forms `Q = H₀·H₁·…·H_{n−3}` in `q` (n × n, column-major) by backward
/// accumulation, [`NB`] reflectors at a time, each column of Q passing
/// through the whole block while the block's vectors stay in cache.
pub(crate) fn form_q<T: Real>(w: &[T], tau: &[T], q: &mut [T], n: usize) {
    q.iter_mut().for_each(|x| *x = T::ZERO);
    for j in 0..n {
        q[j * n + j] = T::ONE;
    }
    if n < 3 {
        return;
    }
    let nr = n - 2; // reflectors 0..nr
    let mut k1 = nr;
    while k1 > 0 {
        let k0 = k1.saturating_sub(NB);
        // Reflector k acts on rows k+1..; column j is still e_j in those
        // rows when k ≥ j (later reflectors only touch rows > k), so only
        // k < j can change it.
        for j in k0 + 1..n {
            let col = &mut q[j * n..(j + 1) * n];
            for k in (k0..k1.min(j)).rev() {
                let t = tau[k];
                if t != T::ZERO {
                    reflect_col(t, &w[k * n + k + 2..(k + 1) * n], &mut col[k + 1..]);
                }
            }
        }
        k1 = k0;
    }
}

/// `c ← (I − τ·[1; v]·[1; v]ᵀ)·c` for one column piece `c = [h; tail]`.
#[inline(always)]
fn reflect_col<T: Real>(t: T, v: &[T], c: &mut [T]) {
    let (h, tail) = c.split_at_mut(1);
    let s = t * (h[0] + crate::linalg::blas::dot_unchecked(v, tail));
    if s == T::ZERO {
        return;
    }
    h[0] -= s;
    crate::linalg::blas::axpy_unchecked(-s, v, tail);
}

/// Applies the buffered sweeps in `buf[..len]` to all rows of `q`, one row
/// block at a time. A sweep is `[m, count, c₀, s₀, c₁, s₁, …]`: rotation `r`
/// acts on columns `(m−r, m−r+1)`. Within a sweep the column shared by two
/// consecutive rotations is carried in a small array, so each rotation loads
/// one column piece and stores one.
fn flush_rotations<T: Real>(q: &mut [T], n: usize, buf: &[T]) {
    let mut r0 = 0;
    while r0 < n {
        let r1 = (r0 + RB).min(n);
        if r1 - r0 == RB {
            let mut carry = [T::ZERO; RB];
            apply_block(q, n, buf, r0, &mut carry);
        } else {
            let mut carry = [T::ZERO; RB];
            apply_block(q, n, buf, r0, &mut carry[..r1 - r0]);
        }
        r0 = r1;
    }
}

#[inline(always)]
fn apply_block<T: Real>(q: &mut [T], n: usize, buf: &[T], r0: usize, carry: &mut [T]) {
    let h = carry.len();
    let mut pos = 0;
    while pos + 2 <= buf.len() {
        let m = buf[pos].to_f64() as usize;
        let cnt = buf[pos + 1].to_f64() as usize;
        pos += 2;
        if cnt == 0 {
            continue;
        }
        carry.copy_from_slice(&q[(m + 1) * n + r0..(m + 1) * n + r0 + h]);
        for r in 0..cnt {
            let c = buf[pos + 2 * r];
            let s = buf[pos + 2 * r + 1];
            let i = m - r;
            let (lo, hi) = q.split_at_mut((i + 1) * n);
            let x = &lo[i * n + r0..i * n + r0 + h];
            let y = &mut hi[r0..r0 + h];
            for ((yt, &xt), ct) in y.iter_mut().zip(x).zip(carry.iter_mut()) {
                let f = *ct;
                *yt = s * xt + c * f;
                *ct = c * xt - s * f;
            }
        }
        let last = m + 1 - cnt;
        q[last * n + r0..last * n + r0 + h].copy_from_slice(carry);
        pos += 2 * cnt;
    }
}

/// Where the QL rotations go: nowhere (eigenvalues only), into the rotation
/// buffer of the general solver, or straight into a small eigenvector matrix.
pub(crate) trait RotSink<T> {
    /// A sweep over rows `l..=m` starts; it will emit at most `m − l`
    /// rotations, with `i` descending from `m − 1`.
    fn begin(&mut self, m: usize, l: usize);
    /// Rotation of columns `(i, i + 1)` by `(c, s)`.
    fn rot(&mut self, i: usize, c: T, s: T);
    /// The sweep ended after `cnt` rotations.
    fn end(&mut self, cnt: usize);
    /// Called once when QL stops, successfully or not.
    fn finish(&mut self);
}

/// Eigenvalues only: rotations are dropped.
pub(crate) struct NoVectors;

impl<T> RotSink<T> for NoVectors {
    #[inline(always)]
    fn begin(&mut self, _: usize, _: usize) {}
    #[inline(always)]
    fn rot(&mut self, _: usize, _: T, _: T) {}
    #[inline(always)]
    fn end(&mut self, _: usize) {}
    #[inline(always)]
    fn finish(&mut self) {}
}

/// The general solver's sink: rotations are buffered and applied to row
/// blocks of `q` (see [`flush_rotations`]).
struct Buffered<'a, T> {
    q: &'a mut [T],
    buf: &'a mut [T],
    n: usize,
    pos: usize,
    sweep_at: usize,
}

impl<T: Real> RotSink<T> for Buffered<'_, T> {
    fn begin(&mut self, m: usize, l: usize) {
        let need = 2 + 2 * (m - l);
        if self.pos + need > self.buf.len() {
            flush_rotations(self.q, self.n, &self.buf[..self.pos]);
            self.pos = 0;
        }
        self.buf[self.pos] = T::from_f64((m - 1) as f64);
        self.buf[self.pos + 1] = T::ZERO;
        self.sweep_at = self.pos;
        self.pos += 2;
    }
    #[inline(always)]
    fn rot(&mut self, _: usize, c: T, s: T) {
        self.buf[self.pos] = c;
        self.buf[self.pos + 1] = s;
        self.pos += 2;
    }
    fn end(&mut self, cnt: usize) {
        self.buf[self.sweep_at + 1] = T::from_f64(cnt as f64);
    }
    fn finish(&mut self) {
        flush_rotations(self.q, self.n, &self.buf[..self.pos]);
        self.pos = 0;
    }
}

/// Small matrices: each rotation is applied at once to the two adjacent,
/// contiguous columns of the compact (`ld = n`) eigenvector matrix `q`. For
/// n ≤ 64 the whole of `q` stays in L1, so buffering would only add traffic.
pub(crate) struct Direct<'a, T> {
    /// n × n column-major, leading dimension n.
    pub(crate) q: &'a mut [T],
    /// The order.
    pub(crate) n: usize,
}

impl<T: Real> RotSink<T> for Direct<'_, T> {
    #[inline(always)]
    fn begin(&mut self, _: usize, _: usize) {}
    #[inline(always)]
    fn rot(&mut self, i: usize, c: T, s: T) {
        let n = self.n;
        let (lo, hi) = self.q[i * n..(i + 2) * n].split_at_mut(n);
        for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
            let (xv, f) = (*x, *y);
            *y = s * xv + c * f;
            *x = c * xv - s * f;
        }
    }
    #[inline(always)]
    fn end(&mut self, _: usize) {}
    #[inline(always)]
    fn finish(&mut self) {}
}

/// Implicit QL with Wilkinson shifts on the tridiagonal `d`, `e` (EISPACK
/// `tql2`; Golub & Van Loan Alg. 8.3.2 in QL form). The rotations go to
/// `sink` (accumulated into the eigenvector matrix, or dropped).
pub(crate) fn ql_implicit<T: Real, S: RotSink<T>>(
    d: &mut [T],
    e: &mut [T],
    sink: &mut S,
    n: usize,
    params: &EigenParams,
) -> Result<(), LinalgError> {
    let eps = T::from_f64(params.tol).max(T::EPSILON);
    let two = T::from_f64(2.0);
    let d = &mut d[..n];
    let e = &mut e[..n];
    e[n - 1] = T::ZERO;
    // Deflation: `e_m` is negligible against its neighbours (relative
    // test) or against the whole matrix, `eps·max_i(|d_i| + |e_i|)` (the
    // scale of EISPACK's tql2). The absolute test is what lets a run of
    // rounding-sized `d` and `e` — the null space of a rank-deficient
    // kernel — split; it costs no accuracy the Householder reduction had
    // not already lost (its backward error is ~ε·‖A‖).
    let anorm = d.iter().zip(e.iter()).fold(T::ZERO, |m, (a, b)| m.max(a.abs() + b.abs()));
    let abs_tol = eps * anorm;
    let mut total = 0usize;
    for l in 0..n {
        let mut iter = 0usize;
        loop {
            let mut m = l;
            while m + 1 < n {
                let dd = d[m].abs() + d[m + 1].abs();
                if e[m].abs() <= eps * dd || e[m].abs() <= abs_tol || e[m].abs() < T::MIN_POSITIVE {
                    break;
                }
                m += 1;
            }
            if m == l {
                break;
            }
            if iter >= params.max_iter {
                sink.finish();
                return Err(LinalgError::NoConvergence { iterations: total });
            }
            iter += 1;
            total += 1;
            sink.begin(m, l);
            // Wilkinson shift from the leading 2×2 block.
            let mut g = (d[l + 1] - d[l]) / (two * e[l]);
            let mut r = fast_hypot(g, T::ONE);
            g = d[m] - d[l] + e[l] / (g + r.copysign(g));
            let (mut s, mut c, mut p) = (T::ONE, T::ONE, T::ZERO);
            let mut i = m;
            let mut cnt = 0usize;
            let mut early = false;
            while i > l {
                i -= 1;
                let f = s * e[i];
                let b = c * e[i];
                r = fast_hypot(f, g);
                e[i + 1] = r;
                if r == T::ZERO {
                    // Underflow: split the matrix here and retry.
                    d[i + 1] -= p;
                    e[m] = T::ZERO;
                    early = true;
                    break;
                }
                s = f / r;
                c = g / r;
                g = d[i + 1] - p;
                r = (d[i] - g) * s + two * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                sink.rot(i, c, s);
                cnt += 1;
            }
            sink.end(cnt);
            if early {
                continue;
            }
            d[l] -= p;
            e[l] = g;
            e[m] = T::ZERO;
        }
    }
    sink.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn run(a: &[f64], n: usize) -> (Vec<f64>, Vec<f64>) {
        let mut vals = vec![0.0; n];
        let mut v = vec![0.0; n * n];
        let mut work = vec![0.0; sym_eigen_workspace_len(n)];
        sym_eigen(
            MatRef::from_col_major(a, n, n).unwrap(),
            &mut vals,
            Some(MatMut::from_col_major(&mut v, n, n).unwrap()),
            &mut work,
            &EigenParams::default(),
        )
        .unwrap();
        (vals, v)
    }

    fn check(a: &[f64], n: usize, vals: &[f64], v: &[f64]) -> (f64, f64) {
        let anorm = a.iter().map(|x| x * x).sum::<f64>().sqrt().max(f64::MIN_POSITIVE);
        let (mut res, mut orth) = (0.0f64, 0.0f64);
        for j in 0..n {
            for i in 0..n {
                let mut s = -vals[j] * v[i + j * n];
                let mut o = if i == j { -1.0 } else { 0.0 };
                for p in 0..n {
                    let aip = if i >= p { a[i + p * n] } else { a[p + i * n] };
                    s += aip * v[p + j * n];
                    o += v[p + i * n] * v[p + j * n];
                }
                res += s * s;
                orth += o * o;
            }
        }
        (res.sqrt() / anorm, orth.sqrt())
    }

    fn lcg_matrix(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        let mut a = vec![0.0; n * n];
        for j in 0..n {
            for i in j..n {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let x = ((s >> 11) as f64) / ((1u64 << 53) as f64) - 0.5;
                a[i + j * n] = x;
                a[j + i * n] = x;
            }
        }
        a
    }

    /// A rank-6 RBF kernel of 198 rows (33 copies of each of 6 points, so
    /// 192 eigenvalues are zero up to rounding): the tridiagonal form has a
    /// long run of rounding-sized `d` and `e`, where a deflation test
    /// relative to the neighbouring `d` alone never fires. Reference: the
    /// residual and orthogonality of the result (Parlett's bounds, ~n·ε),
    /// the 192 smallest eigenvalues ≤ 1e-13·‖A‖ in magnitude, and the six
    /// largest equal to 33 × the eigenvalues of the 6 × 6 kernel, computed
    /// by the same solver on that small matrix.
    #[test]
    fn rank_deficient_kernel_with_repeated_rows_converges() {
        let pts: [[f64; 2]; 6] = [[0.0, 0.0], [1.0, 0.2], [0.3, 1.1], [-0.7, 0.4], [0.5, -0.9], [1.4, 1.3]];
        let k = |a: &[f64; 2], b: &[f64; 2]| (-0.8 * ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2))).exp();
        let n = 198;
        let mut a = vec![0.0; n * n];
        for j in 0..n {
            for i in 0..n {
                a[i + j * n] = k(&pts[i % 6], &pts[j % 6]);
            }
        }
        let (vals, v) = run(&a, n);
        let (res, orth) = check(&a, n, &vals, &v);
        assert!(res < 1e-12 && orth < 1e-12, "res={res} orth={orth}");
        let mut small = vec![0.0; 36];
        for j in 0..6 {
            for i in 0..6 {
                small[i + j * 6] = k(&pts[i], &pts[j]);
            }
        }
        let (sv, _) = run(&small, 6);
        let top = vals[n - 1];
        for (got, want) in vals[n - 6..].iter().zip(&sv) {
            assert!((got - 33.0 * want).abs() < 1e-11 * top, "{got} vs {}", 33.0 * want);
        }
        assert!(vals[..n - 6].iter().all(|x| x.abs() < 1e-13 * top));
    }

    #[test]
    fn random_matrices_have_small_residuals() {
        for &n in &[1usize, 2, 3, 4, 7, 33, 70, 130] {
            let a = lcg_matrix(n, n as u64);
            let (vals, v) = run(&a, n);
            assert!(vals.windows(2).all(|w| w[0] <= w[1]));
            let (res, orth) = check(&a, n, &vals, &v);
            assert!(res < 1e-13 && orth < 1e-13, "n={n} res={res} orth={orth}");
            // Values-only path gives the same values.
            let mut vals2 = vec![0.0; n];
            let mut work = vec![0.0; sym_eigenvalues_workspace_len(n)];
            sym_eigen(MatRef::from_col_major(&a, n, n).unwrap(), &mut vals2, None, &mut work, &EigenParams::default())
                .unwrap();
            for (x, y) in vals.iter().zip(&vals2) {
                assert!((x - y).abs() < 1e-13, "n={n}");
            }
        }
    }

    #[test]
    fn upper_triangle_is_not_read() {
        let n = 5;
        let mut a = lcg_matrix(n, 9);
        let (v1, _) = run(&a, n);
        for j in 1..n {
            for i in 0..j {
                a[i + j * n] = f64::NAN;
            }
        }
        let (v2, _) = run(&a, n);
        assert_eq!(v1, v2);
    }

    #[test]
    fn bad_input_is_an_error() {
        let n = 4;
        let mut a = lcg_matrix(n, 3);
        let mut vals = [0.0; 4];
        let mut v = [0.0; 16];
        let mut work = vec![0.0; sym_eigen_workspace_len(n)];
        let p = EigenParams::default();
        a[2] = f64::INFINITY;
        let r = sym_eigen(
            MatRef::from_col_major(&a, n, n).unwrap(),
            &mut vals,
            Some(MatMut::from_col_major(&mut v, n, n).unwrap()),
            &mut work,
            &p,
        );
        assert_eq!(r, Err(LinalgError::NonFinite));
        a[2] = 0.1;
        let r = sym_eigen(MatRef::from_col_major(&a, n, n).unwrap(), &mut vals[..3], None, &mut work, &p);
        assert_eq!(r, Err(LinalgError::DimensionMismatch));
        let r = sym_eigen(
            MatRef::from_col_major(&a, n, n).unwrap(),
            &mut vals,
            Some(MatMut::from_col_major(&mut v, n, n).unwrap()),
            &mut work[..10],
            &p,
        );
        assert_eq!(r, Err(LinalgError::WorkspaceTooSmall { needed: sym_eigen_workspace_len(n), got: 10 }));
        let r =
            sym_eigen(MatRef::from_col_major(&a, n, n).unwrap(), &mut vals, None, &mut work, &EigenParams::new(0.0, 0));
        assert!(matches!(r, Err(LinalgError::NoConvergence { .. })));
    }
}
