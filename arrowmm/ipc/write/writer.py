"""IPC file and stream writers: the I/O around ``encoder.Encoder``.

Data buffers go to the OS from the memory they live in (``os.writev`` on a
real file descriptor, ``write(memoryview)`` otherwise): writing a batch read
from a mapped file copies nothing in Python.

A writer given a path (file or stream format) writes to a hidden temporary
name beside the target and renames it into place on ``close()``
(``arrowmm.ipc.core.files``): a crash, an exception inside ``with``, ``abort()`` or a
writer garbage-collected unclosed never leaves a half-written file under the
target name, and the target's mode, owner, group and symlinks are kept.  The
temporary file is ``ARROW1\\0\\0`` (file format) followed by a plain IPC
stream, so what was written before a crash can be recovered with
``arrowmm.open_stream(tmp, recover=True)``.

A write that fails half-way (a full disk) leaves the writer *failed*: later
writes raise ``ArrowInvalid`` and ``close()`` aborts.

Dictionaries are written per dictionary id: fields that share an id share one
dictionary, which they must carry equal.  As in pyarrow, a dictionary that
changes between batches is re-sent whole in a stream (``emit_dictionary_deltas=True``
sends growth as a delta instead) and refused in a file unless it only grew and
deltas are on; ``unify_dictionaries=True`` (``write_file``'s default) makes
``write_table`` merge the dictionaries of all its batches into one first.

``new_file`` / ``new_stream`` take data in place of a schema (a pandas or polars DataFrame,
an arrowmm or pyarrow Table, a dict of columns, any Arrow producer) and write it first;
``write_file`` / ``write_stream`` do that and close.  Data given so is cut into record
batches of at most ``DEFAULT_MAX_CHUNKSIZE`` rows unless ``max_chunksize`` says otherwise.
``cast=True`` casts batches to the writer's types where that is safe
(``arrowmm.interop.cast``); without it a batch that differs is refused naming the first
differing field.
"""
from __future__ import annotations

import operator
import os
import struct
import threading
import warnings
from collections.abc import Iterable, Mapping
from typing import Dict, NamedTuple, Optional


from ... import types as t
from ...arrays.array import Array
from ...arrays.base import same_values
from ...arrays.batch import RecordBatch
from ..core.files import MAGIC, Sink, footer_block_bytes, open_sink
from ..core.object_store import local_file_url, local_filesystem, remote_target, resolve
from ..core.byteorder import NATIVE
from ._flatten import FAST_TYPES, BatchEncoder, write_batch
from .encoder import EncodedMessage, Encoder, FlatBatch, flatten, flatten_columns
from ...errors import ArrowInvalid, ArrowNotImplementedError
from ...format import MetadataVersion, encode_footer
from ..core.statistics import STAMP_KEY, batch_statistics, encode_batch_statistics, \
    encode_file_statistics, new_statistics_id, without_statistics
from ...interop.build import record_batch
from ...interop._cdata import import_stream
from ..core.dictionaries import dictionary_value_fields, unify_batch_dictionaries
from ...interop._cdata import import_schema
from ...interop.cast import cast_batch, schema_difference
from ...arrays.table import Table
from ...interop.interchange import RecordBatchReader
from ..read.reader_base import ReaderBase

__all__ = ["FileWriter", "StreamWriter", "new_file", "new_stream", "write_file", "write_stream",
           "DEFAULT_MAX_CHUNKSIZE"]

#: The most rows per record batch ``write_file``, ``write_stream`` and ``new_file`` /
#: ``new_stream`` given data write (pyarrow's ``write_feather`` default): a bigger input is
#: cut.  A reader then decompresses, and statistics then describe, 64 Ki rows at a time.
DEFAULT_MAX_CHUNKSIZE = 65536

def _check_written(col: Array, k: int, name: str, index: int) -> None:
    """Full validation of a column before its bytes go into a file (once per array, see
    ``Array._validated``): a damaged column read from another file (offsets out of order, a
    bitmap that contradicts its null count, invalid UTF-8) would otherwise be copied into a new
    file that says nothing of it, and read there as data by readers that do not validate."""
    try:
        col._validated(f"column {k} ({name!r})")
    except ArrowInvalid as exc:
        raise ArrowInvalid(f"record batch {index} was not written: {exc}") from None


def _assign_dictionary_ids(schema: t.Schema) -> t.Schema:
    """The schema with a dictionary id on every dictionary-encoded field (existing ids kept)."""
    used = set()

    def collect(f):
        if f.dictionary_id is not None:
            used.add(f.dictionary_id)
        for c in _value_type(f.storage_type).children:
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
        dtype = f.storage_type
        inner = _value_type(dtype)
        kids = inner.children
        if kids:
            new_kids = [assign(c) for c in kids]
            if any(a is not b for a, b in zip(new_kids, kids)):  # an id was set at some depth
                inner = _with_children(inner, new_kids)
        if isinstance(dtype, t.DictionaryType):
            dtype = t.DictionaryType(dtype.index_type, inner, dtype.ordered)
            did = f.dictionary_id if f.dictionary_id is not None else next_id()
            return t.Field(f.name, dtype, f.nullable, f.storage_metadata, did)
        return f.with_storage_type(inner) if inner is not dtype else f

    fields = [assign(f) for f in schema.fields]
    if all(a is b for a, b in zip(fields, schema.fields)):
        return schema  # (the same object: its encoding is cached by identity, see format.encode)
    return t.Schema(fields, schema.metadata, schema.endianness)


def _value_type(dtype):
    return dtype.value_type if isinstance(dtype, t.DictionaryType) else dtype


