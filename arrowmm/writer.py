"""IPC file and stream writers: the I/O around ``encoder.Encoder``.

Data buffers go to the OS from the memory they live in (``os.writev`` on a
real file descriptor, ``write(memoryview)`` otherwise): writing a batch read
from a mapped file copies nothing in Python.

A ``FileWriter`` given a path writes to a temporary name beside the target
and renames it into place on ``close()``: a crash or an exception inside
``with`` never leaves a half-written file under the target name.  The
temporary file is ``ARROW1\\0\\0`` followed by a plain IPC stream, so what was
written before a crash can be recovered with ``arrowmm.recover_stream``.
"""
from __future__ import annotations

import os
import struct
import tempfile
from typing import Dict, Optional

import numpy as np

from . import types as t
from .array import Array, DictionaryArray
from .batch import RecordBatch
from .encoder import EncodedMessage, Encoder, flatten
from .errors import ArrowInvalid
from .metadata import BLOCK, MetadataVersion, encode_footer

__all__ = ["FileWriter", "StreamWriter", "new_file", "new_stream"]

MAGIC = b"ARROW1"
_IOV_MAX = 1024


def _assign_dictionary_ids(schema: t.Schema) -> t.Schema:
    """The schema with a dictionary id on every dictionary-encoded field (existing ids kept)."""
    used = set()

    def collect(f):
        if f.dictionary_id is not None:
            used.add(f.dictionary_id)
        for c in _value_type(f.type).children:
            collect(c)

    for f in schema.fields:
        collect(f)
    counter = [0]

    def next_id():
        while counter[0] in used:
            counter[0] += 1
        used.add(counter[0])
        return counter[0]

    def assign(f: t.Field) -> t.Field:
        dtype = f.type
        inner = _value_type(dtype)
        kids = inner.children
        if kids:
            new_kids = [assign(c) for c in kids]
            if new_kids != list(kids) or any(a.dictionary_id != b.dictionary_id
                                             for a, b in zip(new_kids, kids)):
                inner = _with_children(inner, new_kids)
        if isinstance(dtype, t.DictionaryType):
            dtype = t.DictionaryType(dtype.index_type, inner, dtype.ordered)
            did = f.dictionary_id if f.dictionary_id is not None else next_id()
            return t.Field(f.name, dtype, f.nullable, f.metadata, did)
        return t.Field(f.name, inner, f.nullable, f.metadata, f.dictionary_id) if inner is not dtype else f

    return t.Schema([assign(f) for f in schema.fields], schema.metadata, schema.endianness)


def _value_type(dtype):
    return dtype.value_type if isinstance(dtype, t.DictionaryType) else dtype


def _with_children(dtype, kids):
    if isinstance(dtype, t.StructType):
        return t.StructType(kids)
    if isinstance(dtype, t.ListType):
        return t.ListType(kids[0], dtype.kind)
    if isinstance(dtype, t.FixedSizeListType):
        return t.FixedSizeListType(kids[0], dtype.list_size)
    if isinstance(dtype, t.MapType):
        return t.MapType(None, None, dtype.keys_sorted, entries=kids[0])
    if isinstance(dtype, t.UnionType):
        return t.UnionType(dtype.mode, kids, dtype.type_codes)
    if isinstance(dtype, t.RunEndEncodedType):
        return t.RunEndEncodedType(kids[0], kids[1])
    return dtype


def _dictionaries_in(array: Array, f: t.Field, out: list) -> None:
    """(dictionary id, dictionary array, field) for every dictionary under ``array``."""
    dtype = f.type
    if isinstance(dtype, t.DictionaryType):
        out.append((f.dictionary_id, array.dictionary, f))
        return
    for child_field, child in zip(dtype.children, array.children):
        _dictionaries_in(child, child_field, out)


class _Sink:
    """Writes parts to a file descriptor (``os.writev``) or a file-like object (``write``)."""

    def __init__(self, fileobj, fd: Optional[int]):
        self.file = fileobj
        self.fd = fd
        self.position = 0

    def write(self, parts) -> None:
        if self.fd is not None:
            views = [memoryview(p).cast("B") for p in parts if len(memoryview(p))]
            while views:
                batch = views[:_IOV_MAX]
                written = os.writev(self.fd, batch)
                self.position += written
                total = sum(v.nbytes for v in batch)
                if written == total:
                    views = views[_IOV_MAX:]
                    continue
                rest, k = written, 0  # partial write (pipes, sockets): resume mid-part
                while rest >= batch[k].nbytes:
                    rest -= batch[k].nbytes
                    k += 1
                views = [batch[k][rest:]] + batch[k + 1:] + views[_IOV_MAX:]
            return
        for p in parts:
            mv = memoryview(p).cast("B")
            if mv.nbytes:
                self.file.write(mv)
                self.position += mv.nbytes


