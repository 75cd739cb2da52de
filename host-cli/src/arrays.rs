//! Data sets from arrays in memory — the Python extension's numpy and
//! scipy inputs — with the guarantees of a reader's [`Dataset`] (see
//! `crate::data`): finite values and labels, CSR columns strictly
//! increasing and below `d`, query ids interned in order of first
//! appearance. Bad input is one [`CliError::input`] naming the array and
//! the 0-based row (and column) — arrays have no file lines — and nothing
//! is allocated before the sizes are checked.
//!
//! A row's "line" ([`Dataset::source_line`]) is its 1-based position, so
//! scoring errors read `X:ROW`.

use std::collections::HashMap;

use crate::data::{Dataset, Qids, QueryGroups};
use crate::error::CliError;
use crate::table::Table;

/// Checks `n` labels and `n` query codes (if any) and interns the codes.
fn labels_and_qids(n: usize, labels: &[f64], qids: Option<&[i64]>) -> Result<Option<Qids>, CliError> {
    if labels.len() != n {
        return Err(CliError::input(format!("X has {n} rows, y has {} values", labels.len())));
    }
    if let Some(i) = labels.iter().position(|v| !v.is_finite()) {
        return Err(CliError::input(format!("y[{i}]: non-finite label {}", labels[i])));
    }
    let Some(codes) = qids else {
        return Ok(None);
    };
    if codes.len() != n {
        return Err(CliError::input(format!("X has {n} rows, qid has {} values", codes.len())));
    }
    // Interned by value, numbered in order of first appearance (what
    // interning their decimal names gives, without a string a row).
    let mut index: HashMap<i64, usize> = HashMap::new();
    let mut names = Vec::new();
    let of_row = codes
        .iter()
        .map(|&c| {
            *index.entry(c).or_insert_with(|| {
                names.push(c.to_string());
                names.len() - 1
            })
        })
        .collect();
    Ok(Some(Qids { names, of_row }))
}

/// A data set of a dense `n × d` matrix, read through `value(i, j)`
/// (any layout); zeros are not stored. `labels` and `qids` (integer codes
/// of the query of each row) have one entry per row.
///
/// # Errors
/// A non-finite value (`X[i, j]`) or label, mismatched lengths, a size that
/// overflows.
pub fn from_dense(
    n: usize,
    d: usize,
    value: impl Fn(usize, usize) -> f64,
    labels: &[f64],
    qids: Option<&[i64]>,
) -> Result<Dataset, CliError> {
    if n.checked_mul(d).is_none() || u32::try_from(d).is_err() {
        return Err(CliError::input(format!("X: {n} × {d} is too large")));
    }
    let qids = labels_and_qids(n, labels, qids)?;
    let mut nnz = 0usize;
    for i in 0..n {
        for j in 0..d {
            let v = value(i, j);
            if !v.is_finite() {
                return Err(CliError::input(format!("X[{i}, {j}]: non-finite feature value {v}")));
            }
            nnz += usize::from(v != 0.0);
        }
    }
    let mut row_ptr = Vec::with_capacity(n + 1);
    let (mut col, mut val) = (Vec::with_capacity(nnz), Vec::with_capacity(nnz));
    row_ptr.push(0);
    for i in 0..n {
        for j in 0..d {
            let v = value(i, j);
            if v != 0.0 {
                col.push(j as u32);
                val.push(v);
            }
        }
        row_ptr.push(col.len());
    }
    Ok(dataset(d, row_ptr, col, val, labels, qids))
}

