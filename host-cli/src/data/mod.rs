//! Data readers: SVMlight/LETOR, CSV, preference pairs, items and orders;
//! and for the Kronecker learners, labelled edges ([`edges`]) and their
//! nodes' features or kernels ([`nodes`]); for the preference GPs,
//! id-keyed preferences and the relations between items ([`prefs`]).
//!
//! Every reader treats its input as hostile (DESIGN.md, "Bad input"). It
//! either returns the whole data set or one [`DataError`] that names the file
//! and, where there is one, the 1-based line (`path:line: message`). No input
//! makes a reader panic.
//!
//! Each format has a file form (`read_*`, takes a path) and a text form
//! (`parse_*_str`, takes the text and the name to print in errors). The text
//! forms are what the fuzz targets and unit tests call. The SVMlight and CSV
//! readers parse line-aligned chunks of the file in parallel (`chunks`) and
//! return exactly what, and fail exactly where, a one-pass parse would.
//!
//! # Guarantees of a [`Dataset`]
//!
//! - Rows are kept in file order: row `i` of the data set is the `i`-th data
//!   row of the file, so scores can be printed in input order.
//!   [`Dataset::source_line`] gives the line each row came from.
//! - Features are stored as CSR with 0-based column indices, strictly
//!   increasing within a row (hence no duplicates), all `< n_features()`.
//!   Stored values may be zero (an explicit `3:0` is kept).
//! - Labels and values are finite `f64`.
//! - Either every row has a query id or none has; without query ids the whole
//!   file is one query ([`Dataset::query_groups`]).
//!
//! # Row numbers
//!
//! A *data row* is a line that holds data: blank lines, `#` comment lines and
//! the CSV header are not data rows. Data rows are numbered from 0 in file
//! order; that number is the row index in the [`Dataset`], and it is the
//! number a pairs file ([`read_pairs`]) refers to.

use std::{collections::HashMap, fmt, fs, io, path::Path};

mod chunks;
pub mod csv;
mod decimal;
pub mod edges;
pub mod matrix;
pub mod nodes;
pub mod orders;
pub mod pairs;
pub mod prefs;
pub mod svmlight;

pub use self::csv::{parse_csv_str, read_csv, CsvOptions};
pub use self::edges::{
    parse_edge_matrix_str, parse_edges_str, read_edge_matrix, read_edges, EdgeData, EdgeMatrixOptions, EdgeOptions,
};
pub use self::matrix::MatrixLayout;
pub use self::nodes::{
    parse_kernel_rows_str, parse_node_csv_str, parse_node_kernel_str, parse_node_svmlight_str, read_kernel_rows,
    read_node_csv, read_node_features, read_node_kernel, read_node_svmlight, Asymmetry, KernelOptions, KernelRows,
    NodeFeatureOptions, NodeFeatures, NodeKernel,
};
pub use self::orders::{parse_items_str, parse_orders_str, read_items, read_orders, Items};
pub use self::pairs::{parse_pairs_str, read_pairs, Pair};
pub use self::prefs::{
    parse_groups_str, parse_prefs_str, parse_relation_str, read_groups, read_prefs, read_relation, Prefs, Relation,
    RelationKind,
};
pub use self::svmlight::{parse_svmlight_str, read_svmlight, SvmlightOptions};

/// What went wrong, coarsely; [`DataError`]'s message says exactly what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file does not exist.
    NotFound,
    /// The file exists but cannot be opened as a file (permissions, a
    /// directory).
    Unreadable,
    /// Any other I/O failure while reading (the only kind that is not bad
    /// input: see [`DataError::is_bad_input`]).
    Io,
    /// The file is not UTF-8 text.
    Encoding,
    /// No data rows (or no pairs, no items, no orders).
    Empty,
    /// A token or line without the expected shape: a malformed number, a
    /// wrong number of fields, an unterminated quote.
    Malformed,
    /// A NaN or infinite number, or one too large for `f64`.
    NonFinite,
    /// A feature index that is 0, not strictly increasing, or beyond the
    /// dimension the caller asked for.
    FeatureIndex,
    /// Lines that disagree with each other: query ids on some lines only, a
    /// field count different from the header's.
    Inconsistent,
    /// A reference to something that does not exist: a pair row `>= n`, an
    /// unknown item id, a column name not in the header.
    Unknown,
    /// Something that must be unique appears twice: an item id, an id within
    /// one order, a column name.
    Duplicate,
    /// A value outside its allowed range: a negative magnitude, a pair of a
    /// row with itself, an order of fewer than 2 items.
    Invalid,
}

