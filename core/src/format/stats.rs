//! The `.rks` statistics file: the additive statistics of
//! [`crate::learn::ls_stats`] of some rows (one shard of a data set, or a
//! merge of shards), so that shards computed anywhere can be exchanged and
//! merged exactly. Specified in `docs/format.md` ("Statistics files").
//!
//! Like a model file: little-endian, a fixed header with magic and format
//! version, a declared total length, and a CRC-32 trailer over everything
//! before it ([`super::crc32`]). The payload is arrays whose sizes follow
//! from the header: the `K` fold total records, the `K` sealed records, the
//! `Q` open query ids (strictly increasing), the `S` sealed query ids
//! (strictly increasing, none open) and the `Q` query records, each record
//! its values then their compensations (`f64`).
//!
//! [`StatsView::new_checked`] takes untrusted bytes of any alignment and
//! checks everything once (lengths, magic, version, checksum, codes,
//! dimensions, qid order, finiteness, row counts); its accessors then never
//! panic and copy nothing. [`StatsFile::emit`] writes into a caller buffer
//! of [`StatsFile::buffer_len`] bytes and writes nothing on error.

use core::fmt;

use super::array::{le_u16, le_u32, le_u64};
use super::crc32::crc32;
use super::{Array, ElementType, Version};
use crate::graph::QueryWeight;
use crate::kernel::Kernel;
use crate::LinalgError;

// The layout of statistics records lives here, below the learners: the
// file holds them, and `learn::ls_stats` (which re-exports these names)
// computes, merges and solves them.

/// The size of a set of statistics: dimension, folds, query weighting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatsShape {
    /// Features `d ≥ 1`.
    pub d: usize,
    /// Cross-validation folds `K ≥ 1` (1: no cross-validation).
    pub folds: usize,
    /// The query weighting whose per-query partials are kept.
    pub weight: QueryWeight,
}

/// Offset of `n` in a record.
pub const N: usize = 0;
/// Offset of `Σy` in a record.
pub const SY: usize = 1;
/// Offset of `Σx` (`d` values) in a record.
pub const SX: usize = 2;

impl StatsShape {
    /// Elements of a packed lower triangle of `d × d`.
    pub const fn packed_len(d: usize) -> usize {
        d * (d + 1) / 2
    }

    /// [`Self::packed_len`] with checked arithmetic.
    pub const fn packed_len_checked(d: usize) -> Option<usize> {
        match d.checked_add(1) {
            Some(d1) => match d.checked_mul(d1) {
                Some(v) => Some(v / 2),
                None => None,
            },
            None => None,
        }
    }

    /// Offset of `Σy²`.
    pub const fn syy(&self) -> usize {
        SX + self.d
    }

    /// Offset of `Σxy` (`d` values).
    pub const fn sxy(&self) -> usize {
        SX + self.d + 1
    }

    /// Offset of `Σxxᵀ` (packed lower triangle).
    pub const fn sxx(&self) -> usize {
        SX + 2 * self.d + 1
    }

    /// Values of a total record: `3 + 2d + d(d+1)/2`.
    pub const fn total_len(&self) -> usize {
        self.sxx() + Self::packed_len(self.d)
    }

    /// Values of a query record: `2 + d` (`equal`) or [`Self::total_len`]
    /// (`pairs`).
    pub const fn query_len(&self) -> usize {
        match self.weight {
            QueryWeight::Equal => SX + self.d,
            QueryWeight::Pairs => self.total_len(),
        }
    }

    /// Elements of the totals buffer: `K` records of `2·total_len`.
    pub const fn totals_buffer_len(&self) -> usize {
        self.folds * 2 * self.total_len()
    }

    /// Checks `d ≥ 1`, `K ≥ 1` and that the buffers' sizes fit `usize`.
    pub fn check(&self) -> Result<(), LinalgError> {
        let ok = self.d >= 1
            && self.folds >= 1
            && self.d.checked_mul(self.d + 1).and_then(|v| v.checked_mul(2 * self.folds.max(2))).is_some();
        if ok {
            Ok(())
        } else {
            Err(LinalgError::DimensionMismatch)
        }
    }
}

/// The value `sum + compensation` of element `i` of a `2m` record.
#[inline]
pub fn value(rec: &[f64], i: usize) -> f64 {
    let m = rec.len() / 2;
    rec[i] + rec[m + i]
}

/// Merged statistics, borrowed: what [`solve`](crate::learn::ls_stats::solve) reads and a `.rks` file
/// holds (besides the sealed qids).
#[derive(Clone, Copy, Debug)]
pub struct StatsRef<'a> {
    /// Dimension, folds, query weighting.
    pub shape: StatsShape,
    /// The fold seed.
    pub seed: u64,
    /// The `K` total records.
    pub totals: &'a [f64],
    /// The `K` records of sealed queries ([`seal`](crate::learn::ls_stats::seal)).
    pub sealed: &'a [f64],
    /// The open queries' ids, each once (the partials of a qid met in
    /// several blocks merged).
    pub qids: &'a [u64],
    /// Their records, `2·query_len` each, in the same order.
    pub queries: &'a [f64],
}

/// The four magic bytes of a statistics file.
pub const STATS_MAGIC: [u8; 4] = *b"RKST";

/// The statistics format version this crate reads and writes.
pub const STATS_VERSION: Version = Version { major: 2, minor: 0 };

/// The header as named byte ranges.
pub mod field {
    use super::super::field::Field;

    /// `"RKST"`.
    pub const MAGIC: Field = 0..4;
    /// Format major version (`u8`).
    pub const FORMAT_MAJOR: usize = 4;
    /// Format minor version (`u8`).
    pub const FORMAT_MINOR: usize = 5;
    /// What the statistics are of (`u16`): 0 rows and their queries, 1
    /// explicit preference pairs ([`super::StatsContent`]; format 1.2,
    /// zero in earlier files).
    pub const CONTENT: Field = 6..8;
    /// Feature dimension `d` (`u32`).
    pub const DIM: Field = 8..12;
    /// Query weighting (`u8`): 1 equal, 2 pairs.
    pub const QUERY_WEIGHT: usize = 12;
    /// Feature map (`u8`): 1 linear (the raw features), 2 Nyström.
    pub const FEATURE_MAP: usize = 13;
    /// Cross-validation folds `K ≥ 1` (`u16`).
    pub const FOLDS: Field = 14..16;
    /// Fold seed (`u64`).
    pub const SEED: Field = 16..24;
    /// Identity of the feature map's parameters (`u64`): 0 for linear,
    /// the FNV-1a hash of the map section for Nyström.
    pub const MAP_HASH: Field = 24..32;
    /// Number of queries `Q` (`u64`).
    pub const QUERIES: Field = 32..40;
    /// Total file length in bytes, checksum included (`u64`).
    pub const TOTAL_LEN: Field = 40..48;
    /// Number of sealed queries `S` (`u64`).
    pub const SEALED: Field = 48..56;
    /// Length of the fixed header; the payload starts here.
    pub const HEADER_LEN: usize = SEALED.end;
    /// Length of the CRC-32 trailer.
    pub const CRC_LEN: usize = 4;

