"""The hooks of ``arrowmm.hooks``, the only way a lower layer calls a higher one: each is
declared once with a docstring, filled by the module it names when ``import arrowmm`` runs,
set once, and called through; an empty one raises an error naming it and its module."""
import ast
import os
import pickle
import re
import subprocess
import sys
import textwrap

import pytest

import arrowmm
from arrowmm import hooks
from arrowmm.errors import HookError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "arrowmm")


def _declared_names():
    """The module-level names of ``hooks.py`` bound to ``_declare(...)``, read from the source."""
    with open(hooks.__file__, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    return [node.targets[0].id for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", None) == "_declare"]


def test_every_hook_is_declared_once_by_its_own_name_with_a_docstring():
    names = _declared_names()
    assert names == list(hooks.HOOKS), "every hook is in HOOKS, in the order declared"
    for name in names:
        hook = hooks.HOOKS[name]
        assert hook.name == name and name in hooks.__all__
        assert hook.__doc__ and hook.__doc__.startswith(f"``{name}("), name


@pytest.mark.parametrize("name", list(hooks.HOOKS))
def test_every_hook_is_filled_by_its_module_after_import_arrowmm(name):
    hook = hooks.HOOKS[name]
    assert hook.is_set, f"{name} is empty after import arrowmm ({hook.filled_by} should fill it)"
    assert hook.function.__module__ == hook.filled_by
    assert getattr(hooks, name) is hook.function  # (a call through the hook is a plain call)


def _hook_imports():
    """(path, names) for every ``from arrowmm.hooks import ...`` (or ``from ..hooks``) in the
    package."""
    pattern = re.compile(r"^[ \t]*from\s+[\w.]*\bhooks\s+c?import\s+(.+)$", re.M)
    found = []
    for root, dirs, files in os.walk(PACKAGE):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "_fbs")]
        for fn in files:
            if fn.endswith((".py", ".pyx", ".pxd", ".pxi")):
                path = os.path.join(root, fn)
                with open(path, encoding="utf-8") as f:
                    found += [(path, names) for names in pattern.findall(f.read())]
    return found


def test_hooks_are_called_through_the_module():
    """``hooks.<name>(...)``, never a name imported from ``arrowmm.hooks``: filling a hook
    rebinds the module's attribute, not a copy of the name bound elsewhere."""
    assert _hook_imports() == []


def test_every_hook_is_called_from_the_package():
    """A hook nobody calls is dead weight: each is called as ``hooks.<name>(`` somewhere."""
    text = []
    for root, dirs, files in os.walk(PACKAGE):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "_fbs")]
        for fn in files:
            if fn.endswith((".py", ".pyx")) and fn != "hooks.py":
                with open(os.path.join(root, fn), encoding="utf-8") as f:
                    text.append(f.read())
    text = "\n".join(text)
    assert [n for n in hooks.HOOKS if f"hooks.{n}(" not in text] == []


def test_a_hook_is_set_once():
    hook = hooks.Hook("example", "tests.test_hooks", "``example()``: a hook of this test.")

    def first():
        return 1

    def second():
        return 2

    stand_in = hook.empty
    with pytest.raises(HookError, match=r"arrowmm.hooks.example is empty: tests.test_hooks fills"):
        stand_in()
    with pytest.raises(HookError, match="is empty"):
        hook.function
    hook.set(first)
    hook.set(first)  # (the same function again: nothing changes)
    assert hook.function is first and hook.is_set
    assert stand_in() == 1  # (a stand-in bound before the hook was set calls what it holds)
    assert not hasattr(hooks, "example")  # (a hook not declared in arrowmm.hooks binds nothing)
    with pytest.raises(HookError, match=r"example is set already, to \S*test_hooks\S*first; "
                                        r"refusing \S*second \(each hook is set once, by "
                                        r"tests.test_hooks\)"):
        hook.set(second)
    assert hook.function is first
    with pytest.raises(TypeError, match="takes a function"):
        hook.set(None)


