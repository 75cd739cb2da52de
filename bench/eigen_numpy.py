#!/usr/bin/env python3
"""numpy/scipy side of bench/eigen_vs_numpy.sh.

  eigen_numpy.py time --n N [--top K] [--repeat R] [--warmup W] [--seed S]
      times numpy.linalg.eigh (K = 0) or scipy.linalg.eigh(subset_by_index=
      [N-K, N-1]) on the same matrix as `ranklet bench eigen --matrix rbf`
      and prints one JSON line in the same format.
  eigen_numpy.py time --n N --top K --solver eigsh [--dim D] [--gamma G]
      [--dist uniform|normal]
      times scipy.sparse.linalg.eigsh(k=K, which="LA") (ARPACK, default
      tol = machine precision) on the same matrix, counts its matrix-vector
      products and reports the residual max_i |A v_i - l_i v_i| / |l_1| and
      max |V^T V - I| as `ranklet bench eigen` does.
  eigen_numpy.py report --results FILE --out docs/performance.md --cmd CMD
      turns the JSON lines of one run into the table of docs/performance.md.
  eigen_numpy.py report-topk --results FILE --out docs/performance.md --cmd CMD
      the same for the top-k comparison with eigsh (section "Top-k
      eigenpairs vs ARPACK").

The matrix: n points of R^D (default 10), coordinates uniform in [0, 1)
(or standard normal by Box-Muller sqrt(-2 ln(1-u1)) cos(2 pi u2), two
uniforms per coordinate) from splitmix64 seeded with S (drawn point by
point), kernel exp(-G * |x_i - x_j|^2) (default G = 0.1) — exactly the
construction of host-cli/src/commands/bench/eigen.rs.
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



def raw_details(rows):
    """The doc's collapsed block of raw JSON lines, after a table."""
    return ["", "<details><summary>raw results (JSON lines)</summary>", "", "```"] + [
        json.dumps(r, separators=(",", ":")) for r in rows
    ] + ["```", "", "</details>"]

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


def rbf_matrix(n, seed, dim=DIM, gamma=GAMMA, dist="uniform"):
    import numpy as np

    draws = 2 if dist == "normal" else 1
    u = np.array(splitmix64(seed, n * dim * draws), dtype=np.uint64)
    x = (u >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))
    if dist == "normal":
        u1, u2 = x[0::2], x[1::2]
        x = np.sqrt(-2.0 * np.log(1.0 - u1)) * np.cos(2.0 * np.pi * u2)
    x = x.reshape(n, dim)
    sq = np.sum(x * x, axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * (x @ x.T), 0.0)
    k = np.exp(-gamma * d2)
    np.fill_diagonal(k, 1.0)
    return np.asfortranarray(k)


def cmd_time(a):
    import numpy as np

    k = rbf_matrix(a.n, a.seed, a.dim, a.gamma, a.dist)
    if a.solver == "eigsh":
        import scipy.sparse.linalg as sla

        if a.top == 0:
            raise SystemExit("--solver eigsh needs --top K > 0")
        backend = "eigsh"
        count = [0]

        def matvec(v):
            count[0] += 1
            return k @ v

        op = sla.LinearOperator(k.shape, matvec=matvec, matmat=lambda x: k @ x, dtype=np.float64)
        out = {}

        def run():
            count[0] = 0
            out["r"] = sla.eigsh(op, k=a.top, which="LA")
            out["count"] = count[0]

    elif a.top == 0:
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
    row = {
        "n": a.n,
        "backend": backend,
        "top": a.top,
        "repeat": a.repeat,
        "median_s": round(statistics.median(times), 6),
        "min_s": round(min(times), 6),
        "max_s": round(max(times), 6),
        "matrix": "rbf",
    }
    if (a.dim, a.gamma, a.dist) != (DIM, GAMMA, "uniform") or a.solver == "eigsh":
        row.update({"dim": a.dim, "gamma": a.gamma, "dist": a.dist})
    if a.solver == "eigsh":
        vals, vecs = out["r"]
        order = np.argsort(vals)[::-1]
        vals, vecs = vals[order], vecs[:, order]
        scale = max(abs(vals).max(), np.finfo(float).tiny)
        res = np.linalg.norm(k @ vecs - vecs * vals, axis=0).max() / scale
        orth = np.abs(vecs.T @ vecs - np.eye(a.top)).max()
        row.update({"matvecs": out["count"], "residual": float(f"{res:.2e}"), "orth": float(f"{orth:.2e}")})
        row["threads"] = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    print(json.dumps(row, separators=(",", ":")))


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
    lines.extend(raw_details(rows))
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


