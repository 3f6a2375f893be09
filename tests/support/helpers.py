"""Shared test helpers: write IPC with pyarrow, read it back through every arrowmm read path,
and compare what arrowmm reads with what pyarrow (the behavioural oracle) reads.

* ``write_ipc(path, data, fmt=...)`` / ``write_both(tmp_path, data)``: pyarrow writers, with
  per-batch custom metadata and ``IpcWriteOptions``.
* ``read_all_paths(path)``: one ``Reading`` per read path.  File-format paths go through
  ``open_file(path)``, ``open_file(bytes)``, ``arrowmm.open(path)`` and ``arrowmm.open(BytesIO)``;
  stream-format paths through ``open_stream(path)``, ``open_stream(bytes)``,
  ``open_stream(io.BytesIO)``, ``open_stream`` over an ``os.pipe()`` fed by a thread and over a
  file object giving short reads, ``arrowmm.open(path)``, ``arrowmm.open(BytesIO)``, and
  ``arrowmm.ipc.core.framing.MessageDecoder`` pushed random-sized chunks.  A file's data section is itself
  a stream (magic, padding, stream, EOS, then the footer), so file paths also run the stream
  paths over it.
* ``pa_read(path)``: pyarrow's reading of the same file, the oracle.
* ``assert_same_as_pyarrow(path)``: both of the above and every comparison below.
* ``assert_array_matches(mm, pa_arr)``: type string, length, null count, ``to_pylist`` in both
  temporal modes, ``[i]``, ``validate(full=True)``, ``to_numpy`` (and that it is a view).
"""
from __future__ import annotations

import io
import os
import random
import signal
import threading
from dataclasses import dataclass, field
from typing import Any, List, Optional

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm.ipc.core.framing import MessageDecoder, read_message_at

MAGIC = b"ARROW1"


# -- writing -------------------------------------------------------------------------------

def as_batches(data) -> List[pa.RecordBatch]:
    if isinstance(data, pa.RecordBatch):
        return [data]
    if isinstance(data, pa.Table):
        return data.to_batches()
    return list(data)


def _write_with_pyarrow(sink, data, schema, fmt, options, batch_metadata):
    batches = as_batches(data)
    if schema is None:
        schema = data.schema if not isinstance(data, list) else batches[0].schema
    opener = pa.ipc.new_file if fmt == "file" else pa.ipc.new_stream
    with opener(sink, schema, options=options) as writer:
        for i, batch in enumerate(batches):
            md = batch_metadata[i] if batch_metadata else None
            if md:
                writer.write_batch(batch, custom_metadata=md)
            else:
                writer.write_batch(batch)


def write_ipc(path, data, *, schema: Optional[pa.Schema] = None, fmt: str = "file",
              options: Optional[pa.ipc.IpcWriteOptions] = None, batch_metadata=None):
    """Write ``data`` (table, batch or list of batches) with pyarrow; returns ``path``.

    ``batch_metadata``: one dict (or None) per batch, written as message custom metadata.
    """
    _write_with_pyarrow(str(path), data, schema, fmt, options, batch_metadata)
    return path


def ipc_bytes(data, *, schema: Optional[pa.Schema] = None, fmt: str = "file", **options) -> bytes:
    """``data`` (table, batch or list of batches) written with pyarrow, as bytes.

    ``options``: pyarrow's ``IpcWriteOptions`` by name (``compression="zstd"``, ...)."""
    sink = io.BytesIO()
    _write_with_pyarrow(sink, data, schema, fmt, pa.ipc.IpcWriteOptions(**options), None)
    return sink.getvalue()


def column_read_back(arr: pa.Array, name: str = "c"):
    """``arr`` as column ``name`` of a one-batch IPC file (pyarrow's writer, which validates
    nothing: damaged arrays are written as they are), read back by arrowmm and by pyarrow."""
    data = ipc_bytes(pa.record_batch([arr], names=[name]))
    return (arrowmm.open_file(data).get_batch(0).column(name),
            pa.ipc.open_file(data).get_batch(0).column(name))


def validity_bits(*flags) -> pa.Buffer:
    """A validity bitmap of ``flags`` (slot 0 in the lowest bit), for ``Array.from_buffers``."""
    return pa.py_buffer(np.packbits(np.array(flags, dtype=bool), bitorder="little").tobytes())


def int32_buffer(*values) -> pa.Buffer:
    """``values`` as a buffer of little-endian int32 (offsets, sizes, run ends)."""
    return pa.py_buffer(np.array(values, dtype="<i4").tobytes())


