"""The package's layers: imports go only downward, with no cycle, counting imports made
inside functions (``STYLE.md``, "The house").

Each module's imports are read from its source (``ast`` for Python, the import lines of
Cython), resolved to arrowmm modules, and checked against the order of the layers below.
Where a lower layer must call a higher one at run time, it calls a hook of ``arrowmm.hooks``
(on the ground floor), never an import.  A function-level import is allowed only of a module
of the same subpackage (a lazy import that breaks an import-time cycle inside one room).
"""
import ast
import functools
import os
import re
from collections import defaultdict

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "arrowmm")

# Lowest first.  A module may import its own layer and the layers below it.  ``hooks`` (the
# named upward calls, filled from above at import) sits on the ground with ``errors`` and
# ``limits``, as ``_startup`` (the command's Ctrl-C while the package imports: standard library
# only).  ``_core`` (the Cython kernels and the C ABI) imports only ``errors`` and
# ``limits``, so it sits below ``types``: the types' ``__arrow_c_schema__`` reach the C
# interface through ``hooks.export_c_schema``, which ``interop._cdata`` fills.  ``ipc`` is
# ranked by role inside: the core both sides share (framing, sinks, compression, byte order,
# dictionaries, statistics), then reading, then writing (the writers take readers as input, and
# append, footer statistics and repair read the file they rewrite), then tensors; its own top
# level (the package's face and the message-level API, which both reads and writes) sits above.
LAYERS = [
    ("errors",), ("hooks", "limits", "_startup"), ("_core",), ("types",),
    ("format",), ("arrays",), ("compute",), ("interop",),
    ("ipc.core",), ("ipc.read",), ("ipc.write",), ("ipc.tensor",), ("ipc",),
    ("shm", "dataset"), ("spark",), ("cli",), ("__init__", "__main__"),
]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}

# Known upward edges, each with the reason it is still here.  The list only shrinks: it is
# empty since the C data interface was split (issue 21).
ALLOWED_UPWARD = set()

# Function-level imports of arrowmm modules that remain, each a cycle that is still to break
# (besides those of a module of the same subpackage, which are allowed: ``same_subpackage``).
ALLOWED_FUNCTION_LEVEL = set()
# pyspark is optional: the modules of arrowmm.spark that import it are imported when used.
OPTIONAL_PACKAGES = ("arrowmm.spark",)

IMPORT_LINE = re.compile(r"^[ \t]*(?:from\s+(\S+)\s+c?import\s+(.+)|c?import\s+([\w.]+))", re.M)


def _module_name(path):
    rel = os.path.relpath(os.path.splitext(path)[0], os.path.dirname(ROOT)).replace(os.sep, ".")
    return rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def _sources():
    for root, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "_fbs")]
        for fn in sorted(files):
            if fn.endswith((".py", ".pyx", ".pxd", ".pxi")):
                yield os.path.join(root, fn)


def _known_modules():
    names = set()
    for path in _sources():
        names.add(_module_name(path))
    return names


def _resolve(package, level, module, names, known):
    """The arrowmm modules an import statement reaches (a `from pkg import mod` names mod)."""
    if level:
        base = package.split(".")[: len(package.split(".")) - (level - 1)]
        target = ".".join(base + ([module] if module else []))
    else:
        target = module or ""
    if not target.startswith("arrowmm"):
        return []
    out = []
    for name in names:
        if f"{target}.{name}" in known:
            out.append(f"{target}.{name}")
        else:
            out.append(target)
    return out or [target]


def _imports(path, known):
    """(target module, at function level?) for every arrowmm import in ``path``."""
    me = _module_name(path)
    package = me if path.endswith("__init__.py") else me.rsplit(".", 1)[0]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found = []
    if path.endswith(".py"):
        tree = ast.parse(text, path)
        nested = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if isinstance(inner, (ast.Import, ast.ImportFrom)):
                        nested.add(id(inner))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                targets = _resolve(package, node.level, node.module, [a.name for a in node.names],
                                   known)
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("arrowmm")]
            else:
                continue
            found += [(t, id(node) in nested) for t in targets]
    else:
        for m in IMPORT_LINE.finditer(text):
            module, names, plain = m.groups()
            if plain:
                targets = [plain] if plain.startswith("arrowmm") else []
            else:
                level = len(module) - len(module.lstrip("."))
                names = [n.strip().split(" as ")[0] for n in names.strip("() \\").split(",")]
                targets = _resolve(package, level, module.lstrip("."), names, known)
            indented = m.group(0)[: len(m.group(0)) - len(m.group(0).lstrip())] != ""
            found += [(t, indented) for t in targets]
    return [(t, nested) for t, nested in found if t.startswith("arrowmm") and t != "arrowmm"]


def same_subpackage(me, target):
    """Whether ``me`` and ``target`` lie in one subpackage (``arrowmm.arrays.base`` and
    ``arrowmm.arrays.selection``, or the face ``arrowmm.arrays``; two top-level modules such
    as ``arrowmm.hooks`` and ``arrowmm.errors`` are not)."""
    a, b = me.split("."), target.split(".")
    return len(a) > 1 and len(b) > 1 and a[1] == b[1]


