//! `ranklet._ranklet`: the Python extension over the host library the CLI
//! uses. It converts arrays into the library's data sets
//! (`ranklet::arrays`), calls the one training driver
//! (`ranklet::train_rows::fit_rows`), the device scorer over model bytes
//! (`ranklet::model_io::score_rows`) and core's metrics
//! (`ranklet::metric`). It holds no algorithm and no driver of its own; the
//! estimators (`python/ranklet/_estimators.py`) are Python.
//!
//! Conventions at the boundary:
//! - the GIL is released while a model trains or rows are scored;
//! - the training callback checks for signals between steps (folds, grid
//!   points, the final fit), so Ctrl-C raises `KeyboardInterrupt`;
//! - bad input is `ValueError` with the CLI's message, any other failure
//!   `RuntimeError`; a panic is caught and becomes `RuntimeError`, never an
//!   abort of the interpreter.

use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use ranklet::args::{parse_cv, parse_kernels, QueryWeightArg};
use ranklet::data::nodes::{parse_node_kernel_str, KernelOptions};
use ranklet::data::prefs::{parse_groups_str, parse_prefs_str, parse_relation_str, Ties};
use ranklet::data::Dataset;
use ranklet::data::{parse_edges_str, EdgeOptions, MatrixLayout};
use ranklet::error::CliError;
use ranklet::family::kron::{EdgeMetric, KronAlgo, NodeRepr, NodeSets, Nodes, PairArg, PairModel};
use ranklet::family::pref::{
    fit_prefs, suggest, suggest_lowrank, tie_notes, PrefAlgo, PrefData, PrefItems, PrefKernel, PrefModel,
    PrefModelKind, PrefRequest, PrefScorer, RelationResidual,
};
use ranklet::family::Algo;
use ranklet::hostbackend::BackendChoice;
use ranklet::metric::Metric;
use ranklet::ordering::{compute_basis, train_orders, Loaded, OrderAlgo, OrdersRequest, ReduceMethod};
use ranklet::table::Table;
use ranklet::train_edges::{fit_edges, EdgesRequest};
use ranklet::train_rows::{fit_rows, fit_table, RowsRequest};
use ranklet_core::format::{ElementType, ModelView};
use ranklet_core::graph::Pair;

/// Two arrays returned together (means and variances, a basis and its
/// importances).
type TwoArrays<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

/// A Kronecker fit: model bytes, the chosen λ, the CV rows `(λ, mean, std)`.
type EdgesOut<'py> = (Bound<'py, PyBytes>, f64, Option<Vec<(f64, f64, f64)>>);
// The statistics bindings of the Dask layer.
mod stats;

/// A library error as the Python exception of its kind.
fn py_err(e: CliError) -> PyErr {
    if e.code == 2 {
        PyValueError::new_err(e.msg)
    } else {
        PyRuntimeError::new_err(e.msg)
    }
}

/// Runs `f` with a panic turned into `RuntimeError`.
fn fenced<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let why = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(PyRuntimeError::new_err(format!("internal error in ranklet (please report): {why}")))
    })
}

