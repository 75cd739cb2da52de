//! Preference graphs and their Laplacians.
//!
//! Every ranking learner in ranklet minimises a least-squares loss
//! `(s − f)ᵀ L (s − f)` (000 eq. 5: `½ Σᵢⱼ Wᵢⱼ((sᵢ − sⱼ) − (fᵢ − fⱼ))²`,
//! written with the Laplacian `L = D − W`), or, for explicit pairs with
//! magnitudes, `Σₑ (f_winner − f_loser − mₑ)² = ‖Df − m‖²` with `L = DᵀD`
//! and the target `t = Dᵀm` in place of `Ls`. [`Graph`] applies `L` and
//! builds `t` in O(n) or O(#pairs) without forming `L`.
//!
//! Rows of one query must be contiguous (`query_ptr` is CSR-like); the host
//! reorders rows before learning.

use crate::{LinalgError, MatMut, MatRef};

/// One explicit preference: `winner ≻ loser`, with a target magnitude for
/// `f(winner) − f(loser)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pair {
    /// Row of the preferred item.
    pub winner: usize,
    /// Row of the other item.
    pub loser: usize,
    /// Target for the score difference (1 when only the direction is known).
    pub magnitude: f64,
}

/// How the complete graph inside each query is weighted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum QueryWeight {
    /// `L_q = I − 11ᵀ/l_q` (004 eq. 31): the loss of a query is the
    /// variance of its residuals, so every query counts equally whatever its
    /// size. The default.
    #[default]
    Equal,
    /// `L_q = l_q·I − 11ᵀ`: the plain Laplacian of the unweighted complete
    /// within-query graph (000 §4, `Wᵢⱼ = 1` for every relevant pair), so
    /// every pair counts equally and large queries weigh more.
    Pairs,
}

/// The graph whose Laplacian weighs the least-squares loss.
#[derive(Clone, Copy, Debug)]
pub enum Graph<'a> {
    /// `L = I`: ordinary regression (RLS, KPCR).
    Identity {
        /// Number of rows.
        n: usize,
    },
    /// Complete graphs inside queries; query `q` is rows
    /// `query_ptr[q]..query_ptr[q+1]`.
    Queries {
        /// Query boundaries: non-decreasing, first 0, last n.
        query_ptr: &'a [usize],
        /// Weighting of each query's graph.
        weight: QueryWeight,
    },
    /// Explicit pairs over `n` rows.
    Pairs {
        /// Number of rows.
        n: usize,
        /// The preferences.
        pairs: &'a [Pair],
    },
}

