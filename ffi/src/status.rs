//! Status codes: [`rk_status`], its messages ([`rk_status_str`]), and the
//! one mapping from core's errors (parse, score, rank, write, store, the
//! device learners) to statuses.

use ranklet_core::format::{EmitError, ParseError, ScoreError};
use ranklet_core::learn::LearnError;
use ranklet_core::rank::RankError;
use ranklet_core::store::StoreError;
use ranklet_core::LinalgError;

/// Result of every fallible `rk_` function. Stable numbers: never reused,
/// never renumbered; new codes are appended.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum rk_status {
    /// Success.
    Ok = 5100,
    /// A required pointer argument is NULL (or an array of non-zero length
    /// has a NULL pointer).
    NullArgument = 5101,
    /// A Rust panic was caught at the boundary (a bug in ranklet).
    Panic = 5102,
    /// The storage given to `rk_model_parse` is smaller than
    /// `rk_model_storage_size()`.
    StorageTooSmall = 5103,
    /// The model handle is not one this library made (wrong tag or
    /// alignment), or `rk_model_free` was given a model from
    /// `rk_model_parse`.
    BadHandle = 5104,
    /// A `float`/`uint32_t` array pointer is not aligned for its type.
    Misaligned = 5105,
    /// An array length does not fit the call: input length not
    /// `rows × dim`, output not the number of rows, `k` larger than the
    /// number of items, or index and value arrays of different lengths.
    LengthMismatch = 5106,
    /// More items than a `uint32_t` index can name.
    TooManyItems = 5107,
    /// A score given to `rk_rank` is NaN.
    NanScore = 5108,
    /// The model is of another kind than the call needs (e.g. a prior for
    /// `rk_online_init` that is not a linear model, a pair model given to
    /// `rk_score_dense`, a linear model given to `rk_score_pair`).
    WrongModelKind = 5109,
    /// A numeric argument is outside its domain (e.g. `lambda` or
    /// `magnitude` not finite and > 0).
    BadArgument = 5110,
    /// Neither slot of a store region holds a complete save.
    NoSavedState = 5111,
    /// The model is valid, but this build of the library cannot score it:
    /// a cargo feature it needs is off (`kernel` for kernel expansions and
    /// dual pair models, `f64` for models stored in f64, `centring` for
    /// models that centre their features; the scoring calls return it, after
    /// `rk_model_parse` checked the model completely), or, from
    /// `rk_model_parse`, the build leaves the model's kind out (`all-kinds`
    /// off: pair models and online RankRLS states).
    NotInBuild = 5112,
    // 5113..=5119: reserved for future call-level codes.
    /// Model bytes: shorter than the fixed header and trailer.
    FormatTooShort = 5120,
    /// Model bytes: not a ranklet model (bad magic).
    FormatBadMagic = 5121,
    /// Model bytes: unsupported format major version.
    FormatUnsupportedVersion = 5122,
    /// Model bytes: the file needs a newer reader.
    FormatReaderTooOld = 5123,
    /// Model bytes: shorter than the length in the header.
    FormatTruncated = 5124,
    /// Model bytes: longer than the length in the header.
    FormatTrailingBytes = 5125,
    /// Model bytes: CRC-32 mismatch.
    FormatBadChecksum = 5126,
    /// Model bytes: inconsistent header.
    FormatBadHeader = 5127,
    /// Model bytes: unknown model kind.
    FormatBadKind = 5128,
    /// Model bytes: unknown element type.
    FormatBadElementType = 5129,
    /// Model bytes: malformed section table.
    FormatBadSectionTable = 5130,
    /// Model bytes: malformed or misplaced section.
    FormatBadSection = 5131,
    /// Model bytes: unknown required section.
    FormatUnknownRequiredSection = 5132,
    /// Model bytes: missing section.
    FormatMissingSection = 5133,
    /// Model bytes: bad or inconsistent dimensions.
    FormatBadDimensions = 5134,
    /// Model bytes: a parameter is NaN or infinite.
    FormatNonFinite = 5135,
    /// Model bytes: a feature scale is zero.
    FormatBadScale = 5136,
    /// Model bytes: unknown kernel or kernel parameter out of domain.
    FormatBadKernel = 5137,
    /// Model bytes: malformed sparse basis.
    FormatBadSparseIndex = 5138,
    /// Model bytes: metadata is not UTF-8.
    FormatBadMetadata = 5139,
    /// Model bytes: an error this version of the C ABI has no code for yet.
    FormatOther = 5140,
    // 5141..=5149: reserved for future format codes.
    /// Input: a dense row does not have the model's dimension.
    DimensionMismatch = 5150,
    /// Input: sparse indices are not strictly increasing (indices `>= dim`
    /// are scored, as features every training row had as 0).
    BadInputIndex = 5151,
    /// Input: NaN or infinity.
    NonFiniteInput = 5152,
    /// A score is not a finite `float`.
    ScoreOverflow = 5153,
    // 5154..=5189: reserved for future input codes.
    /// Preference GP: an observation's update would overflow `float` or
    /// leave a posterior variance `<= 0` by rounding; the posterior is
    /// unchanged (refit on the host, or keep the state in `double`).
    PrefUpdateFailed = 5190,
    // 5191..=5199: reserved for future preference-GP codes.
}

