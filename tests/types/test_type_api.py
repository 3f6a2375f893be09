"""pyarrow's ``DataType``, ``Field`` and ``Schema`` methods users reach for, against pyarrow:
``bit_width``, ``num_fields``, ``field(i)``, ``num_buffers``, ``has_variadic_buffers``,
``equals``, ``to_pandas_dtype``; ``Field.flatten``/``remove_metadata``; the schema edits
(``append``, ``insert``, ``remove``, ``set``, ``remove_metadata``, ``empty_table``,
``get_all_field_indices``, ``pandas_metadata``) with pyarrow's errors."""
import pyarrow as pa
import pytest

import arrowmm

TYPES = [pa.null(), pa.bool_(), pa.int8(), pa.uint64(), pa.float16(), pa.float64(), pa.string(),
         pa.large_binary(), pa.string_view(), pa.binary_view(), pa.binary(3),
         pa.decimal32(5, 2), pa.decimal128(10, 2), pa.decimal256(40, 3), pa.date32(),
         pa.date64(), pa.time32("s"), pa.time64("ns"), pa.timestamp("us"),
         pa.timestamp("ns", "UTC"), pa.timestamp("ms", "Europe/Paris"),
         pa.timestamp("s", "+01:00"), pa.duration("ms"), pa.month_day_nano_interval(),
         pa.list_(pa.int8()), pa.large_list(pa.int8()), pa.list_(pa.int8(), 2),
         pa.list_view(pa.int8()), pa.large_list_view(pa.int16()),
         pa.struct([("a", pa.int8()), ("b", pa.string())]), pa.map_(pa.int8(), pa.string()),
         pa.dictionary(pa.int16(), pa.string()), pa.dense_union([pa.field("a", pa.int8())]),
         pa.sparse_union([pa.field("a", pa.int8()), pa.field("b", pa.string())]),
         pa.run_end_encoded(pa.int32(), pa.int8()), pa.uuid(), pa.bool8(), pa.json_(),
         pa.fixed_shape_tensor(pa.float32(), [2, 2])]


def _mine(t):
    return arrowmm.schema(pa.schema([("a", t)])).field("a").type


def _kind(e):
    for kind in (NotImplementedError, IndexError, TypeError, ValueError):
        if isinstance(e, kind):
            return kind.__name__
    return type(e).__name__


def _result(call):
    try:
        return ("ok", call())
    except (ValueError, NotImplementedError, IndexError, TypeError) as e:
        return ("error", _kind(e))


@pytest.mark.parametrize("pa_type", TYPES, ids=str)
def test_layout_questions_answer_as_pyarrow(pa_type):
    mine = _mine(pa_type)
    for name in ("bit_width", "num_fields", "num_buffers", "has_variadic_buffers"):
        assert _result(lambda: getattr(mine, name)) == \
            _result(lambda: getattr(pa_type, name)), name
    for i in (0, 1, -1, 5):
        got, want = _result(lambda: mine.field(i)), _result(lambda: pa_type.field(i))
        assert got[0] == want[0], i
        if got[0] == "ok":
            assert pa.field(got[1]) == want[1]
        else:
            assert got == want


@pytest.mark.parametrize("pa_type", TYPES, ids=str)
def test_to_pandas_dtype_is_pyarrows(pa_type):
    got, want = _result(_mine(pa_type).to_pandas_dtype), _result(pa_type.to_pandas_dtype)
    assert got[0] == want[0]
    if got[0] == "error":
        assert got == want
    elif getattr(pa_type, "tz", None):
        import pandas as pd  # zoned: pandas' dtype, the same offsets at a given instant
        stamp = pd.Timestamp("2026-07-01T12:00:00Z")
        assert got[1].unit == want[1].unit
        assert stamp.tz_convert(got[1].tz).utcoffset() == stamp.tz_convert(want[1].tz).utcoffset()
    else:
        assert got[1] == want[1]


def test_equals_takes_a_type_or_its_name_and_can_check_child_metadata():
    plain = arrowmm.struct([("a", arrowmm.int8())])
    tagged = arrowmm.struct([arrowmm.field("a", arrowmm.int8(), metadata={"x": "y"})])
    assert arrowmm.int8().equals("int8") and not arrowmm.int8().equals("int16")
    assert plain.equals(tagged) and not plain.equals(tagged, check_metadata=True)
    assert pa.struct([("a", pa.int8())]).equals(pa.schema(arrowmm.schema([("t", tagged)]))
                                                .field("t").type, check_metadata=True) is False
    with pytest.raises(TypeError, match="DataType expected"):
        arrowmm.int8().equals(3)


