//! The nodes of a graph with labelled edges (Kronecker learners, paper 004):
//! per domain, either feature vectors keyed by node id or a precomputed
//! kernel matrix keyed by node id. [`EdgeData::on_nodes`](super::EdgeData::on_nodes)
//! maps the edges onto either.
//!
//! Node ids are non-empty strings without spaces, tabs or `#`, compared
//! byte for byte (`07` and `7` are different nodes).
//!
//! # Node features, SVMlight style
//!
//! ```text
//! # id  index:value ...
//! d1    1:0.5 3:1.0
//! d2    2:-1          # a comment
//! d3
//! ```
//!
//! One node per line: its id, then `<index>:<value>` tokens with the
//! [SVMlight](super::svmlight) rules (1-based indices, strictly increasing
//! within a line, finite values, explicit zeros kept, a dimension of the
//! largest index or [`NodeFeatureOptions::num_features`]). A node without
//! any token after its id is the zero vector. Blank lines and `#` comments
//! are skipped.
//!
//! # Node features, CSV
//!
//! ```text
//! id,weight,charge
//! d1,0.5,1.0
//! d2,0,-1
//! ```
//!
//! The same rules as an items file ([`orders`](super::orders)): a header is
//! **required** (the column holding the ids is the one named `id`, anywhere
//! in the header); every other column is a feature, in header order; [CSV
//! quoting](super::csv) applies; no field may be empty; every row has as many
//! fields as the header. A header cannot be told from data by its looks when
//! ids and feature names are both numbers, hence no header-less form.
//!
//! In both forms a repeated id is an error naming both lines, and a file
//! without nodes is an error.
//!
//! # Node kernel
//!
//! A square matrix in the [labelled or bare layout](super::matrix), tabs or
//! spaces between tokens:
//!
//! ```text
//!      d1    d2    d3
//! d1   1.0   0.5   0.2
//! d2   0.5   1.0   0.1
//! d3   0.2   0.1   1.0
//! ```
//!
//! - Labelled: the row ids must be the column ids, but may come in another
//!   order: rows are permuted into the **column order**, which is the order
//!   of [`NodeKernel::ids`]. Every entry is keyed by its (row id, column id),
//!   so the permutation changes nothing about the kernel. A row id that is
//!   not a column id is an error at its line; so is a non-square matrix.
//! - Bare (the drug–target files, `data/drug-target-nr/`): ids are the
//!   0-based positions `"0"`, `"1"`, …, the same ids a bare label matrix
//!   ([`read_edge_matrix`](super::read_edge_matrix)) gives its rows and
//!   columns.
//! - Symmetry: the largest `|K_ij − K_ji|` is measured. Up to
//!   [`SYMMETRY_TOLERANCE`] times the largest `|K_ij|` (rounding in whatever
//!   wrote the file) the kernel is taken as symmetric. Above it the file is
//!   **refused**, naming the ids, both values and both lines of the worst
//!   pair and how many pairs differ, unless [`KernelOptions::symmetrize`] is
//!   set. Either way the kernel handed on is exactly symmetric:
//!   `(K + Kᵀ)/2`. [`NodeKernel::asymmetry`] reports what was measured.
//! - Positive semi-definiteness is not checked (a learner's business).
//!
//! # Kernel rows of new nodes
//!
//! For prediction on nodes that were not in training: a matrix in the same
//! layouts whose rows are the new nodes and whose columns are the
//! **training** nodes ([`read_kernel_rows`]). Labelled: the column ids must
//! be exactly the training ids, in any order (columns are permuted into the
//! training order); bare: one column per training node, in training order,
//! and the new nodes are named `"0"`, `"1"`, …

use std::{borrow::Cow, collections::HashMap, path::Path};

use super::{
    csv::{list_columns, Records},
    matrix::{parse_matrix_str, MatrixLayout},
    parse_finite, quote, read_text, strip_bom, DataError, ErrorKind,
};

/// Feature vectors of nodes, keyed by id, in file order, as CSR with 0-based
/// strictly increasing column indices below [`n_features`](Self::n_features).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeFeatures {
    ids: Vec<String>,
    index: HashMap<String, usize>,
    d: usize,
    row_ptr: Vec<usize>,
    col: Vec<u32>,
    val: Vec<f64>,
    lines: Vec<usize>,
    feature_names: Option<Vec<String>>,
}