class _SchemaPlan(NamedTuple):
    """What a writer works out once per schema: the schema with its dictionary ids, whether
    any field (at any depth) is dictionary-encoded (if not, a batch has no dictionaries to
    look for), and whether every type is one ``_flatten`` walks (if not, batches are
    flattened in Python)."""

    schema: t.Schema
    dictionaries: bool
    walked: bool


#: The plans of the last few schemas written, keyed by ``id(schema)`` (the entry holds the
#: schema, so the id is not reused while cached; schemas are immutable), as
#: ``format.encode`` keeps their encoded tables: checking the metadata and assigning
#: dictionary ids cost ~30 us for 16 fields, a noticeable share of writing a small file.
_PLANS: dict = {}
_PLANS_KEPT = 16
_PLANS_LOCK = threading.Lock()


def _schema_plan(schema: t.Schema) -> _SchemaPlan:
    """``schema``'s plan: its metadata checked (``ArrowInvalid`` if not UTF-8), ids assigned."""
    hit = _PLANS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    _check_schema_metadata(schema)
    assigned = _assign_dictionary_ids(schema)
    plan = _SchemaPlan(assigned, _has_dictionary(assigned.fields), _walked(assigned.fields))
    with _PLANS_LOCK:  # (writers in several threads)
        while len(_PLANS) >= _PLANS_KEPT:
            _PLANS.pop(next(iter(_PLANS)))
        _PLANS[id(schema)] = (schema, plan)
    return plan


def _has_dictionary(fields) -> bool:
    return any(isinstance(f.storage_type, t.DictionaryType)
               or _has_dictionary(f.storage_type.children) for f in fields)


def _walked(fields) -> bool:
    """Whether ``_flatten`` walks arrays of these fields (a dictionary's indices: its values
    go in dictionary batches)."""
    return all(type(f.storage_type) in FAST_TYPES
               and (isinstance(f.storage_type, t.DictionaryType)
                    or _walked(f.storage_type.children)) for f in fields)


def _with_children(dtype, kids):
    if isinstance(dtype, t.StructType):
        return t.StructType(kids)
    if isinstance(dtype, t.ListType):
        return t.ListType(kids[0], dtype.kind)
    if isinstance(dtype, t.ListViewType):
        return t.ListViewType(kids[0], dtype.large)
    if isinstance(dtype, t.FixedSizeListType):
        return t.FixedSizeListType(kids[0], dtype.list_size)
    if isinstance(dtype, t.MapType):
        return t.MapType(None, None, dtype.keys_sorted, entries=kids[0])
    if isinstance(dtype, t.UnionType):
        return t.UnionType(dtype.mode, kids, dtype.type_codes)
    if isinstance(dtype, t.RunEndEncodedType):
        return t.RunEndEncodedType(kids[0], kids[1])
    # (only types with children come here: keeping the old ones would drop the new ids)
    raise ArrowNotImplementedError(f"cannot give dictionary ids to the children of {dtype} "
                                   f"({type(dtype).__name__})")


def _dictionaries_in(array: Array, f: t.Field, out: list, path: str) -> None:
    """(dictionary id, dictionary array, field path) for every dictionary under ``array``."""
    dtype = f.storage_type
    if isinstance(dtype, t.DictionaryType):
        out.append((f.dictionary_id, array.dictionary, path))
        return
    for child_field, child in zip(dtype.children, array.children):
        _dictionaries_in(child, child_field, out, f"{path}.{child_field.name}")


def _text(x, what: str) -> str:
    """A metadata key or value as str; bytes that are not UTF-8 (a file pyarrow wrote may
    have them) ride as lone surrogates and are written back as they were."""
    if isinstance(x, (bytes, bytearray, memoryview)):
        x = bytes(x).decode("utf-8", "surrogateescape")
    x = str(x)
    try:
        x.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise ArrowInvalid(f"{what}: {x!r} has a surrogate that stands for no byte (IPC "
                           f"metadata strings are bytes)") from None
    return x


def _check_metadata(metadata, what: str) -> Optional[dict]:
    """``metadata`` as a str -> str dict; ``ArrowInvalid`` (before anything is written) if not UTF-8."""
    if metadata is None:
        return None
    return {_text(k, f"{what} key"): _text(v, f"{what} value") for k, v in dict(metadata).items()}


def _check_schema_metadata(schema: t.Schema) -> None:
    def walk(f: t.Field, path: str):
        _check_metadata(f.storage_metadata, f"metadata of field {path}")
        for c in _value_type(f.storage_type).children:
            walk(c, f"{path}.{c.name}")

    _check_metadata(schema.metadata, "schema metadata")
    for f in schema.fields:
        walk(f, f.name)


def _same_values(a: Array, b: Array) -> bool:
    """Whether two arrays hold the same values as a reader would decode them (type-exact, floats
    by their bits: NaN equals NaN, -0.0 differs from 0.0)."""
    return same_values(a, b, exact=True)


