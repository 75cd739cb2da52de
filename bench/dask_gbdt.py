"""Rankers on Dask side by side, for the reader: ``ranklet.dask.RankRLS``
against XGBoost's and LightGBM's Dask rankers on the same LETOR-like
Parquet set (``bench/dask_scale.py``'s generator: f32 features, queries of
20–200 consecutive rows running on across files, labels 0–4 from a noisy
linear score), on one ``LocalCluster`` of worker processes.

Queries with ``qid % 5 == 0`` are held out; the rest train. Reported per
learner: the time from the Parquet files to a model (reading included) and
NDCG@10 on the held-out queries (``ranklet.metrics.ndcg``, the same code
for all three).

- ranklet: ``RankRLS(alpha=1)`` (linear; the statistics are exact for any
  partitioning, so the files are read as they are);
- XGBoost: ``xgboost.dask.DaskXGBRanker`` (``rank:ndcg``, 100 trees of
  depth 6, ``hist``). XGBoost's Dask ranker needs each query's rows
  together and sorted by qid within a partition, so its time includes a
  shuffle of the rows by qid and a sort in each partition;
- LightGBM: ``lightgbm.DaskLGBMRanker`` (``lambdarank``, 100 trees of 31
  leaves), which needs whole queries per partition and the group sizes of
  each partition: the same shuffle and sort, then the group sizes.

Not dependencies of the repository: ``pip install xgboost lightgbm`` into
the environment that has ``dask[dataframe]``, ``distributed`` and the
extension. Run:

    PYTHONPATH=python python bench/dask_gbdt.py --rows 1000000 --dir /tmp/rk_gbdt

Prints one JSON line."""

import argparse
import json
import os
import shutil
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dask_scale import generate, worker_peak_rss  # noqa: E402


def by_query(df):
    """Every query's rows in one partition, sorted by qid in each (what
    the GBDT rankers need)."""
    return df.shuffle("qid").map_partitions(lambda p: p.sort_values("qid", kind="stable"))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--features", type=int, default=136)
    p.add_argument("--dir", default="/tmp/ranklet_dask_gbdt")
    p.add_argument("--rows-per-file", type=int, default=250_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--memory-limit", default="4GB")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--trees", type=int, default=100)
    p.add_argument("--keep", action="store_true", help="keep the generated data set")
    a = p.parse_args()

    import dask.dataframe as dd
    import distributed
    import lightgbm
    import xgboost

    import ranklet.dask
    from ranklet.metrics import ndcg

    stamp = os.path.join(a.dir, "_rows")
    if not (os.path.exists(stamp) and open(stamp).read() == f"{a.rows} {a.features} {a.seed}\n"):
        shutil.rmtree(a.dir, ignore_errors=True)
        generate(a.dir, a.rows, a.features, a.seed, a.rows_per_file)
    features = [f"f{j}" for j in range(a.features)]
    out = dict(rows=a.rows, features=a.features, workers=a.workers, memory_limit=a.memory_limit,
               xgboost=xgboost.__version__, lightgbm=lightgbm.__version__, trees=a.trees)
    try:
        with distributed.LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True,
                                      memory_limit=a.memory_limit, dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            def frames():
                df = dd.read_parquet(a.dir)
                return df[df.qid % 5 != 0], df[df.qid % 5 == 0]

            # The held-out queries, collected once for scoring (not timed).
            _, test = frames()
            test = test.compute()
            Xt, yt, qt = test[features].to_numpy(np.float32), test["label"].to_numpy(), test["qid"].to_numpy()
            out["test_rows"], out["test_queries"] = len(test), int(len(np.unique(qt)))
            # Warm-up of the workers' imports, not timed.
            train, _ = frames()
            ranklet.dask.RankRLS().fit(train.partitions[0], "label", "qid", client=client)

            results = {}
            t = time.perf_counter()
            train, _ = frames()
            est = ranklet.dask.RankRLS(alpha=1.0).fit(train, "label", "qid", client=client)
            results["ranklet RankRLS (linear)"] = (time.perf_counter() - t, est.model_.predict(Xt))

            t = time.perf_counter()
            train, _ = frames()
            train = by_query(train).persist()
            xgb = xgboost.dask.DaskXGBRanker(objective="rank:ndcg", n_estimators=a.trees, max_depth=6,
                                             tree_method="hist", eval_metric="ndcg@10")
            xgb.client = client
            xgb.fit(train[features], train["label"], qid=train["qid"])
            results["xgboost DaskXGBRanker"] = (time.perf_counter() - t, xgb.get_booster().inplace_predict(Xt))
            del train

            t = time.perf_counter()
            train, _ = frames()
            train = by_query(train).persist()
            group = train["qid"].map_partitions(
                lambda q: q.groupby(q, sort=False).size().reset_index(drop=True), meta=("qid", "i8")
            ).to_dask_array(lengths=True)
            lgb = lightgbm.DaskLGBMRanker(objective="lambdarank", n_estimators=a.trees, num_leaves=31,
                                          verbose=-1, client=client)
            lgb.fit(train[features].to_dask_array(lengths=True), train["label"].to_dask_array(lengths=True),
                    group=group)
            results["lightgbm DaskLGBMRanker"] = (time.perf_counter() - t, lgb.to_local().predict(Xt))

            out["results"] = {name: {"seconds_to_model": round(s, 2), "train_rows_per_s": round((a.rows - len(test)) / s),
                                     "ndcg@10_held_out": round(float(ndcg(yt, np.asarray(pred, np.float64), qt, k=10)), 4)}
                              for name, (s, pred) in results.items()}
            out["worker_peak_rss_mb"] = sorted(round(v / 2**20) for v in client.run(worker_peak_rss).values())
    finally:
        if not a.keep:
            shutil.rmtree(a.dir, ignore_errors=True)
    out["load_avg"] = os.getloadavg()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
