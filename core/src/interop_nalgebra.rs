//! Interoperation with [nalgebra](https://nalgebra.org) (feature `nalgebra`;
//! nalgebra built with `default-features = false, features = ["libm"]`, so
//! this module is as `no_std` and allocation-free as the rest of core).
//!
//! Why: the device learners' callers (firmware, games, robotics code) often
//! already hold their vectors and small matrices in nalgebra types. These
//! functions let them pass those to core, and take core's results back,
//! without copying and without a second implementation of any algorithm:
//! every routine here is a conversion or a one-line forward to core.
//!
//! # Core → nalgebra (zero-copy)
//!
//! - [`view`] turns a [`MatRef`] into a strided nalgebra view
//!   ([`NaView`], `MatrixView<T, Dyn, Dyn, Dyn, Dyn>`), [`view_mut`] a
//!   [`MatMut`] into a mutable one. The same elements, any strides (column-
//!   major, row-major, transposed, sub-blocks). nalgebra's view constructors
//!   panic on a buffer that is too short; these functions check first (with
//!   overflow-checked arithmetic) and return [`LinalgError::DimensionMismatch`]
//!   instead. Strides that cannot matter (the row stride of a one-row view,
//!   any stride of an empty view) are normalised so that nalgebra's own check
//!   holds.
//!
//! # nalgebra → core (zero-copy)
//!
//! - [`mat_ref`] / [`mat_mut`] view a matrix with contiguous column-major
//!   storage (`SMatrix`, `DMatrix`, and any other owned matrix) as a
//!   [`MatRef`] / [`MatMut`]. nalgebra exposes the slice of a *strided* view
//!   only through `unsafe` code, which core forbids; copy such a view into an
//!   owned matrix first (`clone_owned`), or go the other way with [`view`].
//!
//! # Fixed-size constructors (for the device learners)
//!
//! - [`smatrix`] copies an `R × C` [`MatRef`] into an `SMatrix<T, R, C>`,
//!   [`sym_smatrix`] builds a symmetric `SMatrix<T, N, N>` from the lower
//!   triangle of a square view (core's convention: only the lower triangle
//!   is read), [`svector`] an `SVector<T, N>` from a slice. Shapes are
//!   checked, never assumed. Back to a caller's buffer:
//!   `dst.copy_from(mat_ref(&m)?)` with [`MatMut::copy_from`].
//! - [`sym_eigen`] decomposes an `SMatrix<T, N, N>` with core's
//!   [`SymEigen<T, N>`] straight from the matrix's storage (no copy): core's
//!   solver is within 5 % of nalgebra's `SymmetricEigen` at N = 8…64 and more
//!   accurate (`docs/performance.md`), sorts its eigenvalues and reports NaN
//!   input as an error instead of looping or panicking.
//!
//! # Scoring
//!
//! - [`score`] / [`score_f64`] score a model on a nalgebra column vector
//!   (`SVector`, `DVector`, contiguous vector views): a thin forward to
//!   [`ModelView::score_dense`] / [`ModelView::score_dense_f64`] with the
//!   vector's slice, so scoring has exactly one implementation.
#![cfg(feature = "nalgebra")]

use crate::eigen::fixed::SymEigen;
use crate::eigen::EigenParams;
use crate::format::{ModelView, ScoreError};
use crate::{LinalgError, MatMut, MatRef, Real};
use nalgebra::storage::{IsContiguous, RawStorage, RawStorageMut};
use nalgebra::{Dim, Dyn, Matrix, MatrixView, MatrixViewMut, SMatrix, SVector, Scalar, U1};

/// A read-only nalgebra view with run-time shape and strides.
pub type NaView<'a, T> = MatrixView<'a, T, Dyn, Dyn, Dyn, Dyn>;
/// A mutable nalgebra view with run-time shape and strides.
pub type NaViewMut<'a, T> = MatrixViewMut<'a, T, Dyn, Dyn, Dyn, Dyn>;

