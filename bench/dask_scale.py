"""RankRLS on Dask at scale: a generated LETOR-like Parquet set (f32
features, queries of 20–200 consecutive rows, labels 0–4 from a noisy linear
score) fitted by ``ranklet.dask.RankRLS`` on a ``LocalCluster`` of worker
processes with a memory limit per worker; reports the wall time and rows/s
of one fit and of a 5-fold × 10-λ cross-validated fit, and the peak resident
memory of each worker process (its ``ru_maxrss``).

    python bench/dask_scale.py --rows 1000000 --dir /tmp/letor_1e6

Prints one JSON line. The data set is written once to ``--dir`` (reused if
it is there with the same size) and deleted afterwards unless ``--keep``.
Run it with the extension built (``python/ranklet/_ranklet.abi3.so``, as
``scripts/test.sh`` makes it) and ``python/`` on ``PYTHONPATH``."""

import argparse
import json
import os
import resource
import shutil
import time

import numpy as np


def generate(path, rows, d, seed, rows_per_file):
    """Parquet files of ``rows_per_file`` rows each; queries run on across
    files (the statistics merge them by qid)."""
    import pandas as pd

    os.makedirs(path, exist_ok=True)
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d).astype(np.float32)
    sizes = rng.integers(20, 201, size=rows // 20 + 1)
    sizes = sizes[: int(np.searchsorted(np.cumsum(sizes), rows)) + 1]
    qid = np.repeat(np.arange(1, len(sizes) + 1, dtype=np.int64), sizes)[:rows]
    names = [f"f{j}" for j in range(d)]
    for i, a in enumerate(range(0, rows, rows_per_file)):
        b = min(a + rows_per_file, rows)
        x = rng.random((b - a, d), dtype=np.float32)
        s = (x - 0.5) @ w + rng.normal(scale=1.0, size=b - a).astype(np.float32)
        y = np.digitize(s, np.quantile(s, [0.5, 0.75, 0.9, 0.97])).astype(np.float32)
        frame = pd.DataFrame(x, columns=names, copy=False)
        frame["label"] = y
        frame["qid"] = qid[a:b]
        frame.to_parquet(os.path.join(path, f"part{i:05d}.parquet"), index=False)
    with open(os.path.join(path, "_rows"), "w") as f:
        f.write(f"{rows} {d} {seed}\n")
    return len(np.unique(qid))


def worker_peak_rss():
    """Peak resident memory of this process, bytes (Linux: ru_maxrss in kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--features", type=int, default=136)
    p.add_argument("--dir", default="/tmp/ranklet_dask_scale")
    p.add_argument("--rows-per-file", type=int, default=250_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--memory-limit", default="2GB")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeat", type=int, default=1, help="time each fit this many times")
    p.add_argument("--keep", action="store_true", help="keep the generated data set")
    a = p.parse_args()

    import dask.dataframe as dd
    import distributed

    import ranklet.dask

    stamp = os.path.join(a.dir, "_rows")
    want = f"{a.rows} {a.features} {a.seed}\n"
    t0 = time.perf_counter()
    if not (os.path.exists(stamp) and open(stamp).read() == want):
        shutil.rmtree(a.dir, ignore_errors=True)
        generate(a.dir, a.rows, a.features, a.seed, a.rows_per_file)
    gen_s = time.perf_counter() - t0
    size = sum(os.path.getsize(os.path.join(a.dir, f)) for f in os.listdir(a.dir))

    out = dict(rows=a.rows, features=a.features, parquet_bytes=size, generate_s=round(gen_s, 2))
    try:
        with distributed.LocalCluster(
            n_workers=a.workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=a.memory_limit,
            dashboard_address=None,
        ) as cluster, distributed.Client(cluster) as client:
            df = dd.read_parquet(a.dir)
            out["partitions"] = df.npartitions
            # Warm-up (imports on the workers), not timed.
            ranklet.dask.RankRLS().fit(df.partitions[0], "label", "qid", client=client)
            runs = [
                ("fit", ranklet.dask.RankRLS(alpha=1.0)),
                ("cv5x10", ranklet.dask.RankRLS(alpha=list(np.logspace(-3, 3, 10)), cv=5)),
            ]
            for name, est in runs:
                times = []
                for _ in range(a.repeat):
                    t = time.perf_counter()
                    est.fit(df, "label", "qid", client=client)
                    times.append(time.perf_counter() - t)
                out[f"{name}_s"] = [round(s, 2) for s in times]
                out[f"{name}_rows_per_s"] = round(a.rows / min(times))
                out[f"{name}_stats_bytes"] = len(est.stats_)
            out["queries"] = est.n_queries_
            out["chosen_alpha"] = est.alpha_
            peaks = client.run(worker_peak_rss)
            out["worker_peak_rss_mb"] = sorted(round(v / 2**20) for v in peaks.values())
            out["client_peak_rss_mb"] = round(worker_peak_rss() / 2**20)
    finally:
        if not a.keep:
            shutil.rmtree(a.dir, ignore_errors=True)
    out["load_avg"] = os.getloadavg()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
