"""Record batches: a schema plus columns, each decoded the first time it is touched."""
from __future__ import annotations

import operator
import os
import threading
from typing import Iterator, List, Optional, Sequence, Union, overload

import numpy as np

from .. import hooks, types as t
from .array import Array, imported_batch, unbacked_rows
from .column_input import as_array, as_field, column_index
from .display import inline_values, preview
from .decode_ahead import DECODED, IN_FLIGHT, MISSING
from .extension import ExtensionArray, storage_of, wrap
from ..errors import ArrowInvalid, ArrowTypeError
from .pandas_compat import PandasConvertible, raise_damage_named

__all__ = ["RecordBatch", "cast_columns", "cast_target", "drop_positions", "rows_to_columns"]


_PUBLISH = threading.Lock()  # (held only to publish a column built without its own lock)

#: Bumped in a process forked from this one.  A column's decode lock held at the fork (the
#: read-ahead thread decoding it) would stay held in the child for ever, since the thread
#: that holds it does not exist there: the child hung on its first touch of that column.
#: Each lock remembers the generation it was made in, and a child replaces an older one.
_fork_generation = 0


def _forked() -> None:
    global _fork_generation, _PUBLISH
    _fork_generation += 1
    _PUBLISH = threading.Lock()  # (as the decode locks: a thread may have held it at the fork)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def cast_target(target_schema) -> t.Schema:
    """The schema to cast a batch or table to: an arrowmm Schema, or another library's
    (pyarrow's: ``__arrow_c_schema__``) imported."""
    if isinstance(target_schema, t.Schema):
        return target_schema
    if hasattr(target_schema, "__arrow_c_schema__") and not isinstance(target_schema,
                                                                       (t.DataType, t.Field)):
        return t.Schema(target_schema)
    raise TypeError(f"cast: target_schema must be a Schema (arrowmm's, or one with "
                    f"__arrow_c_schema__: pyarrow's), got {type(target_schema).__name__}")


def cast_columns(schema: t.Schema, target_schema: t.Schema, column, safe: bool, what: str
                 ) -> List[Array]:
    """``column(k)`` of each field of ``schema`` cast to ``target_schema``'s type (a
    ``cast_target``), as pyarrow's ``cast`` of a batch or table (``what``) checks names and
    nullability."""
    if schema.names != target_schema.names:
        raise ArrowInvalid(f"Target schema's field names are not matching the {what}'s field "
                           f"names: {schema.names}, {target_schema.names}")
    out = []
    for k, f in enumerate(target_schema):
        col = column(k).cast(f.type, safe)
        if not f.nullable and col.null_count:
            raise ArrowInvalid(f"Casting field {f.name!r} with null values to non-nullable")
        out.append(col)
    return out


def drop_positions(schema: t.Schema, columns) -> set:
    """Positions of the columns named ``columns`` (a name or a list of names), for
    ``drop_columns``: KeyError for a name not in ``schema``, or that two columns share, as
    pyarrow's."""
    if isinstance(columns, str):
        columns = [columns]
    out = set()
    for name in columns:
        if not isinstance(name, str):
            raise TypeError(f"drop_columns takes column names (str), got {type(name).__name__}")
        hits = [k for k, n in enumerate(schema.names) if n == name]
        if not hits:
            raise KeyError(f"Column {name!r} not found")
        if len(hits) > 1:  # (pyarrow refuses too: which one was meant cannot be known)
            raise KeyError(f"Column {name!r} is ambiguous: {len(hits)} columns have that name")
        out.update(hits)
    return out


def rows_to_columns(rows, schema: Optional[t.Schema], where: str) -> dict:
    """``{name: list of values}`` of ``rows`` (``{name: value}`` dicts) for ``from_pylist``:
    the names are the schema's, or the first row's keys; a key a row lacks gives a null."""
    if isinstance(rows, (str, bytes, dict)) or not hasattr(rows, "__iter__"):
        raise TypeError(f"{where} takes a list of dicts, got {type(rows).__name__}")
    rows = list(rows)
    for k, row in enumerate(rows):
        if not hasattr(row, "get"):
            raise TypeError(f"{where}: row {k} is a {type(row).__name__}, not a dict")
    names = schema.names if schema is not None else list(rows[0].keys()) if rows else []
    return {n: [row.get(n) for row in rows] for n in names}


