//! The O(n²) passes over a kernel matrix on every core, for the faer
//! backend (they were serial before, and the scalar `exp` alone was up to
//! 18 % of a KPCRank fit's samples):
//!
//! - [`kernel_values`]: inner products → kernel values, column blocks in
//!   parallel, RBF through the vectorised [`crate::vexp::exp_nonpos`]
//!   (compiled for AVX2/FMA when the CPU has them, via `pulp`'s runtime
//!   dispatch);
//! - [`center_kernel_in_place`]: `K̂ = HKH` (000 §6.1), column means and
//!   the update in parallel;
//! - [`sqrt_sandwich_in_place`]: the RankRLS system `L^{½}KL^{½}`, one
//!   task per group of queries ([`ranklet_core::graph::sqrt_sandwich_block`]);
//! - [`all_finite`]: the input checks of the large products and solves;
//! - [`pair_sq_dists`], [`pair_scatter`]: the preference GP's O(m·n) passes
//!   over pairs of items (pairs in chunks, output columns in blocks).
//!
//! Centring and the sandwich run core's arithmetic element by element in
//! the same order, so they equal core's serial results bit for bit. Kernel
//! values differ from core's only by the `exp` (≤ [`crate::vexp::MAX_REL_ERR`]
//! relative); a symmetric matrix stays exactly symmetric, because entry
//! `(j, i)` is computed from the same operands as `(i, j)` (the inner
//! products come exactly symmetric from syrk, and `xn[i] + xn[j]` is
//! commutative). All three work on column-major views in place (no copy);
//! other layouts take core's serial path.

use rayon::prelude::*;

use ranklet_core::backend::{check_pairs_on, laplacian_column, pair_sq_dist, scatter_one, Tri};
use ranklet_core::graph::{sqrt_sandwich_block, Graph, Pair};
use ranklet_core::kernel::{check_kernel_values, Kernel};
use ranklet_core::linalg::blas;
use ranklet_core::{LinalgError, MatMut};

use crate::vexp::exp_nonpos;

/// Columns per parallel task of the elementwise passes.
const BLOCK_COLS: usize = 16;
/// Columns per parallel task of [`mirror_lower`].
const MIRROR_COLS: usize = 32;
/// Below this many entries everything runs on the calling thread.
const SMALL: usize = 1 << 14;

/// The storage of a column-major view (unit row stride) and its column
/// stride, trimmed to end at the last entry; `None` for other layouts.
pub(crate) fn col_major<'a>(m: &'a mut MatMut<'_, f64>) -> Option<(&'a mut [f64], usize)> {
    let (nr, nc) = (m.nrows(), m.ncols());
    if nr == 0 || nc == 0 {
        return Some((&mut [], nr.max(1)));
    }
    let cs = if nc == 1 { nr } else { m.col_stride() };
    if (m.row_stride() != 1 && nr > 1) || cs < nr {
        return None;
    }
    let len = (nc - 1) * cs + nr;
    m.as_slice_mut().get_mut(..len).map(|d| (d, cs))
}

/// Runs `f(first_column, columns)` on blocks of [`BLOCK_COLS`] columns of
/// the trimmed column-major `data` (column stride `cs`), in parallel when
/// `par`; true if every call returned true.
fn col_blocks<F>(par: bool, data: &mut [f64], cs: usize, f: F) -> bool
where
    F: Fn(usize, &mut [f64]) -> bool + Sync + Send,
{
    let chunk = cs * BLOCK_COLS;
    if par && data.len() > SMALL {
        data.par_chunks_mut(chunk).enumerate().all(|(b, c)| f(b * BLOCK_COLS, c))
    } else {
        data.chunks_mut(chunk).enumerate().all(|(b, c)| f(b * BLOCK_COLS, c))
    }
}

/// RBF kernel values of a block of columns (`cols`, column stride `cs`,
/// `nx` rows, first column `j0`): `v ← exp(−γ·max(xn[i] + yn[j] − 2v, 0))`,
/// core's `Kernel::from_dot` operand for operand, with the vectorised exp.
/// Run through [`pulp::Arch::dispatch`], so that the loop is compiled (and
/// auto-vectorised) for the best instruction set the CPU has.
struct RbfBlock<'a> {
    gamma: f64,
    xn: &'a [f64],
    yn: &'a [f64],
    j0: usize,
    cs: usize,
    cols: &'a mut [f64],
}

