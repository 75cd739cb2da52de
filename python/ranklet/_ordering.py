"""Supervised ordering from sample orders (paper 003) as estimators: ``ERR``
(Expected Rank Regression, ``ranklet train --algo err --items … --orders
…``) and the transformers ``RCDR`` and ``PCA`` (``ranklet reduce``).

Items are the rows of ``X`` (attributes), named by their 0-based positions;
``orders`` is a list of orders, each a sequence of item positions, most
preferred first, or (as scikit-learn's ``y``, so that the estimators fit in
a ``Pipeline``) a 1-D array or list of one score per item: the one order
of all the items by decreasing score, equal scores in row order (a list
that could be either, the positions ``0 … n−1`` in some order, is
refused). Both are written as the CLI's files (an items
CSV, an orders file) and read by its readers, so bad input raises
``ValueError`` with the CLI's message (``orders:LINE`` for the ``LINE``-th
order).

``X`` is checked as the row learners check theirs (scikit-learn's checks
of shape, dtype and the number of features), and a DataFrame's column names
are kept as they keep them (``feature_names_in_``; in ``ERR``'s model the
metadata line ``feature_names``) and checked at ``predict``/``transform``."""

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from . import _names
from . import _ranklet
from ._estimators import _labels, _store, _validate
from ._model import Model, ModelBytes


def _items(est, X, reset):
    """``X`` checked (scikit-learn's checks, feature names; every value
    finite, with the row learners' message) as a dense float64 array."""
    X = _validate(est, X, reset, sparse=False, dtype=(np.float64,))
    bad = np.argwhere(~np.isfinite(X))
    if len(bad):
        i, j = bad[0]
        v = X[i, j]
        raise ValueError(f"X[{i}, {j}]: non-finite feature value {'NaN' if np.isnan(v) else '-inf' if v < 0 else 'inf'}")
    return X


def _items_csv(est, X):
    """``X`` checked at ``fit`` and the text of its items CSV."""
    X = _items(est, X, reset=True)
    lines = ["id," + ",".join(f"x{j}" for j in range(X.shape[1]))]
    lines += [f"{i}," + ",".join(repr(float(v)) for v in row) for i, row in enumerate(X)]
    return X, "\n".join(lines) + "\n"


def _is_scores(orders):
    """Whether ``orders`` is scikit-learn's ``y``: one number per item (a
    1-D array, or a list of numbers)."""
    if isinstance(orders, (list, tuple)):
        return len(orders) > 0 and all(np.ndim(o) == 0 for o in orders)
    a = np.asarray(orders)
    return a.ndim == 1 and (a.dtype.kind in "fiub" or all(np.ndim(o) == 0 for o in a))


def _orders_text(orders, n_items):
    """The lines of an orders file: of the orders, or of the one order of
    the items by decreasing score."""
    if orders is None:
        raise ValueError(
            "this estimator requires y to be passed, but the target y is None "
            "(orders: a list of sequences of item positions, or one score per item)"
        )
    if _is_scores(orders):
        if isinstance(orders, (list, tuple)) and sorted(orders) == list(range(n_items)):
            raise ValueError(
                "a list of the item positions 0 … n−1 is either one order (give it as [[…]]) "
                "or one score per item (give them as a numpy array)"
            )
        y = _labels(orders)
        if len(y) != n_items:
            raise ValueError(
                f"y has {len(y)} scores but X has {n_items} items (give one score per item, "
                "or orders as a list of sequences of item positions)"
            )
        bad = np.flatnonzero(~np.isfinite(y))
        if len(bad):
            raise ValueError(f"y[{bad[0]}]: non-finite score {y[bad[0]]}")
        orders = [np.argsort(-y, kind="stable")]
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
        X, items = _items_csv(self, X)
        reduce = None if self.reduce is None else (str(self.reduce[0]), int(self.reduce[1]))
        data = _ranklet.fit_orders_py(
            items,
            _orders_text(orders, X.shape[0]),
            algo="err",
            lambda_=float(self.alpha),
            reduce=reduce,
            precision=self.precision,
        )
        self.model_ = Model(_names.in_model(data, self))
        return self

    def predict(self, X):
        """Scores of the rows of ``X`` (higher: earlier in an order)."""
        check_is_fitted(self, "model_")
        return self.model_.predict(_items(self, X, reset=False))



class _Reducer(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """What RCDR and PCA share; the output columns are named ``rcdr0``,
    ``rcdr1``, … (``pca0``, …) by ``get_feature_names_out``."""

    def fit(self, X, orders):
        """Finds the basis from items ``X`` and ``orders``. Returns
        ``self``."""
        X, items = _items_csv(self, X)
        method = self._method_name()
        basis, norms = _ranklet.reduce_py(items, _orders_text(orders, X.shape[0]), method, int(self.n_components))
        self.components_ = basis.reshape(int(self.n_components), X.shape[1])
        self.importance_ = norms
        return self

    def transform(self, X):
        """The coordinates of the rows of ``X`` in the basis."""
        check_is_fitted(self, "components_")
        return _items(self, X, reset=False) @ self.components_.T

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def _more_tags(self):
        return {"requires_y": True}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags


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
