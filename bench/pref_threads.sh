#!/usr/bin/env bash
# Dense EP at n = 1 000 items, m = 5 000 preferences with 1 and 2 threads
# (RAYON_NUM_THREADS): `ranklet bench pref` (EP to convergence and one
# evidence + gradient evaluation at fixed hyperparameters), the whole command
# `ranklet train --algo pref-gp --kernel rbf:auto` on the same data, and the
# per-operation breakdown of one EP fit (`bench pref --breakdown`). Binaries
# and thread counts interleaved round by round; the 1-minute load average
# before and after every run. Prints Markdown tables (docs/performance.md
# quotes them; it is not rewritten).
#
#   bash bench/pref_threads.sh                              # this tree
#   OLD=/path/to/older/ranklet bash bench/pref_threads.sh   # before/after
#
# Env: OLD (an older binary, shown first), ROUNDS (3 interleaved rounds),
#      REPEAT (3 fits per `bench pref` run, median), BREPEAT (10 fits per
#      breakdown, minimum), TRAIN (1: also the whole command), BREAKDOWN (1),
#      N (1000), M (5000), DATA (/tmp/pref-threads-N-M), BUILD (1).
# The 1 → 2 thread ratios mean something only when the load before a run is
# below ~1 (nothing else running on the 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000}
M=${M:-5000}
BUILD=${BUILD:-1}
DATA=${DATA:-/tmp/pref-threads-$N-$M}
[ "$BUILD" = 1 ] && cargo build --release -p ranklet >&2
NEW="${CARGO_TARGET_DIR:-target}/release/ranklet"
mkdir -p "$DATA"
if [ ! -f "$DATA/items.csv" ]; then
    "$NEW" bench pref --n "$N" --m "$M" --write-data "$DATA" >/dev/null
    python3 - "$DATA" <<'PY'
# x.f64 (n × d row-major, little-endian) and pairs.i32 (winner, loser) →
# items.csv (id, x0…) and prefs.txt (winner loser, by id).
import struct, sys
d = sys.argv[1]
meta = dict(l.split(" = ") for l in open(f"{d}/meta.txt").read().splitlines() if " = " in l)
n, dim = int(meta["n"]), int(meta["d"])
x = struct.unpack(f"<{n * dim}d", open(f"{d}/x.f64", "rb").read())
p = open(f"{d}/pairs.i32", "rb").read()
pairs = struct.unpack(f"<{len(p) // 4}i", p)
with open(f"{d}/items.csv", "w") as fh:
    fh.write("id," + ",".join(f"x{k}" for k in range(dim)) + "\n")
    for i in range(n):
        fh.write(f"i{i}," + ",".join(repr(v) for v in x[i * dim:(i + 1) * dim]) + "\n")
