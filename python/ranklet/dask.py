"""RLS and RankRLS on Dask: each partition of the data is summarised by the
additive statistics ``ranklet stats`` computes (``Σxxᵀ``, ``Σx``, ``Σxy``,
… per fold, and per query the partial sums its Laplacian needs), the
statistics are merged by a tree reduction on the cluster, and the model is
solved on the client from the merged ``d × d`` sums. Rows never leave their
workers; a query split across partitions is merged exactly by its qid, so
the model is the one ``ranklet train --data`` (or the in-memory
:class:`ranklet.RankRLS`) fits on all the rows, whatever the partitioning.

>>> import numpy as np, dask.array as da, ranklet.dask
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(60, 3)); qid = np.repeat(np.arange(6), 10)
>>> y = X @ [1.0, -2.0, 0.5]
>>> est = ranklet.dask.RankRLS(alpha=0.1).fit(  # doctest: +SKIP
...     da.from_array(X, chunks=25), da.from_array(y, chunks=25), da.from_array(qid, chunks=25))
>>> est.predict(da.from_array(X, chunks=25)).compute().shape  # doctest: +SKIP
(60,)

The statistics are pure functions of their partition: a worker lost during
a fit is replaced and its tasks recomputed by Dask, and the model does not
change. :class:`KPCRank`, and :class:`RLS` / :class:`RankRLS` given a
kernel (``kernel="rbf"``, …) or ``landmarks``, map every partition's rows
through one Nyström feature map (landmarks chosen on the client from the
first rows) before their statistics: the reduced-basis model of ``ranklet
stats --landmarks`` + ``ranklet train --from-stats --algo kpcrank`` (or
``rls``, ``rankrls``).
"""

import json

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from . import _ranklet
from ._estimators import _kernel_spec, _store
from ._model import Model, ModelBytes

__all__ = ["KPCRank", "RLS", "RankRLS"]


def _dask():
    try:
        import dask
        import dask.array
        import distributed
    except ImportError as e:  # pragma: no cover - the test environment has them
        raise ImportError("ranklet.dask needs the dask and distributed packages") from e
    return dask, distributed


def _client(client):
    """``(client, owned)``: the given client, else the current one, else a
    new ``LocalCluster`` of worker processes (``owned``: to be closed)."""
    _, distributed = _dask()
    if client is not None:
        return client, None
    try:
        return distributed.get_client(), None
    except ValueError:
        pass
    cluster = distributed.LocalCluster(processes=True, threads_per_worker=1, dashboard_address=None)
    return distributed.Client(cluster), cluster


def _is_frame(X):
    return hasattr(X, "columns") and hasattr(X, "to_delayed")


def _is_dask_array(X):
    return hasattr(X, "chunks") and hasattr(X, "to_delayed") and not _is_frame(X)


def _partition_arrays(x, y, q, columns):
    """The arrays of one partition as the extension takes them: features
    float32 (when every column is) or float64, labels float64, qids int64."""
    if columns is not None:  # a pandas DataFrame partition; y, q column names
        y = x[y].to_numpy()
        q = None if q is None else x[q].to_numpy()
        cols = x[columns]
        f32 = all(np.dtype(t) == np.float32 for t in cols.dtypes)
        x = cols.to_numpy(dtype=np.float32 if f32 else np.float64)
    else:
        x = np.asarray(x)
        if x.dtype not in (np.float32, np.float64):
            x = x.astype(np.float64)
    # Aligned copies where needed: arrays unpickled from another process
    # may sit at any byte offset.
    x = np.require(x, requirements="A")
    y = np.require(np.asarray(y, dtype=np.float64).reshape(-1), requirements=["C", "A"])
    if q is not None:
        q = np.asarray(q)
        if q.dtype.kind not in "iu":
            raise ValueError(f"qid must hold integers (the fold of a query is a hash of its id), got dtype {q.dtype}")
        q = np.require(q.reshape(-1), dtype=np.int64, requirements=["C", "A"])
    return x, y, q


