#!/usr/bin/env bash
# Fails if include/ranklet.h differs from what the pinned cbindgen generates
# from ffi/src/ (the header is checked in; regenerate with
# scripts/gen-header.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
bash scripts/gen-header.sh "$tmp"
if ! diff -u include/ranklet.h "$tmp"; then
    echo "include/ranklet.h is stale: run scripts/gen-header.sh and commit it" >&2
    exit 1
fi
echo "include/ranklet.h is up to date"
