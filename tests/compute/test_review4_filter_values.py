"""Filter values as pyarrow takes them (review s45 #4), each judged against pyarrow's answer
on the same column read back by arrowmm: numpy datetime64 values past datetime64[ns]'s years
(W1), NaT as a null (W2), values of the wrong kind on time, duration, interval and
fixed-size binary columns (W3), time / timedelta / date / datetime values (E1), float32
``isin`` (O2), pyarrow scalars and arrays as values (E4)."""
from __future__ import annotations

import datetime

import numpy as np
import pytest

import arrowmm

from tests.support.helpers import ipc_bytes

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")


def _read_back(table):
    return arrowmm.open_file(ipc_bytes(table)).read_all()


def _rows(table):
    return table.column("i").to_pylist()


def _same_rows(table, make):
    """The rows ``make(field)`` keeps, by arrowmm (Table.filter and compute.filter) and by
    pyarrow; asserts they agree and returns them."""
    expect = _rows(table.filter(make(pc.field)))
    mt = _read_back(table)
    assert _rows(mt.filter(make(arrowmm.field))) == expect
    assert _rows(arrowmm.compute.filter(mt, make(arrowmm.field))) == expect
    return expect


def _timestamps(unit="us"):
    return pa.table({"x": pa.array([datetime.datetime(2020, 1, 1), datetime.datetime(2024, 6, 1),
                                    None], pa.timestamp(unit)), "i": pa.array([0, 1, 2])})


def _ns(when: datetime.datetime, extra_ns: int = 0) -> int:
    """``when`` (naive) in nanoseconds since the epoch, by Python's own arithmetic."""
    delta = when - datetime.datetime(1970, 1, 1)
    return ((delta.days * 86_400 + delta.seconds) * 10**6 + delta.microseconds) * 1000 + extra_ns


#: numpy values pyarrow cannot take (units D, Y, M, past the ns years) and their instants.
_DATETIME64 = [
    (np.datetime64("9999-12-31T00:00:00"), _ns(datetime.datetime(9999, 12, 31))),
    (np.datetime64("1000-01-01", "D"), _ns(datetime.datetime(1000, 1, 1))),
    (np.datetime64("2263-01-01", "D"), _ns(datetime.datetime(2263, 1, 1))),
    (np.datetime64("2020", "Y"), _ns(datetime.datetime(2020, 1, 1))),
    (np.datetime64("2024-06", "M"), _ns(datetime.datetime(2024, 6, 1))),
    (np.datetime64("2020-01-01T00:00:00.000000001", "ns"), _ns(datetime.datetime(2020, 1, 1), 1)),
]


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
@pytest.mark.parametrize("value, instant", _DATETIME64, ids=str)
def test_datetime64_values_compare_exactly_past_the_ns_years(unit, value, instant):
    table = _timestamps(unit)
    mt = _read_back(table)
    stored = [_ns(v) if v is not None else None for v in table.column("x").to_pylist()]
    for op, f in (("<", lambda a, b: a < b), (">", lambda a, b: a > b),
                  ("==", lambda a, b: a == b), ("!=", lambda a, b: a != b)):
        expr = {"<": arrowmm.field("x") < value, ">": arrowmm.field("x") > value,
                "==": arrowmm.field("x") == value, "!=": arrowmm.field("x") != value}[op]
        expect = [i for i, ns in enumerate(stored) if ns is not None and f(ns, instant)]
        assert _rows(mt.filter(expr)) == expect, op


def test_a_far_datetime64_bound_keeps_the_rows():
    far, old = np.datetime64("9999-12-31T00:00:00"), np.datetime64("1000-01-01T00:00:00")
    assert _same_rows(_timestamps(), lambda f: f("x") < far) == [0, 1]
    assert _same_rows(_timestamps(), lambda f: f("x") > old) == [0, 1]


@pytest.mark.parametrize("nat", [np.datetime64("NaT", "us"), np.datetime64("NaT", "s")])
def test_nat_is_a_null_filter_value(nat):
    for make in (lambda f: f("x") > nat, lambda f: f("x") != nat, lambda f: f("x") <= nat,
                 lambda f: f("x") == nat):
        assert _same_rows(_timestamps(), make) == []
    assert _same_rows(_timestamps(), lambda f: f("x").isin([nat])) == [2]
    assert _same_rows(_timestamps(), lambda f: ~f("x").isin([nat])) == [0, 1]


def test_nat_is_null_against_the_smallest_timestamp():
    table = pa.table({"x": pa.array([-2**63, 0], pa.timestamp("us")), "i": pa.array([0, 1])})
    assert _same_rows(table, lambda f: f("x") <= np.datetime64("NaT", "us")) == []
