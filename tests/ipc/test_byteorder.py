"""Byte-order conversion: big-endian buffers become native values, and back."""
import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm._core._region import as_view
from arrowmm.ipc.core.byteorder import byteswap
from arrowmm.errors import ArrowInvalid


@pytest.mark.parametrize("dtype", ["i2", "i4", "i8", "u8", "f2", "f4", "f8"])
def test_fixed_width_swap(dtype):
    values = np.array([0, 1, -1 if dtype[0] != "u" else 7, 123, 2], dtype="<" + dtype)
    big = values.astype(">" + dtype).tobytes()
    native = np.frombuffer(byteswap(as_view(big), np.dtype(dtype).itemsize), dtype="<" + dtype)
    np.testing.assert_array_equal(native, values)


@pytest.mark.parametrize("width", [16, 32])
def test_decimal_swap_reverses_whole_integers(width):
    ints = [0, 1, -1, 2**100 - 3, -(2**120)]
    big = b"".join(v.to_bytes(width, "big", signed=True) for v in ints)
    out = byteswap(as_view(big), width).to_bytes()
    got = [int.from_bytes(out[i:i + width], "little", signed=True) for i in range(0, len(out), width)]
    assert got == ints


def test_month_day_nano_swap():
    mdn = np.dtype([("m", "<i4"), ("d", "<i4"), ("n", "<i8")])
    values = np.array([(1, -2, 3_000_000_007), (-5, 6, -7)], dtype=mdn)
    big = values.astype(mdn.newbyteorder(">")).tobytes()
    back = np.frombuffer(byteswap(as_view(big), "mdn"), dtype=mdn)
    assert back.tolist() == values.tolist()


def _view(size, payload, buffer_index=0, offset=0, order="<"):
    head = np.array([size], dtype=order + "i4").tobytes()
    if size <= 12:
        return head + payload.ljust(12, b"\0")
    return head + payload[:4] + np.array([buffer_index, offset], dtype=order + "i4").tobytes()


def test_binary_views_swap_both_ways():
    native = _view(3, b"abc") + _view(20, b"long value here.....", 2, 40)
    big = _view(3, b"abc", order=">") + _view(20, b"long value here.....", 2, 40, order=">")
    assert byteswap(as_view(big), "views", from_big=True).to_bytes() == native
    assert byteswap(as_view(native), "views", from_big=False).to_bytes() == big


def test_ragged_buffers_are_refused():
    with pytest.raises(ArrowInvalid, match="multiple"):
        byteswap(as_view(b"\0" * 7), 4)
    with pytest.raises(ArrowInvalid, match="multiple of 16"):
        byteswap(as_view(b"\0" * 17), "views")


# -- whole files: arrowmm writes big-endian, pyarrow (which swaps to native) and arrowmm read ----


def _big_endian_table():
    n = 7
    return pa.table({
        "i16": pa.array([1, -2, None, 300, 4, 5, -6], pa.int16()),
        "i64": pa.array(range(-3, n - 3), pa.int64()),
        "u32": pa.array([1, 2, 3, 4, 5, 6, 4_000_000_000], pa.uint32()),
        "f32": pa.array([0.5, None, -1.25, 3, 4, 5, 6], pa.float32()),
        "f64": pa.array([0.1 * i for i in range(n)]),
        "dec": pa.array([1, -2, 3, None, 5, 6, 10**30], pa.decimal128(38, 2)),
        "d256": pa.array([1, -2, 3, None, 5, 6, -(10**60)], pa.decimal256(70, 0)),
        "ts": pa.array([0, 1, None, 3, 4, 5, 10**15], pa.timestamp("us", "UTC")),
        "date": pa.array([0, 1, 2, 3, 4, 5, 20_000], pa.date32()),
        "mdn": pa.array([(1, 2, 3), None, (-1, -2, -3_000_000_000), (0, 0, 0), (4, 5, 6), (7, 8, 9),
                         (10, 11, 12)], pa.month_day_nano_interval()),
        "s": pa.array(["a", "bb", None, "ccc", "", "long string over twelve", "z"]),
        "ls": pa.array(["a", None, "b", "c", "d", "e", "f"], pa.large_string()),
        "l": pa.array([[1, 2], None, [], [3], [4, 5, 6], [7], [8]], pa.list_(pa.int32())),
        "lv": pa.array([[1, 2], None, [], [3], [4, 5, 6], [7], [8]], pa.list_view(pa.int64())),
        "st": pa.array([{"a": i, "b": str(i)} for i in range(n)]),
        "dict": pa.array(["x", "y", "x", None, "z", "y", "x"]).dictionary_encode(),
        "du": pa.UnionArray.from_dense(pa.array([0, 1, 0, 1, 0, 1, 0], pa.int8()),
                                       pa.array([0, 0, 1, 1, 2, 2, 3], pa.int32()),
                                       [pa.array([1, 2, 3, 4]), pa.array(["a", "b", "c"])]),
    })


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_big_endian_files_read_back_in_pyarrow_and_arrowmm(tmp_path, fmt):
    table = _big_endian_table()
    src = tmp_path / "src.arrow"
    with pa.ipc.new_file(src, table.schema) as w:
        w.write_table(table)
    batch = arrowmm.open_file(src).get_batch(0)
    out = tmp_path / f"big.{fmt}"
    make = arrowmm.new_file if fmt == "file" else arrowmm.new_stream
    with make(out, batch.schema, endianness="big") as w:
        w.write(batch)
        w.write(batch.slice(2, 4))
    back = (pa.ipc.open_file(out) if fmt == "file" else pa.ipc.open_stream(out)).read_all()
    assert back.equals(pa.concat_tables([table, table.slice(2, 4)]))  # pyarrow swaps to native
    reader = arrowmm.open_file(out) if fmt == "file" else arrowmm.open_stream(out)
    assert reader.schema.endianness == "big"
    batches = list(reader)
    assert batches[0].to_pylist() == table.to_pylist()
    assert batches[1].to_pylist() == table.slice(2, 4).to_pylist()
    batches[0].validate(full=True)
    assert reader.stats.buffers_swapped > 0


def test_big_endian_views_and_run_ends_round_trip_in_arrowmm(tmp_path):
    """pyarrow cannot swap string_view or run-end encoded arrays (not implemented there)."""
    values = ["short", "a value longer than twelve bytes", None, "x", "", "y" * 30]
    batch = arrowmm.record_batch({"sv": arrowmm.array(values, arrowmm.string_view()),
                                  "bv": arrowmm.array([v.encode() if v else None for v in values],
                                                      arrowmm.binary_view()),
                                  "ree": arrowmm.array([1.5, 1.5, None, None, None, 3.0],
                                                       arrowmm.run_end_encoded(arrowmm.int16(),
                                                                               arrowmm.float64()))})
    out = tmp_path / "views.arrow"
    with arrowmm.new_file(out, batch.schema, endianness="big") as w:
        w.write(batch)
    reader = arrowmm.open_file(out)
    back = reader.get_batch(0)
    assert back.to_pydict() == batch.to_pydict()
    back.validate(full=True)
    assert reader.stats.buffers_swapped >= 2