def _sample_rows(x, y, q, index, columns):
    """The features of partition ``index`` as float64 (for the landmark
    sample); runs on a worker."""
    try:
        x, _, _ = _partition_arrays(x, y, q, columns)
    except ValueError as e:
        raise ValueError(f"partition {index}: {e}") from None
    if x.ndim != 2:
        raise ValueError(f"partition {index}: X must be 2-D (rows × features), got {x.ndim} dimensions")
    return np.ascontiguousarray(x, dtype=np.float64)


def _stats(x, y, q, index, columns, opts):
    """The statistics (``.rks`` bytes) of partition ``index``; runs on a
    worker."""
    source = f"partition {index}"
    try:
        x, y, q = _partition_arrays(x, y, q, columns)
    except ValueError as e:
        raise ValueError(f"{source}: {e}") from None
    if x.ndim != 2:
        raise ValueError(f"{source}: X must be 2-D (rows × features), got {x.ndim} dimensions")
    return _ranklet.stats_rows(x, y, q, source=source, **opts)


def _merge(parts, names):
    """One node of the reduction tree; runs on a worker."""
    return _ranklet.merge_stats_py(list(zip(parts, names)))


def _span(a, b):
    return f"partition {a}" if a == b else f"partitions {a}–{b}"


def _reduce(dask, leaves, split_every):
    """A tree of merges over the partitions' statistics (delayed), each
    node merging up to ``split_every`` children; returns the root and its
    name."""
    level = [(leaf, i, i) for i, leaf in enumerate(leaves)]
    merge = dask.delayed(_merge, pure=True)
    while len(level) > 1:
        nxt = []
        for g in range(0, len(level), split_every):
            group = level[g : g + split_every]
            names = [_span(a, b) for _, a, b in group]
            nxt.append((merge([p for p, _, _ in group], names), group[0][1], group[-1][2]))
        level = nxt
    root, a, b = level[0]
    return root, _span(a, b)


def _score(block, model):
    """Scores of the rows of one block; runs on a worker."""
    return _ranklet.score(model, np.require(block, requirements="A"), None, None)


# The fitted attributes set from a solver's info: ``(attribute, key,
# conversion)``; those of the other kind are removed by a refit.
_LINEAR_INFO = (("coef_", "coef", np.asarray), ("alpha_", "lambda", None))
_NYSTROM_INFO = (("alpha_", "lambda", None), ("nystrom_map_", "map", None))
_NYSTROM_ATTRS = ("landmarks_", "n_basis_", "nystrom_map_")