    /// The header as `(name, bytes, type, meaning)`, in file order; the
    /// source of the header table in `docs/format.md`.
    pub const FIELDS: &[(&str, Field, &str, &str)] = &[
        ("magic", MAGIC, "[u8; 4]", "`52 4B 53 54` (`RKST`)"),
        ("format_major", FORMAT_MAJOR..FORMAT_MAJOR + 1, "u8", "statistics format major version (1)"),
        ("format_minor", FORMAT_MINOR..FORMAT_MINOR + 1, "u8", "statistics format minor version (2)"),
        (
            "content",
            CONTENT,
            "u16",
            "0 rows and their queries, 1 explicit preference pairs (1.2; zero in 1.0 and 1.1 files)",
        ),
        ("d", DIM, "u32", "feature dimension, ≥ 1"),
        ("query_weight", QUERY_WEIGHT..QUERY_WEIGHT + 1, "u8", "1 equal, 2 pairs"),
        ("feature_map", FEATURE_MAP..FEATURE_MAP + 1, "u8", "1 linear, 2 Nyström (a map section follows the header)"),
        ("folds", FOLDS, "u16", "cross-validation folds K ≥ 1"),
        ("seed", SEED, "u64", "fold seed"),
        (
            "map_hash",
            MAP_HASH,
            "u64",
            "identity of the feature map: 0 for linear, FNV-1a 64 of the map section for Nyström",
        ),
        ("queries", QUERIES, "u64", "number of query records Q"),
        ("total_len", TOTAL_LEN, "u64", "file length in bytes, checksum included"),
        ("sealed_queries", SEALED, "u64", "number of sealed query ids S"),
    ];
}

/// What a statistics file sums: rows (and their queries), or explicit
/// preference pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StatsContent {
    /// Rows with labels and query ids: the records of
    /// [`crate::learn::ls_stats`] (totals, sealed and open queries).
    #[default]
    Rows,
    /// Explicit preference pairs `winner ≻ loser` with magnitude `m`: the
    /// total records are those of the difference rows
    /// `x_winner − x_loser` with label `m` (so `Σxxᵀ = XᵀDᵀDX` and
    /// `Σxy = XᵀDᵀm`, the normal equations of `‖DXw − m‖²`, 000 eq. 5 with
    /// the pair Laplacian `L = DᵀD`); no query records, no sealed
    /// queries.
    Pairs,
}

impl StatsContent {
    /// Its header code.
    pub const fn code(self) -> u16 {
        match self {
            StatsContent::Rows => 0,
            StatsContent::Pairs => 1,
        }
    }

    /// The content of a header code.
    pub const fn from_code(c: u16) -> Option<StatsContent> {
        match c {
            0 => Some(StatsContent::Rows),
            1 => Some(StatsContent::Pairs),
            _ => None,
        }
    }
}

/// The feature map the statistics were computed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FeatureMap {
    /// The raw features.
    Linear,
    /// Nyström features `φ(x) = L⁻¹k_m(x)` of `m = d` landmarks
    /// (`K_mm = LLᵀ`), described by the map section ([`NystromMap`]).
    Nystrom,
}

impl FeatureMap {
    /// Its header code.
    pub const fn code(self) -> u8 {
        match self {
            FeatureMap::Linear => 1,
            FeatureMap::Nystrom => 2,
        }
    }

    /// The map of a header code.
    pub const fn from_code(c: u8) -> Option<FeatureMap> {
        match c {
            1 => Some(FeatureMap::Linear),
            2 => Some(FeatureMap::Nystrom),
            _ => None,
        }
    }

    /// Its name in messages.
    pub const fn name(self) -> &'static str {
        match self {
            FeatureMap::Linear => "linear",
            FeatureMap::Nystrom => "nystrom",
        }
    }
}

/// The map section of Nyström statistics (after the header, before the
/// payload): the kernel, the input dimension `p`, the `m = d` landmark rows
/// and the factor `L` of `K_mm = LLᵀ` (lower triangular, positive
/// diagonal; in the landmarks' order), so that every shard maps its rows by
/// the very same `φ(x) = L⁻¹k_m(x)`.
pub mod map_field {
    use super::super::field::Field;

    /// Kernel code (`u8`), as the model format's `KERNEL` section.
    pub const KERNEL: usize = 0;
    /// Polynomial degree (`u8`), 0 otherwise.
    pub const DEGREE: usize = 1;
    /// Reserved, zero.
    pub const RESERVED: Field = 2..8;
    /// γ (`f64`), 0 for linear.
    pub const GAMMA: Field = 8..16;
    /// Polynomial offset c (`f64`), 0 otherwise.
    pub const COEF0: Field = 16..24;
    /// Input dimension `p ≥ 1` of the landmark rows (`u64`).
    pub const INPUT_DIM: Field = 24..32;
    /// Length of the fixed part; the landmarks (`m × p` f64, row-major)
    /// then `L` (`m(m+1)/2` f64, lower triangle packed by rows) follow.
    pub const FIXED_LEN: usize = INPUT_DIM.end;

    /// The map section as `(name, bytes, type, meaning)`, in file order.
    pub const FIELDS: &[(&str, Field, &str, &str)] = &[
        (
            "kernel",
            KERNEL..KERNEL + 1,
            "u8",
            "kernel code: 1 linear, 2 RBF, 3 polynomial (as the model's `KERNEL` section)",
        ),
        ("degree", DEGREE..DEGREE + 1, "u8", "polynomial degree; 0 otherwise"),
        ("reserved", RESERVED, "[u8; 6]", "zero"),
        ("gamma", GAMMA, "f64", "γ; 0 for linear"),
        ("coef0", COEF0, "f64", "polynomial offset c; 0 otherwise"),
        ("input_dim", INPUT_DIM, "u64", "dimension p ≥ 1 of the rows the map reads"),
    ];
}

