//! Parsing the parts every model file shares: the fixed header, the section
//! table and the checksum; plus the small checks every kind's section
//! parser uses.

use super::array::{le_u16, le_u32};
use super::crc32::crc32;
use super::field;
use super::section_id as sid;
use super::{Array, ElementType, ModelKind, ParseError, Section, Version, FORMAT_VERSION, MAGIC};

/// The decoded fixed header.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Header {
    pub(crate) version: Version,
    pub(crate) min_reader: Version,
    pub(crate) producer: [u16; 3],
    pub(crate) kind: ModelKind,
    pub(crate) elem: ElementType,
    pub(crate) dim: usize,
}

/// Largest known section id (the table below is indexed by id).
const MAX_KNOWN_ID: usize = {
    let mut max = 0;
    let mut i = 0;
    while i < Section::ALL.len() {
        let id = Section::ALL[i].code() as usize;
        if id > max {
            max = id;
        }
        i += 1;
    }
    max
};

/// The known sections of a file, by id, each found at most once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sections<'a> {
    found: [Option<&'a [u8]>; MAX_KNOWN_ID + 1],
}

impl<'a> Sections<'a> {
    /// Section `id`, if the file has it.
    pub(crate) fn get(&self, id: u16) -> Option<&'a [u8]> {
        self.found.get(id as usize).copied().flatten()
    }

    /// Section `id`, or [`ParseError::MissingSection`].
    pub(crate) fn require(&self, id: u16) -> Result<&'a [u8], ParseError> {
        self.get(id).ok_or(ParseError::MissingSection { id })
    }

    /// [`ParseError::BadSection`] if the file has section `id`.
    pub(crate) fn forbid(&self, id: u16) -> Result<(), ParseError> {
        match self.get(id) {
            Some(_) => Err(ParseError::BadSection { id }),
            None => Ok(()),
        }
    }

    /// Rejects, in ascending id order, every known section that is neither
    /// shared by all kinds (`META`, `FEATURE_CENTRING`) nor in `own`.
    pub(crate) fn only(&self, own: &[u16]) -> Result<(), ParseError> {
        for s in Section::ALL {
            let id = s.code();
            if id != sid::META && id != sid::FEATURE_CENTRING && !own.contains(&id) {
                self.forbid(id)?;
            }
        }
        Ok(())
    }
}

/// Whether a checksum mismatch is an error: always, except under
/// `cfg(fuzzing)` (see the module's `# Fuzzing` section).
#[allow(unexpected_cfgs)]
pub(crate) const fn checksum_enforced() -> bool {
    !cfg!(fuzzing)
}

