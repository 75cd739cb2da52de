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
use ranklet::data::Dataset;
use ranklet::error::CliError;
use ranklet::family::Algo;
use ranklet::hostbackend::BackendChoice;
use ranklet::metric::Metric;
use ranklet::train_rows::{fit_rows, RowsRequest};
use ranklet_core::format::{ElementType, ModelView};
use ranklet_core::graph::Pair;

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
        let ds = features.dataset(py, y.as_slice()?, qids)?;
        let pairs = match &pairs {
            None => None,
            Some(p) => Some(pairs_of(p, ds.n_rows())?),
        };
        let mut stop: Option<PyErr> = None;
        let fit = py.detach(|| {
            let mut on = |_| match Python::attach(|py| py.check_signals()) {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    stop = Some(e);
                    ControlFlow::Break(())
                }
            };
            fit_rows(&plan, ds, pairs.as_deref(), "<arrays>", &mut on)
        });
        if let Some(e) = stop {
            return Err(e);
        }
        let fit = fit.map_err(py_err)?;
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

/// The extension module.
#[pymodule]
fn _ranklet(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_rows_py, m)?)?;
    m.add_function(wrap_pyfunction!(score, m)?)?;
    m.add_function(wrap_pyfunction!(model_info, m)?)?;
    m.add_function(wrap_pyfunction!(metric, m)?)?;
    m.add_function(wrap_pyfunction!(pair_metric, m)?)?;
    stats::register(m)?;
    m.add("INTERRUPTED", ranklet::progress::INTERRUPTED)?;
    Ok(())
}
