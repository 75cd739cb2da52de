//! The writer: [`ModelSpec`] borrows `f64` parameters and emits a model file
//! into a caller buffer, without allocating.

use super::crc32::crc32;
use super::field;
use super::section_id as sid;
use super::{ElementType, FormatError, Kernel, ModelKind, CRATE_VERSION, FORMAT_VERSION, MAGIC};
use super::{STORAGE_DENSE, STORAGE_SPARSE};

/// Per-feature centring and scaling: the model sees
/// `x'_j = (x_j − mean_j) / scale_j`.
#[derive(Clone, Copy, Debug)]
pub struct FeatureCentring<'a> {
    /// `mean_j`, d values.
    pub mean: &'a [f64],
    /// `scale_j`, d values, nonzero.
    pub scale: &'a [f64],
}

/// A linear model `score(x) = offset + Σ_j w_j·x'_j`.
#[derive(Clone, Copy, Debug)]
pub struct LinearModel<'a> {
    /// Weights; their number is the dimension d.
    pub w: &'a [f64],
    /// Offset (bias).
    pub offset: f64,
    /// Optional feature centring and scaling.
    pub centring: Option<FeatureCentring<'a>>,
}

/// Basis rows of a kernel expansion (in the centred feature space if the
/// model has feature centring).
#[derive(Clone, Copy, Debug)]
pub enum Basis<'a> {
    /// m × d values, row-major.
    Dense(&'a [f64]),
    /// Compressed sparse rows.
    Sparse {
        /// m + 1 offsets: 0, non-decreasing, ending at `indices.len()`.
        row_ptr: &'a [u32],
        /// Column indices, `< d` and strictly increasing within a row.
        indices: &'a [u32],
        /// Values, one per index.
        values: &'a [f64],
    },
}

/// Test-kernel centring terms of a model trained on a centred kernel matrix
/// (000 §6.1).
#[derive(Clone, Copy, Debug)]
pub struct KernelCentring<'a> {
    /// Column means of the training kernel matrix, m values.
    pub col_means: &'a [f64],
    /// Mean of all entries of the training kernel matrix.
    pub grand_mean: f64,
}

/// A kernel expansion `score(x) = offset + Σ_i a_i·k̃(x', x_i)`.
#[derive(Clone, Copy, Debug)]
pub struct KernelModel<'a> {
    /// Feature dimension d.
    pub dim: usize,
    /// Kernel and its parameters.
    pub kernel: Kernel,
    /// The m basis rows `x_i`.
    pub basis: Basis<'a>,
    /// Coefficients `a_i`; their number is m.
    pub coeffs: &'a [f64],
    /// Offset (bias).
    pub offset: f64,
    /// Optional feature centring and scaling (applied to the input only).
    pub centring: Option<FeatureCentring<'a>>,
    /// Optional test-kernel centring.
    pub kernel_centring: Option<KernelCentring<'a>>,
}

