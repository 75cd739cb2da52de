#!/usr/bin/env bash
# Integer-scoring figures (quantised linear model, kind 7) on Cortex-M0, M3
# and M4F, written into docs/performance.md (section "Integer scoring"):
#  - .text that ranklet adds: rk_model_parse + rk_score_dense_i16 (the
#    integer-only path; tests/firmware/quant.c QF_VARIANT 3 minus 0), and the
#    whole quantised API with on-device quantisation of float rows
#    (QF_VARIANT 1 minus 0: + rk_quantize_dense, rk_score_dense_quant,
#    rk_score_dense_i16_batch, rk_quant_get_info);
#  - RAM: the model storage (rk_model_storage_size) and the painted stack of
#    parse, rk_score_dense_i16_batch and rk_score_dense_quant;
#  - instructions per feature (SysTick under qemu -icount shift=0, 40
#    instructions per tick) of rk_score_dense_i16_batch,
#    rk_score_dense_i16 one row per call, rk_score_dense_quant (float rows,
#    quantised on the device) and a plain C int16 x int16 -> int64 loop, on
#    the MSLR-like d = 136 model (bench/device/gen.py), 24 rows.
# Boards: QEMU microbit (Cortex-M0, nRF51: 256 KiB flash, 16 KiB RAM),
# mps2-an385 (Cortex-M3), mps2-an386 (Cortex-M4F).
# Needs arm-none-eabi-gcc, qemu-system-arm (tests/firmware/run.sh installs
# them), the thumbv6m-none-eabi, thumbv7m-none-eabi, thumbv7em-none-eabihf
# Rust targets, python3.
#   bash bench/device_quant.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
out="$CARGO_TARGET_DIR/device-quant"
mkdir -p "$out"
for t in arm-none-eabi-gcc arm-none-eabi-size qemu-system-arm python3; do
    command -v "$t" >/dev/null || { echo "device_quant: $t is missing (bash tests/firmware/run.sh installs the ARM tools)" >&2; exit 1; }
done
fw="$repo/tests/firmware"
ROWS=24

