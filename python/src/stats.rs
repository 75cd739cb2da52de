//! Statistics bindings for the Dask layer (`ranklet.dask`): one
//! partition's rows → `.rks` bytes, a merge of several → bytes, and the
//! fit from merged statistics → model bytes and the CV table. Each is one
//! call of `ranklet::stats_rows` with the GIL released; errors are the
//! library's (`ValueError` for bad input, with the CLI's messages).

use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use ranklet::args::{parse_kernels, QueryWeightArg};
use ranklet::family::nystrom_stats::{map_from_bytes, NystromAlgo};
use ranklet::stats_rows::{fit_nystrom_stats, fit_stats, landmarks_of_rows, merge_stats, stats_of_rows, StatsRequest};
use ranklet_core::learn::ls_stats::Target;

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
/// query); `source` names the rows in errors. With `landmarks` (the bytes
/// of a Nyström `.rks`, as `nystrom_landmarks` returns) the rows are mapped
/// through its feature map first.
#[pyfunction]
#[pyo3(signature = (x, y, qid, *, query_weight, cv, seed, keep_queries, source, landmarks=None))]
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
    landmarks: Option<Vec<u8>>,
) -> PyResult<Bound<'py, PyBytes>> {
    fenced(|| {
        let req = StatsRequest { weight: self::query_weight(query_weight)?, cv, seed, keep_queries };
        let map = landmarks.map(|b| map_from_bytes(&b, "landmarks")).transpose().map_err(py_err)?;
        let map = map.as_ref();
        let (y, qids) = (y.as_slice()?, qid.as_ref().map(|q| q.as_slice()).transpose()?);
        let bytes = match Features::new(x, None)? {
            Features::F64(a) => {
                let v = a.as_array();
                let (n, d) = v.dim();
                match v.as_slice() {
                    Some(s) => py.detach(|| stats_of_rows(&req, map, n, d, |i, j| s[i * d + j], y, qids, source)),
                    None => py.detach(|| stats_of_rows(&req, map, n, d, |i, j| v[[i, j]], y, qids, source)),
                }
            }
            Features::F32(a) => {
                let v = a.as_array();
                let (n, d) = v.dim();
                match v.as_slice() {
                    Some(s) => {
                        py.detach(|| stats_of_rows(&req, map, n, d, |i, j| f64::from(s[i * d + j]), y, qids, source))
                    }
                    None => py.detach(|| stats_of_rows(&req, map, n, d, |i, j| f64::from(v[[i, j]]), y, qids, source)),
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
        let table = match &out.fit.cv {
            None => py.None().into_bound(py),
            Some((k, rows)) => {
                let mut points = Vec::with_capacity(rows.len());
                for (l, folds) in rows {
                    let params = PyDict::new(py);
                    params.set_item("lambda", l)?;
                    points.push((params, folds.as_slice()));
                }
                cv_table(py, *k, points, out.best)?
            }
        };
        Ok((PyBytes::new(py, &out.model), table, info))
    })
}

/// Landmarks chosen from the sample rows `x` (2-D float64, C order) for
/// the kernel `kernel` (`rbf:G`, `poly:D:G:C`, `linear`), at most `m`, by
/// the pivoted Cholesky of `ranklet stats --basis`: the bytes of a `.rks`
/// without rows (what `ranklet stats --landmarks` reads) and the number of
/// landmarks.
#[pyfunction]
#[pyo3(signature = (x, *, kernel, m))]
fn nystrom_landmarks<'py>(
    py: Python<'py>,
    x: numpy::PyReadonlyArray2<'py, f64>,
    kernel: &str,
    m: usize,
) -> PyResult<(Bound<'py, PyBytes>, usize)> {
    fenced(|| {
        let kernel = match &parse_kernels(kernel).map_err(py_err)?[..] {
            [k] => *k,
            _ => return Err(PyValueError::new_err("kernel: the landmarks take one kernel, not a grid")),
        };
        let v = x.as_array();
        let (_, p) = v.dim();
        let sample: Vec<f64> = v.iter().copied().collect();
        let bytes = py.detach(|| landmarks_of_rows(kernel, &sample, p, m)).map_err(py_err)?;
        let map = map_from_bytes(&bytes, "landmarks").map_err(py_err)?;
        Ok((PyBytes::new(py, &bytes), map.m()))
    })
}

/// A Nyström learner (`algo`: rls, rankrls, kpcr, kpcrank) from merged
/// Nyström statistics: `(model bytes, cv, info)` as `fit_stats_py`, the
/// CV rows' `params` holding `lambda` and (KPC) `components`.
#[pyfunction]
#[pyo3(signature = (stats, *, source, algo, query_weight, lambdas, components, cv, precision, metadata))]
#[allow(clippy::too_many_arguments)]
fn fit_nystrom_stats_py<'py>(
    py: Python<'py>,
    stats: &[u8],
    source: &str,
    algo: &str,
    query_weight: &str,
    lambdas: Vec<f64>,
    components: Vec<usize>,
    cv: Option<usize>,
    precision: &str,
    metadata: Vec<(String, String)>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyAny>, Bound<'py, PyDict>)> {
    fenced(|| {
        let algo = match algo {
            "rls" => NystromAlgo::Ls(Target::Rls),
            "rankrls" => NystromAlgo::Ls(Target::RankRls),
            "kpcr" => NystromAlgo::Kpc(Target::Rls),
            "kpcrank" => NystromAlgo::Kpc(Target::RankRls),
            other => {
                return Err(PyValueError::new_err(format!(
                    "Nyström statistics train 'rls', 'rankrls', 'kpcr' or 'kpcrank', not {other:?}"
                )))
            }
        };
        let (weight, element) = (self::query_weight(query_weight)?, element(precision)?);
        let (model, fit, chosen) = py
            .detach(|| fit_nystrom_stats(stats, source, algo, weight, &lambdas, &components, cv, element, &metadata))
            .map_err(py_err)?;
        let info = PyDict::new(py);
        info.set_item("lambda", fit.lambda)?;
        info.set_item("components", fit.components)?;
        info.set_item("rows", fit.rows)?;
        info.set_item("queries", fit.queries)?;
        info.set_item("map", fit.map.clone())?;
        info.set_item("chosen", chosen)?;
        let table = match &fit.cv {
            None => py.None().into_bound(py),
            Some((k, rows)) => {
                let np = components.len().max(1);
                let mut points = Vec::with_capacity(rows.len());
                let mut best = 0;
                for (i, (_, folds)) in rows.iter().enumerate() {
                    let params = PyDict::new(py);
                    let l = lambdas[i / np];
                    params.set_item("lambda", l)?;
                    let c = components.get(i % np).copied();
                    if let Some(c) = c {
                        params.set_item("components", c)?;
                    }
                    if l == fit.lambda && c == fit.components {
                        best = i;
                    }
                    points.push((params, folds.as_slice()));
                }
                cv_table(py, *k, points, best)?
            }
        };
        Ok((PyBytes::new(py, &model), table, info))
    })
}

/// The CV table of a fit from statistics (`k` folds by query hash): a dict
/// of `rows` (each grid point's `params` and per-fold objective), `best`
/// (the chosen row), `scheme` and `metric`.
fn cv_table<'py>(
    py: Python<'py>,
    k: usize,
    points: Vec<(Bound<'py, PyDict>, &[f64])>,
    best: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let list = PyList::empty(py);
    for (params, folds) in points {
        let r = PyDict::new(py);
        r.set_item("params", params)?;
        r.set_item("folds", folds.to_vec())?;
        list.append(r)?;
    }
    let d = PyDict::new(py);
    d.set_item("rows", list)?;
    d.set_item("best", best)?;
    d.set_item("scheme", format!("{k}-fold by query hash (statistics)"))?;
    d.set_item("metric", "objective")?;
    Ok(d.into_any())
}

/// Adds the statistics functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(stats_rows, m)?)?;
    m.add_function(wrap_pyfunction!(merge_stats_py, m)?)?;
    m.add_function(wrap_pyfunction!(fit_stats_py, m)?)?;
    m.add_function(wrap_pyfunction!(nystrom_landmarks, m)?)?;
    m.add_function(wrap_pyfunction!(fit_nystrom_stats_py, m)?)?;
    Ok(())
}