class _StatsLearner(ModelBytes, BaseEstimator):
    """What the learners on Dask share: the partitions' statistics, the
    reduction, the solve, prediction and the model's bytes, and the Nyström
    feature map (:meth:`_map_opts`) when the learner has one
    (:meth:`_nystrom`). A learner differs in ``_algo``, the extension's
    solver of the merged statistics (linear, or Nyström), its further
    arguments (:meth:`_solver_options`) and the fitted attributes it sets
    from the solver's info (:meth:`_info`)."""

    _algo = None

    def _nystrom(self):
        """Whether the rows go through a Nyström feature map: a kernel other
        than ``linear``, or ``landmarks`` given."""
        return getattr(self, "landmarks", None) is not None or getattr(self, "kernel", "linear") != "linear"

    def _info(self):
        return _NYSTROM_INFO if self._nystrom() else _LINEAR_INFO

    def _inputs(self, X, y, qid):
        """The per-partition delayed ``(x, y, qid)`` and the feature columns
        (``None`` for arrays)."""
        dask, _ = _dask()
        if _is_frame(X):
            if y is None:
                raise ValueError("y is required: a column name of X or a dask Series")
            # The label and qid are read from each partition of X itself
            # (separate collections may be partitioned otherwise once
            # optimised): a Series is made a column of X first.
            cols = {}
            for what, v, tmp in (("y", y, "__ranklet_y"), ("qid", qid, "__ranklet_qid")):
                if v is None or isinstance(v, str):
                    if v is not None and v not in X.columns:
                        raise ValueError(f"{what}: no column {v!r} in X")
                    cols[what] = v
                elif hasattr(v, "to_delayed"):
                    X = X.assign(**{tmp: v})
                    cols[what] = tmp
                else:
                    raise TypeError(f"{what} must be a column name of X or a dask Series, got {type(v).__name__}")
            columns = [c for c in X.columns if c not in (cols["y"], cols["qid"])]
            if not columns:
                raise ValueError("X has no feature columns besides the label and qid columns")
            parts = X.to_delayed()
            return [(p, cols["y"], cols["qid"]) for p in parts], len(columns), columns
        if _is_dask_array(X):
            if X.ndim != 2:
                raise ValueError(f"X must be 2-D (rows × features), got {X.ndim} dimensions")
            if y is None:
                raise ValueError("y is required")
            X = X.rechunk({1: -1})
            rows = X.chunks[0]

            def along(v, what):
                if v is None:
                    return [None] * len(rows)
                v = v if hasattr(v, "rechunk") else dask.array.from_array(np.asarray(v))
                if v.ndim != 1 or v.shape[0] != X.shape[0]:
                    raise ValueError(f"X has {X.shape[0]} rows, {what} has shape {v.shape}")
                return list(v.rechunk((rows,)).to_delayed().ravel())

            parts = list(X.to_delayed().ravel())
            return list(zip(parts, along(y, "y"), along(qid, "qid"))), X.shape[1], None
        raise TypeError(f"X must be a dask DataFrame or a dask array, got {type(X).__name__}")

    def _grid(self):
        a = np.atleast_1d(np.asarray(self.alpha, dtype=np.float64))
        if a.ndim != 1 or len(a) == 0:
            raise ValueError("alpha must be a number or a non-empty list of numbers")
        return [float(v) for v in a]

    def fit(self, X, y=None, qid=None, *, client=None):
        """Fits the learner to the rows of ``X``: a dask DataFrame whose
        columns are the features, the label and the query id (``y``,
        ``qid`` name those columns, or are dask Series partitioned as ``X``),
        or a dask array with dask arrays ``y`` and ``qid`` (integer ids) of
        as many rows. ``client``: a ``distributed.Client``; by default the
        current one, else a ``LocalCluster`` of worker processes started and
        closed for this fit. Returns ``self``."""
        dask, _ = _dask()
        lambdas = self._grid()
        cv = None if self.cv is None else int(self.cv)
        self._check_grid(lambdas, cv)
        if self.split_every < 2:
            raise ValueError(f"split_every must be at least 2, got {self.split_every}")
        weight = getattr(self, "query_weight", "equal")
        opts = dict(query_weight=weight, cv=cv, seed=int(self.random_state), keep_queries=bool(self.keep_queries))
        parts, d, columns = self._inputs(X, y, qid)
        client, cluster = _client(client)
        try:
            opts.update(self._map_opts(dask, client, parts, d, columns))
            stats = dask.delayed(_stats, pure=True)
            leaves = [stats(x, yy, q, i, columns, opts) for i, (x, yy, q) in enumerate(parts)]
            root, name = _reduce(dask, leaves, int(self.split_every))
            merged = client.compute(root).result()
        finally:
            if cluster is not None:
                client.close()
                cluster.close()
        names = None if columns is None else [str(c) for c in columns]
        meta = [] if names is None else [("feature_names", json.dumps(names))]
        model, table, info = self._solve(merged, f"dask: {name}", weight, lambdas, cv, meta)
        # The fitted state, set only once everything succeeded (and none
        # left of a fit of the other kind).
        stale = ("coef_",) if self._nystrom() else _NYSTROM_ATTRS
        for attr in ("feature_names_in_", "cv_results_", "best_index_", "cv_scheme_", "metric_", *stale):
            self.__dict__.pop(attr, None)
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        self.stats_ = merged
        self.model_ = Model(model)
        self._set_info(info)
        self.n_features_in_ = d
        self.n_rows_ = info["rows"]
        self.n_queries_ = info["queries"]
        self.n_partitions_ = len(parts)
        if table is not None:
            self._set_cv(table)
        return self

    def _check_grid(self, lambdas, cv):
        if len(lambdas) > 1 and cv is None:
            raise ValueError("a grid of alpha values needs cv=K to choose among them")

    def _map_opts(self, dask, client, parts, d, columns):
        """Further options of the partitions' statistics: none for the raw
        features; with a Nyström map, its ``.rks`` bytes (``landmarks``:
        the given file, else landmarks chosen here, on the client, by the
        pivoted Cholesky ``ranklet stats --basis`` runs, from the first
        ``sample`` rows of the collection, read partition by partition from
        the first). Sets ``landmarks_`` and ``n_basis_``."""
        if not self._nystrom():
            return {}
        if self.landmarks is not None:
            lm = _read_landmarks(self.landmarks)
            m = None
        else:
            if int(self.n_basis) < 1 or int(self.sample) < 1:
                raise ValueError(f"n_basis and sample must be at least 1, got {self.n_basis} and {self.sample}")
            spec = _kernel_spec(self.kernel, self.gamma, self.degree, self.coef0, d)
            take = dask.delayed(_sample_rows, pure=True)
            rows, have = [], 0
            for i, (x, yy, q) in enumerate(parts):
                if have >= int(self.sample):
                    break
                block = client.compute(take(x, yy, q, i, columns)).result()
                rows.append(block[: int(self.sample) - have])
                have += len(rows[-1])
            lm, m = _ranklet.nystrom_landmarks(
                np.ascontiguousarray(np.concatenate(rows)), kernel=spec, m=int(self.n_basis)
            )
        self.landmarks_ = lm
        self.n_basis_ = m
        # One key of the graph holds the map; every partition's task reads it.
        return {"landmarks": dask.delayed(lm, name="ranklet-landmarks-" + dask.base.tokenize(lm))}

    def _solver_options(self):
        """Further arguments of the solver: none for linear RLS and
        RankRLS, no components for them on Nyström features."""
        return {"components": []} if self._nystrom() else {}

    def _solve(self, merged, source, weight, lambdas, cv, meta):
        solver = _ranklet.fit_nystrom_stats_py if self._nystrom() else _ranklet.fit_stats_py
        return solver(
            merged,
            source=source,
            algo=self._algo,
            query_weight=weight,
            lambdas=lambdas,
            cv=cv,
            precision=self.precision,
            metadata=meta,
            **self._solver_options(),
        )

    def _set_info(self, info):
        for attr, key, conv in self._info():
            setattr(self, attr, info[key] if conv is None else conv(info[key]))

    def _set_cv(self, table):
        rows = table["rows"]
        folds = np.asarray([r["folds"] for r in rows])
        params = [
            {{"lambda": "alpha", "components": "n_components"}[k]: v for k, v in r["params"].items()} for r in rows
        ]
        res = {"params": params}
        for k in params[0]:
            res[f"param_{k}"] = np.asarray([p[k] for p in params], dtype=object)
        res["mean_test_score"] = folds.mean(axis=1)
        res["std_test_score"] = folds.std(axis=1)
        for f in range(folds.shape[1]):
            res[f"split{f}_test_score"] = folds[:, f]
        self.cv_results_ = res
        self.best_index_ = table["best"]
        self.cv_scheme_ = table["scheme"]
        self.metric_ = table["metric"]

    def predict(self, X):
        """Scores of the rows of ``X`` (a dask DataFrame with the feature
        columns, or a dask array): a lazy dask array, computed on the
        workers by the device scorer."""
        check_is_fitted(self, "model_")
        model = self.model_.to_bytes()
        if _is_frame(X):
            names = getattr(self, "feature_names_in_", None)
            columns = list(X.columns) if names is None else [c for c in X.columns if str(c) in set(names)]
            if names is not None and [str(c) for c in columns] != list(names):
                raise ValueError(f"X lacks the model's feature columns {list(names)}")
            arr = X[columns].to_dask_array()
            return arr.map_blocks(_score, model, drop_axis=1, dtype=np.float64)
        if _is_dask_array(X):
            if X.ndim != 2 or X.shape[1] != self.n_features_in_:
                raise ValueError(f"X must have {self.n_features_in_} feature columns, got shape {X.shape}")
            X = X.rechunk({1: -1})
            return X.map_blocks(_score, model, drop_axis=1, dtype=np.float64)
        raise TypeError(f"X must be a dask DataFrame or a dask array, got {type(X).__name__}")

    def to_bytes(self):
        """The ``.rkl`` bytes of the fitted model (as ``ranklet train
        --from-stats`` writes them, up to the ``training_data`` line)."""
        return super().to_bytes()


