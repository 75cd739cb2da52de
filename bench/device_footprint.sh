#!/usr/bin/env bash
# Device-scoring figures for a linear model, written into docs/performance.md
# (section "Device scoring"):
#  - .text (and .rodata) that rk_model_parse + rk_score_dense add to a
#    Cortex-M4F firmware (QEMU mps2-an386) and to a freestanding x86-64
#    program: the same C program with and without the two calls
#    (bench/device/footprint.c, FP_VARIANT 1 minus 0), goal <= 8 KiB, for
#    the smallest build (ranklet-ffi --no-default-features) and, per scoring
#    feature (kernel, f64, centring), for builds with it;
#  - the same for Cortex-M3 (thumbv7m-none-eabi; run on QEMU mps2-an385)
#    and Cortex-M0 (thumbv6m-none-eabi; size only);
#  - bytes of a linear f32 model with d = 136: as `ranklet train` writes it,
#    and the device copy from `ranklet export --strip-metadata` (the one the
#    firmware embeds), goal <= 640;
#  - stack used by parse and scoring: stack painting in the firmware, plus
#    -fstack-usage of the C frames;
#  - scoring throughput in the firmware: rk_score_dense_batch and
#    rk_score_dense vs a plain C f32 dot-product loop over the same rows, in
#    one run, counted in instructions (SysTick under qemu -icount shift=0;
#    QEMU does not model the DWT cycle counter), goal >= 0.9x; on the M4F
#    and the M3.
# Needs arm-none-eabi-gcc and qemu-system-arm (tests/firmware/run.sh installs
# them), gcc, python3. tests/firmware/run_perf.sh checks the M4F and M3
# figures against committed bounds.
#   bash bench/device_footprint.sh      (RANKLET_BIN=path reuses a built CLI)
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
# build_lib, firmware, qemu, per_feature, the CPU flags and boards.
. "$repo/bench/device/common.sh"
for t in thumbv7m-none-eabi thumbv6m-none-eabi; do
    rustup target list --installed | grep -qx "$t" || rustup target add "$t"
done

# ---- libraries: no_std ranklet-ffi (no `std`), release profile overridden
# for size (bench/device/common.sh); one build per target and feature set,
# copied to $out/lib-NAME.a ----
# name:features of the Cortex-M4F builds; the first is the smallest build.
M4F_BUILDS=("m4f:" "m4f-f64:f64" "m4f-centring:centring" "m4f-all-kinds:all-kinds" "m4f-kernel:kernel" "m4f-all:kernel,f64,centring,all-kinds")
for b in "${M4F_BUILDS[@]}"; do build_lib "${b%%:*}" "$TARGET" "${b#*:}"; done
build_lib m3 thumbv7m-none-eabi ""
build_lib m0 thumbv6m-none-eabi ""
echo "device_footprint: building libranklet_ffi.a for the host (no_std, opt-level $RK_OPT_LEVEL)" >&2
host_dir="$CARGO_TARGET_DIR/device-footprint-host"
CARGO_PROFILE_RELEASE_PANIC=abort cargo rustc --quiet -p ranklet-ffi --no-default-features --release --lib \
    --crate-type staticlib --target-dir "$host_dir"
host_lib="$host_dir/release/libranklet_ffi.a"
# The CLI with the ordinary release profile; RANKLET_BIN reuses an already
# built one (the model does not depend on its build profile).
if [ -n "${RANKLET_BIN:-}" ]; then
    ranklet="$RANKLET_BIN"
else
    (unset CARGO_PROFILE_RELEASE_OPT_LEVEL CARGO_PROFILE_RELEASE_LTO CARGO_PROFILE_RELEASE_CODEGEN_UNITS
        cargo build --quiet --release -p ranklet)
    ranklet="$CARGO_TARGET_DIR/release/ranklet"
fi

# ---- the d = 136 linear model (trained in $out so the file name stored in
# its metadata is the short relative one) ----
bench_model "$ranklet"
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

# ---- firmwares: fpV-NAME.elf links lib-NAME.a (variant 0 links none) ----
for cpu in m4f m3 m0; do
    arr="CPU_${cpu^^}"
    firmware 0 "$cpu" "$arr"
