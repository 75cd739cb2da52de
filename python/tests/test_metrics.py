"""ranklet.metrics against independent references (scipy, scikit-learn and
brute force), per query."""

import itertools

import numpy as np
import pytest

import ranklet.metrics as M


def queries(seed):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(5), [4, 7, 3, 9, 6])
    y = rng.integers(0, 4, size=len(qid)).astype(float)
    s = y + rng.normal(scale=1.0, size=len(qid))
    order = rng.permutation(len(qid))
    return y[order], s[order], qid[order]


def per_query(f, y, s, qid):
    return np.mean([f(y[qid == q], s[qid == q]) for q in np.unique(qid)])


def test_kendall_and_spearman_against_scipy():
    stats = pytest.importorskip("scipy.stats")
    y, s, qid = queries(1)
    tau = per_query(lambda a, b: stats.kendalltau(a, b).statistic, y, s, qid)
    rho = per_query(lambda a, b: stats.spearmanr(a, b).statistic, y, s, qid)
    assert M.kendall_tau(y, s, qid=qid) == pytest.approx(tau, abs=1e-12)
    assert M.spearman(y, s, qid=qid) == pytest.approx(rho, abs=1e-12)


def test_ndcg_against_sklearn():
    skm = pytest.importorskip("sklearn.metrics")
    y, s, qid = queries(2)
    # scikit-learn's gain is the label itself; with 2^label − 1 as labels the
    # two definitions agree.
    ref = per_query(lambda a, b: skm.ndcg_score([2**a - 1], [b], k=3), y, s, qid)
    assert M.ndcg(y, s, qid=qid, k=3) == pytest.approx(ref, abs=1e-12)


def test_auc_against_sklearn():
    skm = pytest.importorskip("sklearn.metrics")
    y, s, _ = queries(3)
    assert M.auc(y, s, threshold=1.0) == pytest.approx(skm.roc_auc_score(y > 1.0, s), abs=1e-12)


def test_disagreement_and_cindex_brute_force():
    y, s, qid = queries(4)

    def dis(a, b):
        pairs = [(i, j) for i, j in itertools.combinations(range(len(a)), 2) if a[i] != a[j]]
        wrong = sum((b[i] - b[j]) * (a[i] - a[j]) < 0 for i, j in pairs)
        ties = sum(b[i] == b[j] for i, j in pairs)
        return (wrong + 0.5 * ties) / len(pairs)

    d = per_query(dis, y, s, qid)
    assert M.disagreement(y, s, qid=qid) == pytest.approx(d, abs=1e-12)
    assert M.cindex(y, s, qid=qid) == pytest.approx(1 - d, abs=1e-12)


def test_map_against_sklearn():
    skm = pytest.importorskip("sklearn.metrics")
    y, s, qid = queries(5)
    ref = per_query(lambda a, b: skm.average_precision_score(a > 0, b), y, s, qid)
    assert M.mean_average_precision(y, s, qid=qid) == pytest.approx(ref, abs=1e-12)


def test_pair_error():
    s = np.array([3.0, 1.0, 2.0, 2.0])
    assert M.pair_error(s, [[0, 1], [1, 2], [2, 3]]) == pytest.approx((0 + 1 + 0.5) / 3)


def test_string_qids_group_like_integer_codes():
    y, s, qid = queries(6)
    names = np.array([f"q{q}" for q in qid])
    assert M.ndcg(y, s, qid=names) == M.ndcg(y, s, qid=qid)
