#!/usr/bin/env bash
# Device-scoring figures for a linear model, written into docs/performance.md
# (section "Device scoring"):
#  - .text (and .rodata) that rk_model_parse + rk_score_dense add to a
#    Cortex-M4F firmware (QEMU mps2-an386) and to a freestanding x86-64
#    program: the same C program with and without the two calls
#    (bench/device/footprint.c, FP_VARIANT 1 minus 0), goal <= 8 KiB;
#  - bytes of a linear f32 model with d = 136: as `ranklet train` writes it,
#    and the device copy from `ranklet export --strip-metadata` (the one the
#    firmware embeds), goal <= 640;
#  - stack used by parse and scoring: stack painting in the firmware, plus
#    -fstack-usage of the C frames;
#  - scoring throughput in the firmware: rk_score_dense_batch and
#    rk_score_dense vs a plain C f32 dot-product loop over the same rows, in
#    one run, counted in instructions (SysTick under qemu -icount shift=0;
#    QEMU does not model the DWT cycle counter), goal >= 0.9x.
# Needs arm-none-eabi-gcc and qemu-system-arm (tests/firmware/run.sh installs
# them), gcc, python3.
#   bash bench/device_footprint.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
out="$CARGO_TARGET_DIR/device-footprint"
mkdir -p "$out"
for t in arm-none-eabi-gcc arm-none-eabi-size arm-none-eabi-nm qemu-system-arm gcc size nm python3; do
    command -v "$t" >/dev/null || { echo "device_footprint: $t is missing (bash tests/firmware/run.sh installs the ARM tools)" >&2; exit 1; }
done
TARGET=thumbv7em-none-eabihf
fw="$repo/tests/firmware"
dev="$repo/bench/device"

# ---- libraries: no_std ranklet-ffi without default features (no std, no
# kernel scoring), release profile overridden for size: panic = abort,
# opt-level $RK_OPT_LEVEL (default "s"), fat LTO, one codegen unit ----
RK_OPT_LEVEL="${RK_OPT_LEVEL:-s}"
export CARGO_PROFILE_RELEASE_OPT_LEVEL="$RK_OPT_LEVEL" CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
echo "device_footprint: building libranklet_ffi.a for $TARGET and for the host (no_std, opt-level $RK_OPT_LEVEL)" >&2
CARGO_PROFILE_RELEASE_PANIC=abort cargo rustc --quiet -p ranklet-ffi --no-default-features --release --lib \
    --crate-type staticlib --target "$TARGET"
arm_lib="$CARGO_TARGET_DIR/$TARGET/release/libranklet_ffi.a"
host_dir="$CARGO_TARGET_DIR/device-footprint-host"
CARGO_PROFILE_RELEASE_PANIC=abort cargo rustc --quiet -p ranklet-ffi --no-default-features --release --lib \
    --crate-type staticlib --target-dir "$host_dir"
host_lib="$host_dir/release/libranklet_ffi.a"
# The CLI with the ordinary release profile.
(unset CARGO_PROFILE_RELEASE_OPT_LEVEL CARGO_PROFILE_RELEASE_LTO CARGO_PROFILE_RELEASE_CODEGEN_UNITS
    cargo build --quiet --release -p ranklet)
ranklet="$CARGO_TARGET_DIR/release/ranklet"

