#!/usr/bin/env bash
# Kronecker RLS, ranklet vs RLScore (the reference of paper 004's authors),
# in one run, on the same files; writes the table into docs/performance.md
# (section "Kronecker RLS vs RLScore", only that section is replaced).
#
#   bash bench/kron_vs_rlscore.sh
#
# Cases: closed form on complete p × p graphs (ranklet `bench kron --mode
# closed` vs RLScore KronRLS in kernel mode) at SIZES; CG_ITERS iterations
# on p = CG_P with half the edges observed (ranklet CG vs RLScore CGKronRLS,
# which is MINRES); each at 1 and 2 threads (RAYON_NUM_THREADS for ranklet,
# OMP/OPENBLAS_NUM_THREADS for numpy and RLScore's Cython loops), each
# process under /usr/bin/time -v for its peak resident memory.
#
# One-domain closed form (DOMAINS contains "one"): one node kernel from the
# u features on both sides (ranklet `--domains one`: one eigendecomposition;
# RLScore KronRLS(K1 = K2 = K), which decomposes it twice).
#
# Env: SIZES ("250 500 1000 2000"), DOMAINS ("two one"), REPEAT (3; closed
#      form), CG_P (1000; empty = no iterative rows),
#      CG_ITERS (200), RLS_CG_ITERS (= CG_ITERS: RLScore's sampled vec trick
#      takes ~10 s per iteration at p = 1000 here, so a smaller count can be
#      given; the table then extrapolates its time per iteration to CG_ITERS
#      and says so), THREADS ("1 2"), DATA (/tmp/kron-bench-data),
#      RLSVENV (/tmp/rlsvenv).
# Both sides time the RBF kernel matrices plus the fit; data generation and
# file reading are not timed (ranklet: `bench kron` module docs).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"250 500 1000 2000"}
DOMAINS=${DOMAINS:-"two one"}
REPEAT=${REPEAT:-3}
CG_P=${CG_P-1000}
CG_ITERS=${CG_ITERS:-200}
RLS_CG_ITERS=${RLS_CG_ITERS:-$CG_ITERS}
THREADS=${THREADS:-"1 2"}
DATA=${DATA:-/tmp/kron-bench-data}
RLSVENV=${RLSVENV:-/tmp/rlsvenv}

py=$(bash bench/rlscore_setup.sh "$RLSVENV")
if [ ! -x /usr/bin/time ]; then
    apt-get update -qq >&2 && apt-get install -y -qq time >&2
fi
cargo build --release -p ranklet >&2
R="${CARGO_TARGET_DIR:-target}/release/ranklet"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

for p in $SIZES; do "$R" bench kron --p "$p" --write-data "$DATA/p$p" >&2; done
[ -z "$CG_P" ] || "$R" bench kron --p "$CG_P" --observed 0.5 --write-data "$DATA/cg$CG_P" >&2

tmp=$(mktemp)
raw=()
# run THREADS CMD...: runs one process under /usr/bin/time -v, prints "peak_kB stdout".
run() {
    local th=$1; shift
    local out
    out=$(RAYON_NUM_THREADS=$th OMP_NUM_THREADS=$th OPENBLAS_NUM_THREADS=$th MKL_NUM_THREADS=$th \
        /usr/bin/time -v -o "$tmp" "$@")
    local kb
    kb=$(grep 'Maximum resident set size' "$tmp" | awk '{print $NF}')
    echo "$kb $out"
}
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
mb() { python3 -c "print(f'{$1/1024:.0f}')"; }
f3() { python3 -c "print(f'{$1:.3f}')"; }
phases() { python3 -c "import json,sys; j=json.loads(sys.argv[1]); print(' / '.join(f'{j[k]:.3f}' for k in ('kernels_s','eigen_s','solve_s')))" "$1"; }