/// The features of a fit or a prediction: a dense float32/float64 array in
/// any layout, or the three arrays of a CSR matrix.
enum Features<'py> {
    F64(PyReadonlyArray2<'py, f64>),
    F32(PyReadonlyArray2<'py, f32>),
    Csr {
        d: usize,
        indptr: PyReadonlyArray1<'py, i64>,
        indices: PyReadonlyArray1<'py, i64>,
        data: PyReadonlyArray1<'py, f64>,
    },
}

impl<'py> Features<'py> {
    fn new(x: &Bound<'py, PyAny>, csr: Option<(usize, Bound<'py, PyAny>, Bound<'py, PyAny>)>) -> PyResult<Self> {
        if let Some((d, indptr, indices)) = csr {
            return Ok(Features::Csr { d, indptr: indptr.extract()?, indices: indices.extract()?, data: x.extract()? });
        }
        if let Ok(a) = x.extract::<PyReadonlyArray2<'py, f64>>() {
            return Ok(Features::F64(a));
        }
        if let Ok(a) = x.extract::<PyReadonlyArray2<'py, f32>>() {
            return Ok(Features::F32(a));
        }
        Err(PyTypeError::new_err("X must be a 2-D float32 or float64 array or a scipy.sparse CSR matrix"))
    }

    fn n_rows(&self) -> usize {
        match self {
            Features::F64(a) => a.shape()[0],
            Features::F32(a) => a.shape()[0],
            Features::Csr { indptr, .. } => indptr.len().saturating_sub(1),
        }
    }

    /// The training table straight from a dense array (one pass over the
    /// numpy buffer, without the GIL: each row checked and copied once into
    /// the table); `None` for CSR input or a matrix too large to be stored
    /// densely, which go through [`Features::dataset`].
    fn table(&self, py: Python<'_>, labels: &[f64], qids: Option<&[i64]>, by_query: bool) -> PyResult<Option<Table>> {
        use ranklet::arrays::dense_table;
        let built = match self {
            Features::F64(a) => {
                let v = a.as_array();
                let (n, d) = v.dim();
                match v.as_slice() {
                    Some(x) => py.detach(|| dense_table(n, d, |i, j| x[i * d + j], labels, qids, by_query)),
                    None => py.detach(|| dense_table(n, d, |i, j| v[[i, j]], labels, qids, by_query)),
                }
            }
            Features::F32(a) => {
                let v = a.as_array();
                let (n, d) = v.dim();
                match v.as_slice() {
                    Some(x) => py.detach(|| dense_table(n, d, |i, j| f64::from(x[i * d + j]), labels, qids, by_query)),
                    None => py.detach(|| dense_table(n, d, |i, j| f64::from(v[[i, j]]), labels, qids, by_query)),
                }
            }
            Features::Csr { .. } => return Ok(None),
        };
        built.map_err(py_err)
    }

    /// The data set (without the GIL: the views are plain memory).
    fn dataset(&self, py: Python<'_>, labels: &[f64], qids: Option<&[i64]>) -> PyResult<Dataset> {
        let built = match self {
            Features::F64(a) => {
                let v = a.as_array();
                let (n, d) = v.dim();
                match v.as_slice() {
                    // Row-major and contiguous: read the slice directly.
                    Some(x) => py.detach(|| ranklet::arrays::from_dense(n, d, |i, j| x[i * d + j], labels, qids)),
                    None => py.detach(|| ranklet::arrays::from_dense(n, d, |i, j| v[[i, j]], labels, qids)),
                }
            }
            Features::F32(a) => {
                let v = a.as_array();
                let (n, d) = v.dim();
                py.detach(|| ranklet::arrays::from_dense(n, d, |i, j| f64::from(v[[i, j]]), labels, qids))
            }
            Features::Csr { d, indptr, indices, data } => {
                let (p, i, x) = (indptr.as_slice()?, indices.as_slice()?, data.as_slice()?);
                py.detach(|| ranklet::arrays::from_csr(*d, p, i, x, labels, qids))
            }
        };
        built.map_err(py_err)
    }
}

fn element(precision: &str) -> PyResult<ElementType> {
    match precision {
        "f32" => Ok(ElementType::F32),
        "f64" => Ok(ElementType::F64),
        other => Err(PyValueError::new_err(format!("precision must be 'f32' or 'f64', got {other:?}"))),
    }
}

