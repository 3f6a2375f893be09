"""arrowmm's hints hold for the code users write: pyright and mypy find no error in the
examples (every public name, ``tests/project/typecheck/examples.py``, and every ```python block of
README.md and docs/), and do find each error planted in ``tests/project/typecheck/planted.py``.

The three sources are joined into one file, each README/docs block as the body of its own
function (blocks run one per namespace, so each gets its own scope), and the two checkers
run once each on it for the whole module, in parallel: about 25 s of processor time (pyright
~10 s; mypy ~10 s with its cache in ``build/.mypy_cache``, twice that without), 1-1.5 min of
wall time on a busy 2-core machine.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "tests" / "project" / "typecheck" / "examples.py"
PLANTED = ROOT / "tests" / "project" / "typecheck" / "planted.py"
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
PLANT = "# planted:"
# what a docs block may use without making it: the Spark blocks' session
# Errors that are someone else's to fix, each by its page and a piece of the message; the list
# only shrinks (test_known_errors_in_the_examples_are_still_there says when an entry can go).
KNOWN: set = set()  # (page, piece of the message) of errors known and accepted: none now
PRELUDE = """
from pyspark.sql import SparkSession
spark: SparkSession
"""


def markdown_files() -> list[Path]:
    """README.md and every Markdown page under docs/, whatever exists when the test runs."""
    found = [ROOT / "README.md"] if (ROOT / "README.md").exists() else []
    return found + sorted((ROOT / "docs").rglob("*.md"))


def python_blocks(path: Path) -> list[tuple[int, str]]:
    """(line of the fence, code) of each ```python block, doctest prompts taken off."""
    text = path.read_text(encoding="utf-8")
    out = []
    for match in FENCE.finditer(text):
        code = match.group(1)
        if code.lstrip().startswith(">>>"):
            code = "\n".join(line[4:] for line in code.splitlines()
                             if line.startswith((">>> ", "... ", ">>>", "...")))
        out.append((text[:match.start()].count("\n") + 1, code))
    return out


def assemble() -> tuple[str, dict[int, str]]:
    """The file to check, and where each of its lines comes from (``README.md:70``)."""
    lines: list[str] = []
    origin: dict[int, str] = {}

    def add(text: str, where) -> None:
        for i, line in enumerate(text.splitlines()):
            lines.append(line)
            origin[len(lines)] = where(i)

    add(EXAMPLES.read_text(encoding="utf-8"), lambda i: f"{EXAMPLES.name}:{i + 1}")
    add(PRELUDE, lambda i: "(prelude)")
    for path in markdown_files():
        rel = path.relative_to(ROOT)
        for fence, code in python_blocks(path):
            name = re.sub(r"\W", "_", f"{rel}_{fence}")
            add(f"\n\ndef block_{name}() -> None:", lambda i: f"{rel}:{fence}")
            add(textwrap.indent(code, "    ") if code.strip() else "    pass",
                lambda i, fence=fence: f"{rel}:{fence + 1 + i}")
    add("\n\n" + PLANTED.read_text(encoding="utf-8"), lambda i: f"{PLANTED.name}:{i - 1}")
    return "\n".join(lines) + "\n", origin


def _tool(module: str) -> list[str]:
    """How to run a checker from this interpreter's environment, or skip saying why."""
    found = shutil.which(module, path=os.path.dirname(sys.executable)) or shutil.which(module)
    if found is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[test]' brings it)")
    return [found]


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """The assembled file's text, its lines' origins, and where it was written."""
    text, origin = assemble()
    target = tmp_path_factory.mktemp("typing") / "arrowmm_user_code.py"
    target.write_text(text, encoding="utf-8")
    return text, origin, target


def _pyright_command(target: Path) -> list[str]:
    return _tool("pyright") + ["--outputjson", "--pythonpath", sys.executable, str(target)]


def _pyright_errors(out: str, target: Path) -> dict[int, list[str]]:
    errors: dict[int, list[str]] = {}
    for d in json.loads(out)["generalDiagnostics"]:
        if d["severity"] == "error" and Path(d["file"]) == target:
            errors.setdefault(d["range"]["start"]["line"] + 1, []).append(d["message"])
    return errors


def _mypy_command(target: Path) -> list[str]:
    return _tool("mypy") + ["--config-file", str(ROOT / "mypy.ini"), "--no-error-summary",
                            str(target)]


def _mypy_errors(out: str, target: Path) -> dict[int, list[str]]:
    errors: dict[int, list[str]] = {}
    for m in re.finditer(r"^(.*?):(\d+): error: (.*)$", out, re.M):
        # (by name: mypy replays a cached result for the same text under the path it had)
        if Path(m.group(1)).name == target.name:
            errors.setdefault(int(m.group(2)), []).append(m.group(3))
    return errors


CHECKERS = {"pyright": (_pyright_command, _pyright_errors),
            "mypy": (_mypy_command, _mypy_errors)}


@pytest.fixture(scope="module")
def errors_of(checked):
    """errors_of(name): that checker's errors as {line: [message]}.  Both checkers start
    together on the first ask (in parallel) and each runs once for the module; they run from
    the root, so that `import arrowmm` is this tree (an editable install's import hook is
    invisible to checkers)."""
    _, _, target = checked
    running: dict[str, subprocess.Popen] = {}
    cache: dict[str, dict[int, list[str]]] = {}

    def get(name: str) -> dict[int, list[str]]:
        if not running:
            for each, (command, _) in CHECKERS.items():
                running[each] = subprocess.Popen(command(target), cwd=ROOT, text=True,
                                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if name not in cache:
            out, err = running[name].communicate(timeout=600)
            cache[name] = CHECKERS[name][1](out, target)
            assert cache[name] or running[name].returncode == 0, out + err
        return cache[name]
    yield get
    for proc in running.values():
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _planted_lines(text: str) -> set[int]:
    return {i for i, line in enumerate(text.splitlines(), 1) if PLANT in line
            and not line.lstrip().startswith(("#", '"'))}


@pytest.mark.parametrize("checker", sorted(CHECKERS))
def test_examples_have_no_type_error(checker, checked, errors_of):
    text, origin, _ = checked
    planted = _planted_lines(text)
    unexpected = {}
    for line, msgs in errors_of(checker).items():
        page = origin.get(line, "").split(":")[0].split("/")[-1]
        msgs = [m for m in msgs if not any(page == p and piece in m for p, piece in KNOWN)]
        if msgs and line not in planted:
            unexpected[line] = msgs
    assert not unexpected, f"{checker} finds errors in code users write:\n" + "\n".join(
        f"  {origin.get(line, line)}: {msg}" for line, msgs in sorted(unexpected.items())
        for msg in msgs)


@pytest.mark.parametrize("checker", sorted(CHECKERS))
def test_planted_errors_are_each_reported(checker, checked, errors_of):
    text, origin, _ = checked
    planted = _planted_lines(text)
    assert len(planted) >= 4
    missed = sorted(line for line in planted if line not in errors_of(checker))
    assert not missed, f"{checker} did not see planted errors at " + ", ".join(
        origin[line] for line in missed)


def test_known_errors_in_the_examples_are_still_there(checked, errors_of):
    """An entry of KNOWN for examples.py (a stable page, unlike the docs) goes once fixed."""
    _, origin, _ = checked
    reported = [(origin.get(line, ""), m) for name in CHECKERS
                for line, msgs in errors_of(name).items() for m in msgs]
    stale = [(p, piece) for p, piece in KNOWN if p == EXAMPLES.name
             and not any(o.startswith(p + ":") and piece in m for o, m in reported)]
    assert not stale, f"fixed: remove {stale} from KNOWN"


def test_every_public_name_is_in_the_examples():
    """The examples use each name of ``arrowmm.__all__`` (as ``arrowmm.<name>``)."""
    import arrowmm
    text = EXAMPLES.read_text(encoding="utf-8")
    unused = [n for n in arrowmm.__all__ if not re.search(rf"\barrowmm\.{re.escape(n)}\b", text)]
    assert not unused, f"public names the examples do not use: {unused}"


def test_blocks_are_found(tmp_path):
    """The extractor sees the README's blocks, and a doctest block loses its prompts."""
    assert sum(len(python_blocks(p)) for p in markdown_files()) >= 3
    sample = tmp_path / "sample.md"
    sample.write_text("x\n```python\n>>> import arrowmm\n>>> arrowmm.int64()\nint64\n```\n")
    assert python_blocks(sample) == [(2, "import arrowmm\narrowmm.int64()")]