def pyarrow_refuses(col: pa.Array, why: str) -> None:
    """pyarrow's full validation refuses ``col`` for ``why``: the oracle of "damaged"."""
    with pytest.raises(pa.ArrowInvalid, match=why):
        col.validate(full=True)


def write_both(tmp_path, data, name: str = "data", **kw):
    """(file path, stream path) of ``data`` written in both IPC formats."""
    return (write_ipc(tmp_path / f"{name}.arrow", data, fmt="file", **kw),
            write_ipc(tmp_path / f"{name}.arrows", data, fmt="stream", **kw))


# -- the oracle ----------------------------------------------------------------------------

@dataclass
class Reading:
    label: str
    schema: Any
    batches: list
    batch_metadata: list = field(default_factory=list)
    reader: Any = None


def is_file_format(path) -> bool:
    with open(path, "rb") as f:
        return f.read(6) == MAGIC


def pa_read(path) -> Reading:
    """pyarrow's reading of an IPC file or stream: schema, batches, message metadata."""
    if is_file_format(path):
        r = pa.ipc.open_file(str(path))
        pairs = [r.get_batch_with_custom_metadata(i) for i in range(r.num_record_batches)]
    else:
        r = pa.ipc.open_stream(str(path))
        pairs = list(r.iter_batches_with_custom_metadata())
    mds = [None if md is None else {k.decode(): v.decode() for k, v in md.to_dict().items()}
           for _, md in pairs]
    return Reading("pyarrow", r.schema, [b for b, _ in pairs], mds, r)


# -- every arrowmm read path ---------------------------------------------------------------

class ShortReads(io.RawIOBase):
    """A binary file object whose ``read(n)`` returns 1..n bytes (random), like a socket."""

    def __init__(self, data: bytes, seed: int = 0):
        self._data = memoryview(data)
        self._pos = 0
        self._rng = random.Random(seed)

    def readable(self):
        return True

    def read(self, n=-1):
        left = len(self._data) - self._pos
        if n is None or n < 0:
            n = left
        n = min(n, left, self._rng.choice((1, 2, 3, 5, 7, 8, 13, 64, 1000, 1 << 20)))
        out = bytes(self._data[self._pos:self._pos + n])
        self._pos += n
        return out


def _pipe_reader(data: bytes, buffering: int = 0):
    """A read end of an ``os.pipe()`` fed ``data`` by a thread (closed after), and the thread."""
    rfd, wfd = os.pipe()

    def feed():
        try:
            with os.fdopen(wfd, "wb") as w:
                w.write(data)
        except BrokenPipeError:  # the reader stopped early (an error); nothing to do
            pass

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return os.fdopen(rfd, "rb", buffering=buffering), thread


def fed_pipe(data: bytes):
    """The read end of an ``os.pipe()`` as a buffered file object, fed ``data`` by a thread."""
    return _pipe_reader(data, buffering=-1)[0]


def random_chunks(data: bytes, seed: int):
    rng = random.Random(seed)
    pos = 0
    while pos < len(data):
        n = rng.choice((1, 2, 3, 4, 5, 8, 9, 17, 100, 4096, len(data)))
        yield data[pos:pos + n]
        pos += n


class _DecodedStream(arrowmm.StreamReader):
    """A StreamReader over messages already produced by a ``MessageDecoder`` (it replaces the
    reader's one source of messages, ``_next_message``)."""

    def __init__(self, messages):
        self._queued = list(messages)
        super().__init__(io.BufferedReader(io.BytesIO(b"")))  # a file object: no region

    def _next_message(self):
        return self._queued.pop(0) if self._queued else None


def decode_pushed(data: bytes, seed: int = 0):
    """Messages of ``data`` pushed into a ``MessageDecoder`` in random chunks, checked against
    the zero-copy ``read_message_at`` walk of the same bytes."""
    dec = MessageDecoder()
    messages = []
    for chunk in random_chunks(data, seed):
        messages.extend(dec.feed(chunk))
        if dec.eos:
            break
    dec.finish()
    region = arrowmm.Region(data)
    pos, index, direct = 0, 0, []
    while True:
        msg = read_message_at(region, pos, index)
        if msg is None:
            break
        direct.append(msg)
        pos, index = msg.body.offset + msg.body.size, index + 1
    assert len(messages) == len(direct), "decoder and region walk found different message counts"
    for a, b in zip(messages, direct):
        assert (a.record.header_type, a.record.body_length, a.index) == \
            (b.record.header_type, b.record.body_length, b.index)
        assert a.body.to_bytes() == b.body.to_bytes()
    return messages