# ---- the d = 136 linear model (trained in $out so the file name stored in
# its metadata is the short relative one) ----
python3 "$dev/gen.py" data "$out/d136.light"
(cd "$out" && "$ranklet" train --algo rankrls --kernel linear --lambda 1 --data d136.light -o d136.rkl >&2)
"$ranklet" export -m "$out/d136.rkl" --strip-metadata -o "$out/d136.device.rkl"
model_bytes=$(stat -c %s "$out/d136.rkl")
device_bytes=$(stat -c %s "$out/d136.device.rkl")
layout() { python3 - "$1" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<H", b, 24)[0]
names = {1: "metadata", 3: "LINEAR (offset f64 + 136 f32)"}
parts = [f"header {28} B", f"section table {12 * n} B"]
end = 28 + 12 * n
for k in range(n):
    sid, _f, off, ln = struct.unpack_from("<HHII", b, 28 + 12 * k)
    parts.append(f"padding {off - end} B") if off > end else None
    parts.append(f"{names.get(sid, f'section {sid}')} {ln} B")
    end = off + ln
parts.append(f"padding {len(b) - 4 - end} B") if len(b) - 4 > end else None
parts.append("CRC-32 4 B")
print(", ".join(parts))
PY
}
sections=$(layout "$out/d136.rkl")
device_sections=$(layout "$out/d136.device.rkl")
# The host scores with the file as trained; the firmware embeds the device copy.
"$ranklet" score -m "$out/d136.rkl" --data "$out/d136.light" >"$out/d136.host"
python3 "$dev/gen.py" header "$out/d136.device.rkl" "$out/d136.light" 32 >"$out/bench_model.h"

# ---- firmwares ----
ARM_CFLAGS=(-std=c11 -O2 -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -ffreestanding -fno-builtin
    -ffunction-sections -fdata-sections -Wall -Wextra -Werror -I "$repo/include" -I "$fw" -I "$out")
for v in 0 1 2; do
    (cd "$out" && arm-none-eabi-gcc "${ARM_CFLAGS[@]}" -fstack-usage -DFP_VARIANT=$v -nostdlib -nostartfiles \
        -T "$fw/mps2-an386.ld" -Wl,--gc-sections -Wl,-z,noexecstack -o "$out/fp$v.elf" \
        "$fw/startup.c" "$repo/tests/support/mem.c" "$dev/footprint.c" "$arm_lib" -lgcc && mv "fp$v.elf-footprint.su" "fp$v.su")
done
HOST_CFLAGS=(-std=c11 -O2 -static -nostdlib -ffreestanding -fno-stack-protector -fno-builtin -fno-pie -no-pie
    -ffunction-sections -fdata-sections -Wall -Wextra -Werror -I "$repo/include" -I "$out")
for v in 0 1; do
    gcc "${HOST_CFLAGS[@]}" -DFP_VARIANT=$v -DFREESTANDING_MAIN=fp_main -o "$out/host$v" "$repo/tests/support/start_x86_64.c" "$repo/tests/support/mem.c" "$dev/footprint.c" "$host_lib" \
        -Wl,--gc-sections -Wl,-z,noexecstack
    "$out/host$v" || { echo "device_footprint: host variant $v failed (exit $?)" >&2; exit 1; }
done
if nm "$out/host1" | grep -qE ' U |malloc|__rust_alloc'; then echo "host1: unresolved or allocator symbols" >&2; exit 1; fi

sec() { "$1" -A "$2" | awk -v s="$3" '$1 == s { print $2 }'; }
arm_text0=$(sec arm-none-eabi-size "$out/fp0.elf" .text); arm_text1=$(sec arm-none-eabi-size "$out/fp1.elf" .text)
arm_ro0=$(sec arm-none-eabi-size "$out/fp0.elf" .rodata); arm_ro1=$(sec arm-none-eabi-size "$out/fp1.elf" .rodata)
host_text0=$(sec size "$out/host0" .text); host_text1=$(sec size "$out/host1" .text)
host_ro0=$(sec size "$out/host0" .rodata); host_ro1=$(sec size "$out/host1" .rodata)
arm_text=$((arm_text1 - arm_text0)); arm_ro=$((arm_ro1 - arm_ro0))
host_text=$((host_text1 - host_text0)); host_ro=$((host_ro1 - host_ro0))
# The largest functions variant 1 adds (ARM).
top_syms=$(python3 - <(arm-none-eabi-nm -S -C "$out/fp0.elf") <(arm-none-eabi-nm -S -C "$out/fp1.elf") <<'PY'
import sys
def funcs(path):
    out = {}
    for line in open(path):
        t = line.split(None, 3)
        if len(t) == 4 and t[2] in "tT":
            out[t[3].strip()] = int(t[1], 16)
    return out
base, with_rk = funcs(sys.argv[1]), funcs(sys.argv[2])
added = sorted(((n, s) for s, n in with_rk.items() if s not in base), reverse=True)[:8]
print(", ".join(f"`{s}` ({n} B)" for n, s in added))
PY
)