with open(f"{d}/prefs.txt", "w") as fh:
    fh.writelines(f"i{pairs[2 * s]} i{pairs[2 * s + 1]}\n" for s in range(len(pairs) // 2))
PY
fi
exec python3 - "$NEW" "${OLD:-}" "$DATA" "$N" "$M" "${ROUNDS:-3}" "${REPEAT:-3}" "${BREPEAT:-10}" "${TRAIN:-1}" "${BREAKDOWN:-1}" <<'PY'
import json, os, subprocess, sys, time

new, old, data, n, m, rounds, repeat, brepeat, train, breakdown = sys.argv[1:]
rounds, repeat, brepeat = int(rounds), int(repeat), int(brepeat)
bins = ([("before", old)] if old else []) + [("after" if old else "this tree", new)]
load = lambda: os.getloadavg()[0]


def run(binary, threads, args):
    """(stdout + stderr, wall s, user + sys CPU s, load before, load after)."""
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    l0, t0 = load(), time.perf_counter()
    p = subprocess.Popen([binary] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    out = p.stdout.read().decode()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        sys.exit(f"{binary} {' '.join(args)} failed:\n{out}")
    return out, wall, ru.ru_utime + ru.ru_stime, l0, load()


bench_args = ["bench", "pref", "--n", n, "--m", m, "--repeat", str(repeat)]
train_args = ["train", "--algo", "pref-gp", "--items", f"{data}/items.csv", "--prefs", f"{data}/prefs.txt",
              "--kernel", "rbf:auto", "-o", f"{data}/m.rkl"]
res = {}
for r in range(rounds):
    for name, b in bins:
        for t in (1, 2):
            out, wall, cpu, l0, l1 = run(b, t, bench_args)
            j = json.loads(out.strip().splitlines()[-1])
            res.setdefault(("bench", name, t), []).append((j, wall, cpu, l0, l1))
            if train == "1":
                out, wall, cpu, l0, l1 = run(b, t, train_args)
                summary = next((l for l in out.splitlines() if "log_evidence=" in l), "?")
                res.setdefault(("train", name, t), []).append((summary, wall, cpu, l0, l1))

f3 = lambda v: f"{v:.3f}"
loads = lambda rows: ", ".join(f"{x[3]:.2f}→{x[4]:.2f}" for x in rows)
print(f"`RAYON_NUM_THREADS=T ranklet bench pref --n {n} --m {m} --repeat {repeat}` ({rounds} interleaved rounds; "
      "EP and eval: the run's median of its repeats, per round; CPU: user + sys of the whole run):\n")
print("| binary | T | EP s per round | EP s min | eval s min | CPU s per round | log Z | load before→after |")
print("|---|---:|---|---:|---:|---|---|---|")
for name, _ in bins:
    for t in (1, 2):
        rows = res[("bench", name, t)]
        ep = [x[0]["ep_s"] for x in rows]
        ev = [x[0]["eval_s"] for x in rows]
        print(f"| {name} | {t} | {' / '.join(map(f3, ep))} | {f3(min(ep))} | {f3(min(ev))} | "
              f"{' / '.join(f'{x[2]:.2f}' for x in rows)} | {rows[0][0]['log_z']} | {loads(rows)} |")
    e1 = min(x[0]["ep_s"] for x in res[("bench", name, 1)])
    e2 = min(x[0]["ep_s"] for x in res[("bench", name, 2)])
    print(f"| {name} | 1 → 2 | | **{e1 / e2:.2f}×** | | | | |")
if train == "1":
    print(f"\nWhole command `RAYON_NUM_THREADS=T ranklet {' '.join(train_args[:3])} --items items.csv --prefs prefs.txt "
          "--kernel rbf:auto -o m.rkl` (wall and user + sys CPU s per round):\n")
    print("| binary | T | wall s per round | wall s min | CPU s per round | load before→after |")
    print("|---|---:|---|---:|---|---|")
    for name, _ in bins:
        for t in (1, 2):
            rows = res[("train", name, t)]
            print(f"| {name} | {t} | {' / '.join(f'{x[1]:.2f}' for x in rows)} | {min(x[1] for x in rows):.2f} | "
                  f"{' / '.join(f'{x[2]:.2f}' for x in rows)} | {loads(rows)} |")
        w1 = min(x[1] for x in res[("train", name, 1)])
        w2 = min(x[1] for x in res[("train", name, 2)])
        print(f"| {name} | 1 → 2 | | **{w1 / w2:.2f}×** | | |")
    print("\nSummaries (first round):\n")
    for name, _ in bins:
        for t in (1, 2):
            print(f"- {name}, T = {t}: `{res[('train', name, t)][0][0].strip()}`")
if breakdown == "1":
    for name, b in bins:
        got = {}
        for t in (1, 2):
            try:
                out, wall, cpu, l0, l1 = run(b, t, bench_args[:-1] + [str(brepeat), "--breakdown"])
            except SystemExit:
                break
            got[t] = (json.loads(out.strip().splitlines()[-1]), l0, l1)
        if len(got) < 2:
            print(f"\n({name}: no --breakdown in this binary)")
            continue
        j1, j2 = got[1][0], got[2][0]
        rd = j1["ep_rounds"]
        print(f"\nBreakdown of one EP fit, {name} (`bench pref --breakdown --repeat {brepeat}`: minimum over the fits "
              f"of each operation's time per fit; {rd} EP rounds; load {got[1][1]:.2f}→{got[1][2]:.2f} (T = 1), "
              f"{got[2][1]:.2f}→{got[2][2]:.2f} (T = 2)):\n")
        print("| operation | calls per fit | T = 1 ms | T = 2 ms | 1 → 2 |")
        print("|---|---:|---:|---:|---:|")
        o2 = {o["op"]: o for o in j2["ops"]}
        names = [o["op"] for o in j1["ops"]] + [k for k in o2 if k not in {o["op"] for o in j1["ops"]}]
        o1 = {o["op"]: o for o in j1["ops"]}
        for k in names:
            a, c = o1.get(k), o2.get(k)
            ta = a["min_s"] * 1e3 if a else float("nan")
            tc = c["min_s"] * 1e3 if c else float("nan")
            if max(ta, tc) < 0.05:
                continue
            print(f"| {k} | {(a or c)['calls']} | {ta:.2f} | {tc:.2f} | {ta / tc if tc > 0 else float('nan'):.2f}× |")
        s1, s2 = j1["fit_min_s"] * 1e3, j2["fit_min_s"] * 1e3
        print(f"| **whole fit (min)** | | {s1:.1f} | {s2:.1f} | {s1 / s2:.2f}× |")
PY
