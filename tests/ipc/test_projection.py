"""Projection and row selection at open (issue 18, item 1): ``columns=``, ``num_rows``,
``count_rows()``, ``head(n)``, ``slice(offset, length)``; pyarrow is the oracle."""
import io

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pytest

import arrowmm
from arrowmm import ArrowInvalid, ArrowNotImplementedError


def _table():
    n = 10
    return pa.table({
        "i": pa.array(list(range(n)), pa.int64()),
        "s": pa.array([None if k % 4 == 0 else f"v{k}" for k in range(n)]),
        "f": pa.array([k / 2 for k in range(n)], pa.float32()),
        "d": pa.array([["a", "b"][k % 2] for k in range(n)]).dictionary_encode(),
        "st": pa.array([{"a": k, "b": str(k)} for k in range(n)]),
    })


def _write(path, table, fmt="file", compression=None, chunk=4):
    opts = pa.ipc.IpcWriteOptions(compression=compression)
    new = pa.ipc.new_file if fmt == "file" else pa.ipc.new_stream
    with new(str(path), table.schema, options=opts) as w:
        w.write_table(table, max_chunksize=chunk)
    return str(path)


class _Pipe:
    """A file object with ``read()`` only (no buffer protocol, no seeking): a pipe."""

    def __init__(self, data):
        self._f = io.BytesIO(data)

    def read(self, n=-1):
        return self._f.read(n)


OPENERS = {
    "file": lambda p, **kw: arrowmm.open_file(p, **kw),
    "file-unmapped": lambda p, **kw: arrowmm.open_file(p, mmap=False, **kw),
    "file-buffer": lambda p, **kw: arrowmm.open_file(open(p, "rb").read(), **kw),
    "stream": lambda p, **kw: arrowmm.open_stream(p, **kw),
    "stream-bytesio": lambda p, **kw: arrowmm.open_stream(io.BytesIO(open(p, "rb").read()), **kw),
    "stream-pipe": lambda p, **kw: arrowmm.open_stream(_Pipe(open(p, "rb").read()), **kw),
    "open": lambda p, **kw: arrowmm.open(p, **kw),
}


@pytest.mark.parametrize("how", sorted(OPENERS))
@pytest.mark.parametrize("columns", [["s", "i"], [2, 0], ["d"], [-1, "i"], ["i", "i"]])
def test_columns_match_pyarrow_select(tmp_path, how, columns):
    table = _table()
    fmt = "stream" if how.startswith("stream") else "file"
    path = _write(tmp_path / "t", table, fmt)
    want = table.select(columns)
    with OPENERS[how](path, columns=columns) as reader:
        assert reader.schema.names == want.schema.names
        got = pa.table(reader)
    assert got.equals(want)


@pytest.mark.parametrize("compression", [None, "lz4", "zstd"])
def test_columns_not_asked_for_are_never_decoded(tmp_path, compression):
    table = _table()
    path = _write(tmp_path / "t.arrow", table, compression=compression)
    with arrowmm.open_file(path, columns=["f", "s"]) as reader:
        batches = list(reader)
        # listing batches decodes no column (the file's one dictionary batch is read once)
        before = reader.stats.columns_loaded
        assert before <= 1
        got = {"f": [], "s": []}
        for b in batches:
            for k, v in b.to_pydict().items():
                got[k].extend(v)
        assert got == table.select(["f", "s"]).to_pydict()
        loaded = reader.stats.columns_loaded - before
    # the two projected columns of each of the 3 batches, and nothing of i, d, st
    assert loaded == 2 * len(batches) == 6


def test_exports_honour_the_projection(tmp_path):
    table = _table()
    path = _write(tmp_path / "t.arrow", table)
    want = table.select(["s", "f"])
    with arrowmm.open_file(path, columns=["s", "f"]) as reader:
        assert pa.table(reader).equals(want)
    with arrowmm.open_file(path, columns=["s", "f"]) as reader:
        assert reader.to_pandas().equals(want.to_pandas())
    with arrowmm.open_file(path, columns=["s", "f"]) as reader:
        assert reader.read_all().to_pydict() == want.to_pydict()
    with arrowmm.open_stream(_write(tmp_path / "t.arrows", table, "stream"),
                             columns=["s", "f"]) as reader:
        assert pa.table(reader).equals(want)
    duckdb = pytest.importorskip("duckdb")
    with arrowmm.open_file(path, columns=["i"]) as reader:
        rel = duckdb.from_arrow(reader)
        assert rel.columns == ["i"] and sorted(r[0] for r in rel.fetchall()) == list(range(10))


def test_bad_columns_are_arrow_invalid_naming_them(tmp_path):
    path = _write(tmp_path / "t.arrow", _table())
    with pytest.raises(ArrowInvalid, match=r"no column named 'nope'.*\['i', 's', 'f', 'd', 'st'\]"):
        arrowmm.open_file(path, columns=["i", "nope"])
    with pytest.raises(ArrowInvalid, match="index 5 out of range"):
        arrowmm.open_stream(path, columns=[5])
    with pytest.raises(ArrowInvalid, match="list of column names"):
        arrowmm.open(path, columns="i")
    with pytest.raises(ArrowInvalid, match="is a float"):
        arrowmm.open_file(path, columns=[1.0])
    with pytest.raises(ArrowInvalid, match="no column named 'sx.a'"):
        arrowmm.open_file(path, columns=["sx.a"])


