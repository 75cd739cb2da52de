"""Types of the extension module (``python/src/lib.rs``, and
``python/src/stats.rs`` for the statistics of ``ranklet.dask``); the public
API is the Python package around it."""

from typing import Any, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

INTERRUPTED: str

_Csr = Tuple[int, npt.NDArray[np.int64], npt.NDArray[np.int64]]

def fit_rows_py(
    x: npt.NDArray[Any],
    y: npt.NDArray[np.float64],
    qid: Optional[npt.NDArray[np.int64]],
    pairs: Optional[npt.NDArray[np.float64]],
    csr: Optional[_Csr],
    *,
    algo: str,
    kernel: str,
    lambdas: Sequence[float],
    components: Optional[Sequence[int]],
    basis: Optional[int],
    query_weight: str,
    standardize: bool,
    cv: Optional[str],
    metric: Optional[str],
    seed: int,
    precision: str,
    metadata: Sequence[Tuple[str, str]],
) -> Tuple[bytes, Optional[dict[str, Any]], dict[str, str]]: ...
def score(
    model: bytes,
    x: npt.NDArray[Any],
    csr: Optional[_Csr] = None,
    precision: Optional[str] = None,
) -> npt.NDArray[np.float64]: ...
def model_info(model: bytes) -> dict[str, Any]: ...
def add_metadata(model: bytes, metadata: Sequence[Tuple[str, str]]) -> bytes: ...
def metric(
    name: str,
    labels: npt.NDArray[np.float64],
    scores: npt.NDArray[np.float64],
    qid: Optional[npt.NDArray[np.int64]] = None,
) -> float: ...
def pair_metric(scores: npt.NDArray[np.float64], pairs: npt.NDArray[np.float64]) -> float: ...
def fit_prefs_py(
    x: Optional[npt.NDArray[Any]],
    n_items: int,
    prefs: str,
    relations: Sequence[Tuple[str, str, str]],
    *,
    algo: str,
    gamma: Optional[float],
    inductive: bool,
    ties: str,
    precision: str,
    basis: Optional[int] = ...,
    relation_rank: Optional[int] = ...,
    relation_residual: str = ...,
) -> Tuple[bytes, str, list[str]]: ...
def pref_posterior(
    model: bytes, x: Optional[npt.NDArray[Any]] = None
) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def pref_prob(
    model: bytes, pairs: npt.NDArray[np.int64], x: Optional[npt.NDArray[Any]] = None
) -> npt.NDArray[np.float64]: ...
def pref_suggest(model: bytes, k: int) -> list[Tuple[int, int, float, float]]: ...
def fit_edges_py(
    u: npt.NDArray[Any],
    v: Optional[npt.NDArray[Any]],
    edges: str,
    *,
    precomputed: bool,
    symmetrize: bool,
    algo: str,
    kernel: str,
    pair_kernel: str,
    query_weight: str,
    lambdas: Sequence[float],
    folds: Optional[int],
    metric: Optional[str],
    seed: int,
    max_iter: int,
    precision: str,
) -> Tuple[bytes, float, Optional[list[Tuple[float, float, float]]]]: ...
def edges_score(
    model: bytes, u: npt.NDArray[np.float64], v: npt.NDArray[np.float64], pairs: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]: ...
def fit_orders_py(
    items: str,
    orders: str,
    *,
    algo: str,
    lambda_: float,
    reduce: Optional[Tuple[str, int]],
    precision: str,
) -> bytes: ...
def reduce_py(
    items: str, orders: str, method: str, dims: int
) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def stats_rows(
    x: npt.NDArray[Any],
    y: npt.NDArray[np.float64],
    qid: Optional[npt.NDArray[np.int64]],
    *,
    query_weight: str,
    cv: Optional[int],
    seed: int,
    keep_queries: bool,
    source: str,
) -> bytes: ...
def merge_stats_py(parts: Sequence[Tuple[bytes, str]]) -> bytes: ...
def fit_stats_py(
    stats: bytes,
    *,
    source: str,
    algo: str,
    query_weight: str,
    lambdas: Sequence[float],
    cv: Optional[int],
    precision: str,
    metadata: Sequence[Tuple[str, str]],
) -> Tuple[bytes, Optional[dict[str, Any]], dict[str, Any]]: ...
