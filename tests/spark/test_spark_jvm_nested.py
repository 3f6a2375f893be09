"""Nested columns (struct, list, large_list, fixed_size_list, map) in the JVM reader.

Files written by pyarrow and by arrowmm, with nulls at every level, sliced batches (offsets into
the parent's buffers), empty lists and maps, plain and compressed, read by ``arrowmm_jvm`` give
the rows the Python source (``format("arrowmm_python")``) gives and pyarrow's own values.  Hostile
list offsets raise a clear error; kinds the JVM reader does not read are refused by name.
"""
from __future__ import annotations

import struct

import pyarrow as pa
import pytest

import arrowmm
from arrowmm.spark import jar as jvm_jar

pytest.importorskip("pyspark", reason="pyspark is in the test extras; install them")
from pyspark.sql import Row, functions as F


FMT = jvm_jar.JVM_FORMAT


def _nested_table(n: int = 13) -> pa.Table:
    """Every nested kind, with nulls at each level and empty lists and maps."""
    def pick(i, values):
        return values[i % len(values)]
    point = pa.struct([("x", pa.float64()), ("tag", pa.string())])
    rows = range(n)
    return pa.table({
        "id": pa.array(rows, pa.int64()),
        "st": pa.array([None if i % 5 == 4 else
                        {"a": None if i % 3 == 2 else i, "s": pick(i, ["x", None, "日本"]),
                         "p": None if i % 4 == 1 else {"x": i / 2, "tag": pick(i, ["t", None])}}
                        for i in rows],
                       pa.struct([("a", pa.int32()), ("s", pa.string()), ("p", point)])),
        "li": pa.array([None if i % 6 == 5 else pick(i, [[], [1, None, 3], [i], [None]])
                        for i in rows], pa.list_(pa.int64())),
        "ll": pa.array([None if i % 4 == 2 else pick(i, [["a", None], [], ["bc" * i]])
                        for i in rows], pa.large_list(pa.string())),
        "fl": pa.array([None if i % 5 == 1 else [i, None if i % 2 else -i] for i in rows],
                       pa.list_(pa.int32(), 2)),
        "mp": pa.array([None if i % 7 == 3 else pick(i, [[], [("k", i), ("z", None)], [("q", -1)]])
                        for i in rows], pa.map_(pa.string(), pa.int64())),
        "lst": pa.array([None if i % 5 == 0 else pick(i, [[{"x": 1.5, "tag": None}, None], []])
                         for i in rows], pa.list_(point)),
        "sl": pa.array([None if i % 3 == 0 else {"v": pick(i, [[i, i + 1], None, []])}
                        for i in rows], pa.struct([("v", pa.list_(pa.int16()))])),
    })


