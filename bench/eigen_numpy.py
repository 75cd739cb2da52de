#!/usr/bin/env python3
"""numpy/scipy side of bench/eigen_vs_numpy.sh.

  eigen_numpy.py time --n N [--top K] [--repeat R] [--warmup W] [--seed S]
      times numpy.linalg.eigh (K = 0) or scipy.linalg.eigh(subset_by_index=
      [N-K, N-1]) on the same matrix as `ranklet bench eigen --matrix rbf`
      and prints one JSON line in the same format.
  eigen_numpy.py report --results FILE --out docs/performance.md --cmd CMD
      turns the JSON lines of one run into the table of docs/performance.md.

The matrix: n points of R^10, coordinates uniform in [0, 1) from splitmix64
seeded with S (drawn point by point), kernel exp(-0.1 * |x_i - x_j|^2) —
exactly the construction of host-cli/src/bench.rs.
"""

import argparse
import datetime
import io
import json
import os
import platform
import re
import statistics
import sys
import time
from contextlib import redirect_stdout

MASK = (1 << 64) - 1
DIM = 10
GAMMA = 0.1


def splitmix64(seed, count):
    state = seed & MASK
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out.append(z ^ (z >> 31))
    return out


def rbf_matrix(n, seed):
    import numpy as np

    u = np.array(splitmix64(seed, n * DIM), dtype=np.uint64)
    x = (u >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))
    x = x.reshape(n, DIM)
    sq = np.sum(x * x, axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * (x @ x.T), 0.0)
    k = np.exp(-GAMMA * d2)
    np.fill_diagonal(k, 1.0)
    return np.asfortranarray(k)


def cmd_time(a):
    import numpy as np

    k = rbf_matrix(a.n, a.seed)
    if a.top == 0:
        backend = "numpy"

        def run():
            return np.linalg.eigh(k)

    else:
        import scipy.linalg

        backend = "scipy"
        lo = a.n - a.top

        def run():
            return scipy.linalg.eigh(k, subset_by_index=[lo, a.n - 1])

    for _ in range(a.warmup):
        run()
    times = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    print(
        json.dumps(
            {
                "n": a.n,
                "backend": backend,
                "top": a.top,
                "repeat": a.repeat,
                "median_s": round(statistics.median(times), 6),
                "min_s": round(min(times), 6),
                "max_s": round(max(times), 6),
                "matrix": "rbf",
            },
            separators=(",", ":"),
        )
    )


