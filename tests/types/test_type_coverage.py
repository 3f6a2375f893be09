"""Every concrete type class is known everywhere types are dispatched: the stand-in for an
exhaustive ``match`` (DESIGN.md, "per-type knowledge in one table each").

The concrete classes are found by walking ``DataType``'s subclasses, so a new class is picked
up without editing this file; it then fails here, by name, until it has

- a sample in ``SAMPLES`` (a pyarrow array of the type: the oracle),
- an entry in every module's ``TYPE_TABLES`` (each module with type-keyed knowledge lists its
  tables there; ``TABLE_MODULES`` must name every such module, checked against the source),
- a Spark mapping (``arrowmm.spark.types.spark_type`` answers, possibly "unsupported"),
- and a round trip of its sample through Python conversion, the C data interface (both ways),
  an IPC file (arrowmm writes, arrowmm and pyarrow read; pyarrow writes, arrowmm reads),
  concatenation and statistics, each compared with pyarrow.

A class that genuinely cannot take a step is listed in ``NOT_APPLICABLE`` with the reason.
"""
from __future__ import annotations

import datetime
import decimal
import importlib
import io
import pathlib

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arrowmm
from arrowmm import types as t
from arrowmm.arrays.concat import concat_arrays
from arrowmm.ipc.core.statistics import column_statistics

ROOT = pathlib.Path(arrowmm.__file__).parent

#: every module holding type-keyed knowledge, and so a ``TYPE_TABLES`` (checked against the tree)
TABLE_MODULES = [
    "arrowmm.arrays.array", "arrowmm.arrays.concat", "arrowmm.format.encode",
    "arrowmm.format.decode", "arrowmm.interop._cdata", "arrowmm.interop.from_python",
    "arrowmm.ipc.read.loader", "arrowmm.ipc.write.encoder", "arrowmm.ipc.core.statistics",
]

#: classes under DataType that are no Arrow type of their own
ABSTRACT = {
    t.FixedWidthType: "the base of the fixed-width types, never a type itself",
}

_UTC = datetime.timezone.utc

#: a small pyarrow array of each concrete class (nulls and a second value where the type has
#: them), and the arrowmm type it must map to
SAMPLES = {
    t.NullType: (t.null(), lambda: pa.array([None, None, None], pa.null())),
    t.BoolType: (t.bool_(), lambda: pa.array([True, None, False])),
    t.IntType: (t.int16(), lambda: pa.array([1, None, -3, 7], pa.int16())),
    t.FloatType: (t.float64(), lambda: pa.array([1.5, None, -2.0])),
    t.DecimalType: (t.decimal128(10, 2), lambda: pa.array(
        [decimal.Decimal("1.25"), None, decimal.Decimal("-3.50")], pa.decimal128(10, 2))),
    t.DateType: (t.date32(), lambda: pa.array(
        [datetime.date(2020, 1, 2), None, datetime.date(1969, 12, 31)])),
    t.TimeType: (t.time64("us"), lambda: pa.array(
        [datetime.time(1, 2, 3, 4), None, datetime.time(0)], pa.time64("us"))),
    t.TimestampType: (t.timestamp("ms", tz="UTC"), lambda: pa.array(
        [datetime.datetime(2020, 1, 1, tzinfo=_UTC), None,
         datetime.datetime(1960, 5, 6, 7, 8, 9, 10000, tzinfo=_UTC)], pa.timestamp("ms", "UTC"))),
    t.DurationType: (t.duration("s"), lambda: pa.array(
        [datetime.timedelta(seconds=5), None, datetime.timedelta(days=-1)], pa.duration("s"))),
    t.IntervalType: (t.month_day_nano_interval(), lambda: pa.array(
        [pa.MonthDayNano([1, 2, 3]), None, pa.MonthDayNano([-1, 0, 5])],
        pa.month_day_nano_interval())),
    t.BinaryType: (t.string(), lambda: pa.array(["a", None, "héllo", ""])),
    t.BinaryViewType: (t.string_view(), lambda: pa.array(
        ["short", None, "a value longer than twelve bytes", ""], pa.string_view())),
    t.FixedSizeBinaryType: (t.fixed_size_binary(3), lambda: pa.array(
        [b"abc", None, b"xyz"], pa.binary(3))),
    t.ListType: (t.list_(t.int32()), lambda: pa.array([[1, 2], None, [], [3]],
                                                       pa.list_(pa.int32()))),
    t.ListViewType: (t.list_view(t.int32()), lambda: pa.array(
        [[1, 2], None, [], [3]], pa.list_view(pa.int32()))),
    t.FixedSizeListType: (t.fixed_size_list(t.int8(), 2), lambda: pa.array(
        [[1, 2], None, [3, 4]], pa.list_(pa.int8(), 2))),
    t.StructType: (t.struct([("a", t.int32()), ("b", t.string())]), lambda: pa.array(
        [{"a": 1, "b": "x"}, None, {"a": None, "b": "y"}],
        pa.struct([("a", pa.int32()), ("b", pa.string())]))),
    t.MapType: (t.map_(t.string(), t.int64()), lambda: pa.array(
        [[("k", 1), ("l", None)], None, []], pa.map_(pa.string(), pa.int64()))),
    t.UnionType: (t.dense_union([t.field("i", t.int32()), t.field("s", t.string())]),
                  lambda: pa.UnionArray.from_dense(
                      pa.array([0, 1, 0], pa.int8()), pa.array([0, 0, 1], pa.int32()),
                      [pa.array([5, None], pa.int32()), pa.array(["x"])], ["i", "s"])),
    t.DictionaryType: (t.dictionary(t.int8(), t.string()), lambda: pa.array(
        ["a", "b", None, "a"]).dictionary_encode().cast(pa.dictionary(pa.int8(), pa.string()))),
    t.RunEndEncodedType: (t.run_end_encoded(t.int32(), t.int64()), lambda: pa.RunEndEncodedArray
                          .from_arrays(pa.array([2, 3, 5], pa.int32()), pa.array([7, None, 8]))),
}

