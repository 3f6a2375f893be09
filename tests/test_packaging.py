"""What a normal (non-editable) install ships: every package of the source tree.

The tests run against the source tree, where a package missing from ``pyproject.toml``'s list
still imports; a wheel built from that list would not have it, and ``import arrowmm`` fails
there (it happened with ``arrowmm.dataset``)."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _listed_packages():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    block = re.search(r"^packages = \[(.*?)\]", text, re.S | re.M)
    assert block, "pyproject.toml lists no packages"
    return set(re.findall(r'"([\w.]+)"', block.group(1)))


def _tree_packages():
    found = set()
    for folder, dirs, files in os.walk(os.path.join(ROOT, "arrowmm")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        if "__init__.py" in files:
            found.add(os.path.relpath(folder, ROOT).replace(os.sep, "."))
    return found


def test_every_package_of_the_tree_is_shipped():
    tree = _tree_packages()
    assert {"arrowmm", "arrowmm.ipc", "arrowmm.dataset"} <= tree  # (the walk finds packages)
    assert tree - _listed_packages() == set(), "add these to [tool.setuptools] packages"


def test_no_listed_package_is_missing_from_the_tree():
    assert _listed_packages() - _tree_packages() == set()
