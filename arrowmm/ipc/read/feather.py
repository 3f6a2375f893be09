"""Feather V1 files (Arrow <= 0.16, ``write_feather(version=1)``), read zero-copy.

``open_file`` hands a source starting with ``FEA1`` here.  The file holds one table: each
column's validity bitmap, offsets and values lie at the byte offset its metadata gives
(each part padded to 8 bytes from format version 2 on), so every column is a view of the
mapping, checked against the file's bounds like any IPC buffer.  The reader looks like a
``FileReader`` of one record batch (``schema``, ``get_batch``, ``reader[0]``, iteration,
``read_all``, ``head``, ``columns=`` / ``select_columns``, the stream capsule), so that
``arrowmm.open`` and every command of the command line read it as ``open_file`` does.
"""
from __future__ import annotations

import struct
from typing import Iterator, Optional

from ... import limits
from ... import types as t
from ..._core._region import Region
from ...arrays.array import make_array
from ...arrays.batch import RecordBatch
from ...arrays.field_paths import struct_field_path
from ...arrays.table import Table
from ...errors import ArrowInvalid, ArrowNotImplementedError
from ...format.feather import FEATHER_MAGIC, FeatherArray, FeatherColumn, parse_feather_v1
from ...interop._cdata import export_schema, export_stream
from .file_mapping import first_bytes_of
from .projection import project_schema, resolve_columns

__all__ = ["FeatherV1Reader", "is_feather_v1"]

_PHYSICAL = {
    "BOOL": t.BoolType(), "INT8": t.IntType(8, True), "INT16": t.IntType(16, True),
    "INT32": t.IntType(32, True), "INT64": t.IntType(64, True), "UINT8": t.IntType(8, False),
    "UINT16": t.IntType(16, False), "UINT32": t.IntType(32, False),
    "UINT64": t.IntType(64, False), "FLOAT": t.FloatType(32), "DOUBLE": t.FloatType(64),
    "UTF8": t.BinaryType(True), "BINARY": t.BinaryType(False),
    "LARGE_UTF8": t.BinaryType(True, large=True), "LARGE_BINARY": t.BinaryType(False, large=True),
}


def is_feather_v1(region: Region) -> bool:
    """Whether ``region`` starts with the Feather V1 magic (``FEA1``)."""
    return region.size >= 4 and first_bytes_of(region, 4) == FEATHER_MAGIC


def _physical(arr: FeatherArray, where: str) -> t.DataType:
    dtype = _PHYSICAL.get(arr.type)
    if dtype is None:
        raise ArrowNotImplementedError(f"{where}: Feather V1 type {arr.type} is not supported")
    return dtype


def _logical(col: FeatherColumn, where: str) -> t.DataType:
    if col.kind == "category":
        index = _physical(col.values, where)
        if not isinstance(index, t.IntType):
            raise ArrowInvalid(f"{where}: category codes must be integers, got {col.values.type}")
        return t.DictionaryType(index, _physical(col.levels, f"{where} levels"), col.ordered)
    if col.kind == "timestamp":
        return t.TimestampType(col.unit, col.timezone)
    if col.kind == "date":
        return t.DateType("day")
    if col.kind == "time":
        return t.TimeType(col.unit, 32 if col.unit in ("s", "ms") else 64)
    return _physical(col.values, where)


