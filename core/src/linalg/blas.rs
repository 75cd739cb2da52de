//! Level-1, 2 and 3 kernels on slices and strided views.
//!
//! `beta = 0` means "overwrite": the old contents of the output are not read,
//! so NaN garbage in an uninitialised output buffer does not leak through
//! (the BLAS convention). Likewise `alpha = 0` does not read `A` or `B`.
//!
//! ## Level 3: how gemm and syrk are blocked
//!
//! [`gemm`] and [`syrk`] follow the layered scheme of Goto & van de Geijn,
//! "Anatomy of high-performance matrix multiplication", ACM TOMS 34(3), 2008
//! (the BLIS loop structure, Van Zee & van de Geijn, ACM TOMS 41(3), 2015):
//!
//! ```text
//! for jc in steps of NC over the columns of C      (B block: KC × NC, packed)
//!   for pc in steps of KC over the inner dimension
//!     pack B[pc.., jc..] into NR-wide row panels
//!     for ic in steps of MC over the rows of C     (A block: MC × KC, packed)
//!       pack A[ic.., pc..] into MR-tall column panels
//!       for each MR × NR tile of C: micro-kernel (rank-KC update in registers)
//! ```
//!
//! Packing makes the micro-kernel's reads contiguous whatever the strides of
//! the views, so transposed and strided operands cost no more than
//! column-major ones apart from the O(mk + kn) packing reads. The micro-kernel
//! is plain safe Rust over fixed-size arrays, written so that LLVM keeps the
//! MR × NR accumulator in vector registers.
//!
//! The packed panels live either in the caller's workspace
//! ([`gemm_with_workspace`], [`syrk_with_workspace`], sized by
//! [`gemm_workspace_len`] / [`syrk_workspace_len`]) or, for [`gemm`] and
//! [`syrk`], in fixed-size stack arrays of [`STACK_PANEL_LEN`] elements
//! (two of them, so 2·8·`STACK_PANEL_LEN` bytes of stack for `f64`). Tiny
//! products (fewer than [`SMALL_FLOPS`] multiply-adds) skip packing and the
//! stack arrays altogether.
//!
//! Accuracy: every entry of `A·B` is a sum of `k` products accumulated in
//! the working precision, in an order that depends on the blocking, so
//! `|fl(A·B) − A·B| ≤ γ_k·|A|·|B|` entrywise with `γ_k = k·ε/(1 − k·ε)`
//! (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.5).

use crate::{LinalgError, MatMut, MatRef, Real};

/// `xᵀy`. Errors if the lengths differ.
pub fn dot<T: Real>(x: &[T], y: &[T]) -> Result<T, LinalgError> {
    if x.len() != y.len() {
        return Err(LinalgError::DimensionMismatch);
    }
    Ok(dot_unchecked(x, y))
}

/// `xᵀy` over the common prefix, in eight independent lanes: two AVX2
/// vectors of f64 in flight, so the adds are not one dependency chain (the
/// top-k solver's norms and Gram–Schmidt dots run on this).
#[inline]
pub(crate) fn dot_unchecked<T: Real>(x: &[T], y: &[T]) -> T {
    const LANES: usize = 8;
    let n = x.len().min(y.len());
    let (xc, yc) = (x[..n].chunks_exact(LANES), y[..n].chunks_exact(LANES));
    let mut s = T::ZERO;
    for (&a, &b) in xc.remainder().iter().zip(yc.remainder()) {
        s += a * b;
    }
    let mut acc = [T::ZERO; LANES];
    for (a, b) in xc.zip(yc) {
        for l in 0..LANES {
            acc[l] += a[l] * b[l];
        }
    }
    ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + s
}

/// `y ← αx + y`. Errors if the lengths differ.
pub fn axpy<T: Real>(alpha: T, x: &[T], y: &mut [T]) -> Result<(), LinalgError> {
    if x.len() != y.len() {
        return Err(LinalgError::DimensionMismatch);
    }
    axpy_unchecked(alpha, x, y);
    Ok(())
}

#[inline]
pub(crate) fn axpy_unchecked<T: Real>(alpha: T, x: &[T], y: &mut [T]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += alpha * *xi;
    }
}

/// Euclidean norm `‖x‖₂`, scaled so that it neither overflows nor underflows.
pub fn nrm2<T: Real>(x: &[T]) -> T {
    let mut scale = T::ZERO;
    for &v in x {
        scale = scale.max(v.abs());
    }
    if scale == T::ZERO || !scale.is_finite() {
        return scale;
    }
    let mut ssq = T::ZERO;
    for &v in x {
        let t = v / scale;
        ssq += t * t;
    }
    scale * ssq.sqrt()
}

