"""The manual (``docs/``, built by Sphinx) cannot drift from the code.

It builds with warnings as errors; every public name, and every public method of a public
class, has a docstring and an entry in the built API reference; and every code block of every
page runs (``docs_support``: the same rules as the README's blocks).
"""
from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.docs_support import (DOCS, ROOT, blocks, check_spark_block, run_block,
                                        run_spark_page, runnable, spark)
from tests.support.docs_support import unlabelled_or_unexplained

#: The manual's pages, and CONTRIBUTING.md (``docs/contributing.md`` includes it).
PAGES = sorted(DOCS.rglob("*.md")) + [ROOT / "CONTRIBUTING.md"]
BLOCKS = [b for page in PAGES for b in blocks(page)]
RUN = runnable(BLOCKS)
SPARK = spark(BLOCKS)


def _ids(found):
    return [b.where.replace("docs/", "") for b in found]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The HTML site, built once per test run into a temporary folder (strict: ``-W``)."""
    pytest.importorskip("sphinx", reason="Sphinx is in the docs extra: pip install -e '.[docs]'")
    pytest.importorskip("myst_parser", reason="myst-parser is in the docs extra")
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(out / ".doctrees"), str(DOCS), str(out / "html")],
        capture_output=True, text=True, timeout=900, cwd=str(ROOT))
    assert proc.returncode == 0, f"the docs build failed or warned:\n{proc.stderr[-8000:]}"
    assert "WARNING:" not in proc.stderr and "ERROR:" not in proc.stderr, proc.stderr[-8000:]
    return out / "html"


def test_the_docs_build_without_a_warning(built):
    for page in ("index", "getting-started", "reading", "spark", "api/index", "api/reading"):
        assert (built / f"{page}.html").is_file(), page


# --- the API reference ---------------------------------------------------------------------

def public_modules() -> dict:
    """Module name -> the public names it promises (``__all__``)."""
    import arrowmm
    import arrowmm.shm
    import arrowmm.spark
    return {m.__name__: [n for n in m.__all__ if n != "__version__"]
            for m in (arrowmm, arrowmm.shm, arrowmm.spark)}


def public_objects() -> dict:
    """Dotted name -> object: every public name, and every public method (or classmethod,
    staticmethod) of a public class, its own or inherited from an arrowmm base class."""
    import importlib
    found = {}
    classes_seen = set()  # a class under two names (Schema, schema): its methods once
    for module_name, names in public_modules().items():
        module = importlib.import_module(module_name)
        for name in names:
            obj = getattr(module, name)
            if isinstance(obj, (str, int)):  # constants (FORMAT, SHM_DIR): documented as data
                continue
            found[f"{module_name}.{name}"] = obj
            if not inspect.isclass(obj) or obj in classes_seen:
                continue
            classes_seen.add(obj)
            for base in obj.__mro__:
                if not base.__module__.startswith("arrowmm"):
                    continue
                for attr, value in vars(base).items():
                    if attr.startswith("_") or f"{module_name}.{name}.{attr}" in found:
                        continue
                    if isinstance(value, (classmethod, staticmethod)) or \
                            inspect.isfunction(value) or inspect.ismethoddescriptor(value):
                        found[f"{module_name}.{name}.{attr}"] = getattr(obj, attr)
    return found


#: Public names still without a docstring (E2 is writing them; each one documented must leave
#: this list, and nothing may join it).
UNDOCUMENTED: set[str] = set()


def docstring(obj) -> str:
    """A class's own docstring (``inspect.getdoc`` would lend it its base class's); a method's
    may come from the method it overrides, as in ``help()``."""
    if inspect.isclass(obj):
        return (vars(obj).get("__doc__") or "").strip()
    return (inspect.getdoc(obj) or "").strip()


def undocumented() -> list[str]:
    return sorted(name for name, obj in public_objects().items() if not docstring(obj))


def test_every_public_name_and_method_has_a_docstring():
    missing = set(undocumented())
    assert not missing - UNDOCUMENTED, \
        f"{len(missing - UNDOCUMENTED)} public names have no docstring: " \
        f"{sorted(missing - UNDOCUMENTED)}"
    assert not UNDOCUMENTED - missing, \
        f"documented now, take them out of UNDOCUMENTED: {sorted(UNDOCUMENTED - missing)}"


def test_every_public_name_and_method_is_in_the_reference(built):
    from sphinx.util.inventory import InventoryFile
    with open(built / "objects.inv", "rb") as f:
        inventory = InventoryFile.load(f, "", os.path.join)
    listed = {name for entries in inventory.values() for name in entries}
    absent = sorted(set(public_objects()) - listed)
    assert not absent, f"not in the API reference (run python tools/api_pages.py): {absent}"


# --- the examples ---------------------------------------------------------------------------

def test_every_block_runs_or_says_why_not():
    assert len(RUN) >= 15 and len(SPARK) >= 3
    assert not unlabelled_or_unexplained(BLOCKS)


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict:
    """One folder per page, made on first use: a page's blocks share it, in order."""
    made: dict = {}

    def folder(page: Path) -> Path:
        if page not in made:
            made[page] = tmp_path_factory.mktemp(page.stem)
        return made[page]
    return folder  # type: ignore[return-value]


@pytest.mark.parametrize("block", RUN, ids=_ids(RUN))
def test_python_block_runs(block, folders, monkeypatch):
    monkeypatch.chdir(folders(block.path))
    run_block(block)


@pytest.fixture(scope="module")
def spark_pages(tmp_path_factory) -> dict:
    """A page's Spark blocks run once, on first use, all in one process per session kind (a
    JVM each, not one per block): ``{page: reports}``, or the error that stopped the page."""
    ran: dict = {}

    def reports(page: Path) -> dict:
        if page not in ran:
            try:
                ran[page] = run_spark_page([b for b in SPARK if b.path == page],
                                           tmp_path_factory.mktemp(f"spark-{page.stem}"))
            except Exception as exc:  # noqa: BLE001  (every block of the page fails with it)
                ran[page] = exc
        if isinstance(ran[page], Exception):
            raise ran[page]
        return ran[page]
    return reports  # type: ignore[return-value]


@pytest.mark.parametrize("block", SPARK, ids=_ids(SPARK))
def test_spark_block_runs_on_a_session_with_the_jar_and_on_one_without(block, spark_pages):
    pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")
    check_spark_block(block, spark_pages(block.path))


# --- the benchmark plots --------------------------------------------------------------------

def test_every_benchmark_table_with_a_target_has_its_plot_drawn_from_it(tmp_path):
    """``tools/plot_benchmarks.py`` draws the page's tables; the committed charts are what it
    draws now (byte for byte, with the matplotlib that drew them), each one under its table."""
    matplotlib = pytest.importorskip("matplotlib", reason="matplotlib is in the docs extra")
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "plot_benchmarks.py"),
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    committed_dir = DOCS / "_static" / "benchmarks"
    drawn = {p.name for p in tmp_path.glob("*.svg")}
    committed = {p.name for p in committed_dir.glob("*.svg")}
    assert len(drawn) >= 8 and drawn == committed, "run python tools/plot_benchmarks.py"
    page = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    assert set(re.findall(r"\(_static/benchmarks/([\w-]+\.svg)\)", page)) == drawn
    for name in sorted(drawn):
        old = (committed_dir / name).read_text()
        if f"Matplotlib v{matplotlib.__version__}" in old:
            assert (tmp_path / name).read_text() == old, \
                f"{name} is not what the page's table draws: run python tools/plot_benchmarks.py"
