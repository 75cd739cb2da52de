//! The error types of the model format, one per operation: parsing
//! ([`ParseError`]), writing ([`EmitError`]) and scoring ([`ScoreError`]).

use core::fmt;

use super::Version;

/// Why [`ModelView::new_checked`](super::ModelView::new_checked) rejected a
/// model file.
///
/// Variants are named by the check that failed and reported roughly in the
/// order of the checks: length, magic, version, declared length, checksum,
/// header, section table, sections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseError {
    /// The input is shorter than the fixed header plus the checksum
    /// trailer, so not even the header can be read.
    TooShort {
        /// Bytes given.
        len: usize,
    },
    /// The first four bytes are not `RKLT`.
    BadMagic,
    /// The file's major format version is not one this reader understands
    /// (a newer major, or the invalid major 0).
    UnsupportedVersion {
        /// Format version in the file.
        found: Version,
        /// Newest format version this reader understands.
        supported: Version,
    },
    /// The file says it needs a newer reader than this one.
    ReaderTooOld {
        /// Minimum reader version stated in the file.
        required: Version,
        /// Format version this reader implements.
        supported: Version,
    },
    /// The input is shorter than the length declared in the header.
    Truncated {
        /// Length declared in the header.
        declared: usize,
        /// Bytes given.
        got: usize,
    },
    /// The input is longer than the length declared in the header.
    TrailingBytes {
        /// Length declared in the header.
        declared: usize,
        /// Bytes given.
        got: usize,
    },
    /// The CRC-32 trailer does not match the bytes before it.
    BadChecksum {
        /// Checksum stored in the trailer.
        stored: u32,
        /// Checksum computed over the file.
        computed: u32,
    },
    /// A header field is inconsistent: a reserved field is not zero, or the
    /// minimum reader version is newer than the file's own version.
    BadHeader,
    /// The model kind is unknown or reserved.
    BadKind {
        /// Kind code in the file.
        code: u8,
    },
    /// The element type is unknown.
    BadElementType {
        /// Element type code in the file.
        code: u8,
    },
    /// The section table does not fit the file, or its entries are not in
    /// ascending, non-overlapping order inside the payload area.
    BadSectionTable,
    /// A known section has the wrong length, wrong flags, appears twice, or
    /// does not belong to this model kind.
    BadSection {
        /// Section id.
        id: u16,
    },
    /// A section marked required has an id this reader does not know.
    UnknownRequiredSection {
        /// Section id.
        id: u16,
    },
    /// A section the model kind needs is absent.
    MissingSection {
        /// Section id.
        id: u16,
    },
    /// A dimension is zero, does not match another, or its byte size
    /// overflows; or a quantised model's dimension and bias break its
    /// accumulator bound (`|B| + d·W_max·2¹⁵ ≤ 2⁶³ − 1`).
    BadDimensions,
    /// A parameter is NaN or infinite.
    NonFinite,
    /// A feature scale is zero.
    BadScale,
    /// The kernel code is unknown, or a kernel parameter is outside the
    /// domain of [`Kernel`](crate::kernel::Kernel) (`gamma <= 0`, polynomial
    /// `coef0 < 0` or degree 0, nonzero unused parameters).
    BadKernel,
    /// The sparse basis is not well-formed CSR: `row_ptr` does not start at
    /// 0, decreases, or does not end at the number of non-zeros; or a
    /// column index is `>= d` or not strictly increasing within its row.
    BadSparseIndex,
    /// The metadata is not valid UTF-8.
    BadMetadata,
    /// The file is a valid model of a kind this build leaves out: ranklet-core
    /// built without its feature `all-kinds` accepts only linear models
    /// (and kernel expansions with `kernel`). Checked right after the
    /// header, before the kind's own sections.
    KindNotInBuild {
        /// The kind code.
        code: u8,
    },
}

/// Why [`ModelSpec::check`](super::ModelSpec::check) or
/// [`ModelSpec::emit`](super::ModelSpec::emit) refused to write a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmitError {
    /// A dimension is zero or does not match another, or the file would be
    /// longer than `u32::MAX` bytes.
    BadDimensions,
    /// A parameter is NaN or infinite, or (when writing `f32`) is finite in
    /// `f64` but overflows `f32`.
    NonFinite,
    /// A feature scale is, or rounds to, zero.
    BadScale,
    /// A kernel parameter is outside the domain of
    /// [`Kernel`](crate::kernel::Kernel).
    BadKernel,
    /// The sparse basis is not well-formed CSR (see
    /// [`ParseError::BadSparseIndex`]).
    BadSparseIndex,
    /// A learner state is not one a learner can be in (an online RankRLS
    /// state with λ ≤ 0 or a factor diagonal below `0.999·√λ`).
    BadState,
    /// A pair model's claim about its pair kernel does not hold: a
    /// symmetric or reciprocal model whose `W` is not exactly symmetric or
    /// antisymmetric (as stored), that spans two domains, or (reciprocal)
    /// whose offset is not zero.
    BadPair,
    /// A quantised model's weight is outside the range of its width (an
    /// `i8` model with a weight beyond `-128..=127`).
    BadQuant,
    /// The output buffer is shorter than the encoded model.
    BufferTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes given.
        got: usize,
    },
}

