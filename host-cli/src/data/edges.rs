//! Labelled edges of a graph: the training data of the Kronecker learners
//! (conditional ranking, paper 004). An edge `(u, v)` carries a real label
//! `y`; `u` is a node of the *u domain*, `v` of the *v domain* (drugs and
//! targets, say), or both of one domain (players who beat players).
//!
//! # Edges file
//!
//! ```text
//! # u      v      y
//! d1       t3     1
//! d1       t7     0      # a comment
//! d2       t3     0.25
//! ```
//!
//! - One edge per line: `u v y`, tokens separated by spaces or tabs. `u` and
//!   `v` are node ids (any text without spaces, tabs or `#`, compared byte
//!   for byte); `y` is a finite `f64`. Any other number of fields is an
//!   error, except `u v` alone with [`EdgeOptions::optional_label`] (label
//!   1; the relations of the preference learners, [`prefs`](super::prefs)).
//! - Everything from `#` to the end of a line is a comment; blank lines are
//!   skipped; a leading byte-order mark is ignored.
//! - Edges are **directed**: `a b` and `b a` are two edges. The same edge
//!   twice is an error naming both lines (its label would be ambiguous).
//! - With [`EdgeOptions::one_domain`], `u` and `v` are ids of one node set
//!   and a loop `a a` is an edge like any other (the complete graphs of
//!   paper 004 §4.2 include a loop at each node). Otherwise the two columns
//!   are separate name spaces: `x` as a `u` and `x` as a `v` are different
//!   nodes.
//! - A file without edges is an error.
//!
//! Node ids are interned in order of first appearance
//! ([`EdgeData::u_ids`]); [`EdgeData::on_nodes`] re-indexes the edges onto
//! the node sets of node features or kernels ([`nodes`](super::nodes)),
//! reporting an edge with an unknown node at its line.
//!
//! # Label matrix
//!
//! [`read_edge_matrix`] reads a matrix (the [layouts](super::matrix) of a
//! node kernel: labelled with ids, or bare) whose entry `(r, c)` is the label
//! of edge `(row r, column c)`: rows are the **u** domain, columns the
//! **v** domain, every entry an edge (a complete bipartite graph; 0/1 for an
//! interaction matrix like `data/drug-target-nr/nr_admat_dgc.txt`, whose
//! rows are drugs and columns targets). [`EdgeData::transposed`] swaps the
//! domains. With [`EdgeMatrixOptions::one_domain`] the matrix must be square
//! with the same ids on rows and columns (rows in any order), and the node
//! order is the column order.

use std::{
    collections::{HashMap, HashSet},
    path::Path,
};

use super::{
    matrix::{parse_matrix_str, MatrixLayout},
    parse_finite, quote, read_text, strip_bom, DataError, ErrorKind, Interner,
};

/// Options of the edges reader.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EdgeOptions {
    /// Both ends of an edge are nodes of one domain.
    pub one_domain: bool,
    /// The label may be left out (`u v`), and is then 1: the weighted
    /// relations of the preference learners (`--relation`, `u v [w]`).
    pub optional_label: bool,
}

/// Options of the label-matrix reader.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EdgeMatrixOptions {
    /// Rows and columns are the same nodes (a square matrix).
    pub one_domain: bool,
    /// The file's layout (default: detected).
    pub layout: MatrixLayout,
}

/// Labelled edges between two node sets (one, when
/// [`one_domain`](Self::one_domain)).
///
/// Guarantees: every edge `(i, j)` has `i < n_u()` and `j < n_v()`; no edge
/// appears twice; labels are finite; there is at least one edge. When
/// `one_domain()`, `u_ids() == v_ids()`.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeData {
    u_ids: Vec<String>,
    v_ids: Vec<String>,
    edges: Vec<(usize, usize)>,
    labels: Vec<f64>,
    one_domain: bool,
    lines: Vec<usize>,
    source: String,
}

impl EdgeData {
    /// The u node ids: edges' first ends index this list.
    pub fn u_ids(&self) -> &[String] {
        &self.u_ids
    }

    /// The v node ids: edges' second ends index this list (the same list as
    /// [`u_ids`](Self::u_ids) for one domain).
    pub fn v_ids(&self) -> &[String] {
        &self.v_ids
    }

