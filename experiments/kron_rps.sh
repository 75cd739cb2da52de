#!/usr/bin/env bash
# 004 §6.1: rock-paper-scissors, Kronecker RLS / RankRLS, ordinary vs reciprocal kernel.
# Rewrites the 'kron-rps' section of docs/results.md. Arguments: repetitions (default 100),
# repetitions per α of the sweep (20), repetitions checked against the explicit system (2).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/../target}"
[ "${SKIP_BUILD:-0}" = 1 ] || cargo build --release -p ranklet --manifest-path "$here/../Cargo.toml"
python3 -c 'import numpy' 2>/dev/null || python3 -m pip install --quiet numpy
exec python3 "$here/kron_rps.py" "$@"