impl NodeFeatures {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// `true` when there are no nodes (never, for nodes from a reader).
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Node ids, in file order; node `i` is row `i`.
    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    /// The row of the node with this id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// Number of features `d`.
    pub fn n_features(&self) -> usize {
        self.d
    }

    /// CSR row pointers, `len() + 1` of them.
    pub fn row_ptr(&self) -> &[usize] {
        &self.row_ptr
    }

    /// 0-based column of each stored entry.
    pub fn col(&self) -> &[u32] {
        &self.col
    }

    /// Value of each stored entry.
    pub fn val(&self) -> &[f64] {
        &self.val
    }

    /// Columns and values of node `i`.
    ///
    /// # Panics
    ///
    /// If `i >= len()`.
    pub fn row(&self, i: usize) -> (&[u32], &[f64]) {
        let r = self.row_ptr[i]..self.row_ptr[i + 1];
        (&self.col[r.clone()], &self.val[r])
    }

    /// The 1-based line node `i` came from.
    ///
    /// # Panics
    ///
    /// If `i >= len()`.
    pub fn source_line(&self, i: usize) -> usize {
        self.lines[i]
    }

    /// Feature names (the CSV header without the `id` column).
    pub fn feature_names(&self) -> Option<&[String]> {
        self.feature_names.as_deref()
    }

    /// The features as a dense row-major `len() × n_features()` matrix, or
    /// `None` when it would hold more than `max_len` elements.
    pub fn to_dense(&self, max_len: usize) -> Option<Vec<f64>> {
        let len = self.len().checked_mul(self.d).filter(|&l| l <= max_len)?;
        let mut x = vec![0.0; len];
        for i in 0..self.len() {
            let (cols, vals) = self.row(i);
            for (&c, &v) in cols.iter().zip(vals) {
                x[i * self.d + c as usize] = v;
            }
        }
        Some(x)
    }
}

/// Options of the SVMlight-style node reader.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeFeatureOptions {
    /// The dimension to use instead of the largest index; an index above it
    /// is an error.
    pub num_features: Option<usize>,
}

/// Reads node features: CSV when the file name ends in `.csv` (any case),
/// SVMlight style otherwise. See the [module docs](self).
///
/// # Errors
///
/// As [`read_node_csv`] or [`read_node_svmlight`].
pub fn read_node_features(path: impl AsRef<Path>, opts: &NodeFeatureOptions) -> Result<NodeFeatures, DataError> {
    let path = path.as_ref();
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv")) {
        read_node_csv(path)
    } else {
        read_node_svmlight(path, opts)
    }
}

/// Reads SVMlight-style node features (`id index:value …`).
///
/// # Errors
///
/// A [`DataError`] naming the file (and line) for a missing file, no nodes,
/// a repeated or unusable id, or a malformed feature token.
pub fn read_node_svmlight(path: impl AsRef<Path>, opts: &NodeFeatureOptions) -> Result<NodeFeatures, DataError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    parse_node_svmlight_str(&text, &path.display().to_string(), opts)
}

/// Reads CSV node features (header with an `id` column).
///
/// # Errors
///
/// A [`DataError`] naming the file (and line) for a missing file, no `id`
/// column, no nodes, a repeated or unusable id, a ragged row or a missing or
/// non-finite value.
pub fn read_node_csv(path: impl AsRef<Path>) -> Result<NodeFeatures, DataError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    parse_node_csv_str(&text, &path.display().to_string())
}

/// Checks a node id and records it; `ids`, `index` and `lines` grow together.
fn add_node(
    id: &str,
    line_no: usize,
    name: &str,
    ids: &mut Vec<String>,
    index: &mut HashMap<String, usize>,
    lines: &mut Vec<usize>,
) -> Result<(), DataError> {
    if id.contains(|c: char| c == '#' || c.is_whitespace()) {
        return Err(DataError::at(
            name,
            line_no,
            ErrorKind::Malformed,
            format!("node id {} contains a space or '#', which an edges file cannot name", quote(id)),
        ));
    }
    if let Some(&k) = index.get(id) {
        return Err(DataError::at(
            name,
            line_no,
            ErrorKind::Duplicate,
            format!("node id {} already defined on line {}", quote(id), lines[k]),
        ));
    }
    index.insert(id.to_owned(), ids.len());
    ids.push(id.to_owned());
    lines.push(line_no);
    Ok(())
}

