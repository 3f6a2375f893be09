"""Byte-order conversion: big-endian buffers become native values, and back."""
import numpy as np
import pytest

from arrowmm._region import as_view
from arrowmm.byteorder import byteswap
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