def _checked_columns(schema: t.Schema, num_rows: int, columns: Sequence[Optional[Array]]
                     ) -> List[Optional[Array]]:
    """The storage arrays of ``columns``, one per field of ``schema``, each ``num_rows`` long
    and of its field's storage type (``None``: not decoded yet, the loader's to decode).
    ``RecordBatch(...)`` is public: a column that did not match read as other rows
    or failed far from the cause.  (Readers, slices and kernels hand columns carrying their
    field's type object: one identity test each, then the names of what differs.)"""
    fields = schema.fields
    out = list(columns)
    if len(out) == len(fields) and num_rows >= 0:
        try:
            for f, c in zip(fields, out):
                if c is not None and (c.length != num_rows or c.type is not f.storage_type):
                    break
            else:
                return out
        except AttributeError:  # (not an Array: named below)
            pass
    if len(out) != len(fields):
        raise ArrowInvalid(f"RecordBatch: the schema has {len(fields)} fields, got "
                           f"{len(out)} columns")
    if num_rows < 0:
        raise ArrowInvalid(f"RecordBatch: num_rows must be >= 0, got {num_rows}")
    for k, (f, c) in enumerate(zip(fields, out)):
        if c is None:
            continue
        if not isinstance(c, Array):
            raise ArrowInvalid(f"RecordBatch: column {f.name!r} is a {type(c).__name__}, not "
                               f"an arrowmm Array (RecordBatch.from_arrays converts)")
        if isinstance(c, ExtensionArray):
            if c.type != f.type:
                raise ArrowInvalid(f"RecordBatch: field {f.name!r} is {f.type} but its column "
                                   f"is {c.type}")
            c = out[k] = c.storage
        if c.length != num_rows:
            raise ArrowInvalid(f"RecordBatch: column {f.name!r} has {c.length} rows, the batch "
                               f"{num_rows}")
        if c.type != f.storage_type:
            raise ArrowInvalid(f"RecordBatch: field {f.name!r} is {f.storage_type} but its "
                               f"column is {c.type}")
    return out


