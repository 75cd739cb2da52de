//! Model kind 8, preference GP over a fixed item set (since format 1.4):
//! the Gaussian posterior `N(μ, Σ)` of the latent utilities `f` of N items
//! under the probit preference likelihood of 001 eq. 6 (000 §5),
//!
//! ```text
//! P(w ≻ l | f) = Φ((f_w − f_l) / (√2·σ)),
//! ```
//!
//! as an EP fit on the host or ADF updates on a device leave it
//! ([`crate::learn::pref::device`]). The header's `dim` is N.
//!
//! One `PREF_GP` section: a 24-byte record (σ, the number of preferences
//! absorbed, a reserved word), then `μ` (N elements) and `Σ`, lower
//! triangle packed row by row (`Σ[i][j]`, `j ≤ i`, at `i(i+1)/2 + j`;
//! N(N+1)/2 elements). An optional `PREF_ITEM_NAMES` section holds one
//! UTF-8 name per item, each ended by `\n`, in item order.
//!
//! Why the covariance itself and not a Cholesky factor: everything a
//! device asks of this model reads `Σ` entries directly. `P(i ≻ j)` needs
//! `v_ij = Σ_ii + Σ_jj − 2Σ_ij` (O(1) from `Σ`, O(N) from a factor), the
//! next pair to ask needs `v_ij` for all pairs (O(N²) from `Σ`, O(N³) from
//! a factor), and one ADF site update is the rank-one *downdate*
//! `Σ ← Σ − β·s·sᵀ` with `s = Σ·(e_w − e_l)` (O(N²) on `Σ`; on a factor a
//! hyperbolic downdate, which can break down).
//!
//! Validation at parse time, on top of the format's own (checksum,
//! lengths, finiteness): σ > 0, the reserved word 0, every `Σ_ii > 0`, and
//! `|Σ_ij| ≤ 1.001·√(Σ_ii·Σ_jj)` (Cauchy–Schwarz, which every covariance
//! satisfies; the 0.1 % slack absorbs `f32` rounding; it keeps every
//! difference variance `v_ij` above `−0.002·max(Σ_ii, Σ_jj)`, and readers
//! clamp `v_ij` at 0). That `Σ` is positive semi-definite is not checked
//! (it costs a Cholesky factorisation, O(N³)). A `PREF_ITEM_NAMES` section
//! must hold exactly N lines, each ended by `\n`.

use super::Kind;
use crate::format::array::{le_f64, le_u64};
use crate::format::centring::FeatureCentring;
use crate::format::header::{all_finite, bytes_for, expect_len, finite, Header, Sections};
use crate::format::input::Centred;
use crate::format::kind::Model;
use crate::format::section_id as sid;
use crate::format::sum::Arith;
use crate::format::write::{check_dim, storable, Payload, SectionSink, Values, MAX_FIXED};
use crate::format::{Array, ElementType, EmitError, ModelView, ParseError, ScoreError, Version};
use crate::MatRef;

/// The `PREF_GP` section's record (offsets relative to the section); also
/// reachable as `format::field::pref_gp`.
pub mod layout {
    use crate::format::field::Field;

    /// Noise σ of the probit likelihood (`f64`), finite and > 0.
    pub const SIGMA: Field = 0..8;
    /// Preferences absorbed so far, host and device (`u64`).
    pub const COUNT: Field = 8..16;
    /// Reserved (`u64`), 0.
    pub const RESERVED: Field = 16..24;
    /// Length of the record; `μ` (N) and packed `Σ` (N(N+1)/2) follow.
    pub const LEN: usize = RESERVED.end;

    /// The record as `(name, bytes, type, meaning)`, for `docs/format.md`.
    pub const FIELDS: &[(&str, Field, &str, &str)] = &[
        ("sigma", SIGMA, "f64", "probit noise σ, finite, > 0"),
        ("count", COUNT, "u64", "preferences absorbed (host fit and device updates)"),
        ("reserved", RESERVED, "u64", "0"),
    ];
}

