//! Level-1, 2 and 3 kernels on slices and strided views.
//!
//! `beta = 0` means "overwrite": the old contents of the output are not read,
//! so NaN garbage in an uninitialised output buffer does not leak through
//! (the BLAS convention).

use crate::{LinalgError, MatMut, MatRef, Real};

/// `xᵀy`. Errors if the lengths differ.
pub fn dot<T: Real>(x: &[T], y: &[T]) -> Result<T, LinalgError> {
    if x.len() != y.len() {
        return Err(LinalgError::DimensionMismatch);
    }
    Ok(dot_unchecked(x, y))
}

/// `xᵀy` over the common prefix; four accumulators so the loop vectorises.
#[inline]
pub(crate) fn dot_unchecked<T: Real>(x: &[T], y: &[T]) -> T {
    let n = x.len().min(y.len());
    let (x, y) = (&x[..n], &y[..n]);
    let mut acc = [T::ZERO; 4];
    let mut xc = x.chunks_exact(4);
    let mut yc = y.chunks_exact(4);
    for (a, b) in (&mut xc).zip(&mut yc) {
        acc[0] += a[0] * b[0];
        acc[1] += a[1] * b[1];
        acc[2] += a[2] * b[2];
        acc[3] += a[3] * b[3];
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (a, b) in xc.remainder().iter().zip(yc.remainder()) {
        s += *a * *b;
    }
    s
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
        // Column-major: y += (α xⱼ) · A[:, j], contiguous axpy per column.
        for (j, &xj) in x.iter().enumerate() {
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

/// `C ← α·A·B + β·C` for `A: m × k`, `B: k × n`, `C: m × n`.
///
/// Transposes are expressed through the views ([`MatRef::t`]).
pub fn gemm<T: Real>(
    alpha: T,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    beta: T,
    mut c: MatMut<'_, T>,
) -> Result<(), LinalgError> {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    if b.nrows() != k || c.nrows() != m || c.ncols() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    scale_output(beta, &mut c);
    for j in 0..n {
        for p in 0..k {
            let s = alpha * b.at(p, j);
            for i in 0..m {
                *c.at_mut(i, j) += s * a.at(i, p);
            }
        }
    }
    Ok(())
}

/// `C ← α·A·Aᵀ + β·C` for `A: n × k`, `C: n × n`; both triangles of `C` are
/// written (the result is exactly symmetric).
pub fn syrk<T: Real>(alpha: T, a: MatRef<'_, T>, beta: T, mut c: MatMut<'_, T>) -> Result<(), LinalgError> {
    let (n, k) = (a.nrows(), a.ncols());
    if c.nrows() != n || c.ncols() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    for j in 0..n {
        for i in j..n {
            let mut s = T::ZERO;
            for p in 0..k {
                s += a.at(i, p) * a.at(j, p);
            }
            let old = if beta == T::ZERO { T::ZERO } else { beta * c.at(i, j) };
            let v = alpha * s + old;
            *c.at_mut(i, j) = v;
            *c.at_mut(j, i) = v;
        }
    }
    Ok(())
}

fn scale_output<T: Real>(beta: T, c: &mut MatMut<'_, T>) {
    if beta == T::ZERO {
        c.fill(T::ZERO);
    } else if beta != T::ONE {
        for j in 0..c.ncols() {
            for i in 0..c.nrows() {
                *c.at_mut(i, j) *= beta;
            }
        }
    }
}
