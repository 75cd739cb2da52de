"""Every linear least-squares path on raw-scale LETOR-like rows
(``rawscale.raw_letor``: features from 10⁻³ to 10⁹, a column of mean 10⁹
and spread 10³, query-level, constant and duplicated columns, duplicated
rows, one-row queries, all-equal labels) against the long-double
reference that centres the rows first: ``ranklet train --data``, the
statistics shards cut mid-query through ``ranklet stats`` and
``train --from-stats``, the in-memory estimators, ``ranklet.dask`` on a
two-process ``LocalCluster``, and the CV table's choice of λ.

Scores agree to 1e-9 relative to the largest score, or, where the
equilibrated system is so ill-conditioned that no f64 solve can promise
that (RLS without an offset beside a column of mean 10⁹ and spread 10³ is
collinear with the constant column to 10⁻¹²), to ``100·κ·ε``: the
reference reports κ for each system (``rawscale.tolerance``)."""

import numpy as np
import pytest

import ranklet
from rawscale import for_rls, raw_letor, reference, reference_scores, tolerance
from conftest import splitmix_fold, write_svmlight

TOL = 1e-9
LAMBDAS = [0.01, 1.0, 100.0]
LEARNERS = [("rankrls", "equal"), ("rankrls", "pairs"), ("rls", "equal")]


def rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b)))


@pytest.fixture(scope="module")
def data():
    return raw_letor(3, n_queries=40, d=10)


def train_args(algo, weight, lam):
    args = ["--algo", algo, "--lambda", lam, "--precision", "f64"]
    if algo == "rankrls":
        args += ["--query-weight", weight]
    return args


@pytest.mark.parametrize("algo,weight", LEARNERS)
def test_cli_data_and_stats_shards_cut_mid_query_equal_the_reference(cli, tmp_path, data, algo, weight):
    X, y, qid = data
    if algo == "rls":
        X = for_rls(X)
    d = X.shape[1]
    path = tmp_path / "raw.svm"
    write_svmlight(path, X, y, qid)
    # Three shards whose boundaries fall inside queries.
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    sizes = np.diff(np.r_[starts, len(qid)])
    big = starts[sizes >= 4]
    cuts = [0, int(big[3] + 2), int(big[9] + 1), len(y)]
    assert qid[cuts[1] - 1] == qid[cuts[1]] and qid[cuts[2] - 1] == qid[cuts[2]]
    shards = []
    for i, (a, b) in enumerate(zip(cuts, cuts[1:])):
        write_svmlight(tmp_path / f"s{i}.svm", X[a:b], y[a:b], qid[a:b])
        shards.append(tmp_path / f"s{i}.rks")
        cli("stats", "--data", tmp_path / f"s{i}.svm", "--num-features", d, "--query-weight", weight, "-o", shards[-1])
    for lam in LAMBDAS:
        w, kappa = reference(X, y, qid, lam, algo, weight, cond=True)
        expect, tol = reference_scores(X, w), tolerance(kappa)
        m_data, m_stats = tmp_path / f"d{lam}.rkl", tmp_path / f"s{lam}.rkl"
        cli("train", "--data", path, "--num-features", d, "--kernel", "linear", *train_args(algo, weight, lam),
            "-o", m_data)
        cli("train", "--from-stats", *shards, *train_args(algo, weight, lam), "-o", m_stats)
        for m in (m_data, m_stats):
            got = ranklet.load(m.read_bytes()).predict(X)
            assert rel(got, expect) < tol, (m.name, rel(got, expect), kappa)


@pytest.mark.parametrize("algo,weight", LEARNERS)
def test_the_estimators_equal_the_reference(data, algo, weight):
    X, y, qid = data
    if algo == "rls":
        X = for_rls(X)
    for lam in LAMBDAS:
        est = (ranklet.RLS(alpha=lam, precision="f64") if algo == "rls"
               else ranklet.RankRLS(alpha=lam, query_weight=weight, precision="f64"))
        got = est.fit(X, y, qid=qid).predict(X)
        w, kappa = reference(X, y, qid, lam, algo, weight, cond=True)
        assert rel(got, reference_scores(X, w)) < tolerance(kappa), (lam, rel(got, reference_scores(X, w)), kappa)


