//! Kernel functions and kernel (Gram) matrices over dense or sparse rows.
//!
//! Kernels (000 §2; 004 §3): linear `⟨x, y⟩`, Gaussian RBF
//! `exp(−γ‖x − y‖²)`, polynomial `(γ⟨x, y⟩ + c)^d`. Every kernel is computed
//! from the inner product and the squared norms, so a sparse row with
//! 200 000 features costs only its non-zeros.
//!
//! Kernel centring in feature space (000 §6.1) lives here too: the
//! training kernel ([`center_kernel`]) and test kernels against the
//! training terms ([`center_test_kernel`]), as the KPC learners need.

use core::fmt;
use core::str::FromStr;

use crate::backend::Backend;
use crate::linalg::Rows;
use crate::{LinalgError, MatMut, MatRef};

/// A positive semi-definite kernel on feature vectors: the one kernel type
/// of training, the model format, the CLI and the C ABI.
///
/// # Domain
///
/// - RBF: `gamma` finite and `> 0`;
/// - polynomial: `gamma` finite and `> 0`, `coef0` finite and `≥ 0`,
///   `degree ≥ 1`.
///
/// This is the trainer's domain, and the model format accepts exactly it
/// (a file holding a kernel outside it is rejected when parsed), so every
/// model a device can load is one the trainer could have produced. The
/// reasons: `gamma > 0` keeps the RBF kernel bounded and both kernels
/// positive semi-definite; with `coef0 ≥ 0` every polynomial kernel is a
/// non-negative combination of powers of `⟨x, y⟩`, hence PSD for every
/// degree (a negative offset is not, for even degrees). The degree is a
/// `u8` because that is its field in the format's `KERNEL` section; a
/// degree above 255 would overflow any realistic score anyway.
///
/// [`Display`](fmt::Display) and [`FromStr`] use the command-line spelling
/// `linear`, `rbf:G`, `poly:D[:G[:C]]`, and round-trip exactly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kernel {
    /// `k(x, y) = ⟨x, y⟩`.
    Linear,
    /// `k(x, y) = exp(−γ‖x − y‖²)`, `γ > 0`.
    Rbf {
        /// Width parameter γ, finite and `> 0`.
        gamma: f64,
    },
    /// `k(x, y) = (γ⟨x, y⟩ + c)^degree`, `γ > 0`, `c ≥ 0`, `degree ≥ 1`.
    Polynomial {
        /// Scale γ of the inner product, finite and `> 0`.
        gamma: f64,
        /// Offset c, finite and `≥ 0`.
        coef0: f64,
        /// Integer degree, `≥ 1`.
        degree: u8,
    },
}

/// A kernel parameter outside the domain documented on [`Kernel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelDomainError;

impl fmt::Display for KernelDomainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("kernel parameter out of range (γ > 0, c ≥ 0, degree ≥ 1, all finite)")
    }
}

impl core::error::Error for KernelDomainError {}

impl Kernel {
    /// Checks the parameters are in their domain (see [`Kernel`]).
    ///
    /// # Errors
    /// [`KernelDomainError`] if a parameter is outside it.
    pub fn check(&self) -> Result<(), KernelDomainError> {
        let pos = |g: f64| g.is_finite() && g > 0.0;
        let ok = match *self {
            Kernel::Linear => true,
            Kernel::Rbf { gamma } => pos(gamma),
            Kernel::Polynomial { gamma, coef0, degree } => {
                degree >= 1 && pos(gamma) && coef0.is_finite() && coef0 >= 0.0
            }
        };
        if ok {
            Ok(())
        } else {
            Err(KernelDomainError)
        }
    }

    /// [`check`](Self::check) for the numerical routines.
    ///
    /// # Errors
    /// [`LinalgError::InvalidParameter`] if a parameter is outside the domain.
    pub fn validate(&self) -> Result<(), LinalgError> {
        self.check().map_err(|_| LinalgError::InvalidParameter)
    }