/// A Nyström feature map as written: see [`map_field`].
#[derive(Clone, Copy, Debug)]
pub struct NystromMap<'a> {
    /// The kernel.
    pub kernel: Kernel,
    /// Input dimension `p`.
    pub input_dim: usize,
    /// The `m` landmark rows, `m × p` row-major.
    pub landmarks: &'a [f64],
    /// `L`, `m × m` column-major (the lower triangle with the diagonal is
    /// read, as [`crate::learn::nystrom`] builds it).
    pub factor: &'a [f64],
}

/// The map section's length for `m` landmarks of dimension `p` (checked).
fn map_len(m: usize, p: usize) -> Option<usize> {
    let vals = m.checked_mul(p)?.checked_add(StatsShape::packed_len_checked(m)?)?;
    vals.checked_mul(8)?.checked_add(map_field::FIXED_LEN)
}

/// FNV-1a (64-bit) of `bytes`: the fingerprint of a map section.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

impl NystromMap<'_> {
    /// Bytes of the map section of `m` landmarks (`None` on overflow).
    pub fn section_len(&self, m: usize) -> Option<usize> {
        map_len(m, self.input_dim)
    }

    /// Writes the map section of `m` landmarks into `out` (exactly
    /// [`Self::section_len`] bytes), after checking it (nothing is written
    /// on error); returns its fingerprint, the header's `map_hash`.
    ///
    /// # Errors
    /// Sizes ([`StatsFileError::BadDimensions`]), a kernel outside its
    /// domain ([`StatsFileError::BadHeader`]), a non-finite value or a
    /// diagonal entry of `L` not positive ([`StatsFileError::BadValue`]).
    pub fn emit(&self, m: usize, out: &mut [u8]) -> Result<u64, StatsFileError> {
        let p = self.input_dim;
        if p == 0 || self.landmarks.len() != m.checked_mul(p).ok_or(StatsFileError::BadDimensions)? {
            return Err(StatsFileError::BadDimensions);
        }
        if self.factor.len() != m * m || map_len(m, p) != Some(out.len()) {
            return Err(StatsFileError::BadDimensions);
        }
        self.kernel.check().map_err(|_| StatsFileError::BadHeader)?;
        let lower = |i: usize, j: usize| self.factor[j * m + i];
        let diag_ok = (0..m).all(|i| lower(i, i) > 0.0);
        let finite =
            self.landmarks.iter().all(|v| v.is_finite()) && (0..m).all(|i| (0..=i).all(|j| lower(i, j).is_finite()));
        if !diag_ok || !finite {
            return Err(StatsFileError::BadValue);
        }
        out[..map_field::FIXED_LEN].fill(0);
        let (g, c, deg) = self.kernel.raw();
        out[map_field::KERNEL] = self.kernel.code();
        out[map_field::DEGREE] = deg;
        out[map_field::GAMMA].copy_from_slice(&g.to_le_bytes());
        out[map_field::COEF0].copy_from_slice(&c.to_le_bytes());
        out[map_field::INPUT_DIM].copy_from_slice(&(p as u64).to_le_bytes());
        let body = &mut out[map_field::FIXED_LEN..];
        let vals = self.landmarks.iter().copied().chain((0..m).flat_map(|i| (0..=i).map(move |j| lower(i, j))));
        for (chunk, v) in body.chunks_exact_mut(8).zip(vals) {
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        Ok(fnv1a64(out))
    }
}

/// A validated map section (see [`map_field`]).
#[derive(Clone, Copy, Debug)]
pub struct NystromView<'a> {
    kernel: Kernel,
    input_dim: usize,
    m: usize,
    landmarks: Array<'a>,
    factor: Array<'a>,
}

impl<'a> NystromView<'a> {
    /// Checks a map section of `m` landmarks occupying all of `bytes`.
    fn new_checked(bytes: &'a [u8], m: usize) -> Result<NystromView<'a>, StatsFileError> {
        let byte = |at: usize| bytes.get(at).copied().unwrap_or(0);
        let f64_at = |at: usize| super::array::le_f64(bytes, at).unwrap_or(f64::NAN);
        let reserved_zero = bytes.get(map_field::RESERVED).is_some_and(|r| r.iter().all(|&b| b == 0));
        let kernel = Kernel::from_raw(
            byte(map_field::KERNEL),
            f64_at(map_field::GAMMA.start),
            f64_at(map_field::COEF0.start),
            byte(map_field::DEGREE),
        )
        .map_err(|_| StatsFileError::BadHeader)?;
        let p = usize::try_from(le_u64(bytes, map_field::INPUT_DIM.start).unwrap_or(0))
            .map_err(|_| StatsFileError::BadDimensions)?;
        if !reserved_zero || p == 0 {
            return Err(StatsFileError::BadHeader);
        }
        if map_len(m, p) != Some(bytes.len()) {
            return Err(StatsFileError::BadDimensions);
        }
        let split = map_field::FIXED_LEN + 8 * m * p;
        let landmarks = Array::new(&bytes[map_field::FIXED_LEN..split], ElementType::F64);
        let factor = Array::new(&bytes[split..], ElementType::F64);
        let diag_ok = (0..m).all(|i| factor.at(i * (i + 1) / 2 + i) > 0.0);
        if !landmarks.iter().all(f64::is_finite) || !factor.iter().all(f64::is_finite) || !diag_ok {
            return Err(StatsFileError::BadValue);
        }
        Ok(NystromView { kernel, input_dim: p, m, landmarks, factor })
    }

    /// The kernel.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Input dimension `p`.
    pub fn input_dim(&self) -> usize {
        self.input_dim
    }

    /// Landmarks `m`.
    pub fn landmarks_len(&self) -> usize {
        self.m
    }

    /// The landmark rows (`m × p` row-major).
    pub fn landmarks(&self) -> Array<'a> {
        self.landmarks
    }

    /// `L` (`m(m+1)/2`, lower triangle packed by rows).
    pub fn factor_packed(&self) -> Array<'a> {
        self.factor
    }
}

const fn weight_code(w: QueryWeight) -> u8 {
    match w {
        QueryWeight::Equal => 1,
        QueryWeight::Pairs => 2,
    }
}

