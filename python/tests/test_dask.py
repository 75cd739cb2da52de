"""``ranklet.dask`` on a real ``distributed.LocalCluster`` of two worker
processes: the model equals the in-memory fit and ``ranklet train
--from-stats`` whatever the partitioning (queries cut in the middle, rows
shuffled), the one-pass CV table equals separate fold fits, bad input is
refused naming the partition and row, and a worker killed during a fit
changes nothing."""

import os
import signal
import threading
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
import dask  # noqa: E402
import pandas as pd  # noqa: E402

import ranklet  # noqa: E402
import ranklet.dask as rdask  # noqa: E402
from ranklet import _ranklet  # noqa: E402
from conftest import letor, splitmix_fold, write_svmlight  # noqa: E402

TOL = 1e-10


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as c:
        yield c


def rel(a, b):
    return np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b))


def mid_query_chunks(qid, rng):
    """Partition sizes whose boundaries fall inside queries: every query of
    ≥ 2 rows is cut in two at a random row, and a few boundaries more."""
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    ends = np.r_[starts[1:], len(qid)]
    cuts = {int(s + rng.integers(1, e - s)) for s, e in zip(starts, ends) if e - s >= 2}
    cuts |= set(rng.integers(1, len(qid), size=3).tolist())
    bounds = [0, *sorted(cuts), len(qid)]
    return tuple(int(b - a) for a, b in zip(bounds, bounds[1:]))


def as_dask(X, y, qid, chunks):
    return da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=(chunks,)), da.from_array(qid, chunks=(chunks,))


def in_memory(algo, alpha, weight):
    if algo == "rls":
        return ranklet.RLS(alpha=alpha, precision="f64")
    return ranklet.RankRLS(alpha=alpha, query_weight=weight, precision="f64")


def on_dask(algo, alpha, weight, **kw):
    if algo == "rls":
        return rdask.RLS(alpha=alpha, precision="f64", **kw)
    return rdask.RankRLS(alpha=alpha, query_weight=weight, precision="f64", **kw)


LEARNERS = [("rankrls", "equal"), ("rankrls", "pairs"), ("rls", "equal")]


@pytest.mark.parametrize("algo,weight", LEARNERS)
@pytest.mark.parametrize("seed", [0, 1])
def test_queries_cut_in_half_give_the_in_memory_model(client, algo, weight, seed):
    X, y, qid = letor(seed, n_queries=12, shuffle=False)
    chunks = mid_query_chunks(qid, np.random.default_rng(seed))
    assert len(chunks) > 12  # every query is split
    est = on_dask(algo, 0.7, weight).fit(*as_dask(X, y, qid, chunks), client=client)
    assert est.n_partitions_ == len(chunks)
    assert (est.n_rows_, est.n_queries_) == (len(y), len(np.unique(qid)))
    ref = in_memory(algo, 0.7, weight).fit(X, y, qid=qid)
    scores = est.predict(da.from_array(X, chunks=(17, -1)))
    assert isinstance(scores, da.Array)
    assert rel(scores.compute(), ref.predict(X)) < TOL


@pytest.mark.parametrize("algo,weight", LEARNERS)
def test_shuffled_rows_with_kept_queries_give_the_in_memory_model(client, algo, weight):
    X, y, qid = letor(5, n_queries=10, shuffle=True)
    rng = np.random.default_rng(5)
    bounds = [0, *sorted(set(rng.integers(1, len(y), size=6).tolist())), len(y)]
    chunks = tuple(b - a for a, b in zip(bounds, bounds[1:]))
    est = on_dask(algo, 0.3, weight, keep_queries=True).fit(*as_dask(X, y, qid, chunks), client=client)
    ref = in_memory(algo, 0.3, weight).fit(X, y, qid=qid)
    assert rel(est.predict(da.from_array(X, chunks=(50, -1))).compute(), ref.predict(X)) < TOL


