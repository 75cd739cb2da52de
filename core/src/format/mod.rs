//! The `.rkl` model format: a zero-copy, validate-once view for devices and
//! an allocation-free writer for the host.
//!
//! The byte-level specification is `docs/format.md`; this module implements
//! it. In short: a 28-byte little-endian header (magic `RKLT`, format
//! version, minimum reader version, producer version, model kind, element
//! type, dimension, total length, section count), a table of
//! `(id, flags, offset, len)` section entries, the sections, and a CRC-32
//! trailer over everything before it.
//!
//! # Reading
//!
//! [`ModelView::new_checked`] takes untrusted bytes of any alignment and runs
//! every check once: lengths, magic, versions, checksum, section bounds,
//! dimensions, finiteness of every parameter, well-formedness of a sparse
//! basis, kernel parameter domains and UTF-8 metadata. Once it returns `Ok`,
//! no accessor and no scoring function panics or reads out of bounds; the
//! scoring functions only return errors about *their* input (wrong length,
//! NaN, bad sparse index, overflow). Nothing allocates.
//!
//! # Writing
//!
//! [`ModelSpec`] borrows the parameters as `f64` slices. [`ModelSpec::buffer_len`]
//! says how many bytes the file takes and [`ModelSpec::emit`] writes it into a
//! caller buffer after validating the whole spec (so on error nothing is
//! written). `emit` never panics, and a file it writes always passes
//! `new_checked`.
//!
//! # Fuzzing
//!
//! Under `cfg(fuzzing)` the checksum comparison in `new_checked` is skipped
//! (the trailer must still be present), so that a fuzzer can reach the
//! section and parameter checks behind it. Every other check stays on.
//!
//! # Examples
//!
//! ```
//! use ranklet_core::format::{ElementType, LinearModel, Model, ModelSpec, ModelView};
//!
//! let w = [0.5, -1.0, 2.0];
//! let spec = ModelSpec::new(
//!     Model::Linear(LinearModel { w: &w, offset: 0.25, centring: None }),
//!     ElementType::F32,
//! )
//! .with_metadata("algorithm=rankrls\nlambda=1\n");
//! let mut buf = [0u8; 256];
//! let n = spec.emit(&mut buf).unwrap();
//! assert_eq!(n, spec.buffer_len());
//!
//! let view = ModelView::new_checked(&buf[..n]).unwrap();
//! let s = view.score_dense(&[1.0, 1.0, 1.0]).unwrap();
//! assert_eq!(s, 1.75);
//! assert_eq!(view.metadata_get("lambda"), Some("1"));
//! ```

mod array;
pub mod crc32;
mod error;
pub mod field;
mod score;
mod view;
mod write;

#[cfg(test)]
mod tests;

use core::fmt;

pub use array::{Array, ArrayIter, U32Array, U32Iter};
pub use error::FormatError;
pub use view::{BasisView, KernelCentringView, KernelView, LinearView, ModelView};
pub use write::{Basis, FeatureCentring, KernelCentring, KernelModel, LinearModel, Model, ModelSpec};

/// The four magic bytes every model file starts with.
pub const MAGIC: [u8; 4] = *b"RKLT";

/// The format version this crate writes and the newest it reads.
pub const FORMAT_VERSION: Version = Version { major: 1, minor: 0 };

/// The version of this crate, written into the header as the producer.
pub const CRATE_VERSION: [u16; 3] = [
    parse_u16(env!("CARGO_PKG_VERSION_MAJOR")),
    parse_u16(env!("CARGO_PKG_VERSION_MINOR")),
    parse_u16(env!("CARGO_PKG_VERSION_PATCH")),
];

const fn parse_u16(s: &str) -> u16 {
    let b = s.as_bytes();
    let mut v: u16 = 0;
    let mut i = 0;
    while i < b.len() {
        let digit = b[i].wrapping_sub(b'0');
        if digit > 9 {
            return u16::MAX;
        }
        v = v.saturating_mul(10).saturating_add(digit as u16);
        i += 1;
    }
    v
}

/// A format version `major.minor`.
///
/// A reader of version `R` reads a file of version `F` if `F.major ==
/// R.major` and the file's minimum reader version is `<= R`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Incompatible changes.
    pub major: u8,
    /// Compatible additions (new optional sections).
    pub minor: u8,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Element type of the parameter arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ElementType {
    /// IEEE-754 binary32, the device default.
    F32 = 1,
    /// IEEE-754 binary64.
    F64 = 2,
}