# ---- run the firmwares ----
QEMU=(qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none -semihosting-config enable=on,target=native)
timeout 120 "${QEMU[@]}" -kernel "$out/fp1.elf" >"$out/fp1.out" 2>&1 || { cat "$out/fp1.out"; echo "fp1 failed" >&2; exit 1; }
fw_score=$(python3 -c 'import struct,sys; t=open(sys.argv[1]).read().split(); print(repr(struct.unpack("<f", struct.pack("<I", int(t[t.index("score")+1], 16)))[0]))' "$out/fp1.out")
host_score=$(head -1 "$out/d136.host")
timeout 600 "${QEMU[@]}" -icount shift=0 -kernel "$out/fp2.elf" >"$out/fp2.out" 2>&1 || { cat "$out/fp2.out"; echo "fp2 failed" >&2; exit 1; }
cat "$out/fp2.out" >&2
read -r _ _ st_parse _ st_score _ st_batch < <(grep '^stack ' "$out/fp2.out")
read -r _ _ nrows _ dim _ t_batch _ t_single _ t_plain < <(grep '^ticks ' "$out/fp2.out")
agree=$(python3 -c 'import struct,sys; print("%.3g" % struct.unpack("<f", struct.pack("<I", int(sys.argv[1], 16)))[0])' "$(awk '/^agreement/ {print $3}' "$out/fp2.out")")
su_main=$(awk -F'\t' '$1 ~ /:fp_main$/ {print $2 " B (" $3 ")"}' "$out/fp2.su")
su_plain=$(awk -F'\t' '$1 ~ /:plain_dot/ {print $2 " B (" $3 ")"}' "$out/fp2.su" | head -1)
calc() { python3 -c "print($1)"; }
ins() { calc "f'{$1 * 40 / ($nrows * $dim):.2f}'"; }
ratio_batch=$(calc "f'{$t_plain / $t_batch:.2f}'"); ratio_single=$(calc "f'{$t_plain / $t_single:.2f}'")
yes() { if python3 -c "import sys; sys.exit(0 if ($1) else 1)"; then echo met; else echo "NOT met"; fi; }