def _plain(value):
    """Spark's and pyarrow's values in one form: rows and structs as dicts, maps as dicts."""
    if isinstance(value, Row):
        return {k: _plain(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _spark_rows(df):
    return [_plain(r) for r in df.orderBy("id").collect()]


def _pyarrow_rows(table, columns=None):
    table = table.sort_by("id")
    if columns:
        table = table.select(columns)
    rows = table.to_pylist()
    for r in rows:  # pyarrow gives a map as (key, value) pairs
        if r.get("mp") is not None:
            r["mp"] = dict(r["mp"])
    return [_plain(r) for r in rows]


def _write(path, table, batches, writer, compression=None):
    if writer == "pyarrow":
        opts = pa.ipc.IpcWriteOptions(compression=compression)
        with pa.ipc.new_file(path, table.schema, options=opts) as w:
            for b in batches:
                w.write_batch(b)
    else:
        with arrowmm.new_file(path, table.schema, compression=compression) as w:
            for b in batches:
                w.write(b)


@pytest.mark.parametrize("writer,compression", [("pyarrow", None), ("arrowmm", None),
                                                ("pyarrow", "zstd"), ("arrowmm", "lz4")])
def test_nested_columns_read_as_the_python_source_and_pyarrow(spark, tmp_path, writer,
                                                               compression):
    table = _nested_table()
    whole = table.combine_chunks().to_batches()[0]
    batches = [whole.slice(0, 4), whole.slice(4, 0), whole.slice(4, 5), whole.slice(9)]
    path = str(tmp_path / "nested.arrow")
    _write(path, table, batches, writer, compression)
    jvm = spark.read.format(FMT).load(path)
    python = spark.read.format("arrowmm_python").option("cast", "true").load(path)
    assert jvm.schema == python.schema
    got = _spark_rows(jvm)
    assert got == _spark_rows(python)
    assert got == _pyarrow_rows(pa.ipc.open_file(path).read_all())
    assert jvm.count() == table.num_rows


def test_nested_fields_queries_and_pruning(spark, tmp_path):
    table = _nested_table(40)
    path = str(tmp_path / "nested.arrow")
    with arrowmm.new_file(path, table.schema, statistics=True) as w:  # filters meet statistics
        for b in table.to_batches(max_chunksize=7):
            w.write(b)
    df = spark.read.format(FMT).load(path)
    nested_filter = df.filter("st.a > 20 and id < 35").select("id")
    assert [r.id for r in nested_filter.orderBy("id").collect()] == [
        r["id"] for r in table.to_pylist()
        if r["st"] and r["st"]["a"] is not None and r["st"]["a"] > 20 and r["id"] < 35]
    # Spark narrows a struct to the fields a query uses; the reader keeps every field
    picked = df.select("id", F.col("st.p.tag").alias("tag"), F.col("st.s").alias("s"))
    expected = [{"id": r["id"], "tag": (r["st"] or {}).get("p") and r["st"]["p"]["tag"],
                 "s": r["st"] and r["st"]["s"]} for r in table.to_pylist()]
    assert _spark_rows(picked) == expected
    sizes = df.select("id", F.size("li").alias("n"), F.element_at("mp", "k").alias("k"))
    assert _spark_rows(sizes.filter("id >= 20")) == [
        {"id": r["id"], "n": None if r["li"] is None else len(r["li"]),
         "k": dict(r["mp"]).get("k") if r["mp"] else None}
        for r in table.to_pylist() if r["id"] >= 20]
    exploded = df.select("id", F.explode("ll").alias("v")).filter("v is not null")
    assert exploded.count() == sum(1 for r in table.to_pylist() for v in r["ll"] or []
                                   if v is not None)


def test_hostile_list_offsets_raise(spark, tmp_path):
    table = pa.table({"id": pa.array([0, 1, 2], pa.int64()),
                      "li": pa.array([[1], [2, 3], [4, 5, 6]], pa.list_(pa.int32()))})
    good = tmp_path / "good.arrow"
    _write(str(good), table, table.to_batches(), "pyarrow")
    data = good.read_bytes()
    offsets = struct.pack("<iiii", 0, 1, 3, 6)
    assert data.count(offsets) == 1
    for bad, message in [((0, 1, 3, 600), "column 'li', child 'item': field node length 6 is "
                                          "not 600 \\(the values its parent addresses\\)"),
                         ((0, 3, 1, 6), "column 'li', offsets buffer: offset 2 is 1, less than "
                                        "offset 1 \\(3\\)"),
                         ((-4, 1, 3, 6), "column 'li', offsets buffer: offset 0 is -4")]:
        hostile = tmp_path / "hostile.arrow"
        hostile.write_bytes(data.replace(offsets, struct.pack("<iiii", *bad)))
        with pytest.raises(Exception, match=message):
            spark.read.format(FMT).load(str(hostile)).collect()
    # the child's data buffer claims a terabyte
    values = struct.pack("<6i", 1, 2, 3, 4, 5, 6)
    assert data.count(values) == 1
    # the body starts with the id column's data (0, 1, 2): the only buffer at body offset 0
    relative = data.index(values) - data.index(struct.pack("<3q", 0, 1, 2))
    descriptor = struct.pack("<qq", relative, 24)
    assert data.count(descriptor) == 1
    hostile = tmp_path / "hostile_child.arrow"
    hostile.write_bytes(data.replace(descriptor, struct.pack("<qq", relative, 1 << 40)))
    with pytest.raises(Exception, match="column 'li', child 'item', buffer 1 .*do not fit"):
        spark.read.format(FMT).load(str(hostile)).collect()
    assert spark.read.format(FMT).load(str(good)).count() == 3  # the JVM is still fine


def test_kinds_not_read_are_refused_by_name(spark, tmp_path):
    table = pa.table({"id": [1], "lu": pa.array([[1]], pa.list_(pa.uint32())),
                      "d": pa.DictionaryArray.from_arrays(pa.array([0], pa.uint64()),
                                                          pa.array(["a"])),
                      "un": pa.array([1], pa.int8()).cast(pa.int8())})
    table = table.append_column("u", pa.UnionArray.from_sparse(
        pa.array([0], pa.int8()), [pa.array([1]), pa.array(["x"])]))
    path = str(tmp_path / "refused.arrow")
    _write(path, table, table.to_batches(), "pyarrow")
    with pytest.raises(Exception) as err:
        spark.read.format(FMT).load(path)
    message = str(err.value)
    assert "u: Union(Sparse, [0, 1])<0: Int(64, true), 1: Utf8> (Spark has no union type)" in message
    # list<uint32> and uint64 indices read, as the Python source reads them with cast
    assert "lu." not in message and "d: " not in message
    table = table.drop(["u"])
    _write(path, table, table.to_batches(), "pyarrow")
    row = spark.read.format(FMT).load(path).first()
    assert (row.lu, row.d) == ([1], "a")


def _dictionary_batches(grow: bool = True):
    """Three batches of one schema whose dictionaries grow (deltas when the writer emits
    them), with null indices, a null dictionary value, int and string dictionaries, and
    dictionaries inside a struct and a list."""
    words = ["zero", None, "two", "three", "四", "five"]
    batches = []
    for b, size in enumerate([3, 4, 6]):  # each dictionary extends the previous one
        ids = list(range(10 * b, 10 * b + 7))
        full = size if grow else 6
        idx = [None if i % 4 == 3 else (i * 5 + b) % size for i in range(7)]
        s = pa.DictionaryArray.from_arrays(pa.array(idx, pa.int8()), pa.array(words[:full]))
        n = pa.DictionaryArray.from_arrays(pa.array([(i + b) % size for i in range(7)],
                                                    pa.int32()),
                                           pa.array([100 * k for k in range(full)], pa.int64()))
        inner = pa.DictionaryArray.from_arrays(pa.array([i % size for i in range(7)],
                                                        pa.int16()),
                                               pa.array([f"w{k}" for k in range(full)]))
        st = pa.StructArray.from_arrays([inner], ["w"], mask=pa.array([i == 2 for i in range(7)]))
        lst = pa.ListArray.from_arrays(pa.array([0, 1, 1, 3, 3, 4, 6, 7], pa.int32()), inner)
        batches.append(pa.record_batch({"id": pa.array(ids, pa.int64()), "s": s, "n": n,
                                        "st": st, "lst": lst}))
    return batches


@pytest.mark.parametrize("writer,deltas,compression", [
    ("pyarrow", True, None), ("pyarrow", False, None), ("pyarrow", True, "zstd"),
    ("arrowmm", True, "lz4")])
def test_dictionary_columns_read_as_the_python_source_and_pyarrow(spark, tmp_path, writer,
                                                                   deltas, compression):
    batches = _dictionary_batches(grow=deltas)
    path = str(tmp_path / "dict.arrow")
    if writer == "arrowmm":
        with arrowmm.new_file(path, batches[0].schema, compression=compression,
                              emit_dictionary_deltas=True, statistics=True) as w:
            for b in batches:
                w.write(b)
    elif deltas:
        opts = pa.ipc.IpcWriteOptions(compression=compression, emit_dictionary_deltas=True)
        with pa.ipc.new_file(path, batches[0].schema, options=opts) as w:
            for b in batches:
                w.write_batch(b)
    else:  # one dictionary per column: the last (largest) one, sliced batches of it
        whole = pa.Table.from_batches(batches).combine_chunks()
        whole = whole.to_batches()[0]
        with pa.ipc.new_file(path, whole.schema) as w:
            for b in [whole.slice(0, 5), whole.slice(5, 0), whole.slice(5)]:
                w.write_batch(b)
    reader = pa.ipc.open_file(path)
    expected = reader.read_all()
    if deltas:
        assert reader.stats.num_dictionary_deltas > 0
    jvm = spark.read.format(FMT).load(path)
    python = spark.read.format("arrowmm_python").option("cast", "true").load(path)
    assert jvm.schema == python.schema
    assert [f.dataType.simpleString() for f in jvm.schema.fields] == [
        "bigint", "string", "bigint", "struct<w:string>", "array<string>"]
    got = _spark_rows(jvm)
    assert got == _spark_rows(python)
    decoded = pa.table({name: expected[name].cast(expected[name].type.value_type)
                        if pa.types.is_dictionary(expected[name].type) else expected[name]
                        for name in ["id", "s", "n"]})
    assert [{k: r[k] for k in ["id", "s", "n"]} for r in got] == _pyarrow_rows(decoded)
    assert [r["lst"] for r in got] == [
        None if v is None else list(v) for v in expected["lst"].to_pylist()]
    assert jvm.filter("s is null").count() == sum(v is None for v in decoded["s"].to_pylist())
    assert jvm.select("n").distinct().count() == len(set(decoded["n"].to_pylist()))
    assert jvm.filter("s = 'two' or n = 300").count() == sum(
        s_ == "two" or n_ == 300 for s_, n_ in zip(decoded["s"].to_pylist(),
                                                  decoded["n"].to_pylist()))


def test_hostile_dictionary_indices_raise(spark, tmp_path):
    arr = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 1], pa.int32()),
                                         pa.array(["a", "b", "c"]))
    table = pa.table({"id": pa.array([0, 1, 2, 3], pa.int64()), "d": arr})
    good = tmp_path / "good.arrow"
    _write(str(good), table, table.to_batches(), "pyarrow")
    data = good.read_bytes()
    indices = struct.pack("<4i", 0, 1, 2, 1)
    assert data.count(indices) == 1
    hostile = tmp_path / "hostile.arrow"
    hostile.write_bytes(data.replace(indices, struct.pack("<4i", 0, 1, 1 << 30, 1)))
    with pytest.raises(Exception, match="column 'd': index 1073741824 at row 2 is outside the "
                                        "3-value dictionary"):
        spark.read.format(FMT).load(str(hostile)).collect()
    # a column that does not use the dictionary reads without touching it
    assert spark.read.format(FMT).load(str(hostile)).select("id").count() == 4
    assert sorted(r.d for r in spark.read.format(FMT).load(str(good)).collect()) == [
        "a", "b", "b", "c"]