const _: () = assert!(layout::LEN <= MAX_FIXED);

/// Number of entries of a packed lower triangle of order n.
pub const fn packed_len(n: usize) -> usize {
    n * (n + 1) / 2
}

/// Slack of the Cauchy–Schwarz check `|Σ_ij| ≤ (1 + slack)·√(Σ_ii·Σ_jj)`.
const CS_SLACK: f64 = 1e-3;

/// A preference-GP posterior over N items, to write (kind 8).
#[derive(Clone, Copy, Debug)]
pub struct PrefGpModel<'a> {
    /// Probit noise σ, finite and > 0.
    pub sigma: f64,
    /// Preferences absorbed so far.
    pub count: u64,
    /// Posterior mean `μ` (N values; their number is N, the header's `dim`).
    pub mean: Values<'a>,
    /// Posterior covariance `Σ`, lower triangle packed row by row
    /// (N(N+1)/2 values).
    pub cov_packed: Values<'a>,
    /// Item names, one per item, each ended by `\n` (written as the
    /// optional `PREF_ITEM_NAMES` section); `""` for none.
    pub item_names: &'a str,
}

/// The parameters of a parsed preference-GP posterior (kind 8).
#[derive(Clone, Copy, Debug)]
pub struct PrefGpView<'a> {
    pub(crate) sigma: f64,
    pub(crate) count: u64,
    pub(crate) n: usize,
    pub(crate) mean: Array<'a>,
    pub(crate) cov: Array<'a>,
    pub(crate) names: &'a str,
}

impl<'a> PrefGpView<'a> {
    /// Probit noise σ.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }
    /// Preferences absorbed so far.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Number of items N.
    pub fn items(&self) -> usize {
        self.n
    }
    /// Posterior mean `μ` (N).
    pub fn mean(&self) -> Array<'a> {
        self.mean
    }
    /// Posterior covariance, packed lower triangle (N(N+1)/2).
    pub fn cov_packed(&self) -> Array<'a> {
        self.cov
    }
    /// `Σ[i][j]` (either triangle); NaN if out of range.
    pub fn cov(&self, i: usize, j: usize) -> f64 {
        let (i, j) = if j > i { (j, i) } else { (i, j) };
        if i >= self.n {
            return f64::NAN;
        }
        self.cov.at(packed_len(i) + j)
    }
    /// The item names text (N lines), `""` if the file has none.
    pub fn item_names(&self) -> &'a str {
        self.names
    }
    /// The name of item `i`, if the file has names.
    pub fn item_name(&self, i: usize) -> Option<&'a str> {
        self.names.lines().nth(i)
    }
}

impl<'a> ModelView<'a> {
    /// The preference-GP posterior (kind 8), if this is one.
    pub fn pref_gp(&self) -> Option<PrefGpView<'a>> {
        match self.body {
            super::Body::PrefGp(p) => Some(p),
            _ => None,
        }
    }
}

/// Whether `Σ` (accessed as `cov(packed index)`) has a positive diagonal
/// and satisfies Cauchy–Schwarz with the slack of the module doc, checked
/// on squares (`Σ_ij² ≤ (1 + slack)²·Σ_ii·Σ_jj`): no square root, which a
/// device without a double-precision FPU would do in software N²/2 times.
fn covariance_ok(n: usize, cov: impl Fn(usize) -> f64) -> bool {
    let diag = |i: usize| cov(packed_len(i + 1) - 1);
    let k = (1.0 + CS_SLACK) * (1.0 + CS_SLACK);
    (0..n).all(|i| {
        let d_i = diag(i);
        d_i > 0.0
            && (0..i).all(|j| {
                let c = cov(packed_len(i) + j);
                c * c <= k * d_i * diag(j)
            })
    })
}

/// Whether `names` is exactly `n` lines, each ended by `\n`.
pub(crate) fn names_ok(names: &str, n: usize) -> bool {
    names.ends_with('\n') && names.bytes().filter(|&b| b == b'\n').count() == n
}