    /// The kernel value from `⟨x, y⟩`, `‖x‖²` and `‖y‖²`.
    #[inline]
    pub fn from_dot(&self, dot: f64, xx: f64, yy: f64) -> f64 {
        match *self {
            Kernel::Linear => dot,
            Kernel::Rbf { gamma } => libm::exp(-gamma * (xx + yy - 2.0 * dot).max(0.0)),
            Kernel::Polynomial { gamma, coef0, degree } => powu(gamma * dot + coef0, u32::from(degree)),
        }
    }

    /// Whether the kernel needs the squared norms of the rows.
    #[inline]
    pub fn needs_norms(&self) -> bool {
        matches!(self, Kernel::Rbf { .. })
    }
}

/// Why a kernel spec (`linear`, `rbf:G`, `poly:D[:G[:C]]`) did not parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseKernelError {
    /// The name is not `linear`, `rbf` or `poly` (or `linear` has
    /// parameters).
    UnknownKernel,
    /// `rbf` without its width.
    MissingWidth,
    /// `poly` without its degree.
    MissingDegree,
    /// A real parameter is not a finite number.
    BadNumber,
    /// The degree is not an integer in `0..=255`.
    BadDegree,
    /// The parameters parse but are outside the domain.
    OutOfDomain,
}

impl fmt::Display for ParseKernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ParseKernelError::UnknownKernel => "unknown kernel: linear, rbf:G or poly:D[:G[:C]], e.g. rbf:0.5",
            ParseKernelError::MissingWidth => {
                "the rbf kernel needs its width γ in k(x, y) = exp(−γ‖x − y‖²), e.g. rbf:0.5"
            }
            ParseKernelError::MissingDegree => "the poly kernel needs its degree, e.g. poly:2",
            ParseKernelError::BadNumber => "kernel parameter is not a finite number",
            ParseKernelError::BadDegree => "bad polynomial degree",
            ParseKernelError::OutOfDomain => "kernel parameters out of range (γ > 0, c ≥ 0, degree ≥ 1)",
        })
    }
}

impl core::error::Error for ParseKernelError {}

/// A finite `f64` (surrounding spaces allowed).
fn parse_finite(s: &str) -> Result<f64, ParseKernelError> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(ParseKernelError::BadNumber),
    }
}

impl FromStr for Kernel {
    type Err = ParseKernelError;

    /// Parses one kernel: `linear`, `rbf:G`, or `poly:D[:G[:C]]` (γ and c
    /// default to 1), then checks the domain.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut parts = s.split(':');
        let k = match parts.next().unwrap_or("") {
            "linear" if parts.clone().next().is_none() => Kernel::Linear,
            "rbf" => Kernel::Rbf { gamma: parse_finite(parts.next().ok_or(ParseKernelError::MissingWidth)?)? },
            "poly" => {
                let d = parts.next().ok_or(ParseKernelError::MissingDegree)?;
                Kernel::Polynomial {
                    degree: d.parse().map_err(|_| ParseKernelError::BadDegree)?,
                    gamma: parts.next().map(parse_finite).transpose()?.unwrap_or(1.0),
                    coef0: parts.next().map(parse_finite).transpose()?.unwrap_or(1.0),
                }
            }
            _ => return Err(ParseKernelError::UnknownKernel),
        };
        k.check().map_err(|_| ParseKernelError::OutOfDomain)?;
        Ok(k)
    }
}

impl fmt::Display for Kernel {
    /// The command-line spelling, `linear`, `rbf:G` or `poly:D:G:C`, which
    /// [`FromStr`] reads back to the same kernel.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Kernel::Linear => f.write_str("linear"),
            Kernel::Rbf { gamma } => write!(f, "rbf:{gamma}"),
            Kernel::Polynomial { degree, gamma, coef0 } => write!(f, "poly:{degree}:{gamma}:{coef0}"),
        }
    }
}

/// `x^n` by repeated squaring (exact for small integer results, unlike `pow`).
pub(crate) fn powu<R: crate::Real>(mut x: R, mut n: u32) -> R {
    let mut r = R::ONE;
    while n > 0 {
        if n & 1 == 1 {
            r *= x;
        }
        x *= x;
        n >>= 1;
    }
    r
}

