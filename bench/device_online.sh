#!/usr/bin/env bash
# Device figures of the online learner (rk_online_*), written into
# docs/performance.md (section "Device learning"), for d = 16, 64, 136:
#  - .text that learning adds to a Cortex-M4F firmware (QEMU mps2-an386):
#    parse + init + observe + weights, and with save/load (A/B store) or
#    next-pair on top (bench/device/online.c, OB_VARIANT 1..3 minus 0);
#  - RAM: the learner's storage, the store region, the next-pair work for
#    32 candidates (sizes the library reports), and the stack of each call
#    (painted);
#  - instructions per observe, per next-pair over 32 candidates, per save
#    and per load (SysTick under qemu -icount shift=0: instructions, not
#    cycles; QEMU does not model the DWT cycle counter);
#  - accuracy of the f32 learner against an f64 batch solve after 10^3,
#    10^4 and 10^5 observations at d = 136 on uniform, correlated and
#    ill-conditioned features (core/tests/online_reference.rs,
#    drift_curve, on the host: the same core code).
# Library as in bench/device_footprint.sh: ranklet-ffi --no-default-features --features f64,centring,all-kinds,
# panic = abort, opt-level s, fat LTO, one codegen unit.
#   bash bench/device_online.sh      (RANKLET_BIN=path reuses a built CLI)
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
out="$CARGO_TARGET_DIR/device-online"
mkdir -p "$out"
. "$repo/bench/device/common.sh"
need_arm_tools device_online
TARGET=thumbv7em-none-eabihf
build_lib online "$TARGET" f64,centring,all-kinds
if [ -n "${RANKLET_BIN:-}" ]; then
    ranklet="$RANKLET_BIN"
else
    (unset CARGO_PROFILE_RELEASE_OPT_LEVEL CARGO_PROFILE_RELEASE_LTO CARGO_PROFILE_RELEASE_CODEGEN_UNITS
        cargo build --quiet --release -p ranklet)
    ranklet="$CARGO_TARGET_DIR/release/ranklet"
fi

rows=""
for d in 16 64 136; do
    w="$out/d$d"
    mkdir -p "$w"
    python3 "$dev/gen.py" data "$w/data.light" "$d"
    (cd "$w" && "$ranklet" train --algo rankrls --kernel linear --lambda 1 --data data.light -o prior.rkl >&2)
    "$ranklet" export -m "$w/prior.rkl" --strip-metadata -o "$w/prior.device.rkl"
    python3 "$dev/gen.py" online-header "$w/prior.device.rkl" "$w/data.light" 32 >"$w/online_model.h"
    learner_firmwares online.c OB_VARIANT "$w" "$out/lib-online.a" >"$w/text.txt"
    read -r d1 d2 d3 <"$w/text.txt"
    read -r _ _ nobs _ t_obs _ t_next _ t_save _ t_load < <(grep '^ticks ' "$w/v4.out")
    read -r _ _ s_obs _ s_next _ s_save _ s_load < <(grep '^stack ' "$w/v4.out")
    read -r _ _ r_storage _ r_region _ r_work < <(grep '^ram ' "$w/v4.out")
    per_obs=$(calc "round($t_obs * 40 / $nobs)")
    rows+="| $d | $d1 | $d2 | $d3 | $r_storage | $r_region | $r_work | $s_obs / $s_next / $s_save / $s_load | $per_obs ($(calc "f'{$per_obs / ($d * $d):.1f}'") per d²) | $(calc "$t_next * 40") | $(calc "$t_save * 40") | $(calc "$t_load * 40") |
"
done

echo "device_online: drift_curve (10^5 observations, three feature sets)" >&2
drift=$(unset CARGO_PROFILE_RELEASE_OPT_LEVEL CARGO_PROFILE_RELEASE_LTO CARGO_PROFILE_RELEASE_CODEGEN_UNITS; cargo test --quiet -p ranklet-core --test online_reference drift_curve -- --ignored --nocapture 2>&1 \
    | grep '^f32, D = 136' | sed 's/^/- /')
[ -n "$drift" ] || { echo "device_online: drift_curve printed nothing" >&2; exit 1; }

section=$(cat <<MD
## Device learning

Command: \`bash bench/device_online.sh\`, run $(date -u '+%Y-%m-%d %H:%M UTC'). Library: \`ranklet-ffi\`
\`--no-default-features --features f64,centring,all-kinds --release\`, \`panic = "abort"\`, \`opt-level = "$RK_OPT_LEVEL"\`, \`lto = "fat"\`,
\`codegen-units = 1\`, for \`$TARGET\`; $(arm-none-eabi-gcc --version | head -1); $(qemu-system-arm --version | head -1).
Firmware: \`bench/device/online.c\` on QEMU \`mps2-an386\` (Cortex-M4F). Prior: a linear RankRLS model
(\`ranklet train --algo rankrls --kernel linear --lambda 1\` on 240 generated rows of d features,
\`bench/device/gen.py\`), device copy; learner λ = 1; 20 observations of pairs of the 32 embedded rows.

| d | \`.text\` learn (parse, init, observe, weights) B | + save/load B | + next pair B | storage B | store region B | next-pair work, 32 candidates B | stack observe / next / save / load B | instructions per observe | instructions, next pair of 32 | instructions, save | instructions, load |
|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|
$rows
How each figure is measured:

- **Code size**: the same C program built with \`OB_VARIANT\` 1, 2, 3 minus variant 0 (no ranklet call),
  \`.text\` of \`size -A\` with \`--gc-sections\`: everything the calls pull in counts (model parsing and
  validation, the learner, the writer and the store for save, the parser again for load).
- **RAM**: \`rk_online_storage_size(d)\` (the learner: packed factor d(d+1)/2, then b, w, w₀, the
  compensation of b, and the compensation of the factor d(d+1)/2, 4 bytes each, plus the handle), \`rk_online_store_size(d)\` (two slots, each a 16-byte header and the
  state's \`.rkl\` file), \`rk_online_next_pair_work_size(32, d)\`. Stack: painted below the caller's stack
  pointer, the deepest of the 20 observe calls; figures under 64 B would read as 64.
- **Instructions**: \`qemu-system-arm -icount shift=0\` advances virtual time one nanosecond per executed
  instruction; SysTick at 25 MHz ticks every 40 instructions, so figures are exact instruction counts on
  Thumb-2 (to ±40), not Cortex-M4 cycles. Per observe: the total over the 20 calls / 20 (validation of
  both rows, the rank-one update, two triangular solves for w).

Accuracy of the \`f32\` learner (\`cargo test -p ranklet-core --test online_reference drift_curve -- --ignored
--nocapture\`, the same core code on the host; D = 136, λ = 1, 2 000 items, winners by a hidden linear
model plus noise): relative error of the weights and, over the items, of the scores, against an \`f64\`
batch solve of the same pairs; "batch f32" solves the same normal equations rounded once to \`f32\`; κ(A)
by power and inverse iteration. Uniform features in [−1, 1]; correlated: \`0.8·t_g + 0.2·u\` over 8
families; ill-conditioned: \`0.9935·t_g + 0.0065·u\`.

$drift
MD
)
doc_section "Device learning" "$section"
