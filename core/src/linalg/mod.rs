//! Dense linear algebra on caller-provided buffers.
//!
//! Matrices are [`MatRef`] / [`MatMut`] views: a slice plus `nrows`, `ncols`,
//! a row stride and a column stride (element `(i, j)` lives at
//! `i·row_stride + j·col_stride`). The constructors check once that every
//! element the view can address lies inside the slice, so no later access can
//! go out of bounds. Column-major storage (`row_stride = 1`) is the fast path
//! of every kernel; any other layout is accepted and handled correctly.
//!
//! Modules:
//! - [`blas`]: dot, axpy, gemv, cache-blocked gemm and syrk;
//! - [`chol`]: Cholesky factorisation and triangular solves;
//! - [`ldlt`]: symmetric indefinite factorisation with pivoting and its solve;
//! - [`lu`]: general solve by LU with partial pivoting (no workspace);
//! - [`cg`]: conjugate gradient with a caller-supplied matrix-vector product;
//! - [`minres`]: MINRES (Paige–Saunders, SciPy's stopping tests), the same interface;
//! - [`rows`]: data rows, dense or compressed sparse ([`Rows`], [`CsrRef`]).

pub mod blas;
pub mod cg;
pub mod chol;
pub mod ldlt;
pub mod lu;
pub mod minres;
pub mod rows;

pub use rows::{CsrRef, Rows};

use crate::error::LinalgError;

/// Last addressable offset of an `nrows × ncols` view with the given strides,
/// or `None` on overflow. An empty view addresses nothing (`Some(None)`).
fn extent(nrows: usize, ncols: usize, rs: usize, cs: usize) -> Option<Option<usize>> {
    if nrows == 0 || ncols == 0 {
        return Some(None);
    }
    let a = (nrows - 1).checked_mul(rs)?;
    let b = (ncols - 1).checked_mul(cs)?;
    Some(Some(a.checked_add(b)?))
}

fn check_view(len: usize, nrows: usize, ncols: usize, rs: usize, cs: usize) -> Result<(), LinalgError> {
    match extent(nrows, ncols, rs, cs) {
        None => Err(LinalgError::DimensionMismatch),
        Some(None) => Ok(()),
        Some(Some(last)) if last < len => Ok(()),
        Some(Some(_)) => Err(LinalgError::DimensionMismatch),
    }
}

/// A read-only strided view of a matrix in a caller's slice.
#[derive(Clone, Copy, Debug)]
pub struct MatRef<'a, T> {
    data: &'a [T],
    nrows: usize,
    ncols: usize,
    rs: usize,
    cs: usize,
}

/// A mutable strided view of a matrix in a caller's slice.
///
/// Distinct `(i, j)` must map to distinct offsets for writes to mean what they
/// say; the constructors reject strides for which two elements of the view
/// alias (e.g. a zero stride with more than one row or column).
#[derive(Debug)]
pub struct MatMut<'a, T> {
    data: &'a mut [T],
    nrows: usize,
    ncols: usize,
    rs: usize,
    cs: usize,
}

/// Whether an `nrows × ncols` view with these strides maps distinct indices to
/// distinct offsets. Sufficient test: one stride is at least the full extent
/// of the other dimension (the layouts a BLAS would accept).
fn strides_disjoint(nrows: usize, ncols: usize, rs: usize, cs: usize) -> bool {
    if nrows <= 1 || ncols <= 1 {
        return (nrows <= 1 || rs > 0) && (ncols <= 1 || cs > 0);
    }
    (rs > 0 && cs >= rs.saturating_mul(nrows)) || (cs > 0 && rs >= cs.saturating_mul(ncols))
}

impl<'a, T: Copy> MatRef<'a, T> {
    /// A view with explicit strides. Errors if the view would reach past the
    /// end of `data` or its extent overflows `usize`.
    pub fn new(
        data: &'a [T],
        nrows: usize,
        ncols: usize,
        row_stride: usize,
        col_stride: usize,
    ) -> Result<Self, LinalgError> {
        check_view(data.len(), nrows, ncols, row_stride, col_stride)?;
        Ok(Self { data, nrows, ncols, rs: row_stride, cs: col_stride })
    }

    /// A column-major view: column `j` is `data[j·nrows .. (j+1)·nrows]`.
    /// `data` must hold exactly `nrows·ncols` elements.
    pub fn from_col_major(data: &'a [T], nrows: usize, ncols: usize) -> Result<Self, LinalgError> {
        if nrows.checked_mul(ncols) != Some(data.len()) {
            return Err(LinalgError::DimensionMismatch);
        }
        Self::new(data, nrows, ncols, 1, nrows)
    }

