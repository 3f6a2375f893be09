"""The hooks: every place where a lower layer calls a higher one at run time, in one list.

Imports only go downward (``tests/project/test_layers.py``), yet a few calls must go up: a ``DataType``
exports itself through the C data interface that ``interop`` implements, ``Schema.serialize``
is written by ``ipc``, ``Table.filter`` by ``compute``, pickling by ``shm``.  Each such call
goes through a named hook declared below, with what it takes and returns and which module
fills it.  The caller writes ``hooks.export_c_schema(obj)`` (the module attribute, never a name
imported from here); the filling module calls ``hooks.fill("export_c_schema", function)`` once,
when it is imported, and ``import arrowmm`` imports them all (``tests/project/test_hooks.py`` checks
that every hook is filled by the module named here).  A hook called while empty (only a lower
layer was imported) raises ``HookError`` naming the hook and the module that fills it; filling
a hook with a second function raises too.

Not hooks: the extension-type registry (``arrowmm.register_extension_type``) is data that users
fill, and a lazy import inside one subpackage is a plain function-level import.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from .errors import HookError

__all__ = ["Hook", "HOOKS", "fill",
           "export_c_schema", "export_c_array", "export_c_batch", "export_c_stream",
           "export_c_array_stream", "import_c_array", "import_c_batch", "import_c_schema",
           "import_c_type",
           "serialize_schema", "serialize_batch", "filter_table", "take_table", "sort_table",
           "filter_batch", "take_batch", "sort_batch", "take_array", "filter_array",
           "dictionary_encode", "unique",
           "value_counts", "cast_array", "build_array", "empty_table",
           "from_pandas",
           "reduce_array", "reduce_batch", "reduce_file_reader"]


class Hook:
    """One upward call: a function that ``filled_by`` (a module above) sets when it is
    imported, called from below as ``hooks.<name>(*args)``.

    ``set`` binds the function itself to the module attribute ``arrowmm.hooks.<name>``, so a
    call through a filled hook costs what a call of the function costs.  Until then the
    attribute is a stand-in that raises ``HookError``.  Set once, under the import lock, and
    only read afterwards, so a call from any thread sees it whole.
    """

    def __init__(self, name: str, filled_by: str, doc: str):
        self.name = name
        self.filled_by = filled_by
        self.__doc__ = doc
        self._function: Optional[Callable[..., Any]] = None
        self.empty = self._stand_in()

    def set(self, function: Callable[..., Any]) -> None:
        """Fill the hook (from ``filled_by``, at import); setting it again to the same function
        is a no-op, to another one raises ``HookError``."""
        if not callable(function):
            raise TypeError(f"hook arrowmm.hooks.{self.name} takes a function, got "
                            f"{type(function).__name__}")
        current = self._function
        if current is not None and current is not function:
            raise HookError(f"hook arrowmm.hooks.{self.name} is set already, to "
                            f"{_describe(current)}; refusing {_describe(function)} (each hook is "
                            f"set once, by {self.filled_by})")
        self._function = function
        if HOOKS.get(self.name) is self:
            globals()[self.name] = function

    @property
    def is_set(self) -> bool:
        """Whether a module has filled the hook."""
        return self._function is not None

    @property
    def function(self) -> Callable[..., Any]:
        """The function the hook holds (``HookError`` while empty)."""
        function = self._function
        if function is None:
            raise self._empty()
        return function

    def _stand_in(self) -> Callable[..., Any]:
        hook = self

        def empty(*args: Any, **kwargs: Any) -> Any:
            function = hook._function
            if function is None:
                raise hook._empty()
            return function(*args, **kwargs)  # (a stand-in bound by name before the hook was set)

        empty.__name__ = empty.__qualname__ = self.name
        empty.__doc__ = self.__doc__
        return empty

    def _empty(self) -> HookError:
        return HookError(f"hook arrowmm.hooks.{self.name} is empty: {self.filled_by} fills it "
                         f"when it is imported, and `import arrowmm` imports it (only a lower "
                         f"layer of arrowmm was imported)")

    def __repr__(self) -> str:
        state = _describe(self._function) if self._function is not None else "empty"
        return f"<arrowmm.hooks.Hook {self.name} ({state}; filled by {self.filled_by})>"


def _describe(function: Callable[..., Any]) -> str:
    module = getattr(function, "__module__", None)
    name = getattr(function, "__qualname__", None) or getattr(function, "__name__", None)
    return f"{module}.{name}" if module and name else repr(function)


#: Every hook by name, in the order declared below.
HOOKS: Dict[str, Hook] = {}


def fill(name: str, function: Callable[..., Any]) -> None:
    """Set the hook ``name`` to ``function``: called once by the module the hook names, when
    it is imported (``HookError`` for a name not declared here or a hook set already)."""
    hook = HOOKS.get(name)
    if hook is None:
        raise HookError(f"arrowmm.hooks has no hook {name!r} (declared: {', '.join(HOOKS)})")
    hook.set(function)


def _declare(name: str, filled_by: str, doc: str) -> Callable[..., Any]:
    hook = HOOKS[name] = Hook(name, filled_by, doc)
    return hook.empty


# == the C data and C stream interfaces (the structs are filled above the typed classes) ========

_CDATA = "arrowmm.interop._cdata"

export_c_schema = _declare("export_c_schema", _CDATA, """\
``export_c_schema(obj) -> PyCapsule``: a DataType, Field or Schema as an ``arrow_schema``
capsule; behind every ``__arrow_c_schema__`` of ``types`` and ``arrays``.""")

export_c_array = _declare("export_c_array", _CDATA, """\
``export_c_array(array, requested_schema) -> (schema capsule, array capsule)``: behind
``Array.__arrow_c_array__``, zero-copy over the array's memory.""")

