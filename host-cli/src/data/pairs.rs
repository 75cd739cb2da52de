//! Preference pairs reader (`--pairs FILE`).
//!
//! One pair per line:
//!
//! ```text
//! <winner> <loser> [<magnitude>] [# comment]
//! ```
//!
//! - `<winner>` and `<loser>` are **data row numbers**: the 0-based index of
//!   a data row of the data file, counting only data rows (blank lines,
//!   comment lines and a CSV header are not counted), which is also the row
//!   index in the [`Dataset`](super::Dataset). A number `>= n` is an error
//!   that names it; `winner == loser` is an error.
//! - `<magnitude>` (how strongly the winner is preferred) defaults to 1.0. It
//!   must be finite and `>= 0`. A magnitude of 0 is **allowed**: the pair is
//!   kept and contributes nothing, which lets a pairs file switch a pair off
//!   without renumbering anything. `-0` reads as 0.
//! - Tokens are separated by spaces or tabs; everything from `#` is a
//!   comment; blank lines are skipped.
//! - A pair that appears twice is kept twice (the weights add up).
//!   Contradictory pairs (`a b` and `b a`) and cycles are kept too: they are
//!   data (disagreeing judges), not a malformed file.
//! - A file without any pair is an error.
//!
//! A file is read line by line through a buffered reader, never held whole:
//! [`read_pairs`] and [`read_pairs_capped`] stream it, [`parse_pairs_str`]
//! parses text already in memory, and all three parse each line with one
//! line parser, so they give the same pairs and the same errors (file, line,
//! kind and message). A byte that is not UTF-8 is an error of its line; the
//! reported error is the first bad line of the file, whether its fault is
//! its encoding or its content (a reader of the whole text would check the
//! encoding of every line first).
//!
//! [`read_pairs_capped`] also stops, while reading, at a count of pairs the
//! caller gives, with the caller's error: the memory-checked read of the
//! commands (`mem::read_pairs_checked`) refuses a file as soon as its pairs
//! cross the memory limit, before the pairs vector has grown beyond it,
//! never as an allocation abort.

use std::io::{self, BufRead, BufReader};
use std::path::Path;

use super::chunks::strip_bom_bytes;
use super::{io_error, parse_finite, quote, DataError, ErrorKind, NOT_UTF8};

/// One preference: row `winner` is preferred to row `loser` with the given
/// magnitude (finite, `>= 0`). The reader returns core's type, which the
/// learners take as is.
pub use ranklet_core::graph::Pair;

/// Reads a pairs file over a data set of `n_rows` rows, streaming it. See
/// the [module docs](self) for the format.
///
/// # Errors
///
/// A [`DataError`] naming the file (and line) for a missing file, a file
/// without pairs, a malformed line, a row number `>= n_rows`, a pair of a row
/// with itself, or a negative or non-finite magnitude.
pub fn read_pairs(path: impl AsRef<Path>, n_rows: usize) -> Result<Vec<Pair>, DataError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| io_error(&name, &e))?;
    // No count of pairs reaches `usize::MAX`: the vector would not fit in
    // the address space first.
    stream_pairs(BufReader::new(file), &name, n_rows, usize::MAX, |line, _| {
        DataError::at(&name, line, ErrorKind::Io, "more pairs than can be counted".to_owned())
    })
}

/// [`read_pairs`] holding at most `max_pairs` pairs: the pair after those
/// is refused with `full(line, max_pairs + 1)` (its line, the count it
/// would make) before the vector grows for it; the vector never grows past
/// `max_pairs` and is returned without spare capacity.
///
/// # Errors
///
/// The errors of [`read_pairs`] (as `E`); `full`'s.
pub fn read_pairs_capped<E: From<DataError>>(
    path: impl AsRef<Path>,
    n_rows: usize,
    max_pairs: usize,
    full: impl FnOnce(usize, usize) -> E,
) -> Result<Vec<Pair>, E> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| E::from(io_error(&name, &e)))?;
    stream_pairs(BufReader::new(file), &name, n_rows, max_pairs, full)
}

/// Parses pairs text; `name` is the file name printed in errors.
///
/// # Errors
///
/// As [`read_pairs`].
pub fn parse_pairs_str(text: &str, name: &str, n_rows: usize) -> Result<Vec<Pair>, DataError> {
    let text = super::strip_bom(text);
    let mut pairs = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        if let Some(p) = parse_line(raw, i + 1, name, n_rows)? {
            pairs.push(p);
        }
    }
    finish(pairs, name)
}