/// Strides that satisfy nalgebra's view check for a view core accepted, or
/// an error when nalgebra's check (`len + cs + rs ≥ nc·cs + nr·rs + 1`) would
/// fail or overflow.
fn nalgebra_strides(len: usize, nr: usize, nc: usize, rs: usize, cs: usize) -> Result<(usize, usize), LinalgError> {
    let (rs, cs) = if nr == 0 {
        (1, 0)
    } else if nc == 0 {
        (0, 1)
    } else {
        (if nr == 1 { 1 } else { rs }, if nc == 1 { nr.saturating_mul(rs).max(1) } else { cs })
    };
    let lhs = len.checked_add(cs).and_then(|x| x.checked_add(rs));
    let rhs = nc.checked_mul(cs).and_then(|x| x.checked_add(nr.checked_mul(rs)?)).and_then(|x| x.checked_add(1));
    match (lhs, rhs) {
        (Some(l), Some(r)) if l >= r => Ok((rs, cs)),
        _ => Err(LinalgError::DimensionMismatch),
    }
}

/// The nalgebra view of the same elements as `m` (no copy).
///
/// # Errors
///
/// [`LinalgError::DimensionMismatch`] if nalgebra's view check would reject
/// the strides (it cannot for views built by core's constructors, which
/// already keep every element inside the slice; the check guards against
/// overflow in nalgebra's formula).
pub fn view<T: Scalar + Copy>(m: MatRef<'_, T>) -> Result<NaView<'_, T>, LinalgError> {
    let (nr, nc) = (m.nrows(), m.ncols());
    let data = m.as_slice();
    let (rs, cs) = nalgebra_strides(data.len(), nr, nc, m.row_stride(), m.col_stride())?;
    Ok(NaView::from_slice_with_strides_generic(data, Dyn(nr), Dyn(nc), Dyn(rs), Dyn(cs)))
}

/// The mutable nalgebra view of the same elements as `m` (no copy), for as
/// long as `m` is borrowed. core's [`MatMut`] constructors already reject
/// aliasing strides, so writes through the view mean what they say.
///
/// # Errors
///
/// As [`view`].
pub fn view_mut<'b, T: Scalar + Copy>(m: &'b mut MatMut<'_, T>) -> Result<NaViewMut<'b, T>, LinalgError> {
    let (nr, nc, rs0, cs0) = (m.nrows(), m.ncols(), m.row_stride(), m.col_stride());
    let data = m.as_slice_mut();
    let (rs, cs) = nalgebra_strides(data.len(), nr, nc, rs0, cs0)?;
    Ok(NaViewMut::from_slice_with_strides_generic(data, Dyn(nr), Dyn(nc), Dyn(rs), Dyn(cs)))
}

/// core's view of a nalgebra matrix with contiguous column-major storage
/// (`SMatrix`, `DMatrix`, …), no copy.
///
/// # Errors
///
/// [`LinalgError::DimensionMismatch`] only if the storage's length disagrees
/// with its shape (it cannot for nalgebra's own storages).
pub fn mat_ref<T, R, C, S>(m: &Matrix<T, R, C, S>) -> Result<MatRef<'_, T>, LinalgError>
where
    T: Copy,
    R: Dim,
    C: Dim,
    S: RawStorage<T, R, C> + IsContiguous,
{
    MatRef::from_col_major(m.as_slice(), m.nrows(), m.ncols())
}

/// core's mutable view of a nalgebra matrix with contiguous column-major
/// storage, no copy.
///
/// # Errors
///
/// As [`mat_ref`].
pub fn mat_mut<T, R, C, S>(m: &mut Matrix<T, R, C, S>) -> Result<MatMut<'_, T>, LinalgError>
where
    T: Copy,
    R: Dim,
    C: Dim,
    S: RawStorageMut<T, R, C> + IsContiguous,
{
    let (nr, nc) = (m.nrows(), m.ncols());
    MatMut::from_col_major(m.as_mut_slice(), nr, nc)
}

/// Copies the `R × C` view `m` into a fixed-size matrix.
///
/// # Errors
///
/// [`LinalgError::DimensionMismatch`] if `m` is not `R × C`.
pub fn smatrix<T: Scalar + Copy, const R: usize, const C: usize>(
    m: MatRef<'_, T>,
) -> Result<SMatrix<T, R, C>, LinalgError> {
    if m.nrows() != R || m.ncols() != C {
        return Err(LinalgError::DimensionMismatch);
    }
    Ok(SMatrix::from_fn(|i, j| m.at(i, j)))
}

/// The symmetric `N × N` matrix whose lower triangle (diagonal included) is
/// that of `m`; the strict upper triangle of `m` is not read.
///
/// # Errors
///
/// [`LinalgError::DimensionMismatch`] if `m` is not `N × N`.
pub fn sym_smatrix<T: Scalar + Copy, const N: usize>(m: MatRef<'_, T>) -> Result<SMatrix<T, N, N>, LinalgError> {
    if m.nrows() != N || m.ncols() != N {
        return Err(LinalgError::DimensionMismatch);
    }
    Ok(SMatrix::from_fn(|i, j| if i >= j { m.at(i, j) } else { m.at(j, i) }))
}

/// Copies `x` into a fixed-size column vector.
///
/// # Errors
///
/// [`LinalgError::DimensionMismatch`] if `x.len() != N`.
pub fn svector<T: Scalar + Copy, const N: usize>(x: &[T]) -> Result<SVector<T, N>, LinalgError> {
    if x.len() != N {
        return Err(LinalgError::DimensionMismatch);
    }
    Ok(SVector::from_column_slice(x))
}

/// Decomposes the symmetric `m` (lower triangle read) into `solver`, reading
/// the matrix's own storage: [`SymEigen::compute`] with `n = N`.
///
/// # Errors
///
/// As [`SymEigen::compute`] (NaN/Inf input, no convergence).
pub fn sym_eigen<T: Real + Scalar, const N: usize>(
    solver: &mut SymEigen<T, N>,
    m: &SMatrix<T, N, N>,
    params: &EigenParams,
) -> Result<(), LinalgError> {
    solver.compute(m.as_slice(), N, params)
}

/// Scores one item given as a nalgebra column vector of length
/// [`ModelView::dim`]: [`ModelView::score_dense`] on its slice.
///
/// # Errors
///
/// As [`ModelView::score_dense`].
pub fn score<R: Dim, S: RawStorage<f32, R, U1> + IsContiguous>(
    model: &ModelView<'_>,
    x: &Matrix<f32, R, U1, S>,
) -> Result<f32, ScoreError> {
    model.score_dense(x.as_slice())
}

/// [`score`] in `f64`: [`ModelView::score_dense_f64`] on the vector's slice.
///
/// # Errors
///
/// As [`ModelView::score_dense_f64`].
pub fn score_f64<R: Dim, S: RawStorage<f64, R, U1> + IsContiguous>(
    model: &ModelView<'_>,
    x: &Matrix<f64, R, U1, S>,
) -> Result<f64, ScoreError> {
    model.score_dense_f64(x.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Matrix3, Vector3};

    #[test]
    fn strided_views_address_the_same_elements() {
        // 3 × 2 row-major inside a 7-element buffer with row stride 3.
        let d = [1.0f64, 2.0, 9.0, 3.0, 4.0, 9.0, 5.0];
        let m = MatRef::new(&d[..], 3, 1, 3, 1).unwrap();
        let v = view(m).unwrap();
        assert_eq!((v.nrows(), v.ncols()), (3, 1));
        assert_eq!((v[(0, 0)], v[(1, 0)], v[(2, 0)]), (1.0, 3.0, 5.0));
        let m = MatRef::new(&d[..6], 2, 2, 3, 1).unwrap();
        let v = view(m).unwrap();
        assert_eq!(v, nalgebra::Matrix2::new(1.0, 2.0, 3.0, 4.0));
        assert_eq!(view(m.t()).unwrap(), nalgebra::Matrix2::new(1.0, 3.0, 2.0, 4.0));
    }

    #[test]
    fn degenerate_strides_never_panic() {
        let d = [1.0f32; 4];
        // A one-column view with an absurd column stride is valid in core.
        let m = MatRef::new(&d, 4, 1, 1, usize::MAX).unwrap();
        assert_eq!(view(m).unwrap().nrows(), 4);
        // Empty views with any strides.
        for (nr, nc) in [(0, 5), (5, 0), (0, 0)] {
            let m = MatRef::new(&d[..0], nr, nc, 7, 9).unwrap();
            let v = view(m).unwrap();
            assert_eq!((v.nrows(), v.ncols()), (nr, nc));
        }
        // A one-row view with an absurd row stride.
        let m = MatRef::new(&d, 1, 4, usize::MAX, 1).unwrap();
        assert_eq!(view(m).unwrap().ncols(), 4);
        assert_eq!(nalgebra_strides(3, 2, 2, 1, usize::MAX), Err(LinalgError::DimensionMismatch));
    }

    #[test]
    fn fixed_size_constructors_check_shapes() {
        let d = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
        let m = MatRef::from_col_major(&d, 3, 3).unwrap();
        let s: Matrix3<f64> = smatrix(m).unwrap();
        assert_eq!(s, Matrix3::from_column_slice(&d));
        let y: Matrix3<f64> = sym_smatrix(m).unwrap();
        assert_eq!(y, Matrix3::new(1.0, 2.0, 3.0, 2.0, 5.0, 6.0, 3.0, 6.0, 9.0));
        assert!(smatrix::<f64, 3, 2>(m).is_err());
        assert!(sym_smatrix::<f64, 2>(m).is_err());
        assert_eq!(svector::<f64, 3>(&d[..3]).unwrap(), Vector3::new(1.0, 2.0, 3.0));
        assert!(svector::<f64, 3>(&d[..2]).is_err());
        // And back into a caller's strided buffer.
        let mut out = [0.0f64; 9];
        let mut dst = MatMut::from_row_major(&mut out, 3, 3).unwrap();
        dst.copy_from(mat_ref(&y).unwrap()).unwrap();
        assert_eq!(out, [1.0, 2.0, 3.0, 2.0, 5.0, 6.0, 3.0, 6.0, 9.0]);
    }

    #[test]
    fn eigen_from_an_smatrix() {
        let a = Matrix3::new(2.0f32, 1.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 5.0);
        let mut s = SymEigen::<f32, 3>::new();
        sym_eigen(&mut s, &a, &EigenParams::default()).unwrap();
        let want = [1.0f32, 3.0, 5.0];
        for (x, y) in s.values().iter().zip(want) {
            assert!((x - y).abs() < 1e-6);
        }
        let mut bad = a;
        bad[(2, 1)] = f32::NAN;
        assert_eq!(sym_eigen(&mut s, &bad, &EigenParams::default()), Err(LinalgError::NonFinite));
    }

    #[test]
    fn scoring_forwards_to_the_model() {
        use crate::format::{ElementType, LinearModel, Model, ModelSpec};
        let w = [0.5, -1.0, 2.0];
        let spec = ModelSpec::new(Model::Linear(LinearModel { w: &w, offset: 0.25, centring: None }), ElementType::F32);
        let mut buf = [0u8; 256];
        let n = spec.emit(&mut buf).unwrap();
        let model = ModelView::new_checked(&buf[..n]).unwrap();
        assert_eq!(score(&model, &Vector3::new(1.0f32, 1.0, 1.0)).unwrap(), 1.75);
        assert_eq!(score_f64(&model, &Vector3::new(1.0f64, 1.0, 1.0)).unwrap(), 1.75);
        assert!(score(&model, &nalgebra::Vector2::new(1.0f32, 1.0)).is_err());
    }
}
