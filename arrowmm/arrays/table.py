"""``Table``: a schema and record batches borrowed from a reader (or a dataset), read as one.

Nothing is copied or decoded to make one: the batches keep their lazy columns, ``select``
and ``slice`` make new lazy batches over them, and ``column(name)`` gathers one column's
chunks (decoding that column only).  The Arrow C stream export (``interop``) and ``filter``,
``take``, ``sort_by`` (``compute``) live above this layer: they are reached through
``arrowmm.hooks``.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

from .. import hooks, types as t
from .batch import RecordBatch, cast_columns, cast_target, drop_positions, rows_to_columns
from .chunked import ChunkedArray, aligned_pieces
from .column_input import as_chunked, as_field, chunk_bounds, column_index, split_like
from .empty import empty_array
from ..errors import ArrowInvalid
from .pandas_compat import PandasConvertible, column_positions, raise_damage_named

__all__ = ["Table", "select_batch", "slice_batches", "table_of_columns"]


class _ColumnsOf:
    """A loader whose column ``k`` is column ``indices[k]`` of ``batch``: a projection of a
    batch that decodes a column when it is touched (the parent decodes it once, for both)."""

    __slots__ = ("batch", "indices")

    def __init__(self, batch: RecordBatch, indices: Sequence[int]):
        self.batch = batch
        self.indices = tuple(indices)

    @property
    def num_rows(self) -> int:
        return self.batch.num_rows

    def column(self, k: int, decoded=None):
        return self.batch.column(self.indices[k])


def column_indices(schema: t.Schema, columns) -> List[int]:
    """Indices of ``columns`` (names or indices) in ``schema``; KeyError for an unknown name,
    as pyarrow's ``Table.select``."""
    return column_positions(schema, columns, "select", ArrowInvalid)


def select_batch(batch: RecordBatch, indices: Sequence[int], schema: Optional[t.Schema] = None
                 ) -> RecordBatch:
    """Columns ``indices`` of ``batch``, lazily: none is decoded until touched."""
    if schema is None:
        schema = t.Schema([batch.schema.fields[k] for k in indices], batch.schema.metadata,
                          endianness=batch.schema.endianness)
    return RecordBatch(schema, batch.num_rows, loader=_ColumnsOf(batch, indices),
                       metadata=batch.metadata)


def slice_batches(batches: Sequence[RecordBatch], offset: int, length: Optional[int]
                  ) -> List[RecordBatch]:
    """Rows ``[offset, offset + length)`` across ``batches`` (zero-copy slices, lazy columns)."""
    offset = int(offset)
    if offset < 0:
        raise ArrowInvalid(f"slice offset must be >= 0, got {offset}")
    if length is not None:
        length = int(length)
        if length < 0:
            raise ArrowInvalid(f"slice length must be >= 0, got {length}")
    out = []
    for b in batches:
        if length is not None and length <= 0:
            break
        n = b.num_rows
        if offset >= n:
            offset -= n
            continue
        take = n - offset if length is None else min(n - offset, length)
        out.append(b if (offset == 0 and take == n) else b.slice(offset, take))
        if length is not None:
            length -= take
        offset = 0
    return out


def table_of_columns(schema: t.Schema, columns: Sequence[ChunkedArray], where: str = "table"
                     ) -> "Table":
    """A table of ``columns`` (chunked arrays of ``schema``'s types, all of one length), a
    batch wherever a chunk of one of them starts: zero-copy slices, no chunk combined."""
    if len(columns) != len(schema):
        raise ArrowInvalid(f"{where}: schema has {len(schema)} fields, got {len(columns)} columns")
    for k, (f, c) in enumerate(zip(schema, columns)):
        if len(c) != len(columns[0]):
            raise ArrowInvalid(f"{where}: column {k} named {f.name} expected length "
                               f"{len(columns[0])} but got length {len(c)}")
        if c.type != f.type:
            raise ArrowInvalid(f"{where}: column {k} named {f.name} is {c.type}, the schema "
                               f"says {f.type}")
    if not columns:
        return Table(schema, [])
    bounds = chunk_bounds(columns)
    if len(bounds) == 1:  # (no rows: one empty batch, as pyarrow's tables have one chunk)
        return Table(schema, [RecordBatch(schema, 0, [
            c.chunks[0] if c.num_chunks else empty_array(c.type) for c in columns])])
    pieces = [split_like(c, bounds) for c in columns]
    return Table(schema, [RecordBatch(schema, stop - start, [p[k] for p in pieces])
                          for k, (start, stop) in enumerate(zip(bounds, bounds[1:]))])


