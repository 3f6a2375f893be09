"""Datasets on valid data with pyarrow.dataset's answers (review 12): hive partition values keep
their folder's text until their type is final, integers are ASCII digits in the type's range,
a value not UTF-8 after URL decoding is refused; isin on a float column promoted from a
narrower file, a glob of folders over S3, a file listed twice."""
from __future__ import annotations

import os
import re

import pytest

import arrowmm
from arrowmm import ArrowInvalid
from arrowmm.dataset.partitioning import infer_hive
from tests.support.s3_support import s3_filesystem  # noqa: F401  (a fixture)

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
pds = pytest.importorskip("pyarrow.dataset")


def _write(path, table, statistics=False):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    arrowmm.write_file(path, table, statistics=statistics)


def _hive(root, folders):
    """One file of ``x=[i]`` under each folder (relative to ``root``)."""
    for i, folder in enumerate(folders):
        _write(os.path.join(root, folder, f"part-{i}.arrow"),
               pa.table({"x": pa.array([i], pa.int64())}))
    return str(root)


def _both(root):
    """pyarrow's table and arrowmm's (as pyarrow) of the hive dataset at ``root``."""
    want = pds.dataset(root, format="ipc", partitioning="hive").to_table()
    got = pa.table(arrowmm.dataset(root, partitioning="hive").to_table())
    return want, got


def _keyed_schemas(ptype, mtype):
    return (pa.schema([("x", pa.int64()), ("k", ptype)]),
            arrowmm.schema([("x", arrowmm.int64()), ("k", mtype)]))


def test_schema_given_string_partition_keeps_folder_text(tmp_path):
    # (every folder looked like an integer: the values were made int32, then str() again)
    root = _hive(tmp_path, ["k=007", "k=-0", "k=1"])
    psch, msch = _keyed_schemas(pa.string(), arrowmm.string())
    want = pds.dataset(root, format="ipc", partitioning="hive", schema=psch).to_table()
    assert want.column("k").to_pylist() == ["-0", "007", "1"]
    ds = arrowmm.dataset(root, partitioning="hive", schema=msch)
    assert pa.table(ds.to_table()).column("k").to_pylist() == want.column("k").to_pylist()
    assert ds.count_rows(filter=[("k", "==", "007")]) == 1


@pytest.mark.parametrize("ptype, mtype", [(pa.binary(), arrowmm.binary()),
                                          (pa.large_binary(), arrowmm.large_binary())])
def test_schema_given_binary_partition_matches_bytes(tmp_path, ptype, mtype):
    # (the values stayed str: "a" == b"a" is False, so every file was pruned unopened)
    root = _hive(tmp_path, ["k=a", "k=b"])
    psch, msch = _keyed_schemas(ptype, mtype)
    theirs = pds.dataset(root, format="ipc", partitioning="hive", schema=psch)
    ds = arrowmm.dataset(root, partitioning="hive", schema=msch)
    for mine, expr in (([("k", "==", b"a")], pc.field("k") == b"a"),
                       ([("k", "in", [b"a", b"b"])], pc.field("k").isin([b"a", b"b"])),
                       ([("k", "<", b"b")], pc.field("k") < b"b")):
        want = theirs.to_table(filter=expr).column("k").to_pylist()
        assert want
        assert pa.table(ds.to_table(filter=mine)).column("k").to_pylist() == want
        assert ds.count_rows(filter=mine) == len(want)
    assert ds.count_rows(filter=arrowmm.field("k") == b"a") == 1


@pytest.mark.parametrize("folder", ["k=+5", "k=１２", "k=٣", "k=1٠"])
def test_hive_integers_are_ascii_digits_only(tmp_path, folder):
    # (str.isdigit and int take any Unicode digit, and lstrip("+-") took a "+"; pyarrow: text)
    want, got = _both(_hive(tmp_path, [folder, "k=2"]))
    assert want.schema.field("k").type == pa.string()
    assert got.schema == want.schema
    assert got.column("k").to_pylist() == want.column("k").to_pylist()


def test_hive_value_of_thousands_of_digits_is_a_string():
    # (an object store's key may be that long: int() refuses past 4,300 digits, a ValueError)
    digits = "9" * 5000
    fields, values = infer_hive([[("k", digits)]], ["s3://b/ds/part-0.arrow"])
    assert [(f.name, f.type) for f in fields] == [("k", arrowmm.string())]
    assert values == [{"k": digits}]


@pytest.mark.parametrize("folder", ["k=--5", "k=+-5", "k=²"])
def test_hive_signs_and_superscripts_are_strings_not_a_valueerror(tmp_path, folder):
    # (these reached int() and raised a bare ValueError naming no folder)
    want, got = _both(_hive(tmp_path, [folder, "k=2"]))
    assert want.schema.field("k").type == pa.string()
    assert got.column("k").to_pylist() == want.column("k").to_pylist()


@pytest.mark.parametrize("folder, ptype, mtype", [
    ("k=300", pa.int8(), arrowmm.int8()), ("k=5000000000", pa.int32(), arrowmm.int32()),
    ("k=-1", pa.uint32(), arrowmm.uint32()), ("k=-0", pa.uint8(), arrowmm.uint8()),
    ("k=+5", pa.int32(), arrowmm.int32()), ("k=٣", pa.int32(), arrowmm.int32())])