/// `y ← α·A·x + β·y` for an `m × n` view `A`.
pub fn gemv<T: Real>(alpha: T, a: MatRef<'_, T>, x: &[T], beta: T, y: &mut [T]) -> Result<(), LinalgError> {
    let (m, n) = (a.nrows(), a.ncols());
    if x.len() != n || y.len() != m {
        return Err(LinalgError::DimensionMismatch);
    }
    if beta == T::ZERO {
        y.iter_mut().for_each(|v| *v = T::ZERO);
    } else if beta != T::ONE {
        y.iter_mut().for_each(|v| *v *= beta);
    }
    if a.row_stride() == 1 || m <= 1 {
        // Column-major: y += (α xⱼ) · A[:, j], contiguous axpy per column,
        // four columns per pass over y: each yᵢ takes the same four
        // additions in the same order as four axpys (the same bits), with
        // one load and one store instead of four.
        let mut j = 0;
        while j + 4 <= n {
            if let (Some(c0), Some(c1), Some(c2), Some(c3)) = (a.col(j), a.col(j + 1), a.col(j + 2), a.col(j + 3)) {
                let s = [alpha * x[j], alpha * x[j + 1], alpha * x[j + 2], alpha * x[j + 3]];
                let cols = c0.iter().zip(c1).zip(c2.iter().zip(c3));
                for (yi, ((&v0, &v1), (&v2, &v3))) in y.iter_mut().zip(cols) {
                    *yi = (((*yi + s[0] * v0) + s[1] * v1) + s[2] * v2) + s[3] * v3;
                }
                j += 4;
            } else {
                break;
            }
        }
        for (j, &xj) in x.iter().enumerate().skip(j) {
            let s = alpha * xj;
            match a.col(j) {
                Some(col) => axpy_unchecked(s, col, y),
                None => {
                    for (i, yi) in y.iter_mut().enumerate() {
                        *yi += s * a.at(i, j);
                    }
                }
            }
        }
    } else if a.col_stride() == 1 {
        // Row-major: yᵢ += α · A[i, :]·x, contiguous dot per row.
        let at = a.t();
        for (i, yi) in y.iter_mut().enumerate() {
            let row = at.col(i).unwrap_or(&[]);
            *yi += alpha * dot_unchecked(row, x);
        }
    } else {
        for (i, yi) in y.iter_mut().enumerate() {
            let mut s = T::ZERO;
            for (j, &xj) in x.iter().enumerate() {
                s += a.at(i, j) * xj;
            }
            *yi += alpha * s;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Level 3
// ---------------------------------------------------------------------------

/// Rows of the register tile of the micro-kernel.
const MR: usize = 8;
/// Columns of the register tile of the micro-kernel.
const NR: usize = 4;
/// Inner-dimension block: a packed `MR × KC` A panel plus an `KC × NR` B
/// panel stay in L1 while the micro-kernel runs.
const KC: usize = 256;
/// Row block of A packed per inner block (`MC × KC` stays in L2).
const MC: usize = 128;
/// Column block of B packed per inner block (`KC × NC` stays in L3).
const NC: usize = 2048;

/// Elements in each of the two stack panels [`gemm`] and [`syrk`] use when
/// the caller gives no workspace.
pub const STACK_PANEL_LEN: usize = 4096;
/// Stack-panel blocking: `SMC × SKC` for A and `SKC × SNC` for B, each
/// exactly [`STACK_PANEL_LEN`] elements.
const SKC: usize = 128;
const SMC: usize = STACK_PANEL_LEN / SKC;
const SNC: usize = STACK_PANEL_LEN / SKC;

/// Below this many multiply-adds (`m·n·k`) [`gemm`] and [`syrk`] use a
/// straight triple loop: packing would cost more than it saves.
pub const SMALL_FLOPS: usize = 16 * 16 * 16;

/// Cache-block sizes for one call of the packed driver.
#[derive(Clone, Copy)]
struct Blocking {
    mc: usize,
    kc: usize,
    nc: usize,
}

#[inline]
fn round_up(x: usize, to: usize) -> usize {
    x.div_ceil(to).saturating_mul(to)
}

/// Packed-A length for an `mc × kc` block (rows padded to a multiple of MR).
#[inline]
fn apack_len(mc: usize, kc: usize) -> usize {
    round_up(mc, MR).saturating_mul(kc)
}

/// Packed-B length for a `kc × nc` block (columns padded to a multiple of NR).
#[inline]
fn bpack_len(kc: usize, nc: usize) -> usize {
    round_up(nc, NR).saturating_mul(kc)
}

/// Blocking the workspace driver uses for an `m × n × k` product.
fn workspace_blocking(m: usize, n: usize, k: usize) -> Blocking {
    Blocking { mc: m.clamp(1, MC), kc: k.clamp(1, KC), nc: n.clamp(1, NC) }
}

/// Workspace length (elements of `T`) that [`gemm_with_workspace`] needs for
/// `A: m × k`, `B: k × n`. Zero when the product is empty. Saturates at
/// `usize::MAX` instead of overflowing.
pub fn gemm_workspace_len(m: usize, n: usize, k: usize) -> usize {
    if m == 0 || n == 0 || k == 0 {
        return 0;
    }
    let bl = workspace_blocking(m, n, k);
    apack_len(bl.mc, bl.kc).saturating_add(bpack_len(bl.kc, bl.nc))
}

/// Workspace length (elements of `T`) that [`syrk_with_workspace`] needs for
/// `A: n × k`.
pub fn syrk_workspace_len(n: usize, k: usize) -> usize {
    gemm_workspace_len(n, n, k)
}

/// `C ← α·A·B + β·C` for `A: m × k`, `B: k × n`, `C: m × n`, any strides.
///
/// Transposes are expressed through the views ([`MatRef::t`]). Uses two
/// stack panels of [`STACK_PANEL_LEN`] elements when the product is not
/// tiny; [`gemm_with_workspace`] uses caller memory instead and larger
/// blocks (a little faster for big matrices).
///
/// Accuracy: entrywise `|C − C_exact| ≤ γ_k·|α|·|A|·|B| + (rounding of β·C)`,
/// `γ_k = k·ε/(1 − k·ε)`.
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] if the shapes do not fit together.
/// Non-finite inputs are not rejected: they propagate as in IEEE arithmetic.
pub fn gemm<T: Real>(
    alpha: T,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    beta: T,
    c: MatMut<'_, T>,
) -> Result<(), LinalgError> {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    if b.nrows() != k || c.nrows() != m || c.ncols() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    level3_stack(alpha, a, b, beta, c, false);
    Ok(())
}

/// [`gemm`] with its packing panels in `work` (at least
/// [`gemm_workspace_len`]`(m, n, k)` elements; its contents on entry are
/// ignored and on exit unspecified).
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] if the shapes do not fit together;
/// [`LinalgError::WorkspaceTooSmall`] if `work` is too short.
pub fn gemm_with_workspace<T: Real>(
    alpha: T,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    beta: T,
    c: MatMut<'_, T>,
    work: &mut [T],
) -> Result<(), LinalgError> {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    if b.nrows() != k || c.nrows() != m || c.ncols() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    let needed = gemm_workspace_len(m, n, k);
    if work.len() < needed {
        return Err(LinalgError::WorkspaceTooSmall { needed, got: work.len() });
    }
    level3_work(alpha, a, b, beta, c, work, false);
    Ok(())
}

/// `C ← α·A·Aᵀ + β·C` for `A: n × k`, `C: n × n`, any strides.
///
/// Only the lower triangle of `C` is read (for `β ≠ 0`); both triangles are
/// written and the result is exactly symmetric (the upper triangle is a copy
/// of the lower). Half the flops of the equivalent [`gemm`]. Stack use as for
/// [`gemm`]; accuracy as for [`gemm`].
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] if `C` is not `n × n`.
pub fn syrk<T: Real>(alpha: T, a: MatRef<'_, T>, beta: T, mut c: MatMut<'_, T>) -> Result<(), LinalgError> {
    let n = a.nrows();
    if c.nrows() != n || c.ncols() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    level3_stack(alpha, a, a.t(), beta, c.rb_mut(), true);
    mirror_lower(c.rb_mut(), T::ONE);
    Ok(())
}