class FeatherV1Reader:
    """A Feather V1 file as a reader of one record batch (``open_file`` makes it)."""

    def __init__(self, region: Region, name: str = "Feather V1 file"):
        self._region = region
        self._closed = False
        size = region.size
        if size < 12 or region.view(size - 4, 4).to_bytes() != FEATHER_MAGIC:
            raise ArrowInvalid(f"{name}: a Feather V1 file of {size} bytes must end with "
                               f"{FEATHER_MAGIC!r}; it is truncated or not Feather")
        meta_len = struct.unpack_from("<i", region.view(size - 8, 4).to_bytes())[0]
        if meta_len <= 0 or meta_len > size - 12:
            raise ArrowInvalid(f"{name}: metadata length {meta_len} does not fit in a "
                               f"{size}-byte file")
        if meta_len > limits.max_metadata_size:
            raise limits.exceeded("max_metadata_size", meta_len, f"{name}: metadata length")
        self._data_end = size - 8 - meta_len
        table = parse_feather_v1(region.view(self._data_end, meta_len).to_bytes())
        if table.num_rows < 0:
            raise ArrowInvalid(f"{name}: negative row count {table.num_rows}")
        self._version = table.version
        fields, columns = [], []
        for k, col in enumerate(table.columns):
            where = f"{name}: column {k} ({col.name!r})"
            dtype = _logical(col, where)
            if col.values.length != table.num_rows:
                raise ArrowInvalid(f"{where}: {col.values.length} values, the table "
                                   f"{table.num_rows} rows")
            dictionary = None
            if isinstance(dtype, t.DictionaryType):
                dictionary = self._array(col.levels, dtype.value_type, f"{where} levels")
            columns.append(self._array(col.values, dtype, where, dictionary))
            fields.append(t.Field(col.name, dtype))
        self.schema = t.Schema(fields)
        self._batch = self._full_batch = RecordBatch(self.schema, table.num_rows, columns)
        self.num_rows = table.num_rows
        self.description = table.description

    def _part(self, start: int, nbytes: int, end: int, what: str, where: str):
        if nbytes < 0 or start + nbytes > end:
            raise ArrowInvalid(f"{where}: {what} of {nbytes} bytes at byte {start} runs past its "
                               f"array's end (byte {end})")
        step = nbytes if self._version < 2 else nbytes + (-nbytes) % 8
        return self._region.view(start, nbytes), start + step

    def _array(self, arr: FeatherArray, dtype: t.DataType, where: str, dictionary=None):
        if arr.dictionary_encoded:
            raise ArrowNotImplementedError(f"{where}: DICTIONARY-encoded Feather V1 arrays are "
                                           f"not supported (category metadata is)")
        if arr.length < 0 or not 0 <= arr.null_count <= arr.length:
            raise ArrowInvalid(f"{where}: length {arr.length}, null count {arr.null_count}")
        if arr.offset < 4 or arr.total_bytes < 0 or arr.offset + arr.total_bytes > self._data_end:
            raise ArrowInvalid(f"{where}: data at byte {arr.offset} ({arr.total_bytes} bytes) "
                               f"lies outside the file's data (bytes 4 to {self._data_end})")
        pos, end = arr.offset, arr.offset + arr.total_bytes
        validity = None
        if arr.null_count:
            validity, pos = self._part(pos, (arr.length + 7) // 8, end, "validity bitmap", where)
        storage = dtype.index_type if isinstance(dtype, t.DictionaryType) else dtype
        buffers = [validity]
        if isinstance(storage, t.BinaryType):
            width = 8 if storage.large else 4
            offsets, pos = self._part(pos, (arr.length + 1) * width, end, "offsets", where)
            buffers.append(offsets)
        buffers.append(self._region.view(pos, end - pos))
        out = make_array(dtype, arr.length, buffers, null_count=arr.null_count,
                         dictionary=dictionary)
        out.validate(False, where)
        return out

    # -- the FileReader surface -------------------------------------------------------------
    @property
    def num_record_batches(self) -> int:
        """Always 1: a Feather V1 file is one batch."""
        return 1

    def __len__(self):
        return 1

    @property
    def metadata(self) -> Optional[dict]:
        """Always None: Feather V1 files carry no Arrow custom metadata."""
        return None

    def _check_open(self):
        if self._closed:
            raise ArrowInvalid("the reader is closed")

    def get_batch(self, i: int) -> RecordBatch:
        """The file's one batch (``i`` is 0 or -1)."""
        self._check_open()
        if int(i) not in (0, -1):
            raise IndexError(f"record batch index {i} out of range for 1 batch")
        return self._batch

    get_record_batch = get_batch

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.get_batch(k) for k in range(*i.indices(1))]
        return self.get_batch(i)

    def __iter__(self) -> Iterator[RecordBatch]:
        yield self.get_batch(0)

    def read_all(self) -> Table:
        """The file's one batch as an ``arrowmm.Table``, as every reader gives it."""
        return Table(self.schema, list(self))

    def head(self, n: int) -> Table:
        """The first ``n`` rows as a Table (as ``FileReader.head``)."""
        n = int(n)
        if n < 0:
            raise ArrowInvalid(f"head(n): n must be >= 0, got {n}")
        batch = self.get_batch(0)
        return Table(self.schema, [batch if n >= batch.num_rows else batch.slice(0, n)])

    def select_columns(self, columns) -> None:
        """Project the reader onto ``columns`` (names, indices or dotted struct paths, in the
        order given), as ``FileReader.select_columns``; ``open_file(..., columns=...)`` calls
        this.  The columns are views of the mapping, so the others cost nothing."""
        if columns is None:
            return
        batch = self._full_batch
        indices = resolve_columns(batch.schema, columns)
        schema = project_schema(batch.schema, indices)
        arrays = [batch.column(k) if isinstance(k, int) else
                  struct_field_path(batch.column(k[0]), k[1]) for k in indices]
        self.schema = schema
        self._batch = RecordBatch(schema, batch.num_rows, arrays)

    def close(self) -> None:
        """Mark the reader closed; batches already read keep their memory."""
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<arrowmm.FeatherV1Reader 1 batch>\n{self.schema}"

    def __arrow_c_schema__(self):
        return export_schema(self.schema)

    def __arrow_c_stream__(self, requested_schema=None):
        self._check_open()
        return export_stream(self.schema, iter([self._batch]), requested_schema)
