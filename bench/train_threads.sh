#!/usr/bin/env bash
# RankRLS RBF and KPCRank (p = 50) on the hard RBF data (x ∈ R²⁰ ~ N(0, I),
# γ = 0.025, queries of 20; bench/hard_rbf_data.py) with 1 and 2 threads,
# side by side with numpy, in one run; writes the table into section
# "Training with 1 and 2 threads" of docs/performance.md (the hand-written
# reading under it must be restored after a re-run).
#   flock /work/bench.lock bash bench/train_threads.sh
# Env: N (4000), REPEAT (3), OLD=path/to/ranklet adds an older binary's rows
# (before/after in the same run), PY (python3 with numpy).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-4000}
REPEAT=${REPEAT:-3}
PY=${PY:-python3}
cargo build --release -p ranklet >/dev/null
NEW="${CARGO_TARGET_DIR:-target}/release/ranklet"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
file="$dir/hard_$N.light"
"$PY" bench/hard_rbf_data.py "$N" > "$file"
val() { "$PY" -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
med() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
load() { cut -d' ' -f1 /proc/loadavg; }
bins=("new:$NEW")
[ -n "${OLD:-}" ] && bins=("old:$OLD" "${bins[@]}")

declare -A NP
for t in 1 2; do
    NP[$t]=$(OPENBLAS_NUM_THREADS=$t OMP_NUM_THREADS=$t "$PY" bench/train_threads_numpy.py "$file" 0.025 50 1 "$REPEAT")
done

rows=()
for algo in rankrls kpcrank; do
    if [ "$algo" = rankrls ]; then args=(--algo rankrls --kernel rbf:0.025 --lambda 1); else args=(--algo kpcrank --kernel rbf:0.025 --components 50); fi
    for b in "${bins[@]}"; do
        name=${b%%:*}
        bin=${b#*:}
        declare -A FIT CMD RSS
        for t in 1 2; do
            l0=$(load)
            fit=$(RAYON_NUM_THREADS=$t "$bin" bench train "${args[@]}" --data "$file" --repeat "$REPEAT")
            walls=()
            rss=()
            for _ in $(seq "$REPEAT"); do
                RAYON_NUM_THREADS=$t /usr/bin/time -v -o "$dir/time" "$bin" train "${args[@]}" --data "$file" -o "$dir/m.rkl" >/dev/null 2>&1
                walls+=("$(grep 'Elapsed (wall' "$dir/time" | awk '{print $NF}' | awk -F: '{print ($1 * 60) + $2}')")
                rss+=("$(grep 'Maximum resident' "$dir/time" | awk '{print $NF}')")
            done
            FIT[$t]=$(val "$fit" median_s)
            CMD[$t]=$(med "${walls[@]}")
            RSS[$t]=$(med "${rss[@]}")
            if [ "$algo" = rankrls ]; then ref=$(val "${NP[$t]}" eigh_s); refname="eigh"; x=${FIT[$t]}; else ref=$(val "${NP[$t]}" paper_s); refname="paper"; x=${CMD[$t]}; fi
            ratio=$("$PY" -c "print(f'{$x/$ref:.3f}')")
            rows+=("| $algo | $name | $t | $(printf '%.3f' "${FIT[$t]}") | $(printf '%.2f' "${CMD[$t]}") ($(echo "${walls[*]}")) | $(( ${RSS[$t]} / 1024 )) | $refname $(printf '%.3f' "$ref") | $ratio | $l0 → $(load) |")
        done
        rows+=("| $algo | $name | 1→2 speed-up | $("$PY" -c "print(f'{${FIT[1]}/${FIT[2]}:.2f}×')") | $("$PY" -c "print(f'{${CMD[1]}/${CMD[2]}:.2f}×')") | | | | |")
    done
done

section=$(cat <<MD
## Training with 1 and 2 threads

Command: \`flock /work/bench.lock bash bench/train_threads.sh\` (N=$N, REPEAT=$REPEAT$( [ -n "${OLD:-}" ] && echo ", OLD = the binary before this change")); run
on $(date -u '+%Y-%m-%d %H:%M') UTC, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),
numpy $("$PY" -c 'import numpy; print(numpy.__version__)') (OpenBLAS). Data: \`python3 bench/hard_rbf_data.py $N\`
(x ∈ R²⁰ ~ N(0, I), queries of 20), kernel rbf:0.025.

- *fit s*: \`RAYON_NUM_THREADS=T ranklet bench train ALGO --data FILE\`, the fit only (median);
- *file → model s*: \`RAYON_NUM_THREADS=T /usr/bin/time -v ranklet train ALGO --data FILE -o m.rkl\`,
  wall time of the whole command (median, the runs in brackets), and its maximum RSS;
- numpy (\`bench/train_threads_numpy.py\`, \`OPENBLAS_NUM_THREADS=T\`, arrays in memory, median):
  *eigh* = \`numpy.linalg.eigh(K)\` with K built outside the timing; *paper* = KPCRank by the
  paper's method (kernel, centring, full eigh, top-50 normal equations, α);
- *ratio*: RankRLS fit / numpy eigh (goal ≤ 0.3), KPCRank file → model / numpy paper (goal ≤ 0.25),
  same thread count; speed-up goal ≥ 1.7×.
- ALGO: \`--algo rankrls --kernel rbf:0.025 --lambda 1\` or \`--algo kpcrank --kernel rbf:0.025 --components 50\`.

| algo | binary | threads | fit s | file → model s | max RSS MB | numpy s | ratio | load (1 min) before → after |
|---|---|---|---|---|---|---|---|---|
$(printf '%s\n' "${rows[@]}")

numpy, all three (JSON, T = 1 then 2): \`${NP[1]}\`, \`${NP[2]}\`
MD
)
"$PY" - docs/performance.md "Training with 1 and 2 threads" "$section" <<'PY'
import sys, re
path, title, section = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
pat = re.compile(r"## " + re.escape(title) + r"\n.*?(?=\n## |\Z)", re.S)
text = pat.sub(lambda m: section.strip() + "\n", text) if pat.search(text) else text.rstrip() + "\n\n" + section.strip() + "\n"
open(path, "w").write(text)
PY
printf '%s\n' "$section"