/// Parses SVMlight-style node features; `name` is printed in errors.
///
/// # Errors
///
/// As [`read_node_svmlight`].
pub fn parse_node_svmlight_str(text: &str, name: &str, opts: &NodeFeatureOptions) -> Result<NodeFeatures, DataError> {
    let mut ids = Vec::new();
    let mut index = HashMap::new();
    let mut lines = Vec::new();
    let mut row_ptr = vec![0usize];
    let mut col: Vec<u32> = Vec::new();
    let mut val = Vec::new();
    let mut max_index = 0usize;
    for (i, raw) in strip_bom(text).lines().enumerate() {
        let line_no = i + 1;
        let err = |kind, msg| DataError::at(name, line_no, kind, msg);
        let line = raw.find('#').map_or(raw, |p| &raw[..p]);
        let mut tokens = line.split_ascii_whitespace();
        let Some(id) = tokens.next() else { continue };
        let mut prev = 0usize;
        for tok in tokens {
            let Some((key, value)) = tok.split_once(':') else {
                return Err(err(ErrorKind::Malformed, format!("expected <index>:<value>, found {}", quote(tok))));
            };
            let index: usize = key
                .parse()
                .map_err(|_| err(ErrorKind::Malformed, format!("malformed feature index in {}", quote(tok))))?;
            if index == 0 {
                return Err(err(
                    ErrorKind::FeatureIndex,
                    format!("feature index 0 in {}: indices are 1-based", quote(tok)),
                ));
            }
            if index <= prev {
                return Err(err(
                    ErrorKind::FeatureIndex,
                    format!(
                        "feature index {index} after index {prev}: indices must be strictly increasing within a line"
                    ),
                ));
            }
            if opts.num_features.is_some_and(|d| index > d) {
                let d = opts.num_features.unwrap_or_default();
                return Err(err(
                    ErrorKind::FeatureIndex,
                    format!("feature index {index} is beyond the {d} features expected"),
                ));
            }
            if index > u32::MAX as usize {
                return Err(err(
                    ErrorKind::FeatureIndex,
                    format!("feature index {index} is too large (at most {})", u32::MAX),
                ));
            }
            let v = parse_finite(value, "feature value")
                .map_err(|(kind, msg)| err(kind, format!("{msg} in {}", quote(tok))))?;
            col.push((index - 1) as u32);
            val.push(v);
            prev = index;
        }
        add_node(id, line_no, name, &mut ids, &mut index, &mut lines)?;
        max_index = max_index.max(prev);
        row_ptr.push(col.len());
    }
    if ids.is_empty() {
        return Err(DataError::file(name, ErrorKind::Empty, "no nodes".to_owned()));
    }
    Ok(NodeFeatures {
        ids,
        index,
        d: opts.num_features.unwrap_or(max_index),
        row_ptr,
        col,
        val,
        lines,
        feature_names: None,
    })
}