_MAP_DOC = """
    kernel : {'linear', 'rbf', 'poly'}, default=KERNEL
        The kernel of the Nyström feature map.NOMAP
    gamma : float or None, default=None
        Kernel width (RBF) or scale (poly); ``None``: ``1 / n_features``.
    degree, coef0 : polynomial kernel ``(gamma·xᵀz + coef0)^degree``.
    n_basis : int, default=100
        At most this many landmarks (fewer when the sample's kernel matrix
        has a lower numerical rank).
    sample : int, default=10000
        Rows the landmarks are chosen from: the first ``sample`` rows of
        the collection (see :class:`KPCRank`).
    landmarks : bytes or path, default=None
        A Nyström ``.rks`` whose map to use instead of choosing landmarks
        (``kernel``, ``gamma``, ``n_basis`` and ``sample`` are then unused)."""

_NOMAP = """ With ``'linear'`` (and no
        ``landmarks``) there is none: the linear model of the raw features,
        solved in the primal (``ranklet stats`` without ``--kernel``); any
        other kernel gives the reduced-basis kernel model of ``ranklet stats
        --kernel K --basis M`` + ``ranklet train --from-stats``, whose
        fitted attributes are ``landmarks_`` (the map's ``.rks`` bytes),
        ``n_basis_`` and ``nystrom_map_`` instead of ``coef_``."""