impl Graph<'_> {
    /// Number of rows the graph is over.
    pub fn n(&self) -> usize {
        match *self {
            Graph::Identity { n } | Graph::Pairs { n, .. } => n,
            Graph::Queries { query_ptr, .. } => query_ptr.last().copied().unwrap_or(0),
        }
    }

    /// Checks the structure: query boundaries monotone from 0, pair rows in
    /// range and distinct, magnitudes finite.
    pub fn validate(&self) -> Result<(), LinalgError> {
        match *self {
            Graph::Identity { .. } => Ok(()),
            Graph::Queries { query_ptr, .. } => {
                if query_ptr.first() != Some(&0) || query_ptr.windows(2).any(|w| w[0] > w[1]) {
                    return Err(LinalgError::DimensionMismatch);
                }
                Ok(())
            }
            Graph::Pairs { n, pairs } => {
                for p in pairs {
                    if p.winner >= n || p.loser >= n || p.winner == p.loser {
                        return Err(LinalgError::DimensionMismatch);
                    }
                    if !p.magnitude.is_finite() {
                        return Err(LinalgError::NonFinite);
                    }
                }
                Ok(())
            }
        }
    }

    /// `c_q` of a query of `len` rows: `L_q = c_q·(I − 11ᵀ/l_q)`.
    pub(crate) fn query_scale(weight: QueryWeight, len: usize) -> f64 {
        match weight {
            QueryWeight::Equal => 1.0,
            QueryWeight::Pairs => len as f64,
        }
    }

    /// `y ← L·x`. Lengths must equal [`Graph::n`].
    pub fn apply(&self, x: &[f64], y: &mut [f64]) -> Result<(), LinalgError> {
        self.apply_power(x, y, false)
    }

    /// Whether `L` has the cheap symmetric square root used by
    /// [`Graph::apply_sqrt`]: true for `Identity` and `Queries`, where each
    /// block is a multiple of a projection (`L_q = c_q·P_q`, `P_q² = P_q`).
    pub fn has_sqrt(&self) -> bool {
        !matches!(self, Graph::Pairs { .. })
    }

    /// `y ← L^{1/2}·x` for graphs with [`Graph::has_sqrt`]; `L^{1/2}` is
    /// block-wise `√c_q·(I − 11ᵀ/l_q)`.
    pub fn apply_sqrt(&self, x: &[f64], y: &mut [f64]) -> Result<(), LinalgError> {
        self.apply_power(x, y, true)
    }

    /// `y ← L·x`, or `L^{1/2}·x` with `sqrt` (not defined for pairs).
    fn apply_power(&self, x: &[f64], y: &mut [f64], sqrt: bool) -> Result<(), LinalgError> {
        let n = self.n();
        if x.len() != n || y.len() != n {
            return Err(LinalgError::DimensionMismatch);
        }
        match *self {
            Graph::Identity { .. } => y.copy_from_slice(x),
            Graph::Queries { query_ptr, weight } => {
                for w in query_ptr.windows(2) {
                    let (s, e) = (w[0], w[1]);
                    if e == s {
                        continue;
                    }
                    let mean = x[s..e].iter().sum::<f64>() / (e - s) as f64;
                    let c = Self::query_scale(weight, e - s);
                    let c = if sqrt { libm::sqrt(c) } else { c };
                    for i in s..e {
                        y[i] = c * (x[i] - mean);
                    }
                }
            }
            Graph::Pairs { .. } if sqrt => return Err(LinalgError::InvalidParameter),
            Graph::Pairs { pairs, .. } => {
                y.iter_mut().for_each(|v| *v = 0.0);
                for p in pairs {
                    let d = x[p.winner] - x[p.loser];
                    y[p.winner] += d;
                    y[p.loser] -= d;
                }
            }
        }
        Ok(())
    }

    /// `Y ← L·X` (or `L^{1/2}·X` with `sqrt`) column by column; `X`, `Y` are
    /// `n × m`, `Y` column-major contiguous.
    pub fn apply_cols(
        &self,
        x: MatRef<'_, f64>,
        mut y: MatMut<'_, f64>,
        sqrt: bool,
        tmp: &mut [f64],
    ) -> Result<(), LinalgError> {
        let n = self.n();
        if x.nrows() != n || y.nrows() != n || x.ncols() != y.ncols() || tmp.len() < n {
            return Err(LinalgError::DimensionMismatch);
        }
        let m = x.ncols();
        if let Graph::Queries { query_ptr, weight } = *self {
            // Row-major X (a data table): one pass over the rows, query by
            // query, instead of one strided pass per column — X may be far
            // larger than the cache.
            if x.col_stride() == 1 && m <= tmp.len() {
                let means = &mut tmp[..m];
                for w in query_ptr.windows(2) {
                    let (s, e) = (w[0], w[1]);
                    if e == s {
                        continue;
                    }
                    means.iter_mut().for_each(|v| *v = 0.0);
                    for i in s..e {
                        means.iter_mut().enumerate().for_each(|(j, v)| *v += x.at(i, j));
                    }
                    let l = (e - s) as f64;
                    means.iter_mut().for_each(|v| *v /= l);
                    let c = Self::query_scale(weight, e - s);
                    let c = if sqrt { libm::sqrt(c) } else { c };
                    for i in s..e {
                        for (j, mean) in means.iter().enumerate() {
                            *y.at_mut(i, j) = c * (x.at(i, j) - mean);
                        }
                    }
                }
                return Ok(());
            }
        }
        let tmp = &mut tmp[..n];
        for j in 0..m {
            (0..n).for_each(|i| tmp[i] = x.at(i, j));
            let col = y.col_mut(j).ok_or(LinalgError::DimensionMismatch)?;
            if sqrt {
                self.apply_sqrt(tmp, col)?;
            } else {
                self.apply(tmp, col)?;
            }
        }
        Ok(())
    }

    /// `X ← L^{1/2}·X` in place for a row-major `n × m` matrix `x` (rows
    /// contiguous) and a graph with [`Graph::has_sqrt`], with the
    /// operations of [`Graph::apply_cols`] on row-major input (query means
    /// by sequential sums over its rows, then `√c_q·(xᵢⱼ − meanⱼ)`), so the
    /// result equals `apply_cols` bit for bit. `tmp` holds `m` means; on
    /// return `tmp[..m]` holds the last non-empty query's (the caller of
    /// one query checks them: they are finite exactly when the query's
    /// values are and their sums do not overflow).
    ///
    /// # Errors
    /// [`LinalgError::DimensionMismatch`] unless `x` is `n × m` and `tmp`
    /// holds `m`; [`LinalgError::InvalidParameter`] for a pair graph.
    pub fn apply_sqrt_rows_in_place(&self, x: &mut [f64], m: usize, tmp: &mut [f64]) -> Result<(), LinalgError> {
        let n = self.n();
        if n.checked_mul(m) != Some(x.len()) || tmp.len() < m {
            return Err(LinalgError::DimensionMismatch);
        }
        match *self {
            Graph::Identity { .. } => Ok(()),
            Graph::Pairs { .. } => Err(LinalgError::InvalidParameter),
            Graph::Queries { query_ptr, weight } => {
                if m == 0 {
                    return Ok(());
                }
                let means = &mut tmp[..m];
                for w in query_ptr.windows(2) {
                    let (s, e) = (w[0], w[1]);
                    if e == s {
                        continue;
                    }
                    let rows = x.get_mut(s * m..e * m).ok_or(LinalgError::DimensionMismatch)?;
                    means.iter_mut().for_each(|v| *v = 0.0);
                    // The column sums row by row, four rows per pass over
                    // `means` (the same additions in the same order, one
                    // load and store of each sum instead of four).
                    let mut quads = rows.chunks_exact(4 * m);
                    for q in &mut quads {
                        let (r01, r23) = q.split_at(2 * m);
                        let ((r0, r1), (r2, r3)) = (r01.split_at(m), r23.split_at(m));
                        for (v, ((a, b), (c, d))) in means.iter_mut().zip(r0.iter().zip(r1).zip(r2.iter().zip(r3))) {
                            *v = (((*v + a) + b) + c) + d;
                        }
                    }
                    for row in quads.remainder().chunks_exact(m) {
                        means.iter_mut().zip(row).for_each(|(v, x)| *v += x);
                    }
                    let l = (e - s) as f64;
                    means.iter_mut().for_each(|v| *v /= l);
                    let c = libm::sqrt(Self::query_scale(weight, e - s));
                    for row in rows.chunks_exact_mut(m) {
                        // `1·y = y` exactly: the equal weighting subtracts only.
                        if c == 1.0 {
                            row.iter_mut().zip(means.iter()).for_each(|(x, mean)| *x -= mean);
                        } else {
                            row.iter_mut().zip(means.iter()).for_each(|(x, mean)| *x = c * (*x - mean));
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// `A ← L^{1/2}·A·L^{1/2}` in place for a square `A` (`n × n`, any
    /// layout) and a graph with [`Graph::has_sqrt`]: the dual RankRLS
    /// system `L^{1/2}KL^{1/2}` (004 §3.2) without a second `n × n` buffer.
    ///
    /// `L^{1/2}` on every column, then on every row, each with the
    /// operations of [`Graph::apply_sqrt`] (block mean by a sequential sum,
    /// then `√c_q·(aᵢ − mean)`), so the result equals `apply_sqrt` on the
    /// columns and then on the rows bit for bit. Both passes go query by
    /// query over that query's columns ([`sqrt_sandwich_block`]): one
    /// streaming pass over a column-major `A`.
    ///
    /// # Errors
    /// [`LinalgError::DimensionMismatch`] unless `A` is `n × n`;
    /// [`LinalgError::InvalidParameter`] for a pair graph.
    pub fn sqrt_sandwich_in_place(&self, mut a: MatMut<'_, f64>) -> Result<(), LinalgError> {
        let n = self.n();
        if a.nrows() != n || a.ncols() != n {
            return Err(LinalgError::DimensionMismatch);
        }
        match *self {
            Graph::Identity { .. } => Ok(()),
            Graph::Pairs { .. } => Err(LinalgError::InvalidParameter),
            Graph::Queries { query_ptr, weight } => {
                for w in query_ptr.windows(2).filter(|w| w[1] > w[0]) {
                    let (s, e) = (w[0], w[1]);
                    let mut block = a.submatrix_mut(0, s, n, e - s)?;
                    sqrt_sandwich_block(query_ptr, weight, &mut block);
                }
                Ok(())
            }
        }
    }

    /// The right-hand side `t` of the normal equations: `L·s` for scored
    /// rows, `Dᵀm` for explicit pairs (`s` is then ignored and may be empty).
    pub fn target(&self, s: &[f64], t: &mut [f64]) -> Result<(), LinalgError> {
        match *self {
            Graph::Pairs { n, pairs } => {
                if t.len() != n {
                    return Err(LinalgError::DimensionMismatch);
                }
                t.iter_mut().for_each(|v| *v = 0.0);
                for p in pairs {
                    t[p.winner] += p.magnitude;
                    t[p.loser] -= p.magnitude;
                }
                Ok(())
            }
            _ => {
                if s.iter().any(|v| !v.is_finite()) {
                    return Err(LinalgError::NonFinite);
                }
                self.apply(s, t)
            }
        }
    }
}

/// One query's columns of `L^{1/2}·A·L^{1/2}` in place (the step of
/// [`Graph::sqrt_sandwich_in_place`]): `block` holds the `l` columns of `A`
/// of one query of `Graph::Queries { query_ptr, weight }`; `L^{1/2}` is
/// applied to each of them (all queries' rows), then to each row
/// restricted to the block. Neither pass reads other columns, so blocks
/// can be processed independently, in parallel.
pub fn sqrt_sandwich_block(query_ptr: &[usize], weight: QueryWeight, block: &mut MatMut<'_, f64>) {
    let (n, l) = (block.nrows(), block.ncols());
    if l == 0 {
        return;
    }
    for j in 0..l {
        for w in query_ptr.windows(2).filter(|w| w[1] > w[0] && w[1] <= n) {
            let (r0, r1) = (w[0], w[1]);
            let c = libm::sqrt(Graph::query_scale(weight, r1 - r0));
            let mean = (r0..r1).map(|i| block.at(i, j)).sum::<f64>() / (r1 - r0) as f64;
            (r0..r1).for_each(|i| *block.at_mut(i, j) = c * (block.at(i, j) - mean));
        }
    }
    let c = libm::sqrt(Graph::query_scale(weight, l));
    for i in 0..n {
        let mean = (0..l).map(|j| block.at(i, j)).sum::<f64>() / l as f64;
        (0..l).for_each(|j| *block.at_mut(i, j) = c * (block.at(i, j) - mean));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `L^{1/2}X` in place on row-major rows equals `apply_cols` into a
    /// column-major buffer (sums in row order) bit for bit, for both
    /// weightings, an empty query and queries of 1 to 9 rows; the identity
    /// leaves the rows alone; pairs have no root.
    #[test]
    fn sqrt_rows_in_place_equals_apply_cols() {
        const N: usize = 16;
        const M: usize = 3;
        // Magnitudes from 1e-3 to 1e6, so that the order of the sums shows
        // in the bits; queries of 2, 0, 4, 1 and 9 rows (the column sums go
        // four rows at a time, then the rest).
        let x: [f64; N * M] = core::array::from_fn(|k| {
            let h = ((k as u64 * 2_654_435_761) % 1_000_003) as f64 / 997.0 - 500.0;
            if k % 3 == 0 {
                h * 1e6
            } else {
                h * 1e-3
            }
        });
        let qp = [0usize, 2, 2, 6, 7, 16];
        for weight in [QueryWeight::Equal, QueryWeight::Pairs] {
            let g = Graph::Queries { query_ptr: &qp, weight };
            let mut y = [0.0f64; N * M];
            let mut tmp = [0.0f64; N];
            g.apply_cols(
                MatRef::from_row_major(&x, N, M).unwrap(),
                MatMut::from_col_major(&mut y, N, M).unwrap(),
                true,
                &mut tmp,
            )
            .unwrap();
            let mut z = x;
            g.apply_sqrt_rows_in_place(&mut z, M, &mut tmp[..M]).unwrap();
            for i in 0..N {
                for j in 0..M {
                    assert_eq!(z[i * M + j].to_bits(), y[i + j * N].to_bits(), "{weight:?} {i} {j}");
                }
            }
            assert_ne!(z, x);
        }
        let mut z = x;
        Graph::Identity { n: N }.apply_sqrt_rows_in_place(&mut z, M, &mut [0.0; M]).unwrap();
        assert_eq!(z, x);
        let pairs = [Pair { winner: 0, loser: 1, magnitude: 1.0 }];
        let r = Graph::Pairs { n: N, pairs: &pairs }.apply_sqrt_rows_in_place(&mut z, M, &mut [0.0; M]);
        assert_eq!(r, Err(LinalgError::InvalidParameter));
        let r = Graph::Identity { n: N }.apply_sqrt_rows_in_place(&mut z[..5], M, &mut [0.0; M]);
        assert_eq!(r, Err(LinalgError::DimensionMismatch));
    }

    /// Dense Laplacian of a graph, for checking `apply` against `L·x`.
    fn dense_laplacian(g: &Graph<'_>, out: &mut [f64]) {
        let n = g.n();
        let mut e = [0.0f64; 16];
        let mut col = [0.0f64; 16];
        for j in 0..n {
            e[..n].iter_mut().for_each(|v| *v = 0.0);
            e[j] = 1.0;
            g.apply(&e[..n], &mut col[..n]).unwrap();
            out[j * n..(j + 1) * n].copy_from_slice(&col[..n]);
        }
    }

    #[test]
    fn query_laplacians_match_their_definitions() {
        let qp = [0usize, 2, 5];
        let g = Graph::Queries { query_ptr: &qp, weight: QueryWeight::Pairs };
        let mut l = [0.0f64; 25];
        dense_laplacian(&g, &mut l);
        // Block 2: l_q = 3 → diag 2, off-diagonal −1 (plain Laplacian, W = 1).
        assert_eq!(l[2 * 5 + 2], 2.0);
        assert_eq!(l[2 * 5 + 3], -1.0);
        assert_eq!(l[2 * 5], 0.0);
        let g = Graph::Queries { query_ptr: &qp, weight: QueryWeight::Equal };
        dense_laplacian(&g, &mut l);
        assert!((l[2 * 5 + 2] - 2.0 / 3.0).abs() < 1e-15);
        assert!((l[2 * 5 + 3] + 1.0 / 3.0).abs() < 1e-15);
        // L^{1/2}·L^{1/2} = L.
        let x = [1.0, -2.0, 0.5, 4.0, 3.0];
        let (mut h, mut hh, mut lx) = ([0.0; 5], [0.0; 5], [0.0; 5]);
        g.apply_sqrt(&x, &mut h).unwrap();
        g.apply_sqrt(&h, &mut hh).unwrap();
        g.apply(&x, &mut lx).unwrap();
        for i in 0..5 {
            assert!((hh[i] - lx[i]).abs() < 1e-14);
        }
    }

    #[test]
    fn pair_graph_is_incidence_gram_and_target() {
        let pairs = [Pair { winner: 0, loser: 2, magnitude: 0.5 }, Pair { winner: 1, loser: 2, magnitude: 2.0 }];
        let g = Graph::Pairs { n: 3, pairs: &pairs };
        let mut l = [0.0f64; 9];
        dense_laplacian(&g, &mut l);
        assert_eq!(l, [1.0, 0.0, -1.0, 0.0, 1.0, -1.0, -1.0, -1.0, 2.0]);
        let mut t = [0.0; 3];
        g.target(&[], &mut t).unwrap();
        assert_eq!(t, [0.5, 2.0, -2.5]);
        let bad = [Pair { winner: 0, loser: 3, magnitude: 1.0 }];
        assert!(Graph::Pairs { n: 3, pairs: &bad }.validate().is_err());
    }

    /// `L^{1/2}KL^{1/2}` in place against the product of dense matrices
    /// (`L^{1/2}` built column by column from `apply_sqrt` on unit vectors,
    /// the products by triple loops): the queries of both weightings, an
    /// empty query, and the identity graph.
    #[test]
    fn sqrt_sandwich_is_the_dense_product() {
        const N: usize = 7;
        let qp = [0usize, 3, 3, 4, 7];
        let mut k = [0.0f64; N * N];
        for j in 0..N {
            for i in 0..N {
                k[i + j * N] = 1.0 / (1.0 + (i as f64 - j as f64).abs()) + (i * j) as f64 * 0.01;
            }
        }
        for weight in [QueryWeight::Equal, QueryWeight::Pairs] {
            let g = Graph::Queries { query_ptr: &qp, weight };
            let mut h = [0.0f64; N * N];
            let mut e = [0.0f64; N];
            for j in 0..N {
                e.iter_mut().for_each(|v| *v = 0.0);
                e[j] = 1.0;
                g.apply_sqrt(&e, &mut h[j * N..(j + 1) * N]).unwrap();
            }
            let mul = |a: &[f64], b: &[f64]| {
                let mut c = [0.0f64; N * N];
                for j in 0..N {
                    for i in 0..N {
                        c[i + j * N] = (0..N).map(|l| a[i + l * N] * b[l + j * N]).sum();
                    }
                }
                c
            };
            let want = mul(&mul(&h, &k), &h);
            let mut got = k;
            g.sqrt_sandwich_in_place(MatMut::from_col_major(&mut got, N, N).unwrap()).unwrap();
            for (a, b) in got.iter().zip(&want) {
                assert!((a - b).abs() < 1e-14, "{a} vs {b}");
            }
        }
        let mut got = k;
        Graph::Identity { n: N }.sqrt_sandwich_in_place(MatMut::from_col_major(&mut got, N, N).unwrap()).unwrap();
        assert_eq!(got, k);
        let pairs = [Pair { winner: 0, loser: 1, magnitude: 1.0 }];
        let e = Graph::Pairs { n: N, pairs: &pairs }
            .sqrt_sandwich_in_place(MatMut::from_col_major(&mut got, N, N).unwrap());
        assert_eq!(e, Err(LinalgError::InvalidParameter));
        let e = Graph::Identity { n: 6 }.sqrt_sandwich_in_place(MatMut::from_col_major(&mut got, N, N).unwrap());
        assert_eq!(e, Err(LinalgError::DimensionMismatch));
    }
}