/// Scratch elements [`kernel_matrix`] needs for these operands.
pub fn kernel_matrix_workspace_len(x: &Rows<'_>, y: &Rows<'_>) -> usize {
    KernelScratch::len(x.nrows(), y.nrows(), x.ncols())
}

crate::scratch! {
    /// Scratch of [`kernel_matrix`].
    struct KernelScratch(nx: usize, ny: usize, d: usize) {
        /// `‖xᵢ‖²`.
        xn: nx,
        /// `‖yⱼ‖²`.
        yn: ny,
        /// One row of `y`, scattered dense.
        buf: d,
    }
}

/// `out[i, j] = k(xᵢ, yⱼ)` for `out: x.nrows() × y.nrows()`.
///
/// Dense × dense uses the backend's gemm for the inner products; anything
/// sparse scatters one row of `y` at a time into a dense buffer, costing
/// O(nnz(x)·n_y).
///
/// # Errors
/// Dimension mismatches, a short workspace, invalid kernel parameters, or
/// non-finite kernel values (e.g. a polynomial kernel that overflows).
pub fn kernel_matrix<B: Backend>(
    backend: &mut B,
    kernel: &Kernel,
    x: &Rows<'_>,
    y: &Rows<'_>,
    mut out: MatMut<'_, f64>,
    work: &mut [f64],
) -> Result<(), LinalgError> {
    kernel.validate()?;
    let (nx, ny, d) = (x.nrows(), y.nrows(), x.ncols());
    if y.ncols() != d || out.nrows() != nx || out.ncols() != ny {
        return Err(LinalgError::DimensionMismatch);
    }
    let (KernelScratch { xn, yn, buf }, _) = KernelScratch::split(work, nx, ny, d)?;
    if let (Rows::Dense(a), Rows::Dense(b)) = (x, y) {
        if !a.all_finite() || !b.all_finite() {
            return Err(LinalgError::NonFinite);
        }
        backend.gemm(1.0, *a, b.t(), 0.0, out.rb_mut())?;
    } else {
        buf.iter_mut().for_each(|v| *v = 0.0);
        for j in 0..ny {
            y.scatter(j, buf);
            for i in 0..nx {
                *out.at_mut(i, j) = x.dot_dense(i, buf);
            }
            y.unscatter(j, buf);
        }
    }
    if kernel.needs_norms() {
        (0..nx).for_each(|i| xn[i] = x.sq_norm(i));
        (0..ny).for_each(|j| yn[j] = y.sq_norm(j));
    }
    backend.kernel_values(kernel, norms(kernel, xn), norms(kernel, yn), false, out)
}

/// The squared norms [`Backend::kernel_values`] reads: all of `v` when the
/// kernel needs them, none otherwise.
fn norms<'a>(kernel: &Kernel, v: &'a [f64]) -> &'a [f64] {
    if kernel.needs_norms() {
        v
    } else {
        &[]
    }
}

/// The training kernel `out[i, j] = k(xᵢ, xⱼ)` (`n × n`), exactly
/// symmetric: the inner products come from the backend's syrk (dense) or
/// from the lower triangle (sparse), and the kernel values from
/// [`Backend::kernel_values`] with `symmetric`. Same workspace as
/// [`kernel_matrix`]`(x, x)`.
///
/// # Errors
/// As [`kernel_matrix`].
pub fn kernel_matrix_sym<B: Backend>(
    backend: &mut B,
    kernel: &Kernel,
    x: &Rows<'_>,
    mut out: MatMut<'_, f64>,
    work: &mut [f64],
) -> Result<(), LinalgError> {
    kernel.validate()?;
    let (n, d) = (x.nrows(), x.ncols());
    if out.nrows() != n || out.ncols() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    let (KernelScratch { xn, buf, .. }, _) = KernelScratch::split(work, n, n, d)?;
    if let Rows::Dense(a) = x {
        if !a.all_finite() {
            return Err(LinalgError::NonFinite);
        }
        backend.syrk(1.0, *a, 0.0, out.rb_mut())?;
    } else {
        buf.iter_mut().for_each(|v| *v = 0.0);
        for j in 0..n {
            x.scatter(j, buf);
            for i in j..n {
                let v = x.dot_dense(i, buf);
                *out.at_mut(i, j) = v;
                *out.at_mut(j, i) = v;
            }
            x.unscatter(j, buf);
        }
    }
    if kernel.needs_norms() {
        (0..n).for_each(|i| xn[i] = x.sq_norm(i));
    }
    let xn = norms(kernel, xn);
    backend.kernel_values(kernel, xn, xn, true, out)
}

