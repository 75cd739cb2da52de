//! CSV reader (a minimal RFC 4180).
//!
//! - The first non-blank line is the header; its names must be non-empty and
//!   distinct.
//! - Fields are separated by commas. A field may be quoted with `"`; inside
//!   quotes a comma is data and `""` is one quote. A quoted field cannot span
//!   lines: a quote left open at the end of its line is an error. Spaces and
//!   tabs around an unquoted field, and around the quotes of a quoted one,
//!   are ignored. A quote inside an unquoted field is an error.
//! - Blank lines are skipped; there are no comment lines (`#` may be part of
//!   a column name). A leading byte-order mark is ignored.
//! - Every row has as many fields as the header; no field may be empty.
//! - The label column is [`CsvOptions::label_col`], or `label` when not given;
//!   the optional query column is [`CsvOptions::qid_col`] (any non-empty
//!   text). Every other column is a feature, in header order, and must be a
//!   finite `f64`. Every feature is stored, zeros included.
//! - With [`CsvOptions::optional_label`] (rows to score), a file without a
//!   `label` column (and no `label_col` asked for) is unlabelled: every
//!   column but the qid is a feature, and the labels are 0.

use std::{borrow::Cow, path::Path};

use rayon::prelude::*;

use super::chunks::{read_bytes, split_lines, split_str, strip_bom_bytes, utf8_chunks, CHUNK_BYTES};
use super::{parse_finite, quote, strip_bom, DataError, Dataset, ErrorKind, Interner, Qids};

/// Options of the CSV reader.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CsvOptions {
    /// The label column (`--label-col`); `label` when `None`.
    pub label_col: Option<String>,
    /// The query-id column (`--qid-col`), if any.
    pub qid_col: Option<String>,
    /// Rows may come without labels (scoring): without `label_col` and
    /// without a `label` column, every column but the qid is a feature and
    /// the labels are 0.
    pub optional_label: bool,
}

/// Reads a CSV file with a header. See the [module docs](self) for the
/// format.
///
/// # Errors
///
/// A [`DataError`] naming the file (and line) for a missing or non-UTF-8
/// file, a missing header, an unknown label or qid column, a file without
/// data rows, or any malformed row.
pub fn read_csv(path: impl AsRef<Path>, opts: &CsvOptions) -> Result<Dataset, DataError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let bytes = read_bytes(path)?;
    let chunks = utf8_chunks(&split_lines(strip_bom_bytes(&bytes), CHUNK_BYTES), &name, 0)?;
    parse_chunks(&chunks, &name, opts)
}

/// Parses CSV text; `name` is the file name printed in errors.
///
/// # Errors
///
/// As [`read_csv`].
pub fn parse_csv_str(text: &str, name: &str, opts: &CsvOptions) -> Result<Dataset, DataError> {
    parse_chunks(&split_str(strip_bom(text), CHUNK_BYTES), name, opts)
}

/// The columns of the file: what each field of a record is.
struct Columns {
    header_line: usize,
    header: Vec<String>,
    /// The label column; `None` for unlabelled rows.
    label_at: Option<usize>,
    qid_at: Option<usize>,
}

/// One chunk's rows (absolute line numbers), up to its first error.
#[derive(Default)]
struct Part {
    row_ptr: Vec<usize>,
    col: Vec<u32>,
    val: Vec<f64>,
    labels: Vec<f64>,
    row_lines: Vec<usize>,
    qids: Vec<String>,
    error: Option<DataError>,
}

