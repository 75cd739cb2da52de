"""The preference GPs from Python equal ``ranklet train --prefs`` on the same
data: with the CLI's files named as the Python fit names its arrays (``X``,
``prefs``, ``relations[0]``, ``groups[0]``: the only metadata that names a
source) the two model files are the same bytes; an inductive model's
``predict(X, return_std=True)`` equals ``ranklet score --sd`` to 1e-12, a
model over its items suggests the pairs ``ranklet suggest`` suggests. Bad
input raises the CLI's message; fitted estimators pickle."""

import pickle
import subprocess

import numpy as np
import pytest
from sklearn.base import clone

import ranklet
from conftest import assert_names_checked, ranklet_bin, write_svmlight


def items(seed, n=24, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ rng.normal(size=d)


def judgements(seed, f, m=60):
    """Noisy judgements of the utility ``f``: pairs, ties (close scores)
    and the observed differences."""
    rng = np.random.default_rng(seed + 1)
    n = len(f)
    pairs = np.array([rng.choice(n, size=2, replace=False) for _ in range(m)], dtype=np.int64)
    d = f[pairs[:, 0]] - f[pairs[:, 1]] + rng.normal(scale=0.3, size=m)
    pairs[d < 0] = pairs[d < 0][:, ::-1]
    return pairs, np.abs(d) < 0.15, np.abs(d) * rng.choice([1.0, 0.5], size=m)


def prefs_file(path, pairs, ties=None, diffs=None):
    with open(path, "w") as f:
        for k, (w, l) in enumerate(pairs):
            if ties is not None and ties[k]:
                f.write(f"{w} {l} tie\n")
            elif diffs is not None:
                f.write(f"{w} {l} {float(diffs[k])!r}\n")
            else:
                f.write(f"{w} {l}\n")


def run_cli(cwd, *args):
    """The CLI in ``cwd`` (so relative file names are the metadata's)."""
    r = subprocess.run([ranklet_bin(), *map(str, args)], capture_output=True, text=True, cwd=cwd)
    assert r.returncode == 0, f"ranklet {' '.join(map(str, args))} failed ({r.returncode}): {r.stderr}"
    return r


# (name, estimator, fit kwargs, CLI flags)
GROUPS = np.array([(i, i % 4) for i in range(0, 24, 2)])
EDGES = np.array([(i, i + 1, 0.5 + (i % 3)) for i in range(0, 22, 3)])
CASES = [
    ("pref-gp", ranklet.PrefGP(precision="f64"), {}, ["--algo", "pref-gp"]),
    ("pref-gp-ties", ranklet.PrefGP(ties="both", gamma=0.4, precision="f64"), {"ties": True},
     ["--algo", "pref-gp", "--ties", "both", "--kernel", "rbf:0.4"]),
    ("pref-gp-inductive", ranklet.PrefGP(inductive=True, precision="f64"), {}, ["--algo", "pref-gp", "--inductive"]),
    ("pref-gp-f32", ranklet.PrefGP(), {}, ["--algo", "pref-gp"]),
    ("diff-gp", ranklet.DiffGP(precision="f64"), {"differences": True}, ["--algo", "diff-gp"]),
    ("diff-gp-inductive", ranklet.DiffGP(inductive=True, gamma=0.3, precision="f64"), {"differences": True},
     ["--algo", "diff-gp", "--inductive", "--kernel", "rbf:0.3"]),
    ("xpgp", ranklet.XPGP(precision="f64"), {"relations": [EDGES], "groups": [GROUPS]}, ["--algo", "xpgp"]),
    ("pref-gp-sparse", ranklet.PrefGP(basis=8, precision="f64"), {}, ["--algo", "pref-gp", "--basis", "8"]),
    ("diff-gp-sparse", ranklet.DiffGP(basis=6, gamma=0.3, precision="f64"), {"differences": True},
     ["--algo", "diff-gp", "--basis", "6", "--kernel", "rbf:0.3"]),
    ("xpgp-lowrank", ranklet.XPGP(basis=8, relation_rank=5, precision="f64"),
     {"relations": [EDGES], "groups": [GROUPS]}, ["--algo", "xpgp", "--basis", "8", "--relation-rank", "5"]),
    ("xpgp-lowrank-residual", ranklet.XPGP(basis=8, relation_rank=5, relation_residual="constant", precision="f64"),
     {"relations": [EDGES], "groups": [GROUPS]},
     ["--algo", "xpgp", "--basis", "8", "--relation-rank", "5", "--relation-residual", "constant"]),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_python_model_is_the_cli_model(cli, tmp_path, case):
    name, est, kw, flags = CASES[case]
    X, f = items(seed=case)
    pairs, ties, diffs = judgements(case, f)
    write_svmlight(tmp_path / "X", X, np.zeros(len(X)))
    fit_kw = {}
    extra = []
    if kw.get("ties"):
        fit_kw["ties"] = ties
    if kw.get("differences"):
        fit_kw["differences"] = diffs
    prefs_file(tmp_path / "prefs", pairs, ties if kw.get("ties") else None, diffs if kw.get("differences") else None)
    for r, e in enumerate(kw.get("relations", [])):
        (tmp_path / f"relations[{r}]").write_text("".join(f"{int(u)} {int(v)} {float(w)!r}\n" for u, v, w in e))
        extra += ["--relation", f"relations[{r}]"]
        fit_kw["relations"] = kw["relations"]
    for r, g in enumerate(kw.get("groups", [])):
        (tmp_path / f"groups[{r}]").write_text("".join(f"{int(i)} {int(c)}\n" for i, c in g))
        extra += ["--relation-groups", f"groups[{r}]"]
        fit_kw["groups"] = kw["groups"]
    run_cli(tmp_path, "train", *flags, "--data", "X", "--num-features", X.shape[1], "--prefs", "prefs", *extra,
            "-o", "cli.rkl", *(["--precision", "f64"] if est.precision == "f64" else []))
    cli_model = tmp_path / "cli.rkl"
    if est.ties == "both":
        with pytest.warns(UserWarning, match="ties kept as two opposite judgements"):
            est = clone(est).fit(X, pairs, **fit_kw)
    else:
        est = clone(est).fit(X, pairs, **fit_kw)
    py_model = tmp_path / "py.rkl"
    est.save(py_model)

    assert py_model.read_bytes() == cli_model.read_bytes(), name
    meta = ranklet.load(cli_model).metadata
    assert est.log_evidence_ == float(meta["log_evidence"])
    assert est.hyperparameters_["gamma"] == float(meta["gamma"])

    if est.model_.kind == "pref-gp-inductive":
        new_X, _ = items(seed=50 + case, n=7)
        test = tmp_path / "new.svm"
        write_svmlight(test, new_X, np.zeros(len(new_X)))
        out = cli("score", "-m", cli_model, "--data", test, "--num-features", X.shape[1], "--sd").stdout.split()
        cli_ms = np.array(out, dtype=float).reshape(-1, 2)
        mean, sd = est.predict(new_X, return_std=True)
        np.testing.assert_allclose(mean, cli_ms[:, 0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(sd, cli_ms[:, 1], rtol=1e-12, atol=1e-12)
    else:
        # The suggestions are `ranklet suggest`'s, pair for pair.
        out = cli("suggest", "-m", cli_model, "-k", 3).stdout.splitlines()
        cli_pairs = [tuple(int(t) for t in line.split("\t")[:2]) for line in out]
        assert len(cli_pairs) == 3, name
        assert [tuple(p) for p in est.suggest(3)] == cli_pairs


def test_posterior_and_probabilities_agree():
    """``prob`` is Φ of the standardised mean difference; its complement is
    the reversed pair; the posterior orders the items as the utility does."""
    X, f = items(seed=3, n=20)
    pairs, _, _ = judgements(3, f, m=120)
    gp = ranklet.PrefGP(precision="f64").fit(X, pairs)
    p = gp.prob(np.arange(5), np.arange(5, 10))
    q = gp.prob(np.arange(5, 10), np.arange(5))
    np.testing.assert_allclose(p + q, 1.0, atol=1e-12)
    assert gp.prob(int(np.argmax(f)), int(np.argmin(f))) > 0.9
    from scipy.stats import kendalltau

    assert kendalltau(gp.posterior_mean_, f).statistic > 0.6
    mean, std = gp.predict(return_std=True)
    np.testing.assert_array_equal(mean, gp.posterior_mean_)
    assert np.all(std > 0)


def test_pickle_and_clone():
    X, f = items(seed=4)
    pairs, _, _ = judgements(4, f)
    gp = ranklet.PrefGP(inductive=True, precision="f64").fit(X, pairs)
    back = pickle.loads(pickle.dumps(gp))
    assert back.to_bytes() == gp.to_bytes()
    np.testing.assert_array_equal(back.predict(X[:4]), gp.predict(X[:4]))
    assert back.prob(0, 1) == gp.prob(0, 1)
    assert clone(gp).get_params() == gp.get_params()


def cli_message(cli_run, path):
    """The CLI's message for a bad file, without the file's name."""
    msg = cli_run.stderr.strip().removeprefix("ranklet: ")
    return msg.replace(str(path), "", 1)


def test_hostile_inputs_raise_the_cli_message(cli, tmp_path):
    import subprocess

    X, f = items(seed=5, n=6)
    data = tmp_path / "items.svm"
    write_svmlight(data, X, np.zeros(len(X)))

    def cli_fails(algo, text, *extra):
        p = tmp_path / "bad.txt"
        p.write_text(text)
        r = subprocess.run([ranklet_bin(), "train",
                            "--algo", algo, "--data", str(data), "--prefs", str(p), *map(str, extra),
                            "-o", str(tmp_path / "x.rkl")], capture_output=True, text=True)
        assert r.returncode == 2, r.stderr
        return cli_message(r, p)

    for bad, text in [(np.array([[0, 1], [9, 2]]), "0 1\n9 2\n"), (np.array([[0, 1], [3, 3]]), "0 1\n3 3\n")]:
        with pytest.raises(ValueError) as e:
            ranklet.PrefGP().fit(X, bad)
        assert str(e.value).removeprefix("prefs") == cli_fails("pref-gp", text)
    with pytest.raises(ValueError) as e:
        ranklet.DiffGP().fit(X, np.array([[0, 1], [2, 3]]))
    assert str(e.value).removeprefix("prefs") == cli_fails("diff-gp", "0 1\n2 3\n")
    with pytest.raises(ValueError) as e:
        ranklet.PrefGP().fit(X, np.array([[0, 1]]), ties=np.array([True]))
    assert str(e.value).removeprefix("prefs") == cli_fails("pref-gp", "0 1 tie\n")
    with pytest.raises(ValueError) as e:
        ranklet.XPGP().fit(X, np.array([[0, 1]]))
    assert str(e.value) == cli_fails("xpgp", "0 1\n")
    with pytest.raises(ValueError, match="non-finite"):
        ranklet.DiffGP().fit(X, np.array([[0, 1]]), differences=np.array([np.nan]))
    bad_X = X.copy()
    bad_X[2, 1] = np.inf
    with pytest.raises(ValueError, match=r"X\[2, 1\]: non-finite"):
        ranklet.PrefGP().fit(bad_X, np.array([[0, 1]]))
    with pytest.raises(TypeError, match="integer item indices"):
        ranklet.PrefGP().fit(X, np.array([[0.0, 1.0]]))
    with pytest.raises(ValueError, match="integer item indices"):
        ranklet.PrefGP().fit(X, np.array([0, 1]))
    with pytest.raises(ValueError, match="gamma"):
        ranklet.PrefGP(gamma=-1.0).fit(X, np.array([[0, 1]]))
    with pytest.raises(ValueError, match="ties must be"):
        ranklet.PrefGP(ties="maybe").fit(X, np.array([[0, 1]]))
    with pytest.raises(ValueError, match="relation_residual must be"):
        ranklet.XPGP(basis=3, relation_residual="flat").fit(X, np.array([[0, 1]]), relations=[np.array([[0, 1]])])

    gp = ranklet.PrefGP(precision="f64").fit(X, np.array([[0, 1], [2, 1]]))
    with pytest.raises(ValueError, match="inductive=True"):
        gp.predict(X)
    with pytest.raises(ValueError, match="beyond the 6 items"):
        gp.prob(0, 6)
    with pytest.raises(ValueError, match="k must be"):
        gp.suggest(0)
    ind = ranklet.PrefGP(inductive=True, precision="f64").fit(X, np.array([[0, 1], [2, 1]]))
    with pytest.raises(ValueError, match="suggest needs"):
        ind.suggest(1)
    with pytest.raises(ValueError, match="X: 2 attributes, the model has 3"):
        ind.predict(np.zeros((2, 2)))
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        ranklet.PrefGP().prob(0, 1)


def test_xpgp_on_relations_only():
    """Without attributes (``X=None``, ``n_items``) only the relation's
    hyperparameters are fitted: ``a`` and ``gamma`` stay at their start, 1."""
    gp = ranklet.XPGP(precision="f64").fit(
        None, np.array([[0, 1], [2, 3], [0, 3]]), groups=[np.array([(0, 0), (1, 0), (2, 1), (3, 1)])], n_items=4
    )
    assert gp.hyperparameters_["a"] == 1.0 and gp.hyperparameters_["gamma"] == 1.0
    assert gp.posterior_mean_[0] > gp.posterior_mean_[3]
    with pytest.raises(ValueError, match="X is required"):
        ranklet.XPGP().fit(None, np.array([[0, 1]]), groups=[np.array([(0, 0), (1, 0)])])


def test_dataframe_column_names_as_the_row_learners():
    """A DataFrame's columns are kept (``feature_names_in_``, the model's
    metadata: the array fit's bytes plus that one line) and checked at
    ``predict`` with the row learners' error and scikit-learn's warnings;
    a fit on an array forgets them."""
    import json

    pd = pytest.importorskip("pandas")
    X, f = items(seed=6)
    pairs, _, _ = judgements(6, f)
    df = pd.DataFrame(X, columns=["price", "size", "age"])
    gp = ranklet.PrefGP(inductive=True, precision="f64").fit(df, pairs)
    plain = ranklet.PrefGP(inductive=True, precision="f64").fit(X, pairs)
    assert list(gp.feature_names_in_) == list(df.columns)
    assert not hasattr(plain, "feature_names_in_")
    names = json.dumps(list(df.columns))
    assert gp.to_bytes() == ranklet._ranklet.add_metadata(plain.to_bytes(), [("feature_names", names)])
    assert list(ranklet.load(gp.to_bytes()).feature_names_in_) == list(df.columns)
    assert_names_checked(gp.predict, df, df[["size", "price", "age"]], X, "PrefGP", plain.predict(X))
    with pytest.warns(UserWarning, match="X has feature names, but PrefGP was fitted without"):
        plain.predict(df)
    gp.fit(X, pairs)
    assert not hasattr(gp, "feature_names_in_") and gp.to_bytes() == plain.to_bytes()
    # XPGP on relations only has no attributes, so no names.
    xp = ranklet.XPGP(precision="f64").fit(
        None, np.array([[0, 1], [2, 3]]), groups=[np.array([(0, 0), (1, 0), (2, 1), (3, 1)])], n_items=4
    )
    assert not hasattr(xp, "feature_names_in_") and "feature_names" not in xp.model_.metadata
