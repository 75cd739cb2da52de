#!/usr/bin/env bash
# Old vs new ranklet binaries, interleaved in one run: KPCRank p = 50 file →
# model on the slowly decaying RBF data (bench/hard_rbf_data.py), then the
# top-50 eigensolver on the easy benchmark matrix. Used for the before/after
# table of "Top-k eigenpairs vs ARPACK: reading the figures".
#
# Usage: flock /work/bench.lock bench/topk_old_vs_new.sh OLD_BIN NEW_BIN [N] [REPEAT]
#   (N = 2000, REPEAT = 3; wall times by /usr/bin/time, one line per run)
set -euo pipefail
OLD="$1"
NEW="$2"
N="${3:-2000}"
REPEAT="${4:-3}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
F="$dir/hard_$N.light"
python3 "$(dirname "$0")/hard_rbf_data.py" "$N" > "$F"
echo "load start: $(cut -d' ' -f1-3 /proc/loadavg)"
for t in 1 2; do
    for _ in $(seq "$REPEAT"); do
        for which in old new; do
            bin="$OLD"
            [ "$which" = new ] && bin="$NEW"
            RAYON_NUM_THREADS=$t /usr/bin/time -o "$dir/time" -f "%e" "$bin" train --algo kpcrank \
                --kernel rbf:0.025 --components 50 --data "$F" -o "$dir/m_$which.rkl" >/dev/null 2>&1
            echo "kpcrank n=$N threads=$t $which $(cat "$dir/time") s"
        done
    done
done
for t in 1 2; do
    for which in old new; do
        bin="$OLD"
        [ "$which" = new ] && bin="$NEW"
        echo "eigen top-50 n=$N threads=$t $which $(RAYON_NUM_THREADS=$t "$bin" bench eigen --n "$N" --top 50 --repeat 5)"
    done
done
echo "load end: $(cut -d' ' -f1-3 /proc/loadavg)"