def _stream_readings(data: bytes, path=None, seed: int = 0) -> List[Reading]:
    """Every stream read path over ``data`` (``path``: the same bytes on disk, when they are)."""
    out = []

    def add(label, reader):
        assert isinstance(reader, arrowmm.StreamReader), label
        out.append(Reading(label, reader.schema, _stream_batches(reader), reader=reader))

    if path is not None:
        add("open_stream(path)", arrowmm.open_stream(path))
        add("open(path)", arrowmm.open(path))
    add("open_stream(bytes)", arrowmm.open_stream(data))
    add("open_stream(BytesIO)", arrowmm.open_stream(io.BytesIO(data)))
    add("open(BytesIO)", arrowmm.open(io.BytesIO(data)))
    add("open_stream(short reads)", arrowmm.open_stream(ShortReads(data, seed)))
    pipe, thread = _pipe_reader(data)
    try:
        add("open_stream(pipe)", arrowmm.open_stream(pipe))
    finally:
        pipe.close()
        thread.join(10)
    add("MessageDecoder(pushed chunks)", _DecodedStream(decode_pushed(data, seed)))
    return out


def _stream_batches(reader):
    """Every batch through ``read_next_batch`` (which then keeps raising StopIteration)."""
    batches = []
    while True:
        try:
            batches.append(reader.read_next_batch())
        except StopIteration:
            break
    with pytest.raises(StopIteration):
        reader.read_next_batch()
    return batches


def read_all_paths(path, seed: int = 0) -> List[Reading]:
    """One ``Reading`` per arrowmm read path of the IPC file or stream at ``path``."""
    path = str(path)
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != MAGIC:
        return _stream_readings(data, path, seed)
    out = []
    for label, source in (("open_file(path)", path), ("open_file(bytes)", data),
                          ("open(path)", path), ("open(BytesIO)", io.BytesIO(data))):
        reader = arrowmm.open_file(source) if label.startswith("open_file") else arrowmm.open(source)
        assert isinstance(reader, arrowmm.FileReader), label
        n = reader.num_record_batches
        batches = [reader.get_batch(i) for i in range(n)]
        if n:
            assert reader.get_batch(-n).num_rows == batches[0].num_rows
        with pytest.raises(IndexError):
            reader.get_batch(n)
        out.append(Reading(label, reader.schema, batches, reader=reader))
    # the data section of a file is a stream: magic + padding, messages, EOS, then the footer
    footer_len = int.from_bytes(data[-10:-6], "little")
    for r in _stream_readings(data[8:len(data) - 10 - footer_len], None, seed):
        r.label = "file data section: " + r.label
        out.append(r)
    return out


# -- value comparison (strict: type and value, NaN-safe) -----------------------------------

def _comparable(v):
    """pandas Timestamps by instant and UTC offset: pyarrow names a fixed offset zone with pytz
    ('pytz.FixedOffset(330)'), arrowmm with the standard library ('UTC+05:30')."""
    if isinstance(v, list):
        return [_comparable(x) for x in v]
    if isinstance(v, tuple):
        return tuple(_comparable(x) for x in v)
    if isinstance(v, dict):
        return {k: _comparable(x) for k, x in v.items()}
    if type(v).__name__ == "Timestamp" and getattr(v, "tzinfo", None) is not None:
        return ("Timestamp", v.value, v.utcoffset())
    return v


def assert_values_equal(got, expected, where=""):
    """Equal values of equal types: compared through ``repr``, which tells True from 1, bytes
    from memoryview, -0.0 from 0.0, Decimal('1.0') from Decimal('1.00'), a ZoneInfo from a
    fixed offset, and NaN equal to NaN (arrowmm's and pyarrow's MonthDayNano print alike)."""
    a, b = repr(got), repr(expected)
    if a == b:
        return
    a, b = repr(_comparable(got)), repr(_comparable(expected))
    if a == b:
        return
    if isinstance(got, list) and isinstance(expected, list) and len(got) == len(expected):
        for i, (x, y) in enumerate(zip(got, expected)):
            assert repr(_comparable(x)) == repr(_comparable(y)), \
                f"{where}[{i}]: arrowmm {x!r} != pyarrow {y!r}"
    assert a == b, f"{where}: arrowmm {got!r} != pyarrow {expected!r}"


# -- pyarrow type mapping --------------------------------------------------------------------