/// Lists every status with its message; the `match` it expands to is
/// exhaustive, so adding a variant without a message does not compile, and
/// [`rk_status::ALL`] comes from the same list.
macro_rules! status_messages {
    ($($v:ident => $msg:literal,)*) => {
        impl rk_status {
            /// Every status, in code order.
            pub const ALL: &'static [rk_status] = &[$(rk_status::$v,)*];

            /// The message, NUL-terminated.
            pub const fn message(self) -> &'static str {
                match self {
                    $(rk_status::$v => concat!($msg, "\0"),)*
                }
            }
        }
    };
}

status_messages! {
    Ok => "ok",
    NullArgument => "a required pointer argument is NULL",
    Panic => "internal error: a panic was caught at the C boundary",
    StorageTooSmall => "model storage is smaller than rk_model_storage_size()",
    BadHandle => "not a model handle made by this library",
    Misaligned => "array pointer is not aligned for its element type",
    LengthMismatch => "array length does not match the call",
    TooManyItems => "more items than a uint32_t index can name",
    NanScore => "a score is NaN",
    WrongModelKind => "the model is not of the kind this call needs",
    BadArgument => "a numeric argument is outside its domain",
    NoSavedState => "no complete saved state in the store region",
    NotInBuild => "this build of the library cannot score this model (a scoring feature is off)",
    FormatTooShort => "model too short to hold a header",
    FormatBadMagic => "not a ranklet model (bad magic)",
    FormatUnsupportedVersion => "unsupported model format version",
    FormatReaderTooOld => "model needs a newer reader",
    FormatTruncated => "model truncated",
    FormatTrailingBytes => "trailing bytes after model",
    FormatBadChecksum => "model checksum mismatch",
    FormatBadHeader => "inconsistent model header",
    FormatBadKind => "unknown model kind",
    FormatBadElementType => "unknown element type",
    FormatBadSectionTable => "malformed section table",
    FormatBadSection => "malformed or misplaced section",
    FormatUnknownRequiredSection => "unknown required section",
    FormatMissingSection => "missing section",
    FormatBadDimensions => "bad or inconsistent model dimensions",
    FormatNonFinite => "model parameter is NaN or infinite",
    FormatBadScale => "feature scale is zero",
    FormatBadKernel => "unknown kernel or kernel parameter out of domain",
    FormatBadSparseIndex => "malformed sparse basis",
    FormatBadMetadata => "model metadata is not UTF-8",
    FormatOther => "invalid model",
    DimensionMismatch => "input length does not match the model dimension",
    BadInputIndex => "sparse input indices not strictly increasing",
    NonFiniteInput => "input contains NaN or infinity",
    ScoreOverflow => "score is not a finite float",
    PrefUpdateFailed => "learner update would leave the state non-finite or not positive definite (unchanged)",
}

impl rk_status {
    /// The status with code `code`, if there is one.
    pub fn from_code(code: u32) -> Option<rk_status> {
        rk_status::ALL.iter().copied().find(|s| *s as u32 == code)
    }
}

impl From<ParseError> for rk_status {
    fn from(e: ParseError) -> Self {
        use rk_status as S;
        match e {
            ParseError::TooShort { .. } => S::FormatTooShort,
            ParseError::BadMagic => S::FormatBadMagic,
            ParseError::UnsupportedVersion { .. } => S::FormatUnsupportedVersion,
            ParseError::ReaderTooOld { .. } => S::FormatReaderTooOld,
            ParseError::Truncated { .. } => S::FormatTruncated,
            ParseError::TrailingBytes { .. } => S::FormatTrailingBytes,
            ParseError::BadChecksum { .. } => S::FormatBadChecksum,
            ParseError::BadHeader => S::FormatBadHeader,
            ParseError::BadKind { .. } => S::FormatBadKind,
            ParseError::BadElementType { .. } => S::FormatBadElementType,
            ParseError::BadSectionTable => S::FormatBadSectionTable,
            ParseError::BadSection { .. } => S::FormatBadSection,
            ParseError::UnknownRequiredSection { .. } => S::FormatUnknownRequiredSection,
            ParseError::MissingSection { .. } => S::FormatMissingSection,
            ParseError::BadDimensions => S::FormatBadDimensions,
            ParseError::NonFinite => S::FormatNonFinite,
            ParseError::BadScale => S::FormatBadScale,
            ParseError::BadKernel => S::FormatBadKernel,
            ParseError::BadSparseIndex => S::FormatBadSparseIndex,
            ParseError::BadMetadata => S::FormatBadMetadata,
            ParseError::KindNotInBuild { .. } => S::NotInBuild,
            _ => S::FormatOther,
        }
    }
}