    /// A row-major view: row `i` is `data[i·ncols .. (i+1)·ncols]`.
    /// `data` must hold exactly `nrows·ncols` elements.
    pub fn from_row_major(data: &'a [T], nrows: usize, ncols: usize) -> Result<Self, LinalgError> {
        if nrows.checked_mul(ncols) != Some(data.len()) {
            return Err(LinalgError::DimensionMismatch);
        }
        Self::new(data, nrows, ncols, ncols, 1)
    }

    /// Number of rows.
    #[inline]
    pub fn nrows(&self) -> usize {
        self.nrows
    }
    /// Number of columns.
    #[inline]
    pub fn ncols(&self) -> usize {
        self.ncols
    }
    /// Distance between vertically adjacent elements.
    #[inline]
    pub fn row_stride(&self) -> usize {
        self.rs
    }
    /// Distance between horizontally adjacent elements.
    #[inline]
    pub fn col_stride(&self) -> usize {
        self.cs
    }
    /// The underlying slice.
    #[inline]
    pub fn as_slice(&self) -> &'a [T] {
        self.data
    }
    /// Whether the view is square.
    #[inline]
    pub fn is_square(&self) -> bool {
        self.nrows == self.ncols
    }

    /// Element `(i, j)`, or `None` outside the view.
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> Option<T> {
        if i < self.nrows && j < self.ncols {
            self.data.get(i * self.rs + j * self.cs).copied()
        } else {
            None
        }
    }

    /// Element `(i, j)`. The caller guarantees `i < nrows` and `j < ncols`;
    /// the view's construction guarantees the offset is in bounds.
    #[inline(always)]
    pub fn at(&self, i: usize, j: usize) -> T {
        debug_assert!(i < self.nrows && j < self.ncols);
        self.data[i * self.rs + j * self.cs]
    }

    /// The transposed view (no copy).
    #[inline]
    pub fn t(self) -> MatRef<'a, T> {
        MatRef { data: self.data, nrows: self.ncols, ncols: self.nrows, rs: self.cs, cs: self.rs }
    }

    /// Column `j` as a contiguous slice, if the view is column-contiguous
    /// (`row_stride == 1`) and `j < ncols`.
    #[inline]
    pub fn col(&self, j: usize) -> Option<&'a [T]> {
        if j >= self.ncols || (self.rs != 1 && self.nrows > 1) {
            return None;
        }
        let start = j * self.cs;
        self.data.get(start..start + self.nrows)
    }

    /// The `nr × nc` sub-view starting at `(r0, c0)`.
    pub fn submatrix(&self, r0: usize, c0: usize, nr: usize, nc: usize) -> Result<MatRef<'a, T>, LinalgError> {
        let r1 = r0.checked_add(nr).ok_or(LinalgError::DimensionMismatch)?;
        let c1 = c0.checked_add(nc).ok_or(LinalgError::DimensionMismatch)?;
        if r1 > self.nrows || c1 > self.ncols {
            return Err(LinalgError::DimensionMismatch);
        }
        if nr == 0 || nc == 0 {
            return Ok(MatRef { data: &[], nrows: nr, ncols: nc, rs: self.rs, cs: self.cs });
        }
        let off = r0 * self.rs + c0 * self.cs;
        MatRef::new(&self.data[off..], nr, nc, self.rs, self.cs)
    }

    /// Whether every element is finite.
    pub fn all_finite(&self) -> bool
    where
        T: crate::Real,
    {
        // Column-contiguous views: each column as a slice, by `slice_finite`.
        if self.nrows == 0 || self.ncols == 0 {
            return true;
        }
        if self.rs == 1 || self.nrows == 1 {
            return (0..self.ncols).all(|j| self.col(j).is_some_and(slice_finite));
        }
        // Row-contiguous views (transposes): each row as a slice.
        if self.cs == 1 || self.ncols == 1 {
            return (0..self.nrows)
                .all(|i| self.data.get(i * self.rs..i * self.rs + self.ncols).is_some_and(slice_finite));
        }
        // Walk in memory order: the inner loop follows the smaller stride.
        if self.rs <= self.cs {
            (0..self.ncols).all(|j| (0..self.nrows).all(|i| self.at(i, j).is_finite()))
        } else {
            (0..self.nrows).all(|i| (0..self.ncols).all(|j| self.at(i, j).is_finite()))
        }
    }
}

/// `‖a − b‖²` over the common length, summed in eight independent lanes so
/// the loop vectorises (a single running sum is a dependency chain the
/// compiler may not reorder).
#[inline]
pub fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    let len = a.len().min(b.len());
    let (a, b) = (&a[..len], &b[..len]);
    let mut acc = [0.0f64; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f64 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| (x - y) * (x - y)).sum();
    for (xa, xb) in ca.zip(cb) {
        for k in 0..8 {
            let d = xa[k] - xb[k];
            acc[k] += d * d;
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// Whether every element of `v` is finite: `x·0` is `±0` for a finite `x`
/// and NaN otherwise, summed in eight independent lanes so the loop
/// vectorises (no early exit, no dependency chain).
pub fn slice_finite<T: crate::Real>(v: &[T]) -> bool {
    let mut acc = [T::ZERO; 8];
    let chunks = v.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a += x * T::ZERO;
        }
    }
    tail.iter().all(|x| x.is_finite()) && acc.iter().all(|a| a.is_finite())
}