/// The training table of a dense `n × d` matrix read through `value(i, j)`
/// (any layout), built in one pass: each row is checked and copied once,
/// straight into the table's dense storage, in learner order (grouped by
/// query when `by_query`, else in input order as one query). The table
/// equals [`Table::from_dataset`] of [`from_dense`]'s data set — the same
/// rows, values (`-0.0` stored as `0.0`), labels and groups, and the same
/// errors. `None` when that table would not be dense (too large): the
/// caller goes through [`from_dense`] then.
///
/// # Errors
/// As [`from_dense`].
pub fn dense_table(
    n: usize,
    d: usize,
    value: impl Fn(usize, usize) -> f64,
    labels: &[f64],
    qids: Option<&[i64]>,
    by_query: bool,
) -> Result<Option<Table>, CliError> {
    if n.checked_mul(d).is_none() || u32::try_from(d).is_err() {
        return Err(CliError::input(format!("X: {n} × {d} is too large")));
    }
    let qids = labels_and_qids(n, labels, qids)?;
    if !Table::dense_fits(n, d) {
        return Ok(None);
    }
    let (rows, query_ptr) = if by_query {
        let g = dataset(0, vec![0; n + 1], Vec::new(), Vec::new(), labels, qids).query_groups();
        (g.rows().to_vec(), g.query_ptr().to_vec())
    } else {
        ((0..n).collect(), vec![0, n])
    };
    // A non-finite value is reported at the first (row, column) in input
    // order, as `from_dense` reports it, whatever order the rows go in.
    let first_bad = || {
        (0..n)
            .find_map(|i| (0..d).find(|&j| !value(i, j).is_finite()).map(|j| (i, j)))
            .map(|(i, j)| CliError::input(format!("X[{i}, {j}]: non-finite feature value {}", value(i, j))))
    };
    let mut x = Vec::with_capacity(n * d);
    let mut finite = true;
    for &r in &rows {
        for j in 0..d {
            let v = value(r, j);
            finite &= v.is_finite();
            x.push(if v != 0.0 { v } else { 0.0 });
        }
        if !finite {
            return Err(first_bad().unwrap_or_else(|| CliError::input("X: non-finite feature value")));
        }
    }
    let labels = rows.iter().map(|&r| labels[r]).collect();
    Ok(Some(Table::from_dense_rows(x, d, labels, query_ptr, rows)))
}

/// A data set of a CSR matrix with `d` columns (scipy's `indptr`,
/// `indices`, `data`; stored zeros are kept, as a reader keeps `3:0`).
///
/// # Errors
/// Malformed CSR (pointers not starting at 0, decreasing or past the
/// data; columns out of range or not strictly increasing in a row), a
/// non-finite value, mismatched lengths.
pub fn from_csr(
    d: usize,
    indptr: &[i64],
    indices: &[i64],
    data: &[f64],
    labels: &[f64],
    qids: Option<&[i64]>,
) -> Result<Dataset, CliError> {
    let n = indptr.len().checked_sub(1).ok_or_else(|| CliError::input("X: CSR indptr is empty"))?;
    if u32::try_from(d).is_err() {
        return Err(CliError::input(format!("X: {d} columns is too many")));
    }
    if indices.len() != data.len() || indptr[0] != 0 || indptr[n] != data.len() as i64 {
        return Err(CliError::input("X: CSR indptr, indices and data do not agree"));
    }
    let qids = labels_and_qids(n, labels, qids)?;
    for i in 0..n {
        let (s, e) = (indptr[i], indptr[i + 1]);
        if s > e {
            return Err(CliError::input(format!("X: CSR indptr decreases at row {i}")));
        }
        let (s, e) = (s as usize, e as usize);
        let mut last = -1i64;
        for k in s..e {
            let c = indices[k];
            if c <= last || c >= d as i64 {
                return Err(CliError::input(format!(
                    "X[{i}, {c}]: column out of range 0..{d} or not increasing within the row"
                )));
            }
            if !data[k].is_finite() {
                return Err(CliError::input(format!("X[{i}, {c}]: non-finite feature value {}", data[k])));
            }
            last = c;
        }
    }
    let row_ptr = indptr.iter().map(|&p| p as usize).collect();
    let col = indices.iter().map(|&c| c as u32).collect();
    Ok(dataset(d, row_ptr, col, data.to_vec(), labels, qids))
}

fn dataset(d: usize, row_ptr: Vec<usize>, col: Vec<u32>, val: Vec<f64>, labels: &[f64], qids: Option<Qids>) -> Dataset {
    let n = labels.len();
    Dataset { d, row_ptr, col, val, labels: labels.to_vec(), qids, row_lines: (1..=n).collect(), feature_names: None }
}

/// The rows grouped by query code, as a reader's data set groups them
/// (queries in order of first appearance, rows in input order); all rows
/// one query without codes.
///
/// # Errors
/// None beyond `codes` of a length other than `n`.
pub fn query_groups(n: usize, codes: Option<&[i64]>) -> Result<QueryGroups, CliError> {
    let labels = vec![0.0; n];
    let qids = labels_and_qids(n, &labels, codes)?;
    Ok(dataset(0, vec![0; n + 1], Vec::new(), Vec::new(), &labels, qids).query_groups())
}