/// Why a statistics file was refused, or could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StatsFileError {
    /// Shorter than the header and the checksum.
    TooShort {
        /// Bytes given.
        len: usize,
    },
    /// Not a statistics file.
    BadMagic,
    /// A major version this reader does not know.
    UnsupportedVersion {
        /// The file's version.
        found: Version,
        /// This reader's.
        supported: Version,
    },
    /// The header declares another length than the bytes given.
    BadLength {
        /// Declared.
        declared: u64,
        /// Given.
        got: usize,
    },
    /// The CRC-32 trailer does not match the bytes.
    BadChecksum {
        /// Stored in the file.
        stored: u32,
        /// Computed over the bytes.
        computed: u32,
    },
    /// A reserved field is not zero, or a code (query weighting, feature
    /// map) is unknown, or `d` or `K` is zero.
    BadHeader,
    /// The sizes do not fit, or the arrays do not match them.
    BadDimensions,
    /// The open or the sealed query ids are not strictly increasing, or a
    /// qid is both.
    BadQids,
    /// A statistic is NaN or infinite, a row count is below its minimum
    /// (0 for a fold, 1 for a query), or the sealed records do not count
    /// the sealed qids.
    BadValue,
    /// The output buffer is too small.
    BufferTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes given.
        got: usize,
    },
}

impl fmt::Display for StatsFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            StatsFileError::TooShort { len } => write!(f, "statistics file too short ({len} bytes)"),
            StatsFileError::BadMagic => f.write_str("not a ranklet statistics file (bad magic)"),
            StatsFileError::UnsupportedVersion { found, supported } => {
                write!(f, "unsupported statistics format version {found} (this reader supports {supported})")?;
                if found.major < 2 {
                    // Format 1 held raw sums Σx, Σxxᵀ, which lose digits to
                    // cancellation at real feature scales; 2 holds means and
                    // co-moments. The sums cannot be turned into the latter
                    // without that loss, so such files are refused.
                    f.write_str(
                        ": format 1 stored raw sums, which lose digits at real feature scales; \
                         compute the statistics again with this version",
                    )?;
                }
                Ok(())
            }
            StatsFileError::BadLength { declared, got } => {
                write!(f, "statistics file length: header declares {declared} bytes, {got} given")
            }
            StatsFileError::BadChecksum { stored, computed } => {
                write!(f, "statistics checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")
            }
            StatsFileError::BadHeader => f.write_str("inconsistent statistics header"),
            StatsFileError::BadDimensions => f.write_str("bad or inconsistent statistics dimensions"),
            StatsFileError::BadQids => f.write_str("query ids not strictly increasing"),
            StatsFileError::BadValue => f.write_str("a statistic is NaN, infinite, or a row count out of range"),
            StatsFileError::BufferTooSmall { needed, got } => {
                write!(f, "output buffer too small: {needed} bytes needed, {got} given")
            }
        }
    }
}

impl core::error::Error for StatsFileError {}

/// Byte offsets of the payload's arrays and the file length, from the
/// header values (checked arithmetic).
#[derive(Clone, Copy)]
struct Layout {
    /// Where the payload starts (after the header and the map section).
    totals: usize,
    sealed: usize,
    qids: usize,
    sealed_qids: usize,
    queries: usize,
    end: usize,
}

fn layout(shape: &StatsShape, map: usize, q: usize, sealed: usize) -> Option<Layout> {
    shape.check().ok()?;
    let totals = field::HEADER_LEN.checked_add(map)?;
    let rec = shape.totals_buffer_len().checked_mul(8)?;
    let sealed_at = totals.checked_add(rec)?;
    let qids = sealed_at.checked_add(rec)?;
    let sealed_qids = qids.checked_add(q.checked_mul(8)?)?;
    let queries = sealed_qids.checked_add(sealed.checked_mul(8)?)?;
    let end = queries.checked_add(q.checked_mul(2 * shape.query_len())?.checked_mul(8)?)?;
    Some(Layout { totals, sealed: sealed_at, qids, sealed_qids, queries, end: end.checked_add(field::CRC_LEN)? })
}

/// Strictly increasing `u64`s in `bytes`.
fn increasing(bytes: &[u8]) -> bool {
    let at = |j: usize| le_u64(bytes, 8 * j).unwrap_or(0);
    (1..bytes.len() / 8).all(|j| at(j - 1) < at(j))
}

/// Whether two strictly increasing `u64` arrays share a value.
fn overlap(a: &[u8], b: &[u8]) -> bool {
    let (na, nb) = (a.len() / 8, b.len() / 8);
    let (mut i, mut j) = (0, 0);
    while i < na && j < nb {
        let (x, y) = (le_u64(a, 8 * i).unwrap_or(0), le_u64(b, 8 * j).unwrap_or(0));
        if x == y {
            return true;
        }
        if x < y {
            i += 1;
        } else {
            j += 1;
        }
    }
    false
}

/// Every value of a record buffer finite, and its row counts at least
/// `min` (records of `2·m`).
fn records_ok(a: Array<'_>, m: usize, min: f64) -> bool {
    a.iter().all(f64::is_finite) && (0..a.len() / (2 * m)).all(|r| value_at(a, r * 2 * m, m, N) >= min)
}

fn value_at(a: Array<'_>, start: usize, m: usize, i: usize) -> f64 {
    a.at(start + i) + a.at(start + m + i)
}

/// A validated statistics file (see the [module docs](self)).
#[derive(Clone, Copy, Debug)]
pub struct StatsView<'a> {
    shape: StatsShape,
    seed: u64,
    content: StatsContent,
    map: FeatureMap,
    map_hash: u64,
    nystrom: Option<NystromView<'a>>,
    totals: Array<'a>,
    sealed: Array<'a>,
    qids: &'a [u8],
    sealed_qids: &'a [u8],
    queries: Array<'a>,
}