def _columns_of(schema: Optional[t.Schema], names, arrays, metadata, where: str) -> "Table":
    """``Table.from_arrays`` / ``from_pydict``: ``arrays`` under ``names`` or ``schema``."""
    if schema is not None:
        if not isinstance(schema, t.Schema):
            raise TypeError(f"{where}: schema must be an arrowmm Schema, got "
                            f"{type(schema).__name__}")
        if names is not None:
            raise ArrowInvalid(f"{where}: give names or schema, not both")
        if len(schema) != len(arrays):
            raise ArrowInvalid(f"{where}: schema has {len(schema)} fields, got {len(arrays)} "
                               f"columns")
        cols = [as_chunked(a, f.type, f"{where}: column {f.name!r}") for f, a in zip(schema, arrays)]
        if metadata is not None:
            schema = schema.with_metadata(metadata)
    else:
        if names is None or isinstance(names, str) or len(names) != len(arrays):
            raise ArrowInvalid(f"{where}: need one name per column ({len(arrays)} columns), got "
                               f"names={names!r}")
        cols = [as_chunked(a, None, f"{where}: column {n!r}") for n, a in zip(names, arrays)]
        schema = t.Schema([t.Field(str(n), c.type) for n, c in zip(names, cols)], metadata)
    return table_of_columns(schema, cols, where)


