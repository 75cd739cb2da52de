"""A DataFrame's feature names, kept and checked as the row learners keep
and check them, for the estimators that do not check ``X`` through
scikit-learn's ``validate_data`` (the preference GPs, whose ``X`` may be
absent, and the Kronecker learners, with two node sets or kernel matrices):
scikit-learn's own check sets ``feature_names_in_`` at ``fit`` (its rules:
string column names only) and checks it at ``predict`` (other columns raise
its ``ValueError``; names at fit but not now, or now but not at fit, warn as
it warns). Every estimator's model gets the names in its metadata here, as
the line ``feature_names=[…]`` (JSON; :class:`ranklet.Model` reads it back).

An estimator with a second input (the Kronecker learners' ``X_v``) keeps
its names in another attribute (``feature_names_v_in_``) and metadata key
(``feature_names_v``); the check is the same, its messages name that
input."""

import json
import warnings

from sklearn.base import BaseEstimator

from . import _ranklet

try:  # scikit-learn >= 1.6: a function of the estimator
    from sklearn.utils.validation import _check_feature_names as _sk_check
except ImportError:  # older: the method of BaseEstimator

    def _sk_check(est, X, *, reset):
        return est._check_feature_names(X, reset=reset)


# The attribute of each input's names and its metadata key.
_KEYS = {"feature_names_in_": "feature_names", "feature_names_v_in_": "feature_names_v"}


def check(est, X, *, reset, attr="feature_names_in_", arg="X"):
    """Sets (``reset``, at ``fit``) or checks the names of ``X``'s columns
    against ``est``'s ``attr``, with scikit-learn's check. For another
    attribute than ``feature_names_in_``, or another input than ``X``, the
    check runs on a stand-in of the same class name, and its messages name
    ``arg`` (a ``ValueError`` starts ``"arg: "``, a warning says ``arg``
    where scikit-learn says ``X``)."""
    if attr == "feature_names_in_" and arg == "X":
        _sk_check(est, X, reset=reset)
        return
    stand_in = type(type(est).__name__, (BaseEstimator,), {})()
    if hasattr(est, attr):
        stand_in.feature_names_in_ = getattr(est, attr)
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            _sk_check(stand_in, X, reset=reset)
    except ValueError as e:
        raise ValueError(f"{arg}: {e}") from None
    for w in seen:
        warnings.warn(str(w.message).replace("X ", f"{arg} ", 1), w.category, stacklevel=3)
    if hasattr(stand_in, "feature_names_in_"):
        setattr(est, attr, stand_in.feature_names_in_)
    elif hasattr(est, attr):
        delattr(est, attr)


def forget(est, attr="feature_names_in_"):
    """Drops the names of an input that is absent at this ``fit``."""
    if hasattr(est, attr):
        delattr(est, attr)


def metadata(est, attrs=("feature_names_in_",)):
    """The model's metadata lines ``(key, JSON list)`` of the names ``est``
    kept (none for arrays)."""
    return [
        (_KEYS[a], json.dumps([str(c) for c in getattr(est, a)])) for a in attrs if getattr(est, a, None) is not None
    ]


def in_model(data, est, attrs=("feature_names_in_",)):
    """The model's bytes ``data`` with the names' metadata lines added
    (unchanged for arrays): for the learners whose drivers write their own
    metadata."""
    meta = metadata(est, attrs)
    return _ranklet.add_metadata(data, meta) if meta else data
