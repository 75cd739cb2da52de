#!/usr/bin/env bash
# Times ranklet's training against numpy on the same arrays, in one run, and
# writes the table into docs/performance.md (section "Training the rankers").
#   bash bench/rankers_vs_numpy.sh
# Ratios, not absolute times, are the result: these machines are noisy.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c 'import numpy' 2>/dev/null || pip install --quiet numpy
cargo build --release -p ranklet >/dev/null
R="${CARGO_TARGET_DIR:-target}/release/ranklet"
REPEAT=${REPEAT:-3}
val() { python3 -c "import json,sys; print(json.loads(sys.argv[1])['median_s'])" "$1"; }

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
doc=docs/performance.md
touch "$doc"
python3 - "$doc" "$section" <<'PY'
import sys, re
path, section = sys.argv[1], sys.argv[2]
text = open(path).read()
pat = re.compile(r"## Training the rankers\n.*?(?=\n## |\Z)", re.S)
text = pat.sub(section.strip() + "\n", text) if pat.search(text) else text.rstrip() + "\n\n" + section.strip() + "\n"
open(path, "w").write(text)
PY
printf '%s\n' "$section"
