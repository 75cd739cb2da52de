# Shared by bench/device_footprint.sh (the device-scoring figures),
# tests/firmware/run_perf.sh (the CI bounds on the same figures) and the
# device learners' figures (bench/device_online.sh, device_pref.sh): how
# the library is built for a device, how bench/device/footprint.c and the
# learners' benchmark programs are built into firmwares, how a firmware
# runs under QEMU, and how its instruction counts become figures. Sourced,
# not run; the caller sets `repo` (the checkout) and `out` (where builds
# go; it holds the generated bench_model.h) before sourcing.

fw="$repo/tests/firmware"
dev="$repo/bench/device"

# The release profile overridden for size: opt-level $RK_OPT_LEVEL (default
# "s"), fat LTO, one codegen unit; panic = abort is set per build.
RK_OPT_LEVEL="${RK_OPT_LEVEL:-s}"
export CARGO_PROFILE_RELEASE_OPT_LEVEL="$RK_OPT_LEVEL" CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1

# build_lib NAME TARGET FEATURES: no_std libranklet_ffi.a (no `std`) for
# TARGET with FEATURES, copied to $out/lib-NAME.a.
build_lib() {
    echo "device: building libranklet_ffi.a for $2, features '${3:-(none)}' (opt-level $RK_OPT_LEVEL)" >&2
    CARGO_PROFILE_RELEASE_PANIC=abort cargo rustc --quiet --manifest-path "$repo/Cargo.toml" -p ranklet-ffi \
        --no-default-features ${3:+--features "$3"} --release --lib --crate-type staticlib --target "$2"
    cp "${CARGO_TARGET_DIR:-$repo/target}/$2/release/libranklet_ffi.a" "$out/lib-$1.a"
}

# bench_model RANKLET: the d = 136 linear RankRLS model of the figures,
# trained by RANKLET on bench/device/gen.py's rows in $out (so the file name
# its metadata stores is the short relative one): $out/d136.light,
# d136.rkl, the device copy d136.device.rkl (`export --strip-metadata`),
# and bench_model.h (the device copy and the first 32 rows as C arrays).
bench_model() {
    python3 "$dev/gen.py" data "$out/d136.light"
    (cd "$out" && "$1" train --algo rankrls --kernel linear --lambda 1 --data d136.light -o d136.rkl >&2)
    "$1" export -m "$out/d136.rkl" --strip-metadata -o "$out/d136.device.rkl"
    python3 "$dev/gen.py" header "$out/d136.device.rkl" "$out/d136.light" 32 >"$out/bench_model.h"
}

CPU_M4F=(-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16)
CPU_M3=(-mcpu=cortex-m3 -mthumb -mfloat-abi=soft)
CPU_M0=(-mcpu=cortex-m0 -mthumb -mfloat-abi=soft)
ARM_CFLAGS=(-std=c11 -O2 -ffreestanding -fno-builtin
    -ffunction-sections -fdata-sections -Wall -Wextra -Werror -I "$repo/include" -I "$fw" -I "$out")

# firmware VARIANT NAME CPU-ARRAY-NAME [LIB]: footprint.c with FP_VARIANT
# VARIANT as $out/fpVARIANT-NAME.elf (and its -fstack-usage file
# fpVARIANT-NAME.su). NAME m0 links $dev/microbit.ld (the nRF51's 256 KiB
# flash, 16 KiB RAM, 4 KiB stack), every other the MPS2 script.
firmware() {
    local -n cpu="$3"
    local ld="$fw/mps2-an386.ld"; [ "$2" = m0 ] && ld="$dev/microbit.ld"
    (cd "$out" && arm-none-eabi-gcc "${ARM_CFLAGS[@]}" "${cpu[@]}" -fstack-usage -DFP_VARIANT="$1" -nostdlib -nostartfiles \
        -T "$ld" -Wl,--gc-sections -Wl,-z,noexecstack -o "$out/fp$1-$2.elf" \
        "$fw/startup.c" "$repo/tests/support/mem.c" "$dev/footprint.c" ${4:+"$4"} -lgcc && mv "fp$1-$2.elf-footprint.su" "fp$1-$2.su")
}

# Boards: M4F on mps2-an386, M3 on mps2-an385 (same memory map, 25 MHz), M0
# on microbit (16 MHz). SysTick ticks at the processor clock, so under
# -icount shift=0 one tick is 1e9 / clock instructions (IPT).
declare -A BOARD=([m4f]=mps2-an386 [m3]=mps2-an385 [m0]=microbit) IPT=([m4f]=40 [m3]=40 [m0]=62.5)