def test_random_partitionings_seeded_loop(client):
    """Ten seeded random partitionings (1 to 12 partitions, boundaries
    anywhere, rows in query order or shuffled), each learner: the same
    model as the in-memory fit."""
    for seed in range(10):
        rng = np.random.default_rng(100 + seed)
        shuffled = bool(seed % 2)
        X, y, qid = letor(100 + seed, n_queries=int(rng.integers(3, 12)), shuffle=shuffled)
        k = int(rng.integers(0, 12))
        bounds = [0, *sorted(set(rng.integers(1, len(y), size=k).tolist())), len(y)]
        chunks = tuple(b - a for a, b in zip(bounds, bounds[1:]))
        algo, weight = LEARNERS[seed % len(LEARNERS)]
        alpha = float(10 ** rng.uniform(-2, 2))
        est = on_dask(algo, alpha, weight, keep_queries=shuffled, split_every=2 + seed % 3).fit(
            *as_dask(X, y, qid, chunks), client=client
        )
        ref = in_memory(algo, alpha, weight).fit(X, y, qid=qid)
        got = est.predict(da.from_array(X, chunks=(31, -1))).compute()
        assert rel(got, ref.predict(X)) < TOL, (seed, chunks, algo, weight)


def test_the_model_is_the_cli_from_stats_model(client, cli, tmp_path):
    """Shards of a file cut mid-query through ``ranklet stats``, merged by
    ``ranklet train --from-stats``: the same model as the Dask fit (the
    files equal once their metadata is stripped, for f32 models; the scores
    to 1e-10 for f64 ones), and the Dask fit's merged statistics train the
    same model through the CLI."""
    X, y, qid = letor(7, n_queries=9, shuffle=False)
    d = X.shape[1]
    cuts = [0, 20, 47, len(y)]
    assert qid[19] == qid[20] and qid[46] == qid[47]  # the files cut queries
    shards = []
    for i, (a, b) in enumerate(zip(cuts, cuts[1:])):
        write_svmlight(tmp_path / f"p{i}.svm", X[a:b], y[a:b], qid[a:b])
        shards.append(tmp_path / f"p{i}.rks")
        cli("stats", "--data", tmp_path / f"p{i}.svm", "--num-features", d, "--query-weight", "pairs", "-o", shards[-1])
    chunks = tuple(b - a for a, b in zip(cuts, cuts[1:]))
    for precision in ("f64", "f32"):
        cli_model = tmp_path / f"cli_{precision}.rkl"
        cli("train", "--from-stats", *shards, "--algo", "rankrls", "--query-weight", "pairs", "--lambda", "0.5",
            "--precision", precision, "-o", cli_model)
        est = rdask.RankRLS(alpha=0.5, query_weight="pairs", precision=precision).fit(
            *as_dask(X, y, qid, chunks), client=client
        )
        dask_model = tmp_path / f"dask_{precision}.rkl"
        est.save(dask_model)
        cli_scores = ranklet.load(cli_model.read_bytes()).predict(X)
        assert rel(est.predict(da.from_array(X, chunks=(25, -1))).compute(), cli_scores) < TOL
        if precision == "f64":
            cli_f64 = cli_scores
        if precision == "f32":
            stripped = []
            for m in (cli_model, dask_model):
                cli("export", "-m", m, "--strip-metadata", "-o", m.with_suffix(".stripped"))
                stripped.append(m.with_suffix(".stripped").read_bytes())
            assert stripped[0] == stripped[1]
    merged = tmp_path / "merged.rks"
    merged.write_bytes(est.stats_)
    again = tmp_path / "again.rkl"
    cli("train", "--from-stats", merged, "--algo", "rankrls", "--query-weight", "pairs", "--lambda", "0.5",
        "--precision", "f64", "-o", again)
    assert rel(ranklet.load(again.read_bytes()).predict(X), cli_f64) < TOL


def held_out(algo, weight, r, qid):
    """``(s − Xw)ᵀL(s − Xw)`` per row of the residuals ``r``."""
    if algo == "rls":
        return float(r @ r) / len(r)
    total = 0.0
    for q in np.unique(qid):
        rq = r[qid == q]
        dev = float(((rq - rq.mean()) ** 2).sum())
        total += dev * (len(rq) if weight == "pairs" else 1.0)
    return total / len(r)


