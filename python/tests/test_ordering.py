"""Supervised ordering from Python equals the CLI on the same data: ``ERR``'s
model file is ``ranklet train --algo err``'s byte for byte (the CLI's files
named as the Python fit names its data), its scores ``ranklet score``'s;
``RCDR``/``PCA`` give ``ranklet reduce``'s basis and importances. Bad input
raises the CLI's message."""

import subprocess

import numpy as np
import pytest
from sklearn.base import clone

import ranklet
from conftest import assert_names_checked, ranklet_bin


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


def test_dataframe_column_names_as_the_row_learners():
    """``ERR``, ``RCDR`` and ``PCA`` keep a DataFrame's columns
    (``feature_names_in_``; ERR's model: the array fit's bytes plus the
    metadata line) and check them at ``predict``/``transform`` with the row
    learners' error and scikit-learn's warnings."""
    import json

    pd = pytest.importorskip("pandas")
    X, orders = data(5)
    df = pd.DataFrame(X, columns=["w", "x", "y", "z"])
    bad = df[["x", "w", "y", "z"]]
    err = ranklet.ERR(alpha=0.5, precision="f64").fit(df, orders)
    plain = ranklet.ERR(alpha=0.5, precision="f64").fit(X, orders)
    assert list(err.feature_names_in_) == list(df.columns)
    names = json.dumps(list(df.columns))
    assert err.to_bytes() == ranklet._ranklet.add_metadata(plain.to_bytes(), [("feature_names", names)])
    assert list(ranklet.load(err.to_bytes()).feature_names_in_) == list(df.columns)
    assert_names_checked(err.predict, df, bad, X, "ERR", plain.predict(X))
    for est in [ranklet.RCDR(n_components=2), ranklet.PCA(n_components=2)]:
        name = type(est).__name__
        est.fit(df, orders)
        assert list(est.feature_names_in_) == list(df.columns)
        assert_names_checked(est.transform, df, bad, X, name, X @ est.components_.T)
        # The output's columns, and a DataFrame out with set_output.
        prefix = name.lower()
        assert list(est.get_feature_names_out()) == [f"{prefix}0", f"{prefix}1"]
        out = est.set_output(transform="pandas").transform(df)
        assert list(out.columns) == [f"{prefix}0", f"{prefix}1"]
        np.testing.assert_array_equal(out.to_numpy(), X @ est.components_.T)
        est.fit(X, orders)
        assert not hasattr(est, "feature_names_in_")


def test_scores_as_y_are_one_order():
    """A 1-D array of one score per item (scikit-learn's ``y``) is the one
    order of the items by decreasing score, equal scores in row order; so a
    reducer and ERR chain in a Pipeline."""
    from sklearn.pipeline import make_pipeline

    X, _ = data(6, n=12)
    y = np.round(X[:, 0] - X[:, 1], 1)
    y[3] = y[7]  # a tie: item 3 before item 7
    order = np.argsort(-y, kind="stable")
    assert list(order).index(3) < list(order).index(7)
    for est in [ranklet.RCDR(n_components=2, correlation="spearman"), ranklet.PCA(n_components=2)]:
        a = clone(est).fit(X, y)
        b = clone(est).fit(X, [order])
        np.testing.assert_array_equal(a.components_, b.components_)
        np.testing.assert_array_equal(a.importance_, b.importance_)
    e = ranklet.ERR(alpha=0.5, precision="f64")
    assert clone(e).fit(X, y).to_bytes() == clone(e).fit(X, [list(order)]).to_bytes()
    assert clone(e).fit(X, list(y)).to_bytes() == clone(e).fit(X, [list(order)]).to_bytes()
    # One order of all the items without its list could be scores too.
    with pytest.raises(ValueError, match=r"either one order \(give it as \[\[…\]\]\) or one score per item"):
        clone(e).fit(X, list(order))
    pipe = make_pipeline(ranklet.RCDR(n_components=2), ranklet.ERR(alpha=0.5, precision="f64")).fit(X, y)
    r = ranklet.RCDR(n_components=2).fit(X, y)
    manual = ranklet.ERR(alpha=0.5, precision="f64").fit(r.transform(X), y)
    np.testing.assert_array_equal(pipe.predict(X), manual.predict(r.transform(X)))
    with pytest.raises(ValueError, match="y has 11 scores but X has 12 items"):
        ranklet.PCA().fit(X, y[:11])
    with pytest.raises(ValueError, match=r"y\[2\]: non-finite score nan"):
        ranklet.PCA().fit(X, np.where(np.arange(12) == 2, np.nan, y))
    with pytest.raises(ValueError, match="requires y to be passed"):
        ranklet.RCDR().fit(X, None)
    with pytest.raises(ValueError, match=r"X\[1, 2\]: non-finite feature value inf"):
        ranklet.PCA().fit(X, y).transform(np.where(np.arange(48).reshape(12, 4) == 6, np.inf, X))