/// Why a `score_*` function of a validated
/// [`ModelView`](super::ModelView) could not score its input. Only the input
/// (or the arithmetic on it) can be at fault: the model was validated when
/// parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScoreError {
    /// A scoring input does not have the model's dimension (dense input),
    /// or the index and value slices differ in length (sparse input), or
    /// an output slice does not match the number of rows.
    DimensionMismatch {
        /// Length expected.
        expected: usize,
        /// Length given.
        got: usize,
    },
    /// A sparse scoring input has indices that are not strictly increasing.
    /// (Indices `>= d` are scored: see
    /// [`ModelView::score_sparse`](super::ModelView::score_sparse).)
    BadInputIndex,
    /// A scoring input contains NaN or infinity.
    NonFiniteInput,
    /// The score overflowed to infinity (or to a value outside the `f32`
    /// range for the `f32` entry points).
    ScoreOverflow,
    /// The model is valid but this build cannot score it: a kernel
    /// expansion or a dual pair model without ranklet-core's feature
    /// `kernel`, a model stored in `f64` without `f64`, or a model with
    /// feature centring without `centring`.
    UnsupportedKind,
    /// The entry point does not score this kind of model: a single-row
    /// function (`score_dense`, …) called on a pair model (kinds 3 and 6),
    /// or a pair function (`score_pair`, …) on a single-row model.
    KindMismatch,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ParseError::TooShort { len } => write!(f, "model too short to hold a header ({len} bytes)"),
            ParseError::BadMagic => f.write_str("not a ranklet model (bad magic)"),
            ParseError::UnsupportedVersion { found, supported } => {
                write!(f, "unsupported model format version {found} (this reader supports {supported})")
            }
            ParseError::ReaderTooOld { required, supported } => {
                write!(f, "model needs a reader of format version {required} or newer (this reader is {supported})")
            }
            ParseError::Truncated { declared, got } => {
                write!(f, "model truncated: header declares {declared} bytes, {got} given")
            }
            ParseError::TrailingBytes { declared, got } => {
                write!(f, "trailing bytes after model: header declares {declared} bytes, {got} given")
            }
            ParseError::BadChecksum { stored, computed } => {
                write!(f, "model checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")
            }
            ParseError::BadHeader => f.write_str("inconsistent model header"),
            ParseError::BadKind { code } => write!(f, "unknown model kind {code}"),
            ParseError::BadElementType { code } => write!(f, "unknown element type {code}"),
            ParseError::BadSectionTable => f.write_str("malformed section table"),
            ParseError::BadSection { id } => write!(f, "malformed or misplaced section {id}"),
            ParseError::UnknownRequiredSection { id } => write!(f, "unknown required section {id}"),
            ParseError::MissingSection { id } => write!(f, "missing section {id}"),
            ParseError::BadDimensions => f.write_str(BAD_DIMENSIONS),
            ParseError::NonFinite => f.write_str(NON_FINITE),
            ParseError::BadScale => f.write_str(BAD_SCALE),
            ParseError::BadKernel => f.write_str(BAD_KERNEL),
            ParseError::BadSparseIndex => f.write_str(BAD_SPARSE_INDEX),
            ParseError::BadMetadata => f.write_str("metadata is not valid UTF-8"),
            ParseError::KindNotInBuild { code } => {
                write!(f, "model kind {code} is not in this build (ranklet-core feature `all-kinds` off)")
            }
        }
    }
}

// Messages of the checks that parsing and writing share.
const BAD_DIMENSIONS: &str = "bad or inconsistent model dimensions";
const NON_FINITE: &str = "model parameter is NaN, infinite or out of range";
const BAD_SCALE: &str = "feature scale is zero";
const BAD_KERNEL: &str = "unknown kernel or kernel parameter out of domain";
const BAD_SPARSE_INDEX: &str = "malformed sparse (CSR) basis";

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            EmitError::BadDimensions => f.write_str(BAD_DIMENSIONS),
            EmitError::NonFinite => f.write_str(NON_FINITE),
            EmitError::BadScale => f.write_str(BAD_SCALE),
            EmitError::BadKernel => f.write_str(BAD_KERNEL),
            EmitError::BadSparseIndex => f.write_str(BAD_SPARSE_INDEX),
            EmitError::BadState => f.write_str("not a state the learner can be in"),
            EmitError::BadPair => {
                f.write_str("pair model is not (anti)symmetric as its pair kernel claims, or spans two domains")
            }
            EmitError::BadQuant => f.write_str("quantised weight outside the range of its width"),
            EmitError::BufferTooSmall { needed, got } => {
                write!(f, "output buffer too small: {needed} bytes needed, {got} given")
            }
        }
    }
}

impl fmt::Display for ScoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ScoreError::DimensionMismatch { expected, got } => {
                write!(f, "input length mismatch: expected {expected}, got {got}")
            }
            ScoreError::BadInputIndex => f.write_str("sparse input indices not strictly increasing"),
            ScoreError::NonFiniteInput => f.write_str("input contains NaN or infinity"),
            ScoreError::ScoreOverflow => f.write_str("score overflowed"),
            ScoreError::UnsupportedKind => {
                f.write_str("this build cannot score this model (a scoring feature is off: kernel, f64 or centring)")
            }
            ScoreError::KindMismatch => {
                f.write_str("wrong scoring function for this model kind (single-row vs pair model)")
            }
        }
    }
}

impl core::error::Error for ParseError {}
impl core::error::Error for EmitError {}
impl core::error::Error for ScoreError {}