def test_shuffled_rows_too(data):
    X, y, qid = raw_letor(8, n_queries=30, d=7, shuffle=True)
    for weight in ("equal", "pairs"):
        got = ranklet.RankRLS(alpha=1.0, query_weight=weight, precision="f64").fit(X, y, qid=qid).predict(X)
        w, kappa = reference(X, y, qid, 1.0, "rankrls", weight, cond=True)
        assert rel(got, reference_scores(X, w)) < tolerance(kappa)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as c:
        yield c


def on_dask(algo, lam, weight, **kw):
    import ranklet.dask as rdask

    if algo == "rls":
        return rdask.RLS(alpha=lam, precision="f64", **kw)
    return rdask.RankRLS(alpha=lam, query_weight=weight, precision="f64", **kw)


def dask_parts(X, y, qid, chunks):
    da = pytest.importorskip("dask.array")
    return (da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=(chunks,)),
            da.from_array(qid, chunks=(chunks,)))


@pytest.mark.parametrize("algo,weight", LEARNERS)
def test_dask_with_queries_cut_everywhere_equals_the_reference(client, algo, weight):
    da = pytest.importorskip("dask.array")
    X, y, qid = raw_letor(5, n_queries=30, d=9)
    if algo == "rls":
        X = for_rls(X)
    chunks = (37, 50, 61, 44, len(y) - 192)  # boundaries inside queries
    assert chunks[-1] > 0
    for lam in (0.01, 100.0):
        est = on_dask(algo, lam, weight).fit(*dask_parts(X, y, qid, chunks), client=client)
        got = est.predict(da.from_array(X, chunks=(64, -1))).compute()
        w, kappa = reference(X, y, qid, lam, algo, weight, cond=True)
        assert rel(got, reference_scores(X, w)) < tolerance(kappa), (lam, rel(got, reference_scores(X, w)), kappa)


@pytest.mark.parametrize("algo,weight", LEARNERS)
def test_the_cv_table_and_its_choice_equal_the_reference(client, algo, weight):
    """The one-pass CV over statistics (Dask, queries cut): every fold's
    held-out objective to 1e-9 of the reference's, and the same λ."""
    X, y, qid = raw_letor(12, n_queries=40, d=8)
    if algo == "rls":
        X = for_rls(X)
    k, seed, alphas = 4, 3, [1e-3, 0.01, 1.0, 100.0, 1e4]
    est = on_dask(algo, alphas, weight, cv=k, random_state=seed).fit(*dask_parts(X, y, qid, 53), client=client)
    fold = np.asarray([splitmix_fold(q, seed, k) for q in qid])
    table = np.zeros((k, len(alphas)))
    for f in range(k):
        train, test = fold != f, fold == f
        for j, a in enumerate(alphas):
            w, kappa = reference(X[train], y[train], qid[train], a, algo, weight, cond=True)
            r = y[test] - reference_scores(X[test], w)
            if algo == "rls":
                obj = float(r @ r)
            else:
                obj = 0.0
                for q in np.unique(qid[test]):
                    rq = r[qid[test] == q]
                    obj += float(((rq - rq.mean()) ** 2).sum()) * (len(rq) if weight == "pairs" else 1.0)
            table[f, j] = obj / test.sum()
            got = est.cv_results_[f"split{f}_test_score"][j]
            tol = tolerance(kappa)
            assert abs(got - table[f, j]) <= tol * max(1.0, abs(table[f, j])), (f, a, got, table[f, j], kappa)
    assert est.alpha_ == alphas[int(np.argmin(table.mean(axis=0)))]


def test_rls_beside_a_near_constant_column_is_within_its_conditioning(data):
    """The whole raw X with RLS: the system's κ (≈ 10¹²) bounds what f64
    can promise; every path stays within ``tolerance(κ)``."""
    X, y, qid = data
    for lam in LAMBDAS:
        w, kappa = reference(X, y, qid, lam, "rls", cond=True)
        assert kappa > 1e9  # the reason the other RLS checks drop the column
        got = ranklet.RLS(alpha=lam, precision="f64").fit(X, y).predict(X)
        assert rel(got, reference_scores(X, w)) < tolerance(kappa)


def test_lambda_zero_names_the_constant_and_collinear_features(data):
    X, y, qid = data
    with pytest.raises(ValueError, match="constant|collinear"):
        ranklet.RankRLS(alpha=0.0, precision="f64").fit(X, y, qid=qid)