impl ElementType {
    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            ElementType::F32 => 4,
            ElementType::F64 => 8,
        }
    }

    /// The code stored in the header.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// Decodes a header code.
    pub const fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(ElementType::F32),
            2 => Some(ElementType::F64),
            _ => None,
        }
    }
}

/// What the parameters describe and how a score is computed.
///
/// Codes 3 (bilinear Kronecker model) and 4 (GP posterior) are reserved
/// for later minor versions; a reader that does not know a kind rejects the
/// file with [`FormatError::BadKind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
#[non_exhaustive]
pub enum ModelKind {
    /// `score(x) = b + Σ_j w_j·x'_j`.
    Linear = 1,
    /// `score(x) = b + Σ_i a_i·k̃(x', x_i)` over stored basis rows.
    KernelExpansion = 2,
}

impl ModelKind {
    /// The code stored in the header.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// Decodes a header code.
    pub const fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(ModelKind::Linear),
            2 => Some(ModelKind::KernelExpansion),
            _ => None,
        }
    }
}

/// Reserved model kind code: bilinear (Kronecker) model.
pub const KIND_RESERVED_BILINEAR: u8 = 3;
/// Reserved model kind code: Gaussian-process posterior (mean and
/// covariance).
pub const KIND_RESERVED_GP: u8 = 4;

/// The kernel type of the `KERNEL` section is the crate's one [`Kernel`],
/// with its one domain: a file whose kernel is outside it is rejected by
/// [`ModelView::new_checked`] ([`FormatError::BadKernel`]).
pub use crate::kernel::Kernel;

impl Kernel {
    /// The code stored in the `KERNEL` section.
    pub const fn code(&self) -> u8 {
        match self {
            Kernel::Linear => 1,
            Kernel::Rbf { .. } => 2,
            Kernel::Polynomial { .. } => 3,
        }
    }

    /// `(gamma, coef0, degree)` as stored (zeros where unused).
    pub(crate) const fn raw(&self) -> (f64, f64, u8) {
        match *self {
            Kernel::Linear => (0.0, 0.0, 0),
            Kernel::Rbf { gamma } => (gamma, 0.0, 0),
            Kernel::Polynomial { gamma, coef0, degree } => (gamma, coef0, degree),
        }
    }

    /// Builds and checks a kernel from its stored fields.
    pub(crate) fn from_raw(code: u8, gamma: f64, coef0: f64, degree: u8) -> Result<Self, FormatError> {
        let k = match code {
            1 => Kernel::Linear,
            2 => Kernel::Rbf { gamma },
            3 => Kernel::Polynomial { gamma, coef0, degree },
            _ => return Err(FormatError::BadKernel),
        };
        k.check_format()?;
        Ok(k)
    }

    /// Checks the parameters are in the domain of [`Kernel`].
    pub(crate) fn check_format(&self) -> Result<(), FormatError> {
        self.check().map_err(|_| FormatError::BadKernel)
    }
}

/// Section ids. Ids not listed here are unknown to this reader: skipped if
/// optional, rejected if required.
pub mod section_id {
    /// `key=value` metadata lines, UTF-8 (optional).
    pub const META: u16 = 1;
    /// Per-feature mean and scale, d + d elements (required).
    pub const FEATURE_CENTRING: u16 = 2;
    /// Linear model: offset `f64`, then `w` (d elements) (required).
    pub const LINEAR: u16 = 3;
    /// Kernel expansion: kernel, storage, m, parameters, offset (required).
    pub const KERNEL: u16 = 4;
    /// Dense basis, m × d elements, row-major (required).
    pub const BASIS_DENSE: u16 = 5;
    /// Sparse CSR basis: row_ptr (m + 1 `u32`), indices (nnz `u32`),
    /// values (nnz elements) (required).
    pub const BASIS_SPARSE: u16 = 6;
    /// Expansion coefficients `a`, m elements (required).
    pub const COEFFS: u16 = 7;
    /// Test-kernel centring: grand mean `f64`, then m column means
    /// (required).
    pub const KERNEL_CENTRING: u16 = 8;

    /// Whether this reader knows `id`, and if so whether it must be marked
    /// required.
    pub(crate) const fn known_required(id: u16) -> Option<bool> {
        match id {
            META => Some(false),
            FEATURE_CENTRING | LINEAR | KERNEL | BASIS_DENSE | BASIS_SPARSE | COEFFS | KERNEL_CENTRING => Some(true),
            _ => None,
        }
    }
}

/// Basis storage code: dense.
pub(crate) const STORAGE_DENSE: u8 = 1;
/// Basis storage code: sparse CSR.
pub(crate) const STORAGE_SPARSE: u8 = 2;