/// [`syrk`] with its packing panels in `work` (at least
/// [`syrk_workspace_len`]`(n, k)` elements).
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] if `C` is not `n × n`;
/// [`LinalgError::WorkspaceTooSmall`] if `work` is too short.
pub fn syrk_with_workspace<T: Real>(
    alpha: T,
    a: MatRef<'_, T>,
    beta: T,
    mut c: MatMut<'_, T>,
    work: &mut [T],
) -> Result<(), LinalgError> {
    let (n, k) = (a.nrows(), a.ncols());
    if c.nrows() != n || c.ncols() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    let needed = syrk_workspace_len(n, k);
    if work.len() < needed {
        return Err(LinalgError::WorkspaceTooSmall { needed, got: work.len() });
    }
    level3_work(alpha, a, a.t(), beta, c.rb_mut(), work, true);
    mirror_lower(c.rb_mut(), T::ONE);
    Ok(())
}

/// `C ← α·A·B + β·C` on the lower triangle of the square `C` only (the
/// strict upper triangle is neither read nor written). Shapes must already
/// be checked. Used by the blocked Cholesky for its trailing update.
pub(crate) fn gemm_lower_unchecked<T: Real>(alpha: T, a: MatRef<'_, T>, b: MatRef<'_, T>, beta: T, c: MatMut<'_, T>) {
    level3_stack(alpha, a, b, beta, c, true);
}