impl pulp::WithSimd for RbfBlock<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let RbfBlock { gamma, xn, yn, j0, cs, cols } = self;
        for (col, &ynj) in cols.chunks_mut(cs).zip(&yn[j0..]) {
            for (o, &xi) in col.iter_mut().zip(xn) {
                *o = exp_nonpos(-gamma * (xi + ynj - 2.0 * *o).max(0.0));
            }
        }
    }
}

/// [`ranklet_core::backend::Backend::kernel_values`] on every core (see
/// the module docs).
///
/// # Errors
/// As [`ranklet_core::kernel::kernel_values`].
pub fn kernel_values(
    par: bool,
    kernel: &Kernel,
    xn: &[f64],
    yn: &[f64],
    symmetric: bool,
    mut out: MatMut<'_, f64>,
) -> Result<(), LinalgError> {
    let (nx, ny) = (out.nrows(), out.ncols());
    check_kernel_values(kernel, xn, yn, symmetric, nx, ny)?;
    if nx == 0 || ny == 0 {
        return Ok(());
    }
    let Some((data, cs)) = col_major(&mut out) else {
        return ranklet_core::kernel::kernel_values(kernel, xn, yn, symmetric, out);
    };
    let arch = pulp::Arch::new();
    let kernel = *kernel;
    let ok = col_blocks(par, data, cs, |j0, cols| match kernel {
        // In [0, 1]: always finite (a NaN distance is clamped to 0 by
        // `max`, as in core).
        Kernel::Rbf { gamma } => {
            arch.dispatch(RbfBlock { gamma, xn, yn, j0, cs, cols });
            true
        }
        Kernel::Linear => cols.chunks(cs).all(|col| col[..nx].iter().all(|v| v.is_finite())),
        Kernel::Polynomial { .. } => cols.chunks_mut(cs).all(|col| {
            col[..nx].iter_mut().all(|v| {
                *v = kernel.from_dot(*v, 0.0, 0.0);
                v.is_finite()
            })
        }),
    });
    if ok {
        Ok(())
    } else {
        Err(LinalgError::NonFinite)
    }
}

/// [`ranklet_core::backend::Backend::center_kernel_in_place`] on every
/// core, bit-identical to core's
/// [`ranklet_core::kernel::center_kernel_in_place`].
///
/// # Errors
/// As core's.
pub fn center_kernel_in_place(par: bool, mut k: MatMut<'_, f64>, colmean: &mut [f64]) -> Result<f64, LinalgError> {
    let n = k.nrows();
    if k.ncols() != n || colmean.len() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    if n == 0 {
        return Ok(0.0);
    }
    let Some((data, cs)) = col_major(&mut k) else {
        return ranklet_core::kernel::center_kernel_in_place(k, colmean);
    };
    let mean = |(cm, col): (&mut f64, &[f64])| {
        let col = &col[..n];
        *cm = col.iter().sum::<f64>() / n as f64;
        col.iter().all(|v| v.is_finite())
    };
    let finite = if par && data.len() > SMALL {
        colmean.par_iter_mut().zip(data.par_chunks(cs)).map(mean).reduce(|| true, |a, b| a && b)
    } else {
        colmean.iter_mut().zip(data.chunks(cs)).all(mean)
    };
    if !finite {
        return Err(LinalgError::NonFinite);
    }
    let grand = colmean.iter().sum::<f64>() / n as f64;
    let colmean = &*colmean;
    col_blocks(par, data, cs, |j0, cols| {
        for (jj, col) in cols.chunks_mut(cs).enumerate() {
            let cj = colmean[j0 + jj];
            for (v, &ci) in col[..n].iter_mut().zip(colmean) {
                *v += grand - ci - cj;
            }
        }
        true
    });
    Ok(grand)
}