def map_type(ty: pa.DataType, leaf):
    """``ty`` rebuilt with ``leaf(t)`` applied to every non-nested type (fields keep names,
    nullability and metadata); extension types are replaced by their storage type."""
    if isinstance(ty, pa.BaseExtensionType):
        return map_type(ty.storage_type, leaf)

    def f(fl: pa.Field):
        return pa.field(fl.name, map_type(fl.type, leaf), fl.nullable, fl.metadata)

    if pa.types.is_list(ty):
        return pa.list_(f(ty.value_field))
    if pa.types.is_large_list(ty):
        return pa.large_list(f(ty.value_field))
    if pa.types.is_list_view(ty):
        return pa.list_view(f(ty.value_field))
    if pa.types.is_large_list_view(ty):
        return pa.large_list_view(f(ty.value_field))
    if pa.types.is_fixed_size_list(ty):
        return pa.list_(f(ty.value_field), ty.list_size)
    if pa.types.is_map(ty):
        return pa.map_(f(ty.key_field), f(ty.item_field), ty.keys_sorted)
    if pa.types.is_struct(ty):
        return pa.struct([f(ty.field(i)) for i in range(ty.num_fields)])
    if pa.types.is_union(ty):
        kids = [f(ty.field(i)) for i in range(ty.num_fields)]
        return (pa.sparse_union if ty.mode == "sparse" else pa.dense_union)(kids, ty.type_codes)
    if pa.types.is_dictionary(ty):
        return pa.dictionary(ty.index_type, map_type(ty.value_type, leaf), ty.ordered)
    if pa.types.is_run_end_encoded(ty):
        return pa.run_end_encoded(ty.run_end_type, map_type(ty.value_type, leaf))
    return leaf(ty)


def _int_leaf(ty):
    if pa.types.is_date32(ty) or pa.types.is_time32(ty):
        return pa.int32()
    if (pa.types.is_date64(ty) or pa.types.is_time64(ty) or pa.types.is_timestamp(ty)
            or pa.types.is_duration(ty)):
        return pa.int64()
    return ty


def plain_type(ty):
    """``ty`` with extension types replaced by their storage (what arrowmm exposes)."""
    return map_type(ty, lambda x: x)


def _has_temporal(ty) -> bool:
    return map_type(ty, _int_leaf) != plain_type(ty)


