"""Bad input raises ValueError (TypeError for a wrong type) with the
library's message — the CLI's where the CLI has one — and never crashes the
interpreter; nothing is written on an error."""

import numpy as np
import pytest

import ranklet
from conftest import letor


@pytest.fixture
def data():
    return letor(seed=21)


def test_nan_and_inf_name_the_row_and_column(data):
    X, y, qid = data
    X = X.copy()
    X[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"X\[3, 2\]: non-finite feature value NaN"):
        ranklet.RankRLS().fit(X, y, qid=qid)
    X[3, 2] = np.inf
    with pytest.raises(ValueError, match=r"X\[3, 2\]: non-finite feature value inf"):
        ranklet.RankRLS().fit(X, y, qid=qid)
    y = y.copy()
    y[5] = np.nan
    with pytest.raises(ValueError, match=r"y\[5\]: non-finite label"):
        ranklet.RankRLS().fit(data[0], y, qid=qid)


def test_shape_mismatches(data):
    X, y, qid = data
    with pytest.raises(ValueError, match="qid has"):
        ranklet.RankRLS().fit(X, y, qid=qid[:-1])
    with pytest.raises(ValueError):
        ranklet.RankRLS().fit(X, y[:-1], qid=qid)
    est = ranklet.RankRLS().fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :-1])
    with pytest.raises(ValueError):
        est.predict(X[0])


def test_domain_errors_carry_the_cli_message(data):
    X, y, qid = data
    with pytest.raises(ValueError, match="needs --cv K"):
        ranklet.RankRLSCV(alphas=[0.1, 1.0], cv=None).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="--lambda must be a finite number"):
        ranklet.RankRLS(alpha=-1.0).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="kernel rls/rankrls need λ > 0"):
        ranklet.RankRLS(alpha=0.0, kernel="rbf").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="--components must be ≥ 1"):
        ranklet.KPCRank(n_components=0).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="--basis .* exceeds"):
        ranklet.RankRLS(kernel="rbf", basis=10_000).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="needs at least 50 queries"):
        ranklet.RankRLSCV(cv=50).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="kernel must be"):
        ranklet.RankRLS(kernel="sigmoid").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="kernel parameters out of range"):
        ranklet.RankRLS(kernel="rbf", gamma=-1.0).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="unknown metric"):
        ranklet.RankRLSCV(metric="bogus").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="query_weight"):
        ranklet.RankRLS(query_weight="both").fit(X, y, qid=qid)


def test_bad_pairs(data):
    X, y, _ = data
    with pytest.raises(ValueError, match="pairs:1: .*row 999"):
        ranklet.RankRLS().fit(X, y, pairs=[[999, 0]])
    with pytest.raises(ValueError, match="paired with itself"):
        ranklet.RankRLS().fit(X, y, pairs=[[1, 1]])
    with pytest.raises(ValueError, match="regress on scores"):
        ranklet.RLS().fit(X, y, pairs=[[0, 1]])


def test_standardize_of_wide_sparse_data_refused():
    """Wide data stays sparse in the library (more than 4096 features), and
    centring would fill it: refused as the CLI refuses it."""
    sp = pytest.importorskip("scipy.sparse")
    X = sp.random(30, 5000, density=0.01, format="csr", random_state=0)
    y = np.arange(30.0)
    with pytest.raises(ValueError, match="--standardize needs dense data; <arrays> has 5000 features"):
        ranklet.RankRLS(standardize=True).fit(X, y)


def test_wrong_types():
    with pytest.raises((TypeError, ValueError)):
        ranklet.RankRLS().fit("not an array", [1.0])
    with pytest.raises(ValueError, match="not a valid model"):
        ranklet.load(b"RKL0 garbage")
    with pytest.raises(TypeError):
        ranklet.load(12345)


def test_corrupted_model_refused(data):
    X, y, qid = data
    b = bytearray(ranklet.RankRLS().fit(X, y, qid=qid).to_bytes())
    b[len(b) // 2] ^= 0xFF
    with pytest.raises(ValueError, match="not a valid model"):
        ranklet.load(bytes(b))
    with pytest.raises(ValueError, match="not a valid model"):
        ranklet.load(bytes(b[:-10]))


def test_nothing_written_on_error(tmp_path, data):
    X, y, qid = data
    est = ranklet.RankRLS()
    with pytest.raises(ValueError):
        est.fit(X, y, qid=qid[:-1])
    with pytest.raises(Exception):
        est.save(tmp_path / "m.rkl")
    assert list(tmp_path.iterdir()) == []
    est.fit(X, y, qid=qid)
    with pytest.raises(OSError):
        est.save(tmp_path / "no-such-dir" / "m.rkl")
    assert list(tmp_path.iterdir()) == []


def test_metrics_validate():
    with pytest.raises(ValueError, match="y_true has 3 values, y_score has 2"):
        ranklet.metrics.ndcg([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="non-finite"):
        ranklet.metrics.disagreement([1, 2], [np.nan, 1])
    with pytest.raises(ValueError, match="qid has"):
        ranklet.metrics.kendall_tau([1, 2, 3], [1, 2, 3], qid=[0, 0])
    with pytest.raises(ValueError, match="outside the metric's domain"):
        ranklet.metrics.ndcg([-1.0, 2.0], [0.5, 0.1])