impl<'a> StatsView<'a> {
    /// Checks `bytes` completely: length, magic, version, declared length,
    /// checksum, header codes, array sizes, qid order, finiteness, row
    /// counts (in that order).
    ///
    /// # Errors
    /// The first failed check's [`StatsFileError`].
    pub fn new_checked(bytes: &'a [u8]) -> Result<StatsView<'a>, StatsFileError> {
        let len = bytes.len();
        if len < field::HEADER_LEN + field::CRC_LEN {
            return Err(StatsFileError::TooShort { len });
        }
        if bytes.get(field::MAGIC) != Some(&STATS_MAGIC[..]) {
            return Err(StatsFileError::BadMagic);
        }
        let byte = |at: usize| bytes.get(at).copied().unwrap_or(0);
        let found = Version { major: byte(field::FORMAT_MAJOR), minor: byte(field::FORMAT_MINOR) };
        if found.major != STATS_VERSION.major {
            return Err(StatsFileError::UnsupportedVersion { found, supported: STATS_VERSION });
        }
        let u64_at = |at: usize| le_u64(bytes, at).unwrap_or(0);
        let declared = u64_at(field::TOTAL_LEN.start);
        if declared != len as u64 {
            return Err(StatsFileError::BadLength { declared, got: len });
        }
        let (body, trailer) = bytes.split_at(len - field::CRC_LEN);
        let stored = le_u32(trailer, 0).unwrap_or(0);
        let computed = crc32(body);
        if stored != computed && super::header::checksum_enforced() {
            return Err(StatsFileError::BadChecksum { stored, computed });
        }
        let weight = match byte(field::QUERY_WEIGHT) {
            1 => QueryWeight::Equal,
            2 => QueryWeight::Pairs,
            _ => return Err(StatsFileError::BadHeader),
        };
        let map = FeatureMap::from_code(byte(field::FEATURE_MAP)).ok_or(StatsFileError::BadHeader)?;
        let map_hash = u64_at(field::MAP_HASH.start);
        let d = le_u32(bytes, field::DIM.start).unwrap_or(0) as usize;
        let folds = le_u16(bytes, field::FOLDS.start).unwrap_or(0) as usize;
        let linear = map == FeatureMap::Linear;
        let content = le_u16(bytes, field::CONTENT.start).and_then(StatsContent::from_code);
        let Some(content) = content.filter(|_| d != 0 && folds != 0 && !(linear && map_hash != 0)) else {
            return Err(StatsFileError::BadHeader);
        };
        let shape = StatsShape { d, folds, weight };
        let q = usize::try_from(u64_at(field::QUERIES.start)).map_err(|_| StatsFileError::BadDimensions)?;
        let ns = usize::try_from(u64_at(field::SEALED.start)).map_err(|_| StatsFileError::BadDimensions)?;
        if content == StatsContent::Pairs && (q != 0 || ns != 0) {
            return Err(StatsFileError::BadHeader);
        }
        let part = |a: usize, b: usize| bytes.get(a..b).ok_or(StatsFileError::BadDimensions);
        // The map section: its input dimension sits at a fixed place, and
        // with `m = d` it gives the section's length.
        let (map_bytes, nystrom) = if linear {
            (0, None)
        } else {
            let at = field::HEADER_LEN;
            let p =
                usize::try_from(u64_at(at + map_field::INPUT_DIM.start)).map_err(|_| StatsFileError::BadDimensions)?;
            let ml = map_len(d, p).ok_or(StatsFileError::BadDimensions)?;
            let sect = part(at, at.checked_add(ml).ok_or(StatsFileError::BadDimensions)?)?;
            if fnv1a64(sect) != map_hash {
                return Err(StatsFileError::BadHeader);
            }
            (ml, Some(NystromView::new_checked(sect, d)?))
        };
        let l = layout(&shape, map_bytes, q, ns).ok_or(StatsFileError::BadDimensions)?;
        if l.end != len {
            return Err(StatsFileError::BadDimensions);
        }
        let (qids, sealed_qids) = (part(l.qids, l.sealed_qids)?, part(l.sealed_qids, l.queries)?);
        if !increasing(qids) || !increasing(sealed_qids) || overlap(qids, sealed_qids) {
            return Err(StatsFileError::BadQids);
        }
        let f64s = |a: usize, b: usize| part(a, b).map(|b| Array::new(b, ElementType::F64));
        let totals = f64s(l.totals, l.sealed)?;
        let sealed = f64s(l.sealed, l.qids)?;
        let queries = f64s(l.queries, len - field::CRC_LEN)?;
        let mt = shape.total_len();
        let sealed_count: f64 = (0..folds).map(|k| value_at(sealed, k * 2 * mt, mt, N)).sum();
        if !records_ok(totals, mt, 0.0)
            || !records_ok(sealed, mt, 0.0)
            || !records_ok(queries, shape.query_len(), 1.0)
            || sealed_count != ns as f64
        {
            return Err(StatsFileError::BadValue);
        }
        let seed = u64_at(field::SEED.start);
        Ok(StatsView { shape, seed, content, map, map_hash, nystrom, totals, sealed, qids, sealed_qids, queries })
    }

    /// Dimension, folds and query weighting.
    pub fn shape(&self) -> StatsShape {
        self.shape
    }

    /// The fold seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// What the statistics sum: rows, or explicit pairs.
    pub fn content(&self) -> StatsContent {
        self.content
    }

    /// The feature map and the identity of its parameters.
    pub fn feature_map(&self) -> (FeatureMap, u64) {
        (self.map, self.map_hash)
    }

    /// The Nyström map section (`None` for linear statistics).
    pub fn nystrom(&self) -> Option<NystromView<'a>> {
        self.nystrom
    }

    /// The `K` total records (`K·2·total_len` values).
    pub fn totals(&self) -> Array<'a> {
        self.totals
    }

    /// The `K` sealed records (`K·2·total_len` values).
    pub fn sealed(&self) -> Array<'a> {
        self.sealed
    }

    /// Number of sealed queries.
    pub fn n_sealed(&self) -> usize {
        self.sealed_qids.len() / 8
    }

    /// Sealed query id `j` (0 past the end).
    pub fn sealed_qid(&self, j: usize) -> u64 {
        j.checked_mul(8).and_then(|at| le_u64(self.sealed_qids, at)).unwrap_or(0)
    }

    /// Number of query records.
    pub fn n_queries(&self) -> usize {
        self.qids.len() / 8
    }

    /// Query id `j` (0 past the end).
    pub fn qid(&self, j: usize) -> u64 {
        j.checked_mul(8).and_then(|at| le_u64(self.qids, at)).unwrap_or(0)
    }

    /// The query records (`Q·2·query_len` values), in qid order.
    pub fn queries(&self) -> Array<'a> {
        self.queries
    }

    /// Rows: the sum of the folds' row counts.
    pub fn rows(&self) -> f64 {
        let m = self.shape.total_len();
        (0..self.shape.folds).map(|k| value_at(self.totals, k * 2 * m, m, N)).sum()
    }
}

/// Statistics to write: what [`StatsView`] reads back.
#[derive(Clone, Copy, Debug)]
pub struct StatsFile<'a> {
    /// The statistics.
    pub stats: StatsRef<'a>,
    /// Sealed query ids, strictly increasing, none in `stats.qids`.
    pub sealed_qids: &'a [u64],
    /// What the statistics sum ([`StatsContent::Pairs`]: no query
    /// records and no sealed queries).
    pub content: StatsContent,
    /// The feature map.
    pub map: FeatureMap,
    /// Its section: `Some` exactly for [`FeatureMap::Nystrom`], with
    /// `m = stats.shape.d` landmarks.
    pub nystrom: Option<NystromMap<'a>>,
}

