"""Types named by strings (``arrowmm.type_for_alias``), as pyarrow takes them: every alias of
pyarrow's table gives the type pyarrow gives, in any case; strings where a type is expected
(``field``, ``schema``, ``Array.cast``); the errors pyarrow raises for what is no alias."""
import pyarrow as pa
import pytest

import arrowmm

ALIASES = ["null", "bool", "boolean", "i1", "int8", "i2", "int16", "i4", "int32", "i8", "int64",
           "u1", "uint8", "u2", "uint16", "u4", "uint32", "u8", "uint64", "f2", "halffloat",
           "float16", "f4", "float", "float32", "f8", "double", "float64", "string", "str",
           "utf8", "binary", "large_string", "large_str", "large_utf8", "large_binary",
           "binary_view", "string_view", "date32", "date64", "date32[day]", "date64[ms]",
           "time32[s]", "time32[ms]", "time64[us]", "time64[ns]", "timestamp[s]",
           "timestamp[ms]", "timestamp[us]", "timestamp[ns]", "duration[s]", "duration[ms]",
           "duration[us]", "duration[ns]", "month_day_nano_interval"]


@pytest.mark.parametrize("alias", ALIASES)
def test_every_alias_is_pyarrows(alias):
    want = pa.type_for_alias(alias)
    for spelling in (alias, alias.upper()):
        got = arrowmm.type_for_alias(spelling)
        assert pa.DataType._import_from_c_capsule(got.__arrow_c_schema__()) == want


@pytest.mark.parametrize("name", ["list<int64>", "decimal128(5, 2)", "timestamp[ms, tz=UTC]",
                                  " int64", ""])
def test_what_is_no_alias_is_a_value_error_as_in_pyarrow(name):
    with pytest.raises(ValueError):
        pa.type_for_alias(name)
    with pytest.raises(ValueError, match="No type alias"):
        arrowmm.type_for_alias(name)


def test_strings_where_types_are_expected():
    assert arrowmm.field("x", "int64") == arrowmm.field("x", arrowmm.int64())
    assert arrowmm.schema([("x", "utf8"), ("y", "timestamp[us]")]) == \
        arrowmm.schema([("x", arrowmm.string()), ("y", arrowmm.timestamp("us"))])
    assert arrowmm.array([1, None]).cast("string").to_pylist() == ["1", None]
    assert arrowmm.array([1.5]).cast("Double").type == arrowmm.float64()
    with pytest.raises(TypeError, match="DataType"):
        arrowmm.array([1]).cast(5)
    with pytest.raises(ValueError, match="No type alias"):
        arrowmm.field("x", "int65")
