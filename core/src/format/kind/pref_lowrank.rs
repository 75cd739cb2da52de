//! Model kind 10, preference GP over a fixed item set in low-rank form
//! (since format 1.5): the Gaussian posterior `N(μ, Σ)` of the latent
//! utilities of N items with
//!
//! ```text
//! Σ = C·Cᵀ + diag(r),   Cov(f_i, f_j) = c_iᵀc_j + δ_ij·r_i,
//! P(w ≻ l) = Φ((μ_w − μ_l) / √(2σ² + ‖c_w − c_l‖² + r_w + r_l)),
//! ```
//!
//! `C` an N × p factor (row `c_i` per item) and `r ≥ 0` per-item
//! variances — what a low-rank fit leaves (the low-rank XPGP of
//! `learn::pref::xpgp_lowrank`: `C = Φ L_B⁻ᵀ` over its `p` features, `r` the
//! attribute kernel's DTC residual, plus the relations' residual constant
//! at the items in no preference). Kind 8 holds the same posterior
//! with `Σ` packed (N(N+1)/2 entries); this kind holds N·(p + 2) values, so
//! a model over 10⁵ items is a few megabytes per feature instead of 20 GB,
//! and every question costs O(p): `P(i ≻ j)` with its variance, the
//! ranking by `μ`, and the next pair to ask by a screened search over all
//! pairs (`v_ij ≤ (√Σ_ii + √Σ_jj)²`). It is not updated on a device (an
//! ADF update of a factor would be a hyperbolic downdate, see kind 8).
//! The header's `dim` is N.
//!
//! One `PREF_LOWRANK` section: a 32-byte record (σ, the number of
//! preferences absorbed, the rank p, a reserved word), then `μ` (N
//! elements), `r` (N) and `C` (N × p, row-major: `c_i` at `i·p`). An
//! optional `PREF_ITEM_NAMES` section as kind 8's.
//!
//! Validation at parse time, on top of the format's own (checksum,
//! lengths, finiteness): σ > 0, 1 ≤ p, the reserved word 0, every
//! `r_i ≥ 0` (so every `Σ` the file describes is positive semi-definite:
//! `CCᵀ ⪰ 0`), names as kind 8's.

use super::pref_gp::{names_ok, parse_names};
use super::Kind;
use crate::format::array::{le_f64, le_u64};
use crate::format::centring::FeatureCentring;
use crate::format::header::{all_finite, bytes_for, expect_len, finite, Header, Sections};
use crate::format::input::Centred;
use crate::format::section_id as sid;
use crate::format::sum::Arith;
use crate::format::write::{check_dim, storable, Payload, SectionSink, Values, MAX_FIXED};
use crate::format::{Array, ElementType, EmitError, ModelView, ParseError, ScoreError, Version};

/// The `PREF_LOWRANK` section's record (offsets relative to the section);
/// also reachable as `format::field::pref_lowrank`.
pub mod layout {
    use crate::format::field::Field;

    /// Noise σ of the probit likelihood (`f64`), finite and > 0.
    pub const SIGMA: Field = 0..8;
    /// Preferences absorbed (`u64`).
    pub const COUNT: Field = 8..16;
    /// Rank p of the factor `C` (`u64`), ≥ 1.
    pub const RANK: Field = 16..24;
    /// Reserved (`u64`), 0.
    pub const RESERVED: Field = 24..32;
    /// Length of the record; `μ` (N), `r` (N) and `C` (N·p) follow.
    pub const LEN: usize = RESERVED.end;

    /// The record as `(name, bytes, type, meaning)`, for `docs/format.md`.
    pub const FIELDS: &[(&str, Field, &str, &str)] = &[
        ("sigma", SIGMA, "f64", "probit noise σ, finite, > 0"),
        ("count", COUNT, "u64", "preferences absorbed"),
        ("rank", RANK, "u64", "p, columns of the factor C, ≥ 1"),
        ("reserved", RESERVED, "u64", "0"),
    ];
}

const _: () = assert!(layout::LEN <= MAX_FIXED);

