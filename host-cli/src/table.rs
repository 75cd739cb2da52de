//! Training tables: a data set's rows grouped by query, in the layout the
//! core learners take (rows of a query contiguous, dense or CSR features).

use ranklet_core::linalg::{CsrRef, Rows};
use ranklet_core::{LinalgError, MatRef};

use crate::data::Dataset;

/// Dense storage is used when the row-major matrix holds at most this many
/// elements and `d` is at most [`DENSE_MAX_D`] (wider data stays sparse: a
/// parse-ranking set has 200 000 mostly-empty features).
pub const DENSE_MAX_LEN: usize = 1 << 27;
/// Widest feature space stored densely.
pub const DENSE_MAX_D: usize = 4096;

/// CSR storage of a table's rows.
#[derive(Clone, Debug)]
struct Csr {
    row_ptr: Vec<usize>,
    col: Vec<u32>,
    val: Vec<f64>,
}

/// The stored entries of one row, `(column, value)` in column order: the
/// CSR entries as read, or the nonzeros of a dense-only row (the entries a
/// data set built from that matrix would hold).
pub enum RowEntries<'a> {
    /// CSR entries.
    Sparse(std::iter::Zip<std::slice::Iter<'a, u32>, std::slice::Iter<'a, f64>>),
    /// A dense row, zeros skipped.
    Dense(std::iter::Enumerate<std::slice::Iter<'a, f64>>),
}

impl Iterator for RowEntries<'_> {
    type Item = (u32, f64);
    fn next(&mut self) -> Option<(u32, f64)> {
        match self {
            RowEntries::Sparse(it) => it.next().map(|(&c, &v)| (c, v)),
            RowEntries::Dense(it) => it.find(|(_, &v)| v != 0.0).map(|(j, &v)| (j as u32, v)),
        }
    }
}

/// Rows of a data set in learner order.
#[derive(Clone, Debug)]
pub struct Table {
    d: usize,
    n: usize,
    /// CSR rows (a data set's entries as read); `None` for a table built
    /// straight from a dense matrix, whose rows are `dense` alone.
    csr: Option<Csr>,
    dense: Option<Vec<f64>>,
    /// Score (label) of each row.
    pub labels: Vec<f64>,
    /// Query boundaries over the rows of this table.
    pub query_ptr: Vec<usize>,
    /// Row of the source data set each table row came from.
    pub orig: Vec<usize>,
}

impl Csr {
    fn row(&self, i: usize) -> (&[u32], &[f64]) {
        let (s, e) = (self.row_ptr[i], self.row_ptr[i + 1]);
        (&self.col[s..e], &self.val[s..e])
    }
}

impl Table {
    /// All rows of `ds`, grouped by query (`by_query`) or in file order as
    /// one query (explicit pairs refer to file rows).
    pub fn from_dataset(ds: &Dataset, by_query: bool) -> Table {
        let n = ds.n_rows();
        let (rows, qptr) = if by_query {
            let g = ds.query_groups();
            (g.rows().to_vec(), g.query_ptr().to_vec())
        } else {
            ((0..n).collect(), vec![0, n])
        };
        Self::gather(ds.n_features(), |i| ds.row(i), ds.labels(), &rows, qptr)
    }

