"""The writers' C path (``ipc.write._flatten``) against the Python one (``encoder.flatten`` and
``Encoder.batch``): the same message bytes for random batches of every walked type (sliced at
bit and byte offsets, with nulls, empty, without columns, big enough to go out as views), with
and without compression, so the two cannot drift.  The Python path is the reference: the
gold-file and pyarrow comparisons of the other tests check it."""
from __future__ import annotations

import io
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from tests.support.writer_support import to_mm

import arrowmm
from arrowmm import types as t
from arrowmm._core._region import as_view
from arrowmm.arrays.array import make_array
from arrowmm.errors import ArrowInvalid
from arrowmm.ipc.write import writer as writer_module
from arrowmm.ipc.write._flatten import BatchEncoder, walk_columns
from arrowmm.ipc.write.encoder import Encoder, FlatBatch, flatten, flatten_columns

INTS = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
        pa.uint64()]
FLOATS = [pa.float16(), pa.float32(), pa.float64()]
TYPES = INTS + FLOATS + [
    pa.bool_(), pa.null(), pa.string(), pa.binary(), pa.large_string(), pa.large_binary(),
    pa.binary(3), pa.decimal128(10, 2), pa.date32(), pa.date64(), pa.timestamp("us", "UTC"),
    pa.time32("ms"), pa.duration("ns"), pa.month_day_nano_interval(),
    pa.list_(pa.int32()), pa.large_list(pa.string()), pa.list_(pa.int16(), 2),
    pa.map_(pa.string(), pa.int32()),
    pa.struct([("a", pa.int64()), ("b", pa.list_(pa.bool_())), ("c", pa.string())]),
    pa.dictionary(pa.int8(), pa.string()),
]


def _array(rng, ty, n: int) -> pa.Array:
    """``n`` random values of ``ty``, about a quarter of them null."""
    mask = rng.random(n) < 0.25
    if pa.types.is_null(ty):
        return pa.nulls(n)
    if pa.types.is_integer(ty) or pa.types.is_floating(ty) or pa.types.is_boolean(ty):
        values = rng.integers(0, 100, n)
        return pa.array(values.astype(ty.to_pandas_dtype()), type=ty, mask=mask)
    if pa.types.is_struct(ty):
        kids = [_array(rng, f.type, n) for f in ty]
        return pa.StructArray.from_arrays(kids, fields=list(ty), mask=pa.array(mask))
    if pa.types.is_dictionary(ty):
        indices = pa.array(rng.integers(0, 3, n).astype(np.int8), mask=mask)
        return pa.DictionaryArray.from_arrays(indices, pa.array(["x", "yy", "zzz"]))
    return pa.array([None if m else _value(rng, ty) for m in mask], type=ty)


def _value(rng, ty):
    if pa.types.is_string(ty) or pa.types.is_large_string(ty):
        return "s" * int(rng.integers(0, 5))
    if pa.types.is_fixed_size_binary(ty):
        return bytes(rng.integers(0, 256, ty.byte_width).astype(np.uint8))
    if pa.types.is_binary(ty) or pa.types.is_large_binary(ty):
        return bytes(rng.integers(0, 256, int(rng.integers(0, 5))).astype(np.uint8))
    if pa.types.is_decimal(ty):
        return Decimal(int(rng.integers(-10**6, 10**6))) / 100
    if pa.types.is_date32(ty) or pa.types.is_date64(ty):
        return np.datetime64(int(rng.integers(0, 20000)), "D").item()
    if pa.types.is_timestamp(ty) or pa.types.is_duration(ty) or pa.types.is_time(ty):
        return int(rng.integers(0, 1000))
    if pa.types.is_interval(ty):
        return pa.MonthDayNano([int(x) for x in rng.integers(0, 100, 3)])
    if pa.types.is_fixed_size_list(ty):
        return [_value_or_none(rng, ty.value_type) for _ in range(ty.list_size)]
    if pa.types.is_map(ty):
        return [("k" * int(rng.integers(1, 3)), _value_or_none(rng, ty.item_type))
                for _ in range(int(rng.integers(0, 3)))]
    if pa.types.is_list(ty) or pa.types.is_large_list(ty):
        return [_value_or_none(rng, ty.value_type) for _ in range(int(rng.integers(0, 4)))]
    raise AssertionError(ty)


def _value_or_none(rng, ty):
    if rng.random() < 0.2:
        return None
    if pa.types.is_boolean(ty):
        return bool(rng.integers(0, 2))
    if pa.types.is_integer(ty):
        return int(rng.integers(0, 100))
    return _value(rng, ty)


def _batches(seed: int):
    """Random arrowmm batches: read from IPC, sliced by arrowmm (bit and byte offsets), and
    imported from pyarrow slices (offsets on pyarrow's side)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    types = [TYPES[i] for i in rng.choice(len(TYPES), int(rng.integers(1, 8)))]
    pa_batch = pa.record_batch([_array(rng, ty, n) for ty in types],
                               names=[f"c{i}" for i in range(len(types))])
    read = to_mm(pa_batch)[0]
    start = int(rng.integers(0, n + 1))
    length = int(rng.integers(0, n - start + 1))
    yield read
    yield read.slice(start, length)
    yield read.slice(min(start, 3), length)
    yield arrowmm.record_batch(pa_batch.slice(start, length))


def _columns(batch) -> list:
    """The batch's storage columns, validated (as a writer validates them before encoding)."""
    return [col._validated() for col in batch.storage_columns]


