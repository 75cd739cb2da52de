"""ranklet for Python: rankers with scikit-learn's conventions, trained by the
same host library as the ``ranklet`` command line, so a model trained here is
the same ``.rkl`` bytes ``ranklet train`` writes and scores the same with
``ranklet score``, through the C ABI and on a device.

>>> import numpy as np, ranklet
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(40, 3)); qid = np.repeat(np.arange(4), 10)
>>> y = X @ [1.0, -2.0, 0.5] + rng.normal(scale=0.1, size=40)
>>> est = ranklet.RankRLS(alpha=0.1).fit(X, y, qid=qid)
>>> ranklet.metrics.disagreement(y, est.predict(X), qid=qid) < 0.1
True
>>> ranklet.load(est.to_bytes()).predict(X[:2]).shape
(2,)

Row learners: :class:`RLS`, :class:`RankRLS`, :class:`KPCR`, :class:`KPCRank`,
with cross-validated grids :class:`RankRLSCV`, :class:`KPCRankCV`.
Preference GPs: :class:`PrefGP`, :class:`XPGP`, :class:`DiffGP`. Conditional
ranking on labelled edges: :class:`KronRLS`, :class:`KronRankRLS`.
Supervised ordering: :class:`ERR`, and the transformers :class:`RCDR`,
:class:`PCA`. Models:
:func:`load` and :class:`Model`. Metrics: :mod:`ranklet.metrics`. Linear
RLS / RankRLS on Dask collections, from statistics merged on the cluster:
:mod:`ranklet.dask` (imported on its own; needs ``dask`` and
``distributed``).
"""

from . import metrics
from ._estimators import KPCR, RLS, KPCRank, KPCRankCV, RankRLS, RankRLSCV
from ._model import Model, load
from ._ordering import ERR, PCA, RCDR
from ._kron import KronRankRLS, KronRLS
from ._prefs import XPGP, DiffGP, PrefGP

__all__ = [
    "RLS",
    "RankRLS",
    "KPCR",
    "KPCRank",
    "RankRLSCV",
    "KPCRankCV",
    "PrefGP",
    "XPGP",
    "DiffGP",
    "KronRLS",
    "KronRankRLS",
    "ERR",
    "RCDR",
    "PCA",
    "Model",
    "load",
    "metrics",
]
