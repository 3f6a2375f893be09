"""Sort keys pyarrow sorts and arrowmm refused (review s45 #4, E2): decimals of every width,
fixed-size binary, null and struct columns, against ``pyarrow.compute.sort_indices`` on the
same data, whole and sliced, in both orders and under a second key."""
from __future__ import annotations

import decimal

import pytest

import arrowmm

from tests.support.helpers import ipc_bytes

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

D = decimal.Decimal

COLUMNS = {
    "decimal32": pa.array([D("1.50"), None, D("-2.25"), D("1.50"), D("0.00"), D("-0.01")],
                          pa.decimal32(5, 2)),
    "decimal64": pa.array([D("1.5"), None, D("-99999999.9"), D("1.5"), D("0.0"), D("2.0")],
                          pa.decimal64(10, 1)),
    "decimal128": pa.array([D("1.50"), None, D("-2.25"), D("1.50"), D("0.00"),
                            D("99999999999999999999999999999999999.99")], pa.decimal128(37, 2)),
    "decimal256": pa.array([D("1.5"), None, D("-2.2"), D("0.0"), D("-1" + "0" * 60), D("7.7")],
                           pa.decimal256(70, 1)),
    "decimal128 words": pa.array([D(2**63), D(2**63 - 1), D(-1), D(-2**64), D(2**64), None],
                                 pa.decimal128(38, 0)),  # (a low word past 2**63, signs)
    "decimal256 words": pa.array([D(2**191), D(-2**128), D(2**128 - 1), D(-1), D(2**64), None],
                                 pa.decimal256(76, 0)),
    "fixed_size_binary": pa.array([b"\xff\x00", None, b"\x00\x01", b"\x00\x00", b"\x00\x01",
                                   b"\x7f\x80"], pa.binary(2)),
    "null": pa.array([None] * 6, pa.null()),
    "struct": pa.array([{"a": 2, "b": "x"}, None, {"a": None, "b": "y"}, {"a": 2, "b": None},
                        {"a": 1, "b": "a"}, {"a": 2, "b": "a"}]),
    "struct with NaN": pa.array([{"a": 2.0}, {"a": float("nan")}, {"a": None}, {"a": 1.0}, None,
                                 {"a": float("nan")}]),
    "nested struct": pa.array([{"s": {"d": D("1.1")}, "k": 1}, {"s": None, "k": 0},
                               {"s": {"d": None}, "k": 2}, None, {"s": {"d": D("-1.1")}, "k": 3},
                               {"s": {"d": D("1.1")}, "k": 0}],
                              pa.struct([("s", pa.struct([("d", pa.decimal128(4, 1))])),
                                         ("k", pa.int8())])),
}


@pytest.mark.parametrize("name", COLUMNS)
@pytest.mark.parametrize("order", ["ascending", "descending"])
@pytest.mark.parametrize("offset", [0, 1])
def test_sorts_as_pyarrow(name, order, offset):
    table = pa.table({"x": COLUMNS[name], "y": pa.array([3, 1, 2, 1, 3, 2])}).slice(offset)
    mt = arrowmm.open_file(ipc_bytes(pa.table({"x": COLUMNS[name],
                                               "y": pa.array([3, 1, 2, 1, 3, 2])}))).read_all()
    mt = mt.slice(offset)
    if name in ("decimal32", "decimal64"):  # (pyarrow sorts neither: as decimal128)
        table = table.set_column(0, "x", table["x"].cast(pa.decimal128(20, COLUMNS[name].type.scale)))
    for keys in ([("x", order)], [("x", order), ("y", "descending")], [("y", order), ("x", order)]):
        expect = pc.sort_indices(table, sort_keys=keys).to_pylist()
        assert arrowmm.compute.sort_indices(mt, keys).to_pylist() == expect, keys
        assert mt.sort_by(keys).column("y").to_pylist() == table.sort_by(keys)["y"].to_pylist()


def test_a_null_struct_over_a_field_value_sorts_as_null():
    """The field's slot under a null struct holds 1: the row is null, not the smallest."""
    column = pa.StructArray.from_arrays([pa.array([5, 1, 3])], names=["a"],
                                        mask=pa.array([False, True, False]))
    table = pa.table({"x": column})
    mt = arrowmm.open_file(ipc_bytes(table)).read_all()
    for order in ("ascending", "descending"):
        assert arrowmm.compute.sort_indices(mt, [("x", order)]).to_pylist() == \
            pc.sort_indices(table, sort_keys=[("x", order)]).to_pylist()