class _WriterBase:
    """Shared by file and stream writers: schema check, dictionaries, batches, failure."""

    _file_format = False
    _closed = True  # until the sink is open (``__del__`` of a writer whose opening failed)
    _target = None

    def __init__(self, sink, schema: t.Schema, *, compression=None, metadata=None, alignment=64,
                 legacy_format=False, allow_dictionary_replacement=True, fsync=False,
                 endianness=None, compression_level=None, metadata_version="V5",
                 statistics=False, emit_dictionary_deltas=False, unify_dictionaries=False,
                 cast=False, filesystem=None, storage_options=None):
        if not isinstance(schema, t.Schema):
            schema = _coerce_schema(schema)
        if endianness is None:
            # native, as pyarrow's writers: a reader's schema of a big-endian file describes
            # values it already swapped to native order (writing them big-endian again swapped
            # every buffer back, and pyarrow cannot read big-endian views)
            endianness = NATIVE
        elif endianness not in ("little", "big"):
            raise ArrowInvalid(f"endianness must be 'little' or 'big', got {endianness!r}")
        if schema.endianness != endianness:
            schema = t.Schema(schema.fields, schema.metadata, endianness)
        # (statistics describe the file they were computed for: a footer's metadata copied
        # from another file, new_file(..., metadata=reader.metadata), must not bring its
        # statistics along, or a filter would prune this file's batches by that file's)
        if metadata is not None:
            metadata = without_statistics(_check_metadata(metadata, "metadata"))
        self._footer_metadata = None
        if metadata and self._file_format:  # the footer's custom_metadata, as pyarrow writes it
            self._footer_metadata = metadata
        elif metadata:  # a stream has no footer: the schema message carries it
            schema = schema.with_metadata({**(schema.metadata or {}), **metadata})
        plan = _schema_plan(schema)
        self.schema = schema = plan.schema
        self._dictionaries = plan.dictionaries
        self._swap = schema.endianness != NATIVE  # values are written in the schema's order
        self._allow_replacement = allow_dictionary_replacement and not self._file_format
        self._deltas = bool(emit_dictionary_deltas)
        self._unify = bool(unify_dictionaries)
        self._version = MetadataVersion.parse(metadata_version)
        self._v4 = self._version < MetadataVersion.V5
        if statistics and self._v4:
            raise ArrowInvalid(
                "statistics=True with metadata_version='V4': statistics need custom metadata in "
                "record batch messages (a file's stamp, a stream's documents), and Arrow C++ "
                "(pyarrow) refuses a V4 record batch message that has any; write V5, or leave "
                "statistics off")
        self.features = _features(schema, compression,
                                  self._allow_replacement and plan.dictionaries)
        self._encoder, self._fast = _encoders(
            alignment, legacy_format, compression, self._version, compression_level,
            self.features, plan.walked and not self._swap and NATIVE == "little")
        self._fsync = fsync
        self._cast = bool(cast)
        self._statistics = [] if statistics else None  # per batch, see arrowmm.ipc.core.statistics
        self._statistics_id = new_statistics_id() if statistics else None
        # (what ``write`` asks of the writer in C, in one attribute: ``_fast`` it asks too)
        self._plain = not (plan.dictionaries or statistics or cast)
        self._written_dicts: Dict[int, Array] = {}
        self._dict_blocks = []
        self._batch_blocks = []
        self._failed: Optional[BaseException] = None
        self.num_record_batches = 0
        self._remote = resolve(sink, filesystem, storage_options)  # (None: a local sink)
        self._open(sink)
        self._closed = False

    def _prefix(self) -> list:
        """The bytes before the first message, and the schema message (encoded before the sink
        is touched, so a schema that cannot be written creates nothing)."""
        return list(self._encoder.schema(self.schema, 0).parts)

    def _open(self, sink):
        parts = self._prefix()
        if self._remote is None:  # (a file: URL writes the local path it names)
            self._sink, self._target = open_sink(local_file_url(sink))
        elif local_filesystem(self._remote[0]):  # (fsspec's local files: written as a path)
            self._sink, self._target = open_sink(self._remote[1])
        else:  # (an object store: published whole on close, see ``object_store``)
            self._target = remote_target(*self._remote)
            self._sink = Sink(self._target.file, None)
        try:
            self._put(parts)
            self._sink.flush()
        except BaseException:
            self._discard()
            raise

    def _put(self, parts) -> None:
        """Hand ``parts`` to the sink; an error half-way leaves the writer failed."""
        try:
            self._sink.write(parts)
        except BaseException as exc:
            self._failed = exc
            raise

    def _emit(self, msg: EncodedMessage, blocks: Optional[list] = None) -> None:
        start = self._sink.position
        self._put(msg.parts)
        if blocks is not None:
            blocks.append((start, msg.metadata_length, msg.body_length))

    def _flush(self) -> None:
        try:
            self._sink.flush()
        except BaseException as exc:
            self._failed = exc
            raise

    def _describe(self) -> str:
        return repr(self._target.path) if self._target is not None else type(self._sink.file).__name__

    def _check_writable(self) -> None:
        if self._closed:
            raise ArrowInvalid("the writer is closed")
        if self._failed is not None:
            raise ArrowInvalid(f"the writer to {self._describe()} failed earlier "
                               f"({type(self._failed).__name__}: {self._failed}); what it wrote is "
                               f"incomplete, so it takes no more batches: abort() it")

    # -- writing -------------------------------------------------------------------------
    _whose = "the writer's"

    def _coerce(self, batch) -> RecordBatch:
        if not isinstance(batch, RecordBatch):
            if hasattr(batch, "__arrow_c_array__") or hasattr(batch, "__arrow_c_stream__"):
                batch = record_batch(batch)  # with its own schema, checked below
            else:  # columns ({name: values}, [values]) take the writer's types
                batch = record_batch(batch, schema=self.schema)
        if self._cast:
            batch = cast_batch(batch, self.schema, self._whose, self._written_dictionary)
        if batch.schema is not self.schema and not self._matches(batch.schema):
            raise ArrowInvalid(f"batch schema does not match {self._whose} schema: "
                               f"{schema_difference(batch.schema, self.schema, self._whose)}")
        return batch

    #: the last batch schema found to match the writer's (schemas and fields are immutable)
    _matched: Optional[t.Schema] = None

    def _matches(self, schema: t.Schema) -> bool:
        """Whether ``schema`` has the writer's field names, types and nullability.  The schema
        matched last time, or one of the same field objects (a slice's, ``with_metadata``'s),
        passes without a comparison: batches sharing a schema compare it once (``write``
        takes batches of ``_matched`` in C)."""
        fields, last = schema.fields, self._matched
        if last is not None and (schema is last or (
                len(fields) == len(last.fields) and all(map(operator.is_, fields, last.fields)))):
            return True
        mine = self.schema.fields
        if len(fields) != len(mine) or not all(
                a is b or (a.name == b.name and a.nullable == b.nullable and a.type == b.type)
                for a, b in zip(fields, mine)):
            return False
        self._matched = schema
        return True

    def _written_dictionary(self, k: int) -> Optional[Array]:
        """The dictionary written for top-level column ``k`` (``cast=True`` encodes against it)."""
        dict_id = self.schema.fields[k].dictionary_id
        return None if dict_id is None else self._written_dicts.get(dict_id)

    write = write_batch  # (``_flatten.write_batch``: in C for the common batch)

    def _write_checked(self, batch, metadata, custom_metadata) -> None:
        """``write`` of a batch its C path does not take (see ``_flatten.write_batch``)."""
        if self._closed or self._failed is not None:
            self._check_writable()
        if custom_metadata is not None:
            if metadata is not None:
                raise ArrowInvalid("give metadata or custom_metadata, not both")
            metadata = custom_metadata
        if type(batch) is not RecordBatch or batch.schema is not self.schema or self._cast:
            batch = self._coerce(batch)  # (else it would return the batch as it is)
        self._write_coerced(batch, metadata)

    write_batch = write

    def _write_coerced(self, batch: RecordBatch, metadata=None, fast: bool = True) -> None:
        """Write ``batch`` (of the writer's schema); ``fast=False``: ``BatchEncoder.emit``
        was tried and found a column not validated yet (it is not tried again)."""
        if metadata is None:
            metadata = batch.metadata
        if fast and not metadata and self._fast is not None and not self._dictionaries \
                and self._statistics is None and self._fast.emit(self, batch):
            return  # (nothing of the writer but the message: one C call encoded, wrote and
            # flushed it and counted it, the columns being walked there and validated)
        if metadata:
            metadata = without_statistics(_check_metadata(metadata, "record batch metadata"))
        columns = batch.storage_columns
        msg = self._checked_message(batch, columns, metadata)
        sink = self._sink
        start = sink.position
        try:  # (``_emit`` and ``_flush``, inline: a small batch's write is a few calls in all)
            sink.write(msg.parts)
            sink.flush()
        except BaseException as exc:
            self._failed = exc
            raise
        if self._file_format:  # (a stream has no footer to list its batches: kept, a long
            # stream's Blocks grew without bound)
            self._batch_blocks.append((start, msg.metadata_length, msg.body_length))
        self.num_record_batches += 1

    def _checked_message(self, batch: RecordBatch, columns, metadata) -> EncodedMessage:
        """The batch's message, after its columns are validated, its dictionaries written
        and its statistics recorded."""
        if not all([col._fully_valid for col in columns]):  # (the verdict is kept on the array)
            fields = self.schema.fields
            for k, col in enumerate(columns):
                if not col._fully_valid:
                    _check_written(col, k, fields[k].name, self.num_record_batches)
        plan = ()
        if self._dictionaries:
            found = []
            for f, col in zip(self.schema.fields, columns):
                _dictionaries_in(col, f, found, f.name)
            plan = self._plan_batch(found)
        if self._statistics is not None:
            metadata = self._record_statistics(batch, metadata)
        if self._fast is not None and not metadata and not plan:  # (a batch after dictionaries
            # is flattened first: a column that cannot be must stop it before they are written)
            msg = self._fast.encode(columns, batch.num_rows, self._sink.position)
            if msg is not None:
                return msg
        if self._swap or self._v4:
            flat = FlatBatch()
            flat.swap, flat.v4 = self._swap, self._v4
            for col in columns:
                flatten(col, flat)
        else:
            flat = flatten_columns(columns)
        for dict_id, values, is_delta in plan:
            self._write_dictionary(dict_id, values, is_delta)
        return self._encoder.batch(batch.num_rows, flat, self._sink.position, metadata)

    def _record_statistics(self, batch, metadata):
        """Streams carry each batch's statistics in its message; files gather them for the footer."""
        if self._file_format:
            self._statistics.append({"rows": batch.num_rows, "columns": batch_statistics(batch)})
            if len(self._statistics) == 1:  # the file's first record batch carries the stamp
                return {**(metadata or {}), STAMP_KEY: self._statistics_id}
            return metadata
        return {**(metadata or {}), **encode_batch_statistics(batch)}

    def write_all(self, batches) -> None:
        """Write every batch of an iterable (a reader, a list, a generator)."""
        for b in batches:
            self.write(b)

    def write_table(self, table, max_chunksize: Optional[int] = None) -> None:
        """Write each batch of ``table`` as its own message, as pyarrow's ``write_table`` does.

        ``table``: an arrowmm or pyarrow Table, a pandas or polars DataFrame, a reader, any
        ``__arrow_c_stream__`` / ``__arrow_c_array__`` producer, a dict of columns (built with
        the writer's types) or an iterable of batches.  ``max_chunksize``: the most rows per
        message; a bigger batch is written as slices of it (zero-copy).  None (or 0, as in
        pyarrow) writes the batches as they are.

        With ``unify_dictionaries=True`` the batches are read first and every dictionary id gets
        one dictionary holding the values of all of them (first seen first), indices remapped:
        a table whose chunks carry different dictionaries can then be written to a file.
        """
        self._check_writable()
        limit = _chunksize(max_chunksize)
        if type(table) is Table:  # (``data_source``'s answer, directly: the common case)
            batches = table.to_batches()
        elif not isinstance(table, (Table, RecordBatch)) and isinstance(table, Mapping):
            batches = [table]
        else:
            source = data_source(table)
            batches = table if source is None else source.batches
        coerce = not (self._unify and self._dictionaries)
        if not coerce:  # (coerced first, all of them: held, so only when there is a dictionary)
            # (ids whose dictionaries are already equal, compared from the buffers, are left)
            batches = unify_batch_dictionaries(list(map(self._coerce, batches)), self.schema)
        write = self.write  # (a batch as ``write`` takes it, coerced if need be: mostly in C)
        for batch in batches:
            if coerce and not limit:
                write(batch)
                continue
            if self._closed or self._failed is not None:
                self._check_writable()
            if coerce and (type(batch) is not RecordBatch or batch.schema is not self.schema
                           or self._cast):
                batch = self._coerce(batch)  # (else it would return the batch as it is)
            if limit and batch.num_rows > limit:
                for start in range(0, batch.num_rows, limit):
                    self._write_coerced(batch.slice(start, limit))
            else:
                self._write_coerced(batch)

    def _plan_batch(self, found) -> list:
        """The dictionary batches a record batch needs before it: [(id, array, is_delta)].

        ``found``: (id, dictionary, field path) of each dictionary-encoded field.  An id is
        planned once per batch: fields sharing it must carry equal dictionaries.
        """
        state = dict(self._written_dicts)  # id -> values as they will be after the plan
        claimed = {}  # id -> (values, field path) in this batch
        steps = []
        for dict_id, values, path in found:
            self._plan_dictionary(dict_id, values, path, state, claimed, steps)
        return steps

    def _plan_dictionary(self, dict_id, values, path, state, claimed, steps) -> None:
        """Add the steps ``values`` (the dictionary of ``path``) needs to ``steps``.

        A dictionary that only grew gets a delta if deltas are on; one that changed is re-sent
        whole (a replacement, streams only), and so is one that holds a dictionary which was
        replaced, or that holds dictionaries and grew (pyarrow refuses deltas of it; re-sent
        after its inner ones, it reads right in readers that bind nested dictionaries when
        the outer one loads, as older ones did, and in those that bind them per batch).
        """
        got = claimed.get(dict_id)
        if got is not None:
            if got[0] is values or _same_values(got[0], values):
                return
            raise ArrowInvalid(
                f"dictionary id {dict_id} is shared by fields {got[1]!r} and {path!r}, whose "
                f"dictionaries differ in this batch ({len(got[0])} and {len(values)} values): "
                f"fields sharing an id share one dictionary, so it must be equal in both "
                f"(write_table with unify_dictionaries=True merges top-level ones)")
        claimed[dict_id] = (values, path)
        nested = []
        _dictionaries_in(values, t.Field("dictionary", _find_value_type(self.schema, dict_id)),
                         nested, f"{path}.dictionary")
        for inner_id, inner_values, inner_path in nested:
            self._plan_dictionary(inner_id, inner_values, inner_path, state, claimed, steps)
        old = state.get(dict_id)
        if old is None:
            steps.append((dict_id, values, False))
            state[dict_id] = values
            return
        if old is values:
            return
        n_old = len(old)
        inner_ids = {i for i, _, _ in nested}
        replaced = any(not delta and i in inner_ids and i in self._written_dicts
                       for i, _, delta in steps)
        grown = False
        if not replaced and len(values) >= n_old and _same_values(values.slice(0, n_old), old):
            if len(values) == n_old:
                return
            if not nested and self._deltas:
                steps.append((dict_id, values, True))
                state[dict_id] = values
                return
            grown = not nested
        if not self._allow_replacement:
            what = (f"dictionary {dict_id} (field {path!r}) "
                    + ("grew" if grown else "changed and is not an extension of the written one"
                       + (" (or holds a dictionary that changed)" if nested else "")))
            if self._file_format:
                unifiable = not nested and any(f.dictionary_id == dict_id for f in self.schema.fields)
                raise ArrowInvalid(f"{what}: the IPC file format holds one dictionary per id; "
                                   + self._file_dictionary_advice(grown, unifiable))
            raise ArrowInvalid(f"{what}: replacement is disabled (allow_dictionary_replacement="
                               f"False)" + ("; emit_dictionary_deltas=True would send the growth "
                                            "as a delta" if grown else ""))
        steps.append((dict_id, values, False))
        state[dict_id] = values

    def _file_dictionary_advice(self, grown: bool, unifiable: bool) -> str:
        """What to do about a dictionary a file cannot hold, in the options of the function
        the caller used (``_caller``)."""
        call = self._caller
        if grown:
            return (f"{call}(..., emit_dictionary_deltas=True) writes a dictionary that only "
                    f"grew as a delta, or write a stream")
        if call == "append_file":
            return ("appended batches use the file's dictionaries (emit_dictionary_deltas=True: "
                    "or ones extending them); write a new file to change them")
        if not unifiable:
            return ("dictionaries below the top level or holding dictionaries are not unified: "
                    "write a stream")
        if call == "write_file":
            return ("write_file(..., unify_dictionaries=True), its default, merges dictionaries "
                    "that differ, or write a stream")
        return (f"{call}(..., unify_dictionaries=True) merges the dictionaries of the batches "
                f"given to write_table, or write a stream")

    def _write_dictionary(self, dict_id: int, values: Array, is_delta: bool) -> None:
        old = self._written_dicts.get(dict_id)
        part = values.slice(len(old)) if is_delta else values
        msg = self._encoder.batch(len(part), flatten(part, swap=self._swap, v4=self._v4),
                                  self._sink.position,
                                  dictionary_id=dict_id, is_delta=is_delta)
        self._emit(msg, self._dict_blocks if self._file_format else None)
        self._written_dicts[dict_id] = values

    # -- closing -------------------------------------------------------------------------
    def close(self) -> None:
        """Finish the output (end-of-stream; footer for files; the rename for a path).

        On failure, abort.  A writer whose earlier write failed is aborted and raises
        ``ArrowInvalid``: its output is incomplete and is not published."""
        if self._closed:
            return
        if self._failed is not None:
            self.abort()
            raise ArrowInvalid(f"the writer to {self._describe()} was aborted, not closed: an "
                               f"earlier write failed ({type(self._failed).__name__}: "
                               f"{self._failed})")
        try:
            self._finish()
        except BaseException:
            self._discard()
            raise
        finally:
            self._closed = True

    def _finish(self):
        self._put([self._encoder.eos()])
        self._close_file()

    def _close_file(self):
        self._flush()
        if self._target is not None:
            self._target.commit(fsync=self._fsync)
        elif self._fsync and hasattr(self._sink.file, "fileno"):
            os.fsync(self._sink.file.fileno())

    def abort(self) -> None:
        """Stop without finishing: for a path, remove the temporary (the target keeps what it
        had); a file-like sink is left open as it is."""
        if self._closed:
            return
        self._closed = True
        self._discard()

    def _discard(self) -> None:
        if self._target is not None:
            self._target.abort()

    def __del__(self):
        if self._closed:
            return
        try:
            warnings.warn(f"arrowmm {type(self).__name__} to {self._describe()} was garbage-collected "
                          f"without close(): aborted, its output was not published",
                          ResourceWarning, source=self)
        finally:
            self.abort()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()