def test_num_rows_from_headers_without_decoding(tmp_path):
    table = _table()
    path = _write(tmp_path / "t.arrow", table, compression="zstd", chunk=3)
    with arrowmm.open_file(path) as reader:
        assert reader.num_rows == reader.count_rows() == table.num_rows == 10
        assert reader.batch_num_rows() == [3, 3, 3, 1]
        assert reader.stats.as_dict()["columns_loaded"] == 0
        assert reader.stats.as_dict()["bytes_decompressed"] == 0
    spath = _write(tmp_path / "t.arrows", table, "stream", chunk=3)
    with arrowmm.open_stream(spath) as reader:
        reader.read_next_batch()
        assert reader.num_rows == 10  # the whole stream, read ahead of the position
        assert reader.read_next_batch().num_rows == 3  # ... which did not move
        assert reader.count_rows() == 10
    with arrowmm.open_stream(_Pipe(open(spath, "rb").read())) as reader:
        with pytest.raises(ArrowNotImplementedError, match="count_rows"):
            reader.num_rows
        reader.read_next_batch()
        assert reader.count_rows() == 7  # the remaining rows, read


@pytest.mark.parametrize("fmt", ["file", "stream"])
@pytest.mark.parametrize("offset,length", [(0, 0), (0, 3), (2, 5), (3, 4), (9, 10), (10, 1),
                                           (12, 3), (5, None), (0, None)])
def test_slice_across_batches_matches_pyarrow(tmp_path, fmt, offset, length):
    table = _table()
    path = _write(tmp_path / "t", table, fmt, chunk=3)
    want = table.slice(offset, length) if length is not None else table.slice(offset)
    with arrowmm.open(path, columns=["i", "s"]) as reader:
        got = reader.slice(offset, length)
    assert isinstance(got, arrowmm.Table)
    assert got.num_rows == want.num_rows
    assert got.to_pydict() == want.select(["i", "s"]).to_pydict()


@pytest.mark.parametrize("fmt", ["file", "stream"])
@pytest.mark.parametrize("n", [0, 1, 3, 4, 10, 25])
def test_head(tmp_path, fmt, n):
    table = _table()
    path = _write(tmp_path / "t", table, fmt, chunk=3)
    with arrowmm.open(path) as reader:
        got = reader.head(n)
    assert got.num_rows == min(n, 10)
    assert pa.table(got).equals(table.slice(0, n)) if n else got.to_pydict()["i"] == []


def test_head_and_slice_refuse_negative(tmp_path):
    path = _write(tmp_path / "t.arrow", _table())
    with arrowmm.open_file(path) as reader:
        with pytest.raises(ArrowInvalid, match=">= 0"):
            reader.head(-1)
        with pytest.raises(ArrowInvalid, match=">= 0"):
            reader.slice(-1, 2)
        with pytest.raises(ArrowInvalid, match=">= 0"):
            reader.slice(1, -2)


def test_file_slice_reads_only_the_batches_it_needs(tmp_path):
    table = _table().select(["i", "s", "f"])  # (no dictionary batch to count)
    path = _write(tmp_path / "t.arrow", table, compression="lz4", chunk=3)
    with arrowmm.open_file(path) as reader:
        got = reader.slice(4, 2)  # inside batch 1
        assert [b.num_rows for b in got.to_batches()] == [2]
        assert got.column("i").to_pylist() == [4, 5]
        assert reader.stats.columns_loaded == 1


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_nested_paths_read_struct_fields(tmp_path, fmt):
    inner = pa.array([{"a": k, "b": {"c": f"c{k}"}} if k % 3 else None for k in range(10)],
                     pa.struct([("a", pa.int32()), ("b", pa.struct([("c", pa.string())]))]))
    table = pa.table({"i": pa.array(range(10), pa.int64()), "st": inner})
    path = _write(tmp_path / "t", table, fmt, chunk=4)
    rows = table.column("st").to_pylist()
    with arrowmm.open(path, columns=["st.b.c", "i", "st.a"]) as reader:
        assert reader.schema.names == ["st.b.c", "i", "st.a"]
        assert str(reader.schema.field("st.a").type) == "int32"
        got = pa.table(reader)
    # null where the struct row is null, as pyarrow.compute.struct_field gives it
    assert got.column("st.a").to_pylist() == [None if r is None else r["a"] for r in rows]
    assert got.column("st.a").to_pylist() == \
        pa.compute.struct_field(table.column("st"), [0]).to_pylist()
    assert got.column("st.b.c").to_pylist() == [None if r is None else r["b"]["c"] for r in rows]
    assert got.column("i").to_pylist() == list(range(10))
    with pytest.raises(ArrowInvalid, match=r"'st.z'.*no field\(s\) named 'z'.*\['a', 'b'\]"):
        arrowmm.open(path, columns=["st.z"])
    with pytest.raises(ArrowInvalid, match="'i' is int64, not a struct"):
        arrowmm.open(path, columns=["i.x"])
