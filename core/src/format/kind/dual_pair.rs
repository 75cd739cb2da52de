//! Model kind 6, dual pair model (since format 1.2): a Kronecker
//! conditional ranking model (004 §3–4, [`crate::learn::kron`]) in dual
//! form, for any node kernels:
//!
//! ```text
//! score(u, v) = b + k_uᵀ·A·k_v,   k_u[i] = k_U(x_u, x_{u,i}),  k_v[j] = k_V(x_v, x_{v,j})
//! ```
//!
//! over the stored basis rows `x_{u,i}` (m_u of them) and `x_{v,j}` (m_v),
//! with `A` the `m_u × m_v` coefficient matrix (the learner's `A`, with the
//! training nodes as basis). Symmetric and reciprocal pair kernels (one
//! domain only): `b + ½(g(u, v) ± g(v, u))` with `g(u, v) = k_uᵀ·A·k_v`,
//! exactly (anti)symmetric bit for bit.
//!
//! Sections: `PAIR_DUAL` (64-byte record: pair code, number of domains,
//! the two node kernels in the encoding of the `KERNEL` section — code,
//! degree, gamma, coef0 —, `m_u`, `m_v`, `d_v`, offset), `PAIR_BASIS_U`
//! (m_u × d_u, row-major), `PAIR_BASIS_V` (m_v × d_v, two domains only) and
//! `PAIR_COEFFS` (`A[i, j]` at `i·m_v + j`). The header's `dim` is `d_u`.
//! With one domain the record's second-domain fields repeat the first's
//! bit for bit and `PAIR_BASIS_U` serves both nodes.
//!
//! Validation at parse time, on top of the format's own: codes known,
//! reserved fields 0, kernels in their domain with unused parameters 0
//! (as in `KERNEL`), `m_u, m_v, d_v ≥ 1`, the one-domain repetition,
//! symmetric and reciprocal models over one domain only, a reciprocal
//! model with offset 0. `A` need not be (anti)symmetric: the score formula
//! above uses only its (anti)symmetric part. No feature centring (as for
//! kind 3). Scoring needs the `kernel` cargo feature (otherwise
//! [`ScoreError::UnsupportedKind`]), like kernel expansions.

use super::Kind;
use crate::format::array::{le_f64, le_u32};
use crate::format::centring::FeatureCentring;
use crate::format::header::{all_finite, bytes_for, expect_len, finite, Header, Sections};
use crate::format::input::Centred;
use crate::format::pair::{pair_code, pair_from_code};
use crate::format::section_id as sid;
use crate::format::sum::Arith;
use crate::format::write::{all_storable, check_dim, storable, Payload, SectionSink, MAX_FIXED};
use crate::format::{Array, ElementType, EmitError, ModelView, PairKernel, ParseError, ScoreError, Version};
use crate::kernel::Kernel;

/// The `PAIR_DUAL` section (offsets relative to the section); also
/// reachable as `format::field::pair_dual`.
pub mod layout {
    use crate::format::field::Field;

    /// Pair code (`u8`): 1 Kronecker, 2 symmetric, 3 reciprocal.
    pub const PAIR: usize = 0;
    /// Number of node domains (`u8`): 1 (one basis for both nodes) or 2.
    pub const DOMAINS: usize = 1;
    /// First domain's kernel code (`u8`), as in `KERNEL`.
    pub const KERNEL_U: usize = 2;
    /// First domain's polynomial degree (`u8`), 0 for other kernels.
    pub const DEGREE_U: usize = 3;
    /// Second domain's kernel code (`u8`).
    pub const KERNEL_V: usize = 4;
    /// Second domain's polynomial degree (`u8`).
    pub const DEGREE_V: usize = 5;
    /// Reserved (`u16`), 0.
    pub const RESERVED: Field = 6..8;
    /// Basis rows `m_u` (`u32`).
    pub const ROWS_U: Field = 8..12;
    /// Basis rows `m_v` (`u32`).
    pub const ROWS_V: Field = 12..16;
    /// Second node's feature dimension `d_v` (`u32`).
    pub const DIM_V: Field = 16..20;
    /// Reserved (`u32`), 0.
    pub const RESERVED2: Field = 20..24;
    /// Offset (bias) `b` (`f64`).
    pub const OFFSET: Field = 24..32;
    /// First domain's `gamma` (`f64`).
    pub const GAMMA_U: Field = 32..40;
    /// First domain's `coef0` (`f64`).
    pub const COEF0_U: Field = 40..48;
    /// Second domain's `gamma` (`f64`).
    pub const GAMMA_V: Field = 48..56;
    /// Second domain's `coef0` (`f64`).
    pub const COEF0_V: Field = 56..64;
    /// Length of the section.
    pub const LEN: usize = COEF0_V.end;

