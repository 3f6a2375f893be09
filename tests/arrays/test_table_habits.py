"""The pyarrow habits users bring to tables and batches (issue 31), pyarrow as the oracle:
``arrowmm.table`` / ``chunked_array`` / ``concat_tables``, ``Table`` and ``RecordBatch``
``from_pydict`` / ``from_pylist`` / ``from_arrays``, and the methods that return a new table or
batch with a column more, less, other or renamed: same values, types, errors, and zero-copy
where pyarrow is."""

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

import arrowmm


def _same(got, want):
    """``got`` (arrowmm) has ``want``'s (pyarrow) schema, metadata included, and values."""
    got = pa.record_batch(got) if isinstance(got, arrowmm.RecordBatch) else pa.table(got)
    assert got.schema.equals(want.schema, check_metadata=True), (got.schema, want.schema)
    assert got.to_pydict() == want.to_pydict()


def _table_pair():
    """A table of three chunks (two of them slices) in pyarrow and the same in arrowmm."""
    whole = pa.table({"x": pa.array([1, None, 3, 4, 5, 6], pa.int64()),
                      "s": ["a", "b", None, "d", "e", "f"]})
    pt = pa.Table.from_batches(whole.slice(1).to_batches(max_chunksize=2))
    return pt, arrowmm.Table.from_batches([arrowmm.record_batch(b) for b in pt.to_batches()])


def _same_error(call_pa, call_am):
    """Both raise; the arrowmm error has pyarrow's class name and base (ValueError, KeyError,
    TypeError), and a message."""
    with pytest.raises(Exception) as want:
        call_pa()
    with pytest.raises(Exception) as got:
        call_am()
    assert type(got.value).__name__ == type(want.value).__name__, (got.value, want.value)
    for base in (ValueError, KeyError, TypeError):
        assert isinstance(got.value, base) == isinstance(want.value, base), got.value
    assert str(got.value)


def test_table_from_columns_as_pyarrow_builds_it():
    col = np.arange(4, dtype=np.int32)
    data = {"i": col, "s": ["a", None, "c", "d"], "f": [0.5, None, 1.5, 2.0]}
    _same(arrowmm.table(data), pa.table(data))
    _same(arrowmm.table(data, metadata={"k": "v"}), pa.table(data, metadata={"k": "v"}))
    schema = [("s", pa.string()), ("i", pa.int64())]
    _same(arrowmm.table(data, schema=arrowmm.schema([("s", "string"), ("i", "int64")])),
          pa.table({"s": data["s"], "i": col.astype(np.int64)}, schema=pa.schema(schema)))
    # a column of another type than the schema's is cast, as pyarrow's
    _same(arrowmm.table({"a": arrowmm.array([1, 2])}, schema=arrowmm.schema([("a", "int32")])),
          pa.table({"a": pa.array([1, 2])}, schema=pa.schema([("a", pa.int32())])))
    _same(arrowmm.table([[1, 2], ["a", "b"]], names=["n", "t"]),
          pa.table([[1, 2], ["a", "b"]], names=["n", "t"]))
    _same(arrowmm.Table.from_pylist([{"a": 1}, {"a": 2, "b": "x"}]),
          pa.Table.from_pylist([{"a": 1}, {"a": 2, "b": "x"}]))
    empty = arrowmm.table({"e": arrowmm.array([], arrowmm.int16())})
    _same(empty, pa.table({"e": pa.array([], pa.int16())}))
    assert empty.column("e").num_chunks == 1  # (pyarrow's: one empty chunk)
    # a numpy column is used without a copy, and chunked columns keep their chunks
    t = arrowmm.table({"i": col})
    assert np.shares_memory(t.column("i").to_numpy(), col)
    chunked = arrowmm.table({"c": arrowmm.chunked_array([[1, 2], [3]]),
                             "d": arrowmm.chunked_array([[1], [2, 3]])})
    assert [b.num_rows for b in chunked.to_batches()] == [1, 1, 1]
    assert chunked.to_pydict() == {"c": [1, 2, 3], "d": [1, 2, 3]}


