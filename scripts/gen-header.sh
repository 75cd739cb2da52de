#!/usr/bin/env bash
# Regenerates include/ranklet.h from ffi/src/ (lib.rs and its modules) with a pinned cbindgen,
# installing that exact version (from crates.io, --locked) if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
CBINDGEN_VERSION=0.29.4
if ! command -v cbindgen >/dev/null || [ "$(cbindgen --version)" != "cbindgen $CBINDGEN_VERSION" ]; then
    cargo install cbindgen --version "$CBINDGEN_VERSION" --locked
fi
out="${1:-include/ranklet.h}"
cbindgen --quiet --config ffi/cbindgen.toml --crate ranklet-ffi --output "$out" ffi
