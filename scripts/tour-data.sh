#!/usr/bin/env bash
# The inputs of the README's Quick tour that data/ does not hold as files,
# derived deterministically from the data sets shipped there and written
# into DIR (never into the repository):
#
#   wines.csv          120 red wines as items: an `id` column (w0 … w119)
#                      and the 11 attributes (the taster score left out)
#   judged.txt         `winner loser` judgements between those wines: pairs
#                      (i, i+1), (i, i+5), (i, i+17) mod 120 whose taster
#                      scores differ, the higher score preferred
#   heldout.txt        the same for the pairs (i, i+29), for evaluation
#   alcohol.txt        `item group`: each wine's alcohol rounded down to a
#                      whole percent (a bipartite relation for xpgp)
#   orders.txt         80 sample orders of 5 wines each, best taster score
#                      first (order o holds wines 7o + 23k mod 120, k < 5)
#   orders_test.txt    20 more orders the same way, for evaluation
#   dt.txt             the NR drug–target interaction matrix as edges
#                      `d<i> t<j> label` (54 × 26, every entry an edge)
#   drugs.txt, targets.txt
#                      each drug's (target's) row of its similarity matrix as
#                      its features, `id 1:v 2:v …`
#
#   bash scripts/tour-data.sh DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
out=$1
root="$(cd "$(dirname "$0")/.." && pwd)"
wine="$root/data/wine-quality/winequality_red.csv"
dt="$root/data/drug-target-nr"
mkdir -p "$out"

n=120
# Items: the first n wines, id column first, quality (the last column) dropped.
awk -F, -v n="$n" 'NR == 1 { printf "id"; for (j = 1; j < NF; j++) printf ",%s", $j; print ""; next }
    NR <= n + 1 { printf "w%d", NR - 2; for (j = 1; j < NF; j++) printf ",%s", $j; print "" }' \
    "$wine" >"$out/wines.csv"
# Taster score and alcohol of the same wines, by 0-based index.
awk -F, -v n="$n" 'NR > 1 && NR <= n + 1 { print NR - 2, $NF, $(NF - 1) }' "$wine" >"$out/.scores"

judgements() { # STEP... : pairs (i, i+s mod n) with different scores, the higher first
    awk -v n="$n" -v steps="$*" '{ q[$1] = $2 }
        END { k = split(steps, s, " ")
              for (t = 1; t <= k; t++) for (i = 0; i < n; i++) { j = (i + s[t]) % n
                  if (q[i] > q[j]) print "w" i, "w" j; else if (q[j] > q[i]) print "w" j, "w" i } }' \
        "$out/.scores"
}
judgements 1 5 17 >"$out/judged.txt"
judgements 29 >"$out/heldout.txt"
awk '{ print "w" $1, "alc" int($3) }' "$out/.scores" >"$out/alcohol.txt"

orders() { # FIRST LAST: orders FIRST..LAST of 5 wines each, best score first
    awk -v n="$n" -v first="$1" -v last="$2" '{ q[$1] = $2 }
        END { for (o = first; o <= last; o++) {
                  for (k = 0; k < 5; k++) id[k] = (7 * o + 23 * k) % n
                  for (a = 1; a < 5; a++) for (b = a; b > 0 && q[id[b]] > q[id[b - 1]]; b--) {
                      t = id[b]; id[b] = id[b - 1]; id[b - 1] = t }
                  print "w" id[0], "w" id[1], "w" id[2], "w" id[3], "w" id[4] } }' "$out/.scores"
}
orders 0 79 >"$out/orders.txt"
orders 80 99 >"$out/orders_test.txt"
rm -f "$out/.scores"

# Edges and node features of the drug–target set (rows of the interaction
# matrix are drugs, columns targets).
awk '{ for (j = 1; j <= NF; j++) print "d" NR - 1, "t" j - 1, ($j + 0) }' "$dt/nr_admat_dgc.txt" >"$out/dt.txt"
features() { # PREFIX FILE
    awk -v p="$1" '{ printf "%s%d", p, NR - 1; for (j = 1; j <= NF; j++) printf " %d:%s", j, $j + 0; print "" }' "$2"
}
features d "$dt/nr_simmat_dc.txt" >"$out/drugs.txt"
features t "$dt/nr_simmat_dg.txt" >"$out/targets.txt"
echo "tour data in $out: wines.csv judged.txt heldout.txt alcohol.txt orders.txt orders_test.txt dt.txt drugs.txt targets.txt"
