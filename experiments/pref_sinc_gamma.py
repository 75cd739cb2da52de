"""Diagnostic for the sinc gap of pref-gp (docs/results.md, "What the
preference-GP tables say"): the test pair error of pref-gp on the data of
experiments/pref_sinc.py (same generator, seeds 1000…1005, same compacted
items) with the RBF width chosen by the evidence (`rbf:auto`) and held at
fixed values (`rbf:G`: γ fixed, the scale a still by the evidence).
Prints one line per seed and the mean ± std per setting; writes nothing
else.

Usage: python3 experiments/pref_sinc_gamma.py [--seeds N] [--out DIR]"""

import argparse
import os
import re
import statistics as st

import common as C
import pref_sinc as PS
import sinc as S

SETTINGS = ["rbf:auto", "rbf:0.3", "rbf:0.8", "rbf:2"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--out", default="/tmp/ranklet-exp/pref-sinc-gamma")
    a = ap.parse_args()
    res = {k: [] for k in SETTINGS}
    for seed in range(a.seeds):
        d = f"{a.out}/seed{seed}"
        os.makedirs(d, exist_ok=True)
        S.make(1000 + seed, d)
        PS.compact(d)
        row = []
        for kern in SETTINGS:
            m = f"{d}/m.rkl"
            _, err = C.run(["train", "--algo", "pref-gp", "--inductive", "--kernel", kern, "--data",
                            f"{d}/items.csv", "--prefs", f"{d}/c_train_dir.pairs", "-o", m])
            out, _ = C.run(["eval", "-m", m, "--data", f"{d}/test.csv", "--prefs", f"{d}/test.pairs",
                            "--metric", "pairerror"])
            e = float(out.split()[1])
            res[kern].append(e)
            g = re.search(r"gamma=(\S+)", err)
            row.append(f"{kern}: {e:.4f} (gamma {g.group(1) if g else '?'})")
        print(f"seed {seed}: " + " | ".join(row), flush=True)
    for k, v in res.items():
        print(f"{k}: {st.mean(v):.4f} ± {st.stdev(v) if len(v) > 1 else 0:.4f} over {len(v)} seeds")


if __name__ == "__main__":
    main()