def int_pylist(arr) -> list:
    """pyarrow's values of ``arr`` with temporal values as their stored integers: the expected
    ``to_pylist(temporal="int")``.  Walks the structure itself and views only leaves as integers
    (pyarrow 26's ``Array.view`` of nested types loses offsets: a sliced sparse union of
    run_end_encoded, a struct with a null-type child)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if isinstance(arr.type, pa.BaseExtensionType):
        arr = arr.storage
    ty = arr.type
    if not _has_temporal(ty):
        return plain_view(arr).to_pylist()
    if len(arr) == 0:
        return []
    valid = arr.is_valid().to_pylist()
    if pa.types.is_struct(ty):
        cols = [int_pylist(arr.field(i)) for i in range(ty.num_fields)]
        names = [ty.field(i).name for i in range(ty.num_fields)]
        return [dict(zip(names, vals)) if ok else None for ok, vals in zip(valid, zip(*cols))]
    if pa.types.is_list(ty) or pa.types.is_large_list(ty) or pa.types.is_map(ty):
        offs = arr.offsets.to_pylist()
        child = arr.values.slice(offs[0], offs[-1] - offs[0])
        if pa.types.is_map(ty):
            values = list(zip(int_pylist(child.field(0)), int_pylist(child.field(1))))
        else:
            values = int_pylist(child)
        return [values[a - offs[0]:b - offs[0]] if ok else None
                for ok, a, b in zip(valid, offs[:-1], offs[1:])]
    if pa.types.is_list_view(ty) or pa.types.is_large_list_view(ty):
        values = int_pylist(arr.values)
        return [values[o:o + k] if ok else None
                for ok, o, k in zip(valid, arr.offsets.to_pylist(), arr.sizes.to_pylist())]
    if pa.types.is_fixed_size_list(ty):
        k = ty.list_size
        values = int_pylist(arr.values.slice(arr.offset * k, len(arr) * k))
        return [values[i * k:(i + 1) * k] if ok else None for i, ok in enumerate(valid)]
    if pa.types.is_dictionary(ty):
        values = int_pylist(arr.dictionary)
        return [None if i is None else values[i] for i in arr.indices.to_pylist()]
    if pa.types.is_union(ty):  # type_codes / offsets ignore the slice offset: read the buffers
        bufs = arr.buffers()
        codes = np.frombuffer(bufs[1], np.int8)[arr.offset:arr.offset + len(arr)].tolist()
        child_of = {c: i for i, c in enumerate(ty.type_codes)}
        if ty.mode == "sparse":
            kids = [int_pylist(arr.field(i)) for i in range(ty.num_fields)]
            return [kids[child_of[c]][j] for j, c in enumerate(codes)]
        offs = np.frombuffer(bufs[2], np.int32)[arr.offset:arr.offset + len(arr)].tolist()
        kids = [int_pylist(arr.field(i)) for i in range(ty.num_fields)]
        return [kids[child_of[c]][o] for c, o in zip(codes, offs)]
    if pa.types.is_run_end_encoded(ty):
        ends, values = arr.run_ends.to_pylist(), int_pylist(arr.values)
        out, run = [], 0
        for pos in range(arr.offset, arr.offset + len(arr)):
            while ends[run] <= pos:
                run += 1
            out.append(values[run])
        return out
    return arr.view(_int_leaf(ty)).to_pylist()


def expected_field_metadata(pa_field: pa.Field):
    """Field metadata as arrowmm stores it (``Field.storage_metadata``): extension name and
    metadata stay in it."""
    md = {k.decode(): v.decode() for k, v in (pa_field.metadata or {}).items()}
    ty = pa_field.type
    if isinstance(ty, pa.BaseExtensionType):
        md["ARROW:extension:name"] = ty.extension_name
        ser = ty.__arrow_ext_serialize__() if isinstance(ty, pa.ExtensionType) else b""
        md["ARROW:extension:metadata"] = (ser or b"").decode()
    return md or None


def _children(ty):
    """(child pa.Field list) of a pa type, extension types looked through."""
    if isinstance(ty, pa.BaseExtensionType):
        ty = ty.storage_type
    if pa.types.is_map(ty):
        return [pa.field("entries", pa.struct([ty.key_field, ty.item_field]), False)]
    if pa.types.is_run_end_encoded(ty):
        return [pa.field("run_ends", ty.run_end_type, False), pa.field("values", ty.value_type)]
    if isinstance(ty, (pa.ListType, pa.LargeListType, pa.FixedSizeListType, pa.ListViewType,
                       pa.LargeListViewType)):
        return [ty.value_field]
    if pa.types.is_struct(ty) or pa.types.is_union(ty):
        return [ty.field(i) for i in range(ty.num_fields)]
    return []


def assert_field_matches(mm_field, pa_field, where=""):
    where = f"{where}.{pa_field.name}" if where else pa_field.name
    assert mm_field.name == pa_field.name, where
    assert mm_field.nullable == pa_field.nullable, where
    assert (mm_field.storage_metadata or None) == expected_field_metadata(pa_field), where
    if mm_field.extension_type is not None:  # shown as pyarrow shows it: the extension type,
        assert str(mm_field.type) == str(pa_field.type), where  # its entries not in metadata
        want = {k.decode(): v.decode() for k, v in (pa_field.metadata or {}).items()} or None
        assert (mm_field.metadata or None) == want, where
    assert_type_matches(mm_field.storage_type, pa_field.type, where)


def assert_type_matches(mm_type, pa_type, where=""):
    assert str(mm_type) == str(plain_type(pa_type)), f"{where}: {mm_type} vs {pa_type}"
    base = pa_type.storage_type if isinstance(pa_type, pa.BaseExtensionType) else pa_type
    if pa.types.is_dictionary(base):
        assert_type_matches(mm_type.value_type, base.value_type, f"{where}<values>")
        return
    kids = _children(base)
    assert len(mm_type.children) == len(kids), where
    for a, b in zip(mm_type.children, kids):
        assert_field_matches(a, b, where)


def assert_schema_matches(mm_schema, pa_schema):
    assert mm_schema.names == pa_schema.names
    want = {k.decode(): v.decode() for k, v in (pa_schema.metadata or {}).items()} or None
    assert (mm_schema.metadata or None) == want
    for a, b in zip(mm_schema, pa_schema):
        assert_field_matches(a, b)


# -- arrays ----------------------------------------------------------------------------------

def pa_pylist(arr):
    """(values, None) or (None, exception) for pyarrow's ``to_pylist`` of ``arr``."""
    try:
        return arr.to_pylist(), None
    except (ValueError, OverflowError, pa.ArrowException) as exc:
        return None, exc


def _pa_numpy_raises(arr) -> bool:
    try:
        arr.to_numpy(zero_copy_only=False)
    except (ValueError, OverflowError, pa.ArrowException):
        return True
    return False


def int_pylist_or_none(arr):
    try:
        return int_pylist(arr)
    except (ValueError, pa.ArrowException):
        return None


