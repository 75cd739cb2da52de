//! The writer: [`ModelSpec`] borrows `f64` parameters and emits a model file
//! into a caller buffer, without allocating. The kind-independent half:
//! header, section table, alignment, checksum, and the payload encodings;
//! each kind says which sections it writes (`kind/*.rs`).

use super::crc32::crc32;
use super::field;
use super::kind::Model;
use super::section_id as sid;
use super::{ElementType, EmitError, QuantWidth, CRATE_VERSION, MAGIC};

/// Everything that goes into a model file.
#[derive(Clone, Copy, Debug)]
pub struct ModelSpec<'a> {
    /// The model.
    pub model: Model<'a>,
    /// Element type the parameter arrays are stored in.
    pub element_type: ElementType,
    /// Metadata text, by convention `key=value` lines (`algorithm=…`,
    /// `lambda=…`, …). Empty means no `META` section.
    pub metadata: &'a str,
    /// Producer version written to the header; defaults to this crate's.
    pub producer: [u16; 3],
}

/// What a section holds, for sizing and writing.
#[derive(Clone, Copy)]
pub(crate) enum Payload<'a> {
    Text(&'a [u8]),
    /// An `f64` scalar followed by elements.
    ScalarThen(f64, &'a [f64]),
    Elems(&'a [f64]),
    Elems2(&'a [f64], &'a [f64]),
    /// A fixed-layout record, encoded by its kind (the first `len` bytes).
    Fixed([u8; MAX_FIXED], usize),
    Csr(&'a [u32], &'a [u32], &'a [f64]),
    /// A fixed-layout record (the first `len` bytes), then element arrays
    /// in either float type (a device writes its `f32` state as it is).
    FixedThen([u8; MAX_FIXED], usize, [Values<'a>; 5]),
    /// A fixed-layout record (the first `len` bytes), two `f32` arrays, then
    /// integer weights of the given width (kind 7).
    Quant([u8; MAX_FIXED], usize, &'a [f32], &'a [f32], &'a [i16], QuantWidth),
}

/// Parameter values to write, borrowed in the type they are held in.
#[derive(Clone, Copy, Debug)]
pub enum Values<'a> {
    /// `f64` values.
    F64(&'a [f64]),
    /// `f32` values.
    F32(&'a [f32]),
}

/// The float types whose slices the writer borrows as [`Values`]: those a
/// device learner (online RankRLS, the device preference GP) keeps its
/// state in and saves.
pub trait ValuesReal: crate::Real {
    /// The values as the writer borrows them.
    fn values(s: &[Self]) -> Values<'_>;
}

impl ValuesReal for f32 {
    fn values(s: &[f32]) -> Values<'_> {
        Values::F32(s)
    }
}

impl ValuesReal for f64 {
    fn values(s: &[f64]) -> Values<'_> {
        Values::F64(s)
    }
}

impl Values<'_> {
    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Values::F64(v) => v.len(),
            Values::F32(v) => v.len(),
        }
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Value `i` widened to `f64` (NaN out of range, which no caller asks).
    pub(crate) fn at(&self, i: usize) -> f64 {
        match self {
            Values::F64(v) => v.get(i).copied().unwrap_or(f64::NAN),
            Values::F32(v) => v.get(i).map_or(f64::NAN, |&x| x as f64),
        }
    }

    /// Checks every value can be stored as `et`.
    pub(crate) fn storable(&self, et: ElementType) -> Result<(), EmitError> {
        (0..self.len()).try_for_each(|i| storable(self.at(i), et))
    }
}

impl Payload<'_> {
    fn len(&self, es: usize) -> usize {
        match *self {
            Payload::Text(t) => t.len(),
            Payload::ScalarThen(_, v) => v.len().saturating_mul(es).saturating_add(8),
            Payload::Elems(v) => v.len().saturating_mul(es),
            Payload::Elems2(a, b) => a.len().saturating_add(b.len()).saturating_mul(es),
            Payload::Fixed(_, len) => len,
            Payload::Csr(p, i, v) => {
                p.len().saturating_add(i.len()).saturating_mul(4).saturating_add(v.len().saturating_mul(es))
            }
            Payload::FixedThen(_, len, ref arrays) => {
                arrays.iter().fold(len, |acc, a| acc.saturating_add(a.len().saturating_mul(es)))
            }
            Payload::Quant(_, len, a, z, w, width) => len
                .saturating_add(a.len().saturating_add(z.len()).saturating_mul(4))
                .saturating_add(w.len().saturating_mul(width.bytes())),
        }
    }
}

/// Longest [`Payload::Fixed`] record.
pub(crate) const MAX_FIXED: usize = 64;
const MAX_SECTIONS: usize = 6;
type Sections<'a> = [Option<(u16, Payload<'a>)>; MAX_SECTIONS];

/// Where a kind pushes its sections, in ascending id order.
pub(crate) struct SectionSink<'s, 'a> {
    secs: &'s mut Sections<'a>,
    n: usize,
}