def test_a_filled_hook_refuses_another_function():
    original = hooks.export_c_schema
    with pytest.raises(HookError, match="export_c_schema is set already.*arrowmm.interop._cdata"):
        hooks.fill("export_c_schema", lambda obj: None)
    assert hooks.export_c_schema is original is hooks.HOOKS["export_c_schema"].function
    hooks.fill("export_c_schema", original)  # (the same function: nothing changes)
    with pytest.raises(HookError, match="no hook 'export_schema'"):
        hooks.fill("export_schema", original)
    assert isinstance(HookError("x"), arrowmm.ArrowError) and isinstance(HookError("x"), RuntimeError)


def test_upward_calls_go_through_the_hooks():
    """The calls the hooks stand for work after ``import arrowmm`` (one per filling module)."""
    import pyarrow as pa

    batch = arrowmm.record_batch({"a": [3, 1, 2]})
    assert pa.schema(batch.schema).field("a").type == pa.int64()  # export_c_schema
    assert pa.table(arrowmm.Table(batch.schema, [batch])).column("a").to_pylist() == [3, 1, 2]
    assert arrowmm.schema(pa.schema([("b", pa.int8())])).names == ["b"]  # import_c_schema
    assert arrowmm.read_schema(batch.schema.serialize()).equals(batch.schema)  # serialize_schema
    table = arrowmm.Table(batch.schema, [batch])
    assert table.sort_by("a").column("a").to_pylist() == [1, 2, 3]  # sort_table
    with pytest.raises(TypeError, match="not a shared-memory segment"):  # reduce_array
        pickle.dumps(batch.column(0))


# In a fresh interpreter, the layers below ``interop`` alone: ``arrowmm``'s own ``__init__`` (which
# imports everything) is replaced by a bare package over the same folder.
LOW_LAYERS_ONLY = textwrap.dedent("""
    import pickle, sys, types
    package = types.ModuleType("arrowmm")
    package.__path__ = [sys.argv[1]]
    sys.modules["arrowmm"] = package
    import arrowmm.arrays
    from arrowmm import hooks
    from arrowmm.errors import HookError
    assert "arrowmm.interop" not in sys.modules, sorted(sys.modules)
    print("set:", [h.name for h in hooks.HOOKS.values() if h.is_set])
    batch = arrowmm.arrays.RecordBatch(
        arrowmm.types.schema([("a", arrowmm.types.int64())]), 0, [
            arrowmm.arrays.array.make_array(arrowmm.types.int64(), 0, [None, None])])
    table = arrowmm.arrays.Table(batch.schema, [batch])
    calls = {"export_c_schema": lambda: arrowmm.types.int64().__arrow_c_schema__(),
             "serialize_schema": lambda: batch.schema.serialize(),
             "serialize_batch": lambda: batch.serialize(),
             "export_c_stream": lambda: table.__arrow_c_stream__(),
             "filter_table": lambda: table.filter([]),
             "reduce_batch": lambda: pickle.dumps(batch)}
    for name, call in calls.items():
        try:
            call()
        except HookError as exc:
            print(name, "->", exc)
        else:
            print(name, "-> no error")
""")


def test_an_empty_hook_raises_an_error_naming_it_and_its_module():
    proc = subprocess.run([sys.executable, "-c", LOW_LAYERS_ONLY, PACKAGE], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "set: []"  # (nothing below interop fills a hook)
    errors = dict(line.split(" -> ", 1) for line in lines[1:])
    assert list(errors) == ["export_c_schema", "serialize_schema", "serialize_batch",
                            "export_c_stream", "filter_table", "reduce_batch"]
    for name, message in errors.items():
        hook = hooks.HOOKS[name]
        assert message == (f"hook arrowmm.hooks.{name} is empty: {hook.filled_by} fills it when "
                           f"it is imported, and `import arrowmm` imports it (only a lower "
                           f"layer of arrowmm was imported)")