/// Kernel values from inner products, in place:
/// `out[i, j] ← k(out[i, j], xn[i], yn[j])` ([`Kernel::from_dot`]; `xn`,
/// `yn` are the squared row norms, read only when
/// [`Kernel::needs_norms`] and otherwise empty). With `symmetric` (`out`
/// square and exactly symmetric, `xn = yn`), only the lower triangle is
/// evaluated and mirrored, so the result is exactly symmetric and costs
/// half the `exp`s. Serial; the default of [`Backend::kernel_values`].
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] on shapes, [`LinalgError::NonFinite`]
/// if a kernel value is not finite (e.g. an overflowing polynomial).
pub fn kernel_values(
    kernel: &Kernel,
    xn: &[f64],
    yn: &[f64],
    symmetric: bool,
    mut out: MatMut<'_, f64>,
) -> Result<(), LinalgError> {
    let (nx, ny) = (out.nrows(), out.ncols());
    check_kernel_values(kernel, xn, yn, symmetric, nx, ny)?;
    let norm = |v: &[f64], i: usize| v.get(i).copied().unwrap_or(0.0);
    for j in 0..ny {
        let i0 = if symmetric { j } else { 0 };
        for i in i0..nx {
            let v = kernel.from_dot(out.at(i, j), norm(xn, i), norm(yn, j));
            if !v.is_finite() {
                return Err(LinalgError::NonFinite);
            }
            *out.at_mut(i, j) = v;
            if symmetric {
                *out.at_mut(j, i) = v;
            }
        }
    }
    Ok(())
}

/// The shape checks of [`kernel_values`], shared with other backends.
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] if the norms do not match `out`'s
/// shape (when the kernel needs them) or a symmetric `out` is not square.
pub fn check_kernel_values(
    kernel: &Kernel,
    xn: &[f64],
    yn: &[f64],
    symmetric: bool,
    nx: usize,
    ny: usize,
) -> Result<(), LinalgError> {
    if (kernel.needs_norms() && (xn.len() != nx || yn.len() != ny)) || (symmetric && nx != ny) {
        return Err(LinalgError::DimensionMismatch);
    }
    Ok(())
}

/// `k(xᵢ, yⱼ)` for single rows, without any workspace: O(d) for dense rows,
/// O(nnz) for sparse ones (merge of the two index lists).
pub fn kernel_value(kernel: &Kernel, x: &Rows<'_>, i: usize, y: &Rows<'_>, j: usize) -> f64 {
    let dot = match (x, y) {
        (Rows::Sparse(a), Rows::Sparse(b)) => {
            let ((ca, va), (cb, vb)) = (a.row(i), b.row(j));
            let (mut p, mut q, mut s) = (0, 0, 0.0);
            while p < ca.len() && q < cb.len() {
                match ca[p].cmp(&cb[q]) {
                    core::cmp::Ordering::Less => p += 1,
                    core::cmp::Ordering::Greater => q += 1,
                    core::cmp::Ordering::Equal => {
                        s += va[p] * vb[q];
                        p += 1;
                        q += 1;
                    }
                }
            }
            s
        }
        (Rows::Dense(a), Rows::Dense(b)) => (0..a.ncols()).map(|t| a.at(i, t) * b.at(j, t)).sum(),
        (Rows::Dense(a), Rows::Sparse(b)) | (Rows::Sparse(b), Rows::Dense(a)) => {
            let (row, col) = if matches!(x, Rows::Dense(_)) { (i, j) } else { (j, i) };
            let (c, v) = b.row(col);
            c.iter().zip(v).map(|(&c, &v)| v * a.get(row, c as usize).unwrap_or(0.0)).sum()
        }
    };
    let (xx, yy) = if kernel.needs_norms() { (x.sq_norm(i), y.sq_norm(j)) } else { (0.0, 0.0) };
    kernel.from_dot(dot, xx, yy)
}

