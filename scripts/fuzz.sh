#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) for a given time each.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      # default: 60 s, all targets
#   JOBS=2 scripts/fuzz.sh 600                 # two targets at a time
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`). It runs on the
# stable toolchain with `-s none` (no sanitizer: ASan needs nightly's -Z
# flags; ranklet-core is #![forbid(unsafe_code)], so what the fuzzer looks
# for is panics, overflow and debug assertions, which stay on).
#
# The committed seeds in fuzz/corpus/<target> are read only; what the fuzzer
# learns goes to fuzz/target/grown/<target> (git-ignored) and is reused by
# the next run. Crashes land in fuzz/artifacts/<target>/; logs in
# fuzz/target/logs/<target>.log. Exit status is non-zero if any target
# failed.
set -uo pipefail
cd "$(dirname "$0")/../fuzz"

SECS="${1:-60}"
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  mapfile -t TARGETS < <(cargo fuzz list)
fi
JOBS="${JOBS:-1}"
MAX_LEN="${MAX_LEN:-4096}"

for t in "${TARGETS[@]}"; do
  cargo fuzz build -s none "$t" || { echo "build of $t failed" >&2; exit 2; }
done

mkdir -p target/logs
run_one() {
  local t="$1"
  mkdir -p "target/grown/$t" "corpus/$t"
  echo "== $t: ${SECS}s (log: fuzz/target/logs/$t.log)"
  cargo fuzz run -s none "$t" "target/grown/$t" "corpus/$t" -- \
    -max_total_time="$SECS" -max_len="$MAX_LEN" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 >"target/logs/$t.log" 2>&1
  local rc=$?
  echo "== $t: exit $rc; $(grep -E '^#[0-9]+' "target/logs/$t.log" | tail -1)"
  grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "target/logs/$t.log" | sed "s/^/   $t /"
  if [ $rc -ne 0 ]; then
    grep -E 'panicked|ERROR|Test unit written|artifact' "target/logs/$t.log" | head -5 | sed "s/^/   $t /"
  fi
  return $rc
}

fail=0
if [ "$JOBS" -le 1 ]; then
  for t in "${TARGETS[@]}"; do run_one "$t" || fail=1; done
else
  pids=()
  for t in "${TARGETS[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 2; done
    run_one "$t" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || fail=1; done
fi
exit $fail