/// [`ranklet_core::backend::Backend::sqrt_sandwich_in_place`] on every
/// core: the queries' column blocks are independent
/// ([`sqrt_sandwich_block`]), bit-identical to core's
/// [`Graph::sqrt_sandwich_in_place`].
///
/// # Errors
/// As core's.
pub fn sqrt_sandwich_in_place(par: bool, graph: &Graph<'_>, mut a: MatMut<'_, f64>) -> Result<(), LinalgError> {
    let n = graph.n();
    let Graph::Queries { query_ptr, weight } = *graph else {
        return graph.sqrt_sandwich_in_place(a);
    };
    if a.nrows() != n || a.ncols() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    if n == 0 {
        return Ok(());
    }
    let Some((mut data, cs)) = col_major(&mut a) else {
        return graph.sqrt_sandwich_in_place(a);
    };
    // One column block per non-empty query, split off in order.
    let mut blocks = Vec::with_capacity(query_ptr.len());
    let mut col = 0;
    for w in query_ptr.windows(2).filter(|w| w[1] > w[0]) {
        let (s, e) = (w[0], w[1]);
        let (_, rest) = data.split_at_mut((s - col) * cs);
        let take = ((e - s) * cs).min(rest.len());
        let (block, rest) = rest.split_at_mut(take);
        blocks.push((block, e - s));
        data = rest;
        col = e;
    }
    let run = |(block, l): (&mut [f64], usize)| {
        MatMut::new(block, n, l, 1, cs).map(|mut m| sqrt_sandwich_block(query_ptr, weight, &mut m))
    };
    if par && n * n > SMALL {
        blocks.into_par_iter().with_min_len(4).try_for_each(run)
    } else {
        blocks.into_iter().try_for_each(run)
    }
}

/// Copies the strict lower triangle of the square column-major `a` onto
/// its upper triangle: core's `blas::mirror_lower`, with its tiles of
/// destination columns spread over threads when `par` and the matrix is
/// large. Safe Rust: every column is split at the diagonal into its upper
/// part (written) and its lower part (only read), so tasks never share a
/// written element. Other layouts, and small or serial calls, go to core.
pub fn mirror_lower(par: bool, mut a: MatMut<'_, f64>) {
    let n = a.nrows();
    if n < 2 || a.ncols() != n {
        return;
    }
    if !(par && n * n > SMALL) {
        return blas::mirror_lower(a, 1.0);
    }
    let Some((data, cs)) = col_major(&mut a) else {
        return blas::mirror_lower(a, 1.0);
    };
    let mut upper: Vec<&mut [f64]> = Vec::with_capacity(n);
    let mut lower: Vec<&[f64]> = Vec::with_capacity(n);
    for (j, col) in data.chunks_mut(cs).enumerate() {
        let (u, l) = col.split_at_mut(j);
        upper.push(u);
        lower.push(&l[..n - j]);
    }
    let lower = &lower;
    // Destination columns [j0, j1) in tiles of MIRROR_COLS source columns:
    // a tile's source rows j0..j1 stay in L1 while its destination columns
    // are written contiguously.
    let job = |(b, block): (usize, &mut [&mut [f64]])| {
        let j0 = b * MIRROR_COLS;
        let j1 = j0 + block.len();
        for i0 in (0..j1).step_by(MIRROR_COLS) {
            for (jj, dst) in block.iter_mut().enumerate() {
                let j = j0 + jj;
                for i in i0..(i0 + MIRROR_COLS).min(j) {
                    dst[i] = lower[i][j - i];
                }
            }
        }
    };
    upper.par_chunks_mut(MIRROR_COLS).enumerate().for_each(job);
}

/// Whether the lower triangle (with the diagonal) of the square `a` is
/// finite; column blocks in parallel when `par`.
pub fn lower_finite(par: bool, a: ranklet_core::MatRef<'_, f64>) -> bool {
    let n = a.nrows();
    let col_ok = |j: usize| match a.col(j).and_then(|c| c.get(j..)) {
        Some(c) => ranklet_core::linalg::slice_finite(c),
        None => (j..n).all(|i| a.at(i, j).is_finite()),
    };
    if par && n * n > SMALL {
        (0..a.ncols().min(n)).into_par_iter().with_min_len(BLOCK_COLS).all(col_ok)
    } else {
        (0..a.ncols().min(n)).all(col_ok)
    }
}

/// Zeroes the strict upper triangle of the square `a` and returns the
/// first column whose diagonal entry is not finite and positive (a
/// Cholesky factor's pivots), column blocks in parallel when `par`.
pub fn zero_upper_check_diag(par: bool, mut a: MatMut<'_, f64>) -> Option<usize> {
    let n = a.nrows();
    let Some((data, cs)) = col_major(&mut a) else {
        let mut bad = None;
        for j in 0..n {
            let d = a.at(j, j);
            if bad.is_none() && !(d.is_finite() && d > 0.0) {
                bad = Some(j);
            }
            for i in 0..j {
                *a.at_mut(i, j) = 0.0;
            }
        }
        return bad;
    };
    let job = |(b, cols): (usize, &mut [f64])| {
        let mut bad = None;
        for (jj, col) in cols.chunks_mut(cs).enumerate() {
            let j = b * BLOCK_COLS + jj;
            let d = col[j];
            if bad.is_none() && !(d.is_finite() && d > 0.0) {
                bad = Some(j);
            }
            col[..j].iter_mut().for_each(|v| *v = 0.0);
        }
        bad
    };
    if par && data.len() > SMALL {
        data.par_chunks_mut(cs * BLOCK_COLS).enumerate().map(job).flatten().min()
    } else {
        data.chunks_mut(cs * BLOCK_COLS).enumerate().filter_map(job).min()
    }
}

