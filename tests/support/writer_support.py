"""Shared by the writer tests: arrowmm batches from pyarrow data, arrowmm writes, pyarrow reads.

* ``to_mm(data)``: arrowmm batches holding pyarrow ``data`` (table, batch or list of batches):
  pyarrow writes an IPC stream in memory and arrowmm reads it back (the batches are views of it).
* ``assert_batches_equal(got, want)``: pyarrow batches equal, float bits compared exactly.
* ``write_mm(batches, schema, fmt, **options)``: the bytes arrowmm writes (``fmt``: file/stream).
* ``pa_read_bytes(data, fmt)``: (schema, batches, per-batch metadata) as pyarrow reads them.
* ``messages(data)``: the messages of an IPC file or stream, parsed by arrowmm.
* ``CASES``: one builder ``(n, nulls) -> pa.Array`` per Arrow type the writer must handle.
"""
from __future__ import annotations

import io
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import arrowmm
from arrowmm.ipc.core.framing import read_message_at
from tests.support.helpers import map_type

FORMATS = ("file", "stream")
N = 37  # rows of a test column: several bitmap bytes, odd


def as_batches(data):
    if isinstance(data, pa.RecordBatch):
        return [data]
    if isinstance(data, pa.Table):
        return data.to_batches()
    return list(data)


def to_mm(data, schema=None) -> list:
    """arrowmm RecordBatches holding the same data as the pyarrow ``data`` (read from a stream
    pyarrow writes in memory, so dictionaries may change from batch to batch)."""
    batches = as_batches(data)
    schema = schema or (data.schema if not isinstance(data, list) else batches[0].schema)
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, schema, options=pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)) as w:
        for b in batches:
            w.write_batch(b)
    return list(arrowmm.open_stream(sink.getvalue()))


def open_writer(sink, schema, fmt, **options):
    return (arrowmm.new_file if fmt == "file" else arrowmm.new_stream)(sink, schema, **options)


def write_mm(batches, schema, fmt, metadata_per_batch=None, **options) -> bytes:
    """What arrowmm writes for ``batches`` in format ``fmt`` (``options``: writer options)."""
    sink = io.BytesIO()
    with open_writer(sink, schema, fmt, **options) as w:
        for i, b in enumerate(batches):
            w.write(b, metadata=metadata_per_batch[i] if metadata_per_batch else None)
    return sink.getvalue()


def _md(md):
    return None if md is None else {k.decode(): v.decode() for k, v in md.to_dict().items()}


def pa_read_bytes(data, fmt):
    """(schema, batches, per-batch custom metadata) of IPC ``data`` as pyarrow reads it."""
    buf = pa.py_buffer(data)
    if fmt == "file":
        r = pa.ipc.open_file(buf)
        pairs = [r.get_batch_with_custom_metadata(i) for i in range(r.num_record_batches)]
    else:
        r = pa.ipc.open_stream(buf)
        pairs = list(r.iter_batches_with_custom_metadata())
    return r.schema, [b for b, _ in pairs], [_md(m) for _, m in pairs]


_FLOAT_BITS = {16: pa.int16(), 32: pa.int32(), 64: pa.int64()}


def _bits_type(ty):
    return _FLOAT_BITS[ty.bit_width] if pa.types.is_floating(ty) else ty


def bits_view(arr):
    """``arr`` with floats seen as same-width integers (NaN == NaN, -0.0 != 0.0), extension
    types as their storage; the rest unchanged."""
    if isinstance(arr.type, pa.BaseExtensionType):
        arr = arr.storage
    if pa.types.is_run_end_encoded(arr.type):  # pyarrow's view() of a sliced one is wrong
        arr = pc.run_end_decode(arr)
    target = map_type(arr.type, _bits_type)
    return arr if target == arr.type else arr.view(target)


