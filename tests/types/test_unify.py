"""``arrowmm.unify_schemas`` against ``pyarrow.unify_schemas``: every pair of a grid of types,
in both ``promote_options``, merges to pyarrow's type or fails with pyarrow's error type, except
where pyarrow gives an integer meeting a decimal one digit too few (arrowmm counts them all);
fields in order of first appearance, nullability, metadata, nested merges, bad input."""
import itertools

import pyarrow as pa
import pytest

import arrowmm

GRID = [pa.null(), pa.bool_(), pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(),
        pa.uint16(), pa.uint32(), pa.uint64(), pa.float16(), pa.float32(), pa.float64(),
        pa.string(), pa.large_string(), pa.binary(), pa.large_binary(), pa.string_view(),
        pa.binary(3), pa.binary(4), pa.list_(pa.int8()), pa.large_list(pa.int16()),
        pa.list_(pa.int32()), pa.list_(pa.int8(), 2), pa.list_(pa.int16(), 3),
        pa.timestamp("s"), pa.timestamp("ns"), pa.timestamp("ms", "UTC"),
        pa.timestamp("us", "Europe/Paris"), pa.duration("s"), pa.duration("us"),
        pa.decimal128(10, 2), pa.decimal128(38, 5), pa.decimal256(40, 2), pa.decimal32(5, 1),
        pa.date32(), pa.date64(), pa.time32("s"), pa.time64("us"),
        pa.struct([("x", pa.int8())]), pa.struct([("y", pa.int16()), ("x", pa.int16())]),
        pa.map_(pa.int8(), pa.int16()), pa.map_(pa.int16(), pa.int8()),
        pa.dictionary(pa.int8(), pa.string()), pa.dictionary(pa.uint16(), pa.large_string()),
        pa.dictionary(pa.int8(), pa.string(), ordered=True)]


def _digits(t):
    return {pa.int8(): 3, pa.uint8(): 3, pa.int16(): 5, pa.uint16(): 5, pa.int32(): 10,
            pa.uint32(): 10, pa.int64(): 19, pa.uint64(): 20}.get(t)


def _counts_every_digit(x, y):
    """The one deliberate difference: an integer meeting a decimal, permissive."""
    return (pa.types.is_decimal(x) and _digits(y)) or (pa.types.is_decimal(y) and _digits(x))


def _expected_decimal(x, y):
    d, i = (x, y) if pa.types.is_decimal(x) else (y, x)
    scale = d.scale
    precision = max(d.precision, _digits(i) + scale)
    bits = d.bit_width
    while bits < 256 and precision > {32: 9, 64: 18, 128: 38}[bits]:
        bits *= 2
    return f"decimal{bits}({precision}, {scale})"


def _arrowmm_type(t):
    return arrowmm.schema(pa.schema([("a", t)])).field("a").type


@pytest.mark.parametrize("mode", ["default", "permissive"])
def test_every_pair_of_the_grid_merges_as_in_pyarrow(mode):
    checked = 0
    for x, y in itertools.product(GRID, GRID):
        sa, sb = pa.schema([("a", x)]), pa.schema([("a", y)])
        try:
            want = str(pa.unify_schemas([sa, sb], promote_options=mode).field("a").type)
        except (pa.ArrowTypeError, pa.ArrowInvalid) as e:
            want = type(e).__name__
        if mode == "permissive" and _counts_every_digit(x, y):
            want = _expected_decimal(x, y)
        try:
            merged = arrowmm.unify_schemas([arrowmm.schema(sa), arrowmm.schema(sb)],
                                           promote_options=mode)
            got = str(merged.field("a").type)
        except (arrowmm.ArrowTypeError, arrowmm.ArrowInvalid) as e:
            got = type(e).__name__
        assert got == want, (mode, str(x), str(y))
        checked += 1
    assert checked == len(GRID) ** 2


def test_an_integer_meeting_a_decimal_keeps_every_digit():
    # pyarrow: decimal128(2, 0), which cannot hold 127
    merged = arrowmm.unify_schemas([arrowmm.schema([("a", arrowmm.int8())]),
                                    arrowmm.schema([("a", arrowmm.decimal128(1, 0))])],
                                   promote_options="permissive")
    assert merged.field("a").type == arrowmm.decimal128(3, 0)
    values = arrowmm.array([127, -128], arrowmm.int8()).cast(merged.field("a").type)
    assert [int(v) for v in values.to_pylist()] == [127, -128]


def test_fields_keep_first_order_metadata_and_nullability():
    s1 = arrowmm.schema([arrowmm.field("a", arrowmm.int8(), nullable=False, metadata={"p": "1"}),
                         ("n", arrowmm.null())], metadata={"x": "1"})
    s2 = arrowmm.schema([("b", arrowmm.string()),
                         arrowmm.field("a", arrowmm.int8(), metadata={"q": "2"}),
                         arrowmm.field("n", arrowmm.int16(), nullable=False)],
                        metadata={"y": "2"})
    merged = arrowmm.unify_schemas([s1, s2])
    oracle = pa.unify_schemas([pa.schema(s1), pa.schema(s2)])
    assert merged.names == oracle.names == ["a", "n", "b"]
    assert [f.nullable for f in merged] == [f.nullable for f in oracle] == [True, True, True]
    assert merged.field("a").metadata == {"p": "1"}
    assert merged.metadata == {"x": "1"}
    assert str(merged.field("n").type) == "int16"


def test_structs_merge_their_fields_by_name_recursively():
    a = pa.schema([("s", pa.struct([("x", pa.int8()), ("t", pa.struct([("u", pa.null())]))]))])
    b = pa.schema([("s", pa.struct([("t", pa.struct([("u", pa.int8()), ("v", pa.string())])),
                                    ("y", pa.int8())]))])
    merged = arrowmm.unify_schemas([arrowmm.schema(a), arrowmm.schema(b)])
    assert pa.schema(merged) == pa.unify_schemas([a, b])


@pytest.mark.parametrize("schemas, error, words", [
    ([], arrowmm.ArrowInvalid, "at least one schema"),
    ([arrowmm.schema([("a", arrowmm.int8()), ("a", arrowmm.int8())])], arrowmm.ArrowInvalid,
     "duplicate field names"),
    ([arrowmm.schema([("a", arrowmm.int8())]), arrowmm.schema([("a", arrowmm.int16())])],
     arrowmm.ArrowTypeError, "Field a has incompatible types: int8 vs int16"),
    ([arrowmm.schema([("a", arrowmm.timestamp("s"))]),
      arrowmm.schema([("a", arrowmm.timestamp("s", "UTC"))])], arrowmm.ArrowTypeError,
     "timestamp with timezone and timestamp without timezone"),
    (["not a schema"], TypeError, "arrowmm Schemas"),
])
def test_what_cannot_be_unified_says_why(schemas, error, words):
    with pytest.raises(error, match=words):
        arrowmm.unify_schemas(schemas)


def test_an_unknown_promote_option_is_a_value_error_as_in_pyarrow():
    with pytest.raises(ValueError, match="Invalid promote_options: bogus"):
        arrowmm.unify_schemas([arrowmm.schema([])], promote_options="bogus")