def test_table_from_producers_is_zero_copy():
    pt = pa.table({"x": np.arange(5, dtype=np.int64), "s": list("abcde")})
    t = arrowmm.table(pt)
    _same(t, pt)
    assert np.shares_memory(t.column("x").to_numpy(), pt.column("x").to_numpy())
    frame = pl.DataFrame({"x": np.arange(3, dtype=np.int64)})
    t = arrowmm.table(frame)
    assert t.to_pydict() == {"x": [0, 1, 2]}
    assert np.shares_memory(t.column("x").to_numpy(), frame["x"].to_numpy())
    b = arrowmm.record_batch({"x": [1, 2]})
    assert arrowmm.table(b).to_batches()[0] is b
    assert arrowmm.table(pt, metadata={"k": "v"}).schema.metadata == {"k": "v"}


def test_chunked_array_as_pyarrow():
    c = arrowmm.chunked_array([[1, 2], [], [None]])
    want = pa.chunked_array([[1, 2], [], [None]])
    assert c.num_chunks == want.num_chunks and c.to_pylist() == want.to_pylist()
    assert str(c.type) == str(want.type)
    typed = arrowmm.chunked_array([[1], [2]], type="int8")
    assert str(typed.type) == "int8" and typed.to_pylist() == [1, 2]
    assert arrowmm.chunked_array([], type=arrowmm.string()).num_chunks == 0
    a = arrowmm.array([1, 2, 3]).slice(1)
    assert arrowmm.chunked_array([a]).chunk(0) is a
    foreign = arrowmm.chunked_array(pa.chunked_array([[1], [2, 3]]))
    assert foreign.num_chunks == 2 and foreign.to_pylist() == [1, 2, 3]
    _same_error(lambda: pa.chunked_array([]), lambda: arrowmm.chunked_array([]))
    _same_error(lambda: pa.chunked_array([pa.array([1]), pa.array(["a"])]),
                lambda: arrowmm.chunked_array([arrowmm.array([1]), arrowmm.array(["a"])]))


def test_concat_tables_shares_the_batches():
    pt, t = _table_pair()
    got = arrowmm.concat_tables([t, t.slice(2)])
    _same(got, pa.concat_tables([pt, pt.slice(2)]))
    assert got.to_batches()[0] is t.to_batches()[0]
    other = arrowmm.table({"y": [1]})
    _same_error(lambda: pa.concat_tables([pt, pa.table({"y": [1]})]),
                lambda: arrowmm.concat_tables([t, other]))


@pytest.mark.parametrize("method, args", [
    ("append_column", ("n", [[10, 20], [30], [40, 50]])),
    ("append_column", (pa.field("n", pa.float64()), [[1.0] * 5])),
    ("add_column", (0, "n", [list(range(5))])),
    ("add_column", (2, "n", [list(range(5))])),
    ("set_column", (1, "s2", [["p", "q", "r", "s", "t"]])),
    ("set_column", (2, "s2", [["p", "q", "r", "s", "t"]])),  # (appends, as pyarrow's)
    ("remove_column", (0,)),
    ("drop_columns", ("s",)),
    ("drop_columns", (["x", "s"],)),
    ("rename_columns", (["a", "b"],)),
    ("rename_columns", ({"s": "t"},)),
    ("replace_schema_metadata", ({"k": "v"},)),
    ("combine_chunks", ()),
])
def test_table_methods_as_pyarrow(method, args):
    pt, t = _table_pair()
    before = t.to_pydict()
    am_args = tuple(arrowmm.field(a.name, str(a.type)) if isinstance(a, pa.Field) else
                    arrowmm.chunked_array(a) if isinstance(a, list) and a and
                    isinstance(a[0], list) else a for a in args)
    pa_args = tuple(pa.chunked_array(a) if isinstance(a, list) and a and
                    isinstance(a[0], list) else a for a in args)
    got = getattr(t, method)(*am_args)
    _same(got, getattr(pt, method)(*pa_args))
    assert t.to_pydict() == before and t.column_names == ["x", "s"]  # (never in place)
    if method == "combine_chunks":
        assert len(got.to_batches()) == 1


