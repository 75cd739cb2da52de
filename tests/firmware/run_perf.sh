#!/usr/bin/env bash
# Device scoring against committed bounds: fails when scoring on the
# Cortex-M4F or the Cortex-M3 needs more instructions per feature, more
# stack, or (M4F) more code than tests/firmware/perf_bounds.txt allows.
#
# The figures are those of bench/device_footprint.sh, measured the same way
# (bench/device/common.sh): the smallest build of ranklet-ffi (no
# features, release profile overridden for size), the d = 136 linear model,
# bench/device/footprint.c under qemu-system-arm -icount shift=0, where
# instruction counts are exact and repeatable (no timing, no load
# dependence). Per CPU: instructions per feature of rk_score_dense_batch and
# of rk_score_dense one row per call, the painted stack of rk_model_parse,
# rk_score_dense and rk_score_dense_batch; on the M4F also the .text that
# parse + score add to the firmware.
#
# RANKLET_BIN reuses an already built `ranklet` (the model does not depend
# on its build profile). Exit status: 0 within the bounds; 1 a build or run
# failed or a figure is over its bound; 77 the ARM toolchain or QEMU is
# missing (tests/firmware/run.sh installs them), so nothing was checked.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
out="$CARGO_TARGET_DIR/firmware-perf"
mkdir -p "$out"
bounds="$here/perf_bounds.txt"
for t in arm-none-eabi-gcc arm-none-eabi-size qemu-system-arm python3; do
    command -v "$t" >/dev/null || { echo "firmware perf: NOT RUN: $t is missing (bash tests/firmware/run.sh installs it)" >&2; exit 77; }
done
for t in thumbv7em-none-eabihf thumbv7m-none-eabi; do
    rustup target list --installed 2>/dev/null | grep -qx "$t" || rustup target add "$t" \
        || { echo "firmware perf: NOT RUN: rustup target add $t failed" >&2; exit 77; }
done
. "$repo/bench/device/common.sh"

if [ -n "${RANKLET_BIN:-}" ]; then
    ranklet="$RANKLET_BIN"
else
    (unset CARGO_PROFILE_RELEASE_OPT_LEVEL CARGO_PROFILE_RELEASE_LTO CARGO_PROFILE_RELEASE_CODEGEN_UNITS
        cargo build --quiet --release --manifest-path "$repo/Cargo.toml" -p ranklet)
    ranklet="$CARGO_TARGET_DIR/release/ranklet"
fi
bench_model "$ranklet"
build_lib m4f thumbv7em-none-eabihf ""
build_lib m3 thumbv7m-none-eabi ""
firmware 0 m4f CPU_M4F
firmware 1 m4f CPU_M4F "$out/lib-m4f.a"
text() { arm-none-eabi-size -A "$1" | awk '$1 == ".text" { print $2 }'; }
m4f_text=$(($(text "$out/fp1-m4f.elf") - $(text "$out/fp0-m4f.elf")))

measured="$out/measured.txt"
echo "m4f text $m4f_text" >"$measured"
for cpu in m4f m3; do
    arr="CPU_${cpu^^}"
    firmware 2 "$cpu" "$arr" "$out/lib-$cpu.a"
    qemu "${BOARD[$cpu]}" 1 "$out/fp2-$cpu.elf" "$out/fp2-$cpu.out"
    grep -q '^FOOTPRINT OK' "$out/fp2-$cpu.out" || { cat "$out/fp2-$cpu.out"; echo "firmware perf: $cpu run failed" >&2; exit 1; }
    read -r sp ss sb ib is ip < <(per_feature "$cpu" "$out/fp2-$cpu.out")
    printf '%s %s %s\n' "$cpu" stack_parse "$sp" "$cpu" stack_score "$ss" "$cpu" stack_batch "$sb" \
        "$cpu" ipf_batch "$ib" "$cpu" ipf_single "$is" "$cpu" ipf_plain_c "$ip" >>"$measured"
done

# Every bound line "CPU FIGURE BOUND ..." against the measured figure.
python3 - "$bounds" "$measured" <<'PY'
import sys
bounds, measured = sys.argv[1], sys.argv[2]
got = {}
for line in open(measured):
    cpu, fig, v = line.split()
    got[(cpu, fig)] = float(v)
bad = checked = 0
for n, line in enumerate(open(bounds), 1):
    t = line.split("#", 1)[0].split()
    if not t:
        continue
    if len(t) < 3:
        sys.exit(f"{bounds}:{n}: expected 'CPU FIGURE BOUND [MEASURED]', got {line.strip()!r}")
    key, bound = (t[0], t[1]), float(t[2])
    if key not in got:
        sys.exit(f"{bounds}:{n}: no measured figure {t[0]} {t[1]} (measured: {', '.join(' '.join(k) for k in got)})")
    v = got[key]
    checked += 1
    state = "ok" if v <= bound else "OVER"
    if v > bound:
        bad += 1
    elif v < bound / 1.10:
        state = "ok, more than 10 % under the bound: tighten it"
    print(f"firmware perf: {t[0]} {t[1]} = {v:g} (bound {bound:g}): {state}")
for (cpu, fig), v in got.items():
    print(f"firmware perf: {cpu} {fig} = {v:g}") if fig == "ipf_plain_c" else None
if bad:
    sys.exit(f"firmware perf: {bad} figure(s) over their bound in {bounds}: a regression of device scoring, "
             "or an intended change (then re-measure and update the file, saying why)")
print(f"firmware perf: OK, {checked} figures within {bounds}")
PY
