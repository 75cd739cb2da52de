#!/usr/bin/env bash
# Learning on the device: active vs random questions to the online RankRLS learner (001 §5).
# Rewrites the feedback section of docs/results.md and docs/img/feedback_*.png.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/../target}"
[ "${SKIP_BUILD:-0}" = 1 ] || cargo build --release -p ranklet --manifest-path "$here/../Cargo.toml"
python3 -c 'import numpy' 2>/dev/null || python3 -m pip install --quiet numpy
exec python3 "$here/feedback.py" "$@"