/// Trains a row learner; returns `(model bytes, cv rows, chosen params)`.
/// `cv_rows` is a list of dicts (`params`, `folds`, `mean`, `std`,
/// `failure`) and `best` its chosen index, or `None` without CV.
#[pyfunction]
#[pyo3(signature = (x, y, qid, pairs, csr, *, algo, kernel, lambdas, components, basis, query_weight, standardize, cv, metric, seed, precision, metadata))]
#[allow(clippy::too_many_arguments)]
fn fit_rows_py<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, f64>,
    qid: Option<PyReadonlyArray1<'py, i64>>,
    pairs: Option<PyReadonlyArray2<'py, f64>>,
    csr: Option<(usize, Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    algo: &str,
    kernel: &str,
    lambdas: Vec<f64>,
    components: Option<Vec<usize>>,
    basis: Option<usize>,
    query_weight: &str,
    standardize: bool,
    cv: Option<&str>,
    metric: Option<&str>,
    seed: u64,
    precision: &str,
    metadata: Vec<(String, String)>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyAny>, Bound<'py, PyDict>)> {
    fenced(|| {
        let algo = match algo {
            "rls" => Algo::Rls,
            "rankrls" => Algo::Rankrls,
            "kpcr" => Algo::Kpcr,
            "kpcrank" => Algo::Kpcrank,
            other => return Err(PyValueError::new_err(format!("unknown learner {other:?}"))),
        };
        let query_weight = match query_weight {
            "equal" => QueryWeightArg::Equal,
            "pairs" => QueryWeightArg::Pairs,
            other => {
                return Err(PyValueError::new_err(format!("query_weight must be 'equal' or 'pairs', got {other:?}")))
            }
        };
        let request = RowsRequest {
            algo,
            kernels: parse_kernels(kernel).map_err(py_err)?,
            lambdas: Some(lambdas),
            components,
            basis,
            query_weight,
            standardize,
            cv: cv.map(parse_cv).transpose().map_err(|e| PyValueError::new_err(format!("cv: {e}")))?,
            metric: metric.map(Metric::parse).transpose().map_err(py_err)?,
            seed,
            element: element(precision)?,
            backend: BackendChoice::Faer,
            metadata,
        };
        let plan = request.plan(pairs.is_some()).map_err(py_err)?;
        let features = Features::new(x, csr)?;
        let qids = qid.as_ref().map(|q| q.as_slice()).transpose()?;
        // The rows first (their errors come before those of the pairs).
        let labels = y.as_slice()?;
        let (table, ds) = match features.table(py, labels, qids, pairs.is_none())? {
            Some(table) => (Some(table), None),
            None => (None, Some(features.dataset(py, labels, qids)?)),
        };
        let pairs = match &pairs {
            None => None,
            Some(p) => Some(pairs_of(p, features.n_rows())?),
        };
        let fit = match (table, ds) {
            (Some(table), _) => detached(py, |on| fit_table(&plan, table, pairs.as_deref(), "<arrays>", on))?,
            (None, Some(ds)) => detached(py, |on| fit_rows(&plan, ds, pairs.as_deref(), "<arrays>", on))?,
            (None, None) => return Err(PyRuntimeError::new_err("no rows")),
        };
        let chosen = PyDict::new(py);
        for (k, v) in &fit.chosen_params {
            chosen.set_item(k, v)?;
        }
        let cv_rows: Bound<'py, PyAny> = match &fit.cv {
            None => py.None().into_bound(py),
            Some(report) => {
                let (rows, best) = report.rows(&plan.family);
                let list = PyList::empty(py);
                for r in rows {
                    let d = PyDict::new(py);
                    let params = PyDict::new(py);
                    for (k, v) in &r.params {
                        params.set_item(k, v)?;
                    }
                    d.set_item("params", params)?;
                    d.set_item("folds", r.folds)?;
                    d.set_item("mean", r.mean)?;
                    d.set_item("std", r.std)?;
                    d.set_item("failure", r.failure)?;
                    list.append(d)?;
                }
                let out = PyDict::new(py);
                out.set_item("rows", list)?;
                out.set_item("best", best)?;
                out.set_item("scheme", report.scheme())?;
                out.set_item("metric", plan.metric.name())?;
                out.into_any()
            }
        };
        Ok((PyBytes::new(py, &fit.bytes), cv_rows, chosen))
    })
}

/// Explicit pairs over the rows: an `(m, 2)` array of (winner, loser) or
/// `(m, 3)` with a magnitude, checked by the pairs reader itself (the same
/// checks and messages as `--pairs`; the "line" is the 1-based pair).
fn pairs_of(p: &PyReadonlyArray2<'_, f64>, n: usize) -> PyResult<Vec<Pair>> {
    let v = p.as_array();
    if !(2..=3).contains(&v.ncols()) {
        return Err(PyValueError::new_err(format!(
            "pairs must have 2 columns (winner, loser) or 3 (and a magnitude), got {}",
            v.ncols()
        )));
    }
    let mut text = String::with_capacity(v.nrows() * 16);
    for r in v.rows() {
        let fields: Vec<String> = r.iter().map(|x| x.to_string()).collect();
        text.push_str(&fields.join(" "));
        text.push('\n');
    }
    ranklet::data::parse_pairs_str(&text, "pairs", n).map_err(|e| py_err(e.into()))
}

/// Scores the rows of `X` with a model; `precision` as `ranklet score
/// --precision` (default: the model's element type).
#[pyfunction]
#[pyo3(signature = (model, x, csr=None, precision=None))]
fn score<'py>(
    py: Python<'py>,
    model: &[u8],
    x: &Bound<'py, PyAny>,
    csr: Option<(usize, Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    precision: Option<&str>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    fenced(|| {
        let view =
            ModelView::new_checked(model).map_err(|e| PyValueError::new_err(format!("not a valid model: {e}")))?;
        let precision = precision.map(element).transpose()?.unwrap_or(view.element_type());
        let features = Features::new(x, csr)?;
        let labels = vec![0.0; features.n_rows()];
        let ds = features.dataset(py, &labels, None)?;
        let scores =
            py.detach(|| ranklet::model_io::score_rows(&view, &ds, Path::new("X"), precision)).map_err(py_err)?;
        Ok(PyArray1::from_vec(py, scores))
    })
}

/// What a model file says about itself: kind, element type, dimension,
/// metadata text.
#[pyfunction]
fn model_info<'py>(py: Python<'py>, model: &[u8]) -> PyResult<Bound<'py, PyDict>> {
    fenced(|| {
        let view =
            ModelView::new_checked(model).map_err(|e| PyValueError::new_err(format!("not a valid model: {e}")))?;
        let d = PyDict::new(py);
        d.set_item("kind", ranklet::model_io::kind_name(view.kind()))?;
        d.set_item("element", ranklet::model_io::elem_name(view.element_type()))?;
        d.set_item("dim", view.dim())?;
        d.set_item("metadata", view.metadata())?;
        Ok(d)
    })
}