impl<'a> SectionSink<'_, 'a> {
    pub(crate) fn push(&mut self, id: u16, p: Payload<'a>) {
        if let Some(slot) = self.secs.get_mut(self.n) {
            *slot = Some((id, p));
            self.n += 1;
        }
    }
}

fn align_up(x: usize) -> usize {
    x.saturating_add(field::SECTION_ALIGN - 1) / field::SECTION_ALIGN * field::SECTION_ALIGN
}

/// Checks a value can be stored as `et`.
pub(crate) fn storable(v: f64, et: ElementType) -> Result<(), EmitError> {
    let ok = match et {
        ElementType::F64 => v.is_finite(),
        ElementType::F32 => v.is_finite() && (v as f32).is_finite(),
    };
    if ok {
        Ok(())
    } else {
        Err(EmitError::NonFinite)
    }
}

/// Checks every value can be stored as `et`.
pub(crate) fn all_storable(v: &[f64], et: ElementType) -> Result<(), EmitError> {
    v.iter().try_for_each(|&x| storable(x, et))
}

/// A dimension must be at least 1 and fit the format's `u32`.
pub(crate) fn check_dim(n: usize) -> Result<(), EmitError> {
    if n == 0 || u32::try_from(n).is_err() {
        Err(EmitError::BadDimensions)
    } else {
        Ok(())
    }
}

/// Byte writer over the caller's buffer that silently ignores writes out of
/// range (the layout is computed and checked before writing, so none are).
struct Out<'o> {
    buf: &'o mut [u8],
}

impl Out<'_> {
    fn put(&mut self, at: usize, bytes: &[u8]) {
        if let Some(dst) = at.checked_add(bytes.len()).and_then(|end| self.buf.get_mut(at..end)) {
            dst.copy_from_slice(bytes);
        }
    }

    fn elems(&mut self, at: usize, vals: &[f64], et: ElementType) -> usize {
        self.values(at, Values::F64(vals), et)
    }

    fn values(&mut self, mut at: usize, vals: Values<'_>, et: ElementType) -> usize {
        for i in 0..vals.len() {
            let v = vals.at(i);
            match et {
                ElementType::F32 => self.put(at, &(v as f32).to_le_bytes()),
                ElementType::F64 => self.put(at, &v.to_le_bytes()),
            }
            at += et.size();
        }
        at
    }

    fn u32s(&mut self, mut at: usize, vals: &[u32]) -> usize {
        for &v in vals {
            self.put(at, &v.to_le_bytes());
            at += 4;
        }
        at
    }
}

impl<'a> ModelSpec<'a> {
    /// A spec with empty metadata and this crate's version as producer.
    pub fn new(model: Model<'a>, element_type: ElementType) -> Self {
        ModelSpec { model, element_type, metadata: "", producer: CRATE_VERSION }
    }

    /// Sets the metadata text.
    pub fn with_metadata(mut self, metadata: &'a str) -> Self {
        self.metadata = metadata;
        self
    }

    /// The feature dimension d.
    pub fn dim(&self) -> usize {
        self.model.dim()
    }

    /// The sections in file order (ascending id).
    fn sections(&self) -> (Sections<'a>, usize) {
        let mut secs: Sections<'a> = [None; MAX_SECTIONS];
        let mut sink = SectionSink { secs: &mut secs, n: 0 };
        if !self.metadata.is_empty() {
            sink.push(sid::META, Payload::Text(self.metadata.as_bytes()));
        }
        if let Some(c) = self.model.centring() {
            sink.push(sid::FEATURE_CENTRING, Payload::Elems2(c.mean, c.scale));
        }
        self.model.sections(&mut sink);
        let n = sink.n;
        (secs, n)
    }

    /// Length in bytes of the encoded model (saturating at `usize::MAX` for
    /// absurd sizes, which [`emit`](Self::emit) then rejects).
    pub fn buffer_len(&self) -> usize {
        let (secs, n) = self.sections();
        let es = self.element_type.size();
        let mut at = field::HEADER_LEN + n * field::section::ENTRY_LEN;
        for (_, p) in secs.iter().flatten() {
            at = align_up(at).saturating_add(p.len(es));
        }
        at.saturating_add(field::CRC_LEN)
    }

    /// Checks everything [`ModelView::new_checked`](super::ModelView::new_checked)
    /// would check, on the spec.
    ///
    /// # Errors
    ///
    /// [`EmitError::BadDimensions`] (zero or mismatched lengths, or a file
    /// longer than `u32::MAX` bytes), [`EmitError::NonFinite`] (a NaN or
    /// infinite value, or one that overflows `f32` when writing `f32`),
    /// [`EmitError::BadScale`] (a scale that is, or rounds to, zero),
    /// [`EmitError::BadKernel`], [`EmitError::BadSparseIndex`],
    /// [`EmitError::BadState`] (an online state), [`EmitError::BadPair`] (a
    /// pair model whose (anti)symmetry claim does not hold on the stored
    /// values).
    pub fn check(&self) -> Result<(), EmitError> {
        self.model.check(self.element_type)?;
        if u32::try_from(self.buffer_len()).is_err() {
            return Err(EmitError::BadDimensions);
        }
        Ok(())
    }