/// Whether every element of `a` is finite: [`lower_finite`]'s walk over
/// whole columns (column blocks in parallel when `par`) for column-major
/// views and, through the transpose, row-major ones; core's serial check
/// otherwise.
pub fn all_finite(par: bool, a: ranklet_core::MatRef<'_, f64>) -> bool {
    let nr = a.nrows();
    if nr == 0 || a.ncols() == 0 {
        return true;
    }
    if nr > 1 && a.col(0).is_none() {
        let t = a.t();
        if a.ncols() > 1 && t.col(0).is_some() {
            return all_finite(par, t);
        }
        return a.all_finite();
    }
    let col_ok = |j: usize| a.col(j).is_some_and(ranklet_core::linalg::slice_finite);
    if par && nr.saturating_mul(a.ncols()) > SMALL {
        (0..a.ncols()).into_par_iter().with_min_len(BLOCK_COLS).all(col_ok)
    } else {
        (0..a.ncols()).all(col_ok)
    }
}

/// Pairs per parallel task of [`pair_sq_dists`].
const PAIR_CHUNK: usize = 256;

/// [`ranklet_core::backend::Backend::pair_sq_dists`] with the pairs in
/// parallel chunks: each value is core's [`pair_sq_dist`], so the result
/// equals core's serial one bit for bit.
///
/// # Errors
/// Core's shape rules ([`check_pairs_on`]).
pub fn pair_sq_dists(
    par: bool,
    c: ranklet_core::MatRef<'_, f64>,
    pairs: &[Pair],
    out: &mut [f64],
) -> Result<(), LinalgError> {
    check_pairs_on(&c, pairs, out.len())?;
    // Chunks of pairs compiled for the widest SIMD the CPU has: the same
    // eight-lane sums in the same order as core's, so the same bits.
    let arch = pulp::Arch::new();
    let chunk = |(o, p): (&mut [f64], &[Pair])| {
        arch.dispatch(
            #[inline(always)]
            || o.iter_mut().zip(p).for_each(|(o, p)| *o = pair_sq_dist(&c, p)),
        )
    };
    if par && pairs.len() > PAIR_CHUNK {
        out.par_chunks_mut(PAIR_CHUNK).zip(pairs.par_chunks(PAIR_CHUNK)).for_each(chunk);
    } else {
        chunk((out, pairs));
    }
    Ok(())
}

/// [`ranklet_core::backend::Backend::pair_scatter`] by output column in
/// parallel: each column's pairs are listed in pair order (a counting
/// sort) and added in that order by core's [`scatter_one`], so every entry
/// sees the same additions in the same order as core's serial scatter and
/// the result is bit for bit the same.
///
/// # Errors
/// Core's shape rules ([`check_pairs_on`]); `out` not `n × n` column-major.
pub fn pair_scatter(
    par: bool,
    ut: ranklet_core::MatRef<'_, f64>,
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
    if !par || n.saturating_mul(n) <= SMALL {
        return ranklet_core::backend::pair_scatter(ut, a_tri, pairs, tau, out);
    }
    let Some((data, cs)) = col_major(&mut out) else {
        return ranklet_core::backend::pair_scatter(ut, a_tri, pairs, tau, out);
    };
    // Column j's pairs: entries start[j]..start[j + 1] of `list`, each
    // (pair, sign) in pair order.
    let mut start = vec![0usize; n + 1];
    for (p, &t) in pairs.iter().zip(tau) {
        if t != 0.0 {
            start[p.winner + 1] += 1;
            start[p.loser + 1] += 1;
        }
    }
    for j in 0..n {
        start[j + 1] += start[j];
    }
    let mut fill = start.clone();
    let mut list = vec![(0usize, 0.0f64); start[n]];
    for (s, (p, &t)) in pairs.iter().zip(tau).enumerate() {
        if t != 0.0 {
            list[fill[p.winner]] = (s, 1.0);
            fill[p.winner] += 1;
            list[fill[p.loser]] = (s, -1.0);
            fill[p.loser] += 1;
        }
    }
    // Each column's loop compiled for the widest SIMD the CPU has (the
    // build's baseline is SSE2): the same subtractions, products and sums
    // in the same order, so the same bits.
    let arch = pulp::Arch::new();
    data.par_chunks_mut(cs).enumerate().with_min_len(BLOCK_COLS).for_each(|(j, col)| {
        arch.dispatch(
            #[inline(always)]
            || {
                let len = n.min(col.len());
                let col = &mut col[..len];
                col.iter_mut().for_each(|v| *v = 0.0);
                for &(s, sign) in &list[start[j]..start[j + 1]] {
                    let p = &pairs[s];
                    let lo = if a_tri == Tri::Lower { p.winner.min(p.loser) } else { 0 };
                    if let (Some(cw), Some(cl)) = (ut.col(p.winner), ut.col(p.loser)) {
                        if lo < col.len() {
                            scatter_one(&mut col[lo..], &cw[lo..], &cl[lo..], tau[s], sign);
                        }
                    }
                }
            },
        )
    });
    Ok(())
}

