"""The tests mirror the package (issue 33): a folder per subpackage of arrowmm, each a package
with its ``conftest.py``, plus ``hostile/`` and ``project/``; support code in ``tests/support/``
imported by its package name; no test module left flat, no path set up by hand.

A test added flat to ``tests/`` by habit fails here by name; ``git mv`` it into its folder (the
rules of thumb are in CONTRIBUTING.md, "Test")."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
CROSS_CUTTING = {"hostile", "project"}  # folders that are not a subpackage
SUPPORT = TESTS / "support"
DATA = {"regressions", "typecheck", "__pycache__"}  # folders of inputs, not of tests


def _test_folders() -> list[Path]:
    return sorted(p for p in TESTS.iterdir() if p.is_dir() and p.name not in DATA | {"support"})


def test_no_test_module_is_left_flat():
    flat = sorted(p.name for p in TESTS.glob("*.py") if p.name not in ("__init__.py", "conftest.py"))
    assert flat == [], f"move these into their folder under tests/ (git mv): {flat}"


def test_a_folder_per_subpackage_and_no_other():
    subpackages = {p.name.lstrip("_") for p in (ROOT / "arrowmm").iterdir()
                   if (p / "__init__.py").exists()}
    folders = {p.name for p in _test_folders()}
    assert folders - CROSS_CUTTING == subpackages, (
        f"subpackages without a test folder: {sorted(subpackages - folders)}; test folders "
        f"without a subpackage: {sorted(folders - CROSS_CUTTING - subpackages)}")


def test_every_folder_is_a_package_with_its_conftest():
    for folder in _test_folders():
        assert (folder / "__init__.py").is_file(), f"{folder.relative_to(ROOT)} is not a package"
        assert (folder / "conftest.py").is_file(), f"{folder.relative_to(ROOT)} has no conftest.py"
        for sub in folder.rglob("*"):
            if sub.is_dir() and sub.name not in DATA and any(sub.glob("*.py")):
                assert (sub / "__init__.py").is_file(), f"{sub.relative_to(ROOT)} is not a package"
    assert (SUPPORT / "__init__.py").is_file()


def test_support_code_is_imported_by_its_package_name_and_no_path_is_set_up():
    assert (SUPPORT / "helpers.py").is_file(), "support code lives in tests/support/"
    support = "|".join(sorted(p.stem for p in SUPPORT.glob("*.py") if p.stem != "__init__"))
    bare = re.compile(rf"^\s*(from ({support}) import|import ({support})\b)", re.M)
    path_set_up = re.compile(r"^sys\.path\.(insert|append)\(", re.M)
    silenced = "noqa: " + "E402"  # (spelled apart, so that this file does not match itself)
    for path in sorted(TESTS.rglob("*.py")):
        if DATA & set(path.relative_to(TESTS).parts):
            continue
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(ROOT)
        assert not bare.search(text), f"{where}: import support code as tests.support.<module>"
        assert not path_set_up.search(text), f"{where}: sys.path set up by hand (pyproject's " \
                                             f"pytest pythonpath holds the root and fuzz/)"
        assert silenced not in text, f"{where}: an import below code; fix its cause"
