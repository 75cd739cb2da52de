#!/usr/bin/env bash
# The probit preference GP, ranklet vs numpy, side by side in one run, on the
# same files; writes the table into docs/performance.md (section
# "Preference GPs", only that section is replaced).
#
#   bash bench/pref_vs_numpy.sh
#
# Cases: N items, M preferences (d = 5 features, RBF a = 1, γ = 2,
# σ = 1/√2, EP damping 0.8 adaptive, tol 1e-8): ranklet `bench pref` (faer backend)
# against bench/pref_numpy.py in two variants: "parallel" (ranklet's
# algorithm transcribed to numpy/scipy: same rounds) and, with SEQ=1,
# "sequential" (R&W Algorithm 3.5 with the sites on f_w − f_l, the textbook
# way; slow: minutes at n = 1000). FIT=1 adds one whole hyperparameter fit
# (ranklet only). Each process runs under /usr/bin/time -v for its peak
# resident memory.
#
# Env: N (1000), M (5000), REPEAT (3), THREADS (1), SEQ (1), FIT (1),
#      DATA (/tmp/pref-bench-data), BUILD (1; 0 = use the release binary
#      as it is).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000}
M=${M:-5000}
REPEAT=${REPEAT:-3}
THREADS=${THREADS:-1}
SEQ=${SEQ:-1}
FIT=${FIT:-1}
DATA=${DATA:-/tmp/pref-bench-data}
BUILD=${BUILD:-1}

if [ ! -x /usr/bin/time ]; then
    apt-get update -qq >&2 && apt-get install -y -qq time >&2
fi
[ "$BUILD" = 1 ] && cargo build --release -p ranklet >&2
R="${CARGO_TARGET_DIR:-target}/release/ranklet"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
"$R" bench pref --n "$N" --m "$M" --write-data "$DATA" >&2

tmp=$(mktemp)
run() {
    local out
    out=$(RAYON_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS \
        /usr/bin/time -v -o "$tmp" "$@")
    local kb
    kb=$(grep 'Maximum resident set size' "$tmp" | awk '{print $NF}')
    echo "$kb $out"
}
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
f3() { python3 -c "print(f'{$1:.3f}')"; }
mb() { python3 -c "print(f'{$1/1024:.0f}')"; }
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }

fit_flag=()
[ "$FIT" = 1 ] && fit_flag=(--fit-hyper)
read -r kb_r js_r < <(run "$R" bench pref --n "$N" --m "$M" --repeat "$REPEAT" "${fit_flag[@]}")
echo "ranklet: $js_r" >&2
read -r kb_p js_p < <(run python3 bench/pref_numpy.py "$DATA" parallel "$REPEAT")
echo "numpy parallel: $js_p" >&2
raw=("$js_r" "$js_p")
rows=()
row() { # label json kb
    rows+=("| $1 | $(field "$2" ep_rounds) | $(f3 "$(field "$2" kernel_s)") | $(f3 "$(field "$2" ep_s)") | $(f3 "$(field "$2" eval_s)") | $(f3 "$(field "$2" grad_s)") | $(mb "$3") | $(python3 -c "print(f'{$(field "$2" log_z):.6f}')") |")
}
row "ranklet (faer)" "$js_r" "$kb_r"
row "numpy, same algorithm (parallel EP)" "$js_p" "$kb_p"
ep_ratio_p=$(ratio "$(field "$js_r" ep_s)" "$(field "$js_p" ep_s)")
ev_ratio_p=$(ratio "$(field "$js_r" eval_s)" "$(field "$js_p" eval_s)")
seq_line=""
if [ "$SEQ" = 1 ]; then
    read -r kb_s js_s < <(run python3 bench/pref_numpy.py "$DATA" sequential 1)
    echo "numpy sequential: $js_s" >&2
    raw+=("$js_s")
    row "numpy, textbook sequential EP (R&W Alg. 3.5; rounds = sweeps)" "$js_s" "$kb_s"
    seq_line="ranklet EP / numpy sequential EP = $(ratio "$(field "$js_r" ep_s)" "$(field "$js_s" ep_s)")."