def test_field_flatten_and_remove_metadata_as_pyarrow():
    pa_field = pa.field("x", pa.struct([pa.field("a", pa.int8(), nullable=False,
                                                 metadata={"q": "r"}),
                                        ("b", pa.struct([("c", pa.int8())]))]),
                        metadata={"m": "1"})
    mine = arrowmm.schema(pa.schema([pa_field])).field("x")
    assert [pa.field(f) for f in mine.flatten()] == pa_field.flatten()
    assert [f.metadata for f in mine.flatten()] == [{"q": "r"}, None]
    strict = pa_field.with_nullable(False)
    assert [pa.field(f) for f in arrowmm.schema(pa.schema([strict])).field("x").flatten()] \
        == strict.flatten()
    assert mine.remove_metadata().metadata is None
    assert mine.remove_metadata().equals(mine)
    leaf = arrowmm.field("u", arrowmm.uuid(), metadata={"z": "1"})
    assert leaf.flatten() == [leaf]
    assert leaf.remove_metadata().type == arrowmm.uuid()


SCHEMA = pa.schema([("a", pa.int8()), ("b", pa.string())], metadata={"k": "v"})
EDITS = [("append", (pa.field("c", pa.int64()),)), ("append", (pa.field("a", pa.int16()),)),
         ("insert", (0, pa.field("c", pa.int64()))), ("insert", (2, pa.field("c", pa.int64()))),
         ("insert", (3, pa.field("c", pa.int64()))), ("insert", (-1, pa.field("c", pa.int64()))),
         ("remove", (0,)), ("remove", (1,)), ("remove", (2,)), ("remove", (-1,)),
         ("set", (0, pa.field("z", pa.int8()))), ("set", (1, pa.field("z", pa.int8()))),
         ("set", (-1, pa.field("z", pa.int8())))]


def _as_mine(arg):
    return arrowmm.schema(pa.schema([arg])).field(0) if isinstance(arg, pa.Field) else arg


@pytest.mark.parametrize("method, args", EDITS, ids=lambda v: str(v))
def test_schema_edits_as_pyarrow(method, args):
    mine = arrowmm.schema(SCHEMA)
    try:
        want = getattr(SCHEMA, method)(*args)
    except pa.ArrowInvalid as e:
        with pytest.raises(arrowmm.ArrowInvalid, match=str(e).rstrip(".")):
            getattr(mine, method)(*map(_as_mine, args))
        return
    got = getattr(mine, method)(*map(_as_mine, args))
    assert pa.schema(got) == want and pa.schema(got).metadata == want.metadata
    assert mine.names == ["a", "b"]  # (a new schema: the old one is unchanged)


def test_set_one_past_the_end_is_out_of_range():
    # pyarrow appends there; no field is at that index to replace
    assert SCHEMA.set(2, pa.field("z", pa.int8())).names == ["a", "b", "z"]
    with pytest.raises(arrowmm.ArrowInvalid, match="Invalid column index to set field"):
        arrowmm.schema(SCHEMA).set(2, arrowmm.field("z", arrowmm.int8()))


def test_schema_edits_refuse_what_is_no_field():
    with pytest.raises(TypeError, match="expected arrowmm.Field, got str"):
        arrowmm.schema(SCHEMA).append("c")


def test_the_other_schema_helpers():
    mine = arrowmm.schema([("a", arrowmm.int8()), ("b", arrowmm.string()),
                           ("a", arrowmm.int16())], metadata={"k": "v", "pandas": '{"x": 1}'})
    assert mine.get_all_field_indices("a") == [0, 2]
    assert mine.get_all_field_indices("q") == []
    assert mine.remove_metadata().metadata is None and mine.metadata["k"] == "v"
    assert mine.pandas_metadata == {"x": 1}
    assert arrowmm.schema([]).pandas_metadata is None
    with pytest.raises(arrowmm.ArrowInvalid, match="'pandas' is not JSON"):
        arrowmm.schema([], metadata={"pandas": "{"}).pandas_metadata
    empty = mine.empty_table()
    assert empty.num_rows == 0 and empty.schema.equals(mine, check_metadata=True)
    assert pa.table(empty).equals(pa.schema(mine).empty_table())