export_c_batch = _declare("export_c_batch", _CDATA, """\
``export_c_batch(batch, requested_schema) -> (schema capsule, array capsule)``: behind
``RecordBatch.__arrow_c_array__`` (a struct array), zero-copy.""")

export_c_stream = _declare("export_c_stream", _CDATA, """\
``export_c_stream(schema, batches, requested_schema) -> PyCapsule``: an ``arrow_array_stream``
over record batches; behind ``Table.__arrow_c_stream__``.""")

export_c_array_stream = _declare("export_c_array_stream", _CDATA, """\
``export_c_array_stream(type, arrays, requested_schema) -> PyCapsule``: an
``arrow_array_stream`` over arrays of one type; behind ``ChunkedArray.__arrow_c_stream__``.""")

import_c_array = _declare("import_c_array", _CDATA, """\
``import_c_array(schema capsule, array capsule) -> Array``: a producer's array over its own
memory; behind ``arrowmm.array(obj)`` for ``__arrow_c_array__`` producers.""")

import_c_batch = _declare("import_c_batch", _CDATA, """\
``import_c_batch(schema capsule, array capsule) -> RecordBatch``: a producer's struct array as
a batch over its own memory; behind ``arrowmm.record_batch(obj)``.""")

import_c_schema = _declare("import_c_schema", "arrowmm.interop.build", """\
``import_c_schema(producer) -> Schema``: the schema an ``__arrow_c_schema__`` producer
describes; behind ``Schema(obj)`` (so ``arrowmm.schema(pyarrow_schema)`` works).""")

import_c_type = _declare("import_c_type", "arrowmm.interop.build", """\
``import_c_type(producer) -> DataType``: the type an ``__arrow_c_schema__`` producer describes;
behind ``types.ensure_type`` (so ``ChunkedArray.cast(pa.int32())`` works, as pyarrow's).""")

# == IPC messages (written by ``ipc``, asked for by the types and batches) ======================

serialize_schema = _declare("serialize_schema", "arrowmm.ipc.messages", """\
``serialize_schema(schema) -> bytes``: one IPC schema message; behind ``Schema.serialize``.""")

serialize_batch = _declare("serialize_batch", "arrowmm.ipc.messages", """\
``serialize_batch(batch, alignment) -> bytes``: one IPC record batch message; behind
``RecordBatch.serialize``.""")

# == compute on tables and batches (the kernels work on the array classes, so they sit above them) =========

_COMPUTE = "arrowmm.compute.tables"