/// Tile edge of [`mirror_lower`].
const MIRROR_TILE: usize = 32;

/// Copies the strict lower triangle of the square `c` onto its upper
/// triangle times `sign`: `C[i][j] = sign·C[j][i]` for `i < j`. With
/// `sign < 0` (an antisymmetric matrix) the diagonal is set to zero too.
/// Walks destination columns in tiles of 32 source columns, so a tile's
/// source rows stay in cache. A non-square `c` is left alone.
///
/// The one mirror of the crate (symmetric products, the Kronecker
/// learners' symmetric and reciprocal solves); the host's parallel
/// version splits the same walk over column blocks.
pub fn mirror_lower<T: Real>(mut c: MatMut<'_, T>, sign: T) {
    let n = c.nrows();
    if c.ncols() != n {
        return;
    }
    for j0 in (0..n).step_by(MIRROR_TILE) {
        let j1 = (j0 + MIRROR_TILE).min(n);
        for i0 in (0..j1).step_by(MIRROR_TILE) {
            for j in j0..j1 {
                for i in i0..(i0 + MIRROR_TILE).min(j) {
                    let v = c.at(j, i);
                    *c.at_mut(i, j) = sign * v;
                }
            }
        }
    }
    if sign < T::ZERO {
        for j in 0..n {
            *c.at_mut(j, j) = T::ZERO;
        }
    }
}

/// Scales `C` by `β` (all of it, or its lower triangle); `β = 0` overwrites.
fn scale_output<T: Real>(beta: T, c: &mut MatMut<'_, T>, lower: bool) {
    if beta == T::ONE {
        return;
    }
    for j in 0..c.ncols() {
        let i0 = if lower { j.min(c.nrows()) } else { 0 };
        for i in i0..c.nrows() {
            let v = c.at_mut(i, j);
            *v = if beta == T::ZERO { T::ZERO } else { beta * *v };
        }
    }
}

/// Dispatch for the no-workspace entry points: tiny products take the
/// triple loop, the rest the packed driver on stack panels.
fn level3_stack<T: Real>(alpha: T, a: MatRef<'_, T>, b: MatRef<'_, T>, beta: T, mut c: MatMut<'_, T>, lower: bool) {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    scale_output(beta, &mut c, lower);
    if m == 0 || n == 0 || k == 0 || alpha == T::ZERO {
        return;
    }
    if m.saturating_mul(n).saturating_mul(k) < SMALL_FLOPS {
        small_product(alpha, a, b, &mut c, lower);
    } else {
        packed_on_stack(alpha, a, b, &mut c, lower);
    }
}

/// The packed driver on two fixed stack panels. Kept out of line so that
/// callers taking the small path do not reserve the panels.
#[inline(never)]
fn packed_on_stack<T: Real>(alpha: T, a: MatRef<'_, T>, b: MatRef<'_, T>, c: &mut MatMut<'_, T>, lower: bool) {
    let mut apack = [T::ZERO; STACK_PANEL_LEN];
    let mut bpack = [T::ZERO; STACK_PANEL_LEN];
    let bl = Blocking { mc: SMC, kc: SKC, nc: SNC };
    packed_driver(alpha, a, b, c, &mut apack, &mut bpack, bl, lower);
}

/// Dispatch for the workspace entry points (`work` already checked).
fn level3_work<T: Real>(
    alpha: T,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    beta: T,
    mut c: MatMut<'_, T>,
    work: &mut [T],
    lower: bool,
) {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    scale_output(beta, &mut c, lower);
    if m == 0 || n == 0 || k == 0 || alpha == T::ZERO {
        return;
    }
    let bl = workspace_blocking(m, n, k);
    let (apack, rest) = work.split_at_mut(apack_len(bl.mc, bl.kc).min(work.len()));
    packed_driver(alpha, a, b, &mut c, apack, rest, bl, lower);
}

