#!/usr/bin/env bash
# Emulated device run of integer scoring on a core without an FPU: a
# quantised linear model (kind 7) scored by ranklet's C ABI on a Cortex-M3
# (QEMU mps2-an385), compared with `ranklet score` on the host.
#
#  1. Needs arm-none-eabi-gcc and qemu-system-arm (tests/firmware/run.sh
#     installs them; this script does the same when they are missing) and
#     the thumbv7m-none-eabi Rust target (rustup target add).
#  2. Builds libranklet_ffi.a for thumbv7m-none-eabi (no_std, no kernel
#     scoring, --release, panic = "abort").
#  3. Two data sets: MSLR-like (bench/device/gen.py, 240 rows, d = 136) and
#     the red wine (data/wine-quality, 1599 rows, d = 11). For each, trains
#     a linear RankRLS model in f32 with `ranklet train` (the wine with
#     --standardize), quantises it with `ranklet export --quantize i16`
#     (calibrated on the same rows), and scores the rows on the host with
#     both models (`ranklet score`: floats, and the quantised model's
#     integers). `ranklet eval --reference` reports Kendall tau of the
#     integer scores against the float ones.
#  4. Builds tests/firmware/quant.c with the models (`ranklet export
#     --c-array`) and the rows (quanttool.py header) for -mcpu=cortex-m3
#     (soft float), runs it under qemu-system-arm -M mps2-an385, and checks
#     that its integer scores equal the host's exactly (quanttool.py check);
#     prints tau of the device's scores against the host's float scores.
#
# Exit status: 0 equal; 1 a build, run or comparison failed; 77 the tools
# could not be installed, so the test did NOT run (a loud banner says so).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$repo/target}"
out="$target_dir/firmware-quant"
mkdir -p "$out"
NOT_RUN=77
TARGET=thumbv7m-none-eabi
QEMU_TIMEOUT="${QEMU_TIMEOUT:-300}"

not_run() {
    printf '\n%s\n' '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!'
    printf '!!! QUANTISED FIRMWARE TEST NOT RUN: %s\n' "$@"
    printf '!!! Integer scoring was NOT exercised on the emulated Cortex-M3 in this run.\n'
    printf '%s\n\n' '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!'
    exit "$NOT_RUN"
}

# ---- 1. toolchain, emulator, Rust target ----
have_tools() {
    command -v arm-none-eabi-gcc >/dev/null && command -v qemu-system-arm >/dev/null \
        && command -v arm-none-eabi-size >/dev/null
}
if ! have_tools; then
    command -v apt-get >/dev/null || not_run "apt-get is not available to install the ARM toolchain and QEMU"
    as_root=()
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null || not_run "not root and no sudo: cannot apt-get install the ARM toolchain"
        as_root=(sudo -n)
    fi
    if ! { "${as_root[@]}" apt-get update -q >/dev/null \
        && DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -q --no-install-recommends \
            gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm >/dev/null; }; then
        not_run "apt-get install of gcc-arm-none-eabi/qemu-system-arm failed (offline?)"
    fi
    have_tools || not_run "the ARM toolchain or QEMU is still missing after apt-get install"
fi
if ! rustup target list --installed 2>/dev/null | grep -qx "$TARGET"; then
    rustup target add "$TARGET" || not_run "rustup target add $TARGET failed"
fi

# ---- 2. the library, for the Cortex-M3 ----
echo "quant firmware: building libranklet_ffi.a for $TARGET (no_std, release, panic=abort)"
CARGO_PROFILE_RELEASE_PANIC=abort cargo rustc --quiet --manifest-path "$repo/Cargo.toml" -p ranklet-ffi \
    --no-default-features --features quant --release --lib --crate-type staticlib --target "$TARGET" --target-dir "$target_dir"
lib="$target_dir/$TARGET/release/libranklet_ffi.a"

# ---- 3. models and host scores ----
if [ -n "${RANKLET_BIN:-}" ]; then
    ranklet="$RANKLET_BIN"
else
    cargo build --quiet --release --manifest-path "$repo/Cargo.toml" -p ranklet --target-dir "$target_dir"
    ranklet="$target_dir/release/ranklet"