class Table(PandasConvertible):
    """Record batches of one schema, read as one table (pyarrow's ``Table``, borrowed).

    ``reader.read_all()``, ``reader.head(n)``, ``reader.slice(...)`` and a dataset's
    ``to_table()`` return one.  Its batches are the reader's, columns decoded when touched.

    Examples
    --------
    >>> import arrowmm
    >>> b = arrowmm.record_batch({"x": [1, 2], "y": ["a", "b"]})
    >>> t = arrowmm.Table.from_batches([b, b])
    >>> t.num_rows, t.column("x").to_pylist()
    (4, [1, 2, 1, 2])
    """

    __slots__ = ("schema", "_batches", "_num_rows")

    def __init__(self, schema: t.Schema, batches: Sequence[RecordBatch] = ()):
        if not isinstance(schema, t.Schema):
            raise ArrowInvalid(f"a Table's schema must be an arrowmm Schema, got "
                               f"{type(schema).__name__}")
        batches = list(batches)
        for k, b in enumerate(batches):
            if not isinstance(b, RecordBatch):
                raise ArrowInvalid(f"batch {k} is a {type(b).__name__}, not an arrowmm RecordBatch")
            if b.schema is not schema and not b.schema.equals(schema):
                raise ArrowInvalid(f"batch {k} has schema\n{b.schema}\nthe table\n{schema}")
        self.schema = schema
        self._batches = batches
        self._num_rows = sum(b.num_rows for b in batches)

    @classmethod
    def from_batches(cls, batches: Sequence[RecordBatch], schema: Optional[t.Schema] = None
                     ) -> "Table":
        """A table of ``batches`` (their schema, or ``schema`` when there are none)."""
        batches = list(batches)
        if schema is None:
            if not batches:
                raise ArrowInvalid("from_batches of no batches needs a schema")
            schema = batches[0].schema
        return cls(schema, batches)

    @classmethod
    def from_arrays(cls, arrays: Sequence, names: Optional[Sequence[str]] = None,
                    schema: Optional[t.Schema] = None, metadata: Optional[dict] = None
                    ) -> "Table":
        """A table of columns (arrays, chunked arrays, lists or numpy arrays) under ``names``
        or a ``schema``, as ``pyarrow.Table.from_arrays``; chunks are kept, not combined."""
        return _columns_of(schema, names, list(arrays), metadata, "Table.from_arrays")

    @classmethod
    def from_pydict(cls, mapping, schema: Optional[t.Schema] = None,
                    metadata: Optional[dict] = None) -> "Table":
        """A table of ``{name: column}`` (arrays, chunked arrays, lists or numpy arrays), as
        ``pyarrow.Table.from_pydict``; with ``schema``, its fields pick the columns (others
        in the dict are left out) and fix their types."""
        if not hasattr(mapping, "keys"):
            raise TypeError(f"Table.from_pydict takes a dict, got {type(mapping).__name__}")
        if schema is not None:
            if not isinstance(schema, t.Schema):
                raise TypeError(f"Table.from_pydict: schema must be an arrowmm Schema, got "
                                f"{type(schema).__name__}")
            missing = [f.name for f in schema if f.name not in mapping]
            if missing:
                raise KeyError(f"Table.from_pydict: the dict has no column {missing[0]!r} of the "
                               f"schema")
            return _columns_of(schema, None, [mapping[f.name] for f in schema], metadata,
                               "Table.from_pydict")
        return _columns_of(None, [str(k) for k in mapping.keys()], list(mapping.values()),
                           metadata, "Table.from_pydict")

    @classmethod
    def from_pandas(cls, df, schema: Optional[t.Schema] = None,
                    preserve_index: Optional[bool] = None, nthreads=None,
                    columns: Optional[Sequence[str]] = None) -> "Table":
        """``arrowmm.table(df)`` of a pandas DataFrame's ``columns``, as
        ``pyarrow.Table.from_pandas``: the index kept as columns or metadata (None), as
        columns (True) or not at all (False).  ``nthreads`` is accepted and unused: pandas
        converts (with pyarrow, which its export needs)."""
        return hooks.from_pandas(df, schema, preserve_index, columns, False)

    @classmethod
    def from_pylist(cls, mapping: Sequence[dict], schema: Optional[t.Schema] = None,
                    metadata: Optional[dict] = None) -> "Table":
        """A table of rows (``{name: value}`` dicts), as ``pyarrow.Table.from_pylist``: the
        columns are the first row's keys (or the schema's names); a missing key is a null."""
        return cls.from_pydict(rows_to_columns(mapping, schema, "Table.from_pylist"), schema,
                               metadata)

    # -- shape -----------------------------------------------------------------------------
    @property
    def num_rows(self) -> int:
        """The number of rows, over all batches."""
        return self._num_rows

    @property
    def num_columns(self) -> int:
        """The number of columns (fields of the schema)."""
        return len(self.schema)

    @property
    def shape(self):
        """``(num_rows, num_columns)``, as ``pyarrow.Table.shape``."""
        return (self._num_rows, len(self.schema))

    @property
    def column_names(self) -> List[str]:
        """The columns' names, in schema order."""
        return self.schema.names

    def __len__(self) -> int:
        return self._num_rows

    def field(self, i) -> t.Field:
        """The schema's field at index ``i`` or named ``i`` (``pyarrow.Table.field``)."""
        return self.schema.field(i)

    # -- columns ---------------------------------------------------------------------------
    def column(self, i) -> ChunkedArray:
        """Column ``i`` (name or index) across the batches: a chunk per batch."""
        k = column_indices(self.schema, [i])[0]
        column = ChunkedArray([b.column(k) for b in self._batches], self.schema.fields[k].type)
        column._name = self.schema.fields[k].name
        return column

    __getitem__ = column

    @property
    def columns(self) -> List[ChunkedArray]:
        """Every column, as a ``ChunkedArray`` with one chunk per batch."""
        return [self.column(k) for k in range(len(self.schema))]

    def itercolumns(self):
        """Each column in schema order, as a ``ChunkedArray`` (``pyarrow.Table.itercolumns``)."""
        for k in range(len(self.schema)):
            yield self.column(k)

    def select(self, columns) -> "Table":
        """Columns ``columns`` (names or indices) in that order; nothing is decoded."""
        ks = column_indices(self.schema, columns)
        schema = t.Schema([self.schema.fields[k] for k in ks], self.schema.metadata,
                          endianness=self.schema.endianness)
        return Table(schema, [select_batch(b, ks, schema) for b in self._batches])

    def slice(self, offset: int = 0, length: Optional[int] = None) -> "Table":
        """Rows ``[offset, offset + length)``, zero-copy, as pyarrow's ``Table.slice``."""
        return Table(self.schema, slice_batches(self._batches, offset, length))

    def tail(self, n: int = 5) -> "Table":
        """The last ``n`` rows (zero-copy slices), as pandas' ``tail``."""
        n = int(n)
        if n < 0:
            raise ArrowInvalid(f"tail(n): must be >= 0, got {n}")
        return self.slice(max(self._num_rows - n, 0))

    # -- selection (the kernels of arrowmm.compute) ----------------------------------------
    def filter(self, mask) -> "Table":
        """The rows where ``mask`` is true: a boolean array (numpy, list, arrowmm, pyarrow or
        a ChunkedArray) as long as the table, or an expression (``arrowmm.field("x") > 3``);
        a null drops its row, as pyarrow's default.  The batches stay as they are cut."""
        return hooks.filter_table(self, mask)

    def take(self, indices) -> "Table":
        """The rows at ``indices`` (integers, in that order; a null index gives a null row;
        out of range raises IndexError), as one new batch."""
        return hooks.take_table(self, indices)

    def sort_by(self, sorting, *, null_placement=None) -> "Table":
        """The rows sorted by ``sorting``: a column name (ascending) or a list of
        ``(name, "ascending" | "descending")`` or ``(name, order, "at_start" | "at_end")``, as
        ``pyarrow.Table.sort_by``: stable, nulls last, NaN after the numbers (``at_start``:
        nulls, then NaN, then the numbers); ``null_placement`` overrides every key's."""
        return hooks.sort_table(self, sorting, null_placement=null_placement)

    def cast(self, target_schema: t.Schema, safe: bool = True) -> "Table":
        """The columns cast to ``target_schema``'s types (same names, in order), batch by
        batch, as ``pyarrow.Table.cast`` (see ``Array.cast`` for ``safe``); a column with nulls
        for a non-nullable field raises ``ArrowInvalid``."""
        target_schema = cast_target(target_schema)
        if not self._batches:  # (names, nullability and the pairs checked all the same)
            cast_columns(self.schema, target_schema,
                         lambda k: empty_array(self.schema.fields[k].type), safe, "table")
        return Table(target_schema, [
            RecordBatch(target_schema, b.num_rows,
                        cast_columns(b.schema, target_schema, b.column, safe, "table"),
                        metadata=b.metadata) for b in self._batches])

    # -- new tables with a column more, less or other (pyarrow's; never in place) -----------
    def add_column(self, i: int, field_, column) -> "Table":
        """A new table with ``column`` (an array, chunked array, list or numpy array) inserted
        at position ``i`` as ``field_`` (a Field or a name), as ``pyarrow.Table.add_column``."""
        return self._with_column(column_index(i, self.num_columns, "add_column", "add", True),
                                 field_, column, "add_column", 0)

    def append_column(self, field_, column) -> "Table":
        """A new table with ``column`` added last (see ``add_column``)."""
        return self._with_column(self.num_columns, field_, column, "append_column", 0)

    def set_column(self, i: int, field_, column) -> "Table":
        """A new table with column ``i`` replaced by ``column`` as ``field_`` (see
        ``add_column``), as ``pyarrow.Table.set_column`` (which appends it for
        ``i == num_columns``)."""
        k = column_index(i, self.num_columns, "set_column", "set", True)
        return self._with_column(k, field_, column, "set_column", int(k < self.num_columns))

    def _with_column(self, k: int, field_, column, where: str, replace: int) -> "Table":
        col = as_chunked(column, None, f"{where}: the column")
        if len(col) != self._num_rows:
            raise ArrowInvalid(f"Added column's length must match table's length. Expected "
                               f"length {self._num_rows} but got length {len(col)}")
        f = as_field(field_, col.type, where)
        fields = list(self.schema.fields)
        cols = self.columns
        fields[k:k + replace] = [f]
        cols[k:k + replace] = [col]
        return table_of_columns(t.Schema(fields, self.schema.metadata,
                                         endianness=self.schema.endianness), cols, where)

    def remove_column(self, i: int) -> "Table":
        """A new table without column ``i`` (nothing decoded), as
        ``pyarrow.Table.remove_column``."""
        k = column_index(i, self.num_columns, "remove_column", "remove")
        return self.select([j for j in range(self.num_columns) if j != k])

    def drop_columns(self, columns) -> "Table":
        """A new table without the columns named ``columns`` (a name or a list of names;
        KeyError for a name not in the table), as ``pyarrow.Table.drop_columns``."""
        drop = drop_positions(self.schema, columns)
        return self.select([j for j in range(self.num_columns) if j not in drop])

    def rename_columns(self, names) -> "Table":
        """The same columns under new names: one per column, or a dict of old to new names
        (KeyError for a name not in the table), as ``pyarrow.Table.rename_columns``."""
        schema = RecordBatch(self.schema, 0).rename_columns(names).schema
        return Table(schema, [b._with_schema(schema) for b in self._batches])

    def replace_schema_metadata(self, metadata: Optional[dict] = None) -> "Table":
        """A new table whose schema has ``metadata`` (None: none), the columns shared, as
        ``pyarrow.Table.replace_schema_metadata``."""
        schema = self.schema.with_metadata(metadata)
        return Table(schema, [b._with_schema(schema) for b in self._batches])

    def combine_chunks(self) -> "Table":
        """A table of one batch, each column's chunks combined (a copy unless there is one),
        as ``pyarrow.Table.combine_chunks``."""
        if len(self._batches) <= 1:
            return self
        return Table(self.schema, [RecordBatch(
            self.schema, self._num_rows,
            [self.column(k).combine_chunks() for k in range(self.num_columns)])])

    def to_batches(self) -> List[RecordBatch]:
        """The table's record batches, zero-copy (``pyarrow.Table.to_batches``)."""
        return list(self._batches)

    # -- conversions -----------------------------------------------------------------------
    def to_pydict(self, *, temporal: str = "python") -> dict:
        """``{column name: list of values}`` over all batches (see ``Array.to_pylist``)."""
        out = {}
        for k, f in enumerate(self.schema):
            try:
                out[f.name] = self.column(k).to_pylist(temporal=temporal)
            except ArrowInvalid as exc:
                raise_damage_named(exc, self._batches, [k])
                raise
        return out

    def to_pylist(self, *, temporal: str = "python") -> list:
        """One ``{column name: value}`` dict per row, over all batches."""
        out = []
        for i, b in enumerate(self._batches):
            try:
                out.extend(b.to_pylist(temporal=temporal))
            except ArrowInvalid as exc:
                raise_damage_named(exc, [b], range(b.num_columns), i)
                raise
        return out

    def _pandas_batches(self):
        return self._batches

    def equals(self, other: "Table", check_metadata: bool = False) -> bool:
        """Same schema and values, however each is cut into batches."""
        if not isinstance(other, Table) or self._num_rows != other._num_rows:
            return False
        if not self.schema.equals(other.schema, check_metadata=check_metadata):
            return False
        for k in range(len(self.schema)):
            mine = [b.column(k) for b in self._batches]
            theirs = [b.column(k) for b in other._batches]
            if not all(x.equals(y) for x, y in aligned_pieces(mine, theirs)):
                return False
        return True

    def __eq__(self, other):
        return self.equals(other)

    __hash__ = None

    def __repr__(self):
        return (f"arrowmm.Table num_rows={self._num_rows} num_columns={len(self.schema)} "
                f"batches={len(self._batches)}\n{self.schema}")

    # -- the Arrow PyCapsule interface -----------------------------------------------------
    def __arrow_c_stream__(self, requested_schema=None):
        """The batches as an Arrow C stream: zero-copy (pyarrow.table, polars, duckdb)."""
        return hooks.export_c_stream(self.schema, list(self._batches), requested_schema)