rows=()
for th in $THREADS; do
    for p in $SIZES; do
        for dom in $DOMAINS; do
        read -r kb_r js_r < <(run "$th" "$R" bench kron --data "$DATA/p$p" --mode closed --domains "$dom" --repeat "$REPEAT")
        read -r kb_s js_s < <(run "$th" "$py" bench/kron_rlscore.py closed "$DATA/p$p" 0 "$REPEAT" "$dom")
        raw+=("$js_r" "$js_s")
        tr=$(field "$js_r" median_s); ts=$(field "$js_s" median_s)
        rows+=("| closed form, complete, $dom domain$([ "$dom" = two ] && echo s) | $p | $((p * p)) | $th | $(f3 "$tr") | $(phases "$js_r") | $(mb "$kb_r") | $(f3 "$ts") | $(mb "$kb_s") | $(python3 -c "print(f'{$ts/$tr:.2f}')") |")
        echo "closed $dom p=$p threads=$th: ranklet $tr s, RLScore $ts s" >&2
        done
    done
    [ -n "$CG_P" ] || continue
    read -r kb_r js_r < <(run "$th" "$R" bench kron --data "$DATA/cg$CG_P" --mode cg --iters "$CG_ITERS" --repeat 1)
    read -r kb_s js_s < <(run "$th" "$py" bench/kron_rlscore.py cg "$DATA/cg$CG_P" "$RLS_CG_ITERS" 1)
    raw+=("$js_r" "$js_s")
    tr=$(field "$js_r" median_s); ts=$(field "$js_s" median_s); tk=$(field "$js_s" kernel_s)
    its=$(field "$js_s" iterations_run)
    q=$(field "$js_r" edges)
    if [ "$its" = "$CG_ITERS" ]; then
        cell=$(f3 "$ts")
        est=$ts
    else
        est=$(python3 -c "print($tk + ($ts - $tk) * $CG_ITERS / $its)")
        cell="$(f3 "$ts") for $its its → est. $(f3 "$est")"
    fi
    rows+=("| $CG_ITERS iterations, half observed (ranklet CG, RLScore MINRES) | $CG_P | $q | $th | $(f3 "$tr") | $(phases "$js_r") | $(mb "$kb_r") | $cell | $(mb "$kb_s") | $(python3 -c "print(f'{$est/$tr:.1f}')") |")
    echo "cg p=$CG_P threads=$th: ranklet $tr s, RLScore $cell s" >&2
done
rm -f "$tmp"
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

section=$(cat <<MD
## Kronecker RLS vs RLScore

Command: \`bash bench/kron_vs_rlscore.sh\` (SIZES="$SIZES" DOMAINS="$DOMAINS" REPEAT=$REPEAT CG_P="$CG_P"
CG_ITERS=$CG_ITERS RLS_CG_ITERS=$RLS_CG_ITERS THREADS="$THREADS"); run on $(date -u '+%Y-%m-%d %H:%M') UTC,
$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average
$load_start at start, $load_end at end (above 2 = other jobs competing for the 2 cores);
RLScore $("$py" -c 'import importlib.metadata as m; print(m.version("rlscore"))'), numpy $("$py" -c 'import numpy; print(numpy.__version__)'), scipy $("$py" -c 'import scipy; print(scipy.__version__)').

Both sides read the same files (\`ranklet bench kron --write-data\`: p nodes
per domain, d = 10 features uniform in [0, 1), RBF kernels γ = 0.1,
labels uniform, λ = 10⁻³, regression) and time the RBF kernel matrices
plus the fit (two domains: K_u and K_v; one domain: K from the u features
on both sides, ranklet \`--domains one\` with one eigendecomposition,
RLScore \`KronRLS(K1 = K, K2 = K)\`): ranklet \`bench kron --data DIR\` (faer backend, \`kron::fit\`
or \`kron::kron_cg\`), RLScore \`bench/kron_rlscore.py\` (numpy kernels, then
\`KronRLS(K1, K2, Y)\` or \`CGKronRLS(K1, K2, Y, label_row_inds,
label_col_inds, maxiter)\`). Closed form: median of REPEAT runs in one
process; CG: one run. Peak memory is the process's maximum resident set
(\`/usr/bin/time -v\`), data and interpreter included. Threads: ranklet
RAYON_NUM_THREADS, RLScore OMP_NUM_THREADS = OPENBLAS_NUM_THREADS. The
iterative rows are not the same algorithm: RLScore's CGKronRLS runs
MINRES, ranklet CG (same cost per iteration: one product with the edge
kernel matrix). Ratio = RLScore s / ranklet s (above 1 = ranklet faster).

| case | p | edges | threads | ranklet s | of which kernels / eigen / solve | ranklet MB | RLScore s | RLScore MB | ratio |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
$(printf '%s\n' "${rows[@]}")

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
pat = re.compile(r"## Kronecker RLS vs RLScore\n.*?(?=\n## |\Z)", re.S)
text = pat.sub(lambda _: section.strip() + "\n", text) if pat.search(text) else text.rstrip() + "\n\n" + section.strip() + "\n"
open(path, "w").write(text)
PY
printf '%s\n' "$section"