/// The longest pairs line read (bytes, terminator included).
const MAX_LINE: usize = 1 << 20;

/// The lines of `reader` (a leading byte-order mark dropped), parsed one at
/// a time into at most `max_pairs` pairs: the pair after those is refused
/// with `full(line, max_pairs + 1)` before the vector grows for it. The
/// vector grows by doubling (from 1024), capped at `max_pairs`, and is
/// returned shrunk to its length.
fn stream_pairs<R: BufRead, E: From<DataError>>(
    mut reader: R,
    name: &str,
    n_rows: usize,
    max_pairs: usize,
    full: impl FnOnce(usize, usize) -> E,
) -> Result<Vec<Pair>, E> {
    let mut pairs: Vec<Pair> = Vec::new();
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    loop {
        buf.clear();
        // A line is a few numbers: one longer than MAX_LINE bytes (a file
        // that is not a pairs file, or has no line breaks) is refused before
        // it is held whole.
        let got = io::Read::take(&mut reader, MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| io_error(name, &e))?;
        if got == 0 {
            break;
        }
        line_no += 1;
        if got > MAX_LINE && buf.last() != Some(&b'\n') {
            return Err(DataError::at(
                name,
                line_no,
                ErrorKind::Malformed,
                format!(
                    "a line longer than {MAX_LINE} bytes; a pairs file has one `winner loser [magnitude]` per line \
                     (is this the pairs file?)"
                ),
            )
            .into());
        }
        let bytes = if line_no == 1 { strip_bom_bytes(&buf) } else { &buf[..] };
        let text = std::str::from_utf8(bytes)
            .map_err(|_| DataError::at(name, line_no, ErrorKind::Encoding, NOT_UTF8.to_owned()))?;
        // The line without its terminator, as `str::lines` gives it (a
        // `\r` left at the very end of a file is whitespace to the parser).
        let text = text.strip_suffix('\n').map_or(text, |t| t.strip_suffix('\r').unwrap_or(t));
        let Some(p) = parse_line(text, line_no, name, n_rows)? else { continue };
        if pairs.len() >= max_pairs {
            return Err(full(line_no, pairs.len().saturating_add(1)));
        }
        if pairs.len() == pairs.capacity() {
            pairs.reserve_exact(pairs.len().max(1024).min(max_pairs - pairs.len()));
        }
        pairs.push(p);
    }
    let mut pairs = finish(pairs, name)?;
    pairs.shrink_to_fit();
    Ok(pairs)
}

/// One line (without its terminator), line `line_no` of `name`: its pair,
/// or `None` for a blank or comment line.
fn parse_line(raw: &str, line_no: usize, name: &str, n_rows: usize) -> Result<Option<Pair>, DataError> {
    let err = |kind, msg| DataError::at(name, line_no, kind, msg);
    let line = raw.find('#').map_or(raw, |p| &raw[..p]);
    let mut tokens = line.split_ascii_whitespace();
    let Some(w) = tokens.next() else { return Ok(None) };
    let (Some(l), m, None) = (tokens.next(), tokens.next(), tokens.next()) else {
        return Err(err(
            ErrorKind::Malformed,
            format!("expected `winner loser [magnitude]`, found {} fields", line.split_ascii_whitespace().count()),
        ));
    };
    let row = |tok: &str, what: &str| -> Result<usize, DataError> {
        let r: usize = tok
            .parse()
            .map_err(|_| err(ErrorKind::Malformed, format!("malformed {what} row number {}", quote(tok))))?;
        if r >= n_rows {
            return Err(err(
                ErrorKind::Unknown,
                format!(
                    "{what} row {r} does not exist: the data has {n_rows} rows, \
                     numbered from 0"
                ),
            ));
        }
        Ok(r)
    };
    let winner = row(w, "winner")?;
    let loser = row(l, "loser")?;
    if winner == loser {
        return Err(err(ErrorKind::Invalid, format!("row {winner} is paired with itself")));
    }
    let magnitude = match m {
        None => 1.0,
        Some(tok) => {
            let v = parse_finite(tok, "magnitude").map_err(|(k, msg)| err(k, msg))?;
            if v < 0.0 {
                return Err(err(ErrorKind::Invalid, format!("negative magnitude {}", quote(tok))));
            }
            v.abs() // -0 → 0
        }
    };
    Ok(Some(Pair { winner, loser, magnitude }))
}