    /// Number of u nodes.
    pub fn n_u(&self) -> usize {
        self.u_ids.len()
    }

    /// Number of v nodes.
    pub fn n_v(&self) -> usize {
        self.v_ids.len()
    }

    /// The edges `(u index, v index)`, in file order (row-major for a label
    /// matrix).
    pub fn edges(&self) -> &[(usize, usize)] {
        &self.edges
    }

    /// The label of each edge.
    pub fn labels(&self) -> &[f64] {
        &self.labels
    }

    /// Number of edges.
    pub fn len(&self) -> usize {
        self.edges.len()
    }

    /// `true` when there are no edges (never, for edges from a reader).
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    /// Both ends are nodes of one domain.
    pub fn one_domain(&self) -> bool {
        self.one_domain
    }

    /// The 1-based line edge `e` came from (its row's line for a label
    /// matrix).
    ///
    /// # Panics
    ///
    /// If `e >= len()`.
    pub fn source_line(&self, e: usize) -> usize {
        self.lines[e]
    }

    /// The file the edges came from, as printed in errors.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// `true` when every pair of `u_ids() × v_ids()` is an edge (loops
    /// included, for one domain): the case with a closed-form Kronecker
    /// solution.
    pub fn is_complete(&self) -> bool {
        // No edge twice and every index in range: complete iff there are
        // n_u · n_v edges.
        self.n_u().checked_mul(self.n_v()) == Some(self.len())
    }

    /// For a complete graph, the labels as a dense row-major `n_u × n_v`
    /// matrix: `Y[i * n_v + j]` is the label of edge `(u_ids[i], v_ids[j])`.
    /// `None` when the graph is not complete.
    pub fn label_matrix(&self) -> Option<Vec<f64>> {
        if !self.is_complete() {
            return None;
        }
        let mut y = vec![0.0; self.len()];
        for (&(i, j), &l) in self.edges.iter().zip(&self.labels) {
            y[i * self.n_v() + j] = l;
        }
        Some(y)
    }

    /// The same edges with the domains swapped: edge `(u, v)` becomes
    /// `(v, u)` (for one domain: every edge reversed).
    pub fn transposed(&self) -> EdgeData {
        EdgeData {
            u_ids: self.v_ids.clone(),
            v_ids: self.u_ids.clone(),
            edges: self.edges.iter().map(|&(i, j)| (j, i)).collect(),
            labels: self.labels.clone(),
            one_domain: self.one_domain,
            lines: self.lines.clone(),
            source: self.source.clone(),
        }
    }

    /// The same edges indexed into given node sets (the ids of
    /// [`NodeKernel`](super::NodeKernel)s or
    /// [`NodeFeatures`](super::NodeFeatures)): the result's `u_ids()` is
    /// `u_nodes` and its `v_ids()` is `v_nodes`, in their order. Nodes
    /// without edges are allowed (then the graph is not complete); edge order,
    /// labels and lines are kept. For one domain, pass the same set twice.
    ///
    /// # Errors
    ///
    /// An edge naming a node that is not in its set ([`ErrorKind::Unknown`],
    /// at the edge's line), or two different sets for one-domain edges
    /// ([`ErrorKind::Inconsistent`]).
    pub fn on_nodes(&self, u_nodes: &[String], v_nodes: &[String]) -> Result<EdgeData, DataError> {
        if self.one_domain && u_nodes != v_nodes {
            return Err(DataError::file(
                &self.source,
                ErrorKind::Inconsistent,
                format!(
                    "the edges are of one domain but the u and v node sets differ ({} and {} nodes)",
                    u_nodes.len(),
                    v_nodes.len()
                ),
            ));
        }
        let (u_index, v_index) = (id_index(u_nodes), id_index(v_nodes));
        // Old index → new index, per side; an unknown node is reported at the
        // first edge that names it.
        let map = |old: &[String], new: &HashMap<&str, usize>| -> Vec<Option<usize>> {
            old.iter().map(|id| new.get(id.as_str()).copied()).collect()
        };
        let (u_map, v_map) = (map(&self.u_ids, &u_index), map(&self.v_ids, &v_index));
        let mut edges = Vec::with_capacity(self.len());
        for (e, &(i, j)) in self.edges.iter().enumerate() {
            let side = |m: &[Option<usize>], k: usize, ids: &[String], which: &str, n: usize| {
                m[k].ok_or_else(|| {
                    DataError::at(
                        &self.source,
                        self.lines[e],
                        ErrorKind::Unknown,
                        format!("unknown {which} {}: not among the {n} ids of its node set", quote(&ids[k])),
                    )
                })
            };
            let (wu, wv) = if self.one_domain { ("node", "node") } else { ("u node", "v node") };
            let a = side(&u_map, i, &self.u_ids, wu, u_nodes.len())?;
            let b = side(&v_map, j, &self.v_ids, wv, v_nodes.len())?;
            edges.push((a, b));
        }
        Ok(EdgeData {
            u_ids: u_nodes.to_vec(),
            v_ids: v_nodes.to_vec(),
            edges,
            labels: self.labels.clone(),
            one_domain: self.one_domain,
            lines: self.lines.clone(),
            source: self.source.clone(),
        })
    }
}

