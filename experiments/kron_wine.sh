#!/usr/bin/env bash
# 004 §6.2 design: a symmetric relation between wines of unseen quality groups (kron-rls closed form and CG, kron-rankrls CG).
# Rewrites the 'kron-wine' section of docs/results.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/../target}"
[ "${SKIP_BUILD:-0}" = 1 ] || cargo build --release -p ranklet --manifest-path "$here/../Cargo.toml"
python3 -c 'import numpy' 2>/dev/null || python3 -m pip install --quiet numpy
exec python3 "$here/kron_wine.py" "$@"
