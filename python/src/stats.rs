//! Statistics bindings for the Dask layer (`ranklet.dask`): one
//! partition's rows → `.rks` bytes, a merge of several → bytes, and the
//! fit from merged statistics → model bytes and the CV table. Each is one
//! call of `ranklet::stats_rows` with the GIL released; errors are the
//! library's (`ValueError` for bad input, with the CLI's messages).

use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use ranklet::args::QueryWeightArg;
use ranklet::stats_rows::{fit_stats, merge_stats, stats_of_rows, StatsRequest};

use super::{element, fenced, py_err, Features};

fn query_weight(w: &str) -> PyResult<QueryWeightArg> {
    match w {
        "equal" => Ok(QueryWeightArg::Equal),
        "pairs" => Ok(QueryWeightArg::Pairs),
        other => Err(PyValueError::new_err(format!("query_weight must be 'equal' or 'pairs', got {other:?}"))),
    }
}

/// The statistics (`.rks` bytes) of the rows of `x` (2-D float32 or
/// float64, any layout), labels `y`, integer query ids `qid` (or none: one
/// query); `source` names the rows in errors.
#[pyfunction]
#[pyo3(signature = (x, y, qid, *, query_weight, cv, seed, keep_queries, source))]
#[allow(clippy::too_many_arguments)]
fn stats_rows<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, f64>,
    qid: Option<PyReadonlyArray1<'py, i64>>,
    query_weight: &str,
    cv: Option<usize>,
    seed: u64,
    keep_queries: bool,
    source: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    fenced(|| {
        let req = StatsRequest { weight: self::query_weight(query_weight)?, cv, seed, keep_queries };
        let (y, qids) = (y.as_slice()?, qid.as_ref().map(|q| q.as_slice()).transpose()?);
        let bytes = match Features::new(x, None)? {
            Features::F64(a) => {
                let v = a.as_array();
                let (n, d) = v.dim();
                match v.as_slice() {
                    Some(s) => py.detach(|| stats_of_rows(&req, n, d, |i, j| s[i * d + j], y, qids, source)),
                    None => py.detach(|| stats_of_rows(&req, n, d, |i, j| v[[i, j]], y, qids, source)),
                }
            }
            Features::F32(a) => {
                let v = a.as_array();
                let (n, d) = v.dim();
                match v.as_slice() {
                    Some(s) => py.detach(|| stats_of_rows(&req, n, d, |i, j| f64::from(s[i * d + j]), y, qids, source)),
                    None => py.detach(|| stats_of_rows(&req, n, d, |i, j| f64::from(v[[i, j]]), y, qids, source)),
                }
            }
            Features::Csr { .. } => unreachable!("no CSR arrays were given"),
        }
        .map_err(py_err)?;
        Ok(PyBytes::new(py, &bytes))
    })
}

/// Several statistics merged into one (`parts`: a list of `(bytes, name)`);
/// shards that differ in dimension, weighting, folds or seed are refused
/// naming both.
#[pyfunction]
fn merge_stats_py<'py>(py: Python<'py>, parts: Vec<(Vec<u8>, String)>) -> PyResult<Bound<'py, PyBytes>> {
    fenced(|| {
        let refs: Vec<(&[u8], &str)> = parts.iter().map(|(b, n)| (b.as_slice(), n.as_str())).collect();
        let bytes = py.detach(|| merge_stats(&refs)).map_err(py_err)?;
        Ok(PyBytes::new(py, &bytes))
    })
}

/// RLS or RankRLS from merged statistics: `(model bytes, cv, info)`; `cv`
/// is `None` without folds, else a dict (`rows`: per λ `params`, `folds`;
/// `best`; `scheme`; `metric`), `info` the chosen λ, its weights (`coef`), rows, queries and features.
#[pyfunction]
#[pyo3(signature = (stats, *, source, algo, query_weight, lambdas, cv, precision, metadata))]
#[allow(clippy::too_many_arguments)]
fn fit_stats_py<'py>(
    py: Python<'py>,
    stats: &[u8],
    source: &str,
    algo: &str,
    query_weight: &str,
    lambdas: Vec<f64>,
    cv: Option<usize>,
    precision: &str,
    metadata: Vec<(String, String)>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyAny>, Bound<'py, PyDict>)> {
    fenced(|| {
        let ranker = match algo {
            "rls" => false,
            "rankrls" => true,
            other => return Err(PyValueError::new_err(format!("statistics train 'rls' or 'rankrls', not {other:?}"))),
        };
        let (weight, element) = (self::query_weight(query_weight)?, element(precision)?);
        let out =
            py.detach(|| fit_stats(stats, source, ranker, weight, &lambdas, cv, element, &metadata)).map_err(py_err)?;
        let info = PyDict::new(py);
        info.set_item("lambda", out.fit.lambda)?;
        info.set_item("coef", out.fit.w.clone())?;
        info.set_item("rows", out.fit.rows)?;
        info.set_item("queries", out.fit.queries)?;
        info.set_item("n_features", out.fit.d)?;
        let table: Bound<'py, PyAny> = match &out.fit.cv {
            None => py.None().into_bound(py),
            Some((k, rows)) => {
                let list = PyList::empty(py);
                for (l, folds) in rows {
                    let r = PyDict::new(py);
                    let params = PyDict::new(py);
                    params.set_item("lambda", l)?;
                    r.set_item("params", params)?;
                    r.set_item("folds", folds.clone())?;
                    list.append(r)?;
                }
                let d = PyDict::new(py);
                d.set_item("rows", list)?;
                d.set_item("best", out.best)?;
                d.set_item("scheme", format!("{k}-fold by query hash (statistics)"))?;
                d.set_item("metric", "objective")?;
                d.into_any()
            }
        };
        Ok((PyBytes::new(py, &out.model), table, info))
    })
}

/// Adds the statistics functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(stats_rows, m)?)?;
    m.add_function(wrap_pyfunction!(merge_stats_py, m)?)?;
    m.add_function(wrap_pyfunction!(fit_stats_py, m)?)?;
    Ok(())
}