def assert_batches_equal(got: pa.RecordBatch, want: pa.RecordBatch, where=""):
    """Same schema (metadata too) and the same values, float bit patterns compared exactly."""
    assert got.schema.equals(want.schema, check_metadata=True), f"{where}: {got.schema} != {want.schema}"
    assert got.num_rows == want.num_rows, where
    for k, (a, b) in enumerate(zip(got.columns, want.columns)):
        try:
            same = bits_view(a).equals(bits_view(b))
        except pa.ArrowNotImplementedError:  # run_end_decode has no kernel for some values (unions)
            same = canonical(a.to_pylist()) == canonical(b.to_pylist())
        if same:
            continue
        # a file has one dictionary per field for all batches, a stream may send deltas:
        # dictionary-encoded columns then differ in their dictionaries, not their values
        assert "dictionary<" in str(a.type), f"{where} column {k}:\n{a.to_pylist()}\n!=\n{b.to_pylist()}"
        assert canonical(a.to_pylist()) == canonical(b.to_pylist()), f"{where} column {k}"


def canonical(v):
    """A Python value compared strictly: NaN equals NaN, -0.0 differs from 0.0, True from 1."""
    if isinstance(v, float):
        return ("nan",) if v != v else ("float", v.hex())
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [canonical(x) for x in v])
    if isinstance(v, dict):
        return ("dict", [(k, canonical(x)) for k, x in v.items()])
    return (type(v).__name__, v)


def messages(data) -> list:
    """Every message of an IPC file (its data section) or stream, parsed by arrowmm."""
    region = arrowmm.Region(data)
    pos = 8 if bytes(data[:6]) == b"ARROW1" else 0
    out = []
    while True:
        msg = read_message_at(region, pos, len(out))
        if msg is None:
            return out
        out.append(msg)
        pos = msg.body.offset + msg.body.size


def dictionary_messages(data) -> list:
    """(id, is_delta, length) of each DictionaryBatch message, in order."""
    return [(m.header.id, bool(m.header.is_delta), m.header.data.length)
            for m in messages(data) if m.kind == "DictionaryBatch"]


# -- one builder per type -------------------------------------------------------------------

def _vals(n, nulls, f):
    return [None if nulls and i % 4 == 1 else f(i) for i in range(n)]


def _prim(ty, f):
    return lambda n, nulls: pa.array(_vals(n, nulls, f), ty)


def _cast(ty, source_type, f):
    return lambda n, nulls: pa.array(_vals(n, nulls, f), source_type).cast(ty)


def _floats(i):
    return [0.5 * i - 3, float("nan"), -0.0, float("inf"), 1e-3][i % 5] if i % 7 else -float(i)


def _sparse_union(n, nulls):
    codes = pa.array([(5, 7, 2)[i % 3] for i in range(n)], pa.int8())
    kids = [pa.array(_vals(n, nulls, lambda i: i - 9), pa.int32()),
            pa.array(_vals(n, nulls, lambda i: "s" * (i % 15))),
            pa.array(_vals(n, nulls, lambda i: i % 2 == 0))]
    return pa.UnionArray.from_sparse(codes, kids, ["i", "s", "b"], [5, 7, 2])


def _dense_union(n, nulls):
    codes = [i % 3 for i in range(n)]
    counts = [codes.count(k) for k in range(3)]
    offsets = [codes[:i].count(codes[i]) for i in range(n)]
    kids = [pa.array(_vals(counts[0], nulls, lambda i: i * 3), pa.int64()),
            pa.array(_vals(counts[1], nulls, lambda i: "d" * (i % 14))),
            pa.array(_vals(counts[2], nulls, lambda i: [i, i + 1]), pa.list_(pa.int16()))]
    return pa.UnionArray.from_dense(pa.array([(3, 1, 0)[c] for c in codes], pa.int8()),
                                    pa.array(offsets, pa.int32()),
                                    kids, ["i", "s", "l"], [3, 1, 0])


def _dictionary(index_type, values=("alpha", "b", None, "delta-long-value")):
    def build(n, nulls):
        idx = pa.array(_vals(n, nulls, lambda i: (i * 5) % len(values)), index_type)
        return pa.DictionaryArray.from_arrays(idx, pa.array(list(values)))
    return build


def _list_of_dictionary(n, nulls):
    offsets = pa.array(_vals(n + 1, False, lambda i: 2 * i), pa.int32())
    kid = _dictionary(pa.int16())(2 * n, nulls)
    arr = pa.ListArray.from_arrays(offsets, kid)
    if nulls:
        arr = pc.if_else(pa.array([i % 4 != 1 for i in range(n)]), arr, None)
    return arr