/// Finds the header (the first non-blank line, in whichever chunk), then
/// parses the rest of that chunk and the later chunks in parallel (rayon)
/// and joins them in order. Records cannot span lines, so no row depends on
/// another: the first error of the earliest failing chunk is the file's
/// first error, and line numbers are the chunk's line offset plus its own.
fn parse_chunks(chunks: &[&str], name: &str, opts: &CsvOptions) -> Result<Dataset, DataError> {
    let mut offsets = Vec::with_capacity(chunks.len());
    let mut lines = 0usize;
    for c in chunks {
        offsets.push(lines);
        lines += c.bytes().filter(|&b| b == b'\n').count();
    }
    let mut k = 0usize;
    let (header_line, header, rest) = loop {
        let Some(chunk) = chunks.get(k) else {
            return Err(DataError::file(name, ErrorKind::Empty, "empty file: no header line".to_owned()));
        };
        let mut records = Records::at_line(chunk, name, offsets[k]);
        if let Some((line, header)) = records.header_opt()? {
            break (line, header, records);
        }
        k += 1;
    };
    let cols = columns(header_line, header, name, opts)?;
    let d = cols.header.len() - usize::from(cols.label_at.is_some()) - usize::from(cols.qid_at.is_some());

    let mut records = vec![rest];
    records.extend((k + 1..chunks.len()).map(|j| Records::at_line(chunks[j], name, offsets[j])));
    let parts: Vec<Part> = if records.len() == 1 {
        records.into_iter().map(|r| parse_part(r, &cols, name)).collect()
    } else {
        records.into_par_iter().map(|r| parse_part(r, &cols, name)).collect()
    };

    let rows: usize = parts.iter().map(|p| p.labels.len()).sum();
    let mut row_ptr = Vec::with_capacity(rows + 1);
    row_ptr.push(0usize);
    let (mut col, mut val) = (Vec::with_capacity(rows * d), Vec::with_capacity(rows * d));
    let (mut labels, mut row_lines) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
    let mut qids = Interner::default();
    let mut qid_of_row = Vec::new();
    for p in parts {
        if let Some(e) = p.error {
            return Err(e);
        }
        let base = col.len();
        row_ptr.extend(p.row_ptr[1..].iter().map(|&e| e + base));
        col.extend_from_slice(&p.col);
        val.extend_from_slice(&p.val);
        labels.extend_from_slice(&p.labels);
        row_lines.extend_from_slice(&p.row_lines);
        qid_of_row.extend(p.qids.iter().map(|q| qids.intern(q)));
    }
    if labels.is_empty() {
        return Err(DataError::file(name, ErrorKind::Empty, "no data rows".to_owned()));
    }
    let feature_names: Vec<String> = cols
        .header
        .iter()
        .enumerate()
        .filter(|&(j, _)| Some(j) != cols.label_at && Some(j) != cols.qid_at)
        .map(|(_, h)| h.clone())
        .collect();
    Ok(Dataset {
        d,
        row_ptr,
        col,
        val,
        labels,
        qids: cols.qid_at.map(|_| Qids { names: qids.into_names(), of_row: qid_of_row }),
        row_lines,
        feature_names: Some(feature_names),
    })
}

/// The label and qid columns of the header (errors name the header line).
fn columns(header_line: usize, header: Vec<String>, name: &str, opts: &CsvOptions) -> Result<Columns, DataError> {
    let label_name = opts.label_col.as_deref().unwrap_or("label");
    let label_at = match find_column(&header, label_name) {
        Some(j) => Some(j),
        None if opts.optional_label && opts.label_col.is_none() => None,
        None => {
            let hint = if opts.label_col.is_none() {
                " (choose one with --label-col NAME, e.g. --label-col relevance; score reads rows without labels)"
            } else {
                ""
            };
            return Err(DataError::at(
                name,
                header_line,
                ErrorKind::Unknown,
                format!("no label column {}{hint}; the columns are {}", quote(label_name), list_columns(&header)),
            ));
        }
    };
    let qid_at = match &opts.qid_col {
        None => None,
        Some(q) => match find_column(&header, q) {
            Some(j) if Some(j) == label_at => {
                return Err(DataError::at(
                    name,
                    header_line,
                    ErrorKind::Invalid,
                    format!("column {} cannot be both the label and the qid", quote(q)),
                ))
            }
            Some(j) => Some(j),
            None => {
                return Err(DataError::at(
                    name,
                    header_line,
                    ErrorKind::Unknown,
                    format!("no qid column {}; the columns are {}", quote(q), list_columns(&header)),
                ))
            }
        },
    };
    Ok(Columns { header_line, header, label_at, qid_at })
}

