"""Comparisons of decimal columns with numbers are exact and vectorised: the stored unscaled
integers against the number times 10**scale (in C where every value fits an int64, by 64-bit
words past it).  Checked against Python's exact Decimal comparisons over every decimal width,
values at the type's extremes, scalars between two representable values and past the type."""
from __future__ import annotations

import decimal
import operator

import numpy as np
import pyarrow as pa
import pytest

import arrowmm
from arrowmm import compute as amc
from tests.support.helpers import column_read_back

OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
       ">": operator.gt, ">=": operator.ge}
EXPR = {"==": lambda f, v: f == v, "!=": lambda f, v: f != v, "<": lambda f, v: f < v,
        "<=": lambda f, v: f <= v, ">": lambda f, v: f > v, ">=": lambda f, v: f >= v}


def _column(dtype: pa.DataType, unscaled: list):
    width = dtype.bit_width // 8
    raw = b"".join(v.to_bytes(width, "little", signed=True) for v in unscaled)
    arr = pa.Array.from_buffers(dtype, len(unscaled), [None, pa.py_buffer(raw)])
    arr.validate(full=True)
    return arr


def _cases(dtype, rng):
    p, s = dtype.precision, dtype.scale
    top = 10 ** p - 1
    ints = [0, 1, -1, top, -top, top - 1, 2 ** 63 - 1, -2 ** 63, 2 ** 63, -2 ** 63 - 1, 12345]
    ints += [int(x) for x in rng.integers(-min(top, 2 ** 62), min(top, 2 ** 62), 40)]
    ints = [v for v in ints if -top <= v <= top]
    scale = decimal.Decimal(10) ** -s
    scalars = [decimal.Decimal(v) * scale for v in ints[:8]]
    scalars += [decimal.Decimal(ints[6 % len(ints)]) * scale + scale / 2,  # between two values
                decimal.Decimal(top + 1) * scale, -decimal.Decimal(top + 1) * scale,  # past the type
                decimal.Decimal(10) ** (p + 5), 0, 7, -3, 0.5, -1e300, 1e300]
    return ints, scalars


@pytest.mark.parametrize("dtype", [pa.decimal32(7, 2), pa.decimal64(15, 3), pa.decimal128(12, 2),
                                   pa.decimal128(38, 18), pa.decimal128(38, 0), pa.decimal256(76, 10),
                                   pa.decimal256(40, -3)], ids=str)
def test_decimal_comparisons_are_exact(dtype):
    with decimal.localcontext(prec=200):  # (exact: the default context rounds to 28 digits)
        _compare_all(dtype)


def _compare_all(dtype):
    rng = np.random.default_rng(dtype.precision)
    ints, scalars = _cases(dtype, rng)
    col, _ = column_read_back(_column(dtype, ints))
    exact = [decimal.Decimal(v).scaleb(-dtype.scale) for v in ints]
    batch = arrowmm.record_batch([col], names=["d"])
    for value in scalars:
        for op, f in OPS.items():
            want = [i for i, d in enumerate(exact) if f(d, decimal.Decimal(value) if not isinstance(value, float)
                                                      else decimal.Decimal(value))]
            got = amc.filter(batch, EXPR[op](arrowmm.field("d"), value)).column("d")
            assert len(got) == len(want), (op, value)
            assert got.to_pylist() == [col.to_pylist()[i] for i in want], (op, value)


def test_nan_and_infinities_against_decimals():
    col, _ = column_read_back(_column(pa.decimal128(38, 2), [1, -(10 ** 37), 10 ** 37]))
    batch = arrowmm.record_batch([col], names=["d"])
    f = arrowmm.field("d")
    assert amc.filter(batch, f == float("nan")).num_rows == 0
    assert amc.filter(batch, f != float("nan")).num_rows == 3
    assert amc.filter(batch, f < float("inf")).num_rows == 3
    assert amc.filter(batch, f > float("-inf")).num_rows == 3
    assert amc.filter(batch, f > float("inf")).num_rows == 0
    assert amc.filter(batch, f == decimal.Decimal("NaN")).num_rows == 0
    assert amc.filter(batch, f < decimal.Decimal("Infinity")).num_rows == 3


def test_nulls_stay_out_of_decimal_comparisons():
    arr = pa.array([decimal.Decimal("1.50"), None, decimal.Decimal("-2.25")], pa.decimal128(20, 2))
    col, _ = column_read_back(arr)
    batch = arrowmm.record_batch([col], names=["d"])
    assert amc.filter(batch, arrowmm.field("d") != 0).column("d").to_pylist() == \
        [decimal.Decimal("1.50"), decimal.Decimal("-2.25")]