impl<'a, T: Copy> MatMut<'a, T> {
    /// A mutable view with explicit strides. Errors if the view would reach
    /// past the end of `data`, its extent overflows, or two of its elements
    /// would share one offset.
    pub fn new(
        data: &'a mut [T],
        nrows: usize,
        ncols: usize,
        row_stride: usize,
        col_stride: usize,
    ) -> Result<Self, LinalgError> {
        check_view(data.len(), nrows, ncols, row_stride, col_stride)?;
        if !strides_disjoint(nrows, ncols, row_stride, col_stride) {
            return Err(LinalgError::DimensionMismatch);
        }
        Ok(Self { data, nrows, ncols, rs: row_stride, cs: col_stride })
    }

    /// A column-major mutable view; `data` must hold exactly `nrows·ncols`.
    pub fn from_col_major(data: &'a mut [T], nrows: usize, ncols: usize) -> Result<Self, LinalgError> {
        if nrows.checked_mul(ncols) != Some(data.len()) {
            return Err(LinalgError::DimensionMismatch);
        }
        Self::new(data, nrows, ncols, 1, nrows.max(1))
    }

    /// A row-major mutable view; `data` must hold exactly `nrows·ncols`.
    pub fn from_row_major(data: &'a mut [T], nrows: usize, ncols: usize) -> Result<Self, LinalgError> {
        if nrows.checked_mul(ncols) != Some(data.len()) {
            return Err(LinalgError::DimensionMismatch);
        }
        Self::new(data, nrows, ncols, ncols.max(1), 1)
    }

    /// Number of rows.
    #[inline]
    pub fn nrows(&self) -> usize {
        self.nrows
    }
    /// Number of columns.
    #[inline]
    pub fn ncols(&self) -> usize {
        self.ncols
    }
    /// Distance between vertically adjacent elements.
    #[inline]
    pub fn row_stride(&self) -> usize {
        self.rs
    }
    /// Distance between horizontally adjacent elements.
    #[inline]
    pub fn col_stride(&self) -> usize {
        self.cs
    }

