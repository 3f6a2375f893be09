"""Arrays print as pyarrow's ``to_string`` prints them (``arrowmm.arrays.display``), with
pyarrow as the oracle: dates, times, timestamps and durations from their stored numbers
(every digit of the unit, instants of a time zone in UTC marked ``Z``, ``<value out of
range: n>`` where Arrow C++ has no date), floats and float32 in their shortest form, long
strings and binaries cut at 100 characters, null arrays as ``n nulls``, dictionary arrays as
their dictionary and indices.  Printing never raises for a value Python cannot hold.

Nested values (lists, structs, maps, unions, run-end encoded) print on one line here, where
pyarrow indents them: those are compared without whitespace in ``test_values.py``.
"""

import numpy as np
import pyarrow as pa
import pyarrow.ipc
import pytest

import arrowmm
from tests.support import integration_json as ij

I64 = np.iinfo(np.int64)
I32 = np.iinfo(np.int32)


def _days(y, m, d):
    return (np.datetime64(f"{y:04d}-{m:02d}-{d:02d}") - np.datetime64("1970-01-01")).astype(int) \
        if 1 <= y <= 9999 else None


CASES = {
    **{f"timestamp[{u}]": pa.array([0, 1, -1, None, I64.min, I64.max, 1234567890123],
                                   pa.timestamp(u))
       for u in ("s", "ms", "us", "ns")},
    **{f"timestamp[{u}, tz]": pa.array([0, -1, None, I64.min, 98765432101],
                                       pa.timestamp(u, "US/Eastern"))
       for u in ("s", "ms", "us", "ns")},
    "timestamp years past 9999 and before 1": pa.array(
        [int(_days(9999, 12, 31)) * 86400 + 86400 * 366, -62135596800 - 86400 * 400,
         971890963199, 971890963200, -1096193779200, -1096193779201], pa.timestamp("s")),
    "date32": pa.array([0, -1, 1, None, I32.max, I32.min, 11_000_000, -12_000_000, 2932896],
                       pa.date32()),
    "date64": pa.array([0, -1, 1, -86_400_001, None, I64.min, 86_400_000 * 3 + 5], pa.date64()),
    "time32[s]": pa.array([0, 86399, 86400, -1, None], pa.time32("s")),
    "time32[ms]": pa.array([0, 1, 86_399_999, 86_400_000, -1], pa.time32("ms")),
    "time64[us]": pa.array([5, 86_400 * 10**6 - 1, 86_400 * 10**6, None], pa.time64("us")),
    "time64[ns]": pa.array([1, 52_938_200_013_189, 86_400 * 10**9 - 1, I64.max], pa.time64("ns")),
    **{f"duration[{u}]": pa.array([0, -1, I64.min, I64.max, None], pa.duration(u))
       for u in ("s", "ms", "us", "ns")},
    "float64": pa.array([10.0 ** k for k in range(-9, 12)][:19] + [1.5e-7, None]),
    "float64 specials": pa.array([0.0, -0.0, float("nan"), float("inf"), -float("inf"),
                                  1.7976931348623157e308, 5e-324, 0.1 + 0.2, 1e21, 123456789012.0]),
    "float32": pa.array([641.818, 0.1, 1e20, 3.4028235e38, 1e-8, 100000000.0, 1234567.0, -0.0,
                         float("nan"), None, 1.5e-45], pa.float32()),
    "float16": pa.array(np.array([1.5, 65504, 0.1, 1e-5, -0.0, np.inf], dtype=np.float16)),
    "long strings": pa.array(["x" * 98, "x" * 99, "x" * 120, "é" * 60, "ab\"c" * 40, None]),
    "long large_string": pa.array(["y" * 300, ""], pa.large_string()),
    "long string_view": pa.array(["z" * 101, "short"], pa.string_view()),
    "long binary": pa.array([b"x" * 50, b"x" * 51, b"\x00" * 80, None], pa.binary()),
    "long binary_view": pa.array([b"x" * 51], pa.binary_view()),
    "long fixed_size_binary": pa.array([b"q" * 60, None], pa.binary(60)),
    "null": pa.nulls(3),
    "empty null": pa.nulls(0),
    "month_day_nano_interval": pa.array([(1, -2, 3), None, (-1, 0, -9223372036854775808)],
                                        pa.month_day_nano_interval()),
    "dictionary": pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 1], pa.int8()),
                                                 pa.array(["a", None, "c"])),
    "dictionary sliced": pa.DictionaryArray.from_arrays(pa.array([2, 0, 1, 2], pa.int32()),
                                                        pa.array([1.5, 2.5, 3.5])).slice(1, 2),
    "dictionary long": pa.DictionaryArray.from_arrays(pa.array(np.arange(30) % 25, pa.int16()),
                                                      pa.array(np.arange(25) * 7)),
    "dictionary of timestamps": pa.DictionaryArray.from_arrays(
        pa.array([0, 0, 1], pa.int8()), pa.array([1, None], pa.timestamp("ns", "UTC"))),
    "window of timestamps": pa.array(np.arange(30) * 10**15, pa.timestamp("ns")),
    **{f"{n} values": pa.array(range(n)) for n in (20, 21, 22)},  # (21: no "..." for one value)
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_to_string_is_pyarrows(name):
    theirs = CASES[name]
    ours = arrowmm.array(theirs)
    assert ours.to_string() == theirs.to_string()
    assert repr(ours).split("\n", 1)[1] == repr(theirs).split("\n", 1)[1]


