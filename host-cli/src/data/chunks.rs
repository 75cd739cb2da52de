//! Whole-file reads cut into line-aligned chunks for parallel parsing.
//!
//! A file is read with one large `read` (the host CLI forbids `unsafe`, so no
//! memory map), then cut at `\n` bytes into chunks of about
//! [`CHUNK_BYTES`]. A `\n` never occurs inside a multi-byte UTF-8 sequence,
//! so every chunk is valid UTF-8 exactly when the file is, and the lines of
//! the file are the lines of its chunks in order: chunk `k` starts at line
//! `1 + Σ_{j<k} (lines of chunk j)`, each earlier chunk ending in `\n`. Readers
//! parse the chunks in parallel (rayon) with chunk-local line numbers and
//! shift them when they join the parts, so every error names the same line
//! as a one-pass parse would.

use std::{fs, io, path::Path};

use rayon::prelude::*;

use super::{DataError, ErrorKind};

/// Target chunk size: large enough that the per-chunk set-up and the join
/// are negligible, small enough to balance two to sixteen threads on files
/// of tens of megabytes.
pub(crate) const CHUNK_BYTES: usize = 1 << 20;

/// Reads a whole file; the error kinds of a missing or unreadable file.
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>, DataError> {
    fs::read(path).map_err(|e| {
        let kind = match e.kind() {
            io::ErrorKind::NotFound => ErrorKind::NotFound,
            io::ErrorKind::PermissionDenied | io::ErrorKind::IsADirectory => ErrorKind::Unreadable,
            _ => ErrorKind::Io,
        };
        DataError::file(&path.display().to_string(), kind, format!("cannot read: {e}"))
    })
}

/// Cuts `bytes` after `\n` bytes into chunks of about `target` bytes (at
/// least one line each; one chunk for an empty input).
pub(crate) fn split_lines(bytes: &[u8], target: usize) -> Vec<&[u8]> {
    let mut out = Vec::with_capacity(bytes.len() / target.max(1) + 1);
    let mut rest = bytes;
    while rest.len() > target {
        let cut = match rest[target..].iter().position(|&b| b == b'\n') {
            Some(p) => target + p + 1,
            None => rest.len(),
        };
        let (a, b) = rest.split_at(cut);
        out.push(a);
        rest = b;
    }
    if !rest.is_empty() || out.is_empty() {
        out.push(rest);
    }
    out
}

/// The chunks as text, validated in parallel. A byte that is not UTF-8 is
/// reported with its line in the whole file (the first such byte).
pub(crate) fn utf8_chunks<'a>(chunks: &[&'a [u8]], name: &str) -> Result<Vec<&'a str>, DataError> {
    let checked: Vec<Result<&'a str, usize>> =
        chunks.par_iter().map(|c| std::str::from_utf8(c).map_err(|e| e.valid_up_to())).collect();
    let newlines = |b: &[u8]| b.iter().filter(|&&b| b == b'\n').count();
    let mut out = Vec::with_capacity(chunks.len());
    for (k, r) in checked.into_iter().enumerate() {
        match r {
            Ok(s) => out.push(s),
            Err(bad) => {
                let before: usize = chunks[..k].iter().map(|c| newlines(c)).sum();
                let line = 1 + before + newlines(&chunks[k][..bad]);
                return Err(DataError::at(name, line, ErrorKind::Encoding, "not UTF-8 text".to_owned()));
            }
        }
    }
    Ok(out)
}

/// Cuts `text` into line-aligned chunks of about `target` bytes.
pub(crate) fn split_str(text: &str, target: usize) -> Vec<&str> {
    // Cut points follow `\n` bytes, which are char boundaries.
    split_lines(text.as_bytes(), target)
        .into_iter()
        .scan(0usize, |at, c| {
            let s = &text[*at..*at + c.len()];
            *at += c.len();
            Some(s)
        })
        .collect()
}

/// Drops a leading UTF-8 byte-order mark from raw bytes.
pub(crate) fn strip_bom_bytes(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_input_at_line_ends() {
        let text = b"ab\ncd\n\nefg\nh";
        for target in 0..=text.len() + 1 {
            let c = split_lines(text, target);
            assert_eq!(c.concat(), text, "target {target}");
            for part in &c[..c.len() - 1] {
                assert_eq!(part.last(), Some(&b'\n'), "target {target}");
            }
        }
        assert_eq!(split_lines(b"", 4), vec![&b""[..]]);
    }

    #[test]
    fn encoding_error_names_its_line_across_chunks() {
        let mut bytes = b"1 1:1\n0 1:2\n1 1:3\n".to_vec();
        bytes.extend_from_slice(b"0 1:\xff\n1 1:4\n");
        for target in 0..bytes.len() {
            let e = utf8_chunks(&split_lines(&bytes, target), "f").unwrap_err();
            assert_eq!((e.kind(), e.line()), (ErrorKind::Encoding, Some(4)), "target {target}");
        }
    }
}