/// Parses CSV node features; `name` is printed in errors.
///
/// # Errors
///
/// As [`read_node_csv`].
pub fn parse_node_csv_str(text: &str, name: &str) -> Result<NodeFeatures, DataError> {
    let mut records = Records::new(text, name);
    let (header_line, header) = records.header()?;
    let Some(id_at) = header.iter().position(|h| h == "id") else {
        return Err(DataError::at(
            name,
            header_line,
            ErrorKind::Unknown,
            format!("no \"id\" column (a header is required); the columns are {}", list_columns(&header)),
        ));
    };
    let feature_names: Vec<String> =
        header.iter().enumerate().filter(|&(j, _)| j != id_at).map(|(_, h)| h.clone()).collect();
    let d = feature_names.len();
    let mut ids = Vec::new();
    let mut index = HashMap::new();
    let mut lines = Vec::new();
    let mut val = Vec::new();
    let mut fields: Vec<Cow<'_, str>> = Vec::with_capacity(header.len());
    while let Some(line_no) = records.next_record(&mut fields)? {
        let err = |kind, msg| DataError::at(name, line_no, kind, msg);
        if fields.len() != header.len() {
            return Err(err(
                ErrorKind::Inconsistent,
                format!("{} fields but the header (line {header_line}) has {} columns", fields.len(), header.len()),
            ));
        }
        for (j, field) in fields.iter().enumerate() {
            if field.is_empty() {
                let what = if j == id_at { "id" } else { "value" };
                return Err(err(ErrorKind::Malformed, format!("missing {what} in column {}", quote(&header[j]))));
            }
            if j != id_at {
                let v = parse_finite(field, "value")
                    .map_err(|(kind, msg)| err(kind, format!("{msg} in column {}", quote(&header[j]))))?;
                val.push(v);
            }
        }
        add_node(&fields[id_at], line_no, name, &mut ids, &mut index, &mut lines)?;
    }
    if ids.is_empty() {
        return Err(DataError::file(name, ErrorKind::Empty, "no nodes".to_owned()));
    }
    let n = ids.len();
    let col = (0..n).flat_map(|_| 0..d as u32).collect();
    let row_ptr = (0..=n).map(|i| i * d).collect();
    Ok(NodeFeatures { ids, index, d, row_ptr, col, val, lines, feature_names: Some(feature_names) })
}

/// Largest `|K_ij − K_ji|`, relative to the largest `|K_ij|`, that a node
/// kernel may have without [`KernelOptions::symmetrize`]: rounding in
/// whatever wrote the file, not a different matrix.
pub const SYMMETRY_TOLERANCE: f64 = 1e-10;

/// Options of the node-kernel reader.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelOptions {
    /// Accept an asymmetric matrix and use `(K + Kᵀ)/2`.
    pub symmetrize: bool,
    /// The file's layout (default: detected).
    pub layout: MatrixLayout,
}

/// The largest asymmetry of a kernel file: `|K[row, col] − K[col, row]|`.
#[derive(Debug, Clone, PartialEq)]
pub struct Asymmetry {
    /// Row id of the worst entry (the earlier row in the file).
    pub row: String,
    /// Column id of the worst entry.
    pub col: String,
    /// `K[row, col]` as read.
    pub k_row_col: f64,
    /// `K[col, row]` as read.
    pub k_col_row: f64,
    /// `|K[row, col] − K[col, row]|`.
    pub max_abs_diff: f64,
    /// Number of pairs `i < j` with `K_ij ≠ K_ji` (exactly, as read).
    pub n_unequal: usize,
}

/// A node kernel: ids and an exactly symmetric `n × n` matrix, row-major, in
/// the order of [`ids`](Self::ids).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeKernel {
    ids: Vec<String>,
    index: HashMap<String, usize>,
    k: Vec<f64>,
    asymmetry: Option<Asymmetry>,
    layout: MatrixLayout,
}

impl NodeKernel {
    /// Number of nodes `n`.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// `true` when there are no nodes (never, for a kernel from a reader).
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Node ids: the column order of a labelled file, `"0"`, `"1"`, … for a
    /// bare one.
    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    /// The index of the node with this id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// The matrix, row-major `n × n`, exactly symmetric.
    pub fn values(&self) -> &[f64] {
        &self.k
    }

    /// `K[i, j]`.
    ///
    /// # Panics
    ///
    /// If `i` or `j` is `>= len()`.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        assert!(i < self.len() && j < self.len(), "kernel index out of range");
        self.k[i * self.len() + j]
    }

    /// The largest asymmetry of the file, `None` when it was exactly
    /// symmetric. When present, the matrix is `(K + Kᵀ)/2` of the file's.
    pub fn asymmetry(&self) -> Option<&Asymmetry> {
        self.asymmetry.as_ref()
    }

    /// The layout the file was read with ([`MatrixLayout::Labelled`] or
    /// [`MatrixLayout::Bare`]).
    pub fn layout(&self) -> MatrixLayout {
        self.layout
    }
}

