"""The row learners as scikit-learn estimators. Each ``fit`` is one call of
the library's training driver (the one ``ranklet train --data`` calls), with
the GIL released; the fitted state is the model's bytes, so an estimator
pickles, saves and scores through them."""

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, column_or_1d

from . import _arrays
from . import _names
from . import _ranklet
from ._model import Model, ModelBytes

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data

    _FINITE = "ensure_all_finite"
except ImportError:  # older: the method of BaseEstimator
    _validate_data = None
    _FINITE = "force_all_finite"


def _validate(est, X, reset, sparse=True, dtype=(np.float64, np.float32)):
    """scikit-learn's checks of X's shape, dtype and feature names (a CSR
    matrix accepted with ``sparse``); the values' finiteness is the
    library's, with the CLI's messages."""
    kw = dict(accept_sparse="csr" if sparse else False, dtype=list(dtype), reset=reset, **{_FINITE: False})
    if _validate_data is not None:
        return _validate_data(est, X, **kw)
    return est._validate_data(X, **kw)


def _labels(y):
    """The labels as a 1-D float64 array (a column vector warns, as
    scikit-learn warns); their values are checked by the library."""
    if y is None:
        raise ValueError("this estimator requires y to be passed, but the target y is None")
    y = column_or_1d(np.asarray(y), warn=True)
    try:
        return np.ascontiguousarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"Unknown label type: y must hold numbers, got dtype {y.dtype}") from None


def _kernel_spec(kernel, gamma, degree, coef0, n_features):
    """The library's kernel spelling (``linear``, ``rbf:G``, ``poly:D:G:C``)
    of scikit-learn's parameters (``gamma=None`` is ``1 / n_features``, as
    in ``KernelRidge``)."""
    g = 1.0 / max(n_features, 1) if gamma is None else float(gamma)
    if kernel == "linear":
        return "linear"
    if kernel == "rbf":
        return f"rbf:{g!r}"
    if kernel in ("poly", "polynomial"):
        return f"poly:{int(degree)}:{g!r}:{float(coef0)!r}"
    raise ValueError(f"kernel must be 'linear', 'rbf' or 'poly', got {kernel!r}")


def _store(est, params):
    """Keeps every ``__init__`` argument as the attribute of its name, as
    scikit-learn expects (no checks or conversions there)."""
    for name, value in params.items():
        if name != "self":
            setattr(est, name, value)


def _grid(values, name):
    v = np.atleast_1d(np.asarray(values))
    if v.ndim != 1 or len(v) == 0:
        raise ValueError(f"{name} must be a number or a non-empty list of numbers")
    return v


class _RowLearner(ModelBytes, BaseEstimator):
    """What every row learner shares: input handling, the call of the
    driver, prediction and the model's bytes."""

    _algo = None

    # The driver's request from the estimator's parameters; overridden by
    # the CV estimators.
    def _request(self):
        return dict(lambdas=[float(self.alpha)], components=None, cv=None, metric=None, seed=1)

    def fit(self, X, y, qid=None, pairs=None):
        """Fits the learner to the rows of ``X`` with labels ``y``; a ranker
        compares the labels within each query of ``qid`` (all rows one query
        without it), or learns from explicit ``pairs`` of row indices
        ``(winner, loser[, magnitude])``. Returns ``self``."""
        y = _labels(y)
        X = _validate(self, X, reset=True)
        x, csr = _arrays.features(X)
        codes = _arrays.qid_codes(qid, x.shape[0] if csr is None else len(csr[1]) - 1)
        req = self._request()
        meta = _names.metadata(self)
        data, cv, chosen = _ranklet.fit_rows_py(
            x,
            y,
            codes,
            _arrays.pairs_array(pairs),
            csr,
            algo=self._algo,
            kernel=_kernel_spec(self.kernel, self.gamma, self.degree, self.coef0, self.n_features_in_),
            lambdas=req["lambdas"],
            components=req["components"],
            basis=None if self.basis is None else int(self.basis),
            query_weight=getattr(self, "query_weight", "equal"),
            standardize=bool(self.standardize),
            cv=req["cv"],
            metric=req["metric"],
            seed=int(req["seed"]),
            precision=self.precision,
            metadata=meta,
        )
        self.model_ = Model(data)
        self.chosen_params_ = chosen
        if cv is not None:
            self._set_cv(cv)
        return self

    def predict(self, X):
        """Scores of the rows of ``X`` by the fitted model (the device
        scorer, in the model's element type)."""
        check_is_fitted(self, "model_")
        X = _validate(self, X, reset=False)
        x, csr = _arrays.features(X)
        return _ranklet.score(self.model_.to_bytes(), x, csr, None)


    def _more_tags(self):
        return {"requires_y": True}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.sparse = True
        return tags


