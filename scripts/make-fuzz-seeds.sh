#!/usr/bin/env bash
# Regenerates the small seed corpora under fuzz/corpus/ (committed).
#
#   scripts/make-fuzz-seeds.sh
#
# Model files come from the core writer (fuzz/seedgen); the data-format
# seeds are a few valid lines of each format, written here. Safe to re-run:
# it only overwrites the seed files it names.
set -euo pipefail
cd "$(dirname "$0")/.."
C=fuzz/corpus
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/tmp/tgt-fuzz}"

cargo run --quiet --release --manifest-path fuzz/seedgen/Cargo.toml -- "$C"

mkdir -p "$C"/{svmlight_reader,csv_reader,pairs_reader,orders_reader,ab_store,graph_reader}

# ab_store: cut byte, payload length, payload, old region contents.
{ printf '\x80\x14'; head -c 20 /dev/zero | tr '\0' 'p'; head -c 96 /dev/zero; } > "$C/ab_store/seed_half_cut"
{ printf '\xff\x05hello'; head -c 64 /dev/zero; } > "$C/ab_store/seed_full"

printf '3 qid:1 1:0.5 3:-1.25 10:2\n2 qid:1 2:1 3:0\n0 qid:2 1:1e-3 # comment\n\n1 qid:2 4:7\n' \
  > "$C/svmlight_reader/letor"
printf '1 1:1 2:2\n-0.5 3:1.5e2\r\n# only a comment\n0 1:0\n' > "$C/svmlight_reader/plain_crlf"
printf '\xef\xbb\xbf1 qid:007 5:1\t6:2\n1 qid:7 5:0\n' > "$C/svmlight_reader/bom_tabs"

head -n 4 data/wine-quality/winequality_red.csv > "$C/csv_reader/wine_head"
printf 'label,qid,a,"b, c"\n1,q1,0.5,2\n0,q1,-1,"3"\n2,q2, 7 ,1e3\n\n' > "$C/csv_reader/quoted_qid"
printf 'y,qid,x\n1,a,2\n0,b,3\n' > "$C/csv_reader/y_qid"

printf '0 1\n1 2 0.5\n# c\n2 0 3\n' > "$C/pairs_reader/basic"
# The first two bytes are n_rows (u16 LE): 3 and 300.
printf '\x03\x000 1\n1 2 0.5\n# c\n2 0 3\n' > "$C/pairs_reader/n3"
printf '\x2c\x01299 0 1e-3\n5 6\n' > "$C/pairs_reader/n300"

# items \0 orders
printf 'id,price,size\na,1,2\nb,3,4\nc,5,6\n\0a b c\nc,a\n# c\nb a\n' > "$C/orders_reader/items_orders"
printf 'x y z\nw,x\n' > "$C/orders_reader/orders_fixed_items"
printf 'name,id\n1.5,"p"\n2,q\n\0q p\n' > "$C/orders_reader/quoted_ids"

# Graph readers (one text, every reader): edges, kernels, node features.
printf '# u v y\nd1 t3 1\nd1\tt7 0 # c\nd2 t3 0.25\na a 2\n' > "$C/graph_reader/edges"
printf '\ta\tb\tc\nc\t0.2\t0.1\t1\na\t1\t0.5\t0.2\nb\t0.5\t1\t0.1\n' > "$C/graph_reader/kernel_labelled"
printf '1 0.5 0.3\n0.425 1 0.1\n0.3 0.1 1\n' > "$C/graph_reader/kernel_bare_asymmetric"
printf 'a b 0 1\nx 1 2 3 4\ny 5 6 7 8\n' > "$C/graph_reader/kernel_rows"
printf 'd1 1:0.5 3:1\nd2 2:-1 # c\nd3\n' > "$C/graph_reader/nodes_svmlight"
printf 'id,w,c\nd1,0.5,1\n"d2",0,-1\n' > "$C/graph_reader/nodes_csv"
head -n 3 data/drug-target-nr/nr_simmat_dg.txt | cut -d' ' -f1-3 > "$C/graph_reader/drug_target_head"

ls -l "$C"/*
