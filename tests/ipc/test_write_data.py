"""Writers that take data (issue 32): ``new_file`` / ``new_stream`` given data in place of a
schema, ``write_file`` / ``write_stream``, ``write_table(max_chunksize=...)``, the default
chunking, mismatch errors naming the field, and ``cast=True`` (``arrowmm.interop.cast``).
pyarrow is the oracle: it reads what arrowmm wrote, and its own writer and safe ``cast``
give the batches and values expected."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.ipc as ipc
import pytest

import arrowmm
from arrowmm.ipc.core.statistics import STATISTICS_KEY


def _pa_file(path_or_bytes):
    r = ipc.open_file(path_or_bytes)
    return r.read_all(), [r.get_batch(i).num_rows for i in range(r.num_record_batches)]


def _pa_stream(path_or_bytes):
    batches = list(ipc.open_stream(path_or_bytes))
    return pa.Table.from_batches(batches), [b.num_rows for b in batches]


def _frame(n):
    rng = np.random.default_rng(1)
    return pd.DataFrame({"id": np.arange(n, dtype=np.int64), "x": rng.random(n),
                         "s": pd.Categorical(rng.choice(["a", "b", "c"], n)),
                         "t": pd.date_range("2024-01-01", periods=n, freq="s")})


# -- data in place of the schema ---------------------------------------------------------------

def _inputs(tmp_path):
    base = pa.table({"i": pa.array([1, None, 3, 4, 5], pa.int32()),
                     "s": ["a", "bb", None, "dddd", "e"]})
    chunked = pa.concat_tables([base.slice(0, 2), base.slice(2)])
    path = tmp_path / "src.arrow"
    with ipc.new_file(path, base.schema) as w:
        w.write_table(chunked)
    yield "pandas", base.to_pandas(), pa.Table.from_pandas(base.to_pandas())
    yield "polars", pl.from_arrow(base), pa.table(pl.from_arrow(base))  # (string_view)
    yield "pyarrow table", chunked, chunked
    yield "pyarrow batch", base.to_batches()[0], base
    reader = pa.RecordBatchReader.from_batches(base.schema, chunked.to_batches())
    yield "pyarrow reader", reader, base
    yield "arrowmm table", arrowmm.open_file(path).read_all(), chunked
    yield "arrowmm reader", arrowmm.open_file(path), chunked
    yield "dict", {"i": [1, None, 3], "s": ["a", None, "c"]}, pa.table({"i": [1, None, 3],
                                                                        "s": ["a", None, "c"]})


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_new_writers_and_write_calls_take_data(tmp_path, fmt):
    new, write, read = ((arrowmm.new_file, arrowmm.write_file, _pa_file) if fmt == "file"
                        else (arrowmm.new_stream, arrowmm.write_stream, _pa_stream))
    for name, data, want in _inputs(tmp_path):
        path = tmp_path / f"{name}.out"
        write(path, data)
        got, _ = read(str(path))
        assert got.schema.equals(want.schema), name
        assert got.to_pydict() == want.to_pydict(), name
    for name, data, want in _inputs(tmp_path):  # new_*: the data first, then more batches
        sink = io.BytesIO()
        with new(sink, data) as w:
            w.write_table(want)
        got, _ = read(sink.getvalue())
        assert got.to_pydict() == pa.concat_tables([want, want]).to_pydict(), name


def test_a_big_dataframe_is_cut_as_pyarrow_cuts_it_for_feather(tmp_path):
    df = _frame(150_000)
    arrowmm.write_file(tmp_path / "mm.arrow", df)
    feather.write_feather(df, tmp_path / "pa.arrow", compression="uncompressed")
    got, sizes = _pa_file(tmp_path / "mm.arrow")
    want, want_sizes = _pa_file(tmp_path / "pa.arrow")
    assert sizes == want_sizes == [65536, 65536, 150_000 - 2 * 65536]
    assert got.equals(want)
    assert ipc.open_file(tmp_path / "mm.arrow").read_pandas().equals(df)


@pytest.mark.parametrize("fmt", ["file", "stream"])
@pytest.mark.parametrize("max_chunksize", [None, 0, -1, 1, 3, 4, 100])
def test_write_table_max_chunksize_as_pyarrow(fmt, max_chunksize):
    base = pa.table({"x": list(range(10)), "s": [str(i) for i in range(10)]})
    table = pa.concat_tables([base.slice(0, 0), base.slice(0, 4), base.slice(4)])
    mine, theirs = io.BytesIO(), io.BytesIO()
    new_mm, new_pa, read = ((arrowmm.new_file, ipc.new_file, _pa_file) if fmt == "file"
                            else (arrowmm.new_stream, ipc.new_stream, _pa_stream))
    with new_mm(mine, table.schema) as w:
        w.write_table(table, max_chunksize=max_chunksize)
    with new_pa(theirs, table.schema) as w:
        w.write_table(table, max_chunksize=max_chunksize)
    got, sizes = read(mine.getvalue())
    want, want_sizes = read(theirs.getvalue())
    assert sizes == want_sizes
    assert got.equals(want)


@pytest.mark.parametrize("max_chunksize, sizes", [(None, [65536, 4464, 1000]),
                                                  (0, [70000, 1000]),
                                                  (30000, [30000, 30000, 10000, 1000])])
def test_one_call_writers_cut_only_big_batches(tmp_path, max_chunksize, sizes):
    table = pa.concat_tables([pa.table({"x": np.arange(70000)}), pa.table({"x": np.arange(1000)})])
    arrowmm.write_file(tmp_path / "out.arrow", table, max_chunksize=max_chunksize)
    got, got_sizes = _pa_file(tmp_path / "out.arrow")
    assert got_sizes == sizes
    assert got.equals(table.combine_chunks())


def test_one_call_writers_record_statistics_by_default(tmp_path):
    df = _frame(100_000)
    arrowmm.write_file(tmp_path / "stats.arrow", df)
    arrowmm.write_file(tmp_path / "plain.arrow", df, statistics=False)
    assert STATISTICS_KEY in (arrowmm.open_file(tmp_path / "stats.arrow").metadata or {})
    assert STATISTICS_KEY not in (arrowmm.open_file(tmp_path / "plain.arrow").metadata or {})
    arrowmm.write_stream(tmp_path / "stats.arrows", df)
    with arrowmm.open_stream(tmp_path / "stats.arrows") as stream:
        assert STATISTICS_KEY in (stream.read_next_batch().metadata or {})
    got = arrowmm.dataset(str(tmp_path / "stats.arrow")).to_table(filter=[("id", ">=", 99_990)])
    assert got.column("id").to_pylist() == list(range(99_990, 100_000))


def test_what_is_not_data_is_refused_before_anything_is_written(tmp_path):
    schema = arrowmm.schema([("x", arrowmm.int64())])
    with pytest.raises(arrowmm.ArrowInvalid, match=r"write_file\(\) writes data"):
        arrowmm.write_file(tmp_path / "a.arrow", schema)
    with pytest.raises(arrowmm.ArrowInvalid, match="max_chunksize applies to data"):
        arrowmm.new_file(tmp_path / "b.arrow", schema, max_chunksize=10)
    with pytest.raises(arrowmm.ArrowInvalid, match="max_chunksize must be an int"):
        arrowmm.write_file(tmp_path / "c.arrow", {"x": [1]}, max_chunksize="10")
    with pytest.raises(arrowmm.ArrowInvalid, match="expected a schema or data"):
        arrowmm.new_file(tmp_path / "d.arrow", 3)
    assert list(tmp_path.iterdir()) == []


# -- mismatches name the field; cast=True -----------------------------------------------------

def _mismatches():
    yield "type", pa.table({"x": pa.array([1], pa.int32()), "s": ["a"]}), \
        "column 'x' is int32, the writer's is int64: write with cast=True"
    yield "uncastable", pa.table({"x": [1.5], "s": ["a"]}), \
        "column 'x' is double, the writer's is int64: cast=True cannot"
    yield "name", pa.table({"y": [1], "s": ["a"]}), \
        (r"column 0 is named 'y', the writer's 'x' \(missing \['x'\]; "
         r"not in the writer's schema: \['y'\]")
    yield "order", pa.table({"s": ["a"], "x": [1]}), \
        r"the columns are \['s', 'x'\] where the writer's are \['x', 's'\]: select them"
    yield "fewer", pa.table({"x": [1]}), r"1 column\(s\) where the writer's schema has 2"
    yield "nullable", pa.table({"x": [1], "s": ["a"]}).cast(pa.schema(
        [pa.field("x", pa.int64(), False), pa.field("s", pa.string())])), \
        "column 'x' is not nullable, the writer's is nullable: write with cast=True"


@pytest.mark.parametrize("kind, table, message", list(_mismatches()),
                         ids=[k for k, _, _ in _mismatches()])
def test_a_mismatch_names_the_field_both_types_and_the_fix(kind, table, message):
    schema = pa.schema([("x", pa.int64()), ("s", pa.string())])
    sink = io.BytesIO()
    with arrowmm.new_file(sink, schema) as w:
        with pytest.raises(arrowmm.ArrowInvalid, match=message) as info:
            w.write(table)
        assert "\n" not in str(info.value)  # one line, not two whole schemas
    assert ipc.open_file(sink.getvalue()).num_record_batches == 0


def _casts():
    ints = pa.array([1, None, -3, 120], pa.int8())
    yield ints, pa.int64()
    yield ints, pa.int16()
    yield pa.array([1, None, 300, 2 ** 31 - 1], pa.int64()), pa.int32()
    yield pa.array([0, None, 255], pa.uint8()), pa.int16()
    yield pa.array([5, None, 7], pa.int64()), pa.uint8()
    yield pa.array([1.5, None, -2.25], pa.float32()), pa.float64()
    yield pa.array([1, None, 2 ** 53], pa.int64()), pa.float64()
    yield pa.array([1, None, 2 ** 24], pa.int32()), pa.float32()
    strings = pa.array(["a", None, "", "a longer value than twelve", "ü"])
    yield strings, pa.large_string()
    yield strings.cast(pa.large_string()), pa.string()
    yield strings, pa.string_view()
    yield pa.array([b"x", None, b"yy" * 20]), pa.large_binary()
    yield pa.array([b"x", None, b"yy" * 20], pa.large_binary()), pa.binary()
    yield strings.dictionary_encode(), pa.string()
    yield strings, pa.dictionary(pa.int32(), pa.string())
    yield strings.dictionary_encode().cast(pa.dictionary(pa.int8(), pa.string())), \
        pa.dictionary(pa.uint32(), pa.string_view())


def _type_id(x):
    return str(x) if isinstance(x, pa.DataType) else ""


@pytest.mark.parametrize("fmt", ["file", "stream"])
@pytest.mark.parametrize("values, to", list(_casts()), ids=_type_id)
def test_cast_true_casts_as_pyarrow_safe_cast(fmt, values, to):
    table = pa.table({"v": values, "n": pa.array(range(len(values)), pa.int64())})
    want_schema = pa.schema([("v", to), ("n", pa.int64())])
    want = table.cast(want_schema, safe=True)
    new, read = (arrowmm.new_file, _pa_file) if fmt == "file" else (arrowmm.new_stream, _pa_stream)
    sink = io.BytesIO()
    with new(sink, want_schema, cast=True) as w:
        w.write(table)
        w.write(table.slice(1))  # an offset into every buffer
    got, _ = read(sink.getvalue())
    assert got.schema.equals(want_schema)
    assert got.to_pylist() == pa.concat_tables([want, want.slice(1)]).to_pylist()
    with pytest.raises(arrowmm.ArrowInvalid, match="write with cast=True"):
        arrowmm.new_file(io.BytesIO(), want_schema).write(table)


def _refused():
    yield pa.array([1, 2 ** 40], pa.int64()), pa.int32(), r"value 1099511627776 is outside int32"
    yield pa.array([-1], pa.int64()), pa.uint64(), "value -1 is outside uint64"
    yield pa.array([1, 2 ** 53 + 1], pa.int64()), pa.float64(), "no exact double"
    yield pa.array([1.5]), pa.float32(), "double to float may round"
    yield pa.array([1.5]), pa.int64(), "not a safe cast"
    yield pa.array([1], pa.timestamp("s")), pa.timestamp("ms"), "not a safe cast"
    yield pa.array([[1]], pa.list_(pa.int32())), pa.list_(pa.int64()), "not a safe cast"


@pytest.mark.parametrize("values, to, message", list(_refused()), ids=_type_id)
def test_cast_true_refuses_what_is_not_safe_naming_the_field(values, to, message):
    table = pa.table({"v": values})
    schema = pa.schema([("v", to)])
    if "value" in message or "exact" in message:  # pyarrow's safe cast refuses them too
        with pytest.raises(pa.ArrowInvalid):
            table.cast(schema, safe=True)
    sink = io.BytesIO()
    with arrowmm.new_file(sink, schema, cast=True) as w:
        with pytest.raises(arrowmm.ArrowInvalid, match=f"field 'v'.*{message}"):
            w.write(table)
    assert ipc.open_file(sink.getvalue()).num_record_batches == 0


def test_cast_true_refuses_nulls_for_a_non_nullable_field():
    schema = pa.schema([pa.field("v", pa.int64(), nullable=False)])
    sink = io.BytesIO()
    with arrowmm.new_file(sink, schema, cast=True) as w:
        w.write(pa.table({"v": [1, 2]}))  # nullable without nulls: written
        with pytest.raises(arrowmm.ArrowInvalid, match="field 'v': 1 null"):
            w.write(pa.table({"v": [1, None]}))
    assert ipc.open_file(sink.getvalue()).read_all().to_pydict() == {"v": [1, 2]}


def test_appending_a_pandas_frame_to_a_file_polars_wrote(tmp_path):
    """The issue's example: polars writes a categorical as dictionary<string_view, uint32>,
    pandas gives dictionary<string, int8>; cast=True encodes against the file's dictionary."""
    path = tmp_path / "pl.arrow"
    (pl.DataFrame({"k": ["a", "b", "a"], "x": [1, 2, 3]})
     .with_columns(pl.col("k").cast(pl.Categorical)).write_ipc(path, compression="uncompressed"))
    frame = pd.DataFrame({"k": pd.Categorical(["b", None, "a"]), "x": [4, 5, 6]})
    with pytest.raises(arrowmm.ArrowInvalid,
                       match=r"column 'k' is dictionary<values=string, indices=int8, ordered=0>, "
                             r"the file's is dictionary<values=string_view, indices=uint32, "
                             r"ordered=0>: write with cast=True"):
        with arrowmm.append_file(path) as w:
            w.write(frame)
    with arrowmm.append_file(path, cast=True) as w:
        w.write(frame)
    want = {"k": ["a", "b", "a", "b", None, "a"], "x": [1, 2, 3, 4, 5, 6]}
    assert ipc.open_file(path).read_all().to_pydict() == want
    assert pl.read_ipc(path).with_columns(
        pl.col("k").cast(pl.String)).to_dict(as_series=False) == want
    new = pd.DataFrame({"k": pd.Categorical(["z"]), "x": [7]})  # a value the file lacks
    with pytest.raises(arrowmm.ArrowInvalid, match="dictionary 0 .field 'k'. grew"):
        with arrowmm.append_file(path, cast=True) as w:
            w.write(new)
    with arrowmm.append_file(path, cast=True, emit_dictionary_deltas=True) as w:
        w.write(new)
    assert ipc.open_file(path).read_all().column("k").to_pylist()[-1] == "z"


def test_the_writer_docstring_examples_run():
    import doctest

    import arrowmm.ipc.write.writer as writer
    result = doctest.testmod(writer, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
