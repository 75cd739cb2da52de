//! The parser: [`ModelView`], validated once, then read without checks. The
//! kind-independent half: header and section table (`header`), metadata,
//! feature centring (`centring`); each kind parses its own sections
//! (`kind/*.rs`).

use super::header::{self, bytes_for};
use super::kind::Body;
use super::section_id as sid;
use super::{centring, Array, ElementType, ModelKind, ParseError, Version};

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