done
for b in "${M4F_BUILDS[@]}"; do firmware 1 "${b%%:*}" CPU_M4F "$out/lib-${b%%:*}.a"; done
firmware 1 m3 CPU_M3 "$out/lib-m3.a"
firmware 1 m0 CPU_M0 "$out/lib-m0.a"
firmware 2 m4f CPU_M4F "$out/lib-m4f.a"
firmware 2 m3 CPU_M3 "$out/lib-m3.a"
firmware 2 m0 CPU_M0 "$out/lib-m0.a"
HOST_CFLAGS=(-std=c11 -O2 -static -nostdlib -ffreestanding -fno-stack-protector -fno-builtin -fno-pie -no-pie
    -ffunction-sections -fdata-sections -Wall -Wextra -Werror -I "$repo/include" -I "$out")
for v in 0 1; do
    gcc "${HOST_CFLAGS[@]}" -DFP_VARIANT=$v -DFREESTANDING_MAIN=fp_main -o "$out/host$v" "$repo/tests/support/start_x86_64.c" "$repo/tests/support/mem.c" "$dev/footprint.c" "$host_lib" \
        -Wl,--gc-sections -Wl,-z,noexecstack
    "$out/host$v" || { echo "device_footprint: host variant $v failed (exit $?)" >&2; exit 1; }
done
if nm "$out/host1" | grep -qE ' U |malloc|__rust_alloc'; then echo "host1: unresolved or allocator symbols" >&2; exit 1; fi

sec() { "$1" -A "$2" | awk -v s="$3" '$1 == s { print $2 }'; }
added() { # SECTION NAME CPU: bytes fp1-NAME adds to fp0-CPU
    echo $(( $(sec arm-none-eabi-size "$out/fp1-$2.elf" "$1") - $(sec arm-none-eabi-size "$out/fp0-$3.elf" "$1") ))
}
arm_text=$(added .text m4f m4f); arm_ro=$(added .rodata m4f m4f)
host_text0=$(sec size "$out/host0" .text); host_text1=$(sec size "$out/host1" .text)
host_ro0=$(sec size "$out/host0" .rodata); host_ro1=$(sec size "$out/host1" .rodata)
host_text=$((host_text1 - host_text0)); host_ro=$((host_ro1 - host_ro0))
# The largest functions variant 1 adds (ARM).
top_syms() { python3 - <(arm-none-eabi-nm -S -C "$out/fp0-$2.elf") <(arm-none-eabi-nm -S -C "$out/fp1-$1.elf") <<'PY'
import sys
def funcs(path):
    out = {}
    for line in open(path):
        t = line.split(None, 3)
        if len(t) == 4 and t[2] in "tT":
            out[t[3].strip()] = int(t[1], 16)
    return out
base, with_rk = funcs(sys.argv[1]), funcs(sys.argv[2])
added = sorted(((n, s) for s, n in with_rk.items() if s not in base), reverse=True)
print(", ".join(f"`{s}` ({n} B)" for n, s in added[:12]) + f"; {len(added)} functions in all")
PY
}
top_m4f=$(top_syms m4f m4f)
top_all=$(top_syms m4f-all m4f)
# Bytes per feature: each build against the smallest.
feature_rows=""
for b in "${M4F_BUILDS[@]}"; do
    n="${b%%:*}"; f="${b#*:}"
    t=$(added .text "$n" m4f); r=$(added .rodata "$n" m4f)
    feature_rows+="| \`${f:-(none)}\` | $t B | $((t - arm_text)) B | $r B |"$'\n'
done