class _Ranker(_RowLearner):
    def score(self, X, y, qid=None):
        """``1 − disagreement``: the fraction of pairs of rows with different
        labels, within a query of ``qid``, that the scores order correctly
        (ties count ½), averaged over queries; higher is better."""
        from .metrics import disagreement

        return 1.0 - disagreement(y, self.predict(X), qid=qid)


_KERNEL_DOC = """
    kernel : {'linear', 'rbf', 'poly'}, default='linear'
    gamma : float or None, default=None
        RBF width / polynomial scale; ``None`` is ``1 / n_features``.
    degree : int, default=3
    coef0 : float, default=1.0
    basis : int or None, default=None
        Reduced basis: at most this many landmark rows (pivoted Cholesky);
        the model stores only them.
    standardize : bool, default=False
        Standardise every feature over the training rows (dense data only);
        the model applies the transform when scoring.
    precision : {'f32', 'f64'}, default='f32'
        Element type of the model (f32 for devices, as ``ranklet train``).
"""


class RLS(RegressorMixin, _RowLearner):
    __doc__ = (
        """Regularised least squares (ridge regression, kernel ridge) on the
    labels: ``ranklet train --algo rls``.

    Parameters
    ----------
    alpha : float, default=1.0
        The ridge λ (> 0 unless the kernel is linear)."""
        + _KERNEL_DOC
        + """
    Examples
    --------
    >>> import numpy as np, ranklet
    >>> X = np.arange(8.0).reshape(4, 2); y = X @ [1.0, 2.0]
    >>> ranklet.RLS(alpha=1e-9, precision="f64").fit(X, y).predict(X[:1]).round(6)
    array([2.])
    """
    )

    _algo = "rls"

    def __init__(
        self, alpha=1.0, *, kernel="linear", gamma=None, degree=3, coef0=1.0, basis=None, standardize=False, precision="f32"
    ):
        _store(self, locals())


class RankRLS(_Ranker):
    __doc__ = (
        """RankRLS: least squares on the differences of scores within each
    query (000 eq. 5), ``ranklet train --algo rankrls``.

    Parameters
    ----------
    alpha : float, default=1.0
        The ridge λ (> 0 unless the kernel is linear)."""
        + _KERNEL_DOC
        + """    query_weight : {'equal', 'pairs'}, default='equal'
        Each query counts equally, or each pair.

    Examples
    --------
    >>> import numpy as np, ranklet
    >>> X = np.arange(12.0).reshape(6, 2); y = X[:, 0]; qid = [0, 0, 0, 1, 1, 1]
    >>> s = ranklet.RankRLS().fit(X, y, qid=qid).predict(X)
    >>> bool(np.all(np.diff(s) > 0))
    True
    """
    )

    _algo = "rankrls"

    def __init__(
        self,
        alpha=1.0,
        *,
        kernel="linear",
        gamma=None,
        degree=3,
        coef0=1.0,
        basis=None,
        standardize=False,
        query_weight="equal",
        precision="f32",
    ):
        _store(self, locals())


class _Kpc:
    def _request(self):
        return dict(lambdas=[float(self.alpha)], components=[int(self.n_components)], cv=None, metric=None, seed=1)


class KPCR(RegressorMixin, _Kpc, _RowLearner):
    __doc__ = (
        """Regression on the top ``n_components`` kernel principal components:
    ``ranklet train --algo kpcr``.

    Parameters
    ----------
    n_components : int, default=2
        Number of principal components p ≥ 1.
    alpha : float, default=0.0
        Ridge λ ≥ 0 on the components' weights."""
        + _KERNEL_DOC
        + """
    Examples
    --------
    >>> import numpy as np, ranklet
    >>> X = np.arange(8.0).reshape(4, 2); y = X[:, 0]
    >>> ranklet.KPCR(n_components=1, precision="f64").fit(X, y).predict(X).round(6) + 0.0
    array([0., 2., 4., 6.])
    """
    )

    _algo = "kpcr"

    # A few components fit only the leading directions of the kernel
    # matrix: scikit-learn's "reasonable score" check does not apply.
    def _more_tags(self):
        return {"requires_y": True, "poor_score": True}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags

    def __init__(
        self,
        n_components=2,
        *,
        alpha=0.0,
        kernel="linear",
        gamma=None,
        degree=3,
        coef0=1.0,
        basis=None,
        standardize=False,
        precision="f32",
    ):
        _store(self, locals())


