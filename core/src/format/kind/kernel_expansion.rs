//! Model kind 2, kernel expansion: `score(x) = b + Σ_i a_i·k̃(x', x_i)` over
//! m stored basis rows, with optional test-kernel centring (000 §6.1).
//!
//! Sections: `KERNEL` (the kernel, basis storage, m, parameters, offset),
//! `BASIS_DENSE` or `BASIS_SPARSE`, `COEFFS`, and optionally
//! `KERNEL_CENTRING`. Their layout, the views, the writer spec and the
//! scorer are all here; scoring needs the `kernel` cargo feature.

use super::Kind;
use crate::format::array::{le_f64, le_u32};
use crate::format::centring::FeatureCentring;
use crate::format::header::{all_finite, bytes_for, expect_len, finite, scalar_then_elems, Header, Sections};
use crate::format::input::Centred;
#[cfg(feature = "kernel")]
use crate::format::input::Input;
use crate::format::section_id as sid;
use crate::format::sum::Arith;
#[cfg(feature = "kernel")]
use crate::format::sum::{blocked_sum, elem, Sum};
use crate::format::write::{all_storable, check_dim, storable, Payload, SectionSink, MAX_FIXED};
use crate::format::{Array, ElementType, EmitError, ModelView, ParseError, ScoreError, U32Array, Version};
use crate::kernel::Kernel;
use crate::linalg::rows::sparse_indices_ok;
#[cfg(feature = "kernel")]
use crate::real::Real;

/// The `KERNEL` and `KERNEL_CENTRING` sections (offsets relative to the
/// section); also reachable as `format::field::kernel` and
/// `format::field::kernel_centring`.
pub mod layout {
    /// The `KERNEL` section.
    pub mod kernel {
        use crate::format::field::Field;

        /// Kernel code (`u8`): 1 linear, 2 RBF, 3 polynomial.
        pub const KERNEL: usize = 0;
        /// Basis storage (`u8`): 1 dense, 2 sparse CSR.
        pub const STORAGE: usize = 1;
        /// Polynomial degree (`u8`), 0 for other kernels.
        pub const DEGREE: usize = 2;
        /// Reserved (`u8`), 0.
        pub const RESERVED: usize = 3;
        /// Number of basis rows `m` (`u32`).
        pub const ROWS: Field = 4..8;
        /// `gamma` (`f64`).
        pub const GAMMA: Field = 8..16;
        /// `coef0` (`f64`).
        pub const COEF0: Field = 16..24;
        /// Offset (bias) `b` (`f64`).
        pub const OFFSET: Field = 24..32;
        /// Length of the section.
        pub const LEN: usize = OFFSET.end;

        /// The section as `(name, bytes, type, meaning)`, for `docs/format.md`.
        pub const FIELDS: &[(&str, Field, &str, &str)] = &[
            ("kernel", KERNEL..KERNEL + 1, "u8", "1 linear, 2 RBF, 3 polynomial"),
            ("storage", STORAGE..STORAGE + 1, "u8", "1 dense, 2 sparse CSR"),
            ("degree", DEGREE..DEGREE + 1, "u8", "polynomial degree >= 1; 0 otherwise"),
            ("reserved", RESERVED..RESERVED + 1, "u8", "0"),
            ("rows", ROWS, "u32", "basis rows m >= 1"),
            ("gamma", GAMMA, "f64", "RBF, polynomial: finite, > 0; linear: 0"),
            ("coef0", COEF0, "f64", "polynomial: finite, >= 0; otherwise 0"),
            ("offset", OFFSET, "f64", "bias b"),
        ];
    }

    /// The `KERNEL_CENTRING` section.
    pub mod kernel_centring {
        use crate::format::field::Field;

        /// Grand mean of the training kernel matrix (`f64`).
        pub const GRAND_MEAN: Field = 0..8;
        /// Start of the column means (m elements).
        pub const COL_MEANS: usize = GRAND_MEAN.end;
    }
}

use layout::kernel as kf;

const _: () = assert!(kf::LEN <= MAX_FIXED);

codes! {
    /// Kernel codes of the `KERNEL` section.
    pub(crate) enum KernelCode: u8 {
        /// [`Kernel::Linear`].
        Linear = 1,
        /// [`Kernel::Rbf`].
        Rbf = 2,
        /// [`Kernel::Polynomial`].
        Polynomial = 3,
    }
}