fi
fit_line=""
if [ "$FIT" = 1 ]; then
    fit_line="Whole hyperparameter fit (ranklet, \`--fit-hyper\`: a and γ free from (1, 2), σ fixed, projected L-BFGS, warm-started EP): $(f3 "$(field "$js_r" fit_s)") s, $(field "$js_r" fit_evaluations) evaluations, $(field "$js_r" fit_iterations) iterations, converged $(field "$js_r" fit_converged); log Z $(python3 -c "print(f'{$(field "$js_r" log_z):.2f}')") → $(python3 -c "print(f'{$(field "$js_r" fit_log_z):.2f}')") at a = $(python3 -c "print(f'{$(field "$js_r" fit_a):.3g}')"), γ = $(python3 -c "print(f'{$(field "$js_r" fit_gamma):.3g}')")."
fi
rm -f "$tmp"
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

section=$(cat <<MD
## Preference GPs

Command: \`bash bench/pref_vs_numpy.sh\` (N=$N M=$M REPEAT=$REPEAT THREADS=$THREADS SEQ=$SEQ FIT=$FIT);
run on $(date -u '+%Y-%m-%d %H:%M') UTC, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //');
load average $load_start at start, $load_end at end (above 2 = other jobs competing for the 2 cores);
numpy $(python3 -c 'import numpy; print(numpy.__version__)'), scipy $(python3 -c 'import scipy; print(scipy.__version__)').

The probit pairwise GP (\`learn::pref\`) on n = $N items, m = $M preferences
(\`ranklet bench pref --write-data\`: d = 5 features uniform in [0, 1), the
winner of each random pair by \`Σ sin(2πx_k)\` plus noise), RBF kernel
a = 1, γ = 2, σ = 1/√2, EP damping 0.8 (halved whenever a round moves the
sites more than the one before), convergence when every site moves
by less than 1e-8 (scale-free units). Columns: EP rounds to convergence;
the kernel matrix; EP from zero sites to the converged posterior
(\`ep\`); one evidence + gradient evaluation as the hyperparameter search
does it, warm-started from the converged sites (kernel, EP confirming
convergence, \`Q = ααᵀ − (W − WΣW)\`, three derivatives; \`eval\`); the
gradient alone (\`grad\`). Seconds, median of REPEAT runs in one process
(the sequential numpy: one run); peak memory is the process's maximum
resident set. numpy "same algorithm" is \`bench/pref_numpy.py parallel\`:
ranklet's parallel damped EP transcribed to numpy/scipy (OpenBLAS), the
same rounds; "textbook sequential" is R&W Algorithm 3.5 with the sites on
\`f_w − f_l\` (one rank-one update of Σ per site, Σ recomputed per sweep).

| implementation | rounds | kernel s | ep s | eval s | grad s | MB | log Z |
|---|---:|---:|---:|---:|---:|---:|---:|
$(printf '%s\n' "${rows[@]}")

Ratios (ranklet / numpy, below 1 = ranklet faster): EP $ep_ratio_p, evidence + gradient
$ev_ratio_p against the same algorithm in numpy. $seq_line

$fit_line

<details><summary>raw results (JSON lines)</summary>

\`\`\`
$(printf '%s\n' "${raw[@]}")
\`\`\`

</details>
MD
)
doc=docs/performance.md
touch "$doc"
python3 - "$doc" "$section" <<'PY'
import re, sys
path, section = sys.argv[1], sys.argv[2]
text = open(path).read()
pat = re.compile(r"## Preference GPs\n.*?(?=\n## |\Z)", re.S)
text = pat.sub(lambda _: section.strip() + "\n", text) if pat.search(text) else text.rstrip() + "\n\n" + section.strip() + "\n"
open(path, "w").write(text)
PY
printf '%s\n' "$section"