#: (step, class): why the class cannot take that step
NOT_APPLICABLE = {
    ("FlatBuffers Type of a type (encode)", t.DictionaryType):
        "a dictionary field is encoded as its value type plus a DictionaryEncoding "
        "(format.encode._encode_field), not as a Type union member",
}


def _concrete_classes() -> list:
    seen, todo = [], [t.DataType]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub in seen:
                continue
            todo.append(sub)
            # (extension types are their storage to every table: tests/types/test_extension_types.py;
            # classes made by tests are no part of the library)
            if not issubclass(sub, t.ExtensionType) and sub.__module__.startswith("arrowmm."):
                seen.append(sub)
    return sorted((c for c in seen if c not in ABSTRACT), key=lambda c: c.__name__)


CLASSES = _concrete_classes()


def _tables() -> dict:
    out = {}
    for name in TABLE_MODULES:
        for title, table in importlib.import_module(name).TYPE_TABLES.items():
            out[f"{name}: {title}"] = (title, table)
    return out


def _sample(cls):
    if cls not in SAMPLES:
        pytest.fail(f"{cls.__name__} has no sample in tests/types/test_type_coverage.py SAMPLES: add "
                    f"one (a pyarrow array of it) and a handler in every table")
    dtype, make = SAMPLES[cls]
    oracle = make()
    assert type(dtype) is cls
    return dtype, oracle


def _na(step, cls) -> bool:
    return (step, cls) in NOT_APPLICABLE


def test_the_walk_finds_the_view_classes_and_every_table_module_is_listed():
    names = {c.__name__ for c in CLASSES}
    assert {"BinaryType", "BinaryViewType", "ListType", "ListViewType"} <= names
    assert "FixedWidthType" not in names and "ExtensionType" not in names
    declaring = sorted(
        ".".join(p.relative_to(ROOT.parent).with_suffix("").parts)
        for p in list(ROOT.rglob("*.py")) + list(ROOT.rglob("*.pyx"))
        if "\nTYPE_TABLES = " in p.read_text(encoding="utf-8"))
    assert declaring == sorted(TABLE_MODULES)
    assert sorted(c.__name__ for c in SAMPLES) == sorted(names)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_table_has_a_handler(cls):
    missing = [where for where, (title, table) in _tables().items()
               if cls not in table and not _na(title, cls)]
    assert missing == [], f"{cls.__name__} has no handler in: {missing}"


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_the_spark_mapping_answers(cls):
    from arrowmm.spark.types import SparkTypeError, spark_type
    dtype, _ = _sample(cls)
    try:
        spark_type(dtype, cast=True)
    except SparkTypeError:
        pass  # a decided answer: Spark has no such type


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_python_conversion(cls):
    dtype, oracle = _sample(cls)
    if _na("Python values to an array", cls):
        with pytest.raises((arrowmm.ArrowInvalid, arrowmm.ArrowNotImplementedError)):
            arrowmm.array(oracle.to_pylist(), type=dtype)
        return  # (refused by name: the entry in NOT_APPLICABLE says why)
    made = arrowmm.array(oracle.to_pylist(), type=dtype)
    assert type(made.type) is cls and made.type == dtype
    made.validate(full=True)
    assert made.to_pylist() == oracle.to_pylist()
    assert pa.array(made).equals(oracle) or pa.array(made).to_pylist() == oracle.to_pylist()


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_c_data_interface_both_ways(cls):
    dtype, oracle = _sample(cls)
    imported = arrowmm.array(oracle)  # pyarrow -> arrowmm
    assert type(imported.type) is cls and imported.type == dtype
    assert str(imported.type) == str(oracle.type)
    imported.validate(full=True)
    assert imported.to_pylist() == oracle.to_pylist()
    exported = pa.array(imported)  # arrowmm -> pyarrow
    assert exported.type == oracle.type and exported.equals(oracle)
    sliced = pa.array(imported.slice(1))
    assert sliced.equals(oracle.slice(1))
    assert pa.DataType._import_from_c_capsule(dtype.__arrow_c_schema__()) == oracle.type


