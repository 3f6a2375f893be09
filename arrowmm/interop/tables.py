"""``arrowmm.table``, ``arrowmm.chunked_array`` and ``arrowmm.concat_tables``: tables and
chunked arrays built as pyarrow's functions of those names build them (issue 31, the pyarrow
habits users bring), from columns, rows' worth of lists, or any Arrow producer (zero-copy).
"""
from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Optional, Sequence, Union

import numpy as np

from .. import hooks, types as t
from ..arrays.array import Array
from ..arrays.batch import RecordBatch
from ..arrays.chunked import ChunkedArray
from ..arrays.column_input import as_chunked
from ..arrays.table import Table
from ..errors import ArrowError, ArrowInvalid, ArrowTypeError
from .build import imported_chunks, record_batch
from .constructors import nulls
from .interchange import RecordBatchReader

__all__ = ["table", "chunked_array", "concat_tables"]



def table(data, names: Optional[Sequence[str]] = None, schema: Optional[t.Schema] = None,
          metadata: Optional[dict] = None) -> Table:
    """An arrowmm ``Table``, as ``pyarrow.table``.

    ``data``: ``{name: column}`` (arrays, chunked arrays, lists, numpy arrays); a list of
    columns with ``names=`` or ``schema=``; a ``Table`` or ``RecordBatch``; or any Arrow
    producer: an object with ``__arrow_c_stream__`` (a pyarrow table, a polars or pandas
    frame), read zero-copy, or ``__arrow_c_array__``.  ``metadata`` is the schema's custom
    metadata.
    """
    if schema is not None and not isinstance(schema, t.Schema):
        raise TypeError(f"table(): schema must be an arrowmm Schema, got {type(schema).__name__}")
    if isinstance(data, Mapping):
        if names is not None:
            raise ArrowInvalid("table(): names= applies to a list of columns, not a dict")
        return Table.from_pydict(data, schema, metadata)
    if isinstance(data, (list, tuple)):
        return Table.from_arrays(data, names, schema, metadata)
    if names is not None:
        raise ArrowInvalid(f"table(): names= applies to a list of columns, not a "
                           f"{type(data).__name__}")
    if isinstance(data, Table):
        out = data
    elif isinstance(data, RecordBatch):
        out = Table.from_batches([data])
    elif hasattr(data, "__arrow_c_stream__"):
        out = RecordBatchReader.from_stream(data, schema).read_all()
    elif hasattr(data, "__arrow_c_array__"):
        out = Table.from_batches([record_batch(data)])
    else:
        raise TypeError(f"table() takes a dict, a list of columns, a Table, a RecordBatch or an "
                        f"Arrow producer (__arrow_c_stream__ / __arrow_c_array__), got "
                        f"{type(data).__name__}")
    if schema is not None and not out.schema.equals(schema, check_metadata=True):
        out = out.cast(schema) if out.schema.names == schema.names else \
            _refuse_names(out.schema, schema)
        if out.schema.metadata != schema.metadata:
            out = out.replace_schema_metadata(schema.metadata)
    if metadata is not None:
        out = out.replace_schema_metadata(metadata)
    return out


def from_pandas(df, schema: Optional[t.Schema] = None, preserve_index: Optional[bool] = None,
                columns: Optional[Sequence[str]] = None, batch: bool = False):
    """``Table.from_pandas`` / ``RecordBatch.from_pandas`` (``batch``): ``table(df)`` of
    ``df``'s ``columns``, the index kept as pyarrow keeps it: ``preserve_index=None``, a
    RangeIndex in the pandas metadata and any other index as columns; ``True``, as columns
    always; ``False``, not at all (the metadata then describes a fresh RangeIndex)."""
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(df, pd.DataFrame):
        raise TypeError(f"from_pandas takes a pandas DataFrame, got {_name(df)}")
    if preserve_index not in (None, True, False):
        raise ArrowInvalid(f"preserve_index must be None, True or False, got {preserve_index!r}")
    if columns is not None:
        df = df[list(columns)]
    if preserve_index is False:
        df = df.reset_index(drop=True)
    elif preserve_index and isinstance(df.index, pd.RangeIndex):  # (a column, as pyarrow's)
        df = df.set_axis(pd.Index(np.asarray(df.index), name=df.index.name))
    out = table(df, schema=schema)
    return record_batch(out) if batch else out


def _refuse_names(have: t.Schema, want: t.Schema) -> Table:
    raise ArrowInvalid(f"table(): the data has columns {have.names}, the schema {want.names}")