/// `C += α·A·B` by a triple loop (column-major friendly `j, p, i` order).
fn small_product<T: Real>(alpha: T, a: MatRef<'_, T>, b: MatRef<'_, T>, c: &mut MatMut<'_, T>, lower: bool) {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    for j in 0..n {
        let i0 = if lower { j.min(m) } else { 0 };
        for p in 0..k {
            let s = alpha * b.at(p, j);
            for i in i0..m {
                *c.at_mut(i, j) += s * a.at(i, p);
            }
        }
    }
}

/// The Goto/BLIS loop nest (see the module docs): `C += α·A·B`, optionally
/// on the lower triangle of `C` only. `apack`/`bpack` must hold
/// `apack_len(mc, kc)` / `bpack_len(kc, nc)` elements; shorter slices only
/// make it use smaller blocks (never an out-of-bounds access).
// Eight inputs: private: the product's operands, its two pack buffers and its blocking.
#[allow(clippy::too_many_arguments)]
fn packed_driver<T: Real>(
    alpha: T,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    c: &mut MatMut<'_, T>,
    apack: &mut [T],
    bpack: &mut [T],
    bl: Blocking,
    lower: bool,
) {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    // Shrink the blocks to what the panels can hold (defensive; the callers
    // size them exactly).
    let kc = bl.kc.max(1);
    let mc = round_down_to(apack.len() / kc, MR).min(round_up(bl.mc, MR)).max(MR);
    let nc = round_down_to(bpack.len() / kc, NR).min(round_up(bl.nc, NR)).max(NR);
    if apack.len() < MR * kc || bpack.len() < NR * kc {
        // Not reachable from the public entry points; stay correct anyway.
        small_product(alpha, a, b, c, lower);
        return;
    }
    let mut jc = 0;
    while jc < n {
        let nb = nc.min(n - jc);
        let mut pc = 0;
        while pc < k {
            let kb = kc.min(k - pc);
            pack_b(b, pc, kb, jc, nb, bpack);
            let mut ic = if lower { round_down_to(jc, MR) } else { 0 };
            while ic < m {
                let mb = mc.min(m - ic);
                pack_a(a, ic, mb, pc, kb, apack);
                macro_kernel(alpha, Block { ic, mb, jc, nb, kb }, apack, bpack, c, lower);
                ic += mb;
            }
            pc += kb;
        }
        jc += nb;
    }
}

#[inline]
fn round_down_to(x: usize, to: usize) -> usize {
    x / to * to
}

/// Packs `A[ic..ic+mb, pc..pc+kb]` as MR-tall panels: panel `r` holds, for
/// each `p`, the MR values `A[ic + r·MR + i, pc + p]` (zero-padded).
fn pack_a<T: Real>(a: MatRef<'_, T>, ic: usize, mb: usize, pc: usize, kb: usize, apack: &mut [T]) {
    let data = a.as_slice();
    let (rs, cs) = (a.row_stride(), a.col_stride());
    for (r, panel) in apack.chunks_exact_mut(MR * kb).take(mb.div_ceil(MR)).enumerate() {
        let i0 = ic + r * MR;
        let rows = MR.min(ic + mb - i0);
        for (p, dst) in panel.chunks_exact_mut(MR).enumerate() {
            let base = i0 * rs + (pc + p) * cs;
            if rs == 1 && rows == MR {
                if let Some(src) = data.get(base..base + MR) {
                    dst.copy_from_slice(src);
                    continue;
                }
            }
            for (i, d) in dst.iter_mut().enumerate() {
                *d = if i < rows { data.get(base + i * rs).copied().unwrap_or(T::ZERO) } else { T::ZERO };
            }
        }
    }
}

/// Packs `B[pc..pc+kb, jc..jc+nb]` as NR-wide panels: panel `q` holds, for
/// each `p`, the NR values `B[pc + p, jc + q·NR + j]` (zero-padded).
fn pack_b<T: Real>(b: MatRef<'_, T>, pc: usize, kb: usize, jc: usize, nb: usize, bpack: &mut [T]) {
    let data = b.as_slice();
    let (rs, cs) = (b.row_stride(), b.col_stride());
    for (q, panel) in bpack.chunks_exact_mut(NR * kb).take(nb.div_ceil(NR)).enumerate() {
        let j0 = jc + q * NR;
        let cols = NR.min(jc + nb - j0);
        if cols == NR && cs == 1 {
            for (p, dst) in panel.chunks_exact_mut(NR).enumerate() {
                let base = (pc + p) * rs + j0;
                match data.get(base..base + NR) {
                    Some(src) => dst.copy_from_slice(src),
                    None => dst.iter_mut().for_each(|d| *d = T::ZERO),
                }
            }
            continue;
        }
        for j in 0..NR {
            if j < cols {
                let base = pc * rs + (j0 + j) * cs;
                for (p, dst) in panel.chunks_exact_mut(NR).enumerate() {
                    dst[j] = data.get(base + p * rs).copied().unwrap_or(T::ZERO);
                }
            } else {
                panel.chunks_exact_mut(NR).for_each(|dst| dst[j] = T::ZERO);
            }
        }
    }
}

