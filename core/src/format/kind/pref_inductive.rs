//! Model kind 9, inductive preference GP (since format 1.4): the EP
//! posterior of a probit preference GP (000 §5; 001 eqs. 6–14) over m
//! training items with features, kept in the form that predicts the
//! latent utility of *new* items.
//!
//! Prior `f ~ GP(0, a·k(x, y))` with a kernel `k` of
//! [`Kernel`](crate::kernel::Kernel) and amplitude `a > 0`; EP sites on
//! the differences `e_w − e_l` (001 eq. 6, noise σ) give the site
//! precision matrix `S̃ = Σ_k τ̃_k d_k d_kᵀ` (a weighted Laplacian of the
//! preference graph, singular) and the posterior `N(μ, Σ)` over the
//! training items, `Σ = (K⁻¹ + S̃)⁻¹`. For a new row `x`, with
//! `k_x[i] = a·k(x, x_i)` over the stored basis rows `x_i` (000 §5, R&W
//! eqs. 3.60–3.61):
//!
//! ```text
//! mean(x)    = k_xᵀ·α                      α = K⁻¹·μ
//! cov(x, y)  = a·k(x, y) − k_xᵀ·W·k_y      W = (K + S̃⁻¹)⁻¹ = S̃^½·B⁻¹·S̃^½ = K⁻¹ − K⁻¹·Σ·K⁻¹
//! P(x ≻ y)   = Φ((mean(x) − mean(y)) / √(2σ² + var(x) + var(y) − 2·cov(x, y)))
//! ```
//!
//! (`B = I + S̃^½·K·S̃^½`; the middle form of `W` exists for a singular
//! `S̃`, which is why it, and not `(K + S̃⁻¹)` itself, is stored.) The
//! file stores `W` (symmetric positive semi-definite, lower triangle
//! packed row by row) rather than a factor of `B`: a prediction then costs
//! one kernel row and one packed quadratic form, O(m·d + m²), with no
//! solve and no square root of `S̃` (which is not diagonal for
//! preference sites).
//!
//! Sections: `PREF_KERNEL` (48-byte record: kernel code and degree,
//! m, σ, a, γ, c, count), `PREF_BASIS` (m × d, row-major), `PREF_ALPHA`
//! (m) and `PREF_W` (m(m+1)/2). The header's `dim` is d.
//!
//! Validation at parse time, on top of the format's own: kernel in its
//! domain with unused parameters 0 (as `KERNEL`), reserved 0, m ≥ 1,
//! σ > 0, a > 0, `W_ii ≥ 0` and `|W_ij| ≤ 1.001·√(W_ii·W_jj)`
//! (Cauchy–Schwarz with slack for `f32` rounding; PSD itself is not
//! checked). A predicted variance is clamped at 0 (the subtraction
//! `a·k(x, x) − k_xᵀWk_x` can round below it).

use super::Kind;
use crate::format::array::{le_f64, le_u32, le_u64};
use crate::format::centring::FeatureCentring;
use crate::format::header::{all_finite, bytes_for, expect_len, finite, Header, Sections};
use crate::format::input::Centred;
use crate::format::kind::pref_gp::packed_len;
use crate::format::kind::Model;
use crate::format::section_id as sid;
use crate::format::sum::Arith;
use crate::format::write::{all_storable, check_dim, storable, Payload, SectionSink, MAX_FIXED};
use crate::format::{Array, ElementType, EmitError, ModelView, ParseError, ScoreError, Version};
use crate::kernel::Kernel;
use crate::MatRef;

/// The `PREF_KERNEL` section (offsets relative to the section); also
/// reachable as `format::field::pref_kernel`.
pub mod layout {
    use crate::format::field::Field;

    /// Kernel code (`u8`), as in `KERNEL`: 1 linear, 2 RBF, 3 polynomial.
    pub const KERNEL: usize = 0;
    /// Polynomial degree (`u8`), 0 for other kernels.
    pub const DEGREE: usize = 1;
    /// Reserved (`u16`), 0.
    pub const RESERVED: Field = 2..4;
    /// Basis rows m (`u32`), ≥ 1.
    pub const ROWS: Field = 4..8;
    /// Probit noise σ (`f64`), finite, > 0.
    pub const SIGMA: Field = 8..16;
    /// Kernel amplitude a (`f64`), finite, > 0: the prior covariance is
    /// `a·k(x, y)`.
    pub const SCALE: Field = 16..24;
    /// Kernel γ (`f64`), as in `KERNEL`.
    pub const GAMMA: Field = 24..32;
    /// Kernel c (`f64`), as in `KERNEL`.
    pub const COEF0: Field = 32..40;
    /// Preferences the fit used (`u64`).
    pub const COUNT: Field = 40..48;
    /// Length of the section.
    pub const LEN: usize = COUNT.end;