# qemu BOARD ICOUNT ELF OUT: run a firmware (ICOUNT 1: -icount shift=0),
# its semihosted output into OUT.
qemu() {
    local icount=(); [ "$2" = 1 ] && icount=(-icount shift=0)
    timeout 600 qemu-system-arm -M "$1" -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native "${icount[@]}" -kernel "$3" >"$4" 2>&1 \
        || { cat "$4"; echo "device: $3 failed on $1" >&2; return 1; }
}

# per_feature CPU OUT: from an FP_VARIANT 2 run's output, the line
# "STACK_PARSE STACK_SCORE STACK_BATCH IPF_BATCH IPF_SINGLE IPF_PLAIN"
# (painted stack in bytes; instructions per feature, two decimals).
per_feature() {
    local sp ss sb nr dm tb ts tp
    read -r _ _ sp _ ss _ sb < <(grep '^stack ' "$2")
    read -r _ _ nr _ dm _ tb _ ts _ tp _ < <(grep '^ticks ' "$2")
    python3 -c "import sys; k = float(sys.argv[1]) / (int(sys.argv[2]) * int(sys.argv[3])); print(*sys.argv[4:7], *('%.2f' % (int(t) * k) for t in sys.argv[7:]))" \
        "${IPT[$1]}" "$nr" "$dm" "$sp" "$ss" "$sb" "$tb" "$ts" "$tp"
}

# text ELF: the .text bytes of a firmware.
text() { arm-none-eabi-size -A "$1" | awk '$1 == ".text" { print $2 }'; }
# calc EXPR: a Python expression's value.
calc() { python3 -c "print($1)"; }

# learner_firmwares SRC MACRO DIR LIB [C-FILE...]: a device learner's
# benchmark program $dev/SRC (online.c, pref.c) with MACRO (its variant)
# 0..4 for the Cortex-M4F (MPS2 script, headers from DIR), linked with LIB
# and the C-FILEs, as DIR/v0.elf..v4.elf; v4 run under qemu -icount
# shift=0 into DIR/v4.out. Prints the .text that variants 1, 2 and 3 add to
# variant 0.
learner_firmwares() {
    local src="$1" macro="$2" w="$3" lib="$4" v t0
    shift 4
    for v in 0 1 2 3 4; do
        arm-none-eabi-gcc "${ARM_CFLAGS[@]}" "${CPU_M4F[@]}" -I "$w" -D"$macro=$v" -nostdlib -nostartfiles \
            -T "$fw/mps2-an386.ld" -Wl,--gc-sections -Wl,-z,noexecstack -o "$w/v$v.elf" \
            "$fw/startup.c" "$repo/tests/support/mem.c" "$dev/$src" "$@" "$lib" -lgcc
    done
    qemu "${BOARD[m4f]}" 1 "$w/v4.elf" "$w/v4.out"
    cat "$w/v4.out" >&2
    t0=$(text "$w/v0.elf")
    echo "$(($(text "$w/v1.elf") - t0)) $(($(text "$w/v2.elf") - t0)) $(($(text "$w/v3.elf") - t0))"
}

# doc_section HEADING SECTION: SECTION (markdown that starts with "##
# HEADING") in place of that section of docs/performance.md (up to the
# next heading or HTML comment, so markers between sections stay), or
# appended.
doc_section() {
    python3 - "$repo/docs/performance.md" "$1" "$2" <<'PY'
import os, re, sys
path, heading, section = sys.argv[1:4]
text = open(path).read() if os.path.exists(path) else ""
pat = re.compile(r"## " + re.escape(heading) + r"\n.*?(?=\n## |\n<!-- |\Z)", re.S)
text = pat.sub(lambda _: section.strip() + "\n", text) if pat.search(text) else text.rstrip() + "\n\n" + section.strip() + "\n"
open(path, "w").write(text)
PY
    printf '%s\n' "$2"
}

# need_arm_tools NAME: exits (status 1, naming NAME) unless the ARM
# toolchain, QEMU and python3 are on the PATH.
need_arm_tools() {
    local t
    for t in arm-none-eabi-gcc arm-none-eabi-size qemu-system-arm python3; do
        command -v "$t" >/dev/null || { echo "$1: $t is missing (bash tests/firmware/run.sh installs the ARM tools)" >&2; exit 1; }
    done
}