/// The optional `PREF_ITEM_NAMES` section of a file over `n` items (kinds
/// 8 and 10): `""` without one.
///
/// # Errors
/// `BadSection` unless it is UTF-8 of exactly `n` `\n`-ended lines.
pub(crate) fn parse_names<'a>(sections: &Sections<'a>, n: usize) -> Result<&'a str, ParseError> {
    match sections.get(sid::PREF_ITEM_NAMES) {
        None => Ok(""),
        Some(b) => {
            let bad = ParseError::BadSection { id: sid::PREF_ITEM_NAMES };
            let s = core::str::from_utf8(b).map_err(|_| bad)?;
            if !names_ok(s, n) {
                return Err(bad);
            }
            Ok(s)
        }
    }
}

impl<'a> Kind<'a> for PrefGpView<'a> {
    type Spec = PrefGpModel<'a>;

    const SINCE: Version = Version { major: 1, minor: 4 };

    const SECTIONS: &'static [u16] = &[sid::PREF_GP, sid::PREF_ITEM_NAMES];

    // Not a row scorer: a device build parses it only with every kind on.
    const IN_BUILD: bool = cfg!(feature = "all-kinds");

    const LAZY_INPUT_CHECK: bool = false;

    fn parse(sections: &Sections<'a>, h: &Header) -> Result<Self, ParseError> {
        let id = sid::PREF_GP;
        sections.forbid(sid::FEATURE_CENTRING)?;
        let sec = sections.require(id)?;
        let n = h.dim;
        let es = h.elem.size();
        let mean_bytes = bytes_for(n, es)?;
        let cov_count = n.checked_add(1).and_then(|k| n.checked_mul(k)).ok_or(ParseError::BadDimensions)? / 2;
        let cov_bytes = bytes_for(cov_count, es)?;
        let len = mean_bytes
            .checked_add(cov_bytes)
            .and_then(|x| x.checked_add(layout::LEN))
            .ok_or(ParseError::BadDimensions)?;
        expect_len(sec, len, id)?;
        let sigma = finite(le_f64(sec, layout::SIGMA.start).unwrap_or(f64::NAN))?;
        let count = le_u64(sec, layout::COUNT.start).unwrap_or(0);
        if !(sigma > 0.0) || le_u64(sec, layout::RESERVED.start) != Some(0) {
            return Err(ParseError::BadSection { id });
        }
        let arr = |at: usize, len: usize| Array::new(sec.get(at..at + len).unwrap_or(&[]), h.elem);
        let mean = arr(layout::LEN, mean_bytes);
        let cov = arr(layout::LEN + mean_bytes, cov_bytes);
        all_finite(mean)?;
        all_finite(cov)?;
        if !covariance_ok(n, |i| cov.at(i)) {
            return Err(ParseError::BadSection { id });
        }
        let names = parse_names(sections, n)?;
        Ok(PrefGpView { sigma, count, n, mean, cov, names })
    }

    fn dim(spec: &PrefGpModel<'a>) -> usize {
        spec.mean.len()
    }

    fn centring(_: &PrefGpModel<'a>) -> Option<FeatureCentring<'a>> {
        None
    }

    fn check(p: &PrefGpModel<'a>, et: ElementType) -> Result<(), EmitError> {
        let n = p.mean.len();
        check_dim(n)?;
        if p.cov_packed.len() != packed_len(n) {
            return Err(EmitError::BadDimensions);
        }
        storable(p.sigma, ElementType::F64)?;
        p.mean.storable(et)?;
        p.cov_packed.storable(et)?;
        // The parser checks the stored (possibly rounded) values.
        let stored = |x: f64| match et {
            ElementType::F32 => x as f32 as f64,
            ElementType::F64 => x,
        };
        if !(p.sigma > 0.0) || !covariance_ok(n, |i| stored(p.cov_packed.at(i))) {
            return Err(EmitError::BadState);
        }
        if !p.item_names.is_empty() && !names_ok(p.item_names, n) {
            return Err(EmitError::BadDimensions);
        }
        Ok(())
    }

    fn sections(p: &PrefGpModel<'a>, sink: &mut SectionSink<'_, 'a>) {
        let mut rec = [0u8; MAX_FIXED];
        let mut put = |at: usize, bytes: &[u8]| {
            if let Some(dst) = at.checked_add(bytes.len()).and_then(|end| rec.get_mut(at..end)) {
                dst.copy_from_slice(bytes);
            }
        };
        put(layout::SIGMA.start, &p.sigma.to_le_bytes());
        put(layout::COUNT.start, &p.count.to_le_bytes());
        let none = Values::F64(&[]);
        sink.push(sid::PREF_GP, Payload::FixedThen(rec, layout::LEN, [p.mean, p.cov_packed, none, none, none]));
        if !p.item_names.is_empty() {
            sink.push(sid::PREF_ITEM_NAMES, Payload::Text(p.item_names.as_bytes()));
        }
    }

    /// A preference GP is asked for `P(i ≻ j)` and rankings of its items
    /// ([`crate::learn::pref::device`]), not for the score of a row.
    fn eval<R: Arith>(&self, _x: Centred<'_, '_>, _dim: usize) -> Result<R, ScoreError> {
        Err(ScoreError::KindMismatch)
    }
}