codes! {
    /// Basis storage codes of the `KERNEL` section.
    pub(crate) enum Storage: u8 {
        /// `BASIS_DENSE`.
        Dense = 1,
        /// `BASIS_SPARSE`.
        Sparse = 2,
    }
}

impl Kernel {
    /// The code stored in the model format's `KERNEL` section.
    pub const fn code(&self) -> u8 {
        let code = match self {
            Kernel::Linear => KernelCode::Linear,
            Kernel::Rbf { .. } => KernelCode::Rbf,
            Kernel::Polynomial { .. } => KernelCode::Polynomial,
        };
        code.code()
    }

    /// `(gamma, coef0, degree)` as stored (zeros where unused); shared by
    /// every section that stores a kernel (`KERNEL`, `PAIR_DUAL`).
    pub(crate) const fn raw(&self) -> (f64, f64, u8) {
        match *self {
            Kernel::Linear => (0.0, 0.0, 0),
            Kernel::Rbf { gamma } => (gamma, 0.0, 0),
            Kernel::Polynomial { gamma, coef0, degree } => (gamma, coef0, degree),
        }
    }

    /// Builds a kernel from its stored fields and checks its domain and
    /// that unused fields are zero (so that `raw` gives back the very bits).
    pub(crate) fn from_raw(code: u8, gamma: f64, coef0: f64, degree: u8) -> Result<Self, ParseError> {
        let k = match KernelCode::from_code(code).ok_or(ParseError::BadKernel)? {
            KernelCode::Linear => Kernel::Linear,
            KernelCode::Rbf => Kernel::Rbf { gamma },
            KernelCode::Polynomial => Kernel::Polynomial { gamma, coef0, degree },
        };
        k.check().map_err(|_| ParseError::BadKernel)?;
        let (g, c, dg) = k.raw();
        if g.to_bits() != gamma.to_bits() || c.to_bits() != coef0.to_bits() || dg != degree {
            return Err(ParseError::BadKernel);
        }
        Ok(k)
    }
}

/// Basis rows of a kernel expansion (in the centred feature space if the
/// model has feature centring).
#[derive(Clone, Copy, Debug)]
pub enum Basis<'a> {
    /// m × d values, row-major.
    Dense(&'a [f64]),
    /// Compressed sparse rows.
    Sparse {
        /// m + 1 offsets: 0, non-decreasing, ending at `indices.len()`.
        row_ptr: &'a [u32],
        /// Column indices, `< d` and strictly increasing within a row.
        indices: &'a [u32],
        /// Values, one per index.
        values: &'a [f64],
    },
}

/// Test-kernel centring terms of a model trained on a centred kernel matrix
/// (000 §6.1).
#[derive(Clone, Copy, Debug)]
pub struct KernelCentring<'a> {
    /// Column means of the training kernel matrix, m values.
    pub col_means: &'a [f64],
    /// Mean of all entries of the training kernel matrix.
    pub grand_mean: f64,
}

/// A kernel expansion `score(x) = offset + Σ_i a_i·k̃(x', x_i)`.
#[derive(Clone, Copy, Debug)]
pub struct KernelModel<'a> {
    /// Feature dimension d.
    pub dim: usize,
    /// Kernel and its parameters.
    pub kernel: Kernel,
    /// The m basis rows `x_i`.
    pub basis: Basis<'a>,
    /// Coefficients `a_i`; their number is m.
    pub coeffs: &'a [f64],
    /// Offset (bias).
    pub offset: f64,
    /// Optional feature centring and scaling (applied to the input only).
    pub centring: Option<FeatureCentring<'a>>,
    /// Optional test-kernel centring.
    pub kernel_centring: Option<KernelCentring<'a>>,
}

/// The stored basis rows of a kernel expansion.
#[derive(Clone, Copy, Debug)]
pub enum BasisView<'a> {
    /// m × d elements, row-major.
    Dense(Array<'a>),
    /// Compressed sparse rows.
    Sparse {
        /// m + 1 offsets into `indices`/`values`, starting at 0,
        /// non-decreasing.
        row_ptr: U32Array<'a>,
        /// Column indices, `< d` and strictly increasing within a row.
        indices: U32Array<'a>,
        /// Values, one per index.
        values: Array<'a>,
    },
}