#: The encoders of the last few settings without compression, shared by the writers that use
#: them (making them is a noticeable share of writing a small file): an ``Encoder`` holds only
#: its settings, a ``BatchEncoder`` its last template, which it replaces whole.
_ENCODERS: dict = {}
_ENCODERS_KEPT = 16


def _encoders(alignment, legacy_format, compression, version, compression_level, features,
              walked: bool) -> tuple:
    """(``Encoder``, ``BatchEncoder`` or None) for these settings; ``walked``: the schema's
    types are all walked in C and its values are in native order.  Batches of such a schema
    without compression, in metadata V5, go through ``BatchEncoder``: one C call."""
    key = None
    if compression is None and compression_level is None and type(alignment) is int:
        key = (alignment, bool(legacy_format), version, features, walked)
        hit = _ENCODERS.get(key)
        if hit is not None:
            return hit
    encoder = Encoder(alignment, legacy_format, compression, version, compression_level,
                      features)
    fast = (BatchEncoder(alignment, legacy_format, version)
            if walked and compression is None and version >= MetadataVersion.V5 else None)
    if key is not None:
        with _PLANS_LOCK:
            while len(_ENCODERS) >= _ENCODERS_KEPT:
                _ENCODERS.pop(next(iter(_ENCODERS)))
            _ENCODERS[key] = (encoder, fast)
    return encoder, fast