fi
python3 "$repo/bench/device/gen.py" data "$out/mslr.light"
cp "$repo/data/wine-quality/winequality_red.svmlight" "$out/wine.light"
(cd "$out" && "$ranklet" train --algo rankrls --kernel linear --lambda 1 --data mslr.light -o mslr.rkl >/dev/null)
(cd "$out" && "$ranklet" train --algo rankrls --kernel linear --lambda 1 --standardize --data wine.light -o wine.rkl >/dev/null)
for s in mslr wine; do
    "$ranklet" export -m "$out/$s.rkl" --quantize i16 --calibrate "$out/$s.light" -o "$out/$s.q16.rkl"
    "$ranklet" score -m "$out/$s.rkl" --data "$out/$s.light" >"$out/$s.float"
    "$ranklet" score -m "$out/$s.q16.rkl" --data "$out/$s.light" >"$out/$s.q16"
    echo "quant firmware: $s: ranklet eval of the quantised model against the float model:"
    "$ranklet" eval -m "$out/$s.q16.rkl" --data "$out/$s.light" --reference "$out/$s.rkl" | sed 's/^/    /'
done

# ---- 4. firmware: build, run, compare ----
srcs=()
for s in mslr wine; do
    "$ranklet" export -m "$out/$s.q16.rkl" --strip-metadata --c-array "qf_model_$s" >"$out/qf_model_$s.c"
    srcs+=("$out/qf_model_$s.c")
done
python3 "$here/quanttool.py" header "$out/quant_fw.h" mslr="$out/mslr.q16.rkl:$out/mslr.light" \
    wine="$out/wine.q16.rkl:$out/wine.light"
CFLAGS=(-std=c11 -O2 -g -mcpu=cortex-m3 -mthumb -mfloat-abi=soft
    -ffreestanding -fno-builtin -ffunction-sections -fdata-sections
    -Wall -Wextra -Werror -I "$repo/include" -I "$here" -I "$out")
(cd "$out" && arm-none-eabi-gcc "${CFLAGS[@]}" -nostdlib -nostartfiles -T "$here/mps2-an386.ld" \
    -Wl,--gc-sections -Wl,-z,noexecstack -o "$out/quant_m3.elf" \
    "$here/startup.c" "$repo/tests/support/mem.c" "$here/quant.c" "${srcs[@]}" "$lib" -lgcc)
if arm-none-eabi-nm "$out/quant_m3.elf" | grep -qiE ' (malloc|free|__rust_alloc|__rg_alloc)$'; then
    echo "quant firmware: an allocator symbol was linked" >&2
    exit 1
fi
if arm-none-eabi-objdump -d "$out/quant_m3.elf" | grep -qE '\bv(add|mul|div|ldr|str)\.f(32|64)\b'; then
    echo "quant firmware: FPU instructions in a Cortex-M3 image" >&2
    exit 1
fi
arm-none-eabi-size "$out/quant_m3.elf"

echo "quant firmware: running quant_m3.elf on qemu-system-arm -M mps2-an385 (Cortex-M3, timeout ${QEMU_TIMEOUT}s)"
set +e
timeout "$QEMU_TIMEOUT" qemu-system-arm -M mps2-an385 -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native -kernel "$out/quant_m3.elf" >"$out/quant_m3.out" 2>&1
qemu_status=$?
set -e
grep -v '^qscore ' "$out/quant_m3.out" || true
if [ "$qemu_status" = 124 ]; then
    echo "QUANTISED FIRMWARE TEST FAILED: qemu did not finish within ${QEMU_TIMEOUT}s" >&2
    exit 1
fi
if [ "$qemu_status" != 0 ]; then
    echo "QUANTISED FIRMWARE TEST FAILED: the firmware exited with status $qemu_status" >&2
    exit 1
fi
if ! python3 "$here/quanttool.py" check "$out/quant_m3.out" mslr="$out/mslr.q16" wine="$out/wine.q16"; then
    echo "QUANTISED FIRMWARE TEST FAILED: device integer scores differ from ranklet score on the host" >&2
    exit 1
fi
python3 "$here/quanttool.py" tau "$out/quant_m3.out" mslr="$out/mslr.float" wine="$out/wine.float"
echo "quant firmware: OK: integer scores on the emulated Cortex-M3 equal ranklet score on the host"