/// An error of a data reader: `path:line: message`, or `path: message` when
/// no single line is to blame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataError {
    path: String,
    line: Option<usize>,
    kind: ErrorKind,
    message: String,
}

impl DataError {
    pub(crate) fn at(path: &str, line: usize, kind: ErrorKind, message: String) -> Self {
        DataError { path: path.to_owned(), line: Some(line), kind, message }
    }

    pub(crate) fn file(path: &str, kind: ErrorKind, message: String) -> Self {
        DataError { path: path.to_owned(), line: None, kind, message }
    }

    /// The kind of error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// `true` when the user can fix the input (the CLI exits with 2): every
    /// kind except [`ErrorKind::Io`].
    pub fn is_bad_input(&self) -> bool {
        self.kind != ErrorKind::Io
    }

    /// The path (or display name) of the input.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The 1-based line, when one line is to blame.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// The message without the `path:line: ` prefix.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.path, line, self.message),
            None => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

impl std::error::Error for DataError {}

/// Query ids, interned: `names` in order of first appearance, `of_row[i]`
/// indexes `names`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Qids {
    pub(crate) names: Vec<String>,
    pub(crate) of_row: Vec<usize>,
}

/// A data set read from a file: `n` rows of `d` features in CSR form, a label
/// per row and optional query ids. See the [module docs](self) for the
/// guarantees.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    pub(crate) d: usize,
    pub(crate) row_ptr: Vec<usize>,
    pub(crate) col: Vec<u32>,
    pub(crate) val: Vec<f64>,
    pub(crate) labels: Vec<f64>,
    pub(crate) qids: Option<Qids>,
    pub(crate) row_lines: Vec<usize>,
    pub(crate) feature_names: Option<Vec<String>>,
}

impl Dataset {
    /// Number of rows `n`.
    pub fn n_rows(&self) -> usize {
        self.labels.len()
    }

    /// Number of features `d` (columns `0..d`).
    pub fn n_features(&self) -> usize {
        self.d
    }

    /// Number of stored feature entries.
    pub fn nnz(&self) -> usize {
        self.val.len()
    }

    /// CSR row pointers, `n + 1` of them: row `i` is
    /// `row_ptr[i]..row_ptr[i + 1]` in [`col`](Self::col) and
    /// [`val`](Self::val).
    pub fn row_ptr(&self) -> &[usize] {
        &self.row_ptr
    }

    /// 0-based column of each stored entry, strictly increasing within a row.
    pub fn col(&self) -> &[u32] {
        &self.col
    }

    /// Value of each stored entry.
    pub fn val(&self) -> &[f64] {
        &self.val
    }

    /// Columns and values of row `i`.
    ///
    /// # Panics
    ///
    /// If `i >= n_rows()`.
    pub fn row(&self, i: usize) -> (&[u32], &[f64]) {
        let r = self.row_ptr[i]..self.row_ptr[i + 1];
        (&self.col[r.clone()], &self.val[r])
    }

    /// The label of every row.
    pub fn labels(&self) -> &[f64] {
        &self.labels
    }

    /// The 1-based line of the file that row `i` came from.
    ///
    /// # Panics
    ///
    /// If `i >= n_rows()`.
    pub fn source_line(&self, i: usize) -> usize {
        self.row_lines[i]
    }