def _features(schema: t.Schema, compression, allow_replacement: bool) -> tuple:
    """The Schema.features the output uses: COMPRESSED_BODY with compression, and, in a
    stream with dictionaries whose replacement is allowed, DICTIONARY_REPLACEMENT (the schema
    goes out first, so a replacement that may come later is declared).  Arrow C++ writes none;
    readers that know the features (pyarrow included) read them as information."""
    out = []
    if allow_replacement:
        if dictionary_value_fields(schema):
            out.append("DICTIONARY_REPLACEMENT")
    if compression is not None:
        out.append("COMPRESSED_BODY")
    return tuple(out)


def _find_value_type(schema: t.Schema, dict_id: int):
    return dictionary_value_fields(schema)[dict_id].storage_type


def _chunksize(max_chunksize) -> int:
    """``max_chunksize`` as a row count, 0 for no limit (None, 0 or below, as pyarrow)."""
    if max_chunksize is None:
        return 0
    try:
        n = operator.index(max_chunksize)
    except TypeError:
        raise ArrowInvalid(f"max_chunksize must be an int (rows per record batch) or None, "
                           f"got {max_chunksize!r}") from None
    return max(n, 0)


class DataSource(NamedTuple):
    """Data to write: its schema and its batches (or anything ``record_batch`` takes)."""

    schema: t.Schema
    batches: Iterable


