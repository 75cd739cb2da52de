//! The byte layout, as named byte ranges (offsets relative to the start of
//! the file, the start of a section-table entry, or the start of a section).
//! The header and section table are defined here; each kind's sections in
//! its module (`kind/*.rs`), re-exported at the end.
//!
//! Every offset in the reader and the writer is derived from these
//! constants, and the tables in `docs/format.md` are written from
//! [`HEADER_FIELDS`] (a unit test checks that the two agree).

/// A byte range.
pub type Field = core::ops::Range<usize>;

/// `"RKLT"`.
pub const MAGIC: Field = 0..4;
/// Format major version (`u8`).
pub const FORMAT_MAJOR: usize = 4;
/// Format minor version (`u8`).
pub const FORMAT_MINOR: usize = 5;
/// Minimum reader major version (`u8`).
pub const MIN_READER_MAJOR: usize = 6;
/// Minimum reader minor version (`u8`).
pub const MIN_READER_MINOR: usize = 7;
/// Producer crate version: major (`u16`).
pub const PRODUCER_MAJOR: Field = 8..10;
/// Producer crate version: minor (`u16`).
pub const PRODUCER_MINOR: Field = 10..12;
/// Producer crate version: patch (`u16`).
pub const PRODUCER_PATCH: Field = 12..14;
/// Model kind (`u8`).
pub const KIND: usize = 14;
/// Element type of the parameter arrays (`u8`).
pub const ELEMENT_TYPE: usize = 15;
/// Feature dimension `d` (`u32`).
pub const DIM: Field = 16..20;
/// Total file length in bytes, checksum included (`u32`).
pub const TOTAL_LEN: Field = 20..24;
/// Number of section-table entries (`u16`).
pub const SECTION_COUNT: Field = 24..26;
/// Reserved, zero (`u16`).
pub const RESERVED: Field = 26..28;
/// Length of the fixed header; the section table starts here.
pub const HEADER_LEN: usize = RESERVED.end;
/// Length of the CRC-32 trailer (`u32`, the last bytes of the file).
pub const CRC_LEN: usize = 4;
/// Writers start every section at a multiple of this (readers do not rely
/// on it).
pub const SECTION_ALIGN: usize = 8;

/// The header as `(name, bytes, type, meaning)`, in file order; the source
/// of the header table in `docs/format.md`.
pub const HEADER_FIELDS: &[(&str, Field, &str, &str)] = &[
    ("magic", MAGIC, "[u8; 4]", "`52 4B 4C 54` (`RKLT`)"),
    ("format_major", FORMAT_MAJOR..FORMAT_MAJOR + 1, "u8", "format major version (1)"),
    ("format_minor", FORMAT_MINOR..FORMAT_MINOR + 1, "u8", "format minor version (0)"),
    ("min_reader_major", MIN_READER_MAJOR..MIN_READER_MAJOR + 1, "u8", "oldest reader major able to read the file"),
    ("min_reader_minor", MIN_READER_MINOR..MIN_READER_MINOR + 1, "u8", "oldest reader minor able to read the file"),
    ("producer_major", PRODUCER_MAJOR, "u16", "version of the crate that wrote the file"),
    ("producer_minor", PRODUCER_MINOR, "u16", ""),
    ("producer_patch", PRODUCER_PATCH, "u16", ""),
    ("kind", KIND..KIND + 1, "u8", "model kind"),
    ("element_type", ELEMENT_TYPE..ELEMENT_TYPE + 1, "u8", "1 = f32, 2 = f64"),
    ("dim", DIM, "u32", "feature dimension d >= 1"),
    ("total_len", TOTAL_LEN, "u32", "file length in bytes, trailer included"),
    ("section_count", SECTION_COUNT, "u16", "entries in the section table"),
    ("reserved", RESERVED, "u16", "0"),
];

/// One section-table entry (offsets relative to the entry).
pub mod section {
    use super::Field;

    /// Section id (`u16`).
    pub const ID: Field = 0..2;
    /// Flags (`u16`); bit 0 = required, other bits zero.
    pub const FLAGS: Field = 2..4;
    /// Offset of the section from the start of the file (`u32`).
    pub const OFFSET: Field = 4..8;
    /// Length of the section in bytes (`u32`).
    pub const LEN: Field = 8..12;
    /// Length of one entry.
    pub const ENTRY_LEN: usize = LEN.end;
    /// The required flag.
    pub const FLAG_REQUIRED: u16 = 1;

    /// The entry as `(name, bytes, type, meaning)`, for `docs/format.md`.
    pub const FIELDS: &[(&str, Field, &str, &str)] = &[
        ("id", ID, "u16", "section id"),
        ("flags", FLAGS, "u16", "bit 0 = required; other bits 0"),
        ("offset", OFFSET, "u32", "from the start of the file"),
        ("len", LEN, "u32", "bytes"),
    ];
}

// The layouts of the kinds' own sections live with their kinds; these
// paths keep the one place a reader of the layout looks complete.
pub use super::kind::bilinear::layout as bilinear;
pub use super::kind::dual_pair::layout as pair_dual;
pub use super::kind::kernel_expansion::layout::{kernel, kernel_centring};
pub use super::kind::linear::layout as linear;
pub use super::kind::online::layout as online;
pub use super::kind::pref_gp::layout as pref_gp;
pub use super::kind::pref_inductive::layout as pref_kernel;
pub use super::kind::pref_lowrank::layout as pref_lowrank;
pub use super::kind::quant::layout as quant;