@pytest.mark.parametrize("algo,weight", LEARNERS)
def test_one_pass_cv_table_equals_separate_fold_fits(client, algo, weight):
    X, y, qid = letor(11, n_queries=16, shuffle=True)
    k, seed, alphas = 4, 3, [0.01, 0.1, 1.0, 10.0, 100.0]
    est = on_dask(algo, alphas, weight, cv=k, random_state=seed, keep_queries=True).fit(
        *as_dask(X, y, qid, 23), client=client
    )
    fold = np.asarray([splitmix_fold(q, seed, k) for q in qid])
    for f in range(k):
        train, test = fold != f, fold == f
        assert test.any() and train.any()
        for j, a in enumerate(alphas):
            model = in_memory(algo, a, weight).fit(X[train], y[train], qid=qid[train])
            expect = held_out(algo, weight, y[test] - model.predict(X[test]), qid[test])
            assert abs(est.cv_results_[f"split{f}_test_score"][j] - expect) < TOL * max(1.0, abs(expect))
    means = np.mean([est.cv_results_[f"split{f}_test_score"] for f in range(k)], axis=0)
    assert est.best_index_ == int(np.argmin(means))
    assert est.alpha_ == alphas[est.best_index_]
    ref = in_memory(algo, est.alpha_, weight).fit(X, y, qid=qid)
    assert rel(est.predict(da.from_array(X, chunks=(40, -1))).compute(), ref.predict(X)) < TOL


def test_parquet_and_csv_dataframes(client, tmp_path):
    X, y, qid = letor(13, n_queries=10, shuffle=False)
    X = X.astype(np.float32)
    names = [f"f{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)
    frame["label"], frame["qid"] = y, qid
    pq = tmp_path / "pq"
    pq.mkdir()
    for i, (a, b) in enumerate([(0, 15), (15, 41), (41, len(y))]):  # files cut queries
        frame.iloc[a:b].to_parquet(pq / f"part{i}.parquet")
    frame.to_csv(tmp_path / "rows.csv", index=False)
    # Each source against the in-memory fit on its own values as pandas
    # reads them (CSV holds the decimal digits of the f32 values).
    for df, whole in (
        (dd.read_parquet(str(pq)), pd.read_parquet(pq)),
        (dd.read_csv(str(tmp_path / "rows.csv"), blocksize=1000), pd.read_csv(tmp_path / "rows.csv")),
    ):
        assert df.npartitions >= 3
        est = rdask.RankRLS(alpha=0.2, precision="f64").fit(df, "label", "qid", client=client)
        assert list(est.feature_names_in_) == names
        assert ranklet.load(est.to_bytes()).metadata["feature_names"]
        scores = est.predict(df)
        assert isinstance(scores, da.Array)
        Xw = whole[names].to_numpy(dtype=np.float64)
        ref = ranklet.RankRLS(alpha=0.2, precision="f64").fit(Xw, whole["label"], qid=whole["qid"].to_numpy())
        assert rel(scores.compute(), ref.predict(Xw)) < TOL


def test_nan_in_partition_3_names_the_partition_and_row(client):
    X, y, qid = letor(17, n_queries=8, shuffle=False)
    X = X.copy()
    X[3 * 10 + 4, 1] = np.nan
    with pytest.raises(ValueError, match=r"partition 3: X\[4, 1\]: non-finite feature value NaN"):
        rdask.RankRLS().fit(*as_dask(X, y, qid, 10), client=client)
    y = y.copy()
    y[2 * 10 + 7] = np.inf
    X[3 * 10 + 4, 1] = 0.0
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]).assign(label=y, qid=qid)
    df = dd.from_pandas(frame, chunksize=10, sort=False)
    with pytest.raises(ValueError, match=r"partition 2: y\[7\]: non-finite label inf"):
        rdask.RankRLS().fit(df, "label", "qid", client=client)