/// Parses the records of one chunk, stopping at the first error.
fn parse_part(mut records: Records<'_>, cols: &Columns, name: &str) -> Part {
    let mut p = Part { row_ptr: vec![0], ..Part::default() };
    let mut fields: Vec<Cow<'_, str>> = Vec::with_capacity(cols.header.len());
    loop {
        match records.next_record(&mut fields) {
            Ok(None) => return p,
            Ok(Some(line_no)) => {
                if let Err(e) = parse_row(&fields, line_no, cols, name, &mut p) {
                    let keep = *p.row_ptr.last().unwrap_or(&0);
                    p.col.truncate(keep);
                    p.val.truncate(keep);
                    p.qids.truncate(p.labels.len());
                    p.error = Some(e);
                    return p;
                }
            }
            Err(e) => {
                p.error = Some(e);
                return p;
            }
        }
    }
}

/// One record into `p`.
fn parse_row(
    fields: &[Cow<'_, str>],
    line_no: usize,
    cols: &Columns,
    name: &str,
    p: &mut Part,
) -> Result<(), DataError> {
    let err = |kind, msg| DataError::at(name, line_no, kind, msg);
    let header = &cols.header;
    if fields.len() != header.len() {
        return Err(err(
            ErrorKind::Inconsistent,
            format!("{} fields but the header (line {}) has {} columns", fields.len(), cols.header_line, header.len()),
        ));
    }
    let mut feature = 0u32;
    let mut label = 0.0;
    for (j, field) in fields.iter().enumerate() {
        if field.is_empty() {
            return Err(err(ErrorKind::Malformed, format!("empty field in column {}", quote(&header[j]))));
        }
        if Some(j) == cols.qid_at {
            p.qids.push(field.to_string());
            continue;
        }
        let what = if Some(j) == cols.label_at { "label" } else { "value" };
        let v = parse_finite(field, what)
            .map_err(|(kind, msg)| err(kind, format!("{msg} in column {}", quote(&header[j]))))?;
        if Some(j) == cols.label_at {
            label = v;
        } else {
            p.col.push(feature);
            p.val.push(v);
            feature += 1;
        }
    }
    p.labels.push(label);
    p.row_ptr.push(p.col.len());
    p.row_lines.push(line_no);
    Ok(())
}

fn find_column(header: &[String], name: &str) -> Option<usize> {
    header.iter().position(|h| h == name)
}

/// `"a", "b", "c"`, cut after 30 names.
pub(crate) fn list_columns(header: &[String]) -> String {
    let mut s: Vec<String> = header.iter().take(30).map(|h| quote(h)).collect();
    if header.len() > 30 {
        s.push(format!("… ({} in all)", header.len()));
    }
    s.join(", ")
}

/// Iterates over the non-blank lines of a CSV text as records.
pub(crate) struct Records<'a> {
    lines: std::iter::Enumerate<std::str::Lines<'a>>,
    name: &'a str,
    /// Lines before the text (a chunk of a larger file).
    offset: usize,
}

impl<'a> Records<'a> {
    pub(crate) fn new(text: &'a str, name: &'a str) -> Self {
        Records { lines: strip_bom(text).lines().enumerate(), name, offset: 0 }
    }

    /// The records of a chunk that starts after `offset` lines of its file
    /// (line numbers count from there; no byte-order mark is dropped).
    fn at_line(text: &'a str, name: &'a str, offset: usize) -> Self {
        Records { lines: text.lines().enumerate(), name, offset }
    }

    /// Reads the header: the first non-blank line, with distinct non-empty
    /// names. Returns its line number and the names.
    pub(crate) fn header(&mut self) -> Result<(usize, Vec<String>), DataError> {
        self.header_opt()?
            .ok_or_else(|| DataError::file(self.name, ErrorKind::Empty, "empty file: no header line".to_owned()))
    }