def machine_info():
    import numpy as np
    import scipy

    info = {"nproc": os.cpu_count(), "python": platform.python_version()}
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info["cpu"] = cpu
    info["numpy"] = np.__version__
    info["scipy"] = scipy.__version__
    blas = "unknown"
    try:
        cfg = np.show_config(mode="dicts")
        b = cfg["Build Dependencies"]["blas"]
        blas = f"{b.get('name')} {b.get('version', '')}".strip()
        openblas_cfg = b.get("openblas configuration", "")
        if openblas_cfg:
            blas += f" ({openblas_cfg})"
    except Exception:  # older numpy: parse the printed config
        buf = io.StringIO()
        with redirect_stdout(buf):
            np.show_config()
        m = re.search(r"blas[^\n]*\n[^\n]*name: (\S+)", buf.getvalue())
        if m:
            blas = m.group(1)
    info["blas"] = blas
    threads = None
    try:
        from threadpoolctl import threadpool_info

        pools = [p for p in threadpool_info() if p.get("user_api") == "blas"]
        if pools:
            threads = ", ".join(f"{p['internal_api']}: {p['num_threads']}" for p in pools)
    except ImportError:
        pass
    if threads is None:
        env = {v: os.environ[v] for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS") if v in os.environ}
        threads = (
            f"env {env}" if env else f"library default (no *_NUM_THREADS set; OpenBLAS then uses all {os.cpu_count()} CPUs)"
        )
    info["blas_threads"] = threads
    return info


def cmd_report(a):
    rows = [json.loads(line) for line in open(a.results) if line.strip().startswith("{")]
    by = {(r["backend"], r["n"], r["top"]): r for r in rows}
    ns = sorted({r["n"] for r in rows})
    tops = sorted({r["top"] for r in rows})
    info = machine_info()

    def med(b, n, t):
        r = by.get((b, n, t))
        return r["median_s"] if r else None

    def fmt(x):
        return "—" if x is None else f"{x:.4f}"

    def ratio(x, y):
        return "—" if x is None or y is None or y == 0 else f"{x / y:.2f}"

    lines = []
    lines.append("## Symmetric eigendecomposition")
    lines.append("")
    lines.append(
        "Median wall-clock seconds of the decomposition only (matrix built once, outside the timing), "
        "on the RBF kernel matrix exp(−‖xᵢ−xⱼ‖²/10) over n points of R¹⁰ drawn by splitmix64 "
        "(seed 42), the same construction in Rust (`ranklet bench eigen`) and in Python "
        "(`bench/eigen_numpy.py`). Full decomposition = all eigenvalues and eigenvectors; "
        "top-k = the k largest pairs. numpy column: `numpy.linalg.eigh` (full) and "
        "`scipy.linalg.eigh(subset_by_index=[n−k, n−1])` (top-k, LAPACK `dsyevr`). "
        "Ratios are ranklet / numpy-or-scipy (below 1 = ranklet faster)."
    )
    lines.append("")
    lines.append(f"- command: `{a.cmd}`")
    lines.append(f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}")
    lines.append(f"- machine: {info['nproc']} CPUs (nproc), {info['cpu']}")
    lines.append(f"- numpy {info['numpy']}, scipy {info['scipy']}, BLAS: {info['blas']}")
    lines.append(f"- BLAS threads: {info['blas_threads']}; faer: rayon, all CPUs; portable: single-threaded")
    reps = sorted({(r["backend"], r["n"], r["top"], r["repeat"]) for r in rows})
    rep_counts = sorted({r["repeat"] for r in rows})
    lines.append(
        f"- repeats per cell (after one untimed warm-up run): {', '.join(map(str, rep_counts))}"
        + (
            "; reduced cells: "
            + ", ".join(f"{b} n={n} top={t}: {rp}" for b, n, t, rp in reps if rp != max(rep_counts))
            if len(rep_counts) > 1
            else ""
        )
    )
    try:
        load_end = " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        load_end = "unknown"
    lines.append(f"- load average (1/5/15 min) at start: {a.load_start}; at end: {load_end} (above {info['nproc']} = other jobs competing for the CPUs)")
    lines.append("- the machine is shared and noisy: compare ratios, not absolute times; min/max are in the raw JSON below")
    lines.append("")
    lines.append("| n | task | faer (s) | portable (s) | numpy/scipy (s) | faer / numpy | portable / numpy | faer full / faer top-k |")
    lines.append("|---:|---|---:|---:|---:|---:|---:|---:|")
    for n in ns:
        for t in tops:
            f, p, npy = med("faer", n, t), med("portable", n, t), med("numpy" if t == 0 else "scipy", n, t)
            task = "full" if t == 0 else f"top-{t}"
            speed = "—" if t == 0 else ratio(med("faer", n, 0), f)
            lines.append(
                f"| {n} | {task} | {fmt(f)} | {fmt(p)} | {fmt(npy)} | {ratio(f, npy)} | {ratio(p, npy)} | {speed} |"
            )
    lines.append("")
    lines.append("<details><summary>raw results (JSON lines)</summary>")
    lines.append("")
    lines.append("```")
    lines.extend(json.dumps(r, separators=(",", ":")) for r in rows)
    lines.append("```")
    lines.append("")
    lines.append("</details>")
    section = "\n".join(lines) + "\n"
    print(section)

    out = a.out
    if os.path.exists(out):
        doc = open(out).read()
    else:
        doc = "# Performance\n\nMeasured numbers, with the command that produced them.\n\n"
    pat = re.compile(r"^## Symmetric eigendecomposition\n.*?(?=^## |\Z)", re.S | re.M)
    if pat.search(doc):
        doc = pat.sub(lambda _: section + "\n", doc, count=1)
    else:
        doc = doc.rstrip("\n") + "\n\n" + section
    with open(out, "w") as f:
        f.write(doc.rstrip("\n") + "\n")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd_name", required=True)
    t = sub.add_parser("time")
    t.add_argument("--n", type=int, required=True)
    t.add_argument("--top", type=int, default=0)
    t.add_argument("--repeat", type=int, default=5)
    t.add_argument("--warmup", type=int, default=1)
    t.add_argument("--seed", type=int, default=42)
    r = sub.add_parser("report")
    r.add_argument("--results", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--cmd", required=True)
    r.add_argument("--load-start", default="unknown")
    a = p.parse_args()
    if a.cmd_name == "time":
        cmd_time(a)
    else:
        cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
