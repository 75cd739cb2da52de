"""The preference GPs as estimators: ``PrefGP``, ``XPGP`` and ``DiffGP``.
Each ``fit`` is one call of the library's preference driver (the one
``ranklet train --prefs`` calls) on the items' attributes and the judgements
between them, with the GIL released; the fitted state is the model's bytes
(kind 8 over the training items, or kind 9 with ``inductive=True``), so an
estimator pickles, saves and scores through them.

Items are the rows of ``X``, named by their 0-based positions (as
``ranklet train --data`` names the rows of its file). Judgements are an
``(m, 2)`` integer array of ``(winner, loser)`` positions; they are written
as the lines of a preferences file and read by the CLI's reader, so a bad
judgement raises ``ValueError`` with the CLI's message (``prefs:LINE`` for
the ``LINE``-th judgement).

A DataFrame's column names are kept as the row learners keep them
(``feature_names_in_``, the model's metadata line ``feature_names``) and
checked at ``predict``."""

import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from . import _arrays
from . import _names
from . import _ranklet
from ._estimators import _store
from ._model import Model, ModelBytes


def _items(X):
    """The attributes as the extension takes them (float32/float64, 2-D)."""
    return None if X is None else _arrays.matrix(X, "X", "items × attributes")


def _index_array(a, name, cols):
    """An integer array of ``cols`` columns (``TypeError`` for another
    dtype, ``ValueError`` for another shape)."""
    a = np.asarray(a)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an (m, {cols}) array of integer item indices, got dtype {a.dtype}")
    if a.ndim != 2 or a.shape[1] != cols:
        raise ValueError(f"{name} must be an (m, {cols}) array of integer item indices, got shape {a.shape}")
    return a


def _prefs_text(prefs, ties, differences):
    """The lines of a preferences file: ``w l``, ``w l tie`` or ``w l d``."""
    p = _index_array(prefs, "prefs", 2)
    m = len(p)
    tie = np.zeros(m, dtype=bool)
    if ties is not None:
        tie = np.asarray(ties)
        if tie.dtype != bool or tie.shape != (m,):
            raise ValueError(f"ties must be a boolean array of one value per preference ({m}), got {tie.dtype} {tie.shape}")
    diff = None
    if differences is not None:
        diff = np.asarray(differences)
        if diff.dtype.kind not in "fiu":
            raise TypeError(f"differences must hold numbers, got dtype {diff.dtype}")
        if diff.shape != (m,):
            raise ValueError(f"differences must have one value per preference ({m}), got shape {diff.shape}")
        diff = diff.astype(np.float64)
    lines = []
    for k in range(m):
        w, l = int(p[k, 0]), int(p[k, 1])
        if tie[k]:
            lines.append(f"{w} {l} tie")
        elif diff is not None:
            lines.append(f"{w} {l} {float(diff[k])!r}")
        else:
            lines.append(f"{w} {l}")
    return "\n".join(lines) + "\n"


def _relations_text(relations, groups):
    """``(kind, name, text)`` of each relation: edge lists ``u v [w]`` and
    group memberships ``item group``."""
    out = []
    for r, e in enumerate(relations or []):
        e = np.asarray(e)
        if e.ndim != 2 or e.shape[1] not in (2, 3):
            raise ValueError(f"relations[{r}] must be an (k, 2) or (k, 3) array of edges (u, v[, weight]), got shape {e.shape}")
        if e.shape[1] == 2:
            _index_array(e, f"relations[{r}]", 2)
            lines = [f"{int(u)} {int(v)}" for u, v in e]
        else:
            lines = [f"{int(u)} {int(v)} {float(w)!r}" for u, v, w in e]
        out.append(("edges", f"relations[{r}]", "\n".join(lines) + "\n"))
    for r, g in enumerate(groups or []):
        g = _index_array(g, f"groups[{r}]", 2)
        out.append(("groups", f"groups[{r}]", "\n".join(f"{int(i)} {int(c)}" for i, c in g) + "\n"))
    return out