/// Reads a node kernel. See the [module docs](self#node-kernel).
///
/// # Errors
///
/// A [`DataError`] naming the file (and line) for a missing file, a malformed
/// or ragged matrix, a non-finite value, a non-square matrix, row ids that
/// are not the column ids, or an asymmetric matrix without
/// [`KernelOptions::symmetrize`].
pub fn read_node_kernel(path: impl AsRef<Path>, opts: &KernelOptions) -> Result<NodeKernel, DataError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    parse_node_kernel_str(&text, &path.display().to_string(), opts)
}

/// Parses a node kernel; `name` is printed in errors.
///
/// # Errors
///
/// As [`read_node_kernel`].
pub fn parse_node_kernel_str(text: &str, name: &str, opts: &KernelOptions) -> Result<NodeKernel, DataError> {
    let m = parse_matrix_str(text, name, opts.layout)?;
    let n = m.n_cols();
    if m.n_rows() != n {
        return Err(DataError::file(
            name,
            ErrorKind::Inconsistent,
            format!("{} rows but {n} columns: a kernel matrix is square", m.n_rows()),
        ));
    }
    let ids = m.col_ids;
    let index: HashMap<String, usize> = ids.iter().enumerate().map(|(j, id)| (id.clone(), j)).collect();
    // `row_of[j]`: the file row holding node `j`'s row.
    let mut row_of = vec![usize::MAX; n];
    for (r, id) in m.row_ids.iter().enumerate() {
        match index.get(id) {
            Some(&j) => row_of[j] = r,
            None => {
                return Err(DataError::at(
                    name,
                    m.row_lines[r],
                    ErrorKind::Unknown,
                    format!(
                        "row id {} is not among the column ids of the header (line {}): a kernel's rows \
                         and columns are the same nodes",
                        quote(id),
                        m.header_line.unwrap_or_default()
                    ),
                ))
            }
        }
    }
    // Row ids are distinct and as many as the columns, so `row_of` is a
    // permutation.
    let mut k = vec![0.0; n * n];
    for j in 0..n {
        k[j * n..(j + 1) * n].copy_from_slice(&m.values[row_of[j] * n..(row_of[j] + 1) * n]);
    }

    let mut scale = 0.0f64;
    let mut worst: Option<(usize, usize, f64)> = None;
    let mut n_unequal = 0usize;
    for i in 0..n {
        for j in 0..n {
            scale = scale.max(k[i * n + j].abs());
            if j > i && k[i * n + j] != k[j * n + i] {
                n_unequal += 1;
                let d = (k[i * n + j] - k[j * n + i]).abs();
                if worst.is_none_or(|(_, _, w)| d > w) {
                    worst = Some((i, j, d));
                }
            }
        }
    }
    let asymmetry = worst.map(|(i, j, d)| {
        // Name the pair with the earlier file row first.
        let (i, j) = if row_of[i] <= row_of[j] { (i, j) } else { (j, i) };
        Asymmetry {
            row: ids[i].clone(),
            col: ids[j].clone(),
            k_row_col: k[i * n + j],
            k_col_row: k[j * n + i],
            max_abs_diff: d,
            n_unequal,
        }
    });
    if let Some(a) = &asymmetry {
        if a.max_abs_diff > SYMMETRY_TOLERANCE * scale && !opts.symmetrize {
            let (i, j) = (index[&a.row], index[&a.col]);
            return Err(DataError::at(
                name,
                m.row_lines[row_of[i]],
                ErrorKind::Invalid,
                format!(
                    "kernel not symmetric: K[{r}, {c}] = {} on this line but K[{c}, {r}] = {} on line {}, \
                     |difference| {:e}, the largest of {} unequal pairs (tolerance {:e} relative to the \
                     largest |K|); symmetrize to use (K + Kᵀ)/2",
                    a.k_row_col,
                    a.k_col_row,
                    m.row_lines[row_of[j]],
                    a.max_abs_diff,
                    a.n_unequal,
                    SYMMETRY_TOLERANCE,
                    r = quote(&a.row),
                    c = quote(&a.col),
                ),
            ));
        }
        for i in 0..n {
            for j in i + 1..n {
                let s = 0.5 * (k[i * n + j] + k[j * n + i]);
                k[i * n + j] = s;
                k[j * n + i] = s;
            }
        }
    }
    Ok(NodeKernel { ids, index, k, asymmetry, layout: m.layout })
}

