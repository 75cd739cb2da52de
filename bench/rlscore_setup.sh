#!/usr/bin/env bash
# Installs RLScore (the reference KronRLS / CGKronRLS / RankRLS of its
# authors) into a Python virtual environment, as
# ../shared/anchors/README.md describes. Idempotent: an existing venv with a
# working `import rlscore` is left as it is.
#
# Usage: bench/rlscore_setup.sh [VENV_DIR]        (default /tmp/rlsvenv)
# Env:   RLSCORE_ANCHORS  directory holding rlscore-src.tar.gz
#                         (default: <repo>/../shared/anchors)
#        RLSCORE_SRC      where the source is unpacked (default /tmp/rlscore;
#                         its docs/src/*.py are RLScore's examples)
#        PYTHON           the interpreter that makes the venv (default python3)
# Prints the venv's python on stdout; progress goes to stderr.
# RLScore is needed only to *generate* reference fixtures; no test runs it.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-/tmp/rlsvenv}"
anchors="${RLSCORE_ANCHORS:-$repo/../shared/anchors}"
src="${RLSCORE_SRC:-/tmp/rlscore}"
py="${PYTHON:-python3}"
tarball="$anchors/rlscore-src.tar.gz"

if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import rlscore.learner' 2>/dev/null; then
    echo "rlscore_setup: $venv already has RLScore" >&2
    echo "$venv/bin/python"
    exit 0
fi
[ -f "$tarball" ] || { echo "rlscore_setup: $tarball not found (set RLSCORE_ANCHORS)" >&2; exit 1; }

[ -x "$venv/bin/python" ] || { echo "rlscore_setup: creating $venv" >&2; "$py" -m venv "$venv"; }
echo "rlscore_setup: installing numpy scipy cython setuptools" >&2
# --upgrade: a fresh venv of Python 3.11 ships setuptools 65, which stays in
# place without it and rejects RLScore's pyproject.toml (`license = "MIT"`
# needs setuptools >= 77; the file asks for >= 80, plus setuptools-scm for
# the version). The anchors README's plain `pip install` fails on that.
"$venv/bin/pip" install --quiet --upgrade numpy scipy cython "setuptools>=80" "setuptools-scm>=8" wheel >&2

if [ ! -f "$src/setup.py" ]; then
    echo "rlscore_setup: unpacking $tarball into $src" >&2
    mkdir -p "$src"
    tar -xzf "$tarball" -C "$src"
fi
[ -f "$src/setup.py" ] || { echo "rlscore_setup: $src/setup.py missing after unpacking" >&2; exit 1; }
echo "rlscore_setup: building and installing RLScore from $src" >&2
"$venv/bin/pip" install --quiet --no-build-isolation "$src" >&2
"$venv/bin/python" -c 'import rlscore.learner' >&2
echo "$venv/bin/python"