/// The model of `model`'s bytes with the lines `key=value` of `metadata`
/// added to its metadata, every other section unchanged
/// (`ranklet::model_io::with_metadata`): how the learners whose drivers
/// write their own metadata record the feature names of a DataFrame.
#[pyfunction]
fn add_metadata<'py>(py: Python<'py>, model: &[u8], metadata: Vec<(String, String)>) -> PyResult<Bound<'py, PyBytes>> {
    fenced(|| {
        let bytes = ranklet::model_io::with_metadata(model, &metadata).map_err(py_err)?;
        Ok(PyBytes::new(py, &bytes))
    })
}

/// One metric (a name of `ranklet eval --metric`) of `scores` against
/// `labels`, per query of `qid` (integer codes) and averaged as the CLI
/// averages it.
#[pyfunction]
#[pyo3(signature = (name, labels, scores, qid=None))]
fn metric(
    py: Python<'_>,
    name: &str,
    labels: PyReadonlyArray1<'_, f64>,
    scores: PyReadonlyArray1<'_, f64>,
    qid: Option<PyReadonlyArray1<'_, i64>>,
) -> PyResult<f64> {
    fenced(|| {
        let m = Metric::parse(name).map_err(py_err)?;
        let (y, s) = (labels.as_slice()?, scores.as_slice()?);
        if y.len() != s.len() {
            return Err(PyValueError::new_err(format!("y_true has {} values, y_score has {}", y.len(), s.len())));
        }
        if let Some(i) = y.iter().chain(s).position(|v| !v.is_finite()) {
            let (what, at) = if i < y.len() { ("y_true", i) } else { ("y_score", i - y.len()) };
            return Err(PyValueError::new_err(format!("{what}[{at}]: non-finite value")));
        }
        let codes = qid.as_ref().map(|q| q.as_slice()).transpose()?;
        py.detach(|| {
            let groups = ranklet::arrays::query_groups(y.len(), codes)?;
            let yq: Vec<f64> = groups.rows().iter().map(|&r| y[r]).collect();
            let sq: Vec<f64> = groups.rows().iter().map(|&r| s[r]).collect();
            m.eval_labels(&yq, &sq, groups.query_ptr())
        })
        // A metric refuses only its input (labels outside its domain).
        .map_err(|e| PyValueError::new_err(e.msg))
    })
}

/// The pair error of `scores` over explicit pairs of rows.
#[pyfunction]
fn pair_metric(py: Python<'_>, scores: PyReadonlyArray1<'_, f64>, pairs: PyReadonlyArray2<'_, f64>) -> PyResult<f64> {
    fenced(|| {
        let s = scores.as_slice()?;
        if let Some(i) = s.iter().position(|v| !v.is_finite()) {
            return Err(PyValueError::new_err(format!("y_score[{i}]: non-finite value")));
        }
        let pairs = pairs_of(&pairs, s.len())?;
        py.detach(|| Metric::PairError.eval_pairs(s, &pairs)).map_err(|e| PyValueError::new_err(e.msg))
    })
}

/// Items for the preference GPs: the rows of `x` (the same checks as the
/// row learners' `X`), ids `"0"`, `"1"`, …; `n` items without attributes
/// when `x` is `None` (xpgp on relations only).
fn pref_items(py: Python<'_>, x: Option<&Bound<'_, PyAny>>, n: usize) -> PyResult<PrefItems> {
    match x {
        Some(x) => {
            let features = Features::new(x, None)?;
            let labels = vec![0.0; features.n_rows()];
            let ds = features.dataset(py, &labels, None)?;
            PrefItems::from_rows(&ds, "X").map_err(py_err)
        }
        None => Ok(PrefItems { ids: (0..n).map(|i| i.to_string()).collect(), d: 0, x: Vec::new(), source: "X".into() }),
    }
}

/// Runs a fit without the GIL, checking for signals between its steps.
fn detached<T: Send>(
    py: Python<'_>,
    f: impl Send + FnOnce(ranklet::progress::OnProgress<'_>) -> Result<T, CliError>,
) -> PyResult<T> {
    let mut stop: Option<PyErr> = None;
    let out = py.detach(|| {
        let mut on = |_| match Python::attach(|py| py.check_signals()) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                stop = Some(e);
                ControlFlow::Break(())
            }
        };
        f(&mut on)
    });
    if let Some(e) = stop {
        return Err(e);
    }
    out.map_err(py_err)
}