/// The pairs of a whole file: an error when there are none.
fn finish(pairs: Vec<Pair>, name: &str) -> Result<Vec<Pair>, DataError> {
    if pairs.is_empty() {
        return Err(DataError::file(name, ErrorKind::Empty, "no pairs".to_owned()));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_with_defaults_duplicates_and_contradictions() {
        let p = parse_pairs_str("# c\n0 1\n\n1 0 2.5 # back\n0 1 0\n0 1 -0\n", "p", 2).unwrap();
        assert_eq!(p.len(), 4);
        assert_eq!(p[0].magnitude, 1.0);
        assert_eq!((p[1].winner, p[1].loser, p[1].magnitude), (1, 0, 2.5));
        assert_eq!(p[2].magnitude, 0.0);
        assert!(p[3].magnitude.is_sign_positive());
    }

    #[test]
    fn pairs_errors() {
        let kind = |t: &str| parse_pairs_str(t, "p", 3).unwrap_err().kind();
        assert_eq!(kind("0 3\n"), ErrorKind::Unknown);
        assert_eq!(kind("1 1\n"), ErrorKind::Invalid);
        assert_eq!(kind("0 1 -1\n"), ErrorKind::Invalid);
        assert_eq!(kind("0 1 nan\n"), ErrorKind::NonFinite);
        assert_eq!(kind("0\n"), ErrorKind::Malformed);
        assert_eq!(kind("0 1 1 1\n"), ErrorKind::Malformed);
        assert_eq!(kind("-1 1\n"), ErrorKind::Malformed);
        assert_eq!(kind("# only\n"), ErrorKind::Empty);
    }

    /// The streaming reader over `bytes` (as a file's), with room for
    /// `max` pairs.
    fn streamed(bytes: &[u8], n_rows: usize, max: usize) -> Result<Vec<Pair>, DataError> {
        stream_pairs(bytes, "p", n_rows, max, |line, count| {
            DataError::at("p", line, ErrorKind::Io, format!("full at pair {count}"))
        })
    }

    #[test]
    fn streaming_equals_the_text_parser() {
        let inputs: &[&str] = &[
            "# c\n0 1\n\n1 0 2.5 # back\n0 1 0\n0 1 -0\n",
            "0 1\n1 2 0.5",
            "\u{feff}0 1\r\n2 1 3\r\n",
            "0 1\r",
            "0\t1\t 2 \n\n\n",
            "0 3\n",
            "1 1\n",
            "0 1 -1\n",
            "0 1 nan\n",
            "0\n",
            "0 1 1 1\n",
            "-1 1\n",
            "# only\n",
            "",
            "0 1\n# a\n\n2 0 x\n",
            "0 1\n1 2\n\u{feff}0 1\n",
        ];
        for text in inputs {
            let want = parse_pairs_str(text, "p", 3);
            assert_eq!(streamed(text.as_bytes(), 3, usize::MAX), want, "{text:?}");
            // Errors name the same line.
            if let Err(e) = &want {
                assert_eq!(streamed(text.as_bytes(), 3, usize::MAX).unwrap_err().line(), e.line(), "{text:?}");
            }
        }
        // Non-UTF-8 bytes: an error of their line.
        let e = streamed(b"0 1\n1 2 # caf\xe9\n", 3, usize::MAX).unwrap_err();
        assert_eq!((e.kind(), e.line()), (ErrorKind::Encoding, Some(2)));
    }

    /// A line longer than `MAX_LINE` (no line breaks) is refused with its
    /// line; one just under it is read.
    #[test]
    fn streaming_refuses_a_line_without_end() {
        let mut long = b"0 1\n1 2".to_vec();
        long.resize(4 + MAX_LINE + 10, b' ');
        let e = streamed(&long, 3, usize::MAX).unwrap_err();
        assert_eq!((e.kind(), e.line()), (ErrorKind::Malformed, Some(2)));
        let mut fits = b"0 1\n1 2".to_vec();
        fits.resize(4 + MAX_LINE - 1, b' ');
        fits.push(b'\n');
        assert_eq!(streamed(&fits, 3, usize::MAX).unwrap().len(), 2);
    }

    #[test]
    fn streaming_stops_at_the_cap_without_spare_capacity() {
        let text = b"0 1\n# c\n1 2\n2 0\n";
        assert_eq!(streamed(text, 3, 3).unwrap().capacity(), 3);
        let e = streamed(text, 3, 2).unwrap_err();
        assert_eq!((e.line(), e.message()), (Some(4), "full at pair 3"));
        // A bad line before the cap is reached is reported as such.
        assert_eq!(streamed(b"0 1\n0 0\n1 2\n", 3, 1).unwrap_err().kind(), ErrorKind::Invalid);
    }
}