class _PrefLearner(ModelBytes, BaseEstimator):
    """What every preference GP shares: the call of the driver, the fitted
    attributes from the model, scoring through the model's bytes."""

    _algo = None

    def _fit(self, X, prefs, ties=None, differences=None, relations=None, groups=None, n_items=None):
        _names.check(self, X, reset=True)
        X = _items(X)
        if X is None and n_items is None:
            raise ValueError("X is required (or n_items, for xpgp on relations only)")
        n = X.shape[0] if X is not None else int(n_items)
        data, summary, notes = _ranklet.fit_prefs_py(
            X,
            n,
            _prefs_text(prefs, ties, differences),
            _relations_text(relations, groups),
            algo=self._algo,
            gamma=None if self.gamma is None else float(self.gamma),
            inductive=bool(getattr(self, "inductive", False)),
            ties=self.ties,
            precision=self.precision,
            basis=None if getattr(self, "basis", None) is None else int(self.basis),
            relation_rank=None if getattr(self, "relation_rank", None) is None else int(self.relation_rank),
            relation_residual=getattr(self, "relation_residual", "none"),
        )
        for note in notes:
            warnings.warn(note, UserWarning, stacklevel=3)
        data = _names.in_model(data, self)
        self.model_ = Model(data)
        self.summary_ = summary
        self.n_items_ = n
        self.n_features_in_ = 0 if X is None else X.shape[1]
        self._X = X if self.model_.kind == "pref-gp-inductive" else None
        meta = self.model_.metadata
        names = ["a", "gamma", "noise" if self._algo == "diff-gp" else "sigma"]
        names += [k for k in meta if k.startswith(("b_", "iota_"))]
        self.hyperparameters_ = {k: float(meta[k]) for k in names if k in meta}
        self.log_evidence_ = float(meta["log_evidence"])
        self.posterior_mean_, var = _ranklet.pref_posterior(data, self._X)
        self.posterior_std_ = np.sqrt(var)
        return self

    def predict(self, X=None, return_std=False):
        """Posterior means of the latent scores (and their standard
        deviations with ``return_std``): of new items ``X`` for an
        ``inductive`` model, of the training items with ``X=None``."""
        check_is_fitted(self, "model_")
        if X is None and self._X is not None:
            X = self._X
        elif X is not None:
            _names.check(self, X, reset=False)
        mean, var = _ranklet.pref_posterior(self.model_.to_bytes(), _items(X))
        return (mean, np.sqrt(var)) if return_std else mean

    def prob(self, i, j):
        """``P(i ≻ j)``: the predictive probability that training item ``i``
        is preferred to item ``j`` (scalars or arrays of indices)."""
        check_is_fitted(self, "model_")
        scalar = np.ndim(i) == 0 and np.ndim(j) == 0
        i, j = np.broadcast_arrays(np.asarray(i), np.asarray(j))
        pairs = _index_array(np.stack([i.ravel(), j.ravel()], axis=1), "(i, j)", 2).astype(np.int64)
        p = _ranklet.pref_prob(self.model_.to_bytes(), np.ascontiguousarray(pairs), self._X)
        return float(p[0]) if scalar else p.reshape(i.shape)

    def suggest(self, k=1):
        """The next ``k`` pairs of training items to ask about (as
        ``ranklet suggest``): an ``(k, 2)`` integer array, most informative
        first. Needs a model over the fixed items (``inductive=False``)."""
        check_is_fitted(self, "model_")
        picks = _ranklet.pref_suggest(self.model_.to_bytes(), int(k))
        return np.array([(i, j) for i, j, _, _ in picks], dtype=np.int64).reshape(-1, 2)