filter_table = _declare("filter_table", _COMPUTE, """\
``filter_table(table, mask) -> Table``: behind ``Table.filter`` (a mask or an Expression).""")

take_table = _declare("take_table", _COMPUTE, """\
``take_table(table, indices) -> Table``: behind ``Table.take``.""")

sort_table = _declare("sort_table", _COMPUTE, """\
``sort_table(table, sorting, null_placement=None) -> Table``: behind ``Table.sort_by``.""")

filter_batch = _declare("filter_batch", _COMPUTE, """\
``filter_batch(batch, mask) -> RecordBatch``: behind ``RecordBatch.filter`` (a mask or an
Expression).""")

take_batch = _declare("take_batch", _COMPUTE, """\
``take_batch(batch, indices) -> RecordBatch``: behind ``RecordBatch.take``.""")

sort_batch = _declare("sort_batch", _COMPUTE, """\
``sort_batch(batch, sorting, null_placement=None) -> RecordBatch``: behind ``RecordBatch.sort_by``.""")

_SELECTION = "arrowmm.compute.selection"

take_array = _declare("take_array", _SELECTION, """\
``take_array(array, indices) -> Array``: behind ``Array.take`` (the copying kernels).""")

filter_array = _declare("filter_array", _SELECTION, """\
``filter_array(array, mask) -> Array``: behind ``Array.filter`` (``mask``: what the user
passed: numpy bools, a list, a boolean array, chunked or not; nulls drop their row).""")

# == hashing (the distinct values of a column, by the kernels of ``compute``) ==================

_HASHING = "arrowmm.compute.hashing"

dictionary_encode = _declare("dictionary_encode", _HASHING, """\
``dictionary_encode(data, null_encoding) -> Array | ChunkedArray``: behind
``Array.dictionary_encode`` and ``ChunkedArray.dictionary_encode``.""")

unique = _declare("unique", _HASHING, """\
``unique(data) -> Array``: behind ``Array.unique`` and ``ChunkedArray.unique``.""")

value_counts = _declare("value_counts", _HASHING, """\
``value_counts(data) -> Array``: behind ``Array.value_counts`` and
``ChunkedArray.value_counts``.""")

# == casts (one module knows them: the writers' ``cast=True`` and ``Array.cast`` share it) =========

cast_array = _declare("cast_array", "arrowmm.interop.cast", """\
``cast_array(array, target_type, safe) -> Array``: behind ``Array.cast`` (and so the casts of
``ChunkedArray``, ``RecordBatch`` and ``Table``).""")

build_array = _declare("build_array", "arrowmm.interop.build", """\
``build_array(values, type_or_None) -> Array``: ``arrowmm.array``, behind columns given as
Python lists or numpy arrays to ``Table``/``RecordBatch`` ``from_pydict``/``from_pylist``/
``from_arrays`` and ``add_column``/``append_column``/``set_column``.""")

empty_table = _declare("empty_table", "arrowmm.interop.constructors", """\
``empty_table(schema) -> Table``: a table of no rows; behind ``Schema.empty_table``.""")

from_pandas = _declare("from_pandas", "arrowmm.interop.tables", """\
``from_pandas(df, schema, preserve_index, columns, batch) -> Table | RecordBatch``: behind
``Table.from_pandas`` and ``RecordBatch.from_pandas`` (``batch``): ``arrowmm.table(df)``.""")

# == pickling (by name, for memory in a shared segment; anything else refuses) =================

_SHM = "arrowmm.shm.segment"

reduce_array = _declare("reduce_array", _SHM, """\
``reduce_array(array) -> (callable, args)``: ``Array.__reduce__`` (every array class): the
array by segment name and byte ranges, or TypeError when its memory is not a shared
segment.""")

reduce_batch = _declare("reduce_batch", _SHM, """\
``reduce_batch(batch) -> (callable, args)``: ``RecordBatch.__reduce__``: a batch of a shared
file by segment and message, one made of arrays by its arrays.""")

reduce_file_reader = _declare("reduce_file_reader", _SHM, """\
``reduce_file_reader(reader) -> (callable, args)``: ``FileReader.__reduce__``: a reader of a
shared segment by name, or TypeError.""")