    /// The section as `(name, bytes, type, meaning)`, for `docs/format.md`.
    pub const FIELDS: &[(&str, Field, &str, &str)] = &[
        ("kernel", KERNEL..KERNEL + 1, "u8", "1 linear, 2 RBF, 3 polynomial"),
        ("degree", DEGREE..DEGREE + 1, "u8", "polynomial degree >= 1; 0 otherwise"),
        ("reserved", RESERVED, "u16", "0"),
        ("rows", ROWS, "u32", "basis rows m >= 1"),
        ("sigma", SIGMA, "f64", "probit noise σ, finite, > 0"),
        ("scale", SCALE, "f64", "kernel amplitude a, finite, > 0"),
        ("gamma", GAMMA, "f64", "as `gamma` of KERNEL"),
        ("coef0", COEF0, "f64", "as `coef0` of KERNEL"),
        ("count", COUNT, "u64", "preferences the fit used"),
    ];
}

use layout as lf;

const _: () = assert!(lf::LEN <= MAX_FIXED);

/// Slack of the Cauchy–Schwarz check on `W`.
const CS_SLACK: f64 = 1e-3;

/// An inductive preference GP, to write (kind 9).
#[derive(Clone, Copy, Debug)]
pub struct PrefInductiveModel<'a> {
    /// The kernel k.
    pub kernel: Kernel,
    /// Kernel amplitude a > 0 (prior covariance `a·k`).
    pub scale: f64,
    /// Probit noise σ > 0.
    pub sigma: f64,
    /// Preferences the fit used.
    pub count: u64,
    /// Feature dimension d (the header's `dim`).
    pub dim: usize,
    /// Basis rows (the training items), `m × d`, row-major.
    pub basis: &'a [f64],
    /// `α = K⁻¹·μ` (m), `K = a·k` over the basis.
    pub alpha: &'a [f64],
    /// `W = (K + S̃⁻¹)⁻¹`, lower triangle packed row by row (m(m+1)/2).
    pub w_packed: &'a [f64],
}

impl PrefInductiveModel<'_> {
    /// Number of basis rows m (0 if `dim` is 0).
    pub fn rows(&self) -> usize {
        self.basis.len().checked_div(self.dim).unwrap_or(0)
    }
}

/// The parameters of a parsed inductive preference GP (kind 9).
#[derive(Clone, Copy, Debug)]
pub struct PrefInductiveView<'a> {
    pub(crate) kernel: Kernel,
    pub(crate) scale: f64,
    pub(crate) sigma: f64,
    pub(crate) count: u64,
    pub(crate) rows: usize,
    pub(crate) dim: usize,
    pub(crate) basis: Array<'a>,
    pub(crate) alpha: Array<'a>,
    pub(crate) w: Array<'a>,
}

