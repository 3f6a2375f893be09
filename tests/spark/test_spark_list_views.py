"""List views read by the Python Spark source with ``cast`` (review 22: F10): pyarrow 26's
list_view -> list cast lost rows (``[[1, 2], [3, 4]]`` read as ``[[1, 2], []]``) or failed a
task (a list_view<int64>'s offsets one short), nested views too; arrowmm's own cast makes
the lists.  Checked at the function a task runs, then in a Spark session."""
import pyarrow as pa

import arrowmm
import arrowmm.spark
from arrowmm.spark.planning import to_spark_batch


def _views(values, offsets, sizes, large=False):
    cls = pa.LargeListViewArray if large else pa.ListViewArray
    index = pa.int64() if large else pa.int32()
    return cls.from_arrays(pa.array(offsets, index), pa.array(sizes, index), values)


def _table() -> pa.Table:
    """Views out of order, overlapping and over a null, each kind top-level and nested."""
    ints = pa.array([1, 2, 3, 4, None], pa.int32())
    return pa.table({
        "id": pa.array([0, 1, 2], pa.int64()),
        "lv": _views(ints, [2, 0, 1], [2, 2, 3]),
        "llv": _views(ints, [2, 0, 4], [2, 2, 1], large=True),
        "lv64": _views(ints.cast(pa.int64()), [1, 1, 0], [3, 1, 0]),
        "st": pa.StructArray.from_arrays([_views(ints, [2, 0, 1], [2, 1, 0], large=True)], ["v"]),
        "nest": pa.ListArray.from_arrays(pa.array([0, 2, 2, 3], pa.int32()),
                                         _views(ints, [0, 2, 3], [2, 2, 2], large=True)),
    })


#: the rows of ``_table`` (what pyarrow's to_pylist of the views gives)
ROWS = [
    {"id": 0, "lv": [3, 4], "llv": [3, 4], "lv64": [2, 3, 4], "st": {"v": [3, 4]},
     "nest": [[1, 2], [3, 4]]},
    {"id": 1, "lv": [1, 2], "llv": [1, 2], "lv64": [2], "st": {"v": [1]}, "nest": []},
    {"id": 2, "lv": [2, 3, 4], "llv": [None], "lv64": [], "st": {"v": []}, "nest": [[4, None]]},
]


def _write(path, table: pa.Table) -> str:
    with pa.ipc.new_file(str(path), table.schema) as w:
        w.write_table(table)
    return str(path)


def test_list_views_become_the_lists_they_hold_top_level_and_nested(tmp_path):
    table = _table()
    assert table.to_pylist() == ROWS  # (the reference: the views' own rows)
    batch = arrowmm.open_file(_write(tmp_path / "lv.arrow", table)).get_batch(0)
    target = pa.schema([
        ("id", pa.int64()), ("lv", pa.list_(pa.int32())), ("llv", pa.list_(pa.int32())),
        ("lv64", pa.list_(pa.int64())), ("st", pa.struct([("v", pa.list_(pa.int32()))])),
        ("nest", pa.list_(pa.list_(pa.int32())))])
    out = to_spark_batch(batch, target)
    assert out.schema.equals(target)
    out.validate(full=True)
    assert out.to_pylist() == ROWS


def test_a_spark_read_with_cast_gives_the_views_rows(spark, tmp_path):
    arrowmm.spark.register(spark)
    path = _write(tmp_path / "lv.arrow", _table())
    df = spark.read.format("arrowmm_python").option("cast", "true").load(path)
    assert dict(df.dtypes) == {"id": "bigint", "lv": "array<int>", "llv": "array<int>",
                               "lv64": "array<bigint>", "st": "struct<v:array<int>>",
                               "nest": "array<array<int>>"}
    assert [r.asDict(recursive=True) for r in df.orderBy("id").collect()] == ROWS