def _open_sink(sink):
    """(sink, owned file object or None) for a path or a binary file-like object."""
    if isinstance(sink, (str, os.PathLike)):
        f = open(sink, "wb", buffering=0)
        return _Sink(f, f.fileno()), f
    if not hasattr(sink, "write"):
        raise ArrowInvalid(f"sink must be a path or a binary file-like object, got {type(sink).__name__}")
    fd = None
    if isinstance(sink, __import__("io").FileIO):  # unbuffered real file: writev is safe
        fd = sink.fileno()
    return _Sink(sink, fd), None


class _WriterBase:
    """Shared by file and stream writers: schema check, dictionaries, batches."""

    _file_format = False

    def __init__(self, sink, schema: t.Schema, *, compression=None, metadata=None, alignment=64,
                 legacy_format=False, allow_dictionary_replacement=True, fsync=False):
        if not isinstance(schema, t.Schema):
            schema = _coerce_schema(schema)
        if metadata:
            schema = schema.with_metadata({**(schema.metadata or {}), **metadata})
        self.schema = _assign_dictionary_ids(schema)
        self._encoder = Encoder(alignment, legacy_format, compression,
                                MetadataVersion.V5)
        self._allow_replacement = allow_dictionary_replacement and not self._file_format
        self._fsync = fsync
        self._written_dicts: Dict[int, Array] = {}
        self._dict_blocks = []
        self._batch_blocks = []
        self._closed = False
        self.num_record_batches = 0
        self._open(sink)

    def _open(self, sink):
        self._sink, self._owned = _open_sink(sink)
        self._target = None
        self._emit(self._encoder.schema(self.schema, self._sink.position))

    def _emit(self, msg: EncodedMessage, blocks: Optional[list] = None) -> None:
        start = self._sink.position
        self._sink.write(msg.parts)
        if blocks is not None:
            blocks.append((start, msg.metadata_length, msg.body_length))

    # -- writing -------------------------------------------------------------------------
    def _coerce(self, batch) -> RecordBatch:
        if not isinstance(batch, RecordBatch):
            from . import record_batch
            batch = record_batch(batch, schema=self.schema)
        if len(batch.schema) != len(self.schema) or not all(
                a.name == b.name and a.type == b.type and a.nullable == b.nullable
                for a, b in zip(batch.schema, self.schema)):
            raise ArrowInvalid(f"batch schema does not match the writer's schema:\n"
                               f"batch:\n{batch.schema}\nwriter:\n{self.schema}")
        return batch

    def write(self, batch, metadata: Optional[dict] = None) -> None:
        """Write one record batch (an arrowmm RecordBatch or anything ``record_batch`` takes).

        ``metadata``: custom metadata of this record batch message.  A batch
        whose schema differs from the writer's raises ``ArrowInvalid`` and
        writes nothing.
        """
        if self._closed:
            raise ArrowInvalid("the writer is closed")
        batch = self._coerce(batch)
        columns = batch.columns
        found = []
        for f, col in zip(self.schema.fields, columns):
            _dictionaries_in(col, f, found)
        plan = [self._plan_dictionary(dict_id, values) for dict_id, values, _ in found]
        flat = None
        for col in columns:
            flat = flatten(col, flat)
        for step in plan:
            for dict_id, values, is_delta in step:
                self._write_dictionary(dict_id, values, is_delta)
        msg = self._encoder.batch(batch.num_rows, flat or flatten_empty(), self._sink.position,
                                  metadata if metadata is not None else batch.metadata)
        self._emit(msg, self._batch_blocks)
        self.num_record_batches += 1

    write_batch = write

    def write_all(self, batches) -> None:
        """Write every batch of an iterable (a reader, a list, a generator)."""
        for b in batches:
            self.write(b)

    def _plan_dictionary(self, dict_id: int, values: Array):
        """The dictionary batches ``values`` needs before use: [(id, array, is_delta)]."""
        steps = []
        nested = []
        _dictionaries_in(values, t.Field("dictionary", _find_value_type(self.schema, dict_id)), nested)
        for inner_id, inner_values, _ in nested:
            steps.extend(self._plan_dictionary(inner_id, inner_values))
        old = self._written_dicts.get(dict_id)
        if old is None:
            return steps + [(dict_id, values, False)]
        if old is values:
            return steps
        n_old = len(old)
        if len(values) >= n_old and values.slice(0, n_old).equals(old):
            if len(values) == n_old:
                return steps
            return steps + [(dict_id, values, True)]
        if not self._allow_replacement:
            raise ArrowInvalid(
                f"dictionary {dict_id} changed and is not an extension of the written one: "
                + ("the file format allows only deltas" if self._file_format
                   else "replacement is disabled (allow_dictionary_replacement=False)"))
        return steps + [(dict_id, values, False)]

    def _write_dictionary(self, dict_id: int, values: Array, is_delta: bool) -> None:
        old = self._written_dicts.get(dict_id)
        part = values.slice(len(old)) if is_delta else values
        msg = self._encoder.batch(len(part), flatten(part), self._sink.position,
                                  dictionary_id=dict_id, is_delta=is_delta)
        self._emit(msg, self._dict_blocks)
        self._written_dicts[dict_id] = values

    # -- closing -------------------------------------------------------------------------
    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._finish()

    def _finish(self):
        self._sink.write([self._encoder.eos()])
        self._close_file()

    def _close_file(self):
        if self._owned is not None:
            if self._fsync:
                os.fsync(self._owned.fileno())
            self._owned.close()
        elif self._fsync and hasattr(self._sink.file, "fileno"):
            self._sink.file.flush()
            os.fsync(self._sink.file.fileno())

    def abort(self) -> None:
        """Stop without finishing: close the sink (and, for a file path, remove the temporary)."""
        if self._closed:
            return
        self._closed = True
        if self._owned is not None:
            self._owned.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()


