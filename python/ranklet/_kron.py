"""Conditional ranking on labelled edges as estimators: ``KronRLS`` and
``KronRankRLS`` (paper 004). Each ``fit`` is one call of the library's edge
driver (the one ``ranklet train --edges`` calls) with the GIL released; the
fitted state is the model's bytes.

Nodes are the rows of ``X_u`` (and ``X_v`` for two node sets; one node set
without), named by their 0-based positions, or with
``kernel="precomputed"`` square kernel matrices. Labels are a complete
``(n_u, n_v)`` matrix ``Y`` (every entry an edge) or an edge list
``edges`` (``(m, 2)`` positions ``u, v``) with labels ``y``; they are
written as the lines of an edges file and read by the CLI's reader, so a bad
edge raises ``ValueError`` with the CLI's message (``edges:LINE``).

DataFrames' column names are kept as the row learners keep them: those of
``X_u`` in ``feature_names_in_`` (model metadata ``feature_names``), those
of a second node set ``X_v`` in ``feature_names_v_in_``
(``feature_names_v``); ``predict`` checks them (a one-node-set model checks
both its inputs against ``feature_names_in_``)."""

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from . import _arrays
from . import _names
from . import _ranklet
from ._estimators import _kernel_spec, _store
from ._model import Model, ModelBytes


def _edges_text(Y, edges, y):
    if (Y is None) == (edges is None):
        raise ValueError("give the labels as a complete matrix Y or as edges with their labels y")
    if Y is not None:
        Y = np.asarray(Y, dtype=np.float64)
        if Y.ndim != 2:
            raise ValueError(f"Y must be an (n_u, n_v) matrix, got {Y.ndim} dimensions")
        return "".join(f"{i} {j} {float(Y[i, j])!r}\n" for i in range(Y.shape[0]) for j in range(Y.shape[1]))
    e = np.asarray(edges)
    if e.dtype.kind not in "iu":
        raise TypeError(f"edges must be an (m, 2) array of integer node indices, got dtype {e.dtype}")
    if e.ndim != 2 or e.shape[1] != 2:
        raise ValueError(f"edges must be an (m, 2) array of integer node indices, got shape {e.shape}")
    if y is None:
        raise ValueError("edges need their labels y")
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (len(e),):
        raise ValueError(f"y must have one label per edge ({len(e)}), got shape {y.shape}")
    return "".join(f"{int(u)} {int(v)} {float(t)!r}\n" for (u, v), t in zip(e, y))


def _nodes(X, name):
    return _arrays.matrix(X, name, "nodes × features")


class _KronLearner(ModelBytes, BaseEstimator):
    """What both Kronecker learners share."""

    _algo = None

    def fit(self, X_u, X_v=None, *, Y=None, edges=None, y=None):
        """Fits to the nodes ``X_u`` (and ``X_v``) and the labelled edges
        (``Y``, or ``edges`` and ``y``). Returns ``self``."""
        precomputed = self.kernel == "precomputed"
        _names.check(self, X_u, reset=True)
        if X_v is None:
            _names.forget(self, "feature_names_v_in_")
        else:
            _names.check(self, X_v, reset=True, attr="feature_names_v_in_", arg="X_v")
        X_u = _nodes(X_u, "X_u")
        X_v = None if X_v is None else _nodes(X_v, "X_v")
        if precomputed:
            X_u = np.ascontiguousarray(X_u, dtype=np.float64)
            X_v = None if X_v is None else np.ascontiguousarray(X_v, dtype=np.float64)
            kernel = "linear"
        else:
            kernel = _kernel_spec(self.kernel, self.gamma, self.degree, self.coef0, X_u.shape[1])
        alphas = [float(a) for a in np.atleast_1d(self.alpha)]
        data, lam, cv = _ranklet.fit_edges_py(
            X_u,
            X_v,
            _edges_text(Y, edges, y),
            precomputed=precomputed,
            symmetrize=bool(self.symmetrize),
            algo=self._algo,
            kernel=kernel,
            pair_kernel=self.pair_kernel,
            query_weight=getattr(self, "query_weight", "equal"),
            lambdas=alphas,
            folds=None if self.cv is None else int(self.cv),
            metric=self.metric,
            seed=int(self.random_state),
            max_iter=int(self.max_iter),
            precision=self.precision,
        )
        self.model_ = Model(_names.in_model(data, self, ("feature_names_in_", "feature_names_v_in_")))
        self.alpha_ = lam
        self.n_u_ = X_u.shape[0]
        self.n_v_ = (X_u if X_v is None else X_v).shape[0]
        self.one_domain_ = X_v is None
        if cv is not None:
            self.cv_results_ = {
                "param_alpha": np.array([c[0] for c in cv]),
                "mean_test_score": np.array([c[1] for c in cv]),
                "std_test_score": np.array([c[2] for c in cv]),
            }
        return self

    def predict(self, X_u, X_v=None, pairs=None):
        """Scores ``f(u, v)`` of new (or training) nodes: rows of ``X_u``
        and ``X_v`` (``X_u`` again for one node set), features or, for
        ``kernel="precomputed"``, kernel rows against the training nodes.
        An ``(m_u, m_v)`` matrix, or with ``pairs`` (``(k, 2)`` row indices)
        the ``k`` scores."""
        check_is_fitted(self, "model_")
        _names.check(self, X_u, reset=False)
        if X_v is not None:
            v_names = "feature_names_in_" if self.one_domain_ else "feature_names_v_in_"
            _names.check(self, X_v, reset=False, attr=v_names, arg="X_v")
        U = np.ascontiguousarray(_nodes(X_u, "X_u"), dtype=np.float64)
        V = U if X_v is None else np.ascontiguousarray(_nodes(X_v, "X_v"), dtype=np.float64)
        if pairs is None:
            grid = np.stack(np.meshgrid(np.arange(len(U)), np.arange(len(V)), indexing="ij"), axis=-1).reshape(-1, 2)
            return _ranklet.edges_score(self.model_.to_bytes(), U, V, grid.astype(np.int64)).reshape(len(U), len(V))
        p = np.asarray(pairs)
        if p.dtype.kind not in "iu":
            raise TypeError(f"pairs must be an (k, 2) array of integer row indices, got dtype {p.dtype}")
        if p.ndim != 2:
            raise ValueError(f"pairs must be an (k, 2) array of integer row indices, got shape {p.shape}")
        return _ranklet.edges_score(self.model_.to_bytes(), U, V, np.ascontiguousarray(p, dtype=np.int64))

    def rank(self, u, candidates, k=None):
        """The candidates (rows of ``candidates``) ranked for the
        conditioning node ``u`` (one row: features, or its kernel row), best
        first, as ``ranklet rank``: ``(indices, scores)``, the top ``k``. A
        pandas row (Series) or one-row DataFrame keeps its names."""
        if hasattr(u, "to_frame") and not hasattr(u, "columns"):
            u = u.to_frame().T  # a Series: one row, its index the columns
        if not hasattr(u, "columns"):
            u = np.atleast_2d(np.asarray(u, dtype=np.float64))
        if np.shape(u)[0] != 1:
            raise ValueError(f"u must be one node (a row), got {np.shape(u)[0]} rows")
        s = self.predict(u, candidates)[0]
        order = np.argsort(-s, kind="stable")[: (len(s) if k is None else int(k))]
        return order, s[order]