    /// The section as `(name, bytes, type, meaning)`, for `docs/format.md`.
    pub const FIELDS: &[(&str, Field, &str, &str)] = &[
        ("pair", PAIR..PAIR + 1, "u8", "1 Kronecker, 2 symmetric, 3 reciprocal"),
        ("domains", DOMAINS..DOMAINS + 1, "u8", "1 (one basis for both nodes) or 2; 1 unless Kronecker"),
        ("kernel_u", KERNEL_U..KERNEL_U + 1, "u8", "first node kernel: 1 linear, 2 RBF, 3 polynomial"),
        ("degree_u", DEGREE_U..DEGREE_U + 1, "u8", "polynomial degree >= 1; 0 otherwise"),
        ("kernel_v", KERNEL_V..KERNEL_V + 1, "u8", "second node kernel"),
        ("degree_v", DEGREE_V..DEGREE_V + 1, "u8", "as degree_u"),
        ("reserved", RESERVED, "u16", "0"),
        ("rows_u", ROWS_U, "u32", "basis rows m_u >= 1"),
        ("rows_v", ROWS_V, "u32", "basis rows m_v >= 1"),
        ("dim_v", DIM_V, "u32", "d_v >= 1"),
        ("reserved2", RESERVED2, "u32", "0"),
        ("offset", OFFSET, "f64", "bias b; 0 if reciprocal"),
        ("gamma_u", GAMMA_U, "f64", "as `gamma` of KERNEL"),
        ("coef0_u", COEF0_U, "f64", "as `coef0` of KERNEL"),
        ("gamma_v", GAMMA_V, "f64", "as `gamma` of KERNEL"),
        ("coef0_v", COEF0_V, "f64", "as `coef0` of KERNEL"),
    ];
}

use layout as lf;

const _: () = assert!(lf::LEN <= MAX_FIXED);

codes! {
    /// The `domains` field.
    enum Domains: u8 {
        /// One node set: `PAIR_BASIS_U` serves both nodes.
        One = 1,
        /// Two node sets.
        Two = 2,
    }
}

/// One node domain of a dual pair model: its kernel and basis rows.
#[derive(Clone, Copy, Debug)]
pub struct PairDomain<'a> {
    /// The node kernel.
    pub kernel: Kernel,
    /// Feature dimension d of the domain's nodes.
    pub dim: usize,
    /// Basis rows, `m × d`, row-major (m = `basis.len() / dim`).
    pub basis: &'a [f64],
}

impl PairDomain<'_> {
    /// Number of basis rows (0 if `dim` is 0).
    pub fn rows(&self) -> usize {
        self.basis.len().checked_div(self.dim).unwrap_or(0)
    }

    fn check(&self, et: ElementType) -> Result<(), EmitError> {
        check_dim(self.dim)?;
        check_dim(self.rows())?;
        if self.rows().checked_mul(self.dim) != Some(self.basis.len()) {
            return Err(EmitError::BadDimensions);
        }
        self.kernel.check().map_err(|_| EmitError::BadKernel)?;
        all_storable(self.basis, et)
    }
}

/// A dual pair model `score(u, v) = offset + k_uᵀ·A·k_v`, to write.
#[derive(Clone, Copy, Debug)]
pub struct DualPairModel<'a> {
    /// The pair kernel; symmetric and reciprocal models have one domain.
    pub pair: PairKernel,
    /// The first node's domain (the header's `dim` is its `dim`).
    pub u: PairDomain<'a>,
    /// The second node's domain; `None`: the same as the first (one basis,
    /// one kernel).
    pub v: Option<PairDomain<'a>>,
    /// `A`, `m_u × m_v`, row-major.
    pub coeffs: &'a [f64],
    /// Offset (bias); 0 for a reciprocal model.
    pub offset: f64,
}

/// The parameters of a parsed dual pair model.
#[derive(Clone, Copy, Debug)]
pub struct DualPairView<'a> {
    pub(crate) pair: PairKernel,
    pub(crate) kernel_u: Kernel,
    pub(crate) kernel_v: Kernel,
    pub(crate) rows_u: usize,
    pub(crate) rows_v: usize,
    pub(crate) dim_u: usize,
    pub(crate) dim_v: usize,
    pub(crate) offset: f64,
    pub(crate) basis_u: Array<'a>,
    pub(crate) basis_v: Option<Array<'a>>,
    pub(crate) coeffs: Array<'a>,
}