def flatten_empty():
    from .encoder import _Flat
    return _Flat()


def _find_value_type(schema: t.Schema, dict_id: int):
    from .dictionaries import dictionary_value_fields
    return dictionary_value_fields(schema)[dict_id].type


def _coerce_schema(schema) -> t.Schema:
    if hasattr(schema, "__arrow_c_schema__"):
        from ._cdata import import_schema
        out = import_schema(schema.__arrow_c_schema__())
        if isinstance(out, t.Schema):
            return out
    if isinstance(schema, (list, tuple, dict)):
        return t.Schema(schema)
    raise ArrowInvalid(f"expected an arrowmm Schema, got {type(schema).__name__}")


class StreamWriter(_WriterBase):
    """Writes the IPC stream format: schema, dictionaries and batches, then end-of-stream."""


class FileWriter(_WriterBase):
    """Writes the IPC file format; to a path, crash-safely through a temporary file."""

    _file_format = True

    def _open(self, sink):
        self._target = None
        if isinstance(sink, (str, os.PathLike)):
            target = os.path.abspath(os.fspath(sink))
            folder, name = os.path.split(target)
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".arrowmm-tmp", dir=folder)
            f = os.fdopen(fd, "wb", buffering=0)
            self._sink, self._owned = _Sink(f, fd), f
            self._target, self._tmp = target, tmp
        else:
            self._sink, self._owned = _open_sink(sink)
        self._sink.write([MAGIC, b"\x00\x00"])
        self._emit(self._encoder.schema(self.schema, self._sink.position))

    def _finish(self):
        self._sink.write([self._encoder.eos()])
        footer = encode_footer(
            self.schema,
            np.array(self._dict_blocks, dtype=BLOCK) if self._dict_blocks else np.zeros(0, BLOCK),
            np.array(self._batch_blocks, dtype=BLOCK) if self._batch_blocks else np.zeros(0, BLOCK),
            None)
        self._sink.write([footer, struct.pack("<i", len(footer)), MAGIC])
        self._close_file()
        if self._target is not None:
            os.replace(self._tmp, self._target)

    def abort(self):
        if self._closed:
            return
        super().abort()
        if self._target is not None:
            try:
                os.unlink(self._tmp)
            except FileNotFoundError:
                pass


def new_file(sink, schema, *, compression=None, metadata=None, **options) -> FileWriter:
    """A ``FileWriter`` to a path (written crash-safely) or a binary file-like object.

    Options: ``alignment`` (64, or 8/16/32), ``legacy_format`` (pre-0.15
    framing), ``fsync`` (fsync before the rename on close).
    """
    return FileWriter(sink, schema, compression=compression, metadata=metadata, **options)


def new_stream(sink, schema, *, compression=None, metadata=None, **options) -> StreamWriter:
    """A ``StreamWriter`` to a path or a binary file-like object (pipes and sockets included).

    Options: ``alignment``, ``legacy_format``, ``allow_dictionary_replacement``
    (True: a changed dictionary is re-sent; False: ``ArrowInvalid``), ``fsync``.
    """
    return StreamWriter(sink, schema, compression=compression, metadata=metadata, **options)