    fn gather<'a>(
        d: usize,
        row: impl Fn(usize) -> (&'a [u32], &'a [f64]),
        labels: &[f64],
        rows: &[usize],
        query_ptr: Vec<usize>,
    ) -> Table {
        let mut row_ptr = Vec::with_capacity(rows.len() + 1);
        row_ptr.push(0);
        let (mut col, mut val) = (Vec::new(), Vec::new());
        for &r in rows {
            let (c, v) = row(r);
            col.extend_from_slice(c);
            val.extend_from_slice(v);
            row_ptr.push(col.len());
        }
        let mut t = Table {
            d,
            n: rows.len(),
            csr: Some(Csr { row_ptr, col, val }),
            dense: None,
            labels: rows.iter().map(|&r| labels[r]).collect(),
            query_ptr,
            orig: rows.to_vec(),
        };
        t.densify_if_small();
        t
    }

    /// A dense copy where it is small: at most [`DENSE_MAX_D`] features,
    /// [`DENSE_MAX_LEN`] values, and within the memory available
    /// ([`crate::mem::check`]; the learners take sparse rows as they are).
    fn densify_if_small(&mut self) {
        let n = self.n();
        if !Self::dense_fits(n, self.d) {
            return;
        }
        let mut x = vec![0.0; n * self.d];
        for i in 0..n {
            for (c, v) in self.row(i) {
                x[i * self.d + c as usize] = v;
            }
        }
        self.dense = Some(x);
    }

    /// The rows at table positions `rows` (in that order), with the given
    /// query boundaries over them. `orig` keeps pointing at the source data.
    pub fn subset(&self, rows: &[usize], query_ptr: Vec<usize>) -> Table {
        let orig = rows.iter().map(|&r| self.orig[r]).collect();
        match (&self.csr, &self.dense) {
            (Some(csr), _) => {
                let mut t = Self::gather(self.d, |i| csr.row(i), &self.labels, rows, query_ptr);
                t.orig = orig;
                t
            }
            (None, dense) => {
                // Dense-only: the rows are copied as they are (what
                // gathering their nonzeros and densifying would give).
                let (d, x) = (self.d, dense.as_deref().unwrap_or(&[]));
                let mut out = Vec::with_capacity(rows.len() * d);
                for &r in rows {
                    out.extend_from_slice(&x[r * d..(r + 1) * d]);
                }
                let labels = rows.iter().map(|&r| self.labels[r]).collect();
                Table { d, n: rows.len(), csr: None, dense: Some(out), labels, query_ptr, orig }
            }
        }
    }

    /// The bytes the table's buffers hold: what a copy of all its rows
    /// (e.g. a cross-validation split's training and validation sets
    /// together) needs.
    pub fn heap_bytes(&self) -> usize {
        let csr = self.csr.as_ref().map_or(0, |c| 8 * c.row_ptr.len() + 4 * c.col.len() + 8 * c.val.len());
        let dense = self.dense.as_ref().map_or(0, |x| 8 * x.len());
        csr + dense + 8 * (self.labels.len() + self.query_ptr.len() + self.orig.len())
    }

    /// The queries `qs` (indices into `query_ptr`), each kept whole.
    pub fn subset_queries(&self, qs: &[usize]) -> (Table, Vec<usize>) {
        let mut rows = Vec::new();
        let mut qptr = vec![0];
        for &q in qs {
            rows.extend(self.query_ptr[q]..self.query_ptr[q + 1]);
            qptr.push(rows.len());
        }
        (self.subset(&rows, qptr), rows)
    }

    /// Number of rows.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Number of features.
    pub fn d(&self) -> usize {
        self.d
    }
    /// Number of queries.
    pub fn n_queries(&self) -> usize {
        self.query_ptr.len() - 1
    }
    /// The stored entries of row `i` (see [`RowEntries`]).
    pub fn row(&self, i: usize) -> RowEntries<'_> {
        match (&self.csr, &self.dense) {
            (Some(csr), _) => {
                let (c, v) = csr.row(i);
                RowEntries::Sparse(c.iter().zip(v.iter()))
            }
            (None, dense) => {
                let x = dense.as_deref().unwrap_or(&[]);
                RowEntries::Dense(x[i * self.d..(i + 1) * self.d].iter().enumerate())
            }
        }
    }
    /// The dense row-major matrix, if the table is stored densely.
    pub fn dense(&self) -> Option<MatRef<'_, f64>> {
        self.dense.as_deref().and_then(|x| MatRef::from_row_major(x, self.n(), self.d).ok())
    }
    /// The rows as the core learners take them.
    ///
    /// # Errors
    /// Only if the CSR invariants were broken, which a validated `Dataset`
    /// rules out.
    pub fn rows(&self) -> Result<Rows<'_>, LinalgError> {
        match (self.dense(), &self.csr) {
            (Some(m), _) => Ok(Rows::Dense(m)),
            (None, Some(c)) => Ok(Rows::Sparse(CsrRef::new(self.d, &c.row_ptr, &c.col, &c.val)?)),
            (None, None) => Err(LinalgError::DimensionMismatch),
        }
    }

    /// A table from a dense row-major `n × d` matrix, with scores and query
    /// boundaries over its rows (for generated data).
    pub fn from_dense(x: Vec<f64>, d: usize, labels: Vec<f64>, query_ptr: Vec<usize>) -> Table {
        let orig = (0..labels.len()).collect();
        Self::from_dense_rows(x, d, labels, query_ptr, orig)
    }

    /// A dense-only table of row-major `x` (`n × d`, rows already in
    /// learner order), `orig` naming each row's source row. Zeros in `x`
    /// must be `+0.0`, as densifying a data set leaves them.
    pub fn from_dense_rows(x: Vec<f64>, d: usize, labels: Vec<f64>, query_ptr: Vec<usize>, orig: Vec<usize>) -> Table {
        Table { d, n: labels.len(), csr: None, dense: Some(x), labels, query_ptr, orig }
    }

    /// Whether [`Table::from_dataset`] would store `n × d` rows densely
    /// (the size limits; [`crate::mem::check`] for the memory).
    pub fn dense_fits(n: usize, d: usize) -> bool {
        d <= DENSE_MAX_D && n.saturating_mul(d) <= DENSE_MAX_LEN && crate::mem::check("", Some(n * d), 8, "").is_ok()
    }

    /// Per-feature mean and scale (population standard deviation; 1 for a
    /// constant feature) of the rows, for `--standardize`.
    pub fn feature_stats(&self) -> (Vec<f64>, Vec<f64>) {
        let (n, d) = (self.n().max(1) as f64, self.d);
        let mut mean = vec![0.0; d];
        let mut sq = vec![0.0; d];
        let mut nnz = vec![0usize; d];
        for i in 0..self.n() {
            for (c, v) in self.row(i) {
                mean[c as usize] += v;
                nnz[c as usize] += 1;
            }
        }
        mean.iter_mut().for_each(|m| *m /= n);
        for i in 0..self.n() {
            // Two-pass variance; absent (zero) entries contribute mean².
            for (c, v) in self.row(i) {
                let t = v - mean[c as usize];
                sq[c as usize] += t * t;
            }
        }
        // Add the zeros that the rows do not store.
        for j in 0..d {
            sq[j] += (self.n() - nnz[j]) as f64 * mean[j] * mean[j];
        }
        let scale = sq.iter().map(|s| (s / n).sqrt()).map(|s| if s > 0.0 && s.is_finite() { s } else { 1.0 }).collect();
        (mean, scale)
    }

    /// The rows with `x'_j = (x_j − mean_j) / scale_j` (dense result).
    pub fn standardized(&self, mean: &[f64], scale: &[f64]) -> Table {
        let (n, d) = (self.n(), self.d);
        let mut x = vec![0.0; n * d];
        for i in 0..n {
            for j in 0..d {
                x[i * d + j] = -mean[j] / scale[j];
            }
            for (c, v) in self.row(i) {
                x[i * d + c as usize] = (v - mean[c as usize]) / scale[c as usize];
            }
        }
        // Dense only: every consumer of a dense table reads `dense`.
        Table {
            d,
            n,
            csr: None,
            dense: Some(x),
            labels: self.labels.clone(),
            query_ptr: self.query_ptr.clone(),
            orig: self.orig.clone(),
        }
    }
}
