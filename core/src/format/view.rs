//! The parser: [`ModelView`], validated once, then read without checks.

use super::array::{le_f64, le_u16, le_u32};
use super::crc32::crc32;
use super::field;
use super::section_id as sid;
use super::{
    Array, ElementType, FormatError, Kernel, ModelKind, U32Array, Version, FORMAT_VERSION, MAGIC, STORAGE_DENSE,
    STORAGE_SPARSE,
};

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
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Body<'a> {
    Linear(LinearView<'a>),
    Kernel(KernelView<'a>),
}

/// The parameters of a linear model.
#[derive(Clone, Copy, Debug)]
pub struct LinearView<'a> {
    pub(crate) offset: f64,
    pub(crate) weights: Array<'a>,
}

impl<'a> LinearView<'a> {
    /// Offset (bias) `b`.
    pub fn offset(&self) -> f64 {
        self.offset
    }

    /// Weights `w` (d elements).
    pub fn weights(&self) -> Array<'a> {
        self.weights
    }
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

/// Whether a checksum mismatch is an error: always, except under
/// `cfg(fuzzing)` (see the module's `# Fuzzing` section).
#[allow(unexpected_cfgs)]
const fn checksum_enforced() -> bool {
    !cfg!(fuzzing)
}

const MAX_KNOWN_ID: usize = sid::KERNEL_CENTRING as usize;

fn all_finite(a: Array<'_>) -> Result<(), FormatError> {
    if a.iter().all(f64::is_finite) {
        Ok(())
    } else {
        Err(FormatError::NonFinite)
    }
}

fn finite(x: f64) -> Result<f64, FormatError> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(FormatError::NonFinite)
    }
}

/// `count × size`, or `BadDimensions` on overflow.
fn bytes_for(count: usize, size: usize) -> Result<usize, FormatError> {
    count.checked_mul(size).ok_or(FormatError::BadDimensions)
}

