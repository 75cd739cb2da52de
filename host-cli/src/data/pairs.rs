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

use std::path::Path;

use super::{parse_finite, quote, read_text, DataError, ErrorKind};

/// One preference: row `winner` is preferred to row `loser` with the given
/// magnitude (finite, `>= 0`). The reader returns core's type, which the
/// learners take as is.
pub use ranklet_core::graph::Pair;

/// Reads a pairs file over a data set of `n_rows` rows. See the
/// [module docs](self) for the format.
///
/// # Errors
///
/// A [`DataError`] naming the file (and line) for a missing file, a file
/// without pairs, a malformed line, a row number `>= n_rows`, a pair of a row
/// with itself, or a negative or non-finite magnitude.
pub fn read_pairs(path: impl AsRef<Path>, n_rows: usize) -> Result<Vec<Pair>, DataError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    parse_pairs_str(&text, &path.display().to_string(), n_rows)
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
        let line_no = i + 1;
        let err = |kind, msg| DataError::at(name, line_no, kind, msg);
        let line = raw.find('#').map_or(raw, |p| &raw[..p]);
        let mut tokens = line.split_ascii_whitespace();
        let Some(w) = tokens.next() else { continue };
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
        pairs.push(Pair { winner, loser, magnitude });
    }
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
}
