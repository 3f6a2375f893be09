"""Running the code blocks of the README and of the manual (``docs/``) as tests.

A page's fenced blocks run in order, in one fresh folder per page (a block may read the files
an earlier block of its page wrote), each in a new namespace.  A block that is not meant to
run here is preceded by an HTML comment ``<!-- docs-test: ... -->`` (``readme-test:`` in the
README) giving the reason.  A reason starting with ``spark`` marks a Spark block: a page's Spark
blocks run in order in a new process twice, on a session with the JVM connector's jar and on
one without (``run_spark_page``), and ``check_spark_block`` checks each block's report.  Fences whose language is a MyST
directive (```` ```{autoclass} ````, ```` ```{toctree} ````) are Sphinx's, not examples.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MARK = re.compile(r"<!--\s*(?:readme|docs)-test:((?:(?!-->).)*)-->\Z", re.S)
FENCE = re.compile(r"^```(\{[\w-]+\}|\w*)[^\n]*\n(.*?)^```$", re.M | re.S)


class Block(NamedTuple):
    """One fenced code block: where it starts, its language, its code, why it is not run."""
    path: Path
    line: int
    language: str
    code: str
    reason: str | None

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """Every fenced code block of a Markdown file, MyST directives left out."""
    text = path.read_text(encoding="utf-8")
    out = []
    for match in FENCE.finditer(text):
        if match.group(1).startswith("{"):
            continue
        before = text[:match.start()]
        mark = MARK.search(before.rstrip())  # a comment right before the fence
        line = before.count("\n") + 1
        out.append(Block(path, line, match.group(1), match.group(2),
                         mark.group(1).strip() if mark else None))
    return out


def unlabelled_or_unexplained(found: list[Block]) -> list[str]:
    """What is wrong with blocks: a block without a language, or one that is not Python and
    does not say why the tests do not run it."""
    wrong = []
    for block in found:
        if not block.language:
            wrong.append(f"{block.where}: a code block without a language")
        elif block.language != "python" and not block.reason:
            wrong.append(f"{block.where}: a {block.language} block must say why the tests "
                         "do not run it")
    return wrong


def runnable(found: list[Block]) -> list[Block]:
    """The Python blocks the tests run in this process."""
    return [b for b in found if b.language == "python" and not b.reason]


def spark(found: list[Block]) -> list[Block]:
    """The Python blocks that run on Spark sessions (``docs-test: spark ...``)."""
    return [b for b in found if b.language == "python" and (b.reason or "").startswith("spark")]


def run_block(block: Block) -> None:
    """Run one block in a new namespace, in the current directory."""
    namespace = {"__name__": "__docs__"}
    exec(compile(block.code, block.where, "exec"), namespace)


def run_spark_page(found: list[Block], tmp_path: Path) -> dict:
    """Run a page's Spark blocks in order in two new processes, one on a session with the JVM
    connector's jar and one on a session without (``spark_support.run_readme_blocks``), each
    block with its own data folder; return ``{(block.where, jar): report}``."""
    from concurrent.futures import ThreadPoolExecutor

    from tests.support.spark_support import run_readme_blocks
    reports = {}
    where = str(found[0].path.relative_to(ROOT))
    runs = {}
    for jar in (True, False):
        kind = tmp_path / ("jar" if jar else "no-jar")
        kind.mkdir()
        listed = []
        for block in found:
            folder = kind / f"line{block.line}"
            folder.mkdir()
            listed.append((block.line, block.code, folder))
        runs[jar] = (kind, listed)
    # (the two sessions in two processes at once: each waits on its JVM's start for most of
    # its time, so the page costs about one start, not two)
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = {jar: pool.submit(run_readme_blocks, listed, jar, kind, where)
                for jar, (kind, listed) in runs.items()}
        for jar, (kind, listed) in runs.items():
            for block, (_, _, folder), report in zip(found, listed, done[jar].result()):
                reports[block.where, jar] = {**report, "folder": str(folder)}
    return reports


def check_spark_block(block: Block, reports: dict) -> None:
    """Issue 35: on a session with the jar, ``register(spark)`` raised DATA_SOURCE_ALREADY_EXISTS
    and left ``arrowmm_python`` unregistered.  After the block (``reports``: from
    ``run_spark_page``), ``register`` (twice) leaves ``arrowmm`` to the engine the jar decides
    and ``arrowmm_python`` to the Python source, and what the block wrote reads back the same
    through both names and through pyarrow."""
    import pyarrow as pa
    from arrowmm.spark.files import data_files_in
    for jar in (True, False):
        kind = "with the jar" if jar else "without the jar"
        report = reports[block.where, jar]
        assert report["error"] is None, f"{block.where} ({kind}): {report['error']}"
        folder = Path(report["folder"])
        engines = {"before": report["before"], "after": report["after"]}
        engine = "jvm" if jar else "python"
        assert report["after"] == {"arrowmm": engine, "arrowmm_python": "python",
                                   "arrowmm_jvm": "jvm" if jar else "none"}, \
            (block.where, kind, engines)
        # before register(): the jar's connector, or (without) whatever Spark's lookup found
        assert report["before"]["arrowmm"] in (("jvm",) if jar else ("python", "none")), \
            (block.where, kind, engines)
        out = folder / "data" / "out"
        if out.exists():
            written = sorted(k for f in data_files_in(str(out))
                             for k in pa.ipc.open_file(f).read_all()["k"].to_pylist())
            assert written and written == report["expected"], (block.where, kind)
            assert report["out"] == {"arrowmm": written, "arrowmm_python": written}, \
                (block.where, kind)