/// Checks the fixed header, the declared length, the checksum and the
/// section table, in that order (see
/// [`ModelView::new_checked`](super::ModelView::new_checked)).
pub(crate) fn parse(bytes: &[u8]) -> Result<(Header, Sections<'_>), ParseError> {
    let len = bytes.len();
    if len < field::HEADER_LEN + field::CRC_LEN {
        return Err(ParseError::TooShort { len });
    }
    let byte = |at: usize| bytes.get(at).copied().unwrap_or(0);
    let u16_at = |at: usize| le_u16(bytes, at).unwrap_or(0);
    let u32_at = |at: usize| le_u32(bytes, at).unwrap_or(0);

    if bytes.get(field::MAGIC) != Some(&MAGIC[..]) {
        return Err(ParseError::BadMagic);
    }
    let version = Version { major: byte(field::FORMAT_MAJOR), minor: byte(field::FORMAT_MINOR) };
    if version.major != FORMAT_VERSION.major {
        return Err(ParseError::UnsupportedVersion { found: version, supported: FORMAT_VERSION });
    }
    let min_reader = Version { major: byte(field::MIN_READER_MAJOR), minor: byte(field::MIN_READER_MINOR) };
    if min_reader > FORMAT_VERSION {
        return Err(ParseError::ReaderTooOld { required: min_reader, supported: FORMAT_VERSION });
    }
    if min_reader > version || min_reader.major != version.major {
        return Err(ParseError::BadHeader);
    }
    let declared = u32_at(field::TOTAL_LEN.start) as usize;
    if len < declared {
        return Err(ParseError::Truncated { declared, got: len });
    }
    if len > declared {
        return Err(ParseError::TrailingBytes { declared, got: len });
    }
    let crc_start = len - field::CRC_LEN;
    let (body, trailer) = bytes.split_at(crc_start);
    let stored = le_u32(trailer, 0).unwrap_or(0);
    let computed = crc32(body);
    if stored != computed && checksum_enforced() {
        return Err(ParseError::BadChecksum { stored, computed });
    }

    if u16_at(field::RESERVED.start) != 0 {
        return Err(ParseError::BadHeader);
    }
    let kind_code = byte(field::KIND);
    let kind = ModelKind::from_code(kind_code).ok_or(ParseError::BadKind { code: kind_code })?;
    let elem_code = byte(field::ELEMENT_TYPE);
    let elem = ElementType::from_code(elem_code).ok_or(ParseError::BadElementType { code: elem_code })?;
    let dim = usize::try_from(u32_at(field::DIM.start)).map_err(|_| ParseError::BadDimensions)?;
    if dim == 0 {
        return Err(ParseError::BadDimensions);
    }
    let producer =
        [u16_at(field::PRODUCER_MAJOR.start), u16_at(field::PRODUCER_MINOR.start), u16_at(field::PRODUCER_PATCH.start)];

    // Section table.
    let count = u16_at(field::SECTION_COUNT.start) as usize;
    let table_end = count
        .checked_mul(field::section::ENTRY_LEN)
        .and_then(|t| t.checked_add(field::HEADER_LEN))
        .ok_or(ParseError::BadSectionTable)?;
    if table_end > crc_start {
        return Err(ParseError::BadSectionTable);
    }
    let mut found: [Option<&[u8]>; MAX_KNOWN_ID + 1] = [None; MAX_KNOWN_ID + 1];
    let mut prev_end = table_end;
    for e in 0..count {
        let at = field::HEADER_LEN + e * field::section::ENTRY_LEN;
        let id = u16_at(at + field::section::ID.start);
        let flags = u16_at(at + field::section::FLAGS.start);
        let off = u32_at(at + field::section::OFFSET.start) as usize;
        let slen = u32_at(at + field::section::LEN.start) as usize;
        let end = off.checked_add(slen).ok_or(ParseError::BadSectionTable)?;
        if off < prev_end || end > crc_start {
            return Err(ParseError::BadSectionTable);
        }
        prev_end = end;
        if flags & !field::section::FLAG_REQUIRED != 0 {
            return Err(ParseError::BadSection { id });
        }
        let required = flags & field::section::FLAG_REQUIRED != 0;
        match sid::known_required(id) {
            None if required => return Err(ParseError::UnknownRequiredSection { id }),
            None => continue,
            Some(r) if r != required => return Err(ParseError::BadSection { id }),
            Some(_) => {}
        }
        let slot = found.get_mut(id as usize).ok_or(ParseError::BadSection { id })?;
        if slot.is_some() {
            return Err(ParseError::BadSection { id });
        }
        *slot = bytes.get(off..end);
    }
    let header = Header { version, min_reader, producer, kind, elem, dim };
    Ok((header, Sections { found }))
}

/// [`ParseError::NonFinite`] unless every element of `a` is finite.
pub(crate) fn all_finite(a: Array<'_>) -> Result<(), ParseError> {
    if a.iter().all(f64::is_finite) {
        Ok(())
    } else {
        Err(ParseError::NonFinite)
    }
}

/// `x` if finite, else [`ParseError::NonFinite`].
pub(crate) fn finite(x: f64) -> Result<f64, ParseError> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(ParseError::NonFinite)
    }
}

/// `count × size`, or [`ParseError::BadDimensions`] on overflow.
pub(crate) fn bytes_for(count: usize, size: usize) -> Result<usize, ParseError> {
    count.checked_mul(size).ok_or(ParseError::BadDimensions)
}

/// [`ParseError::BadSection`] unless section `id` is `len` bytes long.
pub(crate) fn expect_len(sec: &[u8], len: usize, id: u16) -> Result<(), ParseError> {
    if sec.len() == len {
        Ok(())
    } else {
        Err(ParseError::BadSection { id })
    }
}

/// A section holding an `f64` scalar at `scalar` followed, from `elems_at`
/// on, by `n_bytes` bytes of elements (the layout of `LINEAR` and
/// `KERNEL_CENTRING`): checks its length and finiteness and splits it.
pub(crate) fn scalar_then_elems<'a>(
    sec: &'a [u8],
    elems_at: usize,
    n_bytes: usize,
    elem: ElementType,
    id: u16,
) -> Result<(f64, Array<'a>), ParseError> {
    expect_len(sec, elems_at.checked_add(n_bytes).ok_or(ParseError::BadDimensions)?, id)?;
    let scalar = finite(super::array::le_f64(sec, 0).unwrap_or(f64::NAN))?;
    let elems = Array::new(sec.get(elems_at..).unwrap_or(&[]), elem);
    all_finite(elems)?;
    Ok((scalar, elems))
}