def _layer(module):
    """The rank of the longest ranked prefix of ``module`` (``arrowmm.ipc.read.loader`` is
    ``ipc.read``; ``arrowmm.ipc.messages`` is ``ipc``)."""
    parts = module.split(".")[1:]
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in RANK:
            return RANK[".".join(parts[:n])]
    return RANK["__init__"]


@functools.lru_cache(maxsize=None)
def _graph():
    """(import-time edges by module, every (module, target, inside a function?)), read once."""
    known = _known_modules()
    edges = defaultdict(set)
    details = []
    for path in _sources():
        me = _module_name(path)
        for target, nested in _imports(path, known):
            if target.startswith("arrowmm.format._fbs"):
                continue  # generated code: it imports only the flatbuffers runtime
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target == me or target == "arrowmm":
                continue
            if not (nested and same_subpackage(me, target)):  # (run time, not import time)
                edges[me].add(target)
            details.append((me, target, nested))
    return edges, details


def test_imports_only_go_down():
    _, details = _graph()
    upward = sorted({(me, target) for me, target, _ in details if _layer(target) > _layer(me)
                     and (me, target) not in ALLOWED_UPWARD})
    assert upward == [], "imports that reach up a layer:\n" + "\n".join(
        f"  {me} -> {target}" for me, target in upward)


def test_function_level_imports_stay_inside_their_subpackage():
    """Inside a function, a module may import one of its own subpackage (or an optional
    package's module); any other arrowmm import goes at the top, and an upward call through
    a hook of ``arrowmm.hooks``."""
    _, details = _graph()
    nested = sorted({(me, target) for me, target, inner in details
                     if inner and (me, target) not in ALLOWED_FUNCTION_LEVEL
                     and not same_subpackage(me, target)
                     and not target.startswith(OPTIONAL_PACKAGES)})
    assert nested == [], "arrowmm modules imported inside functions from another subpackage " \
        "(import them at the top, or call up through arrowmm.hooks):\n" \
        + "\n".join(f"  {me} -> {target}" for me, target in nested)


def test_same_subpackage_is_one_room():
    assert same_subpackage("arrowmm.arrays.base", "arrowmm.arrays.selection")
    assert same_subpackage("arrowmm.ipc.read.file_reader", "arrowmm.ipc")  # (the package's face)
    assert not same_subpackage("arrowmm.arrays.base", "arrowmm.interop.build")
    assert not same_subpackage("arrowmm.hooks", "arrowmm.errors")
    assert same_subpackage("arrowmm.types", "arrowmm.types.base")


def test_no_import_cycle():
    edges, _ = _graph()
    # Tarjan's strongly connected components; a component of more than one module is a cycle.
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if (v, w) in ALLOWED_UPWARD:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert cycles == [], f"import cycles: {cycles}"


@pytest.mark.parametrize("path", [p for p in _sources() if p.endswith((".pyx", ".pxd", ".pxi"))
                                  and os.sep + "_core" + os.sep in p])
def test_core_cython_knows_no_python_class(path):
    """A _core kernel imports only the ground below it (errors, limits) and other kernels."""
    known = _known_modules()
    allowed = {"arrowmm.errors", "arrowmm.limits"}
    bad = [t for t, _ in _imports(path, known)
           if t not in allowed and not t.startswith("arrowmm._core")]
    assert bad == [], f"{os.path.basename(path)} imports {bad}"


def test_the_checker_sees_imports():
    """The checks above are only as good as the import reader: it must find real edges."""
    _, details = _graph()
    seen = {(me, target) for me, target, _ in details}
    assert ("arrowmm.ipc.read.loader", "arrowmm.arrays.array") in seen
    assert ("arrowmm.interop._cdata", "arrowmm._core._region") in seen
    assert ("arrowmm.ipc.read._batch_walk", "arrowmm._core._cabi") in seen  # (a cimport)
    assert ("arrowmm.types.base", "arrowmm.hooks") in seen
    # (a function-level import inside one subpackage: seen, and not an import-time edge)
    assert ("arrowmm.arrays.base", "arrowmm.arrays.pandas_compat", True) in details
    assert len(seen) > 100


def test_ipc_is_ranked_by_role():
    """Inside ``ipc``: core, then reading, then writing, then tensors, then the face; and every
    subpackage of ``ipc`` has a rank of its own (a new one would otherwise sit at the top)."""
    order = ["arrowmm.ipc.core.framing", "arrowmm.ipc.read.loader", "arrowmm.ipc.write.writer",
             "arrowmm.ipc.tensor.dense", "arrowmm.ipc.messages", "arrowmm.shm"]
    ranks = [_layer(m) for m in order]
    assert ranks == sorted(set(ranks)), dict(zip(order, ranks))
    ipc = os.path.join(ROOT, "ipc")
    subpackages = sorted(d for d in os.listdir(ipc)
                         if os.path.exists(os.path.join(ipc, d, "__init__.py")))
    assert subpackages and [d for d in subpackages if f"ipc.{d}" not in RANK] == []