class KronRLS(_KronLearner):
    """Kronecker RLS: regression over labelled edges (004 eq. 5),
    ``ranklet train --algo kron-rls``; closed form on a complete graph,
    conjugate gradient otherwise.

    Parameters
    ----------
    alpha : float or list of float
        λ; a list is a grid chosen by ``cv`` folds over conditioning nodes.
    kernel : {"linear", "rbf", "poly", "precomputed"}
        The node kernel (``gamma``, ``degree``, ``coef0`` as in
        :class:`RLS`); ``"precomputed"`` takes kernel matrices.
    pair_kernel : {"kron", "sym", "recip"}
        Kronecker, symmetric or reciprocal pair kernel (the last two for one
        node set).
    cv, metric, random_state
        Folds over conditioning nodes, ``"condrankloss"`` or ``"auc"``, the
        fold seed.
    max_iter : int
        CG iterations at most (incomplete graphs).
    symmetrize : bool
        Use ``(K + Kᵀ)/2`` of an asymmetric precomputed kernel.
    precision : {"f32", "f64"}

    >>> import numpy as np, ranklet
    >>> rng = np.random.default_rng(0)
    >>> drugs, targets = rng.normal(size=(8, 3)), rng.normal(size=(5, 2))
    >>> Y = drugs[:, :2] @ targets.T
    >>> est = ranklet.KronRLS(alpha=1e-3, precision="f64").fit(drugs, targets, Y=Y)
    >>> bool(np.abs(est.predict(drugs, targets) - Y).max() < 0.05)
    True
    >>> est.rank(drugs[0], targets, k=2)[0].tolist() == np.argsort(-Y[0])[:2].tolist()
    True
    """

    _algo = "kron-rls"

    def __init__(
        self,
        alpha=1.0,
        *,
        kernel="linear",
        gamma=None,
        degree=3,
        coef0=1.0,
        pair_kernel="kron",
        cv=None,
        metric=None,
        random_state=1,
        max_iter=200,
        symmetrize=False,
        precision="f32",
    ):
        _store(self, locals())


class KronRankRLS(_KronLearner):
    """Kronecker RankRLS: conditional ranking over labelled edges,
    conditioned on the first node (004 eq. 6), ``ranklet train --algo
    kron-rankrls``. Parameters as :class:`KronRLS`, and ``query_weight``
    (``"equal"`` or ``"pairs"``).

    >>> import numpy as np, ranklet
    >>> rng = np.random.default_rng(1)
    >>> users, items = rng.normal(size=(6, 2)), rng.normal(size=(9, 2))
    >>> Y = users @ items.T  # each user ranks the items by its own taste
    >>> est = ranklet.KronRankRLS(alpha=0.01, precision="f64").fit(users, items, Y=Y)
    >>> order, _ = est.rank(users[2], items)
    >>> order.tolist() == np.argsort(-Y[2]).tolist()
    True
    """

    _algo = "kron-rankrls"

    def __init__(
        self,
        alpha=1.0,
        *,
        kernel="linear",
        gamma=None,
        degree=3,
        coef0=1.0,
        pair_kernel="kron",
        query_weight="equal",
        cv=None,
        metric=None,
        random_state=1,
        max_iter=200,
        symmetrize=False,
        precision="f32",
    ):
        _store(self, locals())