    /// A read-only view of the same elements.
    #[inline]
    pub fn rb(&self) -> MatRef<'_, T> {
        MatRef { data: self.data, nrows: self.nrows, ncols: self.ncols, rs: self.rs, cs: self.cs }
    }

    /// A mutable reborrow (to pass the view on and keep using it).
    #[inline]
    pub fn rb_mut(&mut self) -> MatMut<'_, T> {
        MatMut { data: self.data, nrows: self.nrows, ncols: self.ncols, rs: self.rs, cs: self.cs }
    }

    /// The transposed view (no copy).
    #[inline]
    pub fn t(self) -> MatMut<'a, T> {
        MatMut { data: self.data, nrows: self.ncols, ncols: self.nrows, rs: self.cs, cs: self.rs }
    }

    /// The underlying slice.
    #[inline]
    pub fn as_slice_mut(&mut self) -> &mut [T] {
        self.data
    }

    /// Element `(i, j)`; see [`MatRef::at`].
    #[inline(always)]
    pub fn at(&self, i: usize, j: usize) -> T {
        debug_assert!(i < self.nrows && j < self.ncols);
        self.data[i * self.rs + j * self.cs]
    }

    /// Mutable element `(i, j)`; the caller guarantees the indices are inside
    /// the view.
    #[inline(always)]
    pub fn at_mut(&mut self, i: usize, j: usize) -> &mut T {
        debug_assert!(i < self.nrows && j < self.ncols);
        &mut self.data[i * self.rs + j * self.cs]
    }

    /// Column `j` as a contiguous mutable slice when `row_stride == 1`.
    #[inline]
    pub fn col_mut(&mut self, j: usize) -> Option<&mut [T]> {
        if j >= self.ncols || (self.rs != 1 && self.nrows > 1) {
            return None;
        }
        let start = j * self.cs;
        self.data.get_mut(start..start + self.nrows)
    }

    /// The mutable `nr × nc` sub-view starting at `(r0, c0)`.
    pub fn submatrix_mut(&mut self, r0: usize, c0: usize, nr: usize, nc: usize) -> Result<MatMut<'_, T>, LinalgError> {
        let r1 = r0.checked_add(nr).ok_or(LinalgError::DimensionMismatch)?;
        let c1 = c0.checked_add(nc).ok_or(LinalgError::DimensionMismatch)?;
        if r1 > self.nrows || c1 > self.ncols {
            return Err(LinalgError::DimensionMismatch);
        }
        if nr == 0 || nc == 0 {
            return Ok(MatMut { data: &mut [], nrows: nr, ncols: nc, rs: self.rs, cs: self.cs });
        }
        let off = r0 * self.rs + c0 * self.cs;
        MatMut::new(&mut self.data[off..], nr, nc, self.rs, self.cs)
    }

    /// Sets every element of the view to `v`.
    pub fn fill(&mut self, v: T) {
        for j in 0..self.ncols {
            for i in 0..self.nrows {
                *self.at_mut(i, j) = v;
            }
        }
    }

    /// Copies `src` (same shape) into this view.
    pub fn copy_from(&mut self, src: MatRef<'_, T>) -> Result<(), LinalgError> {
        if src.nrows() != self.nrows || src.ncols() != self.ncols {
            return Err(LinalgError::DimensionMismatch);
        }
        for j in 0..self.ncols {
            for i in 0..self.nrows {
                *self.at_mut(i, j) = src.at(i, j);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_reject_short_buffers_and_overflow() {
        let d = [0.0f64; 6];
        assert!(MatRef::from_col_major(&d, 2, 3).is_ok());
        assert_eq!(MatRef::from_col_major(&d, 2, 4).unwrap_err(), LinalgError::DimensionMismatch);
        assert!(MatRef::new(&d, 2, 2, 1, 4).is_ok()); // last offset 5 < 6
        assert!(MatRef::new(&d, 2, 2, 1, 5).is_err());
        assert!(MatRef::new(&d, 2, 2, 1, usize::MAX).is_err());
        assert!(MatRef::new(&d[..0], 0, 5, 1, 0).is_ok());
    }

    #[test]
    fn mutable_views_reject_aliasing_strides() {
        let mut d = [0.0f64; 6];
        assert!(MatMut::new(&mut d, 2, 2, 1, 1).is_err());
        assert!(MatMut::new(&mut d, 2, 2, 0, 2).is_err());
        assert!(MatMut::new(&mut d, 2, 3, 1, 2).is_ok());
        assert!(MatMut::new(&mut d, 3, 2, 2, 1).is_ok());
    }

    #[test]
    fn transpose_and_submatrix_address_the_right_elements() {
        let d: [f64; 6] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let a = MatRef::from_col_major(&d, 2, 3).unwrap();
        assert_eq!(a.at(1, 2), 6.0);
        assert_eq!(a.t().at(2, 1), 6.0);
        let s = a.submatrix(0, 1, 2, 2).unwrap();
        assert_eq!(s.at(0, 0), 3.0);
        assert_eq!(s.at(1, 1), 6.0);
        assert!(a.submatrix(1, 1, 2, 1).is_err());
        assert_eq!(a.get(2, 0), None);
    }

    /// `all_finite` on every layout against the element-by-element answer:
    /// one NaN, +∞ or −∞ at each position of a 5 × 19 matrix (columns long
    /// enough for the 8-lane loop and its tail), viewed column-major,
    /// row-major, transposed and as a strided sub-view; empty views are
    /// finite.
    #[test]
    fn all_finite_finds_every_non_finite_element_in_every_layout() {
        let (r, c) = (5usize, 19usize);
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            for pos in 0..r * c {
                let mut d: [f64; 95] = core::array::from_fn(|v| v as f64 * 1e300);
                d[pos] = bad;
                let cm = MatRef::from_col_major(&d, r, c).unwrap();
                let rm = MatRef::from_row_major(&d, c, r).unwrap();
                assert!(!cm.all_finite() && !rm.all_finite() && !cm.t().all_finite(), "{pos}");
                let (pr, pc) = (pos % r, pos / r);
                let sub = cm.submatrix(pr.min(2), pc.min(10), 3, 9).unwrap();
                let inside = (pr.min(2)..pr.min(2) + 3).contains(&pr) && (pc.min(10)..pc.min(10) + 9).contains(&pc);
                assert_eq!(sub.all_finite(), !inside, "{pos}");
                assert!(!super::slice_finite(&d));
                assert!(super::slice_finite(&d[..pos]));
            }
        }
        let d: [f64; 95] = core::array::from_fn(|v| v as f64);
        assert!(MatRef::from_col_major(&d, 5, 19).unwrap().all_finite());
        assert!(MatRef::from_col_major(&d[..0], 0, 7).unwrap().all_finite());
        assert!(MatRef::from_col_major(&d[..0], 7, 0).unwrap().all_finite());
        assert!(MatRef::new(&d, 1, 19, 3, 5).unwrap().all_finite());
    }
}
