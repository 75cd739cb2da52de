//! SVMlight / LETOR reader.
//!
//! One data row per line:
//!
//! ```text
//! <label> [qid:<id>] <index>:<value> <index>:<value> ... [# comment]
//! ```
//!
//! - Tokens are separated by spaces or tabs; `\r\n` line ends are accepted.
//! - Everything from the first `#` to the end of the line is a comment; a line
//!   that is blank after removing it is skipped (it is not a data row).
//! - `<label>` and `<value>` are finite `f64` (NaN, infinities and numbers
//!   that overflow `f64` are errors).
//! - `qid:<id>` comes right after the label; `<id>` is an unsigned 64-bit
//!   integer (so `qid:07` and `qid:7` are the same query). Either every data
//!   row has a qid or none has: a file without qids is one query, a file
//!   with qids on some lines only is an error that names the first line of
//!   each kind.
//! - `<index>` is 1-based (index 0 is an error) and at most `u32::MAX`;
//!   indices must be **strictly increasing** within a line. A decreasing or
//!   repeated index is an error: the reader does not sort, so a file with a
//!   repeated index cannot silently mean either the first or the last value.
//!   LETOR files are increasing.
//! - The dimension is the largest index in the file, or
//!   [`SvmlightOptions::num_features`] when given, in which case an index
//!   beyond it is an error (test data scored against a model trained on
//!   `d` features).
//! - Explicit zeros (`3:0`) are stored as entries.

use std::{collections::HashMap, path::Path};

use super::{parse_finite, quote, read_text, strip_bom, DataError, Dataset, ErrorKind, Qids};

/// Options of the SVMlight reader.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SvmlightOptions {
    /// The dimension `d` to use instead of the largest index in the file;
    /// any index above it is an error.
    pub num_features: Option<usize>,
}

/// Reads an SVMlight / LETOR file. See the [module docs](self) for the format.
///
/// # Errors
///
/// A [`DataError`] naming the file (and line) for a missing or non-UTF-8
/// file, a file without data rows, or any malformed line.
pub fn read_svmlight(path: impl AsRef<Path>, opts: &SvmlightOptions) -> Result<Dataset, DataError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    parse_svmlight_str(&text, &path.display().to_string(), opts)
}