def _map_doc(kernel, nomap):
    return _MAP_DOC.replace("KERNEL", kernel).replace("NOMAP", nomap)


_PARAMS_DOC = """
    cv : int or None, default=None
        Keep per-fold statistics for K-fold cross-validation by query (a
        query's fold is ``splitmix64(qid XOR random_state) mod K``, as
        ``ranklet stats --cv K --seed``); with a grid of ``alpha`` the λ of
        least mean held-out objective is chosen (``cv_results_``).
    random_state : int, default=1
        Seed of the fold assignment.
    keep_queries : bool, default=False
        Keep every query's partial sums, so a query's rows may be anywhere
        in any partition. By default a query is sealed when its run of
        consecutive rows in a partition ends (the partition's first and last
        runs stay open: they may go on in the neighbouring partitions), so
        the statistics stay ``O(K·d²)``; rows of a sealed query met again
        are refused, naming the partition, row and qid.
    split_every : int, default=8
        Children per merge node of the reduction tree.
    precision : {'f32', 'f64'}, default='f32'
        Element type of the model.
"""


class RLS(_StatsLearner):
    __doc__ = (
        """Regularised least squares (ridge regression) on the labels, trained
    on a Dask collection from additive statistics: the model of
    ``ranklet train --algo rls --from-stats``.

    Parameters
    ----------
    alpha : float or list of float, default=1.0
        The ridge λ, or a grid of them (with ``cv``)."""
        + _map_doc("'linear'", _NOMAP)
        + _PARAMS_DOC
    )

    _algo = "rls"

    def __init__(
        self,
        alpha=1.0,
        *,
        kernel="linear",
        gamma=None,
        degree=3,
        coef0=1.0,
        n_basis=100,
        sample=10000,
        landmarks=None,
        cv=None,
        random_state=1,
        keep_queries=False,
        split_every=8,
        precision="f32",
    ):
        _store(self, locals())