def test_bad_partitionings_and_widths_are_refused(client):
    X, y, qid = letor(19, n_queries=6, shuffle=True)
    # Shuffled rows without keep_queries: a query resumes inside a partition.
    with pytest.raises(ValueError, match=r"partition 0: row \d+: rows of qid \d+ resume .*keep_queries"):
        rdask.RankRLS().fit(*as_dask(X, y, qid, len(y)), client=client)
    # A query sealed in one partition and met again in another.
    Xs, ys, qs = letor(19, n_queries=6, shuffle=False)
    inner = np.unique(qs)[1]  # a query inside partition 0, sealed there
    order = np.r_[np.arange(len(ys)), np.flatnonzero(qs == inner)[:1]]  # one of its rows again, at the end
    Xs, ys, qs = Xs[order], ys[order], qs[order]
    with pytest.raises(ValueError, match=rf"qid {inner} has rows in partition 0 and in partition 1, but partition 0"):
        rdask.RankRLS().fit(*as_dask(Xs, ys, qs, (len(ys) - 3, 3)), client=client)
    # A partition narrower than the others.
    n0 = 20
    blocks = [
        da.from_delayed(dask.delayed(lambda: X[:n0])(), shape=(n0, X.shape[1]), dtype=float),
        da.from_delayed(dask.delayed(lambda: X[n0:, :-1])(), shape=(len(y) - n0, X.shape[1]), dtype=float),
    ]
    narrow = da.concatenate(blocks)
    with pytest.raises(ValueError, match=r"partition 1: d = 4, but partition 0 has d = 5"):
        rdask.RankRLS(keep_queries=True).fit(narrow, da.from_array(y, chunks=(n0,)), da.from_array(qid, chunks=(n0,)),
                                            client=client)


def test_kpcrank_is_the_cli_nystrom_from_stats_model(client, cli, tmp_path):
    """Dask KPCRank on partitions cut mid-query equals ``ranklet stats
    --landmarks`` (its landmarks) on files of the same rows cut elsewhere,
    merged by ``ranklet train --from-stats --algo kpcrank``: the same CV
    table over (λ, p) and scores to 1e-9; and the landmarks it chose from
    all the rows are those ``ranklet stats --kernel --basis`` chooses from
    the whole file."""
    X, y, qid = letor(11, n_queries=10, shuffle=False)
    svm = tmp_path / "all.svm"
    write_svmlight(svm, X, y, qid)
    chunks = mid_query_chunks(qid, np.random.default_rng(3))
    est = rdask.KPCRank(
        n_components=[3, 6], alpha=[0.0, 0.5], gamma=0.2, n_basis=15, cv=3, precision="f64", split_every=3
    ).fit(*as_dask(X, y, qid, chunks), client=client)
    assert est.n_partitions_ == len(chunks) and (est.n_rows_, est.n_queries_) == (len(y), 10)
    # The landmarks: the CLI's choice from the same rows.
    whole = cli("stats", "--data", svm, "--kernel", "rbf:0.2", "--basis", 15, "--cv", 3, "-o", tmp_path / "whole.rks")
    assert est.nystrom_map_ in whole.stderr, (est.nystrom_map_, whole.stderr)
    landmarks = tmp_path / "L.rks"
    landmarks.write_bytes(est.landmarks_)
    cuts = [0, 23, 61, len(y)]
    shards = []
    for i, (a, b) in enumerate(zip(cuts, cuts[1:])):
        write_svmlight(tmp_path / f"p{i}.svm", X[a:b], y[a:b], qid[a:b])
        shards.append(tmp_path / f"p{i}.rks")
        cli("stats", "--data", tmp_path / f"p{i}.svm", "--landmarks", landmarks, "--cv", 3, "-o", shards[-1])
    model = tmp_path / "cli.rkl"
    out = cli("train", "--from-stats", *shards, "--algo", "kpcrank", "--components", "3,6", "--lambda", "0,0.5",
              "--cv", 3, "--precision", "f64", "-o", model)
    table = [line.split("\t") for line in out.stdout.splitlines() if line.startswith("lambda=")]
    assert len(table) == 4
    # The CLI's table at full precision: its model's cv.i metadata (the
    # printed table has 6 decimals).
    meta = ranklet.load(model.read_bytes()).metadata
    cli_means = [float(meta[f"cv.{i}"].split(" mean=")[1].split()[0]) for i in range(4)]
    assert rel(est.cv_results_["mean_test_score"], cli_means) < TOL
    points = [tuple(float(kv.split("=")[1]) for kv in r[0].split()) for r in table]
    assert points == [(p["alpha"], p["n_components"]) for p in est.cv_results_["params"]]
    assert est.best_index_ == int(np.argmin([float(r[1]) for r in table]))
    cli_scores = ranklet.load(model.read_bytes()).predict(X)
    got = est.predict(da.from_array(X, chunks=(29, -1))).compute()
    assert np.max(np.abs(got - cli_scores)) < 1e-9 * max(1.0, np.max(np.abs(cli_scores)))
    # The same model from the same landmarks given back as a file.
    again = rdask.KPCRank(n_components=[3, 6], alpha=[0.0, 0.5], landmarks=landmarks, cv=3, precision="f64").fit(
        *as_dask(X, y, qid, (40, len(y) - 40)), client=client
    )
    assert np.max(np.abs(again.predict(da.from_array(X, chunks=(50, -1))).compute() - cli_scores)) < 1e-9 * max(
        1.0, np.max(np.abs(cli_scores))
    )


