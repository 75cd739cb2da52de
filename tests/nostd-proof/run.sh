#!/usr/bin/env bash
# Build ranklet-core into a freestanding static library (no std, no alloc,
# panic = "abort"), link it with `gcc -nostdlib -static` against tests/support's C
# entry point, and run it. Fails if core needs an allocator, libc or unwinding.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
target_dir="${CARGO_TARGET_DIR:-$here/../../target}/nostd-proof"
cargo build --quiet --release --manifest-path "$here/Cargo.toml" --target-dir "$target_dir"
lib="$target_dir/release/libranklet_nostd_proof.a"
out="$target_dir/ranklet-nostd-proof"
gcc -O2 -static -nostdlib -ffreestanding -fno-stack-protector -fno-builtin \
    -o "$out" "$here/../support/start_x86_64.c" "$here/../support/mem.c" "$lib" -Wl,--gc-sections
if nm "$out" | grep -E ' U ' ; then
    echo "nostd-proof: unresolved symbols above" >&2; exit 1
fi
if nm "$out" | grep -qiE '__rust_alloc|__rg_alloc|malloc'; then
    echo "nostd-proof: an allocator symbol was linked in" >&2; exit 1
fi
"$out"
echo "nostd-proof: freestanding link of ranklet-core ran OK ($(stat -c %s "$out") bytes, no allocator, no libc)"
