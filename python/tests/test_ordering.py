"""Supervised ordering from Python equals the CLI on the same data: ``ERR``'s
model file is ``ranklet train --algo err``'s byte for byte (the CLI's files
named as the Python fit names its data), its scores ``ranklet score``'s;
``RCDR``/``PCA`` give ``ranklet reduce``'s basis and importances. Bad input
raises the CLI's message."""

import subprocess

import numpy as np
import pytest

import ranklet
from conftest import ranklet_bin


def run_cli(cwd, *args, ok=True):
    r = subprocess.run([ranklet_bin(), *map(str, args)], capture_output=True, text=True, cwd=cwd)
    if ok:
        assert r.returncode == 0, f"ranklet {' '.join(map(str, args))} failed ({r.returncode}): {r.stderr}"
    return r


def data(seed, n=30, d=4, n_orders=25):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    f = X @ rng.normal(size=d)
    orders = []
    for _ in range(n_orders):
        o = rng.choice(n, size=rng.integers(3, 7), replace=False)
        orders.append(o[np.argsort(-(f[o] + rng.normal(scale=0.3, size=len(o))))])
    return X, orders


def write(tmp_path, X, orders):
    lines = ["id," + ",".join(f"x{j}" for j in range(X.shape[1]))]
    lines += [f"{i}," + ",".join(repr(float(v)) for v in row) for i, row in enumerate(X)]
    (tmp_path / "items").write_text("\n".join(lines) + "\n")
    (tmp_path / "orders").write_text("".join(" ".join(map(str, o)) + "\n" for o in orders))


@pytest.mark.parametrize(
    "est,flags",
    [
        (ranklet.ERR(alpha=0.5, precision="f64"), ["--lambda", "0.5", "--precision", "f64"]),
        (ranklet.ERR(alpha=1.0, reduce=("rcdr-kendall", 2), precision="f64"),
         ["--lambda", "1", "--reduce", "rcdr-kendall:2", "--precision", "f64"]),
        (ranklet.ERR(alpha=0.1, reduce=("pca", 3)), ["--lambda", "0.1", "--reduce", "pca:3"]),
    ],
)
def test_err_model_is_the_cli_model(cli, tmp_path, est, flags):
    X, orders = data(1)
    write(tmp_path, X, orders)
    run_cli(tmp_path, "train", "--algo", "err", "--items", "items", "--orders", "orders", *flags, "-o", "cli.rkl")
    est.fit(X, orders)
    est.save(tmp_path / "py.rkl")
    assert (tmp_path / "py.rkl").read_bytes() == (tmp_path / "cli.rkl").read_bytes()
    (tmp_path / "rows.csv").write_text(
        "\n".join([",".join(f"x{j}" for j in range(X.shape[1]))] + [",".join(repr(float(v)) for v in r) for r in X])
        + "\n"
    )
    out = run_cli(tmp_path, "score", "-m", "cli.rkl", "--data", "rows.csv").stdout.split()
    cli_scores = np.array(out, dtype=float)
    if est.precision == "f64":
        np.testing.assert_allclose(est.predict(X), cli_scores, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(est.predict(X).astype(np.float32), cli_scores.astype(np.float32))


@pytest.mark.parametrize("method", ["rcdr-kendall", "rcdr-spearman", "pca"])
def test_reducers_are_ranklet_reduce(cli, tmp_path, method):
    X, orders = data(2)
    write(tmp_path, X, orders)
    run_cli(tmp_path, "reduce", "--method", method, "--dims", 3, "--items", "items", "--orders", "orders",
            "-o", "basis.tsv")
    rows = [line.split("\t") for line in (tmp_path / "basis.tsv").read_text().splitlines() if not line.startswith("#")]
    cli = np.array(rows, dtype=float)
    est = (ranklet.PCA(n_components=3) if method == "pca"
           else ranklet.RCDR(n_components=3, correlation=method.split("-")[1])).fit(X, orders)
    np.testing.assert_allclose(est.importance_, cli[:, 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(est.components_, cli[:, 1:], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(est.transform(X), X @ cli[:, 1:].T, rtol=1e-12, atol=1e-12)


def test_hostile_inputs_raise_the_cli_message(cli, tmp_path):
    X, orders = data(3, n=6, n_orders=3)
    bad = [list(o) for o in orders]
    bad[1][0] = 17
    write(tmp_path, X, bad)
    r = run_cli(tmp_path, "train", "--algo", "err", "--items", "items", "--orders", "orders", "-o", "x.rkl", ok=False)
    assert r.returncode == 2
    with pytest.raises(ValueError) as e:
        ranklet.ERR().fit(X, bad)
    assert str(e.value) == r.stderr.strip().removeprefix("ranklet: ")
    write(tmp_path, X, orders)
    r = run_cli(tmp_path, "reduce", "--method", "pca", "--dims", 9, "--items", "items", "--orders", "orders",
                "-o", "b.tsv", ok=False)
    with pytest.raises(ValueError) as e:
        ranklet.PCA(n_components=9).fit(X, orders)
    assert str(e.value) == r.stderr.strip().removeprefix("ranklet: ")
    with pytest.raises(TypeError, match="integer item positions"):
        ranklet.ERR().fit(X, [[0.5, 1.0]])
    with pytest.raises(ValueError, match="lambda"):
        ranklet.ERR(alpha=-1.0).fit(X, orders)
    with pytest.raises(ValueError, match="reduce"):
        ranklet.ERR(reduce=("svd", 2)).fit(X, orders)


def test_pickle():
    import pickle

    X, orders = data(4)
    err = ranklet.ERR(alpha=0.5, precision="f64").fit(X, orders)
    back = pickle.loads(pickle.dumps(err))
    assert back.to_bytes() == err.to_bytes()
    np.testing.assert_array_equal(back.predict(X), err.predict(X))
    pca = ranklet.PCA(n_components=2).fit(X, orders)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(pca)).transform(X), pca.transform(X))