def _struct_of_dictionary(n, nulls):
    mask = pa.array([bool(nulls) and i % 4 == 1 for i in range(n)], pa.bool_())
    return pa.StructArray.from_arrays([_dictionary(pa.int8())(n, nulls), pa.array(range(n))],
                                      ["d", "x"], mask=mask)


def _dictionary_of_dictionary(n, nulls):
    inner = pa.DictionaryArray.from_arrays(pa.array([1, 0, 2, 1, 0], pa.int8()),
                                           pa.array(["u", "vv", "www"]))
    values = pa.StructArray.from_arrays([inner, pa.array([1, 2, 3, 4, 5])], ["inner", "k"])
    idx = pa.array(_vals(n, nulls, lambda i: (i * 3) % 5), pa.int32())
    return pa.DictionaryArray.from_arrays(idx, values)


def _ree(run_type, value_type, f):
    return lambda n, nulls: pc.run_end_encode(pa.array(_vals(n, nulls, lambda i: f(i // 4)), value_type),
                                              run_end_type=run_type)


def _decimal(ty):
    return _prim(ty, lambda i: Decimal(i * 101 - 1500).scaleb(-2))


_INTS = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]

CASES = {
    "null": lambda n, nulls: pa.nulls(n),
    "bool": _prim(pa.bool_(), lambda i: i % 3 == 0),
    **{str(ty): _prim(ty, (lambda i: (i * 37) % 250) if str(ty).startswith("u") else
                      (lambda i: (i * 37) % 120 - 60)) for ty in _INTS},
    "float16": _cast(pa.float16(), pa.float64(), _floats),
    "float32": _prim(pa.float32(), _floats),
    "float64": _prim(pa.float64(), _floats),
    "decimal32": _decimal(pa.decimal32(7, 2)),
    "decimal64": _decimal(pa.decimal64(15, 2)),
    "decimal128": _decimal(pa.decimal128(38, 2)),
    "decimal256": _decimal(pa.decimal256(76, 2)),
    "date32": _prim(pa.date32(), lambda i: i * 1000 - 5000),
    "date64": _prim(pa.date64(), lambda i: (i * 1000 - 5000) * 86_400_000),
    "time32[s]": _prim(pa.time32("s"), lambda i: i * 2000),
    "time32[ms]": _prim(pa.time32("ms"), lambda i: i * 2_000_000),
    "time64[us]": _prim(pa.time64("us"), lambda i: i * 2_000_000_000),
    "time64[ns]": _prim(pa.time64("ns"), lambda i: i * 2_000_000_000_001),
    "timestamp[s]": _prim(pa.timestamp("s"), lambda i: i * 10**7 - 10**8),
    "timestamp[ms, UTC]": _prim(pa.timestamp("ms", "UTC"), lambda i: i * 10**10),
    "timestamp[us, Europe/Paris]": _prim(pa.timestamp("us", "Europe/Paris"), lambda i: i * 10**13 - 10**14),
    "timestamp[ns, +05:30]": _prim(pa.timestamp("ns", "+05:30"), lambda i: i * 10**16),
    **{f"duration[{u}]": _prim(pa.duration(u), lambda i: i * 12345 - 99999) for u in ("s", "ms", "us", "ns")},
    "month_day_nano_interval": _prim(pa.month_day_nano_interval(),
                                     lambda i: pa.MonthDayNano([i, -i, i * 10**9 + 1])),
    "binary": _prim(pa.binary(), lambda i: bytes([i]) * (i % 9)),
    "string": _prim(pa.string(), lambda i: "é" * (i % 7)),
    "large_binary": _prim(pa.large_binary(), lambda i: b"\x00x" * (i % 6)),
    "large_string": _prim(pa.large_string(), lambda i: "L" * (i % 11)),
    "binary_view": _prim(pa.binary_view(), lambda i: bytes([65 + i % 26]) * (i % 20)),
    "string_view": _prim(pa.string_view(), lambda i: f"view-{i}-" * (i % 4)),
    "fixed_size_binary[5]": _prim(pa.binary(5), lambda i: bytes([i, i + 1, 0, 255, i])),
    "fixed_size_binary[0]": _prim(pa.binary(0), lambda i: b""),
    "list<int32>": _prim(pa.list_(pa.int32()), lambda i: [None if j == 2 else j for j in range(i % 5)]),
    "large_list<string>": _prim(pa.large_list(pa.string()), lambda i: [str(j) * j for j in range(i % 4)]),
    "list_view<int16>": _prim(pa.list_view(pa.int16()), lambda i: list(range(i % 6))),
    "large_list_view<string>": _prim(pa.large_list_view(pa.string()), lambda i: ["a" * (i % 3)] * (i % 3)),
    "fixed_size_list<int64, 3>": _prim(pa.list_(pa.int64(), 3), lambda i: [i, None if i % 3 else -i, 7]),
    "list<list<int8>>": _prim(pa.list_(pa.list_(pa.int8())), lambda i: [[j] * j for j in range(i % 4)]),
    "struct": _prim(pa.struct([("a", pa.int32()), ("b", pa.string()), ("c", pa.struct([("d", pa.bool_())]))]),
                    lambda i: {"a": i, "b": None if i % 3 == 0 else str(i), "c": {"d": i % 2 == 0}}),
    "map<string, int32>": _prim(pa.map_(pa.string(), pa.int32()),
                                lambda i: [(f"k{j}", None if j == 1 else j) for j in range(i % 4)]),
    "map<int8, list<string>> sorted": _prim(pa.map_(pa.int8(), pa.list_(pa.string()), keys_sorted=True),
                                            lambda i: [(j, ["x"] * j) for j in range(i % 3)]),
    "sparse_union": _sparse_union,
    "dense_union": _dense_union,
    **{f"dictionary<string, {ty}>": _dictionary(ty) for ty in _INTS},
    "dictionary<int64, uint8> ordered": lambda n, nulls: pa.DictionaryArray.from_arrays(
        pa.array(_vals(n, nulls, lambda i: i % 3), pa.uint8()), pa.array([10, -20, 30]), ordered=True),
    "list<dictionary>": _list_of_dictionary,
    "struct<dictionary>": _struct_of_dictionary,
    "dictionary<struct<dictionary>>": _dictionary_of_dictionary,
    "run_end_encoded<int16, string>": _ree(pa.int16(), pa.string(), lambda k: "r" * k),
    "run_end_encoded<int32, float64>": _ree(pa.int32(), pa.float64(), lambda k: k / 2),
    "run_end_encoded<int64, list<int8>>": _ree(pa.int64(), pa.list_(pa.int8()), lambda k: [k] * (k % 3)),
    "extension<arrow.uuid>": _prim(pa.uuid(), lambda i: bytes([i]) * 16),
}

#: bit offsets that are not multiples of 8, an empty slice, the last row, the whole batch
SLICES = ((0, None), (1, None), (3, 7), (9, 11), (13, 0), (N - 1, 1), (5, N - 10), (N, 0))


def case_table(case: str, nulls: bool, n: int = N) -> pa.Table:
    """A two-column table: the case's column and a plain int32 column."""
    col = CASES[case](n, nulls)
    col.validate(full=True)
    return pa.table({"c": col, "i": pa.array(range(n), pa.int32())})


def interval_array(unit: str, n: int, nulls: bool) -> arrowmm.Array:
    """An arrowmm month / day_time interval array (pyarrow cannot build these)."""
    from arrowmm._core._bitmap import pack_bitmap
    from arrowmm._core._region import as_view
    from arrowmm.arrays.array import make_array
    if unit == "month":
        dtype, values = arrowmm.month_interval(), np.arange(n, dtype="<i4") * 7 - 50
    else:
        dtype = arrowmm.day_time_interval()
        values = np.stack([np.arange(n) - 3, np.arange(n) * 1000], axis=1).astype("<i4")
    valid = np.array([not (nulls and i % 4 == 1) for i in range(n)])
    bitmap = as_view(pack_bitmap(valid)[0]) if nulls else None
    return make_array(dtype, n, [bitmap, as_view(values)], null_count=int((~valid).sum()))
