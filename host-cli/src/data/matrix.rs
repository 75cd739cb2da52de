//! Dense matrices as text, with or without ids: the shared parser of node
//! kernels ([`read_node_kernel`](super::nodes::read_node_kernel)) and of
//! label matrices ([`read_edge_matrix`](super::edges::read_edge_matrix)).
//!
//! Two layouts, tokens separated by spaces and/or tabs:
//!
//! ```text
//! labelled                        bare
//!          c1   c2   c3           0.5  1.0  0.0
//! r1       0.5  1.0  0.0          0.2  0.1  0.3
//! r2       0.2  0.1  0.3
//! ```
//!
//! - **Labelled**: the first data line holds the `m` column ids; every
//!   following data line holds a row id and then `m` values. Ids are distinct
//!   within the header and within the row ids.
//! - **Bare**: every data line holds `m` values (the format of RLScore's
//!   drug–target files, `data/drug-target-nr/`). Ids are the 0-based
//!   positions, written in decimal: rows `"0"`, `"1"`, …, columns likewise.
//! - [`MatrixLayout::Auto`] (the default) picks labelled when the second data
//!   line has exactly one token more than the first, bare otherwise. A bare
//!   file whose second line is ragged in just that way is therefore read as
//!   labelled, and then fails on its first value-looking id or ragged row;
//!   name the layout to rule that out.
//! - Blank lines and everything from `#` to the end of a line are skipped, so
//!   an id cannot contain `#`. A leading byte-order mark is ignored.
//! - Every value is a finite `f64`; every row has exactly `m` values; there
//!   is at least one row and one column.

use std::collections::HashMap;

use super::{parse_finite, quote, strip_bom, DataError, ErrorKind};

/// How a matrix file names its rows and columns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum MatrixLayout {
    /// Labelled when the second data line has one token more than the first,
    /// bare otherwise.
    #[default]
    Auto,
    /// A header line of column ids, then rows that start with their id.
    Labelled,
    /// Values only; ids are 0-based positions (`"0"`, `"1"`, …).
    Bare,
}

/// A dense matrix read from text: ids of rows and columns, row-major values,
/// the line of each row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TextMatrix {
    pub(crate) row_ids: Vec<String>,
    pub(crate) col_ids: Vec<String>,
    /// Row-major, `row_ids.len() × col_ids.len()`.
    pub(crate) values: Vec<f64>,
    /// 1-based line of each row.
    pub(crate) row_lines: Vec<usize>,
    /// 1-based line of the header (labelled layout only).
    pub(crate) header_line: Option<usize>,
    /// The layout the file was read with (never `Auto`).
    pub(crate) layout: MatrixLayout,
}

impl TextMatrix {
    pub(crate) fn n_rows(&self) -> usize {
        self.row_ids.len()
    }

    pub(crate) fn n_cols(&self) -> usize {
        self.col_ids.len()
    }
}

/// The data lines of a text: (1-based line number, tokens), comments and
/// blank lines dropped.
fn data_lines(text: &str) -> impl Iterator<Item = (usize, std::str::SplitAsciiWhitespace<'_>)> {
    strip_bom(text).lines().enumerate().filter_map(|(i, raw)| {
        let line = raw.find('#').map_or(raw, |p| &raw[..p]);
        let mut probe = line.split_ascii_whitespace();
        probe.next().map(|_| (i + 1, line.split_ascii_whitespace()))
    })
}