/// Kernel values between new nodes (rows) and the training nodes
/// (columns, in training order): `n_new × n_train`, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRows {
    ids: Vec<String>,
    n_train: usize,
    values: Vec<f64>,
    lines: Vec<usize>,
}

impl KernelRows {
    /// Number of new nodes (rows).
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// `true` when there are no rows (never, for rows from a reader).
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Ids of the new nodes, in file order.
    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    /// Number of training nodes (columns).
    pub fn n_train(&self) -> usize {
        self.n_train
    }

    /// Row-major `len() × n_train()`, columns in the training order given to
    /// the reader.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The kernel row of new node `i`.
    ///
    /// # Panics
    ///
    /// If `i >= len()`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.values[i * self.n_train..(i + 1) * self.n_train]
    }

    /// The 1-based line row `i` came from.
    ///
    /// # Panics
    ///
    /// If `i >= len()`.
    pub fn source_line(&self, i: usize) -> usize {
        self.lines[i]
    }
}

/// Reads kernel rows of new nodes against the training nodes `train_ids`
/// (the ids of the training [`NodeKernel`]). See the
/// [module docs](self#kernel-rows-of-new-nodes).
///
/// # Errors
///
/// A [`DataError`] naming the file (and line) for a missing file, a malformed
/// or ragged matrix, a non-finite value, a column id that is not a training
/// id, a training id without a column, or (bare) a column count other than
/// `train_ids.len()`.
pub fn read_kernel_rows(
    path: impl AsRef<Path>,
    train_ids: &[String],
    layout: MatrixLayout,
) -> Result<KernelRows, DataError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    parse_kernel_rows_str(&text, &path.display().to_string(), train_ids, layout)
}