# ---- libraries: as bench/device_footprint.sh (no_std, no kernel scoring,
# panic = abort, opt-level $RK_OPT_LEVEL, fat LTO, one codegen unit) ----
RK_OPT_LEVEL="${RK_OPT_LEVEL:-s}"
declare -A rust_target=([m0]=thumbv6m-none-eabi [m3]=thumbv7m-none-eabi [m4f]=thumbv7em-none-eabihf)
declare -A cflags=([m0]="-mcpu=cortex-m0 -mthumb -mfloat-abi=soft" [m3]="-mcpu=cortex-m3 -mthumb -mfloat-abi=soft"
    [m4f]="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
declare -A board=([m0]=microbit [m3]=mps2-an385 [m4f]=mps2-an386)
# Virtual ns per SysTick tick = instructions per tick under -icount shift=0:
# the processor clock is 25 MHz on the MPS2 boards, 16 MHz on the nRF51.
declare -A per_tick=([m0]=62.5 [m3]=40 [m4f]=40)
declare -A ldscript=([m0]="$repo/bench/device/microbit.ld" [m3]="$fw/mps2-an386.ld" [m4f]="$fw/mps2-an386.ld")
(
    export CARGO_PROFILE_RELEASE_OPT_LEVEL="$RK_OPT_LEVEL" CARGO_PROFILE_RELEASE_LTO=fat \
        CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 CARGO_PROFILE_RELEASE_PANIC=abort
    for c in m0 m3 m4f; do
        echo "device_quant: building libranklet_ffi.a for ${rust_target[$c]} (opt-level $RK_OPT_LEVEL)" >&2
        cargo rustc --quiet -p ranklet-ffi --no-default-features --features quant --release --lib --crate-type staticlib \
            --target "${rust_target[$c]}"
    done
)
# RANKLET_BIN reuses an already built `ranklet` (its scores do not depend
# on the build profile).
if [ -n "${RANKLET_BIN:-}" ]; then
    ranklet="$RANKLET_BIN"
else
    cargo build --quiet --release -p ranklet
    ranklet="$CARGO_TARGET_DIR/release/ranklet"
fi

# ---- the d = 136 model, quantised (i16), its first $ROWS rows ----
python3 "$repo/bench/device/gen.py" data "$out/mslr.light"
head -n $((ROWS + 1)) "$out/mslr.light" >"$out/mslr_rows.light"
(cd "$out" && "$ranklet" train --algo rankrls --kernel linear --lambda 1 --data mslr.light -o mslr.rkl >/dev/null)
"$ranklet" export -m "$out/mslr.rkl" --quantize i16 --calibrate "$out/mslr.light" -o "$out/mslr.q16.rkl"
"$ranklet" export -m "$out/mslr.q16.rkl" --strip-metadata --c-array qf_model_mslr >"$out/qf_model_mslr.c"
"$ranklet" score -m "$out/mslr.q16.rkl" --data "$out/mslr_rows.light" >"$out/mslr_rows.q16"
python3 "$fw/quanttool.py" header "$out/quant_fw.h" mslr="$out/mslr.q16.rkl:$out/mslr_rows.light"
model_bytes=$(stat -c %s "$out/mslr.q16.rkl")
device_bytes=$(python3 -c 'import re,sys; print(len(re.findall(r"0x[0-9a-f]{2}", open(sys.argv[1]).read().split("{",1)[1])))' "$out/qf_model_mslr.c")

sec() { arm-none-eabi-size -A "$1" | awk -v s="$2" '$1 == s { print $2 }'; }
calc() { python3 -c "print($1)"; }
QEMU_BASE=(-nographic -monitor none -serial none -semihosting-config enable=on,target=native)
rows_md=""
for c in m0 m3 m4f; do
    lib="$CARGO_TARGET_DIR/${rust_target[$c]}/release/libranklet_ffi.a"
    for v in 0 1 2 3; do
        # shellcheck disable=SC2086
        (cd "$out" && arm-none-eabi-gcc -std=c11 -O2 ${cflags[$c]} -ffreestanding -fno-builtin -ffunction-sections \
            -fdata-sections -Wall -Wextra -Werror -I "$repo/include" -I "$fw" -I "$out" -DQF_VARIANT=$v \
            -nostdlib -nostartfiles -T "${ldscript[$c]}" -Wl,--gc-sections -Wl,-z,noexecstack \
            -o "$out/q_${c}_$v.elf" "$fw/startup.c" "$repo/tests/support/mem.c" "$fw/quant.c" \
            "$out/qf_model_mslr.c" "$lib" -lgcc)
    done
    t0=$(sec "$out/q_${c}_0.elf" .text); t1=$(sec "$out/q_${c}_1.elf" .text); t3=$(sec "$out/q_${c}_3.elf" .text)
    text_int=$((t3 - t0)); text_all=$((t1 - t0))
    # What the integer-only image (variant 3) holds that scoring a quantised
    # model does not need: other kinds' section parsers, soft-float helpers
    # and libm, whatever of them rk_model_parse still links.
    parts=$(python3 - "$out/q_${c}_3.elf" <<'PY'
import subprocess, sys
out = subprocess.run(["arm-none-eabi-nm", "-S", sys.argv[1]], capture_output=True, text=True).stdout
tot = {"kinds": 0, "float": 0, "libm": 0}
for line in out.splitlines():
    t = line.split()
    if len(t) < 4 or t[2] not in "tTwW":
        continue
    n, size = t[3], int(t[1], 16)
    if "compiler_builtins" in n and "float" in n:
        tot["float"] += size
    elif "libm" in n:
        tot["libm"] += size
    elif any(k in n for k in ("kernel_expansion", "dual_pair", "online", "bilinear")):
        tot["kinds"] += size
print(f"{tot['kinds']} / {tot['float']} / {tot['libm']}")
PY
)
    run="not run"; stack="—"; ipf_b="—"; ipf_s="—"; ipf_q="—"; ipf_p="—"
    if timeout 300 qemu-system-arm -M "${board[$c]}" "${QEMU_BASE[@]}" -kernel "$out/q_${c}_1.elf" \
        >"$out/q_${c}_1.out" 2>&1 && python3 "$fw/quanttool.py" check "$out/q_${c}_1.out" mslr="$out/mslr_rows.q16" >&2 \
        && timeout 600 qemu-system-arm -M "${board[$c]}" "${QEMU_BASE[@]}" -icount shift=0 -kernel "$out/q_${c}_2.elf" \
        >"$out/q_${c}_2.out" 2>&1; then
        run="equal to the host"
        read -r _ _ _ sp _ si _ sq < <(grep '^stack ' "$out/q_${c}_2.out")
        stack="$sp / $si / $sq"
        read -r _ _ _ n _ d _ tb _ ts _ tq _ tp < <(grep '^ticks ' "$out/q_${c}_2.out")
        ipf() { calc "f'{$1 * ${per_tick[$c]} / ($n * $d):.2f}'"; }
        ipf_b=$(ipf "$tb"); ipf_s=$(ipf "$ts"); ipf_q=$(ipf "$tq"); ipf_p=$(ipf "$tp")
    else
        echo "device_quant: the $c firmware did not run or disagreed (see $out/q_${c}_1.out)" >&2
        cat "$out/q_${c}_1.out" >&2 || true
    fi
    name=$(case $c in m0) echo "Cortex-M0 (\`thumbv6m-none-eabi\`, QEMU \`microbit\`)";; m3) echo "Cortex-M3 (\`thumbv7m-none-eabi\`, QEMU \`mps2-an385\`)";; m4f) echo "Cortex-M4F (\`thumbv7em-none-eabihf\`, QEMU \`mps2-an386\`)";; esac)
    rows_md+="| $name | $text_int | $parts | $text_all | $stack | $ipf_b | $ipf_s | $ipf_q | $ipf_p | $run |"$'\n'