def assert_pylist_matches(mm, pa_arr, where="", pa_int=None):
    """Default ``to_pylist`` equal to pyarrow's where pyarrow converts (ArrowInvalid where it
    cannot); ``temporal="int"`` always equal to pyarrow's integer storage (``pa_int``: that
    ``int_pylist``, when already computed)."""
    if isinstance(pa_arr.type, pa.BaseExtensionType):
        pa_arr = pa_arr.storage
    expected, exc = pa_pylist(plain_view(pa_arr))  # nested extension values: their storage
    if exc is None:
        assert_values_equal(mm.to_pylist(), expected, where)
    else:
        with pytest.raises(arrowmm.ArrowInvalid):
            mm.to_pylist()
    if pa_int is None:
        pa_int = int_pylist_or_none(pa_arr)
    if pa_int is None:  # pyarrow raises in any mode (a struct with duplicate field names)
        with pytest.raises(arrowmm.ArrowInvalid):
            mm.to_pylist(temporal="int")
    else:
        assert_values_equal(mm.to_pylist(temporal="int"), pa_int, f"{where} (temporal='int')")
    return exc is None


def plain_view(arr):
    """``arr`` with extension types (nested too) seen as their storage, as arrowmm shows them."""
    target = plain_type(arr.type)
    return arr if target == arr.type else arr.view(target)


def in_region(arr: np.ndarray, region) -> bool:
    if arr.size == 0:
        return True
    return region.address <= arr.ctypes.data < region.address + region.size


_NUMPY_VIEW_TYPES = (pa.types.is_integer, pa.types.is_floating, pa.types.is_timestamp,
                     pa.types.is_date64, pa.types.is_duration, pa.types.is_fixed_size_binary)
_NO_NUMPY_VIEW = (pa.types.is_boolean, pa.types.is_string, pa.types.is_binary, pa.types.is_large_string,
                  pa.types.is_large_binary, pa.types.is_binary_view, pa.types.is_string_view,
                  pa.types.is_dictionary, pa.types.is_decimal, pa.types.is_time, pa.types.is_date32,
                  pa.types.is_interval)


def _pa_numpy(pa_arr):
    """pyarrow's ``to_numpy(zero_copy_only=False)``, or the exception it raises."""
    try:
        return pa_arr.to_numpy(zero_copy_only=False)
    except (pa.ArrowException, ValueError, TypeError, OverflowError) as exc:
        return exc


def assert_numpy_matches(mm, pa_arr, region=None, where=""):
    """``to_numpy`` of a fixed-width array: pyarrow's values and dtype, and (no nulls) a read-only
    view into ``region``; ``ArrowInvalid`` for ``zero_copy_only=True`` where no view can exist."""
    ty = plain_type(pa_arr.type)
    if isinstance(pa_arr.type, pa.BaseExtensionType):
        pa_arr = pa_arr.storage
    view_type = any(p(ty) for p in _NUMPY_VIEW_TYPES) and not (
        pa.types.is_fixed_size_binary(ty) and ty.byte_width == 0)
    if not view_type:
        if not any(p(ty) for p in _NO_NUMPY_VIEW):
            return  # nested types: see test_read_types
        with pytest.raises(arrowmm.ArrowInvalid):
            mm.to_numpy(zero_copy_only=True)
        if pa.types.is_boolean(ty) or pa.types.is_date32(ty):
            got = mm.to_numpy(zero_copy_only=False)
            want = pa_arr.to_numpy(zero_copy_only=False)
            assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
            np.testing.assert_array_equal(got, want, err_msg=where)
        elif not pa.types.is_dictionary(ty) and (
                pa_pylist(pa_arr)[1] is not None or (pa.types.is_time(ty) and _pa_numpy_raises(pa_arr))):
            # objects Python cannot hold (time64[ns]; with pandas, pyarrow's to_pylist truncates
            # them to microseconds but its to_numpy still refuses); a dictionary's values go to
            # numpy as pyarrow's do (a timestamp at year 0 is a datetime64, not a Python object)
            with pytest.raises(arrowmm.ArrowInvalid):
                mm.to_numpy(zero_copy_only=False)
            return
        elif pa.types.is_time(ty) or pa.types.is_decimal(ty):
            got = mm.to_numpy(zero_copy_only=False)
            assert_values_equal(got.tolist(), pa_arr.to_numpy(zero_copy_only=False).tolist(), where)
        elif pa.types.is_dictionary(ty) and not pa.types.is_interval(ty.value_type) and \
                not isinstance(want := _pa_numpy(pa_arr), pa.ArrowNotImplementedError):
            # decoded as pyarrow decodes (ints with a null index: float64 with NaN; review 10 T5),
            # refused where pyarrow refuses (a used time64[ns] value with nanoseconds)
            if isinstance(want, Exception):
                with pytest.raises(arrowmm.ArrowInvalid):
                    mm.to_numpy(zero_copy_only=False)
                return
            got = mm.to_numpy(zero_copy_only=False)
            assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
            np.testing.assert_array_equal(got, want, err_msg=where)
        else:  # variable-width, dictionaries pyarrow cannot convert (of lists, ...): objects as
            # to_pylist gives them; month_day_nano: pyarrow 26's to_numpy crashes
            try:
                want = mm.to_pylist()
            except arrowmm.ArrowInvalid:  # (a value Python cannot hold, such as a year-0
                # timestamp in a dictionary's map: to_numpy's objects are to_pylist's)
                with pytest.raises(arrowmm.ArrowInvalid):
                    mm.to_numpy(zero_copy_only=False)
                return
            got = mm.to_numpy(zero_copy_only=False)
            assert_values_equal(got.tolist(), want, where)
        return
    if mm.null_count:
        with pytest.raises(arrowmm.ArrowInvalid):
            mm.to_numpy(zero_copy_only=True)
        got = mm.to_numpy(zero_copy_only=False)
    else:
        got = mm.to_numpy()
        assert not got.flags.writeable, where
        if region is not None:
            assert in_region(got, region), f"{where}: to_numpy() is not a view of the mapping"
    want = pa_arr.to_numpy(zero_copy_only=False)
    if pa.types.is_fixed_size_binary(ty):  # arrowmm: an S<width> view; pyarrow: bytes objects
        if mm.null_count:
            assert_values_equal(got.tolist(), want.tolist(), where)
        else:
            assert got.dtype == np.dtype(f"S{ty.byte_width}"), where
            assert got.tobytes() == b"".join(want.tolist()), where
        return
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
    np.testing.assert_array_equal(got, want, err_msg=where)