/// Centres a symmetric kernel matrix in feature space (000 §6.1):
/// `K̂ = HKH`, `H = I − 11ᵀ/n`. Writes `K̂` to `out` (`n × n`), the column
/// means of `K` to `colmean` (`n`), and returns the grand mean — the terms
/// [`center_test_kernel`] and the model file need.
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] on shapes, [`LinalgError::NonFinite`]
/// if `K` holds NaN/Inf.
pub fn center_kernel(k: MatRef<'_, f64>, mut out: MatMut<'_, f64>, colmean: &mut [f64]) -> Result<f64, LinalgError> {
    let n = k.nrows();
    if out.nrows() != n || out.ncols() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    let grand = kernel_means(k, colmean)?;
    for j in 0..n {
        for i in 0..n {
            *out.at_mut(i, j) = k.at(i, j) - colmean[i] - colmean[j] + grand;
        }
    }
    Ok(grand)
}

/// [`center_kernel`] overwriting `K` with `K̂` (saves an `n × n` buffer).
///
/// # Errors
/// As [`center_kernel`].
pub fn center_kernel_in_place(mut k: MatMut<'_, f64>, colmean: &mut [f64]) -> Result<f64, LinalgError> {
    let n = k.nrows();
    let grand = kernel_means(k.rb(), colmean)?;
    for j in 0..n {
        for i in 0..n {
            *k.at_mut(i, j) += grand - colmean[i] - colmean[j];
        }
    }
    Ok(grand)
}

/// Column means of the square `K` into `colmean`, returning the grand mean.
fn kernel_means(k: MatRef<'_, f64>, colmean: &mut [f64]) -> Result<f64, LinalgError> {
    let n = k.nrows();
    if k.ncols() != n || colmean.len() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    if !k.all_finite() {
        return Err(LinalgError::NonFinite);
    }
    if n == 0 {
        return Ok(0.0);
    }
    for (j, cm) in colmean.iter_mut().enumerate() {
        *cm = (0..n).map(|i| k.at(i, j)).sum::<f64>() / n as f64;
    }
    Ok(colmean.iter().sum::<f64>() / n as f64)
}

/// Centres a test kernel `K_t` (`n_t × n`, rows = test points) against the
/// training centring terms (000 §6.1):
/// `K̂_t = (K_t − 1 colmeanᵀ)(I − 11ᵀ/n)`, i.e.
/// `k̂(x, xᵢ) = k(x, xᵢ) − mean_j k(x, xⱼ) − colmeanᵢ + grand`.
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] on shapes.
pub fn center_test_kernel(
    kt: MatRef<'_, f64>,
    colmean: &[f64],
    grand: f64,
    mut out: MatMut<'_, f64>,
) -> Result<(), LinalgError> {
    if out.nrows() != kt.nrows() || out.ncols() != kt.ncols() {
        return Err(LinalgError::DimensionMismatch);
    }
    out.copy_from(kt)?;
    center_test_kernel_in_place(out, colmean, grand)
}

/// [`center_test_kernel`] overwriting `K_t`.
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] on shapes.
pub fn center_test_kernel_in_place(mut kt: MatMut<'_, f64>, colmean: &[f64], grand: f64) -> Result<(), LinalgError> {
    let (nt, n) = (kt.nrows(), kt.ncols());
    if colmean.len() != n {
        return Err(LinalgError::DimensionMismatch);
    }
    if n == 0 {
        return Ok(());
    }
    for t in 0..nt {
        let rowmean = (0..n).map(|j| kt.at(t, j)).sum::<f64>() / n as f64;
        for i in 0..n {
            *kt.at_mut(t, i) += grand - rowmean - colmean[i];
        }
    }
    Ok(())
}