NYSTROM_CASES = [("rankrls", "equal", "sealed"), ("rankrls", "pairs", "shuffled"), ("rls", "equal", "random")]


@pytest.mark.parametrize("algo,weight,cut", NYSTROM_CASES)
def test_nystrom_rls_and_rankrls_are_the_cli_models(client, cli, tmp_path, algo, weight, cut):
    """RankRLS and RLS with ``kernel="rbf"``: the landmarks chosen on the
    client are those ``ranklet stats --kernel --basis`` chooses on the
    whole file; the scores and the CV table (mean and std at full
    precision, from the CLI model's ``cv.i`` metadata) equal ``ranklet
    stats --landmarks`` on two files of the same rows cut elsewhere +
    ``train --from-stats`` to 1e-10 relative — on partitions that cut every
    query (sealed), shuffled rows with ``keep_queries``, or random
    boundaries, for both weightings and RLS; ``predict`` is lazy; the same
    map given back as ``landmarks=`` gives the same model."""
    shuffled = cut == "shuffled"
    X, y, qid = letor(41, n_queries=10, shuffle=shuffled)
    rng = np.random.default_rng(41)
    if cut == "sealed":
        chunks = mid_query_chunks(qid, rng)
    else:
        bounds = [0, *sorted(set(rng.integers(1, len(y), size=5).tolist())), len(y)]
        chunks = tuple(b - a for a, b in zip(bounds, bounds[1:]))
    k, seed, alphas = 3, 5, [0.05, 1.0]
    common = dict(cv=k, random_state=seed, keep_queries=shuffled, split_every=3)
    est = on_dask(algo, alphas, weight, kernel="rbf", gamma=0.2, n_basis=12, **common).fit(
        *as_dask(X, y, qid, chunks), client=client
    )
    assert est.n_basis_ == 12 and not hasattr(est, "coef_")
    svm = tmp_path / "all.svm"
    write_svmlight(svm, X, y, qid)
    keep = ["--keep-queries"] if shuffled else []
    whole = cli("stats", "--data", svm, "--kernel", "rbf:0.2", "--basis", 12, *keep, "-o", tmp_path / "whole.rks")
    assert est.nystrom_map_ in whole.stderr, (est.nystrom_map_, whole.stderr)
    landmarks = tmp_path / "L.rks"
    landmarks.write_bytes(est.landmarks_)
    shards, half = [], len(y) // 2 + 3
    for i, (a, b) in enumerate([(0, half), (half, len(y))]):
        write_svmlight(tmp_path / f"p{i}.svm", X[a:b], y[a:b], qid[a:b])
        shards.append(tmp_path / f"p{i}.rks")
        cli("stats", "--data", tmp_path / f"p{i}.svm", "--landmarks", landmarks, "--cv", k, "--seed", seed,
            "--query-weight", weight, *keep, "-o", shards[-1])
    model = tmp_path / "cli.rkl"
    cli("train", "--from-stats", *shards, "--algo", algo, "--query-weight", weight, "--lambda", "0.05,1", "--cv", k,
        "--precision", "f64", "-o", model)
    cli_model = ranklet.load(model.read_bytes())
    rows = [cli_model.metadata[f"cv.{i}"] for i in range(len(alphas))]
    field = lambda row, key: float(row.split(f" {key}=")[1].split()[0])  # noqa: E731
    means = np.array([field(r, "mean") for r in rows])
    assert rel(est.cv_results_["mean_test_score"], means) < TOL
    assert np.max(np.abs(est.cv_results_["std_test_score"] - [field(r, "std") for r in rows])) < TOL * np.max(means)
    assert est.alpha_ == float(cli_model.metadata["lambda"])
    scores = est.predict(da.from_array(X, chunks=(29, -1)))
    assert isinstance(scores, da.Array)
    cli_scores = cli_model.predict(X)
    assert rel(scores.compute(), cli_scores) < TOL
    if cut == "random":
        again = on_dask(algo, alphas, weight, landmarks=landmarks, **common).fit(
            *as_dask(X, y, qid, (40, len(y) - 40)), client=client
        )
        assert rel(again.predict(da.from_array(X, chunks=(50, -1))).compute(), cli_scores) < TOL