/// A low-rank preference-GP posterior over N items, to write (kind 10).
#[derive(Clone, Copy, Debug)]
pub struct PrefLowRankModel<'a> {
    /// Probit noise σ, finite and > 0.
    pub sigma: f64,
    /// Preferences absorbed.
    pub count: u64,
    /// Rank p ≥ 1 of the factor.
    pub rank: usize,
    /// Posterior mean `μ` (N values; their number is N, the header's `dim`).
    pub mean: Values<'a>,
    /// Per-item variances `r ≥ 0` (N values).
    pub resid: Values<'a>,
    /// The factor `C`, N × p row-major.
    pub factor: Values<'a>,
    /// Item names, one per item, each ended by `\n`; `""` for none.
    pub item_names: &'a str,
}

/// The parameters of a parsed low-rank preference-GP posterior (kind 10).
#[derive(Clone, Copy, Debug)]
pub struct PrefLowRankView<'a> {
    pub(crate) sigma: f64,
    pub(crate) count: u64,
    pub(crate) n: usize,
    pub(crate) p: usize,
    pub(crate) mean: Array<'a>,
    pub(crate) resid: Array<'a>,
    pub(crate) factor: Array<'a>,
    pub(crate) names: &'a str,
}

impl<'a> PrefLowRankView<'a> {
    /// Probit noise σ.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }
    /// Preferences absorbed.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Number of items N.
    pub fn items(&self) -> usize {
        self.n
    }
    /// Rank p of the factor.
    pub fn rank(&self) -> usize {
        self.p
    }
    /// Posterior mean `μ` (N).
    pub fn mean(&self) -> Array<'a> {
        self.mean
    }
    /// Per-item variances `r` (N).
    pub fn resid(&self) -> Array<'a> {
        self.resid
    }
    /// The factor `C` (N × p, row-major).
    pub fn factor(&self) -> Array<'a> {
        self.factor
    }
    /// `Σ[i][j] = c_iᵀc_j + δ_ij·r_i`, O(p); NaN if out of range.
    pub fn cov(&self, i: usize, j: usize) -> f64 {
        if i >= self.n || j >= self.n {
            return f64::NAN;
        }
        let p = self.p;
        let dot: f64 = (0..p).map(|t| self.factor.at(i * p + t) * self.factor.at(j * p + t)).sum();
        if i == j {
            dot + self.resid.at(i)
        } else {
            dot
        }
    }
    /// Mean and variance of `f_i − f_j`: `μ_i − μ_j` and
    /// `‖c_i − c_j‖² + r_i + r_j` (0 for `i = j`), O(p); `None` out of
    /// range.
    pub fn pair(&self, i: usize, j: usize) -> Option<(f64, f64)> {
        if i >= self.n || j >= self.n {
            return None;
        }
        if i == j {
            return Some((0.0, 0.0));
        }
        let p = self.p;
        let d2: f64 = (0..p)
            .map(|t| {
                let d = self.factor.at(i * p + t) - self.factor.at(j * p + t);
                d * d
            })
            .sum();
        Some((self.mean.at(i) - self.mean.at(j), d2 + self.resid.at(i) + self.resid.at(j)))
    }
    /// `P(i ≻ j) = Φ((μ_i − μ_j)/√(2σ² + v_ij))` and `v_ij` (001 eqs.
    /// 13–14); `None` out of range.
    pub fn prob(&self, i: usize, j: usize) -> Option<(f64, f64)> {
        let (m, v) = self.pair(i, j)?;
        let z = m / libm::sqrt(2.0 * self.sigma * self.sigma + v);
        Some((crate::special::norm_cdf(z), v))
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
    /// The low-rank preference-GP posterior (kind 10), if this is one.
    pub fn pref_lowrank(&self) -> Option<PrefLowRankView<'a>> {
        match self.body {
            super::Body::PrefLowRank(p) => Some(p),
            _ => None,
        }
    }
}