/// Parses kernel rows of new nodes; `name` is printed in errors.
///
/// # Errors
///
/// As [`read_kernel_rows`].
pub fn parse_kernel_rows_str(
    text: &str,
    name: &str,
    train_ids: &[String],
    layout: MatrixLayout,
) -> Result<KernelRows, DataError> {
    let m = parse_matrix_str(text, name, layout)?;
    let n = train_ids.len();
    // `col_of[t]`: the file column holding training node `t`.
    let col_of: Vec<usize> = match m.header_line {
        None => {
            if m.n_cols() != n {
                return Err(DataError::at(
                    name,
                    m.row_lines[0],
                    ErrorKind::Inconsistent,
                    format!("{} columns but {n} training nodes: one column per training node", m.n_cols()),
                ));
            }
            (0..n).collect()
        }
        Some(header) => {
            let cols: HashMap<&str, usize> = m.col_ids.iter().enumerate().map(|(j, id)| (id.as_str(), j)).collect();
            let train: HashMap<&str, usize> = train_ids.iter().enumerate().map(|(t, id)| (id.as_str(), t)).collect();
            if let Some(id) = m.col_ids.iter().find(|id| !train.contains_key(id.as_str())) {
                return Err(DataError::at(
                    name,
                    header,
                    ErrorKind::Unknown,
                    format!("column id {} is not a training node", quote(id)),
                ));
            }
            let mut col_of = Vec::with_capacity(n);
            for id in train_ids {
                match cols.get(id.as_str()) {
                    Some(&j) => col_of.push(j),
                    None => {
                        return Err(DataError::at(
                            name,
                            header,
                            ErrorKind::Inconsistent,
                            format!("no column for training node {}: every training node needs one", quote(id)),
                        ))
                    }
                }
            }
            col_of
        }
    };
    let c = m.n_cols();
    let mut values = Vec::with_capacity(m.n_rows() * n);
    for r in 0..m.n_rows() {
        values.extend(col_of.iter().map(|&j| m.values[r * c + j]));
    }
    Ok(KernelRows { ids: m.row_ids, n_train: n, values, lines: m.row_lines })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svmlight_nodes() {
        let f = parse_node_svmlight_str(
            "# nodes\nd1 1:0.5 3:1\n\nd2 2:-1 # c\nd3\n",
            "n.txt",
            &NodeFeatureOptions::default(),
        )
        .unwrap();
        assert_eq!(f.ids(), ["d1", "d2", "d3"]);
        assert_eq!(f.n_features(), 3);
        assert_eq!(f.to_dense(100).unwrap(), [0.5, 0.0, 1.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(f.index_of("d2"), Some(1));
        assert_eq!(f.source_line(1), 4);
        let opts = NodeFeatureOptions { num_features: Some(2) };
        let e = parse_node_svmlight_str("a 1:1\nb 3:1\n", "n", &opts).unwrap_err();
        assert_eq!((e.kind(), e.line()), (ErrorKind::FeatureIndex, Some(2)));
    }

    #[test]
    fn svmlight_node_errors() {
        let e = |t: &str| {
            let e = parse_node_svmlight_str(t, "n", &NodeFeatureOptions::default()).unwrap_err();
            (e.kind(), e.line())
        };
        assert_eq!(e("a 1:1\n\nb 1:2\na 2:1\n"), (ErrorKind::Duplicate, Some(4)));
        assert_eq!(e("a 1:x\n"), (ErrorKind::Malformed, Some(1)));
        assert_eq!(e("a 1:nan\n"), (ErrorKind::NonFinite, Some(1)));
        assert_eq!(e("a 0:1\n"), (ErrorKind::FeatureIndex, Some(1)));
        assert_eq!(e("a 2:1 1:1\n"), (ErrorKind::FeatureIndex, Some(1)));
        assert_eq!(e("a 1\n"), (ErrorKind::Malformed, Some(1)));
        assert_eq!(e("# none\n"), (ErrorKind::Empty, None));
        let msg = parse_node_svmlight_str("a\nb\na\n", "n.txt", &NodeFeatureOptions::default()).unwrap_err();
        assert_eq!(msg.to_string(), "n.txt:3: node id \"a\" already defined on line 1");
    }

    #[test]
    fn csv_nodes() {
        let f = parse_node_csv_str("w,id,c\n0.5,d1,1\n0,\"d2\",-1\n", "n.csv").unwrap();
        assert_eq!(f.ids(), ["d1", "d2"]);
        assert_eq!(f.feature_names().unwrap(), ["w", "c"]);
        assert_eq!(f.to_dense(10).unwrap(), [0.5, 1.0, 0.0, -1.0]);
        assert_eq!(f.row(1), (&[0u32, 1][..], &[0.0, -1.0][..]));
        let e = |t: &str| {
            let e = parse_node_csv_str(t, "n.csv").unwrap_err();
            (e.kind(), e.line())
        };
        assert_eq!(e("x,y\n1,2\n"), (ErrorKind::Unknown, Some(1)));
        assert_eq!(e("id,x\na,1\nb,1,2\n"), (ErrorKind::Inconsistent, Some(3)));
        assert_eq!(e("id,x\na,1\nb\n"), (ErrorKind::Inconsistent, Some(3)));
        assert_eq!(e("id,x\na,1\na,2\n"), (ErrorKind::Duplicate, Some(3)));
        assert_eq!(e("id,x\na,1e999\n"), (ErrorKind::NonFinite, Some(2)));
        assert_eq!(e("id,x\na,one\n"), (ErrorKind::Malformed, Some(2)));
        assert_eq!(e("id,x\n,1\n"), (ErrorKind::Malformed, Some(2)));
        assert_eq!(e("id,x\n\"a b\",1\n"), (ErrorKind::Malformed, Some(2)));
        assert_eq!(e("id,x\n"), (ErrorKind::Empty, None));
    }

    fn kernel(t: &str, symmetrize: bool) -> Result<NodeKernel, DataError> {
        parse_node_kernel_str(t, "k.tsv", &KernelOptions { symmetrize, layout: MatrixLayout::Auto })
    }

    #[test]
    fn kernel_rows_are_permuted_into_column_order() {
        let k = kernel("\ta\tb\tc\nc\t0.2\t0.1\t1\na\t1\t0.5\t0.2\nb\t0.5\t1\t0.1\n", false).unwrap();
        assert_eq!(k.ids(), ["a", "b", "c"]);
        assert_eq!(k.values(), [1.0, 0.5, 0.2, 0.5, 1.0, 0.1, 0.2, 0.1, 1.0]);
        assert_eq!(k.layout(), MatrixLayout::Labelled);
        assert!(k.asymmetry().is_none());
        let k = kernel("1 2\n2 5\n", false).unwrap();
        assert_eq!(k.ids(), ["0", "1"]);
        assert_eq!(k.get(1, 1), 5.0);
        assert_eq!(k.layout(), MatrixLayout::Bare);
    }

    #[test]
    fn kernel_asymmetry_is_refused_or_averaged() {
        let text = "x y z\nx 1 0.5 0.3\ny 0.4 1 0.1\nz 0.3 0.1000000000000001 1\n";
        let e = kernel(text, false).unwrap_err();
        assert_eq!((e.kind(), e.line()), (ErrorKind::Invalid, Some(2)));
        let msg = e.to_string();
        assert!(msg.contains("K[\"x\", \"y\"] = 0.5 on this line but K[\"y\", \"x\"] = 0.4 on line 3"), "{msg}");
        assert!(msg.contains("largest of 2 unequal pairs"), "{msg}");
        let k = kernel(text, true).unwrap();
        assert_eq!(k.get(0, 1), 0.45);
        assert_eq!(k.get(1, 0), 0.45);
        let a = k.asymmetry().unwrap();
        assert_eq!((a.row.as_str(), a.col.as_str(), a.n_unequal), ("x", "y", 2));
        assert!((a.max_abs_diff - 0.1).abs() < 1e-15);
        // Rounding-level asymmetry passes without symmetrize, and is averaged.
        let k = kernel("1 0.1\n0.1000000000000001 1\n", false).unwrap();
        assert_eq!(k.get(0, 1), k.get(1, 0));
        assert_eq!(k.asymmetry().unwrap().n_unequal, 1);
    }

    #[test]
    fn kernel_rows_of_new_nodes() {
        let train: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let r = parse_kernel_rows_str("c a b\nx 3 1 2\ny 6 4 5\n", "r", &train, MatrixLayout::Auto).unwrap();
        assert_eq!(r.ids(), ["x", "y"]);
        assert_eq!(r.values(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(r.row(1), [4.0, 5.0, 6.0]);
        let r = parse_kernel_rows_str("1 2 3\n", "r", &train, MatrixLayout::Auto).unwrap();
        assert_eq!((r.ids(), r.n_train()), (&["0".to_owned()][..], 3));
        let e = |t: &str| {
            let e = parse_kernel_rows_str(t, "r", &train, MatrixLayout::Auto).unwrap_err();
            (e.kind(), e.line())
        };
        assert_eq!(e("1 2\n"), (ErrorKind::Inconsistent, Some(1)));
        assert_eq!(e("a b d\nx 1 2 3\n"), (ErrorKind::Unknown, Some(1)));
        assert_eq!(e("a b\nx 1 2\n"), (ErrorKind::Inconsistent, Some(1)));
        assert_eq!(e("a b c\nx 1 2 nan\n"), (ErrorKind::NonFinite, Some(2)));
    }

    #[test]
    fn kernel_errors() {
        let e = |t: &str| {
            let e = kernel(t, true).unwrap_err();
            (e.kind(), e.line())
        };
        assert_eq!(e("1 2 3\n4 5 6\n"), (ErrorKind::Inconsistent, None));
        assert_eq!(e("a b\na 1 0\nc 0 1\n"), (ErrorKind::Unknown, Some(3)));
        assert_eq!(e("a b\na 1 0\na 0 1\n"), (ErrorKind::Duplicate, Some(3)));
        assert_eq!(e("a b\na 1 0\nb 0 inf\n"), (ErrorKind::NonFinite, Some(3)));
        assert_eq!(e("a b\na 1 0\nb 0\n"), (ErrorKind::Inconsistent, Some(3)));
        assert_eq!(e(""), (ErrorKind::Empty, None));
    }
}