/// Parses a matrix; `name` is the file name printed in errors.
pub(crate) fn parse_matrix_str(text: &str, name: &str, layout: MatrixLayout) -> Result<TextMatrix, DataError> {
    let mut lines = data_lines(text).peekable();
    let Some(&(first_no, ref first)) = lines.peek() else {
        return Err(DataError::file(name, ErrorKind::Empty, "no data lines".to_owned()));
    };
    let first_len = first.clone().count();
    let layout = match layout {
        MatrixLayout::Auto => {
            let second_len = data_lines(text).nth(1).map(|(_, t)| t.count());
            if second_len == Some(first_len + 1) {
                MatrixLayout::Labelled
            } else {
                MatrixLayout::Bare
            }
        }
        l => l,
    };

    let mut col_ids: Vec<String> = Vec::new();
    let mut header_line = None;
    if layout == MatrixLayout::Labelled {
        let (line_no, tokens) = lines.next().expect("peeked");
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (j, id) in tokens.enumerate() {
            if let Some(k) = seen.insert(id, j) {
                return Err(DataError::at(
                    name,
                    line_no,
                    ErrorKind::Duplicate,
                    format!("column id {} appears twice in the header (columns {} and {})", quote(id), k + 1, j + 1),
                ));
            }
            col_ids.push(id.to_owned());
        }
        header_line = Some(line_no);
    }
    let m = if layout == MatrixLayout::Labelled { col_ids.len() } else { first_len };
    let expect = |n_tokens: usize| match layout {
        MatrixLayout::Labelled => {
            format!("{n_tokens} fields, expected {} (a row id and {m} values, as the header has {m} column ids)", m + 1)
        }
        _ => format!("{n_tokens} values, expected {m} (as on line {first_no})"),
    };

    let mut row_ids: Vec<String> = Vec::new();
    let mut row_index: HashMap<String, usize> = HashMap::new();
    let mut values: Vec<f64> = Vec::new();
    let mut row_lines: Vec<usize> = Vec::new();
    for (line_no, mut tokens) in lines {
        let err = |kind, msg| DataError::at(name, line_no, kind, msg);
        let n_tokens = tokens.clone().count();
        let id_tokens = usize::from(layout == MatrixLayout::Labelled);
        if n_tokens != m + id_tokens {
            return Err(err(ErrorKind::Inconsistent, expect(n_tokens)));
        }
        let id = if id_tokens == 1 { tokens.next().expect("counted").to_owned() } else { row_ids.len().to_string() };
        if let Some(&k) = row_index.get(&id) {
            return Err(err(
                ErrorKind::Duplicate,
                format!("row id {} already used on line {}", quote(&id), row_lines[k]),
            ));
        }
        for (j, tok) in tokens.enumerate() {
            let v = parse_finite(tok, "value").map_err(|(kind, msg)| {
                let column = match layout {
                    MatrixLayout::Labelled => format!("column {}", quote(&col_ids[j])),
                    _ => format!("column {}", j + 1),
                };
                err(kind, format!("{msg} in {column}"))
            })?;
            values.push(v);
        }
        row_index.insert(id.clone(), row_ids.len());
        row_ids.push(id);
        row_lines.push(line_no);
    }
    if row_ids.is_empty() {
        return Err(DataError::file(name, ErrorKind::Empty, "a header of column ids but no rows".to_owned()));
    }
    if layout == MatrixLayout::Bare {
        col_ids = (0..m).map(|j| j.to_string()).collect();
    }
    Ok(TextMatrix { row_ids, col_ids, values, row_lines, header_line, layout })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<TextMatrix, DataError> {
        parse_matrix_str(text, "m.tsv", MatrixLayout::Auto)
    }

    #[test]
    fn labelled_and_bare_layouts() {
        let m = parse("# kernel\n\ta\tb\nb\t1\t2 # row b\n\na\t3\t4\n").unwrap();
        assert_eq!(m.layout, MatrixLayout::Labelled);
        assert_eq!(m.col_ids, ["a", "b"]);
        assert_eq!(m.row_ids, ["b", "a"]);
        assert_eq!(m.values, [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(m.row_lines, [3, 5]);
        assert_eq!(m.header_line, Some(2));

        let m = parse("1 2 3\n4 5 6\n").unwrap();
        assert_eq!(m.layout, MatrixLayout::Bare);
        assert_eq!((m.n_rows(), m.n_cols()), (2, 3));
        assert_eq!(m.row_ids, ["0", "1"]);
        assert_eq!(m.col_ids, ["0", "1", "2"]);

        // One line: bare.
        assert_eq!(parse("7\n").unwrap().values, [7.0]);
        // Forced layouts.
        let m = parse_matrix_str("x y\n1 2\n", "m", MatrixLayout::Bare).unwrap_err();
        assert_eq!((m.kind(), m.line()), (ErrorKind::Malformed, Some(1)));
        let m = parse_matrix_str("x\nr 2\n", "m", MatrixLayout::Labelled).unwrap();
        assert_eq!((m.row_ids[0].as_str(), m.values[0]), ("r", 2.0));
    }

    #[test]
    fn matrix_errors_name_the_line() {
        let e = |t: &str| {
            let e = parse(t).unwrap_err();
            (e.kind(), e.line())
        };
        assert_eq!(e(""), (ErrorKind::Empty, None));
        assert_eq!(e("# c\n\n"), (ErrorKind::Empty, None));
        assert_eq!(e("a b\n"), (ErrorKind::Malformed, Some(1)));
        assert_eq!(e("1 2\n3 4\n5\n"), (ErrorKind::Inconsistent, Some(3)));
        assert_eq!(e("a b\nr 1 2\ns 1\n"), (ErrorKind::Inconsistent, Some(3)));
        assert_eq!(e("a a\nr 1 2\n"), (ErrorKind::Duplicate, Some(1)));
        assert_eq!(e("a b\nr 1 2\nr 1 2\n"), (ErrorKind::Duplicate, Some(3)));
        assert_eq!(e("a b\nr 1 nan\n"), (ErrorKind::NonFinite, Some(2)));
        assert_eq!(e("1 2\n3 1e999\n"), (ErrorKind::NonFinite, Some(2)));
        let msg = parse("a b\nr 1 x\n").unwrap_err().to_string();
        assert!(msg.starts_with("m.tsv:2: malformed value \"x\" in column \"b\""), "{msg}");
    }
}
