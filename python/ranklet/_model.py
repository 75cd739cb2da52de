"""A trained model as bytes: the ``.rkl`` file, scored by the device
parser."""

import json
import os
import tempfile

import numpy as np
from sklearn.utils.validation import check_is_fitted

from . import _arrays
from . import _ranklet


class Model:
    """A ``.rkl`` model, validated when it is made: ``predict`` scores rows
    exactly as ``ranklet score`` does (in the model's element type unless
    ``precision`` says otherwise).

    >>> import ranklet, numpy as np
    >>> est = ranklet.RLS().fit(np.eye(3), [1.0, 2.0, 3.0])
    >>> m = ranklet.load(est.to_bytes())
    >>> m.kind, m.n_features_in_
    ('linear', 3)
    """

    def __init__(self, data):
        self._bytes = bytes(data)
        info = _ranklet.model_info(self._bytes)
        self.kind = info["kind"]
        self.element = info["element"]
        self.n_features_in_ = info["dim"]
        self.metadata = dict(
            line.split("=", 1) for line in info["metadata"].splitlines() if "=" in line
        )
        names = self.metadata.get("feature_names")
        self.feature_names_in_ = np.asarray(json.loads(names), dtype=object) if names else None

    def predict(self, X, precision=None):
        """Scores of the rows of ``X`` (array, CSR matrix or DataFrame)."""
        if hasattr(X, "columns") and self.feature_names_in_ is not None:
            got = [str(c) for c in X.columns]
            if got != list(self.feature_names_in_):
                raise ValueError(
                    f"the columns of X {got} are not the model's features {list(self.feature_names_in_)}"
                )
        x, csr = _arrays.features(X)
        return _ranklet.score(self._bytes, x, csr, precision)

    def to_bytes(self):
        """The ``.rkl`` bytes."""
        return self._bytes

    def save(self, path):
        """Writes the model to ``path`` atomically (a temporary file in the
        same directory, then a rename): an error leaves no file."""
        save_bytes(self._bytes, path)

    def __reduce__(self):
        return (Model, (self._bytes,))

    def __repr__(self):
        return f"Model(kind={self.kind!r}, element={self.element!r}, n_features_in_={self.n_features_in_})"


class ModelBytes:
    """``to_bytes`` and ``save`` of an estimator whose fitted state is its
    model ``model_``."""

    def to_bytes(self):
        """The ``.rkl`` bytes of the fitted model."""
        check_is_fitted(self, "model_")
        return self.model_.to_bytes()

    def save(self, path):
        """Writes the fitted model as a ``.rkl`` file (atomically)."""
        save_bytes(self.to_bytes(), path)


def save_bytes(data, path):
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".ranklet-", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def load(source):
    """A :class:`Model` from a path (``str`` or ``os.PathLike``) or from the
    bytes of a ``.rkl`` file; a corrupted or truncated model raises
    ``ValueError``."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return Model(source)
    with open(os.fspath(source), "rb") as f:
        return Model(f.read())