def test_schema_given_integer_partition_refuses_what_pyarrow_cannot_parse(tmp_path, folder,
                                                                          ptype, mtype):
    # (300 as int8 overflowed when the lazy table was read, an OverflowError naming no file)
    root = _hive(tmp_path, [folder])
    psch, msch = _keyed_schemas(ptype, mtype)
    with pytest.raises(pa.ArrowInvalid, match="error parsing"):
        pds.dataset(root, format="ipc", partitioning="hive", schema=psch)
    with pytest.raises(ArrowInvalid, match=re.escape(folder) + ".*" +
                       re.escape(f"{folder[2:]!r} of 'k' is not an integer")):
        arrowmm.dataset(root, partitioning="hive", schema=msch)


@pytest.mark.parametrize("folder", ["k=%FF", "%FF=1", "k=a%C3"])
def test_hive_folder_not_utf8_after_decoding_raises(tmp_path, folder):
    # (unquote replaced the bytes by U+FFFD: different folders could read as one value)
    root = _hive(tmp_path, [folder])
    with pytest.raises(pa.ArrowInvalid, match="UTF-8"):
        pds.dataset(root, format="ipc", partitioning="hive")
    with pytest.raises(ArrowInvalid, match=re.escape(folder) + ".*not valid UTF-8 after URL"):
        arrowmm.dataset(root, partitioning="hive")


def test_hive_folder_name_not_utf8_raises(tmp_path):
    # (a folder named in other bytes held surrogate escapes: a ConversionError in the scan)
    root = _hive(tmp_path, ["k=1"])
    os.rename(os.path.join(root, "k=1"), os.path.join(os.fsencode(root), b"k=\xff"))
    with pytest.raises(ArrowInvalid, match="not valid UTF-8"):
        arrowmm.dataset(root, partitioning="hive")


@pytest.mark.parametrize("statistics", [False, True])
@pytest.mark.parametrize("files, values", [
    ((pa.float64(), pa.float32()), [16777217]), ((pa.float64(), pa.float32()), [0.1]),
    ((pa.float64(), pa.float32()), [16777216, 0.1]),
    ((pa.float32(), pa.int16()), [1.00000001])])
def test_isin_on_a_column_promoted_to_float_is_judged_as_the_dataset_type(tmp_path, statistics,
                                                                           files, values):
    # (the file's own float32 column was judged, with the set cast to float32: 16777217 became
    # 16777216; an int16 file's column was judged as integers: 1.00000001 matched no row)
    first, second = files
    _write(str(tmp_path / "a.arrow"), pa.table({"v": pa.array([0.1, 16777217.0, 1.0], first)}),
           statistics)
    _write(str(tmp_path / "b.arrow"), pa.table({"v": pa.array(
        [0.1, 16777217.0, 1.0] if pa.types.is_floating(second) else [1, 3, 7], second)}),
        statistics)
    theirs = pds.dataset(str(tmp_path), format="ipc", schema=pa.schema([("v", first)]))
    ds = arrowmm.dataset(str(tmp_path))
    assert pa.table(ds.to_table()).schema.field("v").type == first  # (promoted, as documented)
    for mine, expr in (([("v", "in", values)], pc.field("v").isin(values)),
                       ([("v", "not in", values)], ~pc.field("v").isin(values))):
        want = theirs.to_table(filter=expr).column("v").to_pylist()
        assert pa.table(ds.to_table(filter=mine)).column("v").to_pylist() == want
        assert ds.count_rows(filter=mine) == len(want)


def test_s3_glob_of_folders_reads_their_files(tmp_path, s3_server, s3_filesystem):  # noqa: F811
    # (only the glob's matches that were files were kept: 0 columns and 0 rows, no error)
    root = _hive(tmp_path / "ds", ["k=1", "k=2"])
    bucket = s3_server.new_bucket()
    s3_filesystem.put(root + "/", f"{bucket}/ds/", recursive=True)
    local = pa.table(arrowmm.dataset(os.path.join(root, "k=*")).to_table())
    assert local.column("x").to_pylist() == [0, 1]
    remote = arrowmm.dataset(f"s3://{bucket}/ds/k=*", storage_options=s3_server.storage_options)
    assert pa.table(remote.to_table()) == local
    listed = arrowmm.dataset([f"s3://{bucket}/ds/k=1/part-0.arrow"] * 2,
                             storage_options=s3_server.storage_options)
    assert listed.count_rows() == 2


def test_file_listed_twice_is_read_twice(tmp_path):
    # (repeated paths were dropped: half of pyarrow's rows)
    path = str(tmp_path / "a.arrow")
    _write(path, pa.table({"x": [1, 2]}))
    theirs = pds.dataset([path, path], format="ipc")
    ds = arrowmm.dataset([path, path])
    assert ds.files == [path, path]
    assert ds.count_rows() == theirs.count_rows() == 4
    assert pa.table(ds.to_table()) == theirs.to_table()
