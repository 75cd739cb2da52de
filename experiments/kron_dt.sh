#!/usr/bin/env bash
# 004 §6 design: drug–target (NR) conditional ranking of held-out drugs and targets vs the eq. 41 baseline.
# Rewrites the 'kron-drug-target' section of docs/results.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/../target}"
[ "${SKIP_BUILD:-0}" = 1 ] || cargo build --release -p ranklet --manifest-path "$here/../Cargo.toml"
python3 -c 'import numpy' 2>/dev/null || python3 -m pip install --quiet numpy
exec python3 "$here/kron_dt.py" "$@"
