//! Rows of a data matrix: dense (a strided [`MatRef`]) or sparse
//! ([`CsrRef`], compressed sparse rows). Every learner and kernel reads its
//! data through [`Rows`]; the CSR invariants are checked once, in
//! [`CsrRef::new`], and nowhere else.

use crate::{LinalgError, MatRef};

/// A validated compressed-sparse-row matrix: row `i` has the column indices
/// `col[row_ptr[i]..row_ptr[i+1]]` (strictly increasing, `< ncols`) and the
/// matching finite `val`s.
#[derive(Clone, Copy, Debug)]
pub struct CsrRef<'a> {
    nrows: usize,
    ncols: usize,
    row_ptr: &'a [usize],
    col: &'a [u32],
    val: &'a [f64],
}

impl<'a> CsrRef<'a> {
    /// Checks every invariant once; afterwards no access can fail.
    ///
    /// # Errors
    /// [`LinalgError::DimensionMismatch`] for inconsistent lengths, a
    /// non-monotone `row_ptr`, an index `≥ ncols` or not strictly increasing
    /// within its row; [`LinalgError::NonFinite`] for NaN/Inf values.
    pub fn new(ncols: usize, row_ptr: &'a [usize], col: &'a [u32], val: &'a [f64]) -> Result<Self, LinalgError> {
        let nrows = row_ptr.len().checked_sub(1).ok_or(LinalgError::DimensionMismatch)?;
        if row_ptr[0] != 0 || row_ptr[nrows] != col.len() || col.len() != val.len() {
            return Err(LinalgError::DimensionMismatch);
        }
        for i in 0..nrows {
            let (s, e) = (row_ptr[i], row_ptr[i + 1]);
            if s > e || e > col.len() {
                return Err(LinalgError::DimensionMismatch);
            }
            if !sparse_indices_ok(col[s..e].iter().copied(), ncols) {
                return Err(LinalgError::DimensionMismatch);
            }
        }
        if val.iter().any(|v| !v.is_finite()) {
            return Err(LinalgError::NonFinite);
        }
        Ok(Self { nrows, ncols, row_ptr, col, val })
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }
    /// Number of columns (features).
    pub fn ncols(&self) -> usize {
        self.ncols
    }
    /// Row `i` as (indices, values); empty if `i` is out of range.
    pub fn row(&self, i: usize) -> (&'a [u32], &'a [f64]) {
        if i >= self.nrows {
            return (&[], &[]);
        }
        let (s, e) = (self.row_ptr[i], self.row_ptr[i + 1]);
        (&self.col[s..e], &self.val[s..e])
    }
}

/// Whether the column indices of one sparse row are all `< bound` and
/// strictly increasing: the one check of sparse indices in core (CSR rows
/// here; sparse inputs and sparse basis rows in the model format).
#[inline]
pub(crate) fn sparse_indices_ok(indices: impl IntoIterator<Item = u32>, bound: usize) -> bool {
    let mut prev: Option<u32> = None;
    for j in indices {
        if j as usize >= bound || prev.is_some_and(|p| j <= p) {
            return false;
        }
        prev = Some(j);
    }
    true
}

/// Rows of a data matrix: dense `n × d` (any stride) or sparse CSR.
#[derive(Clone, Copy, Debug)]
pub enum Rows<'a> {
    /// Dense rows: row `i` of the view is data point `i`.
    Dense(MatRef<'a, f64>),
    /// Sparse rows.
    Sparse(CsrRef<'a>),
}

impl Rows<'_> {
    /// Number of data points.
    pub fn nrows(&self) -> usize {
        match self {
            Rows::Dense(m) => m.nrows(),
            Rows::Sparse(s) => s.nrows(),
        }
    }
    /// Number of features.
    pub fn ncols(&self) -> usize {
        match self {
            Rows::Dense(m) => m.ncols(),
            Rows::Sparse(s) => s.ncols(),
        }
    }
    /// `‖row i‖²`.
    pub(crate) fn sq_norm(&self, i: usize) -> f64 {
        match self {
            Rows::Dense(m) => (0..m.ncols()).map(|j| m.at(i, j) * m.at(i, j)).sum(),
            Rows::Sparse(s) => s.row(i).1.iter().map(|v| v * v).sum(),
        }
    }
    /// Scatters row `i` into the dense `buf` (length `ncols`, assumed zero).
    pub(crate) fn scatter(&self, i: usize, buf: &mut [f64]) {
        match self {
            Rows::Dense(m) => (0..m.ncols()).for_each(|j| buf[j] = m.at(i, j)),
            Rows::Sparse(s) => {
                let (c, v) = s.row(i);
                c.iter().zip(v).for_each(|(&c, &v)| buf[c as usize] = v);
            }
        }
    }
    /// Undoes [`Rows::scatter`].
    pub(crate) fn unscatter(&self, i: usize, buf: &mut [f64]) {
        match self {
            Rows::Dense(_) => buf.iter_mut().for_each(|v| *v = 0.0),
            Rows::Sparse(s) => s.row(i).0.iter().for_each(|&c| buf[c as usize] = 0.0),
        }
    }
    /// `⟨row i, dense buf⟩`.
    pub(crate) fn dot_dense(&self, i: usize, buf: &[f64]) -> f64 {
        match self {
            Rows::Dense(m) => (0..m.ncols()).map(|j| m.at(i, j) * buf[j]).sum(),
            Rows::Sparse(s) => {
                let (c, v) = s.row(i);
                c.iter().zip(v).map(|(&c, &v)| v * buf[c as usize]).sum()
            }
        }
    }
}
