"""Ranking metrics — core's code, the same numbers as ``ranklet eval`` —
over labelled rows grouped by query: each metric is computed within every
query of ``qid`` and averaged over queries (all rows one query without
``qid``), except ``auc`` (over all rows) and ``pair_error`` (over explicit
pairs).

>>> from ranklet import metrics
>>> metrics.ndcg([3, 2, 0, 1], [0.9, 0.8, 0.1, 0.2], k=2)
1.0
>>> metrics.disagreement([1, 2, 3, 1, 2], [3, 2, 1, 1, 2], qid=[0, 0, 0, 1, 1])
0.5
"""

import numpy as np

from . import _arrays
from . import _ranklet


def _eval(name, y_true, y_score, qid):
    y = np.ascontiguousarray(y_true, dtype=np.float64).reshape(-1)
    s = np.ascontiguousarray(y_score, dtype=np.float64).reshape(-1)
    return _ranklet.metric(name, y, s, _arrays.qid_codes(qid, len(y)))


def ndcg(y_true, y_score, qid=None, k=None):
    """NDCG@k per query (LETOR conventions, gain 2^label − 1), averaged;
    ``k=None`` is the whole query."""
    return _eval("ndcg" if k is None else f"ndcg@{int(k)}", y_true, y_score, qid)


def mean_average_precision(y_true, y_score, qid=None):
    """Mean average precision (relevant: label > 0) per query, averaged."""
    return _eval("map", y_true, y_score, qid)


def disagreement(y_true, y_score, qid=None):
    """Normalised pairwise disagreement per query (000 eq. 4): the fraction
    of pairs with different labels ordered wrongly (ties ½), averaged."""
    return _eval("disagreement", y_true, y_score, qid)


def cindex(y_true, y_score, qid=None):
    """Concordance index per query, averaged."""
    return _eval("cindex", y_true, y_score, qid)


def kendall_tau(y_true, y_score, qid=None):
    """Kendall τ-b per query, averaged."""
    return _eval("kendall", y_true, y_score, qid)


def spearman(y_true, y_score, qid=None):
    """Spearman ρ per query, averaged."""
    return _eval("spearman", y_true, y_score, qid)


def auc(y_true, y_score, threshold=0.0):
    """AUC of ``y_true > threshold`` over all rows."""
    return _eval(f"auc:{float(threshold)!r}", y_true, y_score, None)


def pair_error(y_score, pairs):
    """The fraction of explicit pairs ``(winner, loser[, magnitude])`` of row
    indices that the scores order wrongly (ties ½)."""
    s = np.ascontiguousarray(y_score, dtype=np.float64).reshape(-1)
    return _ranklet.pair_metric(s, _arrays.pairs_array(pairs))


__all__ = [
    "ndcg",
    "mean_average_precision",
    "disagreement",
    "cindex",
    "kendall_tau",
    "spearman",
    "auc",
    "pair_error",
]