class PrefGP(_PrefLearner):
    """Probit pairwise GP with EP (000 §5, eq. 10), ``ranklet train --algo
    pref-gp``: a latent score per item with an RBF prior on its attributes,
    hyperparameters fitted by the evidence.

    Parameters
    ----------
    gamma : float or None
        RBF width; ``None`` fits it by the evidence (``--kernel rbf:auto``).
    inductive : bool
        Write the inductive model (kind 9, ``--inductive``), which predicts
        new items from their attributes; otherwise the posterior over the
        training items (kind 8), which ``suggest`` needs.
    basis : int or None
        Sparse EP on at most this many inducing items, chosen by pivoted
        Cholesky of the kernel (``--basis M``): memory O(n·M), no n × n
        matrix, for 10⁴–10⁵ items. The model is the inductive kind over the
        inducing items. ``None``: the dense fit.
    ties : {"drop", "both"}
        What a tie becomes (``--ties``).
    precision : {"f32", "f64"}
        Element type of the model file.

    >>> import numpy as np, ranklet
    >>> X = np.linspace(0, 1, 8)[:, None]
    >>> prefs = np.array([(i + 1, i) for i in range(7)])  # larger x preferred
    >>> gp = ranklet.PrefGP(precision="f64").fit(X, prefs)
    >>> bool(np.all(np.diff(gp.posterior_mean_) > 0)), gp.prob(7, 0) > 0.5
    (True, True)
    >>> gp.suggest(2).shape
    (2, 2)
    """

    _algo = "pref-gp"

    def __init__(self, *, gamma=None, inductive=False, basis=None, ties="drop", precision="f32"):
        _store(self, locals())

    def fit(self, X, prefs, ties=None):
        """Fits to items ``X`` (rows) and judgements ``prefs`` (``(m, 2)``
        winner, loser positions); ``ties`` marks judgements that are ties.
        Returns ``self``."""
        return self._fit(X, prefs, ties=ties)


class XPGP(_PrefLearner):
    """XPGP (001): the pairwise GP on the items' attributes and relations
    between them, ``ranklet train --algo xpgp``. Relations are edge lists
    (``(k, 2)`` or ``(k, 3)`` arrays ``u, v[, weight]``, ``--relation``) or
    group memberships (``(k, 2)`` arrays ``item, group``,
    ``--relation-groups``). Parameters as :class:`PrefGP` (no
    ``inductive``: a model with relations is over its items), and

    relation_rank : int or None
        With ``basis``: the number of smallest Laplacian eigenpairs kept
        per relation (``--relation-rank K``; default ``min(basis, n)``):
        the low-rank XPGP, no n × n matrix in the fit.
    relation_residual : {"none", "constant"}
        With ``basis``: what becomes of each relation's spectrum beyond the
        kept eigenpairs (``--relation-residual``): dropped (``"none"``, the
        default) or kept as one constant per relation (``"constant"``: one
        more feature per judged item; exact when the dropped spectrum is
        flat).

    >>> import numpy as np, ranklet
    >>> X = np.linspace(0, 1, 6)[:, None]
    >>> prefs = np.array([(5, 0), (4, 1), (3, 2)])
    >>> gp = ranklet.XPGP(precision="f64").fit(X, prefs, groups=[np.array([(0, 0), (1, 0), (4, 1), (5, 1)])])
    >>> sorted(gp.hyperparameters_)
    ['a', 'b_0', 'gamma', 'iota_0', 'sigma']
    """

    _algo = "xpgp"

    def __init__(self, *, gamma=None, basis=None, relation_rank=None, relation_residual="none", ties="drop",
                 precision="f32"):
        _store(self, locals())

    def fit(self, X, prefs, ties=None, relations=None, groups=None, n_items=None):
        """Fits to items ``X`` (or ``n_items`` items without attributes),
        judgements ``prefs`` and at least one relation. Returns ``self``."""
        return self._fit(X, prefs, ties=ties, relations=relations, groups=groups, n_items=n_items)


class DiffGP(_PrefLearner):
    """The score-difference GP (000 §5): a Gaussian likelihood on observed
    differences ``s_w − s_l``, exact, ``ranklet train --algo diff-gp``.
    Parameters as :class:`PrefGP` (``basis`` too: the sparse fit in closed form).

    >>> import numpy as np, ranklet
    >>> X = np.linspace(0, 1, 6)[:, None]
    >>> pairs = np.array([(1, 0), (2, 1), (3, 2), (4, 3), (5, 4)])
    >>> gp = ranklet.DiffGP(precision="f64").fit(X, pairs, differences=np.full(5, 0.2))
    >>> bool(np.all(np.diff(gp.predict()) > 0))
    True
    """

    _algo = "diff-gp"

    def __init__(self, *, gamma=None, inductive=False, basis=None, precision="f32"):
        _store(self, locals())

    ties = "drop"  # a tie is the difference 0 for diff-gp

    def fit(self, X, prefs, differences=None, ties=None):
        """Fits to items ``X``, pairs ``prefs`` and the observed differences
        ``s_w − s_l`` (``ties`` marks differences of 0). Returns ``self``."""
        return self._fit(X, prefs, ties=ties, differences=differences)
