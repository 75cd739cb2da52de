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
def metric(
    name: str,
    labels: npt.NDArray[np.float64],
    scores: npt.NDArray[np.float64],
    qid: Optional[npt.NDArray[np.int64]] = None,
) -> float: ...
def pair_metric(scores: npt.NDArray[np.float64], pairs: npt.NDArray[np.float64]) -> float: ...
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
