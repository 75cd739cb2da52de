"""Every row learner trained from Python equals ``ranklet train`` on the same
data and parameters: the model files are the same bytes once their metadata
is stripped (by ``ranklet export --strip-metadata``), their metadata differs
only in the line naming the data, and the scores of ``ranklet score`` equal
``predict``'s to 1e-12 for f64 models (the scorer is the same code, so in
practice they are bit-equal) and exactly for f32 models."""

import numpy as np
import pytest

import ranklet
from conftest import letor, write_svmlight

# (estimator, CLI flags). The in-memory path of the CLI: queries not on
# consecutive lines, so even a single linear λ is not streamed.
CASES = [
    (ranklet.RankRLS(alpha=0.5, precision="f64"), ["--algo", "rankrls", "--lambda", "0.5"]),
    (
        ranklet.RankRLS(alpha=0.3, kernel="rbf", gamma=0.2, query_weight="pairs", precision="f64"),
        ["--algo", "rankrls", "--kernel", "rbf:0.2", "--lambda", "0.3", "--query-weight", "pairs"],
    ),
    (
        ranklet.RLS(alpha=2.0, kernel="poly", degree=2, gamma=0.5, coef0=1.0, standardize=True, precision="f64"),
        ["--algo", "rls", "--kernel", "poly:2:0.5:1", "--lambda", "2", "--standardize"],
    ),
    (ranklet.KPCR(n_components=3, precision="f64"), ["--algo", "kpcr", "--components", "3"]),
    (
        ranklet.KPCRank(n_components=4, alpha=0.1, kernel="rbf", gamma=0.3, basis=30, precision="f64"),
        ["--algo", "kpcrank", "--kernel", "rbf:0.3", "--components", "4", "--lambda", "0.1", "--basis", "30"],
    ),
    (
        ranklet.RankRLSCV(alphas=[0.01, 0.1, 1.0, 10.0], cv=4, kernel="rbf", gamma=0.1, precision="f64"),
        ["--algo", "rankrls", "--kernel", "rbf:0.1", "--lambda", "0.01,0.1,1,10", "--cv", "4"],
    ),
    (
        ranklet.RankRLSCV(alphas=[0.1, 1.0, 10.0], cv="loo", precision="f64"),
        ["--algo", "rankrls", "--lambda", "0.1,1,10", "--cv", "loo"],
    ),
    (
        ranklet.KPCRankCV(n_components=[2, 4, 6], alphas=[0.0, 1.0], cv=3, kernel="rbf", gamma=0.2, precision="f64"),
        ["--algo", "kpcrank", "--kernel", "rbf:0.2", "--components", "2,4,6", "--lambda", "0,1", "--cv", "3"],
    ),
    (ranklet.RankRLS(alpha=0.5), ["--algo", "rankrls", "--lambda", "0.5"]),  # f32, the CLI's default
]


def strip(cli, tmp_path, model):
    out = tmp_path / (model.stem + ".stripped")
    cli("export", "-m", model, "--strip-metadata", "-o", out)
    return out.read_bytes()


@pytest.mark.parametrize("case", range(len(CASES)))
def test_python_model_is_the_cli_model(cli, tmp_path, case):
    est, flags = CASES[case]
    X, y, qid = letor(seed=case)
    data = tmp_path / "train.svm"
    write_svmlight(data, X, y, qid)
    cli_model = tmp_path / "cli.rkl"
    cli("train", *flags, "--data", data, "--num-features", X.shape[1], "-o", cli_model,
        *(["--precision", "f64"] if est.precision == "f64" else []))
    est.fit(X, y, qid=qid)
    py_model = tmp_path / "py.rkl"
    est.save(py_model)

    assert strip(cli, tmp_path, py_model) == strip(cli, tmp_path, cli_model)
    meta_cli = ranklet.load(cli_model).metadata
    meta_py = ranklet.load(py_model).metadata
    assert meta_cli.pop("training_data") == str(data)
    assert meta_py.pop("training_data") == "<arrays>"
    assert meta_py == meta_cli

    test_X, _, _ = letor(seed=100 + case)
    test = tmp_path / "test.svm"
    write_svmlight(test, test_X, np.zeros(len(test_X)))
    cli_scores = np.array(cli("score", "-m", cli_model, "--data", test, "--num-features", X.shape[1]).stdout.split(), dtype=float)
    py_scores = est.predict(test_X)
    if est.precision == "f32":
        # The CLI prints an f32 score as the shortest decimal of that f32.
        np.testing.assert_array_equal(py_scores.astype(np.float32), cli_scores.astype(np.float32))
    else:
        np.testing.assert_allclose(py_scores, cli_scores, rtol=1e-12, atol=1e-12)


def test_streamed_linear_fit_agrees_to_rounding(cli, tmp_path):
    """With one linear λ, no CV and queries on consecutive lines the CLI
    streams the file (sums block by block); arrays take the in-memory path.
    The two differ only by the order of the Gram sums."""
    X, y, qid = letor(seed=7, shuffle=False)
    data = tmp_path / "train.svm"
    write_svmlight(data, X, y, qid)
    cli_model = tmp_path / "cli.rkl"
    cli("train", "--algo", "rankrls", "--lambda", "0.5", "--precision", "f64", "--data", data, "-o", cli_model)
    est = ranklet.RankRLS(alpha=0.5, precision="f64").fit(X, y, qid=qid)
    np.testing.assert_allclose(est.predict(X), ranklet.load(cli_model).predict(X), rtol=1e-10, atol=1e-12)


def test_csr_input_equals_the_svmlight_file(cli, tmp_path):
    """A scipy CSR matrix (with explicit zeros left out) trains the model the
    SVMlight file of the same rows trains."""
    sp = pytest.importorskip("scipy.sparse")
    X, y, qid = letor(seed=11)
    X[np.abs(X) < 0.7] = 0.0
    data = tmp_path / "train.svm"
    write_svmlight(data, X, y, qid)
    cli_model = tmp_path / "cli.rkl"
    cli("train", "--algo", "rankrls", "--kernel", "rbf:0.3", "--lambda", "0.2", "--precision", "f64",
        "--data", data, "--num-features", X.shape[1], "-o", cli_model)
    est = ranklet.RankRLS(alpha=0.2, kernel="rbf", gamma=0.3, precision="f64").fit(sp.csr_matrix(X), y, qid=qid)
    py_model = tmp_path / "py.rkl"
    est.save(py_model)
    assert strip(cli, tmp_path, py_model) == strip(cli, tmp_path, cli_model)
    np.testing.assert_array_equal(est.predict(sp.csr_matrix(X)), est.predict(X))