/// Trains a preference GP (`ranklet train --prefs …`): `prefs` is the text
/// of a preferences file over the item ids `"0"`, `"1"`, … (checked by the
/// CLI's reader, with its messages), `relations` `(kind, name, text)` with
/// kind `"edges"` or `"groups"`; `basis` M: sparse EP on at most M inducing
/// items (`--basis M`; for xpgp each relation through `relation_rank`
/// Laplacian eigenpairs, `--relation-rank K`, its dropped spectrum by
/// `relation_residual`, `--relation-residual`). Returns `(model bytes,
/// summary, notes)`.
#[pyfunction]
#[pyo3(signature = (x, n_items, prefs, relations, *, algo, gamma, inductive, ties, precision, basis=None, relation_rank=None, relation_residual="none"))]
#[allow(clippy::too_many_arguments)]
fn fit_prefs_py<'py>(
    py: Python<'py>,
    x: Option<Bound<'py, PyAny>>,
    n_items: usize,
    prefs: &str,
    relations: Vec<(String, String, String)>,
    algo: &str,
    gamma: Option<f64>,
    inductive: bool,
    ties: &str,
    precision: &str,
    basis: Option<usize>,
    relation_rank: Option<usize>,
    relation_residual: &str,
) -> PyResult<(Bound<'py, PyBytes>, String, Vec<String>)> {
    fenced(|| {
        let algo =
            PrefAlgo::from_name(algo).ok_or_else(|| PyValueError::new_err(format!("unknown learner {algo:?}")))?;
        let ties = match ties {
            "drop" => Ties::Drop,
            "both" => Ties::Both,
            other => return Err(PyValueError::new_err(format!("ties must be 'drop' or 'both', got {other:?}"))),
        };
        let relation_residual = RelationResidual::from_name(relation_residual).ok_or_else(|| {
            PyValueError::new_err(format!("relation_residual must be 'none' or 'constant', got {relation_residual:?}"))
        })?;
        let kernel = match gamma {
            None => PrefKernel::Auto,
            Some(g) if g.is_finite() && g > 0.0 => PrefKernel::Rbf(g),
            Some(g) => return Err(PyValueError::new_err(format!("gamma must be a finite number > 0, got {g}"))),
        };
        let kind = if inductive { PrefModelKind::Inductive } else { PrefModelKind::FixedItems };
        let req = PrefRequest {
            algo,
            kernel,
            kind,
            element: element(precision)?,
            backend: BackendChoice::Faer,
            basis,
            relation_rank,
            relation_residual,
        };
        let items = pref_items(py, x.as_ref(), n_items)?;
        let data = py
            .detach(|| {
                let judgements = parse_prefs_str(prefs, "prefs", &items.ids)?;
                let mut rels = Vec::with_capacity(relations.len());
                for (kind, name, text) in &relations {
                    rels.push(match kind.as_str() {
                        "groups" => parse_groups_str(text, name, &items.ids)?,
                        _ => parse_relation_str(text, name, &items.ids)?,
                    });
                }
                PrefData::new(items, judgements, rels, algo, ties)
            })
            .map_err(py_err)?;
        let notes = tie_notes(data.prefs.source(), &data.obs);
        let fit = detached(py, |on| fit_prefs(&req, &data, on))?;
        Ok((PyBytes::new(py, &fit.bytes), fit.summary, notes))
    })
}

/// The preference model of `model`'s bytes.
fn pref_view(model: &[u8]) -> PyResult<ModelView<'_>> {
    let view = ModelView::new_checked(model).map_err(|e| PyValueError::new_err(format!("not a valid model: {e}")))?;
    if PrefModel::of(&view).is_none() {
        return Err(PyValueError::new_err("not a preference model (pref-gp, xpgp or diff-gp)"));
    }
    Ok(view)
}

/// Posterior means and variances of the items: a kind-8 model's own items
/// (`x` must be `None`), or the rows of `x` for a kind-9 model.
#[pyfunction]
#[pyo3(signature = (model, x=None))]
fn pref_posterior<'py>(py: Python<'py>, model: &[u8], x: Option<Bound<'py, PyAny>>) -> PyResult<TwoArrays<'py>> {
    fenced(|| {
        let view = pref_view(model)?;
        let m = PrefModel::of(&view).expect("checked");
        let items = match (&m, x) {
            (PrefModel::Fixed(_) | PrefModel::LowRank(_), None) => None,
            (PrefModel::Fixed(_) | PrefModel::LowRank(_), Some(_)) => {
                return Err(PyValueError::new_err(
                    "this model is over its fixed training items: fit with inductive=True to predict new items",
                ))
            }
            (PrefModel::Inductive(..), x) => Some(pref_items(py, x.as_ref(), 0)?),
        };
        let (mean, var) = py.detach(|| PrefScorer::new(&m, items.as_ref(), "prefs")?.posterior()).map_err(py_err)?;
        Ok((PyArray1::from_vec(py, mean), PyArray1::from_vec(py, var)))
    })
}

