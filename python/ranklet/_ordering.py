"""Supervised ordering from sample orders (paper 003) as estimators: ``ERR``
(Expected Rank Regression, ``ranklet train --algo err --items … --orders
…``) and the transformers ``RCDR`` and ``PCA`` (``ranklet reduce``).

Items are the rows of ``X`` (attributes), named by their 0-based positions;
``orders`` is a list of orders, each a sequence of item positions, most
preferred first. Both are written as the CLI's files (an items CSV, an
orders file) and read by its readers, so bad input raises ``ValueError``
with the CLI's message (``orders:LINE`` for the ``LINE``-th order)."""

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from . import _ranklet
from ._estimators import _store
from ._model import Model, ModelBytes


def _items_csv(X):
    X = np.asarray(X)
    if X.dtype.kind not in "fiu":
        raise TypeError(f"X must hold numbers, got dtype {X.dtype}")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (items × attributes), got {X.ndim} dimensions")
    X = X.astype(np.float64)
    lines = ["id," + ",".join(f"x{j}" for j in range(X.shape[1]))]
    lines += [f"{i}," + ",".join(repr(float(v)) for v in row) for i, row in enumerate(X)]
    return X, "\n".join(lines) + "\n"


def _orders_text(orders):
    lines = []
    for k, o in enumerate(orders):
        o = np.asarray(o)
        if o.ndim != 1 or o.dtype.kind not in "iu":
            raise TypeError(f"orders[{k}] must be a sequence of integer item positions")
        lines.append(" ".join(str(int(i)) for i in o))
    return "\n".join(lines) + "\n"


class ERR(ModelBytes, BaseEstimator):
    """Expected Rank Regression (003 eq. 5): a linear scorer of the items'
    attributes from sample orders, ``ranklet train --algo err``.

    Parameters
    ----------
    alpha : float
        λ.
    reduce : tuple or None
        ``("rcdr-kendall" | "rcdr-spearman" | "pca", K)``: learn in that
        K-dimensional basis first (``--reduce METHOD:K``).
    precision : {"f32", "f64"}

    >>> import numpy as np, ranklet
    >>> X = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 0.2], [3.0, 0.9], [4.0, 0.1]])
    >>> orders = [[4, 2, 0], [3, 1, 0], [4, 3, 2, 1]]  # larger first attribute first
    >>> err = ranklet.ERR(alpha=0.1, precision="f64").fit(X, orders)
    >>> np.argsort(-err.predict(X)).tolist()
    [4, 3, 2, 1, 0]
    """

    def __init__(self, alpha=1.0, *, reduce=None, precision="f32"):
        _store(self, locals())

    def fit(self, X, orders):
        """Fits to items ``X`` and ``orders``. Returns ``self``."""
        X, items = _items_csv(X)
        reduce = None if self.reduce is None else (str(self.reduce[0]), int(self.reduce[1]))
        data = _ranklet.fit_orders_py(
            items, _orders_text(orders), algo="err", lambda_=float(self.alpha), reduce=reduce, precision=self.precision
        )
        self.model_ = Model(data)
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        """Scores of the rows of ``X`` (higher: earlier in an order)."""
        check_is_fitted(self, "model_")
        return self.model_.predict(np.asarray(X, dtype=np.float64))



class _Reducer(TransformerMixin, BaseEstimator):
    _method = None

    def fit(self, X, orders):
        """Finds the basis from items ``X`` and ``orders``. Returns
        ``self``."""
        X, items = _items_csv(X)
        basis, norms = _ranklet.reduce_py(items, _orders_text(orders), self._method_name(), int(self.n_components))
        self.components_ = basis.reshape(int(self.n_components), X.shape[1])
        self.importance_ = norms
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X):
        """The coordinates of the rows of ``X`` in the basis."""
        check_is_fitted(self, "components_")
        return np.asarray(X, dtype=np.float64) @ self.components_.T


class RCDR(_Reducer):
    """Rank-correlation dimension reduction (003 §3, Fig. 3), ``ranklet
    reduce --method rcdr-kendall|rcdr-spearman``: the directions along
    which the attributes correlate with the orders. ``importance_`` is
    ``‖R‖/N`` per component.

    >>> import numpy as np, ranklet
    >>> X = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 0.2], [3.0, 0.9], [4.0, 0.1]])
    >>> r = ranklet.RCDR(n_components=1).fit(X, [[4, 2, 0], [3, 1, 0]])
    >>> r.transform(X).shape
    (5, 1)
    """

    def __init__(self, n_components=2, *, correlation="kendall"):
        _store(self, locals())

    def _method_name(self):
        if self.correlation not in ("kendall", "spearman"):
            raise ValueError(f"correlation must be 'kendall' or 'spearman', got {self.correlation!r}")
        return f"rcdr-{self.correlation}"


class PCA(_Reducer):
    """PCA of the attributes of the items in the orders (003 §3), ``ranklet
    reduce --method pca``; ``importance_`` is the contribution ratio.

    >>> import numpy as np, ranklet
    >>> X = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 0.2], [3.0, 0.9], [4.0, 0.1]])
    >>> ranklet.PCA(n_components=1).fit(X, [[4, 2, 0], [3, 1, 0]]).components_.shape
    (1, 2)
    """

    def __init__(self, n_components=2):
        _store(self, locals())

    def _method_name(self):
        return "pca"
