#!/usr/bin/env bash
# Device figures of the preference GP (rk_pref_*), written into
# docs/performance.md (section "Preference GP on the device"), for
# N = 16, 32, 64 items:
#  - .text the calls add to a Cortex-M4F firmware (QEMU mps2-an386):
#    parse + init + observe + posterior, then + prob/next pair/rank, then
#    + save/load (bench/device/pref.c, PB_VARIANT 1..3 minus 0);
#  - RAM: the posterior's storage and the store region (sizes the library
#    reports), and the stack of each call (painted);
#  - instructions per observe (one ADF site update, O(N²)), per prob, per
#    next pair (O(N²)), per rank, save and load (SysTick under qemu
#    -icount shift=0: instructions, not cycles).
# Library as in bench/device_online.sh: ranklet-ffi --no-default-features --features all-kinds (the parser refuses kind 8 without it),
# panic = abort, opt-level s, fat LTO, one codegen unit. The prior and the
# observations come from core/examples/pref_fixture.rs (N items, 30
# observations, the same generator as the firmware test).
#   bash bench/device_pref.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
out="$CARGO_TARGET_DIR/device-pref"
mkdir -p "$out"
. "$repo/bench/device/common.sh"
need_arm_tools device_pref
TARGET=thumbv7em-none-eabihf
OBS=30
build_lib pref "$TARGET" all-kinds

rows=""
for n in 16 32 64; do
    w="$out/n$n"
    mkdir -p "$w"
    (unset CARGO_PROFILE_RELEASE_OPT_LEVEL CARGO_PROFILE_RELEASE_LTO CARGO_PROFILE_RELEASE_CODEGEN_UNITS
        cargo run --quiet --release -p ranklet-core --example pref_fixture -- "$w" "$n" "$OBS")
    python3 "$fw/fwtool.py" c-array fw_model_pref "$w/pref.rkl" >"$w/fw_model_pref.c"
    learner_firmwares pref.c PB_VARIANT "$w" "$out/lib-pref.a" "$w/fw_model_pref.c" >"$w/text.txt"
    read -r d1 d2 d3 <"$w/text.txt"
    read -r _ _ nobs _ t_obs _ t_min _ t_max _ t_prob _ t_next _ t_rank _ t_save _ t_load < <(grep '^ticks ' "$w/v4.out")
    read -r _ _ s_obs _ s_prob _ s_next _ s_rank _ s_save _ s_load < <(grep '^stack ' "$w/v4.out")
    read -r _ _ r_storage _ r_region < <(grep '^ram ' "$w/v4.out")
    per_obs=$(calc "round($t_obs * 40 / $nobs)")
    rows+="| $n | $d1 | $d2 | $d3 | $r_storage | $r_region | $s_obs / $s_prob / $s_next / $s_rank / $s_save / $s_load | $per_obs ($(calc "f'{$per_obs / ($n * $n):.1f}'") per N²; $(calc "$t_min * 40")–$(calc "$t_max * 40")) | $(calc "$t_prob * 40") | $(calc "$t_next * 40") | $(calc "$t_rank * 40") | $(calc "$t_save * 40") | $(calc "$t_load * 40") |
"
done

section=$(cat <<MD
## Preference GP on the device

Command: \`bash bench/device_pref.sh\`, run $(date -u '+%Y-%m-%d %H:%M UTC') (load average $(cut -d' ' -f1-3 /proc/loadavg); instruction
counts do not depend on load). Library: \`ranklet-ffi\` \`--no-default-features --features all-kinds --release\`, \`panic = "abort"\`,
\`opt-level = "$RK_OPT_LEVEL"\`, \`lto = "fat"\`, \`codegen-units = 1\`, for \`$TARGET\`; $(arm-none-eabi-gcc --version | head -1);
$(qemu-system-arm --version | head -1). Firmware: \`bench/device/pref.c\` on QEMU \`mps2-an386\` (Cortex-M4F).
Model: a kind-8 prior over N items (\`core/examples/pref_fixture.rs\`: RBF covariance, σ = 0.4), $OBS observed
preferences applied with \`rk_pref_observe\` (one ADF site each, the posterior in \`float\`).

| N | \`.text\` parse, init, observe, posterior B | + prob, next pair, rank B | + save/load B | storage B | store region B | stack observe / prob / next / rank / save / load B | instructions per observe (min–max) | instructions, prob | instructions, next pair | instructions, rank | instructions, save | instructions, load |
|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|
$rows
How each figure is measured:

- **Code size**: the same C program built with \`PB_VARIANT\` 1, 2, 3 minus variant 0 (no ranklet call),
  \`.text\` of \`size -A\` with \`--gc-sections\`: everything the calls pull in (model parsing and validation,
  the ADF update with its \`erfc\`/\`exp\` in \`f64\` soft-float, the writer and the store for save, the parser
  again for load).
- **RAM**: \`rk_pref_storage_size(N)\` (μ, packed Σ and the scratch vector s, 4 bytes each, plus the handle)
  and \`rk_pref_store_size(N)\` (two slots, each a 16-byte header and the posterior's \`.rkl\` file). Stack:
  painted below the caller's stack pointer, the deepest call; figures under 64 B would read as 64.
- **Instructions**: \`qemu-system-arm -icount shift=0\` advances virtual time one nanosecond per executed
  instruction; SysTick at 25 MHz ticks every 40 instructions, so figures are exact instruction counts on
  Thumb-2 (to ±40 per call), not Cortex-M4 cycles. Per observe: the total over the $OBS calls / $OBS (index
  checks, the cavity m and v, r = N(z)/Φ(z) and the step sizes in \`f64\` — \`erfc\` and \`exp\` in software
  on this FPU, which has single precision only —, s = Σ(e_w − e_l), the pre-check of every new μ_i and Σ_ii,
  then the rank-one update of N(N+1)/2 entries).
MD
)
doc_section "Preference GP on the device" "$section"