/// `P(w ≻ l)` for each `(w, l)` row of `pairs` (item indices): over a
/// kind-8 model's items, or the rows of `x` for a kind-9 model.
#[pyfunction]
#[pyo3(signature = (model, pairs, x=None))]
fn pref_prob<'py>(
    py: Python<'py>,
    model: &[u8],
    pairs: PyReadonlyArray2<'py, i64>,
    x: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    fenced(|| {
        let view = pref_view(model)?;
        let m = PrefModel::of(&view).expect("checked");
        let items = match &m {
            PrefModel::Fixed(_) | PrefModel::LowRank(_) => None,
            PrefModel::Inductive(..) => Some(pref_items(py, x.as_ref(), 0)?),
        };
        let p = pairs.as_array();
        if p.ncols() != 2 {
            return Err(PyValueError::new_err(format!("pairs must have 2 columns (winner, loser), got {}", p.ncols())));
        }
        let mut idx = Vec::with_capacity(p.nrows());
        for r in p.rows() {
            match (usize::try_from(r[0]), usize::try_from(r[1])) {
                (Ok(w), Ok(l)) => idx.push((w, l)),
                _ => return Err(PyValueError::new_err(format!("pair ({}, {}): a negative item index", r[0], r[1]))),
            }
        }
        let probs = py
            .detach(|| {
                let scorer = PrefScorer::new(&m, items.as_ref(), "prefs")?;
                let (mean, _) = scorer.posterior()?;
                scorer.probs(&mean, &idx).map(|(p, _)| p)
            })
            .map_err(py_err)?;
        Ok(PyArray1::from_vec(py, probs))
    })
}

/// The next `k` pairs to ask of a kind-8 or kind-10 model (`ranklet suggest`):
/// `(i, j, mean_diff, var_diff)` per pair.
#[pyfunction]
fn pref_suggest(py: Python<'_>, model: &[u8], k: usize) -> PyResult<Vec<(usize, usize, f64, f64)>> {
    fenced(|| {
        let view = pref_view(model)?;
        if k == 0 {
            return Err(PyValueError::new_err("k must be ≥ 1"));
        }
        if let Some(lr) = view.pref_lowrank() {
            let picks = py.detach(|| suggest_lowrank(&lr, k)).map_err(py_err)?;
            return Ok(picks.into_iter().map(|s| (s.i, s.j, s.mean_diff, s.var_diff)).collect());
        }
        let Some(gp) = view.pref_gp() else {
            return Err(PyValueError::new_err(
                "suggest needs a preference GP over a fixed item set (fit without inductive=True)",
            ));
        };
        let picks = py.detach(|| suggest(&gp, k)).map_err(py_err)?;
        Ok(picks.into_iter().map(|s| (s.i, s.j, s.mean_diff, s.var_diff)).collect())
    })
}

/// One node set of a Kronecker fit: features (the rows of `x`, the row
/// learners' checks) or, with `precomputed`, a square kernel matrix (read
/// by the CLI's kernel reader from its bare text, so a ragged, non-finite or
/// asymmetric matrix gets the CLI's message, named `name`). Ids `"0"`, `"1"`, ….
fn node_set(py: Python<'_>, x: &Bound<'_, PyAny>, precomputed: bool, name: &str, symmetrize: bool) -> PyResult<Nodes> {
    if !precomputed {
        let features = Features::new(x, None)?;
        let labels = vec![0.0; features.n_rows()];
        let ds = features.dataset(py, &labels, None)?;
        let items = PrefItems::from_rows(&ds, name).map_err(py_err)?;
        return Ok(Nodes { ids: items.ids, repr: NodeRepr::Features { d: items.d, x: items.x } });
    }
    let k: PyReadonlyArray2<'_, f64> = x
        .extract()
        .map_err(|_| PyTypeError::new_err(format!("{name} must be a 2-D float64 array (a precomputed kernel)")))?;
    let v = k.as_array();
    let mut text = String::with_capacity(v.len() * 20);
    for r in v.rows() {
        let fields: Vec<String> = r.iter().map(|x| x.to_string()).collect();
        text.push_str(&fields.join(" "));
        text.push('\n');
    }
    let opts = KernelOptions { symmetrize, layout: MatrixLayout::Bare };
    let kernel = py.detach(|| parse_node_kernel_str(&text, name, &opts)).map_err(|e| py_err(e.into()))?;
    Ok(Nodes::from_kernel(&kernel))
}