impl<'a> PrefInductiveView<'a> {
    /// The kernel k.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }
    /// Kernel amplitude a.
    pub fn scale(&self) -> f64 {
        self.scale
    }
    /// Probit noise σ.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }
    /// Preferences the fit used.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Basis rows m.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Basis rows (m × d, row-major).
    pub fn basis(&self) -> Array<'a> {
        self.basis
    }
    /// `α` (m).
    pub fn alpha(&self) -> Array<'a> {
        self.alpha
    }
    /// `W`, packed lower triangle (m(m+1)/2).
    pub fn w_packed(&self) -> Array<'a> {
        self.w
    }

    /// Elements of workspace [`predict`](Self::predict) needs: m.
    pub fn predict_workspace_len(&self) -> usize {
        self.rows
    }

    /// Elements of workspace [`prob`](Self::prob) needs: 2m.
    pub fn prob_workspace_len(&self) -> usize {
        2 * self.rows
    }

    /// `k_x` into `kx` (the first m entries; `x` of length d, not
    /// checked) and returns `a·k(x, x)`: the operands of
    /// [`predict`](Self::predict) and [`prob`](Self::prob), for a caller
    /// that scores many rows against the basis at once.
    pub fn kernel_row(&self, x: &[f64], kx: &mut [f64]) -> f64 {
        let d = self.dim;
        let xx: f64 = x.iter().map(|v| v * v).sum();
        for (i, out) in kx.iter_mut().enumerate() {
            let row = self.basis.slice(i * d, d);
            let (mut dot, mut yy) = (0.0, 0.0);
            for (j, y) in row.iter().enumerate() {
                dot += x[j] * y;
                yy += y * y;
            }
            *out = self.scale * self.kernel.from_dot(dot, xx, yy);
        }
        self.scale * self.kernel.from_dot(xx, xx, xx)
    }

    /// `k_aᵀ·W·k_b` over the packed `W`.
    fn quad(&self, ka: &[f64], kb: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..self.rows {
            let row = packed_len(i);
            for j in 0..i {
                let w = self.w.at(row + j);
                s += w * (ka[i] * kb[j] + ka[j] * kb[i]);
            }
            s += self.w.at(row + i) * ka[i] * kb[i];
        }
        s
    }

    fn check_input(&self, x: &[f64]) -> Result<(), ScoreError> {
        if x.len() != self.dim {
            return Err(ScoreError::DimensionMismatch { expected: self.dim, got: x.len() });
        }
        if !x.iter().all(|v| v.is_finite()) {
            return Err(ScoreError::NonFiniteInput);
        }
        Ok(())
    }

    /// The posterior mean and variance of the latent utility of a new row
    /// `x` (d values): `(k_xᵀα, max(0, a·k(x, x) − k_xᵀWk_x))`. `work`
    /// needs [`predict_workspace_len`](Self::predict_workspace_len)
    /// elements. O(m·d + m²).
    ///
    /// # Errors
    /// [`ScoreError::DimensionMismatch`] (wrong `x` length, or `work` too
    /// short: `expected` is the length needed), [`ScoreError::NonFiniteInput`],
    /// [`ScoreError::ScoreOverflow`] (a non-finite result).
    pub fn predict(&self, x: &[f64], work: &mut [f64]) -> Result<(f64, f64), ScoreError> {
        self.check_input(x)?;
        let m = self.rows;
        let got = work.len();
        let kx = work.get_mut(..m).ok_or(ScoreError::DimensionMismatch { expected: m, got })?;
        let kxx = self.kernel_row(x, kx);
        let mean: f64 = kx.iter().enumerate().map(|(i, k)| k * self.alpha.at(i)).sum();
        let var = (kxx - self.quad(kx, kx)).max(0.0);
        if mean.is_finite() && var.is_finite() {
            Ok((mean, var))
        } else {
            Err(ScoreError::ScoreOverflow)
        }
    }

    /// `P(x ≻ y)` and the variance `v` of `f(x) − f(y)` (001 eqs. 13–14):
    /// `Φ((mean(x) − mean(y))/√(2σ² + v))`,
    /// `v = max(0, var(x) + var(y) − 2·cov(x, y))`. `work` needs
    /// [`prob_workspace_len`](Self::prob_workspace_len) elements.
    ///
    /// # Errors
    /// As [`predict`](Self::predict).
    pub fn prob(&self, x: &[f64], y: &[f64], work: &mut [f64]) -> Result<(f64, f64), ScoreError> {
        self.check_input(x)?;
        self.check_input(y)?;
        let m = self.rows;
        let got = work.len();
        let (kx, rest) =
            work.get_mut(..2 * m).ok_or(ScoreError::DimensionMismatch { expected: 2 * m, got })?.split_at_mut(m);
        let ky = rest;
        let kxx = self.kernel_row(x, kx);
        let kyy = self.kernel_row(y, ky);
        let xy: f64 = x.iter().zip(y).map(|(a, b)| a * b).sum();
        let yy: f64 = y.iter().map(|v| v * v).sum();
        let xx: f64 = x.iter().map(|v| v * v).sum();
        let kxy = self.scale * self.kernel.from_dot(xy, xx, yy);
        let mx: f64 = kx.iter().enumerate().map(|(i, k)| k * self.alpha.at(i)).sum();
        let my: f64 = ky.iter().enumerate().map(|(i, k)| k * self.alpha.at(i)).sum();
        // v = (a·k(x,x) + a·k(y,y) − 2a·k(x,y)) − (k_x − k_y)ᵀW(k_x − k_y).
        let prior = kxx + kyy - 2.0 * kxy;
        for (a, b) in kx.iter_mut().zip(ky.iter()) {
            *a -= b;
        }
        let v = (prior - self.quad(kx, kx)).max(0.0);
        let p = crate::special::probit_prob(mx - my, 2.0 * self.sigma * self.sigma + v);
        if p.is_finite() && v.is_finite() {
            Ok((p, v))
        } else {
            Err(ScoreError::ScoreOverflow)
        }
    }
}