/// Where one packed block sits: rows `ic..ic + mb` and columns
/// `jc..jc + nb` of C, over a depth of `kb`.
#[derive(Clone, Copy)]
struct Block {
    ic: usize,
    mb: usize,
    jc: usize,
    nb: usize,
    kb: usize,
}

/// All MR × NR tiles of one packed block: `C[ic.., jc..] += α·Apack·Bpack`.
fn macro_kernel<T: Real>(alpha: T, blk: Block, apack: &[T], bpack: &[T], c: &mut MatMut<'_, T>, lower: bool) {
    let Block { ic, mb, jc, nb, kb } = blk;
    let (rs, cs) = (c.row_stride(), c.col_stride());
    let cdata = c.as_slice_mut();
    for (q, bp) in bpack.chunks_exact(NR * kb).take(nb.div_ceil(NR)).enumerate() {
        let j0 = jc + q * NR;
        let cols = NR.min(jc + nb - j0);
        for (r, ap) in apack.chunks_exact(MR * kb).take(mb.div_ceil(MR)).enumerate() {
            let i0 = ic + r * MR;
            let rows = MR.min(ic + mb - i0);
            // Lower mode: skip tiles whose every row is above every column.
            if lower && i0 + rows <= j0 {
                continue;
            }
            let acc = micro_kernel(ap, bp);
            let full = !lower || i0 >= j0 + cols - 1;
            for (j, accj) in acc.iter().enumerate().take(cols) {
                let base = i0 * rs + (j0 + j) * cs;
                if rs == 1 && full && rows == MR {
                    if let Some(dst) = cdata.get_mut(base..base + MR) {
                        for (d, &v) in dst.iter_mut().zip(accj) {
                            *d += alpha * v;
                        }
                        continue;
                    }
                }
                for (i, &v) in accj.iter().enumerate().take(rows) {
                    if lower && i0 + i < j0 + j {
                        continue;
                    }
                    if let Some(d) = cdata.get_mut(base + i * rs) {
                        *d += alpha * v;
                    }
                }
            }
        }
    }
}