    /// Validates the spec ([`check`](Self::check)) and writes the model into
    /// `out[..buffer_len()]`, returning the number of bytes written.
    ///
    /// Never panics; on error nothing is written.
    ///
    /// # Errors
    ///
    /// [`EmitError::BufferTooSmall`] if `out.len() < buffer_len()`, and
    /// every error of [`check`](Self::check).
    pub fn emit(&self, out: &mut [u8]) -> Result<usize, EmitError> {
        self.check()?;
        let total = self.buffer_len();
        let got = out.len();
        let buf = out.get_mut(..total).ok_or(EmitError::BufferTooSmall { needed: total, got })?;
        buf.fill(0);
        let et = self.element_type;
        let es = et.size();
        let (secs, n) = self.sections();
        let mut o = Out { buf };

        o.put(field::MAGIC.start, &MAGIC);
        // The version that introduced the kind, as both the file's version
        // and the oldest reader's (see `FORMAT_VERSION`).
        let since = self.model.since();
        o.put(field::FORMAT_MAJOR, &[since.major]);
        o.put(field::FORMAT_MINOR, &[since.minor]);
        o.put(field::MIN_READER_MAJOR, &[since.major]);
        o.put(field::MIN_READER_MINOR, &[since.minor]);
        o.put(field::PRODUCER_MAJOR.start, &self.producer[0].to_le_bytes());
        o.put(field::PRODUCER_MINOR.start, &self.producer[1].to_le_bytes());
        o.put(field::PRODUCER_PATCH.start, &self.producer[2].to_le_bytes());
        o.put(field::KIND, &[self.model.kind().code()]);
        o.put(field::ELEMENT_TYPE, &[et.code()]);
        o.put(field::DIM.start, &(self.dim() as u32).to_le_bytes());
        o.put(field::TOTAL_LEN.start, &(total as u32).to_le_bytes());
        o.put(field::SECTION_COUNT.start, &(n as u16).to_le_bytes());

        let mut at = field::HEADER_LEN + n * field::section::ENTRY_LEN;
        for (e, (id, p)) in secs.iter().flatten().enumerate() {
            at = align_up(at);
            let len = p.len(es);
            let entry = field::HEADER_LEN + e * field::section::ENTRY_LEN;
            let flags = match sid::known_required(*id) {
                Some(true) => field::section::FLAG_REQUIRED,
                _ => 0,
            };
            o.put(entry + field::section::ID.start, &id.to_le_bytes());
            o.put(entry + field::section::FLAGS.start, &flags.to_le_bytes());
            o.put(entry + field::section::OFFSET.start, &(at as u32).to_le_bytes());
            o.put(entry + field::section::LEN.start, &(len as u32).to_le_bytes());
            match *p {
                Payload::Text(t) => o.put(at, t),
                Payload::ScalarThen(s, v) => {
                    o.put(at, &s.to_le_bytes());
                    o.elems(at + 8, v, et);
                }
                Payload::Elems(v) => {
                    o.elems(at, v, et);
                }
                Payload::Elems2(a, b) => {
                    let next = o.elems(at, a, et);
                    o.elems(next, b, et);
                }
                Payload::Fixed(ref bytes, len) => o.put(at, bytes.get(..len).unwrap_or(&[])),
                Payload::Csr(ptr, idx, vals) => {
                    let next = o.u32s(at, ptr);
                    let next = o.u32s(next, idx);
                    o.elems(next, vals, et);
                }
                Payload::FixedThen(ref bytes, len, arrays) => {
                    o.put(at, bytes.get(..len).unwrap_or(&[]));
                    arrays.iter().fold(at + len, |next, &a| o.values(next, a, et));
                }
                Payload::Quant(ref bytes, len, a, z, w, width) => {
                    o.put(at, bytes.get(..len).unwrap_or(&[]));
                    let next = o.values(at + len, Values::F32(a), ElementType::F32);
                    let mut next = o.values(next, Values::F32(z), ElementType::F32);
                    for &wj in w {
                        match width {
                            QuantWidth::I8 => o.put(next, &[wj as i8 as u8]),
                            QuantWidth::I16 => o.put(next, &wj.to_le_bytes()),
                        }
                        next += width.bytes();
                    }
                }
            }
            at += len;
        }
        let crc_at = total - field::CRC_LEN;
        let crc = crc32(o.buf.get(..crc_at).unwrap_or(&[]));
        o.put(crc_at, &crc.to_le_bytes());
        Ok(total)
    }
}