section=$(cat <<MD
## Device scoring

Command: \`bash bench/device_footprint.sh\`, run $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) cores
($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)).
Library: \`ranklet-ffi\` built with \`--no-default-features --release\` (no_std, no allocator, no
kernel-expansion scoring: features \`std\` and \`kernel\` off), release profile overridden for size with
\`panic = "abort"\`, \`opt-level = "$RK_OPT_LEVEL"\`, \`lto = "fat"\`, \`codegen-units = 1\`, for \`$TARGET\` and for x86-64; $(arm-none-eabi-gcc --version | head -1); $(gcc --version | head -1);
$(qemu-system-arm --version | head -1). Firmware: \`tests/firmware/startup.c\` + \`mps2-an386.ld\`
(QEMU \`mps2-an386\`, Cortex-M4F), program \`bench/device/footprint.c\`. The model is a linear RankRLS
model with d = 136 in f32, trained by \`ranklet train --algo rankrls --kernel linear --lambda 1\` on
240 generated rows (\`bench/device/gen.py\`), without feature centring; the firmware embeds the device
copy written by \`ranklet export --strip-metadata\`.

| figure | measured | goal | |
|---|---:|---:|---|
| \`.text\` added by \`rk_model_parse\` + \`rk_score_dense\`, Cortex-M4F firmware | $arm_text B ($(calc "f'{$arm_text/1024:.2f}'") KiB) | ≤ 8 KiB | $(yes "$arm_text <= 8192") |
| \`.rodata\` added (same firmware) | $arm_ro B | — | |
| \`.text\` added, freestanding x86-64 link (\`gcc -static -nostdlib\`) | $host_text B ($(calc "f'{$host_text/1024:.2f}'") KiB) | ≤ 8 KiB | $(yes "$host_text <= 8192") |
| \`.rodata\` added (x86-64) | $host_ro B | — | |
| linear model file, d = 136, f32, device copy (\`ranklet export --strip-metadata\`) | $device_bytes B | ≤ 640 B | $(yes "$device_bytes <= 640") |
| the same model as \`ranklet train\` writes it (with metadata) | $model_bytes B | — | |
| stack, \`rk_model_parse\` (painted) | $st_parse B | — | |
| stack, \`rk_score_dense\`, d = 136 (painted) | $st_score B | — | |
| stack, \`rk_score_dense_batch\`, 32 rows (painted) | $st_batch B | — | |
| instructions per feature: \`rk_score_dense_batch\` / \`rk_score_dense\` / plain C loop | $(ins "$t_batch") / $(ins "$t_single") / $(ins "$t_plain") | — | |
| throughput vs plain C dot product, batch (plain instructions / ranklet instructions) | $ratio_batch× | ≥ 0.9× | $(yes "$t_plain / $t_batch >= 0.9") |
| throughput vs plain C dot product, one row per call | $ratio_single× | ≥ 0.9× | $(yes "$t_plain / $t_single >= 0.9") |

How each figure is measured:

- **Code size**: the same C program is built twice, \`FP_VARIANT=0\` (sums the model bytes and one row,
  no ranklet call) and \`FP_VARIANT=1\` (parses the model into static storage and scores one row),
  linked with \`--gc-sections\`; the figure is the difference of \`size -A\` \`.text\` (and \`.rodata\`,
  a separate output section in the firmware's linker script). Everything the two calls pull in counts:
  validation (header, sections, CRC-32), scoring, status mapping, compiler-builtins/libgcc helpers.
  Largest functions added on the Cortex-M4F: $top_syms.
- **Model bytes**: \`stat\` of each file; layouts (read from their own section tables): device copy:
  $device_sections; as trained: $sections.
  The metadata section (algorithm, training-data file name, sizes, λ) is part of every file
  \`ranklet train\` writes, and its length depends on the data file's name; the goal is met only by the
  device copy, which holds the same parameters bit for bit without it.
- **Stack**: the firmware fills its stack region below the caller's stack pointer with a pattern, makes
  one call, and reports the distance from the caller's stack pointer to the lowest overwritten word
  (the library's frames plus the return path; the pattern stops $((64)) bytes below the caller's stack
  pointer, so figures under 64 B would read as 64). \`-fstack-usage\` for the C side: \`fp_main\` $su_main,
  \`plain_dot\` $su_plain; gcc cannot report the Rust frames, which the painting includes.
- **Throughput**: QEMU does not model the DWT cycle counter (\`DWT_CYCCNT\` reads 0 on this QEMU), so the
  firmware runs under \`qemu-system-arm -icount shift=0\`, where virtual time advances one nanosecond per
  executed instruction, and times with SysTick at the 25 MHz processor clock, i.e. one tick per 40
  instructions. The figures are therefore **instruction counts on Thumb-2**, exact and repeatable, not
  Cortex-M4 cycles (which weigh loads, FPU multiply-accumulates and branches differently). One run,
  20 repetitions × 32 rows × d = 136, the three loops interleaved; the plain loop is
  \`s += w[j] * x[j]\` in C at \`-O2\` with the weights read from the same file (\`bench/device/gen.py\`),
  and agrees with ranklet to a relative $agree on these rows. ranklet's scores also check every input for
  NaN/∞ and the dimension, which the plain loop does not.
- **Scoring agrees with the host**: the \`FP_VARIANT=1\` firmware (device copy) printed $fw_score for
  row 0; \`ranklet score\` on the host (file as trained) printed $host_score.
MD
)
doc=docs/performance.md
touch "$doc"
python3 - "$doc" "$section" <<'PY'
import sys, re
path, section = sys.argv[1], sys.argv[2]
text = open(path).read()
pat = re.compile(r"## Device scoring\n.*?(?=\n## |\Z)", re.S)
text = pat.sub(lambda _: section.strip() + "\n", text) if pat.search(text) else text.rstrip() + "\n\n" + section.strip() + "\n"
open(path, "w").write(text)
PY
printf '%s\n' "$section"