/// Test-kernel centring terms (000 §6.1).
#[derive(Clone, Copy, Debug)]
pub struct KernelCentringView<'a> {
    pub(crate) grand_mean: f64,
    pub(crate) col_means: Array<'a>,
}

impl<'a> KernelCentringView<'a> {
    /// Mean of all entries of the training kernel matrix.
    pub fn grand_mean(&self) -> f64 {
        self.grand_mean
    }

    /// Column means of the training kernel matrix (m elements).
    pub fn col_means(&self) -> Array<'a> {
        self.col_means
    }
}

/// The parameters of a kernel expansion.
#[derive(Clone, Copy, Debug)]
pub struct KernelView<'a> {
    pub(crate) kernel: Kernel,
    pub(crate) offset: f64,
    pub(crate) rows: usize,
    pub(crate) coeffs: Array<'a>,
    pub(crate) basis: BasisView<'a>,
    pub(crate) centring: Option<KernelCentringView<'a>>,
}

impl<'a> KernelView<'a> {
    /// The kernel and its parameters.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Offset (bias) `b`.
    pub fn offset(&self) -> f64 {
        self.offset
    }

    /// Number of basis rows `m`.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Coefficients `a` (m elements).
    pub fn coeffs(&self) -> Array<'a> {
        self.coeffs
    }

    /// The basis rows.
    pub fn basis(&self) -> BasisView<'a> {
        self.basis
    }

    /// Test-kernel centring terms, if the model was trained on a centred
    /// kernel.
    pub fn centring(&self) -> Option<KernelCentringView<'a>> {
        self.centring
    }
}

impl<'a> ModelView<'a> {
    /// The kernel expansion's parameters, if this is one.
    pub fn kernel(&self) -> Option<KernelView<'a>> {
        match self.body {
            super::Body::KernelExpansion(k) => Some(k),
            _ => None,
        }
    }
}