    /// [`header`](Self::header), `None` when the text has no non-blank line.
    fn header_opt(&mut self) -> Result<Option<(usize, Vec<String>)>, DataError> {
        let mut fields = Vec::new();
        let Some(line_no) = self.next_record(&mut fields)? else {
            return Ok(None);
        };
        let header: Vec<String> = fields.into_iter().map(Cow::into_owned).collect();
        for (j, h) in header.iter().enumerate() {
            if h.is_empty() {
                return Err(DataError::at(
                    self.name,
                    line_no,
                    ErrorKind::Malformed,
                    format!("empty column name in the header (column {})", j + 1),
                ));
            }
            if let Some(k) = header[..j].iter().position(|g| g == h) {
                return Err(DataError::at(
                    self.name,
                    line_no,
                    ErrorKind::Duplicate,
                    format!("column name {} appears twice in the header (columns {} and {})", quote(h), k + 1, j + 1),
                ));
            }
        }
        Ok(Some((line_no, header)))
    }

    /// Splits the next non-blank line into `fields`; returns its 1-based
    /// line number, or `None` at the end of the text.
    pub(crate) fn next_record(&mut self, fields: &mut Vec<Cow<'a, str>>) -> Result<Option<usize>, DataError> {
        for (i, line) in self.lines.by_ref() {
            if line.trim().is_empty() {
                continue;
            }
            let line_no = self.offset + i + 1;
            split_record(line, fields).map_err(|msg| DataError::at(self.name, line_no, ErrorKind::Malformed, msg))?;
            return Ok(Some(line_no));
        }
        Ok(None)
    }
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Splits one line into fields (see the module docs for the rules).
pub(crate) fn split_record<'a>(line: &'a str, out: &mut Vec<Cow<'a, str>>) -> Result<(), String> {
    out.clear();
    let bytes = line.as_bytes();
    let mut pos = 0;
    loop {
        // One field starting at `pos`.
        while pos < bytes.len() && is_blank(bytes[pos]) {
            pos += 1;
        }
        if pos < bytes.len() && bytes[pos] == b'"' {
            let start = pos + 1;
            let mut i = start;
            let mut owned: Option<String> = None;
            let mut chunk = start;
            loop {
                match bytes[i..].iter().position(|&b| b == b'"') {
                    None => {
                        return Err(format!("unterminated quote in field {} (fields cannot span lines)", out.len() + 1))
                    }
                    Some(k) => {
                        let q = i + k;
                        if bytes.get(q + 1) == Some(&b'"') {
                            // An escaped quote: keep one.
                            owned.get_or_insert_with(String::new).push_str(&line[chunk..=q]);
                            i = q + 2;
                            chunk = i;
                        } else {
                            let field = match owned {
                                None => Cow::Borrowed(&line[start..q]),
                                Some(mut s) => {
                                    s.push_str(&line[chunk..q]);
                                    Cow::Owned(s)
                                }
                            };
                            out.push(field);
                            pos = q + 1;
                            break;
                        }
                    }
                }
            }
            while pos < bytes.len() && is_blank(bytes[pos]) {
                pos += 1;
            }
            match bytes.get(pos) {
                None => return Ok(()),
                Some(b',') => pos += 1,
                Some(_) => return Err(format!("unexpected text after the closing quote of field {}", out.len())),
            }
        } else {
            let end = bytes[pos..].iter().position(|&b| b == b',').map_or(bytes.len(), |k| pos + k);
            let field = line[pos..end].trim_matches(|c| c == ' ' || c == '\t');
            if field.contains('"') {
                return Err(format!("quote inside unquoted field {} {}", out.len() + 1, quote(field)));
            }
            out.push(Cow::Borrowed(field));
            if end == bytes.len() {
                return Ok(());
            }
            pos = end + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Result<Vec<String>, String> {
        let mut v = Vec::new();
        split_record(line, &mut v)?;
        Ok(v.into_iter().map(Cow::into_owned).collect())
    }

    #[test]
    fn split_plain_and_quoted() {
        assert_eq!(split("a,b,c").unwrap(), ["a", "b", "c"]);
        assert_eq!(split(" a , b ,c ").unwrap(), ["a", "b", "c"]);
        assert_eq!(split("a,,").unwrap(), ["a", "", ""]);
        assert_eq!(split("\"x,y\",2").unwrap(), ["x,y", "2"]);
        assert_eq!(split("\"say \"\"hi\"\"\", 3").unwrap(), ["say \"hi\"", "3"]);
        assert_eq!(split("\"\"").unwrap(), [""]);
        assert_eq!(split(" \"a\" ,\"\"\"\"").unwrap(), ["a", "\""]);
    }

    #[test]
    fn split_errors() {
        assert!(split("\"abc").unwrap_err().contains("unterminated"));
        assert!(split("\"a\"\"").unwrap_err().contains("unterminated"));
        assert!(split("\"a\"x,1").unwrap_err().contains("after the closing"));
        assert!(split("a\"b,1").unwrap_err().contains("quote inside"));
    }

    #[test]
    fn label_and_qid_columns() {
        let opts = CsvOptions { label_col: Some("y".into()), qid_col: Some("q".into()), ..Default::default() };
        let ds = parse_csv_str("q,x1,y,x2\nA,1,5,2\nB,3,6,4\nA,0,7,0\n", "t.csv", &opts).unwrap();
        assert_eq!(ds.n_rows(), 3);
        assert_eq!(ds.n_features(), 2);
        assert_eq!(ds.labels(), &[5.0, 6.0, 7.0]);
        assert_eq!(ds.to_dense(100).unwrap(), vec![1.0, 2.0, 3.0, 4.0, 0.0, 0.0]);
        assert_eq!(ds.feature_names().unwrap(), &["x1", "x2"]);
        let g = ds.query_groups();
        assert_eq!(g.query(0), &[0, 2]);
        assert_eq!(g.query(1), &[1]);
    }

    /// Every cut into chunks gives the one-chunk result, errors included.
    #[test]
    fn chunked_parse_equals_one_pass() {
        let texts = [
            "\n\n q,x1,y,x2\nA,1,5,2\n\nB,3,6,4\r\nA,0,7,0\n\"C\",1e-3,+.5,-2\n",
            "q,x1,y,x2\nA,1,5,2\nB,3,6\nA,0,7,0\n",
            "q,x1,y,x2\nA,1,5,2\nB,3,6,4\nA,0,nan,0\n",
            "q,x1,y,x2\nA,1,5,2\nB,\"3,6,4\nA,0,7,0\n",
            "q,x1,y,x2\n\n\n",
            "\n\n",
            "q,x1,q\n1,2,3\n",
            "x1,label\n1,2\n3,4",
        ];
        let opts = CsvOptions { label_col: Some("y".into()), qid_col: Some("q".into()), ..Default::default() };
        for text in texts {
            for opts in [&opts, &CsvOptions::default()] {
                let one = parse_chunks(&split_str(text, usize::MAX), "t.csv", opts);
                for chunk in 0..=text.len() {
                    assert_eq!(parse_chunks(&split_str(text, chunk), "t.csv", opts), one, "{text:?} cut at {chunk}");
                }
            }
        }
    }

    #[test]
    fn default_label_column() {
        let ds = parse_csv_str("a,label\n1,2\n", "t.csv", &CsvOptions::default()).unwrap();
        assert_eq!(ds.labels(), &[2.0]);
        let e = parse_csv_str("a,b\n1,2\n", "t.csv", &CsvOptions::default()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unknown);
        assert!(e.to_string().contains("--label-col"), "{e}");
        assert!(e.to_string().contains("\"a\", \"b\""), "{e}");
    }
}
