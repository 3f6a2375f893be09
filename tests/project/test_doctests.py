"""The Examples in arrowmm's docstrings run and give what they show: every module of the
package that has any (found by walking the package, so a new module's examples are run too)."""
import doctest
import importlib
import pkgutil

import pytest

import arrowmm


def _modules_with_examples():
    found = []
    for info in pkgutil.walk_packages(arrowmm.__path__, "arrowmm."):
        # __main__ runs the CLI when imported; the JVM folder holds no Python
        if info.name.endswith("__main__") or ".spark.jvm" in info.name:
            continue
        module = importlib.import_module(info.name)
        if any(t.examples for t in doctest.DocTestFinder().find(module)):
            found.append(module)
    return found


MODULES = _modules_with_examples()


def test_the_walk_finds_the_modules_known_to_have_examples():
    names = {m.__name__ for m in MODULES}
    assert {"arrowmm.ipc.read.file_reader", "arrowmm.ipc.write.repair", "arrowmm._core._region",
            "arrowmm.arrays.table", "arrowmm.compute.hashing", "arrowmm.shm.channel",
            "arrowmm.ipc.read.sniff"} <= names, sorted(names)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples(module, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    examples = sum(len(t.examples) for t in doctest.DocTestFinder().find(module))
    assert result.failed == 0
    # a module whose every example is marked +SKIP (they need a Spark session) attempts none
    assert result.attempted > 0 or module.__name__ == "arrowmm.spark.jar", (
        f"{module.__name__} has {examples} examples and ran none")