impl<'a> DualPairView<'a> {
    /// The pair kernel.
    pub fn pair(&self) -> PairKernel {
        self.pair
    }
    /// Whether the model has two node domains (else one basis serves both).
    pub fn two_domains(&self) -> bool {
        self.basis_v.is_some()
    }
    /// The first domain's kernel.
    pub fn kernel_u(&self) -> Kernel {
        self.kernel_u
    }
    /// The second domain's kernel (the first's for one domain).
    pub fn kernel_v(&self) -> Kernel {
        self.kernel_v
    }
    /// `m_u`.
    pub fn rows_u(&self) -> usize {
        self.rows_u
    }
    /// `m_v` (`m_u` for one domain).
    pub fn rows_v(&self) -> usize {
        self.rows_v
    }
    /// `d_u`.
    pub fn dim_u(&self) -> usize {
        self.dim_u
    }
    /// `d_v` (`d_u` for one domain).
    pub fn dim_v(&self) -> usize {
        self.dim_v
    }
    /// Offset (bias) `b`.
    pub fn offset(&self) -> f64 {
        self.offset
    }
    /// The first domain's basis rows (m_u × d_u, row-major).
    pub fn basis_u(&self) -> Array<'a> {
        self.basis_u
    }
    /// The second domain's basis rows (m_v × d_v; the first's for one
    /// domain).
    pub fn basis_v(&self) -> Array<'a> {
        self.basis_v.unwrap_or(self.basis_u)
    }
    /// `A` (m_u × m_v, row-major).
    pub fn coeffs(&self) -> Array<'a> {
        self.coeffs
    }
}

impl<'a> ModelView<'a> {
    /// The dual pair model's parameters, if this is one.
    pub fn dual_pair(&self) -> Option<DualPairView<'a>> {
        match self.body {
            super::Body::DualPair(d) => Some(d),
            _ => None,
        }
    }
}

/// A section of `rows × dim` elements, checked and finite.
fn matrix<'a>(sec: &'a [u8], rows: usize, dim: usize, elem: ElementType, id: u16) -> Result<Array<'a>, ParseError> {
    expect_len(sec, bytes_for(bytes_for(rows, dim)?, elem.size())?, id)?;
    let a = Array::new(sec, elem);
    all_finite(a)?;
    Ok(a)
}