/// Id → position (the first, should an id repeat).
pub(crate) fn id_index(nodes: &[String]) -> HashMap<&str, usize> {
    let mut m = HashMap::with_capacity(nodes.len());
    for (k, id) in nodes.iter().enumerate() {
        m.entry(id.as_str()).or_insert(k);
    }
    m
}

/// Reads an edges file. See the [module docs](self).
///
/// # Errors
///
/// A [`DataError`] naming the file (and line) for a missing file, no edges,
/// a line without exactly three fields, a malformed or non-finite label, or
/// an edge given twice.
pub fn read_edges(path: impl AsRef<Path>, opts: &EdgeOptions) -> Result<EdgeData, DataError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    parse_edges_str(&text, &path.display().to_string(), opts)
}

/// Parses an edges text; `name` is printed in errors.
///
/// # Errors
///
/// As [`read_edges`].
pub fn parse_edges_str(text: &str, name: &str, opts: &EdgeOptions) -> Result<EdgeData, DataError> {
    let mut u_names = Interner::default();
    let mut v_names = Interner::default();
    let mut edges = Vec::new();
    let mut labels = Vec::new();
    let mut lines = Vec::new();
    let mut seen: HashMap<(usize, usize), usize> = HashMap::new();
    for (i, raw) in strip_bom(text).lines().enumerate() {
        let line_no = i + 1;
        let err = |kind, msg| DataError::at(name, line_no, kind, msg);
        let line = raw.find('#').map_or(raw, |p| &raw[..p]);
        let tokens: Vec<&str> = line.split_ascii_whitespace().take(4).collect();
        let (u, v, label) = match tokens[..] {
            [] => continue,
            [u, v, y] => (u, v, parse_finite(y, "label").map_err(|(kind, msg)| err(kind, msg))?),
            [u, v] if opts.optional_label => (u, v, 1.0),
            _ => {
                let n = line.split_ascii_whitespace().count();
                let want = if opts.optional_label { "u v [weight]" } else { "u v label" };
                return Err(err(ErrorKind::Malformed, format!("expected `{want}`, found {n} fields")));
            }
        };
        let a = u_names.intern(u);
        let b = if opts.one_domain { u_names.intern(v) } else { v_names.intern(v) };
        if let Some(first) = seen.insert((a, b), line_no) {
            return Err(err(
                ErrorKind::Duplicate,
                format!("edge ({}, {}) already given on line {first}", quote(u), quote(v)),
            ));
        }
        edges.push((a, b));
        labels.push(label);
        lines.push(line_no);
    }
    if edges.is_empty() {
        return Err(DataError::file(name, ErrorKind::Empty, "no edges".to_owned()));
    }
    let u_ids = u_names.into_names();
    let v_ids = if opts.one_domain { u_ids.clone() } else { v_names.into_names() };
    Ok(EdgeData { u_ids, v_ids, edges, labels, one_domain: opts.one_domain, lines, source: name.to_owned() })
}