/// The model to write.
#[derive(Clone, Copy, Debug)]
pub enum Model<'a> {
    /// A linear model.
    Linear(LinearModel<'a>),
    /// A kernel expansion.
    Kernel(KernelModel<'a>),
}

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
enum Payload<'a> {
    Text(&'a [u8]),
    /// An `f64` scalar followed by elements.
    ScalarThen(f64, &'a [f64]),
    Elems(&'a [f64]),
    Elems2(&'a [f64], &'a [f64]),
    Kernel {
        kernel: Kernel,
        storage: u8,
        rows: usize,
        offset: f64,
    },
    Csr(&'a [u32], &'a [u32], &'a [f64]),
}

impl Payload<'_> {
    fn len(&self, es: usize) -> usize {
        match *self {
            Payload::Text(t) => t.len(),
            Payload::ScalarThen(_, v) => v.len().saturating_mul(es).saturating_add(8),
            Payload::Elems(v) => v.len().saturating_mul(es),
            Payload::Elems2(a, b) => a.len().saturating_add(b.len()).saturating_mul(es),
            Payload::Kernel { .. } => field::kernel::LEN,
            Payload::Csr(p, i, v) => {
                p.len().saturating_add(i.len()).saturating_mul(4).saturating_add(v.len().saturating_mul(es))
            }
        }
    }
}

const MAX_SECTIONS: usize = 6;
type Sections<'a> = [Option<(u16, Payload<'a>)>; MAX_SECTIONS];

fn align_up(x: usize) -> usize {
    x.saturating_add(field::SECTION_ALIGN - 1) / field::SECTION_ALIGN * field::SECTION_ALIGN
}

/// Checks a value can be stored as `et`.
fn storable(v: f64, et: ElementType) -> Result<(), FormatError> {
    let ok = match et {
        ElementType::F64 => v.is_finite(),
        ElementType::F32 => v.is_finite() && (v as f32).is_finite(),
    };
    if ok {
        Ok(())
    } else {
        Err(FormatError::NonFinite)
    }
}

fn all_storable(v: &[f64], et: ElementType) -> Result<(), FormatError> {
    v.iter().try_for_each(|&x| storable(x, et))
}

fn check_dim(n: usize) -> Result<(), FormatError> {
    if n == 0 || u32::try_from(n).is_err() {
        Err(FormatError::BadDimensions)
    } else {
        Ok(())
    }
}

fn check_centring(c: &FeatureCentring<'_>, dim: usize, et: ElementType) -> Result<(), FormatError> {
    if c.mean.len() != dim || c.scale.len() != dim {
        return Err(FormatError::BadDimensions);
    }
    all_storable(c.mean, et)?;
    all_storable(c.scale, et)?;
    let zero = |s: f64| match et {
        ElementType::F32 => s as f32 == 0.0,
        ElementType::F64 => s == 0.0,
    };
    if c.scale.iter().any(|&s| zero(s)) {
        return Err(FormatError::BadScale);
    }
    Ok(())
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

    fn elems(&mut self, mut at: usize, vals: &[f64], et: ElementType) -> usize {
        for &v in vals {
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
        match self.model {
            Model::Linear(ref l) => l.w.len(),
            Model::Kernel(ref k) => k.dim,
        }
    }

    fn kind(&self) -> ModelKind {
        match self.model {
            Model::Linear(_) => ModelKind::Linear,
            Model::Kernel(_) => ModelKind::KernelExpansion,
        }
    }

    /// The sections in file order (ascending id).
    fn sections(&self) -> (Sections<'a>, usize) {
        let mut s: Sections<'a> = [None; MAX_SECTIONS];
        let mut n = 0;
        let mut push = |id: u16, p: Payload<'a>| {
            if let Some(slot) = s.get_mut(n) {
                *slot = Some((id, p));
                n += 1;
            }
        };
        if !self.metadata.is_empty() {
            push(sid::META, Payload::Text(self.metadata.as_bytes()));
        }
        match self.model {
            Model::Linear(l) => {
                if let Some(c) = l.centring {
                    push(sid::FEATURE_CENTRING, Payload::Elems2(c.mean, c.scale));
                }
                push(sid::LINEAR, Payload::ScalarThen(l.offset, l.w));
            }
            Model::Kernel(k) => {
                if let Some(c) = k.centring {
                    push(sid::FEATURE_CENTRING, Payload::Elems2(c.mean, c.scale));
                }
                let storage = match k.basis {
                    Basis::Dense(_) => STORAGE_DENSE,
                    Basis::Sparse { .. } => STORAGE_SPARSE,
                };
                push(
                    sid::KERNEL,
                    Payload::Kernel { kernel: k.kernel, storage, rows: k.coeffs.len(), offset: k.offset },
                );
                match k.basis {
                    Basis::Dense(rows) => push(sid::BASIS_DENSE, Payload::Elems(rows)),
                    Basis::Sparse { row_ptr, indices, values } => {
                        push(sid::BASIS_SPARSE, Payload::Csr(row_ptr, indices, values))
                    }
                }
                push(sid::COEFFS, Payload::Elems(k.coeffs));
                if let Some(c) = k.kernel_centring {
                    push(sid::KERNEL_CENTRING, Payload::ScalarThen(c.grand_mean, c.col_means));
                }
            }
        }
        (s, n)
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
    /// [`FormatError::BadDimensions`] (zero or mismatched lengths, or a file
    /// longer than `u32::MAX` bytes), [`FormatError::NonFinite`] (a NaN or
    /// infinite value, or one that overflows `f32` when writing `f32`),
    /// [`FormatError::BadScale`] (a scale that is, or rounds to, zero),
    /// [`FormatError::BadKernel`], [`FormatError::BadSparseIndex`].
    pub fn check(&self) -> Result<(), FormatError> {
        let et = self.element_type;
        match self.model {
            Model::Linear(ref l) => {
                check_dim(l.w.len())?;
                storable(l.offset, ElementType::F64)?;
                all_storable(l.w, et)?;
                if let Some(ref c) = l.centring {
                    check_centring(c, l.w.len(), et)?;
                }
            }
            Model::Kernel(ref k) => {
                check_dim(k.dim)?;
                let m = k.coeffs.len();
                check_dim(m)?;
                k.kernel.check_format()?;
                storable(k.offset, ElementType::F64)?;
                all_storable(k.coeffs, et)?;
                if let Some(ref c) = k.centring {
                    check_centring(c, k.dim, et)?;
                }
                match k.basis {
                    Basis::Dense(rows) => {
                        if Some(rows.len()) != m.checked_mul(k.dim) {
                            return Err(FormatError::BadDimensions);
                        }
                        all_storable(rows, et)?;
                    }
                    Basis::Sparse { row_ptr, indices, values } => {
                        if row_ptr.len() != m + 1
                            || indices.len() != values.len()
                            || row_ptr.last().map(|&e| e as usize) != Some(indices.len())
                        {
                            return Err(FormatError::BadDimensions);
                        }
                        if row_ptr.first() != Some(&0) {
                            return Err(FormatError::BadSparseIndex);
                        }
                        for w in row_ptr.windows(2) {
                            let (s, e) = match *w {
                                [s, e] => (s as usize, e as usize),
                                _ => (0, 0),
                            };
                            let row = indices.get(s..e).ok_or(FormatError::BadSparseIndex)?;
                            if row.iter().any(|&j| j as usize >= k.dim)
                                || row.windows(2).any(|p| matches!(*p, [a, b] if a >= b))
                            {
                                return Err(FormatError::BadSparseIndex);
                            }
                        }
                        all_storable(values, et)?;
                    }
                }
                if let Some(ref c) = k.kernel_centring {
                    if c.col_means.len() != m {
                        return Err(FormatError::BadDimensions);
                    }
                    storable(c.grand_mean, ElementType::F64)?;
                    all_storable(c.col_means, et)?;
                }
            }
        }
        if u32::try_from(self.buffer_len()).is_err() {
            return Err(FormatError::BadDimensions);
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
    /// [`FormatError::BufferTooSmall`] if `out.len() < buffer_len()`, and
    /// every error of [`check`](Self::check).
    pub fn emit(&self, out: &mut [u8]) -> Result<usize, FormatError> {
        self.check()?;
        let total = self.buffer_len();
        let got = out.len();
        let buf = out.get_mut(..total).ok_or(FormatError::BufferTooSmall { needed: total, got })?;
        buf.fill(0);
        let et = self.element_type;
        let es = et.size();
        let (secs, n) = self.sections();
        let mut o = Out { buf };

        o.put(field::MAGIC.start, &MAGIC);
        o.put(field::FORMAT_MAJOR, &[FORMAT_VERSION.major]);
        o.put(field::FORMAT_MINOR, &[FORMAT_VERSION.minor]);
        // Every file this writer produces is readable by any 1.x reader.
        o.put(field::MIN_READER_MAJOR, &[FORMAT_VERSION.major]);
        o.put(field::MIN_READER_MINOR, &[0]);
        o.put(field::PRODUCER_MAJOR.start, &self.producer[0].to_le_bytes());
        o.put(field::PRODUCER_MINOR.start, &self.producer[1].to_le_bytes());
        o.put(field::PRODUCER_PATCH.start, &self.producer[2].to_le_bytes());
        o.put(field::KIND, &[self.kind().code()]);
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
                Payload::Kernel { kernel, storage, rows, offset } => {
                    let (gamma, coef0, degree) = kernel.raw();
                    o.put(at + field::kernel::KERNEL, &[kernel.code()]);
                    o.put(at + field::kernel::STORAGE, &[storage]);
                    o.put(at + field::kernel::DEGREE, &[degree]);
                    o.put(at + field::kernel::ROWS.start, &(rows as u32).to_le_bytes());
                    o.put(at + field::kernel::GAMMA.start, &gamma.to_le_bytes());
                    o.put(at + field::kernel::COEF0.start, &coef0.to_le_bytes());
                    o.put(at + field::kernel::OFFSET.start, &offset.to_le_bytes());
                }
                Payload::Csr(ptr, idx, vals) => {
                    let next = o.u32s(at, ptr);
                    let next = o.u32s(next, idx);
                    o.elems(next, vals, et);
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