/// The pair kernel over edges of conditional ranking (004 §3), built from
/// node kernels: what the Kronecker learners ([`crate::learn::kron`]) fit
/// with and the pair model kinds ([`crate::format`]) store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PairKernel {
    /// `k_u(u, ū)·k_v(v, v̄)` (004 eq. 7): any relation.
    #[default]
    Kronecker,
    /// `½(k(u, ū)k(v, v̄) + k(u, v̄)k(v, ū))` (004 eq. 8): symmetric
    /// relations, `f(u, v) = f(v, u)`. One domain only.
    Symmetric,
    /// `½(k(u, ū)k(v, v̄) − k(u, v̄)k(v, ū))` (004 eq. 9): reciprocal
    /// (antisymmetric) relations, `f(u, v) = −f(v, u)`. One domain only.
    Reciprocal,
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;

    use super::{Kernel, KernelDomainError, ParseKernelError};

    #[test]
    fn parses_the_command_line_spelling() {
        assert_eq!("linear".parse(), Ok(Kernel::Linear));
        assert_eq!("rbf:0.5".parse(), Ok(Kernel::Rbf { gamma: 0.5 }));
        assert_eq!("rbf: 2 ".parse(), Ok(Kernel::Rbf { gamma: 2.0 }));
        assert_eq!("poly:3".parse(), Ok(Kernel::Polynomial { gamma: 1.0, coef0: 1.0, degree: 3 }));
        assert_eq!("poly:2:0.5".parse(), Ok(Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 2 }));
        assert_eq!("poly:2:0.5:0".parse(), Ok(Kernel::Polynomial { gamma: 0.5, coef0: 0.0, degree: 2 }));
    }

    #[test]
    fn rejects_bad_specs_with_their_reason() {
        let e = |s: &str| s.parse::<Kernel>().unwrap_err();
        assert_eq!(e("sigmoid:1"), ParseKernelError::UnknownKernel);
        assert_eq!(e("linear:1"), ParseKernelError::UnknownKernel);
        assert_eq!(e(""), ParseKernelError::UnknownKernel);
        assert_eq!(e("rbf"), ParseKernelError::MissingWidth);
        assert_eq!(e("rbf:x"), ParseKernelError::BadNumber);
        assert_eq!(e("rbf:inf"), ParseKernelError::BadNumber);
        assert_eq!(e("rbf:NaN"), ParseKernelError::BadNumber);
        assert_eq!(e("rbf:0"), ParseKernelError::OutOfDomain);
        assert_eq!(e("rbf:-1"), ParseKernelError::OutOfDomain);
        assert_eq!(e("poly"), ParseKernelError::MissingDegree);
        assert_eq!(e("poly:two"), ParseKernelError::BadDegree);
        assert_eq!(e("poly:256"), ParseKernelError::BadDegree);
        assert_eq!(e("poly:0"), ParseKernelError::OutOfDomain);
        assert_eq!(e("poly:2:0"), ParseKernelError::OutOfDomain);
        assert_eq!(e("poly:2:1:-1"), ParseKernelError::OutOfDomain);
    }

    #[test]
    fn display_round_trips_through_from_str() {
        for k in [
            Kernel::Linear,
            Kernel::Rbf { gamma: 0.1 },
            Kernel::Rbf { gamma: 1e-300 },
            Kernel::Polynomial { gamma: 0.3, coef0: 0.0, degree: 255 },
            Kernel::Polynomial { gamma: 1.0 / 3.0, coef0: 2.5, degree: 1 },
        ] {
            let s = k.to_string();
            assert_eq!(s.parse::<Kernel>(), Ok(k), "{s}");
        }
        assert_eq!(Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 3 }.to_string(), "poly:3:0.5:1");
    }

    #[test]
    fn domain_is_the_trainers() {
        assert_eq!(Kernel::Linear.check(), Ok(()));
        assert_eq!(Kernel::Rbf { gamma: 0.0 }.check(), Err(KernelDomainError));
        assert_eq!(Kernel::Rbf { gamma: f64::INFINITY }.check(), Err(KernelDomainError));
        assert_eq!(Kernel::Polynomial { gamma: 1.0, coef0: 0.0, degree: 1 }.check(), Ok(()));
        assert_eq!(Kernel::Polynomial { gamma: -1.0, coef0: 0.0, degree: 1 }.check(), Err(KernelDomainError));
        assert_eq!(Kernel::Polynomial { gamma: 1.0, coef0: -0.5, degree: 1 }.check(), Err(KernelDomainError));
        assert_eq!(Kernel::Polynomial { gamma: 1.0, coef0: f64::NAN, degree: 1 }.check(), Err(KernelDomainError));
        assert_eq!(Kernel::Polynomial { gamma: 1.0, coef0: 0.0, degree: 0 }.check(), Err(KernelDomainError));
        assert!(Kernel::Polynomial { gamma: 1.0, coef0: 0.0, degree: 0 }.validate().is_err());
    }

    /// The training kernel of [`super::kernel_matrix_sym`] is exactly
    /// symmetric and equals [`super::kernel_value`] (independent: direct
    /// sums of products per pair) to rounding, for dense and sparse rows;
    /// [`super::kernel_values`] rejects a non-finite value.
    #[test]
    fn symmetric_kernel_matrix_matches_pairwise_values() {
        use super::{kernel_matrix_sym, kernel_matrix_workspace_len, kernel_value, kernel_values};
        use crate::backend::Portable;
        use crate::linalg::{CsrRef, Rows};
        use crate::{LinalgError, MatMut, MatRef};
        use std::vec;
        const N: usize = 9;
        const D: usize = 4;
        let x: std::vec::Vec<f64> = (0..N * D).map(|t| ((t * 7919) % 23) as f64 / 7.0 - 1.5).collect();
        let dense = Rows::Dense(MatRef::from_row_major(&x, N, D).unwrap());
        // The same rows as CSR (zeros dropped).
        let (mut ptr, mut col, mut val) = (vec![0usize], vec![], vec![]);
        for i in 0..N {
            for j in 0..D {
                if x[i * D + j] != 0.0 {
                    col.push(j as u32);
                    val.push(x[i * D + j]);
                }
            }
            ptr.push(col.len());
        }
        let sparse = Rows::Sparse(CsrRef::new(D, &ptr, &col, &val).unwrap());
        for rows in [dense, sparse] {
            for kernel in [Kernel::Rbf { gamma: 0.3 }, Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 3 }] {
                let mut k = vec![0.0f64; N * N];
                let mut work = vec![0.0f64; kernel_matrix_workspace_len(&rows, &rows)];
                let mut be = Portable::new(&mut []);
                kernel_matrix_sym(&mut be, &kernel, &rows, MatMut::from_col_major(&mut k, N, N).unwrap(), &mut work)
                    .unwrap();
                for j in 0..N {
                    for i in 0..N {
                        assert_eq!(k[i + j * N].to_bits(), k[j + i * N].to_bits(), "({i}, {j})");
                        let want = kernel_value(&kernel, &rows, i, &rows, j);
                        assert!((k[i + j * N] - want).abs() <= 1e-13 * want.abs().max(1.0), "{kernel} ({i}, {j})");
                    }
                }
            }
        }
        let mut dots = [1e300f64, 0.0, 0.0, 1.0];
        let e = kernel_values(
            &Kernel::Polynomial { gamma: 1.0, coef0: 0.0, degree: 2 },
            &[],
            &[],
            true,
            MatMut::from_col_major(&mut dots, 2, 2).unwrap(),
        );
        assert_eq!(e, Err(LinalgError::NonFinite));
    }
}
