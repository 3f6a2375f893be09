"""``ruff check arrowmm tests benchmarks`` is clean, with the rules of ``ruff.toml`` (pyflakes,
ruff's default pycodestyle errors, and the codes the tree's noqa comments name), and those
rules do catch a planted unused import and blind except.  Takes about a second."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ruff() -> str:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if found is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]' brings it)")
    return found


def test_the_tree_is_clean():
    done = subprocess.run([_ruff(), "check", "--no-cache", "arrowmm", "tests", "benchmarks"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_rules_catch_what_the_noqa_comments_name(tmp_path):
    """The config is read and its rules are on: a file in the tree's style with an unused
    import, a blind except and a shadowed builtin fails, each by its code."""
    planted = tmp_path / "planted.py"
    planted.write_text("import os\n\n\ndef f(type):\n    try:\n        return type()\n"
                       "    except Exception:\n        return None\n")
    done = subprocess.run([_ruff(), "check", "--no-cache", "--config", str(ROOT / "ruff.toml"),
                           "--output-format", "concise", str(planted)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    for code in ("F401", "BLE001", "A002"):
        assert code in done.stdout, (code, done.stdout)