impl<'a> Kind<'a> for KernelView<'a> {
    type Spec = KernelModel<'a>;

    const SINCE: Version = Version { major: 1, minor: 0 };

    const SECTIONS: &'static [u16] =
        &[sid::KERNEL, sid::BASIS_DENSE, sid::BASIS_SPARSE, sid::COEFFS, sid::KERNEL_CENTRING];

    // An RBF kernel maps an infinite distance to 0, so a non-finite input
    // need not make the score non-finite: the input is scanned first.
    const IN_BUILD: bool = cfg!(any(feature = "all-kinds", feature = "kernel"));

    const LAZY_INPUT_CHECK: bool = false;

    fn parse(sections: &Sections<'a>, h: &Header) -> Result<Self, ParseError> {
        let (dim, elem) = (h.dim, h.elem);
        let es = elem.size();
        let d_bytes = bytes_for(dim, es)?;
        let ks = sections.require(sid::KERNEL)?;
        expect_len(ks, kf::LEN, sid::KERNEL)?;
        let kb = |at: usize| ks.get(at).copied().unwrap_or(0);
        if kb(kf::RESERVED) != 0 {
            return Err(ParseError::BadSection { id: sid::KERNEL });
        }
        let rows = usize::try_from(le_u32(ks, kf::ROWS.start).unwrap_or(0)).map_err(|_| ParseError::BadDimensions)?;
        if rows == 0 {
            return Err(ParseError::BadDimensions);
        }
        let gamma = le_f64(ks, kf::GAMMA.start).unwrap_or(f64::NAN);
        let coef0 = le_f64(ks, kf::COEF0.start).unwrap_or(f64::NAN);
        let kernel = Kernel::from_raw(kb(kf::KERNEL), gamma, coef0, kb(kf::DEGREE))?;
        let offset = finite(le_f64(ks, kf::OFFSET.start).unwrap_or(f64::NAN))?;

        let m_bytes = bytes_for(rows, es)?;
        let cs = sections.require(sid::COEFFS)?;
        expect_len(cs, m_bytes, sid::COEFFS)?;
        let coeffs = Array::new(cs, elem);
        all_finite(coeffs)?;

        let basis = match Storage::from_code(kb(kf::STORAGE)) {
            Some(Storage::Dense) => {
                sections.forbid(sid::BASIS_SPARSE)?;
                let bs = sections.require(sid::BASIS_DENSE)?;
                expect_len(bs, bytes_for(rows, d_bytes)?, sid::BASIS_DENSE)?;
                let a = Array::new(bs, elem);
                all_finite(a)?;
                BasisView::Dense(a)
            }
            Some(Storage::Sparse) => {
                sections.forbid(sid::BASIS_DENSE)?;
                let bs = sections.require(sid::BASIS_SPARSE)?;
                check_csr(bs, rows, dim, elem)?
            }
            None => return Err(ParseError::BadSection { id: sid::KERNEL }),
        };

        let centring = match sections.get(sid::KERNEL_CENTRING) {
            None => None,
            Some(sec) => {
                let at = layout::kernel_centring::COL_MEANS;
                let (grand_mean, col_means) = scalar_then_elems(sec, at, m_bytes, elem, sid::KERNEL_CENTRING)?;
                Some(KernelCentringView { grand_mean, col_means })
            }
        };
        Ok(KernelView { kernel, offset, rows, coeffs, basis, centring })
    }

    fn dim(spec: &KernelModel<'a>) -> usize {
        spec.dim
    }

    fn centring(spec: &KernelModel<'a>) -> Option<FeatureCentring<'a>> {
        spec.centring
    }

    fn check(k: &KernelModel<'a>, et: ElementType) -> Result<(), EmitError> {
        check_dim(k.dim)?;
        let m = k.coeffs.len();
        check_dim(m)?;
        k.kernel.check().map_err(|_| EmitError::BadKernel)?;
        storable(k.offset, ElementType::F64)?;
        all_storable(k.coeffs, et)?;
        if let Some(ref c) = k.centring {
            c.check(k.dim, et)?;
        }
        match k.basis {
            Basis::Dense(rows) => {
                if Some(rows.len()) != m.checked_mul(k.dim) {
                    return Err(EmitError::BadDimensions);
                }
                all_storable(rows, et)?;
            }
            Basis::Sparse { row_ptr, indices, values } => {
                if row_ptr.len() != m + 1
                    || indices.len() != values.len()
                    || row_ptr.last().map(|&e| e as usize) != Some(indices.len())
                {
                    return Err(EmitError::BadDimensions);
                }
                if row_ptr.first() != Some(&0) {
                    return Err(EmitError::BadSparseIndex);
                }
                for w in row_ptr.windows(2) {
                    let (s, e) = match *w {
                        [s, e] => (s as usize, e as usize),
                        _ => (0, 0),
                    };
                    let row = indices.get(s..e).ok_or(EmitError::BadSparseIndex)?;
                    if !sparse_indices_ok(row.iter().copied(), k.dim) {
                        return Err(EmitError::BadSparseIndex);
                    }
                }
                all_storable(values, et)?;
            }
        }
        if let Some(ref c) = k.kernel_centring {
            if c.col_means.len() != m {
                return Err(EmitError::BadDimensions);
            }
            storable(c.grand_mean, ElementType::F64)?;
            all_storable(c.col_means, et)?;
        }
        Ok(())
    }

    fn sections(k: &KernelModel<'a>, sink: &mut SectionSink<'_, 'a>) {
        let storage = match k.basis {
            Basis::Dense(_) => Storage::Dense,
            Basis::Sparse { .. } => Storage::Sparse,
        };
        let (gamma, coef0, degree) = k.kernel.raw();
        let mut rec = [0u8; MAX_FIXED];
        let mut put = |at: usize, bytes: &[u8]| {
            if let Some(dst) = at.checked_add(bytes.len()).and_then(|end| rec.get_mut(at..end)) {
                dst.copy_from_slice(bytes);
            }
        };
        put(kf::KERNEL, &[k.kernel.code()]);
        put(kf::STORAGE, &[storage.code()]);
        put(kf::DEGREE, &[degree]);
        put(kf::ROWS.start, &(k.coeffs.len() as u32).to_le_bytes());
        put(kf::GAMMA.start, &gamma.to_le_bytes());
        put(kf::COEF0.start, &coef0.to_le_bytes());
        put(kf::OFFSET.start, &k.offset.to_le_bytes());
        sink.push(sid::KERNEL, Payload::Fixed(rec, kf::LEN));
        match k.basis {
            Basis::Dense(rows) => sink.push(sid::BASIS_DENSE, Payload::Elems(rows)),
            Basis::Sparse { row_ptr, indices, values } => {
                sink.push(sid::BASIS_SPARSE, Payload::Csr(row_ptr, indices, values))
            }
        }
        sink.push(sid::COEFFS, Payload::Elems(k.coeffs));
        if let Some(c) = k.kernel_centring {
            sink.push(sid::KERNEL_CENTRING, Payload::ScalarThen(c.grand_mean, c.col_means));
        }
    }

    /// Without the `kernel` cargo feature, kernel expansions (which parse
    /// and validate as usual) are not scored: [`ScoreError::UnsupportedKind`].
    #[cfg(feature = "kernel")]
    fn eval<R: Arith>(&self, x: Centred<'_, '_>, dim: usize) -> Result<R, ScoreError> {
        Ok(score_kernel::<R>(self, x, dim))
    }

    #[cfg(not(feature = "kernel"))]
    fn eval<R: Arith>(&self, _x: Centred<'_, '_>, _dim: usize) -> Result<R, ScoreError> {
        Err(ScoreError::UnsupportedKind)
    }
}

