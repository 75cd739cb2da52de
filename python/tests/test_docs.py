"""The tutorial of docs/python.md runs as written: its Python blocks in one
interpreter, then its shell blocks, from the repository's root (in a
temporary copy of nothing but the working directory: outputs go to a
temporary directory)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ranklet_bin

ROOT = Path(__file__).resolve().parents[2]


def blocks(lang):
    text = (ROOT / "docs" / "python.md").read_text()
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def test_tutorial_runs_as_written(tmp_path):
    if ranklet_bin() is None:
        pytest.skip("the ranklet CLI is not built (set RANKLET_BIN; scripts/test.sh does)")
    # The data paths are relative to the root; the outputs land in tmp_path.
    (tmp_path / "data").symlink_to(ROOT / "data")
    env = dict(os.environ, R=ranklet_bin())
    py = "\n".join(blocks("python"))
    r = subprocess.run([sys.executable, "-c", py], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "test NDCG@10:" in r.stdout
    for sh in blocks("sh")[1:]:  # the first is the install command
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env["PATH"]
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", sh], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    assert "ranklet score == predict on 100 rows" in r.stdout