@pytest.mark.parametrize("call", [
    lambda tab, mod: tab.append_column("n", mod.chunked_array([[1, 2]])),  # wrong length
    lambda tab, mod: tab.add_column(5, "n", mod.chunked_array([[1] * 5])),
    lambda tab, mod: tab.set_column(3, "n", mod.chunked_array([[1] * 5])),
    lambda tab, mod: tab.remove_column(2),
    lambda tab, mod: tab.drop_columns(["x", "nope"]),
    lambda tab, mod: tab.rename_columns({"nope": "n"}),
    lambda tab, mod: tab.append_column(3, mod.chunked_array([[1] * 5])),
    lambda tab, mod: tab.append_column(mod.field("n", mod.string()), mod.chunked_array([[1] * 5])),
    lambda tab, mod: mod.Table.from_arrays([[1, 2], [1]], names=["a", "b"]),
])
def test_table_errors_as_pyarrow(call):
    pt, t = _table_pair()
    _same_error(lambda: call(pt, pa), lambda: call(t, arrowmm))


def test_record_batch_methods_as_pyarrow():
    data = {"x": [1, None, 3], "s": ["a", "b", None]}
    pb, b = pa.RecordBatch.from_pydict(data), arrowmm.RecordBatch.from_pydict(data)
    _same(b, pb)
    rows = [{"x": 1}, {"x": 2, "s": "q"}]
    _same(arrowmm.RecordBatch.from_pylist(rows), pa.RecordBatch.from_pylist(rows))
    _same(b.append_column("n", [7, 8, 9]), pb.append_column("n", pa.array([7, 8, 9])))
    _same(b.add_column(1, "n", np.arange(3.0)), pb.add_column(1, "n", pa.array(np.arange(3.0))))
    _same(b.set_column(0, "y", ["p", "q", "r"]), pb.set_column(0, "y", pa.array(["p", "q", "r"])))
    _same(b.remove_column(1), pb.remove_column(1))
    _same(b.drop_columns("x"), pb.drop_columns("x"))
    _same(b.replace_schema_metadata({"k": "v"}), pb.replace_schema_metadata({"k": "v"}))
    assert b.to_pydict() == data and b.schema.metadata is None  # (never in place)
    _same_error(lambda: pb.append_column("n", pa.array([1])),
                lambda: b.append_column("n", [1]))
    _same_error(lambda: pb.drop_columns(["nope"]), lambda: b.drop_columns(["nope"]))
    _same_error(lambda: pb.remove_column(2), lambda: b.remove_column(2))
    with pytest.raises(TypeError, match="field"):
        b.append_column(3, [1, 2, 3])
    _same_error(lambda: pb.append_column(pa.field("n", pa.string()), pa.array([1, 2, 3])),
                lambda: b.append_column(arrowmm.field("n", "string"), [1, 2, 3]))


def test_dropping_a_name_two_columns_share_is_refused_as_in_pyarrow():
    # (it dropped both: which one the caller meant cannot be known)
    pt = pa.table([[1], [2], [3]], names=["a", "b", "a"])
    t = arrowmm.table(pt)
    _same_error(lambda: pt.drop_columns("a"), lambda: t.drop_columns("a"))
    _same_error(lambda: pa.record_batch(pt.to_batches()[0]).drop_columns(["a"]),
                lambda: t.to_batches()[0].drop_columns(["a"]))
    assert t.drop_columns("b").column_names == pt.drop_columns("b").column_names == ["a", "a"]