class RankRLS(_StatsLearner):
    __doc__ = (
        """RankRLS (least squares on the differences of scores within each
    query, 000 eq. 5) trained on a Dask collection from additive
    statistics: the model of ``ranklet train --algo rankrls --from-stats``.
    Queries may be split across partitions in any way.

    Parameters
    ----------
    alpha : float or list of float, default=1.0
        The ridge λ, or a grid of them (with ``cv``).
    query_weight : {'equal', 'pairs'}, default='equal'
        Each query counts equally, or each pair."""
        + _map_doc("'linear'", _NOMAP)
        + _PARAMS_DOC
    )

    _algo = "rankrls"

    def __init__(
        self,
        alpha=1.0,
        *,
        query_weight="equal",
        kernel="linear",
        gamma=None,
        degree=3,
        coef0=1.0,
        n_basis=100,
        sample=10000,
        landmarks=None,
        cv=None,
        random_state=1,
        keep_queries=False,
        split_every=8,
        precision="f32",
    ):
        _store(self, locals())


def _read_landmarks(landmarks):
    """The bytes of a Nyström ``.rks``: given bytes, or read from a path."""
    if isinstance(landmarks, (bytes, bytearray, memoryview)):
        return bytes(landmarks)
    with open(landmarks, "rb") as f:
        return f.read()


class KPCRank(_StatsLearner):
    """Kernel principal component RankRLS with a Nyström feature map,
    trained on a Dask collection from additive statistics: the
    reduced-basis model of ``ranklet stats --kernel K --basis M`` (or
    ``--landmarks``) + ``ranklet train --from-stats --algo kpcrank``.

    The landmarks are chosen once, on the client, by the pivoted Cholesky
    ``ranklet stats --basis`` runs, from a sample of the rows: the first
    ``sample`` rows of the collection, read partition by partition from the
    first (only as many partitions as needed are computed). The first rows,
    rather than a uniform sample, because they cost one partition's read
    rather than a pass over all the data, and they are the same rows
    whatever the cluster, so a fit is reproducible; when the collection has
    at most ``sample`` rows they are all of them, in order, which is the
    sample ``ranklet stats --sample N`` takes of a file of as many rows. Data
    sorted by something the kernel sees (time, label) gives a biased sample:
    shuffle it, or pass ``landmarks`` (e.g. a ``.rks`` written by ``ranklet
    stats --kernel K --basis M --sample N`` on a uniform sample). The map
    (kernel, landmarks, ``L``) goes to the workers as the bytes of a ``.rks``
    without rows, one key of the graph; every partition's rows are mapped
    through it before their statistics, which are merged by a tree
    reduction and solved on the client.

    Parameters
    ----------
    n_components : int or list of int, default=10
        Principal components kept, or a grid of them (with ``cv``).
    alpha : float or list of float, default=0.0
        The ridge λ on the components, or a grid (with ``cv``).
    query_weight : {'equal', 'pairs'}, default='equal'
        Each query counts equally, or each pair."""
    __doc__ += _map_doc("'rbf'", "") + _PARAMS_DOC

    _algo = "kpcrank"

    def __init__(
        self,
        n_components=10,
        *,
        alpha=0.0,
        kernel="rbf",
        gamma=None,
        degree=3,
        coef0=1.0,
        n_basis=100,
        sample=10000,
        landmarks=None,
        query_weight="equal",
        cv=None,
        random_state=1,
        keep_queries=False,
        split_every=8,
        precision="f32",
    ):
        _store(self, locals())

    def _components(self):
        c = np.atleast_1d(np.asarray(self.n_components))
        if c.ndim != 1 or len(c) == 0 or c.dtype.kind not in "iu" or (c < 1).any():
            raise ValueError(f"n_components must be a positive integer or a list of them, got {self.n_components!r}")
        return [int(v) for v in c]

    def _check_grid(self, lambdas, cv):
        if len(lambdas) * len(self._components()) > 1 and cv is None:
            raise ValueError("a grid of alpha or n_components values needs cv=K to choose among them")

    def _nystrom(self):
        return True

    def _info(self):
        return (*_NYSTROM_INFO, ("n_components_", "components", None))

    def _solver_options(self):
        return {"components": self._components()}