impl<'a> ModelView<'a> {
    /// The inductive preference GP (kind 9), if this is one.
    pub fn pref_inductive(&self) -> Option<PrefInductiveView<'a>> {
        match self.body {
            super::Body::PrefInductive(p) => Some(p),
            _ => None,
        }
    }
}

/// Whether the packed symmetric `W` has a non-negative diagonal and
/// satisfies Cauchy–Schwarz with slack (on squares, as for kind 8).
fn psd_necessary(m: usize, w: impl Fn(usize) -> f64) -> bool {
    let diag = |i: usize| w(packed_len(i + 1) - 1);
    let k = (1.0 + CS_SLACK) * (1.0 + CS_SLACK);
    (0..m).all(|i| {
        let d_i = diag(i);
        d_i >= 0.0
            && (0..i).all(|j| {
                let c = w(packed_len(i) + j);
                c * c <= k * d_i * diag(j)
            })
    })
}

fn positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

impl<'a> Kind<'a> for PrefInductiveView<'a> {
    type Spec = PrefInductiveModel<'a>;

    const SINCE: Version = Version { major: 1, minor: 4 };

    const SECTIONS: &'static [u16] = &[sid::PREF_KERNEL, sid::PREF_BASIS, sid::PREF_ALPHA, sid::PREF_W];

    // Not a row scorer: a device build parses it only with every kind on.
    const IN_BUILD: bool = cfg!(feature = "all-kinds");

    const LAZY_INPUT_CHECK: bool = false;

    fn parse(sections: &Sections<'a>, h: &Header) -> Result<Self, ParseError> {
        let id = sid::PREF_KERNEL;
        sections.forbid(sid::FEATURE_CENTRING)?;
        let rec = sections.require(id)?;
        expect_len(rec, lf::LEN, id)?;
        let byte = |at: usize| rec.get(at).copied().unwrap_or(0);
        let f64_at = |f: &crate::format::field::Field| le_f64(rec, f.start).unwrap_or(f64::NAN);
        let bad = ParseError::BadSection { id };
        if rec.get(lf::RESERVED).is_none_or(|r| r.iter().any(|&b| b != 0)) {
            return Err(bad);
        }
        let kernel = Kernel::from_raw(byte(lf::KERNEL), f64_at(&lf::GAMMA), f64_at(&lf::COEF0), byte(lf::DEGREE))?;
        let rows = match usize::try_from(le_u32(rec, lf::ROWS.start).unwrap_or(0)) {
            Ok(m) if m > 0 => m,
            _ => return Err(ParseError::BadDimensions),
        };
        let sigma = finite(f64_at(&lf::SIGMA))?;
        let scale = finite(f64_at(&lf::SCALE))?;
        if !positive(sigma) || !positive(scale) {
            return Err(bad);
        }
        let count = le_u64(rec, lf::COUNT.start).unwrap_or(0);
        let (dim, es) = (h.dim, h.elem.size());
        let array = |sid: u16, count: usize| -> Result<Array<'a>, ParseError> {
            let sec = sections.require(sid)?;
            expect_len(sec, bytes_for(count, es)?, sid)?;
            let a = Array::new(sec, h.elem);
            all_finite(a)?;
            Ok(a)
        };
        let basis = array(sid::PREF_BASIS, rows.checked_mul(dim).ok_or(ParseError::BadDimensions)?)?;
        let alpha = array(sid::PREF_ALPHA, rows)?;
        let w_count = rows.checked_add(1).and_then(|k| rows.checked_mul(k)).ok_or(ParseError::BadDimensions)? / 2;
        let w = array(sid::PREF_W, w_count)?;
        if !psd_necessary(rows, |i| w.at(i)) {
            return Err(ParseError::BadSection { id: sid::PREF_W });
        }
        Ok(PrefInductiveView { kernel, scale, sigma, count, rows, dim, basis, alpha, w })
    }

    fn dim(spec: &PrefInductiveModel<'a>) -> usize {
        spec.dim
    }

    fn centring(_: &PrefInductiveModel<'a>) -> Option<FeatureCentring<'a>> {
        None
    }

    fn check(p: &PrefInductiveModel<'a>, et: ElementType) -> Result<(), EmitError> {
        check_dim(p.dim)?;
        let m = p.rows();
        check_dim(m)?;
        if m.checked_mul(p.dim) != Some(p.basis.len()) || p.alpha.len() != m || p.w_packed.len() != packed_len(m) {
            return Err(EmitError::BadDimensions);
        }
        p.kernel.check().map_err(|_| EmitError::BadKernel)?;
        storable(p.sigma, ElementType::F64)?;
        storable(p.scale, ElementType::F64)?;
        for v in [p.basis, p.alpha, p.w_packed] {
            all_storable(v, et)?;
        }
        let stored = |x: f64| match et {
            ElementType::F32 => x as f32 as f64,
            ElementType::F64 => x,
        };
        if !positive(p.sigma) || !positive(p.scale) || !psd_necessary(m, |i| stored(p.w_packed[i])) {
            return Err(EmitError::BadState);
        }
        Ok(())
    }

    fn sections(p: &PrefInductiveModel<'a>, sink: &mut SectionSink<'_, 'a>) {
        let (gamma, coef0, degree) = p.kernel.raw();
        let mut rec = [0u8; MAX_FIXED];
        let mut put = |at: usize, bytes: &[u8]| {
            if let Some(dst) = at.checked_add(bytes.len()).and_then(|end| rec.get_mut(at..end)) {
                dst.copy_from_slice(bytes);
            }
        };
        put(lf::KERNEL, &[p.kernel.code()]);
        put(lf::DEGREE, &[degree]);
        put(lf::ROWS.start, &(p.rows() as u32).to_le_bytes());
        put(lf::SIGMA.start, &p.sigma.to_le_bytes());
        put(lf::SCALE.start, &p.scale.to_le_bytes());
        put(lf::GAMMA.start, &gamma.to_le_bytes());
        put(lf::COEF0.start, &coef0.to_le_bytes());
        put(lf::COUNT.start, &p.count.to_le_bytes());
        sink.push(sid::PREF_KERNEL, Payload::Fixed(rec, lf::LEN));
        sink.push(sid::PREF_BASIS, Payload::Elems(p.basis));
        sink.push(sid::PREF_ALPHA, Payload::Elems(p.alpha));
        sink.push(sid::PREF_W, Payload::Elems(p.w_packed));
    }

    /// Predictions go through [`PrefInductiveView::predict`] and
    /// [`PrefInductiveView::prob`], which also give the variance.
    fn eval<R: Arith>(&self, _x: Centred<'_, '_>, _dim: usize) -> Result<R, ScoreError> {
        Err(ScoreError::KindMismatch)
    }
}

