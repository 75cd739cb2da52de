"""The Kronecker learners from Python equal ``ranklet train --edges`` on the
same data: with the CLI's files named as the Python fit names its arrays
(edges ``edges``; node ids the 0-based positions) the two model files are the
same bytes, and ``predict`` on the edges equals ``ranklet score`` to 1e-12.
Bad input raises the CLI's message."""

import subprocess

import numpy as np
import pytest
from sklearn.base import clone

import ranklet
from conftest import assert_names_checked, names_error, ranklet_bin


def run_cli(cwd, *args, ok=True):
    r = subprocess.run([ranklet_bin(), *map(str, args)], capture_output=True, text=True, cwd=cwd)
    if ok:
        assert r.returncode == 0, f"ranklet {' '.join(map(str, args))} failed ({r.returncode}): {r.stderr}"
    return r


def write_nodes(path, X):
    with open(path, "w") as f:
        for i, row in enumerate(X):
            f.write(f"{i} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row)) + "\n")


def write_kernel(path, K):
    with open(path, "w") as f:
        for row in K:
            f.write(" ".join(repr(float(v)) for v in row) + "\n")


def write_edges(path, edges, y):
    with open(path, "w") as f:
        for (u, v), t in zip(edges, y):
            f.write(f"{int(u)} {int(v)} {float(t)!r}\n")


def problem(seed, n_u=9, n_v=7, one=False, complete=True):
    rng = np.random.default_rng(seed)
    X_u = rng.normal(size=(n_u, 3))
    X_v = X_u if one else rng.normal(size=(n_v, 2))
    W = rng.normal(size=(3, X_v.shape[1]))
    Y = X_u @ W @ X_v.T + rng.normal(scale=0.1, size=(n_u, len(X_v)))
    if one:
        Y = Y + Y.T
    pairs = np.array([(i, j) for i in range(n_u) for j in range(len(X_v)) if not (one and i == j)])
    if not complete:
        pairs = pairs[rng.random(len(pairs)) < 0.6]
    return X_u, (None if one else X_v), pairs, Y[pairs[:, 0], pairs[:, 1]]


def rbf(X, g):
    d = np.square(X[:, None, :] - X[None, :, :]).sum(-1)
    return np.exp(-g * d)


# (name, estimator, problem kwargs, precomputed, CLI flags)
CASES = [
    ("kron-rls", ranklet.KronRLS(alpha=0.5, precision="f64"), {}, False, ["--algo", "kron-rls", "--lambda", "0.5"]),
    ("kron-rankrls-rbf-cg", ranklet.KronRankRLS(alpha=0.2, kernel="rbf", gamma=0.3, precision="f64"),
     {"one": True, "complete": False}, False,
     ["--algo", "kron-rankrls", "--kernel", "rbf:0.3", "--lambda", "0.2"]),
    ("kron-rls-sym-cv", ranklet.KronRLS(alpha=[0.1, 1.0, 10.0], cv=3, kernel="precomputed", pair_kernel="sym",
                                        precision="f64"),
     {"one": True}, True, ["--algo", "kron-rls", "--pair-kernel", "sym", "--lambda", "0.1,1,10", "--cv", "3"]),
    ("kron-rankrls-two-cv-auc", ranklet.KronRankRLS(alpha=[0.5, 5.0], cv=3, metric="auc", precision="f64"),
     {"complete": False}, False,
     ["--algo", "kron-rankrls", "--lambda", "0.5,5", "--cv", "3", "--metric", "auc"]),
    ("kron-rls-f32", ranklet.KronRLS(alpha=1.0), {}, False, ["--algo", "kron-rls", "--lambda", "1"]),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_python_model_is_the_cli_model(cli, tmp_path, case):
    name, est, kw, precomputed, flags = CASES[case]
    X_u, X_v, pairs, y = problem(case, **kw)
    if case == 3:  # AUC: 0/1 labels
        y = (y > np.median(y)).astype(float)
    write_edges(tmp_path / "edges", pairs, y)
    if precomputed:
        K = rbf(X_u, 0.4)
        write_kernel(tmp_path / "K_u", K)
        nodes = ["--kernel-u", "precomputed:K_u"]
        fit_args = (K,)
    elif X_v is None:
        write_nodes(tmp_path / "X_u", X_u)
        nodes = ["--nodes", "X_u"]
        fit_args = (X_u,)
    else:
        write_nodes(tmp_path / "X_u", X_u)
        write_nodes(tmp_path / "X_v", X_v)
        nodes = ["--nodes-u", "X_u", "--nodes-v", "X_v"]
        fit_args = (X_u, X_v)
    run_cli(tmp_path, "train", *flags, "--edges", "edges", *nodes, "-o", "cli.rkl",
            *(["--precision", "f64"] if est.precision == "f64" else []))
    est = clone(est).fit(*fit_args, edges=pairs, y=y)
    est.save(tmp_path / "py.rkl")
    assert (tmp_path / "py.rkl").read_bytes() == (tmp_path / "cli.rkl").read_bytes(), name

    out = run_cli(tmp_path, "score", "-m", "cli.rkl", "--edges", "edges", *nodes).stdout.split()
    cli_scores = np.array(out, dtype=float)
    py_scores = est.predict(*fit_args, pairs=pairs)
    if est.precision == "f32":
        np.testing.assert_array_equal(py_scores.astype(np.float32), cli_scores.astype(np.float32))
    else:
        np.testing.assert_allclose(py_scores, cli_scores, rtol=1e-12, atol=1e-12)
    if est.cv is not None:
        assert len(est.cv_results_["mean_test_score"]) == len(est.alpha)
        assert est.alpha_ in list(est.alpha)


def test_predict_new_nodes_and_rank():
    """A fitted model scores nodes it never saw (features); ``rank`` orders
    the candidates by ``predict``; a sym model is exactly symmetric."""
    X_u, X_v, pairs, y = problem(11)
    est = ranklet.KronRLS(alpha=0.1, kernel="rbf", gamma=0.5, precision="f64").fit(X_u, X_v, edges=pairs, y=y)
    rng = np.random.default_rng(12)
    new_u, new_v = rng.normal(size=(3, 3)), rng.normal(size=(4, 2))
    S = est.predict(new_u, new_v)
    assert S.shape == (3, 4)
    np.testing.assert_array_equal(est.predict(new_u, new_v, pairs=np.array([[2, 1], [0, 3]])), [S[2, 1], S[0, 3]])
    idx, s = est.rank(new_u[1], new_v, k=3)
    np.testing.assert_array_equal(idx, np.argsort(-S[1], kind="stable")[:3])
    np.testing.assert_array_equal(s, S[1, idx])

    Xo, _, po, yo = problem(13, one=True)
    sym = ranklet.KronRLS(alpha=0.1, kernel="rbf", gamma=0.5, pair_kernel="sym", precision="f64").fit(
        Xo, edges=po, y=yo)
    M = sym.predict(Xo)
    np.testing.assert_array_equal(M, M.T)


def test_hostile_inputs_raise_the_cli_message(cli, tmp_path):
    X_u, X_v, pairs, y = problem(21)
    write_nodes(tmp_path / "X_u", X_u)
    write_nodes(tmp_path / "X_v", X_v)

    def cli_message(edges_text, *flags):
        (tmp_path / "edges").write_text(edges_text)
        r = run_cli(tmp_path, "train", "--algo", "kron-rls", "--edges", "edges", "--nodes-u", "X_u", "--nodes-v", "X_v",
                    *flags, "-o", "x.rkl", ok=False)
        assert r.returncode == 2, r.stderr
        return r.stderr.strip().removeprefix("ranklet: ")

    cases = [
        ("0 1 1.0\n99 2 0.5\n", np.array([[0, 1], [99, 2]]), np.array([1.0, 0.5]), {}),
        ("0 1 1.0\n0 1 0.5\n", np.array([[0, 1], [0, 1]]), np.array([1.0, 0.5]), {}),
        ("0 1 nan\n", np.array([[0, 1]]), np.array([np.nan]), {}),
    ]
    for text, e, labels, kw in cases:
        with pytest.raises(ValueError) as err:
            ranklet.KronRLS().fit(X_u, X_v, edges=e, y=labels)
        assert str(err.value) == cli_message(text)
    with pytest.raises(ValueError) as err:
        ranklet.KronRLS(alpha=[1.0, 2.0]).fit(X_u, X_v, edges=pairs, y=y)
    assert str(err.value) == cli_message("0 1 1\n", "--lambda", "1,2")
    with pytest.raises(ValueError) as err:
        ranklet.KronRLS(pair_kernel="sym").fit(X_u, X_v, edges=pairs, y=y)
    assert str(err.value) == cli_message("0 1 1\n", "--pair-kernel", "sym")

    K = np.eye(4)
    K[0, 1] = 0.5
    write_kernel(tmp_path / "K", K)
    (tmp_path / "edges").write_text("0 1 1\n")
    r = run_cli(tmp_path, "train", "--algo", "kron-rls", "--edges", "edges", "--kernel-u", "precomputed:K", "-o", "x.rkl",
                ok=False)
    with pytest.raises(ValueError) as err:
        ranklet.KronRLS(kernel="precomputed").fit(K, edges=np.array([[0, 1]]), y=[1.0])
    assert str(err.value).removeprefix("u") == r.stderr.strip().removeprefix("ranklet: K")
    with pytest.raises(TypeError, match="integer node indices"):
        ranklet.KronRLS().fit(X_u, X_v, edges=pairs.astype(float), y=y)
    with pytest.raises(ValueError, match="complete matrix Y or as edges"):
        ranklet.KronRLS().fit(X_u, X_v)
    est = ranklet.KronRLS().fit(X_u, X_v, edges=pairs, y=y)
    with pytest.raises(ValueError, match="columns, the model's v nodes have 2"):
        est.predict(X_u, X_u)
    with pytest.raises(ValueError, match="non-finite"):
        est.predict(np.full((1, 3), np.nan), X_v)
    with pytest.raises(ValueError, match="beyond"):
        est.predict(X_u, X_v, pairs=np.array([[0, 50]]))


def test_pickle_and_clone():
    import pickle

    X_u, X_v, pairs, y = problem(31)
    est = ranklet.KronRankRLS(alpha=0.3, kernel="rbf", gamma=0.4, precision="f64").fit(X_u, X_v, edges=pairs, y=y)
    back = pickle.loads(pickle.dumps(est))
    assert back.to_bytes() == est.to_bytes()
    np.testing.assert_array_equal(back.predict(X_u, X_v), est.predict(X_u, X_v))
    assert clone(est).get_params() == est.get_params()


def test_dataframe_column_names_as_the_row_learners():
    """The columns of ``X_u`` and ``X_v`` are kept (``feature_names_in_``,
    ``feature_names_v_in_``; the model's metadata: the array fit's bytes
    plus those lines) and checked at ``predict``: ``X_u`` with the row
    learners' error, ``X_v`` with the same error naming it; ``rank`` keeps
    the names of a pandas row."""
    import json
    import warnings

    pd = pytest.importorskip("pandas")
    X_u, X_v, pairs, y = problem(41)
    U = pd.DataFrame(X_u, columns=["dose", "mass", "logp"])
    V = pd.DataFrame(X_v, columns=["pocket", "charge"])
    est = ranklet.KronRankRLS(alpha=0.3, kernel="rbf", gamma=0.4, precision="f64").fit(U, V, edges=pairs, y=y)
    plain = clone(est).fit(X_u, X_v, edges=pairs, y=y)
    assert list(est.feature_names_in_) == list(U.columns) and list(est.feature_names_v_in_) == list(V.columns)
    meta = [("feature_names", json.dumps(list(U.columns))), ("feature_names_v", json.dumps(list(V.columns)))]
    assert est.to_bytes() == ranklet._ranklet.add_metadata(plain.to_bytes(), meta)
    m = ranklet.load(est.to_bytes())
    assert list(m.feature_names_in_) == list(U.columns) and m.metadata["feature_names_v"] == meta[1][1]
    assert_names_checked(lambda A: est.predict(A, V), U, U[["mass", "dose", "logp"]], X_u, "KronRankRLS",
                         plain.predict(X_u, X_v))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        idx, s = est.rank(U.iloc[2], V, k=3)
        np.testing.assert_array_equal(idx, plain.rank(X_u[2], X_v, k=3)[0])
    bad_v = V[["charge", "pocket"]]
    with pytest.raises(ValueError) as e:
        est.predict(U, bad_v)
    assert str(e.value) == "X_v: " + names_error(V, bad_v)
    with pytest.warns(UserWarning, match="X_v does not have valid feature names, but KronRankRLS was fitted with"):
        est.predict(U, X_v)
    with pytest.warns(UserWarning, match="X_v has feature names, but KronRankRLS was fitted without"):
        plain.predict(X_u, V)

    # One node set: both inputs are checked against its names.
    Xo, _, po, yo = problem(43, one=True)
    O = pd.DataFrame(Xo, columns=["a", "b", "c"])
    one = ranklet.KronRLS(alpha=0.1, precision="f64").fit(O, edges=po, y=yo)
    assert not hasattr(one, "feature_names_v_in_")
    assert "feature_names_v" not in one.model_.metadata
    with pytest.raises(ValueError) as e:
        one.predict(O, O[["c", "b", "a"]])
    assert str(e.value) == "X_v: " + names_error(O, O[["c", "b", "a"]])
    # A refit on arrays forgets the names.
    est.fit(X_u, X_v, edges=pairs, y=y)
    assert not hasattr(est, "feature_names_in_") and not hasattr(est, "feature_names_v_in_")
    assert est.to_bytes() == plain.to_bytes()