impl From<ScoreError> for rk_status {
    fn from(e: ScoreError) -> Self {
        use rk_status as S;
        match e {
            ScoreError::DimensionMismatch { .. } => S::DimensionMismatch,
            ScoreError::BadInputIndex => S::BadInputIndex,
            ScoreError::NonFiniteInput => S::NonFiniteInput,
            ScoreError::ScoreOverflow => S::ScoreOverflow,
            // A single-row call on a pair model, or a pair call on another.
            ScoreError::KindMismatch => S::WrongModelKind,
            // A kernel, f64 or centring model in a build without the
            // feature that scores it.
            ScoreError::UnsupportedKind => S::NotInBuild,
            _ => S::FormatOther,
        }
    }
}

/// The one mapping of a device learner's errors (`rk_online_*`,
/// `rk_pref_*`): a non-finite value is a value read that `float` cannot
/// hold — the caller's rows, a model or saved state converted to `float`
/// (`RK_STATUS_NON_FINITE_INPUT`); a variance rounding left `<= 0` is an
/// update the state cannot hold (`RK_STATUS_PREF_UPDATE_FAILED`). The GP's
/// observe, whose input is two indices, goes through
/// `crate::device::state_status`, where a non-finite value is such an
/// update too.
impl From<LearnError> for rk_status {
    fn from(e: LearnError) -> Self {
        use rk_status as S;
        match e {
            LearnError::Unsupported => S::WrongModelKind,
            LearnError::Numerics(LinalgError::WorkspaceTooSmall { .. }) => S::StorageTooSmall,
            LearnError::Numerics(LinalgError::DimensionMismatch) => S::DimensionMismatch,
            LearnError::Numerics(LinalgError::NonFinite) => S::NonFiniteInput,
            LearnError::Numerics(LinalgError::NotPositiveDefinite { .. }) => S::PrefUpdateFailed,
            // A ridge, magnitude or item index outside its domain.
            _ => S::BadArgument,
        }
    }
}

/// Writing a model: the buffer, or the format's refusal of the values.
impl From<EmitError> for rk_status {
    fn from(e: EmitError) -> Self {
        match e {
            EmitError::BufferTooSmall { .. } => rk_status::StorageTooSmall,
            EmitError::NonFinite => rk_status::FormatNonFinite,
            _ => rk_status::FormatOther,
        }
    }
}

/// Saving a state into a store region.
impl From<StoreError<EmitError>> for rk_status {
    fn from(e: StoreError<EmitError>) -> Self {
        match e {
            StoreError::TooLarge { .. } => rk_status::StorageTooSmall,
            StoreError::Write(e) => e.into(),
            _ => rk_status::FormatOther,
        }
    }
}

impl From<RankError> for rk_status {
    fn from(e: RankError) -> Self {
        match e {
            RankError::LengthMismatch { .. } => rk_status::LengthMismatch,
            RankError::TooManyItems => rk_status::TooManyItems,
            RankError::NanScore => rk_status::NanScore,
            RankError::Score(f) => f.into(),
            _ => rk_status::Panic,
        }
    }
}

/// The message for a status code: a static NUL-terminated string, never
/// NULL. Unknown codes give `"unknown status"`.
#[no_mangle]
pub extern "C" fn rk_status_str(status: u32) -> *const core::ffi::c_char {
    let msg = match rk_status::from_code(status) {
        Some(s) => s.message(),
        None => "unknown status\0",
    };
    msg.as_ptr().cast()
}

/// The library version, `"MAJOR.MINOR.PATCH"`, NUL-terminated (equal to
/// `RANKLET_VERSION` in the header this library was built with).
#[no_mangle]
pub extern "C" fn rk_version() -> *const core::ffi::c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_codes_are_unique_ordered_and_have_messages() {
        let mut prev = 0u32;
        for &s in rk_status::ALL {
            let code = s as u32;
            assert!(code > prev, "{s:?} out of order or duplicated");
            prev = code;
            assert_eq!(rk_status::from_code(code), Some(s));
            let m = s.message();
            assert!(m.ends_with('\0') && m.len() > 1 && !m[..m.len() - 1].contains('\0'));
        }
        assert_eq!(rk_status::Ok as u32, 5100);
        assert_eq!(rk_status::from_code(0), None);
        assert_eq!(rk_status::from_code(5113), None);
    }
}
