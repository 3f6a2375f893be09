"""The README cannot drift from the code: every code block in it runs, or says why not.

Each ```python block runs, in order, in one fresh folder (a block may read the files an
earlier one wrote), each in a new namespace.  A block that is not meant to run here is
preceded by an HTML comment ``<!-- readme-test: ... -->`` giving the reason; the Quick start's
commands are run by ``.ci/run``, which takes them from the README (checked here too).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARK = re.compile(r"<!--\s*readme-test:((?:(?!-->).)*)-->\Z", re.S)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)


def blocks():
    """(line, language, code, reason not to run or None) of each fenced block of the README."""
    text = README.read_text()
    out = []
    for match in FENCE.finditer(text):
        before = text[:match.start()]
        mark = MARK.search(before.rstrip())  # a comment right before the fence
        line = before.count("\n") + 1
        out.append((line, match.group(1), match.group(2), mark.group(1).strip() if mark else None))
    return out


def test_every_block_runs_or_says_why_not():
    found = blocks()
    assert len(found) >= 8
    for line, language, _, reason in found:
        assert language, f"README.md:{line}: a code block without a language"
        assert language == "python" or reason, \
            f"README.md:{line}: a {language} block must say why the tests do not run it"


RUN = [(line, code) for line, language, code, reason in blocks() if language == "python" and not reason]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("readme")


@pytest.mark.parametrize("line,code", RUN, ids=[f"line{line}" for line, _ in RUN])
def test_python_block_runs(line, code, folder, monkeypatch):
    monkeypatch.chdir(folder)
    namespace = {"__name__": "__readme__"}
    exec(compile(code, f"README.md:{line}", "exec"), namespace)


def quick_start() -> list:
    """The Quick start's commands, as .ci/run extracts them."""
    proc = subprocess.run(["bash", str(ROOT / ".ci" / "run"), "--print-quick-start"],
                          capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_ci_runs_the_quick_start_as_written():
    text = README.read_text()
    section = text[text.index("## Quick start"):]
    code = FENCE.search(section).group(2)
    assert quick_start() == code.strip().splitlines() == [
        'pip install ".[spark]" && arrowmm demo',
        'pip install -e ".[test]" && python -m pytest -q',
    ]