# ---- run the firmwares (boards and IPT in bench/device/common.sh) ----
calc() { python3 -c "print($1)"; }
f32hex() { python3 -c 'import struct,sys; print(repr(struct.unpack("<f", struct.pack("<I", int(sys.argv[1], 16)))[0]))' "$1"; }
host_score=$(head -1 "$out/d136.host")
declare -A SCORE STP STS STB TB TS TP TO NR DM AGREE
m0_note=""
for cpu in m4f m3 m0; do
    board=${BOARD[$cpu]}
    if ! qemu "$board" 0 "$out/fp1-$cpu.elf" "$out/fp1-$cpu.out" || ! qemu "$board" 1 "$out/fp2-$cpu.elf" "$out/fp2-$cpu.out"; then
        # Only the M0 run is optional (a board model of a part ranklet does not target).
        [ "$cpu" = m0 ] || exit 1
        m0_note="the Cortex-M0 firmware did not run on QEMU \`microbit\` ($(tail -1 "$out/fp2-$cpu.out" 2>/dev/null || true)); its row is size only"
        continue
    fi
    SCORE[$cpu]=$(f32hex "$(awk '/^score/ {print $2}' "$out/fp1-$cpu.out")")
    echo "== $cpu ($board)" >&2; cat "$out/fp2-$cpu.out" >&2
    read -r _ _ STP[$cpu] _ STS[$cpu] _ STB[$cpu] < <(grep '^stack ' "$out/fp2-$cpu.out")
    read -r _ _ NR[$cpu] _ DM[$cpu] _ TB[$cpu] _ TS[$cpu] _ TP[$cpu] _ TO[$cpu] < <(grep '^ticks ' "$out/fp2-$cpu.out")
    AGREE[$cpu]=$(python3 -c 'import struct,sys; print("%.3g" % struct.unpack("<f", struct.pack("<I", int(sys.argv[1], 16)))[0])' "$(awk '/^agreement/ {print $3}' "$out/fp2-$cpu.out")")
done
fw_score=${SCORE[m4f]}
st_parse=${STP[m4f]}; st_score=${STS[m4f]}; st_batch=${STB[m4f]}
nrows=${NR[m4f]}; dim=${DM[m4f]}; t_batch=${TB[m4f]}; t_single=${TS[m4f]}; t_plain=${TP[m4f]}; t_odd=${TO[m4f]}
agree=${AGREE[m4f]}
su_main=$(awk -F'\t' '$1 ~ /:fp_main$/ {print $2 " B (" $3 ")"}' "$out/fp2-m4f.su")
su_plain=$(awk -F'\t' '$1 ~ /:plain_dot/ {print $2 " B (" $3 ")"}' "$out/fp2-m4f.su" | head -1)
ins() { calc "f'{$1 * ${IPT[m4f]} / ($nrows * $dim):.2f}'"; }
ratio_batch=$(calc "f'{$t_plain / $t_batch:.2f}'"); ratio_single=$(calc "f'{$t_plain / $t_single:.2f}'")
yes() { if python3 -c "import sys; sys.exit(0 if ($1) else 1)"; then echo met; else echo "NOT met"; fi; }
# One row per CPU: .text, .rodata, stack, instructions per feature.
cpu_row() { # CPU NAME
    local t r; t=$(added .text "$1" "$1"); r=$(added .rodata "$1" "$1")
    if [ -n "${TB[$1]:-}" ]; then
        local k="${IPT[$1]} / (${NR[$1]} * ${DM[$1]})"
        local i="$(calc "f'{${TB[$1]} * $k:.2f}'") / $(calc "f'{${TS[$1]} * $k:.2f}'") / $(calc "f'{${TP[$1]} * $k:.2f}'")"
        echo "| $2 | $t B | $r B | ${STP[$1]} / ${STS[$1]} / ${STB[$1]} B | $i | $(calc "f'{${TP[$1]} / ${TB[$1]}:.2f}'")× / $(calc "f'{${TP[$1]} / ${TS[$1]}:.2f}'")× |"
    else
        echo "| $2 | $t B | $r B | not run | not run | — |"
    fi
}
cpu_rows="$(cpu_row m0 'Cortex-M0, `thumbv6m-none-eabi`, soft float (QEMU `microbit`)')
$(cpu_row m3 'Cortex-M3, `thumbv7m-none-eabi`, soft float (QEMU `mps2-an385`)')
$(cpu_row m4f 'Cortex-M4F, `thumbv7em-none-eabihf` (QEMU `mps2-an386`)')"