/// Trains a Kronecker learner (`ranklet train --edges …`): node sets `u`
/// (and `v`; one node set without), `edges` the text of an edges file
/// `u v y` over the ids `"0"`, `"1"`, …. Returns `(model bytes, λ, cv rows)`.
#[pyfunction]
#[pyo3(signature = (u, v, edges, *, precomputed, symmetrize, algo, kernel, pair_kernel, query_weight, lambdas, folds, metric, seed, max_iter, precision))]
#[allow(clippy::too_many_arguments)]
fn fit_edges_py<'py>(
    py: Python<'py>,
    u: Bound<'py, PyAny>,
    v: Option<Bound<'py, PyAny>>,
    edges: &str,
    precomputed: bool,
    symmetrize: bool,
    algo: &str,
    kernel: &str,
    pair_kernel: &str,
    query_weight: &str,
    lambdas: Vec<f64>,
    folds: Option<usize>,
    metric: Option<&str>,
    seed: u64,
    max_iter: usize,
    precision: &str,
) -> PyResult<EdgesOut<'py>> {
    fenced(|| {
        let algo = match algo {
            "kron-rls" => KronAlgo::Rls,
            "kron-rankrls" => KronAlgo::Rankrls,
            other => return Err(PyValueError::new_err(format!("unknown learner {other:?}"))),
        };
        let pair = PairArg::from_name(pair_kernel).ok_or_else(|| {
            PyValueError::new_err(format!("pair_kernel must be 'kron', 'sym' or 'recip', got {pair_kernel:?}"))
        })?;
        let query_weight = match query_weight {
            "equal" => QueryWeightArg::Equal,
            "pairs" => QueryWeightArg::Pairs,
            other => {
                return Err(PyValueError::new_err(format!("query_weight must be 'equal' or 'pairs', got {other:?}")))
            }
        };
        let kernel = match &parse_kernels(kernel).map_err(py_err)?[..] {
            [k] => *k,
            _ => return Err(PyValueError::new_err("--kernel: edges take one node kernel, not a grid")),
        };
        let metric = metric.map(Metric::parse).transpose().map_err(py_err)?.unwrap_or(Metric::CondRankLoss);
        let req = EdgesRequest {
            algo,
            kernel,
            pair,
            query_weight,
            lambdas,
            folds,
            metric: EdgeMetric::from_metric(metric).map_err(py_err)?,
            seed,
            max_iter,
            element: element(precision)?,
            backend: BackendChoice::Faer,
        };
        req.check().map_err(py_err)?;
        let nodes_u = node_set(py, &u, precomputed, "u", symmetrize)?;
        let nodes = match v {
            None => NodeSets { v: nodes_u.clone(), u: nodes_u, one_domain: true },
            Some(v) => NodeSets { u: nodes_u, v: node_set(py, &v, precomputed, "v", symmetrize)?, one_domain: false },
        };
        req.check_nodes(&nodes).map_err(py_err)?;
        let opts = EdgeOptions { one_domain: nodes.one_domain, ..EdgeOptions::default() };
        let edges = py.detach(|| parse_edges_str(edges, "edges", &opts)).map_err(|e| py_err(e.into()))?;
        let fit = detached(py, |on| fit_edges(&req, &nodes, &edges, "edges", on))?;
        let cv = fit.report.as_ref().map(|r| r.points.iter().map(|p| (p.params, p.mean(), p.std())).collect());
        Ok((PyBytes::new(py, &fit.bytes), fit.lambda, cv))
    })
}

/// Scores of pairs `(a, b)` (rows of `pairs`) of a pair model: `a` a row of
/// `u` (node features, or kernel rows against the training u nodes), `b` a
/// row of `v`.
#[pyfunction]
fn edges_score<'py>(
    py: Python<'py>,
    model: &[u8],
    u: PyReadonlyArray2<'py, f64>,
    v: PyReadonlyArray2<'py, f64>,
    pairs: PyReadonlyArray2<'py, i64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    fenced(|| {
        let view =
            ModelView::new_checked(model).map_err(|e| PyValueError::new_err(format!("not a valid model: {e}")))?;
        let pm = PairModel::from_view(&view).map_err(py_err)?;
        let (u, v, p) = (u.as_array(), v.as_array(), pairs.as_array());
        for (name, a, d) in [("u", &u, pm.d_u), ("v", &v, pm.d_v)] {
            if a.ncols() != d {
                return Err(PyValueError::new_err(format!(
                    "{name}: {} columns, the model's {name} nodes have {d}",
                    a.ncols()
                )));
            }
            if let Some(((i, j), x)) = a.indexed_iter().find(|(_, x)| !x.is_finite()) {
                return Err(PyValueError::new_err(format!("{name}[{i}, {j}]: non-finite value {x}")));
            }
        }
        if p.ncols() != 2 {
            return Err(PyValueError::new_err(format!("pairs must have 2 columns, got {}", p.ncols())));
        }
        let mut out = Vec::with_capacity(p.nrows());
        let mut buf = Vec::new();
        for r in p.rows() {
            let (a, b) = (r[0], r[1]);
            if a < 0 || b < 0 || a as usize >= u.nrows() || b as usize >= v.nrows() {
                return Err(PyValueError::new_err(format!(
                    "pair ({a}, {b}): beyond the {} u and {} v nodes",
                    u.nrows(),
                    v.nrows()
                )));
            }
            let (ra, rb) = (u.row(a as usize).to_vec(), v.row(b as usize).to_vec());
            out.push(pm.score(&view, &ra, &rb, &mut buf).map_err(py_err)?);
        }
        Ok(PyArray1::from_vec(py, out))
    })
}