/// Validates a sparse basis section and splits it.
fn check_csr<'a>(sec: &'a [u8], rows: usize, dim: usize, elem: ElementType) -> Result<BasisView<'a>, ParseError> {
    let id = sid::BASIS_SPARSE;
    let ptr_bytes = rows.checked_add(1).and_then(|r| r.checked_mul(4)).ok_or(ParseError::BadDimensions)?;
    let (ptr, rest) = sec.split_at_checked(ptr_bytes).ok_or(ParseError::BadSection { id })?;
    let row_ptr = U32Array::new(ptr);
    let nnz = row_ptr.get(rows).ok_or(ParseError::BadSection { id })? as usize;
    let idx_bytes = bytes_for(nnz, 4)?;
    let val_bytes = bytes_for(nnz, elem.size())?;
    expect_len(rest, idx_bytes.checked_add(val_bytes).ok_or(ParseError::BadDimensions)?, id)?;
    let (idx, vals) = rest.split_at(idx_bytes);
    let indices = U32Array::new(idx);
    let values = Array::new(vals, elem);
    if row_ptr.get(0) != Some(0) {
        return Err(ParseError::BadSparseIndex);
    }
    let mut start = 0usize;
    for end in row_ptr.iter().skip(1) {
        let end = end as usize;
        if end < start || end > nnz {
            return Err(ParseError::BadSparseIndex);
        }
        if !sparse_indices_ok(indices.slice(start, end - start).iter(), dim) {
            return Err(ParseError::BadSparseIndex);
        }
        start = end;
    }
    all_finite(values)?;
    Ok(BasisView::Sparse { row_ptr, indices, values })
}

/// `(⟨x', b⟩, ‖x' − b‖²)` for one basis row.
#[cfg(feature = "kernel")]
fn row_stats<R: Real>(basis: &BasisView<'_>, i: usize, dim: usize, x: Centred<'_, '_>, xnorm2: R) -> (R, R) {
    match *basis {
        BasisView::Dense(rows) => {
            let row = rows.slice(i.saturating_mul(dim), dim);
            let mut cur = x.cursor();
            let (mut dot, mut dist) = (Sum::<R>::new(), Sum::<R>::new());
            for j in 0..dim {
                let xv: R = cur.at(j);
                let b: R = elem(&row, j);
                dot.add(xv * b);
                dist.add((xv - b) * (xv - b));
            }
            (dot.total(), dist.total())
        }
        BasisView::Sparse { row_ptr, indices, values } => {
            let s = row_ptr.get(i).unwrap_or(0) as usize;
            let e = row_ptr.get(i + 1).unwrap_or(0) as usize;
            let n = e.saturating_sub(s);
            let (ri, rv) = (indices.slice(s, n), values.slice(s, n));
            let (mut dot, mut dist) = (Sum::<R>::new(), Sum::<R>::new());
            match (x.input, x.centring) {
                (Input::Sparse(xi, xv), None) => {
                    // Merge two sorted index lists; the sum runs over their union.
                    let (mut p, mut q) = (0usize, 0usize);
                    loop {
                        let xj = xi.get(p).map(|&j| j as usize);
                        let bj = ri.get(q).map(|j| j as usize);
                        let xval = || R::from_f64(xv.get(p).unwrap_or(0.0));
                        match (xj, bj) {
                            (None, None) => break,
                            (Some(a), Some(b)) if a == b => {
                                let (xa, yb): (R, R) = (xval(), elem(&rv, q));
                                dot.add(xa * yb);
                                dist.add((xa - yb) * (xa - yb));
                                p += 1;
                                q += 1;
                            }
                            (Some(a), b) if b.is_none_or(|b| a < b) => {
                                let xa: R = xval();
                                dist.add(xa * xa);
                                p += 1;
                            }
                            _ => {
                                let yb: R = elem(&rv, q);
                                dist.add(yb * yb);
                                q += 1;
                            }
                        }
                    }
                    (dot.total(), dist.total())
                }
                _ => {
                    // x' is dense here: ‖x' − b‖² = ‖x'‖² + Σ_{j∈row} ((x'_j − b_j)² − x'_j²).
                    let mut cur = x.cursor();
                    dist.add(xnorm2);
                    for (q, j) in ri.iter().enumerate() {
                        let xa: R = cur.at(j as usize);
                        let yb: R = elem(&rv, q);
                        dot.add(xa * yb);
                        dist.add((xa - yb) * (xa - yb) - xa * xa);
                    }
                    (dot.total(), dist.total().max(R::ZERO))
                }
            }
        }
    }
}