impl StatsFile<'_> {
    /// Bytes of the map section.
    fn map_bytes(&self) -> Result<usize, StatsFileError> {
        match (self.map, &self.nystrom) {
            (FeatureMap::Linear, None) => Ok(0),
            (FeatureMap::Nystrom, Some(m)) => {
                map_len(self.stats.shape.d, m.input_dim).ok_or(StatsFileError::BadDimensions)
            }
            _ => Err(StatsFileError::BadHeader),
        }
    }

    /// Bytes of the file ([`StatsFileError::BadDimensions`] if the sizes
    /// overflow).
    pub fn buffer_len(&self) -> Result<usize, StatsFileError> {
        layout(&self.stats.shape, self.map_bytes()?, self.stats.qids.len(), self.sealed_qids.len())
            .map(|l| l.end)
            .ok_or(StatsFileError::BadDimensions)
    }

    /// Writes the file into `out[..buffer_len]`, returning its length.
    /// Everything is checked first, so on error nothing is written.
    ///
    /// # Errors
    /// Sizes that do not match the shape, qids out of order, a non-finite
    /// value or a row count out of range, a short buffer.
    pub fn emit(&self, out: &mut [u8]) -> Result<usize, StatsFileError> {
        let StatsRef { shape, seed, totals, sealed, qids, queries } = self.stats;
        let s = &shape;
        let map_bytes = self.map_bytes()?;
        let l = layout(s, map_bytes, qids.len(), self.sealed_qids.len()).ok_or(StatsFileError::BadDimensions)?;
        let end = l.end;
        let (mt, mq) = (s.total_len(), s.query_len());
        if totals.len() != s.totals_buffer_len()
            || sealed.len() != s.totals_buffer_len()
            || queries.len() != qids.len() * 2 * mq
            || s.d > u32::MAX as usize
            || s.folds > u16::MAX as usize
        {
            return Err(StatsFileError::BadDimensions);
        }
        let up = |v: &[u64]| v.windows(2).all(|w| w[0] < w[1]);
        if !up(qids) || !up(self.sealed_qids) || self.sealed_qids.iter().any(|q| qids.binary_search(q).is_ok()) {
            return Err(StatsFileError::BadQids);
        }
        if self.content == StatsContent::Pairs && (!qids.is_empty() || !self.sealed_qids.is_empty()) {
            return Err(StatsFileError::BadHeader);
        }
        let counts_ok = |buf: &[f64], m: usize, min: f64| buf.chunks_exact(2 * m).all(|r| value(r, N) >= min);
        let sealed_count: f64 = sealed.chunks_exact(2 * mt).map(|r| value(r, N)).sum();
        if totals.iter().chain(sealed).chain(queries).any(|v| !v.is_finite())
            || !counts_ok(totals, mt, 0.0)
            || !counts_ok(sealed, mt, 0.0)
            || !counts_ok(queries, mq, 1.0)
            || sealed_count != self.sealed_qids.len() as f64
        {
            return Err(StatsFileError::BadValue);
        }
        if out.len() < end {
            return Err(StatsFileError::BufferTooSmall { needed: end, got: out.len() });
        }
        let out = &mut out[..end];
        // The map section first: it is checked as it is written, and an
        // error leaves the header unwritten (not a file).
        let map_hash = match &self.nystrom {
            Some(m) => m.emit(s.d, &mut out[field::HEADER_LEN..l.totals])?,
            None => 0,
        };
        out[..field::HEADER_LEN].fill(0);
        out[field::MAP_HASH].copy_from_slice(&map_hash.to_le_bytes());
        out[field::MAGIC].copy_from_slice(&STATS_MAGIC);
        out[field::FORMAT_MAJOR] = STATS_VERSION.major;
        out[field::FORMAT_MINOR] = STATS_VERSION.minor;
        out[field::CONTENT].copy_from_slice(&self.content.code().to_le_bytes());
        out[field::DIM].copy_from_slice(&(s.d as u32).to_le_bytes());
        out[field::QUERY_WEIGHT] = weight_code(s.weight);
        out[field::FEATURE_MAP] = self.map.code();
        out[field::FOLDS].copy_from_slice(&(s.folds as u16).to_le_bytes());
        out[field::SEED].copy_from_slice(&seed.to_le_bytes());
        out[field::QUERIES].copy_from_slice(&(qids.len() as u64).to_le_bytes());
        out[field::TOTAL_LEN].copy_from_slice(&(end as u64).to_le_bytes());
        out[field::SEALED].copy_from_slice(&(self.sealed_qids.len() as u64).to_le_bytes());
        let put = |dst: &mut [u8], vals: &mut dyn Iterator<Item = [u8; 8]>| {
            for (c, v) in dst.chunks_exact_mut(8).zip(vals) {
                c.copy_from_slice(&v);
            }
        };
        put(&mut out[l.totals..l.sealed], &mut totals.iter().map(|v| v.to_le_bytes()));
        put(&mut out[l.sealed..l.qids], &mut sealed.iter().map(|v| v.to_le_bytes()));
        put(&mut out[l.qids..l.sealed_qids], &mut qids.iter().map(|v| v.to_le_bytes()));
        put(&mut out[l.sealed_qids..l.queries], &mut self.sealed_qids.iter().map(|v| v.to_le_bytes()));
        put(&mut out[l.queries..end - field::CRC_LEN], &mut queries.iter().map(|v| v.to_le_bytes()));
        let crc = crc32(&out[..end - field::CRC_LEN]);
        out[end - field::CRC_LEN..].copy_from_slice(&crc.to_le_bytes());
        Ok(end)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec;

    use super::*;
    use crate::learn::ls_stats::add_values;

    /// Pair statistics (format 1.2): the content code round-trips; query
    /// records or sealed queries with it are refused by the writer and the
    /// reader (with the checksum patched, the header check answers); an
    /// unknown content code is refused; a 1.1 file (content zero, minor 1)
    /// still reads as rows.
    #[test]
    fn pair_content_round_trips_and_carries_no_queries() {
        let shape = StatsShape { d: 2, folds: 1, weight: QueryWeight::Equal };
        let mt = shape.total_len();
        let mut totals = vec![0.0; shape.totals_buffer_len()];
        let vals: std::vec::Vec<f64> = (0..mt).map(|i| 1.0 + i as f64).collect();
        add_values(&mut totals, &vals).unwrap();
        let sealed = vec![0.0; shape.totals_buffer_len()];
        let stats = StatsRef { shape, seed: 1, totals: &totals, sealed: &sealed, qids: &[], queries: &[] };
        let f =
            StatsFile { stats, sealed_qids: &[], content: StatsContent::Pairs, map: FeatureMap::Linear, nystrom: None };
        let mut buf = vec![0u8; f.buffer_len().unwrap()];
        f.emit(&mut buf).unwrap();
        assert_eq!(le_u16(&buf, field::CONTENT.start), Some(1));
        assert_eq!(StatsView::new_checked(&buf).unwrap().content(), StatsContent::Pairs);
        let reseal = |b: &mut [u8]| {
            let n = b.len();
            let crc = crc32(&b[..n - field::CRC_LEN]);
            b[n - field::CRC_LEN..].copy_from_slice(&crc.to_le_bytes());
        };
        let mut unknown = buf.clone();
        unknown[field::CONTENT.start] = 2;
        reseal(&mut unknown);
        assert_eq!(StatsView::new_checked(&unknown).unwrap_err(), StatsFileError::BadHeader);
        let mut old = buf.clone();
        old[field::CONTENT.start] = 0;
        old[field::FORMAT_MINOR] = 1;
        reseal(&mut old);
        assert_eq!(StatsView::new_checked(&old).unwrap().content(), StatsContent::Rows);
        let mut qr = vec![0.0; 2 * shape.query_len()];
        add_values(&mut qr, &vals[..shape.query_len()]).unwrap();
        let with_query = StatsFile { stats: StatsRef { qids: &[4], queries: &qr, ..stats }, ..f };
        let mut out = vec![7u8; with_query.buffer_len().unwrap()];
        assert_eq!(with_query.emit(&mut out), Err(StatsFileError::BadHeader));
        assert!(out.iter().all(|&b| b == 7));
        let as_rows = StatsFile { content: StatsContent::Rows, ..with_query };
        as_rows.emit(&mut out).unwrap();
        out[field::CONTENT.start] = 1;
        reseal(&mut out);
        assert_eq!(StatsView::new_checked(&out).unwrap_err(), StatsFileError::BadHeader);
    }

    /// Emit, parse, read back: the same values and header; a flipped byte
    /// anywhere is refused (by the checksum, or before it by the header
    /// checks); truncated, extended, wrong-magic, newer-major, unordered
    /// qids, a NaN and a query without rows are refused each with their
    /// own error; emit refuses bad input and writes nothing.
    #[test]
    fn round_trip_and_refusals() {
        let shape = StatsShape { d: 2, folds: 2, weight: QueryWeight::Pairs };
        let (mt, mq) = (shape.total_len(), shape.query_len());
        let mut totals = vec![0.0; shape.totals_buffer_len()];
        let vals: std::vec::Vec<f64> = (0..mt).map(|i| 1.0 + i as f64 * 0.5).collect();
        add_values(&mut totals[..2 * mt], &vals).unwrap();
        let mut queries = vec![0.0; 2 * 2 * mq];
        add_values(&mut queries[..2 * mq], &vals[..mq]).unwrap();
        add_values(&mut queries[2 * mq..], &vals[..mq]).unwrap();
        queries[mq] = 1e-17; // a compensation
        let qids = [3u64, 90];
        let mut sealed = vec![0.0; shape.totals_buffer_len()];
        add_values(&mut sealed[2 * mt..], &vals).unwrap(); // one sealed query, in fold 1
        let sealed_qids = [50u64];
        let stats = StatsRef { shape, seed: 7, totals: &totals, sealed: &sealed, qids: &qids, queries: &queries };
        let f = StatsFile {
            stats,
            sealed_qids: &sealed_qids,
            content: StatsContent::Rows,
            map: FeatureMap::Linear,
            nystrom: None,
        };
        let n = f.buffer_len().unwrap();
        let mut buf = vec![0u8; n];
        assert_eq!(f.emit(&mut buf), Ok(n));
        let v = StatsView::new_checked(&buf).unwrap();
        assert_eq!((v.shape(), v.seed(), v.feature_map(), v.n_queries()), (shape, 7, (FeatureMap::Linear, 0), 2));
        assert_eq!((v.qid(0), v.qid(1)), (3, 90));
        assert!(v.totals().iter().eq(totals.iter().copied()));
        assert!(v.queries().iter().eq(queries.iter().copied()));
        assert!(v.sealed().iter().eq(sealed.iter().copied()));
        assert_eq!((v.n_sealed(), v.sealed_qid(0)), (1, 50));
        assert_eq!(v.rows(), 1.0);
        for at in 0..n {
            let mut bad = buf.clone();
            bad[at] ^= 0x10;
            assert!(StatsView::new_checked(&bad).is_err(), "byte {at}");
        }
        let mut bad = buf.clone();
        bad[field::HEADER_LEN] ^= 1;
        assert!(matches!(StatsView::new_checked(&bad), Err(StatsFileError::BadChecksum { .. })));
        assert!(matches!(StatsView::new_checked(&buf[..n - 1]), Err(StatsFileError::BadLength { .. })));
        assert!(matches!(StatsView::new_checked(&buf[..10]), Err(StatsFileError::TooShort { len: 10 })));
        let mut longer = buf.clone();
        longer.push(0);
        assert!(matches!(StatsView::new_checked(&longer), Err(StatsFileError::BadLength { .. })));
        let mut magic = buf.clone();
        magic[0] = b'X';
        assert_eq!(StatsView::new_checked(&magic).unwrap_err(), StatsFileError::BadMagic);
        let mut newer = buf.clone();
        newer[field::FORMAT_MAJOR] = STATS_VERSION.major + 1;
        assert!(matches!(StatsView::new_checked(&newer), Err(StatsFileError::UnsupportedVersion { .. })));
        // Format 1 (raw sums) is refused with the reason.
        let mut old = buf.clone();
        old[field::FORMAT_MAJOR] = 1;
        let e = StatsView::new_checked(&old).unwrap_err();
        assert!(matches!(e, StatsFileError::UnsupportedVersion { .. }));
        assert!(std::format!("{e}").contains("raw sums"), "{e}");
        // Rewritten with a valid checksum: the content checks.
        let reseal = |mut b: std::vec::Vec<u8>| {
            let c = crc32(&b[..n - 4]);
            b[n - 4..].copy_from_slice(&c.to_le_bytes());
            b
        };
        let l = layout(&shape, 0, 2, 1).unwrap();
        let (q0, r0) = (l.qids, l.queries);
        let mut order = buf.clone();
        order[q0..q0 + 8].copy_from_slice(&100u64.to_le_bytes());
        assert_eq!(StatsView::new_checked(&reseal(order)).unwrap_err(), StatsFileError::BadQids);
        let mut both = buf.clone();
        both[l.sealed_qids..l.sealed_qids + 8].copy_from_slice(&90u64.to_le_bytes());
        assert_eq!(StatsView::new_checked(&reseal(both)).unwrap_err(), StatsFileError::BadQids);
        let mut nan = buf.clone();
        nan[r0 + 8..r0 + 16].copy_from_slice(&f64::NAN.to_le_bytes());
        assert_eq!(StatsView::new_checked(&reseal(nan)).unwrap_err(), StatsFileError::BadValue);
        let mut empty = buf.clone();
        empty[r0..r0 + 8].copy_from_slice(&0.5f64.to_le_bytes());
        assert_eq!(StatsView::new_checked(&reseal(empty)).unwrap_err(), StatsFileError::BadValue);
        let mut weight = buf.clone();
        weight[field::QUERY_WEIGHT] = 3;
        assert_eq!(StatsView::new_checked(&reseal(weight)).unwrap_err(), StatsFileError::BadHeader);

        let mut out = vec![0xAAu8; n];
        let swapped = [90u64, 3];
        let g = StatsFile { stats: StatsRef { qids: &swapped, ..stats }, ..f };
        assert_eq!(g.emit(&mut out), Err(StatsFileError::BadQids));
        let g = StatsFile { sealed_qids: &[90], ..f };
        assert_eq!(g.emit(&mut out), Err(StatsFileError::BadQids));
        let g = StatsFile { sealed_qids: &[], ..f };
        assert_eq!(g.emit(&mut out), Err(StatsFileError::BadValue));
        let g = StatsFile { stats: StatsRef { queries: &queries[..2 * mq], ..stats }, ..f };
        assert_eq!(g.emit(&mut out), Err(StatsFileError::BadDimensions));
        assert!(matches!(f.emit(&mut out[..n - 1]), Err(StatsFileError::BufferTooSmall { .. })));
        assert!(out.iter().all(|&b| b == 0xAA));
    }

    /// A Nyström file: the map section round-trips (kernel, landmarks, `L`
    /// packed by rows from the column-major lower triangle, its upper part
    /// ignored), the header's `map_hash` is the section's FNV-1a and
    /// changes with any landmark bit; every flipped byte is refused; a
    /// `map_hash` that does not match a (re-checksummed) section is
    /// `BadHeader`; a map that is missing or not positive on `L`'s diagonal
    /// is refused by emit, which writes nothing.
    #[test]
    fn nystrom_map_round_trip_and_refusals() {
        let shape = StatsShape { d: 2, folds: 1, weight: QueryWeight::Equal };
        let mt = shape.total_len();
        let mut totals = vec![0.0; shape.totals_buffer_len()];
        let vals: std::vec::Vec<f64> = (0..mt).map(|i| 2.0 + i as f64).collect();
        add_values(&mut totals, &vals).unwrap();
        let sealed = vec![0.0; shape.totals_buffer_len()];
        let stats = StatsRef { shape, seed: 3, totals: &totals, sealed: &sealed, qids: &[], queries: &[] };
        let landmarks = [0.5, -1.0, 2.0, 0.25, 1.5, 3.0]; // m = 2 rows of p = 3
        let factor = [1.0, 0.5, 99.0, 0.75]; // column-major; 99 above the diagonal, unread
        let kernel = Kernel::Rbf { gamma: 0.3 };
        let map = NystromMap { kernel, input_dim: 3, landmarks: &landmarks, factor: &factor };
        let f = StatsFile {
            stats,
            sealed_qids: &[],
            content: StatsContent::Rows,
            map: FeatureMap::Nystrom,
            nystrom: Some(map),
        };
        let n = f.buffer_len().unwrap();
        assert_eq!(n, field::HEADER_LEN + map_field::FIXED_LEN + 8 * (6 + 3) + 2 * 2 * mt * 8 + 4);
        let mut buf = vec![0u8; n];
        assert_eq!(f.emit(&mut buf), Ok(n));
        let v = StatsView::new_checked(&buf).unwrap();
        let sect = &buf[field::HEADER_LEN..field::HEADER_LEN + map.section_len(2).unwrap()];
        assert_eq!(v.feature_map(), (FeatureMap::Nystrom, fnv1a64(sect)));
        let m = v.nystrom().unwrap();
        assert_eq!((m.kernel(), m.input_dim(), m.landmarks_len()), (kernel, 3, 2));
        assert!(m.landmarks().iter().eq(landmarks.iter().copied()));
        assert!(m.factor_packed().iter().eq([1.0, 0.5, 0.75].into_iter()));
        assert!(v.totals().iter().eq(totals.iter().copied()));
        let other = [0.5, -1.0, 2.0, 0.25, 1.5, 3.0000000000000004];
        let g = StatsFile { nystrom: Some(NystromMap { landmarks: &other, ..map }), ..f };
        let mut buf2 = vec![0u8; n];
        g.emit(&mut buf2).unwrap();
        assert_ne!(StatsView::new_checked(&buf2).unwrap().feature_map().1, v.feature_map().1);
        for at in 0..n {
            let mut bad = buf.clone();
            bad[at] ^= 0x01;
            assert!(StatsView::new_checked(&bad).is_err(), "byte {at}");
        }
        let mut hash = buf.clone();
        hash[field::MAP_HASH.start] ^= 1;
        let c = crc32(&hash[..n - 4]);
        hash[n - 4..].copy_from_slice(&c.to_le_bytes());
        assert_eq!(StatsView::new_checked(&hash).unwrap_err(), StatsFileError::BadHeader);
        let mut out = vec![0xAAu8; n];
        let zero_diag = [1.0, 0.5, 0.0, 0.0];
        let h = StatsFile { nystrom: Some(NystromMap { factor: &zero_diag, ..map }), ..f };
        assert_eq!(h.emit(&mut out), Err(StatsFileError::BadValue));
        let h = StatsFile { nystrom: None, ..f };
        assert_eq!(h.emit(&mut out), Err(StatsFileError::BadHeader));
        let h = StatsFile { nystrom: Some(NystromMap { kernel: Kernel::Rbf { gamma: -1.0 }, ..map }), ..f };
        assert_eq!(h.emit(&mut out), Err(StatsFileError::BadHeader));
        assert!(out.iter().all(|&b| b == 0xAA));
    }
}