class RecordBatch(PandasConvertible):
    """Equal-length columns under a schema.

    Batches read from IPC hold a loader and decode column ``k`` only when
    ``column(k)`` (or anything that needs it) is first called.  ``metadata``
    is the message-level custom metadata of the record batch message.

    A batch may be shared between threads: a column is decoded once, under a lock of its own
    (threads first-touching other columns decode them at the same time), and every caller
    gets the same Array.
    """

    __slots__ = ("schema", "num_rows", "metadata", "_loader", "_columns", "_offset", "_locks",
                 "_wrapped", "_ahead", "_plain", "__weakref__")

    def __init__(self, schema: t.Schema, num_rows: int, columns: Optional[Sequence[Array]] = None,
                 loader=None, metadata: Optional[dict] = None, offset: int = 0):
        self.schema = schema
        self.num_rows = int(num_rows)
        self.metadata = metadata
        self._loader = loader
        # the storage arrays (an extension column is wrapped when handed out: ``column``)
        self._columns: List[Optional[Array]] = [None] * len(schema) if columns is None else \
            _checked_columns(schema, self.num_rows, columns)
        self._wrapped = {}  # column index -> its extension array, made on first hand-out
        self._offset = offset  # row offset into the loader's columns (for slices of lazy batches)
        # column -> (fork generation, lock held while decoding it)
        self._locks = {} if loader is not None else None
        self._ahead = None  # (ReadAhead, batch index) of a compressed batch a reader handed out
        # (the loader's lock-free way to a plain fixed-width column, when it has one)
        # (the loader itself, not its bound plain_column: one object fewer per batch for the
        # cyclic collector to track)
        self._plain = loader if not offset and hasattr(loader, "plain_column") else None

    @classmethod
    def from_arrays(cls, arrays: Sequence[Array], names: Optional[Sequence[str]] = None,
                    schema: Optional[t.Schema] = None, metadata: Optional[dict] = None) -> "RecordBatch":
        """A batch from arrays (or lists, numpy arrays, Arrow producers) and either ``names``
        or a ``schema``, as ``pyarrow.RecordBatch.from_arrays``."""
        arrays = list(arrays)
        if schema is None:
            if names is None or len(names) != len(arrays):
                raise ArrowInvalid(f"need one name per array ({len(arrays)} arrays)")
            arrays = [as_array(a, None, f"RecordBatch.from_arrays: column {n!r}")
                      for n, a in zip(names, arrays)]
            schema = t.Schema([t.Field(n, a.type) for n, a in zip(names, arrays)], metadata)
        elif len(schema) == len(arrays):
            arrays = [a if isinstance(a, Array) else  # (a storage array of an extension field)
                      as_array(a, f.type, f"RecordBatch.from_arrays: column {f.name!r}")
                      for f, a in zip(schema, arrays)]
            if metadata is not None:
                schema = schema.with_metadata(metadata)
        if len(schema) != len(arrays):
            raise ArrowInvalid(f"schema has {len(schema)} fields, got {len(arrays)} arrays")
        lengths = {len(a) for a in arrays}
        if len(lengths) > 1:
            raise ArrowInvalid(f"arrays have different lengths: {sorted(lengths)}")
        for f, a, ext in zip(schema, arrays, schema.extension_types()):
            if isinstance(a, ExtensionArray) and a.type != ext:
                raise ArrowInvalid(f"field {f.name!r} is {f.type} but its array is {a.type}")
            if f.storage_type != storage_of(a).type:
                raise ArrowInvalid(f"field {f.name!r} is {f.type} but its array is {a.type}")
        return cls(schema, lengths.pop() if lengths else 0, arrays)

    @classmethod
    def from_pydict(cls, mapping, schema: Optional[t.Schema] = None,
                    metadata: Optional[dict] = None) -> "RecordBatch":
        """A batch of ``{name: column}`` (arrays, lists or numpy arrays), as
        ``pyarrow.RecordBatch.from_pydict``; with ``schema``, its fields pick the columns and
        fix their types."""
        if not hasattr(mapping, "keys"):
            raise TypeError(f"RecordBatch.from_pydict takes a dict, got {type(mapping).__name__}")
        if schema is not None:
            if not isinstance(schema, t.Schema):
                raise TypeError(f"RecordBatch.from_pydict: schema must be an arrowmm Schema, got "
                                f"{type(schema).__name__}")
            missing = [f.name for f in schema if f.name not in mapping]
            if missing:
                raise KeyError(f"RecordBatch.from_pydict: the dict has no column {missing[0]!r} "
                               f"of the schema")
            return cls.from_arrays([mapping[f.name] for f in schema], schema=schema,
                                   metadata=metadata)
        return cls.from_arrays(list(mapping.values()), [str(k) for k in mapping.keys()],
                               metadata=metadata)

    @classmethod
    def from_pandas(cls, df, schema: Optional[t.Schema] = None,
                    preserve_index: Optional[bool] = None, nthreads=None,
                    columns: Optional[Sequence[str]] = None) -> "RecordBatch":
        """One batch of a pandas DataFrame, as ``pyarrow.RecordBatch.from_pandas`` (see
        ``Table.from_pandas``)."""
        return hooks.from_pandas(df, schema, preserve_index, columns, True)

    @classmethod
    def from_pylist(cls, mapping: Sequence[dict], schema: Optional[t.Schema] = None,
                    metadata: Optional[dict] = None) -> "RecordBatch":
        """A batch of rows (``{name: value}`` dicts), as ``pyarrow.RecordBatch.from_pylist``:
        the columns are the first row's keys (or the schema's names); a missing key is null."""
        return cls.from_pydict(rows_to_columns(mapping, schema, "RecordBatch.from_pylist"),
                               schema, metadata)

    def _with_schema(self, schema: t.Schema) -> "RecordBatch":
        """This batch's columns (decoded or not) under ``schema`` (same types: new names or
        metadata)."""
        return RecordBatch(schema, self.num_rows, self._columns, self._loader, self.metadata,
                           self._offset)

    # -- new batches with a column more, less or other (pyarrow's; never in place) --------
    def add_column(self, i: int, field_, column) -> "RecordBatch":
        """A new batch with ``column`` (an array, list or numpy array) inserted at position
        ``i`` as ``field_`` (a Field or a name), as ``pyarrow.RecordBatch.add_column``."""
        return self._with_column(column_index(i, self.num_columns, "add_column", "add", True),
                                 field_, column, "add_column", 0)

    def append_column(self, field_, column) -> "RecordBatch":
        """A new batch with ``column`` added last (see ``add_column``)."""
        return self._with_column(self.num_columns, field_, column, "append_column", 0)

    def set_column(self, i: int, field_, column) -> "RecordBatch":
        """A new batch with column ``i`` replaced by ``column`` as ``field_`` (see
        ``add_column``), as ``pyarrow.RecordBatch.set_column`` (which appends it for
        ``i == num_columns``)."""
        k = column_index(i, self.num_columns, "set_column", "set", True)
        return self._with_column(k, field_, column, "set_column", int(k < self.num_columns))

    def _with_column(self, k: int, field_, column, where: str, replace: int) -> "RecordBatch":
        col = as_array(column, None, f"{where}: the column")
        if len(col) != self.num_rows:
            raise ArrowInvalid(f"Added column's length must match record batch's length. "
                               f"Expected length {self.num_rows} but got length {len(col)}")
        f = as_field(field_, col.type, where, ArrowTypeError)
        fields = list(self.schema.fields)
        cols = self.columns
        fields[k:k + replace] = [f]
        cols[k:k + replace] = [col]
        return RecordBatch(t.Schema(fields, self.schema.metadata, self.schema.endianness),
                           self.num_rows, cols, metadata=self.metadata)

    def remove_column(self, i: int) -> "RecordBatch":
        """A new batch without column ``i``, as ``pyarrow.RecordBatch.remove_column``."""
        k = column_index(i, self.num_columns, "remove_column", "remove")
        return self.select([j for j in range(self.num_columns) if j != k])

    def drop_columns(self, columns) -> "RecordBatch":
        """A new batch without the columns named ``columns`` (a name or a list of names;
        KeyError for a name not in the batch), as ``pyarrow.RecordBatch.drop_columns``."""
        drop = drop_positions(self.schema, columns)
        return self.select([j for j in range(self.num_columns) if j not in drop])

    def replace_schema_metadata(self, metadata: Optional[dict] = None) -> "RecordBatch":
        """A new batch whose schema has ``metadata`` (None: none), the columns shared, as
        ``pyarrow.RecordBatch.replace_schema_metadata``."""
        return self._with_schema(self.schema.with_metadata(metadata))

    # -- columns -------------------------------------------------------------------------
    @property
    def num_columns(self) -> int:
        return len(self.schema)

    @property
    def shape(self):
        return (self.num_rows, self.num_columns)

    def __len__(self):
        return self.num_rows

    def _index(self, i) -> int:
        if isinstance(i, str):
            hits = [k for k, f in enumerate(self.schema.fields) if f.name == i]
            if len(hits) != 1:
                raise KeyError(f"batch has {'no' if not hits else len(hits)} column(s) named {i!r}")
            return hits[0]
        n = len(self._columns)
        try:
            k = operator.index(i)
        except TypeError:
            raise TypeError(f"a column is chosen by name or integer index, not "
                            f"{type(i).__name__}") from None
        if not -n <= k < n:
            raise IndexError(f"column index {i} out of range for {n} columns")
        return k % n

    def column(self, i) -> Array:
        """Column ``i`` (index or name), decoded now if it was not yet; a column of a
        registered extension type comes as its ``ExtensionArray``."""
        cols = self._columns
        if type(i) is int and 0 <= i < len(cols):
            k = i
        else:
            k = self._index(i)
        col = cols[k]
        ahead = self._ahead
        if ahead is not None:  # (a compressed batch: decode what a walk in order wants next)
            state = DECODED if col is not None else IN_FLIGHT if self._decoding(k) else MISSING
            ahead[0].hint(ahead[1], k, state)
        if col is None:
            col = self._decode(k, None)
        ext = self.schema.extension_types()[k]
        return col if ext is None else self._extension_column(k, ext, col)

    def _extension_column(self, k: int, ext, storage: Array) -> Array:
        """Column ``k`` wrapped as ``ext``, the same object for every caller."""
        wrapped = self._wrapped
        col = wrapped.get(k)
        if col is None:
            col = wrapped.setdefault(k, wrap(ext, storage))
        return col

    def storage_column(self, i) -> Array:
        """Column ``i`` as stored: an extension column's storage array (what writers and
        exporters lay out, the extension being named in the field's metadata)."""
        return storage_of(self.column(i))

    @property
    def storage_columns(self) -> List[Array]:
        """Every column as stored (see ``storage_column``)."""
        cols = self._columns
        for c in cols:
            if c is None:
                self.decode_columns()
                break
        return [storage_of(c) for c in cols]

    def _decode(self, k: int, decoded, wait: bool = True) -> Optional[Array]:
        """Column ``k`` decoded by the loader, once: a thread that finds another decoding it
        waits for that Array (dict.setdefault hands every thread the same lock; no thread
        waits for a lock while it holds one, so no thread waits on one that waits on it).
        Without ``wait`` (the read-ahead), None instead of waiting: a thread decoding the
        column already needs no help, and the read-ahead goes on to its next column."""
        plain = self._plain
        if plain is not None and decoded is None:
            col = plain.plain_column(k, self._publish)
            if col is not None:
                return col
        lock = self._decode_lock(k)
        if not lock.acquire(wait):
            return None
        try:
            col = self._columns[k]
            if col is None:
                col = self._load(k, decoded)
        finally:
            lock.release()
        self._locks.pop(k, None)  # (a late thread makes a new lock, then finds the column decoded)
        return col

    def _load(self, k: int, decoded) -> Array:
        """Column ``k`` from the loader, kept: only under column ``k``'s lock."""
        col = self._loader.column(k, decoded)
        if self._offset or col.length != self.num_rows:
            col = col.slice(self._offset, self.num_rows)
        self._columns[k] = col
        return col

    def _claim(self, ks) -> list:
        """``[(column, its lock)]`` of those of columns ``ks`` that no thread has decoded or is
        decoding, their locks taken without waiting: from now on a thread asking for one of
        them waits for its Array (``_decode``) rather than decompress it again.  Hand the list
        to ``_decode_claimed`` (from any thread), which lets every lock go."""
        cols, claimed = self._columns, []
        for k in ks:
            if cols[k] is None:
                lock = self._decode_lock(k)
                if lock.acquire(False):
                    if cols[k] is None:
                        claimed.append((k, lock))
                    else:  # (decoded between the test and the lock)
                        lock.release()
        return claimed

    def _decode_claimed(self, claimed: list) -> dict:
        """Decode the columns of ``_claim`` together, their buffers decompressed on the codec
        pool (``prefetch``), each column loaded and checked in the codec job that finished
        its last buffer (while they are in the cache) and its lock let go as soon as it is
        kept (or its decode failed); ``{column: the error its decode raised}``, the others
        decoded."""
        failed = {}
        order = [k for k, _ in claimed]
        locks = dict(claimed)  # (a column's lock, popped by the one thread that loads it)

        def load(k, decoded):
            lock = locks.pop(k, None)
            if lock is None:
                return
            try:
                self._load(k, decoded)
            except Exception as exc:  # noqa: BLE001 (handed back, the others decoded)
                failed[k] = exc
            finally:
                lock.release()
                self._locks.pop(k, None)

        try:
            decoded = None
            if len(order) > 1:
                try:
                    decoded = self._loader.prefetch(order, load)
                except Exception:  # noqa: BLE001 (each column's own decode then says why)
                    pass
            for k in order:  # (those no codec job loaded: no prefetch, or no buffer)
                load(k, decoded)
        finally:
            while locks:  # (only after an exception of another kind)
                locks.popitem()[1].release()
        return failed

    def _decode_free(self, ks) -> dict:
        """Decode together those of columns ``ks`` that no thread has decoded or is decoding,
        without waiting for any (``_claim``, ``_decode_claimed``)."""
        return self._decode_claimed(self._claim(ks))

    def _decoding(self, k: int) -> bool:
        """Whether a thread is decoding column ``k`` now (holds its lock)."""
        lock = self._locks.get(k)
        return lock is not None and lock[0] == _fork_generation and lock[1].locked()

    def _decode_lock(self, k: int) -> threading.Lock:
        """The lock of column ``k``'s decode, made once for every thread (dict.setdefault);
        one made before this process was forked is replaced."""
        have = self._locks.get(k)
        if have is not None and have[0] == _fork_generation:
            return have[1]
        fresh = (_fork_generation, threading.Lock())
        if have is None:
            return self._locks.setdefault(k, fresh)[1]
        with _PUBLISH:  # (in a forked child only: whoever comes first replaces it)
            have = self._locks.get(k)
            if have is None or have[0] != _fork_generation:
                self._locks[k] = have = fresh
            return have[1]

    def _publish(self, k: int, col: Array) -> tuple:
        """Column ``k`` kept, and whether it is ``col``'s: ``col`` (cut to the batch's rows: a
        head of a lazy batch shares its loader), unless a racing thread's was kept first."""
        if col.length != self.num_rows:
            col = col.slice(0, self.num_rows)
        with _PUBLISH:
            have = self._columns[k]
            if have is None:
                self._columns[k] = col
                return col, True
            return have, False

    @overload
    def __getitem__(self, i: slice) -> RecordBatch: ...
    @overload
    def __getitem__(self, i: Union[int, str]) -> Array: ...

    def __getitem__(self, i):
        """``batch["name"]`` / ``batch[k]``: a column; ``batch[a:b]``: rows, zero-copy (a step
        other than 1 copies them with ``take``), as pyarrow's batches do."""
        if isinstance(i, slice):
            start, stop, step = i.indices(self.num_rows)
            if step == 1:
                return self.slice(start, max(stop - start, 0))
            return self.take(np.arange(start, stop, step, dtype=np.int64))
        return self.column(i)

    @property
    def compression(self) -> Optional[str]:
        """The codec of the batch's body (``"lz4"``, ``"zstd"``), or None: uncompressed, or a
        batch not read from IPC."""
        header = getattr(self._loader, "header", None)
        return None if header is None else header.compression

    def decode_columns(self, indices=None) -> None:
        """Decode columns ``indices`` (names or indices; default: all) now, those not yet
        decoded: a compressed batch decompresses their buffers together on the codec pool
        (the GIL released while codecs run), so several columns cost about what the biggest
        one costs alone, instead of their sum on the caller's thread.  Thread-safe: each
        column is still decoded once, under its own lock (a thread that finds one being
        decoded waits for it).  What ``columns``, ``to_pandas``, ``to_pydict`` and the
        exports call before they take every column."""
        cols = self._columns
        ks = range(len(cols)) if indices is None else [self._index(i) for i in indices]
        missing = [k for k in dict.fromkeys(ks) if cols[k] is None]
        if not missing:
            return
        if len(missing) > 1 and self.compression is not None and \
                hasattr(self._loader, "prefetch"):
            # the columns no other thread is on, decoded together; then those another thread
            # was decoding (the read-ahead of the rest of the batch, a second caller of this),
            # waited for rather than decompressed again; the first error in column order is
            # raised, once every other column is decoded
            failed = self._decode_free(missing)
            if failed:
                raise failed[min(failed)]
        for k in missing:
            if cols[k] is None:
                self._decode(k, None)

    def gather_base(self) -> Optional[tuple]:
        """Where the batch's columns lie in its IPC message (``BatchLoader.gather_base``), for
        ``arrays.gather`` to copy one column of many batches at once; None for a batch that
        is not a whole uncompressed IPC batch (built, sliced, projected or compressed)."""
        base = getattr(self._loader, "gather_base", None)
        if base is None or self._offset:
            return None
        got = base()
        return got if got is not None and got[3] == self.num_rows else None

    @property
    def columns(self) -> List[Array]:
        self.decode_columns()
        exts = self.schema.extension_types()
        return [c if e is None else self._extension_column(k, e, c)
                for k, (c, e) in enumerate(zip(self._columns, exts))]

    @property
    def column_names(self) -> List[str]:
        return self.schema.names

    def is_loaded(self, i) -> bool:
        """Whether column ``i`` has been decoded (lazy loading made visible)."""
        return self._columns[self._index(i)] is not None

    def field(self, i) -> t.Field:
        """The schema's field at index ``i`` or named ``i`` (``pyarrow.RecordBatch.field``)."""
        return self.schema.field(i)

    def slice(self, offset: int = 0, length: Optional[int] = None) -> "RecordBatch":
        """Rows ``[offset, offset + length)``, zero-copy; undecoded columns stay undecoded."""
        offset = int(offset)
        if offset < 0:
            raise ArrowInvalid(f"slice offset must be >= 0, got {offset}")
        if length is not None and int(length) < 0:  # (pyarrow's batch is invalid then)
            raise ArrowInvalid(f"slice length must be >= 0, got {int(length)}")
        offset = min(offset, self.num_rows)
        length = self.num_rows - offset if length is None else max(0, min(int(length), self.num_rows - offset))
        cols = [None if c is None else c.slice(offset, length) for c in self._columns]
        out = RecordBatch(self.schema, length, cols, self._loader, self.metadata, self._offset + offset)
        return out

    def select(self, columns: Sequence) -> "RecordBatch":
        """The columns named or numbered in ``columns``, in that order (no copy)."""
        if isinstance(columns, (str, int)):
            raise TypeError("select takes a list of column names or indices")
        ks = [self._index(c) for c in columns]
        # (decoded together, and without telling the read-ahead: a selection says which
        # columns it takes, so its first two in order start no decode of the rest)
        self.decode_columns(ks)
        exts = self.schema.extension_types()
        cols = [self._columns[k] if exts[k] is None else
                self._extension_column(k, exts[k], self._columns[k]) for k in ks]
        return RecordBatch(t.Schema([self.schema.fields[k] for k in ks], self.schema.metadata),
                           self.num_rows, cols, metadata=self.metadata)

    def rename_columns(self, names) -> "RecordBatch":
        """The same columns under new names: a list of one name per column, or a dict mapping
        some old names to new ones (names not in the batch raise KeyError), as pyarrow does."""
        if isinstance(names, dict):
            missing = [k for k in names if k not in self.schema.names]
            if missing:
                raise KeyError(f"rename_columns: the batch has no column named {missing[0]!r}")
            new = [names.get(n, n) for n in self.schema.names]
        else:
            new = [str(n) for n in names]
            if len(new) != self.num_columns:
                raise ArrowInvalid(f"tried to rename a record batch of {self.num_columns} columns "
                                   f"but {len(new)} names were provided")
        schema = t.Schema([f.with_name(n) for f, n in zip(self.schema.fields, new)],
                          self.schema.metadata, self.schema.endianness)
        return RecordBatch(schema, self.num_rows, self._columns, self._loader, self.metadata,
                           self._offset)

    def take(self, indices) -> "RecordBatch":
        """The rows at ``indices`` (numpy, list or integer array), a copy; null indices give
        null rows, out-of-range ones raise IndexError (``pyarrow.RecordBatch.take``)."""
        return hooks.take_batch(self, indices)

    def filter(self, mask) -> "RecordBatch":
        """The rows where ``mask`` is True: a boolean array as long as the batch (numpy, list,
        arrowmm or pyarrow) or an expression (``arrowmm.field("x") > 3``); a null drops its
        row, as pyarrow's default does (``pyarrow.RecordBatch.filter``)."""
        return hooks.filter_batch(self, mask)

    def sort_by(self, sorting, *, null_placement=None) -> "RecordBatch":
        """The rows sorted by ``sorting``: a column name (ascending) or a list of
        ``(name, "ascending" | "descending")`` or ``(name, order, "at_start" | "at_end")``, as
        ``pyarrow.RecordBatch.sort_by``: stable, nulls last, NaN after the numbers (``at_start``:
        nulls, then NaN, then the numbers); ``null_placement`` overrides every key's."""
        return hooks.sort_batch(self, sorting, null_placement=null_placement)

    def cast(self, target_schema: t.Schema, safe: bool = True) -> "RecordBatch":
        """The columns cast to ``target_schema``'s types (same names, in order), as
        ``pyarrow.RecordBatch.cast`` (see ``Array.cast`` for ``safe``); a column with nulls
        for a non-nullable field raises ``ArrowInvalid``."""
        target_schema = cast_target(target_schema)
        return RecordBatch(target_schema, self.num_rows,
                           cast_columns(self.schema, target_schema, self.column, safe,
                                        "record batch"), metadata=self.metadata)

    # -- conversion ----------------------------------------------------------------------
    def to_pydict(self, *, temporal: str = "python") -> dict:
        """``{column name: list of values}``, the values as ``Array.to_pylist`` gives them
        (pyarrow's ``RecordBatch.to_pydict``; ``temporal="int"``: see there)."""
        self.decode_columns()
        return dict(zip(self.schema.names, self._column_values(temporal)))

    def to_pylist(self, *, temporal: str = "python") -> list:
        """One ``{column name: value}`` dict per row (pyarrow's ``RecordBatch.to_pylist``;
        ``temporal="int"``: see ``Array.to_pylist``)."""
        names = self.schema.names
        self.decode_columns()
        cols = self._column_values(temporal)
        return [dict(zip(names, row)) for row in zip(*cols)] if cols else \
            [{} for _ in range(unbacked_rows(self.num_rows, "batch without columns"))]

    def _column_values(self, temporal: str) -> list:
        """Each column's ``to_pylist``; damage raises naming the column, as the exports do."""
        out = []
        for k in range(self.num_columns):
            try:
                out.append(self.column(k).to_pylist(temporal=temporal))
            except ArrowInvalid as exc:
                raise_damage_named(exc, [self], [k])
                raise
        return out

    def _pandas_batches(self):
        return [self]

    def serialize(self, alignment: int = 8) -> bytes:
        """The batch as one IPC record batch message, without schema or dictionaries (pyarrow's
        ``RecordBatch.serialize``); ``arrowmm.read_record_batch(buf, schema)`` reads it."""
        return hooks.serialize_batch(self, alignment)

    def validate(self, full: bool = False) -> None:
        """Decode every column and check it (structure; every offset, byte and index if ``full``)."""
        for k, f in enumerate(self.schema):
            col = self.storage_column(k)
            if len(col) != self.num_rows:
                raise ArrowInvalid(f"column {k} ({f.name!r}) has {len(col)} rows, the batch {self.num_rows}")
            if col.type != f.storage_type:
                raise ArrowInvalid(f"column {k} ({f.name!r}) is {col.type}, the schema says {f.type}")
            col.validate(full, f"column {k} ({f.name!r})")

    def equals(self, other, check_metadata: bool = False) -> bool:
        """Whether ``other`` (an arrowmm batch, or any object exporting a record batch through
        ``__arrow_c_array__``, such as a pyarrow batch) has the same schema (names, types,
        nullability; metadata too when ``check_metadata``) and the same values."""
        if isinstance(other, Array):
            return False  # (an array is no batch, even a struct array)
        if not isinstance(other, RecordBatch):
            if not hasattr(other, "__arrow_c_array__"):
                raise TypeError(f"equals: expected a record batch, got {type(other).__name__}")
            other = imported_batch(other)
        return (self.schema.equals(other.schema, check_metadata)
                and self.num_rows == other.num_rows
                and all(a.equals(b) for a, b in zip(self.columns, other.columns)))

    def __eq__(self, other):
        try:
            return self.equals(other)
        except TypeError:
            return NotImplemented
        except ArrowInvalid:  # (a foreign array that is not a record batch)
            return False

    __hash__ = None  # like pyarrow's batches: compared by value, so unhashable

    def __repr__(self):
        return "arrowmm.RecordBatch\n" + self.to_string()

    def to_string(self) -> str:
        """pyarrow's layout: the schema, ``----``, then each column's first and last values."""
        lines = [self.schema.to_string(show_field_metadata=False, show_schema_metadata=False),
                 "----"]
        lines += [f"{f.name}: {inline_values(*preview(self.column(k)))}"
                  for k, f in enumerate(self.schema)]
        return "\n".join(lines)

    def __reduce__(self):
        """Pickles by name when read from a shared segment (``arrowmm.shm``), else TypeError."""
        return hooks.reduce_batch(self)

    # -- the Arrow PyCapsule interface ---------------------------------------------------
    def __arrow_c_schema__(self):
        return hooks.export_c_schema(self.schema)

    def __arrow_c_array__(self, requested_schema=None):
        return hooks.export_c_batch(self, requested_schema)


class SequentialBatches:
    """``__iter__`` for readers that only have ``read_next_batch`` (each gives ``read_all`` as
    an ``arrowmm.Table``)."""

    def __iter__(self) -> Iterator[RecordBatch]:
        while True:
            try:
                yield self.read_next_batch()
            except StopIteration:
                return