/// The kernel value from `⟨x, b⟩` and `‖x − b‖²`, in the arithmetic type
/// (the scorers of kernel expansions and dual pair models).
#[cfg(feature = "kernel")]
#[inline]
pub(crate) fn kernel_value<R: Real>(kernel: &Kernel, dot: R, dist: R) -> R {
    match *kernel {
        Kernel::Linear => dot,
        Kernel::Rbf { gamma } => (-R::from_f64(gamma) * dist).exp(),
        Kernel::Polynomial { gamma, coef0, degree } => {
            crate::kernel::powu(R::from_f64(gamma) * dot + R::from_f64(coef0), u32::from(degree))
        }
    }
}

/// The score of a checked input. Features beyond `dim` (the tail, see
/// `format::input`) are exact for every kernel: the linear and polynomial
/// kernels see them only through `⟨x, x_i⟩`, where the basis rows are 0;
/// the RBF kernel's squared distance to every basis row gains `‖x_tail‖²`.
#[cfg(feature = "kernel")]
fn score_kernel<R: Real>(k: &KernelView<'_>, x: Centred<'_, '_>, dim: usize) -> R {
    let tail2: R = match k.kernel {
        Kernel::Rbf { .. } => x.tail.norm2(),
        Kernel::Linear | Kernel::Polynomial { .. } => R::ZERO,
    };
    let needs_xnorm = matches!(k.basis, BasisView::Sparse { .. })
        && matches!(k.kernel, Kernel::Rbf { .. })
        && !matches!((x.input, x.centring), (Input::Sparse(..), None));
    let xnorm2 = if needs_xnorm {
        let mut cur = x.cursor();
        blocked_sum(dim, |j| {
            let v: R = cur.at(j);
            v * v
        })
    } else {
        R::ZERO
    };
    // With test-kernel centring (000 §6.1) the score is
    //   b + Σ_i a_i·(k_i − k̄ − c_i + g) = b + Σ_i a_i·(k_i − c_i) + (Σ_i a_i)·(g − k̄),
    // grouped so that the large, nearly cancelling terms meet early.
    let (mut s1, mut sk, mut sa) = (Sum::<R>::new(), Sum::<R>::new(), Sum::<R>::new());
    let col_means = k.centring.map(|c| c.col_means);
    for i in 0..k.coeffs.len() {
        let a: R = elem(&k.coeffs, i);
        let (dot, dist) = row_stats::<R>(&k.basis, i, dim, x, xnorm2);
        let kv = kernel_value(&k.kernel, dot, dist + tail2);
        match col_means {
            Some(cm) => {
                s1.add(a * (kv - elem::<R>(&cm, i)));
                sk.add(kv);
                sa.add(a);
            }
            None => s1.add(a * kv),
        }
    }
    let b = R::from_f64(k.offset);
    match k.centring {
        Some(c) => {
            let kbar = sk.total() / R::from_f64(k.rows as f64);
            b + (s1.total() + sa.total() * (R::from_f64(c.grand_mean) - kbar))
        }
        None => b + s1.total(),
    }
}