impl<'a> Kind<'a> for PrefLowRankView<'a> {
    type Spec = PrefLowRankModel<'a>;

    const SINCE: Version = Version { major: 1, minor: 5 };

    const SECTIONS: &'static [u16] = &[sid::PREF_LOWRANK, sid::PREF_ITEM_NAMES];

    // Not a row scorer: a device build parses it only with every kind on.
    const IN_BUILD: bool = cfg!(feature = "all-kinds");

    const LAZY_INPUT_CHECK: bool = false;

    fn parse(sections: &Sections<'a>, h: &Header) -> Result<Self, ParseError> {
        let id = sid::PREF_LOWRANK;
        sections.forbid(sid::FEATURE_CENTRING)?;
        let sec = sections.require(id)?;
        let n = h.dim;
        let es = h.elem.size();
        let sigma = finite(le_f64(sec, layout::SIGMA.start).unwrap_or(f64::NAN))?;
        let count = le_u64(sec, layout::COUNT.start).unwrap_or(0);
        let p = le_u64(sec, layout::RANK.start).and_then(|v| usize::try_from(v).ok()).unwrap_or(0);
        if !(sigma > 0.0) || p == 0 || le_u64(sec, layout::RESERVED.start) != Some(0) {
            return Err(ParseError::BadSection { id });
        }
        let vec_bytes = bytes_for(n, es)?;
        let fac_bytes = bytes_for(n.checked_mul(p).ok_or(ParseError::BadDimensions)?, es)?;
        let len = vec_bytes
            .checked_mul(2)
            .and_then(|x| x.checked_add(fac_bytes))
            .and_then(|x| x.checked_add(layout::LEN))
            .ok_or(ParseError::BadDimensions)?;
        expect_len(sec, len, id)?;
        let arr = |at: usize, len: usize| Array::new(sec.get(at..at + len).unwrap_or(&[]), h.elem);
        let mean = arr(layout::LEN, vec_bytes);
        let resid = arr(layout::LEN + vec_bytes, vec_bytes);
        let factor = arr(layout::LEN + 2 * vec_bytes, fac_bytes);
        all_finite(mean)?;
        all_finite(resid)?;
        all_finite(factor)?;
        if (0..n).any(|i| !(resid.at(i) >= 0.0)) {
            return Err(ParseError::BadSection { id });
        }
        let names = parse_names(sections, n)?;
        Ok(PrefLowRankView { sigma, count, n, p, mean, resid, factor, names })
    }

    fn dim(spec: &PrefLowRankModel<'a>) -> usize {
        spec.mean.len()
    }

    fn centring(_: &PrefLowRankModel<'a>) -> Option<FeatureCentring<'a>> {
        None
    }

    fn check(s: &PrefLowRankModel<'a>, et: ElementType) -> Result<(), EmitError> {
        let n = s.mean.len();
        check_dim(n)?;
        if s.rank == 0 || s.resid.len() != n || Some(s.factor.len()) != n.checked_mul(s.rank) {
            return Err(EmitError::BadDimensions);
        }
        storable(s.sigma, ElementType::F64)?;
        s.mean.storable(et)?;
        s.resid.storable(et)?;
        s.factor.storable(et)?;
        let stored = |x: f64| match et {
            ElementType::F32 => x as f32 as f64,
            ElementType::F64 => x,
        };
        if !(s.sigma > 0.0) || (0..n).any(|i| !(stored(s.resid.at(i)) >= 0.0)) {
            return Err(EmitError::BadState);
        }
        if !s.item_names.is_empty() && !names_ok(s.item_names, n) {
            return Err(EmitError::BadDimensions);
        }
        Ok(())
    }

    fn sections(s: &PrefLowRankModel<'a>, sink: &mut SectionSink<'_, 'a>) {
        let mut rec = [0u8; MAX_FIXED];
        let mut put = |at: usize, bytes: &[u8]| {
            if let Some(dst) = at.checked_add(bytes.len()).and_then(|end| rec.get_mut(at..end)) {
                dst.copy_from_slice(bytes);
            }
        };
        put(layout::SIGMA.start, &s.sigma.to_le_bytes());
        put(layout::COUNT.start, &s.count.to_le_bytes());
        put(layout::RANK.start, &(s.rank as u64).to_le_bytes());
        let none = Values::F64(&[]);
        sink.push(sid::PREF_LOWRANK, Payload::FixedThen(rec, layout::LEN, [s.mean, s.resid, s.factor, none, none]));
        if !s.item_names.is_empty() {
            sink.push(sid::PREF_ITEM_NAMES, Payload::Text(s.item_names.as_bytes()));
        }
    }

    /// A preference GP is asked for `P(i ≻ j)` and rankings of its items,
    /// not for the score of a row.
    fn eval<R: Arith>(&self, _x: Centred<'_, '_>, _dim: usize) -> Result<R, ScoreError> {
        Err(ScoreError::KindMismatch)
    }
}