/// A kind-9 model from a host fit: `fit` holds every field but
/// `w_packed` (pass `&[]` there), which is packed row by row into `buf`
/// ([`packed_len(m)`](packed_len) elements) from `W = (K + S̃⁻¹)⁻¹`
/// (m × m, any layout; only its lower triangle is read). Wrap the result
/// in a [`ModelSpec`](crate::format::ModelSpec), whose `check` validates
/// the rest.
///
/// # Errors
/// [`EmitError::BadDimensions`] if the sizes disagree,
/// [`EmitError::BufferTooSmall`] if `buf` is short.
pub fn pref_inductive_model<'a>(
    fit: PrefInductiveModel<'a>,
    w: MatRef<'_, f64>,
    buf: &'a mut [f64],
) -> Result<Model<'a>, EmitError> {
    let (basis, dim, alpha) = (fit.basis, fit.dim, fit.alpha);
    let m = alpha.len();
    if m == 0 || dim == 0 || basis.len() != m.saturating_mul(dim) || w.nrows() != m || w.ncols() != m {
        return Err(EmitError::BadDimensions);
    }
    let needed = packed_len(m);
    let got = buf.len();
    let buf = buf.get_mut(..needed).ok_or(EmitError::BufferTooSmall { needed, got })?;
    for i in 0..m {
        for j in 0..=i {
            buf[packed_len(i) + j] = w.get(i, j).unwrap_or(f64::NAN);
        }
    }
    Ok(Model::PrefInductive(PrefInductiveModel { w_packed: buf, ..fit }))
}
