#!/usr/bin/env bash
# The tests: the Rust workspace (`cargo test --workspace`), then the Python
# package's pytest suite against the extension built from this tree.
#
# Python side: a virtual environment under target/pyenv (made once, reused;
# remade when python/requirements-test.txt changes) with the pinned test
# requirements; the extension built by cargo in the `test` profile
# (optimised, as the Rust tests are; it shares their compiled dependencies,
# so it costs one crate's build), copied into python/ranklet/ and imported
# from the source tree; pytest runs python/tests and the docstring examples.
# The CLI comparisons run target/debug/ranklet, built by the Rust tests.
#
# Needs: cargo, and python3 ≥ 3.9 with the venv module (Debian:
# python3-venv); pip downloads the requirements on the first run.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace

venv=target/pyenv
req=python/requirements-test.txt
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$req" "$venv/requirements-test.txt"; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet -r "$req"
    cp "$req" "$venv/requirements-test.txt"
fi

# The CLI (target/debug/ranklet) is the one the Rust tests built; building
# it again here without their dev-dependencies would relink it.
start=$(date +%s)
cargo build --profile test -p ranklet-py
echo "extension built in $(($(date +%s) - start)) s"
cp target/debug/lib_ranklet.so python/ranklet/_ranklet.abi3.so

export RANKLET_BIN="$PWD/target/debug/ranklet"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
"$venv/bin/python" -m pytest -q python/tests --doctest-modules python/ranklet -p no:cacheprovider
