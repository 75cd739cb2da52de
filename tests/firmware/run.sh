#!/usr/bin/env bash
# Emulated device run: ranklet's C ABI scoring on a Cortex-M4F (QEMU
# mps2-an386), compared with `ranklet score` on the host.
#
#  1. Installs gcc-arm-none-eabi, libnewlib-arm-none-eabi and qemu-system-arm
#     with apt-get when they are missing.
#  2. Builds libranklet_ffi.a for thumbv7em-none-eabihf (no_std:
#     --no-default-features --features kernel,f64,centring,all-kinds (no
#     std; the RBF, standardised linear and pair models are scored too),
#     --release, panic = "abort").
#  3. Trains a linear RankRLS model (standardised features) and an RBF
#     RankRLS model with `ranklet train` on data.light, and scores data.light
#     with each on the host (`ranklet score`).
#     Applies the recorded feedback (feedback.txt) to an online learner
#     started from the linear model (`ranklet online-update`).
#  4. Exports both models as C arrays (`ranklet export --c-array`), embeds
#     the rows as f32 (fwtool.py header), links firmware.c +
#     startup.c + mps2-an386.ld with arm-none-eabi-gcc (no libc, no heap),
#     runs it under qemu-system-arm with a timeout, and compares the printed
#     f32 scores (relative 1e-6) and rankings with the host (fwtool.py check),
#     and the online learner's weights after the same feedback on the device
#     with the host's (relative 1e-4), after a save/reload through the A/B
#     store and a damaged newer save that must not load.
#  5. Pair model (kind 3): core/examples/pair_fixture.rs fits a symmetric
#     Kronecker model with a linear node kernel on the rows of data.light,
#     writes it as a bilinear .rkl and the scores ranklet-core computes on
#     the host for every row as candidate of rows 0 and 1; the firmware
#     ranks the same candidates (rk_rank_candidates), checks exact symmetry,
#     and fwtool.py compares its scores with the host's (relative 1e-6) and
#     its order with a sort of its scores.
#  6. Preference GP (kind 8): core/examples/pref_fixture.rs writes a prior
#     over 32 items, 40 observed preferences and the posterior ranklet-core
#     computes from them on the host in f64 (the same ADF updates); the
#     firmware applies them with rk_pref_observe in f32, and fwtool.py
#     compares the posterior mean and covariance (1e-4, scaled by
#     max(1, |host|)), P(i > j) and its variance, the next pair (the host's
#     ratio at the device's pair within 1e-3 of the host's best) and the
#     ranking (consistent with the host means).
#  7. Scoring cost (run_perf.sh): instructions per feature, painted stack
#     and code size of the smallest build on the Cortex-M4F and M3 under
#     qemu -icount, against the bounds in perf_bounds.txt.
#
# Exit status: 0 all agree; 1 a build, run or comparison failed;
# 77 the emulator toolchain could not be installed, so the firmware test did
# NOT run (a loud banner says so; CI decides whether that fails the build).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$repo/target}"
out="$target_dir/firmware"
mkdir -p "$out"
NOT_RUN=77
TARGET=thumbv7em-none-eabihf
QEMU_TIMEOUT="${QEMU_TIMEOUT:-120}"

not_run() {
    printf '\n%s\n' '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!'
    printf '!!! FIRMWARE TEST NOT RUN: %s\n' "$@"
    printf '!!! The scoring path was NOT exercised on the emulated Cortex-M4 in this run.\n'
    printf '%s\n\n' '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!'
    exit "$NOT_RUN"
}

# ---- 1. toolchain and emulator ----
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
    echo "firmware: installing gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm"
    if ! { "${as_root[@]}" apt-get update -q >/dev/null \
        && DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -q --no-install-recommends \
            gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm >/dev/null; }; then
        not_run "apt-get install of gcc-arm-none-eabi/libnewlib-arm-none-eabi/qemu-system-arm failed (offline?)"
    fi
    have_tools || not_run "the ARM toolchain or QEMU is still missing after apt-get install"
fi
if ! rustup target list --installed 2>/dev/null | grep -qx "$TARGET"; then
    rustup target add "$TARGET" || not_run "rustup target add $TARGET failed"
fi

# ---- 2. the library, for the device ----
echo "firmware: building libranklet_ffi.a for $TARGET (no_std, release, panic=abort)"
CARGO_PROFILE_RELEASE_PANIC=abort cargo rustc --quiet --manifest-path "$repo/Cargo.toml" -p ranklet-ffi \
    --no-default-features --features kernel,f64,centring,all-kinds --release --lib --crate-type staticlib --target "$TARGET" --target-dir "$target_dir"
lib="$target_dir/$TARGET/release/libranklet_ffi.a"

# ---- 3. models and host scores ----
# RANKLET_BIN reuses an already built `ranklet` (CI passes the one `cargo
# test` built, saving a second optimised build of the host crates).
if [ -n "${RANKLET_BIN:-}" ]; then
    ranklet="$RANKLET_BIN"