/// Parses SVMlight text; `name` is the file name printed in errors.
///
/// # Errors
///
/// As [`read_svmlight`].
pub fn parse_svmlight_str(text: &str, name: &str, opts: &SvmlightOptions) -> Result<Dataset, DataError> {
    let text = strip_bom(text);
    let err = |line: usize, (kind, msg): (ErrorKind, String)| DataError::at(name, line, kind, msg);

    let mut row_ptr = vec![0usize];
    let mut col: Vec<u32> = Vec::new();
    let mut val: Vec<f64> = Vec::new();
    let mut labels: Vec<f64> = Vec::new();
    let mut row_lines: Vec<usize> = Vec::new();

    let mut qid_index: HashMap<u64, usize> = HashMap::new();
    let mut qid_names: Vec<String> = Vec::new();
    let mut qid_of_row: Vec<usize> = Vec::new();
    let mut last_qid: Option<(u64, usize)> = None;
    let mut first_with_qid: Option<usize> = None;
    let mut first_without_qid: Option<usize> = None;

    let mut max_index = 0usize;

    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = match raw.find('#') {
            Some(p) => &raw[..p],
            None => raw,
        };
        let mut tokens = line.split_ascii_whitespace();
        let Some(label_tok) = tokens.next() else {
            continue;
        };
        let label = parse_finite(label_tok, "label").map_err(|e| err(line_no, e))?;

        let mut prev = 0usize; // last 1-based index on this line; 0 = none yet
        let mut has_qid = false;
        for (t, tok) in tokens.enumerate() {
            let Some((key, value)) = tok.split_once(':') else {
                return Err(err(
                    line_no,
                    (ErrorKind::Malformed, format!("expected <index>:<value> or qid:<id>, found {}", quote(tok))),
                ));
            };
            if key == "qid" {
                if t != 0 {
                    return Err(err(
                        line_no,
                        (ErrorKind::Malformed, format!("{} must come right after the label", quote(tok))),
                    ));
                }
                let q: u64 = value.parse().map_err(|_| {
                    err(
                        line_no,
                        (ErrorKind::Malformed, format!("malformed query id {} (an unsigned integer)", quote(tok))),
                    )
                })?;
                let g = match last_qid {
                    Some((lq, lg)) if lq == q => lg,
                    _ => {
                        let next = qid_names.len();
                        let g = *qid_index.entry(q).or_insert(next);
                        if g == next {
                            qid_names.push(q.to_string());
                        }
                        g
                    }
                };
                last_qid = Some((q, g));
                qid_of_row.push(g);
                has_qid = true;
                continue;
            }
            let index: usize = key.parse().map_err(|_| {
                err(line_no, (ErrorKind::Malformed, format!("malformed feature index in {}", quote(tok))))
            })?;
            if index == 0 {
                return Err(err(
                    line_no,
                    (ErrorKind::FeatureIndex, format!("feature index 0 in {}: indices are 1-based", quote(tok))),
                ));
            }
            if index <= prev {
                return Err(err(
                    line_no,
                    (
                        ErrorKind::FeatureIndex,
                        format!(
                            "feature index {index} after index {prev}: indices must be \
                             strictly increasing within a line"
                        ),
                    ),
                ));
            }
            if let Some(d) = opts.num_features {
                if index > d {
                    return Err(err(
                        line_no,
                        (ErrorKind::FeatureIndex, format!("feature index {index} is beyond the {d} features expected")),
                    ));
                }
            }
            if index > u32::MAX as usize {
                return Err(err(
                    line_no,
                    (ErrorKind::FeatureIndex, format!("feature index {index} is too large (at most {})", u32::MAX)),
                ));
            }
            let v = parse_finite(value, "feature value")
                .map_err(|(kind, msg)| err(line_no, (kind, format!("{msg} in {}", quote(tok)))))?;
            col.push((index - 1) as u32);
            val.push(v);
            prev = index;
        }

        if has_qid {
            first_with_qid.get_or_insert(line_no);
            if let Some(without) = first_without_qid {
                return Err(err(
                    line_no,
                    (
                        ErrorKind::Inconsistent,
                        format!(
                            "this line has a qid but line {without} has none: either every \
                             data line has a qid or none does"
                        ),
                    ),
                ));
            }
        } else {
            first_without_qid.get_or_insert(line_no);
            if let Some(with) = first_with_qid {
                return Err(err(
                    line_no,
                    (
                        ErrorKind::Inconsistent,
                        format!(
                            "this line has no qid but line {with} has one: either every \
                             data line has a qid or none does"
                        ),
                    ),
                ));
            }
        }

        max_index = max_index.max(prev);
        labels.push(label);
        row_ptr.push(col.len());
        row_lines.push(line_no);
    }

    if labels.is_empty() {
        return Err(DataError::file(name, ErrorKind::Empty, "no data rows".to_owned()));
    }
    let qids = first_with_qid.map(|_| Qids { names: qid_names, of_row: qid_of_row });
    Ok(Dataset {
        d: opts.num_features.unwrap_or(max_index),
        row_ptr,
        col,
        val,
        labels,
        qids,
        row_lines,
        feature_names: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Dataset, DataError> {
        parse_svmlight_str(text, "t.light", &SvmlightOptions::default())
    }

    #[test]
    fn basic_rows_comments_and_blank_lines() {
        let ds = parse("# header\n\n1 qid:3 1:0.5 4:2 # tail\n\t0 qid:3 2:-1\r\n2 qid:1\n").unwrap();
        assert_eq!(ds.n_rows(), 3);
        assert_eq!(ds.n_features(), 4);
        assert_eq!(ds.labels(), &[1.0, 0.0, 2.0]);
        assert_eq!(ds.row(0), (&[0u32, 3][..], &[0.5, 2.0][..]));
        assert_eq!(ds.row(1), (&[1u32][..], &[-1.0][..]));
        assert_eq!(ds.row(2).0.len(), 0);
        assert_eq!(ds.query_ids().unwrap(), &["3".to_owned(), "1".to_owned()]);
        assert_eq!(ds.source_line(0), 3);
        assert_eq!(ds.source_line(2), 5);
    }

    #[test]
    fn qid_is_canonical_integer() {
        let ds = parse("1 qid:007 1:1\n0 qid:7 1:2\n").unwrap();
        assert_eq!(ds.query_groups().len(), 1);
        assert_eq!(ds.qid_of_row(1), Some("7"));
        assert!(parse("1 qid:abc 1:1\n").is_err());
    }

    #[test]
    fn num_features_sets_and_bounds_d() {
        let opts = SvmlightOptions { num_features: Some(10) };
        let ds = parse_svmlight_str("1 3:1\n", "t", &opts).unwrap();
        assert_eq!(ds.n_features(), 10);
        let e = parse_svmlight_str("1 3:1\n0 11:1\n", "t", &opts).unwrap_err();
        assert_eq!((e.kind(), e.line()), (ErrorKind::FeatureIndex, Some(2)));
    }

    #[test]
    fn qid_must_follow_label() {
        let e = parse("1 1:1 qid:2\n").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Malformed);
        let e = parse("1 qid:1 qid:2 1:1\n").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Malformed);
    }
}