def test_kpcrank_refuses_a_partition_of_another_width(client):
    X, y, qid = letor(23, n_queries=6, shuffle=False)
    n0 = 30
    blocks = [
        da.from_delayed(dask.delayed(lambda: X[:n0])(), shape=(n0, X.shape[1]), dtype=float),
        da.from_delayed(dask.delayed(lambda: X[n0:, :-1])(), shape=(len(y) - n0, X.shape[1]), dtype=float),
    ]
    narrow = da.concatenate(blocks)
    with pytest.raises(ValueError, match=r"partition 1: X has 4 feature columns, but the landmarks have 5 features"):
        rdask.KPCRank(n_components=2, n_basis=10, sample=n0).fit(
            narrow, da.from_array(y, chunks=(n0,)), da.from_array(qid, chunks=(n0,)), client=client
        )
    with pytest.raises(ValueError, match="needs cv=K"):
        rdask.KPCRank(n_components=[2, 3]).fit(*as_dask(X, y, qid, 20), client=client)


def test_the_extension_refuses_mismatched_or_corrupted_statistics():
    X, y, qid = letor(23, n_queries=4)
    opts = dict(query_weight="equal", cv=None, seed=1, keep_queries=True)
    a = _ranklet.stats_rows(X, y, qid, source="left", **opts)
    b = _ranklet.stats_rows(np.ascontiguousarray(X[:, :3]), y, qid, source="right", **opts)
    with pytest.raises(ValueError, match="right: d = 3, but left has d = 5"):
        _ranklet.merge_stats_py([(a, "left"), (b, "right")])
    c = _ranklet.stats_rows(X, y, qid, source="c", **{**opts, "cv": 3})
    with pytest.raises(ValueError, match=r"c: folds 3 \(seed 1\), but left has folds 1 \(seed 1\)"):
        _ranklet.merge_stats_py([(a, "left"), (c, "c")])
    bad = bytearray(a)
    bad[len(bad) // 2] ^= 0x40
    with pytest.raises(ValueError, match="^corrupt: "):
        _ranklet.merge_stats_py([(bytes(bad), "corrupt"), (a, "left")])
    # A negative qid, and statistics of no rows (an empty partition merges).
    with pytest.raises(ValueError, match=r"^neg: qid\[2\]: negative query id -4$"):
        _ranklet.stats_rows(X[:3], y[:3], np.array([1, 1, -4]), source="neg", **opts)
    empty = _ranklet.stats_rows(np.zeros((0, 5)), np.zeros(0), np.zeros(0, dtype=np.int64), source="e", **opts)
    assert _ranklet.merge_stats_py([(empty, "e"), (a, "left")]) == _ranklet.merge_stats_py([(a, "left")])
    with pytest.raises(ValueError, match="^e: the statistics hold no rows$"):
        _ranklet.fit_stats_py(empty, source="e", algo="rankrls", query_weight="equal", lambdas=[1.0], cv=None,
                              precision="f64", metadata=[])
    # F-order and float32 features give the statistics of their values.
    f = _ranklet.stats_rows(np.asfortranarray(X), y, qid, source="f", **opts)
    assert f == a
    x32 = X.astype(np.float32)
    assert _ranklet.stats_rows(x32, y, qid, source="s", **opts) == _ranklet.stats_rows(
        x32.astype(np.float64), y, qid, source="s", **opts
    )


def test_a_worker_killed_during_a_fit_changes_nothing(client):
    """Partitions that load slowly (half a second each, more of them than
    workers): once the first partitions' statistics are under way, one
    worker process is killed; its nanny starts a new one, Dask recomputes
    the lost tasks, and the fit ends with the model of an undisturbed one."""
    X, y, qid = letor(29, n_queries=20, shuffle=False)
    n, rows = len(y), 16

    def load(a, b):
        time.sleep(0.5)
        return X[a:b]

    def slow_X():
        parts = [
            da.from_delayed(dask.delayed(load, pure=False)(a, min(a + rows, n)), shape=(min(a + rows, n) - a, X.shape[1]),
                            dtype=float)
            for a in range(0, n, rows)
        ]
        return da.concatenate(parts)

    chunks = tuple(min(a + rows, n) - a for a in range(0, n, rows))
    _, yd, qd = as_dask(X, y, qid, chunks)
    assert len(chunks) >= 8
    pids = client.run(os.getpid)
    result, errors = {}, []

    def fit():
        try:
            result["est"] = rdask.RankRLS(alpha=0.4, precision="f64").fit(slow_X(), yd, qd, client=client)
        except Exception as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    thread = threading.Thread(target=fit)
    thread.start()
    victim = None
    for _ in range(400):  # until a worker is busy with this fit (≤ 20 s)
        busy = [w for w, tasks in client.processing().items() if tasks]
        if busy:
            victim = busy[0]
            break
        time.sleep(0.05)
    assert victim is not None and thread.is_alive()
    os.kill(pids[victim], signal.SIGKILL)
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert not errors, errors
    client.wait_for_workers(2, timeout=60)
    assert pids[victim] not in client.run(os.getpid).values()  # it did die
    ref = ranklet.RankRLS(alpha=0.4, precision="f64").fit(X, y, qid=qid)
    est = result["est"]
    assert est.n_rows_ == n
    assert rel(est.predict(da.from_array(X, chunks=(50, -1))).compute(), ref.predict(X)) < TOL


def test_without_a_client_the_current_one_or_a_local_cluster(client, tmp_path):
    """No ``client``: the current one is used (the module's cluster here);
    in a program with none, a ``LocalCluster`` of worker processes is
    started for the fit and closed after it (a fresh interpreter)."""
    X, y, qid = letor(31, n_queries=6, shuffle=False)
    ref = ranklet.RankRLS(alpha=0.9, precision="f64").fit(X, y, qid=qid)
    est = rdask.RankRLS(alpha=0.9, precision="f64").fit(*as_dask(X, y, qid, 13))
    assert rel(est.predict(da.from_array(X, chunks=(13, -1))).compute(), ref.predict(X)) < TOL
    np.savez(tmp_path / "rows.npz", X=X, y=y, qid=qid)
    script = tmp_path / "alone.py"
    script.write_text(
        "import sys, numpy as np, dask.array as da, distributed, ranklet.dask\n"
        "if __name__ == '__main__':\n"
        "    r = np.load(sys.argv[1])\n"
        "    est = ranklet.dask.RankRLS(alpha=0.9, precision='f64').fit(\n"
        "        da.from_array(r['X'], chunks=(13, -1)), da.from_array(r['y'], chunks=13),\n"
        "        da.from_array(r['qid'], chunks=13))\n"
        "    try:\n"
        "        distributed.get_client()\n"
        "        print('a client is left')\n"
        "    except ValueError:\n"
        "        pass\n"
        "    sys.stdout.buffer.write(est.to_bytes())\n"
    )
    import subprocess
    import sys

    out = subprocess.run([sys.executable, str(script), str(tmp_path / "rows.npz")], capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr.decode()
    assert rel(ranklet.load(out.stdout).predict(X), ref.predict(X)) < TOL