/// [`ranklet_core::backend::Backend::laplacian_columns`] with column
/// blocks in parallel, each by core's [`laplacian_column`] (bit for bit
/// core's serial result).
///
/// # Errors
/// Core's shape rules.
pub fn laplacian_columns(
    par: bool,
    pairs: &[Pair],
    tau: &[f64],
    mut q: MatMut<'_, f64>,
    tmp: &mut [f64],
) -> Result<(), LinalgError> {
    let n = q.nrows();
    if !par || n.saturating_mul(q.ncols()) <= SMALL {
        return ranklet_core::backend::laplacian_columns(pairs, tau, q, tmp);
    }
    if tau.len() != pairs.len() || pairs.iter().any(|p| p.winner >= n || p.loser >= n || p.winner == p.loser) {
        return Err(LinalgError::DimensionMismatch);
    }
    let Some((data, cs)) = col_major(&mut q) else {
        return ranklet_core::backend::laplacian_columns(pairs, tau, q, tmp);
    };
    data.par_chunks_mut(cs * BLOCK_COLS).for_each(|block| {
        let mut y = vec![0.0; n];
        for col in block.chunks_mut(cs) {
            let col = &mut col[..n];
            laplacian_column(pairs, tau, col, &mut y);
            col.copy_from_slice(&y);
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ranklet_core::MatRef;

    /// A lower-triangular `n × n` matrix of pseudo-random values and `m`
    /// pairs with repeated items, both orders and some zero weights.
    fn problem(n: usize, m: usize) -> (Vec<f64>, Vec<Pair>, Vec<f64>) {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut c = vec![0.0; n * n];
        for j in 0..n {
            for i in j..n {
                c[j * n + i] = (next() % 2001) as f64 / 1000.0 - 1.0;
            }
        }
        let mut pairs = Vec::new();
        let mut tau = Vec::new();
        while pairs.len() < m {
            let (w, l) = ((next() % n as u64) as usize, (next() % n as u64) as usize);
            if w != l {
                pairs.push(Pair { winner: w, loser: l, magnitude: 1.0 });
                tau.push(if pairs.len() % 7 == 0 { 0.0 } else { (next() % 1000) as f64 / 300.0 });
            }
        }
        (c, pairs, tau)
    }

    /// Entry `(i, j)` of the weighted Laplacian of the pairs.
    fn w_of(pairs: &[Pair], tau: &[f64], i: usize, j: usize) -> f64 {
        let mut v = 0.0;
        for (p, &t) in pairs.iter().zip(tau) {
            let di = f64::from(u8::from(p.winner == i)) - f64::from(u8::from(p.loser == i));
            let dj = f64::from(u8::from(p.winner == j)) - f64::from(u8::from(p.loser == j));
            v += t * di * dj;
        }
        v
    }

    /// The parallel pair passes equal core's serial ones bit for bit (and
    /// the serial ones equal the definitions: the scatter against `Uᵀ·W`
    /// formed from `W` entry by entry, the variances against `‖C·d‖²`).
    #[test]
    fn parallel_pair_passes_equal_the_serial_ones() {
        let (n, m) = (300, 4000);
        let (c, pairs, tau) = problem(n, m);
        let cr = MatRef::from_col_major(&c, n, n).unwrap();
        let (mut v_par, mut v_ser) = (vec![0.0; m], vec![0.0; m]);
        pair_sq_dists(true, cr, &pairs, &mut v_par).unwrap();
        ranklet_core::backend::pair_sq_dists(cr, &pairs, &mut v_ser).unwrap();
        assert!(v_par.iter().zip(&v_ser).all(|(a, b)| a.to_bits() == b.to_bits()));
        for (p, v) in pairs.iter().zip(&v_ser).take(50) {
            let d: f64 = (0..n).map(|i| (c[p.winner * n + i] - c[p.loser * n + i]).powi(2)).sum();
            assert!((d - v).abs() <= 1e-12 * d.max(1.0));
        }
        let (mut s_par, mut s_ser) = (vec![1.0; n * n], vec![2.0; n * n]);
        pair_scatter(true, cr, Tri::Lower, &pairs, &tau, MatMut::from_col_major(&mut s_par, n, n).unwrap()).unwrap();
        ranklet_core::backend::pair_scatter(
            cr,
            Tri::Lower,
            &pairs,
            &tau,
            MatMut::from_col_major(&mut s_ser, n, n).unwrap(),
        )
        .unwrap();
        // A full operand (Cᵀ), and W applied to every column of it.
        let ct: Vec<f64> = (0..n * n).map(|k| c[(k % n) * n + k / n]).collect();
        let ctr = MatRef::from_col_major(&ct, n, n).unwrap();
        let (mut f_par, mut f_ser) = (vec![0.0; n * n], vec![0.0; n * n]);
        pair_scatter(true, ctr, Tri::Full, &pairs, &tau, MatMut::from_col_major(&mut f_par, n, n).unwrap()).unwrap();
        ranklet_core::backend::pair_scatter(
            ctr,
            Tri::Full,
            &pairs,
            &tau,
            MatMut::from_col_major(&mut f_ser, n, n).unwrap(),
        )
        .unwrap();
        assert!(f_par.iter().zip(&f_ser).all(|(a, b)| a.to_bits() == b.to_bits()));
        let (mut l_par, mut l_ser) = (ct.clone(), ct.clone());
        let mut tmp = vec![0.0; n];
        laplacian_columns(true, &pairs, &tau, MatMut::from_col_major(&mut l_par, n, n).unwrap(), &mut tmp).unwrap();
        ranklet_core::backend::laplacian_columns(
            &pairs,
            &tau,
            MatMut::from_col_major(&mut l_ser, n, n).unwrap(),
            &mut tmp,
        )
        .unwrap();
        assert!(l_par.iter().zip(&l_ser).all(|(a, b)| a.to_bits() == b.to_bits()));
        // Both against W entry by entry: Cᵀ·W and W·Cᵀ.
        for j in (0..n).step_by(29) {
            for i in (0..n).step_by(13) {
                let aw: f64 = (0..n).map(|k| ct[k * n + i] * w_of(&pairs, &tau, k, j)).sum();
                let wa: f64 = (0..n).map(|k| w_of(&pairs, &tau, i, k) * ct[j * n + k]).sum();
                assert!((aw - f_ser[j * n + i]).abs() <= 1e-9 * (1.0 + aw.abs()), "({i}, {j})");
                assert!((wa - l_ser[j * n + i]).abs() <= 1e-9 * (1.0 + wa.abs()), "({i}, {j})");
            }
        }
        assert!(s_par.iter().zip(&s_ser).all(|(a, b)| a.to_bits() == b.to_bits()));
        // Uᵀ·W with W the weighted Laplacian, entry by entry.
        let mut w = vec![0.0; n * n];
        for (p, &t) in pairs.iter().zip(&tau) {
            w[p.winner * n + p.winner] += t;
            w[p.loser * n + p.loser] += t;
            w[p.winner * n + p.loser] -= t;
            w[p.loser * n + p.winner] -= t;
        }
        for j in (0..n).step_by(37) {
            for i in (0..n).step_by(11) {
                let r: f64 = (0..n).map(|k| c[k * n + i] * w[j * n + k]).sum();
                assert!((r - s_ser[j * n + i]).abs() <= 1e-9 * (1.0 + r.abs()), "({i}, {j})");
            }
        }
        // Shapes: a pair outside the matrix is refused.
        let bad = [Pair { winner: 0, loser: n, magnitude: 1.0 }];
        assert!(pair_sq_dists(true, cr, &bad, &mut [0.0]).is_err());
    }
}