done
# ---- order preservation on the two data sets (all rows, calibrated on
# the same rows): Kendall tau of the integer scores against the f32 model's
# (`ranklet eval --reference`), the largest |c·S − f| seen and the bound ----
cp "$repo/data/wine-quality/winequality_red.svmlight" "$out/wine.light"
(cd "$out" && "$ranklet" train --algo rankrls --kernel linear --lambda 1 --standardize --data wine.light -o wine.rkl >/dev/null)
tau_md=""
for s in mslr wine; do
    for w in i16 i8; do
        "$ranklet" export -m "$out/$s.rkl" --quantize $w --calibrate "$out/$s.light" -o "$out/$s.tau.$w.rkl"
        ev=$("$ranklet" eval -m "$out/$s.tau.$w.rkl" --data "$out/$s.light" --reference "$out/$s.rkl" --metric kendall)
        val() { printf '%s\n' "$ev" | awk -v k="$1" '$1 == k { print $2 }'; }
        n=$(grep -c . "$out/$s.light" | awk '{print $1}')
        [ "$s" = mslr ] && n=$((n - 1))
        name=$([ "$s" = mslr ] && echo "MSLR-like, d = 136, $n rows" || echo "red wine, d = 11, $n rows (\`--standardize\`)")
        tau_md+="| $name | $w | $(val kendall_vs_reference) | $(val max_error_vs_reference) | $(val error_bound) |"$'\n'
    done
done

storage=$(grep -o 'RK_MODEL_STORAGE_MAX [0-9]*' "$repo/include/ranklet.h" | awk '{print $2}')

