"""Non-finite ``Decimal`` filter values (review 23: F4): an integer column compared with a NaN
or infinite Decimal raised a bare ``TypeError`` ("must be real number, not NoneType") naming
neither the column nor the value, and a signaling NaN raised ``ValueError`` or
``decimal.InvalidOperation`` on float and decimal columns.  pyarrow cannot make any of them a
scalar, so arrowmm refuses them with ``ArrowInvalid`` naming the filter, before any data is read.
"""
from __future__ import annotations

import decimal

import pytest

import arrowmm
from arrowmm.errors import ArrowInvalid

from tests.support.helpers import ipc_bytes

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

D = decimal.Decimal
OPS = ["==", "!=", "<", "<=", ">", ">="]


def _ints(dtype=pa.int64()):
    return arrowmm.open_file(ipc_bytes(pa.table({"x": pa.array([1, 2, None], dtype)}))).read_all()


@pytest.mark.parametrize("literal", ["-Infinity", "Infinity", "NaN"])
@pytest.mark.parametrize("dtype", [pa.int8(), pa.int64(), pa.uint64(),
                                   pa.dictionary(pa.int32(), pa.int16())], ids=str)
def test_integer_column_against_a_non_finite_decimal_is_refused_by_name(dtype, literal):
    with pytest.raises((TypeError, pa.ArrowInvalid)):  # (pyarrow cannot make it a scalar)
        pc.field("x") > pa.scalar(D(literal))
    table = _ints(dtype)
    for op in OPS:
        expr = arrowmm.field("x")._compare(op, D(literal))
        with pytest.raises(ArrowInvalid, match=rf"'x' {op} Decimal\('{literal}'\).*float\("):
            table.filter(expr)
        with pytest.raises(ArrowInvalid, match=rf"'x' {op} Decimal\('{literal}'\)"):
            arrowmm.compute.filter(table, expr)


def test_a_dataset_refuses_it_before_reading(tmp_path):
    path = str(tmp_path / "x.arrow")
    arrowmm.write_file(path, pa.table({"x": pa.array([1, 2, 3], pa.int64())}), statistics=True)
    for expr in [arrowmm.field("x") > D("-Infinity"), arrowmm.field("x") == D("NaN"),
                 (arrowmm.field("x") < D("Infinity")) | (arrowmm.field("x") == 1)]:
        with pytest.raises(ArrowInvalid, match=r"column 'x' is int64"):
            arrowmm.dataset(path).to_table(filter=expr)
    with pytest.raises(ArrowInvalid, match=r"Decimal\('-Infinity'\)"):
        arrowmm.dataset(path).to_table(filter=[("x", ">", D("-Infinity"))])


@pytest.mark.parametrize("dtype", [pa.int64(), pa.float64(), pa.float16(), pa.decimal128(10, 2),
                                   pa.decimal256(40, 0)], ids=str)
def test_a_signaling_nan_is_refused_on_every_number_column(dtype):
    table = arrowmm.open_file(ipc_bytes(pa.table({"x": pa.array([1, 2], dtype)}))).read_all()
    snan = D("sNaN")
    for expr in [arrowmm.field("x") > snan, arrowmm.field("x") != snan,
                 arrowmm.field("x").isin([1, snan])]:
        with pytest.raises(ArrowInvalid, match=r"Decimal\('sNaN'\).*signaling NaN"):
            table.filter(expr)