/// Reads a label matrix as a complete graph: rows are u nodes, columns v
/// nodes. See the [module docs](self#label-matrix).
///
/// # Errors
///
/// A [`DataError`] naming the file (and line) for a missing file, a malformed
/// or ragged matrix or a non-finite value; for one domain also a non-square
/// matrix or row ids that are not the column ids.
pub fn read_edge_matrix(path: impl AsRef<Path>, opts: &EdgeMatrixOptions) -> Result<EdgeData, DataError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    parse_edge_matrix_str(&text, &path.display().to_string(), opts)
}

/// Parses a label matrix; `name` is printed in errors.
///
/// # Errors
///
/// As [`read_edge_matrix`].
pub fn parse_edge_matrix_str(text: &str, name: &str, opts: &EdgeMatrixOptions) -> Result<EdgeData, DataError> {
    let m = parse_matrix_str(text, name, opts.layout)?;
    let (r, c) = (m.n_rows(), m.n_cols());
    let u_of_row: Vec<usize> = if opts.one_domain {
        if r != c {
            return Err(DataError::file(
                name,
                ErrorKind::Inconsistent,
                format!("{r} rows but {c} columns: a one-domain label matrix is square"),
            ));
        }
        let cols: HashMap<&str, usize> = m.col_ids.iter().enumerate().map(|(j, id)| (id.as_str(), j)).collect();
        let mut u = Vec::with_capacity(r);
        for (id, &line) in m.row_ids.iter().zip(&m.row_lines) {
            let Some(&j) = cols.get(id.as_str()) else {
                return Err(DataError::at(
                    name,
                    line,
                    ErrorKind::Unknown,
                    format!("row id {} is not among the column ids: one domain has one set of nodes", quote(id)),
                ));
            };
            u.push(j);
        }
        debug_assert_eq!(u.iter().collect::<HashSet<_>>().len(), r);
        u
    } else {
        (0..r).collect()
    };
    let mut edges = Vec::with_capacity(r * c);
    let mut lines = Vec::with_capacity(r * c);
    for (row, &line) in m.row_lines.iter().enumerate() {
        for j in 0..c {
            edges.push((u_of_row[row], j));
            lines.push(line);
        }
    }
    let u_ids = if opts.one_domain { m.col_ids.clone() } else { m.row_ids };
    Ok(EdgeData {
        u_ids,
        v_ids: m.col_ids,
        edges,
        labels: m.values,
        one_domain: opts.one_domain,
        lines,
        source: name.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two(text: &str) -> Result<EdgeData, DataError> {
        parse_edges_str(text, "e.txt", &EdgeOptions::default())
    }

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn edges_two_domains() {
        let e = two("# u v y\nd1 t3 1\n\nd1\tt7 0 # c\nd2 t3 0.25\nt3 d1 -1\n").unwrap();
        assert_eq!(e.u_ids(), ["d1", "d2", "t3"]);
        assert_eq!(e.v_ids(), ["t3", "t7", "d1"]);
        assert_eq!(e.edges(), [(0, 0), (0, 1), (1, 0), (2, 2)]);
        assert_eq!(e.labels(), [1.0, 0.0, 0.25, -1.0]);
        assert_eq!(e.source_line(1), 4);
        assert!(!e.one_domain() && !e.is_complete());
        let t = e.transposed();
        assert_eq!(t.u_ids(), e.v_ids());
        assert_eq!(t.edges()[1], (1, 0));
    }

    #[test]
    fn edges_one_domain_and_loops() {
        let opts = EdgeOptions { one_domain: true, ..EdgeOptions::default() };
        let e = parse_edges_str("a b 1\nb a 0\na a 2\nb b 3\n", "e", &opts).unwrap();
        assert_eq!(e.u_ids(), ["a", "b"]);
        assert_eq!(e.v_ids(), e.u_ids());
        assert!(e.is_complete());
        assert_eq!(e.label_matrix().unwrap(), [2.0, 1.0, 0.0, 3.0]);
        let e = parse_edges_str("a b 1\na b 2\n", "e", &opts).unwrap_err();
        assert_eq!((e.kind(), e.line()), (ErrorKind::Duplicate, Some(2)));
    }

    #[test]
    fn edge_errors_name_file_and_line() {
        let e = |t: &str| {
            let e = two(t).unwrap_err();
            (e.kind(), e.line())
        };
        assert_eq!(e("a b 1\na b\n"), (ErrorKind::Malformed, Some(2)));
        assert_eq!(e("a b 1 2\n"), (ErrorKind::Malformed, Some(1)));
        assert_eq!(e("a b one\n"), (ErrorKind::Malformed, Some(1)));
        assert_eq!(e("a b nan\n"), (ErrorKind::NonFinite, Some(1)));
        assert_eq!(e("a b 1e999\n"), (ErrorKind::NonFinite, Some(1)));
        assert_eq!(e("# none\n\n"), (ErrorKind::Empty, None));
        let msg = two("a b 1\nc b 1\n\na b 0\n").unwrap_err().to_string();
        assert_eq!(msg, "e.txt:4: edge (\"a\", \"b\") already given on line 1");
        let msg = two("a b 1 2 3 4 5\n").unwrap_err().to_string();
        assert!(msg.ends_with("found 7 fields"), "{msg}");
        // Two domains: a b and b a are different edges, in different name spaces.
        assert_eq!(two("a b 1\nb a 1\n").unwrap().len(), 2);
    }

    #[test]
    fn on_nodes_reindexes_and_reports_unknown_nodes() {
        let e = two("d2 t1 1\nd1 t1 0\nd2 t2 0\nd1 t2 1\n").unwrap();
        assert!(e.is_complete());
        let on = e.on_nodes(&ids(&["d1", "d2", "d3"]), &ids(&["t2", "t1"])).unwrap();
        assert_eq!(on.edges(), [(1, 1), (0, 1), (1, 0), (0, 0)]);
        assert!(!on.is_complete());
        assert!(on.label_matrix().is_none());
        let on = e.on_nodes(&ids(&["d1", "d2"]), &ids(&["t2", "t1"])).unwrap();
        assert!(on.is_complete());
        assert_eq!(on.label_matrix().unwrap(), [1.0, 0.0, 0.0, 1.0]);

        let err = e.on_nodes(&ids(&["d1", "d2"]), &ids(&["t1"])).unwrap_err();
        assert_eq!((err.kind(), err.line()), (ErrorKind::Unknown, Some(3)));
        assert_eq!(err.to_string(), "e.txt:3: unknown v node \"t2\": not among the 1 ids of its node set");
        let err = e.on_nodes(&ids(&["d2"]), &ids(&["t1", "t2"])).unwrap_err();
        assert_eq!(err.line(), Some(2));

        let one = parse_edges_str("a b 1\n", "e", &EdgeOptions { one_domain: true, ..EdgeOptions::default() }).unwrap();
        let err = one.on_nodes(&ids(&["a", "b"]), &ids(&["b", "a"])).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Inconsistent);
        let err = one.on_nodes(&ids(&["a"]), &ids(&["a"])).unwrap_err();
        assert!(err.to_string().contains("unknown node \"b\""), "{err}");
    }

    #[test]
    fn label_matrices() {
        let e = parse_edge_matrix_str("0 1 0\n1 0.5 0\n", "m", &EdgeMatrixOptions::default()).unwrap();
        assert_eq!((e.n_u(), e.n_v(), e.len()), (2, 3, 6));
        assert_eq!(e.u_ids(), ["0", "1"]);
        assert!(e.is_complete());
        assert_eq!(e.label_matrix().unwrap(), [0.0, 1.0, 0.0, 1.0, 0.5, 0.0]);
        assert_eq!(e.source_line(4), 2);
        assert_eq!(e.transposed().label_matrix().unwrap(), [0.0, 1.0, 1.0, 0.5, 0.0, 0.0]);

        let opts = EdgeMatrixOptions { one_domain: true, layout: MatrixLayout::Auto };
        let e = parse_edge_matrix_str("  a b\nb 1 2\na 3 4\n", "m", &opts).unwrap();
        assert_eq!(e.u_ids(), ["a", "b"]);
        assert_eq!(e.v_ids(), ["a", "b"]);
        assert_eq!(e.label_matrix().unwrap(), [3.0, 4.0, 1.0, 2.0]);
        let err = parse_edge_matrix_str("a b\na 1 2\nc 3 4\n", "m", &opts).unwrap_err();
        assert_eq!((err.kind(), err.line()), (ErrorKind::Unknown, Some(3)));
        let err = parse_edge_matrix_str("1 2\n", "m", &opts).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Inconsistent);
    }
}