impl<'a> Kind<'a> for DualPairView<'a> {
    type Spec = DualPairModel<'a>;

    const SINCE: Version = Version { major: 1, minor: 2 };

    const SECTIONS: &'static [u16] = &[sid::PAIR_DUAL, sid::PAIR_BASIS_U, sid::PAIR_BASIS_V, sid::PAIR_COEFFS];

    const IN_BUILD: bool = cfg!(feature = "all-kinds");

    const LAZY_INPUT_CHECK: bool = false;

    fn parse(sections: &Sections<'a>, h: &Header) -> Result<Self, ParseError> {
        let id = sid::PAIR_DUAL;
        sections.forbid(sid::FEATURE_CENTRING)?;
        let rec = sections.require(id)?;
        expect_len(rec, lf::LEN, id)?;
        let byte = |at: usize| rec.get(at).copied().unwrap_or(0);
        let u32_at = |f: &crate::format::field::Field| le_u32(rec, f.start).unwrap_or(0);
        let f64_at = |f: &crate::format::field::Field| le_f64(rec, f.start).unwrap_or(f64::NAN);
        let bad = ParseError::BadSection { id };
        let pair = pair_from_code(byte(lf::PAIR)).ok_or(bad)?;
        let domains = Domains::from_code(byte(lf::DOMAINS)).ok_or(bad)?;
        if rec.get(lf::RESERVED).is_none_or(|r| r.iter().any(|&b| b != 0)) || u32_at(&lf::RESERVED2) != 0 {
            return Err(bad);
        }
        let kernel_u =
            Kernel::from_raw(byte(lf::KERNEL_U), f64_at(&lf::GAMMA_U), f64_at(&lf::COEF0_U), byte(lf::DEGREE_U))?;
        let kernel_v =
            Kernel::from_raw(byte(lf::KERNEL_V), f64_at(&lf::GAMMA_V), f64_at(&lf::COEF0_V), byte(lf::DEGREE_V))?;
        let dims = |f: &crate::format::field::Field| match usize::try_from(u32_at(f)) {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(ParseError::BadDimensions),
        };
        let (rows_u, rows_v, dim_v) = (dims(&lf::ROWS_U)?, dims(&lf::ROWS_V)?, dims(&lf::DIM_V)?);
        let dim_u = h.dim;
        let offset = finite(f64_at(&lf::OFFSET))?;
        match domains {
            Domains::One => {
                // The second domain's fields repeat the first's, bit for bit.
                let same = |a: usize, b: usize| byte(a) == byte(b);
                let same_bits = |a: &crate::format::field::Field, b: &crate::format::field::Field| {
                    f64_at(a).to_bits() == f64_at(b).to_bits()
                };
                if !same(lf::KERNEL_U, lf::KERNEL_V)
                    || !same(lf::DEGREE_U, lf::DEGREE_V)
                    || !same_bits(&lf::GAMMA_U, &lf::GAMMA_V)
                    || !same_bits(&lf::COEF0_U, &lf::COEF0_V)
                    || rows_v != rows_u
                    || dim_v != dim_u
                {
                    return Err(bad);
                }
                sections.forbid(sid::PAIR_BASIS_V)?;
            }
            Domains::Two => {
                if pair != PairKernel::Kronecker {
                    return Err(bad);
                }
            }
        }
        if pair == PairKernel::Reciprocal && offset != 0.0 {
            return Err(bad);
        }
        let elem = h.elem;
        let basis_u = matrix(sections.require(sid::PAIR_BASIS_U)?, rows_u, dim_u, elem, sid::PAIR_BASIS_U)?;
        let basis_v = match domains {
            Domains::One => None,
            Domains::Two => Some(matrix(sections.require(sid::PAIR_BASIS_V)?, rows_v, dim_v, elem, sid::PAIR_BASIS_V)?),
        };
        let coeffs = matrix(sections.require(sid::PAIR_COEFFS)?, rows_u, rows_v, elem, sid::PAIR_COEFFS)?;
        Ok(DualPairView { pair, kernel_u, kernel_v, rows_u, rows_v, dim_u, dim_v, offset, basis_u, basis_v, coeffs })
    }

    fn dim(spec: &DualPairModel<'a>) -> usize {
        spec.u.dim
    }

    fn centring(_: &DualPairModel<'a>) -> Option<FeatureCentring<'a>> {
        None
    }

    fn check(d: &DualPairModel<'a>, et: ElementType) -> Result<(), EmitError> {
        d.u.check(et)?;
        let v = d.v.unwrap_or(d.u);
        v.check(et)?;
        if d.u.rows().checked_mul(v.rows()) != Some(d.coeffs.len()) {
            return Err(EmitError::BadDimensions);
        }
        storable(d.offset, ElementType::F64)?;
        all_storable(d.coeffs, et)?;
        if d.pair != PairKernel::Kronecker && d.v.is_some() {
            return Err(EmitError::BadPair);
        }
        if d.pair == PairKernel::Reciprocal && d.offset != 0.0 {
            return Err(EmitError::BadPair);
        }
        Ok(())
    }

    fn sections(d: &DualPairModel<'a>, sink: &mut SectionSink<'_, 'a>) {
        let v = d.v.unwrap_or(d.u);
        let (gu, cu, du) = d.u.kernel.raw();
        let (gv, cv, dv) = v.kernel.raw();
        let mut rec = [0u8; MAX_FIXED];
        let mut put = |at: usize, bytes: &[u8]| {
            if let Some(dst) = at.checked_add(bytes.len()).and_then(|end| rec.get_mut(at..end)) {
                dst.copy_from_slice(bytes);
            }
        };
        let domains = if d.v.is_some() { Domains::Two } else { Domains::One };
        put(lf::PAIR, &[pair_code(d.pair)]);
        put(lf::DOMAINS, &[domains.code()]);
        put(lf::KERNEL_U, &[d.u.kernel.code()]);
        put(lf::DEGREE_U, &[du]);
        put(lf::KERNEL_V, &[v.kernel.code()]);
        put(lf::DEGREE_V, &[dv]);
        put(lf::ROWS_U.start, &(d.u.rows() as u32).to_le_bytes());
        put(lf::ROWS_V.start, &(v.rows() as u32).to_le_bytes());
        put(lf::DIM_V.start, &(v.dim as u32).to_le_bytes());
        put(lf::OFFSET.start, &d.offset.to_le_bytes());
        put(lf::GAMMA_U.start, &gu.to_le_bytes());
        put(lf::COEF0_U.start, &cu.to_le_bytes());
        put(lf::GAMMA_V.start, &gv.to_le_bytes());
        put(lf::COEF0_V.start, &cv.to_le_bytes());
        sink.push(sid::PAIR_DUAL, Payload::Fixed(rec, lf::LEN));
        sink.push(sid::PAIR_BASIS_U, Payload::Elems(d.u.basis));
        if let Some(v) = d.v {
            sink.push(sid::PAIR_BASIS_V, Payload::Elems(v.basis));
        }
        sink.push(sid::PAIR_COEFFS, Payload::Elems(d.coeffs));
    }

    /// Pair models are scored by the `score_pair*` functions.
    fn eval<R: Arith>(&self, _x: Centred<'_, '_>, _dim: usize) -> Result<R, ScoreError> {
        Err(ScoreError::KindMismatch)
    }
}