def chunked_array(arrays, type: Union[t.DataType, str, None] = None) -> ChunkedArray:  # noqa: A002
    """An arrowmm ``ChunkedArray`` of ``arrays`` (arrays, lists or numpy arrays, each a chunk;
    or an object with ``__arrow_c_stream__``), as ``pyarrow.chunked_array``: the chunks keep
    their memory; ``type`` builds the lists as that type, and is needed when there are none."""
    dtype = None if type is None else t.ensure_type(type)
    if isinstance(arrays, ChunkedArray):
        chunks = arrays.chunks
    elif isinstance(arrays, Array):
        chunks = [arrays]
    elif hasattr(arrays, "__arrow_c_stream__"):
        chunks, stream_type = _foreign_chunks(arrays, dtype)
        dtype = dtype if dtype is not None else stream_type  # (no chunks: the stream's type)
    elif isinstance(arrays, (str, bytes, Mapping)) or not hasattr(arrays, "__iter__"):
        raise TypeError(f"chunked_array() takes a list of arrays, got {_name(arrays)}")
    else:
        chunks = []
        for k, a in enumerate(arrays):
            if isinstance(a, Array) or hasattr(a, "__arrow_c_array__"):
                chunks.extend(as_chunked(a, None, f"chunked_array(): chunk {k}").chunks)
            else:  # (built as the first chunk's type, as pyarrow does)
                built = as_chunked(a, dtype if dtype is not None or not chunks else
                                   chunks[0].type, f"chunked_array(): chunk {k}")
                chunks.extend(built.chunks)
    if not chunks and dtype is None:
        raise ArrowInvalid("cannot construct ChunkedArray from empty vector and omitted type")
    want = dtype if dtype is not None else chunks[0].type
    for k, c in enumerate(chunks):
        if c.type != want:
            raise ArrowTypeError(f"Array chunks must all be same type: chunk {k} is {c.type}, "
                                 f"the chunked array {want}")
    return ChunkedArray(chunks, want)


def _foreign_chunks(obj, dtype):
    """``(chunks, type)`` of a foreign chunked array, each chunk imported zero-copy (cast to
    ``dtype`` when given): pyarrow's ``chunks`` (arrays with ``__arrow_c_array__``), else the
    arrays of its ``__arrow_c_stream__`` and the stream's type."""
    chunks = getattr(obj, "chunks", None)
    if chunks and isinstance(chunks, list) and \
            all(hasattr(c, "__arrow_c_array__") for c in chunks):
        out = [as_chunked(c, None, f"chunked_array(): chunk {k}").chunks[0]
               for k, c in enumerate(chunks)]
        if dtype is not None:
            out = [c if c.type == dtype else c.cast(dtype) for c in out]
        return out, out[0].type
    return imported_chunks(obj, dtype)

def _name(obj) -> str:
    return type(obj).__name__


def concat_tables(tables: Sequence[Table], promote_options: str = "none") -> Table:
    """One table of ``tables``' batches in order, as ``pyarrow.concat_tables``.

    ``promote_options="none"``: every table must have the first one's schema (names, types,
    nullability; its metadata is the result's), and the batches are kept, zero-copy.
    ``"default"`` and ``"permissive"``: the schemas are unified (``unify_schemas`` with that
    option: a null-typed column takes the other tables' type, ``"permissive"`` also widens),
    each column cast to its unified type (``Array.cast``, safe) and a column a table lacks
    filled with nulls; the columns that need neither are kept as they are.  Unlike pyarrow, a
    non-nullable field that some table lacks becomes nullable (pyarrow fills the nulls into it
    all the same).
    """
    if promote_options not in ("none", "default", "permissive"):
        raise ArrowInvalid(f"Invalid promote options: {promote_options!r}")
    if isinstance(tables, (Table, str, bytes)) or not hasattr(tables, "__iter__"):
        raise TypeError(f"concat_tables() takes a list of tables, got {_name(tables)}")
    tables = list(tables)
    if not tables:
        raise ArrowInvalid("Must pass at least one table")
    for k, tab in enumerate(tables):
        if not isinstance(tab, Table):
            raise TypeError(f"concat_tables() item {k} is a {_name(tab)}, not an arrowmm Table")
    if promote_options != "none":
        schema = _promoted_schema(tables, promote_options)
        tables = [_promoted(tab, schema, k) for k, tab in enumerate(tables)]
    schema = tables[0].schema
    batches = []
    for k, tab in enumerate(tables):
        if not tab.schema.equals(schema):
            raise ArrowInvalid(f"Schema at index {k} was different: \n{schema}\nvs\n{tab.schema}")
        batches.extend(b if b.schema is schema else b._with_schema(schema)
                       for b in tab.to_batches())
    return Table(schema, batches)


def _promoted_schema(tables: list, promote_options: str) -> t.Schema:
    """The schemas unified, with a field that some table lacks made nullable."""
    schema = t.unify_schemas([tab.schema for tab in tables], promote_options=promote_options)
    fields = [f if f.nullable or all(f.name in tab.schema.names for tab in tables)
              else t.Field(f.name, f.type, True, f.metadata) for f in schema]
    return t.Schema(fields, schema.metadata)


def _promoted(tab: Table, schema: t.Schema, k: int) -> Table:
    """``tab`` with ``schema``'s columns: its own cast to their unified types, nulls for the
    ones it lacks, batch by batch."""
    if tab.schema.equals(schema):
        return tab
    batches = []
    for b in tab.to_batches():
        columns = []
        for f in schema:
            if f.name not in b.schema.names:
                columns.append(nulls(b.num_rows, f.storage_type))
                continue
            column = b.storage_column(b.schema.get_field_index(f.name))
            try:
                columns.append(column.cast(f.storage_type))
            except ArrowError as exc:
                raise type(exc)(f"concat_tables(): table {k}, column {f.name!r}: cannot cast "
                                f"{column.type} to {f.type}: {exc}") from None
        batches.append(RecordBatch(schema, b.num_rows, columns, metadata=b.metadata))
    return Table(schema, batches)


hooks.fill("from_pandas", from_pandas)
