"""Shared fixtures: the CLI binary (built by scripts/test.sh; tests that need
it are skipped with the reason when it is absent), seeded LETOR-like data and
an SVMlight writer whose numbers read back bit for bit."""

import os
import shutil
import subprocess

import numpy as np
import pytest


def ranklet_bin():
    path = os.environ.get("RANKLET_BIN") or shutil.which("ranklet")
    return path if path and os.path.exists(path) else None


@pytest.fixture
def cli():
    path = ranklet_bin()
    if path is None:
        pytest.skip("the ranklet CLI is not built (set RANKLET_BIN; scripts/test.sh does)")

    def run(*args):
        r = subprocess.run([path, *map(str, args)], capture_output=True, text=True)
        if r.returncode != 0:
            raise AssertionError(f"ranklet {' '.join(map(str, args))} failed ({r.returncode}): {r.stderr}")
        return r

    return run


def letor(seed, n_queries=8, per_query=(6, 12), d=5, shuffle=True):
    """Rows of ``n_queries`` queries (sizes in ``per_query``), labels 0..3
    from a noisy linear score; rows of a query interleaved with the others
    when ``shuffle`` (the readers group them by first appearance)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(per_query[0], per_query[1] + 1, size=n_queries)
    qid = np.repeat(np.arange(1, n_queries + 1) * 7, sizes)
    n = len(qid)
    X = rng.normal(size=(n, d))
    s = X @ rng.normal(size=d) + rng.normal(scale=0.5, size=n)
    y = np.digitize(s, np.quantile(s, [0.4, 0.7, 0.9])).astype(float)
    if shuffle:
        order = rng.permutation(n)
        X, y, qid = X[order], y[order], qid[order]
    return X, y, qid


def write_svmlight(path, X, y, qid=None):
    """SVMlight with every stored value written by ``repr`` (round-trips);
    zeros are left out, as the array reader leaves them out."""
    with open(path, "w") as f:
        for i in range(X.shape[0]):
            parts = [repr(float(y[i]))]
            if qid is not None:
                parts.append(f"qid:{int(qid[i])}")
            parts += [f"{j + 1}:{float(v)!r}" for j, v in enumerate(X[i]) if v != 0.0]
            f.write(" ".join(parts) + "\n")


def names_error(df, bad):
    """The message of the row learners' check of feature names: a
    ``RankRLS`` fitted on the DataFrame ``df`` scoring ``bad``."""
    import ranklet

    est = ranklet.RankRLS().fit(df, np.arange(len(df), dtype=float))
    with pytest.raises(ValueError) as e:
        est.predict(bad)
    return str(e.value)


def assert_names_checked(predict, df, bad, X, name, expected):
    """``predict`` (a fitted estimator's ``predict`` or ``transform``)
    checks names as the row learners do: on ``df`` (its columns at fit) no
    warning and ``expected``; on ``bad`` (other columns) their error; on the
    array ``X`` scikit-learn's warning naming the class ``name``."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(predict(df), expected)
    with pytest.raises(ValueError) as e:
        predict(bad)
    assert str(e.value) == names_error(df, bad)
    with pytest.warns(UserWarning, match=f"^X does not have valid feature names, but {name} was fitted with"):
        predict(X)


def splitmix_fold(q, seed, k):
    """The fold of a query in the statistics: ``splitmix64(qid XOR seed) mod K``,
    written here from its definition."""
    m = (1 << 64) - 1
    z = ((int(q) ^ seed) + 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return (z ^ (z >> 31)) % k
