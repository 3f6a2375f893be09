"""The README cannot drift from the code: every code block in it runs, or says why not.

The README is the front door (what, why, install, the Quick start, a tour, links); the manual
is ``docs/`` (``tests/project/test_docs.py``).  Each ```python block runs, in order, in one fresh folder,
each in a new namespace; a block that is not meant to run here is preceded by an HTML comment
``<!-- readme-test: ... -->`` giving the reason (``docs_support`` runs both files' blocks).  The
Quick start's commands are run by ``.ci/run``, which takes them from the README (checked here).
"""
from __future__ import annotations

import re
import subprocess

import pytest

from tests.support.docs_support import FENCE, README, ROOT, blocks, run_block, runnable
from tests.support.docs_support import unlabelled_or_unexplained

BLOCKS = blocks(README)
RUN = runnable(BLOCKS)
#: The front door stays short: everything else belongs to a page of the manual.
MAX_LINES = 250


def test_every_block_runs_or_says_why_not():
    assert len(BLOCKS) >= 2 and len(RUN) >= 1
    assert not unlabelled_or_unexplained(BLOCKS)


def test_the_readme_is_a_front_door():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, \
        f"README.md has {lines} lines (at most {MAX_LINES}): move the detail to a page of docs/"


def test_every_link_to_the_manual_names_a_file_that_exists():
    links = re.findall(r"\]\(((?:docs/|CONTRIBUTING|CHANGELOG)[^)#]*)", README.read_text())
    assert len(links) >= 15
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert not missing, missing


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("readme")


@pytest.mark.parametrize("block", RUN, ids=[f"line{b.line}" for b in RUN])
def test_python_block_runs(block, folder, monkeypatch):
    monkeypatch.chdir(folder)
    run_block(block)


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
        'pip install uv && uv pip install -e ".[test]" && python -m pytest -q',
    ]


def test_the_quick_start_says_how_to_run_the_fast_subset():
    """The Quick start is where a newcomer learns which part of the suite to run while working
    (the whole of it takes half an hour on a loaded machine)."""
    text = README.read_text()
    section = text[text.index("## Quick start"):text.index("\n## ", text.index("## Quick start") + 1)]
    subset = " ".join(section.split())
    for left_out in ("tests/spark", "tests/project/test_readme.py", "tests/project/test_docs.py",
                     "tests/project/test_benchmarks.py", "tests/project/test_wheel.py",
                     "tests/project/test_packaging.py"):
        assert f"--ignore={left_out}" in subset, left_out
        assert (ROOT / left_out).exists(), f"the fast subset leaves out {left_out}, not in the tree"