section=$(cat <<MD
## Integer scoring

Command: \`bash bench/device_quant.sh\`, run $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) cores
($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)).
Library: \`ranklet-ffi --no-default-features --features quant --release\` (no_std, no kernel scoring) with \`panic = "abort"\`,
\`opt-level = "$RK_OPT_LEVEL"\`, \`lto = "fat"\`, \`codegen-units = 1\`; $(arm-none-eabi-gcc --version | head -1);
$(qemu-system-arm --version | head -1). Program \`tests/firmware/quant.c\` (C at \`-O2\`) with \`startup.c\`.
Model: the MSLR-like linear RankRLS model (d = 136, \`bench/device/gen.py\`, \`ranklet train --algo rankrls
--kernel linear --lambda 1\`) quantised by \`ranklet export --quantize i16\` calibrated on its 240 training
rows: $model_bytes bytes as written, $device_bytes bytes as the firmware embeds it (\`--strip-metadata\`);
scored on its first $ROWS rows.

| core | \`.text\`, parse + \`rk_score_dense_i16\` (B) | of which other kinds' parsers / soft-float / libm (B) | \`.text\`, whole quantised API (B) | stack: parse / i16 batch / quantise+score (B) | instr./feature, \`rk_score_dense_i16_batch\` | instr./feature, \`rk_score_dense_i16\` per row | instr./feature, \`rk_score_dense_quant\` (f32 rows) | instr./feature, plain C loop | integer scores |
|---|---|---|---|---|---|---|---|---|---|
$rows_md
- **\`.text\`** is the difference to the same program without ranklet calls (\`QF_VARIANT=0\`), so it
  includes the few hundred bytes of the calling C code in \`quant.c\` itself. The integer scoring loop
  itself uses no floating point. The library is built with the feature \`quant\` only (ranklet-core's
  \`quant\`: kind 7 parses without \`all-kinds\`; every other kind is refused at parse with
  \`RK_STATUS_NOT_IN_BUILD\` after the header and CRC checks), so \`rk_model_parse\` links the linear and
  quantised parsers only; the third column is what remains in the image of other kinds' parsers, of
  soft-float helpers (\`__aeabi_d*\`, also on the M4F, whose FPU is single precision) and of libm,
  measured from the symbol sizes of that image. The whole API adds
  \`rk_quantize_dense\`/\`rk_score_dense_quant\` (an \`f32\` subtract and divide per feature: soft-float on
  M0/M3) and the float \`rk_score_dense\` path the model kinds share.
- **RAM**: the parsed model needs $storage bytes of caller storage (\`RK_MODEL_STORAGE_MAX\`), static; the
  stack is painted as in "Device scoring" (figures under 64 B read as 64). The model bytes stay in flash.
- **Instructions per feature**: \`qemu -icount shift=0\` (one virtual ns per instruction) and SysTick at
  the processor clock, 25 MHz on the MPS2 boards (40 instructions per tick) and 16 MHz on the
  \`microbit\` (62.5 per tick); one pass over
  the rows; these are Thumb instruction counts, not cycles (Cortex-M0 has no \`SMLAL\`, so its 64-bit
  accumulate is a multiply, a sign shift, \`ADDS\` and \`ADCS\`). The plain loop is \`acc += (int32_t)w[j] *
  q[j]\` into an \`int64_t\`, \`-O2\`, on the same int16 rows and weights; ranklet also checks the
  handle, alignment and dimension per call.
- **Order preserved**: Kendall τ-b of the integer scores against the f32 model's scores over all rows
  (\`ranklet eval -m Q.rkl --data D --reference F.rkl\`; τ-b over the whole data set, queries ignored,
  goal ≥ 0.999), the largest error seen \`|c·S − f|\` and the worst-case bound \`E\` of docs/format.md
  ("QUANT"); calibrated on the same rows, so no input saturates:

  | data | weights | τ vs f32 | max \`\|c·S − f\|\` | bound E |
  |---|---|---|---|---|
$(printf '%s' "$tau_md" | sed 's/^/  /')

- **Integer scores**: the \`QF_VARIANT=1\` firmware's scores compared with \`ranklet score\` on the
  quantised model (\`tests/firmware/quanttool.py check\`), exactly. CI runs the Cortex-M3 check on the
  full data (\`tests/firmware/run_quant.sh\`).
MD
)
doc=docs/performance.md
touch "$doc"
python3 - "$doc" "$section" <<'PY'
import sys, re
path, section = sys.argv[1], sys.argv[2]
text = open(path).read()
pat = re.compile(r"## Integer scoring\n.*?(?=\n## |\Z)", re.S)
if pat.search(text):
    text = pat.sub(lambda _: section.strip() + "\n", text)
else:
    # Right after "Device scoring" (its own script rewrites that section up
    # to the next level-2 heading, so this one stands beside it).
    dev = re.search(r"## Device scoring\n.*?(?=\n## |\Z)", text, re.S)
    at = dev.end() if dev else len(text)
    text = text[:at].rstrip() + "\n\n" + section.strip() + "\n" + text[at:]
open(path, "w").write(text)
PY
printf '%s\n' "$section"
