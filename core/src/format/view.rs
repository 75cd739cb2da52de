//! The parser: [`ModelView`], validated once, then read without checks. The
//! kind-independent half: header and section table (`header`), metadata,
//! feature centring (`centring`); each kind parses its own sections
//! (`kind/*.rs`).

use super::header::{self, bytes_for};
use super::kind::Body;
use super::section_id as sid;
use super::sum::dot_f32;
use super::{centring, Array, ElementType, ModelKind, ParseError, ScoreError, Version};

/// A validated, zero-copy view of a model file.
///
/// Construct it with [`ModelView::new_checked`]; every check happens there.
/// Afterwards no accessor panics, and the parameter arrays it hands out are
/// known to be finite and of the right length. The view borrows the bytes
/// and allocates nothing.
#[derive(Clone, Copy, Debug)]
pub struct ModelView<'a> {
    bytes: &'a [u8],
    version: Version,
    min_reader: Version,
    producer: [u16; 3],
    kind: ModelKind,
    elem: ElementType,
    dim: usize,
    metadata: &'a str,
    centring: Option<(Array<'a>, Array<'a>)>,
    pub(crate) body: Body<'a>,
    /// The `f32` dense fast path, if the model is linear in `f32` without
    /// centring (set once by [`ModelView::new_checked`]).
    pub(crate) dense: Option<DenseF32<'a>>,
}

/// The weights of [`DenseF32`]: a native `&[f32]` when the model bytes are
/// aligned for `f32` on a little-endian target (checked once at parse time
/// by `bytemuck::try_cast_slice`, so core needs no `unsafe`), else the
/// little-endian bytes, read at any alignment. Both give the same bits.
#[derive(Clone, Copy, Debug)]
pub(crate) enum WeightsF32<'a> {
    Aligned(&'a [f32]),
    Bytes(&'a [u8]),
}

impl<'a> WeightsF32<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        #[cfg(target_endian = "little")]
        if let Ok(w) = bytemuck::try_cast_slice::<u8, f32>(bytes) {
            return WeightsF32::Aligned(w);
        }
        WeightsF32::Bytes(bytes)
    }
}

/// The scoring fast path of an `f32` model that is linear in its raw
/// features (kind 1, or an online RankRLS state, without feature
/// centring): `score(x) = b + Σ_j w_j·x_j` in `f32`, with `b` rounded to
/// `f32` once at parse time. The same arithmetic, bit for bit, as the
/// general path (`linear_eval` with `R = f32`), without its dispatch on
/// element type, input form and centring; builds without the features
/// `kernel`, `f64` and `centring` link only this.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DenseF32<'a> {
    offset: f32,
    w: WeightsF32<'a>,
}

impl<'a> DenseF32<'a> {
    /// The fast path of a parsed model, if it has one.
    fn of(elem: ElementType, centring: bool, body: &Body<'a>) -> Option<Self> {
        let (offset, w) = match body {
            Body::Linear(l) => (l.offset, l.weights),
            Body::OnlineRankRls(o) => (o.offset, o.w),
            _ => return None,
        };
        if elem != ElementType::F32 || centring {
            return None;
        }
        Some(DenseF32 { offset: offset as f32, w: WeightsF32::new(w.as_bytes()) })
    }

    /// `b + ⟨w, x⟩` for `x.len() == dim`, unchecked otherwise.
    #[inline]
    pub(crate) fn eval(&self, x: &[f32]) -> f32 {
        self.offset
            + match self.w {
                WeightsF32::Aligned(w) => dot_f32(w, x),
                WeightsF32::Bytes(w) => dot_f32(w, x),
            }
    }

    /// The score of one dense row of length `dim`, with the input's
    /// finiteness checked lazily: a finite score proves every input finite
    /// (finite weights, see `Kind::LAZY_INPUT_CHECK`), so the row is
    /// scanned only when the score is not finite, to tell
    /// [`ScoreError::NonFiniteInput`] from [`ScoreError::ScoreOverflow`].
    #[inline]
    pub(crate) fn score(&self, x: &[f32], dim: usize) -> Result<f32, ScoreError> {
        if x.len() != dim {
            return Err(ScoreError::DimensionMismatch { expected: dim, got: x.len() });
        }
        let s = self.eval(x);
        if s.is_finite() {
            Ok(s)
        } else if x.iter().all(|v| v.is_finite()) {
            Err(ScoreError::ScoreOverflow)
        } else {
            Err(ScoreError::NonFiniteInput)
        }
    }

