"""``arrowmm.compute.temporal.stored_units``: a temporal filter value in a column's unit,
exactly, judged against integer arithmetic on the instant's nanoseconds (review 27: F3, a
pandas Timestamp's nanoseconds were counted twice, 1500 ns taken as 2000 ns)."""
from __future__ import annotations

from fractions import Fraction

import pytest

import arrowmm
from arrowmm.compute.temporal import stored_units

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

_NS_PER = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
#: nanoseconds since the epoch with sub-microsecond parts, before and after it
_INSTANTS = [1500, 2, -1, -1500, 1_600_000_000_123_456_789, -1_600_000_000_123_456_789]


@pytest.mark.parametrize("ns", _INSTANTS)
@pytest.mark.parametrize("tz", [None, "UTC", "Europe/Paris"])
@pytest.mark.parametrize("unit", list(_NS_PER))
def test_a_pandas_timestamp_counts_its_nanoseconds_once(ns, tz, unit):
    value = pd.Timestamp(ns, unit="ns", tz=tz)
    column = arrowmm.timestamp(unit, "UTC" if tz else None)
    assert stored_units(column, value, "x") == Fraction(ns, _NS_PER[unit])
    if tz is None:
        assert stored_units(arrowmm.date64(), value, "x") == Fraction(ns, 10**6)


def _one_row_batches(path, column):
    """``column`` written one row per batch, so that statistics prune batch by batch."""
    batches = [pa.record_batch({"t": column.slice(i, 1)}) for i in range(len(column))]
    arrowmm.write_file(path, pa.Table.from_batches(batches))
    return arrowmm.dataset(path)


_OPS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


@pytest.mark.parametrize("unit", list(_NS_PER))
def test_a_filter_with_a_pandas_timestamp_keeps_the_rows_its_exact_instant_does(tmp_path, unit):
    ns = 1_600_000_000_999_999_999  # (its nanoseconds counted twice cross every unit)
    near = ns // _NS_PER[unit]
    stored = [near - 1, near, near + 1, -near, 0]
    column = pa.array(stored + [None], pa.int64()).cast(pa.timestamp(unit))
    ds = _one_row_batches(str(tmp_path / "t.arrow"), column)
    table = arrowmm.table({"t": arrowmm.array(column)})
    value = pd.Timestamp(ns, unit="ns")
    for op, holds in _OPS.items():
        want = [s for s in stored if holds(s * _NS_PER[unit], ns)]
        expr = holds(arrowmm.field("t"), value)
        for got in (pa.table(ds.to_table(filter=[("t", op, value)])),
                    pa.table(ds.to_table(filter=expr)),
                    pa.table(arrowmm.compute.filter(table, expr))):
            assert got["t"].cast(pa.int64()).to_pylist() == want, op
        assert ds.count_rows(filter=[("t", op, value)]) == len(want), op
    at = [s for s in stored if s * _NS_PER[unit] == ns]
    assert pa.table(ds.to_table(filter=[("t", "in", [value])]))["t"].cast(
        pa.int64()).to_pylist() == at