def assert_array_matches(mm, pa_arr, where="", region=None, deep=True):
    """Every comparison of one arrowmm array with the pyarrow array holding the same data."""
    if isinstance(pa_arr, pa.ChunkedArray):
        pa_arr = pa_arr.combine_chunks()
    if isinstance(mm, arrowmm.ExtensionArray):  # a registered extension: the type pyarrow
        assert str(mm.type) == str(pa_arr.type), where  # prints, then the storage compared
        if not isinstance(pa_arr.type, pa.FixedShapeTensorType):  # (pyarrow: flat storage lists)
            assert_values_equal(mm.to_pylist(), pa_arr.to_pylist(), f"{where} extension values")
        mm = mm.storage
    assert str(mm.type) == str(plain_type(pa_arr.type)), where
    assert len(mm) == len(pa_arr), where
    assert mm.null_count == pa_arr.null_count, where
    mm.validate(full=True)
    storage = pa_arr.storage if isinstance(pa_arr.type, pa.BaseExtensionType) else pa_arr
    pa_int = int_pylist_or_none(storage)
    converts = assert_pylist_matches(mm, pa_arr, where, pa_int)
    if not deep:
        return
    n = len(pa_arr)
    if n and converts:
        for i in sorted({0, n - 1, n // 2, -1, -n}):
            assert_values_equal(mm[i], storage[i].as_py(), f"{where}[{i}]")
    with pytest.raises(IndexError):
        mm[n]
    with pytest.raises(IndexError):
        mm[-n - 1]
    for off, length in ((1, n - 2), (n // 3, n // 3 + 1), (n - 1, 5), (n, 0), (3, None)):
        if not 0 <= off <= n or (length is not None and length < 0):
            continue
        s = mm.slice(off, length)
        ps = pa_arr.slice(off, length)
        assert len(s) == len(ps) and s.null_count == ps.null_count, f"{where} slice({off}, {length})"
        s.validate(full=True)
        assert_pylist_matches(s, ps, f"{where} slice({off}, {length})",
                              None if pa_int is None else pa_int[off:off + (n if length is None else length)])
    assert_numpy_matches(mm, pa_arr, region, where)


def storage_batch(batch):
    """``batch`` with its extension columns seen as their storage (the extension names dropped
    from the field metadata), for comparing with pyarrow's storage values."""
    if not any(f.extension_type for f in batch.schema):
        return batch
    fields = [arrowmm.Field(f.name, f.storage_type, f.nullable, f.metadata) if f.extension_type
              else f for f in batch.schema]
    return arrowmm.RecordBatch(arrowmm.Schema(fields, batch.schema.metadata), batch.num_rows,
                               batch.storage_columns, metadata=batch.metadata)


def assert_batch_matches(mm_batch, pa_batch, pa_metadata=None, where="", region=None, deep=True):
    assert mm_batch.num_rows == pa_batch.num_rows, where
    assert mm_batch.num_columns == pa_batch.num_columns, where
    assert (mm_batch.metadata or None) == (pa_metadata or None), where
    mm_batch.validate(full=True)
    for k in range(pa_batch.num_columns):
        assert_array_matches(mm_batch.column(k), pa_batch.column(k),
                             f"{where} column {pa_batch.schema.names[k]!r}", region, deep)
    mm_batch = storage_batch(mm_batch)  # the rows below are compared as storage values
    plain = pa_batch
    if any(isinstance(f.type, pa.BaseExtensionType) for f in pa_batch.schema):
        plain = pa.RecordBatch.from_arrays(
            [c.storage if isinstance(c.type, pa.BaseExtensionType) else c for c in pa_batch.columns],
            names=pa_batch.schema.names)
    try:
        expected_rows, expected_cols = plain.to_pylist(), plain.to_pydict()
    except (ValueError, OverflowError, pa.ArrowException):
        with pytest.raises(arrowmm.ArrowInvalid):
            mm_batch.to_pylist()
        return
    assert_values_equal(mm_batch.to_pylist(), expected_rows, f"{where} to_pylist")
    assert_values_equal(mm_batch.to_pydict(), expected_cols, f"{where} to_pydict")


def assert_reading_matches(reading: Reading, oracle: Reading, deep=True, views=True):
    """``views``: fixed-width ``to_numpy()`` must point into the reader's mapping (not so for
    compressed bodies, whose buffers are decompressed into new memory)."""
    where = reading.label
    assert_schema_matches(reading.schema, oracle.schema)
    assert len(reading.batches) == len(oracle.batches), where
    region = getattr(reading.reader, "_region", None) if views else None
    mds = oracle.batch_metadata or [None] * len(oracle.batches)
    for i, (a, b) in enumerate(zip(reading.batches, oracle.batches)):
        assert_batch_matches(a, b, mds[i], f"{where} batch {i}", region, deep)


def assert_same_as_pyarrow(path, deep_all=False, seed: int = 0, views=True) -> List[Reading]:
    """Read ``path`` through every arrowmm path and compare each with pyarrow's reading.

    The first reading (``open_file(path)`` / ``open_stream(path)``) gets every check; the others
    get the value checks (``deep_all`` gives all of them every check)."""
    oracle = pa_read(path)
    readings = read_all_paths(path, seed)
    for k, reading in enumerate(readings):
        assert_reading_matches(reading, oracle, deep=deep_all or k == 0, views=views)
    return readings


def roundtrip(tmp_path, data, name="data", deep_all=False, seed=0, views=True, **write_kw):
    """Write ``data`` in both formats with pyarrow and check every arrowmm reading of both."""
    paths = write_both(tmp_path, data, name, **write_kw)
    return [assert_same_as_pyarrow(p, deep_all, seed, views) for p in paths]


def in_a_forked_child(body, then=None) -> int:
    """Exit status of a child forked now that runs ``body()``: 0 if it returned true, 2 if
    false, 3 if it raised ``ArrowInvalid`` naming the fork, 4 another ``ArrowInvalid``, 1 any
    other error, -N if signal N ended it (a hang ends it by SIGALRM after 30 s).  ``then()``
    runs in the parent while the child runs."""
    from arrowmm.errors import ArrowInvalid
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            signal.alarm(30)
            code = 0 if body() else 2
        except ArrowInvalid as exc:
            code = 3 if "forked" in str(exc) else 4
        finally:
            os._exit(code)
    if then is not None:
        then()
    _, status = os.waitpid(pid, 0)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)


def torn_append(path, tail: bytes) -> int:
    """Leave what an append killed mid-write leaves: padding, the append marker that says an
    append from the old end is in progress, then ``tail`` (a message cut short); the number
    of bytes added."""
    from arrowmm.ipc.read import trailer
    data = open(path, "rb").read()
    end = len(data)
    footer_len = int.from_bytes(data[end - 10:end - 6], "little")
    crc = trailer.footer_checksum(data[end - 10 - footer_len:])
    added = b"\x00" * (trailer.aligned(end) - end) + trailer.append_marker(end, crc) + tail
    with open(path, "ab") as f:
        f.write(added)
    return len(added)


def footer_of(table) -> bytes:
    """The footer of an IPC file of ``table`` (of no batch for a ``pa.Schema``)."""
    sink = io.BytesIO()
    schema = table if isinstance(table, pa.Schema) else table.schema
    with pa.ipc.new_file(sink, schema) as w:
        if not isinstance(table, pa.Schema):
            w.write_table(table)
    data = sink.getvalue()
    n = int.from_bytes(data[-10:-6], "little")
    return data[len(data) - 10 - n:len(data) - 10]