/// Items and orders from the texts of their files (the CLI's readers and
/// messages; `items`, `orders` name them).
fn loaded(py: Python<'_>, items: &str, orders: &str) -> PyResult<Loaded> {
    py.detach(|| Loaded::parse(items, "items", orders, "orders")).map_err(py_err)
}

/// Trains from sample orders (`ranklet train --items … --orders …`):
/// `items` the text of an items CSV, `orders` of an orders file, `reduce`
/// `(method, K)`. Returns the model bytes.
#[pyfunction]
#[pyo3(signature = (items, orders, *, algo, lambda_, reduce, precision))]
fn fit_orders_py<'py>(
    py: Python<'py>,
    items: &str,
    orders: &str,
    algo: &str,
    lambda_: f64,
    reduce: Option<(String, usize)>,
    precision: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    fenced(|| {
        let algo = match algo {
            "err" => OrderAlgo::Err,
            "rankrls" => OrderAlgo::Rankrls,
            other => return Err(PyValueError::new_err(format!("unknown learner {other:?}"))),
        };
        let reduce = match reduce {
            None => None,
            Some((m, k)) => Some((
                ReduceMethod::from_name(&m).ok_or_else(|| {
                    PyValueError::new_err(format!("reduce: {m:?} is not rcdr-kendall, rcdr-spearman or pca"))
                })?,
                k,
            )),
        };
        let req =
            OrdersRequest { algo, lambda: lambda_, reduce, element: element(precision)?, backend: BackendChoice::Faer };
        let data = loaded(py, items, orders)?;
        let bytes = py.detach(|| train_orders(&req, &data, "items", "orders")).map_err(py_err)?;
        Ok(PyBytes::new(py, &bytes))
    })
}

/// A reduced basis from sample orders (`ranklet reduce`): `(basis (K × d),
/// importance per component)`.
#[pyfunction]
fn reduce_py<'py>(py: Python<'py>, items: &str, orders: &str, method: &str, dims: usize) -> PyResult<TwoArrays<'py>> {
    fenced(|| {
        let method = ReduceMethod::from_name(method).ok_or_else(|| {
            PyValueError::new_err(format!("method {method:?} is not rcdr-kendall, rcdr-spearman or pca"))
        })?;
        let data = loaded(py, items, orders)?;
        let (basis, norms) = py
            .detach(|| {
                let mut backend = ranklet::hostbackend::HostBackend::new(BackendChoice::Faer);
                compute_basis(&mut backend, &data, method, dims)
            })
            .map_err(py_err)?;
        Ok((PyArray1::from_vec(py, basis), PyArray1::from_vec(py, norms)))
    })
}

/// The extension module.
#[pymodule]
fn _ranklet(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_rows_py, m)?)?;
    m.add_function(wrap_pyfunction!(score, m)?)?;
    m.add_function(wrap_pyfunction!(model_info, m)?)?;
    m.add_function(wrap_pyfunction!(add_metadata, m)?)?;
    m.add_function(wrap_pyfunction!(metric, m)?)?;
    m.add_function(wrap_pyfunction!(pair_metric, m)?)?;
    m.add_function(wrap_pyfunction!(fit_prefs_py, m)?)?;
    m.add_function(wrap_pyfunction!(pref_posterior, m)?)?;
    m.add_function(wrap_pyfunction!(pref_prob, m)?)?;
    m.add_function(wrap_pyfunction!(pref_suggest, m)?)?;
    m.add_function(wrap_pyfunction!(fit_edges_py, m)?)?;
    m.add_function(wrap_pyfunction!(edges_score, m)?)?;
    m.add_function(wrap_pyfunction!(fit_orders_py, m)?)?;
    m.add_function(wrap_pyfunction!(reduce_py, m)?)?;
    stats::register(m)?;
    m.add("INTERRUPTED", ranklet::progress::INTERRUPTED)?;
    Ok(())
}