def test_files_of_one_spark_schema_and_different_layouts_read_each_by_its_own(spark, tmp_path):
    # the same Spark schema (id bigint, s string, li array<bigint>) from three Arrow layouts:
    # each file must be read by its own buffers, not by the first file's
    words = ["a", None, "ccc", "dd"]
    layouts = [
        (pa.array(words), pa.array([[1], None, [], [2, 3]], pa.list_(pa.int64()))),
        (pa.array(words, pa.large_string()),
         pa.array([[4, 5], [], None, [6]], pa.large_list(pa.int64()))),
        (pa.array(words).dictionary_encode(),
         pa.array([[7, 8], [9, 10], [11, 12], None], pa.list_(pa.int64(), 2))),
    ]
    expected = []
    for k, (s, li) in enumerate(layouts):
        table = pa.table({"id": pa.array(range(10 * k, 10 * k + 4), pa.int64()), "s": s,
                          "li": li})
        _write(str(tmp_path / f"part-{k}.arrow"), table, table.to_batches(), "pyarrow")
        expected += [{"id": 10 * k + i, "s": words[i], "li": li[i].as_py()} for i in range(4)]
    df = spark.read.format(FMT).load(str(tmp_path))
    assert [f.dataType.simpleString() for f in df.schema.fields] == [
        "bigint", "string", "array<bigint>"]
    assert _spark_rows(df) == expected
