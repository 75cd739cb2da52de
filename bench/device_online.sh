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
for t in arm-none-eabi-gcc arm-none-eabi-size qemu-system-arm python3; do
    command -v "$t" >/dev/null || { echo "device_online: $t is missing (bash tests/firmware/run.sh installs the ARM tools)" >&2; exit 1; }
done
TARGET=thumbv7em-none-eabihf
fw="$repo/tests/firmware"
dev="$repo/bench/device"
RK_OPT_LEVEL="${RK_OPT_LEVEL:-s}"
(export CARGO_PROFILE_RELEASE_OPT_LEVEL="$RK_OPT_LEVEL" CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
    CARGO_PROFILE_RELEASE_PANIC=abort
 cargo rustc --quiet -p ranklet-ffi --no-default-features --features f64,centring,all-kinds --release --lib --crate-type staticlib --target "$TARGET")
lib="$CARGO_TARGET_DIR/$TARGET/release/libranklet_ffi.a"
if [ -n "${RANKLET_BIN:-}" ]; then
    ranklet="$RANKLET_BIN"
else
    cargo build --quiet --release -p ranklet
    ranklet="$CARGO_TARGET_DIR/release/ranklet"
fi
ARM_CFLAGS=(-std=c11 -O2 -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -ffreestanding -fno-builtin
    -ffunction-sections -fdata-sections -Wall -Wextra -Werror -I "$repo/include" -I "$fw")
QEMU=(qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none -semihosting-config enable=on,target=native)
text() { arm-none-eabi-size -A "$1" | awk '$1 == ".text" { print $2 }'; }
calc() { python3 -c "print($1)"; }

rows=""
for d in 16 64 136; do
    w="$out/d$d"
    mkdir -p "$w"
    python3 "$dev/gen.py" data "$w/data.light" "$d"
    (cd "$w" && "$ranklet" train --algo rankrls --kernel linear --lambda 1 --data data.light -o prior.rkl >&2)
    "$ranklet" export -m "$w/prior.rkl" --strip-metadata -o "$w/prior.device.rkl"
    python3 "$dev/gen.py" online-header "$w/prior.device.rkl" "$w/data.light" 32 >"$w/online_model.h"
    for v in 0 1 2 3 4; do
        arm-none-eabi-gcc "${ARM_CFLAGS[@]}" -I "$w" -DOB_VARIANT=$v -nostdlib -nostartfiles -T "$fw/mps2-an386.ld" \
            -Wl,--gc-sections -Wl,-z,noexecstack -o "$w/ob$v.elf" "$fw/startup.c" "$repo/tests/support/mem.c" \
            "$dev/online.c" "$lib" -lgcc
    done
    t0=$(text "$w/ob0.elf"); t1=$(text "$w/ob1.elf"); t2=$(text "$w/ob2.elf"); t3=$(text "$w/ob3.elf")
    timeout 300 "${QEMU[@]}" -icount shift=0 -kernel "$w/ob4.elf" >"$w/ob4.out" 2>&1 || { cat "$w/ob4.out"; echo "ob4 failed (d = $d)" >&2; exit 1; }
    cat "$w/ob4.out" >&2
    read -r _ _ nobs _ t_obs _ t_next _ t_save _ t_load < <(grep '^ticks ' "$w/ob4.out")
    read -r _ _ s_obs _ s_next _ s_save _ s_load < <(grep '^stack ' "$w/ob4.out")
    read -r _ _ r_storage _ r_region _ r_work < <(grep '^ram ' "$w/ob4.out")
    per_obs=$(calc "round($t_obs * 40 / $nobs)")
    rows+="| $d | $((t1 - t0)) | $((t2 - t0)) | $((t3 - t0)) | $r_storage | $r_region | $r_work | $s_obs / $s_next / $s_save / $s_load | $per_obs ($(calc "f'{$per_obs / ($d * $d):.1f}'") per d²) | $(calc "$t_next * 40") | $(calc "$t_save * 40") | $(calc "$t_load * 40") |
"
done

echo "device_online: drift_curve (10^5 observations, three feature sets)" >&2
drift=$(cargo test --quiet -p ranklet-core --test online_reference drift_curve -- --ignored --nocapture 2>&1 \
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
doc=docs/performance.md
python3 - "$doc" "$section" <<'PY'
import sys, re
path, section = sys.argv[1], sys.argv[2]
text = open(path).read()
pat = re.compile(r"## Device learning\n.*?(?=\n## |\Z)", re.S)
text = pat.sub(lambda _: section.strip() + "\n", text) if pat.search(text) else text.rstrip() + "\n\n" + section.strip() + "\n"
open(path, "w").write(text)
PY
printf '%s\n' "$section"