def cmd_report_topk(a):
    """Table of the top-k comparison: ranklet (faer backend, Lanczos) vs
    scipy eigsh (ARPACK), per case, n, k and thread count."""
    rows = [json.loads(line) for line in open(a.results) if line.strip().startswith("{")]
    info = machine_info()

    def case(r):
        return "hard" if r.get("dist") == "normal" else "easy"

    keys = []
    by = {}
    for r in rows:
        key = (case(r), r["n"], r["top"], str(r.get("threads")))
        if key not in by:
            keys.append(key)
        b = r["backend"]
        if b == "faer":
            b = "faer" if r.get("tol", 0) else "faer_default"
        by.setdefault(key, {})[b] = r
    lines = ["## Top-k eigenpairs vs ARPACK (scipy eigsh)", ""]
    lines.append(
        "Median wall-clock seconds of the k largest eigenpairs of an RBF kernel matrix (built once, outside the "
        "timing), ranklet's faer backend (`ranklet bench eigen --top k`: core's thick-restart Lanczos, "
        "block size 4, operator and Gram-Schmidt products on faer/rayon) against "
        "`scipy.sparse.linalg.eigsh(k, which='LA')` (ARPACK, default tol) on the same matrix "
        "(`bench/eigen_numpy.py --solver eigsh`). ranklet runs at `--tol 2e-15` (about eigsh's residual) and at its "
        "default tol (1000·ε·‖A‖). hard: n points of R^20 ~ N(0, I), gamma = 0.025 "
        "(slowly decaying spectrum); easy: R^10 uniform [0, 1), gamma = 0.1. Threads: RAYON_NUM_THREADS for "
        "ranklet, OMP_NUM_THREADS = OPENBLAS_NUM_THREADS for scipy. `applies` / `matvecs`: matrix-vector "
        "products (ranklet's includes the k of its final residual check). Residual: "
        "max_i |A v_i - l_i v_i|_2 / |l_1|, computed outside the solvers by each script."
    )
    lines.append("")
    lines.append(f"- command: `{a.cmd}`")
    lines.append(f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}")
    lines.append(f"- machine: {info['nproc']} CPUs (nproc), {info['cpu']}")
    lines.append(f"- numpy {info['numpy']}, scipy {info['scipy']}, BLAS: {info['blas']}")
    try:
        load_end = " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        load_end = "unknown"
    lines.append(f"- load average (1/5/15 min) at start: {a.load_start}; at end: {load_end}")
    lines.append("")
    lines.append(
        "| case | n | k | threads | ranklet (s) | eigsh (s) | ranklet / eigsh | applies | matvecs | "
        "residual ranklet | residual eigsh | ranklet default tol (s) | its residual |"
    )
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key in keys:
        d = by[key]
        f, e = d.get("faer"), d.get("eigsh")
        ft = f["median_s"] if f else None
        et = e["median_s"] if e else None
        ratio = "—" if not (ft and et) else f"{ft / et:.2f}"
        lines.append(
            f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {ft if ft is not None else '—'} | "
            f"{et if et is not None else '—'} | {ratio} | {f.get('applies', '—') if f else '—'} | "
            f"{e.get('matvecs', '—') if e else '—'} | {f.get('residual', '—') if f else '—'} | "
            f"{e.get('residual', '—') if e else '—'} | {d['faer_default']['median_s'] if 'faer_default' in d else '—'} | "
            f"{d['faer_default'].get('residual', '—') if 'faer_default' in d else '—'} |"
        )
    lines.extend(raw_details(rows))
    section = "\n".join(lines) + "\n"
    print(section)
    doc = open(a.out).read() if os.path.exists(a.out) else "# Performance\n\n"
    pat = re.compile(r"^## Top-k eigenpairs vs ARPACK.*?\n(?=^## |\Z)", re.S | re.M)
    if pat.search(doc):
        doc = pat.sub(lambda _: section + "\n", doc, count=1)
    else:
        # Right after the "Symmetric eigendecomposition" section.
        m = re.search(r"^## Symmetric eigendecomposition\n.*?(?=^## |\Z)", doc, re.S | re.M)
        at = m.end() if m else len(doc)
        doc = doc[:at] + section + "\n" + doc[at:]
    with open(a.out, "w") as f:
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
    t.add_argument("--dim", type=int, default=DIM)
    t.add_argument("--gamma", type=float, default=GAMMA)
    t.add_argument("--dist", choices=["uniform", "normal"], default="uniform")
    t.add_argument("--solver", choices=["eigh", "eigsh"], default="eigh")
    rt = sub.add_parser("report-topk")
    rt.add_argument("--results", required=True)
    rt.add_argument("--out", required=True)
    rt.add_argument("--cmd", required=True)
    rt.add_argument("--load-start", default="unknown")
    r = sub.add_parser("report")
    r.add_argument("--results", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--cmd", required=True)
    r.add_argument("--load-start", default="unknown")
    a = p.parse_args()
    if a.cmd_name == "time":
        cmd_time(a)
    elif a.cmd_name == "report-topk":
        cmd_report_topk(a)
    else:
        cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