    /// Feature names, for formats that have them (the CSV header).
    pub fn feature_names(&self) -> Option<&[String]> {
        self.feature_names.as_deref()
    }

    /// `true` when the rows carry query ids.
    pub fn has_qids(&self) -> bool {
        self.qids.is_some()
    }

    /// The distinct query ids in order of first appearance, if the rows carry
    /// query ids. SVMlight ids are printed canonically (`qid:007` is `"7"`).
    pub fn query_ids(&self) -> Option<&[String]> {
        self.qids.as_ref().map(|q| q.names.as_slice())
    }

    /// The query id of row `i`, if the rows carry query ids.
    ///
    /// # Panics
    ///
    /// If there are query ids and `i >= n_rows()`.
    pub fn qid_of_row(&self, i: usize) -> Option<&str> {
        self.qids.as_ref().map(|q| q.names[q.of_row[i]].as_str())
    }

    /// Groups rows by query. Queries come in order of first appearance, rows
    /// inside a query in file order; rows of one query need not be
    /// contiguous in the file. Without query ids, all rows are one query.
    pub fn query_groups(&self) -> QueryGroups {
        let n = self.n_rows();
        match &self.qids {
            None => QueryGroups { rows: (0..n).collect(), query_ptr: vec![0, n] },
            Some(q) => {
                // Counting sort by query index: stable, so file order is kept.
                let mut query_ptr = vec![0usize; q.names.len() + 1];
                for &g in &q.of_row {
                    query_ptr[g + 1] += 1;
                }
                for g in 0..q.names.len() {
                    query_ptr[g + 1] += query_ptr[g];
                }
                let mut next = query_ptr.clone();
                let mut rows = vec![0usize; n];
                for (i, &g) in q.of_row.iter().enumerate() {
                    rows[next[g]] = i;
                    next[g] += 1;
                }
                QueryGroups { rows, query_ptr }
            }
        }
    }

    /// `n * d`, or `None` if it overflows `usize`.
    pub fn dense_len(&self) -> Option<usize> {
        self.n_rows().checked_mul(self.d)
    }

    /// The features as a dense row-major `n × d` matrix, or `None` when it
    /// would hold more than `max_len` elements (the parse-rank data, 100 ×
    /// 195 094, would take 156 MB).
    pub fn to_dense(&self, max_len: usize) -> Option<Vec<f64>> {
        let len = self.dense_len().filter(|&len| len <= max_len)?;
        let mut x = vec![0.0; len];
        for i in 0..self.n_rows() {
            let (cols, vals) = self.row(i);
            let dst = &mut x[i * self.d..(i + 1) * self.d];
            for (&c, &v) in cols.iter().zip(vals) {
                dst[c as usize] = v;
            }
        }
        Some(x)
    }
}

/// Rows grouped by query, in CSR form: query `q` is
/// `rows()[query_ptr()[q]..query_ptr()[q + 1]]`, a list of row indices of the
/// [`Dataset`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryGroups {
    rows: Vec<usize>,
    query_ptr: Vec<usize>,
}

impl QueryGroups {
    /// Number of queries.
    pub fn len(&self) -> usize {
        self.query_ptr.len() - 1
    }

    /// `true` when there are no queries (never, for a data set from a reader).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// All row indices, grouped by query (a permutation of `0..n`).
    pub fn rows(&self) -> &[usize] {
        &self.rows
    }

    /// Query boundaries in [`rows`](Self::rows), `len() + 1` of them.
    pub fn query_ptr(&self) -> &[usize] {
        &self.query_ptr
    }

    /// The rows of query `q`, in file order.
    ///
    /// # Panics
    ///
    /// If `q >= len()`.
    pub fn query(&self, q: usize) -> &[usize] {
        &self.rows[self.query_ptr[q]..self.query_ptr[q + 1]]
    }

    /// The queries in order, each as its rows.
    pub fn iter(&self) -> impl Iterator<Item = &[usize]> + '_ {
        self.query_ptr.windows(2).map(move |w| &self.rows[w[0]..w[1]])
    }
}