fn expect_len(sec: &[u8], len: usize, id: u16) -> Result<(), FormatError> {
    if sec.len() == len {
        Ok(())
    } else {
        Err(FormatError::BadSection { id })
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
    /// In the order the checks run: [`FormatError::TooShort`],
    /// [`FormatError::BadMagic`], [`FormatError::UnsupportedVersion`] (major
    /// version not 1), [`FormatError::ReaderTooOld`],
    /// [`FormatError::BadHeader`], [`FormatError::Truncated`] /
    /// [`FormatError::TrailingBytes`], [`FormatError::BadChecksum`],
    /// [`FormatError::BadKind`], [`FormatError::BadElementType`],
    /// [`FormatError::BadDimensions`], [`FormatError::BadSectionTable`],
    /// [`FormatError::BadSection`], [`FormatError::UnknownRequiredSection`],
    /// [`FormatError::MissingSection`], [`FormatError::BadMetadata`],
    /// [`FormatError::NonFinite`], [`FormatError::BadScale`],
    /// [`FormatError::BadKernel`], [`FormatError::BadSparseIndex`].
    ///
    /// # Fuzzing
    ///
    /// Under `cfg(fuzzing)` a checksum mismatch is ignored.
    pub fn new_checked(bytes: &'a [u8]) -> Result<Self, FormatError> {
        let len = bytes.len();
        if len < field::HEADER_LEN + field::CRC_LEN {
            return Err(FormatError::TooShort { len });
        }
        let byte = |at: usize| bytes.get(at).copied().unwrap_or(0);
        let u16_at = |at: usize| le_u16(bytes, at).unwrap_or(0);
        let u32_at = |at: usize| le_u32(bytes, at).unwrap_or(0);

        if bytes.get(field::MAGIC) != Some(&MAGIC[..]) {
            return Err(FormatError::BadMagic);
        }
        let version = Version { major: byte(field::FORMAT_MAJOR), minor: byte(field::FORMAT_MINOR) };
        if version.major != FORMAT_VERSION.major {
            return Err(FormatError::UnsupportedVersion { found: version, supported: FORMAT_VERSION });
        }
        let min_reader = Version { major: byte(field::MIN_READER_MAJOR), minor: byte(field::MIN_READER_MINOR) };
        if min_reader > FORMAT_VERSION {
            return Err(FormatError::ReaderTooOld { required: min_reader, supported: FORMAT_VERSION });
        }
        if min_reader > version || min_reader.major != version.major {
            return Err(FormatError::BadHeader);
        }
        let declared = u32_at(field::TOTAL_LEN.start) as usize;
        if len < declared {
            return Err(FormatError::Truncated { declared, got: len });
        }
        if len > declared {
            return Err(FormatError::TrailingBytes { declared, got: len });
        }
        let crc_start = len - field::CRC_LEN;
        let (body, trailer) = bytes.split_at(crc_start);
        let stored = le_u32(trailer, 0).unwrap_or(0);
        let computed = crc32(body);
        if stored != computed && checksum_enforced() {
            return Err(FormatError::BadChecksum { stored, computed });
        }

        if u16_at(field::RESERVED.start) != 0 {
            return Err(FormatError::BadHeader);
        }
        let kind_code = byte(field::KIND);
        let kind = ModelKind::from_code(kind_code).ok_or(FormatError::BadKind { code: kind_code })?;
        let elem_code = byte(field::ELEMENT_TYPE);
        let elem = ElementType::from_code(elem_code).ok_or(FormatError::BadElementType { code: elem_code })?;
        let dim = usize::try_from(u32_at(field::DIM.start)).map_err(|_| FormatError::BadDimensions)?;
        if dim == 0 {
            return Err(FormatError::BadDimensions);
        }
        let producer = [
            u16_at(field::PRODUCER_MAJOR.start),
            u16_at(field::PRODUCER_MINOR.start),
            u16_at(field::PRODUCER_PATCH.start),
        ];

        // Section table.
        let count = u16_at(field::SECTION_COUNT.start) as usize;
        let table_end = count
            .checked_mul(field::section::ENTRY_LEN)
            .and_then(|t| t.checked_add(field::HEADER_LEN))
            .ok_or(FormatError::BadSectionTable)?;
        if table_end > crc_start {
            return Err(FormatError::BadSectionTable);
        }
        let mut found: [Option<&'a [u8]>; MAX_KNOWN_ID + 1] = [None; MAX_KNOWN_ID + 1];
        let mut prev_end = table_end;
        for e in 0..count {
            let at = field::HEADER_LEN + e * field::section::ENTRY_LEN;
            let id = u16_at(at + field::section::ID.start);
            let flags = u16_at(at + field::section::FLAGS.start);
            let off = u32_at(at + field::section::OFFSET.start) as usize;
            let slen = u32_at(at + field::section::LEN.start) as usize;
            let end = off.checked_add(slen).ok_or(FormatError::BadSectionTable)?;
            if off < prev_end || end > crc_start {
                return Err(FormatError::BadSectionTable);
            }
            prev_end = end;
            if flags & !field::section::FLAG_REQUIRED != 0 {
                return Err(FormatError::BadSection { id });
            }
            let required = flags & field::section::FLAG_REQUIRED != 0;
            match sid::known_required(id) {
                None if required => return Err(FormatError::UnknownRequiredSection { id }),
                None => continue,
                Some(r) if r != required => return Err(FormatError::BadSection { id }),
                Some(_) => {}
            }
            let slot = found.get_mut(id as usize).ok_or(FormatError::BadSection { id })?;
            if slot.is_some() {
                return Err(FormatError::BadSection { id });
            }
            *slot = bytes.get(off..end);
        }
        let section = |id: u16| found.get(id as usize).copied().flatten();
        let require = |id: u16| section(id).ok_or(FormatError::MissingSection { id });
        let forbid = |id: u16| if section(id).is_some() { Err(FormatError::BadSection { id }) } else { Ok(()) };

        let metadata = match section(sid::META) {
            Some(m) => core::str::from_utf8(m).map_err(|_| FormatError::BadMetadata)?,
            None => "",
        };

        let es = elem.size();
        let d_bytes = bytes_for(dim, es)?;
        let centring = match section(sid::FEATURE_CENTRING) {
            None => None,
            Some(sec) => {
                expect_len(sec, bytes_for(d_bytes, 2)?, sid::FEATURE_CENTRING)?;
                let (mean, scale) = sec.split_at(d_bytes);
                let (mean, scale) = (Array::new(mean, elem), Array::new(scale, elem));
                all_finite(mean)?;
                all_finite(scale)?;
                if scale.iter().any(|s| s == 0.0) {
                    return Err(FormatError::BadScale);
                }
                Some((mean, scale))
            }
        };

        let body = match kind {
            ModelKind::Linear => {
                for id in [sid::KERNEL, sid::BASIS_DENSE, sid::BASIS_SPARSE, sid::COEFFS, sid::KERNEL_CENTRING] {
                    forbid(id)?;
                }
                let sec = require(sid::LINEAR)?;
                let w_at = field::linear::WEIGHTS;
                expect_len(sec, w_at.checked_add(d_bytes).ok_or(FormatError::BadDimensions)?, sid::LINEAR)?;
                let offset = finite(le_f64(sec, field::linear::OFFSET.start).unwrap_or(f64::NAN))?;
                let weights = Array::new(sec.get(w_at..).unwrap_or(&[]), elem);
                all_finite(weights)?;
                Body::Linear(LinearView { offset, weights })
            }
            ModelKind::KernelExpansion => {
                forbid(sid::LINEAR)?;
                let ks = require(sid::KERNEL)?;
                expect_len(ks, field::kernel::LEN, sid::KERNEL)?;
                let kb = |at: usize| ks.get(at).copied().unwrap_or(0);
                if kb(field::kernel::RESERVED) != 0 {
                    return Err(FormatError::BadSection { id: sid::KERNEL });
                }
                let rows = usize::try_from(le_u32(ks, field::kernel::ROWS.start).unwrap_or(0))
                    .map_err(|_| FormatError::BadDimensions)?;
                if rows == 0 {
                    return Err(FormatError::BadDimensions);
                }
                let gamma = le_f64(ks, field::kernel::GAMMA.start).unwrap_or(f64::NAN);
                let coef0 = le_f64(ks, field::kernel::COEF0.start).unwrap_or(f64::NAN);
                let degree = kb(field::kernel::DEGREE);
                let kernel = Kernel::from_raw(kb(field::kernel::KERNEL), gamma, coef0, degree)?;
                let (g, c, dg) = kernel.raw();
                if g.to_bits() != gamma.to_bits() || c.to_bits() != coef0.to_bits() || dg != degree {
                    return Err(FormatError::BadKernel);
                }
                let offset = finite(le_f64(ks, field::kernel::OFFSET.start).unwrap_or(f64::NAN))?;

                let m_bytes = bytes_for(rows, es)?;
                let cs = require(sid::COEFFS)?;
                expect_len(cs, m_bytes, sid::COEFFS)?;
                let coeffs = Array::new(cs, elem);
                all_finite(coeffs)?;

                let basis = match kb(field::kernel::STORAGE) {
                    STORAGE_DENSE => {
                        forbid(sid::BASIS_SPARSE)?;
                        let bs = require(sid::BASIS_DENSE)?;
                        expect_len(bs, bytes_for(rows, d_bytes)?, sid::BASIS_DENSE)?;
                        let a = Array::new(bs, elem);
                        all_finite(a)?;
                        BasisView::Dense(a)
                    }
                    STORAGE_SPARSE => {
                        forbid(sid::BASIS_DENSE)?;
                        let bs = require(sid::BASIS_SPARSE)?;
                        check_csr(bs, rows, dim, elem)?
                    }
                    _ => return Err(FormatError::BadSection { id: sid::KERNEL }),
                };

                let kc = match section(sid::KERNEL_CENTRING) {
                    None => None,
                    Some(sec) => {
                        let at = field::kernel_centring::COL_MEANS;
                        expect_len(
                            sec,
                            at.checked_add(m_bytes).ok_or(FormatError::BadDimensions)?,
                            sid::KERNEL_CENTRING,
                        )?;
                        let grand_mean =
                            finite(le_f64(sec, field::kernel_centring::GRAND_MEAN.start).unwrap_or(f64::NAN))?;
                        let col_means = Array::new(sec.get(at..).unwrap_or(&[]), elem);
                        all_finite(col_means)?;
                        Some(KernelCentringView { grand_mean, col_means })
                    }
                };
                Body::Kernel(KernelView { kernel, offset, rows, coeffs, basis, centring: kc })
            }
        };

        Ok(ModelView { bytes, version, min_reader, producer, kind, elem, dim, metadata, centring, body })
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

    /// The linear model's parameters, if this is a linear model.
    pub fn linear(&self) -> Option<LinearView<'a>> {
        match self.body {
            Body::Linear(l) => Some(l),
            Body::Kernel(_) => None,
        }
    }

    /// The kernel expansion's parameters, if this is one.
    pub fn kernel(&self) -> Option<KernelView<'a>> {
        match self.body {
            Body::Kernel(k) => Some(k),
            Body::Linear(_) => None,
        }
    }
}

/// Validates a sparse basis section and splits it.
fn check_csr<'a>(sec: &'a [u8], rows: usize, dim: usize, elem: ElementType) -> Result<BasisView<'a>, FormatError> {
    let id = sid::BASIS_SPARSE;
    let ptr_bytes = rows.checked_add(1).and_then(|r| r.checked_mul(4)).ok_or(FormatError::BadDimensions)?;
    let (ptr, rest) = sec.split_at_checked(ptr_bytes).ok_or(FormatError::BadSection { id })?;
    let row_ptr = U32Array::new(ptr);
    let nnz = row_ptr.get(rows).ok_or(FormatError::BadSection { id })? as usize;
    let idx_bytes = bytes_for(nnz, 4)?;
    let val_bytes = bytes_for(nnz, elem.size())?;
    expect_len(rest, idx_bytes.checked_add(val_bytes).ok_or(FormatError::BadDimensions)?, id)?;
    let (idx, vals) = rest.split_at(idx_bytes);
    let indices = U32Array::new(idx);
    let values = Array::new(vals, elem);
    if row_ptr.get(0) != Some(0) {
        return Err(FormatError::BadSparseIndex);
    }
    let mut start = 0usize;
    for end in row_ptr.iter().skip(1) {
        let end = end as usize;
        if end < start || end > nnz {
            return Err(FormatError::BadSparseIndex);
        }
        let mut prev: Option<u32> = None;
        for j in indices.slice(start, end - start).iter() {
            if j as usize >= dim || prev.is_some_and(|p| j <= p) {
                return Err(FormatError::BadSparseIndex);
            }
            prev = Some(j);
        }
        start = end;
    }
    all_finite(values)?;
    Ok(BasisView::Sparse { row_ptr, indices, values })
}