class KPCRank(_Kpc, _Ranker):
    __doc__ = (
        """KPCRank: RankRLS on the top ``n_components`` kernel principal
    components (000 §3–4), ``ranklet train --algo kpcrank``.

    Parameters
    ----------
    n_components : int, default=2
        Number of principal components p ≥ 1.
    alpha : float, default=0.0
        Ridge λ ≥ 0 on the components' weights."""
        + _KERNEL_DOC
        + """    query_weight : {'equal', 'pairs'}, default='equal'

    Examples
    --------
    >>> import numpy as np, ranklet
    >>> X = np.arange(12.0).reshape(6, 2); y = X[:, 0]
    >>> s = ranklet.KPCRank(n_components=1).fit(X, y, qid=[0, 0, 0, 1, 1, 1]).predict(X)
    >>> bool(np.all(np.diff(s) > 0))
    True
    """
    )

    _algo = "kpcrank"

    def __init__(
        self,
        n_components=2,
        *,
        alpha=0.0,
        kernel="linear",
        gamma=None,
        degree=3,
        coef0=1.0,
        basis=None,
        standardize=False,
        query_weight="equal",
        precision="f32",
    ):
        _store(self, locals())


class _CV:
    """Model selection by the library's cross-validation: k folds over whole
    queries (``cv=K``), or the closed-form leave-query-out (``cv='loo'``,
    RankRLS). The CV table is ``cv_results_``; the chosen point's values end
    in ``_``."""

    def _cv_request(self, components):
        cv = self.cv
        if cv is not None:
            cv = str(cv)
        return dict(
            lambdas=[float(a) for a in _grid(self.alphas, "alphas")],
            components=components,
            cv=cv,
            metric=self.metric,
            seed=int(self.random_state),
        )

    def _set_cv(self, cv):
        rows = cv["rows"]
        k = max((len(r["folds"]) for r in rows), default=0)
        res = {"params": [r["params"] for r in rows]}
        for name in rows[0]["params"] if rows else []:
            res[f"param_{name}"] = np.asarray([r["params"][name] for r in rows], dtype=object)
        res["mean_test_score"] = np.asarray([r["mean"] for r in rows])
        res["std_test_score"] = np.asarray([r["std"] for r in rows])
        for f in range(k):
            res[f"split{f}_test_score"] = np.asarray([r["folds"][f] for r in rows])
        res["failure"] = [r["failure"] for r in rows]
        self.cv_results_ = res
        self.best_index_ = cv["best"]
        self.cv_scheme_ = cv["scheme"]
        self.metric_ = cv["metric"]
        self.alpha_ = float(self.chosen_params_["lambda"])


class RankRLSCV(_CV, _Ranker):
    """RankRLS with λ chosen by cross-validation over ``alphas``:
    ``ranklet train --algo rankrls --lambda A,B,… --cv K``.

    ``cv_results_['mean_test_score']`` holds the metric (``metric``, default
    disagreement, where lower is better), one row per λ; ``alpha_`` is the
    chosen λ and ``best_index_`` its row.

    Examples
    --------
    >>> import numpy as np, ranklet
    >>> rng = np.random.default_rng(1)
    >>> X = rng.normal(size=(60, 3)); y = X[:, 0]; qid = np.repeat(np.arange(6), 10)
    >>> est = ranklet.RankRLSCV(alphas=[0.01, 1.0, 100.0], cv=3).fit(X, y, qid=qid)
    >>> len(est.cv_results_["mean_test_score"])
    3
    """

    _algo = "rankrls"

    def __init__(
        self,
        alphas=(0.1, 1.0, 10.0),
        *,
        cv=5,
        metric=None,
        random_state=1,
        kernel="linear",
        gamma=None,
        degree=3,
        coef0=1.0,
        basis=None,
        standardize=False,
        query_weight="equal",
        precision="f32",
    ):
        _store(self, locals())

    def _request(self):
        return self._cv_request(None)


class KPCRankCV(_CV, _Ranker):
    """KPCRank with (λ, p) chosen by cross-validation over ``alphas`` ×
    ``n_components``, every point of a fold from one eigendecomposition
    (000 §4.2): ``ranklet train --algo kpcrank --lambda … --components …
    --cv K``. Chosen values: ``alpha_``, ``n_components_``.

    Examples
    --------
    >>> import numpy as np, ranklet
    >>> rng = np.random.default_rng(2)
    >>> X = rng.normal(size=(60, 3)); y = X[:, 0]; qid = np.repeat(np.arange(6), 10)
    >>> est = ranklet.KPCRankCV(n_components=[1, 2, 3], cv=3, kernel="rbf").fit(X, y, qid=qid)
    >>> est.n_components_ in (1, 2, 3)
    True
    """

    _algo = "kpcrank"

    def __init__(
        self,
        n_components=(2, 5, 10),
        *,
        alphas=(0.0,),
        cv=5,
        metric=None,
        random_state=1,
        kernel="linear",
        gamma=None,
        degree=3,
        coef0=1.0,
        basis=None,
        standardize=False,
        query_weight="equal",
        precision="f32",
    ):
        _store(self, locals())

    def _request(self):
        return self._cv_request([int(p) for p in _grid(self.n_components, "n_components")])

    def _set_cv(self, cv):
        super()._set_cv(cv)
        self.n_components_ = int(self.chosen_params_["components"])