def _is_schema_like(obj) -> bool:
    """A schema as ``new_file`` took one before it took data: a Schema, a schema producer,
    fields or (name, type) pairs, or a dict of name -> type."""
    if isinstance(obj, t.Schema):
        return True
    if isinstance(obj, Mapping):
        return all(isinstance(v, t.DataType) or _is_type_producer(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return all(isinstance(f, (t.Field, tuple)) or _is_type_producer(f) for f in obj)
    return _is_type_producer(obj)


def _is_type_producer(obj) -> bool:
    return (hasattr(obj, "__arrow_c_schema__") and not hasattr(obj, "__arrow_c_array__")
            and not hasattr(obj, "__arrow_c_stream__"))


def data_source(data) -> Optional[DataSource]:
    """``data`` as a ``DataSource``, or None when it is a schema (or not data at all).

    arrowmm batches, tables and readers give their batches as they are (zero-copy); other
    producers go through the Arrow C stream interface (a pandas DataFrame through its
    ``__arrow_c_stream__``, which pandas makes with pyarrow)."""
    if isinstance(data, RecordBatch):  # (first: the common data, never schema-like)
        return DataSource(data.schema, [data])
    if isinstance(data, Table):
        return DataSource(data.schema, data.to_batches())
    if _is_schema_like(data):
        return None
    if isinstance(data, (ReaderBase, RecordBatchReader)):
        return DataSource(data.schema, data)
    if isinstance(data, Mapping):
        batch = record_batch(data)
        return DataSource(batch.schema, [batch])
    if hasattr(data, "__arrow_c_stream__"):
        stream = import_stream(data.__arrow_c_stream__())
        return DataSource(stream.schema, stream)
    if hasattr(data, "__arrow_c_array__"):
        batch = record_batch(data)
        return DataSource(batch.schema, [batch])
    return None


def _coerce_schema(schema) -> t.Schema:
    if hasattr(schema, "__arrow_c_schema__"):
        out = import_schema(schema.__arrow_c_schema__())
        if isinstance(out, t.Schema):
            return out
    if isinstance(schema, (list, tuple, dict)):
        return t.Schema(schema)
    raise ArrowInvalid(f"expected a schema or data to write (a Schema, a pandas or polars "
                       f"DataFrame, a Table, a dict of columns, an Arrow producer), got "
                       f"{type(schema).__name__}")


class StreamWriter(_WriterBase):
    """Writes the IPC stream format: schema, dictionaries and batches, then end-of-stream;
    to a path, through a temporary file renamed into place on close."""

    _caller = "new_stream"


class FileWriter(_WriterBase):
    """Writes the IPC file format; to a path, crash-safely through a temporary file."""

    _file_format = True
    _caller = "new_file"  # (the function whose options an error names)

    def _prefix(self) -> list:
        return [MAGIC + b"\x00\x00" + self._encoder.schema(self.schema, 8).parts[0]]

    def _finish(self):
        footer_metadata = self._footer_metadata
        if self._statistics is not None:
            footer_metadata = {**(footer_metadata or {}),
                               **encode_file_statistics(self.schema, self._statistics,
                                                        self._statistics_id, self._batch_blocks)}
        footer = encode_footer(self.schema, footer_block_bytes(self._dict_blocks),
                               footer_block_bytes(self._batch_blocks), footer_metadata,
                               self._version, self.features)
        self._put([self._encoder.eos() + footer + struct.pack("<i", len(footer)) + MAGIC])
        self._close_file()


def new_file(sink, schema, *, compression=None, metadata=None, max_chunksize=None,
             **options) -> FileWriter:
    """A ``FileWriter`` to a path (written crash-safely) or a binary file-like object.

    ``schema``: the schema of the batches to come, or data to write first, whose schema the
    writer takes: a pandas or polars DataFrame, an arrowmm or pyarrow Table or RecordBatch,
    a reader, a dict of columns, or anything with ``__arrow_c_stream__`` /
    ``__arrow_c_array__``.  Data is written in record batches of at most ``max_chunksize``
    rows (None: ``DEFAULT_MAX_CHUNKSIZE``, 65,536; 0: the input's batches as they are).

    ``metadata``: the footer's custom metadata (``FileReader.metadata``, pyarrow's
    ``RecordBatchFileReader.metadata``); the schema's own stays ``schema.metadata``.

    Options: ``alignment`` (64, or 8/16/32), ``legacy_format`` (pre-0.15
    framing), ``fsync`` (fsync before the rename on close), ``endianness`` ("big" writes
    a big-endian file; None, the default, writes native order whatever the schema says, as
    pyarrow), ``compression_level`` (an int in the codec's range: lz4 0..16, where
    3 and up is LZ4 HC, default 0; zstd -131072..22, default 1, as Arrow C++),
    ``metadata_version`` ("V5", or "V4" for readers older than Arrow 1.0: unions then carry
    an empty validity buffer), ``statistics`` (record per-batch min/max/null counts in the
    footer, see ``arrowmm.ipc.core.statistics``), ``emit_dictionary_deltas`` (False, as pyarrow: a
    dictionary that grows is refused, since a file holds one dictionary per id; True: the
    growth is written as a delta, which polars cannot read) and ``unify_dictionaries``
    (``write_table`` merges the dictionaries of all its batches into one per id), ``cast``
    (True: a batch whose types differ from the writer's is cast where that is safe, see
    ``arrowmm.interop.cast``; else it is refused naming the first differing field).  With
    compression, a buffer that does not shrink is stored uncompressed (length -1), and the
    schema declares the COMPRESSED_BODY feature.

    A path is written to a hidden temporary beside it and renamed over it on ``close()``: an
    existing file keeps its mode, owner and group, a symlink stays a link and the file it
    points at is replaced; a file the caller could not ``open(path, "wb")`` raises
    ``PermissionError``.  The rename gives the path a new inode: hard links to the old file
    keep the old data.
    """
    return _writer(FileWriter, sink, schema, max_chunksize, compression=compression,
                   metadata=metadata, **options)


def new_stream(sink, schema, *, compression=None, metadata=None, max_chunksize=None,
               **options) -> StreamWriter:
    """A ``StreamWriter`` to a path or a binary file-like object (pipes and sockets included).

    ``schema``: a schema, or data to write first (as ``new_file`` takes it).

    A path is written as ``new_file`` writes one: through a temporary renamed into place on
    ``close()``, so a reader never sees a partial stream under the name (a FIFO or device is
    written in place).  ``metadata`` goes to the schema message (a stream has no footer).

    Options: ``alignment``, ``legacy_format``, ``allow_dictionary_replacement``
    (True: a changed dictionary is re-sent, and a schema with dictionaries declares the
    DICTIONARY_REPLACEMENT feature; False: ``ArrowInvalid``), ``emit_dictionary_deltas``
    (False, as pyarrow: a dictionary that grows is re-sent whole; True: as a delta),
    ``unify_dictionaries``, ``cast``, ``fsync``, ``endianness``, ``compression_level``,
    ``metadata_version`` (see ``new_file``), ``statistics`` (per-batch min/max/null counts
    in each batch's message metadata).
    """
    return _writer(StreamWriter, sink, schema, max_chunksize, compression=compression,
                   metadata=metadata, **options)


def _writer(cls, sink, schema_or_data, max_chunksize, caller=None, **options):
    source = data_source(schema_or_data)
    if source is None:
        if max_chunksize is not None:
            raise ArrowInvalid("max_chunksize applies to data given in place of the schema; "
                               "for batches written later, pass it to write_table")
        return cls(sink, schema_or_data, **options)
    writer = cls(sink, source.schema, **options)
    if caller is not None:
        writer._caller = caller
    try:
        writer.write_table(source.batches, DEFAULT_MAX_CHUNKSIZE if max_chunksize is None
                           else max_chunksize)
    except BaseException:
        writer.abort()
        raise
    return writer


def _write(cls, sink, data, max_chunksize, options) -> None:
    name = "write_file" if cls is FileWriter else "write_stream"
    if data_source(data) is None:
        raise ArrowInvalid(f"{name}() writes data (a DataFrame, a Table, a dict of columns, an "
                           f"Arrow producer), got {type(data).__name__}; "
                           f"{name.replace('write', 'new')}(sink, schema) makes a writer for "
                           f"batches to come")
    with _writer(cls, sink, data, max_chunksize, caller=name, **options):
        pass


def write_file(sink, data, *, compression=None, metadata=None, max_chunksize=None,
               statistics=None, unify_dictionaries=True, **options) -> None:
    """Write ``data`` as an IPC file at ``sink`` (a path, written crash-safely, or a binary
    file-like object) in one call: ``with new_file(sink, data, ...): pass``.

    ``data``: a pandas or polars DataFrame, an arrowmm or pyarrow Table or RecordBatch, a
    reader, a dict of columns, or anything with ``__arrow_c_stream__`` / ``__arrow_c_array__``
    (pyarrow's ``feather.write_feather`` and polars' ``write_ipc`` are the counterparts).

    ``max_chunksize``: the most rows per record batch.  None cuts batches bigger than
    ``DEFAULT_MAX_CHUNKSIZE`` (65,536 rows, pyarrow's ``write_feather`` default) and keeps
    smaller ones; 0 keeps the input's batches as they are.  What the default costs and
    gains, measured on a 2,000,000-row DataFrame (int64, double, timestamp, string; 31
    batches against 1; medians, 2 shared cores): reading two columns of one batch of the
    zstd file takes 1.8 ms instead of 40 ms (a reader decompresses whole buffers of a
    batch); a filter that per-batch statistics prune to one batch takes 2.4 ms instead of
    110 ms (zstd) and 0.5 ms instead of 3.9 ms (plain); write time and file size are the
    same within noise (+0.03% bytes).  The cost: ``read_all().to_pandas()`` copies the
    batches into one array per column where one batch is viewed, 57 -> 66-109 ms plain,
    161-168 -> 210-234 ms zstd.  Much smaller batches cost more: 16,384 rows made the zstd
    file 11% bigger.

    ``statistics``: True (the default here, None, unless ``metadata_version="V4"``, whose
    readers refuse the metadata they need; ``new_file`` leaves them off) records per-batch
    min, max and null counts (``arrowmm.ipc.core.statistics``), which ``arrowmm.dataset`` filters
    and the Spark connector use to skip batches.  They cost one pass over the values: on the
    same DataFrame +20-60 ms plain (0.26-0.30 s in all), +70-150 ms zstd.

    ``unify_dictionaries``: True (the default here, as pyarrow's ``write_feather``; ``new_file``
    leaves it off) gives each dictionary-encoded column one dictionary holding the values of
    all its chunks, so a table whose chunks carry different dictionaries (concatenated
    categoricals, Parquet files read one per chunk) can be written: a file holds one
    dictionary per id.  Other options (``compression_level``, ``cast``, ``fsync``, ...) are
    ``new_file``'s.

    Examples
    --------
    >>> import arrowmm, tempfile, os
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = os.path.join(tmp.name, "data.arrow")
    >>> arrowmm.write_file(path, {"x": list(range(5)), "s": list("abcde")}, max_chunksize=2)
    >>> with arrowmm.open_file(path) as r:
    ...     r.num_record_batches, r.read_all().column("x").to_pylist()
    (3, [0, 1, 2, 3, 4])
    >>> tmp.cleanup()
    """
    _write(FileWriter, sink, data, max_chunksize,
           dict(compression=compression, metadata=metadata, unify_dictionaries=unify_dictionaries,
                statistics=_statistics_default(statistics, options), **options))


def write_stream(sink, data, *, compression=None, metadata=None, max_chunksize=None,
                 statistics=None, **options) -> None:
    """Write ``data`` as an IPC stream in one call: ``with new_stream(sink, data, ...): pass``.

    ``data``, ``max_chunksize`` and ``statistics`` (here in each batch's message metadata)
    as ``write_file``; other options are ``new_stream``'s.
    """
    _write(StreamWriter, sink, data, max_chunksize,
           dict(compression=compression, metadata=metadata,
                statistics=_statistics_default(statistics, options), **options))


def _statistics_default(statistics, options: dict) -> bool:
    """The one-call writers' ``statistics``: None is True, but for metadata V4 (see
    ``new_file``: V4 readers refuse the metadata statistics need)."""
    if statistics is not None:
        return bool(statistics)
    version = options.get("metadata_version", "V5")
    return MetadataVersion.parse(version) >= MetadataVersion.V5