section=$(cat <<MD
## Device scoring

Command: \`bash bench/device_footprint.sh\`, run $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) cores
($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)).
Library: \`ranklet-ffi\` built with \`--no-default-features --release\`, the smallest build (no_std, no
allocator; features \`std\`, \`kernel\`, \`f64\`, \`centring\` and \`all-kinds\` off: it parses and fully
validates linear models, scores \`f32\` ones without feature centring, and returns
\`RK_STATUS_NOT_IN_BUILD\` for every other model, from \`rk_model_parse\` for other kinds, from the scoring
calls for \`f64\` or centred linear models), release profile overridden for size with
\`panic = "abort"\`, \`opt-level = "$RK_OPT_LEVEL"\`, \`lto = "fat"\`, \`codegen-units = 1\`, for \`$TARGET\`, \`thumbv7m-none-eabi\`,
\`thumbv6m-none-eabi\` and x86-64 ($(rustc --version)); $(arm-none-eabi-gcc --version | head -1); $(gcc --version | head -1);
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
| instructions per feature, \`rk_score_dense_batch\` with the model at an odd address (weights read as bytes) | $(ins "$t_odd") | — | |
| throughput vs plain C dot product, batch (plain instructions / ranklet instructions) | $ratio_batch× | ≥ 0.9× | $(yes "$t_plain / $t_batch >= 0.9") |
| throughput vs plain C dot product, one row per call | $ratio_single× | ≥ 0.9× | $(yes "$t_plain / $t_single >= 0.9") |

Bytes per scoring feature (Cortex-M4F, \`.text\` and \`.rodata\` that \`rk_model_parse\` + \`rk_score_dense\`
add, as above; \`ranklet-ffi --no-default-features --features …\`):

| features | \`.text\` added | over the smallest build | \`.rodata\` added |
|---|---:|---:|---:|
${feature_rows}
Per target, the smallest build (stack painted in \`rk_model_parse\` / \`rk_score_dense\` /
\`rk_score_dense_batch\`; instructions per feature for batch / one row per call / the plain C loop, and
the plain loop's instructions over ranklet's, batch / one row per call):

| target | \`.text\` added | \`.rodata\` added | stack | instructions per feature | vs plain C |
|---|---:|---:|---:|---:|---:|
${cpu_rows}
${m0_note}

How each figure is measured:

- **Code size**: the same C program is built twice, \`FP_VARIANT=0\` (sums the model bytes and one row,
  no ranklet call) and \`FP_VARIANT=1\` (parses the model into static storage and scores one row),
  linked with \`--gc-sections\`; the figure is the difference of \`size -A\` \`.text\` (and \`.rodata\`,
  a separate output section in the firmware's linker script). Everything the two calls pull in counts:
  validation (header, sections, CRC-32), scoring, status mapping, compiler-builtins/libgcc helpers.
  Largest functions added on the Cortex-M4F, smallest build: $top_m4f. With
  \`kernel,f64,centring,all-kinds\`: $top_all.
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
  executed instruction, and times with SysTick at the processor clock (25 MHz on the MPS2 boards, one
  tick per 40 instructions; 16 MHz on the micro:bit, one per 62.5). The figures are therefore
  **instruction counts** (Thumb-2; Thumb-1 on the M0), exact and repeatable, not
  Cortex-M4 cycles (which weigh loads, FPU multiply-accumulates and branches differently). One run,
  20 repetitions × 32 rows × d = 136, the three loops interleaved; the plain loop is
  \`s += w[j] * x[j]\` in C at \`-O2\` with the weights read from the same file (\`bench/device/gen.py\`),
  and agrees with ranklet to a relative $agree on these rows. ranklet also checks the handle, the
  pointers and the dimension per call, and scans a row for NaN/∞ only when its score is not finite (a
  finite linear score with finite weights proves a finite row), which the plain loop does not. On the
  Cortex-M3 both sides multiply and add in software (the C loop through libgcc's \`__aeabi_fmul\`/
  \`__aeabi_fadd\`, ranklet through compiler-builtins'), so its counts are dominated by those routines.
- **Scoring agrees with the host**: the \`FP_VARIANT=1\` firmware (device copy) printed $fw_score for
  row 0 on the Cortex-M4F, ${SCORE[m3]} on the Cortex-M3 and ${SCORE[m0]:-(not run)} on the Cortex-M0; \`ranklet score\` on the host (file as
  trained) printed $host_score. The \`FP_VARIANT=2\` firmware also scores all rows with a copy of the model
  at an odd address (byte path) and fails unless every score has the same bits as through the aligned
  fast path.
MD
)
doc_section "Device scoring" "$section"