/// The register tile: returns `Σ_p a_p · b_pᵀ` for MR-tall `ap` and NR-wide
/// `bp` panels of equal depth. Fixed-size arrays and constant trip counts let
/// LLVM unroll the `i`/`j` loops and keep the accumulator in registers.
#[inline(always)]
fn micro_kernel<T: Real>(ap: &[T], bp: &[T]) -> [[T; MR]; NR] {
    let mut acc = [[T::ZERO; MR]; NR];
    for (a, b) in ap.chunks_exact(MR).zip(bp.chunks_exact(NR)) {
        for j in 0..NR {
            let bj = b[j];
            for i in 0..MR {
                acc[j][i] += a[i] * bj;
            }
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic values in [-1, 1) (xorshift64*).
    fn fill(seed: u64, out: &mut [f64]) {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        for v in out {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            *v = (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 * 2f64.powi(-52) - 1.0;
        }
    }

    /// `gemv` on a column-major `A` gives, bit for bit, one axpy per column
    /// in column order (the four-columns pass keeps that order), for 0 to 9
    /// columns and both β paths; the same matrix stored row-major agrees
    /// with it to rounding.
    #[test]
    fn gemv_equals_axpys_in_column_order() {
        for (m, n) in [(1, 0), (1, 5), (3, 4), (7, 9), (5, 8), (2, 1)] {
            let mut a = [0.0; 63];
            fill(11 + n as u64, &mut a[..m * n]);
            // Magnitudes far apart, so that the order of the sums shows.
            a.iter_mut().step_by(3).for_each(|v| *v *= 1e7);
            let mut x = [0.0; 9];
            fill(5, &mut x[..n]);
            let mut y0 = [0.0; 7];
            fill(9, &mut y0[..m]);
            for beta in [1.0, 0.5] {
                let mut want = y0;
                want[..m].iter_mut().for_each(|v| *v *= beta);
                for j in 0..n {
                    let s = 0.75 * x[j];
                    for i in 0..m {
                        want[i] += s * a[i + j * m];
                    }
                }
                let mut y = y0;
                gemv(0.75, MatRef::from_col_major(&a[..m * n], m, n).unwrap(), &x[..n], beta, &mut y[..m]).unwrap();
                for i in 0..m {
                    assert_eq!(y[i].to_bits(), want[i].to_bits(), "m {m} n {n} beta {beta} i {i}");
                }
                let mut at = [0.0; 63];
                for i in 0..m {
                    for j in 0..n {
                        at[i * n + j] = a[i + j * m];
                    }
                }
                let mut yr = y0;
                gemv(0.75, MatRef::from_row_major(&at[..m * n], m, n).unwrap(), &x[..n], beta, &mut yr[..m]).unwrap();
                for i in 0..m {
                    let scale = want[i].abs().max(1e7 * n as f64);
                    assert!((yr[i] - want[i]).abs() <= 1e-14 * scale, "row-major m {m} n {n} i {i}");
                }
            }
        }
    }

    /// `mirror_lower` across tile edges (n = 70 > 2 tiles), both signs,
    /// row- and column-major: the upper triangle is `sign ×` the lower,
    /// the lower untouched, the diagonal zero for `sign < 0`.
    #[test]
    fn mirror_lower_copies_the_lower_triangle() {
        let n = 70;
        let mut src = [0.0; 70 * 70];
        fill(3, &mut src);
        for sign in [1.0, -1.0] {
            for row_major in [false, true] {
                let mut a = src;
                let m =
                    if row_major { MatMut::from_row_major(&mut a, n, n) } else { MatMut::from_col_major(&mut a, n, n) };
                mirror_lower(m.unwrap(), sign);
                let at = |i: usize, j: usize| if row_major { a[i * n + j] } else { a[i + j * n] };
                let orig = |i: usize, j: usize| if row_major { src[i * n + j] } else { src[i + j * n] };
                for j in 0..n {
                    assert_eq!(at(j, j), if sign < 0.0 { 0.0 } else { orig(j, j) });
                    for i in j + 1..n {
                        assert_eq!(at(i, j), orig(i, j));
                        assert_eq!(at(j, i), sign * orig(i, j));
                    }
                }
            }
        }
    }

    /// Checks `C = α·A·B + β·C0` entrywise against a naive sum with the bound
    /// `2·(k+2)·ε·(|α|·|A|·|B| + |β|·|C0|)` (γ_k for the sum, one more ε each
    /// for the scalings, doubled for the reference's own rounding).
    // Eight inputs: a test's grid point: shape, transposes, scalars and the path.
    #[allow(clippy::too_many_arguments)]
    fn check_gemm(m: usize, n: usize, k: usize, ta: bool, tb: bool, alpha: f64, beta: f64, via_ws: bool) {
        let mut abuf = [0.0; 40 * 40];
        let mut bbuf = [0.0; 40 * 40];
        let mut cbuf = [0.0; 3 * 40 * 40];
        fill(1 + m as u64, &mut abuf);
        fill(2 + n as u64, &mut bbuf);
        fill(3 + k as u64, &mut cbuf);
        let c0 = cbuf;
        // A stored with leading dimension 40; transposed views swap strides.
        let a =
            if ta { MatRef::new(&abuf, k, m, 40, 1).unwrap().t() } else { MatRef::new(&abuf, m, k, 1, 40).unwrap() };
        let b =
            if tb { MatRef::new(&bbuf, n, k, 1, 40).unwrap().t() } else { MatRef::new(&bbuf, k, n, 1, 40).unwrap() };
        // C with row stride 3 and column stride 3·40 (non-unit in both).
        let c = MatMut::new(&mut cbuf, m, n, 3, 120).unwrap();
        if via_ws {
            let mut work = [0.0; 20000];
            gemm_with_workspace(alpha, a, b, beta, c, &mut work[..gemm_workspace_len(m, n, k)]).unwrap();
        } else {
            gemm(alpha, a, b, beta, c).unwrap();
        }
        for i in 0..m {
            for j in 0..n {
                let (mut s, mut abs) = (0.0, 0.0);
                for p in 0..k {
                    s += a.at(i, p) * b.at(p, j);
                    abs += (a.at(i, p) * b.at(p, j)).abs();
                }
                let old = c0[3 * i + 120 * j];
                let want = alpha * s + beta * old;
                let bound = 2.0 * (k as f64 + 2.0) * f64::EPSILON * (alpha.abs() * abs + beta.abs() * old.abs());
                let got = cbuf[3 * i + 120 * j];
                assert!((got - want).abs() <= bound, "({i},{j}) of {m}x{n}x{k}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn gemm_matches_naive_for_odd_shapes_strides_and_transposes() {
        for &(m, n, k) in &[(1, 1, 1), (7, 3, 5), (8, 4, 1), (17, 9, 33), (40, 40, 40), (33, 1, 40), (1, 37, 29)] {
            for ta in [false, true] {
                for tb in [false, true] {
                    check_gemm(m, n, k, ta, tb, 1.0, 0.0, false);
                    check_gemm(m, n, k, ta, tb, -0.5, 2.0, true);
                }
            }
        }
    }

    #[test]
    fn beta_zero_and_alpha_zero_do_not_read_garbage() {
        let a = [f64::NAN; 4];
        let b = [1.0; 4];
        let mut c = [f64::NAN; 4];
        let av = MatRef::from_col_major(&a, 2, 2).unwrap();
        let bv = MatRef::from_col_major(&b, 2, 2).unwrap();
        gemm(0.0, av, bv, 0.0, MatMut::from_col_major(&mut c, 2, 2).unwrap()).unwrap();
        assert_eq!(c, [0.0; 4]);
    }

    #[test]
    fn syrk_is_symmetric_and_matches_gemm() {
        for &(n, k) in &[(1, 1), (5, 3), (19, 40), (40, 7)] {
            let mut abuf = [0.0; 40 * 40];
            fill(9, &mut abuf);
            let a = MatRef::new(&abuf, n, k, 1, 40).unwrap();
            let mut c1 = [0.0; 1600];
            let mut c2 = [0.0; 1600];
            fill(10, &mut c1);
            // Only the lower triangle of C is read: poison the upper one.
            let mut c1u = c1;
            for j in 0..n {
                for i in 0..j {
                    c1u[i + 40 * j] = f64::NAN;
                }
            }
            c2[..].copy_from_slice(&c1);
            for j in 0..n {
                for i in 0..j {
                    c2[i + 40 * j] = c1[j + 40 * i];
                }
            }
            syrk(0.5, a, 1.5, MatMut::new(&mut c1u, n, n, 1, 40).unwrap()).unwrap();
            gemm(0.5, a, a.t(), 1.5, MatMut::new(&mut c2, n, n, 1, 40).unwrap()).unwrap();
            for j in 0..n {
                for i in 0..n {
                    assert_eq!(c1u[i + 40 * j], c1u[j + 40 * i]);
                    let tol = 4.0 * (k as f64 + 2.0) * f64::EPSILON * (k as f64 + 2.0);
                    assert!((c1u[i + 40 * j] - c2[i + 40 * j]).abs() <= tol);
                }
            }
        }
    }

    #[test]
    fn level3_reports_bad_shapes_and_short_workspace() {
        let d = [0.0f64; 12];
        let mut o = [0.0f64; 12];
        let a = MatRef::from_col_major(&d, 3, 4).unwrap();
        let c = MatMut::from_col_major(&mut o, 3, 4).unwrap();
        assert_eq!(gemm(1.0, a, a, 0.0, c), Err(LinalgError::DimensionMismatch));
        let c = MatMut::from_col_major(&mut o, 3, 4).unwrap();
        assert_eq!(syrk(1.0, a, 0.0, c), Err(LinalgError::DimensionMismatch));
        let mut o9 = [0.0f64; 9];
        let c = MatMut::from_col_major(&mut o9, 3, 3).unwrap();
        let mut w = [0.0f64; 3];
        let needed = syrk_workspace_len(3, 4);
        assert_eq!(syrk_with_workspace(1.0, a, 0.0, c, &mut w), Err(LinalgError::WorkspaceTooSmall { needed, got: 3 }));
        assert_eq!(gemm_workspace_len(0, 5, 5), 0);
        assert_eq!(gemm_workspace_len(usize::MAX, usize::MAX, usize::MAX), apack_len(MC, KC) + bpack_len(KC, NC));
    }

    #[test]
    fn f32_gemm_works() {
        let a = [1.0f32, 2.0, 3.0, 4.0];
        let mut c = [0.0f32; 4];
        let av = MatRef::from_col_major(&a, 2, 2).unwrap();
        gemm(1.0, av, av, 0.0, MatMut::from_col_major(&mut c, 2, 2).unwrap()).unwrap();
        assert_eq!(c, [7.0, 10.0, 15.0, 22.0]);
    }
}
