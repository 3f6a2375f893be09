"""The README cannot drift from the code: every code block in it runs, or says why not.

Each ```python block runs, in order, in one fresh folder (a block may read the files an
earlier one wrote), each in a new namespace.  A block that is not meant to run here is
preceded by an HTML comment ``<!-- readme-test: ... -->`` giving the reason; the Quick start's
commands are run by ``.ci/run``, which takes them from the README (checked here too).

The Spark section's blocks say ``readme-test: spark``: each runs in a new process twice, on a
session with the JVM connector's jar and on one without (``spark_support.run_readme_block``),
and ``register(spark)`` must then leave ``arrowmm`` to the engine the session's jar decides and
``arrowmm_python`` to the Python source.
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


def spark_section_blocks() -> list:
    """(line, code, reason) of the python blocks between "## Spark" and the next section."""
    text = README.read_text()
    start = text.index("\n## Spark\n")
    end = text.index("\n## ", start + 1)
    first, last = text[:start].count("\n") + 1, text[:end].count("\n") + 1
    return [(line, code, reason) for line, language, code, reason in blocks()
            if language == "python" and first <= line <= last]


SPARK = [(line, code) for line, code, reason in spark_section_blocks()
         if (reason or "").startswith("spark")]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("readme")


@pytest.mark.parametrize("line,code", RUN, ids=[f"line{line}" for line, _ in RUN])
def test_python_block_runs(line, code, folder, monkeypatch):
    monkeypatch.chdir(folder)
    namespace = {"__name__": "__readme__"}
    exec(compile(code, f"README.md:{line}", "exec"), namespace)


def test_every_spark_block_runs_with_and_without_the_jar():
    found = spark_section_blocks()
    assert len(found) >= 3
    for line, _, reason in found:
        assert (reason or "").startswith("spark"), \
            f"README.md:{line}: a Spark block runs on both kinds of session (readme-test: spark)"


@pytest.mark.parametrize("line,code", SPARK, ids=[f"line{line}" for line, _ in SPARK])
def test_spark_block_runs_on_a_session_with_the_jar_and_on_one_without(line, code, tmp_path):
    """Issue 35: on a session with the jar, ``register(spark)`` raised DATA_SOURCE_ALREADY_EXISTS
    and left ``arrowmm_python`` unregistered.  After each block, ``register`` (twice) leaves
    ``arrowmm`` to the engine the jar decides and ``arrowmm_python`` to the Python source, and
    what the block wrote reads back the same through both names and through pyarrow."""
    pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")
    import pyarrow as pa
    from arrowmm.spark.files import data_files_in
    from spark_support import run_readme_block
    for jar in (True, False):
        kind = "with the jar" if jar else "without the jar"
        folder = tmp_path / ("jar" if jar else "no-jar")
        folder.mkdir()
        report = run_readme_block(line, code, folder, jar)
        engines = {"before": report["before"], "after": report["after"]}
        engine = "jvm" if jar else "python"
        assert report["after"] == {"arrowmm": engine, "arrowmm_python": "python",
                                   "arrowmm_jvm": "jvm" if jar else "none"}, (kind, engines)
        # before register(): the jar's connector, or (without) whatever Spark's lookup found
        assert report["before"]["arrowmm"] in (("jvm",) if jar else ("python", "none")), \
            (kind, engines)
        out = folder / "data" / "out"
        if out.exists():
            written = sorted(k for f in data_files_in(str(out))
                             for k in pa.ipc.open_file(f).read_all()["k"].to_pylist())
            assert written and written == report["expected"], kind
            assert report["out"] == {"arrowmm": written, "arrowmm_python": written}, kind


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
