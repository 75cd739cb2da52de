#!/usr/bin/env bash
# Times ranklet's training against numpy on the same arrays, in one run, and
# writes the tables into docs/performance.md (sections "Training the
# rankers" and "Reading data files, file → model").
#   bash bench/rankers_vs_numpy.sh          # both sections
#   bash bench/rankers_vs_numpy.sh files    # only the file → model section
# Ratios, not absolute times, are the result: these machines are noisy.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c 'import numpy' 2>/dev/null || pip install --quiet numpy
cargo build --release -p ranklet >/dev/null
R="${CARGO_TARGET_DIR:-target}/release/ranklet"
REPEAT=${REPEAT:-3}
WHAT=${1:-all}
# val JSON [FIELD]: a field of a benchmark's JSON line (default median_s).
val() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "${2:-median_s}"; }
doc=docs/performance.md
touch "$doc"
# Replaces section "## $1" of $doc by the text $2 (appends it if missing).
put_section() {
    python3 - "$doc" "$1" "$2" <<'PY'
import sys, re
path, title, section = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
pat = re.compile(r"## " + re.escape(title) + r"\n.*?(?=\n## |\Z)", re.S)
text = pat.sub(lambda m: section.strip() + "\n", text) if pat.search(text) else text.rstrip() + "\n\n" + section.strip() + "\n"
open(path, "w").write(text)
PY
    printf '%s\n' "$2"
}

# ---- file → model: the LETOR-shaped file of the linear row, read and trained on
files_section() {
    local dir file rows=() read_rows=() t rss read
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' RETURN
    file="$dir/letor_100000x136.light"
    python3 bench/rankers_numpy.py svmlight 100000 136 "$file"
    # Written back to disk before the timing: a file written seconds ago is
    # flushed by the kernel about 30 s later, in the middle of the runs, and
    # the flusher takes one of the two cores (the files users train on are
    # not being written back).
    sync "$file"
    for t in 1 2; do
        local load res runs nps
        load=$(cut -d' ' -f1-3 /proc/loadavg)
        # Rounds of numpy's closed form and the whole command, interleaved,
        # so that both see the same machine speed (it drifts by ±10 % within
        # minutes); the ratio is the median of the rounds' ratios.
        res=$(python3 bench/rankers_numpy.py interleaved 100000 136 "$REPEAT" "$t" -- \
            "$R" train --algo rankrls --kernel linear --lambda 1 --data "$file" -o "$dir/m.rkl")
        runs=$(python3 -c "import json,sys; print(' '.join(f'{v:.3f}' for v in json.loads(sys.argv[1])['cmd_s']))" "$res")
        nps=$(python3 -c "import json,sys; print(' '.join(f'{v:.4f}' for v in json.loads(sys.argv[1])['numpy_s']))" "$res")
        RAYON_NUM_THREADS=$t /usr/bin/time -f '%M' -o "$dir/time" \
            "$R" train --algo rankrls --kernel linear --lambda 1 --data "$file" -o "$dir/m.rkl" >/dev/null 2>&1
        rss=$(cat "$dir/time")
        rows+=("| $t | $runs | $(python3 -c "print(f'{$(val "$res" cmd_median_s):.3f}')") | $nps | $(python3 -c "print(f'{$(val "$res" numpy_median_s):.4f}')") | $(python3 -c "print(f'{$(val "$res" ratio_median):.2f}')") | $(( rss / 1024 )) | $load | $([ "$t" = 2 ] && echo "≤ 1.2" || echo "—") |")
        read=$(RAYON_NUM_THREADS=$t "$R" bench read --data "$file" --repeat "$REPEAT")
        read_rows+=("| $t | $(val "$read" median_s) | $(val "$read" mb_per_s) | ≥ 400 (2 threads) |")
    done
    put_section "Reading data files, file → model" "$(cat <<MD
## Reading data files, file → model

Command: \`bash bench/rankers_vs_numpy.sh files\` (REPEAT=$REPEAT; run on
$(date -u +%Y-%m-%d), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')). The file holds the
linear row's arrays of "Training the rankers" (100 000 rows × 136
features, queries of 10, every value with 6 decimals as LETOR files hold
them; $(stat -c %s "$file") bytes), written by \`bench/rankers_numpy.py svmlight\`.

Reading alone, \`RAYON_NUM_THREADS=T ranklet bench read --data FILE\` (the
whole reader: file read, UTF-8 check, parallel parse, join; median):

| threads | s | MB/s | goal |
|---|---|---|---|
$(printf '%s\n' "${read_rows[@]}")

File → model, \`RAYON_NUM_THREADS=T ranklet train --algo rankrls --kernel
linear --lambda 1 --data FILE -o m.rkl\` (wall time of the whole command,
started from Python), against numpy's closed form on the arrays already in
memory (the fastest of three calls), one of each per round, interleaved
(\`bench/rankers_numpy.py interleaved 100000 136 REPEAT T -- COMMAND\`; the
ratio is the median of the rounds' ratios):

| threads | runs s | median s | numpy runs s | numpy median s | ratio | max RSS MB | load avg (1, 5, 15 min) | goal |
|---|---|---|---|---|---|---|---|---|
$(printf '%s\n' "${rows[@]}")
MD
)"
}

if [ "$WHAT" = files ]; then
    files_section
    exit 0
fi

rows=()
for n in 2000 4000; do
    ours=$("$R" bench train --algo kpcrank --kernel rbf:0.1 --n "$n" --components 50 --repeat "$REPEAT")
    ref=$(python3 bench/rankers_numpy.py eigh "$n" 10 "$REPEAT")
    rows+=("| KPCRank RBF, p = 50, no CV | $n × 10 | $(val "$ours") | numpy eigh of K: $(val "$ref") | $(python3 -c "print(f'{$(val "$ours")/$(val "$ref"):.3f}')") | ≤ 0.25 |")
done
ours=$("$R" bench train --algo rankrls --kernel rbf:0.1 --n 4000 --lambda 1 --repeat "$REPEAT")
ref=$(python3 bench/rankers_numpy.py eigh 4000 10 "$REPEAT")
rows+=("| RankRLS RBF, one λ | 4000 × 10 | $(val "$ours") | numpy eigh of K: $(val "$ref") | $(python3 -c "print(f'{$(val "$ours")/$(val "$ref"):.3f}')") | ≤ 0.3 |")
ours=$("$R" bench train --algo rankrls --kernel linear --n 100000 --d 136 --lambda 1 --repeat "$REPEAT")
ref=$(python3 bench/rankers_numpy.py linear 100000 136 "$REPEAT")
rows+=("| RankRLS linear (primal), queries of 10 | 100000 × 136 | $(val "$ours") | numpy closed form: $(val "$ref") | $(python3 -c "print(f'{$(val "$ours")/$(val "$ref"):.3f}')") | ≤ 1 |")

section=$(cat <<MD
## Training the rankers

Command: \`bash bench/rankers_vs_numpy.sh\` (REPEAT=$REPEAT, median of the
repeats; run on $(date -u +%Y-%m-%d), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),
numpy $(python3 -c 'import numpy; print(numpy.__version__)')). ranklet times \`ranklet bench train\`
(faer backend, the fit only: kernel matrix, centring, decomposition or
solve; data generation excluded); numpy times the named operation on the
same arrays (bench/rankers_numpy.py rebuilds them from the same splitmix64
stream; the kernel matrix is built outside its timing).

| what | n × d | ranklet s | numpy s | ratio | goal |
|---|---|---|---|---|---|
$(printf '%s\n' "${rows[@]}")
MD
)
put_section "Training the rankers" "$section"
files_section
