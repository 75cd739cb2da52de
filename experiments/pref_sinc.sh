#!/usr/bin/env bash
# Preference GPs: see experiments/pref_sinc.py for the design. Rewrites the
# 'pref-sinc' section of docs/results.md (and its figures in docs/img/).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/../target}"
[ "${SKIP_BUILD:-0}" = 1 ] || cargo build --release -p ranklet --manifest-path "$here/../Cargo.toml"
python3 -c 'import numpy, scipy' 2>/dev/null || python3 -m pip install --quiet numpy scipy
exec python3 "$here/pref_sinc.py" "$@"