def test_batch_repr_prints_values_as_pyarrow():
    names = ["timestamp[ms, tz]", "date64", "float32", "long strings", "time64[ns]",
             "duration[s]"]
    cols = {n: CASES[n].slice(0, 4) for n in names}
    theirs = pa.record_batch(cols)
    ours = arrowmm.record_batch(theirs)
    assert repr(ours).split("----")[1] == repr(theirs).split("----")[1]
    for n in (21, 22):
        theirs = pa.record_batch({"a": pa.array(range(n), pa.int16())})
        assert repr(arrowmm.record_batch(theirs)).split("----")[1] == repr(theirs).split("----")[1]


def test_out_of_range_values_print_where_to_pylist_refuses():
    """A value Python's datetime cannot hold: to_pylist raises (as pyarrow's does), printing
    shows the number as pyarrow does, and a timestamp[ns] at int64's minimum is a date, not
    numpy's NaT."""
    theirs = pa.array([I64.min, 0], pa.timestamp("ms", "US/Eastern"))
    ours = arrowmm.array(theirs)
    with pytest.raises(arrowmm.ArrowInvalid):
        ours.to_pylist()
    assert "<value out of range: -9223372036854775808>" in ours.to_string()
    ns = arrowmm.array(pa.array([I64.min], pa.timestamp("ns")))
    assert "NaT" not in ns.to_string() and "1677-09-21 00:12:43.145224192" in ns.to_string()


def test_schema_cuts_long_names_and_types_as_pyarrow():
    theirs = pa.schema([pa.field("é" * 60, pa.int8()),
                        pa.field("b", pa.struct([("x" * 99, pa.int8())])),
                        pa.field("c" * 100, pa.int8(), False),
                        ("d", pa.dictionary(pa.int8(),
                                            pa.list_(pa.dictionary(pa.int8(), pa.string()))))])
    ours = arrowmm.schema(theirs)
    assert ours.to_string() == theirs.to_string() == str(ours)
    whole = ours.to_string(truncate_metadata=False)  # (arrowmm's opt-out prints them whole)
    assert "é" * 60 in whole and "omitted" not in whole


_NESTED = (pa.ListType, pa.LargeListType, pa.ListViewType, pa.LargeListViewType,
           pa.FixedSizeListType, pa.StructType, pa.MapType, pa.UnionType, pa.RunEndEncodedType)


def _gold_files():
    return sorted(ij.GOLD_DIR.glob("*.arrow_file")) if ij.GOLD_DIR.is_dir() else []


def test_gold_files_columns_print_as_pyarrow():
    """Every flat column of every gold file prints as pyarrow prints it (nested ones: their
    layout differs, see the module docstring; map_non_canonical: arrowmm keeps the names the
    file stores, pyarrow renames them)."""
    files = _gold_files()
    if not files:
        pytest.skip(f"gold files folder is absent: {ij.GOLD_DIR}")
    compared = 0
    for path in files:
        theirs_reader = pa.ipc.open_file(path)
        with arrowmm.open_file(str(path)) as reader:
            schema = reader.schema
            if "map_non_canonical" not in path.name:
                assert schema.to_string() == theirs_reader.schema.to_string(), path.name
            for i in range(theirs_reader.num_record_batches):
                theirs, ours = theirs_reader.get_batch(i), reader.get_batch(i)
                for j, f in enumerate(theirs.schema):
                    t = f.type.storage_type if isinstance(f.type, pa.BaseExtensionType) else f.type
                    if isinstance(t, _NESTED) or (isinstance(t, pa.DictionaryType)
                                                  and isinstance(t.value_type, _NESTED)):
                        continue
                    if str(t) in ("month_interval", "day_time_interval"):
                        continue  # (pyarrow cannot hand these out as Python arrays)
                    assert ours.column(j).to_string() == theirs.column(j).to_string(), \
                        f"{path.name} batch {i} column {f.name}"
                    compared += 1
    assert compared > 200