def _ipc_file(batch) -> bytes:
    sink = io.BytesIO()
    with arrowmm.new_file(sink, batch.schema) as writer:
        writer.write(batch)
    return sink.getvalue()


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_ipc_file_round_trip(cls):
    dtype, oracle = _sample(cls)
    batch = arrowmm.record_batch({"c": arrowmm.array(oracle)})
    data = _ipc_file(batch)
    with arrowmm.open_file(data) as reader:
        col = reader.get_batch(0).column("c")
        assert type(col.type) is cls and col.type == dtype
        col.validate(full=True)
        assert col.to_pylist() == oracle.to_pylist()
    assert pa.ipc.open_file(data).read_all().column("c").combine_chunks().equals(oracle)
    sink = io.BytesIO()  # and what pyarrow writes, arrowmm reads
    table = pa.table({"c": oracle})
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    with arrowmm.open_file(sink.getvalue()) as reader:
        col = reader.get_batch(0).column("c")
        assert col.type == dtype and col.to_pylist() == oracle.to_pylist()


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_concatenation(cls):
    dtype, oracle = _sample(cls)
    mine = arrowmm.array(oracle)
    joined = concat_arrays([mine.slice(1), mine, mine.slice(0, 0)])
    assert type(joined.type) is cls
    joined.validate(full=True)
    expected = pa.concat_arrays([oracle.slice(1), oracle])
    assert joined.to_pylist() == expected.to_pylist()
    assert pa.array(joined).to_pylist() == expected.to_pylist()


def _stored(value, dtype):
    """A pyarrow min/max scalar's value as arrowmm's statistics store it."""
    if isinstance(dtype, t.DecimalType):
        return int(value.as_py().scaleb(dtype.scale))
    if isinstance(dtype, (t.BinaryType, t.BinaryViewType, t.FixedSizeBinaryType)):
        raw = value.as_py()
        return raw if isinstance(raw, str) else raw.hex()
    if isinstance(dtype, (t.DateType, t.TimeType, t.TimestampType, t.DurationType)):
        return value.cast(pa.int64()).as_py() if not isinstance(dtype, (t.DateType, t.TimeType)) \
            else value.value
    return value.as_py()


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_statistics(cls):
    dtype, oracle = _sample(cls)
    stats = column_statistics(arrowmm.array(oracle))
    from arrowmm.ipc.core.statistics import TYPE_TABLES
    if TYPE_TABLES["statistics bounds"][cls] is None:  # decided: no bounds for this type
        assert stats is None
        return
    assert stats["nulls"] == oracle.null_count
    values = oracle
    if isinstance(dtype, (t.DateType, t.TimeType, t.TimestampType, t.DurationType)):
        values = oracle.view(pa.int32() if dtype.byte_width == 4 else pa.int64())
    elif isinstance(dtype, t.BinaryViewType):
        values = oracle.cast(pa.string() if dtype.utf8 else pa.binary())
    elif isinstance(dtype, t.FixedSizeBinaryType):
        values = oracle.cast(pa.binary())
    lo, hi = pc.min_max(values).values()
    if isinstance(dtype, (t.DateType, t.TimeType, t.TimestampType, t.DurationType)):
        lo, hi = lo.as_py(), hi.as_py()
    else:
        lo, hi = _stored(lo, dtype), _stored(hi, dtype)
    assert (stats.get("min"), stats.get("max")) == (lo, hi)


def test_view_types_are_classes_of_their_own():
    """What the classes replace: a ``.view`` flag that a site could forget (and read 16-byte
    views as offsets).  Dispatch on the plain classes can no longer take a view."""
    assert not isinstance(t.string_view(), t.BinaryType)
    assert not isinstance(t.list_view(t.int8()), t.ListType)
    assert t.string_view() != t.string() and t.list_view(t.int8()) != t.list_(t.int8())
    assert t.large_list_view(t.int8()) != t.list_view(t.int8())
    assert [str(x) for x in (t.string_view(), t.binary_view(), t.list_view(t.int8()),
                             t.large_list_view(t.int8()))] == \
        ["string_view", "binary_view", "list_view<item: int8>", "large_list_view<item: int8>"]
    assert not hasattr(t.string(), "view") and not hasattr(t.list_(t.int8()), "view")
    with pytest.raises(arrowmm.ArrowInvalid, match="ListViewType"):
        t.ListType(t.int8(), "list_view")


def test_pickles_made_while_views_were_a_flag_still_load():
    """A pickle names the class and its parameters: before the view classes, a string view
    was ``BinaryType(True, False, True)`` and a list view ``ListType(f, "list_view")``."""
    from arrowmm.types.base import _rebuild_type
    assert _rebuild_type("string_view", t.BinaryType, (True, False, True)) == t.string_view()
    assert _rebuild_type("large_string", t.BinaryType, (True, True, False)) == t.large_string()
    item = t.field("item", t.int8())
    assert _rebuild_type("", t.ListType, (item, "large_list_view")) == t.large_list_view(t.int8())
    assert _rebuild_type("", t.ListType, (item, "large_list")) == t.large_list(t.int8())
    import pickle
    for dtype in (t.string_view(), t.binary_view(), t.list_view(t.int8()),
                  t.large_list_view(t.string())):
        assert pickle.loads(pickle.dumps(dtype)) == dtype