impl PrefGpModel<'_> {
    /// Bytes of the file of a posterior over `n` items stored as `et`,
    /// without metadata and item names (what `ModelSpec::buffer_len` gives
    /// for it); `None` on overflow.
    pub const fn file_len(n: usize, et: ElementType) -> Option<usize> {
        use crate::format::field;
        let Some(n1) = n.checked_add(1) else { return None };
        let Some(tri) = n.checked_mul(n1) else { return None };
        let Some(count) = (tri / 2).checked_add(n) else { return None };
        let Some(arrays) = count.checked_mul(et.size()) else { return None };
        let head = field::HEADER_LEN + field::section::ENTRY_LEN;
        let start = head.div_ceil(field::SECTION_ALIGN) * field::SECTION_ALIGN;
        match arrays.checked_add(start + layout::LEN + field::CRC_LEN) {
            Some(total) if total <= u32::MAX as usize => Some(total),
            _ => None,
        }
    }
}

/// A kind-8 model from a host fit: posterior mean `mean` (N), posterior
/// covariance `cov` (N × N, any layout; only its lower triangle is read),
/// probit noise `sigma`, the number of preferences absorbed, and item
/// names (`""`, or N lines each ended by `\n`). The lower triangle of
/// `cov` is packed row by row into `buf`, which needs
/// [`packed_len(N)`](packed_len) elements. Wrap the result in a
/// [`ModelSpec`](crate::format::ModelSpec), whose `check` validates the
/// rest (σ > 0, a positive diagonal, Cauchy–Schwarz, finiteness).
///
/// # Errors
/// [`EmitError::BadDimensions`] if `cov` is not N × N or N = 0,
/// [`EmitError::BufferTooSmall`] if `buf` is short.
pub fn pref_gp_model<'a>(
    mean: &'a [f64],
    cov: MatRef<'_, f64>,
    sigma: f64,
    count: u64,
    item_names: &'a str,
    buf: &'a mut [f64],
) -> Result<Model<'a>, EmitError> {
    let n = mean.len();
    if n == 0 || cov.nrows() != n || cov.ncols() != n {
        return Err(EmitError::BadDimensions);
    }
    let needed = packed_len(n);
    let got = buf.len();
    let buf = buf.get_mut(..needed).ok_or(EmitError::BufferTooSmall { needed, got })?;
    for i in 0..n {
        for j in 0..=i {
            buf[packed_len(i) + j] = cov.get(i, j).unwrap_or(f64::NAN);
        }
    }
    Ok(Model::PrefGp(PrefGpModel { sigma, count, mean: Values::F64(mean), cov_packed: Values::F64(buf), item_names }))
}