/// The message of a byte that is not UTF-8, with what to do about it.
pub(crate) const NOT_UTF8: &str =
    "not UTF-8 text: save the file as UTF-8 (e.g. `iconv -f LATIN1 -t UTF-8 FILE > FILE.utf8`; data files are usually ASCII)";

/// Reads a whole file as UTF-8 text. An invalid byte is reported with its
/// line.
pub(crate) fn read_text(path: &Path) -> Result<String, DataError> {
    let name = path.display().to_string();
    let bytes = fs::read(path).map_err(|e| io_error(&name, &e))?;
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let bad = e.utf8_error().valid_up_to();
        let line = 1 + bytes[..bad].iter().filter(|&&b| b == b'\n').count();
        DataError::at(&name, line, ErrorKind::Encoding, NOT_UTF8.to_owned())
    })
}

/// The error of a file `name` that cannot be opened or read, by kind.
pub(crate) fn io_error(name: &str, e: &io::Error) -> DataError {
    let kind = match e.kind() {
        io::ErrorKind::NotFound => ErrorKind::NotFound,
        io::ErrorKind::PermissionDenied | io::ErrorKind::IsADirectory => ErrorKind::Unreadable,
        _ => ErrorKind::Io,
    };
    DataError::file(name, kind, format!("cannot read: {e}"))
}

/// Drops a leading UTF-8 byte-order mark (spreadsheets write one).
pub(crate) fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Quotes a token for a message: escaped, and cut at 40 characters so that a
/// hostile megabyte-long token does not become a megabyte-long message.
pub(crate) fn quote(token: &str) -> String {
    const MAX: usize = 40;
    match token.char_indices().nth(MAX) {
        None => format!("{token:?}"),
        Some((cut, _)) => format!("{:?}…", &token[..cut]),
    }
}

/// Parses a finite `f64`; `what` names the token in the message.
///
/// The value is the one of `token.parse::<f64>()`, bit for bit, and so is
/// the set of accepted tokens: [`fast_float2`] (Eisel–Lemire with a
/// big-integer fallback, correctly rounded like the standard library, and
/// several times faster on the short decimals of data files) parses first,
/// and a token it refuses goes to `str::parse`, so the standard library
/// decides every refusal (and the spellings of infinity and NaN). The
/// tests in `tests::float_parser_agrees_with_std` check both on a corpus.
pub(crate) fn parse_finite(token: &str, what: &str) -> Result<f64, (ErrorKind, String)> {
    let parsed = match fast_float2::parse::<f64, _>(token) {
        Ok(v) => Ok(v),
        Err(_) => token.parse::<f64>(),
    };
    match parsed {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err((ErrorKind::NonFinite, format!("non-finite {what} {}", quote(token)))),
        Err(_) => Err((ErrorKind::Malformed, format!("malformed {what} {}", quote(token)))),
    }
}

/// Interns string ids in order of first appearance.
#[derive(Default)]
pub(crate) struct Interner {
    names: Vec<String>,
    index: HashMap<String, usize>,
}

impl Interner {
    pub(crate) fn intern(&mut self, id: &str) -> usize {
        if let Some(&g) = self.index.get(id) {
            return g;
        }
        let g = self.names.len();
        self.names.push(id.to_owned());
        self.index.insert(id.to_owned(), g);
        g
    }