    /// Whether the weights are read through the aligned native slice.
    #[cfg(test)]
    pub(crate) fn is_aligned(&self) -> bool {
        matches!(self.w, WeightsF32::Aligned(_))
    }
}

impl<'a> ModelView<'a> {
    /// Validates `bytes` completely and returns a view of it.
    ///
    /// `bytes` may have any alignment and must be exactly one model file
    /// (the length declared in its header).
    ///
    /// # Errors
    ///
    /// In the order the checks run: [`ParseError::TooShort`],
    /// [`ParseError::BadMagic`], [`ParseError::UnsupportedVersion`] (major
    /// version not 1), [`ParseError::ReaderTooOld`],
    /// [`ParseError::BadHeader`], [`ParseError::Truncated`] /
    /// [`ParseError::TrailingBytes`], [`ParseError::BadChecksum`],
    /// [`ParseError::BadKind`], [`ParseError::BadElementType`],
    /// [`ParseError::BadDimensions`], [`ParseError::BadSectionTable`],
    /// [`ParseError::BadSection`], [`ParseError::UnknownRequiredSection`],
    /// [`ParseError::MissingSection`], [`ParseError::BadMetadata`],
    /// [`ParseError::NonFinite`], [`ParseError::BadScale`],
    /// [`ParseError::BadKernel`], [`ParseError::BadSparseIndex`].
    ///
    /// # Fuzzing
    ///
    /// Under `cfg(fuzzing)` a checksum mismatch is ignored.
    pub fn new_checked(bytes: &'a [u8]) -> Result<Self, ParseError> {
        let (h, sections) = header::parse(bytes)?;
        let metadata = match sections.get(sid::META) {
            Some(m) => core::str::from_utf8(m).map_err(|_| ParseError::BadMetadata)?,
            None => "",
        };
        bytes_for(h.dim, h.elem.size())?;
        let centring = centring::parse(&sections, h.dim, h.elem)?;
        let body = Body::parse(&sections, &h)?;
        let dense = DenseF32::of(h.elem, centring.is_some(), &body);
        Ok(ModelView {
            bytes,
            version: h.version,
            min_reader: h.min_reader,
            producer: h.producer,
            kind: h.kind,
            elem: h.elem,
            dim: h.dim,
            metadata,
            centring,
            body,
            dense,
        })
    }

    /// The bytes the view was made from.
    pub fn into_inner(self) -> &'a [u8] {
        self.bytes
    }

    /// Format version of the file.
    pub fn format_version(&self) -> Version {
        self.version
    }

    /// Oldest reader version the file says can read it.
    pub fn min_reader_version(&self) -> Version {
        self.min_reader
    }

    /// Version `[major, minor, patch]` of the crate that wrote the file
    /// (informational; never checked).
    pub fn producer_version(&self) -> [u16; 3] {
        self.producer
    }

    /// Model kind.
    pub fn kind(&self) -> ModelKind {
        self.kind
    }

    /// Element type of the parameter arrays.
    pub fn element_type(&self) -> ElementType {
        self.elem
    }

    /// Feature dimension `d` (the length of a dense input).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The metadata text (empty if the file has no `META` section).
    pub fn metadata(&self) -> &'a str {
        self.metadata
    }

    /// The value of the first metadata line `key=value` whose key is `key`
    /// (the text after the first `=`, with a trailing `\r` removed).
    pub fn metadata_get(&self, key: &str) -> Option<&'a str> {
        self.metadata.lines().find_map(|line| match line.split_once('=') {
            Some((k, v)) if k == key => Some(v),
            _ => None,
        })
    }

    /// Per-feature `(mean, scale)`, each d elements, if the model centres
    /// and scales its input.
    pub fn feature_centring(&self) -> Option<(Array<'a>, Array<'a>)> {
        self.centring
    }
}