else
    cargo build --quiet --release --manifest-path "$repo/Cargo.toml" -p ranklet --target-dir "$target_dir"
    ranklet="$target_dir/release/ranklet"
fi
data="$here/data.light"
"$ranklet" train --algo rankrls --kernel linear --lambda 0.5 --standardize --data "$data" -o "$out/linear.rkl"
"$ranklet" train --algo rankrls --kernel rbf:0.5 --lambda 0.1 --data "$data" -o "$out/rbf.rkl"
for m in linear rbf; do
    "$ranklet" score -m "$out/$m.rkl" --data "$data" >"$out/$m.host"
done
# The online learner: the recorded feedback applied on the host, from the
# linear model as prior, as the firmware applies it.
"$ranklet" online-update -m "$out/linear.rkl" --data "$data" --pairs "$here/feedback.txt" --lambda 1 \
    -o "$out/online.rkl"

# The pair model and its host scores (ranklet-core, the host library).
cargo run --quiet --release --manifest-path "$repo/Cargo.toml" -p ranklet-core --example pair_fixture \
    --target-dir "$target_dir" -- "$data" "$out"
# The preference GP: prior, observations, host posterior.
cargo run --quiet --release --manifest-path "$repo/Cargo.toml" -p ranklet-core --example pref_fixture \
    --target-dir "$target_dir" -- "$out" 32 40

# ---- 4. firmware: build, run, compare ----
# The models as C arrays: `ranklet export --c-array` where this ranklet has it,
# else the same C file from fwtool.py (said loudly, so nobody mistakes it).
model_srcs=()
for m in linear rbf; do
    if "$ranklet" export --help >/dev/null 2>&1; then
        "$ranklet" export -m "$out/$m.rkl" --c-array "fw_model_$m" >"$out/fw_model_$m.c"
    else
        echo "firmware: NOTE: this ranklet has no 'export' command; fwtool.py writes the C array of $m.rkl"
        python3 "$here/fwtool.py" c-array "fw_model_$m" "$out/$m.rkl" >"$out/fw_model_$m.c"
    fi
    model_srcs+=("$out/fw_model_$m.c")
done
python3 "$here/fwtool.py" c-array fw_model_bilinear "$out/bilinear.rkl" >"$out/fw_model_bilinear.c"
model_srcs+=("$out/fw_model_bilinear.c")
python3 "$here/fwtool.py" c-array fw_model_pref "$out/pref.rkl" >"$out/fw_model_pref.c"
model_srcs+=("$out/fw_model_pref.c")
python3 "$here/fwtool.py" header "$data" linear rbf --feedback "$here/feedback.txt" >"$out/fw_models.h"
CFLAGS=(-std=c11 -O2 -g -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16
    -ffreestanding -fno-builtin -ffunction-sections -fdata-sections -fstack-usage
    -Wall -Wextra -Werror -I "$repo/include" -I "$here" -I "$out")
(cd "$out" && arm-none-eabi-gcc "${CFLAGS[@]}" -nostdlib -nostartfiles -T "$here/mps2-an386.ld" \
    -Wl,--gc-sections -Wl,-z,noexecstack -Wl,-Map="$out/fw.map" -o "$out/fw.elf" \
    "$here/startup.c" "$here/../support/mem.c" "$here/firmware.c" "${model_srcs[@]}" "$lib" -lgcc)
if arm-none-eabi-nm "$out/fw.elf" | grep -qiE ' (malloc|free|__rust_alloc|__rg_alloc)$'; then
    echo "firmware: an allocator symbol was linked into fw.elf" >&2
    exit 1
fi
arm-none-eabi-size "$out/fw.elf"

echo "firmware: running fw.elf on qemu-system-arm -M mps2-an386 (timeout ${QEMU_TIMEOUT}s)"
set +e
timeout "$QEMU_TIMEOUT" qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native -kernel "$out/fw.elf" >"$out/fw.out" 2>&1
qemu_status=$?
set -e
cat "$out/fw.out"
if [ "$qemu_status" = 124 ]; then
    echo "FIRMWARE TEST FAILED: qemu did not finish within ${QEMU_TIMEOUT}s" >&2
    exit 1
fi
if [ "$qemu_status" != 0 ]; then
    echo "FIRMWARE TEST FAILED: the firmware exited with status $qemu_status" >&2
    exit 1
fi
if ! python3 "$here/fwtool.py" check "$out/fw.out" linear="$out/linear.host" rbf="$out/rbf.host" \
    online="$out/online.rkl" pairs="$out/bilinear.host" pref="$out/pref.host"; then
    echo "FIRMWARE TEST FAILED: device scores or rankings differ from the host (see MISMATCH lines)" >&2
    exit 1
fi
echo "firmware: OK: scores and rankings on the emulated Cortex-M4F agree with ranklet on the host"

# ---- 7. scoring cost against committed bounds ----
RANKLET_BIN="$ranklet" bash "$here/run_perf.sh" || {
    echo "FIRMWARE TEST FAILED: device scoring cost over tests/firmware/perf_bounds.txt (see above)" >&2
    exit 1
}