    pub(crate) fn into_names(self) -> Vec<String> {
        self.names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_cuts_long_tokens_and_escapes() {
        assert_eq!(quote("ab"), "\"ab\"");
        assert_eq!(quote("a\tb"), "\"a\\tb\"");
        let long = "x".repeat(1000);
        assert!(quote(&long).len() < 50);
    }

    #[test]
    fn parse_finite_kinds() {
        assert_eq!(parse_finite("1e3", "v"), Ok(1000.0));
        assert_eq!(parse_finite("nan", "v").unwrap_err().0, ErrorKind::NonFinite);
        assert_eq!(parse_finite("-inf", "v").unwrap_err().0, ErrorKind::NonFinite);
        assert_eq!(parse_finite("1e400", "v").unwrap_err().0, ErrorKind::NonFinite);
        assert_eq!(parse_finite("1,5", "v").unwrap_err().0, ErrorKind::Malformed);
    }

    /// `parse_finite` through `str::parse` only: the reference.
    fn std_finite(token: &str) -> Result<u64, ErrorKind> {
        match token.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v.to_bits()),
            Ok(_) => Err(ErrorKind::NonFinite),
            Err(_) => Err(ErrorKind::Malformed),
        }
    }

    #[test]
    fn float_parser_agrees_with_std() {
        let long_digits = "1".repeat(800);
        let long_frac = format!("0.{}", "3".repeat(770));
        let halfway = "9007199254740993"; // 2^53 + 1: a tie, rounds to even
        let fixed: Vec<String> = [
            "0",
            "-0",
            "+0",
            "1",
            "-1",
            "+1",
            "0.5",
            ".5",
            "5.",
            "-.5",
            "+.5",
            "1e5",
            "1E5",
            "1e+5",
            "1e-5",
            "1.5e300",
            "1e308",
            "1.7976931348623157e308",
            "1.7976931348623159e308",
            "1e309",
            "-1e400",
            "2.2250738585072014e-308",
            "2.2250738585072011e-308",
            "4.9e-324",
            "5e-324",
            "2.4e-324",
            "2.5e-324",
            "1e-400",
            "-1e-400",
            "inf",
            "-inf",
            "+inf",
            "Inf",
            "INF",
            "infinity",
            "Infinity",
            "-infinity",
            "nan",
            "NaN",
            "-nan",
            "+NaN",
            "",
            "-",
            "+",
            ".",
            "e5",
            "1e",
            "1e+",
            "1e-",
            "1.e5",
            ".e5",
            "1..5",
            "1.5.",
            "--1",
            "+-1",
            "1-",
            "0x10",
            "1_000",
            "1,5",
            " 1",
            "1 ",
            "1e5.5",
            "١",
            "0.1",
            "0.2",
            "0.3",
            "123456789012345678",
            "0.000000000000000000000000000001",
            "3.14159265358979323846264338327950288",
            "00001.5000",
            "1e0000000001",
            "1e-0000000001",
            "1e99999999999999999999",
            "1e-99999999999999999999",
            halfway,
            "9007199254740993.0000000000000000001",
            "2.5",
            "-7.25e-3",
            "+4.",
            "infin",
            "nana",
            "in",
            "0e0",
            "-0e-0",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([long_digits, long_frac, format!("{}e-800", "7".repeat(800))])
        .collect();
        // Random decimal strings: short (as data files hold), with signs,
        // exponents and the odd stray character.
        let mut rng = crate::rng::SplitMix64(11);
        let alphabet = b"0123456789012345678901234567890123456789..eE+-_xn";
        let random = (0..20_000).map(|_| {
            let len = 1 + (rng.next_u64() % 24) as usize;
            (0..len).map(|_| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize] as char).collect::<String>()
        });
        let (mut accepted, mut total) = (0usize, 0usize);
        for token in fixed.into_iter().chain(random) {
            let got = parse_finite(&token, "v").map(f64::to_bits).map_err(|(k, _)| k);
            assert_eq!(got, std_finite(&token), "{token:?}");
            accepted += got.is_ok() as usize;
            total += 1;
        }
        // the random strings are not all refusals
        assert!(accepted > total / 10, "{accepted} of {total}");
    }

    #[test]
    fn display_with_and_without_line() {
        let e = DataError::at("a.txt", 3, ErrorKind::Malformed, "bad".into());
        assert_eq!(e.to_string(), "a.txt:3: bad");
        let e = DataError::file("a.txt", ErrorKind::Empty, "no data rows".into());
        assert_eq!(e.to_string(), "a.txt: no data rows");
        assert!(e.is_bad_input());
    }
}