def _python_flat(columns) -> FlatBatch:
    out = FlatBatch()
    for col in columns:
        flatten(col, out)
    return out


def _joined(msg) -> bytes:
    return b"".join(bytes(memoryview(p).cast("B")) for p in msg.parts)


def _assert_same_message(fast, slow):
    assert (fast.metadata_length, fast.body_length) == (slow.metadata_length, slow.body_length)
    assert _joined(fast) == _joined(slow)


@pytest.mark.parametrize("seed", range(60))
def test_c_path_writes_the_python_paths_bytes(seed):
    for batch in _batches(seed):
        columns = _columns(batch)
        slow_flat = _python_flat(columns)
        nodes, buffers = walk_columns(columns)
        assert nodes == slow_flat.nodes
        assert ([None if b is None else bytes(memoryview(b).cast("B")) for b in buffers]
                == [None if b is None else bytes(memoryview(b).cast("B")) for b in slow_flat.buffers])
        for alignment, legacy, position in ((64, False, 0), (8, False, 12), (64, True, 100)):
            fast = BatchEncoder(alignment, legacy).encode(columns, batch.num_rows, position)
            slow = Encoder(alignment, legacy).batch(batch.num_rows, slow_flat, position)
            _assert_same_message(fast, slow)


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_c_walk_compresses_to_the_python_paths_bytes(codec):
    for seed in range(20):
        for batch in _batches(seed):
            columns = batch.storage_columns
            encoder = Encoder(compression=codec)
            _assert_same_message(encoder.batch(batch.num_rows, flatten_columns(columns), 8),
                                 encoder.batch(batch.num_rows, _python_flat(columns), 8))


def test_c_path_of_a_big_body_gives_the_arrays_memory():
    """Past 32 KiB a body goes out as views of the arrays (no copy), padded between."""
    rng = np.random.default_rng(7)
    pa_batch = pa.record_batch([_array(rng, pa.int64(), 10_000), _array(rng, pa.string(), 10_001)[1:],
                                _array(rng, pa.bool_(), 10_000)], names=["i", "s", "b"])
    batch = to_mm(pa_batch)[0].slice(5, 9_000)
    columns = _columns(batch)
    fast = BatchEncoder().encode(columns, batch.num_rows, 0)
    _assert_same_message(fast, Encoder().batch(batch.num_rows, _python_flat(columns), 0))
    values = columns[0]._buffers[1]
    assert any(isinstance(p, type(values)) and p.region is values.region for p in fast.parts)


def test_c_path_of_no_columns_and_no_rows():
    for batch in (to_mm(pa.record_batch([pa.array([], pa.int32())], names=["x"]))[0],
                  arrowmm.record_batch({"x": np.arange(3)}).select([])):
        columns = _columns(batch)
        _assert_same_message(BatchEncoder().encode(columns, batch.num_rows, 0),
                             Encoder().batch(batch.num_rows, _python_flat(columns), 0))


def test_types_the_c_path_does_not_walk_go_through_python():
    batch = arrowmm.record_batch(pa.record_batch(
        [pa.array([1, 2]), pa.array(["a", "b"], pa.string_view())], names=["i", "v"]))
    assert walk_columns(batch.storage_columns) is None
    assert BatchEncoder().encode(_columns(batch), 2, 0) is None


def test_columns_not_validated_yet_go_back_to_the_writer():
    """The writer validates a column before its bytes go out (a damaged one is refused): the
    C path takes only columns that passed, and says so."""
    batch = arrowmm.record_batch(pa.record_batch({"i": np.arange(4), "s": ["a", "b", "c", "d"]}))
    columns = batch.storage_columns  # (imported: arrowmm's own builders' columns are valid already)
    assert not columns[1]._fully_valid
    assert BatchEncoder().encode(columns, 4, 0) is None
    assert BatchEncoder().encode([col._validated() for col in columns], 4, 0) is not None


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_writers_write_the_same_bytes_either_way(fmt, monkeypatch):
    """Whole outputs (schema, dictionaries, batches of several shapes, footer) through the C
    path and with it turned off."""
    batches = [b for seed in (1, 2) for b in _batches(seed)]
    outputs = []
    for fast in (True, False):
        for seed in (1, 2, 3):
            rng = np.random.default_rng(seed)
            types = [TYPES[i] for i in rng.choice(len(TYPES), 6)]
            pa_batch = pa.record_batch([_array(rng, ty, 30) for ty in types],
                                       names=[f"c{i}" for i in range(6)])
            batches = to_mm(pa_batch)
            sink = io.BytesIO()
            new = arrowmm.new_file if fmt == "file" else arrowmm.new_stream
            with new(sink, batches[0].schema) as w:
                assert (w._fast is not None) == writer_module._walked(w.schema.fields)
                if not fast:
                    w._fast = None
                for start, length in ((0, 30), (3, 17), (9, 0), (8, 22)):
                    w.write(batches[0].slice(start, length))
            outputs.append(sink.getvalue())
    assert outputs[:3] == outputs[3:]


@pytest.mark.parametrize("offset", [3, 2**61])
def test_a_range_outside_its_buffer_raises_as_in_python(offset):
    """Lengths and offsets are checked before a byte is read (no wrap-around in C)."""
    values = as_view(np.arange(4, dtype=np.int64))
    array = make_array(t.int64(), 2, [None, values], null_count=0, offset=offset)
    with pytest.raises((ArrowInvalid, OverflowError)) as python:
        flatten(array)
    with pytest.raises(type(python.value)) as c:
        walk_columns([array])
    assert str(c.value) == str(python.value)
